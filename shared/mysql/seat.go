package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

// The one way a booking takes seats and the one way it returns them. Every path
// that changes a slot's booked counter goes through these two (the seat-mode
// reservation through salon_reserve, which calls the same procedure on the
// server; a technician's cells by the same two functions from Go): the
// invariant booked = the rows of t_booking_slot of bookings holding a seat
// (shared/README.md, "Invariants") rests on nothing else writing either.

// errSeatNotTaken is salon_take_seat's refusal: the conditional UPDATE matched
// no row (the slot is full, or not as the rule wants it). Each caller tells the
// two apart its own way (whyNotTaken), in or after its transaction.
var errSeatNotTaken = errors.New("mysql: seat not taken")

// takeSeats takes seats for booking bookID, in tx, under rule (the
// transition's booking.SeatRule).
//
// Seat mode (span nil): one seat of each of slots, in slot_id order as given:
// per slot one CALL of salon_take_seat (migrations/0019), which writes the
// booking's t_booking_slot row and then runs the conditional
// `UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND booked <
// capacity AND <rule>`, the slot row locked last; when that changed no row it
// deletes the row again.
//
// A technician's booking (span set): the cells slots of span's technician,
// all of them or none, by takeCells: one conditional UPDATE over all of them,
// its rows changed compared with the cells asked for.
//
// The database re-checks the condition on the locked rows, so of any number
// of concurrent takers exactly as many succeed as there are seats, and no two
// bookings of one technician ever hold one cell. A seat not taken is
// errSeatNotTaken; the caller rolls back (what was taken before it stays
// taken in tx until then).
func takeSeats(ctx context.Context, tx *sql.Tx, bookID int64, slots []int64, span *booking.Span, rule booking.SeatRule, p booking.Policy) error {
	if rule == booking.SeatNoRule {
		return fmt.Errorf("mysql: booking %d: a seat taken without a rule", bookID)
	}
	if span != nil {
		return takeCells(ctx, tx, bookID, slots, *span, rule, p)
	}
	for _, slot := range slots {
		_, err := tx.ExecContext(ctx, takeSeatSQL, bookID, slot, int(rule), p.BookingWindowDays)
		if seatNotTaken(err) {
			return errSeatNotTaken
		} else if err != nil {
			return err
		}
	}
	return nil
}

