package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"salon/shared/booking"
)

const slotColumns = `slot_id, start_at, end_at, capacity, booked, price_fen, is_open`

// seatSchedule picks the slots of the seat schedule, the only ones the seat
// paths (reserve and walk-in by slot, a move to a slot, the waitlist, the
// salon's changes of a slot, the public schedule) see: a technician's cell
// named by its id is NOT_FOUND there, so it is never taken as one seat, its
// capacity never raised, and it never gets a line.
const seatSchedule = `technician_id IS NULL`

// openForBookingExpr is booking.Slot.OpenForBooking in SQL, by the database's
// clock: open, not started, starting within the booking window (its one
// parameter, in days). bookableExpr adds a free seat (booking.Slot.Bookable).
// Both are for reads (the listing, a slot, the pre-reads); TestStatusListsMatchTheDomain
// checks both against the Go definitions. Seats are taken only by
// salon_take_seat (seat.go), under a booking.SeatRule.
const (
	openForBookingExpr = `(is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL ? DAY)`
	bookableExpr       = `(` + openForBookingExpr + ` AND booked < capacity)`
)

func scanSlot(row interface{ Scan(...any) error }, extra ...any) (*booking.Slot, error) {
	var s booking.Slot
	dest := append([]any{&s.ID, &s.StartAt, &s.EndAt, &s.Capacity, &s.Booked, &s.PriceFen, &s.Open}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSlots returns the seat schedule's slots starting in [from, to), earliest
// first, each with whether it is bookable right now by the database's clock
// (technicianKey 0: uk_slot_start's seat-mode part, in start order).
func (db *DB) ListSlots(ctx context.Context, from, to time.Time) (_ []booking.SlotView, err error) {
	defer wrap(&err, "ListSlots(%s)", span(from, to))
	rows, err := db.db.QueryContext(ctx, `
		SELECT `+slotColumns+`, `+bookableExpr+`
		FROM t_slot WHERE technician_key = 0 AND start_at >= ? AND start_at < ? ORDER BY start_at`,
		db.Policy.BookingWindowDays, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.SlotView
	for rows.Next() {
		var v booking.SlotView
		s, err := scanSlot(rows, &v.Bookable)
		if err != nil {
			return nil, err
		}
		v.Slot = *s
		out = append(out, v)
	}
	return out, rows.Err()
}

// FindSlot returns one slot, a seat-mode slot or a technician's cell (whose
// technician it names).
func (db *DB) FindSlot(ctx context.Context, id int64) (_ *booking.Slot, err error) {
	defer wrap(&err, "FindSlot(slot %d)", id)
	var tech int64
	s, err := scanSlot(db.db.QueryRowContext(ctx, `SELECT `+slotColumns+`, technician_key FROM t_slot WHERE slot_id = ?`, id), &tech)
	if s != nil {
		s.TechnicianID = tech
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "slot %d not found", id)
	}
	return s, err
}

// SlotBatch is how many slots one INSERT of CreateSlots carries. The largest
// schedule (92 days of 5-minute slots, 26,404) was one INSERT per slot, one
// round trip each: 2.9 s against a local server, about 13 s at 0.5 ms a round
// trip, past the admin function's timeout. In batches it is 27 INSERTs. A batch
// has 5 placeholders a slot, 5,000 in all, far below the 65,535 a prepared
// statement may have (the driver interpolates them client-side, but would
// prepare it if interpolation were off), and its text, about 100 bytes a slot,
// is some 100 KB, far below max_allowed_packet (16 MB by default on MariaDB,
// 64 MB on MySQL 8.0).
const SlotBatch = 1000

// CreateSlots creates the given slots in one transaction. A slot whose start
// already exists is skipped, not changed, so a schedule can be sent twice.
//
// One transaction rather than batches that each commit: a schedule is
// all-or-nothing (a slot the database refuses, or a failure half-way, leaves
// nothing behind; functions/README.md, "Create a schedule"), and the
// transaction is short now that it is a few dozen statements. Batches that
// committed on their own would be safe to repeat (existing starts are skipped)
// but could leave half a schedule that the salon did not see confirmed.
//
// A technician's cell that would overlap one of hers in time (laid before
// GRID_MINUTES changed) is skipped too (booking.ClearOf): her row is locked
// first, so two requests laying her hours at once cannot both insert
// overlapping cells.
func (db *DB) CreateSlots(ctx context.Context, all []booking.ScheduledSlot) (created, skipped int, err error) {
	defer wrap(&err, "CreateSlots(%d slots)", len(all))
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		created, skipped = 0, 0
		clear, overlapping, err := clearOfTheirCells(ctx, tx, all)
		if err != nil {
			return err
		}
		skipped = overlapping
		return createSlots(ctx, tx, clear, &created, &skipped)
	})
	if err != nil {
		return 0, 0, err
	}
	return created, skipped, nil
}

