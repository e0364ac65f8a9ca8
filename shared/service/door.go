package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Door is the salon at the door and the counter (function admin and the
// console): check-in by id or by code, no-shows, walk-ins and the note on a
// customer.
type Door struct {
	*Common
	store DoorStore
}

// DoorStore is what the Door asks of the store.
type DoorStore interface {
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
	FindByCheckinCode(ctx context.Context, day, code string) (*booking.Booking, error)
	SetCustomerNote(ctx context.Context, id int64, note string) (*booking.Customer, error)
	WalkIn(ctx context.Context, req booking.WalkInRequest) (*booking.Booking, error)
	OpenBookingOfPhone(ctx context.Context, phone string) (*booking.Booking, error)
	Checkout(ctx context.Context, bookingID int64, c booking.Checkout, actor string) (*booking.Booking, error)
}

// Checkout records what the customer of a completed booking paid in the shop
// (amount and how), once per booking: a balance row of the money ledger. A
// booking not completed, or already checked out, is INVALID_STATE; a bad amount
// or method is BAD_REQUEST with nothing written.
func (s *Door) Checkout(ctx context.Context, bookingID int64, c booking.Checkout) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionCheckout)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return s.store.Checkout(ctx, bookingID, c, who.Actor())
}

// CheckIn marks a booking completed when the customer arrives: a confirmed one,
// or a no-show the staff forgot to check in (late check-in). Against a no-show
// marked at the same moment exactly one of the two wins; the other is
// INVALID_STATE.
func (s *Door) CheckIn(ctx context.Context, bookingID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionCheckIn)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	reason := "已签到"
	switch b.Status {
	case booking.StatusConfirmed:
	case booking.StatusNoShow:
		reason = "补签到（原为未到店）"
	default:
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s", b.ID, b.Status)
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	if !b.CanCheckIn(now, s.Policy.CheckinOpensBefore) {
		return nil, booking.Errorf(booking.ETOOEARLY, "booking %d: check-in opens %s", b.ID,
			b.CheckInOpens(s.Policy.CheckinOpensBefore).Format(time.RFC3339))
	}
	return s.store.ChangeStatus(ctx, booking.Change{BookingID: bookingID, From: b.Status, To: booking.StatusCompleted,
		Event: booking.EventCheckIn, Actor: booking.ActorSalon, By: who.Actor(), Reason: reason, SlotID: b.SlotID})
}

// MarkNoShow records that the customer of a confirmed booking did not come. The
// salon can do it once the slot has started; the seat stays sold and the deposit
// is kept, and the booking is finished, so the customer can book again.
func (s *Door) MarkNoShow(ctx context.Context, bookingID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionNoShow)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	if b.Status == booking.StatusConfirmed && !b.CanMarkNoShow(now) {
		return nil, booking.Errorf(booking.ETOOEARLY, "booking %d: slot has not started", b.ID)
	}
	return s.store.ChangeStatus(ctx, booking.Change{BookingID: bookingID, From: booking.StatusConfirmed, To: booking.StatusNoShow,
		Event: booking.EventNoShow, Actor: booking.ActorSalon, By: who.Actor(), Reason: "门店标记未到店", SlotID: b.SlotID})
}

// CheckInByCode checks in the booking of today (shop time) that carries the
// check-in code the customer shows at the door: the same rules as CheckIn (a
// confirmed booking from CHECKIN_OPENS_BEFORE, a no-show any time, one already
// checked in INVALID_STATE). A code of the wrong shape is BAD_REQUEST; one no
// booking of today has, NOT_FOUND.
func (s *Door) CheckInByCode(ctx context.Context, code string) (*booking.Booking, error) {
	if _, err := allow(ctx, booking.ActionCheckIn); err != nil {
		return nil, err
	}
	if !booking.ValidCheckinCode(code) {
		return nil, booking.Errorf(booking.EBADREQUEST, "code: want %d digits", booking.CheckinCodeLen)
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindByCheckinCode(ctx, booking.ShopDay(now, s.Loc), code)
	if err != nil {
		return nil, err
	}
	out, err := s.CheckIn(ctx, b.ID)
	if err == nil {
		out.CheckinCode = code
	}
	return out, err
}

// DoorBooking returns the booking of today (shop time) with the check-in code,
// as it is now, for the door to say why a check-in by that code was refused;
// NOT_FOUND when no booking of today has it.
func (s *Door) DoorBooking(ctx context.Context, code string) (*booking.Booking, error) {
	if !booking.ValidCheckinCode(code) {
		return nil, booking.Errorf(booking.EBADREQUEST, "code: want %d digits", booking.CheckinCodeLen)
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.FindByCheckinCode(ctx, booking.ShopDay(now, s.Loc), code)
}

// SetCustomerNote sets the salon's note on a customer (at most
// booking.MaxNoteLen characters; "" clears it).
func (s *Door) SetCustomerNote(ctx context.Context, id int64, note string) (*booking.Customer, error) {
	if _, err := allow(ctx, booking.ActionNote); err != nil {
		return nil, err
	}
	n, err := booking.CleanNote(note)
	if err != nil {
		return nil, err
	}
	return s.store.SetCustomerNote(ctx, id, n)
}

// WalkIn books someone at the counter or on the phone: confirmed at once,
// nothing to pay online, no WeChat order and no messages (see mysql's WalkIn).
// In a slot (req.SlotID), or for a service (req.ServiceID) with a
// technician's time: from req.StartAt (zero: the cell running now, by the
// database's clock and the shop's grid) with req.TechnicianID, or the free
// technician a reservation would get.
func (s *Door) WalkIn(ctx context.Context, req booking.WalkInRequest) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionWalkIn)
	if err != nil {
		return nil, err
	}
	req, err = req.Clean()
	if err != nil {
		return nil, err
	}
	req.By = who.Actor()
	if req.ServiceID != 0 {
		if req.StartAt.IsZero() {
			now, err := s.Now(ctx)
			if err != nil {
				return nil, err
			}
			req.StartAt = booking.CellStart(now, s.Loc, s.Policy.GridMinutes)
		}
		if req.DayStart, req.DayEnd, err = booking.DayBounds(booking.ShopDay(req.StartAt, s.Loc), s.Loc); err != nil {
			return nil, err
		}
	}
	return s.store.WalkIn(ctx, req)
}

// OpenBookingOfPhone is the unfinished booking of the customer with phone,
// with her: the one that refuses a walk-in with that phone
// (ACTIVE_BOOKING_EXISTS), for the salon to see which. NOT_FOUND when there is
// none; a phone that is not 11 digits is BAD_REQUEST.
func (s *Door) OpenBookingOfPhone(ctx context.Context, phone string) (*booking.Booking, error) {
	if _, err := allow(ctx, booking.ActionWalkIn); err != nil {
		return nil, err
	}
	if !booking.ValidPhone(phone) {
		return nil, booking.Errorf(booking.EBADREQUEST, "phone: want %d digits", booking.PhoneLen)
	}
	return s.store.OpenBookingOfPhone(ctx, phone)
}
