package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"salon/shared/booking"
	"salon/shared/wechatbill"
)

// Reconciliation matches WeChat Pay's daily trade bill with the money
// ledger's online rows: the release run once a day after BILL_AFTER (and again
// for a day that failed or showed differences, for three days), the owner on
// demand. The rules (the bill's format, the pairing, the day's edges, when a
// day is due) are package wechatbill's; this type fetches, reads and keeps.
type Reconciliation struct {
	*Common
	store ReconciliationStore
	// Bills fetches the bill (*wechatpay.Client); nil when WeChat Pay is not
	// configured, and then nothing is fetched.
	Bills Bills
	// RunToday lets the owner's run take today's bill so far: only in local
	// development (SALON_DEV=1), where the simulator serves it, so that a
	// matched day and a difference can be shown without waiting a day.
	RunToday bool
}

// Bills is WeChat Pay's trade bill of a date (yyyy-mm-dd, WeChat's day): the
// file's bytes, their SHA1 checked; wechatbill.ErrNoStatement for a day
// without trade.
type Bills interface {
	TradeBill(ctx context.Context, date string) ([]byte, error)
}

// ReconciliationStore is what the reconciliation asks of the store.
type ReconciliationStore interface {
	LedgerOnline(ctx context.Context, from, to time.Time) ([]wechatbill.LedgerRow, error)
	SaveBillDay(ctx context.Context, d wechatbill.DayResult) error
	BillDay(ctx context.Context, date string) (*wechatbill.DayResult, error)
	BillDays(ctx context.Context, dates []string) ([]wechatbill.DayResult, error)
	RecentBillDays(ctx context.Context, n int) ([]wechatbill.DayResult, error)
}

// Day is what is recorded of date: its last attempt, or status not_yet
// when it was never run. A date that is not yyyy-mm-dd is BAD_REQUEST.
func (s *Reconciliation) Day(ctx context.Context, date string) (*wechatbill.DayResult, error) {
	if _, err := allow(ctx, booking.ActionReconcile); err != nil {
		return nil, err
	}
	if _, err := billDay(date); err != nil {
		return nil, err
	}
	d, err := s.store.BillDay(ctx, date)
	if err != nil || d != nil {
		return d, err
	}
	return &wechatbill.DayResult{Date: date, Status: wechatbill.StatusNotYet}, nil
}

// billDay is date's bill window when date is a date of the contract
// (booking.ParseDate: YYYY-MM-DD in years 1000-9998), else BAD_REQUEST.
func billDay(date string) (wechatbill.Window, error) {
	if _, err := booking.ParseDate(date, time.UTC); err != nil {
		return wechatbill.Window{}, err
	}
	w, err := wechatbill.Day(date)
	if err != nil {
		return wechatbill.Window{}, booking.Errorf(booking.EBADREQUEST, "date %q is not yyyy-mm-dd", date)
	}
	return w, nil
}

// Recent is the last n days attempted, newest first (the console's health page).
func (s *Reconciliation) Recent(ctx context.Context, n int) ([]wechatbill.DayResult, error) {
	if _, err := allow(ctx, booking.ActionReconcile); err != nil {
		return nil, err
	}
	return s.store.RecentBillDays(ctx, n)
}

// ownerRunBudget bounds the owner's run's calls to WeChat Pay (up to three,
// each bounded by the call timeout too), so that the admin function answers
// before API Gateway's 8 s: a WeChat that does not answer is a failed day.
const ownerRunBudget = 5 * time.Second

