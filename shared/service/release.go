package service

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"salon/shared/booking"
)

// ReleaseRun is the timer's run (function release): holds, no-shows, due
// refunds, waitlists, reminders, drift, the audit's shipping and retention.
type ReleaseRun struct {
	*Common
	store   ReleaseRunStore
	cashier *Cashier
	notify  *Notifier
	bills   *Reconciliation

	Shipper   AuditShipper // nil: the audit stays in MySQL only
	AuditOut  AuditWriter  // one line per shipped record (stdout on SCF); nil: none
	BatchSize int
	Lease     time.Duration
}

// ReleaseRunStore is what the release run asks of the store.
type ReleaseRunStore interface {
	DropStartedWaitlists(ctx context.Context) (int, error)
	EnqueueReminders(ctx context.Context, remindBefore time.Duration) (int, error)
	ClaimExpired(ctx context.Context, limit int, lease time.Duration) ([]*booking.Booking, error)
	DueNoShows(ctx context.Context, grace time.Duration, limit int) ([]booking.SeatedBooking, error)
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
	ClaimDueRefunds(ctx context.Context, queryAfter, lease time.Duration, limit int) ([]*booking.Booking, error)
	FindDrift(ctx context.Context) ([]booking.SlotDrift, error)
	RecordAudit(ctx context.Context, r booking.AuditRecord) error
	UnshippedAudit(ctx context.Context, limit int) ([]booking.AuditRecord, error)
	MarkShipped(ctx context.Context, ids []int64) error
	RecordReleaseRun(ctx context.Context, r booking.ReleaseRun) error
	DeleteShippedAudit(ctx context.Context, olderThan time.Duration, limit int) (int, error)
	DeleteFinishedNotifications(ctx context.Context, olderThan time.Duration, limit int) (int, error)
	DeleteOldSignIns(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// Summary is the release run's answer to the timer.
type Summary struct {
	Released  int `json:"released"`
	Confirmed int `json:"confirmed"`
	Refunded  int `json:"refunded"`
	Audited   int `json:"audited"`
	// NoShows counts confirmed bookings nobody checked in, moved to no_show.
	NoShows int `json:"noShows"`
	// RefundsSettled counts refunds a query found finished (their notification
	// never arrived).
	RefundsSettled int `json:"refundsSettled"`
	// Notified counts customer notifications sent.
	Notified int `json:"notified"`
	// AuditDeleted counts audit records deleted from MySQL: CLS accepted them
	// more than AUDIT_RETENTION_DAYS ago.
	AuditDeleted int `json:"auditDeleted"`
	// NotificationsDeleted counts finished notifications deleted, 30 days
	// after they were last due (booking.NotificationRetention).
	NotificationsDeleted int `json:"notificationsDeleted"`
	// SigninsDeleted counts sign-in records deleted (failed sign-ins and the
	// names tried), a day after they were made (booking.SignInRecordsKept).
	SigninsDeleted int `json:"signinsDeleted"`
}

// LogAttrs is the summary as the release run's log line carries it: every
// count under its name in the timer's answer (its JSON name), in the order of
// the answer. Both are derived from this struct's fields and tags, so a count
// added to the answer is in the log line too.
func (s Summary) LogAttrs() []any {
	v := reflect.ValueOf(s)
	attrs := make([]any, 0, 2*v.NumField())
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		attrs = append(attrs, name, v.Field(i).Interface())
	}
	return attrs
}

const (
	// budgetMargin is kept free before the invocation's deadline: WeChat calls are
	// cut off there, so the run still has time to check for drift, ship the audit
	// trail and answer before SCF kills it (a killed run is retried, and its
	// unshipped records would wait a minute longer).
	budgetMargin = 5 * time.Second
	// defaultBudget bounds a run whose context has no deadline (a local call).
	defaultBudget = 50 * time.Second
	// answerMargin is what shipping leaves of the deadline for the answer itself.
	answerMargin = time.Second
	// shipBatch is how many records one UploadLog request carries.
	shipBatch = 500
	// unshippedProbe caps the count of waiting records a log line reports.
	unshippedProbe = 1000
	// pruneBatch is how many rows one retention DELETE removes: a statement
	// of milliseconds that locks only those rows. pruneBatches bounds the
	// batches per table and run, so a backlog (the first run after an
	// upgrade, three years of audit) is worked off over many runs, up to
	// 10,000 rows a table a minute, never in one long statement.
	pruneBatch   = 500
	pruneBatches = 20
)

// SourceRelease is the CLS source of the records the release run ships.
const SourceRelease = "salon-release"

// releaseOutcome is what the release run did with one expired hold.
type releaseOutcome int

const (
	outcomeKept      releaseOutcome = iota // unknown at WeChat: the seat stays held for the next run
	outcomeReleased                        // 0 -> 4, the seat is free again
	outcomeConfirmed                       // WeChat says paid: 0 -> 1 instead
	outcomeRefunded                        // paid, but a cancel got there first: full refund
	outcomeLost                            // a notification or a cancel changed it meanwhile
)

// Release is one run of the timer: it releases expired holds, marks the no-shows
// that fell due, settles the refunds that are due (asks again, or queries),
// drops the waitlists of started slots, writes the reminders that fell due and
// sends the notifications waiting in the outbox, checks every future slot for
// drift, and ships the audit trail. Runs may overlap and repeat (SCF retries a failed run while the next
// ticks fire); each booking is leased to one run, and every change is conditional,
// so an overlap can neither release a booking twice nor lose a seat.
func (s *ReleaseRun) Release(ctx context.Context) (sum Summary, err error) {
	// The console's health page shows the last run: record it however it ends.
	started := time.Now()
	defer func() { s.recordRun(ctx, started, sum, err) }()
	log := s.logger(ctx)
	stopAt := time.Now().Add(defaultBudget)
	if dl, ok := ctx.Deadline(); ok {
		stopAt = dl.Add(-budgetMargin)
	}
	batch, lease := s.BatchSize, s.Lease
	if batch <= 0 {
		batch = 20
	}
	if lease <= 0 {
		lease = 50 * time.Second
	}
	// A claimed booking must stay leased for as long as this run may still act on
	// it; otherwise an overlapping run could close and query it at the same time.
	lease = max(lease, time.Until(stopAt)+budgetMargin)

	if s.cashier.Pay == nil {
		// Without WeChat nothing proves a hold unpaid: claiming would only fail one
		// booking at a time, so the run says it once and keeps every seat.
		log.Error("WeChat Pay is not configured (WECHATPAY_MCHID): expired holds are kept, not released")
	} else if err := s.releaseExpired(ctx, stopAt, batch, lease, &sum); err != nil {
		return sum, err
	}

	if err := s.markNoShows(ctx, stopAt, batch, &sum); err != nil {
		return sum, err
	}
	if s.cashier.Pay != nil {
		if err := s.settleDueRefunds(ctx, stopAt, batch, lease, &sum); err != nil {
			return sum, err
		}
	}
	if n, err := s.store.DropStartedWaitlists(ctx); err != nil {
		log.Warn("dropping the lines of started slots failed", "err", err.Error())
	} else if n > 0 {
		log.Info("waitlist entries of started slots dropped", "entries", n)
	}
	if _, err := s.store.EnqueueReminders(ctx, s.Policy.RemindBefore); err != nil {
		log.Warn("writing reminders failed; the next run writes them", "err", err.Error())
	}
	if s.notify.Messages != nil {
		sum.Notified = s.notify.sendNotifications(ctx, stopAt, 1000)
	}
	if err := s.Reconcile(ctx); err != nil {
		log.Error("reconciliation failed", "err", err.Error())
	}
	s.reconcileBills(ctx, stopAt)
	sum.Audited, _ = s.shipAudit(ctx, SourceRelease)
	s.prune(ctx, stopAt, &sum)
	return sum, nil
}

// billBudget bounds the release run's reconciliation with WeChat Pay's bills:
// a day's two calls (three at a day's edge) and its few statements. Each call
// is bounded by WeChat Pay's call timeout besides.
const billBudget = 15 * time.Second

// reconcileBills runs the reconciliation of the bill days that are due, within
// billBudget and the run's own budget. A failure is logged and never fails the
// run's other work: the day is tried again by a later run.
func (s *ReleaseRun) reconcileBills(ctx context.Context, stopAt time.Time) {
	if s.bills == nil || s.bills.Bills == nil || !time.Now().Before(stopAt) {
		return
	}
	deadline := time.Now().Add(billBudget)
	if stopAt.Before(deadline) {
		deadline = stopAt
	}
	bctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if n, err := s.bills.RunDue(bctx); err != nil {
		s.logger(ctx).Warn("reconciliation with WeChat Pay's bill failed; the next run tries again", "err", err.Error())
	} else if n > 0 {
		s.logger(ctx).Info("bill days reconciled", "days", n)
	}
}

// prune deletes what the database no longer needs to keep, in small batches
// until none is left, pruneBatches are done or the budget is spent: audit
// records CLS accepted AUDIT_RETENTION_DAYS ago (0 keeps them), finished
// notifications older than booking.NotificationRetention and sign-in records
// older than booking.SignInRecordsKept. A failure is logged
// and left for the next run; nothing depends on it.
func (s *ReleaseRun) prune(ctx context.Context, stopAt time.Time, sum *Summary) {
	log := s.logger(ctx)
	run := func(what string, del func(context.Context, time.Duration, int) (int, error), olderThan time.Duration, count *int) {
		for range pruneBatches {
			if time.Now().After(stopAt) {
				return
			}
			n, err := del(ctx, olderThan, pruneBatch)
			*count += n
			if err != nil {
				log.Warn("deleting old "+what+" failed; the next run goes on", "deleted", *count, "err", err.Error())
				return
			}
			if n < pruneBatch {
				return
			}
		}
	}
	if days := s.Policy.AuditRetentionDays; days > 0 {
		run("audit records", s.store.DeleteShippedAudit, time.Duration(days)*24*time.Hour, &sum.AuditDeleted)
	}
	run("notifications", s.store.DeleteFinishedNotifications, booking.NotificationRetention, &sum.NotificationsDeleted)
	run("sign-in records", s.store.DeleteOldSignIns, booking.SignInRecordsKept, &sum.SigninsDeleted)
}

// releaseExpired claims expired holds batch by batch and settles each, until none
// is left or the budget is spent. Claiming stops at stopAt: a hold claimed later
// could not be finished before the invocation ends.
func (s *ReleaseRun) releaseExpired(ctx context.Context, stopAt time.Time, batch int, lease time.Duration, sum *Summary) error {
	log := s.logger(ctx)
	for time.Now().Before(stopAt) {
		claimed, err := s.store.ClaimExpired(ctx, batch, lease)
		if err != nil {
			return err
		}
		for _, b := range claimed {
			if !time.Now().Before(stopAt) {
				// Still leased to this run; the lease ends with the invocation and
				// the next run claims it again.
				break
			}
			switch outcome, err := s.releaseOne(ctx, stopAt, b); {
			case err != nil:
				log.Warn("expired hold kept for the next run", "booking_id", b.ID, "err", err.Error())
			case outcome == outcomeReleased:
				sum.Released++
			case outcome == outcomeConfirmed:
				sum.Confirmed++
			case outcome == outcomeRefunded:
				sum.Refunded++
			}
		}
		if len(claimed) < batch {
			return nil
		}
	}
	return nil
}

// markNoShows moves confirmed bookings nobody checked in to no_show once their
// slot ended NO_SHOW_GRACE ago. Each change is conditional, so an overlapping run
// or the salon's check-in at the same moment wins or loses cleanly.
func (s *ReleaseRun) markNoShows(ctx context.Context, stopAt time.Time, batch int, sum *Summary) error {
	for time.Now().Before(stopAt) {
		ids, err := s.store.DueNoShows(ctx, s.Policy.NoShowGrace, batch)
		if err != nil {
			return err
		}
		changed := 0
		for _, d := range ids {
			// Decided on the slot the booking was read in (SlotID): one the salon
			// moved to a later slot since is not a no-show of that one.
			_, err := s.store.ChangeStatus(ctx, booking.Change{BookingID: d.BookingID, SlotID: d.SlotID, From: booking.StatusConfirmed,
				To: booking.StatusNoShow, Event: booking.EventNoShow, Actor: booking.ActorTimer,
				Reason: "时段结束 " + s.Policy.NoShowGrace.String() + " 后仍未签到"})
			switch {
			case err == nil:
				sum.NoShows++
				changed++
			case booking.IsCode(err, booking.EINVALIDSTATE):
				// Checked in, cancelled, marked by another run or moved to
				// another slot meanwhile.
			default:
				return err
			}
		}
		if len(ids) < batch || changed == 0 {
			return nil
		}
	}
	return nil
}

// settleDueRefunds takes up refunds in the order they fall due: requests WeChat
// has not accepted yet are asked again (the same out_refund_no, so never twice),
// and refunds processing for REFUND_QUERY_AFTER are queried. A failure backs that
// refund off behind the others, so the run goes on to the next one and one
// refund that keeps failing never holds up the rest.
func (s *ReleaseRun) settleDueRefunds(ctx context.Context, stopAt time.Time, batch int, lease time.Duration, sum *Summary) error {
	for time.Now().Before(stopAt) {
		due, err := s.store.ClaimDueRefunds(ctx, s.Policy.RefundQueryAfter, lease, batch)
		if err != nil {
			return err
		}
		for _, b := range due {
			if !time.Now().Before(stopAt) {
				return nil
			}
			rctx, cancel := context.WithDeadline(ctx, stopAt)
			switch b.Refund.Status {
			case booking.RefundPending:
				after, err := s.cashier.requestRefund(rctx, b)
				if err == nil && after.Refund != nil && after.Refund.Status != booking.RefundPending {
					sum.Refunded++
				}
			case booking.RefundProcessing:
				if settled, err := s.cashier.queryRefund(rctx, b); err == nil && settled {
					sum.RefundsSettled++
				}
			}
			cancel()
		}
		if len(due) < batch {
			return nil
		}
	}
	return nil
}

// releaseOne follows the close-then-query sequence (closeThenQuery) for one
// expired hold: the seat
// is freed only when WeChat's signed answer proves the order can no longer be
// paid; a paid order is confirmed instead; anything unknown keeps the seat for
// the next run. WeChat calls end at stopAt so that a
// slow WeChat cannot eat the time the run needs to ship the audit trail.
func (s *ReleaseRun) releaseOne(ctx context.Context, stopAt time.Time, b *booking.Booking) (releaseOutcome, error) {
	release := func(reason string) (releaseOutcome, error) {
		_, err := s.store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusExpired,
			Event: booking.EventRelease, Actor: booking.ActorTimer, Reason: reason})
		if booking.IsCode(err, booking.EINVALIDSTATE) {
			return outcomeLost, nil // a payment or a cancel got there first
		}
		if err != nil {
			return outcomeKept, err
		}
		return outcomeReleased, nil
	}
	if b.AmountFen == 0 {
		// An offer of a free slot nobody accepted: there is no WeChat order that
		// could have been paid.
		return release("免费座位未被接受，已过期")
	}
	wctx, cancel := context.WithDeadline(ctx, stopAt)
	defer cancel()
	fate, err := s.cashier.closeThenQuery(wctx, b)
	switch {
	case err != nil:
		return outcomeKept, err
	case fate.neverExisted:
		// Prepay never succeeded, so nothing can ever be paid for this booking.
		return release("已过期：没有微信订单")
	case fate.unpayable:
		return release("已过期：微信订单已关闭")
	case fate.mismatch != "":
		if err := s.cashier.rejectPayment(ctx, b, booking.ActorTimer, "微信查单", "", fate.mismatch); err != nil {
			return outcomeKept, err
		}
		s.logger(ctx).Error("paid order does not match its booking; seat kept", "booking_id", b.ID, "reason", fate.mismatch)
		return outcomeKept, errors.New("paid order does not match: " + fate.mismatch)
	case fate.paid != nil:
		out, err := s.cashier.settle(ctx, b, *fate.paid)
		switch {
		case err != nil:
			return outcomeKept, err
		case out == OutcomeConfirmed:
			return outcomeConfirmed, nil
		case out == OutcomeRefunded:
			return outcomeRefunded, nil
		}
		return outcomeLost, nil // the notification confirmed it first
	}
	// NOTPAY after a close (not yet effective), USERPAYING (paying right now),
	// PAYERROR or REVOKED (closed again by the next run's first step).
	return outcomeKept, errors.New("WeChat order is " + string(fate.state))
}

