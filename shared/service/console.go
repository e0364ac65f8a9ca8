package service

import (
	"context"
	"encoding/json"
	"time"

	"salon/shared/booking"
)

// The salon console's reads. The console's changes (check-in, cancel, the
// schedule, slot changes) are the same service calls the JSON admin API makes;
// these only read, so that the console needs no second door to the store.

// healthListLimit bounds the refunds the health page lists by number.
const healthListLimit = 20

// BookingWithHistory returns one booking, for the salon, with its whole audit
// trail, oldest first.
func (s *Service) BookingWithHistory(ctx context.Context, id int64) (*booking.Booking, []booking.AuditRecord, error) {
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

// SlotStarts returns when each of these slots starts, for naming them by
// their times; a slot that is gone is left out. Each is read by its key, once.
func (s *Service) SlotStarts(ctx context.Context, ids []int64) (map[int64]time.Time, error) {
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
func (s *Service) LastPersonChanges(ctx context.Context, bs []*booking.Booking) (map[int64]booking.AuditRecord, error) {
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
func (s *Service) AuditTrail(ctx context.Context, from, to time.Time, event string, limit int) ([]booking.AuditRecord, []string, error) {
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
func (s *Service) Health(ctx context.Context) (*Health, error) {
	h := &Health{CLSConfigured: s.Shipper != nil}
	var err error
	if h.Now, err = s.store.Now(ctx); err != nil {
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
	h.MessagesConfigured = s.Messages != nil
	return h, nil
}

// recordRun writes the release run's summary for the console. It runs after the
// run, outside its (possibly spent) budget, and a failure to record is only
// logged: the run's work is done either way.
func (s *Service) recordRun(ctx context.Context, started time.Time, sum Summary, runErr error) {
	body, err := json.Marshal(sum)
	if err != nil {
		s.logger(ctx).Error("release run summary", "err", err.Error())
		return
	}
	r := booking.ReleaseRun{StartedAt: started, FinishedAt: time.Now(), Summary: string(body)}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.store.RecordReleaseRun(rctx, r); err != nil {
		s.logger(ctx).Warn("recording the release run for the console failed", "err", err.Error())
	}
}

// EndConsoleSession records a console sign-out, so the session's cookie is
// refused from now on even where a copy of it survives.
func (s *Service) EndConsoleSession(ctx context.Context, sessionID string, expiresAt time.Time) error {
	return s.store.EndConsoleSession(ctx, sessionID, expiresAt)
}
