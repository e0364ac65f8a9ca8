package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Reservations is the customer's side of the mini-program (functions reserve
// and slots): reserving a seat and paying for it, her own bookings with their
// check-in codes, herself (PUT /me) and her place on the waitlists.
type Reservations struct {
	*Common
	store   ReservationsStore
	cashier *Cashier
	notify  *Notifier
	// Phones exchanges the mini-program's phone codes; nil (WX_APPID or
	// WX_APPSECRET unset) answers UPSTREAM_UNAVAILABLE to a phone code.
	Phones Phones
}

// ReservationsStore is what Reservations asks of the store.
type ReservationsStore interface {
	Reserve(ctx context.Context, req booking.ReserveRequest) (b *booking.Booking, created bool, err error)
	ReserveService(ctx context.Context, req booking.ServiceReserveRequest) (b *booking.Booking, created bool, err error)
	CountNoShows(ctx context.Context, openid string, within time.Duration) (int, error)
	FindCustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error)
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
	ListCustomerBookings(ctx context.Context, openid string, limit int) ([]*booking.Booking, error)
	CheckinCode(ctx context.Context, b *booking.Booking, day string) (string, error)
	CustomerByOpenID(ctx context.Context, openid string) (*booking.Customer, error)
	UpdateCustomer(ctx context.Context, openid string, name, phone *string) (*booking.Customer, error)
	JoinWaitlist(ctx context.Context, openid string, slotID int64, maxEntries int) (*booking.WaitlistEntry, error)
	LeaveWaitlist(ctx context.Context, openid string, slotID int64) error
	CustomerWaitlist(ctx context.Context, openid string) ([]booking.WaitlistEntry, error)
}

// Phones exchanges the code of the mini-program's getPhoneNumber button for the
// customer's number (implemented by *wxmsg.Client): a code WeChat rejects is
// BAD_REQUEST, WeChat not answering UPSTREAM_UNAVAILABLE.
type Phones interface {
	PhoneNumber(ctx context.Context, code string) (string, error)
}

// Reservation is a booking with the WeChat payment parameters for it, if a deposit
// is due.
type Reservation struct {
	Booking *booking.Booking
	Payment *booking.PaymentParams
	Created bool
}

// Reserve takes a seat (steps 1-3 of "The reservation, step by step" in
// shared/README.md) and then asks WeChat for the payment (step 4). If WeChat
// cannot be reached the booking stays pending and the error is
// UPSTREAM_UNAVAILABLE: the customer asks again with the same idempotency key or
// POST /bookings/{id}/pay, and the timer releases the hold if they never pay.
func (s *Reservations) Reserve(ctx context.Context, openid string, slotID int64, idemKey string) (*Reservation, error) {
	if err := s.checkNoShowLimit(ctx, openid); err != nil {
		return nil, err
	}
	b, created, err := s.store.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slotID, IdemKey: idemKey})
	return s.held(ctx, b, created, err)
}

// held answers a reservation the store made (or an idempotency key named):
// a pending one with its WeChat order's payment parameters, any other as it is.
func (s *Reservations) held(ctx context.Context, b *booking.Booking, created bool, err error) (*Reservation, error) {
	if err != nil {
		return nil, err
	}
	r := &Reservation{Booking: b, Created: created}
	if b.Status != booking.StatusPending {
		return r, nil
	}
	r.Payment, err = s.cashier.prepay(ctx, b)
	return r, err
}

// ReserveService books service serviceID at startAt for the customer, with
// technician technicianID, or (0) the free technician who has the fewest
// booked minutes that day, then the lowest id (POST /bookings
// {"serviceId","startAt"[,"technicianId"]}): the reservation of Reserve,
// with the technician's cells of the service's span for its seat (all taken
// by one conditional statement, or none) and the service's deposit for its
// amount: a deposit is paid like a slot's price (the WeChat order, the same
// answers), none confirms the booking at once with no payment. Unknown
// service or technician: NOT_FOUND; a start off the grid, outside her
// hours, started or outside the window, or a technician who does not do
// the service: SLOT_NOT_BOOKABLE; the named one busy, or every one:
// SOLD_OUT. NO_SHOW_LIMIT and the idempotency key apply as at Reserve (the
// key names one service, start and technician).
func (s *Reservations) ReserveService(ctx context.Context, openid string, serviceID, technicianID int64, startAt time.Time, idemKey string) (*Reservation, error) {
	if err := s.checkNoShowLimit(ctx, openid); err != nil {
		return nil, err
	}
	from, to, err := booking.DayBounds(booking.ShopDay(startAt, s.Loc), s.Loc)
	if err != nil {
		return nil, err
	}
	b, created, err := s.store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: openid, ServiceID: serviceID,
		TechnicianID: technicianID, StartAt: startAt, IdemKey: idemKey, DayStart: from, DayEnd: to})
	return s.held(ctx, b, created, err)
}

