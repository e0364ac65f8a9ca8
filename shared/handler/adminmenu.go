package handler

// The salon's menu and technicians (function admin): GET/POST /admin/services,
// PATCH /admin/services/{id}, GET/POST /admin/technicians,
// PATCH /admin/technicians/{id}, and a technician's hours and time off. The
// service allows reading them to any role and changing them to the owner (the
// admin middleware names who asks).

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/service"
)

// menuRoutes registers the routes of this file on the admin router.
func (s *adminRoutes) menuRoutes(rt *apigw.Router) {
	rt.Handle("GET /admin/services", admin(s.salon, s.menu, s.listAllServices))
	rt.Handle("POST /admin/services", admin(s.salon, s.menu, s.createService))
	rt.Handle("PATCH /admin/services/{id}", admin(s.salon, s.menu, s.updateService))
	rt.Handle("GET /admin/technicians", admin(s.salon, s.menu, s.listTechnicians))
	rt.Handle("POST /admin/technicians", admin(s.salon, s.menu, s.createTechnician))
	rt.Handle("PATCH /admin/technicians/{id}", admin(s.salon, s.menu, s.updateTechnician))
	rt.Handle("POST /admin/technicians/{id}/hours", admin(s.salon, s.menu, s.openHours))
	rt.Handle("POST /admin/technicians/{id}/off", admin(s.salon, s.menu, s.timeOff))
}

// adminServiceJSON is a service as the salon manages it: inactive ones too,
// without the technicians (the technicians' list says who does what).
type adminServiceJSON struct {
	ServiceID  int64  `json:"serviceId"`
	Name       string `json:"name"`
	Minutes    int    `json:"minutes"`
	PriceFen   int64  `json:"priceFen"`
	DepositFen int64  `json:"depositFen"`
	Active     bool   `json:"active"`
}

func toAdminServiceJSON(sv *booking.Service) adminServiceJSON {
	return adminServiceJSON{ServiceID: sv.ID, Name: sv.Name, Minutes: sv.Minutes,
		PriceFen: sv.PriceFen, DepositFen: sv.DepositFen, Active: sv.Active}
}

// technicianJSON is a technician as the salon manages her; staffId null when
// she has no account.
type technicianJSON struct {
	TechnicianID int64   `json:"technicianId"`
	Name         string  `json:"name"`
	Active       bool    `json:"active"`
	ServiceIDs   []int64 `json:"serviceIds"`
	StaffID      *int64  `json:"staffId"`
}

func toTechnicianJSON(t *booking.Technician) technicianJSON {
	ids := t.ServiceIDs
	if ids == nil {
		ids = []int64{} // an empty list, never null
	}
	return technicianJSON{TechnicianID: t.ID, Name: t.Name, Active: t.Active, ServiceIDs: ids, StaffID: idOrNull(t.StaffID)}
}

// newServiceBody is the body of POST /admin/services (a new service is
// active); serviceBody of PATCH /admin/services/{id}. Absent fields are nil
// (the service says which are required); null is refused.
type newServiceBody struct {
	Name       *string `json:"name"`
	Minutes    *int    `json:"minutes"`
	PriceFen   *int64  `json:"priceFen"`
	DepositFen *int64  `json:"depositFen"`
}

type serviceBody struct {
	newServiceBody
	Active *bool `json:"active"`
}

func (b *newServiceBody) update() booking.ServiceUpdate {
	return booking.ServiceUpdate{Name: b.Name, Minutes: b.Minutes, PriceFen: b.PriceFen, DepositFen: b.DepositFen}
}

func (s *adminRoutes) listAllServices(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	list, err := menu.AdminServices(r.Context())
	if err != nil {
		return err
	}
	out := make([]adminServiceJSON, len(list))
	for i := range list {
		out[i] = toAdminServiceJSON(&list[i])
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"services": out})
	return nil
}

func (s *adminRoutes) createService(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	var body newServiceBody
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	sv, err := menu.CreateService(r.Context(), body.update())
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]any{"service": toAdminServiceJSON(sv)})
	return nil
}

func (s *adminRoutes) updateService(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var body serviceBody
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	u := body.update()
	u.Active = body.Active
	sv, err := menu.UpdateService(r.Context(), id, u)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"service": toAdminServiceJSON(sv)})
	return nil
}

func (s *adminRoutes) listTechnicians(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	list, err := menu.Technicians(r.Context())
	if err != nil {
		return err
	}
	out := make([]technicianJSON, len(list))
	for i := range list {
		out[i] = toTechnicianJSON(&list[i])
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"technicians": out})
	return nil
}

