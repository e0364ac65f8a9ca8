package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// ConsoleReads are the salon's reads (function admin and the console): the
// day's bookings, a booking's history, customers, the audit and the health
// page. The console's changes (check-in, cancel, the schedule, slot changes)
// are the same use cases the JSON admin API calls; these only read, so that the
// console needs no second door to the store.
type ConsoleReads struct {
	*Common
	store   ConsoleReadsStore
	notify  *Notifier
	release *ReleaseRun
}

// ConsoleReadsStore is what ConsoleReads ask of the store.
type ConsoleReadsStore interface {
	ListSlotBookings(ctx context.Context, from, to time.Time) ([]*booking.Booking, error)
	TechnicianDayCells(ctx context.Context, technician int64, from, to time.Time) ([]booking.DayCell, error)
	AttachCustomers(ctx context.Context, bs []*booking.Booking) error
	CustomerHistory(ctx context.Context, id int64, limit int) (*booking.Customer, []*booking.Booking, error)
	SearchBookings(ctx context.Context, s booking.CustomerSearch, limit int) ([]*booking.Booking, error)
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
	BookingAudit(ctx context.Context, bookingID int64) ([]booking.AuditRecord, error)
	BookingLedger(ctx context.Context, bookingID int64) ([]booking.Money, error)
	FindSlot(ctx context.Context, id int64) (*booking.Slot, error)
	AuditOfBookings(ctx context.Context, bookingIDs []int64) ([]booking.AuditRecord, error)
	ListAudit(ctx context.Context, from, to time.Time, event string, limit int) ([]booking.AuditRecord, error)
	AuditEvents(ctx context.Context, from, to time.Time) ([]string, error)
	LastReleaseRun(ctx context.Context) (*booking.ReleaseRun, error)
	UnshippedAuditBacklog(ctx context.Context) (int, *time.Time, error)
	CountRefunds(ctx context.Context, states ...booking.RefundStatus) (map[booking.RefundStatus]int, error)
	ListRefunds(ctx context.Context, limit int, states ...booking.RefundStatus) ([]*booking.Booking, error)
	FindDrift(ctx context.Context) ([]booking.SlotDrift, error)
	CountRetryingNotifications(ctx context.Context) (int, error)
	NotificationCounts(ctx context.Context, since time.Time, statuses ...booking.NotificationStatus) (map[booking.NotificationStatus]int, error)
}

// DayBookings returns the bookings of the slots starting in [from, to), for the
// salon's day view.
func (s *ConsoleReads) DayBookings(ctx context.Context, from, to time.Time) ([]*booking.Booking, error) {
	return s.store.ListSlotBookings(ctx, from, to)
}

// TechnicianDay returns a technician's cells starting in [from, to), the
// shop day, earliest first, each with the booking holding it: the salon's
// calendar of that day by technician.
func (s *ConsoleReads) TechnicianDay(ctx context.Context, technician int64, from, to time.Time) ([]booking.DayCell, error) {
	return s.store.TechnicianDayCells(ctx, technician, from, to)
}

// WithCustomers fills in the customer of each booking for the salon's views:
// name, phone, visits, no-shows in 90 days, the salon's note.
func (s *ConsoleReads) WithCustomers(ctx context.Context, bs ...*booking.Booking) error {
	return s.store.AttachCustomers(ctx, bs)
}

// CustomerHistory returns a customer, as the salon sees her, with her bookings,
// newest first, at most limit.
func (s *ConsoleReads) CustomerHistory(ctx context.Context, id int64, limit int) (*booking.Customer, []*booking.Booking, error) {
	return s.store.CustomerHistory(ctx, id, limit)
}

// SearchBookings returns, for the salon, the bookings of the customers a
// search names (a phone number in full or its last four digits, the start of a
// name), newest first, at most limit, each with its customer.
func (s *ConsoleReads) SearchBookings(ctx context.Context, q booking.CustomerSearch, limit int) ([]*booking.Booking, error) {
	return s.store.SearchBookings(ctx, q, limit)
}

// healthListLimit bounds the refunds the health page lists by number.
const healthListLimit = 20

// Booking returns one booking, for the salon, without its audit trail: what a
// page needs to name it (its customer, its time).
func (s *ConsoleReads) Booking(ctx context.Context, id int64) (*booking.Booking, error) {
	return s.store.FindBooking(ctx, id)
}

