package service_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"salon/shared/booking"
)

const adminToken = "an-admin-token-of-at-least-32-bytes!"

func TestStaffAccounts(t *testing.T) {
	svc, _ := newService(t)
	amy, err := svc.CreateStaff(ctx, "Amy", booking.RoleStaff, "amy's password")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, role, password, code string
	}{
		{"amy", "staff", "another password", booking.EINVALIDSTATE}, // names compare without case
		{"admin", "owner", "another password", booking.EBADREQUEST},
		{"Bea", "boss", "another password", booking.EBADREQUEST},
		{"Bea", "staff", "short", booking.EBADREQUEST},
		{"", "staff", "another password", booking.EBADREQUEST},
	} {
		if _, err := svc.CreateStaff(ctx, tt.name, booking.Role(tt.role), tt.password); booking.ErrorCode(err) != tt.code {
			t.Errorf("CreateStaff(%q, %q, %q) = %v, want %s", tt.name, tt.role, tt.password, err, tt.code)
		}
	}
	if _, err := svc.CreateStaff(ctx, "老板娘", booking.RoleOwner, "the owner's own"); err != nil {
		t.Fatal(err)
	}
	list, err := svc.ListStaff(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list %v %v", list, err)
	}
	body, _ := json.Marshal(list)
	if strings.Contains(string(body), "$2a$") || strings.Contains(strings.ToLower(string(body)), "hash") {
		t.Fatalf("the list shows a hash: %s", body)
	}

	// Signing in: the same answer for a wrong password, an unknown name and a
	// disabled account.
	if who, err := svc.SignIn(ctx, "Amy", "amy's password", adminToken); err != nil || who.ID != amy.ID || who.Role != booking.RoleStaff {
		t.Fatalf("sign-in: %+v %v", who, err)
	}
	if who, err := svc.SignIn(ctx, "admin", adminToken, adminToken); err != nil || who.ID != 0 || who.Role != booking.RoleOwner {
		t.Fatalf("built-in owner: %+v %v", who, err)
	}
	if _, err := svc.SignIn(ctx, "admin", "", ""); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("owner without ADMIN_TOKEN: %v", err)
	}
	refused := func(name, password string) {
		t.Helper()
		who, err := svc.SignIn(ctx, name, password, adminToken)
		if who != nil || booking.ErrorCode(err) != booking.EUNAUTHORIZED || booking.ErrorMessage(err) != booking.ErrorMessage(booking.Errorf(booking.EUNAUTHORIZED, "")) {
			t.Fatalf("SignIn(%q) = %+v %v, want UNAUTHORIZED", name, who, err)
		}
	}
	refused("Amy", "not amy's password")
	refused("Nobody", "amy's password")
	refused(strings.Repeat("x", 41), "amy's password")
	off := true
	if s, err := svc.UpdateStaff(ctx, amy.ID, &off, nil); err != nil || !s.Disabled {
		t.Fatalf("disable: %+v %v", s, err)
	}
	refused("Amy", "amy's password")

	// A reset password replaces the old one; an enabled account signs in with it.
	on, pw := false, "amy's new password"
	if s, err := svc.UpdateStaff(ctx, amy.ID, &on, &pw); err != nil || s.Disabled || !s.PasswordChangedAt.After(amy.PasswordChangedAt) {
		t.Fatalf("reset: %+v %v", s, err)
	}
	refused("Amy", "amy's password")
	if _, err := svc.SignIn(ctx, "Amy", pw, adminToken); err != nil {
		t.Fatal(err)
	}
	short := "short"
	if _, err := svc.UpdateStaff(ctx, amy.ID, nil, &short); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("short reset: %v", err)
	}
	if _, err := svc.UpdateStaff(ctx, amy.ID, nil, nil); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("empty update: %v", err)
	}
	if _, err := svc.UpdateStaff(ctx, 999999, &off, nil); booking.ErrorCode(err) != booking.ENOTFOUND {
		t.Fatalf("unknown id: %v", err)
	}
}

// Concurrent wrong sign-ins of one name from several goroutines (instances):
// never more than five failures are counted before the lock, the right
// password is refused while the name is locked, and another name is not locked.
func TestSignInLockOutUnderConcurrency(t *testing.T) {
	svc, store := newService(t)
	for _, name := range []string{"Amy", "Bea"} {
		if _, err := svc.CreateStaff(ctx, name, booking.RoleStaff, name+"'s password"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"Amy", "Nobody", "admin"} {
		const tries = 16
		var wg sync.WaitGroup
		codes := make(chan string, tries)
		for i := 0; i < tries; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.SignIn(ctx, name, "a wrong password", adminToken)
				codes <- booking.ErrorCode(err)
			}()
		}
		wg.Wait()
		close(codes)
		count := map[string]int{}
		for c := range codes {
			count[c]++
		}
		if count[booking.EUNAUTHORIZED] > booking.SignInMaxFailures || count[booking.EUNAUTHORIZED]+count[booking.ETOOMANYATTEMPTS] != tries {
			t.Fatalf("%s: answers %v, want at most %d UNAUTHORIZED and the rest TOO_MANY_ATTEMPTS", name, count, booking.SignInMaxFailures)
		}
		var n int
		if err := store.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM t_signin_failure WHERE name = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != booking.SignInMaxFailures {
			t.Fatalf("%s: %d failures counted, want %d", name, n, booking.SignInMaxFailures)
		}
		right := adminToken
		if name == "Amy" {
			right = "Amy's password"
		}
		_, err := svc.SignIn(ctx, name, right, adminToken)
		var e *booking.Error
		if booking.ErrorCode(err) != booking.ETOOMANYATTEMPTS || !asError(err, &e) || e.RetryAfter < 14*60 || e.RetryAfter > 15*60 {
			t.Fatalf("%s locked, right password: %v", name, err)
		}
	}
	if who, err := svc.SignIn(ctx, "Bea", "Bea's password", adminToken); err != nil || who.Name != "Bea" {
		t.Fatalf("another name: %+v %v", who, err)
	}
}

func asError(err error, e **booking.Error) bool { return errors.As(err, e) }