func createSlots(ctx context.Context, tx *sql.Tx, slots []booking.ScheduledSlot, created, skipped *int) error {
	for len(slots) > 0 {
		batch := slots[:min(len(slots), SlotBatch)]
		slots = slots[len(batch):]
		args := make([]any, 0, 5*len(batch))
		for _, s := range batch {
			var tech any // NULL: the seat schedule's
			if s.TechnicianID != 0 {
				tech = s.TechnicianID
			}
			args = append(args, s.StartAt.UTC(), s.EndAt.UTC(), s.Capacity, s.PriceFen, tech)
		}
		// ON DUPLICATE KEY with a no-op assignment counts 0 affected rows for
		// an existing start and 1 for an inserted row, so the statement's
		// affected rows are exactly the slots it created (the driver does not
		// ask for found rows). INSERT IGNORE would also swallow CHECK
		// violations. The row list is generated from the count, never from input.
		res, err := tx.ExecContext(ctx, `
			INSERT INTO t_slot (start_at, end_at, capacity, booked, price_fen, technician_id, is_open, created_at, updated_at)
			VALUES `+repeatRows(`(?, ?, ?, 0, ?, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, len(batch))+`
			ON DUPLICATE KEY UPDATE slot_id = slot_id`, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n < 0 || n > int64(len(batch)) {
			return fmt.Errorf("create slots: %d rows affected by a batch of %d", n, len(batch))
		}
		*created += int(n)
		*skipped += len(batch) - int(n)
	}
	return nil
}

// clearOfTheirCells leaves out each technician's cell in slots that
// overlaps one of her existing cells, under a lock on her row that every
// laying of her hours takes first, and answers how many it left out. Seat
// slots pass as they are (one per start is their rule, uk_slot_start's).
func clearOfTheirCells(ctx context.Context, tx *sql.Tx, slots []booking.ScheduledSlot) ([]booking.ScheduledSlot, int, error) {
	byTech := map[int64][]booking.ScheduledSlot{}
	var out []booking.ScheduledSlot
	for _, s := range slots {
		if s.TechnicianID == 0 {
			out = append(out, s)
			continue
		}
		byTech[s.TechnicianID] = append(byTech[s.TechnicianID], s)
	}
	skipped := 0
	for _, tech := range slices.Sorted(maps.Keys(byTech)) { // one lock order
		cells := byTech[tech]
		var locked int64
		err := tx.QueryRowContext(ctx, `SELECT technician_id FROM t_technician WHERE technician_id = ? FOR UPDATE`, tech).Scan(&locked)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, 0, booking.Errorf(booking.ENOTFOUND, "technician %d not found", tech)
		}
		if err != nil {
			return nil, 0, err
		}
		from, to := cells[0].StartAt, cells[0].EndAt
		for _, c := range cells[1:] {
			from, to = minTime(from, c.StartAt), maxTime(to, c.EndAt)
		}
		// A cell is at most an hour (GRID_MINUTES divides one): one that
		// starts a day before the first new one cannot reach it.
		rows, err := tx.QueryContext(ctx, `SELECT start_at, end_at FROM t_slot
			WHERE technician_key = ? AND start_at >= ? AND start_at < ? AND end_at > ?`,
			tech, from.Add(-24*time.Hour).UTC(), to.UTC(), from.UTC())
		if err != nil {
			return nil, 0, err
		}
		var theirs []booking.Span
		for rows.Next() {
			sp := booking.Span{TechnicianID: tech}
			if err := rows.Scan(&sp.Start, &sp.End); err != nil {
				rows.Close()
				return nil, 0, err
			}
			theirs = append(theirs, sp)
		}
		if err := closeRows(rows); err != nil {
			return nil, 0, err
		}
		clear, n := booking.ClearOf(cells, theirs)
		out = append(out, clear...)
		skipped += n
	}
	return out, skipped, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// repeatRows is row, n times, separated by commas.
func repeatRows(row string, n int) string {
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// UpdateSlot applies the salon's change to a slot, with its audit record, in one
// transaction; seats a larger capacity or a reopening makes free are offered to
// the slot's waitlist in it too. The slot row is locked first, so a reservation racing the change
// waits for it rather than slipping between the check and the write; capacity is
// never lowered below what is booked (INVALID_STATE, nothing written).
func (db *DB) UpdateSlot(ctx context.Context, id int64, u booking.SlotUpdate, actor string) (_ *booking.SlotView, err error) {
	defer wrap(&err, "UpdateSlot(slot %d)", id)
	if err := db.transact(ctx, nil, func(tx *sql.Tx) error { return db.updateSlot(ctx, tx, id, u, actor) }); err != nil {
		return nil, err
	}
	return db.findSlotView(ctx, id)
}

func (db *DB) updateSlot(ctx context.Context, tx *sql.Tx, id int64, u booking.SlotUpdate, actor string) error {
	s, err := scanSlot(tx.QueryRowContext(ctx, `SELECT `+slotColumns+` FROM t_slot WHERE slot_id = ? AND `+seatSchedule+` FOR UPDATE`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return booking.Errorf(booking.ENOTFOUND, "slot %d not found", id)
	} else if err != nil {
		return err
	}
	var changes []string
	if u.Capacity != nil && *u.Capacity != s.Capacity {
		if s.Booked > *u.Capacity {
			return booking.Errorf(booking.EINVALIDSTATE, "slot %d has %d booked, capacity %d refused", id, s.Booked, *u.Capacity)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE t_slot SET capacity = ?, updated_at = UTC_TIMESTAMP(6) WHERE slot_id = ?`, *u.Capacity, id); err != nil {
			return err
		}
		changes = append(changes, fmt.Sprintf("容量 %d -> %d", s.Capacity, *u.Capacity))
	}
	if u.Open != nil && *u.Open != s.Open {
		if _, err := tx.ExecContext(ctx, `UPDATE t_slot SET is_open = ?, updated_at = UTC_TIMESTAMP(6) WHERE slot_id = ?`, *u.Open, id); err != nil {
			return err
		}
		changes = append(changes, map[bool]string{false: "停止预约", true: "重新开放"}[*u.Open])
	}
	if len(changes) > 0 {
		if err := insertAudit(ctx, tx, booking.AuditRecord{SlotID: id, Event: booking.EventSlotChange,
			FromStatus: -1, ToStatus: -1, Actor: actor, Reason: strings.Join(changes, "，")}); err != nil {
			return err
		}
	}
	raised := u.Capacity != nil && *u.Capacity > s.Capacity
	reopened := u.Open != nil && *u.Open && !s.Open
	if raised || reopened {
		// New or reopened seats go to the waitlist first, in this transaction.
		return db.offerSeats(ctx, tx, id, booking.MaxCapacity)
	}
	return nil
}

// findSlotView returns one slot with whether it is bookable now.
func (db *DB) findSlotView(ctx context.Context, id int64) (*booking.SlotView, error) {
	var v booking.SlotView
	s, err := scanSlot(db.db.QueryRowContext(ctx, `SELECT `+slotColumns+`, `+bookableExpr+` FROM t_slot WHERE slot_id = ?`,
		db.Policy.BookingWindowDays, id), &v.Bookable)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "slot %d not found", id)
	} else if err != nil {
		return nil, err
	}
	v.Slot = *s
	return &v, nil
}

