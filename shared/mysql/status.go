package mysql

import (
	"context"
	"database/sql"
	"errors"

	"salon/shared/booking"
)

// ChangeStatus moves a booking from c.From to c.To: the one way any status
// changes. It reads the facts the change depends on, has package booking plan
// the writes (booking.Policy.Plan: a change the state machine has no row for is
// INVALID_STATE), and runs them in one transaction. Every write is conditional
// on the current status, so of several concurrent changes of one booking
// exactly one wins; the losers get INVALID_STATE and change nothing.
func (db *DB) ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error) {
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
	return db.FindBooking(ctx, bookingID)
}

// changeFacts reads what a change's plan depends on, in the change's
// transaction: the one read the change always made. It locks the booking's row,
// which the conditional update would lock a moment later anyway, so the facts
// are the latest committed ones, not an older snapshot (a payment recorded
// meanwhile is seen, and refunded by a cancel that wins).
func changeFacts(ctx context.Context, tx *sql.Tx, bookingID int64) (booking.ChangeFacts, error) {
	var f booking.ChangeFacts
	err := tx.QueryRowContext(ctx, `SELECT slot_id, transaction_id IS NOT NULL FROM t_booking WHERE book_id = ? FOR UPDATE`, bookingID).
		Scan(&f.SlotID, &f.Paid)
	if errors.Is(err, sql.ErrNoRows) {
		return f, booking.Errorf(booking.ENOTFOUND, "booking %d not found", bookingID)
	}
	return f, err
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
		// By the slot the plan was made for (the one the booking holds today):
		// the full key of its seat row, so only that row is locked.
		if err = returnSeats(ctx, tx, p.BookingID, p.SlotID); err != nil {
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
		// was closed.
		err := takeSeats(ctx, tx, p.BookingID, []int64{p.SlotID}, p.SeatRule, db.Policy.BookingWindowDays)
		if errors.Is(err, errSeatNotTaken) {
			return whyNotTaken(ctx, tx, p.SlotID)
		}
		return err
	}
	return nil
}
