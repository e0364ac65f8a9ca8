package handler

import (
	"context"
	"net/http"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/wechatpay/wxpaysim"
)

// A staff member's cancel through the JSON admin API (her console session):
// an unpaid booking and a walk-in are cancelled (nothing to refund); a paid
// one is 403 FORBIDDEN and unchanged; and one WeChat reports paid while she
// cancels it (the customer paid, the notification has not come) is 403 too,
// settled as confirmed, never cancelled nor refunded: that is the owner's,
// whose cancel then refunds it.
func TestStaffCancelsWhatHasNothingToRefund(t *testing.T) {
	t.Parallel()
	s := newSystem(t, relLostNotifications(t))
	ctx := context.Background()
	svc := s.svc()
	createStaff(t, svc, "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	cancel := func(id int64) answer {
		t.Helper()
		return s.call("POST", "/admin/bookings/"+itoa64(id)+"/cancel", "", nil, "Cookie", cookie, consoleauth.CSRFHeader, csrf)
	}
	slot := s.slot(30*time.Hour, 4, 5000)

	unpaid := s.mustReservePaid("o-unpaid-001", slot)
	walkIn, err := svc.WalkIn(service.WithStaff(ctx, booking.BuiltInOwner), booking.WalkInRequest{SlotID: slot, Name: "李女士"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{unpaid, walkIn.ID} {
		if a := cancel(id); a.Status != http.StatusOK || obj(t, a.JSON["booking"])["status"] != "cancelled" {
			t.Fatalf("staff cancel of booking %d: %d %s", id, a.Status, a.Body)
		}
	}

	// Paid (its notification delivered by hand): the owner's.
	paid := s.mustReservePaid("o-paid-0001", slot)
	if err := s.sim.Pay(ctx, booking.OutTradeNo(paid)); err == nil {
		t.Fatal("the notification was delivered; want it lost")
	}
	s.relDeliverPayment(booking.OutTradeNo(paid))
	if s.status(paid) != "confirmed" {
		t.Fatalf("paid booking: %s", s.status(paid))
	}
	before := s.dbState()
	s.wantError(cancel(paid), http.StatusForbidden, booking.EFORBIDDEN)
	s.unchanged(before, "a staff member's cancel of a paid booking")

	// Paid at WeChat during her cancel: the close finds it paid.
	racing := s.mustReservePaid("o-racing-01", slot)
	no := booking.OutTradeNo(racing)
	if err := s.sim.Pay(ctx, no); err == nil {
		t.Fatal("the notification was delivered; want it lost")
	}
	if s.status(racing) != booking.StatusPending.String() {
		t.Fatalf("before her cancel: %s", s.status(racing))
	}
	s.wantError(cancel(racing), http.StatusForbidden, booking.EFORBIDDEN)
	b, err := s.store.FindBooking(ctx, racing)
	o, _ := s.sim.Order(no)
	if err != nil || b.Status != booking.StatusConfirmed || b.TransactionID != o.TransactionID || b.Refund != nil || o.State != wxpaysim.StateSuccess {
		t.Fatalf("after her refused cancel: %+v %v, WeChat %s", b, err, o.State)
	}
	mysqltest.CheckInvariant(t, s.store)

	if a := s.admin("cancel", racing); a.Status != http.StatusOK || obj(t, a.JSON["booking"])["status"] != "cancelled" {
		t.Fatalf("the owner's cancel: %d %s", a.Status, a.Body)
	}
	if b, err := s.store.FindBooking(ctx, racing); err != nil || b.Refund == nil || b.Refund.AmountFen != 5000 {
		t.Fatalf("the owner's cancel refunds: %+v %v", b, err)
	}
	mysqltest.CheckInvariant(t, s.store)
}
