package handler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/service"
)

const techPassword = "correct horse battery"

// createStaff makes an account through the service, as the owner.
func createStaff(t testing.TB, svc *service.Service, name string, role booking.Role) *booking.Staff {
	t.Helper()
	st, err := svc.CreateStaff(service.WithStaff(context.Background(), booking.BuiltInOwner), name, role, techPassword)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The console's sign-in form: one answer (401, the same page) for a wrong
// password, an unknown name and a disabled account; five failures from one
// client address lock the name for 15 minutes there (429 with Retry-After,
// the right password too), and no other name nor the name from another
// address; the built-in owner's right token signs in even while locked.
func TestConsoleSignInLockOut(t *testing.T) {
	s := newSystem(t)
	svc := s.svc()
	createStaff(t, svc, "小美", booking.RoleStaff)
	gone := createStaff(t, svc, "阿芳", booking.RoleStaff)
	yes := true
	if _, err := svc.UpdateStaff(service.WithStaff(context.Background(), booking.BuiltInOwner), gone.ID, &yes, nil); err != nil {
		t.Fatal(err)
	}
	signIn := func(name, password string) (*http.Response, string) {
		t.Helper()
		resp := s.consoleForm("/admin/login", "", url.Values{"name": {name}, "password": {password}})
		return resp, resp.Header.Get("Set-Cookie")
	}
	var refusedBody string
	for i, c := range []struct{ name, password string }{
		{"小美", "a wrong password"}, {"nobody here", techPassword}, {"阿芳", techPassword},
	} {
		resp, cookie := signIn(c.name, c.password)
		if resp.StatusCode != http.StatusUnauthorized || cookie != "" {
			t.Fatalf("%q: %d, cookie %q", c.name, resp.StatusCode, cookie)
		}
		page := s.loginPageFor(c.name, c.password)
		if i == 0 {
			refusedBody = page
		} else if page != refusedBody {
			t.Errorf("the refusal of %q differs from a wrong password's", c.name)
		}
	}
	// 小美 has failed twice now (the page check sent each once more); three
	// more lock her.
	for i := 0; i < 3; i++ {
		if resp, _ := signIn("小美", "still wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+3, resp.StatusCode)
		}
	}
	resp, cookie := signIn("小美", techPassword)
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || cookie != "" || retry < 14*60 || retry > 15*60 {
		t.Fatalf("the right password of a locked name: %d, Retry-After %q, cookie %q", resp.StatusCode, resp.Header.Get("Retry-After"), cookie)
	}
	if resp, cookie := signIn("admin", testAdmin); resp.StatusCode != http.StatusSeeOther || cookie == "" {
		t.Fatalf("another name after 小美's lock: %d", resp.StatusCode)
	}
	// From another client address (the gateway's source address) 小美 is not
	// locked: five failures lock a name for one address.
	if resp := s.signInFrom("198.51.100.23", "小美", techPassword); resp.StatusCode != http.StatusSeeOther || resp.Headers["Set-Cookie"] == "" {
		t.Fatalf("小美 from another address: %d", resp.StatusCode)
	}
	// A header the client writes is no other address.
	if resp, _ := signIn("小美", techPassword); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("小美 again from the locked address: %d", resp.StatusCode)
	}
	resp = s.consoleForm("/admin/login", "", url.Values{"name": {"小美"}, "password": {techPassword}}, "X-Forwarded-For", "192.0.2.200")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("X-Forwarded-For took the locked address for another: %d", resp.StatusCode)
	}

	// Nobody keeps the built-in owner out: five wrong tokens (ADMIN is admin)
	// lock the name for this address, and the right token still signs in.
	for i := range booking.SignInMaxFailures {
		if resp, _ := signIn("ADMIN", "a guess of the token"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i+1, resp.StatusCode)
		}
	}
	if resp, _ := signIn("admin", "another guess"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a wrong token of the locked owner: %d", resp.StatusCode)
	}
	for _, name := range []string{"admin", "ADMIN"} {
		if resp, cookie := signIn(name, testAdmin); resp.StatusCode != http.StatusSeeOther || cookie == "" {
			t.Fatalf("the owner's right token (%s) while locked: %d", name, resp.StatusCode)
		}
	}
}

