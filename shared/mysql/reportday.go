package mysql

import (
	"context"
	"database/sql"
	"time"

	"salon/shared/booking"
)

// The kept days of the owner's report (migration 0026): the sums of each shop
// day that has ended, read instead of its bookings and money while nothing
// that counts on it has changed since (package booking says when that is).

// keptReportDays reads the stamps of the kept days among days, by their start.
func keptReportDays(ctx context.Context, q querier, days []booking.ReportDaySpan) (map[time.Time]booking.ReportKept, error) {
	rows, err := q.QueryContext(ctx, `SELECT day_start, day_end, checked_at FROM t_report_day
		WHERE day_start >= ? AND day_start < ?`, days[0].Start.UTC(), days[len(days)-1].End.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kept := map[time.Time]booking.ReportKept{}
	for rows.Next() {
		var k booking.ReportKept
		if err := rows.Scan(&k.Start, &k.End, &k.CheckedAt); err != nil {
			return nil, err
		}
		k.Start, k.End, k.CheckedAt = k.Start.UTC(), k.End.UTC(), k.CheckedAt.UTC()
		kept[k.Start] = k
	}
	return kept, rows.Err()
}

// reportChanges reads the traces written since since of changes to the sums
// of days in [from, to): audit records of bookings whose slot starts there,
// moves that left a slot starting there, ledger rows of such bookings, and
// ledger rows written there. One line per instant, with the latest trace.
func reportChanges(ctx context.Context, q querier, since, from, to time.Time) ([]booking.ReportChange, error) {
	since, from, to = since.UTC(), from.UTC(), to.UTC()
	rows, err := q.QueryContext(ctx, `SELECT x.at, MAX(x.written) FROM (
			SELECT s.start_at AS at, a.created_at AS written FROM t_audit a
				JOIN t_booking b ON b.book_id = a.book_id JOIN t_slot s ON s.slot_id = b.slot_id
			WHERE a.created_at >= ? AND s.start_at >= ? AND s.start_at < ?
			UNION ALL
			SELECT s.start_at, a.created_at FROM t_audit a JOIN t_slot s ON s.slot_id = a.from_slot_id
			WHERE a.created_at >= ? AND s.start_at >= ? AND s.start_at < ?
			UNION ALL
			SELECT s.start_at, m.created_at FROM t_money m
				JOIN t_booking b ON b.book_id = m.book_id JOIN t_slot s ON s.slot_id = b.slot_id
			WHERE m.created_at >= ? AND s.start_at >= ? AND s.start_at < ?
			UNION ALL
			SELECT m.created_at, m.created_at FROM t_money m WHERE m.created_at >= ? AND m.created_at < ?
		) x GROUP BY x.at ORDER BY NULL`,
		since, from, to, since, from, to, since, from, to, since, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.ReportChange
	for rows.Next() {
		var c booking.ReportChange
		if err := rows.Scan(&c.At, &c.When); err != nil {
			return nil, err
		}
		c.At, c.When = c.At.UTC(), c.When.UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// readKeptFacts adds the kept sums of the days at the indexes use (in order)
// to f, each at the start of its day: the range from the first to the last of
// them, with the days between that are not used left out.
func readKeptFacts(ctx context.Context, q querier, days []booking.ReportDaySpan, use []int, f *booking.ReportFacts) error {
	if len(use) == 0 {
		return nil
	}
	want := make(map[time.Time]bool, len(use))
	for _, i := range use {
		want[days[i].Start.UTC()] = true
	}
	from, to := days[use[0]].Start.UTC(), days[use[len(use)-1]].Start.UTC()

	rows, err := q.QueryContext(ctx, `SELECT day_start, online_fen, shop_fen, refunded_fen, kept_fen FROM t_report_day
		WHERE day_start >= ? AND day_start <= ?`, from, to)
	if err != nil {
		return err
	}
	for rows.Next() {
		var m booking.ReportMoneySum
		if err := rows.Scan(&m.At, &m.OnlineFen, &m.ShopFen, &m.RefundedFen, &m.KeptFen); err != nil {
			rows.Close()
			return err
		}
		if m.At = m.At.UTC(); want[m.At] {
			f.Money = append(f.Money, m)
		}
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	rows, err = q.QueryContext(ctx, `SELECT day_start, status, late, n FROM t_report_day_booking
		WHERE day_start >= ? AND day_start <= ?`, from, to)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c booking.ReportBookingCount
		if err := rows.Scan(&c.At, &c.Status, &c.LateCancel, &c.N); err != nil {
			rows.Close()
			return err
		}
		if c.At = c.At.UTC(); want[c.At] {
			f.Bookings = append(f.Bookings, c)
		}
	}
	if err := closeRows(rows); err != nil {
		return err
	}

	rows, err = q.QueryContext(ctx, `SELECT w.day_start, w.technician_id, COALESCE(tc.name, ''), w.service_id, COALESCE(sv.name, ''),
			w.completed, w.minutes, w.takings_fen
		FROM t_report_day_work w
		LEFT JOIN t_technician tc ON tc.technician_id = w.technician_id
		LEFT JOIN t_service sv ON sv.service_id = w.service_id
		WHERE w.day_start >= ? AND w.day_start <= ?`, from, to)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c booking.ReportCompleted
		if err := rows.Scan(&c.At, &c.TechnicianID, &c.TechnicianName, &c.ServiceID, &c.ServiceName,
			&c.Completed, &c.Minutes, &c.TakingsFen); err != nil {
			rows.Close()
			return err
		}
		if c.At = c.At.UTC(); want[c.At] {
			f.Completed = append(f.Completed, c)
		}
	}
	return closeRows(rows)
}

// closeRows closes rows read to the end and reports the error that ended
// them, if any.
func closeRows(rows *sql.Rows) error {
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

// KeepReportDays keeps what report facts f of range r read: the sums of the
// days it read afresh that have ended (f.Plan.Keep), and, for the kept days
// whose check it renews (f.Plan.Renew), that they were current at f.ReadAt. The range's kept
// rows are locked first, in order; a day kept from a later read than f's is
// left as it is. Keeping is a cache's write: a report is right whether it
// succeeds or not.
func (db *DB) KeepReportDays(ctx context.Context, r booking.ReportRange, f booking.ReportFacts) (err error) {
	defer wrap(&err, "KeepReportDays(%s..%s)", r.From, r.To)
	if len(f.Plan.Keep) == 0 && len(f.Plan.Renew) == 0 {
		return nil
	}
	days := r.Spans()
	readAt := f.ReadAt.UTC()
	return db.transact(ctx, nil, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT day_start, checked_at FROM t_report_day
			WHERE day_start >= ? AND day_start < ? ORDER BY day_start FOR UPDATE`, days[0].Start.UTC(), days[len(days)-1].End.UTC())
		if err != nil {
			return err
		}
		later := map[time.Time]bool{}
		for rows.Next() {
			var start, checked time.Time
			if err := rows.Scan(&start, &checked); err != nil {
				rows.Close()
				return err
			}
			if checked.After(readAt) {
				later[start.UTC()] = true
			}
		}
		if err := closeRows(rows); err != nil {
			return err
		}
		var starts []any
		var dayRows, bookingRows, workRows [][]any
		byDay := booking.FactsByDay(days, f)
		for _, i := range f.Plan.Keep {
			d := days[i]
			if later[d.Start] {
				continue
			}
			df := booking.DayFacts(d, byDay[i])
			starts = append(starts, d.Start)
			m := df.Money[0]
			dayRows = append(dayRows, []any{d.Start, d.End, m.OnlineFen, m.ShopFen, m.RefundedFen, m.KeptFen, readAt})
			for _, c := range df.Bookings {
				bookingRows = append(bookingRows, []any{d.Start, c.Status, c.LateCancel, c.N})
			}
			for _, c := range df.Completed {
				workRows = append(workRows, []any{d.Start, c.TechnicianID, c.ServiceID, c.Completed, c.Minutes, c.TakingsFen})
			}
		}
		if len(starts) > 0 {
			in := placeholders(len(starts))
			for _, table := range []string{"t_report_day", "t_report_day_booking", "t_report_day_work"} {
				// The table's name is one of the three above, never input.
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE day_start IN (`+in+`)`, starts...); err != nil {
					return err
				}
			}
			for _, ins := range []struct {
				head string
				rows [][]any
			}{
				{`INSERT INTO t_report_day (day_start, day_end, online_fen, shop_fen, refunded_fen, kept_fen, checked_at) VALUES `, dayRows},
				{`INSERT INTO t_report_day_booking (day_start, status, late, n) VALUES `, bookingRows},
				{`INSERT INTO t_report_day_work (day_start, technician_id, service_id, completed, minutes, takings_fen) VALUES `, workRows},
			} {
				if err := insertRows(ctx, tx, ins.head, ins.rows); err != nil {
					return err
				}
			}
		}
		var checked []any
		for _, i := range f.Plan.Renew {
			checked = append(checked, days[i].Start)
		}
		if len(checked) == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE t_report_day SET checked_at = ? WHERE checked_at < ? AND day_start IN (`+placeholders(len(checked))+`)`,
			append([]any{readAt, readAt}, checked...)...)
		return err
	})
}

// insertRows inserts rows (each of the same width) with head, up to 500 rows
// a statement.
func insertRows(ctx context.Context, tx *sql.Tx, head string, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), 500)
		var args []any
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, head+repeatRows("("+placeholders(len(rows[0]))+")", n), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
