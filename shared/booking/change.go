package booking

import (
	"time"
)

// Actors: who asked for a change. They are written into every audit record.
const (
	ActorCustomer = "customer"
	ActorSalon    = "salon"
	ActorTimer    = "timer"     // the release run
	ActorWeChat   = "wechatpay" // a verified notification or signed query answer
	ActorSystem   = "system"    // the product's own checks (reconciliation)
)

// ActorAdmin is how the audit trail names the holder of ADMIN_TOKEN (the JSON
// admin API's bearer token, or the console's built-in owner); a staff member
// with an account is "staff:<id>" (Staff.Actor). Records written before staff
// accounts existed name the salon ActorSalon.
const ActorAdmin = "admin"

// Change is one change of a booking's status, the only kind of write that moves
// a booking from one state to another. It names the status it expects to find,
// so of several concurrent changes of one booking exactly one wins.
type Change struct {
	BookingID int64
	From, To  Status
	Event     string // Event*
	Actor     string // Actor*: whose rules apply (the transitions name them)
	// By is who made a salon change, as the audit trail names her
	// (Staff.Actor); "" for every other actor, recorded as Actor.
	By     string
	Reason string

	// Payment, when set, records the verified payment with the change (the
	// transitions that record one need it; the others refuse it).
	Payment *Payment

	// SlotID, when set, is the slot the caller saw the booking in when it
	// decided on the change (a cancel's refund, a check-in's time): a booking
	// moved to another slot since is INVALID_STATE, so a cancel and a
	// reschedule of one booking never both win.
	SlotID int64
	// ToSlotID is the slot a reschedule moves the booking to (only there).
	ToSlotID int64
	// ToStart and ToTechnicianID are where a reschedule moves a technician's
	// booking instead: its new start, and the technician (0: the same one).
	ToStart        time.Time
	ToTechnicianID int64
}

// AuditActor is the actor the change's audit record names: the person for a
// salon change, else the actor.
func (c Change) AuditActor() string {
	if c.By != "" {
		return c.By
	}
	return c.Actor
}

// Payment is a verified WeChat payment as it is recorded on its booking.
type Payment struct {
	TransactionID string
	AmountFen     int64
	PaidAt        time.Time
}

// ReserveRequest asks for one seat for one customer.
type ReserveRequest struct {
	OpenID  string
	SlotID  int64
	IdemKey string // optional; names one reservation of this customer
}

// ServiceReserveRequest asks for a booking of a service at a start for one
// customer, with a technician, or any free one (TechnicianID 0).
type ServiceReserveRequest struct {
	OpenID       string
	ServiceID    int64
	TechnicianID int64
	StartAt      time.Time
	IdemKey      string // optional; names one reservation of this customer
	// Day is the shop day StartAt falls on, [DayStart, DayEnd), which the
	// service sets: the technicians' booked minutes that day order the pick.
	DayStart, DayEnd time.Time
}

// Capacity bounds of a slot, the same for a new schedule and a changed slot.
const (
	MinCapacity = 1
	MaxCapacity = 50
)

// SlotUpdate is the salon's change of one slot: its capacity, or closing it to
// new bookings (open false) or reopening it (open true). Exactly what the salon
// asked for is applied, in one transaction.
type SlotUpdate struct {
	Capacity *int  `json:"capacity"`
	Open     *bool `json:"open"`
}

// Validate checks the update's shape; whether the capacity fits what is booked
// is decided by the store on the locked row.
func (u SlotUpdate) Validate() error {
	if u.Capacity == nil && u.Open == nil {
		return Errorf(EBADREQUEST, "want capacity or open")
	}
	if u.Capacity != nil && (*u.Capacity < MinCapacity || *u.Capacity > MaxCapacity) {
		return Errorf(EBADREQUEST, "capacity %d outside %d-%d", *u.Capacity, MinCapacity, MaxCapacity)
	}
	return nil
}

// SlotView is a slot as the schedule shows it, with whether it can be booked now.
type SlotView struct {
	Slot
	Bookable bool
	Waiting  int // customers in its waitlist
}

// SlotDrift is a slot whose booked counter disagrees with the seats its
// bookings hold, or a technician's cell that overlaps another of hers in
// time: a bug, reported and never repaired silently.
type SlotDrift struct {
	SlotID   int64
	Booked   int
	Holding  int // seats of it held by bookings in a status that holds a seat
	Capacity int
	// Overlaps is another cell of the same technician that starts inside
	// this one (0: the drift is the counter's). Two bookings could each take
	// one of the two and be at her table at once.
	Overlaps int64
}

// TradeState is a WeChat Pay order's state as a signed query or a notification
// names it.
type TradeState string

const (
	TradeSuccess    TradeState = "SUCCESS"    // paid
	TradeRefund     TradeState = "REFUND"     // paid, and a refund was requested since
	TradeNotPay     TradeState = "NOTPAY"     // not paid (yet)
	TradeClosed     TradeState = "CLOSED"     // closed: can never be paid
	TradeUserPaying TradeState = "USERPAYING" // the customer is paying right now
	TradeRevoked    TradeState = "REVOKED"
	TradePayError   TradeState = "PAYERROR"
)

// Paid reports whether the order's money was taken.
func (t TradeState) Paid() bool { return t == TradeSuccess || t == TradeRefund }

// WeChatRefundState is a refund's state as WeChat Pay names it in a refund's
// answer, its query and its notification.
type WeChatRefundState string

const (
	WeChatRefundSuccess    WeChatRefundState = "SUCCESS"
	WeChatRefundClosed     WeChatRefundState = "CLOSED"
	WeChatRefundAbnormal   WeChatRefundState = "ABNORMAL"
	WeChatRefundProcessing WeChatRefundState = "PROCESSING"
)

// Outcome is the product's refund state WeChat's answer leads to.
func (w WeChatRefundState) Outcome() RefundStatus {
	switch w {
	case WeChatRefundSuccess:
		return RefundSucceeded
	case WeChatRefundClosed, WeChatRefundAbnormal:
		return RefundFailed
	}
	return RefundProcessing
}
