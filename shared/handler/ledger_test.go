package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wechatpay/wxpaysim"
)

// The money ledger, against the WeChat Pay simulator: every kind of movement of
// one day, the rows each booking gets, and the ledger's online money equal to
// what WeChat says it took and gave back.

// ledgerOf is a booking's ledger rows as "kind amount method", in order.
func (s *system) ledgerOf(id int64) []string {
	s.t.Helper()
	rows, err := s.store.BookingLedger(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, m := range rows {
		out = append(out, fmt.Sprintf("%s %d %s", m.Kind, m.AmountFen, m.Method))
	}
	return out
}

// settleRefund has WeChat finish booking id's refund as SUCCESS, with its
// notification.
func (s *system) settleRefund(id int64) {
	s.t.Helper()
	if err := s.sim.CompleteRefund(context.Background(), booking.OutRefundNo(id), wxpaysim.RefundSuccess); err != nil {
		s.t.Fatal(err)
	}
	if rf := s.findBk(id).Refund; rf == nil || rf.Status != booking.RefundSucceeded {
		s.t.Fatalf("booking %d: refund %+v after WeChat's success", id, rf)
	}
}

func (s *system) checkout(id int64, body any) answer {
	s.t.Helper()
	return s.call("POST", "/admin/bookings/"+itoa64(id)+"/checkout", testAdmin, body)
}

// TestLedgerOfADay: paid; paid late and re-seated; paid late with no seat and
// refunded; cancelled and refunded; late-cancelled and kept; no-show kept and
// then checked in late; a walk-in paid in the shop at checkout, and checked out
// twice (refused): each booking's ledger rows, the ledger's sums of online
// money equal to the simulator's, and the owner's report equal to both.
func TestLedgerOfADay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	const fen = 5000
	later := s.slot(26*time.Hour, 8, fen)
	soon := s.slot(time.Hour, 3, fen)
	closing := s.slot(27*time.Hour, 3, fen)

	paid := s.paidBooking("o-paid", later)

	reseated := s.mustReservePaid("o-reseated", later)
	mysqltest.ExpireHold(t, s.store, reseated)
	s.runRelease()
	if err := s.sim.PayLate(ctx, booking.OutTradeNo(reseated)); err != nil {
		t.Fatal(err)
	}
	if st := s.status(reseated); st != "confirmed" {
		t.Fatalf("paid late into a free seat: %s", st)
	}

	noSeat := s.mustReservePaid("o-noseat", closing)
	mysqltest.ExpireHold(t, s.store, noSeat)
	s.runRelease()
	if a := s.call("PATCH", "/admin/slots/"+itoa64(closing), testAdmin, map[string]any{"open": false}); a.Status != 200 {
		t.Fatalf("close: %d %s", a.Status, a.Body)
	}
	if err := s.sim.PayLate(ctx, booking.OutTradeNo(noSeat)); err != nil {
		t.Fatal(err)
	}
	if len(s.ledgerOf(noSeat)) != 1 {
		t.Fatalf("a late payment with no seat, before its refund succeeded: %v", s.ledgerOf(noSeat))
	}
	s.settleRefund(noSeat)

	cancelled := s.paidBooking("o-cancelled", later)
	if a := s.cancelAs("o-cancelled", cancelled); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	if got := s.ledgerOf(cancelled); len(got) != 1 {
		t.Fatalf("a cancel before its refund succeeded: %v", got)
	}
	s.settleRefund(cancelled)

	kept := s.paidBooking("o-kept", soon)
	if a := s.call("POST", "/bookings/"+itoa64(kept)+"/cancel", s.token("o-kept"), map[string]any{"forfeitDeposit": true}); a.Status != 200 {
		t.Fatalf("late cancel: %d %s", a.Status, a.Body)
	}

	started := s.slot(28*time.Hour, 3, fen)
	noShow := s.paidBooking("o-noshow", started)
	lateIn := s.paidBooking("o-latein", started)
	mysqltest.SlotStarts(t, s.store, started, 10*time.Minute)
	for _, id := range []int64{noShow, lateIn} {
		if a := s.admin("noshow", id); a.Status != 200 {
			t.Fatalf("noshow: %d %s", a.Status, a.Body)
		}
	}
	if a := s.admin("checkin", lateIn); a.Status != 200 {
		t.Fatalf("late checkin: %d %s", a.Status, a.Body)
	}

	counter := s.slot(29*time.Hour, 3, 12800)
	a := s.call("POST", "/admin/bookings", testAdmin, map[string]any{"slotId": counter, "name": "王女士", "phone": "13800138000"})
	if a.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	walkIn := int64(obj(t, a.JSON["booking"])["bookingId"].(float64))

	// Checkout: only a completed booking, a body exactly as documented, once.
	before := s.dbState()
	s.wantError(s.checkout(walkIn, map[string]any{"amountFen": 12800, "method": "cash"}), 409, booking.EINVALIDSTATE)
	s.wantError(s.checkout(paid, map[string]any{"amountFen": 0, "method": "cash"}), 409, booking.EINVALIDSTATE)
	s.wantError(s.checkout(999999, map[string]any{"amountFen": 100, "method": "cash"}), 404, booking.ENOTFOUND)
	s.wantError(s.call("POST", "/admin/bookings/"+itoa64(walkIn)+"/checkout", "", map[string]any{"amountFen": 1, "method": "cash"}), 401, booking.EUNAUTHORIZED)
	s.unchanged(before, "checkouts of bookings not completed")
	mysqltest.SlotStarts(t, s.store, counter, 5*time.Minute)
	if a := s.admin("checkin", walkIn); a.Status != 200 {
		t.Fatalf("walk-in checkin: %d %s", a.Status, a.Body)
	}
	before = s.dbState()
	for _, body := range []any{
		nil, `{}`, `{"amountFen":100}`, `{"method":"cash"}`,
		map[string]any{"amountFen": -1, "method": "cash"},
		map[string]any{"amountFen": 1000001, "method": "cash"},
		map[string]any{"amountFen": 100, "method": "wechatpay"},
		map[string]any{"amountFen": 100, "method": "bitcoin"},
		`{"amountFen":1.5,"method":"cash"}`, `{"amountFen":"100","method":"cash"}`,
		`{"amountFen":100,"method":"cash","tip":1}`, `{"amountFen":100,"method":"cash"} {}`,
	} {
		s.wantError(s.checkout(walkIn, body), 400, booking.EBADREQUEST)
	}
	s.unchanged(before, "refused checkouts")
	a = s.checkout(walkIn, map[string]any{"amountFen": 12800, "method": "alipay"})
	if a.Status != 200 || obj(t, a.JSON["booking"])["status"] != "completed" {
		t.Fatalf("checkout: %d %s", a.Status, a.Body)
	}
	before = s.dbState()
	s.wantError(s.checkout(walkIn, map[string]any{"amountFen": 12800, "method": "alipay"}), 409, booking.EINVALIDSTATE)
	s.wantError(s.checkout(walkIn, map[string]any{"amountFen": 1, "method": "cash"}), 409, booking.EINVALIDSTATE)
	s.unchanged(before, "a second checkout")
	// A completed booking paid online is checked out too (the rest of its price).
	if a := s.checkout(lateIn, map[string]any{"amountFen": 0, "method": "wechat"}); a.Status != 200 {
		t.Fatalf("checkout after a late check-in: %d %s", a.Status, a.Body)
	}

	deposit := fmt.Sprintf("deposit %d wechatpay", fen)
	refund := fmt.Sprintf("refund %d wechatpay", fen)
	keep := fmt.Sprintf("kept %d wechatpay", fen)
	for _, c := range []struct {
		name string
		id   int64
		want []string
	}{
		{"paid", paid, []string{deposit}},
		{"paid late, re-seated", reseated, []string{deposit}},
		{"paid late, no seat, refunded", noSeat, []string{deposit, refund}},
		{"cancelled, refunded", cancelled, []string{deposit, refund}},
		{"late-cancelled, kept", kept, []string{deposit, keep}},
		{"no-show, kept", noShow, []string{deposit, keep}},
		{"no-show checked in late", lateIn, []string{deposit, keep, fmt.Sprintf("kept %d wechatpay", -fen), "balance 0 wechat"}},
		{"walk-in, checked out", walkIn, []string{"balance 12800 alipay"}},
	} {
		if got := s.ledgerOf(c.id); strings.Join(got, "; ") != strings.Join(c.want, "; ") {
			t.Errorf("%s (booking %d): ledger %v, want %v", c.name, c.id, got, c.want)
		}
	}

	// Who and WeChat's numbers: as the audit records them.
	rows, err := s.store.BookingLedger(ctx, cancelled)
	if err != nil {
		t.Fatal(err)
	}
	var simRefund wxpaysim.Refund
	for _, rf := range s.sim.Refunds() {
		if rf.OutRefundNo == booking.OutRefundNo(cancelled) {
			simRefund = rf
		}
	}
	if d, r := rows[0], rows[1]; d.Actor != booking.ActorWeChat || d.OutTradeNo != booking.OutTradeNo(cancelled) || d.TransactionID == "" ||
		r.OutRefundNo != booking.OutRefundNo(cancelled) || r.RefundID == "" || r.RefundID != simRefund.RefundID {
		t.Errorf("cancelled booking's rows %+v, WeChat's refund %+v", rows, simRefund)
	}
	rows, err = s.store.BookingLedger(ctx, walkIn)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Actor != booking.ActorAdmin {
		t.Errorf("checkout by %q", rows[0].Actor)
	}

	// The ledger's online money is what WeChat took and gave back.
	var took, gave int64
	for _, o := range s.sim.Orders() {
		if o.State == wxpaysim.StateSuccess {
			took += o.Total
		}
	}
	for _, rf := range s.sim.Refunds() {
		if rf.Status == wxpaysim.RefundSuccess {
			gave += rf.Amount
		}
	}
	var deposits, refunds int64
	if err := s.store.SQL().QueryRow(`SELECT COALESCE(SUM(IF(kind = 'deposit', amount_fen, 0)), 0), COALESCE(SUM(IF(kind = 'refund', amount_fen, 0)), 0)
		FROM t_money WHERE method = 'wechatpay'`).Scan(&deposits, &refunds); err != nil {
		t.Fatal(err)
	}
	if deposits != took || refunds != gave || took != 7*fen || gave != 2*fen {
		t.Errorf("ledger: deposits %d, refunds %d; WeChat took %d, gave back %d", deposits, refunds, took, gave)
	}
	// The owner's report of the days around today says the same: its sums
	// over the range against the ledger's own sums and WeChat's records.
	now, err := s.store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loc := shanghai(t)
	from, to := now.In(loc).AddDate(0, 0, -1).Format(time.DateOnly), now.In(loc).AddDate(0, 0, 3).Format(time.DateOnly)
	a = s.call("GET", "/admin/reports?from="+from+"&to="+to, testAdmin, nil)
	var report struct {
		Days []struct {
			Completed, NoShows                               int
			OnlineFen, ShopFen, RefundedFen, KeptFen, NetFen int64
		}
		NoShowRate *float64
	}
	if a.Status != http.StatusOK {
		t.Fatalf("report: %d %s", a.Status, a.Body)
	}
	if err := json.Unmarshal(a.Body, &report); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		completed, noShows                int
		online, shop, refunded, kept, net int64
	}
	for _, d := range report.Days {
		sum.completed += d.Completed
		sum.noShows += d.NoShows
		sum.online += d.OnlineFen
		sum.shop += d.ShopFen
		sum.refunded += d.RefundedFen
		sum.kept += d.KeptFen
		sum.net += d.NetFen
	}
	var shop, keptSum int64
	if err := s.store.SQL().QueryRow(`SELECT COALESCE(SUM(IF(kind = 'balance', amount_fen, 0)), 0), COALESCE(SUM(IF(kind = 'kept', amount_fen, 0)), 0)
		FROM t_money`).Scan(&shop, &keptSum); err != nil {
		t.Fatal(err)
	}
	if sum.online != took || sum.refunded != gave || sum.shop != shop || sum.kept != keptSum || sum.net != took+shop-gave ||
		shop != 12800 || keptSum != 2*fen {
		t.Errorf("report over %s..%s: %+v; ledger: shop %d, kept %d; WeChat took %d, gave back %d", from, to, sum, shop, keptSum, took, gave)
	}
	// Completed: the late check-in and the walk-in; one no-show.
	if sum.completed != 2 || sum.noShows != 1 || report.NoShowRate == nil || *report.NoShowRate != 0.3333 {
		t.Errorf("report: completed %d, no-shows %d, rate %v", sum.completed, sum.noShows, report.NoShowRate)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}
