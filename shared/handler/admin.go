package handler

// The admin function's JSON API: the salon's schedule, slots, bookings, walk-ins,
// check-in and customers (the console's routes are consolesignin.go's).

import (
	"encoding/json"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
)

// adminRoutes are what function admin uses: how the salon is let in (salon),
// the use cases its JSON API and its console call, and the shop's name the
// console shows.
type adminRoutes struct {
	salon
	cancels   lazy[*service.Cancels]
	door      lazy[*service.Door]
	moves     lazy[*service.Moves]
	timetable lazy[*service.Timetable]
	reads     lazy[*service.ConsoleReads]
	team      lazy[*service.Team]
	menu      lazy[*service.Menu]
	reports   lazy[*service.Reports]
	shop      lazy[instance.Shop]
	bills     lazy[*service.Reconciliation]
}

// walkIn books someone at the counter or on the phone: 201 with the booking,
// confirmed, amountFen 0. A seat of a slot ({"slotId"}), or a service
// ({"serviceId"[,"startAt"][,"technicianId"]}: without a start, the cell
// running now; without a technician, any free one).
func (s *adminRoutes) walkIn(w http.ResponseWriter, r *http.Request, door *service.Door) error {
	var body struct {
		choiceFields
		Name  string `json:"name"`
		Phone string `json:"phone"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	var c choice
	var err error
	switch {
	case body.SlotID != nil:
		c, err = body.slotChoice("slotId, or serviceId")
	case body.ServiceID == nil:
		err = booking.Errorf(booking.EBADREQUEST, "want slotId, or serviceId")
	default:
		c, err = body.serviceChoice()
	}
	if err != nil {
		return err
	}
	b, err := door.WalkIn(r.Context(), booking.WalkInRequest{SlotID: c.SlotID, ServiceID: c.ServiceID,
		StartAt: c.StartAt, TechnicianID: c.TechnicianID, Name: body.Name, Phone: body.Phone})
	return s.bookingResponse(w, r, b, err, http.StatusCreated)
}

// setCustomerNote sets the salon's note on a customer.
func (s *adminRoutes) setCustomerNote(w http.ResponseWriter, r *http.Request, door *service.Door) error {
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
	c, err := door.SetCustomerNote(r.Context(), id, *body.Note)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"customer": toAdminCustomerJSON(c)})
	return nil
}

// rescheduleBySalon moves a confirmed booking to any slot that has not ended:
// {"slotId"} and, optional, {"fromSlotId"}, the slot the salon saw it in (a
// booking found elsewhere is INVALID_STATE); or a booking of a service to any
// start that has not ended, {"startAt"[,"technicianId"]}.
func (s *adminRoutes) rescheduleBySalon(w http.ResponseWriter, r *http.Request, moves *service.Moves) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	var body struct {
		choiceFields
		// Raw, so that null is told from absent: absent is allowed, null is
		// not (a typed field is never null).
		FromSlotID json.RawMessage `json:"fromSlotId"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	to, err := body.moveChoice()
	if err != nil {
		return err
	}
	var from int64
	if body.FromSlotID != nil {
		if to.SlotID == 0 {
			return booking.Errorf(booking.EBADREQUEST, "fromSlotId: only with slotId")
		}
		if err := json.Unmarshal(body.FromSlotID, &from); err != nil || from <= 0 || string(body.FromSlotID) == "null" {
			return booking.Errorf(booking.EBADREQUEST, "fromSlotId: want a positive integer")
		}
	}
	var b *booking.Booking
	if to.SlotID != 0 {
		b, err = moves.RescheduleBySalon(r.Context(), id, to.SlotID, from)
	} else {
		b, err = moves.RescheduleToStartBySalon(r.Context(), id, to.StartAt, to.TechnicianID, 0)
	}
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}

// AdminRouter serves the salon: schedule, slot changes, the day's bookings,
// cancel and check-in, and the console (HTML) under /admin/.
func AdminRouter(e *instance.Env) *apigw.Router {
	e = e.For(adminFunction)
	s := &adminRoutes{
		salon:   salon{token: e.AdminToken, keys: e.ConsoleKeys, accounts: e.Team},
		cancels: e.Cancels, door: e.Door, moves: e.Moves, timetable: e.Timetable,
		reads: e.ConsoleReads, team: e.Team, menu: e.Menu, reports: e.Reports, shop: e.Shop,
		bills: e.Reconciliation,
	}
	rt := apigw.NewRouter(adminFunction.Name, e.Logger())
	s.consoleRoutes(rt)
	rt.Handle("POST /admin/slots", admin(s.salon, s.timetable, s.createSchedule))
	rt.Handle("PATCH /admin/slots/{id}", admin(s.salon, s.timetable, s.updateSlot))
	rt.Handle("GET /admin/bookings", admin(s.salon, s.reads, s.dayBookings))
	rt.Handle("POST /admin/bookings", admin(s.salon, s.door, s.walkIn))
	rt.Handle("PATCH /admin/customers/{customerId}", admin(s.salon, s.door, s.setCustomerNote))
	rt.Handle("POST /admin/bookings/{id}/cancel", admin(s.salon, s.cancels, s.cancelBySalon))
	rt.Handle("POST /admin/bookings/{id}/checkin", admin(s.salon, s.door, s.checkIn))
	rt.Handle("POST /admin/bookings/{id}/noshow", admin(s.salon, s.door, s.markNoShow))
	rt.Handle("POST /admin/bookings/{id}/checkout", admin(s.salon, s.door, s.checkout))
	rt.Handle("POST /admin/bookings/{id}/reschedule", admin(s.salon, s.moves, s.rescheduleBySalon))
	rt.Handle("POST /admin/checkin", admin(s.salon, s.door, s.checkInByCode))
	rt.Handle("GET /admin/staff", admin(s.salon, s.team, s.listStaff))
	rt.Handle("POST /admin/staff", admin(s.salon, s.team, s.createStaff))
	rt.Handle("PATCH /admin/staff/{id}", admin(s.salon, s.team, s.updateStaff))
	rt.Handle("GET /admin/reports", admin(s.salon, s.reports, s.report))
	rt.Handle("GET /admin/reports.csv", admin(s.salon, s.reports, s.reportCSV))
	s.menuRoutes(rt)
	s.reconciliationRoutes(rt)
	return rt
}

// bookingResponse answers a booking as the salon sees it: with its openid
// and its customer.
func (s *adminRoutes) bookingResponse(w http.ResponseWriter, r *http.Request, b *booking.Booking, err error, status int) error {
	if err != nil {
		return err
	}
	apigw.SetBookingID(r.Context(), b.ID)
	reads, err := s.reads()
	if err != nil {
		return err
	}
	if b.Customer == nil {
		if err := reads.WithCustomers(r.Context(), b); err != nil {
			return err
		}
	}
	apigw.WriteJSON(w, status, map[string]any{"booking": toBookingJSON(b, reads.Common, true)})
	return nil
}

func (s *adminRoutes) createSchedule(w http.ResponseWriter, r *http.Request, t *service.Timetable) error {
	var sched booking.Schedule
	if err := apigw.DecodeJSON(r, &sched); err != nil {
		return err
	}
	created, skipped, err := t.CreateSchedule(r.Context(), sched)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]int{"created": created, "skipped": skipped})
	return nil
}

