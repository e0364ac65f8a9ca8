package wechatbill

import (
	"sort"
	"time"
)

// The kinds of difference between a bill and the ledger.
const (
	MissingHere   = "missing_here"    // WeChat has the line, the ledger has no row
	MissingInBill = "missing_in_bill" // the ledger has the row, the bill no line
	AmountDiffers = "amount"          // both, with different amounts
)

// Ledger kinds this package matches (t_money.kind of online rows).
const (
	LedgerDeposit = "deposit"
	LedgerRefund  = "refund"
)

// EdgeMargin is how far the ledger's time of a row may lag WeChat's time of
// the same trade: the ledger writes a payment when the notification (or the
// release run's query) arrives, a moment after WeChat took it. See Window.
const EdgeMargin = 10 * time.Minute

// LedgerRow is one online row of the money ledger (method wechatpay): a
// deposit by its out_trade_no, a refund by its out_refund_no.
type LedgerRow struct {
	Kind        string // LedgerDeposit or LedgerRefund
	OutTradeNo  string
	OutRefundNo string
	AmountFen   int64
	At          time.Time // created_at, the database's clock
}

// number is what a line or a row is matched by.
func (r LedgerRow) number() key {
	if r.Kind == LedgerRefund {
		return key{refund: true, no: r.OutRefundNo}
	}
	return key{no: r.OutTradeNo}
}

func (l Line) number() key {
	if l.IsRefund() {
		return key{refund: true, no: l.OutRefundNo}
	}
	return key{no: l.OutTradeNo}
}

type key struct {
	refund bool
	no     string
}

// Difference is one line or row that does not pair up. The side that is
// absent is nil.
type Difference struct {
	OutTradeNo  string
	OutRefundNo string
	Kind        string
	OursFen     *int64
	TheirsFen   *int64
}

// Result is a bill matched with the ledger.
type Result struct {
	BillRows    int
	Matched     int   // lines paired with a ledger row of the same amount
	FeesFen     int64 // the bill's fees
	Differences []Difference
}

// Window is the stretch of the ledger a day's bill is matched against, and
// how the day's edges are decided. The bill of day D lists what WeChat took
// in D (its time); the ledger writes the same trade a moment later (up to
// EdgeMargin), so a payment WeChat took at 23:59:59 may sit in the ledger at
// 00:00:01 of D+1. Therefore:
//
//   - a bill line of D is paired by number with any ledger row written from
//     Start-EdgeMargin to End+EdgeMargin (the rows Rows must hold);
//   - a ledger row written in [Start+EdgeMargin, End) with no line is
//     missing_in_bill;
//   - a row written in [End, End+EdgeMargin) with no line belongs to D+1's bill
//     and is judged there;
//   - a row written in [Start, Start+EdgeMargin) with no line may belong to
//     D-1's bill: it is missing_in_bill only when D-1's bill (Earlier) has no
//     line for it either. Match reports whether it needs Earlier.
type Window struct {
	Start, End time.Time // the shop's day, [Start, End)
}

// Query is the span of the ledger to read for the day: [Start-EdgeMargin, End+EdgeMargin).
func (w Window) Query() (from, to time.Time) {
	return w.Start.Add(-EdgeMargin), w.End.Add(EdgeMargin)
}

// Match pairs the day's bill lines with the ledger's rows (read over
// w.Query()). A row pairs with at most one line (the first, in the bill's
// order); a further line for the same out_trade_no (payment) or out_refund_no
// (refund) is MissingHere. earlier is the previous day's bill lines, or nil when not
// fetched; needEarlier reports rows at the head of the day that only it can
// settle (the caller fetches it and matches again).
func Match(lines []Line, rows []LedgerRow, w Window, earlier []Line) (res Result, needEarlier bool) {
	res.BillRows = len(lines)
	byNumber := make(map[key]int, len(rows))
	for i, r := range rows {
		byNumber[r.number()] = i
	}
	paired := make([]bool, len(rows))
	for _, l := range lines {
		res.FeesFen += l.FeeFen
		theirs := l.SettlementFen
		if l.IsRefund() {
			theirs = l.RefundFen
		}
		// A row pairs with at most one line, the first in the bill: a
		// payment or refund the bill lists again is a line without a row.
		i, ok := byNumber[l.number()]
		if !ok || paired[i] {
			res.Differences = append(res.Differences, difference(l.OutTradeNo, l.OutRefundNo, l.IsRefund(), MissingHere, nil, &theirs))
			continue
		}
		paired[i] = true
		ours := rows[i].AmountFen
		if ours != theirs {
			res.Differences = append(res.Differences, difference(l.OutTradeNo, l.OutRefundNo, l.IsRefund(), AmountDiffers, &ours, &theirs))
			continue
		}
		res.Matched++
	}
	inEarlier := make(map[key]bool, len(earlier))
	for _, l := range earlier {
		inEarlier[l.number()] = true
	}
	headEnd := w.Start.Add(EdgeMargin)
	for i, r := range rows {
		if paired[i] || r.At.Before(w.Start) || !r.At.Before(w.End) {
			continue
		}
		if r.At.Before(headEnd) {
			if earlier == nil {
				needEarlier = true
				continue
			}
			if inEarlier[r.number()] {
				continue
			}
		}
		ours := r.AmountFen
		res.Differences = append(res.Differences, difference(r.OutTradeNo, r.OutRefundNo, r.Kind == LedgerRefund, MissingInBill, &ours, nil))
	}
	sort.SliceStable(res.Differences, func(i, j int) bool {
		a, b := res.Differences[i], res.Differences[j]
		if a.OutTradeNo != b.OutTradeNo {
			return a.OutTradeNo < b.OutTradeNo
		}
		return a.OutRefundNo < b.OutRefundNo
	})
	return res, needEarlier
}

func difference(outTradeNo, outRefundNo string, refund bool, kind string, ours, theirs *int64) Difference {
	if !refund {
		outRefundNo = ""
	}
	return Difference{OutTradeNo: outTradeNo, OutRefundNo: outRefundNo, Kind: kind, OursFen: ours, TheirsFen: theirs}
}

// Day is the window of a bill's date (yyyy-mm-dd): WeChat cuts its bills at
// midnight of its own time zone (UTC+8), whatever the shop's.
func Day(date string) (Window, error) {
	start, err := time.ParseInLocation(time.DateOnly, date, billZone)
	if err != nil {
		return Window{}, err
	}
	return Window{Start: start, End: start.AddDate(0, 0, 1)}, nil
}

// DateOf is the bill date t falls on.
func DateOf(t time.Time) string { return t.In(billZone).Format(time.DateOnly) }
