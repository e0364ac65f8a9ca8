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

// ReserveRouter serves reservations: create, pay again, and the customer's list.
func ReserveRouter(e *instance.Env) *apigw.Router {
	s, rt := newServer(e, reserveFunction)
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

// me answers the customer as she sees herself: her name, her phone number
// masked, her no-shows in 90 days.
func (s *Server) me(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	c, err := d.Svc.Me(r.Context(), openid)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toMeJSON(c)})
	return nil
}

// updateMe sets the customer's name and/or, with the code of the
// getPhoneNumber button, the phone number WeChat vouches for.
func (s *Server) updateMe(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	var body struct {
		Name      *string `json:"name"`
		PhoneCode *string `json:"phoneCode"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := d.Svc.UpdateMe(r.Context(), openid, service.MeUpdate{Name: body.Name, PhoneCode: body.PhoneCode})
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toMeJSON(c)})
	return nil
}

// myBooking answers one of the customer's own bookings, with its check-in code
// on the appointment day: what the page a notification opens shows, and what
// the mini-program asks after wx.requestPayment until the booking is confirmed.
func (s *Server) myBooking(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	b, err := d.Svc.CustomerBooking(r.Context(), openid, id)
	return bookingResponse(w, d, b, err, false)
}

func (s *Server) reserve(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	var body struct {
		SlotID int64 `json:"slotId"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.SlotID <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "slotId: want a positive integer")
	}
	key := r.Header.Get("Idempotency-Key")
	if !validIdemKey(key) {
		return booking.Errorf(booking.EBADREQUEST, "Idempotency-Key: at most 64 printable characters")
	}
	res, err := d.Svc.Reserve(r.Context(), openid, body.SlotID, key)
	return reservationResponse(w, r, d, res, err, http.StatusCreated)
}

func (s *Server) payAgain(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	res, err := d.Svc.PayAgain(r.Context(), openid, id)
	return reservationResponse(w, r, d, res, err, http.StatusOK)
}

func (s *Server) joinWaitlist(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	slotID, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	wl, err := d.Svc.JoinWaitlist(r.Context(), openid, slotID)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]any{"waitlist": toWaitlistJSON(wl, d.Cfg.ShopTZ, false)})
	return nil
}

func (s *Server) leaveWaitlist(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	slotID, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	if err := d.Svc.LeaveWaitlist(r.Context(), openid, slotID); err != nil {
		return err
	}
	apigw.WriteNoContent(w)
	return nil
}

func (s *Server) myWaitlist(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	ws, err := d.Svc.CustomerWaitlist(r.Context(), openid)
	if err != nil {
		return err
	}
	out := make([]waitlistJSON, 0, len(ws))
	for i := range ws {
		out = append(out, toWaitlistJSON(&ws[i], d.Cfg.ShopTZ, true))
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"waitlist": out})
	return nil
}

func (s *Server) myBookings(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	bs, err := d.Svc.CustomerBookings(r.Context(), openid, maxMine)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"bookings": toBookingsJSON(bs, d.Cfg, false)})
	return nil
}

// validIdemKey reports whether an Idempotency-Key header can be stored exactly as
// sent: at most 64 bytes (within the column, so the database never truncates two
// keys into one), valid UTF-8, no control characters. Empty means no key.
func validIdemKey(key string) bool {
	if len(key) > 64 || !utf8.ValidString(key) {
		return false
	}
	return !strings.ContainsFunc(key, unicode.IsControl)
}

func reservationResponse(w http.ResponseWriter, r *http.Request, d *instance.Deps, res *service.Reservation, err error, status int) error {
	if res != nil && res.Booking != nil {
		apigw.SetBookingID(r.Context(), res.Booking.ID)
	}
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, status, reservationJSON{Booking: toBookingJSON(res.Booking, d.Cfg, false), Payment: res.Payment})
	return nil
}
