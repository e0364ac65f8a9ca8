package handler

import (
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/service"
)

// POST /admin/bookings/{id}/checkout: what the customer of a completed booking
// paid in the shop, once per booking (the money ledger's balance row).

// checkoutRequest is the body; both fields are required (an amount left out is
// not taken for 0).
type checkoutRequest struct {
	AmountFen *int64  `json:"amountFen"`
	Method    *string `json:"method"`
}

func (s *adminRoutes) checkout(w http.ResponseWriter, r *http.Request, door *service.Door) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	var req checkoutRequest
	if err := apigw.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.AmountFen == nil || req.Method == nil {
		return booking.Errorf(booking.EBADREQUEST, "want amountFen and method")
	}
	b, err := door.Checkout(r.Context(), id, booking.Checkout{AmountFen: *req.AmountFen, Method: booking.MoneyMethod(*req.Method)})
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}
