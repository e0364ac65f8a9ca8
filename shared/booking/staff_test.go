package booking

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func TestCleanStaffName(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		ok         bool
	}{
		{"小美", "小美", true},
		{"Amy Chen", "Amy Chen", true},
		{strings.Repeat("美", 40), strings.Repeat("美", 40), true},
		{strings.Repeat("美", 41), "", false},
		{"", "", false},
		{" amy", "amy", true}, // trimmed, as every typed name
		{"amy ", "amy", true},
		{"a\tb", "", false},
		{"a\nb", "", false},
		{"admin", "", false},
		{"Admin", "", false},
		{"ADMIN", "", false},
		{" admin ", "", false},
		{"admin2", "admin2", true},
		{"\xff", "", false},
		{"amy\u202E", "", false}, // CleanName's rule (its own test has each character)
		{"\u3164", "", false},
		{"Rene\u0301e", "Ren\u00e9e", true},
	} {
		got, err := CleanStaffName(tt.name)
		if (err == nil) != tt.ok || got != tt.want || err != nil && ErrorCode(err) != EBADREQUEST {
			t.Errorf("CleanStaffName(%q) = %q, %v, want %q ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	for _, tt := range []struct {
		password string
		ok       bool
	}{
		{"123456789", false},
		{"1234567890", true},
		{"美甲店美甲店美甲店美", true}, // 10 characters, 30 bytes
		{"美甲店美甲店美甲店", false},
		{strings.Repeat("a", 72), true},
		{strings.Repeat("a", 73), false},
		{"", false},
	} {
		if err := CheckPassword(tt.password); (err == nil) != tt.ok {
			t.Errorf("CheckPassword(%q) = %v, want ok %v", tt.password, err, tt.ok)
		}
	}
}

func TestHashPassword(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, "correct horse") || !strings.HasPrefix(h, "$2a$10$") {
		t.Fatalf("hash %q", h)
	}
	if !PasswordMatches(h, "correct horse") || PasswordMatches(h, "correct horsf") || PasswordMatches("", "correct horse") {
		t.Fatal("PasswordMatches")
	}
	if _, err := HashPassword("short"); ErrorCode(err) != EBADREQUEST {
		t.Fatalf("short password: %v", err)
	}
}

// TestPasswordsCost: the zero Passwords, the one production uses, hashes at
// PasswordCost; a lower Cost, which only tests set, hashes at that cost; a
// hash is checked at its own cost whatever the Passwords', and an unknown
// name (an empty hash) never matches at the lower cost either.
func TestPasswordsCost(t *testing.T) {
	if PasswordCost != 10 {
		t.Fatalf("PasswordCost %d, want 10", PasswordCost)
	}
	for _, p := range []Passwords{{}, {Cost: bcrypt.MinCost}} {
		h, err := p.Hash("correct horse")
		if err != nil {
			t.Fatal(err)
		}
		want := p.Cost
		if want == 0 {
			want = PasswordCost
		}
		if got, err := bcrypt.Cost([]byte(h)); err != nil || got != want {
			t.Errorf("%+v: hash of cost %d (%v), want %d", p, got, err, want)
		}
	}
	cheap := Passwords{Cost: bcrypt.MinCost}
	h, err := cheap.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !PasswordMatches(h, "correct horse") || PasswordMatches(h, "correct horsf") {
		t.Error("the production Passwords does not check a hash at its own cost")
	}
	if cheap.Matches("", "no account has this password") || cheap.Matches("", "") {
		t.Error("an unknown name matched")
	}
}

