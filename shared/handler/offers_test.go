package handler

import (
	"context"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// offerFreedSeat fills a one-seat slot with holder's reservation, puts waiter in
// its line and has holder cancel: the seat is offered to waiter, whose new
// booking it returns.
func (s *system) offerFreedSeat(slot int64, holder, waiter string) int64 {
	s.t.Helper()
	held := s.mustReservePaid(holder, slot)
	if a := s.joinWaitlist(waiter, slot); a.Status != 201 {
		s.t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if a := s.cancelAs(holder, held); a.Status != 200 {
		s.t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	offer := s.offers(slot)[waiter]
	if offer == 0 {
		s.t.Fatalf("no offer to %s: %v", waiter, s.offers(slot))
	}
	return offer
}

// TestFreeOfferWaitsForTheCustomer: a seat of a free slot handed to the first in
// line is a hold like any other, never confirmed unasked. The customer accepts
// it with POST /bookings/{id}/pay, which confirms it and answers no payment; an
// offer nobody accepts expires, and so never becomes a no-show that would lock
// the customer out under NO_SHOW_LIMIT.
func TestFreeOfferWaitsForTheCustomer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t, func(env map[string]string) { env["NO_SHOW_LIMIT"] = "1" })

	// Accepted.
	offer := s.offerFreedSeat(s.slot(26*time.Hour, 1, 0), "o-free-holder", "o-free-v")
	if offer == 0 || s.status(offer) != "pending_payment" {
		t.Fatalf("free offer %d is %s, want pending_payment", offer, s.status(offer))
	}
	a := s.call("POST", "/bookings/"+itoa64(offer)+"/pay", s.token("o-free-v"), nil)
	if a.Status != 200 || a.JSON["payment"] != nil || obj(t, a.JSON["booking"])["status"] != "confirmed" {
		t.Fatalf("accepting the free offer: %d %s", a.Status, a.Body)
	}
	if ev := s.auditEvents(offer); len(ev) != 2 || ev[0] != booking.EventWaitlistOffer || ev[1] != booking.EventConfirm {
		t.Fatalf("audit of the accepted offer: %v", ev)
	}
	// Accepting twice is a state error and changes nothing.
	before := s.dbState()
	s.wantError(s.call("POST", "/bookings/"+itoa64(offer)+"/pay", s.token("o-free-v"), nil), 409, booking.EINVALIDSTATE)
	s.unchanged(before, "a second acceptance")

	// Never accepted: it expires, with no WeChat order to close.
	free2 := s.slot(27*time.Hour, 1, 0)
	ignored := s.offerFreedSeat(free2, "o-free-holder2", "o-free-w")
	mysqltest.ExpireHold(t, s.store, ignored)
	calls := len(s.sim.Calls())
	s.relRun(ctx)
	if st := s.status(ignored); st != "expired" {
		t.Fatalf("an ignored free offer is %s, want expired", st)
	}
	// The run may also fetch a day's bill (after BILL_AFTER): not the hold's.
	for _, c := range s.sim.Calls()[calls:] {
		if !strings.HasPrefix(c.Path, "/v3/bill") {
			t.Fatalf("releasing a free hold called WeChat Pay: %+v", c)
		}
	}
	// After the slot is over she is no no-show, and can book again.
	mysqltest.SlotStarts(t, s.store, free2, 3*time.Hour)
	s.relRun(ctx)
	if st := s.status(ignored); st != "expired" {
		t.Fatalf("after the slot: %s", st)
	}
	if id, a := s.reserve("o-free-w", s.slot(28*time.Hour, 1, 5000)); id == 0 {
		t.Fatalf("the customer who ignored an offer cannot book: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestOffersPassOverCustomersAtTheNoShowLimit: with NO_SHOW_LIMIT, a customer
// who reached it while waiting is refused at reserve, so a freed seat is not
// offered to her either: the next in line gets it, and she keeps her place.
func TestOffersPassOverCustomersAtTheNoShowLimit(t *testing.T) {
	t.Parallel()
	s := newSystem(t, func(env map[string]string) { env["NO_SHOW_LIMIT"] = "1" })
	slot := s.slot(26*time.Hour, 1, 5000)
	holder := s.mustReservePaid("o-ns-holder", slot)
	earlier := s.slot(27*time.Hour, 1, 5000)
	missed := s.paidBooking("o-ns-x", earlier)
	for _, openid := range []string{"o-ns-x", "o-ns-y"} {
		if a := s.joinWaitlist(openid, slot); a.Status != 201 {
			t.Fatalf("join %s: %d %s", openid, a.Status, a.Body)
		}
	}
	// X misses her earlier appointment while she waits.
	mysqltest.SlotStarts(t, s.store, earlier, 10*time.Minute)
	if a := s.admin("noshow", missed); a.Status != 200 {
		t.Fatalf("no-show: %d %s", a.Status, a.Body)
	}
	s.wantError(s.call("POST", "/bookings", s.token("o-ns-x"), map[string]any{"slotId": s.slot(29*time.Hour, 1, 5000)}), 403, booking.ENOSHOWLIMIT)

	if a := s.cancelAs("o-ns-holder", holder); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	offers := s.offers(slot)
	if len(offers) != 1 || offers["o-ns-y"] == 0 {
		t.Fatalf("offers %v, want only o-ns-y", offers)
	}
	a := s.call("GET", "/waitlist/mine", s.token("o-ns-x"), nil)
	if l, _ := a.JSON["waitlist"].([]any); len(l) != 1 || obj(t, l[0])["position"] != 1.0 {
		t.Fatalf("the passed-over customer's place: %s", a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestNoOfferOfYourOwnSeat: a customer cannot wait for a slot she holds a seat
// of (409 INVALID_STATE, nothing written), and a seat she gives up is never
// handed back to her as a fresh hold ahead of those behind her: her place in
// that line goes with it.
func TestNoOfferOfYourOwnSeat(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 1, 5000)
	own := s.paidBooking("o-own", slot)
	before := s.dbState()
	s.wantError(s.joinWaitlist("o-own", slot), 409, booking.EINVALIDSTATE)
	s.unchanged(before, "joining the line of one's own slot")

	// A place she took before she got the seat (she waited, was passed over
	// while she held another booking, then reserved it when it came free).
	if _, err := s.store.SQL().Exec(`INSERT INTO t_waitlist (slot_id, openid, created_at) VALUES (?, ?, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)`, slot, "o-own"); err != nil {
		t.Fatal(err)
	}
	if a := s.joinWaitlist("o-later", slot); a.Status != 201 || obj(t, a.JSON["waitlist"])["position"] != 2.0 {
		t.Fatalf("join behind her: %d %s", a.Status, a.Body)
	}
	if a := s.cancelAs("o-own", own); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	offers := s.offers(slot)
	if len(offers) != 1 || offers["o-later"] == 0 {
		t.Fatalf("offers %v: her own seat went back to her", offers)
	}
	if a := s.call("GET", "/waitlist/mine", s.token("o-own"), nil); len(a.JSON["waitlist"].([]any)) != 0 {
		t.Fatalf("her place stayed: %s", a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestPaidUnseenCancelInsideTheLateWindow: inside the late window a customer
// cancels a booking she sees as unpaid, while WeChat has in fact taken her money
// (the notification was lost). The close-then-query finds it paid, and the
// cancel goes on as the cancel of a paid booking: refunded in full, not refused
// as a late cancel and not left confirmed.
func TestPaidUnseenCancelInsideTheLateWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rl := newRelayedSystem(t)
	slot := s.slot(time.Hour, 2, 5000) // CANCEL_FREE_HOURS is 2: already late
	id := s.mustReservePaid("o-unseen", slot)
	rl.drop.Store(true)
	if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err == nil || rl.dropped.Load() == 0 {
		t.Fatalf("delivery was not dropped: %v", err)
	}
	a := s.cancelAs("o-unseen", id)
	if a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	rf, _ := b["refund"].(map[string]any)
	if b["status"] != "cancelled" || rf == nil || rf["amountFen"].(float64) != 5000 {
		t.Fatalf("cancel answer: %s", a.Body)
	}
	if s.slotBooked(slot) != 0 {
		t.Fatalf("booked %d", s.slotBooked(slot))
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}
