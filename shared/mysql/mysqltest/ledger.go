package mysqltest

import (
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// LedgerRow is one row of the money ledger t_money, as
// migrations/0023_money.sql describes it: Kind deposit (paid online, method
// wechatpay), balance (paid in the shop: wechat, alipay, cash or card),
// refund (wechatpay) or kept (a deposit the salon keeps; a negative amount
// takes one back), at At by the database's time.
type LedgerRow struct {
	BookingID int64
	Kind      string
	AmountFen int64
	Method    string // "": wechatpay, except a balance's cash
	At        time.Time
}

// AddLedgerRows writes ledger rows with plain INSERTs, as the transactions
// that own them write them: a test's fixture of the table for the reads
// that sum it. WeChat's numbers are the booking's order number and made-up
// refund numbers; the actor is who writes such a row. A kept row of a
// cancelled booking marks its cancel late, as the late cancel that keeps a
// deposit does (t_booking.late_cancel).
func AddLedgerRows(tb testing.TB, db *mysql.DB, rows ...LedgerRow) {
	tb.Helper()
	for _, r := range rows {
		method, actor := r.Method, "wechatpay"
		switch r.Kind {
		case "balance":
			actor = "salon"
			if method == "" {
				method = "cash"
			}
		case "kept":
			actor = "system"
		}
		if method == "" {
			method = "wechatpay"
		}
		var refundNo any
		if r.Kind == "refund" {
			refundNo = "R" + time.Now().Format("150405.000000")
		}
		if _, err := db.SQL().Exec(`INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, out_refund_no, actor, created_at)
			SELECT book_id, ?, ?, ?, IF(? = 'balance', NULL, out_trade_no), ?, ?, ? FROM t_booking WHERE book_id = ?`,
			r.Kind, r.AmountFen, method, r.Kind, refundNo, actor, r.At.UTC(), r.BookingID); err != nil {
			tb.Fatalf("ledger row %+v: %v", r, err)
		}
		if r.Kind == "kept" {
			if _, err := db.SQL().Exec(`UPDATE t_booking SET late_cancel = 1 WHERE book_id = ? AND status = ?`,
				r.BookingID, booking.StatusCancelled); err != nil {
				tb.Fatalf("ledger row %+v: %v", r, err)
			}
		}
	}
}
