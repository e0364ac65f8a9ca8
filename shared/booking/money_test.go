package booking

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLedgerOfEveryTransition: the ledger rows each row of the state machine
// plans, paid or not: a recorded payment's deposit; a paid deposit kept by a
// late cancel and a no-show, given back by a late check-in; nothing else (a
// refund's row is written when it succeeds, not at the cancel). A late
// cancel, paid or not, marks the booking's cancel late.
func TestLedgerOfEveryTransition(t *testing.T) {
	payment := &Payment{TransactionID: "4200", AmountFen: 5000, PaidAt: time.Now()}
	deposit := LedgerEntry{Kind: MoneyDeposit, AmountFen: 5000, Method: MethodWeChatPay, TransactionID: "4200"}
	kept := LedgerEntry{Kind: MoneyKept, AmountFen: 3000, Method: MethodWeChatPay}
	givenBack := LedgerEntry{Kind: MoneyKept, AmountFen: -3000, Method: MethodWeChatPay}
	for _, tr := range Transitions {
		if tr.From == StatusNew || tr.Seat == SeatMoved {
			continue
		}
		for _, paid := range []bool{false, true} {
			c := Change{BookingID: 7, From: tr.From, To: tr.To, Event: tr.Event, Actor: tr.Actors[0]}
			if tr.Payment {
				c.Payment = payment
			}
			facts := ChangeFacts{SlotID: 3, Paid: paid, PaidFen: 3000}
			p, err := testPolicy.Plan(c, facts)
			if err != nil {
				t.Fatalf("%s %s -> %s: %v", tr.Event, tr.From, tr.To, err)
			}
			var want []LedgerEntry
			switch {
			case tr.Payment:
				want = []LedgerEntry{deposit}
			case paid && tr.Event == EventLateCancel, paid && tr.Event == EventNoShow:
				want = []LedgerEntry{kept}
			case paid && tr.Event == EventCheckIn && tr.From == StatusNoShow:
				want = []LedgerEntry{givenBack}
			}
			if !slices.Equal(p.Ledger, want) {
				t.Errorf("%s %s -> %s by %s, paid %v: ledger %+v, want %+v", tr.Event, tr.From, tr.To, c.Actor, paid, p.Ledger, want)
			}
			// The booking says its cancel was late, paid or not: the fact
			// the owner's report counts.
			if p.LateCancel != (tr.Event == EventLateCancel) {
				t.Errorf("%s %s -> %s by %s, paid %v: LateCancel %v", tr.Event, tr.From, tr.To, c.Actor, paid, p.LateCancel)
			}
		}
	}
	if got := RefundEntry(Refund{AmountFen: 5000, OutRefundNo: "RF000000000007"}, "5030"); got != (LedgerEntry{Kind: MoneyRefund, AmountFen: 5000,
		Method: MethodWeChatPay, OutRefundNo: "RF000000000007", RefundID: "5030"}) {
		t.Errorf("RefundEntry %+v", got)
	}
}

// TestPlanCheckout: only a completed booking is checked out, for 0-1000000 fen
// by a counter method; anything else is refused before anything is written.
func TestPlanCheckout(t *testing.T) {
	for _, c := range []struct {
		status Status
		fen    int64
		method MoneyMethod
		want   string // the error code, "" for a balance row
	}{
		{StatusCompleted, 12800, MethodAlipay, ""},
		{StatusCompleted, 0, MethodCash, ""},
		{StatusCompleted, MaxCheckoutFen, MethodCard, ""},
		{StatusCompleted, 1, MethodWeChat, ""},
		{StatusCompleted, -1, MethodCash, EBADREQUEST},
		{StatusCompleted, MaxCheckoutFen + 1, MethodCash, EBADREQUEST},
		{StatusCompleted, 100, MethodWeChatPay, EBADREQUEST},
		{StatusCompleted, 100, "", EBADREQUEST},
		{StatusCompleted, 100, "CASH", EBADREQUEST},
		{StatusConfirmed, 100, MethodCash, EINVALIDSTATE},
		{StatusPending, 100, MethodCash, EINVALIDSTATE},
		{StatusCancelled, 100, MethodCash, EINVALIDSTATE},
		{StatusExpired, 100, MethodCash, EINVALIDSTATE},
		{StatusNoShow, 100, MethodCash, EINVALIDSTATE},
		{StatusNoShow, -5, MethodCash, EBADREQUEST},
	} {
		name := fmt.Sprintf("%s %d %q", c.status, c.fen, c.method)
		e, err := PlanCheckout(9, c.status, Checkout{AmountFen: c.fen, Method: c.method})
		switch {
		case c.want == "" && (err != nil || e != LedgerEntry{Kind: MoneyBalance, AmountFen: c.fen, Method: c.method}):
			t.Errorf("%s: %+v, %v", name, e, err)
		case c.want != "" && ErrorCode(err) != c.want:
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
}

// TestBalanceDue: the console's suggestion is the price less the deposit paid
// online, never below 0.
func TestBalanceDue(t *testing.T) {
	for _, c := range []struct {
		price, amount int64
		tx            string
		want          int64
	}{
		{12800, 0, "", 12800},       // a walk-in
		{12800, 3000, "4200", 9800}, // a service with a deposit, paid
		{12800, 3000, "", 12800},    // its deposit never paid
		{5000, 5000, "4200", 0},     // a seat-mode slot: its price is the deposit
		{0, 0, "", 0},               // free
		{3000, 5000, "4200", 0},     // a deposit above the price
	} {
		b := &Booking{PriceFen: c.price, AmountFen: c.amount, TransactionID: c.tx}
		if got := b.BalanceDue(); got != c.want {
			t.Errorf("price %d, deposit %d paid %v: due %d, want %d", c.price, c.amount, c.tx != "", got, c.want)
		}
	}
}