// walkInOpenExpr is booking.Slot.OpenForWalkIn in SQL, by the database's clock:
// open, not ended (the walk-in sitting down now), starting within the booking
// window (its one parameter, in days): the walk-in's pre-read. The seat itself
// is taken under booking.SeatIfOpenForWalkIn by salon_take_seat, which spells
// the same (TestTakeSeatFollowsTheSeatRules).
const walkInOpenExpr = `(is_open = 1 AND end_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL ? DAY)`

// technicianCells are a technician's cells that start in [from, to), by
// start: one range of uk_slot_start.
func technicianCells(ctx context.Context, q querier, tech int64, from, to time.Time) ([]booking.Slot, error) {
	byTech, err := techniciansCells(ctx, q, []int64{tech}, from, to)
	return byTech[tech], err
}

// techniciansCells are the cells of each of techs that start in [from, to),
// by start, in one statement (a range of uk_slot_start per technician).
func techniciansCells(ctx context.Context, q querier, techs []int64, from, to time.Time) (map[int64][]booking.Slot, error) {
	out := map[int64][]booking.Slot{}
	if len(techs) == 0 {
		return out, nil
	}
	args := append(int64Args(techs), from.UTC(), to.UTC())
	rows, err := q.QueryContext(ctx, `SELECT `+slotColumns+`, technician_key FROM t_slot
		WHERE technician_key IN (`+placeholders(len(techs))+`) AND start_at >= ? AND start_at < ?
		ORDER BY technician_key, start_at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var tech int64
		c, err := scanSlot(rows, &tech)
		if err != nil {
			return nil, err
		}
		c.TechnicianID = tech
		out[tech] = append(out[tech], *c)
	}
	return out, rows.Err()
}
