package mysql

import drv "github.com/go-sql-driver/mysql"

// The SQL spellings of domain rules, for the tests that check them against
// package booking.
const (
	BookableExprForTest       = bookableExpr
	OpenForBookingExprForTest = openForBookingExpr
	WalkInOpenExprForTest     = walkInOpenExpr
)

var SeatHoldingSQLForTest = seatHoldingSQL

// ReserveSQLForTest calls the reservation's stored procedure.
const ReserveSQLForTest = reserveSQL

// SplitStatementsForTest is how Migrate cuts a migration into statements.
var SplitStatementsForTest = splitStatements

// OpenConfigForTest opens a store on a driver configuration as given, without
// Config's checks: TestCharsetProof uses it to show what those checks prevent.
func OpenConfigForTest(cfg *drv.Config, opt Options) (*DB, error) { return openConfig(cfg, opt) }
