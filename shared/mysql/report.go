package mysql

import (
	"context"
	"database/sql"
	"time"

	"salon/shared/booking"
)

// The owner's reports read the ledger t_money and the bookings; they write
// nothing. Each statement is bounded by the range, never by the tables: the
// bookings through their slots' starts (idx_slot_start, then
// idx_booking_slot), the money by its time (idx_money_day), a booking's
// money and audit by its id (idx_money_booking, idx_audit_book). Sums come by
// the quarter hour counted from the range's start (booking.ReportBucket);
// package booking says which shop day each is. They are grouped without a
// sort (ORDER BY NULL): the caller puts the groups in order.

// reportSnapshot is one read-only snapshot: the figures of a report agree
// with each other even while bookings change.
var reportSnapshot = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}

// quarterOf is the bucket of the SQL time expression at, counted from the
// first parameter (the range's start).
func quarterOf(at string) string {
	return `TIMESTAMPDIFF(MINUTE, ?, ` + at + `) DIV 15`
}

// bookingTakings is what booking b brought in, by its ledger rows: deposits
// and shop payments less refunds (kept rows move no money). The kinds, status
// and event are package booking's, spelled here, never from input.
var bookingTakings = `(SELECT COALESCE(SUM(CASE m.kind WHEN '` + string(booking.MoneyRefund) + `' THEN -m.amount_fen WHEN '` + string(booking.MoneyKept) + `' THEN 0 ELSE m.amount_fen END), 0)
	FROM t_money m WHERE m.book_id = b.book_id)`

// lateCancel is whether booking b is a late cancel: cancelled, and its audit
// trail has the event late_cancel or its deposit was kept.
var lateCancel = `(b.status = ` + statusList([]booking.Status{booking.StatusCancelled}) + ` AND (EXISTS (SELECT 1 FROM t_audit a WHERE a.book_id = b.book_id AND a.event = '` + booking.EventLateCancel + `')
	OR EXISTS (SELECT 1 FROM t_money k WHERE k.book_id = b.book_id AND k.kind = '` + string(booking.MoneyKept) + `')))`

