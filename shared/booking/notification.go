package booking

import (
	"errors"
	"time"
)

// Outcomes of sending a notification that end its retries.
var (
	// ErrNoSubscription: the customer has not subscribed (or used up the
	// subscription); WeChat will refuse every retry, so none is made.
	ErrNoSubscription = errors.New("the customer has no subscription for this message")
	// ErrNotificationOff: no template is configured for this kind.
	ErrNotificationOff = errors.New("no template is configured for this kind of message")
	// ErrUndeliverable: WeChat refused the message for a reason no retry can
	// mend (a wrong openid, template or page, a keyword value it rejects), so it
	// is recorded as failed at once instead of being retried for 24 hours.
	ErrUndeliverable = errors.New("WeChat refused the message for good")
)

// NotificationKind names a message the customer receives (a WeChat subscribe
// message), each with its own template setting.
type NotificationKind string

const (
	NotifyConfirmed NotificationKind = "confirmed" // a payment confirmed the booking (a late one re-seated too)
	NotifyReminder  NotificationKind = "reminder"  // the start is within REMIND_BEFORE; once per booking
	NotifyWaitlist  NotificationKind = "waitlist"  // a freed seat was offered from the waitlist
	NotifyCancelled NotificationKind = "cancelled" // the salon cancelled the booking
	// NotifyRescheduled: the salon moved the booking to another slot; the
	// template's placeholders give the new time.
	NotifyRescheduled NotificationKind = "rescheduled"
)

// NotificationKinds lists every kind, in the order the settings name them.
var NotificationKinds = []NotificationKind{NotifyConfirmed, NotifyReminder, NotifyWaitlist, NotifyCancelled, NotifyRescheduled}

// Notification is one message in the outbox: written in the same transaction as
// the change that causes it, sent afterwards by whoever has time.
type Notification struct {
	ID        int64
	BookingID int64
	Kind      NotificationKind
	OpenID    string
	Attempts  int
	CreatedAt time.Time
	// The booking's facts the message's template may name.
	StartAt, EndAt time.Time
	AmountFen      int64
	// BookingStatus is the booking's status when the notification was claimed:
	// a message is sent only while it is still true (see StillTrue).
	BookingStatus Status
}

// announces is the status a notification's booking must still be in for the
// message to be true: "confirmed" and "reminder" speak of a confirmed booking,
// "waitlist" of an offer still waiting to be accepted, "cancelled" of a
// cancelled one, "rescheduled" of a booking still confirmed (in its new slot).
var announces = map[NotificationKind]Status{
	NotifyConfirmed:   StatusConfirmed,
	NotifyReminder:    StatusConfirmed,
	NotifyWaitlist:    StatusPending,
	NotifyCancelled:   StatusCancelled,
	NotifyRescheduled: StatusConfirmed,
}

// beforeStartOnly are the kinds that mean nothing once the slot has started: a
// reminder of an appointment under way, an offer of a seat nobody can take.
var beforeStartOnly = map[NotificationKind]bool{NotifyReminder: true, NotifyWaitlist: true}

// StillTrue reports whether the notification still says something true at now
// (the database's clock): its booking is still in the state it announces and,
// for reminders and offers, the slot has not started. A message that is no
// longer true (a "confirmed" for a booking cancelled meanwhile, an offer
// withdrawn) is dropped as off, never sent late.
func (n Notification) StillTrue(now time.Time) bool {
	want, ok := announces[n.Kind]
	if !ok || n.BookingStatus != want {
		return false
	}
	return !beforeStartOnly[n.Kind] || now.Before(n.StartAt)
}

// NotificationStatus is where a notification stands in the outbox.
type NotificationStatus string

const (
	NotificationPending NotificationStatus = "pending" // to be sent (again) at its due time
	NotificationSent    NotificationStatus = "sent"
	NotificationRefused NotificationStatus = "refused" // the customer has no subscription (43101): never retried
	NotificationFailed  NotificationStatus = "failed"  // still failing 24 hours after it was written
	NotificationOff     NotificationStatus = "off"     // its kind has no template configured
)

// NotificationRetryFor is how long a failing notification is retried.
const NotificationRetryFor = 24 * time.Hour
