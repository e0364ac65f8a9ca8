package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"salon/shared/booking"
)

// The reads and small writes of the salon console: the audit trail by day, the
// health page's counts, the release run's own record and console sign-outs.

// releaseRunKeep is how long release runs stay recorded; the console shows the last.
const releaseRunKeep = "2 DAY"

// RecordReleaseRun records a finished (or failed) release run and prunes the
// records older than two days, so the table stays a few thousand rows.
func (db *DB) RecordReleaseRun(ctx context.Context, r booking.ReleaseRun) (err error) {
	defer wrap(&err, "RecordReleaseRun()")
	if len(r.Error) > 255 {
		r.Error = r.Error[:255]
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO t_release_run (started_at, finished_at, summary, error) VALUES (?, ?, ?, ?)`,
		r.StartedAt.UTC(), r.FinishedAt.UTC(), r.Summary, r.Error); err != nil {
		return err
	}
	_, err = db.db.ExecContext(ctx, `DELETE FROM t_release_run WHERE finished_at < UTC_TIMESTAMP(6) - INTERVAL `+releaseRunKeep)
	return err
}

// LastReleaseRun returns the release run that finished last, or nil when none
// has been recorded.
func (db *DB) LastReleaseRun(ctx context.Context) (_ *booking.ReleaseRun, err error) {
	defer wrap(&err, "LastReleaseRun()")
	var r booking.ReleaseRun
	err = db.db.QueryRowContext(ctx, `SELECT started_at, finished_at, summary, error FROM t_release_run
		ORDER BY finished_at DESC, run_id DESC LIMIT 1`).Scan(&r.StartedAt, &r.FinishedAt, &r.Summary, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// ListAudit returns the audit records written in [from, to), newest first, at
// most limit; event "" means every event.
func (db *DB) ListAudit(ctx context.Context, from, to time.Time, event string, limit int) (_ []booking.AuditRecord, err error) {
	defer wrap(&err, "ListAudit(%s)", span(from, to))
	if event == "" {
		return db.listAudit(ctx, `WHERE created_at >= ? AND created_at < ? ORDER BY created_at DESC, audit_id DESC LIMIT ?`,
			from.UTC(), to.UTC(), limit)
	}
	return db.listAudit(ctx, `WHERE created_at >= ? AND created_at < ? AND event = ? ORDER BY created_at DESC, audit_id DESC LIMIT ?`,
		from.UTC(), to.UTC(), event, limit)
}

// AuditEvents returns the distinct events recorded in [from, to), by name: the
// choices of the audit page's filter, so an event the product learns later
// appears there without a list to keep up to date.
func (db *DB) AuditEvents(ctx context.Context, from, to time.Time) (_ []string, err error) {
	defer wrap(&err, "AuditEvents(%s)", span(from, to))
	rows, err := db.db.QueryContext(ctx, `SELECT DISTINCT event FROM t_audit WHERE created_at >= ? AND created_at < ? ORDER BY event`,
		from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// UnshippedAuditBacklog counts the audit records CLS has not accepted yet and
// says when the oldest of them was written (nil when there is none).
func (db *DB) UnshippedAuditBacklog(ctx context.Context) (_ int, _ *time.Time, err error) {
	defer wrap(&err, "UnshippedAuditBacklog()")
	var n int
	var oldest sql.NullTime
	err = db.db.QueryRowContext(ctx, `SELECT COUNT(*), MIN(created_at) FROM t_audit WHERE shipped_at IS NULL`).Scan(&n, &oldest)
	if err != nil || !oldest.Valid {
		return n, nil, err
	}
	t := oldest.Time
	return n, &t, nil
}

// CountRefunds counts the bookings whose refund is in each of the given states.
// Only the states asked for are read (a range of idx_booking_refund_due each):
// the succeeded ones, which grow with every refund ever made, are never counted.
func (db *DB) CountRefunds(ctx context.Context, states ...booking.RefundStatus) (_ map[booking.RefundStatus]int, err error) {
	defer wrap(&err, "CountRefunds()")
	if len(states) == 0 {
		return map[booking.RefundStatus]int{}, nil
	}
	args := make([]any, len(states))
	for i, st := range states {
		args[i] = string(st)
	}
	// The placeholders are generated from the count, never from input.
	rows, err := db.db.QueryContext(ctx, `SELECT refund_status, COUNT(*) FROM t_booking WHERE refund_status IN (`+placeholders(len(states))+`) GROUP BY refund_status`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[booking.RefundStatus]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[booking.RefundStatus(s)] = n
	}
	return out, rows.Err()
}

// ListRefunds returns up to limit bookings whose refund is in one of the given
// states, oldest booking first.
func (db *DB) ListRefunds(ctx context.Context, limit int, states ...booking.RefundStatus) (_ []*booking.Booking, err error) {
	defer wrap(&err, "ListRefunds()")
	if len(states) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(states)+1)
	for _, s := range states {
		args = append(args, string(s))
	}
	args = append(args, limit)
	// The placeholders are generated from the count, never from input.
	return db.listBookings(ctx, `WHERE b.refund_status IN (`+placeholders(len(states))+`) ORDER BY b.book_id LIMIT ?`, args...)
}

// EndConsoleSession records that a console session was signed out, until it
// would have expired anyway, and forgets the sign-outs of sessions that have.
func (db *DB) EndConsoleSession(ctx context.Context, sessionID string, expiresAt time.Time) (err error) {
	defer wrap(&err, "EndConsoleSession()")
	// The new value is passed twice rather than read back with VALUES(), which
	// MySQL 8.0.20 deprecates; its replacement, the row alias (VALUES (...) AS
	// new ... new.expires_at), is a syntax error on MariaDB 10.11.
	if _, err := db.db.ExecContext(ctx, `INSERT INTO t_console_signout (session_id, expires_at) VALUES (?, ?)
		ON DUPLICATE KEY UPDATE expires_at = ?`, sessionID, expiresAt.UTC(), expiresAt.UTC()); err != nil {
		return err
	}
	_, err = db.db.ExecContext(ctx, `DELETE FROM t_console_signout WHERE expires_at < UTC_TIMESTAMP(6)`)
	return err
}

// ConsoleSessionEnded reports whether a console session was signed out.
func (db *DB) ConsoleSessionEnded(ctx context.Context, sessionID string) (_ bool, err error) {
	defer wrap(&err, "ConsoleSessionEnded()")
	var n int
	err = db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_console_signout WHERE session_id = ?`, sessionID).Scan(&n)
	return n > 0, err
}

