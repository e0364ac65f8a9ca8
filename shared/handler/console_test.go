package handler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"salon/shared/handler/consoleauth"
)

// The console over plain HTTP (no browser): sign-in, the cookie's flags, the
// JSON API with the session, sign-out, and the Function URL event with a
// base64-encoded form. The browser tests (console_browser_test.go) drive the
// pages themselves.

// consoleForm posts a form through the gateway, without following redirects.
func (s *system) consoleForm(path, cookie string, form url.Values, headers ...string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.gw.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return noRedirect(s.t, req)
}

func (s *system) consoleGet(path, cookie string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.gw.URL+path, nil)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	return noRedirect(s.t, req)
}

func noRedirect(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// consoleSignIn signs in and returns the Cookie header value and the session's
// CSRF token (read from the page, as a script of the console would).
func (s *system) consoleSignIn() (cookie, csrf string) {
	s.t.Helper()
	return s.consoleSignInAs("admin", testAdmin)
}

// consoleSignInAs signs in by name and password, as consoleSignIn does.
func (s *system) consoleSignInAs(name, password string) (cookie, csrf string) {
	s.t.Helper()
	resp := s.consoleForm("/admin/login", "", url.Values{"name": {name}, "password": {password}})
	if resp.StatusCode != http.StatusSeeOther {
		s.t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	c, err := http.ParseSetCookie(resp.Header.Get("Set-Cookie"))
	if err != nil {
		s.t.Fatal(err)
	}
	cookie = c.Name + "=" + c.Value
	req, _ := http.NewRequest(http.MethodGet, s.gw.URL+"/admin/", nil)
	req.Header.Set("Cookie", cookie)
	a := s.send(req)
	const meta = `<meta name="csrf-token" content="`
	i := strings.Index(string(a.Body), meta)
	if a.Status != http.StatusOK || i < 0 {
		s.t.Fatalf("today after sign-in: %d, csrf meta %v", a.Status, i >= 0)
	}
	rest := string(a.Body)[i+len(meta):]
	return cookie, rest[:strings.IndexByte(rest, '"')]
}

func TestConsoleSignInAndCookie(t *testing.T) {
	s := newSystem(t)

	if resp := s.consoleGet("/admin/", ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login" {
		t.Fatalf("today without a session: %d -> %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := s.consoleGet("/admin", ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "admin/" {
		t.Fatalf("/admin: %d -> %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	login := s.consoleGet("/admin/login", "")
	if login.StatusCode != http.StatusOK || !strings.HasPrefix(login.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(login.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("sign-in page: %d %q %q", login.StatusCode, login.Header.Get("Content-Type"), login.Header.Get("Content-Security-Policy"))
	}

	// Wrong tokens of every length get the same answer and no cookie (four:
	// the fifth failure would lock the name, TestConsoleSignInLockOut).
	for _, wrong := range []string{"", testAdmin[:len(testAdmin)-1], testAdmin + "x", strings.Repeat("a", 4096)} {
		resp := s.consoleForm("/admin/login", "", url.Values{"name": {"admin"}, "password": {wrong}})
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("wrong token of %d bytes: %d, cookie %q", len(wrong), resp.StatusCode, resp.Header.Get("Set-Cookie"))
		}
	}

	resp := s.consoleForm("/admin/login", "", url.Values{"name": {"admin"}, "password": {testAdmin}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "./" {
		t.Fatalf("sign-in: %d -> %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	c, err := http.ParseSetCookie(resp.Header.Get("Set-Cookie"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != consoleauth.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure ||
		c.MaxAge != 12*3600 || c.Path != "" || time.Until(c.Expires) > 12*time.Hour || time.Until(c.Expires) < 11*time.Hour {
		t.Fatalf("cookie over plain local HTTP: %q", resp.Header.Get("Set-Cookie"))
	}
	if !strings.HasPrefix(c.Value, "c2.") {
		t.Fatalf("cookie value %q: want a console session token", c.Value)
	}

	// Behind a front door that terminated TLS, the cookie is Secure.
	resp = s.consoleForm("/admin/login", "", url.Values{"name": {"admin"}, "password": {testAdmin}}, "X-Forwarded-Proto", "https")
	if c, err := http.ParseSetCookie(resp.Header.Get("Set-Cookie")); err != nil || !c.Secure {
		t.Fatalf("cookie over HTTPS: %q", resp.Header.Get("Set-Cookie"))
	}

	// A customer's session token is not a console session.
	if resp := s.consoleGet("/admin/", consoleauth.CookieName+"="+s.token("oAlice")); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("customer token as console cookie: %d", resp.StatusCode)
	}
}

func TestConsoleSessionOnTheJSONAPI(t *testing.T) {
	s := newSystem(t)
	slot := s.slot(time.Hour, 2, 0) // free: confirmed at once; check-in is open
	id, a := s.reserve("oAlice", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	cookie, csrf := s.consoleSignIn()
	day := time.Now().Add(time.Hour).In(shanghai(t)).Format(time.DateOnly)

	// A read with the cookie alone.
	if a := s.call("GET", "/admin/bookings?date="+day, "", nil, "Cookie", cookie); a.Status != http.StatusOK {
		t.Fatalf("GET with the session: %d %s", a.Status, a.Body)
	}
	// A change with the cookie but without the CSRF header is refused and changes nothing.
	path := "/admin/bookings/" + itoa64(id) + "/checkin"
	if a := s.call("POST", path, "", nil, "Cookie", cookie); a.Status != http.StatusUnauthorized {
		t.Fatalf("POST with the cookie, no CSRF header: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", path, "", nil, "Cookie", cookie, consoleauth.CSRFHeader, csrf+"x"); a.Status != http.StatusUnauthorized {
		t.Fatalf("POST with a wrong CSRF header: %d %s", a.Status, a.Body)
	}
	if got := s.status(id); got != "confirmed" {
		t.Fatalf("refused changes changed the booking: %s", got)
	}
	if a := s.call("POST", path, "", nil, "Cookie", cookie, consoleauth.CSRFHeader, csrf); a.Status != http.StatusOK {
		t.Fatalf("POST with the session and its CSRF token: %d %s", a.Status, a.Body)
	}
	if got := s.status(id); got != "completed" {
		t.Fatalf("after check-in: %s", got)
	}

	// A console form without the CSRF token is refused.
	if resp := s.consoleForm("/admin/booking", cookie, url.Values{"do": {"cancel"}, "id": {itoa64(id)}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("form without CSRF: %d", resp.StatusCode)
	}

	// Sign-out ends the session: the old cookie opens neither the pages nor the API.
	resp := s.consoleForm("/admin/logout", cookie, url.Values{"csrf": {csrf}})
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	if resp := s.consoleGet("/admin/", cookie); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("today with a signed-out cookie: %d", resp.StatusCode)
	}
	if a := s.call("GET", "/admin/bookings?date="+day, "", nil, "Cookie", cookie); a.Status != http.StatusUnauthorized {
		t.Fatalf("API with a signed-out cookie: %d %s", a.Status, a.Body)
	}
	// The bearer token still works, and wins over a cookie.
	if a := s.call("GET", "/admin/bookings?date="+day, testAdmin, nil, "Cookie", cookie); a.Status != http.StatusOK {
		t.Fatalf("bearer: %d %s", a.Status, a.Body)
	}
}

// A Function URL event has no requestContext and may carry the form
// base64-encoded; the console answers it like any other.
func TestConsoleFunctionURLEvent(t *testing.T) {
	s := newSystem(t)
	admin := s.checked("admin", AdminRouter(s.apiEnv).Invoke)
	invoke := func(ev map[string]any) (int, map[string]string, string) {
		raw, _ := json.Marshal(ev)
		resp, err := admin(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Headers, resp.Body
	}
	form := base64.StdEncoding.EncodeToString([]byte(url.Values{"name": {"admin"}, "password": {testAdmin}}.Encode()))
	status, h, _ := invoke(map[string]any{
		"httpMethod": "POST", "path": "/admin/login", "isBase64Encoded": true, "body": form,
		"headers": map[string]string{"content-type": "application/x-www-form-urlencoded", "host": "1250000000-abc.gz.tencentscf.com",
			"x-scf-request-id": "req-1"},
		"queryString": map[string]any{},
	})
	c, err := http.ParseSetCookie(h["Set-Cookie"])
	if status != http.StatusSeeOther || err != nil || !c.Secure || !c.HttpOnly {
		t.Fatalf("Function URL sign-in: %d %q", status, h["Set-Cookie"])
	}
	// API Gateway's event: X-Api-Scheme saying http does not take Secure away
	// from a deployed host (only X-Forwarded-Proto or a loopback host does).
	_, h2, _ := invoke(map[string]any{
		"httpMethod": "POST", "path": "/admin/login", "isBase64Encoded": false, "body": url.Values{"name": {"admin"}, "password": {testAdmin}}.Encode(),
		"headers": map[string]string{"content-type": "application/x-www-form-urlencoded", "host": "service-abc-1250000000.gz.apigw.tencentcs.com",
			"x-api-scheme": "http"},
		"requestContext": map[string]any{"requestId": "req-2", "sourceIp": "1.2.3.4", "stage": "release"},
	})
	if c2, err := http.ParseSetCookie(h2["Set-Cookie"]); err != nil || !c2.Secure {
		t.Fatalf("API Gateway sign-in: %q", h2["Set-Cookie"])
	}
	status, h, body := invoke(map[string]any{
		"httpMethod": "GET", "path": "/admin/health",
		"headers":     map[string]string{"cookie": c.Name + "=" + c.Value, "host": "1250000000-abc.gz.tencentscf.com"},
		"queryString": map[string]any{},
	})
	if status != http.StatusOK || !strings.HasPrefix(h["Content-Type"], "text/html") || !strings.Contains(body, `data-key="last_release_run"`) {
		t.Fatalf("Function URL health page: %d %q", status, h["Content-Type"])
	}
}
