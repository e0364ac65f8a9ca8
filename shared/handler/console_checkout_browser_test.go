package handler

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestCheckoutInABrowser: on a completed walk-in's page the console suggests
// the slot's price (no deposit was paid online), the salon picks 支付宝 and
// checks out; the page then lists what was paid (收款记录) and offers no second
// checkout. A paid booking's page lists its deposit; one not completed has no
// checkout form.
func TestCheckoutInABrowser(t *testing.T) {
	s := newSystem(t)
	counter := s.slot(26*time.Hour, 3, 12800)
	a := s.call("POST", "/admin/bookings", testAdmin, map[string]any{"slotId": counter, "name": "王女士", "phone": "13800138000"})
	if a.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	walkIn := int64(obj(t, a.JSON["booking"])["bookingId"].(float64))
	online := s.slot(27*time.Hour, 3, 5000)
	paid := s.paidBooking("o-online", online)

	b := newBrowser(t, s)
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b.open("booking?id=" + itoa64(paid)); st != http.StatusOK {
		t.Fatalf("paid booking: %d", st)
	}
	if b.count("#checkout") != 0 || b.attr(`#ledger tr[data-kind="deposit"]`, "data-fen") != "5000" ||
		!strings.Contains(b.text(`#ledger tr[data-kind="deposit"]`), "微信支付") {
		t.Fatalf("a confirmed booking's money: form %d, ledger %q", b.count("#checkout"), b.text("#ledger"))
	}

	mysqltest.SlotStarts(t, s.store, counter, 5*time.Minute)
	if a := s.admin("checkin", walkIn); a.Status != 200 {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	if st := b.open("booking?id=" + itoa64(walkIn)); st != http.StatusOK {
		t.Fatalf("walk-in's page: %d", st)
	}
	if got := eval[string](b, `document.querySelector('#checkout input[name="yuan"]').value`); got != "128" {
		t.Fatalf("suggested %q, want the slot's price 128", got)
	}
	if b.count("#ledger-empty") != 1 {
		t.Fatalf("a walk-in's ledger before checkout: %q", b.text("#ledger"))
	}
	b.shot("checkout")
	b.setValue(`#checkout input[name="yuan"]`, "120.5")
	eval[bool](b, `document.querySelector('#checkout input[value="alipay"]').click(), true`)
	if st := b.submit("#checkout button"); st != http.StatusOK {
		t.Fatalf("checkout: %d", st)
	}
	if msg := b.text("#flash"); !strings.Contains(msg, "已记录到店付款") {
		t.Fatalf("after checkout the page says %q", msg)
	}
	row := `#ledger tr[data-kind="balance"]`
	if b.attr(row, "data-fen") != "12050" || !strings.Contains(b.text(row), "支付宝") || !strings.Contains(b.text(row), "¥120.50") {
		t.Fatalf("the ledger after checkout: %q", b.text("#ledger"))
	}
	if b.count("#checkout") != 0 {
		t.Fatal("a checked-out booking offers a second checkout")
	}
	if !strings.Contains(b.text("#history"), "结账") {
		t.Fatalf("the history has no checkout: %q", b.text("#history"))
	}
	rows, err := s.store.BookingLedger(b.timed(), walkIn)
	if err != nil || len(rows) != 1 || rows[0].Kind != booking.MoneyBalance || rows[0].Method != booking.MethodAlipay || rows[0].AmountFen != 12050 {
		t.Fatalf("ledger %+v, %v", rows, err)
	}
}
