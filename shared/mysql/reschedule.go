package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"salon/shared/booking"
)

// Reschedule moves a confirmed booking to another slot (c.ToSlotID), or a
// technician's booking to another start and technician (c.ToStart,
// c.ToTechnicianID), in one transaction: the facts are read with the
// booking's row locked (so two moves, or a move and a cancel, of one booking
// are ordered, and the loser finds it changed), booking.Policy.PlanReschedule
// decides on them, and runMove writes. The new slot's seat, or the new span's
// cells, are taken by the conditional statement (full: SOLD_OUT and nothing
// changed); the old ones are returned, a slot's offered to its line.
func (db *DB) Reschedule(ctx context.Context, c booking.Change) (_ *booking.Booking, err error) {
	defer wrap(&err, "Reschedule(book %d)", c.BookingID)
	return db.planAndRun(ctx, c.BookingID, func(tx *sql.Tx) (*booking.ChangePlan, error) {
		facts, err := rescheduleFacts(ctx, tx, c)
		if err != nil {
			return nil, err
		}
		return db.Policy.PlanReschedule(c, facts)
	})
}

// rescheduleFacts reads what a move depends on: the booking, locked, with the
// database's clock, then both slots without a lock (the conditional statements
// of runMove decide again on the locked rows, at the end). A technician's
// booking has its span read instead, with the technician asked for and her
// cells of the new span (rescheduleSpanFacts). A technician's cell is no slot
// a seat-mode booking can move to: NOT_FOUND, as for the seat paths.
func rescheduleFacts(ctx context.Context, tx *sql.Tx, c booking.Change) (booking.RescheduleFacts, error) {
	var f booking.RescheduleFacts
	var tech, service sql.NullInt64
	var minutes sql.NullInt32
	err := tx.QueryRowContext(ctx, `SELECT status, slot_id, reschedules, UTC_TIMESTAMP(6), technician_id, service_id, minutes
		FROM t_booking WHERE book_id = ? FOR UPDATE`, c.BookingID).
		Scan(&f.Status, &f.From.ID, &f.Reschedules, &f.Now, &tech, &service, &minutes)
	if errors.Is(err, sql.ErrNoRows) {
		return f, booking.Errorf(booking.ENOTFOUND, "booking %d not found", c.BookingID)
	} else if err != nil {
		return f, err
	}
	if tech.Valid {
		f.ServiceID = service.Int64
		return f, rescheduleSpanFacts(ctx, tx, c, &f, tech.Int64, int(minutes.Int32))
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+slotColumns+`, technician_key FROM t_slot WHERE slot_id IN (?, ?)`, f.From.ID, c.ToSlotID)
	if err != nil {
		return f, err
	}
	defer rows.Close()
	for rows.Next() {
		var cellOf int64
		s, err := scanSlot(rows, &cellOf)
		if err != nil {
			return f, err
		}
		if s.ID == f.From.ID {
			f.From = *s
		}
		if s.ID == c.ToSlotID && cellOf == 0 {
			f.To = s
		}
	}
	return f, rows.Err()
}

// rescheduleSpanFacts reads a technician's booking's span (spanFacts) and, for
// a move to a start, the technician asked for (the same one when none is
// named): whether she exists and does the booking's service, and her cells of
// the new span.
func rescheduleSpanFacts(ctx context.Context, tx *sql.Tx, c booking.Change, f *booking.RescheduleFacts, tech int64, minutes int) error {
	span, _, err := spanFacts(ctx, tx, c.BookingID, f.From.ID, tech, minutes)
	if err != nil {
		return err
	}
	f.Span = span
	f.From = booking.Slot{ID: f.From.ID, StartAt: span.Start, EndAt: span.End, TechnicianID: tech}
	if c.ToStart.IsZero() {
		return nil
	}
	to := c.ToTechnicianID
	if to == 0 {
		to = tech
	}
	cands, err := candidates(ctx, tx, f.ServiceID, to)
	if err != nil || len(cands) == 0 {
		return err
	}
	cand := cands[0]
	cand.Cells, err = technicianCells(ctx, tx, to, c.ToStart, c.ToStart.Add(time.Duration(minutes)*time.Minute))
	f.ToTech = &cand
	return err
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
	var toTech any // NULL: the booking stays in seat mode
	if m.ToSpan != nil {
		toTech = m.ToSpan.TechnicianID
	}
	// first_slot_id keeps the slot the booking was made in from its first move
	// on (the plan's slot, read with the row locked): a retry of its
	// reservation is answered from it (findByIdemKey), never from the audit
	// trail, which retention deletes.
	res, err := tx.ExecContext(ctx, `UPDATE t_booking SET first_slot_id = COALESCE(first_slot_id, ?), slot_id = ?, starts_at = ?,
			technician_id = COALESCE(?, technician_id),
			reschedules = reschedules + ?, checkin_day = NULL, checkin_code = NULL, updated_at = UTC_TIMESTAMP(6)
		WHERE book_id = ? AND status = ?`, p.SlotID, m.ToSlotID, m.NewStart.UTC(), toTech, count, p.BookingID, p.From)
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
	if m.ToSpan != nil {
		reason = fmt.Sprintf("%s：时段 %d -> %d（技师 %d，%s 起）", p.Reason, p.SlotID, m.ToSlotID, m.ToSpan.TechnicianID,
			m.ToSpan.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
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
	if m.ToSpan != nil {
		return db.moveCells(ctx, tx, p)
	}

	take := func() error {
		err := takeSeats(ctx, tx, p.BookingID, []int64{m.ToSlotID}, nil, p.SeatRule, db.Policy)
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
	give := func() error { return returnSeats(ctx, tx, p.BookingID, []int64{p.SlotID}) }
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

// moveCells moves a technician's booking's cells, last in its move's
// transaction: first the cells of the new span it does not hold yet, all of
// them or none under the row's rule judged at the new start (short: SOLD_OUT
// or SLOT_NOT_BOOKABLE and the whole move rolled back), then the cells of
// the old span the new one does not keep, returned. Taking first is the
// rule of the move: the booking never lets go of its time before it has the
// new one. A move that overlaps its own time keeps the cells they share
// (they are neither taken again nor returned). Cells are nobody's line: no
// offer follows.
func (db *DB) moveCells(ctx context.Context, tx *sql.Tx, p *booking.ChangePlan) error {
	to := p.Move.ToSpan
	if len(to.Cells) > 0 {
		err := takeSeats(ctx, tx, p.BookingID, to.Cells, to, p.SeatRule, db.Policy)
		if errors.Is(err, errSeatNotTaken) {
			return whyCellsNotTaken(ctx, tx, to.Cells, *to, p.SeatRule, db.Policy)
		} else if err != nil {
			return err
		}
	}
	if len(p.Move.Give) > 0 {
		return returnSeats(ctx, tx, p.BookingID, p.Move.Give)
	}
	return nil
}
