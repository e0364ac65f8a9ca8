package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"salon/shared/booking"
)

// Reschedule moves a confirmed booking to another slot (c.ToSlotID), in one
// transaction: the facts are read with the booking's row locked (so two moves,
// or a move and a cancel, of one booking are ordered, and the loser finds it
// changed), booking.Policy.PlanReschedule decides on them, and runMove writes.
// The new slot's seat is taken by the conditional statement (full: SOLD_OUT
// and nothing changed); the old one's is returned and offered to its line.
func (db *DB) Reschedule(ctx context.Context, c booking.Change) (*booking.Booking, error) {
	return db.planAndRun(ctx, c.BookingID, func(tx *sql.Tx) (*booking.ChangePlan, error) {
		facts, err := rescheduleFacts(ctx, tx, c.BookingID, c.ToSlotID)
		if err != nil {
			return nil, err
		}
		return db.Policy.PlanReschedule(c, facts)
	})
}

// rescheduleFacts reads what a move depends on: the booking, locked, with the
// database's clock, then both slots without a lock (the conditional statements
// of runMove decide again on the locked rows, at the end).
func rescheduleFacts(ctx context.Context, tx *sql.Tx, bookingID, toSlotID int64) (booking.RescheduleFacts, error) {
	var f booking.RescheduleFacts
	err := tx.QueryRowContext(ctx, `SELECT status, slot_id, reschedules, UTC_TIMESTAMP(6) FROM t_booking WHERE book_id = ? FOR UPDATE`, bookingID).
		Scan(&f.Status, &f.From.ID, &f.Reschedules, &f.Now)
	if errors.Is(err, sql.ErrNoRows) {
		return f, booking.Errorf(booking.ENOTFOUND, "booking %d not found", bookingID)
	} else if err != nil {
		return f, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+slotColumns+` FROM t_slot WHERE slot_id IN (?, ?)`, f.From.ID, toSlotID)
	if err != nil {
		return f, err
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSlot(rows)
		if err != nil {
			return f, err
		}
		if s.ID == f.From.ID {
			f.From = *s
		}
		if s.ID == toSlotID {
			f.To = s
		}
	}
	return f, rows.Err()
}

// runMove executes a move's plan. The booking's row first (its slot, the slot
// it was made in if this is its first move, its count of the customer's moves,
// its check-in code cleared: the code follows the new day), the audit record naming both slots, the outbox (the reminder armed
// again for the new time, due at once when the new start is within
// REMIND_BEFORE; the salon's message); then, last, the two slot rows in slot_id
// order, so two moves between the same slots, or a move and a cancel, lock them
// in one order; then the customer's place in the new slot's line, if she had
// one, and the freed seat handed to the old slot's line.
func (db *DB) runMove(ctx context.Context, tx *sql.Tx, p *booking.ChangePlan) error {
	m := p.Move
	count := 0
	if m.Count {
		count = 1
	}
	// first_slot_id keeps the slot the booking was made in from its first move
	// on (the plan's slot, read with the row locked): a retry of its
	// reservation is answered from it (findByIdemKey), never from the audit
	// trail, which retention deletes.
	res, err := tx.ExecContext(ctx, `UPDATE t_booking SET first_slot_id = COALESCE(first_slot_id, ?), slot_id = ?,
			reschedules = reschedules + ?, checkin_day = NULL, checkin_code = NULL, updated_at = UTC_TIMESTAMP(6)
		WHERE book_id = ? AND status = ?`, p.SlotID, m.ToSlotID, count, p.BookingID, p.From)
	if err != nil {
		return err
	}
	// By the primary key alone (a condition on slot_id could have the server
	// lock the slot's index range): the row is locked since the facts were
	// read, so its slot is the one the plan was made for.
	if n, _ := res.RowsAffected(); n == 0 {
		return booking.Errorf(booking.EINVALIDSTATE, "booking %d is no longer %s", p.BookingID, p.From)
	}
	reason := fmt.Sprintf("%s：时段 %d -> %d", p.Reason, p.SlotID, m.ToSlotID)
	if err := insertAudit(ctx, tx, booking.AuditRecord{
		BookingID: p.BookingID, SlotID: m.ToSlotID, Event: p.Event,
		FromStatus: int(p.From), ToStatus: int(p.To), Actor: p.AuditActor(), Reason: reason,
	}); err != nil {
		return err
	}
	for _, kind := range p.Notify {
		// The booking's row of this kind, if it has one (a reminder of the old
		// time, an earlier move's message; sent or not), is armed again rather
		// than deleted, so the outbox keeps its one row per booking and kind and
		// what was sent before stays on record: due at once, or, for a reminder
		// of a start beyond REMIND_BEFORE, when that start comes within it.
		due, dueArgs := `UTC_TIMESTAMP(6)`, []any{}
		later := kind == booking.NotifyReminder && !m.RemindNow
		if later {
			due = `GREATEST(UTC_TIMESTAMP(6), ? - INTERVAL ? MICROSECOND)`
			dueArgs = []any{m.NewStart.UTC(), p.RemindBefore.Microseconds()}
		}
		args := append(append(append([]any{booking.NotificationPending}, dueArgs...), dueArgs...), p.BookingID, kind)
		if _, err := tx.ExecContext(ctx, `UPDATE t_notification SET status = ?, attempts = 0, last_error = '', sent_at = NULL,
				next_at = `+due+`, created_at = `+due+` WHERE book_id = ? AND kind = ?`, args...); err != nil {
			return err
		}
		if later {
			continue // none yet: the release run writes it when it falls due
		}
		if err := enqueueNotification(ctx, tx, p.BookingID, kind); err != nil { // none yet: written now
			return err
		}
	}

	take := func() error {
		err := takeSeats(ctx, tx, p.BookingID, []int64{m.ToSlotID}, p.SeatRule, db.Policy.BookingWindowDays)
		if !errors.Is(err, errSeatNotTaken) {
			return err
		}
		// A locking read: the transaction's snapshot is as old as the facts,
		// and the seat may have been taken since.
		var full bool
		if err := tx.QueryRowContext(ctx, `SELECT booked >= capacity FROM t_slot WHERE slot_id = ? FOR UPDATE`, m.ToSlotID).Scan(&full); err != nil {
			return err
		}
		if full {
			return booking.Errorf(booking.ESOLDOUT, "slot %d full", m.ToSlotID)
		}
		return booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d closed, started or ended meanwhile", m.ToSlotID)
	}
	// Only the old slot's seat: when the new one is taken first (the lower
	// slot_id), the booking holds both for a moment.
	give := func() error { return returnSeats(ctx, tx, p.BookingID, p.SlotID) }
	first, second := give, take
	if m.ToSlotID < p.SlotID {
		first, second = take, give
	}
	if err := first(); err != nil {
		return err
	}
	if err := second(); err != nil {
		return err
	}
	// After the slot rows, the locks every join takes first (see runPlan).
	if _, err := tx.ExecContext(ctx, `DELETE w FROM t_waitlist w JOIN t_booking b ON b.openid = w.openid AND b.slot_id = w.slot_id
		WHERE b.book_id = ?`, p.BookingID); err != nil {
		return err
	}
	if p.OfferFreedSeat {
		return db.offerSeats(ctx, tx, p.SlotID, 1)
	}
	return nil
}