// technicianBody is the body of PATCH /admin/technicians/{id}. StaffID is
// raw so that null (unlink her account) is told from absent: the one request
// field of the API that may be null.
type technicianBody struct {
	Name       *string         `json:"name"`
	Active     *bool           `json:"active"`
	ServiceIDs *[]int64        `json:"serviceIds"`
	StaffID    json.RawMessage `json:"staffId" apigw:"nullable"`
}

func (b *technicianBody) update() (booking.TechnicianUpdate, error) {
	u := booking.TechnicianUpdate{Name: b.Name, Active: b.Active, ServiceIDs: b.ServiceIDs}
	if b.StaffID == nil {
		return u, nil
	}
	u.SetStaff = true
	if string(b.StaffID) == "null" {
		return u, nil // StaffID 0: no account
	}
	if err := json.Unmarshal(b.StaffID, &u.StaffID); err != nil || u.StaffID <= 0 {
		return u, booking.Errorf(booking.EBADREQUEST, "staffId: want a positive integer, or null to unlink")
	}
	return u, nil
}

// createTechnician adds a technician, active (the body has no "active"),
// with the services she does and, optional, her staff account.
func (s *adminRoutes) createTechnician(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	var body struct {
		Name       *string  `json:"name"`
		ServiceIDs *[]int64 `json:"serviceIds"`
		StaffID    *int64   `json:"staffId"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	u := booking.TechnicianUpdate{Name: body.Name, ServiceIDs: body.ServiceIDs}
	if body.StaffID != nil {
		if *body.StaffID <= 0 {
			return booking.Errorf(booking.EBADREQUEST, "staffId: want a positive integer")
		}
		u.SetStaff, u.StaffID = true, *body.StaffID
	}
	t, err := menu.CreateTechnician(r.Context(), u)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]any{"technician": toTechnicianJSON(t)})
	return nil
}

func (s *adminRoutes) updateTechnician(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var body technicianBody
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	u, err := body.update()
	if err != nil {
		return err
	}
	t, err := menu.UpdateTechnician(r.Context(), id, u)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"technician": toTechnicianJSON(t)})
	return nil
}

// openHours lays a technician's cells: 201 with how many were made and how
// many existed already.
func (s *adminRoutes) openHours(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var h booking.Hours
	if err := apigw.DecodeJSON(r, &h); err != nil {
		return err
	}
	created, skipped, err := menu.OpenHours(r.Context(), id, h)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]int{"created": created, "skipped": skipped})
	return nil
}

// bookingInTheWayJSON is a booking that holds a cell the salon asked to close.
type bookingInTheWayJSON struct {
	BookingID    int64   `json:"bookingId"`
	StartAt      string  `json:"startAt"`
	EndAt        string  `json:"endAt"`
	CustomerName *string `json:"customerName"`
}

// timeOffRefusal is the 409 of a time off refused: the error's code and
// message, and the bookings in the way for the console to list.
type timeOffRefusal struct {
	apigw.ErrorBody
	Bookings []bookingInTheWayJSON `json:"bookings"`
}

// timeOff closes a technician's cells of one day. Refused because bookings
// hold some of them, it answers the error with those bookings: the status is
// the code's, by apigw's one table, and the error is returned too, so the
// request's log line reports it as any other refusal.
func (s *adminRoutes) timeOff(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var o booking.TimeOff
	if err := apigw.DecodeJSON(r, &o); err != nil {
		return err
	}
	closed, err := menu.TimeOff(r.Context(), id, o)
	var way *booking.InTheWay
	if errors.As(err, &way) && len(way.Bookings) > 0 {
		apigw.WriteJSON(w, apigw.HTTPStatus(booking.ErrorCode(err)), toTimeOffRefusal(way, menu.Loc))
		return err
	}
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]int{"closed": closed})
	return nil
}

func toTimeOffRefusal(way *booking.InTheWay, loc *time.Location) timeOffRefusal {
	out := timeOffRefusal{ErrorBody: apigw.ErrorBody{Code: booking.ErrorCode(way), Message: booking.ErrorMessage(way)},
		Bookings: make([]bookingInTheWayJSON, 0, len(way.Bookings))}
	for _, b := range way.Bookings {
		j := bookingInTheWayJSON{BookingID: b.ID, StartAt: shopTime(b.StartAt, loc), EndAt: shopTime(b.EndAt, loc)}
		if b.Customer != nil {
			j.CustomerName = orNull(b.Customer.Name)
		}
		out.Bookings = append(out.Bookings, j)
	}
	return out
}
