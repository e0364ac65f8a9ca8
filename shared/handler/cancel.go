package handler

// The cancel function: the customer's cancel and move, and the booking answers
// it shares with the salon's routes.

import (
	"bytes"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
)

// cancelRoutes are what function cancel uses: the customer's session, the
// cancels and the moves.
type cancelRoutes struct {
	customers
	cancels lazy[*service.Cancels]
	moves   lazy[*service.Moves]
}

// CancelRouter serves the customer's cancel and move.
func CancelRouter(e *instance.Env) *apigw.Router {
	e = e.For(cancelFunction)
	s := &cancelRoutes{customers: customers{sessions: e.Sessions}, cancels: e.Cancels, moves: e.Moves}
	rt := apigw.NewRouter(cancelFunction.Name, e.Logger())
	rt.Handle("POST /bookings/{id}/cancel", customer(s.customers, s.cancels, s.cancel))
	rt.Handle("POST /bookings/{id}/reschedule", customer(s.customers, s.moves, s.reschedule))
	return rt
}

// moveBody reads the booking of the path and where it moves: {"slotId"} or
// {"startAt"[,"technicianId"]}.
func moveBody(r *http.Request) (id int64, to choice, err error) {
	if id, err = pathBookingID(r); err != nil {
		return 0, to, err
	}
	var body choiceFields
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return 0, to, err
	}
	to, err = body.moveChoice()
	return id, to, err
}

// reschedule moves the customer's own confirmed booking to another slot, or
// a booking of a service to another start (and technician).
func (s *cancelRoutes) reschedule(w http.ResponseWriter, r *http.Request, moves *service.Moves, openid string) error {
	id, to, err := moveBody(r)
	if err != nil {
		return err
	}
	var b *booking.Booking
	if to.SlotID != 0 {
		b, err = moves.RescheduleByCustomer(r.Context(), openid, id, to.SlotID)
	} else {
		b, err = moves.RescheduleToStartByCustomer(r.Context(), openid, id, to.StartAt, to.TechnicianID)
	}
	return bookingResponse(w, moves.Common, b, err)
}

func (s *cancelRoutes) cancel(w http.ResponseWriter, r *http.Request, cancels *service.Cancels, openid string) error {
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
	b, err := cancels.CancelByCustomer(r.Context(), openid, id, body.ForfeitDeposit)
	return bookingResponse(w, cancels.Common, b, err)
}

// bookingResponse answers a booking as its customer sees it (c: the use case
// that changed or read it).
func bookingResponse(w http.ResponseWriter, c *service.Common, b *booking.Booking, err error) error {
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"booking": toBookingJSON(b, c, false)})
	return nil
}
