package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
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

// Every admin action by both roles: staff may do the counter's work, the
// owner anything; a staff member on an owner's action is FORBIDDEN before
// anything is read or changed. (The ids name nothing: an allowed action goes
// on and fails for want of its booking, slot or customer.)
func TestAdminActionsByRole(t *testing.T) {
	svc, store := newService(t)
	slot := mysqltest.AddSlot(t, store, 3*time.Hour, 2, 5000)
	open, pw := true, "a long new password"
	actions := map[booking.AdminAction]func(ctx context.Context) error{
		booking.ActionCheckIn: func(ctx context.Context) error { _, err := svc.CheckIn(ctx, 999999); return err },
		booking.ActionNoShow:  func(ctx context.Context) error { _, err := svc.MarkNoShow(ctx, 999999); return err },
		booking.ActionWalkIn: func(ctx context.Context) error {
			_, err := svc.WalkIn(ctx, booking.WalkInRequest{SlotID: 999999, Name: "李女士"})
			return err
		},
		booking.ActionReschedule: func(ctx context.Context) error { _, err := svc.RescheduleBySalon(ctx, 999999, slot, 0); return err },
		booking.ActionNote:       func(ctx context.Context) error { _, err := svc.SetCustomerNote(ctx, 999999, "过敏"); return err },
		booking.ActionCancel:     func(ctx context.Context) error { _, err := svc.CancelBySalon(ctx, 999999); return err },
		booking.ActionSchedule: func(ctx context.Context) error {
			_, _, err := svc.CreateSchedule(ctx, booking.Schedule{})
			return err
		},
		booking.ActionSlotChange: func(ctx context.Context) error {
			_, err := svc.UpdateSlot(ctx, 999999, booking.SlotUpdate{Open: &open})
			return err
		},
		booking.ActionStaff: func(ctx context.Context) error { _, err := svc.UpdateStaff(ctx, 999999, nil, &pw); return err },
	}
	if len(actions) != len(booking.AdminActions) {
		t.Fatalf("%d actions tested of %d", len(actions), len(booking.AdminActions))
	}
	checkInByCode := func(ctx context.Context) error { _, err := svc.CheckInByCode(ctx, "12345678"); return err }
	createStaff := func(ctx context.Context) error {
		_, err := svc.CreateStaff(ctx, "Someone", booking.RoleStaff, pw)
		return err
	}
	listStaff := func(ctx context.Context) error { _, err := svc.ListStaff(ctx); return err }
	before := countStaff(t, store)
	for _, role := range []booking.Role{booking.RoleOwner, booking.RoleStaff} {
		ctx := service.WithStaff(ctx, booking.Staff{ID: 7, Name: "someone", Role: role})
		for _, a := range booking.AdminActions {
			calls := []func(context.Context) error{actions[a]}
			switch a {
			case booking.ActionCheckIn:
				calls = append(calls, checkInByCode)
			case booking.ActionStaff:
				calls = append(calls, listStaff)
				if role == booking.RoleStaff {
					calls = append(calls, createStaff)
				}
			}
			for i, call := range calls {
				err := call(ctx)
				if forbidden := booking.IsCode(err, booking.EFORBIDDEN); forbidden == role.May(a) {
					t.Errorf("%s %s (#%d): %v", role, a, i, err)
				}
			}
		}
	}
	if countStaff(t, store) != before {
		t.Fatal("a refused createStaff created an account")
	}
	// A call that names nobody (a route that forgot to) is refused, every
	// action: the service fails closed.
	for _, a := range booking.AdminActions {
		if err := actions[a](context.Background()); !booking.IsCode(err, booking.EFORBIDDEN) {
			t.Errorf("%s naming nobody: %v, want FORBIDDEN", a, err)
		}
	}
}