// checkNoShowLimit refuses a customer with NO_SHOW_LIMIT or more no-shows whose
// slots started in the last 90 days. Off (no query at all) when the limit is 0.
func (s *Reservations) checkNoShowLimit(ctx context.Context, openid string) error {
	if s.Policy.NoShowLimit <= 0 {
		return nil
	}
	n, err := s.store.CountNoShows(ctx, openid, booking.NoShowWindow)
	if err != nil {
		return err
	}
	if n >= s.Policy.NoShowLimit {
		return booking.Errorf(booking.ENOSHOWLIMIT, "customer has %d no-shows in 90 days, limit %d", n, s.Policy.NoShowLimit)
	}
	return nil
}

// PayAgain answers the payment parameters again for the customer's own pending
// booking, for the same WeChat order. A pending booking with nothing to pay (a
// waitlist offer of a free slot) is the customer accepting it: it is confirmed,
// and the answer has no payment.
func (s *Reservations) PayAgain(ctx context.Context, openid string, bookingID int64) (*Reservation, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	if b.Status != booking.StatusPending {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s, nothing to pay", b.ID, b.Status)
	}
	if b.AmountFen == 0 {
		b, err := s.store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
			Event: booking.EventConfirm, Actor: booking.ActorCustomer, Reason: "顾客接受了免费时段的座位"})
		if err != nil {
			return nil, err
		}
		s.notify.notifyNow(ctx) // a reminder may be due at once
		return &Reservation{Booking: b}, nil
	}
	p, err := s.cashier.prepay(ctx, b)
	return &Reservation{Booking: b, Payment: p}, err
}

// CustomerBookings returns the customer's bookings, finished ones too, newest
// first, at most limit, each of today's with its check-in code.
func (s *Reservations) CustomerBookings(ctx context.Context, openid string, limit int) ([]*booking.Booking, error) {
	bs, err := s.store.ListCustomerBookings(ctx, openid, limit)
	if err != nil {
		return nil, err
	}
	return bs, s.withCheckinCodes(ctx, bs...)
}

// CustomerBooking returns the customer's own booking, with its check-in code
// on the appointment day; someone else's is NOT_FOUND, like one that does not
// exist.
func (s *Reservations) CustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, id)
	if err != nil {
		return nil, err
	}
	return b, s.withCheckinCodes(ctx, b)
}

// withCheckinCodes fills in the check-in code of each booking that shows one
// now (booking.HasCheckinCode, by the database's clock), giving it one the
// first time.
func (s *Reservations) withCheckinCodes(ctx context.Context, bs ...*booking.Booking) error {
	var now time.Time
	for _, b := range bs {
		if !b.SoldSeat() {
			continue // no code whatever the day: no need for the clock
		}
		if now.IsZero() {
			var err error
			if now, err = s.Now(ctx); err != nil {
				return err
			}
		}
		if !b.HasCheckinCode(now, s.Loc) {
			continue
		}
		// "" when the booking moved or changed since it was read: no code
		// of the day it was read for on a booking that is no longer there.
		code, err := s.store.CheckinCode(ctx, b, booking.ShopDay(now, s.Loc))
		if err != nil {
			return err
		}
		b.CheckinCode = code
	}
	return nil
}

// Me is the customer of openid as the mini-program sees herself.
func (s *Reservations) Me(ctx context.Context, openid string) (*booking.Customer, error) {
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
func (s *Reservations) UpdateMe(ctx context.Context, openid string, u MeUpdate) (*booking.Customer, error) {
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

// JoinWaitlist puts the customer in line for a full slot (see
// mysql.(*DB).JoinWaitlist); NO_SHOW_LIMIT applies as at reserve.
func (s *Reservations) JoinWaitlist(ctx context.Context, openid string, slotID int64) (*booking.WaitlistEntry, error) {
	if err := s.checkNoShowLimit(ctx, openid); err != nil {
		return nil, err
	}
	return s.store.JoinWaitlist(ctx, openid, slotID, booking.MaxWaitlistEntries)
}

// LeaveWaitlist takes the customer out of a slot's line.
func (s *Reservations) LeaveWaitlist(ctx context.Context, openid string, slotID int64) error {
	return s.store.LeaveWaitlist(ctx, openid, slotID)
}

// CustomerWaitlist returns the slots the customer waits for.
func (s *Reservations) CustomerWaitlist(ctx context.Context, openid string) ([]booking.WaitlistEntry, error) {
	return s.store.CustomerWaitlist(ctx, openid)
}