// takeCells takes the cells of a technician's booking: first the booking's
// t_booking_slot rows, then one conditional UPDATE over the cells by their
// primary keys, every one of them open, free and of span's technician, the
// span's start allowed by rule (cellRuleSQL, the same on every row); the
// rows it changed compared with the cells asked for. Short is errSeatNotTaken,
// with the rows written and some cells maybe taken: the caller rolls the
// whole transaction back (every caller does; nothing of a refused booking
// stays).
//
// Why these statements: the cells' ids come from a read before (the cells
// of a technician and a start never change: they are laid once and never
// moved or deleted), and whether each can be taken is decided by the UPDATE
// on the locked rows alone, so the read decides nothing under concurrency.
// By primary key, InnoDB locks the cells and nothing between them: a
// booking of the adjacent cells never waits for this one, and two takers of
// overlapping spans lock their common cells in slot_id order (the IN list is
// read in index order), so they queue rather than deadlock. The rows go first,
// as in salon_take_seat, so the cells are locked only by the UPDATE and the
// COMMIT; they go at the end of t_booking_slot's primary key (the newest
// book_id), where a return, which deletes by the full key, locks no gap.
func takeCells(ctx context.Context, tx *sql.Tx, bookID int64, cells []int64, span booking.Span, rule booking.SeatRule, p booking.Policy) error {
	if len(cells) == 0 {
		return fmt.Errorf("mysql: booking %d: no cells to take", bookID)
	}
	when, whenArgs, err := cellRuleSQL(rule, span.Start, p)
	if err != nil {
		return err
	}
	rows := make([]any, 0, 2*len(cells))
	for _, c := range cells {
		rows = append(rows, bookID, c)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t_booking_slot (book_id, slot_id) VALUES `+repeatRows(`(?, ?)`, len(cells)), rows...); err != nil {
		return err
	}
	args := append(append(int64Args(cells), span.TechnicianID), whenArgs...)
	res, err := tx.ExecContext(ctx, `UPDATE t_slot SET booked = booked + 1
		WHERE slot_id IN (`+placeholders(len(cells))+`) AND technician_id = ? AND is_open = 1 AND booked < capacity AND `+when, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(len(cells)) {
		return errSeatNotTaken
	}
	return nil
}

// cellRuleSQL is booking.SeatRule.AllowsStart in SQL, by the database's
// clock: the rule judged on a span's first cell (its start to the start plus
// GRID_MINUTES), a condition with its arguments that holds on every row or
// none. TestTakeCellsFollowsTheRules checks the two agree.
func cellRuleSQL(rule booking.SeatRule, start time.Time, p booking.Policy) (string, []any, error) {
	firstEnd := start.Add(time.Duration(p.GridMinutes) * time.Minute).UTC()
	start = start.UTC()
	const notEnded = `CAST(? AS DATETIME(6)) > UTC_TIMESTAMP(6)`
	const inWindow = `CAST(? AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL ? DAY`
	switch rule {
	case booking.SeatIfOpenForBooking:
		return notEnded + ` AND ` + inWindow, []any{start, start, p.BookingWindowDays}, nil
	case booking.SeatIfOpenForWalkIn:
		return notEnded + ` AND ` + inWindow, []any{firstEnd, start, p.BookingWindowDays}, nil
	case booking.SeatIfNotEnded:
		return notEnded, []any{firstEnd}, nil
	}
	return "", nil, fmt.Errorf("mysql: seat rule %d has no form for a technician's cells", rule)
}

// whyCellsNotTaken tells, in the transaction whose takeCells came up short
// (before it rolls back), cells someone holds (SOLD_OUT) from cells closed
// or a start the rule no longer allows (SLOT_NOT_BOOKABLE): if every cell is
// open and the rule holds, the UPDATE can only have met a cell already
// booked. It reads the cells by a locking read (the UPDATE locked them
// already): the transaction's snapshot may be older than the cells.
func whyCellsNotTaken(ctx context.Context, tx *sql.Tx, cells []int64, span booking.Span, rule booking.SeatRule, p booking.Policy) error {
	when, whenArgs, err := cellRuleSQL(rule, span.Start, p)
	if err != nil {
		return err
	}
	var open int
	args := append(append(int64Args(cells), span.TechnicianID), whenArgs...)
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_slot WHERE slot_id IN (`+placeholders(len(cells))+`)
		AND technician_id = ? AND is_open = 1 AND `+when+` FOR UPDATE`, args...).Scan(&open); err != nil {
		return err
	}
	if open == len(cells) {
		return booking.Errorf(booking.ESOLDOUT, "technician %d: a cell of %s-%s taken meanwhile", span.TechnicianID,
			span.Start.Format(time.RFC3339), span.End.Format(time.RFC3339))
	}
	return booking.Errorf(booking.ESLOTNOTBOOKABLE, "technician %d: a cell of %s-%s closed, or the start passed, meanwhile",
		span.TechnicianID, span.Start.Format(time.RFC3339), span.End.Format(time.RFC3339))
}

// returnSeats returns the seats booking bookID holds of slots, in tx: booked
// - 1 for each and its t_booking_slot row deleted, each found by its row's
// full key, so the statements lock those rows and no gap beside them (under
// REPEATABLE READ a search by book_id alone takes next-key locks, and the gap
// after the newest booking's rows is where every new seat row goes).
//
// One slot (a seat-mode booking; a technician's of one cell): one CALL of
// salon_return_seats. Several (the cells of a technician's booking): each row
// deleted by its own statement through the primary key, then one UPDATE of
// the cells by their keys, each checked to have changed what it should; a row
// missing (a cell the booking does not hold) rolls back rather than let a
// counter drift. One DELETE per row, because MariaDB takes next-key locks for
// a DELETE of several keys (an IN list, even on the primary key: it blocked a
// new booking's rows in the gap after them, TestReturningSeatsLocksNoGap) and
// may read a one-key DELETE through idx_booking_slot_slot, whose next-key
// lock covers the gap before the next cell's rows; a DELETE of one primary
// key, named, locks that row alone. The UPDATE of several keys locks only
// them (a single-table UPDATE reads each key as a unique point).
func returnSeats(ctx context.Context, tx *sql.Tx, bookID int64, slots []int64) error {
	switch len(slots) {
	case 0:
		return fmt.Errorf("mysql: booking %d: no seat to return", bookID)
	case 1:
		_, err := tx.ExecContext(ctx, returnSeatsSQL, bookID, slots[0])
		return err
	}
	for _, slot := range slots {
		res, err := tx.ExecContext(ctx, `DELETE bs FROM t_booking_slot bs FORCE INDEX (PRIMARY) WHERE bs.book_id = ? AND bs.slot_id = ?`, bookID, slot)
		if err := allChanged(res, err, 1, bookID); err != nil {
			return err
		}
	}
	res, err := tx.ExecContext(ctx, `UPDATE t_slot SET booked = booked - 1 WHERE slot_id IN (`+placeholders(len(slots))+`)`, int64Args(slots)...)
	return allChanged(res, err, len(slots), bookID)
}

// allChanged is err, or an error when the statement changed other than want
// rows.
func allChanged(res sql.Result, err error, want int, bookID int64) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != int64(want) {
		return fmt.Errorf("mysql: booking %d: %d of %d seats returned (it does not hold the others)", bookID, n, want)
	}
	return nil
}

// int64Args are ids as query arguments.
func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// stringArgs is values as statement arguments.
func stringArgs(values []string) []any {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return args
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
