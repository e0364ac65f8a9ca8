package handler

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wxlogin/wxloginsim"
)

// dbState summarises everything a refused request must leave as it was: every
// slot's seats and state, every booking's status and keys, and the audit trail's
// length.
func (s *system) dbState() string {
	s.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT slot_id, capacity, booked, is_open, price_fen FROM t_slot ORDER BY slot_id`,
		`SELECT book_id, slot_id, COALESCE(openid, ''), COALESCE(customer_id, 0), status, COALESCE(idem_key, ''), COALESCE(refund_status, ''), lock_expire, reschedules FROM t_booking ORDER BY book_id`,
		`SELECT COUNT(*) FROM t_audit`,
		`SELECT COUNT(*) FROM t_money`,
		`SELECT customer_id, COALESCE(openid, ''), COALESCE(name, ''), COALESCE(phone, ''), COALESCE(note, '') FROM t_customer ORDER BY customer_id`,
	} {
		rows, err := s.store.SQL().Query(q)
		if err != nil {
			s.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				s.t.Fatal(err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%v|", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
	}
	return b.String()
}

// unchanged fails the test if the database is not as before.
func (s *system) unchanged(before, what string) {
	s.t.Helper()
	if after := s.dbState(); after != before {
		s.t.Errorf("%s changed the database:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// wantError checks an error answer: the status and code of the error table in
// functions/README.md, the customer message of that code and nothing else, and
// no trace of SQL, a stack, a setting's name or a secret.
func (s *system) wantError(a answer, status int, code string) {
	s.t.Helper()
	if a.Status != status || a.code() != code {
		s.t.Errorf("got %d %s, want %d %s", a.Status, a.Body, status, code)
		return
	}
	if len(a.JSON) != 2 || a.JSON["message"] != booking.Errorf(code, "").Message {
		s.t.Errorf("error body is not {code, message} with the customer message: %s", a.Body)
	}
	s.noLeak(string(a.Body))
}

func (s *system) noLeak(body string) {
	s.t.Helper()
	for _, bad := range []string{"SELECT", "INSERT", "UPDATE", "DELETE", "t_booking", "t_slot", "t_audit", "mysql", "sql",
		"Error 1", "dial tcp", "goroutine", ".go:", "panic", "SESSION_SECRET", "ADMIN_TOKEN", "WX_APP", "WECHATPAY",
		"MYSQL_DSN", "errcode", "Bearer", "s1.", testSecret, testAdmin, testAppSecret, s.sim.APIv3Key()} {
		if strings.Contains(body, bad) {
			s.t.Errorf("error answer contains %q: %s", bad, body)
		}
	}
}

func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %v", v)
	}
	return m
}

func shopDate(t *testing.T, at time.Time) string { return at.In(shanghai(t)).Format("2006-01-02") }

func TestCustomerRoutes(t *testing.T) {
	t.Parallel()
	s := newSystem(t)

	a := s.call("GET", "/healthz", "", nil)
	if a.Status != 200 || string(a.Body) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", a.Status, a.Body)
	}

	a = s.call("POST", "/login", "", map[string]string{"code": "happy-code"})
	if a.Status != 200 {
		t.Fatalf("login: %d %s", a.Status, a.Body)
	}
	token, _ := a.JSON["token"].(string)
	exp, err := time.Parse(time.RFC3339, fmt.Sprint(a.JSON["expiresAt"]))
	if err != nil || !strings.HasSuffix(fmt.Sprint(a.JSON["expiresAt"]), "+08:00") || !exp.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("expiresAt %v (%v)", a.JSON["expiresAt"], err)
	}
	if len(a.JSON) != 2 {
		t.Errorf("login answers more than token and expiresAt: %s", a.Body)
	}
	openid := wxloginsim.OpenID(testAppID, "happy-code")

	slot := s.freshSlot(2, 5000)
	day := shopDate(t, s.slotStart(slot))
	findSlot := func() map[string]any {
		t.Helper()
		a := s.call("GET", "/slots?date="+day, "", nil)
		if a.Status != 200 || a.JSON["date"] != day {
			t.Fatalf("slots: %d %s", a.Status, a.Body)
		}
		for _, v := range a.JSON["slots"].([]any) {
			if sl := obj(t, v); sl["slotId"] == float64(slot) {
				return sl
			}
		}
		t.Fatalf("slot %d not listed under %s: %s", slot, day, a.Body)
		return nil
	}
	sl := findSlot()
	for k, want := range map[string]any{"capacity": 2.0, "remaining": 2.0, "priceFen": 5000.0, "bookable": true} {
		if sl[k] != want {
			t.Errorf("slot %s = %v, want %v", k, sl[k], want)
		}
	}
	if len(sl) != 7 || !strings.HasSuffix(sl["startAt"].(string), "+08:00") || !strings.HasSuffix(sl["endAt"].(string), "+08:00") {
		t.Errorf("slot shape %v", sl)
	}

	a = s.call("POST", "/bookings", token, map[string]any{"slotId": slot}, "Idempotency-Key", "happy-1")
	if a.Status != 201 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	pay := obj(t, a.JSON["payment"])
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "amountFen,bookingId,cancelFreeUntil,checkinCode,createdAt,endAt,lockExpireAt,priceFen,refund,serviceId,serviceName,slotId,startAt,status,technicianId,technicianName" {
		t.Errorf("booking fields %v", keys)
	}
	if b["status"] != "pending_payment" || b["slotId"] != float64(slot) || b["amountFen"] != 5000.0 || b["priceFen"] != 5000.0 || b["refund"] != nil ||
		b["serviceId"] != nil || b["serviceName"] != nil || b["technicianId"] != nil || b["technicianName"] != nil {
		t.Errorf("booking %v", b)
	}
	for _, k := range []string{"timeStamp", "nonceStr", "package", "signType", "paySign"} {
		if v, _ := pay[k].(string); v == "" {
			t.Errorf("payment without %s: %v", k, pay)
		}
	}
	id := int64(b["bookingId"].(float64))
	if r := findSlot()["remaining"]; r != 1.0 {
		t.Errorf("remaining after reserve %v", r)
	}

	a = s.call("POST", "/bookings/"+itoa64(id)+"/pay", token, nil)
	if a.Status != 200 || obj(t, a.JSON["booking"])["bookingId"] != float64(id) || !strings.HasPrefix(obj(t, a.JSON["payment"])["package"].(string), "prepay_id=") {
		t.Fatalf("pay again: %d %s", a.Status, a.Body)
	}
	if o := s.sim.Orders(); len(o) != 1 || o[0].OutTradeNo != booking.OutTradeNo(id) || o[0].OpenID != openid || len(o[0].PrepayIDs) != 2 {
		t.Errorf("WeChat orders %+v, want one order paid for twice", o)
	}

	a = s.call("GET", "/bookings/mine", token, nil)
	if a.Status != 200 || len(a.JSON["bookings"].([]any)) != 1 {
		t.Fatalf("mine: %d %s", a.Status, a.Body)
	}
	if _, ok := obj(t, a.JSON["bookings"].([]any)[0])["openid"]; ok {
		t.Error("the customer's list shows the openid")
	}

	a = s.call("POST", "/bookings/"+itoa64(id)+"/cancel", token, nil)
	if a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "cancelled" || obj(t, a.JSON["booking"])["refund"] != nil {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	if o, _ := s.sim.Order(booking.OutTradeNo(id)); o.State != "CLOSED" {
		t.Errorf("WeChat order after cancel: %s", o.State)
	}
	if r := findSlot()["remaining"]; r != 2.0 {
		t.Errorf("remaining after cancel %v", r)
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestMineNewestFirstAtMost50(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	free := s.freshSlot(1, 0)
	openid, token := s.customer("many")
	// 51 finished bookings and one of another customer's, written in one
	// statement: going through reserve and cancel 51 times costs seconds under -race.
	var ids []int64
	q := `INSERT INTO t_booking (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at, starts_at) VALUES `
	var args []any
	for i := range 52 {
		if i > 0 {
			q += ", "
		}
		q += "(?, ?, ?, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), (SELECT start_at FROM t_slot WHERE slot_id = ?))"
		who := openid
		if i == 30 {
			who = "o-someone-else"
		}
		args = append(args, free, who, booking.StatusCancelled, free)
	}
	if _, err := s.store.SQL().ExecContext(ctx, q, args...); err != nil {
		t.Fatal(err)
	}
	rows, err := s.store.SQL().QueryContext(ctx, `SELECT book_id FROM t_booking WHERE openid = ? ORDER BY book_id`, openid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != 51 {
		t.Fatalf("%d bookings written", len(ids))
	}
	// And one through the API, the newest (a free slot confirms at once).
	id, a := s.reserve(openid, free)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	ids = append(ids, id)
	a = s.call("GET", "/bookings/mine", token, nil)
	list, _ := a.JSON["bookings"].([]any)
	if a.Status != 200 || len(list) != 50 {
		t.Fatalf("mine: %d, %d bookings", a.Status, len(list))
	}
	for i, v := range list {
		b := obj(t, v)
		status := "cancelled"
		if i == 0 {
			status = "confirmed"
		}
		if want := ids[len(ids)-1-i]; b["bookingId"] != float64(want) || b["status"] != status {
			t.Fatalf("mine[%d] = %v, want booking %d (newest first)", i, b, want)
		}
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	sched := map[string]any{"from": "2027-03-01", "to": "2027-03-02", "open": "10:00", "close": "13:00", "slotMinutes": 90, "capacity": 3, "priceFen": 5000}
	before := s.countRows("t_slot")
	a := s.call("POST", "/admin/slots", testAdmin, sched)
	if a.Status != 201 || string(a.Body) != `{"created":4,"skipped":0}` {
		t.Fatalf("schedule: %d %s", a.Status, a.Body)
	}
	a = s.call("POST", "/admin/slots", testAdmin, sched)
	if a.Status != 201 || string(a.Body) != `{"created":0,"skipped":4}` {
		t.Fatalf("schedule again: %d %s", a.Status, a.Body)
	}
	if n := s.countRows("t_slot"); n != before+4 {
		t.Fatalf("%d slots, want %d", n, before+4)
	}
	a = s.call("GET", "/slots?date=2027-03-01", "", nil)
	if list := a.JSON["slots"].([]any); len(list) != 2 || obj(t, list[0])["startAt"] != "2027-03-01T10:00:00+08:00" || obj(t, list[1])["endAt"] != "2027-03-01T13:00:00+08:00" {
		t.Errorf("the schedule's first day: %s", a.Body)
	}

	slot := s.freshSlot(2, 5000)
	a = s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"capacity": 5})
	if a.Status != 200 || a.JSON["capacity"] != 5.0 || a.JSON["remaining"] != 5.0 || a.JSON["open"] != true || a.JSON["bookable"] != true {
		t.Fatalf("capacity: %d %s", a.Status, a.Body)
	}
	a = s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"open": false})
	if a.Status != 200 || a.JSON["open"] != false || a.JSON["bookable"] != false || a.JSON["capacity"] != 5.0 {
		t.Fatalf("close: %d %s", a.Status, a.Body)
	}
	_, a = s.reserve("o-closed", slot)
	s.wantError(a, 422, booking.ESLOTNOTBOOKABLE)

	// The day's bookings, each with its openid; the salon cancels one.
	paid := s.freshSlot(3, 5000)
	id, a := s.reserve("o-admin-customer", paid)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	day := shopDate(t, s.slotStart(paid))
	a = s.call("GET", "/admin/bookings?date="+day, testAdmin, nil)
	if a.Status != 200 || a.JSON["date"] != day {
		t.Fatalf("admin bookings: %d %s", a.Status, a.Body)
	}
	found := false
	for _, v := range a.JSON["bookings"].([]any) {
		if b := obj(t, v); b["bookingId"] == float64(id) {
			found = b["openid"] == "o-admin-customer" && b["status"] == "pending_payment"
		}
	}
	if !found {
		t.Errorf("booking %d with its openid not in %s", id, a.Body)
	}
	a = s.call("POST", "/admin/bookings/"+itoa64(id)+"/cancel", testAdmin, nil)
	if b := obj(t, a.JSON["booking"]); a.Status != 200 || b["status"] != "cancelled" || b["openid"] != "o-admin-customer" {
		t.Fatalf("admin cancel: %d %s", a.Status, a.Body)
	}

	// Check-in: confirmed (a free slot confirms at once) -> completed, once.
	free := s.doorSlot(3, 0)
	id, a = s.reserve("o-checkin", free)
	if id == 0 || obj(t, a.JSON["booking"])["status"] != "confirmed" || a.JSON["payment"] != nil {
		t.Fatalf("free reserve: %d %s", a.Status, a.Body)
	}
	a = s.call("POST", "/admin/bookings/"+itoa64(id)+"/checkin", testAdmin, nil)
	if a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "completed" {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	before2 := s.dbState()
	s.wantError(s.call("POST", "/admin/bookings/"+itoa64(id)+"/checkin", testAdmin, nil), 409, booking.EINVALIDSTATE)
	s.wantError(s.call("POST", "/admin/bookings/"+itoa64(id)+"/cancel", testAdmin, nil), 409, booking.EINVALIDSTATE)
	s.unchanged(before2, "a second check-in and a cancel after check-in")
	s.wantError(s.call("POST", "/admin/bookings/999999/checkin", testAdmin, nil), 404, booking.ENOTFOUND)
	s.wantError(s.call("PATCH", "/admin/slots/999999", testAdmin, map[string]any{"capacity": 3}), 404, booking.ENOTFOUND)
	s.wantError(s.call("PATCH", "/admin/slots/999999", testAdmin, map[string]any{"open": false}), 404, booking.ENOTFOUND)
	mysqltest.CheckInvariant(t, s.store)
}

// TestErrorCodes produces every code of the error table (functions/README.md,
// "Errors") through the gateway
// and checks its HTTP status, its body, and that a refusal wrote nothing.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()

	one := s.freshSlot(1, 5000)
	idA, a := s.reserve("o-a", one, "Idempotency-Key", "key-a")
	if idA == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	other := s.freshSlot(3, 5000)
	two := s.freshSlot(3, 5000)
	for _, who := range []string{"o-d", "o-e"} {
		if id, a := s.reserve(who, two); id == 0 {
			t.Fatalf("reserve: %d %s", a.Status, a.Body)
		}
	}
	past := s.slot(-2*time.Hour, 3, 5000)
	far := s.slot(20*24*time.Hour, 3, 5000)
	closed := s.freshSlot(3, 5000)
	no := false
	if _, err := s.store.UpdateSlot(ctx, closed, booking.SlotUpdate{Open: &no}, booking.ActorSalon); err != nil {
		t.Fatal(err)
	}
	idC, _ := s.reserve("o-c", other)
	if a := s.call("POST", "/bookings/"+itoa64(idC)+"/cancel", s.token("o-c"), nil); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	big := `{"slotId":1,"pad":"` + strings.Repeat("x", 1<<20) + `"}`

	tests := []struct {
		name   string
		do     func() answer
		status int
		code   string
	}{
		{"malformed JSON", func() answer { return s.call("POST", "/bookings", s.token("o-b"), `{"slotId":`) }, 400, booking.EBADREQUEST},
		{"no token", func() answer { return s.call("GET", "/bookings/mine", "", nil) }, 401, booking.EUNAUTHORIZED},
		{"wrong admin token", func() answer { return s.call("POST", "/admin/slots", "not-the-admin-token", map[string]any{}) }, 401, booking.EUNAUTHORIZED},
		{"customer token on admin", func() answer { return s.call("GET", "/admin/bookings?date=2026-12-01", s.token("o-b"), nil) }, 401, booking.EUNAUTHORIZED},
		{"no such slot", func() answer { return s.call("POST", "/bookings", s.token("o-b"), map[string]any{"slotId": 999999999}) }, 404, booking.ENOTFOUND},
		{"no such booking to pay", func() answer { return s.call("POST", "/bookings/999999999/pay", s.token("o-b"), nil) }, 404, booking.ENOTFOUND},
		{"no such booking to cancel", func() answer { return s.call("POST", "/bookings/999999999/cancel", s.token("o-b"), nil) }, 404, booking.ENOTFOUND},
		{"sold out", func() answer { return s.call("POST", "/bookings", s.token("o-b"), map[string]any{"slotId": one}) }, 409, booking.ESOLDOUT},
		{"active booking exists", func() answer { return s.call("POST", "/bookings", s.token("o-a"), map[string]any{"slotId": other}) }, 409, booking.EACTIVEBOOKINGEXISTS},
		{"idempotency key with another slot", func() answer {
			return s.call("POST", "/bookings", s.token("o-a"), map[string]any{"slotId": other}, "Idempotency-Key", "key-a")
		}, 409, booking.EINVALIDSTATE},
		{"capacity below booked", func() answer {
			return s.call("PATCH", "/admin/slots/"+itoa64(two), testAdmin, map[string]any{"capacity": 1})
		}, 409, booking.EINVALIDSTATE},
		{"pay a cancelled booking", func() answer { return s.call("POST", "/bookings/"+itoa64(idC)+"/pay", s.token("o-c"), nil) }, 409, booking.EINVALIDSTATE},
		{"1 MiB body", func() answer { return s.call("POST", "/bookings", s.token("o-b"), big) }, 413, booking.EPAYLOADTOOLARGE},
		{"slot started", func() answer { return s.call("POST", "/bookings", s.token("o-b"), map[string]any{"slotId": past}) }, 422, booking.ESLOTNOTBOOKABLE},
		{"slot beyond the window", func() answer { return s.call("POST", "/bookings", s.token("o-b"), map[string]any{"slotId": far}) }, 422, booking.ESLOTNOTBOOKABLE},
		{"slot closed", func() answer { return s.call("POST", "/bookings", s.token("o-b"), map[string]any{"slotId": closed}) }, 422, booking.ESLOTNOTBOOKABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := s.with(t)
			before := s.dbState()
			s.wantError(tt.do(), tt.status, tt.code)
			s.unchanged(before, tt.name)
		})
	}

	// A path no route serves (the local gateway answers that itself, so the raw
	// event goes to the function, as a Function URL would deliver it).
	st, body := s.invokeRaw("reserve", []byte(`{"httpMethod":"GET","path":"/bookings/nope/nope","headers":{}}`))
	if st != 404 || body != `{"code":"NOT_FOUND","message":"没有找到"}` {
		t.Errorf("unknown path: %d %s", st, body)
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestForbiddenWithoutAdminToken(t *testing.T) {
	t.Parallel()
	s := newSystem(t, func(env map[string]string) { delete(env, "ADMIN_TOKEN") })
	slot := s.freshSlot(3, 0)
	id, a := s.reserve("o-f", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	before := s.dbState()
	for _, bearer := range []string{"", testAdmin, "anything"} {
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/admin/slots", map[string]any{"from": "2027-01-01", "to": "2027-01-01", "open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0}},
			{"PATCH", "/admin/slots/" + itoa64(slot), map[string]any{"open": false}},
			{"GET", "/admin/bookings?date=2026-12-01", nil},
			{"POST", "/admin/bookings/" + itoa64(id) + "/cancel", nil},
			{"POST", "/admin/bookings/" + itoa64(id) + "/checkin", nil},
		} {
			s.wantError(s.call(r.method, r.path, bearer, r.body), 403, booking.EFORBIDDEN)
		}
	}
	s.unchanged(before, "admin routes without ADMIN_TOKEN")
}

// TestInternalErrorsNameNothing: a missing setting is 500 INTERNAL and a
// database that does not answer is 503 UNAVAILABLE with Retry-After, each with
// the generic message; the log, not the answer, names the cause.
func TestInternalErrorsNameNothing(t *testing.T) {
	t.Parallel()
	t.Run("SESSION_SECRET missing", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t, func(env map[string]string) { delete(env, "SESSION_SECRET") })
		slot := s.freshSlot(3, 5000)
		before := s.dbState()
		s.wantError(s.call("POST", "/login", "", map[string]string{"code": "c"}), 500, booking.EINTERNAL)
		s.wantError(s.call("POST", "/bookings", s.token("o-x"), map[string]any{"slotId": slot}), 500, booking.EINTERNAL)
		s.wantError(s.call("GET", "/bookings/mine", s.token("o-x"), nil), 500, booking.EINTERNAL)
		s.unchanged(before, "requests without SESSION_SECRET")
		if !strings.Contains(s.logs.String(), "missing required setting SESSION_SECRET") {
			t.Errorf("the log does not name SESSION_SECRET:\n%s", s.logs.String())
		}
		// What needs no session still works.
		if a := s.call("GET", "/slots?date=2026-12-01", "", nil); a.Status != 200 {
			t.Errorf("slots: %d %s", a.Status, a.Body)
		}
		if a := s.call("GET", "/admin/bookings?date=2026-12-01", testAdmin, nil); a.Status != 200 {
			t.Errorf("admin: %d %s", a.Status, a.Body)
		}
	})
	t.Run("WeChat refuses the app secret", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t, func(env map[string]string) { env["WX_APPSECRET"] = "not-the-app-secret" })
		s.wantError(s.call("POST", "/login", "", map[string]string{"code": "c"}), 500, booking.EINTERNAL)
		logs := s.logs.String()
		if !strings.Contains(logs, "WX_APPSECRET") || strings.Contains(logs, "not-the-app-secret") {
			t.Errorf("the log should name the setting, never its value:\n%s", logs)
		}
	})
	t.Run("database down", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t, func(env map[string]string) { env["MYSQL_DSN"] = "root@tcp(127.0.0.1:1)/salon?timeout=1s" })
		a := s.call("GET", "/healthz", "", nil)
		if a.Status != 503 || string(a.Body) != `{"status":"unavailable"}` || a.Header.Get("Retry-After") == "" {
			t.Errorf("healthz: %d %v %s", a.Status, a.Header, a.Body)
		}
		for _, a := range []answer{
			s.call("GET", "/slots?date=2026-12-01", "", nil),
			s.call("POST", "/bookings", s.token("o-x"), map[string]any{"slotId": 1}),
			s.call("GET", "/admin/bookings?date=2026-12-01", testAdmin, nil),
		} {
			s.wantError(a, 503, booking.EUNAVAILABLE)
			if a.Header.Get("Retry-After") != apigw.RetryAfterSeconds {
				t.Errorf("503 UNAVAILABLE without Retry-After: %v", a.Header)
			}
		}
		if !strings.Contains(s.logs.String(), "connect") && !strings.Contains(s.logs.String(), "refused") {
			t.Errorf("the log does not say why:\n%s", s.logs.String())
		}
	})
}

// clock is a settable time source for the session signer.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestTokens(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	clk := &clock{now: time.Now()}
	s.apiEnv.Now = clk.Now // before the first request builds the signer

	a := s.call("POST", "/login", "", map[string]string{"code": "token-code"})
	if a.Status != 200 {
		t.Fatalf("login: %d %s", a.Status, a.Body)
	}
	token := a.JSON["token"].(string)
	if a := s.call("GET", "/bookings/mine", token, nil); a.Status != 200 {
		t.Fatalf("fresh token: %d %s", a.Status, a.Body)
	}
	slot := s.freshSlot(3, 5000)
	body := map[string]any{"slotId": slot}

	parts := strings.Split(token, ".")
	payload := []byte(parts[1])
	payload[len(payload)/2] ^= 0x01 // still base64url, now another payload
	tampered := parts[0] + "." + string(payload) + "." + parts[2]
	otherKey, _, err := (&session.Signer{Secret: []byte("another-secret-0123456789abcdef-xyz")}).Issue(wxloginsim.OpenID(testAppID, "token-code"))
	if err != nil {
		t.Fatal(err)
	}
	oldSigner := &session.Signer{Secret: []byte(testSecret), Now: func() time.Time { return time.Now().Add(-8 * 24 * time.Hour) }}
	stale, _, err := oldSigner.Issue(wxloginsim.OpenID(testAppID, "token-code"))
	if err != nil {
		t.Fatal(err)
	}

	before := s.dbState()
	for name, header := range map[string]string{
		"tampered":             "Bearer " + tampered,
		"another key":          "Bearer " + otherKey,
		"issued 8 days ago":    "Bearer " + stale,
		"signature cut":        "Bearer " + parts[0] + "." + parts[1] + ".",
		"not a token":          "Bearer hello",
		"admin token":          "Bearer " + testAdmin,
		"empty bearer":         "Bearer ",
		"basic scheme":         "Basic " + base64.StdEncoding.EncodeToString([]byte("a:b")),
		"token without scheme": token,
	} {
		for _, r := range []struct{ method, path string }{{"POST", "/bookings"}, {"GET", "/bookings/mine"}, {"POST", "/bookings/1/pay"}, {"POST", "/bookings/1/cancel"}} {
			var b any
			if r.path == "/bookings" {
				b = body
			}
			a := s.call(r.method, r.path, "", b, "Authorization", header)
			if a.Status != 401 || a.code() != booking.EUNAUTHORIZED {
				t.Errorf("%s on %s %s: %d %s", name, r.method, r.path, a.Status, a.Body)
			}
			s.noLeak(string(a.Body))
		}
	}
	s.unchanged(before, "requests with bad tokens")

	// The token expires when login said it would, by the signer's clock.
	exp, _ := time.Parse(time.RFC3339, a.JSON["expiresAt"].(string))
	clk.Add(exp.Sub(clk.Now()) - time.Second)
	if a := s.call("GET", "/bookings/mine", token, nil); a.Status != 200 {
		t.Fatalf("a second before expiry: %d %s", a.Status, a.Body)
	}
	clk.Add(time.Second)
	s.wantError(s.call("POST", "/bookings", token, body), 401, booking.EUNAUTHORIZED)
	s.wantError(s.call("GET", "/bookings/mine", token, nil), 401, booking.EUNAUTHORIZED)
	s.unchanged(before, "requests with an expired token")
	if !strings.Contains(s.logs.String(), "expired") {
		t.Error("the log does not say the token expired")
	}
}

func TestOtherCustomersBooking(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	id, a := s.reserve("o-owner", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	before := s.dbState()
	calls := len(s.sim.Calls())
	intruder := s.token("o-intruder")
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/pay", intruder, nil), 404, booking.ENOTFOUND)
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/cancel", intruder, nil), 404, booking.ENOTFOUND)
	if a := s.call("GET", "/bookings/mine", intruder, nil); a.Status != 200 || string(a.Body) != `{"bookings":[]}` {
		t.Errorf("the intruder's list: %d %s", a.Status, a.Body)
	}
	s.unchanged(before, "another customer's pay and cancel")
	if n := len(s.sim.Calls()); n != calls {
		t.Errorf("another customer's requests reached WeChat Pay (%d calls)", n-calls)
	}
	if o, _ := s.sim.Order(booking.OutTradeNo(id)); o.State != "NOTPAY" {
		t.Errorf("the owner's order is %s", o.State)
	}
}

func TestCancelFinishedBooking(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()

	cancelled, _ := s.reserve("o-1", s.freshSlot(3, 5000))
	if a := s.call("POST", "/bookings/"+itoa64(cancelled)+"/cancel", s.token("o-1"), nil); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	expired, _ := s.reserve("o-2", s.freshSlot(3, 5000))
	mysqltest.ExpireHold(t, s.store, expired)
	if _, err := Release(s.apiEnv)(ctx, []byte(`{"Type":"Timer"}`)); err != nil {
		t.Fatal(err)
	}
	completed, _ := s.reserve("o-3", s.doorSlot(3, 0))
	if a := s.call("POST", "/admin/bookings/"+itoa64(completed)+"/checkin", testAdmin, nil); a.Status != 200 {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	for who, id := range map[string]int64{"o-1": cancelled, "o-2": expired, "o-3": completed} {
		before := s.dbState()
		s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/cancel", s.token(who), nil), 409, booking.EINVALIDSTATE)
		s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/pay", s.token(who), nil), 409, booking.EINVALIDSTATE)
		s.unchanged(before, "cancel and pay of a "+s.status(id)+" booking")
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestBadRequests sends malformed input to every route that reads some: each is
// 400 (413 for a body over 64 KiB) and changes nothing.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	id, _ := s.reserve("o-owner", slot)
	tok := s.token("o-b")
	sid := itoa64(slot)
	validSched := `"from":"2027-01-01","to":"2027-01-02","open":"10:00","close":"12:00","slotMinutes":60,"capacity":2,"priceFen":0`

	type req struct {
		method, path, bearer string
		body                 any
		headers              []string
	}
	var reqs []req
	for _, b := range []string{``, `  `, `null`, `[]`, `"7"`, `7`, `{`, `{"slotId":`, `{"slotId":"7"}`, `{"slotId":7.5}`, `{"slotId":true}`,
		`{"slotId":null}`, `{}`, `{"slotId":0}`, `{"slotId":-1}`, `{"slotId":99999999999999999999}`, `{"slotId":` + sid + `,"openid":"o-owner"}`,
		`{"slotId":` + sid + `}{"slotId":` + sid + `}`, `{"slotId":` + sid + `} x`, `{"slotId":` + sid + `},`, `{"SlotId":` + sid + `,"slotId":` + sid + `,"x":1}`} {
		reqs = append(reqs, req{"POST", "/bookings", tok, b, nil})
	}
	for _, key := range []string{strings.Repeat("k", 65), "é" + strings.Repeat("k", 64), strings.Repeat("预", 65)} {
		reqs = append(reqs, req{"POST", "/bookings", tok, `{"slotId":` + sid + `}`, []string{"Idempotency-Key", key}})
	}
	for _, b := range []string{``, `{}`, `{"code":""}`, `{"code":123}`, `{"code":"c","appid":"x"}`, `{"code":"` + strings.Repeat("c", 129) + `"}`, `{"code":"c"} {}`} {
		reqs = append(reqs, req{"POST", "/login", "", b, nil})
	}
	for _, b := range []string{
		`{` + validSched + `,"extra":1}`,
		`{` + strings.Replace(validSched, `"capacity":2`, `"capacity":"2"`, 1) + `}`,
		`{` + strings.Replace(validSched, `,"priceFen":0`, ``, 1) + `}`,
		`{` + strings.Replace(validSched, `"2027-01-02"`, `"2026-12-31"`, 1) + `}`,
		`{` + strings.Replace(validSched, `"2027-01-02"`, `"2027-02-30"`, 1) + `}`,
		`{` + strings.Replace(validSched, `"12:00"`, `"10:00"`, 1) + `}`,
		`{` + strings.Replace(validSched, `"12:00"`, `"25:00"`, 1) + `}`,
		`{` + strings.Replace(validSched, `"capacity":2`, `"capacity":0`, 1) + `}`,
		`{` + strings.Replace(validSched, `"capacity":2`, `"capacity":51`, 1) + `}`,
		`{` + strings.Replace(validSched, `"priceFen":0`, `"priceFen":-1`, 1) + `}`,
		`{` + strings.Replace(validSched, `"priceFen":0`, `"priceFen":1000001`, 1) + `}`,
		`{` + strings.Replace(validSched, `"slotMinutes":60`, `"slotMinutes":0`, 1) + `}`,
		`{` + validSched + `}{}`,
	} {
		reqs = append(reqs, req{"POST", "/admin/slots", testAdmin, b, nil})
	}
	for _, b := range []string{`{}`, `{"capacity":0}`, `{"capacity":51}`, `{"capacity":"5"}`, `{"open":"true"}`, `{"open":"false"}`, `{"capacity":null}`, `{"booked":0}`} {
		reqs = append(reqs, req{"PATCH", "/admin/slots/" + sid, testAdmin, b, nil})
	}
	for _, p := range []string{"/bookings/abc/pay", "/bookings/0/pay", "/bookings/-1/cancel", "/bookings/1.5/cancel", "/bookings/99999999999999999999/pay", "/bookings/0x10/cancel"} {
		reqs = append(reqs, req{"POST", p, tok, nil, nil})
	}
	for _, p := range []string{"/admin/bookings/abc/cancel", "/admin/bookings/0/checkin"} {
		reqs = append(reqs, req{"POST", p, testAdmin, nil, nil})
	}
	reqs = append(reqs, req{"PATCH", "/admin/slots/x", testAdmin, `{"open":false}`, nil})

	before := s.dbState()
	for _, r := range reqs {
		a := s.call(r.method, r.path, r.bearer, r.body, r.headers...)
		if a.Status != 400 || a.code() != booking.EBADREQUEST {
			t.Errorf("%s %s %v %v: %d %s", r.method, r.path, r.body, r.headers, a.Status, a.Body)
			continue
		}
		s.wantError(a, 400, booking.EBADREQUEST)
	}
	// Just over the 64 KiB limit on every route with a body (TestErrorCodes sends
	// a whole MiB; under -race each MiB costs a second).
	big := `{"slotId":` + sid + `,"x":"` + strings.Repeat("a", 64<<10) + `"}`
	for _, r := range []req{{"POST", "/bookings", tok, big, nil}, {"POST", "/login", "", big, nil}, {"POST", "/admin/slots", testAdmin, big, nil},
		{"PATCH", "/admin/slots/" + sid, testAdmin, big, nil}, {"POST", "/bookings/" + itoa64(id) + "/cancel", s.token("o-owner"), big, nil}} {
		s.wantError(s.call(r.method, r.path, r.bearer, r.body), 413, booking.EPAYLOADTOOLARGE)
	}
	s.unchanged(before, "bad requests")

	// A control character in the Idempotency-Key can only come in a raw event: Go's
	// HTTP client refuses to send it.
	ev := fmt.Sprintf(`{"httpMethod":"POST","path":"/bookings","headers":{"authorization":"Bearer %s","idempotency-key":"a\u0007b"},"body":"{\"slotId\":%d}"}`, tok, slot)
	if st, body := s.invokeRaw("reserve", []byte(ev)); st != 400 {
		t.Errorf("control character in Idempotency-Key: %d %s", st, body)
	}
	s.unchanged(before, "a control character in Idempotency-Key")
}

// TestIdempotencyKeyCountsCharacters: a key is 1-64 characters, not bytes.
// Keys of Chinese (3 bytes a character) and emoji (4) up to 64 characters are
// taken, stored exactly and name their one reservation when sent again; the
// 65th character is 400 and changes nothing.
func TestIdempotencyKeyCountsCharacters(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(10, 5000)
	for i, key := range []string{
		strings.Repeat("预约", 15),      // 30 characters, 90 bytes: refused while keys were counted in bytes
		strings.Repeat("美", 64),       // 64 characters, 192 bytes
		strings.Repeat("💅", 64),       // 64 characters of 4 bytes each
		"k" + strings.Repeat("é", 63), // 64 characters, 127 bytes
		strings.Repeat("k", 64),       // 64 bytes, as before
	} {
		openid := fmt.Sprintf("o-key-%d", i)
		id, a := s.reserve(openid, slot, "Idempotency-Key", key)
		if id == 0 {
			t.Errorf("key of %d characters (%d bytes): %d %s", len([]rune(key)), len(key), a.Status, a.Body)
			continue
		}
		again, a := s.reserve(openid, slot, "Idempotency-Key", key)
		if again != id || a.Status != 201 {
			t.Errorf("key of %d characters again: booking %d (%d %s), want %d", len([]rune(key)), again, a.Status, a.Body, id)
		}
		var stored string
		if err := s.store.SQL().QueryRow(`SELECT idem_key FROM t_booking WHERE book_id = ?`, id).Scan(&stored); err != nil || stored != key {
			t.Errorf("stored key %q, want %q (%v)", stored, key, err)
		}
	}
	before := s.dbState()
	for _, key := range []string{strings.Repeat("预", 65), strings.Repeat("💅", 65), strings.Repeat("k", 65)} {
		s.wantError(s.call("POST", "/bookings", s.token("o-key-long"), map[string]any{"slotId": slot}, "Idempotency-Key", key), 400, booking.EBADREQUEST)
	}
	s.unchanged(before, "keys of 65 characters")
	mysqltest.CheckInvariant(t, s.store)
}

// TestSQLMetacharacters puts SQL in every string a client controls. Each is
// refused with a clear 4xx or stored harmlessly as the literal text it is, and the
// tables are intact.
func TestSQLMetacharacters(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	sqlish := []string{
		`' OR '1'='1`,
		`'; DROP TABLE t_booking; --`,
		`\'; DELETE FROM t_slot; #`,
		`" OR 1=1 --`,
		`1; UPDATE t_slot SET capacity = 0`,
		`%' AND SLEEP(5) AND '%'='`,
	}
	slot := s.freshSlot(50, 5000)
	slots := s.countRows("t_slot")

	for i, x := range sqlish {
		// A login code goes to WeChat as an escaped query parameter; the simulator
		// accepts any code, so this logs in some customer, harmlessly.
		a := s.call("POST", "/login", "", map[string]string{"code": x})
		if a.Status != 200 {
			t.Errorf("login code %q: %d %s", x, a.Status, a.Body)
			continue
		}
		token := a.JSON["token"].(string)
		// An Idempotency-Key is stored as the literal text and names one reservation.
		a = s.call("POST", "/bookings", token, map[string]any{"slotId": slot}, "Idempotency-Key", x)
		if a.Status != 201 {
			t.Errorf("Idempotency-Key %q: %d %s", x, a.Status, a.Body)
			continue
		}
		id := obj(t, a.JSON["booking"])["bookingId"]
		a = s.call("POST", "/bookings", token, map[string]any{"slotId": slot}, "Idempotency-Key", x)
		if a.Status != 201 || obj(t, a.JSON["booking"])["bookingId"] != id {
			t.Errorf("Idempotency-Key %q again: %d %s", x, a.Status, a.Body)
		}
		var key string
		if err := s.store.SQL().QueryRowContext(ctx, `SELECT idem_key FROM t_booking WHERE book_id = ?`, id).Scan(&key); err != nil || key != x {
			t.Errorf("stored key %q, want %q (%v)", key, x, err)
		}
		if n := s.countRows("t_booking"); n != i+1 {
			t.Errorf("%d bookings, want %d", n, i+1)
		}

		before := s.dbState()
		for _, p := range []string{"/slots?date=" + url.QueryEscape(x), "/slots?date=2026-12-01" + url.QueryEscape(x)} {
			s.wantError(s.call("GET", p, "", nil), 400, booking.EBADREQUEST)
		}
		s.wantError(s.call("GET", "/admin/bookings?date="+url.QueryEscape(x), testAdmin, nil), 400, booking.EBADREQUEST)
		for _, field := range []string{"from", "to", "open", "close"} {
			sched := map[string]any{"from": "2027-01-01", "to": "2027-01-01", "open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0}
			sched[field] = sched[field].(string) + x
			s.wantError(s.call("POST", "/admin/slots", testAdmin, sched), 400, booking.EBADREQUEST)
		}
		s.wantError(s.call("POST", "/bookings/"+url.PathEscape(x)+"/cancel", token, nil), 400, booking.EBADREQUEST)
		s.wantError(s.call("PATCH", "/admin/slots/"+url.PathEscape("1"+x), testAdmin, map[string]any{"open": false}), 400, booking.EBADREQUEST)
		s.unchanged(before, fmt.Sprintf("requests carrying %q", x))
	}
	if n := s.countRows("t_slot"); n != slots {
		t.Errorf("%d slots, want %d", n, slots)
	}
	var capacity, booked int
	if err := s.store.SQL().QueryRowContext(ctx, `SELECT capacity, booked FROM t_slot WHERE slot_id = ?`, slot).Scan(&capacity, &booked); err != nil || capacity != 50 || booked != len(sqlish) {
		t.Errorf("slot capacity %d booked %d (%v)", capacity, booked, err)
	}
	for _, table := range []string{"t_booking", "t_slot", "t_audit"} {
		s.countRows(table) // fails the test if the table is gone
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestQueryKeys(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	day := shopDate(t, s.slotStart(slot))
	for _, p := range []string{"/slots?date=a&date=b", "/slots?date=" + day + "&date=" + day, "/slots", "/slots?date", "/slots?date=",
		"/slots?date=2026-02-30", "/slots?date=2026-1-1", "/slots?date=01-12-2026", "/slots?date=2026-12-01T00:00:00Z"} {
		s.wantError(s.call("GET", p, "", nil), 400, booking.EBADREQUEST)
	}
	for _, p := range []string{"/admin/bookings?date=a&date=b", "/admin/bookings", "/admin/bookings?date=2026-13-01"} {
		s.wantError(s.call("GET", p, testAdmin, nil), 400, booking.EBADREQUEST)
	}
	// Other keys are ignored; the one date is used.
	a := s.call("GET", "/slots?date="+day+"&utm=x&utm=y", "", nil)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"slotId":`+itoa64(slot)+",") {
		t.Errorf("slots with other keys: %d %s", a.Status, a.Body)
	}
	// A repeated key in a raw event, as API Gateway sends it (an array).
	st, body := s.invokeRaw("slots", []byte(`{"httpMethod":"GET","path":"/slots","queryString":{"date":["`+day+`","`+day+`"]}}`))
	if st != 400 || !strings.Contains(body, booking.EBADREQUEST) {
		t.Errorf("repeated key in the event: %d %s", st, body)
	}
}

// TestBase64Body: with Base64 encoding switched on for an API, the gateway sends
// the body encoded and says so.
func TestBase64Body(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	tok := s.token("o-b64")
	event := func(body string, encoded bool) []byte {
		ev := map[string]any{"httpMethod": "POST", "path": "/bookings", "isBase64Encoded": encoded, "body": body,
			"headers":        map[string]string{"authorization": "Bearer " + tok, "content-type": "application/json"},
			"requestContext": map[string]string{"requestId": "b64", "sourceIp": "127.0.0.1"}}
		b, _ := json.Marshal(ev)
		return b
	}
	before := s.dbState()
	for name, ev := range map[string][]byte{
		"not base64":       event("{not base64}", true),
		"base64 of junk":   event(base64.StdEncoding.EncodeToString([]byte(`{"slotId":`)), true),
		"encoded twice":    event(base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"slotId":%d}`, slot))))), true),
		"plain but marked": event(fmt.Sprintf(`{"slotId":%d}`, slot), true),
	} {
		if st, body := s.invokeRaw("reserve", ev); st != 400 {
			t.Errorf("%s: %d %s", name, st, body)
		}
	}
	// The limit applies to the decoded body: 64 KiB decoded is fine for the gateway
	// (about 86 KiB encoded) and one byte more is not.
	if st, body := s.invokeRaw("reserve", event(base64.StdEncoding.EncodeToString(make([]byte, 64<<10+1)), true)); st != 413 {
		t.Errorf("64 KiB + 1 encoded: %d %s", st, body)
	}
	s.unchanged(before, "bad base64 bodies")
	st, body := s.invokeRaw("reserve", event(base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"slotId":%d}`, slot))), true))
	if st != 201 || !strings.Contains(body, `"status":"pending_payment"`) {
		t.Fatalf("base64 body: %d %s", st, body)
	}
}

func TestLoginWeChatAnswers(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	s.apiEnv.LoginTimeout = 200 * time.Millisecond // before the first request
	before := s.dbState()

	login := func(code string) answer { return s.call("POST", "/login", "", map[string]string{"code": code}) }
	if a := login("fine-code"); a.Status != 200 || a.JSON["token"] == nil {
		t.Fatalf("login: %d %s", a.Status, a.Body)
	}
	s.wantError(login("bad-code"), 401, booking.EUNAUTHORIZED)
	s.wantError(login("risky-code"), 401, booking.EUNAUTHORIZED)
	for _, m := range []struct {
		name string
		mode wxloginsim.Mode
	}{{"garbage", wxloginsim.Garbage}, {"errcode -1", wxloginsim.Busy}, {"HTTP 503", wxloginsim.Unavailable}, {"hang", wxloginsim.Hang}} {
		s.login.SetMode(m.mode)
		a := login("fine-code")
		if a.Status != 503 || a.code() != booking.EUPSTREAM {
			t.Errorf("WeChat %s: %d %s", m.name, a.Status, a.Body)
		}
		s.wantError(a, 503, booking.EUPSTREAM)
	}
	s.login.SetMode(wxloginsim.Normal)
	if a := login("fine-code"); a.Status != 200 {
		t.Fatalf("login after WeChat came back: %d %s", a.Status, a.Body)
	}
	s.unchanged(before, "logins")
	logs := s.logs.String()
	for _, want := range []string{"timeout", "errcode -1", "not JSON", "errcode 40029"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not mention %q", want)
		}
	}
	if strings.Contains(logs, testAppSecret) || strings.Contains(logs, "session_key") {
		t.Error("the log carries the app secret or a session key")
	}
}

// TestReserveWhenWeChatPayIsDown: the seat is held and the booking stays pending;
// once WeChat answers again, the same Idempotency-Key gets the same booking and its
// payment parameters, for the same WeChat order.
func TestReserveWhenWeChatPayIsDown(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	slot := s.freshSlot(2, 5000)
	openid, tok := s.customer("down")
	s.sim.FailNext("/v3/pay/transactions/jsapi", 500, "SYSTEM_ERROR", 1)
	s.sim.FailNext("/v3/pay/transactions/jsapi", wxpaysim.Drop, "", 1)

	for range 2 {
		s.wantError(s.call("POST", "/bookings", tok, map[string]any{"slotId": slot}, "Idempotency-Key", "k-down"), 503, booking.EUPSTREAM)
	}
	bs, err := s.store.ListCustomerBookings(ctx, openid, 10)
	if err != nil || len(bs) != 1 || bs[0].Status != booking.StatusPending {
		t.Fatalf("after WeChat failed: %+v %v", bs, err)
	}
	id := bs[0].ID
	if sl, _ := s.store.FindSlot(ctx, slot); sl.Booked != 1 {
		t.Fatalf("seat not held: booked %d", sl.Booked)
	}
	if !strings.Contains(s.logs.String(), `"booking_id":`+itoa64(id)) {
		t.Error("the failed reserve's log line does not name the booking")
	}
	// Without the key it is another reservation, refused while this one is open.
	s.wantError(s.call("POST", "/bookings", tok, map[string]any{"slotId": slot}), 409, booking.EACTIVEBOOKINGEXISTS)

	a := s.call("POST", "/bookings", tok, map[string]any{"slotId": slot}, "Idempotency-Key", "k-down")
	if a.Status != 201 || obj(t, a.JSON["booking"])["bookingId"] != float64(id) || a.JSON["payment"] == nil {
		t.Fatalf("retry with the key: %d %s", a.Status, a.Body)
	}
	first := obj(t, a.JSON["payment"])["package"]
	a = s.call("POST", "/bookings/"+itoa64(id)+"/pay", tok, nil)
	if a.Status != 200 || a.JSON["payment"] == nil {
		t.Fatalf("pay again: %d %s", a.Status, a.Body)
	}
	o, ok := s.sim.Order(booking.OutTradeNo(id))
	if !ok || len(s.sim.Orders()) != 1 || o.Total != 5000 || o.OpenID != openid || len(o.PrepayIDs) != 2 || first != "prepay_id="+o.PrepayIDs[0] {
		t.Errorf("WeChat order %+v", o)
	}
	if sl, _ := s.store.FindSlot(ctx, slot); sl.Booked != 1 {
		t.Errorf("booked %d after the retries, want 1", sl.Booked)
	}
	if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
		t.Fatal(err)
	}
	if st := s.status(id); st != "confirmed" {
		t.Errorf("after paying: %s", st)
	}
	mysqltest.CheckInvariant(t, s.store)
}