// searchCustomers bounds the customers one console search looks at.
const searchCustomers = 10

// SearchBookings returns the bookings of the customers a console search
// names (by her phone in full, its last four digits, or the start of her name),
// newest first, at most limit. Each way is a range of one index of t_customer
// (idx_customer_phone, idx_customer_phone_tail, idx_customer_name: LIKE 'x%'
// with the input's wildcards escaped), at most searchCustomers customers; each
// customer's bookings are then the statement of CustomerHistory, newest first,
// limit of them: a few bounded index reads, never a scan of either table.
func (db *DB) SearchBookings(ctx context.Context, s booking.CustomerSearch, limit int) (_ []*booking.Booking, err error) {
	defer wrap(&err, "SearchBookings()")
	var where string
	var arg any
	switch {
	case s.Phone != "":
		where, arg = `phone = ? ORDER BY customer_id DESC`, s.Phone
	case s.PhoneTail != "":
		where, arg = `phone_tail = ? ORDER BY customer_id DESC`, s.PhoneTail
	case s.NamePrefix != "":
		where, arg = `name LIKE ? ORDER BY name, customer_id`, likePrefix(s.NamePrefix)
	default:
		return nil, booking.Errorf(booking.EBADREQUEST, "an empty customer search")
	}
	rows, err := db.db.QueryContext(ctx, `SELECT customer_id, COALESCE(openid, '') FROM t_customer WHERE `+where+` LIMIT ?`, arg, searchCustomers)
	if err != nil {
		return nil, err
	}
	type who struct {
		id     int64
		openid string
	}
	var found []who
	for rows.Next() {
		var w who
		if err := rows.Scan(&w.id, &w.openid); err != nil {
			rows.Close()
			return nil, err
		}
		found = append(found, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []*booking.Booking
	seen := map[int64]bool{}
	for _, w := range found {
		bs, err := db.listBookings(ctx, `WHERE b.customer_id = ? OR (? <> '' AND b.openid = ?) ORDER BY b.book_id DESC LIMIT ?`,
			w.id, w.openid, w.openid, limit)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if !seen[b.ID] {
				seen[b.ID] = true
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, func(a, b *booking.Booking) int { return cmp.Compare(b.ID, a.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, db.attachCustomers(ctx, out)
}

// likePrefix is a LIKE pattern matching what starts with s, s's own wildcards
// taken literally.
func likePrefix(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s) + "%"
}
