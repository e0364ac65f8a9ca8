// Package booking holds the salon's domain: slots, bookings, their states and the
// application error codes. It depends on nothing else in the product; every other
// package (the MySQL store, WeChat Pay, the API Gateway glue) speaks in these types.
package booking

import (
	"fmt"
	"slices"
	"time"
)

// Status is a booking's state. The numbers are stored in MySQL and fixed (the state
// table in shared/README.md).
type Status int

const (
	StatusPending   Status = 0 // seat held while the customer pays the deposit
	StatusConfirmed Status = 1 // paid (or free slot); seat held
	StatusCompleted Status = 2 // checked in at the salon; seat held
	StatusCancelled Status = 3 // by the customer or the salon; seat returned
	StatusExpired   Status = 4 // unpaid hold released by the timer; seat returned
	StatusNoShow    Status = 5 // confirmed, never checked in; the seat was sold and stays counted
)

var statusNames = map[Status]string{
	StatusPending:   "pending_payment",
	StatusConfirmed: "confirmed",
	StatusCompleted: "completed",
	StatusCancelled: "cancelled",
	StatusExpired:   "expired",
	StatusNoShow:    "no_show",
}

// String returns the status name used in JSON.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText makes a Status appear by name in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// SeatedBooking names a booking and the slot it was read in, for a change
// decided on that read (Change.SlotID): a booking moved to another slot since
// is refused, not changed.
type SeatedBooking struct {
	BookingID, SlotID int64
}

// SeatHolding lists the statuses that count against their slot's capacity. The
// slot invariant booked = count(seat rows of bookings in these statuses) rests on it, and the
// store's SQL is generated from this list.
var SeatHolding = []Status{StatusPending, StatusConfirmed, StatusCompleted, StatusNoShow}

// UnfinishedStatuses lists the statuses that block the customer from another
// booking (invariant 3 in shared/README.md). The schema's generated column
// active_openid spells the same list; a test of the store checks the two agree.
var UnfinishedStatuses = []Status{StatusPending, StatusConfirmed}

// HoldsSeat reports whether a booking in this status counts against its slot's
// capacity.
func (s Status) HoldsSeat() bool { return slices.Contains(SeatHolding, s) }

// Unfinished reports whether the status blocks the customer from another booking.
func (s Status) Unfinished() bool { return slices.Contains(UnfinishedStatuses, s) }

// Slot is one bookable time at the salon: a slot of the seat schedule, or a
// cell of a technician's time (TechnicianID set, capacity 1, no price of its
// own: a service's booking holds several, see grid.go).
type Slot struct {
	ID       int64
	StartAt  time.Time
	EndAt    time.Time
	Capacity int
	Booked   int
	PriceFen int64
	Open     bool
	// TechnicianID is the technician whose cell it is, 0 for a seat-mode slot.
	TechnicianID int64
}

// Remaining is the number of free seats.
func (s *Slot) Remaining() int {
	if r := s.Capacity - s.Booked; r > 0 {
		return r
	}
	return 0
}

// OpenForBooking reports whether the slot takes reservations at now, apart from
// having a free seat: open, not started, and starting within windowDays. The
// store's SQL spells the same rule (a test checks the two agree).
func (s *Slot) OpenForBooking(now time.Time, windowDays int) bool {
	return s.Open && s.StartAt.After(now) && !s.StartAt.After(now.Add(time.Duration(windowDays)*24*time.Hour))
}

// Bookable reports whether a customer can reserve a seat of the slot at now.
func (s *Slot) Bookable(now time.Time, windowDays int) bool {
	return s.OpenForBooking(now, windowDays) && s.Booked < s.Capacity
}

// SeatRule is the condition, apart from a free seat, under which a seat of a
// slot is taken: each row of Transitions that takes a seat names one, and the
// store's one seat-taking statement is given it (shared/mysql, salon_take_seat:
// the values are its parameter, so they never change meaning).
type SeatRule int

const (
	SeatNoRule           SeatRule = 0 // the row takes no seat
	SeatIfOpenForBooking SeatRule = 1 // Slot.OpenForBooking: a customer could reserve it now
	SeatIfOpenForWalkIn  SeatRule = 2 // Slot.OpenForWalkIn: the salon seats someone now
	SeatIfNotEnded       SeatRule = 3 // the slot has not ended: the salon's move
	// SeatIfFree: a free seat is all. The waitlist offer, whose caller has just
	// read the slot open for booking under its row's lock.
	SeatIfFree SeatRule = 4
)

// Allows reports whether a seat of slot s may be taken under rule r at now,
// a free seat included. The store's statement spells the same (a test of the
// store checks the two agree).
func (r SeatRule) Allows(s Slot, now time.Time, windowDays int) bool {
	if s.Booked >= s.Capacity {
		return false
	}
	switch r {
	case SeatIfOpenForBooking:
		return s.OpenForBooking(now, windowDays)
	case SeatIfOpenForWalkIn:
		return s.OpenForWalkIn(now, windowDays)
	case SeatIfNotEnded:
		return s.EndAt.After(now)
	case SeatIfFree:
		return true
	}
	return false
}

// RefundStatus is the state of a refund as the customer sees it.
type RefundStatus string

const (
	// RefundPending: decided and recorded, WeChat has not yet accepted the request.
	// The customer sees it as processing; the release timer asks WeChat again.
	RefundPending    RefundStatus = "pending"
	RefundProcessing RefundStatus = "processing"
	RefundSucceeded  RefundStatus = "succeeded"
	RefundFailed     RefundStatus = "failed"
)