// Reconcile compares every future slot's counter with its bookings and reports
// each drift as an audit record and an error log line. It never repairs: a drift
// is a bug to find, and "fixing" it could give a paid seat away. A drift that
// persists is reported again by every run until someone looks.
func (s *ReleaseRun) Reconcile(ctx context.Context) error {
	drifts, err := s.store.FindDrift(ctx)
	if err != nil {
		return err
	}
	for _, d := range drifts {
		s.logger(ctx).Error("slot drift", "slot_id", d.SlotID, "booked", d.Booked, "holding", d.Holding, "capacity", d.Capacity, "overlaps", d.Overlaps)
		if err := s.store.RecordAudit(ctx, booking.AuditRecord{SlotID: d.SlotID, Event: booking.EventDrift, FromStatus: -1, ToStatus: -1,
			Actor: booking.ActorSystem, Reason: DriftReason(d)}); err != nil {
			return err
		}
	}
	return nil
}

// DriftReason describes a drift the same way in the audit trail and in the
// reconciliation command's output.
func DriftReason(d booking.SlotDrift) string {
	if d.Overlaps != 0 {
		return "overlaps slot " + strconv.FormatInt(d.Overlaps, 10) + " of the same technician (booked=" + strconv.Itoa(d.Booked) + ")"
	}
	return "booked=" + strconv.Itoa(d.Booked) + " holding=" + strconv.Itoa(d.Holding) + " capacity=" + strconv.Itoa(d.Capacity)
}

