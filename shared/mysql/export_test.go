package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

// The SQL spellings of domain rules, for the tests that check them against
// package booking.
const (
	BookableExprForTest       = bookableExpr
	OpenForBookingExprForTest = openForBookingExpr
	WalkInOpenExprForTest     = walkInOpenExpr
)

var SeatHoldingSQLForTest = seatHoldingSQL

// TakeSeatsForTest and ReturnSeatsForTest are the one seat-taking and the one
// seat-returning function, for the tests that hold them to the domain's rules.
func TakeSeatsForTest(ctx context.Context, tx *sql.Tx, bookID int64, slots []int64, rule booking.SeatRule, windowDays int) (taken bool, err error) {
	err = takeSeats(ctx, tx, bookID, slots, nil, rule, booking.Policy{BookingWindowDays: windowDays})
	if errors.Is(err, errSeatNotTaken) {
		return false, nil
	}
	return err == nil, err
}

func ReturnSeatsForTest(ctx context.Context, tx *sql.Tx, bookID int64, slots ...int64) error {
	return returnSeats(ctx, tx, bookID, slots)
}

// TakeCellsForTest is the one seat-taking function for a technician's cells.
func TakeCellsForTest(ctx context.Context, tx *sql.Tx, bookID int64, span booking.Span, rule booking.SeatRule, p booking.Policy) (taken bool, err error) {
	err = takeSeats(ctx, tx, bookID, span.Cells, &span, rule, p)
	if errors.Is(err, errSeatNotTaken) {
		return false, nil
	}
	return err == nil, err
}

// ReserveSQLForTest calls the reservation's stored procedure.
const ReserveSQLForTest = reserveSQL

// SplitStatementsForTest is how Migrate cuts a migration into statements.
var SplitStatementsForTest = splitStatements

// OpenConfigForTest opens a store on a driver configuration as given, without
// Config's checks: TestCharsetProof uses it to show what those checks prevent.
func OpenConfigForTest(cfg *drv.Config, opt Options) (*DB, error) { return openConfig(cfg, opt) }

// OpenRecordingForTest opens a store on dsn (through Config, like Open) whose
// connections hand every statement they send, with its arguments, to record
// first: the plan test explains what the store really runs.
func OpenRecordingForTest(dsn string, opt Options, record func(query string, args []driver.NamedValue)) (*DB, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := drv.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return openConnector(recordingConnector{conn, record}, opt), nil
}

type recordingConnector struct {
	driver.Connector
	record func(string, []driver.NamedValue)
}

func (c recordingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{conn.(mysqlConn), c.record}, nil
}

// mysqlConn is what the driver's connection implements and database/sql uses.
type mysqlConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type recordingConn struct {
	mysqlConn
	record func(string, []driver.NamedValue)
}

func (c *recordingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.record(q, args)
	return c.mysqlConn.ExecContext(ctx, q, args)
}

func (c *recordingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.record(q, args)
	return c.mysqlConn.QueryContext(ctx, q, args)
}

func (c *recordingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.record(q, nil)
	return c.mysqlConn.PrepareContext(ctx, q)
}
