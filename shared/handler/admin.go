package handler

// The admin function's JSON API: the salon's schedule, slots, bookings, walk-ins,
// check-in and customers (the console's routes are consolesignin.go's).

import (
	"encoding/json"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
)

// walkIn books someone at the counter or on the phone: 201 with the booking,
// confirmed, amountFen 0.
func (s *Server) walkIn(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	var body struct {
		SlotID int64  `json:"slotId"`
		Name   string `json:"name"`
		Phone  string `json:"phone"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	b, err := d.Svc.WalkIn(r.Context(), booking.WalkInRequest{SlotID: body.SlotID, Name: body.Name, Phone: body.Phone})
	return adminBookingResponse(w, r, d, b, err, http.StatusCreated)
}

// setCustomerNote sets the salon's note on a customer.
func (s *Server) setCustomerNote(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := apigw.PathInt64(r, "customerId")
	if err != nil {
		return err
	}
	var body struct {
		Note *string `json:"note"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Note == nil {
		return booking.Errorf(booking.EBADREQUEST, "note: required (\"\" clears it)")
	}
	c, err := d.Svc.SetCustomerNote(r.Context(), id, *body.Note)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toAdminCustomerJSON(c)})
	return nil
}

// rescheduleBySalon moves a confirmed booking to any slot that has not ended:
// {"slotId"} and, optional, {"fromSlotId"}, the slot the salon saw it in (a
// booking found elsewhere is INVALID_STATE).
func (s *Server) rescheduleBySalon(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	var body struct {
		SlotID int64 `json:"slotId"`
		// Raw, so that null is told from absent: absent is allowed, null is
		// not (a typed field is never null).
		FromSlotID json.RawMessage `json:"fromSlotId"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.SlotID <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "slotId: want a positive integer")
	}
	var from int64
	if body.FromSlotID != nil {
		if err := json.Unmarshal(body.FromSlotID, &from); err != nil || from <= 0 || string(body.FromSlotID) == "null" {
			return booking.Errorf(booking.EBADREQUEST, "fromSlotId: want a positive integer")
		}
	}
	b, err := d.Svc.RescheduleBySalon(r.Context(), id, body.SlotID, from)
	return adminBookingResponse(w, r, d, b, err, http.StatusOK)
}

// AdminRouter serves the salon: schedule, slot changes, the day's bookings,
// cancel and check-in, and the console (HTML) under /admin/.
func AdminRouter(e *instance.Env) *apigw.Router {
	s, rt := newServer(e, adminFunction)
	s.consoleRoutes(rt)
	rt.Handle("POST /admin/slots", s.admin(s.createSchedule))
	rt.Handle("PATCH /admin/slots/{id}", s.admin(s.updateSlot))
	rt.Handle("GET /admin/bookings", s.admin(s.dayBookings))
	rt.Handle("POST /admin/bookings", s.admin(s.walkIn))
	rt.Handle("PATCH /admin/customers/{customerId}", s.admin(s.setCustomerNote))
	rt.Handle("POST /admin/bookings/{id}/cancel", s.admin(s.cancelBySalon))
	rt.Handle("POST /admin/bookings/{id}/checkin", s.admin(s.checkIn))
	rt.Handle("POST /admin/bookings/{id}/noshow", s.admin(s.markNoShow))
	rt.Handle("POST /admin/bookings/{id}/reschedule", s.admin(s.rescheduleBySalon))
	rt.Handle("POST /admin/checkin", s.admin(s.checkInByCode))
	rt.Handle("GET /admin/staff", s.admin(s.listStaff))
	rt.Handle("POST /admin/staff", s.admin(s.createStaff))
	rt.Handle("PATCH /admin/staff/{id}", s.admin(s.updateStaff))
	return rt
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	var sched booking.Schedule
	if err := apigw.DecodeJSON(r, &sched); err != nil {
		return err
	}
	created, skipped, err := d.Svc.CreateSchedule(r.Context(), sched)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]int{"created": created, "skipped": skipped})
	return nil
}

func (s *Server) updateSlot(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var u booking.SlotUpdate
	if err := apigw.DecodeJSON(r, &u); err != nil {
		return err
	}
	sl, err := d.Svc.UpdateSlot(r.Context(), id, u)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, toSlotJSON(&sl.Slot, sl.Bookable, d.Cfg.ShopTZ, true))
	return nil
}

func (s *Server) dayBookings(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	date, from, to, err := dayQuery(r, d.Cfg.ShopTZ)
	if err != nil {
		return err
	}
	bs, err := d.Svc.DayBookings(r.Context(), from, to)
	if err != nil {
		return err
	}
	if err := d.Svc.WithCustomers(r.Context(), bs...); err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"date": date, "bookings": toBookingsJSON(bs, d.Cfg, true)})
	return nil
}

func (s *Server) cancelBySalon(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := d.Svc.CancelBySalon(r.Context(), id)
	return adminBookingResponse(w, r, d, b, err, http.StatusOK)
}

// checkInByCode checks in today's booking with the code the customer shows at
// the door (the QR code or its digits).
func (s *Server) checkInByCode(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	var body struct {
		Code string `json:"code"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	b, err := d.Svc.CheckInByCode(r.Context(), body.Code)
	return adminBookingResponse(w, r, d, b, err, http.StatusOK)
}

func (s *Server) checkIn(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := d.Svc.CheckIn(r.Context(), id)
	return adminBookingResponse(w, r, d, b, err, http.StatusOK)
}

func (s *Server) markNoShow(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := d.Svc.MarkNoShow(r.Context(), id)
	return adminBookingResponse(w, r, d, b, err, http.StatusOK)
}

// pathBookingID reads the booking id of the path and names it on the log line.
func pathBookingID(r *http.Request) (int64, error) {
	id, err := apigw.PathInt64(r, "id")
	if err == nil {
		apigw.SetBookingID(r.Context(), id)
	}
	return id, err
}