// ReportFacts reads the sums of report range r in one snapshot: the
// bookings by the quarter hour their slot starts, status and late cancel; the
// money by the quarter hour it moved; the completed bookings by the quarter
// hour, technician and service with their minutes and takings. The days that
// may be (booking.PlanReport) come from the sums kept of them instead, at the
// start of their day; afterwards the days read afresh that have ended are kept
// (KeepReportDays, with the plan and the snapshot's time the facts carry).
func (db *DB) ReportFacts(ctx context.Context, r booking.ReportRange) (_ booking.ReportFacts, err error) {
	defer wrap(&err, "ReportFacts(%s..%s)", r.From, r.To)
	days := r.Spans()
	var f booking.ReportFacts
	var plan booking.ReportPlan
	var now time.Time
	err = db.transact(ctx, reportSnapshot, func(tx *sql.Tx) error {
		f, plan = booking.ReportFacts{}, booking.ReportPlan{}
		if err := tx.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6)`).Scan(&now); err != nil {
			return err
		}
		kept, err := keptReportDays(ctx, tx, days)
		if err != nil {
			return err
		}
		changesKept := time.Duration(db.Policy.AuditRetentionDays) * 24 * time.Hour
		var changes []booking.ReportChange
		if since, ok := booking.ReportChangesSince(days, kept, now, changesKept); ok {
			if changes, err = reportChanges(ctx, tx, since, days[0].Start, days[len(days)-1].End); err != nil {
				return err
			}
		}
		plan = booking.PlanReport(days, kept, changes, now, changesKept)
		if err := readKeptFacts(ctx, tx, days, plan.Kept, &f); err != nil {
			return err
		}
		for _, run := range plan.Runs {
			start, end := days[run[0]].Start, days[run[1]-1].End
			b, err := reportBookings(ctx, tx, start, end)
			if err != nil {
				return err
			}
			m, err := reportMoney(ctx, tx, start, end)
			if err != nil {
				return err
			}
			c, err := reportCompleted(ctx, tx, start, end)
			if err != nil {
				return err
			}
			f.Bookings, f.Money, f.Completed = append(f.Bookings, b...), append(f.Money, m...), append(f.Completed, c...)
		}
		return nil
	})
	if err != nil {
		return booking.ReportFacts{}, err
	}
	f.Plan, f.ReadAt = plan, now
	return f, nil
}

// ReportMoney is the money that moved in [start, end), by the quarter hour
// (the day page's takings so far).
func (db *DB) ReportMoney(ctx context.Context, start, end time.Time) (_ []booking.ReportMoneySum, err error) {
	defer wrap(&err, "ReportMoney(%s)", span(start, end))
	return reportMoney(ctx, db.db, start, end)
}

func reportBookings(ctx context.Context, q querier, start, end time.Time) ([]booking.ReportBookingCount, error) {
	start, end = start.UTC(), end.UTC()
	rows, err := q.QueryContext(ctx, `SELECT `+quarterOf("s.start_at")+` AS q, b.status, `+lateCancel+` AS late, COUNT(*)
		FROM t_slot s JOIN t_booking b ON b.slot_id = s.slot_id
		WHERE s.start_at >= ? AND s.start_at < ?
		GROUP BY q, b.status, late ORDER BY NULL`, start, start, end)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportBookingCount
	for rows.Next() {
		var c booking.ReportBookingCount
		var q int64
		if err := rows.Scan(&q, &c.Status, &c.LateCancel, &c.N); err != nil {
			return nil, err
		}
		c.At = start.Add(time.Duration(q) * booking.ReportBucket)
		out = append(out, c)
	}
	return out, rows.Err()
}

func reportMoney(ctx context.Context, q querier, start, end time.Time) ([]booking.ReportMoneySum, error) {
	start, end = start.UTC(), end.UTC()
	rows, err := q.QueryContext(ctx, `SELECT `+quarterOf("created_at")+` AS q,
		SUM(IF(kind = 'deposit', amount_fen, 0)), SUM(IF(kind = 'balance', amount_fen, 0)),
		SUM(IF(kind = 'refund', amount_fen, 0)), SUM(IF(kind = 'kept', amount_fen, 0))
		FROM t_money WHERE created_at >= ? AND created_at < ?
		GROUP BY q ORDER BY NULL`, start, start, end)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportMoneySum
	for rows.Next() {
		var m booking.ReportMoneySum
		var q int64
		if err := rows.Scan(&q, &m.OnlineFen, &m.ShopFen, &m.RefundedFen, &m.KeptFen); err != nil {
			return nil, err
		}
		m.At = start.Add(time.Duration(q) * booking.ReportBucket)
		out = append(out, m)
	}
	return out, rows.Err()
}

func reportCompleted(ctx context.Context, q querier, start, end time.Time) ([]booking.ReportCompleted, error) {
	start, end = start.UTC(), end.UTC()
	rows, err := q.QueryContext(ctx, `SELECT x.q, COALESCE(x.technician_id, 0), COALESCE(tc.name, ''), COALESCE(x.service_id, 0), COALESCE(sv.name, ''),
			COUNT(*), COALESCE(SUM(x.minutes), 0), COALESCE(SUM(x.takings), 0)
		FROM (SELECT `+quarterOf("s.start_at")+` AS q, b.technician_id, b.service_id, COALESCE(b.minutes, TIMESTAMPDIFF(MINUTE, s.start_at, s.end_at)) AS minutes,
				`+bookingTakings+` AS takings
			FROM t_slot s JOIN t_booking b ON b.slot_id = s.slot_id
			WHERE s.start_at >= ? AND s.start_at < ? AND b.status = ?) x
		LEFT JOIN t_technician tc ON tc.technician_id = x.technician_id
		LEFT JOIN t_service sv ON sv.service_id = x.service_id
		GROUP BY x.q, x.technician_id, tc.name, x.service_id, sv.name ORDER BY NULL`, start, start, end, booking.StatusCompleted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportCompleted
	for rows.Next() {
		var c booking.ReportCompleted
		var q int64
		if err := rows.Scan(&q, &c.TechnicianID, &c.TechnicianName, &c.ServiceID, &c.ServiceName,
			&c.Completed, &c.Minutes, &c.TakingsFen); err != nil {
			return nil, err
		}
		c.At = start.Add(time.Duration(q) * booking.ReportBucket)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ReportLines returns the bookings whose slot starts in [start, end), by
// start then id, each with the money of its ledger rows (the CSV export).
func (db *DB) ReportLines(ctx context.Context, start, end time.Time) (_ []booking.ReportLine, err error) {
	defer wrap(&err, "ReportLines(%s)", span(start, end))
	var lines []booking.ReportLine
	err = db.transact(ctx, reportSnapshot, func(tx *sql.Tx) error {
		lines = nil
		rows, err := tx.QueryContext(ctx, `SELECT `+bookingColumns+bookingFrom+
			`WHERE s.start_at >= ? AND s.start_at < ? ORDER BY s.start_at, b.book_id`, start.UTC(), end.UTC())
		if err != nil {
			return err
		}
		byID := map[int64]int{}
		for rows.Next() {
			b, err := scanBooking(rows)
			if err != nil {
				rows.Close()
				return err
			}
			byID[b.ID] = len(lines)
			lines = append(lines, booking.ReportLine{B: b})
		}
		if err := closeRows(rows); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT m.book_id, m.kind, MAX(m.method), SUM(m.amount_fen)
			FROM t_slot s JOIN t_booking b ON b.slot_id = s.slot_id JOIN t_money m ON m.book_id = b.book_id
			WHERE s.start_at >= ? AND s.start_at < ?
			GROUP BY m.book_id, m.kind ORDER BY NULL`, start.UTC(), end.UTC())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, fen int64
			var kind, method string
			if err := rows.Scan(&id, &kind, &method, &fen); err != nil {
				return err
			}
			i, ok := byID[id]
			if !ok {
				continue
			}
			l := &lines[i]
			switch kind {
			case "deposit":
				l.DepositFen = fen
			case "balance":
				l.BalanceFen, l.BalanceMethod = fen, method
			case "refund":
				l.RefundedFen = fen
			case "kept":
				l.KeptFen = fen
			}
		}
		return rows.Err()
	})
	return lines, err
}
