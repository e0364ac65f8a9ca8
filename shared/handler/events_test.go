package handler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
)

// The example events in functions/<name>/events/ are fed here, as raw JSON, to the
// function's handler the way SCF delivers them, against a real database. Some
// need values only a running system has; they carry placeholders this test
// substitutes (each value JSON-escaped, as it sits inside a JSON string):
//
//	{{TOKEN}}        a customer session token (from POST /login)
//	{{ADMIN_TOKEN}}  the ADMIN_TOKEN setting
//	{{SLOT_ID}}      an existing slot id
//	{{BOOKING_ID}}   one of the token's customer's bookings
//	{{DATE}}         a shop date YYYY-MM-DD
//	{{BODY}}, {{WECHATPAY_TIMESTAMP}}, {{WECHATPAY_NONCE}}, {{WECHATPAY_SERIAL}},
//	{{WECHATPAY_SIGNATURE}}: a notification signed by WeChat Pay (here the simulator)
//
// Every file must have a case below and every case a file, so an example that
// stops working, or a new one nobody runs, fails the test.

const eventsDir = "../../functions"

// exampleEvent is one example event file, the setup it needs, and what it must
// answer.
type exampleEvent struct {
	file   string // relative to functions/
	fn     string // the function whose handler receives it
	setup  func(s *system) map[string]string
	status int
	check  func(t *testing.T, s *system, vars map[string]string, body string)
}

var placeholder = regexp.MustCompile(`\{\{[A-Z_]+\}\}`)

// fillEvent substitutes vars into raw; a placeholder left over is a test bug.
func fillEvent(t *testing.T, raw []byte, vars map[string]string) []byte {
	t.Helper()
	out := string(raw)
	for k, v := range vars {
		esc, _ := json.Marshal(v)
		out = strings.ReplaceAll(out, "{{"+k+"}}", string(esc[1:len(esc)-1]))
	}
	if left := placeholder.FindAllString(out, -1); len(left) > 0 {
		t.Fatalf("placeholders not substituted: %v", left)
	}
	return []byte(out)
}

// invokeRaw hands raw to the named function's handler, as scfhost does.
func (s *system) invokeRaw(fn string, raw []byte) (int, string) {
	s.t.Helper()
	ctx := context.Background()
	var h func(context.Context, json.RawMessage) (apigw.Response, error)
	switch fn {
	case "slots":
		h = SlotsRouter(s.apiEnv).Invoke
	case "login":
		h = LoginRouter(s.apiEnv).Invoke
	case "reserve":
		h = ReserveRouter(s.apiEnv).Invoke
	case "cancel":
		h = CancelRouter(s.apiEnv).Invoke
	case "admin":
		h = AdminRouter(s.apiEnv).Invoke
	case "paynotify":
		h = PayNotifyRouter(s.apiEnv).Invoke
	case "release":
		sum, err := Release(s.apiEnv)(ctx, raw)
		if err != nil {
			s.t.Fatalf("release: %v", err)
		}
		b, _ := json.Marshal(sum)
		return 200, string(b)
	default:
		s.t.Fatalf("no function %q", fn)
	}
	resp, err := s.checked(fn, h)(ctx, raw)
	if err != nil {
		s.t.Fatalf("%s: Invoke returned an error: %v", fn, err)
	}
	return resp.StatusCode, resp.Body
}

// customer returns a fresh openid and its session token.
func (s *system) customer(name string) (string, string) {
	openid := "o-" + name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return openid, s.token(openid)
}

var slotSeq atomic.Int64

// freshSlot creates a slot one to six days ahead (inside the booking window) at a
// start no other recent call used; a test makes far fewer than 1000 slots.
func (s *system) freshSlot(capacity int, priceFen int64) int64 {
	return s.slot(26*time.Hour+time.Duration(slotSeq.Add(1)%1000)*7*time.Minute, capacity, priceFen)
}

