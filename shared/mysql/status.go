package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"salon/shared/booking"
)

// ChangeStatus moves a booking from c.From to c.To: the one way any status
// changes. It reads the facts the change depends on, has package booking plan
// the writes (booking.Policy.Plan: a change the state machine has no row for is
// INVALID_STATE), and runs them in one transaction. Every write is conditional
// on the current status, so of several concurrent changes of one booking
// exactly one wins; the losers get INVALID_STATE and change nothing.
func (db *DB) ChangeStatus(ctx context.Context, c booking.Change) (_ *booking.Booking, err error) {
	defer wrap(&err, "ChangeStatus(book %d)", c.BookingID)
	return db.planAndRun(ctx, c.BookingID, func(tx *sql.Tx) (*booking.ChangePlan, error) {
		facts, err := changeFacts(ctx, tx, c.BookingID)
		if err != nil {
			return nil, err
		}
		return db.Policy.Plan(c, facts)
	})
}

// planAndRun is every change of a booking: in one transaction, plan reads the
// facts and has package booking plan the writes, runPlan writes them; then the
// booking as the commit left it.
func (db *DB) planAndRun(ctx context.Context, bookingID int64, plan func(tx *sql.Tx) (*booking.ChangePlan, error)) (*booking.Booking, error) {
	err := db.transact(ctx, nil, func(tx *sql.Tx) error {
		p, err := plan(tx)
		if err != nil {
			return err
		}
		return db.runPlan(ctx, tx, p)
	})
	if err != nil {
		return nil, err
	}
	return findBooking(ctx, db.db, bookingID)
}

// changeFacts reads what a change's plan depends on, in the change's
// transaction: the one read the change always made. It locks the booking's row,
// which the conditional update would lock a moment later anyway, so the facts
// are the latest committed ones, not an older snapshot (a payment recorded
// meanwhile is seen, and refunded by a cancel that wins). A technician's
// booking has its span read too (spanFacts).
func changeFacts(ctx context.Context, tx *sql.Tx, bookingID int64) (booking.ChangeFacts, error) {
	var f booking.ChangeFacts
	var tech sql.NullInt64
	var minutes sql.NullInt32
	err := tx.QueryRowContext(ctx, `SELECT slot_id, transaction_id IS NOT NULL, COALESCE(paid_fen, amount_fen), technician_id, minutes
		FROM t_booking WHERE book_id = ? FOR UPDATE`, bookingID).
		Scan(&f.SlotID, &f.Paid, &f.PaidFen, &tech, &minutes)
	if errors.Is(err, sql.ErrNoRows) {
		return f, booking.Errorf(booking.ENOTFOUND, "booking %d not found", bookingID)
	} else if err != nil || !tech.Valid {
		return f, err
	}
	f.Span, f.Around, err = spanFacts(ctx, tx, bookingID, f.SlotID, tech.Int64, int(minutes.Int32))
	return f, err
}

// spanFacts reads a technician's booking's span: from its first cell's start
// for its minutes, with the cells it holds now (its t_booking_slot rows, in
// start order); and, when it holds none (a booking that may take them again:
// a late payment), her cells of that time as they are now. Plain reads: the
// booking's row is locked, and every change of its rows takes that lock
// first, so they are as the last change committed them; the cells' state is
// decided again by the statements that take them.
func spanFacts(ctx context.Context, tx *sql.Tx, bookingID, firstCell, tech int64, minutes int) (*booking.Span, []booking.Slot, error) {
	span := &booking.Span{TechnicianID: tech}
	if err := tx.QueryRowContext(ctx, `SELECT start_at FROM t_slot WHERE slot_id = ?`, firstCell).Scan(&span.Start); err != nil {
		return nil, nil, err
	}
	span.End = span.Start.Add(time.Duration(minutes) * time.Minute)
	rows, err := tx.QueryContext(ctx, `SELECT bs.slot_id FROM t_booking_slot bs JOIN t_slot s ON s.slot_id = bs.slot_id
		WHERE bs.book_id = ? ORDER BY s.start_at`, bookingID)
	if err != nil {
		return nil, nil, err
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		span.Cells = append(span.Cells, id.(int64))
	}
	if len(span.Cells) > 0 {
		return span, nil, nil
	}
	around, err := technicianCells(ctx, tx, tech, span.Start, span.End)
	return span, around, err
}