// signInFrom posts the console's sign-in form as API Gateway delivers it from
// the client address source (requestContext.sourceIp).
func (s *system) signInFrom(source, name, password string) apigw.Response {
	s.t.Helper()
	ev := map[string]any{
		"httpMethod": "POST", "path": "/admin/login",
		"body":           url.Values{"name": {name}, "password": {password}}.Encode(),
		"headers":        map[string]string{"content-type": "application/x-www-form-urlencoded", "host": "salon.example"},
		"requestContext": map[string]string{"requestId": "signin-from", "sourceIp": source},
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := AdminRouter(s.apiEnv).Invoke(context.Background(), raw)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// 改密码 is no password oracle: a wrong current password counts as a failed
// sign-in of her name from her address, five lock it (the change answers 429
// with Retry-After, as the sign-in does), and her session stands.
func TestConsolePasswordChangeIsThrottled(t *testing.T) {
	s := newSystem(t)
	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	change := func(current string) *http.Response {
		t.Helper()
		return s.consoleForm("/admin/password", cookie, url.Values{"csrf": {csrf}, "current": {current},
			"new": {"小美自己设的新密码123"}, "again": {"小美自己设的新密码123"}})
	}
	for i := range booking.SignInMaxFailures {
		if resp := change("a guess " + strconv.Itoa(i)); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "password?done=refused" {
			t.Fatalf("wrong current password %d: %d -> %q", i+1, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.gw.URL+"/admin/password", strings.NewReader(url.Values{"csrf": {csrf}, "current": {techPassword},
		"new": {"小美自己设的新密码123"}, "again": {"小美自己设的新密码123"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookie)
	a := s.send(req)
	retry, _ := strconv.Atoi(a.Header.Get("Retry-After"))
	if a.Status != http.StatusTooManyRequests || retry < 14*60 || retry > 15*60 || a.Header.Get("Set-Cookie") != "" {
		t.Fatalf("the change of a locked name: %d, Retry-After %q", a.Status, a.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(a.Body), "<nav") || !strings.Contains(string(a.Body), "尝试次数过多") {
		t.Fatalf("the locked change's page (with the menu, in words): %s", a.Body)
	}
	if resp := s.consoleForm("/admin/login", "", url.Values{"name": {"小美"}, "password": {techPassword}}); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("her sign-in after five wrong current passwords: %d", resp.StatusCode)
	}
	if page := s.consoleGet("/admin/", cookie); page.StatusCode != http.StatusOK {
		t.Fatalf("her session after refused changes: %d", page.StatusCode)
	}
}

// loginPageFor posts a sign-in and reads the page that answers it, without
// the name the form keeps (so that refusals of different names compare).
func (s *system) loginPageFor(name, password string) string {
	s.t.Helper()
	body := url.Values{"name": {name}, "password": {password}}.Encode()
	req, _ := http.NewRequest(http.MethodPost, s.gw.URL+"/admin/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	a := s.send(req)
	return strings.ReplaceAll(string(a.Body), `value="`+html.EscapeString(name)+`"`, `value=""`)
}

// FuzzConsoleSignIn sends arbitrary sign-in forms: the answer is a sign-in
// (303 with a session cookie) only for the exact credentials of an enabled
// account or the built-in owner (its name in any case), else 400, 401 or 429 without a cookie, never
// a 5xx; no account changes, and no name of more than 40 characters is
// recorded.
func FuzzConsoleSignIn(f *testing.F) {
	e, svc, store := fuzzFunctions(f)
	createStaff(f, svc, "小美", booking.RoleStaff)
	admin := AdminRouter(e)
	accounts := func() string {
		var n, hashes string
		if err := store.SQL().QueryRow(`SELECT COUNT(*), COALESCE(GROUP_CONCAT(password_hash, disabled, updated_at ORDER BY staff_id), '') FROM t_staff`).Scan(&n, &hashes); err != nil {
			f.Fatal(err)
		}
		return n + hashes
	}
	before := accounts()

	for _, seed := range []string{
		url.Values{"name": {"admin"}, "password": {testAdmin}}.Encode(),
		url.Values{"name": {"小美"}, "password": {techPassword}}.Encode(),
		url.Values{"name": {"小美"}, "password": {techPassword + " "}}.Encode(),
		url.Values{"name": {"ADMIN"}, "password": {testAdmin}}.Encode(),
		"name=admin&name=%E5%B0%8F%E7%BE%8E&password=" + url.QueryEscape(techPassword),
		"name=&password=",
		"name=%zz&password=x",
		"name=a%00b&password=" + url.QueryEscape(testAdmin),
		"name=" + url.QueryEscape(string(make([]byte, 300))) + "&password=x",
		"password=" + url.QueryEscape(testAdmin),
		"\xff\xfe",
		"",
	} {
		f.Add([]byte(seed), uint8(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		ct := "application/x-www-form-urlencoded"
		switch kind % 3 {
		case 1:
			ct = "application/json"
		case 2:
			ct = "application/x-www-form-urlencoded; charset=utf-8"
		}
		ev := map[string]any{
			"httpMethod": "POST", "path": "/admin/login", "isBase64Encoded": true,
			"body":    base64.StdEncoding.EncodeToString(body),
			"headers": map[string]string{"content-type": ct},
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Skip()
		}
		resp, err := admin.Invoke(context.Background(), raw)
		if err != nil {
			t.Fatalf("Invoke returned an error: %v", err)
		}
		cookie := resp.Headers["Set-Cookie"]
		form, formErr := url.ParseQuery(string(body))
		exact := formErr == nil && kind%3 != 1 && len(form["name"]) >= 1 &&
			((strings.EqualFold(strings.TrimSpace(form.Get("name")), "admin") && form.Get("password") == testAdmin) ||
				(strings.TrimSpace(form.Get("name")) == "小美" && form.Get("password") == techPassword))
		switch resp.StatusCode {
		case http.StatusSeeOther:
			if !exact || cookie == "" {
				t.Fatalf("signed in with %q (cookie %q)", body, cookie)
			}
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests:
			if cookie != "" {
				t.Fatalf("%d with a cookie for %q", resp.StatusCode, body)
			}
		default:
			t.Fatalf("%q: %d %s", body, resp.StatusCode, resp.Body)
		}
		if got := accounts(); got != before {
			t.Fatalf("a sign-in changed an account: %q", body)
		}
		var long int
		if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM t_signin_name WHERE CHAR_LENGTH(name) > 40`).Scan(&long); err != nil || long != 0 {
			t.Fatalf("names over 40 characters recorded: %d (%v)", long, err)
		}
	})
}

// The audit trail names who made each change, in MySQL and in CLS: a staff
// member signed in to the console (here through the JSON admin API with her
// session) is staff:<id>, the bearer ADMIN_TOKEN is admin.
func TestAuditNamesTheStaffMemberInCLS(t *testing.T) {
	srv, cl := relWithCLS(t)
	s := newSystem(t, cl)
	amy := createStaff(t, s.svc(), "小美", booking.RoleStaff)
	slot := s.doorSlot(3, 5000)
	byStaff, byOwner := s.paidBooking("oStaff-0001", slot), s.paidBooking("oOwner-0001", slot)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	if a := s.call("POST", "/admin/bookings/"+itoa64(byStaff)+"/checkin", "", nil, "Cookie", cookie, "X-CSRF-Token", csrf); a.Status != http.StatusOK {
		t.Fatalf("staff check-in: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/admin/bookings/"+itoa64(byOwner)+"/checkin", testAdmin, nil); a.Status != http.StatusOK {
		t.Fatalf("owner check-in: %d %s", a.Status, a.Body)
	}
	s.relRun(context.Background())
	want := map[string]string{itoa64(byStaff): "staff:" + itoa64(amy.ID), itoa64(byOwner): booking.ActorAdmin}
	seen := 0
	for _, l := range srv.Logs() {
		if l.Get(cls.KeyEvent) != booking.EventCheckIn {
			continue
		}
		seen++
		if got := l.Get(cls.KeyActor); got != want[l.Get(cls.KeyBookingID)] {
			t.Errorf("CLS: check-in of booking %s by %q, want %q", l.Get(cls.KeyBookingID), got, want[l.Get(cls.KeyBookingID)])
		}
	}
	if seen != 2 {
		t.Fatalf("CLS holds %d check-ins, want 2", seen)
	}
}
