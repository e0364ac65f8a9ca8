package stress

import (
	"context"
	"testing"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestLatePaymentRefundedThenSeatFrees is the schedule the long profile found
// (seeds 1000, 1001): a late payment found no seat and was refunded; the seat
// then came free, and WeChat delivered the same notification again. The copy
// must not seat the booking: its money is already on its way back.
func TestLatePaymentRefundedThenSeatFrees(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := newModel(s, 1, 2)
	ctx := context.Background()
	var slot slotInfo
	for _, sl := range m.slots {
		if sl.price > 0 {
			slot = sl
			break
		}
	}
	if _, err := s.store.SQL().Exec(`UPDATE t_slot SET capacity = 1 WHERE slot_id = ?`, slot.id); err != nil {
		t.Fatal(err)
	}
	alice, bob := m.customers[0], m.customers[1]
	a := s.call("POST", "/bookings", alice.token, map[string]any{"slotId": slot.id})
	if a.Status != 201 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	late := bookingIDOf(a)
	mysqltest.ExpireHold(t, s.store, late)
	if _, err := s.runRelease(); err != nil {
		t.Fatal(err)
	}
	a = s.call("POST", "/bookings", bob.token, map[string]any{"slotId": slot.id})
	if a.Status != 201 {
		t.Fatalf("bob's reserve: %d %s", a.Status, a.Body)
	}
	bobID := bookingIDOf(a)
	if err := s.sim.PayLate(ctx, booking.OutTradeNo(late)); err != nil {
		t.Fatal(err)
	}
	if a := s.call("POST", "/bookings/"+itoa(bobID)+"/cancel", bob.token, nil); a.Status != 200 {
		t.Fatalf("bob's cancel: %d %s", a.Status, a.Body)
	}
	// WeChat delivers the late payment's notification again, now that a seat is free.
	if err := s.sim.Notify(ctx, booking.OutTradeNo(late)); err != nil {
		t.Fatal(err)
	}
	b, err := s.store.FindBooking(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != booking.StatusExpired || b.Refund == nil {
		t.Errorf("late booking is %s with refund %+v; want expired and refunded", b.Status, b.Refund)
	}
	m.quiet()
	m.check(true)
	for _, v := range s.violations {
		t.Error(v)
	}
}
