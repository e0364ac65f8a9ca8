package booking

import "time"

// NotificationKind names a message the customer receives (a WeChat subscribe
// message), each with its own template setting.
type NotificationKind string

const (
	NotifyConfirmed NotificationKind = "confirmed" // a payment confirmed the booking (a late one re-seated too)
	NotifyReminder  NotificationKind = "reminder"  // the start is within REMIND_BEFORE; once per booking
	NotifyWaitlist  NotificationKind = "waitlist"  // a freed seat was offered from the waitlist
	NotifyCancelled NotificationKind = "cancelled" // the salon cancelled the booking
)

// NotificationKinds lists every kind, in the order the settings name them.
var NotificationKinds = []NotificationKind{NotifyConfirmed, NotifyReminder, NotifyWaitlist, NotifyCancelled}

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
}
