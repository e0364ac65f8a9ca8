package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Moves move a confirmed booking to another slot: the customer's
// (function cancel) and the salon's (function admin and the console).
type Moves struct {
	*Common
	store  MovesStore
	notify *Notifier
}

// MovesStore is what Moves ask of the store.
type MovesStore interface {
	FindCustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error)
	Reschedule(ctx context.Context, c booking.Change) (*booking.Booking, error)
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
}

// RescheduleByCustomer moves the customer's own confirmed booking to slotID
// (shared/README.md, "A reschedule: one transaction"): someone else's booking
// is NOT_FOUND; the rules (cancelFreeUntil, RESCHEDULE_LIMIT, the same price,
// a slot she could reserve, a free seat) are decided by package booking on
// the facts the store reads in the move's transaction. A booking the salon
// moved since she looked is INVALID_STATE.
func (s *Moves) RescheduleByCustomer(ctx context.Context, openid string, bookingID, slotID int64) (*booking.Booking, error) {
	return s.customerMove(ctx, openid, bookingID, destination{slotID: slotID})
}

// RescheduleBySalon moves a confirmed booking to any slot that has not ended,
// at any price (the deposit stays as paid), not counted against the
// customer's limit; the customer gets the rescheduled notification. The move
// is decided on the slot the salon saw the booking in: fromSlotID (the slot
// the page showed), or, 0, the slot of the read here; a booking found in
// another slot in the move's transaction (moved meanwhile, by a concurrent
// move too) is INVALID_STATE and nothing changes, so of two moves of one
// booking from the same slot exactly one is made.
func (s *Moves) RescheduleBySalon(ctx context.Context, bookingID, slotID, fromSlotID int64) (*booking.Booking, error) {
	return s.salonMove(ctx, bookingID, fromSlotID, destination{slotID: slotID})
}

// RescheduleToStartByCustomer moves the customer's own confirmed booking of
// a service to startAt with technician technicianID (0: the same one): the
// same service and length, the same rules as RescheduleByCustomer (until
// cancelFreeUntil, RESCHEDULE_LIMIT, a start she could reserve now), every
// cell of the new span free but those it holds already (booking.Policy's
// PlanReschedule, on the facts read in the move's transaction). The new
// cells are taken first, all or none, and the old ones it no longer needs
// returned, in one transaction. A seat-mode booking moves to a slot, not a
// start (INVALID_STATE).
func (s *Moves) RescheduleToStartByCustomer(ctx context.Context, openid string, bookingID int64, startAt time.Time, technicianID int64) (*booking.Booking, error) {
	return s.customerMove(ctx, openid, bookingID, destination{startAt: startAt, technicianID: technicianID})
}

// RescheduleToStartBySalon is RescheduleBySalon for a booking of a service:
// to startAt with technician technicianID (0: the same one), any start whose
// first cell has not ended; the customer is told. fromSlotID is the first
// cell the salon saw it in (0: as read here), so of two moves of one booking
// from the same place exactly one is made.
func (s *Moves) RescheduleToStartBySalon(ctx context.Context, bookingID int64, startAt time.Time, technicianID, fromSlotID int64) (*booking.Booking, error) {
	return s.salonMove(ctx, bookingID, fromSlotID, destination{startAt: startAt, technicianID: technicianID})
}

// destination is where a move goes: a slot (seat mode), or a start with a
// technician (0: the same one) for a booking of a service.
type destination struct {
	slotID       int64
	startAt      time.Time
	technicianID int64
}

// customerMove is the one customer's move, whatever its destination.
func (s *Moves) customerMove(ctx context.Context, openid string, bookingID int64, to destination) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	return s.move(ctx, booking.Change{BookingID: b.ID, Actor: booking.ActorCustomer, Reason: "顾客改约", SlotID: b.SlotID}, to)
}

// salonMove is the one salon's move, whatever its destination, decided on
// the slot the salon saw the booking in (fromSlotID; 0: as read here).
func (s *Moves) salonMove(ctx context.Context, bookingID, fromSlotID int64, to destination) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionReschedule)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	if fromSlotID == 0 {
		fromSlotID = b.SlotID
	}
	return s.move(ctx, booking.Change{BookingID: bookingID, Actor: booking.ActorSalon, By: who.Actor(), Reason: "门店改约", SlotID: fromSlotID}, to)
}

// move asks the store for the reschedule of c to its destination and sends
// what it queued (a freed seat's waitlist offer, a reminder now due, the
// salon's rescheduled notification).
func (s *Moves) move(ctx context.Context, c booking.Change, to destination) (*booking.Booking, error) {
	c.From, c.To, c.Event = booking.StatusConfirmed, booking.StatusConfirmed, booking.EventReschedule
	c.ToSlotID, c.ToStart, c.ToTechnicianID = to.slotID, to.startAt, to.technicianID
	out, err := s.store.Reschedule(ctx, c)
	if err == nil {
		s.notify.notifyNow(ctx)
	}
	return out, err
}
