package mysql

import (
	"context"
	"database/sql"
	"time"

	"salon/shared/wechatbill"
)

// LedgerOnline returns the ledger's online rows (method wechatpay, kinds
// deposit and refund) written in [from, to), for matching with a bill.
func (db *DB) LedgerOnline(ctx context.Context, from, to time.Time) (_ []wechatbill.LedgerRow, err error) {
	defer wrap(&err, "LedgerOnline(%s)", span(from, to))
	rows, err := db.db.QueryContext(ctx, `SELECT kind, amount_fen, COALESCE(out_trade_no, ''), COALESCE(out_refund_no, ''), created_at
		FROM t_money
		WHERE method = 'wechatpay' AND kind IN ('deposit', 'refund') AND created_at >= ? AND created_at < ?
		ORDER BY created_at, money_id`, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wechatbill.LedgerRow
	for rows.Next() {
		var r wechatbill.LedgerRow
		if err := rows.Scan(&r.Kind, &r.AmountFen, &r.OutTradeNo, &r.OutRefundNo, &r.At); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SaveBillDay records an attempt at a bill date: its status, counts and
// differences replace what the last attempt found, and attempts counts it,
// all in one transaction. d.AttemptedAt is the time of the attempt (the
// database's clock, read by the caller).
func (db *DB) SaveBillDay(ctx context.Context, d wechatbill.DayResult) (err error) {
	defer wrap(&err, "SaveBillDay(%s)", d.Date)
	if len(d.Error) > 255 {
		d.Error = d.Error[:255]
	}
	return db.transact(ctx, nil, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t_bill_day (bill_date, status, bill_rows, matched, fees_fen, error, attempts, attempted_at)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?)
			ON DUPLICATE KEY UPDATE status = VALUES(status), bill_rows = VALUES(bill_rows), matched = VALUES(matched),
				fees_fen = VALUES(fees_fen), error = VALUES(error), attempts = attempts + 1, attempted_at = VALUES(attempted_at)`,
			d.Date, d.Status, d.BillRows, d.Matched, d.FeesFen, nullString(d.Error), d.AttemptedAt.UTC()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM t_bill_difference WHERE bill_date = ?`, d.Date); err != nil {
			return err
		}
		rows := make([][]any, len(d.Differences))
		for i, x := range d.Differences {
			rows[i] = []any{d.Date, i + 1, x.Kind, x.OutTradeNo, nullString(x.OutRefundNo), x.OursFen, x.TheirsFen}
		}
		return insertRows(ctx, tx, `INSERT INTO t_bill_difference (bill_date, seq, kind, out_trade_no, out_refund_no, ours_fen, theirs_fen) VALUES `, rows)
	})
}

// BillDay returns what is recorded of a bill date, or nil when it was never attempted.
func (db *DB) BillDay(ctx context.Context, date string) (_ *wechatbill.DayResult, err error) {
	defer wrap(&err, "BillDay(%s)", date)
	days, err := db.billDays(ctx, true, `WHERE bill_date = ?`, date)
	if err != nil || len(days) == 0 {
		return nil, err
	}
	return &days[0], nil
}

// BillDays returns what is recorded of the dates among dates that were
// attempted, oldest first, without their differences: the release run's read
// of the days it may run, every minute, which needs their status and last
// attempt only.
func (db *DB) BillDays(ctx context.Context, dates []string) (_ []wechatbill.DayResult, err error) {
	defer wrap(&err, "BillDays(%d days)", len(dates))
	if len(dates) == 0 {
		return nil, nil
	}
	return db.billDays(ctx, false, `WHERE bill_date IN (`+placeholders(len(dates))+`) ORDER BY bill_date`, stringArgs(dates)...)
}

// RecentBillDays returns the last n bill dates recorded, newest first.
func (db *DB) RecentBillDays(ctx context.Context, n int) (_ []wechatbill.DayResult, err error) {
	defer wrap(&err, "RecentBillDays()")
	return db.billDays(ctx, true, `ORDER BY bill_date DESC LIMIT ?`, n)
}

// billDays reads the bill days that tail selects and, withDifferences, then
// their differences in one statement.
func (db *DB) billDays(ctx context.Context, withDifferences bool, tail string, args ...any) ([]wechatbill.DayResult, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT DATE_FORMAT(bill_date, '%Y-%m-%d'), status, bill_rows, matched, fees_fen, COALESCE(error, ''), attempts, attempted_at
		FROM t_bill_day `+tail, args...)
	if err != nil {
		return nil, err
	}
	var days []wechatbill.DayResult
	for rows.Next() {
		var d wechatbill.DayResult
		if err := rows.Scan(&d.Date, &d.Status, &d.BillRows, &d.Matched, &d.FeesFen, &d.Error, &d.Attempts, &d.AttemptedAt); err != nil {
			rows.Close()
			return nil, err
		}
		days = append(days, d)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	if !withDifferences {
		return days, nil
	}
	dates := make([]string, len(days))
	for i, d := range days {
		dates[i] = d.Date
	}
	diffs, err := db.billDifferences(ctx, dates)
	if err != nil {
		return nil, err
	}
	for i := range days {
		days[i].Differences = diffs[days[i].Date]
	}
	return days, nil
}

// billDifferences reads the differences of dates, by date, in their order.
func (db *DB) billDifferences(ctx context.Context, dates []string) (map[string][]wechatbill.Difference, error) {
	out := map[string][]wechatbill.Difference{}
	if len(dates) == 0 {
		return out, nil
	}
	rows, err := db.db.QueryContext(ctx, `SELECT DATE_FORMAT(bill_date, '%Y-%m-%d'), kind, out_trade_no, COALESCE(out_refund_no, ''), ours_fen, theirs_fen
		FROM t_bill_difference WHERE bill_date IN (`+placeholders(len(dates))+`) ORDER BY bill_date, seq`, stringArgs(dates)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var date string
		var d wechatbill.Difference
		var ours, theirs sql.NullInt64
		if err := rows.Scan(&date, &d.Kind, &d.OutTradeNo, &d.OutRefundNo, &ours, &theirs); err != nil {
			return nil, err
		}
		if ours.Valid {
			d.OursFen = &ours.Int64
		}
		if theirs.Valid {
			d.TheirsFen = &theirs.Int64
		}
		out[date] = append(out[date], d)
	}
	return out, rows.Err()
}
