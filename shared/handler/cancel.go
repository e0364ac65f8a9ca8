package handler

// The cancel function: the customer's cancel and move, and the booking answers
// it shares with the salon's routes.

import (
	"bytes"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
)

// CancelRouter serves the customer's cancel.
func CancelRouter(e *instance.Env) *apigw.Router {
	s, rt := newServer(e, cancelFunction)
	rt.Handle("POST /bookings/{id}/cancel", s.customer(s.cancel))
	rt.Handle("POST /bookings/{id}/reschedule", s.customer(s.reschedule))
	return rt
}

// slotBody reads the {"slotId"} of a reschedule.
func slotBody(r *http.Request) (int64, error) {
	var body struct {
		SlotID int64 `json:"slotId"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return 0, err
	}
	if body.SlotID <= 0 {
		return 0, booking.Errorf(booking.EBADREQUEST, "slotId: want a positive integer")
	}
	return body.SlotID, nil
}

// moveRequest reads a move: the booking from the path, the slot from the body.
func moveRequest(r *http.Request) (id, slotID int64, err error) {
	if id, err = pathBookingID(r); err != nil {
		return 0, 0, err
	}
	slotID, err = slotBody(r)
	return id, slotID, err
}

// reschedule moves the customer's own confirmed booking to another slot.
func (s *Server) reschedule(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	id, slotID, err := moveRequest(r)
	if err != nil {
		return err
	}
	b, err := d.Svc.RescheduleByCustomer(r.Context(), openid, id, slotID)
	return bookingResponse(w, d, b, err, false)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	apigw.SetBookingID(r.Context(), id)
	// The body is optional; when present it is checked strictly like any other.
	var body struct {
		ForfeitDeposit bool `json:"forfeitDeposit"`
	}
	raw, err := apigw.ReadBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := apigw.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	b, err := d.Svc.CancelByCustomer(r.Context(), openid, id, body.ForfeitDeposit)
	return bookingResponse(w, d, b, err, false)
}

func bookingResponse(w http.ResponseWriter, d *instance.Deps, b *booking.Booking, err error, withOpenID bool) error {
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"booking": toBookingJSON(b, d.Cfg, withOpenID)})
	return nil
}

// adminBookingResponse answers a booking as the salon sees it: with its openid
// and its customer.
func adminBookingResponse(w http.ResponseWriter, r *http.Request, d *instance.Deps, b *booking.Booking, err error, status int) error {
	if err != nil {
		return err
	}
	apigw.SetBookingID(r.Context(), b.ID)
	if b.Customer == nil {
		if err := d.Svc.WithCustomers(r.Context(), b); err != nil {
			return err
		}
	}
	apigw.WriteJSON(w, status, map[string]any{"booking": toBookingJSON(b, d.Cfg, true)})
	return nil
}
