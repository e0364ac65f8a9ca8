package service

import (
	"context"
	"errors"
	"time"

	"salon/shared/booking"
)

// Notifier sends the outbox's notifications: a few right after a change
// (notifyNow), the rest in the release run.
type Notifier struct {
	*Common
	store NotifierStore
	// Messages sends customer notifications; nil (WX_APPID unset) leaves them
	// waiting in the outbox.
	Messages Messenger
}

// NotifierStore is what the Notifier asks of the store.
type NotifierStore interface {
	ClaimDueNotifications(ctx context.Context, lease time.Duration, limit int) ([]booking.Notification, time.Time, error)
	FinishNotification(ctx context.Context, id int64, status booking.NotificationStatus, lastError string) error
	RetryNotification(ctx context.Context, id int64, after time.Duration, lastError string) error
}

// Messenger sends one notification to its customer (WeChat subscribe messages,
// wired in package instance). It answers booking.ErrNoSubscription when WeChat says
// the customer has no subscription, booking.ErrNotificationOff when the kind has
// no template; any other error is worth a retry.
type Messenger interface {
	Send(ctx context.Context, n booking.Notification) error
}

const (
	// notifyNowBudget bounds the sending a function does right after a change:
	// the change is committed already, and the customer's answer should not wait
	// long for WeChat. What is left is sent by the next release run.
	notifyNowBudget = 2 * time.Second
	notifyNowLimit  = 5
	// notifyLease keeps a claimed notification away from other senders.
	notifyLease = time.Minute
)

// notifyNow sends a few due notifications right after a change, within a short
// budget. It never fails the change: errors stay in the outbox for the release
// run.
func (s *Notifier) notifyNow(ctx context.Context) {
	if s.Messages == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, notifyNowBudget)
	defer cancel()
	dl, _ := ctx.Deadline()
	s.sendNotifications(ctx, dl, notifyNowLimit)
}

// StaleNotification begins the last_error of a notification dropped as off
// because it was no longer true. Such a message may still have reached the
// customer once: when an earlier attempt was accepted by WeChat but the database
// lost its record, the next attempt finds the booking moved on and sends nothing.
const StaleNotification = "no longer true"

// sendNotifications sends due notifications, oldest due first, until none is due,
// limit were tried, or stopAt. One whose booking is no longer what it announces
// is dropped as off, unsent. Each is sent at most once on success; 43101 is
// recorded and never retried; errors no retry can mend are failed at once;
// other failures back off (1, 2, 4 ... 60 minutes) and give up 24 hours after
// the notification was written. It reports how many were sent.
func (s *Notifier) sendNotifications(ctx context.Context, stopAt time.Time, limit int) int {
	log := s.logger(ctx)
	sent, tried := 0, 0
	for tried < limit && time.Now().Before(stopAt) {
		batch, now, err := s.store.ClaimDueNotifications(ctx, notifyLease, min(20, limit-tried))
		if err != nil {
			log.Warn("notifications: claim failed; the next run sends them", "err", err.Error())
			return sent
		}
		if len(batch) == 0 {
			return sent
		}
		for _, n := range batch {
			tried++
			// The outcome is recorded even when the budget ran out meanwhile.
			rctx := context.WithoutCancel(ctx)
			if !n.StillTrue(now) {
				// Its booking moved on while it waited (an offer withdrawn, a
				// confirmed booking cancelled, a slot already under way): the
				// message would now be false, so it is never sent.
				if err := s.store.FinishNotification(rctx, n.ID, booking.NotificationOff, StaleNotification+": booking is "+n.BookingStatus.String()); err != nil {
					log.Warn("notifications: recording an outcome failed; the lease ends and it is tried again", "err", err.Error())
				}
				continue
			}
			sctx, cancel := context.WithDeadline(ctx, stopAt)
			err := s.Messages.Send(sctx, n)
			cancel()
			switch {
			case err == nil:
				sent++
				err = s.store.FinishNotification(rctx, n.ID, booking.NotificationSent, "")
			case errors.Is(err, booking.ErrNoSubscription):
				err = s.store.FinishNotification(rctx, n.ID, booking.NotificationRefused, err.Error())
			case errors.Is(err, booking.ErrNotificationOff):
				err = s.store.FinishNotification(rctx, n.ID, booking.NotificationOff, "")
			case errors.Is(err, booking.ErrUndeliverable):
				log.Error("notification refused by WeChat for good", "booking_id", n.BookingID, "kind", string(n.Kind), "err", err.Error())
				err = s.store.FinishNotification(rctx, n.ID, booking.NotificationFailed, err.Error())
			case time.Since(n.CreatedAt) >= booking.NotificationRetryFor:
				log.Error("notification given up after 24 hours", "booking_id", n.BookingID, "kind", string(n.Kind), "err", err.Error())
				err = s.store.FinishNotification(rctx, n.ID, booking.NotificationFailed, err.Error())
			default:
				log.Warn("notification failed; retried later", "booking_id", n.BookingID, "kind", string(n.Kind), "err", err.Error())
				err = s.store.RetryNotification(rctx, n.ID, retryBackoff(n.Attempts+1), err.Error())
			}
			if err != nil {
				log.Warn("notifications: recording an outcome failed; the lease ends and it is tried again", "err", err.Error())
			}
		}
	}
	return sent
}

// retryBackoff is the wait before the next attempt of a refund request, a
// refund query or a notification after `attempts` failures: 1, 2, 4 ... minutes,
// at most an hour, so one that keeps failing moves behind the others.
func retryBackoff(attempts int) time.Duration {
	const first, most = time.Minute, time.Hour
	d := first
	for i := 1; i < attempts && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}