// Refund describes the refund of a booking's deposit.
type Refund struct {
	Status      RefundStatus
	AmountFen   int64
	OutRefundNo string
	RefundedAt  *time.Time
	// Attempts counts the failed requests (or queries) of this refund so far;
	// the next one waits longer each time.
	Attempts int
}

// Booking is one customer's reservation of one seat in one slot, or of a
// service with a technician's time (TechnicianID set).
type Booking struct {
	ID     int64
	SlotID int64
	// OpenID is the mini-program customer's, "" for a booking the salon made
	// for a walk-in or a caller without one.
	OpenID string
	// CustomerID names the customer of a booking the salon made (0 for a
	// mini-program booking, whose customer is the row of its openid); Customer
	// is filled in for the salon's views.
	CustomerID    int64
	Customer      *Customer
	Status        Status
	AmountFen     int64
	OutTradeNo    string
	IdemKey       string
	LockExpire    time.Time
	TransactionID string
	PaidAt        *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Refund        *Refund
	// Reschedules counts the customer's own moves of the booking to another
	// slot (RESCHEDULE_LIMIT); the salon's are not counted.
	Reschedules int

	// Slot times, joined in for the customer's view: a technician's booking
	// spans its service, from its first cell (SlotID) to start + minutes.
	StartAt time.Time
	EndAt   time.Time

	// A booking of a service with a technician (0 and "" in seat mode): the
	// service and the technician, by id and name as they are now.
	ServiceID      int64
	ServiceName    string
	TechnicianID   int64
	TechnicianName string
	// PriceFen is the full price: the service's when it was booked, or the
	// seat-mode slot's. AmountFen is what is paid online (the deposit).
	PriceFen int64

	// CheckinCode is the code the customer shows at the door on the appointment
	// day, "" when the booking has none (see HasCheckinCode). The service fills
	// it in for the customer's views.
	CheckinCode string
}

// CheckinCodeLen is how many digits a check-in code has.
const CheckinCodeLen = 8

// HasCheckinCode reports whether the booking shows a check-in code at now: it
// holds a sold seat (confirmed, completed or no-show) and its slot starts on
// today's shop day. A pending, cancelled or expired booking, or one of another
// day, has none.
func (b *Booking) HasCheckinCode(now time.Time, loc *time.Location) bool {
	return b.SoldSeat() && ShopDay(b.StartAt, loc) == ShopDay(now, loc)
}

// SoldSeat reports whether the booking holds a seat that was sold: confirmed,
// completed or no-show (not a hold still waiting to be paid).
func (b *Booking) SoldSeat() bool {
	switch b.Status {
	case StatusConfirmed, StatusCompleted, StatusNoShow:
		return true
	}
	return false
}

// ShopDay is the shop's calendar day of t, YYYY-MM-DD: a slot belongs to the
// day it starts on.
func ShopDay(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// ValidCheckinCode reports whether s has the shape of a check-in code.
func ValidCheckinCode(s string) bool {
	if len(s) != CheckinCodeLen {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CancelFreeUntil is the last moment a customer's cancel of this booking is
// refunded in full: the slot's start minus freeHours (CANCEL_FREE_HOURS).
func (b *Booking) CancelFreeUntil(freeHours int) time.Time {
	return b.StartAt.Add(-time.Duration(freeHours) * time.Hour)
}

// CheckInOpens is the first moment the salon can check in this booking when it
// is confirmed: opensBefore (CHECKIN_OPENS_BEFORE) before its slot starts.
func (b *Booking) CheckInOpens(opensBefore time.Duration) time.Time {
	return b.StartAt.Add(-opensBefore)
}

// CanCheckIn reports whether the salon's check-in of the booking is accepted at
// now: a confirmed booking once check-in opens, a no-show any time (the staff
// forgot to press the button).
func (b *Booking) CanCheckIn(now time.Time, opensBefore time.Duration) bool {
	switch b.Status {
	case StatusConfirmed:
		return !now.Before(b.CheckInOpens(opensBefore))
	case StatusNoShow:
		return true
	}
	return false
}

// CanMarkNoShow reports whether the salon may mark the booking a no-show at
// now: a confirmed booking whose slot has started.
func (b *Booking) CanMarkNoShow(now time.Time) bool {
	return b.Status == StatusConfirmed && !b.StartAt.After(now)
}

// Paid reports whether a verified payment is recorded on the booking.
func (b *Booking) Paid() bool { return b.TransactionID != "" }

// HoldEnd is when a new hold made at now ends: LOCK_TTL later, but never after
// the slot starts, so nobody pays for an appointment already under way.
func HoldEnd(now, slotStart time.Time, ttl time.Duration) time.Time {
	if end := now.Add(ttl); end.Before(slotStart) {
		return end
	}
	return slotStart
}

// NoShowWindow is how far back no-shows count against NO_SHOW_LIMIT.
const NoShowWindow = 90 * 24 * time.Hour

// OutTradeNo derives the WeChat Pay order number of a booking. It uses only
// [0-9A-Za-z] because WeChat puts it in URL paths, and it is deterministic so a
// retried prepay names the same order.
func OutTradeNo(bookingID int64) string { return fmt.Sprintf("BK%012d", bookingID) }

// OutRefundNo derives the refund number of a booking. WeChat refunds a number once,
// so retrying with the same number can never refund twice.
func OutRefundNo(bookingID int64) string { return fmt.Sprintf("RF%012d", bookingID) }

// ParseOutTradeNo returns the booking id named by an order number.
func ParseOutTradeNo(s string) (int64, bool) {
	var id int64
	if len(s) != 14 || s[:2] != "BK" {
		return 0, false
	}
	for _, c := range s[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		id = id*10 + int64(c-'0')
	}
	return id, id > 0
}
