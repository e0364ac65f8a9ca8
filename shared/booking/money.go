package booking

import (
	"slices"
	"time"
)

// The money ledger (t_money): every movement of money, one row each, written in
// the transaction of the change it belongs to and never changed afterwards.
// Which rows a change writes is decided here; the store only writes them.

// MoneyKind is what a ledger row records.
type MoneyKind string

const (
	MoneyDeposit MoneyKind = "deposit" // a payment WeChat Pay confirmed
	MoneyBalance MoneyKind = "balance" // what the customer paid in the shop at checkout
	MoneyRefund  MoneyKind = "refund"  // a refund WeChat Pay says succeeded
	// MoneyKept is the moment a deposit became the salon's (a late cancel's
	// forfeit, a no-show); a no-show checked in late writes it negated, so the
	// sum of a booking's kept rows is what is kept now.
	MoneyKept MoneyKind = "kept"
)

// MoneyMethod is how the money moved: online through WeChat Pay, or at the
// counter.
type MoneyMethod string

const (
	MethodWeChatPay MoneyMethod = "wechatpay" // the deposit and its refund, online
	MethodWeChat    MoneyMethod = "wechat"    // at the counter: the shop's WeChat code
	MethodAlipay    MoneyMethod = "alipay"
	MethodCash      MoneyMethod = "cash"
	MethodCard      MoneyMethod = "card"
)

// CounterMethods are the ways a customer pays at checkout, in the order the
// console offers them.
var CounterMethods = []MoneyMethod{MethodWeChat, MethodAlipay, MethodCash, MethodCard}

// MaxCheckoutFen bounds what one checkout records (10000 yuan), as the
// ledger's check constraint does.
const MaxCheckoutFen = 1000000

// Money is one row of the ledger: what moved, how, for which booking, with
// WeChat's numbers where there are any, who and when (the database's clock).
type Money struct {
	ID            int64
	BookingID     int64
	Kind          MoneyKind
	AmountFen     int64
	Method        MoneyMethod
	OutTradeNo    string
	TransactionID string
	OutRefundNo   string
	RefundID      string
	Actor         string
	CreatedAt     time.Time
}

// LedgerEntry is a row a change writes into the ledger, as package booking
// decides it; the store adds the booking's order number and the time.
type LedgerEntry struct {
	Kind          MoneyKind
	AmountFen     int64
	Method        MoneyMethod
	TransactionID string
	OutRefundNo   string
	RefundID      string
}

// KeepRule is what a transition does to a paid booking's deposit in the
// ledger besides refunding it.
type KeepRule int

const (
	KeepNothing   KeepRule = iota
	KeepDeposit            // the deposit becomes the salon's: a kept row of its amount
	KeepGivenBack          // a kept deposit is no longer kept (5 -> 2): the kept row negated
)

// DepositEntry is the ledger row of a payment WeChat Pay confirmed.
func DepositEntry(p Payment) LedgerEntry {
	return LedgerEntry{Kind: MoneyDeposit, AmountFen: p.AmountFen, Method: MethodWeChatPay, TransactionID: p.TransactionID}
}

// RefundEntry is the ledger row of a refund WeChat Pay says succeeded.
func RefundEntry(r Refund, refundID string) LedgerEntry {
	return LedgerEntry{Kind: MoneyRefund, AmountFen: r.AmountFen, Method: MethodWeChatPay, OutRefundNo: r.OutRefundNo, RefundID: refundID}
}

// ledgerOf is the rows a change by transition t of a booking with facts
// writes: the deposit of a payment it records, and the deposit kept (or no
// longer kept) by a paid booking's late cancel, no-show and late check-in.
func ledgerOf(t *Transition, c Change, facts ChangeFacts) []LedgerEntry {
	var out []LedgerEntry
	if t.Payment && c.Payment != nil {
		out = append(out, DepositEntry(*c.Payment))
	}
	if !facts.Paid {
		return out
	}
	switch t.Keep {
	case KeepDeposit:
		out = append(out, LedgerEntry{Kind: MoneyKept, AmountFen: facts.PaidFen, Method: MethodWeChatPay})
	case KeepGivenBack:
		out = append(out, LedgerEntry{Kind: MoneyKept, AmountFen: -facts.PaidFen, Method: MethodWeChatPay})
	}
	return out
}

// Checkout is what a customer paid in the shop for a completed booking.
type Checkout struct {
	AmountFen int64       `json:"amountFen"`
	Method    MoneyMethod `json:"method"`
}

// Validate checks the checkout's shape: an amount in 0-MaxCheckoutFen and a
// counter method.
func (c Checkout) Validate() error {
	if c.AmountFen < 0 || c.AmountFen > MaxCheckoutFen {
		return Errorf(EBADREQUEST, "amountFen %d outside 0-%d", c.AmountFen, MaxCheckoutFen)
	}
	if !slices.Contains(CounterMethods, c.Method) {
		return Errorf(EBADREQUEST, "method %q: want wechat, alipay, cash or card", c.Method)
	}
	return nil
}

// PlanCheckout is the ledger row of a checkout of a booking in status: only a
// completed booking is checked out (once: the store's unique key refuses a
// second balance row, also INVALID_STATE).
func PlanCheckout(bookingID int64, status Status, c Checkout) (LedgerEntry, error) {
	if err := c.Validate(); err != nil {
		return LedgerEntry{}, err
	}
	if status != StatusCompleted {
		return LedgerEntry{}, Errorf(EINVALIDSTATE, "booking %d is %s: only a completed booking is checked out", bookingID, status)
	}
	return LedgerEntry{Kind: MoneyBalance, AmountFen: c.AmountFen, Method: c.Method}, nil
}

// BalanceDue is what the console suggests a booking's checkout takes: its
// full price less the deposit paid online (a walk-in's deposit is 0), never
// below 0.
func (b *Booking) BalanceDue() int64 {
	due := b.PriceFen
	if b.Paid() {
		due -= b.AmountFen
	}
	return max(due, 0)
}

// Sums is a booking's ledger added up.
type Sums struct {
	DepositFen, BalanceFen, RefundFen, KeptFen int64
}

// SumLedger adds a booking's rows up by kind.
func SumLedger(rows []Money) Sums {
	var s Sums
	for _, m := range rows {
		switch m.Kind {
		case MoneyDeposit:
			s.DepositFen += m.AmountFen
		case MoneyBalance:
			s.BalanceFen += m.AmountFen
		case MoneyRefund:
			s.RefundFen += m.AmountFen
		case MoneyKept:
			s.KeptFen += m.AmountFen
		}
	}
	return s
}
