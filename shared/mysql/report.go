package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"salon/shared/booking"
)

// The owner's reports read the facts of their range, and write nothing: the
// bookings that start in it (t_booking.starts_at, status, late_cancel,
// technician, service, minutes: idx_booking_start covers them), the ledger
// rows written in it (idx_money_day: time, kind, amount), and the ledger rows
// of its completed bookings (idx_money_booking: booking, kind, amount). Four
// grouped statements (the bookings and the money by shop day, the completed
// bookings and their money by technician and service) in one read-only
// snapshot, each bounded by the range (at most 366 days) and never by the
// history before it; groups come unsorted (ORDER BY NULL), the caller puts
// them in order.

// reportSnapshot is one read-only snapshot: the figures of a report agree
// with each other even while bookings change.
var reportSnapshot = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}

// shopDaySQL is the SQL of the shop day of the UTC time column col as its
// index in range r (0 is r.From): the days between r.From and the date of col
// plus the shop zone's offset at that instant (booking.ReportRange.Offsets:
// one offset, or a CASE over the daylight-saving changes of the range), with
// its arguments. The days are TO_DAYS' (the day number of a date, in the
// proleptic Gregorian calendar, as Go's): a difference of two, the second a
// constant, costs less a row than DATEDIFF. col is the store's own column
// name, never input.
func shopDaySQL(col string, r booking.ReportRange) (string, []any) {
	offs := r.Offsets()
	var off strings.Builder
	var args []any
	if len(offs) == 1 {
		off.WriteString("?")
		args = append(args, offs[0].Seconds)
	} else {
		off.WriteString("CASE")
		for i, o := range offs[:len(offs)-1] {
			off.WriteString(" WHEN " + col + " < ? THEN ?")
			args = append(args, offs[i+1].From.UTC(), o.Seconds)
		}
		off.WriteString(" ELSE ? END")
		args = append(args, offs[len(offs)-1].Seconds)
	}
	return "TO_DAYS(" + col + " + INTERVAL " + off.String() + " SECOND) - TO_DAYS(?)", append(args, r.From)
}

// dayOf is the range's day of a shop-day index from shopDaySQL, as the
// instant booking.BuildReport places (its first); ok is false outside the
// range.
func dayOf(r booking.ReportRange, i int) (time.Time, bool) {
	if i < 0 || i >= len(r.Days) {
		return time.Time{}, false
	}
	return r.DayStart(i), true
}

// ReportFacts reads the sums of report range r from its facts in one
// snapshot: the bookings that start in it by shop day, status and late
// cancel; the money that moved in it by shop day and kind; its completed
// bookings by technician and service with their minutes and takings.
func (db *DB) ReportFacts(ctx context.Context, r booking.ReportRange) (_ booking.ReportFacts, err error) {
	defer wrap(&err, "ReportFacts(%s..%s)", r.From, r.To)
	var f booking.ReportFacts
	err = db.transact(ctx, reportSnapshot, func(tx *sql.Tx) (err error) {
		f = booking.ReportFacts{}
		if f.Bookings, err = reportBookings(ctx, tx, r); err != nil {
			return err
		}
		if f.Money, err = reportMoney(ctx, tx, r); err != nil {
			return err
		}
		f.Completed, err = reportCompleted(ctx, tx, r)
		return err
	})
	if err != nil {
		return booking.ReportFacts{}, err
	}
	return f, nil
}

// ReportMoney is the money that moved in range r, by shop day (the day page's
// takings so far).
func (db *DB) ReportMoney(ctx context.Context, r booking.ReportRange) (_ []booking.ReportMoneySum, err error) {
	defer wrap(&err, "ReportMoney(%s..%s)", r.From, r.To)
	return reportMoney(ctx, db.db, r)
}

