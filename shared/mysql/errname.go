package mysql

import (
	"fmt"
	"time"
)

// wrap names the store's operation in the error it returns, for the log:
// every exported method's first statement is
//
//	defer wrap(&err, "ChangeStatus(book %d)", c.BookingID)
//
// and a failure reads "mysql.ChangeStatus(book 12): INVALID_STATE: ...". The
// error is wrapped with %w, so the chain is kept: booking.ErrorCode, errors.Is
// (context.DeadlineExceeded, driver.ErrBadConn) and errors.As (the driver's
// *MySQLError, booking.InTheWay), and so Classify, answer through it as before.
// It runs when the exported method returns, outside transact, so the deadlock
// retry and every check inside the store see the errors as they came. An
// exported method never calls another (it calls the unexported one beneath,
// findBooking, attachCustomers, migrateTo), so an error names one operation.
//
// The arguments name the operation's keys (a booking, slot, customer or staff
// id, a day, a range), never a secret or a person's data: no phone, name,
// openid, token, password, session or address. The customer never sees the
// text: an answer shows the code's message, the log the whole error
// (apigw.ErrorResponse).
func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("mysql.%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

// span spells a range of times [from, to) for wrap, in UTC as the store keeps
// them.
func span(from, to time.Time) string {
	return utc(from) + ".." + utc(to)
}

// utc spells a time for wrap.
func utc(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
