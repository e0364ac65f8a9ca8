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

// CheckinCode returns booking id's check-in code for shop day day (YYYY-MM-DD),
// giving it one the first time it is asked for that day: 8 random digits,
// unique among the day's bookings by the key uk_booking_checkin (a draw that
// meets a taken code is drawn again). Asked again, the same code; asked
// concurrently, the one that was written first. Whether the booking should have
// a code at all is the caller's rule (booking.HasCheckinCode).
func (db *DB) CheckinCode(ctx context.Context, id int64, day string) (string, error) {
	for try := 0; try < checkinCodeTries; try++ {
		var code sql.NullString
		err := db.db.QueryRowContext(ctx, `SELECT IF(checkin_day = ?, checkin_code, NULL) FROM t_booking WHERE book_id = ?`, day, id).Scan(&code)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return "", booking.Errorf(booking.ENOTFOUND, "booking %d not found", id)
		case err != nil:
			return "", err
		case code.Valid:
			return code.String, nil
		}
		fresh, err := newCheckinCode()
		if err != nil {
			return "", err
		}
		// Conditional on having no code for that day yet, so two concurrent
		// askers write one code and both read it back.
		_, err = db.db.ExecContext(ctx, `UPDATE t_booking SET checkin_day = ?, checkin_code = ?
			WHERE book_id = ? AND (checkin_day IS NULL OR checkin_day <> ?)`, day, fresh, id, day)
		if dupKey(err) != "uk_booking_checkin" && err != nil {
			return "", err
		}
		// Written, lost to a concurrent asker, or taken by another booking that
		// day: the read at the top of the loop tells.
	}
	return "", fmt.Errorf("mysql: no free check-in code for booking %d after %d draws", id, checkinCodeTries)
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
func (db *DB) FindByCheckinCode(ctx context.Context, day, code string) (*booking.Booking, error) {
	var id int64
	err := db.db.QueryRowContext(ctx, `SELECT book_id FROM t_booking WHERE checkin_day = ? AND checkin_code = ?`, day, code).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "no booking of %s has check-in code %s", day, code)
	} else if err != nil {
		return nil, err
	}
	b, err := db.FindBooking(ctx, id)
	if err == nil {
		b.CheckinCode = code
	}
	return b, err
}