// BookingWithHistory returns one booking, for the salon, with its whole audit
// trail, oldest first.
func (s *ConsoleReads) BookingWithHistory(ctx context.Context, id int64) (*booking.Booking, []booking.AuditRecord, error) {
	b, err := s.store.FindBooking(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	trail, err := s.store.BookingAudit(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return b, trail, nil
}

// BookingLedger returns a booking's rows of the money ledger, oldest first:
// what was paid online and in the shop, refunded and kept.
func (s *ConsoleReads) BookingLedger(ctx context.Context, id int64) ([]booking.Money, error) {
	return s.store.BookingLedger(ctx, id)
}

// SlotStarts returns when each of these slots starts, for naming them by
// their times; a slot that is gone is left out. Each is read by its key, once.
func (s *ConsoleReads) SlotStarts(ctx context.Context, ids []int64) (map[int64]time.Time, error) {
	starts := map[int64]time.Time{}
	for _, id := range ids {
		if _, done := starts[id]; done || id <= 0 {
			continue
		}
		sl, err := s.store.FindSlot(ctx, id)
		if booking.IsCode(err, booking.ENOTFOUND) {
			continue
		}
		if err != nil {
			return starts, err
		}
		starts[id] = sl.StartAt
	}
	return starts, nil
}

// LastPersonChanges is, for each of these bookings that a person at the salon
// changed (an account or the built-in owner: booking.IsPersonActor), the audit
// record of her latest change: who checked her in, took the walk-in, moved or
// cancelled it. A day's list shows it.
func (s *ConsoleReads) LastPersonChanges(ctx context.Context, bs []*booking.Booking) (map[int64]booking.AuditRecord, error) {
	ids := make([]int64, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	recs, err := s.store.AuditOfBookings(ctx, ids)
	if err != nil {
		return nil, err
	}
	last := map[int64]booking.AuditRecord{}
	for _, r := range recs { // oldest first: a later one replaces
		if booking.IsPersonActor(r.Actor) {
			last[r.BookingID] = r
		}
	}
	return last, nil
}

// AuditTrail returns the audit records written in [from, to), newest first, at
// most limit; event "" means all of them. It also answers which events occur in
// that period, for the filter.
func (s *ConsoleReads) AuditTrail(ctx context.Context, from, to time.Time, event string, limit int) ([]booking.AuditRecord, []string, error) {
	recs, err := s.store.ListAudit(ctx, from, to, event, limit)
	if err != nil {
		return nil, nil, err
	}
	events, err := s.store.AuditEvents(ctx, from, to)
	if err != nil {
		return nil, nil, err
	}
	return recs, events, nil
}

// Health is what the salon console's health page shows: is the timer running,
// does the audit trail reach CLS, is money stuck, do the seat counters agree.
type Health struct {
	Now             time.Time           // the database's clock
	LastRun         *booking.ReleaseRun // nil: no release run recorded yet
	UnshippedAudit  int
	OldestUnshipped *time.Time
	CLSConfigured   bool
	RefundsOpen     int                // requested or not yet accepted by WeChat (pending, processing)
	RefundsFailed   int                // WeChat closed them or they went abnormal: the salon must act
	OpenRefunds     []*booking.Booking // up to 20 of RefundsOpen, oldest first
	FailedRefunds   []*booking.Booking // up to 20 of RefundsFailed
	Drift           []booking.SlotDrift
	// Notifications: failing ones are still retried; failed ones gave up after
	// 24 hours and refused ones met a customer without a subscription, both
	// within booking.NotificationRetention.
	NotificationsFailing, NotificationsFailed, NotificationsRefused int
	MessagesConfigured                                              bool
}

// Health gathers the health page. Reconciliation runs live, so the page shows
// the counters as they are now, not as the last release run found them.
func (s *ConsoleReads) Health(ctx context.Context) (*Health, error) {
	h := &Health{CLSConfigured: s.release.Shipper != nil}
	var err error
	if h.Now, err = s.Now(ctx); err != nil {
		return nil, err
	}
	if h.LastRun, err = s.store.LastReleaseRun(ctx); err != nil {
		return nil, err
	}
	if h.UnshippedAudit, h.OldestUnshipped, err = s.store.UnshippedAuditBacklog(ctx); err != nil {
		return nil, err
	}
	counts, err := s.store.CountRefunds(ctx, booking.RefundPending, booking.RefundProcessing, booking.RefundFailed)
	if err != nil {
		return nil, err
	}
	h.RefundsOpen = counts[booking.RefundPending] + counts[booking.RefundProcessing]
	h.RefundsFailed = counts[booking.RefundFailed]
	if h.OpenRefunds, err = s.store.ListRefunds(ctx, healthListLimit, booking.RefundPending, booking.RefundProcessing); err != nil {
		return nil, err
	}
	if h.FailedRefunds, err = s.store.ListRefunds(ctx, healthListLimit, booking.RefundFailed); err != nil {
		return nil, err
	}
	if h.Drift, err = s.store.FindDrift(ctx); err != nil {
		return nil, err
	}
	if h.NotificationsFailing, err = s.store.CountRetryingNotifications(ctx); err != nil {
		return nil, err
	}
	// Finished notifications are kept booking.NotificationRetention (the
	// release run deletes older ones): the page counts that same stretch.
	nc, err := s.store.NotificationCounts(ctx, h.Now.Add(-booking.NotificationRetention), booking.NotificationFailed, booking.NotificationRefused)
	if err != nil {
		return nil, err
	}
	h.NotificationsFailed, h.NotificationsRefused = nc[booking.NotificationFailed], nc[booking.NotificationRefused]
	h.MessagesConfigured = s.notify.Messages != nil
	return h, nil
}
