package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

// Server errors that mean the database refused the connection or dropped it,
// not that the statement was wrong.
var unavailableErrNo = map[uint16]bool{
	1040: true, // ER_CON_COUNT_ERROR: Too many connections (max_connections)
	1053: true, // ER_SERVER_SHUTDOWN: the server is shutting down
	1129: true, // ER_HOST_IS_BLOCKED: too many connection errors from this host
	1203: true, // ER_TOO_MANY_USER_CONNECTIONS: max_user_connections
	1226: true, // ER_USER_LIMIT_REACHED: the account's max_user_connections resource
	1317: true, // ER_QUERY_INTERRUPTED: the statement was killed (a shutdown)
	1927: true, // ER_CONNECTION_KILLED (MariaDB): the connection was killed
	4031: true, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8): disconnected for inactivity
	// Contention the store retries first (retryDeadlock); if it persists, the
	// transaction was rolled back whole and the client may simply try again.
	1205: true, // ER_LOCK_WAIT_TIMEOUT
	1213: true, // ER_LOCK_DEADLOCK
	1467: true, // ER_AUTOINC_READ_FAILED: the engine could not hand out an id just now
}

// Classify gives a failure to reach the database its code: an error that says
// the database is down, restarting, unreachable, out of connections, or dropped
// the connection mid-statement becomes UNAVAILABLE (503 with Retry-After), with
// the driver's error kept in the chain for the log. Any other error, and every
// error that already carries a code of its own, is returned as it is.
//
// This is the one place that knows which driver errors mean "the database did
// not answer". Nothing half-written stays behind such an error: every write of
// the store is one transaction, and a transaction whose connection is lost is
// rolled back by the server; a COMMIT whose answer was lost is the one case
// where the change may have happened, and a retry sees it (an idempotency key
// names the same booking, a status change finds its condition no longer holds).
func Classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	var coded *booking.Error
	if errors.As(err, &coded) && coded.Code != booking.EINTERNAL {
		return err
	}
	return errors.Join(booking.Errorf(booking.EUNAVAILABLE, "database unavailable"), err)
}

func unavailable(err error) bool {
	var me *drv.MySQLError
	if errors.As(err, &me) {
		return unavailableErrNo[me.Number]
	}
	switch {
	case errors.Is(err, driver.ErrBadConn), // database/sql gave up on fresh connections
		errors.Is(err, drv.ErrInvalidConn), // the connection broke mid-statement
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		// The database did not answer within the invocation's time (a server
		// that accepts TCP but never completes the handshake, a full backlog).
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) // dial failures, i/o timeouts on connect or read
}

// Classify is Classify, as the service asks its store.
func (db *DB) Classify(err error) error { return Classify(err) }
