package handler

import (
	"context"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// rescheduleAs asks for the customer's move of booking id to slot.
func (s *system) rescheduleAs(openid string, id, slot int64) answer {
	s.t.Helper()
	return s.call("POST", "/bookings/"+itoa64(id)+"/reschedule", s.token(openid), map[string]any{"slotId": slot})
}

// rescheduleBySalon asks for the salon's move of booking id to slot.
func (s *system) rescheduleBySalon(id, slot int64) answer {
	s.t.Helper()
	return s.call("POST", "/admin/bookings/"+itoa64(id)+"/reschedule", testAdmin, map[string]any{"slotId": slot})
}

// TestCustomerReschedule: the customer moves her own confirmed, paid booking
// to a free seat of a slot of the same price, once, until cancelFreeUntil;
// every refusal answers its code and changes nothing; cancelFreeUntil follows
// the new slot, and her cancel afterwards is refunded in full.
func TestCustomerReschedule(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	loc := shanghai(t)
	a := s.slot(26*time.Hour, 2, 5000)
	b := s.slot(50*time.Hour, 2, 5000)
	id := s.paidBooking("o-rs", a)
	// Every slot the refusals name exists before the snapshot, so that
	// "nothing changed" covers each refusal.
	dearer := s.slot(51*time.Hour, 2, 8000)
	beyondWindow := s.slot(15*24*time.Hour, 2, 5000)
	full := s.slot(52*time.Hour, 1, 5000)
	s.paidBooking("o-rs-full", full)
	closed := s.slot(53*time.Hour, 2, 5000)
	if a := s.call("PATCH", "/admin/slots/"+itoa64(closed), testAdmin, map[string]any{"open": false}); a.Status != 200 {
		t.Fatalf("close: %d %s", a.Status, a.Body)
	}
	started := s.slot(54*time.Hour, 2, 5000)
	mysqltest.SlotStarts(t, s.store, started, time.Minute)

	before := s.dbState()
	s.wantError(s.rescheduleAs("o-rs-other", id, b), 404, booking.ENOTFOUND)
	s.wantError(s.rescheduleAs("o-rs", 999999, b), 404, booking.ENOTFOUND)
	s.wantError(s.rescheduleAs("o-rs", id, 999999), 404, booking.ENOTFOUND)
	s.wantError(s.rescheduleAs("o-rs", id, a), 409, booking.EINVALIDSTATE)
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/reschedule", s.token("o-rs"), map[string]any{"slotId": "42"}), 400, booking.EBADREQUEST)
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/reschedule", s.token("o-rs"), map[string]any{"slotId": 0}), 400, booking.EBADREQUEST)
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/reschedule", s.token("o-rs"), map[string]any{"slotId": b, "x": 1}), 400, booking.EBADREQUEST)
	s.wantError(s.call("POST", "/bookings/abc/reschedule", s.token("o-rs"), map[string]any{"slotId": b}), 400, booking.EBADREQUEST)
	s.wantError(s.call("POST", "/bookings/"+itoa64(id)+"/reschedule", "", map[string]any{"slotId": b}), 401, booking.EUNAUTHORIZED)
	s.wantError(s.rescheduleAs("o-rs", id, dearer), 409, booking.EPRICEDIFFERS)
	s.wantError(s.rescheduleAs("o-rs", id, beyondWindow), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(s.rescheduleAs("o-rs", id, full), 409, booking.ESOLDOUT)
	s.wantError(s.rescheduleAs("o-rs", id, closed), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(s.rescheduleAs("o-rs", id, started), 422, booking.ESLOTNOTBOOKABLE)
	s.unchanged(before, "refused reschedules")

	got := s.rescheduleAs("o-rs", id, b)
	bk := obj(t, got.JSON["booking"])
	bStart := s.slotStart(b)
	if got.Status != 200 || bk["slotId"] != float64(b) || bk["status"] != "confirmed" || bk["bookingId"] != float64(id) ||
		bk["startAt"] != bStart.In(loc).Format(time.RFC3339) || bk["cancelFreeUntil"] != bStart.Add(-2*time.Hour).In(loc).Format(time.RFC3339) ||
		bk["amountFen"] != 5000.0 || bk["openid"] != nil {
		t.Fatalf("reschedule: %d %s", got.Status, got.Body)
	}
	if s.slotBooked(a) != 0 || s.slotBooked(b) != 1 || countEvent(s.auditEvents(id), booking.EventReschedule) != 1 {
		t.Fatalf("after the move: A %d B %d, audit %v", s.slotBooked(a), s.slotBooked(b), s.auditEvents(id))
	}
	// Once: the second is over the limit, and changes nothing.
	next := s.slot(55*time.Hour, 2, 5000)
	before = s.dbState()
	s.wantError(s.rescheduleAs("o-rs", id, next), 409, booking.ERESCHEDULELIMIT)
	s.unchanged(before, "a reschedule over the limit")

	// The deposit and refund rights moved with it: a free cancel refunds in full.
	if a := s.cancelAs("o-rs", id); a.Status != 200 || obj(t, obj(t, a.JSON["booking"])["refund"])["amountFen"] != 5000.0 {
		t.Fatalf("cancel after the move: %d %s", a.Status, a.Body)
	}
	s.wantError(s.rescheduleAs("o-rs", id, a), 409, booking.EINVALIDSTATE)

	// A pending booking does not move.
	pending := s.mustReservePaid("o-rs-p", a)
	before = s.dbState()
	s.wantError(s.rescheduleAs("o-rs-p", pending, b), 409, booking.EINVALIDSTATE)
	s.unchanged(before, "a pending booking's reschedule")

	// After cancelFreeUntil: LATE_RESCHEDULE.
	soon := s.slot(90*time.Minute, 2, 5000)
	late := s.paidBooking("o-rs-late", soon)
	before = s.dbState()
	s.wantError(s.rescheduleAs("o-rs-late", late, b), 409, booking.ELATERESCHEDULE)
	s.unchanged(before, "a late reschedule")

	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestRescheduleLimitSetting: RESCHEDULE_LIMIT=0 allows no move of the
// customer's, and the salon's moves are never counted.
func TestRescheduleLimitSetting(t *testing.T) {
	t.Parallel()
	s := newSystem(t, func(env map[string]string) { env["RESCHEDULE_LIMIT"] = "0" })
	a := s.slot(26*time.Hour, 2, 0)
	id, ans := s.reserve("o-rl", a)
	if id == 0 {
		t.Fatalf("reserve: %d %s", ans.Status, ans.Body)
	}
	s.wantError(s.rescheduleAs("o-rl", id, s.slot(27*time.Hour, 2, 0)), 409, booking.ERESCHEDULELIMIT)
	if a := s.rescheduleBySalon(id, s.slot(28*time.Hour, 2, 0)); a.Status != 200 {
		t.Fatalf("the salon's move: %d %s", a.Status, a.Body)
	}
	if b := s.findBk(id); b.Reschedules != 0 {
		t.Fatalf("the salon's move was counted: %d", b.Reschedules)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestSalonReschedule: the salon moves a confirmed booking after
// cancelFreeUntil, to a slot of another price that customers could not book
// (closed, or under way), the deposit staying as paid, uncounted; the customer
// is told the new time; the check-in code follows the new day; refusals change
// nothing.
func TestSalonReschedule(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates)
	loc := shanghai(t)
	today := s.doorSlot(2, 5000)
	id := s.paidBooking("o-srs", today)
	if s.day(today) == time.Now().In(loc).Format(time.DateOnly) {
		code := obj(t, s.call("GET", "/bookings/"+itoa64(id), s.token("o-srs"), nil).JSON["booking"])["checkinCode"]
		if !eightDigits.MatchString(code.(string)) {
			t.Fatalf("today's code: %v", code)
		}
	}

	ended := s.slot(30*time.Hour, 2, 5000)
	mysqltest.SlotStarts(t, s.store, ended, 2*time.Hour)
	before := s.dbState()
	s.wantError(s.call("POST", "/admin/bookings/"+itoa64(id)+"/reschedule", "", map[string]any{"slotId": today}), 401, booking.EUNAUTHORIZED)
	s.wantError(s.rescheduleBySalon(999999, today), 404, booking.ENOTFOUND)
	s.wantError(s.rescheduleBySalon(id, 999999), 404, booking.ENOTFOUND)
	s.wantError(s.rescheduleBySalon(id, today), 409, booking.EINVALIDSTATE)
	s.wantError(s.rescheduleBySalon(id, ended), 422, booking.ESLOTNOTBOOKABLE)
	s.unchanged(before, "the salon's refused moves")

	dearer := s.slot(50*time.Hour, 1, 8000)
	if a := s.call("PATCH", "/admin/slots/"+itoa64(dearer), testAdmin, map[string]any{"open": false}); a.Status != 200 {
		t.Fatalf("close: %d %s", a.Status, a.Body)
	}
	a := s.rescheduleBySalon(id, dearer)
	bk := obj(t, a.JSON["booking"])
	if a.Status != 200 || bk["slotId"] != float64(dearer) || bk["amountFen"] != 5000.0 || bk["status"] != "confirmed" || bk["openid"] != "o-srs" {
		t.Fatalf("the salon's move: %d %s", a.Status, a.Body)
	}
	if b := s.findBk(id); b.Reschedules != 0 || b.TransactionID == "" {
		t.Fatalf("after the salon's move: %+v", b)
	}
	if c := obj(t, s.call("GET", "/bookings/"+itoa64(id), s.token("o-srs"), nil).JSON["booking"])["checkinCode"]; c != nil {
		t.Fatalf("a booking moved to another day still shows code %v", c)
	}
	msgs := s.messagesTo("o-srs")["tmpl-rescheduled"]
	if len(msgs) != 1 || msgs[0].Data["time2"] != s.slotStart(dearer).In(loc).Format("2006-01-02 15:04") {
		t.Fatalf("the rescheduled message: %+v", msgs)
	}
	// The customer still has her own move, to a slot of the price of the one
	// she is in now.
	if a := s.rescheduleAs("o-srs", id, s.slot(60*time.Hour, 2, 8000)); a.Status != 200 {
		t.Fatalf("the customer's move after the salon's: %d %s", a.Status, a.Body)
	}
	// Full: SOLD_OUT, nothing changed. An appointment under way: accepted.
	s.paidBooking("o-srs-2", today)
	s.paidBooking("o-srs-3", today)
	before = s.dbState()
	s.wantError(s.rescheduleBySalon(id, today), 409, booking.ESOLDOUT)
	s.unchanged(before, "the salon's move to a full slot")
	under := s.slot(31*time.Hour, 2, 0)
	mysqltest.SlotStarts(t, s.store, under, 10*time.Minute)
	if a := s.rescheduleBySalon(id, under); a.Status != 200 {
		t.Fatalf("a move to a slot under way: %d %s", a.Status, a.Body)
	}
	// Checked in: no longer moves.
	doorID := s.paidBooking("o-srs-door", s.doorSlot(2, 5000))
	if a := s.admin("checkin", doorID); a.Status != 200 {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	later := s.slot(61*time.Hour, 2, 5000)
	before = s.dbState()
	s.wantError(s.rescheduleBySalon(doorID, later), 409, booking.EINVALIDSTATE)
	s.unchanged(before, "the move of a completed booking")
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestRescheduleOffersTheFreedSeat: a move out of a full slot hands its seat
// to the first in line in the same transaction: she gets the offer and its
// message, and the public still meets a full slot.
func TestRescheduleOffersTheFreedSeat(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates)
	a := s.slot(26*time.Hour, 1, 5000)
	b := s.slot(50*time.Hour, 1, 5000)
	id := s.paidBooking("o-rof", a)
	if j := s.joinWaitlist("o-rof-w", a); j.Status != 201 {
		t.Fatalf("join: %d %s", j.Status, j.Body)
	}
	if r := s.rescheduleAs("o-rof", id, b); r.Status != 200 {
		t.Fatalf("reschedule: %d %s", r.Status, r.Body)
	}
	offer := s.offers(a)["o-rof-w"]
	if offer == 0 || s.status(offer) != "pending_payment" || s.slotBooked(a) != 1 || len(s.messagesTo("o-rof-w")["tmpl-waitlist"]) != 1 {
		t.Fatalf("offer %d, A booked %d, messages %v", offer, s.slotBooked(a), s.messagesTo("o-rof-w"))
	}
	_, ans := s.reserve("o-rof-x", a)
	s.wantError(ans, 409, booking.ESOLDOUT)
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestIdempotencyKeyAfterAReschedule: a key names one reservation: after a
// move, a retry of the request that made it (the slot it was reserved in)
// answers the same booking, now in its new slot, as the key with the slot it
// is in does; the key with any other slot is INVALID_STATE.
func TestIdempotencyKeyAfterAReschedule(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	a := s.slot(26*time.Hour, 2, 0)
	b := s.slot(50*time.Hour, 2, 0)
	other := s.slot(51*time.Hour, 2, 0)
	id, ans := s.reserve("o-rik", a, "Idempotency-Key", "rik-1")
	if id == 0 {
		t.Fatalf("reserve: %d %s", ans.Status, ans.Body)
	}
	if r := s.rescheduleAs("o-rik", id, b); r.Status != 200 {
		t.Fatalf("reschedule: %d %s", r.Status, r.Body)
	}
	before := s.dbState()
	for _, slot := range []int64{a, b} {
		again, ans := s.reserve("o-rik", slot, "Idempotency-Key", "rik-1")
		if again != id || obj(t, ans.JSON["booking"])["slotId"] != float64(b) {
			t.Fatalf("the key with slot %d after the move: %d %s", slot, ans.Status, ans.Body)
		}
	}
	_, ans = s.reserve("o-rik", other, "Idempotency-Key", "rik-1")
	s.wantError(ans, 409, booking.EINVALIDSTATE)
	s.unchanged(before, "retries of a moved booking's reservation")
}

// TestIdempotencyKeyAfterAMoveAndRetention: the slot a key reserved is kept
// in the booking itself, so a retry after a move answers the same booking
// even once the release run's retention has deleted the reservation's audit
// record; the key with another slot is still INVALID_STATE.
func TestIdempotencyKeyAfterAMoveAndRetention(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	a := s.slot(26*time.Hour, 2, 0)
	b := s.slot(50*time.Hour, 2, 0)
	other := s.slot(51*time.Hour, 2, 0)
	id, ans := s.reserve("o-rkr", a, "Idempotency-Key", "rkr-1")
	if id == 0 {
		t.Fatalf("reserve: %d %s", ans.Status, ans.Body)
	}
	if r := s.rescheduleAs("o-rkr", id, b); r.Status != 200 {
		t.Fatalf("reschedule: %d %s", r.Status, r.Body)
	}
	// The booking's audit records, as CLS accepted them longer ago than
	// AUDIT_RETENTION_DAYS: the release run deletes them.
	if _, err := s.store.SQL().Exec(`UPDATE t_audit SET shipped_at = UTC_TIMESTAMP(6) - INTERVAL 400 DAY WHERE book_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if sum := s.relRun(context.Background()); sum.AuditDeleted < 2 {
		t.Fatalf("release: %+v, want the reserve and reschedule records deleted", sum)
	}
	if ev := s.auditEvents(id); len(ev) != 0 {
		t.Fatalf("audit records left: %v", ev)
	}
	before := s.dbState()
	for _, slot := range []int64{a, b} {
		again, ans := s.reserve("o-rkr", slot, "Idempotency-Key", "rkr-1")
		if ans.Status != 201 || again != id || obj(t, ans.JSON["booking"])["slotId"] != float64(b) {
			t.Fatalf("the key with slot %d after the move and retention: %d %s", slot, ans.Status, ans.Body)
		}
	}
	_, ans = s.reserve("o-rkr", other, "Idempotency-Key", "rkr-1")
	s.wantError(ans, 409, booking.EINVALIDSTATE)
	s.unchanged(before, "retries of a moved booking's reservation after retention")
	mysqltest.CheckInvariant(t, s.store)
}

// TestSalonMovesAWalkIn: the salon moves a booking it took at the counter to
// another slot like any other, in one transaction (the invariant holds on both
// slots), with no message to send: a walk-in has no mini-program.
func TestSalonMovesAWalkIn(t *testing.T) {
	t.Parallel()
	s := newSystem(t, withTemplates)
	from, to := s.slot(26*time.Hour, 1, 5000), s.slot(27*time.Hour, 1, 0)
	a := s.call("POST", "/admin/bookings", testAdmin, map[string]any{"slotId": from, "name": "周芷若", "phone": "13600136000"})
	if a.Status != 201 {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	id := int64(obj(t, a.JSON["booking"])["bookingId"].(float64))
	a = s.call("POST", "/admin/bookings/"+itoa64(id)+"/reschedule", testAdmin, map[string]any{"slotId": to})
	if b := obj(t, a.JSON["booking"]); a.Status != 200 || b["slotId"] != float64(to) || obj(t, b["customer"])["name"] != "周芷若" {
		t.Fatalf("move the walk-in: %d %s", a.Status, a.Body)
	}
	if s.slotBooked(from) != 0 || s.slotBooked(to) != 1 {
		t.Fatalf("booked %d and %d", s.slotBooked(from), s.slotBooked(to))
	}
	var n int
	s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_notification WHERE book_id = ?`, id).Scan(&n)
	if n != 0 {
		t.Fatalf("%d messages for a walk-in", n)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}
