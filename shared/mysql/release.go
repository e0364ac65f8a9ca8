package mysql

import (
	"context"
	"database/sql"
	"time"

	"salon/shared/booking"
)

// ClaimExpired leases up to limit pending bookings whose hold has expired (by the
// database's clock) to the calling release run for lease. Timer runs overlap and
// are retried; SKIP LOCKED lets two runs claim at the same moment without waiting
// on each other, and the lease keeps a claimed row away from other runs while this
// one talks to WeChat, without holding a lock across those calls. A run that dies
// loses its lease when it ends, and the row is claimed again.
func (db *DB) ClaimExpired(ctx context.Context, limit int, lease time.Duration) (_ []*booking.Booking, err error) {
	defer wrap(&err, "ClaimExpired()")
	ids, err := claimExpiredHolds.run(ctx, db, lease, booking.StatusPending, limit)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return db.listBookings(ctx, `WHERE b.book_id IN (`+placeholders(len(ids))+`) ORDER BY b.lock_expire`, ids...)
}

// StartRefund records that a verified payment for a booking that holds no seat
// (cancelled, or expired with no seat to give back) is to be refunded in full. It
// is conditional on the booking still being in status from and having no refund
// yet, so duplicate notifications start one refund. It reports whether this call
// started it.
func (db *DB) StartRefund(ctx context.Context, id int64, from booking.Status, p booking.Payment, actor, reason string) (started bool, err error) {
	defer wrap(&err, "StartRefund(book %d)", id)
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		started = false
		res, err := tx.ExecContext(ctx, `
		UPDATE t_booking SET transaction_id = ?, paid_fen = ?, paid_at = ?,
		       refund_status = ?, refund_fen = ?, refund_no = ?, refund_next_at = UTC_TIMESTAMP(6),
		       updated_at = UTC_TIMESTAMP(6)
		WHERE book_id = ? AND status = ? AND refund_status IS NULL`,
			p.TransactionID, p.AmountFen, p.PaidAt.UTC(), booking.RefundPending, p.AmountFen, booking.OutRefundNo(id), id, from)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		started = true
		// The payment is money taken, refunded or not: its deposit row now,
		// the refund's row when WeChat says it succeeded.
		if err := insertMoney(ctx, tx, id, actor, booking.DepositEntry(p)); err != nil {
			return err
		}
		return insertAudit(ctx, tx, booking.AuditRecord{BookingID: id, Event: booking.EventRefund,
			FromStatus: int(from), ToStatus: int(from), Actor: actor, Reason: reason})
	})
	return started && err == nil, err
}

// SetRefundState moves a booking's refund to state to (processing once WeChat
// accepted it, succeeded or failed once WeChat says so). A final state is never
// left, so a late or duplicate notification changes nothing. It reports whether
// this call changed it. A refund that succeeds writes its ledger row, with
// WeChat's refundID when the caller has it, in the same transaction.
func (db *DB) SetRefundState(ctx context.Context, id int64, to booking.RefundStatus, refundedAt *time.Time, refundID, actor, reason string) (changed bool, err error) {
	defer wrap(&err, "SetRefundState(book %d)", id)
	var at any
	if refundedAt != nil {
		at = refundedAt.UTC()
	}
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		changed = false
		// Accepted by WeChat (processing): the clock for REFUND_QUERY_AFTER starts,
		// and the refund is due for a query as soon as that has passed.
		res, err := tx.ExecContext(ctx, `
		UPDATE t_booking SET refund_status = ?, refunded_at = COALESCE(?, refunded_at), refund_id = COALESCE(?, refund_id),
		       refund_requested_at = IF(? = ?, UTC_TIMESTAMP(6), refund_requested_at),
		       refund_next_at = UTC_TIMESTAMP(6), refund_attempts = 0, updated_at = UTC_TIMESTAMP(6)
		WHERE book_id = ? AND refund_status IN (?, ?) AND refund_status <> ?`,
			to, at, nullString(refundID), to, booking.RefundProcessing, id, booking.RefundPending, booking.RefundProcessing, to)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		var status int
		var r booking.Refund
		if err := tx.QueryRowContext(ctx, `SELECT status, COALESCE(refund_fen, paid_fen, amount_fen), COALESCE(refund_no, '') FROM t_booking WHERE book_id = ?`, id).
			Scan(&status, &r.AmountFen, &r.OutRefundNo); err != nil {
			return err
		}
		changed = true
		if to == booking.RefundSucceeded {
			if err := insertMoney(ctx, tx, id, actor, booking.RefundEntry(r, refundID)); err != nil {
				return err
			}
		}
		return insertAudit(ctx, tx, booking.AuditRecord{BookingID: id, Event: booking.EventRefund,
			FromStatus: status, ToStatus: status, Actor: actor, Reason: reason})
	})
	return changed && err == nil, err
}

// ClaimDueRefunds leases to the calling release run up to limit refunds whose
// next step is due, in the order they fell due: pending ones (WeChat has not
// accepted the request yet) and, once they have been processing for queryAfter,
// processing ones (to be queried). Ordering by due time, not by id, means a refund
// that keeps failing moves back behind the others each time (DeferRefund), so it
// never holds them up. The lease (refund_next_at moved forward) keeps an
// overlapping run away; a run that dies leaves the refund due again after it.
func (db *DB) ClaimDueRefunds(ctx context.Context, queryAfter, lease time.Duration, limit int) (_ []*booking.Booking, err error) {
	defer wrap(&err, "ClaimDueRefunds()")
	ids, err := claimDueRefunds.run(ctx, db, lease, booking.RefundPending, booking.RefundProcessing, queryAfter.Microseconds(), limit)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return db.listBookings(ctx, `WHERE b.book_id IN (`+placeholders(len(ids))+`) ORDER BY b.refund_next_at, b.book_id`, ids...)
}

