package consoleauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
)

func TestTokenMatches(t *testing.T) {
	for _, c := range []struct {
		got, want string
		ok        bool
	}{{"abc", "abc", true}, {"abd", "abc", false}, {"ab", "abc", false}, {"abcd", "abc", false}, {"", "", false}, {"", "abc", false}} {
		if TokenMatches(c.got, c.want) != c.ok {
			t.Errorf("TokenMatches(%q, %q) != %v", c.got, c.want, c.ok)
		}
	}
}

// accounts answers for the sessions of one account as the service would: the
// stamp it was signed in with must still be the account's (0 for the built-in
// owner, who has no account).
type accounts struct{ staff booking.Staff }

func (a accounts) ConsoleSession(_ context.Context, _ string, staffID, stamp int64) (booking.Staff, error) {
	want := int64(0)
	if a.staff.ID != 0 {
		want = a.staff.SessionStamp()
	}
	if staffID != a.staff.ID || stamp != want {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "changed")
	}
	return a.staff, nil
}

// TestSessionRoundTrip: a session issued is verified as its staff member's,
// with the same id and CSRF token; a token under other keys, a tampered one,
// one of an account changed since, or an expired one is refused.
func TestSessionRoundTrip(t *testing.T) {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	secret := []byte(strings.Repeat("s", 32))
	k := NewKeys(secret, "admin-token", clock)
	st := booking.Staff{ID: 7, Name: "小林", Role: booking.RoleStaff, UpdatedAt: now.Add(-time.Hour)}
	sess, token, err := k.Issue(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Verify(context.Background(), accounts{st}, token)
	if err != nil || got.ID != sess.ID || got.Staff.ID != 7 || got.CSRF() != sess.CSRF() || got.CheckCSRF(sess.CSRF()) != nil {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if err := got.CheckCSRF(sess.CSRF() + "x"); booking.ErrorCode(err) != booking.EFORBIDDEN {
		t.Errorf("a wrong CSRF token: %v", err)
	}
	refused := map[string]func() error{
		"another ADMIN_TOKEN": func() error {
			_, err := NewKeys(secret, "other-token", clock).Verify(context.Background(), accounts{st}, token)
			return err
		},
		"tampered": func() error {
			_, err := k.Verify(context.Background(), accounts{st}, token+"x")
			return err
		},
		"the account changed since": func() error {
			changed := st
			changed.UpdatedAt = now
			_, err := k.Verify(context.Background(), accounts{changed}, token)
			return err
		},
		"expired": func() error {
			later := NewKeys(secret, "admin-token", func() time.Time { return now.Add(SessionTTL + time.Second) })
			_, err := later.Verify(context.Background(), accounts{st}, token)
			return err
		},
	}
	for name, verify := range refused {
		if err := verify(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestCheckAPIRequest: the JSON admin API takes the cookie for a read, and for
// a change only with the session's CSRF token in its header.
func TestCheckAPIRequest(t *testing.T) {
	k := NewKeys([]byte(strings.Repeat("s", 32)), "admin-token", nil)
	owner := booking.BuiltInOwner
	sess, token, err := k.Issue(owner)
	if err != nil {
		t.Fatal(err)
	}
	req := func(method, csrf string) *http.Request {
		r := httptest.NewRequest(method, "/admin/slots", nil)
		r.Header.Set("Cookie", CookieName+"="+token)
		if csrf != "" {
			r.Header.Set(CSRFHeader, csrf)
		}
		return r
	}
	if _, err := k.CheckAPIRequest(req(http.MethodGet, ""), accounts{owner}); err != nil {
		t.Errorf("a read with the cookie: %v", err)
	}
	if _, err := k.CheckAPIRequest(req(http.MethodPost, ""), accounts{owner}); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Errorf("a change without the CSRF header: %v", err)
	}
	if _, err := k.CheckAPIRequest(req(http.MethodPost, sess.CSRF()), accounts{owner}); err != nil {
		t.Errorf("a change with the CSRF header: %v", err)
	}
}

// TestCookie: the cookie is HttpOnly, SameSite=Strict, without a Path, Secure
// unless the browser came over plain HTTP to a loopback host (or a front door
// says it did), and removed by an empty token.
func TestCookie(t *testing.T) {
	for _, c := range []struct {
		host, proto, scheme string
		https               bool
	}{
		{"127.0.0.1:9000", "", "", false}, {"localhost", "", "", false}, {"[::1]:80", "", "", false},
		{"shop.example", "", "", true}, {"127.0.0.1", "https", "", true}, {"shop.example", "http", "", false},
		{"127.0.0.1", "", "https", true}, {"shop.example", "", "http", true},
	} {
		r := httptest.NewRequest(http.MethodGet, "/admin/", nil)
		r.Host = c.host
		if c.proto != "" {
			r.Header.Set("X-Forwarded-Proto", c.proto)
		}
		if c.scheme != "" {
			r.Header.Set("X-Api-Scheme", c.scheme)
		}
		if OverHTTPS(r) != c.https {
			t.Errorf("%+v: OverHTTPS = %v", c, !c.https)
		}
	}
	set, err := http.ParseSetCookie(Cookie("tok", true, time.Now().Add(SessionTTL)))
	if err != nil || set.Name != CookieName || !set.HttpOnly || !set.Secure || set.SameSite != http.SameSiteStrictMode || set.Path != "" || set.MaxAge != int(SessionTTL/time.Second) {
		t.Errorf("session cookie: %+v %v", set, err)
	}
	if gone, err := http.ParseSetCookie(Cookie("", false, time.Time{})); err != nil || gone.MaxAge != -1 {
		t.Errorf("removal: %+v %v", gone, err)
	}
}
