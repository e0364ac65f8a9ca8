package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"salon/shared/booking"
)

// SlotView is a slot as the schedule shows it, with whether it can be booked now.
type SlotView struct {
	booking.Slot
	Bookable bool
}

const slotColumns = `slot_id, start_at, end_at, capacity, booked, price_fen, is_open`

// bookableExpr is the one definition of "bookable now" (open, a free seat, starts
// between now and the booking window, by the database's clock); its parameter is
// the window in days.
const bookableExpr = `is_open = 1 AND booked < capacity AND start_at > UTC_TIMESTAMP(6)
	AND start_at <= UTC_TIMESTAMP(6) + INTERVAL ? DAY`

func scanSlot(row interface{ Scan(...any) error }, extra ...any) (*booking.Slot, error) {
	var s booking.Slot
	dest := append([]any{&s.ID, &s.StartAt, &s.EndAt, &s.Capacity, &s.Booked, &s.PriceFen, &s.Open}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSlots returns the slots starting in [from, to), earliest first, each with
// whether it is bookable right now by the database's clock.
func (db *DB) ListSlots(ctx context.Context, from, to time.Time) ([]SlotView, error) {
	rows, err := db.db.QueryContext(ctx, `
		SELECT `+slotColumns+`, `+bookableExpr+`
		FROM t_slot WHERE start_at >= ? AND start_at < ? ORDER BY start_at`,
		db.WindowDays, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SlotView
	for rows.Next() {
		var v SlotView
		s, err := scanSlot(rows, &v.Bookable)
		if err != nil {
			return nil, err
		}
		v.Slot = *s
		out = append(out, v)
	}
	return out, rows.Err()
}

// FindSlot returns one slot.
func (db *DB) FindSlot(ctx context.Context, id int64) (*booking.Slot, error) {
	s, err := scanSlot(db.db.QueryRowContext(ctx, `SELECT `+slotColumns+` FROM t_slot WHERE slot_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "slot %d not found", id)
	}
	return s, err
}

// NewSlot describes a slot to create.
type NewSlot struct {
	StartAt, EndAt time.Time
	Capacity       int
	PriceFen       int64
}

// CreateSlots creates the given slots in one transaction. A slot whose start
// already exists is skipped, not changed, so a schedule can be sent twice.
func (db *DB) CreateSlots(ctx context.Context, slots []NewSlot) (created, skipped int, err error) {
	tx, err := db.begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	for _, s := range slots {
		// ON DUPLICATE KEY with a no-op assignment reports 0 affected rows for an
		// existing start (INSERT IGNORE would also swallow CHECK violations).
		res, err := tx.ExecContext(ctx, `
			INSERT INTO t_slot (start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at)
			VALUES (?, ?, ?, 0, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))
			ON DUPLICATE KEY UPDATE slot_id = slot_id`,
			s.StartAt.UTC(), s.EndAt.UTC(), s.Capacity, s.PriceFen)
		if err != nil {
			return 0, 0, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			created++
		} else {
			skipped++
		}
	}
	return created, skipped, tx.Commit()
}

// SlotUpdate changes a slot: its capacity, or whether it takes new bookings.
type SlotUpdate struct {
	Capacity *int
	Open     *bool
}

// UpdateSlot applies u. Capacity is never lowered below what is booked: the
// condition is part of the UPDATE, so a reservation racing the change cannot slip
// between a check and the write.
func (db *DB) UpdateSlot(ctx context.Context, id int64, u SlotUpdate) (*SlotView, error) {
	if u.Capacity != nil {
		res, err := db.db.ExecContext(ctx, `
			UPDATE t_slot SET capacity = ?, updated_at = UTC_TIMESTAMP(6)
			WHERE slot_id = ? AND booked <= ?`, *u.Capacity, id, *u.Capacity)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			s, err := db.FindSlot(ctx, id)
			if err != nil {
				return nil, err
			}
			if s.Booked > *u.Capacity {
				return nil, booking.Errorf(booking.EINVALIDSTATE, "slot %d has %d booked, capacity %d refused", id, s.Booked, *u.Capacity)
			}
		}
	}
	if u.Open != nil {
		if _, err := db.db.ExecContext(ctx, `UPDATE t_slot SET is_open = ?, updated_at = UTC_TIMESTAMP(6) WHERE slot_id = ?`, *u.Open, id); err != nil {
			return nil, err
		}
	}
	return db.findSlotView(ctx, id)
}

// findSlotView returns one slot with whether it is bookable now.
func (db *DB) findSlotView(ctx context.Context, id int64) (*SlotView, error) {
	var v SlotView
	s, err := scanSlot(db.db.QueryRowContext(ctx, `SELECT `+slotColumns+`, `+bookableExpr+` FROM t_slot WHERE slot_id = ?`,
		db.WindowDays, id), &v.Bookable)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "slot %d not found", id)
	} else if err != nil {
		return nil, err
	}
	v.Slot = *s
	return &v, nil
}
