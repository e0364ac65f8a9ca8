package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"salon/shared/booking"
)

// JoinWaitlist puts the customer in line for a full slot. The slot must exist
// (NOT_FOUND), take bookings apart from being full (SLOT_NOT_BOOKABLE), not hold
// a seat of hers already (INVALID_STATE), and be full (SEATS_AVAILABLE: reserve
// instead). Joining again answers the same entry; a customer waits for at most
// maxEntries slots (WAITLIST_LIMIT). A transaction the server chose as a
// deadlock's victim is run again.
func (db *DB) JoinWaitlist(ctx context.Context, openid string, slotID int64, maxEntries int) (_ *booking.WaitlistEntry, err error) {
	defer wrap(&err, "JoinWaitlist(slot %d)", slotID)
	var entry *booking.WaitlistEntry
	err = db.transact(ctx, nil, func(tx *sql.Tx) (err error) {
		entry, err = db.joinWaitlist(ctx, tx, openid, slotID, maxEntries)
		return err
	})
	if err != nil {
		return nil, err
	}
	return entry, nil
}

// joinWaitlist answers the entry as the join's transaction sees it: a seat
// that comes free right after the commit may already have turned it into an
// offer, which the customer then finds among her bookings.
func (db *DB) joinWaitlist(ctx context.Context, tx *sql.Tx, openid string, slotID int64, maxEntries int) (*booking.WaitlistEntry, error) {
	// The slot row is locked first, as every change that frees one of its seats
	// locks it (the seat's return) before it looks for waiters. So a join and a
	// freed seat never cross: either the join sees the seat free (SEATS_AVAILABLE)
	// or the change that frees it sees the new entry and offers it the seat.
	var slot booking.Slot
	var openForBooking, holdsSeat bool
	err := tx.QueryRowContext(ctx, `SELECT `+slotColumns+`, `+openForBookingExpr+`,
			EXISTS (SELECT 1 FROM t_booking h WHERE h.slot_id = t_slot.slot_id AND h.openid = ? AND h.status IN (`+seatHoldingSQL+`))
		FROM t_slot WHERE slot_id = ? AND `+seatSchedule+` FOR UPDATE`,
		db.Policy.BookingWindowDays, openid, slotID).Scan(&slot.ID, &slot.StartAt, &slot.EndAt, &slot.Capacity, &slot.Booked, &slot.PriceFen, &slot.Open,
		&openForBooking, &holdsSeat)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, booking.Errorf(booking.ENOTFOUND, "slot %d not found", slotID)
	case err != nil:
		return nil, err
	case !openForBooking:
		return nil, booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d does not take bookings", slotID)
	}
	// The customer's entries, locked: that serialises two joins of one customer,
	// so the limit holds under concurrency too. Counted here rather than in a
	// derived table, whose locking clause MySQL and MariaDB treat differently.
	rows, err := tx.QueryContext(ctx, `SELECT slot_id FROM t_waitlist WHERE openid = ? FOR UPDATE`, openid)
	if err != nil {
		return nil, err
	}
	var n int
	var already bool
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		n++
		already = already || id == slotID
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	switch {
	case already:
		return db.findWaitlistEntry(ctx, tx, openid, slotID) // joining twice answers the same entry
	case holdsSeat:
		return nil, booking.Errorf(booking.EINVALIDSTATE, "customer holds a seat of slot %d", slotID)
	case slot.Booked < slot.Capacity:
		return nil, booking.Errorf(booking.ESEATSAVAILABLE, "slot %d has %d free seats", slotID, slot.Capacity-slot.Booked)
	case n >= maxEntries:
		return nil, booking.Errorf(booking.EWAITLISTLIMIT, "customer waits for %d slots", n)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t_waitlist (slot_id, openid, created_at) VALUES (?, ?, UTC_TIMESTAMP(6))`, slotID, openid); err != nil {
		return nil, err
	}
	return db.findWaitlistEntry(ctx, tx, openid, slotID)
}

const waitlistColumns = `w.slot_id, w.openid, w.created_at, s.start_at, s.end_at,
	(SELECT COUNT(*) FROM t_waitlist p WHERE p.slot_id = w.slot_id AND p.waitlist_id <= w.waitlist_id)`

func scanWaitlist(row interface{ Scan(...any) error }) (*booking.WaitlistEntry, error) {
	var e booking.WaitlistEntry
	if err := row.Scan(&e.SlotID, &e.OpenID, &e.CreatedAt, &e.StartAt, &e.EndAt, &e.Position); err != nil {
		return nil, err
	}
	return &e, nil
}

// findWaitlistEntry returns the customer's entry for the slot, nil if none.
func (db *DB) findWaitlistEntry(ctx context.Context, q querier, openid string, slotID int64) (*booking.WaitlistEntry, error) {
	e, err := scanWaitlist(q.QueryRowContext(ctx, `SELECT `+waitlistColumns+`
		FROM t_waitlist w JOIN t_slot s ON s.slot_id = w.slot_id WHERE w.openid = ? AND w.slot_id = ?`, openid, slotID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return e, err
}

// LeaveWaitlist takes the customer out of the slot's line; leaving a line one is
// not in is no error.
func (db *DB) LeaveWaitlist(ctx context.Context, openid string, slotID int64) (err error) {
	defer wrap(&err, "LeaveWaitlist(slot %d)", slotID)
	_, err = db.db.ExecContext(ctx, `DELETE FROM t_waitlist WHERE openid = ? AND slot_id = ?`, openid, slotID)
	return err
}

// CustomerWaitlist returns the slots the customer waits for, earliest first.
func (db *DB) CustomerWaitlist(ctx context.Context, openid string) (_ []booking.WaitlistEntry, err error) {
	defer wrap(&err, "CustomerWaitlist()")
	rows, err := db.db.QueryContext(ctx, `SELECT `+waitlistColumns+`
		FROM t_waitlist w JOIN t_slot s ON s.slot_id = w.slot_id WHERE w.openid = ? ORDER BY s.start_at`, openid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.WaitlistEntry
	for rows.Next() {
		e, err := scanWaitlist(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// WaitlistLengths returns how many customers wait for each of the given slots.
func (db *DB) WaitlistLengths(ctx context.Context, slotIDs []int64) (_ map[int64]int, err error) {
	defer wrap(&err, "WaitlistLengths(%d slots)", len(slotIDs))
	out := map[int64]int{}
	if len(slotIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(slotIDs))
	for i, id := range slotIDs {
		args[i] = id
	}
	rows, err := db.db.QueryContext(ctx, `SELECT slot_id, COUNT(*) FROM t_waitlist WHERE slot_id IN (`+placeholders(len(args))+`) GROUP BY slot_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// DropStartedWaitlists removes the lines of slots that have started: nobody can
// be offered a seat of them any more.
func (db *DB) DropStartedWaitlists(ctx context.Context) (_ int, err error) {
	defer wrap(&err, "DropStartedWaitlists()")
	res, err := db.db.ExecContext(ctx, `DELETE w FROM t_waitlist w JOIN t_slot s ON s.slot_id = w.slot_id
		WHERE s.start_at <= UTC_TIMESTAMP(6)`)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// offerSeats hands up to n seats of a slot, just freed inside tx by the caller,
// to the first customers in its line who can take them (booking.Policy's
// FirstToOffer decides, on the facts read here): each gets the creation row
// waitlist_offer as booking.Policy.Plan plans it (the hold NewHold defines:
// pending, also for a free slot, as an offer is never confirmed unasked), their
// entry is removed, an audit record and the row's notification are written, and
// the seat is taken again by takeSeats under the row's rule, all in the caller's
// transaction. So a freed seat is never free to the public while someone who
// can take it waits; those passed over keep their place. A slot that no longer
// takes bookings (closed, started) offers nothing.
func (db *DB) offerSeats(ctx context.Context, tx *sql.Tx, slotID int64, n int) error {
	var slot booking.Slot
	var openForBooking bool
	var now time.Time
	err := tx.QueryRowContext(ctx, `SELECT `+slotColumns+`, `+openForBookingExpr+`, UTC_TIMESTAMP(6) FROM t_slot WHERE slot_id = ? FOR UPDATE`,
		db.Policy.BookingWindowDays, slotID).Scan(&slot.ID, &slot.StartAt, &slot.EndAt, &slot.Capacity, &slot.Booked, &slot.PriceFen, &slot.Open, &openForBooking, &now)
	if err != nil || !openForBooking {
		return err
	}
	passed := map[int64]bool{} // entries whose customer turned out to hold a booking meanwhile
	var line []booking.Waiter
	after := int64(0) // the line is read a page at a time, only as far as needed
	for n > 0 && slot.Booked < slot.Capacity {
		w, ok := db.Policy.FirstToOffer(line, passed)
		if !ok {
			page, err := db.readLine(ctx, tx, slotID, after)
			if err != nil || len(page) == 0 {
				return err
			}
			line, after = page, page[len(page)-1].EntryID
			continue
		}
		// The state machine's creation row of an offer: its hold, its message,
		// its seat rule (a free seat: the slot was read open above, locked).
		plan, err := db.Policy.Plan(booking.Change{Event: booking.EventWaitlistOffer, From: booking.StatusNew, Actor: booking.ActorSystem},
			booking.ChangeFacts{New: &booking.NewFacts{Slot: slot, Now: now}})
		if err != nil {
			return err
		}
		hold := *plan.Hold
		res, err := tx.ExecContext(ctx, `INSERT INTO t_booking (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at, starts_at)
			VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?)`,
			slotID, w.OpenID, hold.Status, hold.AmountFen, hold.LockExpire, slot.StartAt.UTC())
		if dupKey(err) == "uk_booking_active" {
			// The customer reserved elsewhere a moment ago: passed over, keeps the place.
			passed[w.EntryID] = true
			continue
		} else if err != nil {
			return err
		}
		passed[w.EntryID] = true
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE t_booking SET out_trade_no = ? WHERE book_id = ?`, booking.OutTradeNo(id), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM t_waitlist WHERE waitlist_id = ?`, w.EntryID); err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, booking.AuditRecord{BookingID: id, SlotID: slotID, Event: plan.Event,
			FromStatus: int(plan.From), ToStatus: int(hold.Status), Actor: plan.AuditActor(), Reason: "空出的座位给了候补第一位"}); err != nil {
			return err
		}
		for _, kind := range plan.Notify {
			if err := enqueueNotification(ctx, tx, id, kind); err != nil {
				return err
			}
		}
		err = takeSeats(ctx, tx, id, []int64{slotID}, nil, plan.SeatRule, db.Policy)
		if errors.Is(err, errSeatNotTaken) {
			return errors.New("mysql: waitlist offer found no seat on a locked slot")
		} else if err != nil {
			return err
		}
		slot.Booked++
		n--
	}
	return nil
}

