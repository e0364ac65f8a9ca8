package wechatbill

import (
	"errors"
	"time"
)

// ErrNoStatement is what the bill's fetcher answers when WeChat has no bill
// for the day (NO_STATEMENT_EXIST): nothing was taken or refunded that day.
var ErrNoStatement = errors.New("no trade bill for that day (NO_STATEMENT_EXIST)")

// The states of a bill date's reconciliation.
const (
	StatusMatched     = "matched"
	StatusDifferences = "differences"
	StatusFailed      = "failed"
	StatusNotYet      = "not_yet" // never run (nothing is stored)
)

// RetryDays is how long after its date a day that failed or showed
// differences is tried again: a difference may settle (a notification that was
// lost is queried by the release run), WeChat may come back.
const RetryDays = 3

// RetryEvery is how long the release run waits between two attempts at a day
// that failed or showed differences: once a day would leave a day that failed
// at 10:00 unknown until tomorrow, every minute would fetch the same bill 1,440
// times.
const RetryEvery = time.Hour

// DayResult is what the last attempt at a bill date found.
type DayResult struct {
	Date   string // yyyy-mm-dd, WeChat's day
	Status string
	Result
	Error       string // why it failed; for the log and the console, never the customer
	Attempts    int
	AttemptedAt time.Time
}

// Due reports whether the release run at now (the database's clock) should
// attempt date, given what is stored of it (nil: never attempted), and the
// time of day after which WeChat's bill of yesterday is ready (billAfter,
// from midnight in loc, the shop's time zone).
//
// A day is due once it is over and the shop's clock has passed billAfter on
// the day after it; a matched day never again; a failed day (WeChat down, a
// bad hash) at the next run; a day with differences again RetryEvery after
// its last attempt (they may settle: a lost notification queried), both while
// no more than RetryDays have passed since the date.
func Due(date string, stored *DayResult, now time.Time, loc *time.Location, billAfter time.Duration) bool {
	w, err := Day(date)
	if err != nil {
		return false
	}
	shopNow := now.In(loc)
	ready := time.Date(shopNow.Year(), shopNow.Month(), shopNow.Day(), 0, 0, 0, 0, loc).Add(billAfter)
	switch {
	case !now.After(w.End): // not over yet
		return false
	case now.After(w.End.AddDate(0, 0, RetryDays)):
		return false
	case stored == nil:
		// Yesterday's bill waits for billAfter; an older day's is ready.
		return now.After(w.End.AddDate(0, 0, 1)) || !now.Before(ready)
	case stored.Status == StatusMatched:
		return false
	case stored.Status == StatusFailed:
		return true
	}
	return !now.Before(stored.AttemptedAt.Add(RetryEvery))
}

// DueDates are the bill dates the release run considers at now: the
// RetryDays dates before today (WeChat's day), oldest first.
func DueDates(now time.Time) []string {
	today, _ := Day(DateOf(now))
	dates := make([]string, 0, RetryDays)
	for i := RetryDays; i >= 1; i-- {
		dates = append(dates, DateOf(today.Start.AddDate(0, 0, -i)))
	}
	return dates
}