func countStaff(t *testing.T, store *mysql.DB) int {
	t.Helper()
	var n int
	if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM t_staff`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A correct sign-in forgets the name's failures; a lock ends 15 minutes after
// the fifth failure, and then the right password signs in.
func TestSignInLockEnds(t *testing.T) {
	svc, store := newService(t)
	if _, err := svc.CreateStaff(ctx, "Amy", booking.RoleStaff, "Amy's password"); err != nil {
		t.Fatal(err)
	}
	failures := func() int {
		var n int
		if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM t_signin_failure WHERE name = 'Amy'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := 0; i < booking.SignInMaxFailures-1; i++ {
		if _, err := svc.SignIn(ctx, "Amy", "wrong password", adminToken); !booking.IsCode(err, booking.EUNAUTHORIZED) {
			t.Fatal(err)
		}
	}
	if _, err := svc.SignIn(ctx, "Amy", "Amy's password", adminToken); err != nil || failures() != 0 {
		t.Fatalf("a correct sign-in after four failures: %v, %d failures kept", err, failures())
	}
	for i := 0; i < booking.SignInMaxFailures; i++ {
		svc.SignIn(ctx, "Amy", "wrong password", adminToken)
	}
	if _, err := svc.SignIn(ctx, "Amy", "Amy's password", adminToken); !booking.IsCode(err, booking.ETOOMANYATTEMPTS) {
		t.Fatalf("locked: %v", err)
	}
	// 14 minutes later it is still locked; at 15 it is not.
	if _, err := store.SQL().Exec(`UPDATE t_signin_failure SET failed_at = failed_at - INTERVAL 14 MINUTE WHERE name = 'Amy'`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SignIn(ctx, "Amy", "Amy's password", adminToken); !booking.IsCode(err, booking.ETOOMANYATTEMPTS) {
		t.Fatalf("locked after 14 minutes: %v", err)
	}
	if _, err := store.SQL().Exec(`UPDATE t_signin_failure SET failed_at = failed_at - INTERVAL 61 SECOND WHERE name = 'Amy'`); err != nil {
		t.Fatal(err)
	}
	if who, err := svc.SignIn(ctx, "Amy", "Amy's password", adminToken); err != nil || who.Name != "Amy" {
		t.Fatalf("after the lock: %+v %v", who, err)
	}
}

// A console session stands while its account is enabled and unchanged: the
// owner disabling the account, enabling it again or resetting its password, or
// the member changing her own, ends every session made before, at once.
func TestConsoleSessionEndsWithTheAccount(t *testing.T) {
	svc, _ := newService(t)
	amy, err := svc.CreateStaff(ctx, "Amy", booking.RoleStaff, "amy's password")
	if err != nil {
		t.Fatal(err)
	}
	signIn := func(password string) booking.Staff {
		t.Helper()
		who, err := svc.SignIn(ctx, "Amy", password, adminToken)
		if err != nil {
			t.Fatal(err)
		}
		return *who
	}
	valid := func(st booking.Staff) error {
		_, err := svc.ConsoleSession(ctx, "session-id", st.ID, st.SessionStamp())
		return err
	}
	first := signIn("amy's password")
	if err := valid(first); err != nil {
		t.Fatalf("fresh session: %v", err)
	}
	yes, no := true, false
	if _, err := svc.UpdateStaff(ctx, amy.ID, &yes, nil); err != nil {
		t.Fatal(err)
	}
	if err := valid(first); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("session of a disabled account: %v", err)
	}
	if _, err := svc.UpdateStaff(ctx, amy.ID, &no, nil); err != nil {
		t.Fatal(err)
	}
	if err := valid(first); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("a session from before the account was disabled came back with it: %v", err)
	}
	second := signIn("amy's password")
	reset := "a password reset by the owner"
	if _, err := svc.UpdateStaff(ctx, amy.ID, nil, &reset); err != nil {
		t.Fatal(err)
	}
	if err := valid(second); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("session after a password reset: %v", err)
	}

	// Her own change: the current password must match; the change ends her
	// other sessions too.
	third := signIn(reset)
	asAmy := service.WithStaff(context.Background(), third)
	if _, err := svc.ChangeMyPassword(asAmy, "not the current one", "her very own password"); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("wrong current password: %v", err)
	}
	if err := valid(third); err != nil {
		t.Fatalf("a refused change ended the session: %v", err)
	}
	if _, err := svc.ChangeMyPassword(asAmy, reset, "short"); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("short new password: %v", err)
	}
	changed, err := svc.ChangeMyPassword(asAmy, reset, "her very own password")
	if err != nil {
		t.Fatal(err)
	}
	if err := valid(third); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("session after her own change: %v", err)
	}
	if err := valid(*changed); err != nil {
		t.Fatalf("the session of the changed account: %v", err)
	}
	if _, err := svc.SignIn(ctx, "Amy", "her very own password", adminToken); err != nil {
		t.Fatalf("the new password: %v", err)
	}
	if _, err := svc.ChangeMyPassword(ctx, adminToken, "a password for the owner"); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("the built-in owner changed ADMIN_TOKEN: %v", err)
	}

	// A forged stamp or account is refused; the built-in owner has no row.
	if _, err := svc.ConsoleSession(ctx, "session-id", changed.ID, changed.SessionStamp()+1); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("another stamp: %v", err)
	}
	if _, err := svc.ConsoleSession(ctx, "session-id", 424242, 0); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("no such account: %v", err)
	}
	if who, err := svc.ConsoleSession(ctx, "session-id", 0, 0); err != nil || who.Role != booking.RoleOwner || who.Actor() != booking.ActorAdmin {
		t.Fatalf("built-in owner: %+v %v", who, err)
	}
	if err := svc.EndConsoleSession(ctx, "session-id", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := valid(*changed); booking.ErrorCode(err) != booking.EUNAUTHORIZED {
		t.Fatalf("a signed-out session: %v", err)
	}
}

// Every change a person makes records her: staff:<id> for an account, admin
// for the built-in owner; the product's own changes keep their actors.
func TestAuditNamesWhoDidIt(t *testing.T) {
	svc, store := newService(t)
	amy, err := svc.CreateStaff(ctx, "Amy", booking.RoleStaff, "amy's password")
	if err != nil {
		t.Fatal(err)
	}
	asAmy := service.WithStaff(context.Background(), *amy)
	slot := mysqltest.AddSlot(t, store, time.Hour, 3, 5000)
	walkIn, err := svc.WalkIn(asAmy, booking.WalkInRequest{SlotID: slot, Name: "李女士"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CheckIn(asAmy, walkIn.ID); err != nil {
		t.Fatal(err)
	}
	b := paid(t, store, "o-paid", slot)
	if _, err := svc.CancelBySalon(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	capacity := 4
	if _, err := svc.UpdateSlot(ctx, slot, booking.SlotUpdate{Capacity: &capacity}); err != nil {
		t.Fatal(err)
	}
	actorOf := func(event string, bookingID int64) string {
		t.Helper()
		var actor string
		q := `SELECT actor FROM t_audit WHERE event = ? AND COALESCE(book_id, 0) = ? ORDER BY audit_id DESC LIMIT 1`
		if err := store.SQL().QueryRow(q, event, bookingID).Scan(&actor); err != nil {
			t.Fatalf("%s of %d: %v", event, bookingID, err)
		}
		return actor
	}
	amyActor := "staff:" + strconv.FormatInt(amy.ID, 10)
	for _, tt := range []struct {
		event     string
		bookingID int64
		want      string
	}{
		{booking.EventWalkIn, walkIn.ID, amyActor},
		{booking.EventCheckIn, walkIn.ID, amyActor},
		{booking.EventCancel, b.ID, booking.ActorAdmin},
		{booking.EventSlotChange, 0, booking.ActorAdmin},
		{booking.EventReserve, b.ID, booking.ActorCustomer},
	} {
		if got := actorOf(tt.event, tt.bookingID); got != tt.want {
			t.Errorf("%s: actor %q, want %q", tt.event, got, tt.want)
		}
	}
	last, err := svc.LastPersonChanges(ctx, []*booking.Booking{walkIn, b})
	if err != nil {
		t.Fatal(err)
	}
	if last[walkIn.ID].Event != booking.EventCheckIn || last[walkIn.ID].Actor != amyActor || last[b.ID].Actor != booking.ActorAdmin {
		t.Fatalf("last person changes: %+v", last)
	}
	if names, err := svc.StaffNames(ctx); err != nil || names[amy.ID] != "Amy" {
		t.Fatalf("names %v %v", names, err)
	}
}
