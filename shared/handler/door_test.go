package handler

import (
	"regexp"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestConfigForTheMiniProgram: GET /config is public and answers the shop's
// name, window and policy, and the template id of each kind of notification
// that is on; a kind that is off is absent.
func TestConfigForTheMiniProgram(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates, func(env map[string]string) {
		delete(env, "WX_TMPL_CANCELLED")
		env["BOOKING_WINDOW_DAYS"] = "21"
		env["CANCEL_FREE_HOURS"] = "3"
		env["RESCHEDULE_LIMIT"] = "2"
	})
	a := s.call("GET", "/config", "", nil)
	if a.Status != 200 {
		t.Fatalf("config: %d %s", a.Status, a.Body)
	}
	tmpl, _ := a.JSON["subscribeTemplates"].(map[string]any)
	if a.JSON["shopName"] != "指尖美甲（国贸三期旗舰店二楼东侧）" || a.JSON["bookingWindowDays"] != 21.0 || a.JSON["cancelFreeHours"] != 3.0 ||
		a.JSON["rescheduleLimit"] != 2.0 || len(tmpl) != 4 || tmpl["confirmed"] != "tmpl-confirmed" || tmpl["reminder"] != "tmpl-reminder" ||
		tmpl["waitlist"] != "tmpl-waitlist" || tmpl["rescheduled"] != "tmpl-rescheduled" {
		t.Fatalf("config: %s", a.Body)
	}
}

var eightDigits = regexp.MustCompile(`^[0-9]{8}$`)

// TestBookingAndItsCheckinCode: GET /bookings/{id} answers one's own booking
// (someone else's and a missing one alike 404), with a check-in code only on
// the appointment day and only once the seat is sold: 8 digits, the same every
// time, in /bookings/mine too, distinct among the day's bookings.
func TestBookingAndItsCheckinCode(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	today := s.doorSlot(20, 5000)
	if s.day(today) != time.Now().In(shanghai(t)).Format(time.DateOnly) {
		t.Skip("the slot falls on tomorrow (the test runs just before midnight in the shop)")
	}
	pending := s.mustReservePaid("o-door-p", today)
	a := s.call("GET", "/bookings/"+itoa64(pending), s.token("o-door-p"), nil)
	if b := obj(t, a.JSON["booking"]); a.Status != 200 || b["status"] != "pending_payment" || b["checkinCode"] != nil {
		t.Fatalf("pending: %d %s", a.Status, a.Body)
	}
	before := s.dbState()
	s.wantError(s.call("GET", "/bookings/"+itoa64(pending), s.token("o-door-other"), nil), 404, booking.ENOTFOUND)
	s.wantError(s.call("GET", "/bookings/999999", s.token("o-door-p"), nil), 404, booking.ENOTFOUND)
	s.wantError(s.call("GET", "/bookings/abc", s.token("o-door-p"), nil), 400, booking.EBADREQUEST)
	s.wantError(s.call("GET", "/bookings/"+itoa64(pending), "", nil), 401, booking.EUNAUTHORIZED)
	s.unchanged(before, "refused reads")

	s.payFor(pending)
	a = s.call("GET", "/bookings/"+itoa64(pending), s.token("o-door-p"), nil)
	code, _ := obj(t, a.JSON["booking"])["checkinCode"].(string)
	if !eightDigits.MatchString(code) {
		t.Fatalf("confirmed today: %s", a.Body)
	}
	if again := obj(t, s.call("GET", "/bookings/"+itoa64(pending), s.token("o-door-p"), nil).JSON["booking"])["checkinCode"]; again != code {
		t.Fatalf("asked again: %v, first %s", again, code)
	}
	mine := s.call("GET", "/bookings/mine", s.token("o-door-p"), nil)
	if l, _ := mine.JSON["bookings"].([]any); len(l) != 1 || obj(t, l[0])["checkinCode"] != code {
		t.Fatalf("mine: %s", mine.Body)
	}
	// Another day's booking has none.
	later := s.paidBooking("o-door-later", s.slot(50*time.Hour, 2, 5000))
	if c := obj(t, s.call("GET", "/bookings/"+itoa64(later), s.token("o-door-later"), nil).JSON["booking"])["checkinCode"]; c != nil {
		t.Fatalf("a booking of another day has code %v", c)
	}
	// Unique among the day's bookings.
	codes := map[string]bool{code: true}
	for i := 0; i < 15; i++ {
		openid := "o-door-" + itoa64(int64(i))
		id := s.paidBooking(openid, today)
		c, _ := obj(t, s.call("GET", "/bookings/"+itoa64(id), s.token(openid), nil).JSON["booking"])["checkinCode"].(string)
		if !eightDigits.MatchString(c) || codes[c] {
			t.Fatalf("booking %d: code %q, seen %v", id, c, codes)
		}
		codes[c] = true
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestCheckInByCode: POST /admin/checkin takes today's booking with the code;
// again is 409 INVALID_STATE and it stays completed; a code no booking of today
// has is 404; a code of the wrong shape 400; before CHECKIN_OPENS_BEFORE 409
// TOO_EARLY. Each refusal changes nothing.
func TestCheckInByCode(t *testing.T) {
	t.Parallel()
	s := newSystem(t, func(env map[string]string) { env["CHECKIN_OPENS_BEFORE"] = "1h" })
	slot := s.doorSlot(3, 5000) // starts in about 90 minutes
	if s.day(slot) != time.Now().In(shanghai(t)).Format(time.DateOnly) {
		t.Skip("the slot falls on tomorrow (the test runs just before midnight in the shop)")
	}
	id := s.paidBooking("o-code", slot)
	code, _ := obj(t, s.call("GET", "/bookings/"+itoa64(id), s.token("o-code"), nil).JSON["booking"])["checkinCode"].(string)
	checkin := func(body any) answer { return s.call("POST", "/admin/checkin", testAdmin, body) }

	before := s.dbState()
	s.wantError(checkin(map[string]any{"code": code}), 409, booking.ETOOEARLY)
	s.wantError(checkin(map[string]any{"code": "1234"}), 400, booking.EBADREQUEST)
	s.wantError(checkin(map[string]any{"code": "12a45678"}), 400, booking.EBADREQUEST)
	s.wantError(checkin(map[string]any{"cod": code}), 400, booking.EBADREQUEST)
	other := "00000000"
	if other == code {
		other = "00000001"
	}
	s.wantError(checkin(map[string]any{"code": other}), 404, booking.ENOTFOUND)
	s.wantError(s.call("POST", "/admin/checkin", "wrong-admin-token", map[string]any{"code": code}), 401, booking.EUNAUTHORIZED)
	s.unchanged(before, "refused check-ins by code")

	mysqltest.SlotStarts(t, s.store, slot, -30*time.Minute) // now 30 minutes ahead: check-in is open
	a := checkin(map[string]any{"code": code})
	if b := obj(t, a.JSON["booking"]); a.Status != 200 || b["status"] != "completed" || b["bookingId"] != float64(id) || b["openid"] != "o-code" {
		t.Fatalf("check-in by code: %d %s", a.Status, a.Body)
	}
	s.wantError(checkin(map[string]any{"code": code}), 409, booking.EINVALIDSTATE)
	if st := s.status(id); st != "completed" {
		t.Fatalf("after a second check-in: %s", st)
	}
	mysqltest.CheckInvariant(t, s.store)
}
