package handler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// The tests of what happens after the appointment (no-show, late check-in), the
// cancellation policy, holds that end at the start, and refunds that settle
// themselves. Time passes by moving rows on the database's clock, never by
// sleeping.

// paidBooking reserves slot for openid and pays it through the simulator.
func (s *system) paidBooking(openid string, slot int64) int64 {
	s.t.Helper()
	id := s.mustReservePaid(openid, slot)
	s.payFor(id)
	return id
}

func (s *system) admin(action string, id int64) answer {
	s.t.Helper()
	return s.call("POST", "/admin/bookings/"+itoa64(id)+"/"+action, testAdmin, nil)
}

// TestNoShowAndLateCheckIn: the salon marks a no-show only once the slot has
// started; the timer marks one NO_SHOW_GRACE after the slot ended; a no-show can
// still be checked in; both keep the seat and the deposit; and the customer can
// book again afterwards.
func TestNoShowAndLateCheckIn(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 3, 5000)
	id := s.paidBooking("o-ns", slot)

	before := s.dbState()
	s.wantError(s.admin("noshow", id), 409, booking.ETOOEARLY)
	s.wantError(s.admin("checkin", id), 409, booking.ETOOEARLY)
	s.unchanged(before, "a no-show and a check-in before they open")
	s.wantError(s.call("POST", "/admin/bookings/"+itoa64(id)+"/noshow", "", nil), 401, booking.EUNAUTHORIZED)
	s.wantError(s.admin("noshow", 999999), 404, booking.ENOTFOUND)

	mysqltest.SlotStarts(t, s.store, slot, 10*time.Minute)
	a := s.admin("noshow", id)
	if a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "no_show" {
		t.Fatalf("noshow: %d %s", a.Status, a.Body)
	}
	if s.slotBooked(slot) != 1 {
		t.Fatalf("a no-show gave its seat back: booked %d", s.slotBooked(slot))
	}
	s.wantError(s.admin("noshow", id), 409, booking.EINVALIDSTATE)
	// The customer cannot cancel a started appointment, no-show or not.
	s.wantError(s.cancelAs("o-ns", id), 409, booking.EINVALIDSTATE)

	// Staff forgot to press the button: a late check-in.
	a = s.admin("checkin", id)
	if a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "completed" {
		t.Fatalf("late checkin: %d %s", a.Status, a.Body)
	}
	if ev := s.auditEvents(id); countEvent(ev, booking.EventNoShow) != 1 || countEvent(ev, booking.EventCheckIn) != 1 {
		t.Fatalf("audit %v", ev)
	}

	// Completed: the customer books again.
	next := s.slot(50*time.Hour, 3, 5000)
	if id2, a := s.reserve("o-ns", next); id2 == 0 {
		t.Fatalf("reserve after a completed booking: %d %s", a.Status, a.Body)
	}

	// The timer: a confirmed booking whose slot ended more than the grace ago.
	late := s.slot(27*time.Hour, 3, 5000)
	gone := s.paidBooking("o-gone", late)
	mysqltest.SlotStarts(t, s.store, late, 90*time.Minute+31*time.Minute)
	sum := s.relRun(context.Background())
	if sum.NoShows != 1 || s.status(gone) != "no_show" {
		t.Fatalf("release run: %+v, booking %s", sum, s.status(gone))
	}
	recs, _ := s.store.BookingAudit(context.Background(), gone)
	if last := recs[len(recs)-1]; last.Event != booking.EventNoShow || last.Actor != booking.ActorTimer {
		t.Fatalf("last audit %+v", last)
	}
	if sum := s.relRun(context.Background()); sum.NoShows != 0 {
		t.Fatalf("second run marked again: %+v", sum)
	}
	if id3, a := s.reserve("o-gone", next); id3 == 0 {
		t.Fatalf("reserve after a no-show: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestNoShowRacesCheckIn: the timer's no-show and the salon's check-in of the
// same bookings at the same moment: for each booking exactly one wins, the other
// is INVALID_STATE (or finds nothing to do), and nothing is counted twice.
func TestNoShowRacesCheckIn(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	const n = 12
	slot := s.slot(28*time.Hour, n, 5000)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = s.paidBooking(fmt.Sprintf("o-race-%d", i), slot)
	}
	mysqltest.SlotStarts(t, s.store, slot, 3*time.Hour)

	var wg sync.WaitGroup
	checkins := make([]answer, n)
	var sum relSummary
	var relErr error
	start := make(chan struct{})
	wg.Add(n + 1)
	go func() {
		defer wg.Done()
		<-start
		sum, relErr = relRunEnv(context.Background(), s.apiEnv)
	}()
	for i := range ids {
		go func(i int) {
			defer wg.Done()
			<-start
			checkins[i] = s.admin("checkin", ids[i])
		}(i)
	}
	close(start)
	wg.Wait()
	if relErr != nil {
		t.Fatal(relErr)
	}
	noShows := 0
	for i, id := range ids {
		ev := s.auditEvents(id)
		st := s.status(id)
		switch {
		case checkins[i].Status == 200 && st == "completed" && countEvent(ev, booking.EventNoShow) == 0 && countEvent(ev, booking.EventCheckIn) == 1:
		case checkins[i].Status == 200 && st == "completed" && countEvent(ev, booking.EventNoShow) == 1 && countEvent(ev, booking.EventCheckIn) == 1:
			// The timer won, then the check-in found a no-show: a late check-in.
			noShows++
		case checkins[i].Status == 409 && checkins[i].code() == booking.EINVALIDSTATE && st == "no_show" && countEvent(ev, booking.EventCheckIn) == 0:
			noShows++
		default:
			t.Errorf("booking %d: check-in %d %s, status %s, audit %v", id, checkins[i].Status, checkins[i].Body, st, ev)
		}
	}
	if sum.NoShows != noShows {
		t.Errorf("release counted %d no-shows, the audit shows %d", sum.NoShows, noShows)
	}
	if s.slotBooked(slot) != n {
		t.Errorf("booked %d, want %d (no-shows and check-ins both keep the seat)", s.slotBooked(slot), n)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestNoShowLimit: with NO_SHOW_LIMIT set, a customer with that many recent
// no-shows is refused at reserve with 403 and nothing is written; others are not.
func TestNoShowLimit(t *testing.T) {
	t.Parallel()
	s := newSystem(t, func(env map[string]string) { env["NO_SHOW_LIMIT"] = "1" })
	slot := s.slot(26*time.Hour, 3, 5000)
	id := s.paidBooking("o-absent", slot)
	mysqltest.SlotStarts(t, s.store, slot, 3*time.Hour)
	if a := s.admin("noshow", id); a.Status != 200 {
		t.Fatalf("noshow: %d %s", a.Status, a.Body)
	}
	next := s.slot(30*time.Hour, 3, 5000)
	before := s.dbState()
	s.wantError(s.call("POST", "/bookings", s.token("o-absent"), map[string]any{"slotId": next}), 403, booking.ENOSHOWLIMIT)
	s.unchanged(before, "a reserve over the no-show limit")
	if id, a := s.reserve("o-present", next); id == 0 {
		t.Fatalf("another customer: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestHoldEndsAtTheStart: a hold taken shortly before the start ends at the
// start, and so does its WeChat order.
func TestHoldEndsAtTheStart(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(5*time.Minute, 3, 5000)
	id, a := s.reserve("o-soon", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	if b["lockExpireAt"] != b["startAt"] {
		t.Fatalf("lockExpireAt %v, startAt %v", b["lockExpireAt"], b["startAt"])
	}
	o, ok := s.sim.Order(booking.OutTradeNo(id))
	start, _ := time.Parse(time.RFC3339, b["startAt"].(string))
	if !ok || o.TimeExpireRaw == "" {
		t.Fatalf("order %+v", o)
	}
	if sent, err := time.Parse(time.RFC3339, o.TimeExpireRaw); err != nil || !sent.Equal(start) {
		t.Fatalf("WeChat order time_expire %q, slot start %s", o.TimeExpireRaw, start)
	}
	// A slot a day away keeps the usual 15 minutes.
	far := s.slot(26*time.Hour, 3, 5000)
	_, a = s.reserve("o-far", far)
	fb := obj(t, a.JSON["booking"])
	lock, _ := time.Parse(time.RFC3339, fb["lockExpireAt"].(string))
	created, _ := time.Parse(time.RFC3339, fb["createdAt"].(string))
	if d := lock.Sub(created); d < 14*time.Minute || d > 16*time.Minute {
		t.Fatalf("hold of a far slot: %s", d)
	}
}

// TestPaymentAfterTheStartIsRefunded: a late payment never re-seats a booking
// into a slot that has started or was closed; it is refunded in full.
func TestPaymentAfterTheStartIsRefunded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		move func(s *system, slot int64)
	}{
		{"started", func(s *system, slot int64) { mysqltest.SlotStarts(t, s.store, slot, time.Minute) }},
		{"closed", func(s *system, slot int64) {
			if a := s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"open": false}); a.Status != 200 {
				t.Fatalf("close: %d %s", a.Status, a.Body)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSystem(t)
			slot := s.slot(26*time.Hour, 3, 5000)
			id := s.mustReservePaid("o-after", slot)
			mysqltest.ExpireHold(t, s.store, id)
			s.runRelease()
			if st := s.status(id); st != "expired" {
				t.Fatalf("after release: %s", st)
			}
			c.move(s, slot)
			if err := s.sim.PayLate(ctx, booking.OutTradeNo(id)); err != nil {
				t.Fatal(err)
			}
			b := s.findBk(id)
			if b.Status != booking.StatusExpired || b.Refund == nil || b.Refund.AmountFen != 5000 {
				t.Fatalf("late payment into a %s slot: %s, refund %+v", c.name, b.Status, b.Refund)
			}
			if s.slotBooked(slot) != 0 {
				t.Fatalf("seat taken: booked %d", s.slotBooked(slot))
			}
			if rfs := s.sim.Refunds(); len(rfs) != 1 || rfs[0].Amount != 5000 {
				t.Fatalf("refunds at WeChat %+v", rfs)
			}
			mysqltest.CheckInvariant(t, s.store)
			checkMoney(t, s)
		})
	}
}

// TestCancellationPolicy: free until cancelFreeUntil (full refund); after it,
// LATE_CANCEL unless the customer forfeits the deposit, in which case the seat
// goes back and nothing is refunded; a pending booking is free until the start;
// the salon's cancel always refunds in full; the body is strict.
func TestCancellationPolicy(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	cancel := func(openid string, id int64, body any) answer {
		return s.call("POST", "/bookings/"+itoa64(id)+"/cancel", s.token(openid), body)
	}

	// Early: free, refunded in full.
	early := s.slot(26*time.Hour, 3, 5000)
	id := s.paidBooking("o-early", early)
	b := s.mineOf("o-early", id)
	start, _ := time.Parse(time.RFC3339, b["startAt"].(string))
	if free, _ := time.Parse(time.RFC3339, b["cancelFreeUntil"].(string)); !free.Equal(start.Add(-2 * time.Hour)) {
		t.Fatalf("cancelFreeUntil %v, start %v", b["cancelFreeUntil"], b["startAt"])
	}
	if a := cancel("o-early", id, nil); a.Status != 200 || obj(t, a.JSON["booking"])["refund"] == nil {
		t.Fatalf("early cancel: %d %s", a.Status, a.Body)
	}

	// Late: an hour before the start.
	soon := s.slot(time.Hour, 3, 5000)
	late := s.paidBooking("o-late", soon)
	before := s.dbState()
	s.wantError(cancel("o-late", late, nil), 409, booking.ELATECANCEL)
	s.wantError(cancel("o-late", late, map[string]any{"forfeitDeposit": false}), 409, booking.ELATECANCEL)
	s.wantError(cancel("o-late", late, map[string]any{"forfeit": true}), 400, booking.EBADREQUEST)
	s.wantError(cancel("o-late", late, `{"forfeitDeposit":"yes"}`), 400, booking.EBADREQUEST)
	s.wantError(cancel("o-late", late, `{"forfeitDeposit":true} {}`), 400, booking.EBADREQUEST)
	s.unchanged(before, "refused late cancels")
	a := cancel("o-late", late, map[string]any{"forfeitDeposit": true})
	if a.Status != 200 {
		t.Fatalf("late cancel with forfeit: %d %s", a.Status, a.Body)
	}
	if j := obj(t, a.JSON["booking"]); j["status"] != "cancelled" || j["refund"] != nil {
		t.Fatalf("late cancel answer %v", j)
	}
	if s.slotBooked(soon) != 0 || len(s.sim.Refunds()) != 1 {
		t.Fatalf("late cancel: booked %d, refunds %d", s.slotBooked(soon), len(s.sim.Refunds()))
	}
	if ev := s.auditEvents(late); countEvent(ev, booking.EventLateCancel) != 1 {
		t.Fatalf("audit %v", ev)
	}

	// A pending booking is free to cancel until the start.
	pending, _ := s.reserve("o-pending", soon)
	if a := cancel("o-pending", pending, nil); a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "cancelled" {
		t.Fatalf("pending cancel: %d %s", a.Status, a.Body)
	}

	// The salon's cancel of a late booking refunds in full.
	salon := s.paidBooking("o-salon", soon)
	a = s.admin("cancel", salon)
	if a.Status != 200 || obj(t, a.JSON["booking"])["refund"] == nil {
		t.Fatalf("salon cancel: %d %s", a.Status, a.Body)
	}
	if rf := s.findBk(salon).Refund; rf == nil || rf.AmountFen != 5000 {
		t.Fatalf("salon refund %+v", rf)
	}

	// CANCEL_FREE_HOURS=0: free until the start.
	s0 := newSystem(t, func(env map[string]string) { env["CANCEL_FREE_HOURS"] = "0" })
	slot0 := s0.slot(time.Hour, 3, 5000)
	id0 := s0.paidBooking("o-zero", slot0)
	if a := s0.call("POST", "/bookings/"+itoa64(id0)+"/cancel", s0.token("o-zero"), nil); a.Status != 200 || obj(t, a.JSON["booking"])["refund"] == nil {
		t.Fatalf("cancel with CANCEL_FREE_HOURS=0: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
	checkMoney(t, s0)
}

// TestRefundsSettleThemselves: 25 refunds that keep failing do not hold up a
// good one, which is accepted on the first run; a refund whose notification is
// lost is settled by the release run's query once REFUND_QUERY_AFTER has passed.
func TestRefundsSettleThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 30, 5000)
	var ids []int64
	var orders []string
	for i := 0; i < 26; i++ {
		id := s.paidBooking(fmt.Sprintf("o-rf-%02d", i), slot)
		ids = append(ids, id)
		orders = append(orders, booking.OutTradeNo(id))
	}
	s.sim.FailRefundsOf(orders...)
	for _, id := range ids {
		if a := s.admin("cancel", id); a.Status != 200 {
			t.Fatalf("salon cancel: %d %s", a.Status, a.Body)
		}
	}
	good := ids[len(ids)-1]
	s.sim.AllowRefundsOf(orders[len(orders)-1])
	// Every backoff has passed, the failing ones fell due before the good one.
	if _, err := s.store.SQL().Exec(`UPDATE t_booking SET refund_next_at = UTC_TIMESTAMP(6) - INTERVAL (100 - book_id % 100) SECOND`); err != nil {
		t.Fatal(err)
	}
	sum := s.relRun(ctx)
	if rf := s.findBk(good).Refund; rf.Status != booking.RefundProcessing {
		t.Fatalf("good refund after the first run: %+v (summary %+v)", rf, sum)
	}
	for _, id := range ids[:25] {
		rf := s.findBk(id).Refund
		if rf.Status != booking.RefundPending || rf.Attempts < 2 {
			t.Fatalf("failing refund %d: %+v", id, rf)
		}
	}
	// Backed off: the next run does not ask for the failing ones again at once.
	calls := len(s.sim.Calls())
	s.relRun(ctx)
	for _, c := range s.sim.Calls()[calls:] {
		if c.Path == "/v3/refund/domestic/refunds" {
			t.Fatalf("a backed-off refund was asked again at once: %+v", c)
		}
	}

	// WeChat finishes the good refund, but its notification is lost.
	if err := s.sim.CompleteRefundSilently(booking.OutRefundNo(good), "SUCCESS"); err != nil {
		t.Fatal(err)
	}
	if sum := s.relRun(ctx); sum.RefundsSettled != 0 {
		t.Fatalf("queried before REFUND_QUERY_AFTER: %+v", sum)
	}
	if _, err := s.store.SQL().Exec(`UPDATE t_booking SET refund_requested_at = refund_requested_at - INTERVAL 6 MINUTE WHERE book_id = ?`, good); err != nil {
		t.Fatal(err)
	}
	sum = s.relRun(ctx)
	if rf := s.findBk(good).Refund; sum.RefundsSettled != 1 || rf.Status != booking.RefundSucceeded || rf.RefundedAt == nil {
		t.Fatalf("after the query: %+v, summary %+v", rf, sum)
	}
	if j := s.mineOf("o-rf-25", good); obj(t, j["refund"])["status"] != "succeeded" {
		t.Fatalf("customer sees %v", j["refund"])
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}