// doorSlot is a fresh slot starting within CHECKIN_OPENS_BEFORE (2h), so its
// confirmed bookings can be checked in now.
func (s *system) doorSlot(capacity int, priceFen int64) int64 {
	return s.slot(90*time.Minute+time.Duration(slotSeq.Add(1)%1000)*time.Second, capacity, priceFen)
}

// booked reserves a fresh slot for a fresh customer through the gateway and
// returns the placeholders naming them.
func (s *system) booked(name string) map[string]string {
	s.t.Helper()
	slot := s.freshSlot(5, 5000)
	openid, token := s.customer(name)
	id, a := s.reserve(openid, slot)
	if id == 0 {
		s.t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	start := s.slotStart(slot)
	return map[string]string{"TOKEN": token, "SLOT_ID": itoa64(slot), "BOOKING_ID": itoa64(id),
		"DATE": start.In(shanghai(s.t)).Format("2006-01-02"), "OPENID": openid}
}

// with returns the system for use in subtest t, so that its helpers fail t.
func (s *system) with(t *testing.T) *system {
	sub := *s
	sub.t = t
	sub.kit = s.kit.With(t)
	return &sub
}

func (s *system) slotStart(id int64) time.Time {
	s.t.Helper()
	sl, err := s.store.FindSlot(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return sl.StartAt
}

// notification fills the WeChat Pay placeholders from a signed notification.
func notification(vars map[string]string, headers map[string]string, body []byte) map[string]string {
	vars["BODY"] = string(body)
	vars["WECHATPAY_TIMESTAMP"] = headers["Wechatpay-Timestamp"]
	vars["WECHATPAY_NONCE"] = headers["Wechatpay-Nonce"]
	vars["WECHATPAY_SERIAL"] = headers["Wechatpay-Serial"]
	vars["WECHATPAY_SIGNATURE"] = headers["Wechatpay-Signature"]
	return vars
}

func exampleEvents() []exampleEvent {
	bookingStatus := func(want string) func(t *testing.T, s *system, vars map[string]string, body string) {
		return func(t *testing.T, s *system, vars map[string]string, body string) {
			id, _ := strconv.ParseInt(vars["BOOKING_ID"], 10, 64)
			if got := s.status(id); got != want {
				t.Errorf("booking %d is %s, want %s", id, got, want)
			}
		}
	}
	login := func(code string) func(t *testing.T, s *system, vars map[string]string, body string) {
		return func(t *testing.T, s *system, vars map[string]string, body string) {
			var out struct{ Token, ExpiresAt string }
			json.Unmarshal([]byte(body), &out)
			openid, err := s.sessions.Verify(out.Token)
			if err != nil || openid != wxloginsim.OpenID(testAppID, code) || out.ExpiresAt == "" {
				t.Errorf("login answer %s: openid %q, %v", body, openid, err)
			}
		}
	}
	return []exampleEvent{
		{file: "slots/events/apigw-slots.json", fn: "slots", status: 200,
			check: func(t *testing.T, s *system, _ map[string]string, body string) {
				if !strings.Contains(body, `"date":"2026-12-01"`) || !strings.Contains(body, `"slots":[`) {
					t.Errorf("slots answer %s", body)
				}
			}},
		{file: "slots/events/functionurl-healthz.json", fn: "slots", status: 200,
			check: func(t *testing.T, s *system, _ map[string]string, body string) {
				if body != `{"status":"ok"}` {
					t.Errorf("healthz answer %s", body)
				}
			}},
		{file: "login/events/apigw-login.json", fn: "login", status: 200, check: login("demo-code-apigw")},
		{file: "login/events/apigw-login-base64.json", fn: "login", status: 200, check: login("demo-code-base64")},
		{file: "login/events/functionurl-login.json", fn: "login", status: 200, check: login("demo-code-url")},
		{file: "reserve/events/apigw-reserve.json", fn: "reserve", status: 201,
			setup: func(s *system) map[string]string {
				_, token := s.customer("reserve")
				return map[string]string{"TOKEN": token, "SLOT_ID": itoa64(s.freshSlot(5, 5000))}
			},
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				var out struct {
					Booking struct {
						BookingID int64
						Status    string
					}
					Payment *struct{ Package string }
				}
				json.Unmarshal([]byte(body), &out)
				if out.Booking.Status != "pending_payment" || out.Payment == nil || out.Payment.Package == "" {
					t.Fatalf("reserve answer %s", body)
				}
				// The event carries an Idempotency-Key: delivering it again is the
				// same reservation.
				raw, _ := os.ReadFile(filepath.Join(eventsDir, "reserve/events/apigw-reserve.json"))
				st, again := s.invokeRaw("reserve", fillEvent(t, raw, vars))
				if st != 201 || !strings.Contains(again, `"bookingId":`+itoa64(out.Booking.BookingID)+",") {
					t.Errorf("the same event again: %d %s", st, again)
				}
			}},
		{file: "reserve/events/apigw-pay.json", fn: "reserve", status: 200,
			setup: func(s *system) map[string]string { return s.booked("pay") },
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				if !strings.Contains(body, `"payment":{`) || !strings.Contains(body, `"bookingId":`+vars["BOOKING_ID"]+",") {
					t.Errorf("pay answer %s", body)
				}
			}},
		{file: "reserve/events/functionurl-mine.json", fn: "reserve", status: 200,
			setup: func(s *system) map[string]string { return s.booked("mine") },
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				if !strings.HasPrefix(body, `{"bookings":[{"bookingId":`+vars["BOOKING_ID"]+",") {
					t.Errorf("mine answer %s", body)
				}
			}},
		{file: "cancel/events/apigw-cancel.json", fn: "cancel", status: 200,
			setup: func(s *system) map[string]string { return s.booked("cancel-apigw") },
			check: bookingStatus("cancelled")},
		{file: "cancel/events/functionurl-cancel.json", fn: "cancel", status: 200,
			setup: func(s *system) map[string]string { return s.booked("cancel-url") },
			check: bookingStatus("cancelled")},
		{file: "admin/events/apigw-create-schedule.json", fn: "admin", status: 201,
			setup: func(s *system) map[string]string { return map[string]string{"ADMIN_TOKEN": testAdmin} },
			check: func(t *testing.T, s *system, _ map[string]string, body string) {
				// 10:00 to 21:00 in 90 minutes is 7 slots a day, for 7 days.
				if body != `{"created":49,"skipped":0}` {
					t.Errorf("schedule answer %s", body)
				}
			}},
		{file: "admin/events/apigw-close-slot.json", fn: "admin", status: 200,
			setup: func(s *system) map[string]string {
				return map[string]string{"ADMIN_TOKEN": testAdmin, "SLOT_ID": itoa64(s.freshSlot(3, 5000))}
			},
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				id, _ := strconv.ParseInt(vars["SLOT_ID"], 10, 64)
				if sl, _ := s.store.FindSlot(context.Background(), id); sl == nil || sl.Open {
					t.Errorf("slot %s still open: %s", vars["SLOT_ID"], body)
				}
			}},
		{file: "admin/events/functionurl-bookings.json", fn: "admin", status: 200,
			setup: func(s *system) map[string]string {
				v := s.booked("admin-list")
				v["ADMIN_TOKEN"] = testAdmin
				return v
			},
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				if !strings.Contains(body, `"openid":"`+vars["OPENID"]+`"`) {
					t.Errorf("admin bookings answer %s", body)
				}
			}},
		{file: "paynotify/events/apigw-notify.json", fn: "paynotify", status: 204,
			setup: func(s *system) map[string]string {
				v := s.booked("notify")
				id, _ := strconv.ParseInt(v["BOOKING_ID"], 10, 64)
				h, body, err := s.sim.BuildPaymentNotification(booking.OutTradeNo(id))
				if err != nil {
					s.t.Fatal(err)
				}
				return notification(v, h, body)
			},
			check: bookingStatus("confirmed")},
		{file: "paynotify/events/functionurl-refund-notify.json", fn: "paynotify", status: 204,
			setup: func(s *system) map[string]string {
				v := s.booked("refund")
				id, _ := strconv.ParseInt(v["BOOKING_ID"], 10, 64)
				if err := s.sim.Pay(context.Background(), booking.OutTradeNo(id)); err != nil {
					s.t.Fatal(err)
				}
				if a := s.call("POST", "/bookings/"+v["BOOKING_ID"]+"/cancel", v["TOKEN"], nil); a.Status != 200 {
					s.t.Fatalf("cancel: %d %s", a.Status, a.Body)
				}
				h, body, err := s.sim.BuildRefundNotification(booking.OutRefundNo(id))
				if err != nil {
					s.t.Fatal(err)
				}
				return notification(v, h, body)
			},
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				id, _ := strconv.ParseInt(vars["BOOKING_ID"], 10, 64)
				b, err := s.store.FindBooking(context.Background(), id)
				if err != nil || b.Refund == nil || b.Refund.Status != booking.RefundSucceeded {
					t.Errorf("refund after the notification: %+v %v", b, err)
				}
			}},
		{file: "release/events/timer.json", fn: "release", status: 200,
			setup: func(s *system) map[string]string {
				v := s.booked("release")
				id, _ := strconv.ParseInt(v["BOOKING_ID"], 10, 64)
				mysqltest.ExpireHold(s.t, s.store, id)
				return v
			},
			check: func(t *testing.T, s *system, vars map[string]string, body string) {
				if !strings.Contains(body, `"released":1,`) {
					t.Errorf("release summary %s", body)
				}
				bookingStatus("expired")(t, s, vars, body)
			}},
	}
}

