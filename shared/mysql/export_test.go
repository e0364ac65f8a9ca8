package mysql

// The SQL spellings of domain rules, for the tests that check them against
// package booking.
const (
	BookableExprForTest       = bookableExpr
	OpenForBookingExprForTest = openForBookingExpr
)

var SeatHoldingSQLForTest = seatHoldingSQL