// DeferRefund records a failed refund request or query: one more attempt, and
// the next one not before `after` from now (by the database's clock). It only
// touches a refund still pending or processing.
func (db *DB) DeferRefund(ctx context.Context, id int64, after time.Duration) (err error) {
	defer wrap(&err, "DeferRefund(book %d)", id)
	_, err = db.db.ExecContext(ctx, `UPDATE t_booking SET refund_attempts = refund_attempts + 1,
		refund_next_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
		WHERE book_id = ? AND refund_status IN (?, ?)`, after.Microseconds(), id, booking.RefundPending, booking.RefundProcessing)
	return err
}

// DueNoShows returns up to limit confirmed bookings that ended at least grace
// ago (by the database's clock; a technician's booking ends with its service,
// bookingEnd), earliest first: nobody checked them in.
// Each comes with the slot it was read in: the no-show is decided on that slot,
// and a booking the salon moved to another one since is not marked.
func (db *DB) DueNoShows(ctx context.Context, grace time.Duration, limit int) (_ []booking.SeatedBooking, err error) {
	defer wrap(&err, "DueNoShows()")
	rows, err := db.db.QueryContext(ctx, `
		SELECT b.book_id, b.slot_id, `+bookingEnd+` AS ends FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
		WHERE b.status = ? AND `+bookingEnd+` <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
		ORDER BY ends, b.book_id LIMIT ?`, booking.StatusConfirmed, grace.Microseconds(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.SeatedBooking
	for rows.Next() {
		var d booking.SeatedBooking
		var ends time.Time
		if err := rows.Scan(&d.BookingID, &d.SlotID, &ends); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// scanIDs reads a column of ids (as query arguments) and closes rows.
func scanIDs(rows *sql.Rows) ([]any, error) {
	defer rows.Close()
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// FindDrift compares every slot that has not started with the seats its
// bookings hold: booked must equal its t_booking_slot rows of bookings in a
// status that holds a seat, and not exceed capacity. It also reports every
// technician's cell not yet ended that another of hers starts inside (no two
// of one technician's cells may overlap: CreateSlots skips such a cell, so
// one here was written some other way). It only reports: a drift means a
// bug, and repairing it silently would hide the bug and could hand a paid
// seat to someone else.
func (db *DB) FindDrift(ctx context.Context) (_ []booking.SlotDrift, err error) {
	defer wrap(&err, "FindDrift()")
	rows, err := db.db.QueryContext(ctx, `
		SELECT s.slot_id, s.booked, s.capacity, COUNT(b.book_id)
		FROM t_slot s
		LEFT JOIN t_booking_slot bs ON bs.slot_id = s.slot_id
		LEFT JOIN t_booking b ON b.book_id = bs.book_id AND b.status IN (`+seatHoldingSQL+`)
		WHERE s.start_at > UTC_TIMESTAMP(6)
		GROUP BY s.slot_id, s.booked, s.capacity
		HAVING s.booked <> COUNT(b.book_id) OR s.booked > s.capacity`)
	if err != nil {
		return nil, err
	}
	var out []booking.SlotDrift
	for rows.Next() {
		var d booking.SlotDrift
		if err := rows.Scan(&d.SlotID, &d.Booked, &d.Capacity, &d.Holding); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, d)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	// Each overlapping pair once: a cell that starts inside an earlier one
	// of hers, the earlier not yet ended. One range of idx_slot_start (a
	// cell is at most an hour, so one that started a day ago has ended),
	// walked in Go by technician and start: a join of t_slot with itself
	// read every cell of her history for each of her future ones (5.7 s a
	// call on three years of history: its range depends on the outer row).
	rows, err = db.db.QueryContext(ctx, `
		SELECT slot_id, technician_key, start_at, end_at, booked, capacity, end_at > UTC_TIMESTAMP(6)
		FROM t_slot FORCE INDEX (idx_slot_start)
		WHERE start_at > UTC_TIMESTAMP(6) - INTERVAL 1 DAY AND technician_key <> 0
		ORDER BY technician_key, start_at`)
	if err != nil {
		return nil, err
	}
	type cell struct {
		id, tech         int64
		start, end       time.Time
		booked, capacity int
		notEnded         bool
	}
	var reach cell // her cell that reaches furthest so far
	for rows.Next() {
		var c cell
		if err := rows.Scan(&c.id, &c.tech, &c.start, &c.end, &c.booked, &c.capacity, &c.notEnded); err != nil {
			rows.Close()
			return nil, err
		}
		if c.tech == reach.tech && booking.Overlap(c.start, c.end, reach.start, reach.end) && reach.notEnded {
			out = append(out, booking.SlotDrift{SlotID: reach.id, Booked: reach.booked, Holding: reach.booked, Capacity: reach.capacity, Overlaps: c.id})
		}
		if c.tech != reach.tech || c.end.After(reach.end) {
			reach = c
		}
	}
	return out, closeRows(rows)
}
