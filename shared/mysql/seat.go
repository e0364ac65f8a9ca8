package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

// The one way a booking takes seats and the one way it returns them. Every path
// that changes a slot's booked counter goes through these two (the reservation
// through salon_reserve, which calls the same procedure on the server): the
// invariant booked = the rows of t_booking_slot of bookings holding a seat
// (shared/README.md, "Invariants") rests on nothing else writing either.

// errSeatNotTaken is salon_take_seat's refusal: the conditional UPDATE matched
// no row (the slot is full, or not as the rule wants it). Each caller tells the
// two apart its own way (whyNotTaken), in or after its transaction.
var errSeatNotTaken = errors.New("mysql: seat not taken")

// takeSeats takes one seat of each of slots for booking bookID, in tx, under
// rule (the transition's booking.SeatRule), in slot_id order as given: per slot
// one CALL of salon_take_seat (migrations/0019), which writes the booking's
// t_booking_slot row and then runs the conditional
// `UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND booked <
// capacity AND <rule>`, the slot row locked last; when that changed no row it
// deletes the row again. The database re-checks the condition on the locked
// row, so of any number of concurrent takers exactly as many succeed as there
// are seats. A seat not taken is errSeatNotTaken; the caller rolls back (a
// seat taken before it stays taken in tx until then).
func takeSeats(ctx context.Context, tx *sql.Tx, bookID int64, slots []int64, rule booking.SeatRule, windowDays int) error {
	if rule == booking.SeatNoRule {
		return fmt.Errorf("mysql: booking %d: a seat taken without a rule", bookID)
	}
	for _, slot := range slots {
		_, err := tx.ExecContext(ctx, takeSeatSQL, bookID, slot, int(rule), windowDays)
		if seatNotTaken(err) {
			return errSeatNotTaken
		} else if err != nil {
			return err
		}
	}
	return nil
}

// returnSeats returns the seats booking bookID holds, in tx: booked - 1 for
// each of its t_booking_slot rows and the rows deleted, by one CALL of
// salon_return_seats. With slot only that slot's seat is returned, found by
// its row's full key, so the statement locks that row and no gap beside it
// (under REPEATABLE READ a search by book_id alone takes next-key locks, and
// the gap after the newest booking's rows is where every new seat row goes);
// 0 returns every seat the booking holds, for when bookings hold several
// cells. Today every caller names the one slot.
func returnSeats(ctx context.Context, tx *sql.Tx, bookID, slot int64) error {
	var only any
	if slot != 0 {
		only = slot
	}
	_, err := tx.ExecContext(ctx, returnSeatsSQL, bookID, only)
	return err
}

const (
	takeSeatSQL    = `CALL salon_take_seat(?, ?, ?, ?)`
	returnSeatsSQL = `CALL salon_return_seats(?, ?)`
)

// seatNotTaken: salon_take_seat's SIGNAL (SQLSTATE 45000, its message).
func seatNotTaken(err error) bool {
	var me *drv.MySQLError
	return errors.As(err, &me) && string(me.SQLState[:]) == "45000" && me.Message == "seat not taken"
}