// reportBookings counts the bookings that start in r by shop day, status and
// late cancel.
func reportBookings(ctx context.Context, q querier, r booking.ReportRange) ([]booking.ReportBookingCount, error) {
	day, args := shopDaySQL("starts_at", r)
	rows, err := q.QueryContext(ctx, `SELECT `+day+` AS d, status, late_cancel, COUNT(*) FROM t_booking
		WHERE starts_at >= ? AND starts_at < ?
		GROUP BY d, status, late_cancel ORDER BY NULL`, append(args, r.Start.UTC(), r.End.UTC())...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportBookingCount
	for rows.Next() {
		var c booking.ReportBookingCount
		var d int
		if err := rows.Scan(&d, &c.Status, &c.LateCancel, &c.N); err != nil {
			return nil, err
		}
		var ok bool
		if c.At, ok = dayOf(r, d); ok {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// reportMoney sums the ledger rows written in r by shop day and kind. The
// kinds are package booking's, spelled here, never from input.
func reportMoney(ctx context.Context, q querier, r booking.ReportRange) ([]booking.ReportMoneySum, error) {
	day, args := shopDaySQL("created_at", r)
	sum := func(k booking.MoneyKind) string { return `SUM(IF(kind = '` + string(k) + `', amount_fen, 0))` }
	rows, err := q.QueryContext(ctx, `SELECT `+day+` AS d, `+sum(booking.MoneyDeposit)+`, `+sum(booking.MoneyBalance)+`,
		`+sum(booking.MoneyRefund)+`, `+sum(booking.MoneyKept)+`
		FROM t_money WHERE created_at >= ? AND created_at < ?
		GROUP BY d ORDER BY NULL`, append(args, r.Start.UTC(), r.End.UTC())...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportMoneySum
	for rows.Next() {
		var m booking.ReportMoneySum
		var d int
		if err := rows.Scan(&d, &m.OnlineFen, &m.ShopFen, &m.RefundedFen, &m.KeptFen); err != nil {
			return nil, err
		}
		var ok bool
		if m.At, ok = dayOf(r, d); ok {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// completedWork is the completed bookings b of a technician's services that
// start in the range (a seat-mode booking has neither and is in no list, so
// it is not read).
const completedWork = ` WHERE b.starts_at >= ? AND b.starts_at < ? AND b.status = ?
	AND (b.technician_id IS NOT NULL OR b.service_id IS NOT NULL)`

// reportCompleted reads the completed bookings of r by technician and service:
// how many, their minutes, and (a second statement, over their ledger rows)
// their takings: deposits and shop payments less refunds, whenever that money
// moved (a kept row moves no money).
func reportCompleted(ctx context.Context, q querier, r booking.ReportRange) ([]booking.ReportCompleted, error) {
	type key struct{ tech, service int64 }
	args := []any{r.Start.UTC(), r.End.UTC(), booking.StatusCompleted}
	rows, err := q.QueryContext(ctx, `SELECT x.tech, COALESCE(tc.name, ''), x.service, COALESCE(sv.name, ''), x.n, x.minutes
		FROM (SELECT COALESCE(b.technician_id, 0) AS tech, COALESCE(b.service_id, 0) AS service, COUNT(*) AS n, COALESCE(SUM(b.minutes), 0) AS minutes
			FROM t_booking b`+completedWork+`
			GROUP BY b.technician_id, b.service_id ORDER BY NULL) x
		LEFT JOIN t_technician tc ON tc.technician_id = x.tech
		LEFT JOIN t_service sv ON sv.service_id = x.service`, args...)
	if err != nil {
		return nil, err
	}
	var out []booking.ReportCompleted
	index := map[key]int{}
	for rows.Next() {
		var c booking.ReportCompleted
		if err := rows.Scan(&c.TechnicianID, &c.TechnicianName, &c.ServiceID, &c.ServiceName, &c.Completed, &c.Minutes); err != nil {
			rows.Close()
			return nil, err
		}
		index[key{c.TechnicianID, c.ServiceID}] = len(out)
		out = append(out, c)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	rows, err = q.QueryContext(ctx, `SELECT COALESCE(b.technician_id, 0), COALESCE(b.service_id, 0),
			SUM(IF(m.kind = '`+string(booking.MoneyRefund)+`', -m.amount_fen, m.amount_fen))
		FROM t_booking b JOIN t_money m ON m.book_id = b.book_id AND m.kind <> '`+string(booking.MoneyKept)+`'`+completedWork+`
		GROUP BY b.technician_id, b.service_id ORDER BY NULL`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var takings int64
		if err := rows.Scan(&k.tech, &k.service, &takings); err != nil {
			return nil, err
		}
		if i, ok := index[k]; ok {
			out[i].TakingsFen = takings
		}
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
