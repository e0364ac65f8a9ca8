package handler

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/handler/consoleauth"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestStaffInABrowser: the owner makes an account for a technician (the
// password shown once); the technician signs in on her phone, checks a
// customer in by her code and takes a walk-in, and finds no refund-cancel,
// schedule or capacity button and no staff page (403, through the console and
// the JSON API alike); the owner sees her name on those changes; the
// technician changes her own password; the owner disables the account and
// the technician's open session ends on its next request.
func TestStaffInABrowser(t *testing.T) {
	s := newSystem(t)
	slot := s.doorSlot(3, 5000)
	if s.day(slot) != time.Now().In(shanghai(t)).Format(time.DateOnly) {
		t.Skip("the slot falls on tomorrow (the test runs just before midnight in the shop)")
	}
	alice := s.paidBooking("oAlice-0001", slot)
	bob := s.paidBooking("oBob-000002", slot)
	aliceCode := s.checkinCodeOf("oAlice-0001", alice)

	// The owner creates the account; its password is on that page only.
	owner := newBrowser(t, s)
	if st := owner.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("owner sign-in: %d", st)
	}
	if st := owner.open("team"); st != http.StatusOK {
		t.Fatalf("team: %d", st)
	}
	owner.setValue(`#newstaff input[name="name"]`, "小美")
	if st := owner.submit("#newstaff button"); st != http.StatusOK {
		t.Fatalf("create: %d", st)
	}
	password := owner.text("#secret")
	if len(password) != 14 || !strings.Contains(owner.text("#flash.ok"), "小美 的密码") {
		t.Fatalf("the new account's password is not shown: %q / %q", password, owner.text("#flash"))
	}
	owner.shot("team")
	var staffID int64
	if err := s.store.SQL().QueryRow(`SELECT staff_id FROM t_staff WHERE name = '小美' AND role = 'staff'`).Scan(&staffID); err != nil {
		t.Fatal(err)
	}
	if st := owner.open("team"); st != http.StatusOK || owner.count("#secret") != 0 {
		t.Fatalf("the password is shown again (%d)", st)
	}

	// The technician, on her phone.
	tech := newBrowser(t, s)
	if st := tech.signInAs("小美", password); st != http.StatusOK {
		t.Fatalf("staff sign-in: %d", st)
	}
	if who := tech.text("#me"); who != "小美" || tech.count(`nav a[href="team"]`) != 0 {
		t.Fatalf("signed in as %q, staff tab %d", who, tech.count(`nav a[href="team"]`))
	}
	if st := tech.open("door"); st != http.StatusOK {
		t.Fatalf("door: %d", st)
	}
	tech.setValue("#code", aliceCode)
	if st := tech.submit("#door button.checkin"); st != http.StatusOK || s.status(alice) != "completed" {
		t.Fatalf("check-in by code: %d, booking %s", st, s.status(alice))
	}
	if st := tech.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	walkIn := fmt.Sprintf("#walkin-%d", slot)
	eval[bool](tech, `(document.querySelector(`+jsString(walkIn)+`).closest('details').open = true)`)
	tech.setValue(walkIn+` input[name="name"]`, "李女士")
	if st := tech.submit(walkIn + " button"); st != http.StatusOK || !strings.Contains(tech.text("#flash.ok"), "已登记") {
		t.Fatalf("walk-in: %d %q", st, tech.text("#flash"))
	}
	bobRow := fmt.Sprintf("#bk-%d", bob)
	if tech.count(bobRow) != 1 || tech.count(bobRow+" button.cancel") != 0 || tech.count(bobRow+" button.checkin") != 1 {
		t.Fatalf("staff sees booking %d with cancel %d, check-in %d", bob, tech.count(bobRow+" button.cancel"), tech.count(bobRow+" button.checkin"))
	}
	// The walk-in has nothing to refund: she may cancel it, in words that
	// promise no refund; Bob's paid booking has no cancel of hers at all.
	var walkInID int64
	if err := s.store.SQL().QueryRow(`SELECT MAX(book_id) FROM t_booking WHERE openid IS NULL`).Scan(&walkInID); err != nil {
		t.Fatal(err)
	}
	walkInRow := fmt.Sprintf("#bk-%d", walkInID)
	if tech.count(walkInRow+" button.cancelunpaid") != 1 || tech.text(walkInRow+" button.cancelunpaid") != "取消预约" ||
		tech.count(walkInRow+" button.cancel") != 0 || tech.count(bobRow+" button.cancelunpaid") != 0 {
		t.Fatalf("staff's cancel buttons: walk-in %d (%q), refund-cancel %d; Bob's %d", tech.count(walkInRow+" button.cancelunpaid"),
			tech.text(walkInRow+" button.cancelunpaid"), tech.count(walkInRow+" button.cancel"), tech.count(bobRow+" button.cancelunpaid"))
	}
	tech.shot("staff-today")
	if st := tech.open("week"); st != http.StatusOK || tech.count("#schedule") != 0 || tech.count("form.capacity") != 0 || tech.count("form.close") != 0 {
		t.Fatalf("staff week page (%d): schedule form %d, capacity %d, close %d", st, tech.count("#schedule"), tech.count("form.capacity"), tech.count("form.close"))
	}
	if st := tech.open("team"); st != http.StatusForbidden || !strings.Contains(tech.text("#error"), "请店主操作") || tech.count("nav") != 1 {
		t.Fatalf("staff opened the staff page: %d %q, menu %d", st, tech.text("#error"), tech.count("nav"))
	}

	// What the buttons hide is refused when sent anyway: a refund-cancel posted
	// as the console's form, and through the JSON API with the session cookie.
	before := s.dbState()
	if st := tech.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	forged := fmt.Sprintf(`(() => {
		const f = document.createElement('form'); f.method = 'post'; f.action = 'booking';
		for (const [k, v] of Object.entries({csrf: document.querySelector('meta[name=csrf-token]').content, do: 'cancel', id: '%d', back: 'today'})) {
			const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
		}
		const b = document.createElement('button'); b.id = 'forged'; f.appendChild(b); document.body.appendChild(f); return true;
	})()`, bob)
	eval[bool](tech, forged)
	if st := tech.submit("#forged"); st != http.StatusOK || !strings.Contains(tech.text("#flash.bad"), "请店主操作") || tech.count("nav") != 1 {
		t.Fatalf("a staff member's cancel form: %d %q, menu %d", st, tech.text("#flash"), tech.count("nav"))
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", fmt.Sprintf("bookings/%d/cancel", bob), "{}"},
		{"PATCH", fmt.Sprintf("slots/%d", slot), `{"capacity":5}`},
		{"POST", "staff", `{"name":"Eve","role":"owner","password":"a long password"}`},
		{"GET", "staff", ""},
	} {
		if st := tech.apiStatus(s, c.method, c.path, c.body); st != http.StatusForbidden {
			t.Errorf("staff %s %s through the JSON API: %d, want 403", c.method, c.path, st)
		}
	}
	s.unchanged(before, "a staff member's refused owner actions")

	// The owner sees who did it: on today's list, the booking page and the
	// audit trail.
	if st := owner.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if by := owner.text(fmt.Sprintf("#bk-%d .by", alice)); !strings.Contains(by, "小美") || !strings.Contains(by, "签到") {
		t.Fatalf("today's list says of the check-in %q", by)
	}
	if owner.count(bobRow+" button.cancel") != 1 {
		t.Fatal("the owner has no refund-cancel button")
	}
	owner.shot("today-by")
	if st := owner.open(fmt.Sprintf("booking?q=%d", alice)); st != http.StatusOK || !strings.Contains(owner.text("#history"), "小美") {
		t.Fatalf("the booking page's history: %d %q", st, owner.text("#history"))
	}
	if st := owner.open("audit"); st != http.StatusOK || !strings.Contains(owner.text("main"), "小美") {
		t.Fatalf("the audit trail does not name her (%d)", st)
	}

	// Her own password: the wrong current one changes nothing; the right one
	// keeps this browser signed in.
	if st := tech.open("password"); st != http.StatusOK {
		t.Fatalf("password page: %d", st)
	}
	tech.setValue(`#password input[name="current"]`, "not her password")
	tech.setValue(`#password input[name="new"]`, "小美自己设的新密码123")
	tech.setValue(`#password input[name="again"]`, "小美自己设的新密码123")
	if st := tech.submit("#password button"); st != http.StatusOK || tech.count("#flash.bad") != 1 {
		t.Fatalf("a wrong current password: %d %q", st, tech.text("#flash"))
	}
	tech.setValue(`#password input[name="current"]`, password)
	tech.setValue(`#password input[name="new"]`, "小美自己设的新密码123")
	tech.setValue(`#password input[name="again"]`, "小美自己设的新密码123")
	if st := tech.submit("#password button"); st != http.StatusOK || tech.count("#flash.ok") != 1 {
		t.Fatalf("her own change: %d %q", st, tech.text("#flash"))
	}
	tech.shot("password")
	if st := tech.open(""); st != http.StatusOK || tech.count("#login") != 0 {
		t.Fatalf("signed out by her own change (%d)", st)
	}

	// The owner disables the account: the open session ends at once.
	if st := owner.open("team"); st != http.StatusOK {
		t.Fatalf("team: %d", st)
	}
	if st := owner.submit(fmt.Sprintf("#staff-%d form.disable button", staffID)); st != http.StatusOK || owner.attr(fmt.Sprintf("#staff-%d", staffID), "data-disabled") != "true" {
		t.Fatalf("disable: %d", st)
	}
	if st := tech.open(""); st != http.StatusOK || tech.count("#login") != 1 {
		t.Fatalf("a disabled account's session still opens today (%d)", st)
	}
	if st := tech.signInAs("小美", "小美自己设的新密码123"); st != http.StatusUnauthorized {
		t.Fatalf("a disabled account signed in: %d", st)
	}
}

// apiStatus calls the JSON admin API with the browser's session, as a script
// of the console's origin could (its cookie, and the page's CSRF token on a
// change), and answers the status. (The console's own Content-Security-Policy
// forbids its pages to fetch, so the call is made beside the browser.)
func (b *browser) apiStatus(s *system, method, path, body string) int {
	b.t.Helper()
	got, err := chromedp.Call(b.timed(), network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		b.t.Fatal(err)
	}
	session := ""
	for _, c := range got.Cookies {
		if c.Name == consoleauth.CookieName {
			session = c.Name + "=" + c.Value
		}
	}
	if session == "" {
		b.t.Fatal("the browser holds no console session")
	}
	headers := []string{"Cookie", session}
	var payload any
	if method != "GET" {
		headers = append(headers, consoleauth.CSRFHeader, b.attr(`meta[name="csrf-token"]`, "content"))
		payload = json.RawMessage(body)
	}
	return s.call(method, "/admin/"+path, "", payload, headers...).Status
}
