package booking

import "time"

// Audit events. Each status change writes exactly one record in the same
// transaction as the change; the other events record decisions that change no
// status but that the salon must be able to look back on.
const (
	EventReserve       = "reserve"               // a booking was created (-> 0, or -> 1 for a free slot)
	EventConfirm       = "confirm"               // 0 -> 1 by a verified payment
	EventLatePayment   = "late_payment"          // 4 -> 1: paid after expiry and re-seated
	EventCheckIn       = "checkin"               // 1 -> 2, or 5 -> 2 when the salon checks in late
	EventNoShow        = "no_show"               // 1 -> 5 by the timer after the grace, or by the salon after the start
	EventWaitlistOffer = "waitlist_offer"        // a freed seat handed to the first in line: a new booking (-> 0, or -> 1 for a free slot)
	EventWalkIn        = "walk_in"               // the salon booked someone at the counter or on the phone (-> 1)
	EventLateCancel    = "late_cancel"           // 1 -> 3 by the customer after cancelFreeUntil: the deposit is kept
	EventCancel        = "cancel"                // 0|1 -> 3
	EventRelease       = "release"               // 0 -> 4 by the timer
	EventReschedule    = "reschedule"            // 1 -> 1: the booking moved to another slot (the record names both)
	EventRefund        = "refund"                // a refund was decided, requested again or changed state
	EventRejected      = "notification_rejected" // a verified notification that does not match its booking
	EventDrift         = "drift"                 // reconciliation found booked != its bookings
	EventSlotChange    = "slot_change"           // the salon changed a slot's capacity or closed it
	EventCheckout      = "checkout"              // 2 -> 2: what the customer paid in the shop was recorded
)

// AuditRecord is one line of the audit trail. ID is assigned by the database and
// is stable, so a record shipped twice to CLS can be recognised as the same one.
type AuditRecord struct {
	ID         int64
	BookingID  int64 // 0 when the record concerns a slot only
	SlotID     int64
	Event      string
	FromStatus int    // -1 when no booking status applies
	ToStatus   int    // -1 when no booking status applies
	Actor      string // Actor*
	Reason     string
	CreatedAt  time.Time
}

// ReleaseRun is what one release run did, as it recorded itself when it ended.
// Summary is the run's answer to the timer as JSON, so that counts the run learns
// to report later reach the console without a change of this type.
type ReleaseRun struct {
	StartedAt  time.Time
	FinishedAt time.Time
	Summary    string // JSON object of counts
	Error      string // why the run failed; "" when it finished
}
