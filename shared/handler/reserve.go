package handler

// The reserve function: reservations, paying again, the waitlist and the
// customer's own bookings and details.

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
)

// maxMine is how many of a customer's bookings GET /bookings/mine answers.
const maxMine = 50

// reserveRoutes are what function reserve uses: the customer's session and
// the reservations use case.
type reserveRoutes struct {
	customers
	reservations lazy[*service.Reservations]
}

// ReserveRouter serves reservations: create, pay again, and the customer's list.
func ReserveRouter(e *instance.Env) *apigw.Router {
	e = e.For(reserveFunction)
	s := &reserveRoutes{customers: customers{sessions: e.Sessions}, reservations: e.Reservations}
	rt := apigw.NewRouter(reserveFunction.Name, e.Logger())
	rt.Handle("POST /bookings", s.customer(s.reserve))
	rt.Handle("POST /bookings/{id}/pay", s.customer(s.payAgain))
	rt.Handle("POST /slots/{id}/waitlist", s.customer(s.joinWaitlist))
	rt.Handle("DELETE /slots/{id}/waitlist", s.customer(s.leaveWaitlist))
	rt.Handle("GET /waitlist/mine", s.customer(s.myWaitlist))
	rt.Handle("GET /bookings/mine", s.customer(s.myBookings))
	rt.Handle("GET /bookings/{id}", s.customer(s.myBooking))
	rt.Handle("GET /me", s.customer(s.me))
	rt.Handle("PUT /me", s.customer(s.updateMe))
	return rt
}

// customer serves a customer's route of the reservations.
func (s *reserveRoutes) customer(h func(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error) http.Handler {
	return customer(s.customers, s.reservations, h)
}

// me answers the customer as she sees herself: her name, her phone number
// masked, her no-shows in 90 days.
func (s *reserveRoutes) me(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	c, err := res.Me(r.Context(), openid)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toMeJSON(c)})
	return nil
}

// updateMe sets the customer's name and/or, with the code of the
// getPhoneNumber button, the phone number WeChat vouches for.
func (s *reserveRoutes) updateMe(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	var body struct {
		Name      *string `json:"name"`
		PhoneCode *string `json:"phoneCode"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := res.UpdateMe(r.Context(), openid, service.MeUpdate{Name: body.Name, PhoneCode: body.PhoneCode})
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toMeJSON(c)})
	return nil
}

// myBooking answers one of the customer's own bookings, with its check-in code
// on the appointment day: what the page a notification opens shows, and what
// the mini-program asks after wx.requestPayment until the booking is confirmed.
func (s *reserveRoutes) myBooking(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	b, err := res.CustomerBooking(r.Context(), openid, id)
	return bookingResponse(w, res.Common, b, err)
}

// reserve books a seat of a slot ({"slotId"}) or a service at a start
// ({"serviceId","startAt"[,"technicianId"]}, any free technician without one).
func (s *reserveRoutes) reserve(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	var body choiceFields
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := body.reserveChoice()
	if err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if !validIdemKey(key) {
		return booking.Errorf(booking.EBADREQUEST, "Idempotency-Key: at most 64 printable characters")
	}
	var made *service.Reservation
	if c.SlotID != 0 {
		made, err = res.Reserve(r.Context(), openid, c.SlotID, key)
	} else {
		made, err = res.ReserveService(r.Context(), openid, c.ServiceID, c.TechnicianID, c.StartAt, key)
	}
	return reservationResponse(w, r, res.Common, made, err, http.StatusCreated)
}

func (s *reserveRoutes) payAgain(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	made, err := res.PayAgain(r.Context(), openid, id)
	return reservationResponse(w, r, res.Common, made, err, http.StatusOK)
}

func (s *reserveRoutes) joinWaitlist(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	slotID, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	wl, err := res.JoinWaitlist(r.Context(), openid, slotID)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]any{"waitlist": toWaitlistJSON(wl, res.Loc, false)})
	return nil
}

func (s *reserveRoutes) leaveWaitlist(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	slotID, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	if err := res.LeaveWaitlist(r.Context(), openid, slotID); err != nil {
		return err
	}
	apigw.WriteNoContent(w)
	return nil
}

func (s *reserveRoutes) myWaitlist(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	ws, err := res.CustomerWaitlist(r.Context(), openid)
	if err != nil {
		return err
	}
	out := make([]waitlistJSON, 0, len(ws))
	for i := range ws {
		out = append(out, toWaitlistJSON(&ws[i], res.Loc, true))
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"waitlist": out})
	return nil
}

func (s *reserveRoutes) myBookings(w http.ResponseWriter, r *http.Request, res *service.Reservations, openid string) error {
	bs, err := res.CustomerBookings(r.Context(), openid, maxMine)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"bookings": toBookingsJSON(bs, res.Common, false)})
	return nil
}

// maxIdemKeyChars is the contract's length of an Idempotency-Key, in
// characters: the column (VARCHAR(64), utf8mb4) holds that many of any
// script, so a key is stored exactly and two keys are never truncated into one.
const maxIdemKeyChars = 64

// validIdemKey reports whether an Idempotency-Key header can be stored exactly as
// sent: valid UTF-8 of at most maxIdemKeyChars characters (not bytes: a
// 30-character Chinese key is 90 bytes), no control characters. Empty means no key.
func validIdemKey(key string) bool {
	if !utf8.ValidString(key) || utf8.RuneCountInString(key) > maxIdemKeyChars {
		return false
	}
	return !strings.ContainsFunc(key, unicode.IsControl)
}

func reservationResponse(w http.ResponseWriter, r *http.Request, c *service.Common, res *service.Reservation, err error, status int) error {
	if res != nil && res.Booking != nil {
		apigw.SetBookingID(r.Context(), res.Booking.ID)
	}
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, status, reservationJSON{Booking: toBookingJSON(res.Booking, c, false), Payment: res.Payment})
	return nil
}