// runPlan executes a change's plan: the conditional update of the booking, its
// audit record, its notifications, and last the slot row (so the lock every
// reservation of the slot waits for is held only until the commit), with the
// hand-over of a freed seat to the waitlist.
func (db *DB) runPlan(ctx context.Context, tx *sql.Tx, p *booking.ChangePlan) error {
	if p.Seat == booking.SeatMoved {
		return db.runMove(ctx, tx, p)
	}
	set := `status = ?, updated_at = UTC_TIMESTAMP(6)`
	args := []any{p.To}
	if p.RecordPayment {
		set += `, transaction_id = ?, paid_fen = ?, paid_at = ?`
		args = append(args, p.Payment.TransactionID, p.Payment.AmountFen, p.Payment.PaidAt.UTC())
	}
	if p.StartRefund {
		set += `, refund_status = ?, refund_fen = COALESCE(paid_fen, amount_fen), refund_no = ?, refund_next_at = UTC_TIMESTAMP(6)`
		args = append(args, booking.RefundPending, booking.OutRefundNo(p.BookingID))
	}
	if p.LateCancel {
		// The fact the owner's report counts, on the booking itself: its
		// audit record may be deleted by retention.
		set += `, late_cancel = 1`
	}
	args = append(args, p.BookingID, p.From)
	where := ` WHERE book_id = ? AND status = ?`

	if p.UnlessRefunding {
		where += ` AND refund_status IS NULL`
	}
	res, err := tx.ExecContext(ctx, `UPDATE t_booking SET `+set+where, args...)
	if k := dupKey(err); k == "uk_booking_active" {
		// Only a booking coming back to life (4 -> 1) can collide here: the
		// customer meanwhile holds another unfinished booking.
		return booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "booking %d: customer holds another unfinished booking", p.BookingID)
	} else if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return booking.Errorf(booking.EINVALIDSTATE, "booking %d is no longer %s", p.BookingID, p.From)
	}

	if err := insertAudit(ctx, tx, booking.AuditRecord{
		BookingID: p.BookingID, SlotID: p.SlotID, Event: p.Event,
		FromStatus: int(p.From), ToStatus: int(p.To), Actor: p.AuditActor(), Reason: p.Reason,
	}); err != nil {
		return err
	}
	for _, e := range p.Ledger {
		if err := insertMoney(ctx, tx, p.BookingID, p.AuditActor(), e); err != nil {
			return err
		}
	}
	for _, kind := range p.Notify {
		if kind == booking.NotifyReminder {
			// Due at once only when the start is within REMIND_BEFORE; else the
			// release run writes it when it falls due. The booking's status is
			// already the new one in this transaction.
			if _, err := enqueueReminders(ctx, tx, p.RemindBefore, p.BookingID); err != nil {
				return err
			}
			continue
		}
		if err := enqueueNotification(ctx, tx, p.BookingID, kind); err != nil {
			return err
		}
	}

	switch p.Seat {
	case booking.SeatReturned:
		// By the slot the plan was made for (the one the booking holds today),
		// or every cell of a technician's booking: the full keys of its seat
		// rows, so only those rows are locked.
		seats := []int64{p.SlotID}
		if p.Span != nil {
			seats = p.Span.Cells
		}
		if err = returnSeats(ctx, tx, p.BookingID, seats); err != nil {
			return err
		}
		if p.ForgetOwnPlace {
			// After the slot row, the lock every join of this slot takes first,
			// so the two never wait on each other in a circle.
			if _, err = tx.ExecContext(ctx, `DELETE w FROM t_waitlist w JOIN t_booking b ON b.openid = w.openid AND b.slot_id = w.slot_id
				WHERE b.book_id = ?`, p.BookingID); err != nil {
				return err
			}
		}
		if p.OfferFreedSeat {
			return db.offerSeats(ctx, tx, p.SlotID, 1)
		}
	case booking.SeatRetaken:
		// Conditionally, as at reserve (the row's rule): only into a slot a
		// customer could book right now, never into one that has started or
		// was closed; a technician's booking into every cell of its span, or
		// none.
		if p.Span != nil {
			err := takeSeats(ctx, tx, p.BookingID, p.Span.Cells, p.Span, p.SeatRule, db.Policy)
			if errors.Is(err, errSeatNotTaken) {
				return whyCellsNotTaken(ctx, tx, p.Span.Cells, *p.Span, p.SeatRule, db.Policy)
			}
			return err
		}
		err := takeSeats(ctx, tx, p.BookingID, []int64{p.SlotID}, nil, p.SeatRule, db.Policy)
		if errors.Is(err, errSeatNotTaken) {
			return whyNotTaken(ctx, tx, p.SlotID)
		}
		return err
	}
	return nil
}
