package mysql

import (
	"context"
	"database/sql"

	"salon/shared/booking"
)

// ChangeStatus moves a booking from c.From to c.To: the one way any status
// changes. It is conditional on the current status, so of several concurrent
// changes of one booking exactly one wins; the losers get INVALID_STATE and
// change nothing. In the same transaction it returns the seat when the new status
// holds none, takes one back (conditionally, as at reserve) when a booking that
// held none comes back, and writes the audit record.
func (db *DB) ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error) {
	err := retryDeadlock(func() error {
		tx, err := db.begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := db.changeStatus(ctx, tx, c); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return nil, err
	}
	return db.FindBooking(ctx, c.BookingID)
}

// enqueueChangeNotifications writes the notifications a change causes, in its
// transaction: a payment confirming the booking (and its reminder at once when
// the start is already within RemindBefore), and the salon's cancel.
func (db *DB) enqueueChangeNotifications(ctx context.Context, tx *sql.Tx, c booking.Change) error {
	switch {
	case c.To == booking.StatusConfirmed:
		// A customer who accepts a free offer herself is answered at once and
		// needs no "confirmed" message; a payment confirms behind her back.
		if c.Payment != nil {
			if err := enqueueNotification(ctx, tx, c.BookingID, booking.NotifyConfirmed); err != nil {
				return err
			}
		}
		// The booking's status is already confirmed in this transaction.
		_, err := enqueueReminders(ctx, tx, db.RemindBefore, c.BookingID)
		return err
	case c.To == booking.StatusCancelled && c.Actor == booking.ActorSalon:
		return enqueueNotification(ctx, tx, c.BookingID, booking.NotifyCancelled)
	}
	return nil
}

func (db *DB) changeStatus(ctx context.Context, tx *sql.Tx, c booking.Change) error {
	var slotID int64
	err := tx.QueryRowContext(ctx, `SELECT slot_id FROM t_booking WHERE book_id = ?`, c.BookingID).Scan(&slotID)
	if err == sql.ErrNoRows {
		return booking.Errorf(booking.ENOTFOUND, "booking %d not found", c.BookingID)
	} else if err != nil {
		return err
	}

	set := `status = ?, updated_at = UTC_TIMESTAMP(6)`
	args := []any{c.To}
	if c.Payment != nil {
		set += `, transaction_id = ?, paid_fen = ?, paid_at = ?`
		args = append(args, c.Payment.TransactionID, c.Payment.AmountFen, c.Payment.PaidAt.UTC())
	}
	if c.StartRefund {
		set += `, refund_status = ?, refund_fen = COALESCE(paid_fen, amount_fen), refund_no = ?, refund_next_at = UTC_TIMESTAMP(6)`
		args = append(args, booking.RefundPending, booking.OutRefundNo(c.BookingID))
	}
	args = append(args, c.BookingID, c.From)
	where := ` WHERE book_id = ? AND status = ?`
	if !c.From.HoldsSeat() && c.To.HoldsSeat() {
		// A booking whose payment is already being refunded never takes a seat
		// again: the customer would have the seat and the money.
		where += ` AND refund_status IS NULL`
	}
	res, err := tx.ExecContext(ctx, `UPDATE t_booking SET `+set+where, args...)
	if k := dupKey(err); k == "uk_booking_active" {
		// Only a booking coming back to life (4 -> 1) can collide here: the
		// customer meanwhile holds another unfinished booking.
		return booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "booking %d: customer holds another unfinished booking", c.BookingID)
	} else if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return booking.Errorf(booking.EINVALIDSTATE, "booking %d is no longer %s", c.BookingID, c.From)
	}

	if err := insertAudit(ctx, tx, booking.AuditRecord{
		BookingID: c.BookingID, SlotID: slotID, Event: c.Event,
		FromStatus: int(c.From), ToStatus: int(c.To), Actor: c.Actor, Reason: c.Reason,
	}); err != nil {
		return err
	}

	if err := db.enqueueChangeNotifications(ctx, tx, c); err != nil {
		return err
	}

	// The slot row is touched last so that its lock, which every reservation of
	// this slot waits for, is held only until the commit.
	switch {
	case c.From.HoldsSeat() && !c.To.HoldsSeat():
		if _, err = tx.ExecContext(ctx, `UPDATE t_slot SET booked = booked - 1 WHERE slot_id = ?`, slotID); err != nil {
			return err
		}
		// A seat its own customer gave up (cancelled, let expire) is never handed
		// back to her as a fresh hold: her place in this slot's line, if she has
		// one, goes with it. After the slot row, the lock every join of this
		// slot takes first, so the two never wait on each other in a circle.
		if _, err = tx.ExecContext(ctx, `DELETE w FROM t_waitlist w JOIN t_booking b ON b.openid = w.openid AND b.slot_id = w.slot_id
			WHERE b.book_id = ?`, c.BookingID); err != nil {
			return err
		}
		// The freed seat goes to the first in line, if anyone waits for it.
		return db.offerSeats(ctx, tx, slotID, 1)
	case !c.From.HoldsSeat() && c.To.HoldsSeat():
		// A booking comes back (a late payment) only into a slot a customer could
		// book right now: never into one that has started or was closed, where the
		// payment is refunded instead.
		res, err := tx.ExecContext(ctx, `UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND `+bookableExpr, slotID, db.WindowDays)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return whyNotTaken(ctx, tx, slotID)
		}
	}
	return nil
}
