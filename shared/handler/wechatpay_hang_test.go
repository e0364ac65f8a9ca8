package handler

import (
	"context"
	"net/http"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wechatpay/wxpaysim"
)

// WeChat Pay that stops answering (wxpaysim's Hang), end to end through the
// gateway. Each call to WeChat Pay has its own timeout, far inside the API's
// serviceTimeout (8 s), so the function answers 503 UPSTREAM_UNAVAILABLE
// itself instead of the gateway's 504, and stops waiting: nothing it asked
// WeChat for happens after it answered. Before, a hung prepay was a 504 after
// 8 s, and a customer's cancel was a 504 that still went through once WeChat
// came back (the retry then saw 409). The timeout is shortened here
// (instance.Env.PayTimeout), and the test releases the hang itself: no sleeps.

const hangTestPayTimeout = 150 * time.Millisecond

// newHangSystem is the product with a short WeChat Pay timeout.
func newHangSystem(t *testing.T) *system {
	t.Helper()
	s := newSystem(t)
	s.apiEnv.PayTimeout = hangTestPayTimeout // read when the functions build their clients, on first use
	return s
}

// hang makes WeChat Pay stop answering until the returned function is called.
// That function first waits until every request the product sent has been
// given up by its caller (so none is left that WeChat could still act on),
// then lets WeChat answer again.
func hang(t *testing.T, sim *wxpaysim.Sim) (back func()) {
	t.Helper()
	release := sim.Hang()
	t.Cleanup(release) // whatever happens, nothing stays hung after the test
	return func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sim.AwaitHanging(ctx, 0); err != nil {
			t.Errorf("the product still waits for WeChat Pay after answering: %v", err)
		}
		release()
	}
}

func TestReserveWhileWeChatPayHangs(t *testing.T) {
	t.Parallel()
	s := newHangSystem(t)
	slot := s.slot(26*time.Hour, 3, 5000)
	key := []string{"Idempotency-Key", "k-hang-1"}

	back := hang(t, s.sim)
	a := s.call("POST", "/bookings", s.token("o-hang"), map[string]any{"slotId": slot}, key...)
	if a.Status != http.StatusServiceUnavailable || a.code() != booking.EUPSTREAM {
		t.Fatalf("reserve while WeChat Pay hangs: %d %s, want 503 %s", a.Status, a.Body, booking.EUPSTREAM)
	}
	back()

	// As documented for a WeChat outage: the seat is held, pending, and the
	// same key pays it once WeChat answers again.
	id, a := s.reserve("o-hang", slot, key...)
	if id == 0 || a.JSON["payment"] == nil {
		t.Fatalf("the retry once WeChat Pay is back: %d %s", a.Status, a.Body)
	}
	if n := s.countRows("t_booking"); n != 1 {
		t.Errorf("%d bookings, want the one", n)
	}
	s.payFor(id)
	mysqltest.CheckInvariant(t, s.store)
}

func TestCancelWhileWeChatPayHangs(t *testing.T) {
	t.Parallel()
	s := newHangSystem(t)
	slot := s.slot(26*time.Hour, 1, 5000)
	id, a := s.reserve("o-hang-cancel", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	tok := s.token("o-hang-cancel")
	path := "/bookings/" + itoa64(id) + "/cancel"
	before := s.secState()

	back := hang(t, s.sim)
	a = s.call("POST", path, tok, nil)
	if a.Status != http.StatusServiceUnavailable || a.code() != booking.EUPSTREAM {
		t.Fatalf("cancel while WeChat Pay hangs: %d %s, want 503 %s", a.Status, a.Body, booking.EUPSTREAM)
	}
	// The salon's cancel goes the same way.
	a = s.call("POST", "/admin/bookings/"+itoa64(id)+"/cancel", testAdmin, nil)
	if a.Status != http.StatusServiceUnavailable || a.code() != booking.EUPSTREAM {
		t.Errorf("the salon's cancel while WeChat Pay hangs: %d %s, want 503 %s", a.Status, a.Body, booking.EUPSTREAM)
	}
	back()
	// WeChat is back: what the product gave up on never happened, here or there.
	s.secUnchanged(before, "cancels answered 503 while WeChat Pay hung")
	if o, ok := s.sim.Order(booking.OutTradeNo(id)); !ok || o.TradeState != wxpaysim.StateNotPay {
		t.Errorf("WeChat's order after the abandoned close: %+v", o)
	}

	// The retry succeeds: closed at WeChat, cancelled, the seat back.
	a = s.call("POST", path, tok, nil)
	if a.Status != http.StatusOK || s.status(id) != "cancelled" {
		t.Fatalf("the retry once WeChat Pay is back: %d %s (status %s)", a.Status, a.Body, s.status(id))
	}
	if o, _ := s.sim.Order(booking.OutTradeNo(id)); o.TradeState != wxpaysim.StateClosed {
		t.Errorf("WeChat's order after the cancel: %s, want CLOSED", o.TradeState)
	}
	if other, a := s.reserve("o-hang-next", slot); other == 0 {
		t.Errorf("the freed seat: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
}