// linePage is how many entries of a line offerSeats reads at a time: a line is
// rarely longer, and a page whose customers are all passed over leads to the
// next.
const linePage = 50

// readLine reads, and locks, the next page of a slot's line after entry id
// `after`, in line order, with the facts that decide who can take a seat.
func (db *DB) readLine(ctx context.Context, tx *sql.Tx, slotID, after int64) ([]booking.Waiter, error) {
	noShows := `0`
	args := []any{}
	if db.Policy.NoShowLimit > 0 {
		// Counted only when the limit is on: the same count as reserve's refusal.
		noShows = noShowsOf("w.openid")
		args = append(args, booking.StatusNoShow, booking.NoShowWindow.Microseconds())
	}
	args = append(args, slotID, after, linePage)
	rows, err := tx.QueryContext(ctx, `SELECT w.waitlist_id, w.openid,
			EXISTS (SELECT 1 FROM t_booking b WHERE b.active_openid = w.openid),
			EXISTS (SELECT 1 FROM t_booking h WHERE h.openid = w.openid AND h.slot_id = w.slot_id AND h.status IN (`+seatHoldingSQL+`)),
			`+noShows+`
		FROM t_waitlist w WHERE w.slot_id = ? AND w.waitlist_id > ? ORDER BY w.waitlist_id LIMIT ? FOR UPDATE`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var line []booking.Waiter
	for rows.Next() {
		var w booking.Waiter
		if err := rows.Scan(&w.EntryID, &w.OpenID, &w.HoldsUnfinished, &w.HoldsSeatHere, &w.NoShows); err != nil {
			return nil, err
		}
		line = append(line, w)
	}
	return line, rows.Err()
}