// ShipAudit sends unshipped audit records to CLS, oldest first, and marks them
// shipped once CLS accepted them. It reports how many it shipped. When CLS is not
// configured or down, the records wait in MySQL and one log line says so; a crash
// between the upload and the mark sends them again with the same audit_id.
func (s *ReleaseRun) ShipAudit(ctx context.Context) (int, error) {
	return s.shipAudit(ctx, SourceRelease)
}

func (s *ReleaseRun) shipAudit(ctx context.Context, source string) (int, error) {
	log := s.logger(ctx)
	if s.Shipper == nil {
		waiting, err := s.store.UnshippedAudit(ctx, unshippedProbe)
		if err != nil {
			log.Warn("CLS is not configured (CLS_ENDPOINT, CLS_TOPIC_ID); the audit trail stays in MySQL", "err", err.Error())
			return 0, err
		}
		log.Info("CLS is not configured (CLS_ENDPOINT, CLS_TOPIC_ID); the audit trail stays in MySQL", "unshipped", len(waiting))
		return 0, nil
	}
	// Shipping ends a moment before the deadline so the run can still answer.
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-answerMargin))
		defer cancel()
	}
	shipped := 0
	for {
		recs, err := s.store.UnshippedAudit(ctx, shipBatch)
		if err == nil && len(recs) > 0 {
			err = s.Shipper.Ship(ctx, source, recs)
		}
		if err != nil {
			// Counted outside the (possibly spent) budget, briefly: the line is for
			// whoever watches the backlog grow while CLS is down.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			waiting, _ := s.store.UnshippedAudit(cctx, unshippedProbe)
			cancel()
			log.Warn("audit shipping to CLS failed; the records wait in MySQL for the next run",
				"shipped", shipped, "unshipped", len(waiting), "err", err.Error())
			return shipped, err
		}
		if len(recs) == 0 {
			return shipped, nil
		}
		// The stdout copy is written once CLS has the record, so the function's log
		// topic holds each shipped record once (twice only after a crash, with the
		// same audit_id), however long CLS was down.
		if s.AuditOut != nil {
			for _, r := range recs {
				s.AuditOut.WriteAudit(r)
			}
		}
		ids := make([]int64, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		if err := s.store.MarkShipped(ctx, ids); err != nil {
			log.Warn("marking audit records shipped failed; they will be shipped again", "err", err.Error())
			return shipped, err
		}
		shipped += len(recs)
		if len(recs) < shipBatch {
			return shipped, nil
		}
	}
}

// recordRun writes the release run's summary for the console. It runs after the
// run, outside its (possibly spent) budget, and a failure to record is only
// logged: the run's work is done either way.
func (s *ReleaseRun) recordRun(ctx context.Context, started time.Time, sum Summary, runErr error) {
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
