package handler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
)

// staffState is what a refused request must leave alone of the staff
// accounts, beside dbState: who is disabled, each password, each change.
func (s *system) staffState() string {
	s.t.Helper()
	rows, err := s.store.SQL().Query(`SELECT staff_id, name, role, password_hash, disabled, updated_at FROM t_staff ORDER BY staff_id`)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, disabled int64
		var name, role, hash, updated string
		if err := rows.Scan(&id, &name, &role, &hash, &disabled, &updated); err != nil {
			s.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d|%s|%s|%s|%d|%s\n", id, name, role, hash, disabled, updated)
	}
	return b.String()
}

// TestNullRefusedForEveryRequestField: null for any field of any request body
// (none of today's is nullable) is 400 BAD_REQUEST and changes nothing, also
// where encoding/json would read it as an absent field beside one that is
// given ({"capacity":2,"open":null}) or as false ({"forfeitDeposit":null}).
func TestNullRefusedForEveryRequestField(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	paid, free, target := s.freshSlot(3, 5000), s.freshSlot(3, 0), s.freshSlot(3, 0)
	pending, a := s.reserve("o-null-pending", paid)
	if pending == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	confirmed, a := s.reserve("o-null-confirmed", free)
	if confirmed == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	walkIn := s.walkIn(map[string]any{"slotId": free, "name": "李四", "phone": "13800138000"})
	if walkIn.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", walkIn.Status, walkIn.Body)
	}
	customer := int64(obj(t, obj(t, walkIn.JSON["booking"])["customer"])["customerId"].(float64))
	st := s.call("POST", "/admin/staff", testAdmin, map[string]any{"name": "小美", "role": "staff", "password": "xiaomei's password"})
	if st.Status != http.StatusCreated {
		t.Fatalf("create staff: %d %s", st.Status, st.Body)
	}
	staff := int64(obj(t, st.JSON["staff"])["staffId"].(float64))
	if a := s.call("PUT", "/me", s.token("o-null-me"), map[string]any{"name": "王小美"}); a.Status != http.StatusOK {
		t.Fatalf("PUT /me: %d %s", a.Status, a.Body)
	}

	day := time.Now().In(shanghai(t)).AddDate(0, 0, 40).Format(time.DateOnly)
	schedule := map[string]string{"from": `"` + day + `"`, "to": `"` + day + `"`, "open": `"10:00"`, "close": `"12:00"`,
		"slotMinutes": "60", "capacity": "2", "priceFen": "0"}
	scheduleWith := func(null string) string {
		var parts []string
		for _, k := range []string{"from", "to", "open", "close", "slotMinutes", "capacity", "priceFen"} {
			v := schedule[k]
			if k == null {
				v = "null"
			}
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	customerTok, pendingTok, confirmedTok := s.token("o-null-me"), s.token("o-null-pending"), s.token("o-null-confirmed")
	slotPath, bookingPath := "/admin/slots/"+itoa64(paid), "/admin/bookings/"+itoa64(confirmed)
	staffPath := "/admin/staff/" + itoa64(staff)
	cases := []struct {
		field, method, path, bearer, body string
	}{
		{"code", "POST", "/login", "", `{"code":null}`},
		{"slotId", "POST", "/bookings", customerTok, `{"slotId":null}`},
		{"forfeitDeposit", "POST", "/bookings/" + itoa64(pending) + "/cancel", pendingTok, `{"forfeitDeposit":null}`},
		{"slotId", "POST", "/bookings/" + itoa64(confirmed) + "/reschedule", confirmedTok, `{"slotId":null}`},
		{"name", "PUT", "/me", customerTok, `{"name":null}`},
		{"phoneCode", "PUT", "/me", customerTok, `{"phoneCode":null}`},
		{"phoneCode", "PUT", "/me", customerTok, `{"name":"A","phoneCode":null}`},
		{"from", "POST", "/admin/slots", testAdmin, scheduleWith("from")},
		{"to", "POST", "/admin/slots", testAdmin, scheduleWith("to")},
		{"open", "POST", "/admin/slots", testAdmin, scheduleWith("open")},
		{"close", "POST", "/admin/slots", testAdmin, scheduleWith("close")},
		{"slotMinutes", "POST", "/admin/slots", testAdmin, scheduleWith("slotMinutes")},
		{"capacity", "POST", "/admin/slots", testAdmin, scheduleWith("capacity")},
		{"priceFen", "POST", "/admin/slots", testAdmin, scheduleWith("priceFen")},
		{"capacity", "PATCH", slotPath, testAdmin, `{"capacity":null}`},
		{"capacity", "PATCH", slotPath, testAdmin, `{"capacity":null,"open":false}`},
		{"open", "PATCH", slotPath, testAdmin, `{"open":null}`},
		{"open", "PATCH", slotPath, testAdmin, `{"capacity":2,"open":null}`},
		{"slotId", "POST", "/admin/bookings", testAdmin, `{"slotId":null,"name":"张三"}`},
		{"name", "POST", "/admin/bookings", testAdmin, fmt.Sprintf(`{"slotId":%d,"name":null}`, target)},
		{"phone", "POST", "/admin/bookings", testAdmin, fmt.Sprintf(`{"slotId":%d,"name":"张三","phone":null}`, target)},
		{"note", "PATCH", "/admin/customers/" + itoa64(customer), testAdmin, `{"note":null}`},
		{"slotId", "POST", bookingPath + "/reschedule", testAdmin, `{"slotId":null}`},
		{"code", "POST", "/admin/checkin", testAdmin, `{"code":null}`},
		{"name", "POST", "/admin/staff", testAdmin, `{"name":null,"role":"staff","password":"a long password"}`},
		{"role", "POST", "/admin/staff", testAdmin, `{"name":"小丽","role":null,"password":"a long password"}`},
		{"password", "POST", "/admin/staff", testAdmin, `{"name":"小丽","role":"staff","password":null}`},
		{"disabled", "PATCH", staffPath, testAdmin, `{"disabled":null}`},
		{"disabled", "PATCH", staffPath, testAdmin, `{"disabled":null,"password":"a new long password"}`},
		{"password", "PATCH", staffPath, testAdmin, `{"password":null}`},
		{"password", "PATCH", staffPath, testAdmin, `{"disabled":true,"password":null}`},
	}
	before := s.dbState() + s.staffState()
	for _, c := range cases {
		t.Run(c.field+" of "+c.method+" "+c.path, func(t *testing.T) {
			a := s.call(c.method, c.path, c.bearer, c.body)
			if a.Status != http.StatusBadRequest || a.code() != booking.EBADREQUEST {
				t.Errorf("%s: %d %s, want 400 BAD_REQUEST", c.body, a.Status, a.Body)
			}
			if after := s.dbState() + s.staffState(); after != before {
				t.Errorf("%s changed the database:\nbefore:\n%s\nafter:\n%s", c.body, before, after)
				before = after
			}
		})
	}
	if got := s.status(pending); got != "pending_payment" {
		t.Errorf("the pending booking is %s after a refused cancel", got)
	}
	// The same bodies without the null do what they say.
	if a := s.call("PATCH", slotPath, testAdmin, `{"capacity":2}`); a.Status != http.StatusOK {
		t.Errorf("PATCH capacity: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/bookings/"+itoa64(pending)+"/cancel", pendingTok, `{"forfeitDeposit":false}`); a.Status != http.StatusOK {
		t.Errorf("cancel with forfeitDeposit false: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/admin/slots", testAdmin, scheduleWith("")); a.Status != http.StatusCreated {
		t.Errorf("the schedule without a null: %d %s", a.Status, a.Body)
	}
}

// TestScheduleTimesAreHHMM: a schedule's open and close are HH:MM with two
// digits each; "9:00" is 400 and creates nothing.
func TestScheduleTimesAreHHMM(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	day := time.Now().In(shanghai(t)).AddDate(0, 0, 41).Format(time.DateOnly)
	body := func(open, closing string) map[string]any {
		return map[string]any{"from": day, "to": day, "open": open, "close": closing, "slotMinutes": 60, "capacity": 2, "priceFen": 0}
	}
	before := s.dbState()
	for _, c := range [][2]string{{"9:00", "12:00"}, {"08:00", "9:00"}, {"9:00", "9:30"}, {"09:0", "12:00"}, {"0900", "12:00"}, {"24:00", "23:00"}, {"09:00:00", "12:00"}} {
		s.wantError(s.call("POST", "/admin/slots", testAdmin, body(c[0], c[1])), http.StatusBadRequest, booking.EBADREQUEST)
	}
	s.unchanged(before, "schedules with a time of day not HH:MM")
	a := s.call("POST", "/admin/slots", testAdmin, body("09:00", "12:00"))
	if a.Status != http.StatusCreated || a.JSON["created"] != 3.0 {
		t.Errorf("09:00-12:00: %d %s, want 201 with 3 slots", a.Status, a.Body)
	}
}

// TestLoginCodeLimitCountsCharacters: the login code's limit, 1-128, counts
// characters as the document says, not bytes: 128 characters of three or four
// bytes each are a code WeChat is asked about; 129 characters are 400.
func TestLoginCodeLimitCountsCharacters(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	for _, code := range []string{strings.Repeat("码", 128), strings.Repeat("é", 128), strings.Repeat("\U0001F485", 128), strings.Repeat("a", 128), "码"} {
		if a := s.call("POST", "/login", "", map[string]string{"code": code}); a.Status != http.StatusOK {
			t.Errorf("a code of %d characters, %d bytes: %d %s, want 200", len([]rune(code)), len(code), a.Status, a.Body)
		}
	}
	before := s.dbState()
	for _, code := range []string{strings.Repeat("码", 129), strings.Repeat("a", 129), ""} {
		s.wantError(s.call("POST", "/login", "", map[string]string{"code": code}), http.StatusBadRequest, booking.EBADREQUEST)
	}
	s.unchanged(before, "refused login codes")
}