func TestExampleEvents(t *testing.T) {
	t.Parallel()
	cases := exampleEvents()
	files, err := filepath.Glob(filepath.Join(eventsDir, "*", "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk, covered []string
	for _, f := range files {
		rel, _ := filepath.Rel(eventsDir, f)
		onDisk = append(onDisk, filepath.ToSlash(rel))
	}
	for _, c := range cases {
		covered = append(covered, c.file)
	}
	sort.Strings(onDisk)
	sort.Strings(covered)
	if strings.Join(onDisk, "\n") != strings.Join(covered, "\n") {
		t.Fatalf("example events and their cases differ:\non disk:\n%s\ncases:\n%s", strings.Join(onDisk, "\n"), strings.Join(covered, "\n"))
	}
	// Every HTTP function has an API Gateway and a Function URL example.
	for _, fn := range []string{"slots", "login", "reserve", "cancel", "admin", "paynotify"} {
		for _, kind := range []string{"apigw-", "functionurl-"} {
			if !strings.Contains(strings.Join(onDisk, "\n"), fn+"/events/"+kind) {
				t.Errorf("functions/%s/events has no %s*.json example", fn, kind)
			}
		}
	}

	s := newSystem(t)
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(eventsDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(raw) {
				t.Fatal("not valid JSON")
			}
			s := s.with(t)
			vars := map[string]string{}
			if c.setup != nil {
				vars = c.setup(s)
			}
			status, body := s.invokeRaw(c.fn, fillEvent(t, raw, vars))
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if c.check != nil {
				c.check(t, s, vars, body)
			}
		})
	}

	// The notification examples as they are on disk, placeholders and all, are
	// what a forgery looks like: refused, nothing changed.
	t.Run("unsigned notifications", func(t *testing.T) {
		s := s.with(t)
		before := s.dbState()
		for _, f := range []string{"paynotify/events/apigw-notify.json", "paynotify/events/functionurl-refund-notify.json"} {
			raw, err := os.ReadFile(filepath.Join(eventsDir, f))
			if err != nil {
				t.Fatal(err)
			}
			if st, body := s.invokeRaw("paynotify", raw); st != 401 || !strings.Contains(body, `"code":"FAIL"`) {
				t.Errorf("%s unfilled: %d %s", f, st, body)
			}
		}
		s.unchanged(before, "unsigned notifications")
	})
	mysqltest.CheckInvariant(t, s.store)
}

