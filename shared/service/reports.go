package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Reports are the owner's figures (function admin and the console's 报表):
// the report of a range, the bookings' export and the day's takings so far.
// They only read; every one is the owner's (ActionReports), a staff member is
// refused.
type Reports struct {
	*Common
	store ReportsStore
}

// ReportsStore is what Reports ask of the store.
type ReportsStore interface {
	ReportFacts(ctx context.Context, r booking.ReportRange) (booking.ReportFacts, error)
	ReportMoney(ctx context.Context, r booking.ReportRange) ([]booking.ReportMoneySum, error)
	ReportLines(ctx context.Context, start, end time.Time) ([]booking.ReportLine, error)
	AttachCustomers(ctx context.Context, bs []*booking.Booking) error
}

// Report is the owner's report of the shop dates from to to (YYYY-MM-DD,
// both counted, at most booking.MaxReportDays): BAD_REQUEST for a range that
// is not one, FORBIDDEN for anyone but the owner.
func (s *Reports) Report(ctx context.Context, from, to string) (*booking.Report, error) {
	if _, err := allow(ctx, booking.ActionReports); err != nil {
		return nil, err
	}
	r, err := booking.ParseReportRange(from, to, s.Loc)
	if err != nil {
		return nil, err
	}
	facts, err := s.store.ReportFacts(ctx, r)
	if err != nil {
		return nil, err
	}
	rep := booking.BuildReport(r, facts)
	return &rep, nil
}

// Lines are the bookings whose slot starts in the range, by start then id,
// each with its customer and the money of its ledger rows (the CSV export),
// with the range they cover.
func (s *Reports) Lines(ctx context.Context, from, to string) (booking.ReportRange, []booking.ReportLine, error) {
	if _, err := allow(ctx, booking.ActionReports); err != nil {
		return booking.ReportRange{}, nil, err
	}
	r, err := booking.ParseReportRange(from, to, s.Loc)
	if err != nil {
		return booking.ReportRange{}, nil, err
	}
	lines, err := s.store.ReportLines(ctx, r.Start, r.End)
	if err != nil {
		return booking.ReportRange{}, nil, err
	}
	bs := make([]*booking.Booking, len(lines))
	for i := range lines {
		bs[i] = lines[i].B
	}
	if err := s.store.AttachCustomers(ctx, bs); err != nil {
		return booking.ReportRange{}, nil, err
	}
	return r, lines, nil
}

// DayTakings is the money that moved on one shop date (YYYY-MM-DD) so far:
// the day page's one line of takings. Only the money fields of the answer are
// set.
func (s *Reports) DayTakings(ctx context.Context, date string) (booking.ReportDay, error) {
	if _, err := allow(ctx, booking.ActionReports); err != nil {
		return booking.ReportDay{}, err
	}
	r, err := booking.ParseReportRange(date, date, s.Loc)
	if err != nil {
		return booking.ReportDay{}, err
	}
	money, err := s.store.ReportMoney(ctx, r)
	if err != nil {
		return booking.ReportDay{}, err
	}
	return booking.BuildReport(r, booking.ReportFacts{Money: money}).Days[0], nil
}
