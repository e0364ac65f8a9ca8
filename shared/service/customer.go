package service

import (
	"context"

	"salon/shared/booking"
)

// Me is the customer of openid as the mini-program sees herself.
func (s *Service) Me(ctx context.Context, openid string) (*booking.Customer, error) {
	return s.store.CustomerByOpenID(ctx, openid)
}

// MeUpdate is PUT /me: a new name and/or a phone code, each nil when not given.
type MeUpdate struct {
	Name      *string
	PhoneCode *string
}

// UpdateMe sets the customer's name (booking.CleanName's rules) and/or her
// phone number, exchanged with WeChat for the code. Everything is checked
// before WeChat is asked, so a bad name never uses up a code, and nothing is
// written unless the exchange succeeded. A phone is one customer: a walk-in
// customer with her number becomes her (see mysql's UpdateCustomer).
func (s *Service) UpdateMe(ctx context.Context, openid string, u MeUpdate) (*booking.Customer, error) {
	if u.Name == nil && u.PhoneCode == nil {
		return nil, booking.Errorf(booking.EBADREQUEST, "want name and/or phoneCode")
	}
	var name, phone *string
	if u.Name != nil {
		n, err := booking.CleanName(*u.Name, booking.MaxNameLen)
		if err != nil {
			return nil, err
		}
		name = &n
	}
	if u.PhoneCode != nil {
		code := *u.PhoneCode
		if code == "" || len(code) > 128 {
			return nil, booking.Errorf(booking.EBADREQUEST, "phoneCode: want 1-128 characters")
		}
		if s.Phones == nil {
			return nil, booking.Errorf(booking.EUPSTREAM, "phone numbers need WX_APPID and WX_APPSECRET")
		}
		p, err := s.Phones.PhoneNumber(ctx, code)
		if err != nil {
			return nil, err
		}
		phone = &p
	}
	return s.store.UpdateCustomer(ctx, openid, name, phone)
}

// SetCustomerNote sets the salon's note on a customer (at most
// booking.MaxNoteLen characters; "" clears it).
func (s *Service) SetCustomerNote(ctx context.Context, id int64, note string) (*booking.Customer, error) {
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
func (s *Service) WalkIn(ctx context.Context, req booking.WalkInRequest) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionWalkIn)
	if err != nil {
		return nil, err
	}
	req, err = req.Clean()
	if err != nil {
		return nil, err
	}
	req.By = who.Actor()
	return s.store.WalkIn(ctx, req)
}

// OpenBookingOfPhone is the unfinished booking of the customer with phone,
// with her: the one that refuses a walk-in with that phone
// (ACTIVE_BOOKING_EXISTS), for the salon to see which. NOT_FOUND when there is
// none; a phone that is not 11 digits is BAD_REQUEST.
func (s *Service) OpenBookingOfPhone(ctx context.Context, phone string) (*booking.Booking, error) {
	if _, err := allow(ctx, booking.ActionWalkIn); err != nil {
		return nil, err
	}
	if !booking.ValidPhone(phone) {
		return nil, booking.Errorf(booking.EBADREQUEST, "phone: want %d digits", booking.PhoneLen)
	}
	return s.store.OpenBookingOfPhone(ctx, phone)
}

// WithCustomers fills in the customer of each booking for the salon's views:
// name, phone, visits, no-shows in 90 days, the salon's note.
func (s *Service) WithCustomers(ctx context.Context, bs ...*booking.Booking) error {
	return s.store.AttachCustomers(ctx, bs)
}

// CustomerHistory returns a customer, as the salon sees her, with her bookings,
// newest first, at most limit.
func (s *Service) CustomerHistory(ctx context.Context, id int64, limit int) (*booking.Customer, []*booking.Booking, error) {
	return s.store.CustomerHistory(ctx, id, limit)
}

// SearchBookings returns, for the salon, the bookings of the customers a
// search names (a phone number in full or its last four digits, the start of a
// name), newest first, at most limit, each with its customer.
func (s *Service) SearchBookings(ctx context.Context, q booking.CustomerSearch, limit int) ([]*booking.Booking, error) {
	return s.store.SearchBookings(ctx, q, limit)
}