// TestLogLines checks the one line each request logs: flat JSON (CLS indexes
// only top-level strings and numbers) with request_id, function, route, status,
// duration_ms and, where a booking is concerned, booking_id; and never the bearer
// token, whether the request succeeded or not.
func TestLogLines(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	raw, err := os.ReadFile(filepath.Join(eventsDir, "reserve/events/apigw-reserve.json"))
	if err != nil {
		t.Fatal(err)
	}
	openid, token := s.customer("logs")
	slot := s.slot(26*time.Hour, 3, 5000)
	if st, body := s.invokeRaw("reserve", fillEvent(t, raw, map[string]string{"TOKEN": token, "SLOT_ID": itoa64(slot)})); st != 201 {
		t.Fatalf("reserve: %d %s", st, body)
	}
	var id int64
	if bs, err := s.store.ListCustomerBookings(context.Background(), openid, 1); err != nil || len(bs) != 1 {
		t.Fatalf("bookings: %v %v", bs, err)
	} else {
		id = bs[0].ID
	}
	// A refused token, a customer error and an admin error: none may log a token.
	// A character inside the signature, not its last one: the last character of
	// unpadded Base64 carries bits a decoder ignores, so changing it may change
	// nothing (one run in a thousand did).
	i := len(token) - 5
	flip := byte('A')
	if token[i] == 'A' {
		flip = 'B'
	}
	tampered := token[:i] + string(flip) + token[i+1:]
	if st, _ := s.invokeRaw("reserve", fillEvent(t, raw, map[string]string{"TOKEN": tampered, "SLOT_ID": itoa64(slot)})); st != 401 {
		t.Fatalf("tampered token: %d", st)
	}
	s.call("POST", "/bookings/"+itoa64(id)+"/cancel", token, nil)
	s.call("POST", "/bookings/"+itoa64(id)+"/cancel", token, nil) // 409
	s.call("GET", "/admin/bookings?date=2026-12-01", "wrong-admin-token", nil)
	s.call("GET", "/admin/bookings?date=2026-12-01", testAdmin, nil)
	s.call("GET", "/bookings/mine", token, nil)

	var requests []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		for _, secret := range []string{token, tampered, "wrong-admin-token", testAdmin, testSecret, testAppSecret, "Bearer"} {
			if strings.Contains(line, secret) {
				t.Errorf("log line contains a secret (%.8s…): %s", secret, line)
			}
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		for k, v := range m {
			switch v.(type) {
			case map[string]any, []any:
				t.Errorf("log field %q is not flat: %s", k, line)
			}
		}
		if m["msg"] == "request" {
			requests = append(requests, m)
		}
	}
	if len(requests) != 7 {
		t.Fatalf("%d request lines, want 7:\n%s", len(requests), s.logs.String())
	}
	for _, m := range requests {
		for _, k := range []string{"request_id", "function", "route", "status", "duration_ms"} {
			if _, ok := m[k]; !ok || m[k] == "" {
				t.Errorf("request line without %s: %v", k, m)
			}
		}
		if _, ok := m["duration_ms"].(float64); !ok {
			t.Errorf("duration_ms is not a number: %v", m)
		}
		if m["route"] == "/bookings/{id}/cancel" || m["route"] == "/bookings" && m["status"] == float64(201) {
			if m["booking_id"] != float64(id) {
				t.Errorf("line without booking_id %d: %v", id, m)
			}
		}
	}
	first := requests[0]
	if first["request_id"] != "7e5e0000-0000-4000-8000-000000000001" || first["function"] != "reserve" ||
		first["route"] != "/bookings" || first["status"] != float64(201) || first["booking_id"] != float64(id) {
		t.Errorf("reserve line %v", first)
	}
}