func TestSignInLocked(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ago := func(ds ...time.Duration) []time.Time {
		var out []time.Time
		for _, d := range ds {
			out = append(out, now.Add(-d))
		}
		return out
	}
	// every is n failures, one each 30 seconds from start ago.
	every := func(n int, start time.Duration) []time.Time {
		var ds []time.Duration
		for i := range n {
			ds = append(ds, start+time.Duration(i)*30*time.Second)
		}
		return ago(ds...)
	}
	m := time.Minute
	for _, tt := range []struct {
		name               string
		here, allAddresses []time.Time
		locked             bool
		left               time.Duration
	}{
		{"none", nil, nil, false, 0},
		{"four", ago(0, m, 2*m, 3*m), ago(0, m, 2*m, 3*m), false, 0},
		{"five just now", ago(0, m, 2*m, 3*m, 4*m), ago(0, m, 2*m, 3*m, 4*m), true, 15 * m},
		{"five, the last 10 minutes ago", ago(10*m, 11*m, 12*m, 13*m, 14*m), ago(10*m, 11*m, 12*m, 13*m, 14*m), true, 5 * m},
		{"five, the lock over", ago(15*m, 16*m, 17*m, 18*m, 19*m), ago(15*m, 16*m, 17*m, 18*m, 19*m), false, 0},
		{"five spread over more than the window", ago(0, m, 2*m, 3*m, 16*m), ago(0, m, 2*m, 3*m, 16*m), false, 0},
		{"five within exactly the window", ago(0, m, 2*m, 3*m, 15*m), ago(0, m, 2*m, 3*m, 15*m), true, 15 * m},
		{"a failure after a lock ended", ago(0, 16*m, 16*m, 16*m, 16*m), ago(0, 16*m, 16*m, 16*m, 16*m), false, 0},
		// Other addresses: their failures lock this one only at twenty.
		{"nineteen elsewhere", nil, every(19, 0), false, 0},
		{"twenty elsewhere", nil, every(20, 0), true, 15 * m},
		{"twenty elsewhere, the last 5 minutes ago", nil, every(20, 5*m), true, 10 * m},
		{"twenty over more than the window", nil, append(every(19, 0), now.Add(-16*m)), false, 0},
		{"four here, nineteen in all", ago(0, m, 2*m, 3*m), every(19, 0), false, 0},
		{"both: the longer lock", ago(2*m, 3*m, 4*m, 5*m, 6*m), every(20, 0), true, 15 * m},
	} {
		locked, left := SignInLocked(tt.here, tt.allAddresses, now)
		if locked != tt.locked || left != tt.left {
			t.Errorf("%s: locked %v for %s, want %v for %s", tt.name, locked, left, tt.locked, tt.left)
		}
	}
	if e := TooManyAttempts(90*time.Second + time.Millisecond); e.Code != ETOOMANYATTEMPTS || e.RetryAfter != 91 {
		t.Fatalf("TooManyAttempts: %+v", e)
	}
	if e := TooManyAttempts(time.Millisecond); e.RetryAfter != 1 {
		t.Fatalf("TooManyAttempts: %+v", e)
	}
}

func TestSignInAddress(t *testing.T) {
	for _, tt := range []struct{ source, want string }{
		{"203.0.113.9", "203.0.113.9"},
		{"203.0.113.9:51234", "203.0.113.9"},
		{"::ffff:203.0.113.9", "203.0.113.9"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"", ""},
		{"not an address", ""},
		{"203.0.113.9, 10.0.0.1", ""},
	} {
		got := SignInAddress(tt.source)
		if got != tt.want || len(got) > SignInAddressMaxBytes {
			t.Errorf("SignInAddress(%q) = %q, want %q", tt.source, got, tt.want)
		}
	}
	if !IsOwnerName("admin") || !IsOwnerName("ADMIN") || !IsOwnerName("Admin") || IsOwnerName("admin2") || IsOwnerName(" admin") {
		t.Fatal("IsOwnerName")
	}
}

func TestRoleMay(t *testing.T) {
	want := map[AdminAction]bool{ActionCheckIn: true, ActionNoShow: true, ActionWalkIn: true, ActionReschedule: true, ActionNote: true,
		ActionCheckout: true, ActionCancelUnpaid: true, ActionCancel: false, ActionSchedule: false, ActionSlotChange: false, ActionStaff: false,
		ActionMenu: false, ActionMenuView: true, ActionReports: false, ActionReconcile: false}
	if len(want) != len(AdminActions) {
		t.Fatalf("the table names %d actions of %d", len(want), len(AdminActions))
	}
	for _, a := range AdminActions {
		if !RoleOwner.May(a) || RoleOwner.Allow(a) != nil {
			t.Errorf("the owner may not %s", a)
		}
		if RoleStaff.May(a) != want[a] {
			t.Errorf("staff may %s: %v, want %v", a, RoleStaff.May(a), want[a])
		}
		if err := RoleStaff.Allow(a); (err == nil) != want[a] || err != nil && ErrorCode(err) != EFORBIDDEN {
			t.Errorf("staff %s: %v", a, err)
		}
		if Role("").May(a) || Role("boss").May(a) {
			t.Errorf("an unknown role may %s", a)
		}
	}
}
