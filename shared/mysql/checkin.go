package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"math/big"

	"salon/shared/booking"
)

// checkinCodeTries bounds how often a code already taken that day is drawn
// again: with at most a few hundred bookings a day among 10^8 codes, a second
// draw is already rare.
const checkinCodeTries = 5

// CheckinCode returns booking b's check-in code for shop day day (YYYY-MM-DD),
// giving it one the first time it is asked for that day: 8 random digits,
// unique among the day's bookings by the key uk_booking_checkin (a draw that
// meets a taken code is drawn again). Asked again, the same code; asked
// concurrently, the one that was written first. Whether the booking should have
// a code at all is the caller's rule (booking.HasCheckinCode), decided on b as
// the caller read it: the code is read and written with the booking's row
// locked, and only while it is still in b's slot and of b's status, so a move
// to another day (which clears the code, see runMove) or a cancel racing the
// caller's read never leaves it a code of the day it was read for. Moved or
// changed meanwhile, it answers "" (no code): the caller's read is older than
// the booking.
func (db *DB) CheckinCode(ctx context.Context, b *booking.Booking, day string) (_ string, err error) {
	defer wrap(&err, "CheckinCode(book %d, %s)", b.ID, day)
	for try := 0; try < checkinCodeTries; try++ {
		var code string
		taken := false
		err := db.transact(ctx, nil, func(tx *sql.Tx) error {
			code, taken = "", false
			var current sql.NullString
			var same bool
			// By the primary key, locked, as a move locks it first (a
			// condition on slot_id in the write could have the server take
			// the slot's index first, and the two deadlock).
			err := tx.QueryRowContext(ctx, `SELECT IF(checkin_day = ?, checkin_code, NULL), slot_id = ? AND status = ?
				FROM t_booking WHERE book_id = ? FOR UPDATE`, day, b.SlotID, b.Status, b.ID).Scan(&current, &same)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return booking.Errorf(booking.ENOTFOUND, "booking %d not found", b.ID)
			case err != nil:
				return err
			case !same:
				return nil
			case current.Valid:
				code = current.String
				return nil
			}
			fresh, err := newCheckinCode()
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE t_booking SET checkin_day = ?, checkin_code = ? WHERE book_id = ?`, day, fresh, b.ID)
			if dupKey(err) == "uk_booking_checkin" {
				taken = true // another booking of that day has it: draw again
				return nil
			}
			if err == nil {
				code = fresh
			}
			return err
		})
		if err != nil || !taken {
			return code, err
		}
	}
	return "", fmt.Errorf("mysql: no free check-in code for booking %d after %d draws", b.ID, checkinCodeTries)
}

// newCheckinCode draws 8 random digits.
func newCheckinCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(100_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%0*d", booking.CheckinCodeLen, n.Int64()), nil
}

// FindByCheckinCode returns the booking of shop day day with that check-in
// code; NOT_FOUND when no booking of that day has it.
func (db *DB) FindByCheckinCode(ctx context.Context, day, code string) (_ *booking.Booking, err error) {
	defer wrap(&err, "FindByCheckinCode(%s)", day)
	var id int64
	err = db.db.QueryRowContext(ctx, `SELECT book_id FROM t_booking WHERE checkin_day = ? AND checkin_code = ?`, day, code).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "no booking of %s has check-in code %s", day, code)
	} else if err != nil {
		return nil, err
	}
	b, err := findBooking(ctx, db.db, id)
	if err == nil {
		b.CheckinCode = code
	}
	return b, err
}