// RunDay reconciles date now (the owner's POST), whatever is recorded of it.
// A date after today (WeChat's day, by the database's clock) is BAD_REQUEST;
// today is answered not_yet without a call: its bill does not exist before
// the day is over.
func (s *Reconciliation) RunDay(ctx context.Context, date string) (*wechatbill.DayResult, error) {
	if _, err := allow(ctx, booking.ActionReconcile); err != nil {
		return nil, err
	}
	w, err := billDay(date)
	if err != nil {
		return nil, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	today := wechatbill.DateOf(now)
	switch {
	case date > today:
		return nil, booking.Errorf(booking.EBADREQUEST, "date %s is in the future", date)
	case (!now.After(w.End) || date == today) && !(s.RunToday && date == today):
		return s.Day(ctx, date)
	case s.Bills == nil:
		return nil, booking.Errorf(booking.EINTERNAL, "WeChat Pay is not configured (WECHATPAY_MCHID): no bill to fetch")
	}
	ctx, cancel := context.WithTimeout(ctx, ownerRunBudget)
	defer cancel()
	if err := s.run(ctx, date, now); err != nil {
		return nil, err
	}
	return s.Day(context.WithoutCancel(ctx), date)
}

// RunDue reconciles the days that are due at the database's time
// (wechatbill.Due), oldest first, and reports how many it ran. It stops at
// the first error of the store; a bill that could not be had is recorded as
// failed, not returned.
func (s *Reconciliation) RunDue(ctx context.Context) (int, error) {
	if s.Bills == nil {
		return 0, nil
	}
	now, err := s.Now(ctx)
	if err != nil {
		return 0, err
	}
	return s.RunDueAt(ctx, now)
}

// RunDueAt is RunDue at now, which the release run takes from the database's
// clock and a test passes in (no sleeping until 10:00).
func (s *Reconciliation) RunDueAt(ctx context.Context, now time.Time) (int, error) {
	if s.Bills == nil {
		return 0, nil
	}
	dates := wechatbill.DueDates(now)
	// What is recorded of them, in one read: this runs every minute.
	recorded, err := s.store.BillDays(ctx, dates)
	if err != nil {
		return 0, err
	}
	byDate := make(map[string]*wechatbill.DayResult, len(recorded))
	for i := range recorded {
		byDate[recorded[i].Date] = &recorded[i]
	}
	ran := 0
	for _, date := range dates {
		if ctx.Err() != nil {
			break // the budget is spent: the rest waits for the next run
		}
		if !wechatbill.Due(date, byDate[date], now, s.Loc, s.Policy.BillAfter) {
			continue
		}
		if err := s.run(ctx, date, now); err != nil {
			return ran, err
		}
		ran++
	}
	return ran, nil
}

// recordTimeout bounds the recording of an attempt, which runs even when
// ctx's deadline (the release run's bill budget) was spent on a WeChat that
// did not answer: a failure is kept like any result.
const recordTimeout = 5 * time.Second

// run fetches, reads and matches date's bill and records what it found as
// attempted at now. A bill that could not be had or read is recorded as
// failed; only the store's errors are returned.
func (s *Reconciliation) run(ctx context.Context, date string, now time.Time) error {
	log := s.logger(ctx)
	w, _ := wechatbill.Day(date)
	record, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	lines, err := s.lines(ctx, date)
	if err != nil {
		log.Warn("reconciliation: the bill could not be had; tried again later", "date", date, "err", err.Error())
		return s.store.SaveBillDay(record, wechatbill.DayResult{Date: date, Status: wechatbill.StatusFailed, Error: err.Error(), AttemptedAt: now})
	}
	from, to := w.Query()
	rows, err := s.store.LedgerOnline(record, from, to)
	if err != nil {
		return err
	}
	res, needEarlier := wechatbill.Match(lines, rows, w, nil)
	if needEarlier {
		// A ledger row of the day's first minutes with no line here may be a
		// trade of the evening before: the day before's bill settles it.
		before := wechatbill.DateOf(w.Start.Add(-time.Hour))
		earlier, err := s.lines(ctx, before)
		if err != nil {
			err = fmt.Errorf("the bill of %s (for the trades at midnight): %w", before, err)
			log.Warn("reconciliation: the bill could not be had; tried again later", "date", date, "err", err.Error())
			return s.store.SaveBillDay(record, wechatbill.DayResult{Date: date, Status: wechatbill.StatusFailed, Error: err.Error(), AttemptedAt: now})
		}
		res, _ = wechatbill.Match(lines, rows, w, earlier)
	}
	d := wechatbill.DayResult{Date: date, Status: wechatbill.StatusMatched, Result: res, AttemptedAt: now}
	if len(res.Differences) > 0 {
		d.Status = wechatbill.StatusDifferences
		log.Warn("reconciliation: the bill and the ledger differ", "date", date, "differences", len(res.Differences), "billRows", res.BillRows, "matched", res.Matched)
	} else {
		log.Info("reconciliation: matched", "date", date, "billRows", res.BillRows)
	}
	return s.store.SaveBillDay(record, d)
}

// lines is date's bill, read: no lines for a day WeChat has no bill of.
func (s *Reconciliation) lines(ctx context.Context, date string) ([]wechatbill.Line, error) {
	body, err := s.Bills.TradeBill(ctx, date)
	if errors.Is(err, wechatbill.ErrNoStatement) {
		return []wechatbill.Line{}, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := wechatbill.Parse(body)
	if err != nil {
		return nil, err
	}
	return b.Lines, nil
}