func (s *adminRoutes) updateSlot(w http.ResponseWriter, r *http.Request, t *service.Timetable) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var u booking.SlotUpdate
	if err := apigw.DecodeJSON(r, &u); err != nil {
		return err
	}
	sl, err := t.UpdateSlot(r.Context(), id, u)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, toSlotJSON(&sl.Slot, sl.Bookable, t.Loc, true))
	return nil
}

func (s *adminRoutes) dayBookings(w http.ResponseWriter, r *http.Request, reads *service.ConsoleReads) error {
	date, from, to, err := dayQuery(r, reads.Loc)
	if err != nil {
		return err
	}
	bs, err := reads.DayBookings(r.Context(), from, to)
	if err != nil {
		return err
	}
	if err := reads.WithCustomers(r.Context(), bs...); err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"date": date, "bookings": toBookingsJSON(bs, reads.Common, true)})
	return nil
}

func (s *adminRoutes) cancelBySalon(w http.ResponseWriter, r *http.Request, cancels *service.Cancels) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := cancels.CancelBySalon(r.Context(), id)
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}

// checkInByCode checks in today's booking with the code the customer shows at
// the door (the QR code or its digits).
func (s *adminRoutes) checkInByCode(w http.ResponseWriter, r *http.Request, door *service.Door) error {
	var body struct {
		Code string `json:"code"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	b, err := door.CheckInByCode(r.Context(), body.Code)
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}

func (s *adminRoutes) checkIn(w http.ResponseWriter, r *http.Request, door *service.Door) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := door.CheckIn(r.Context(), id)
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}

func (s *adminRoutes) markNoShow(w http.ResponseWriter, r *http.Request, door *service.Door) error {
	id, err := pathBookingID(r)
	if err != nil {
		return err
	}
	b, err := door.MarkNoShow(r.Context(), id)
	return s.bookingResponse(w, r, b, err, http.StatusOK)
}

// pathBookingID reads the booking id of the path and names it on the log line.
func pathBookingID(r *http.Request) (int64, error) {
	id, err := apigw.PathInt64(r, "id")
	if err == nil {
		apigw.SetBookingID(r.Context(), id)
	}
	return id, err
}
