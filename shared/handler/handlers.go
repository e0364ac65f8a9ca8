package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/openapi"
	"salon/shared/service"
)

// maxMine is how many of a customer's bookings GET /bookings/mine answers.
const maxMine = 50

// SlotsRouter serves the public schedule and the health check (function slots).
func SlotsRouter(e *instance.Env) *apigw.Router {
	s, rt := newServer(e, slotsFunction)
	rt.HandleFunc("GET /healthz", s.healthz)
	rt.Handle("GET /slots", s.public(s.slots))
	rt.Handle("GET /config", s.public(s.shopConfig))
	rt.HandleFunc("GET /openapi.json", openAPIDocument)
	return rt
}

// openAPIDocument serves the API's OpenAPI document, so that a mini-program
// team can generate its types from the deployed API itself. It needs neither
// the database nor any setting.
func openAPIDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := openapi.JSON()
	if err != nil {
		apigw.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
}

// shopConfig answers what the mini-program shows and asks for before anyone
// signs in: the shop's name, how far ahead it books, the cancellation policy,
// how often a customer may move a booking herself (RESCHEDULE_LIMIT), and the subscribe-message template id of each kind of notification that is
// on (for wx.requestSubscribeMessage), so the client keeps no copy of them.
func (s *Server) shopConfig(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	templates := map[string]string{}
	for kind, id := range d.TemplateIDs {
		templates[string(kind)] = id
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{
		"shopName":           d.Cfg.ShopName,
		"bookingWindowDays":  d.Cfg.BookingWindowDays,
		"cancelFreeHours":    d.Cfg.CancelFreeHours,
		"rescheduleLimit":    d.Cfg.RescheduleLimit,
		"subscribeTemplates": templates,
	})
	return nil
}

// healthz answers 503 both when the database does not answer and when the
// dependencies cannot be built: either way this instance cannot serve.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d, err := s.deps()
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = d.Svc.Ping(pctx)
		cancel()
	}
	if err != nil {
		apigw.Logger(ctx).Error("health check failed", "err", err.Error())
		w.Header().Set("Retry-After", apigw.RetryAfterSeconds)
		apigw.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) slots(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	date, from, to, err := dayQuery(r, d.Cfg.ShopTZ)
	if err != nil {
		return err
	}
	slots, err := d.Svc.Schedule(r.Context(), from, to)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"date": date, "slots": toSlotsJSON(slots, d.Cfg.ShopTZ)})
	return nil
}

// dayQuery reads the required ?date=YYYY-MM-DD and returns it with the bounds of
// that shop day: a slot is listed under the day it starts.
func dayQuery(r *http.Request, loc *time.Location) (date string, from, to time.Time, err error) {
	if date, err = oneQuery(r, "date"); err != nil {
		return "", from, to, err
	}
	from, to, err = booking.DayBounds(date, loc)
	return date, from, to, err
}

// oneQuery returns the single value of a required query parameter; a repeated
// key is ambiguous and refused.
func oneQuery(r *http.Request, name string) (string, error) {
	vs := r.URL.Query()[name]
	if len(vs) != 1 || vs[0] == "" {
		return "", booking.Errorf(booking.EBADREQUEST, "query %s: want exactly one value, got %d", name, len(vs))
	}
	return vs[0], nil
}

// LoginRouter exchanges the mini-program's login code for a session token.
func LoginRouter(e *instance.Env) *apigw.Router {
	s, rt := newServer(e, loginFunction)
	rt.Handle("POST /login", s.public(s.login))
	return rt
}

// maxLoginCodeChars bounds the code of wx.login() a client may send, in
// characters.
const maxLoginCodeChars = 128

func (s *Server) login(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
	if err := d.Cfg.Require(loginFunction.Required...); err != nil {
		return err
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	// The limit counts characters, as the document says (maxLength counts
	// characters), not bytes.
	if n := utf8.RuneCountInString(body.Code); n == 0 || n > maxLoginCodeChars {
		return booking.Errorf(booking.EBADREQUEST, "code: want 1-%d characters", maxLoginCodeChars)
	}
	wctx, cancel := context.WithTimeout(r.Context(), s.env.LoginTimeoutOrDefault())
	defer cancel()
	openid, err := d.Login.Code2Session(wctx, body.Code)
	if err != nil {
		return err
	}
	token, exp, err := d.Sessions.Issue(openid)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]string{"token": token, "expiresAt": shopTime(exp, d.Cfg.ShopTZ)})
	return nil
}

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

// Release is the timer function: one release run, answered with its summary. An
// error makes SCF retry the run, which is safe: every step is idempotent.
func Release(e *instance.Env) func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	e = e.For(releaseFunction)
	return func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
		start := time.Now()
		d, err := e.Deps()
		if err != nil {
			e.Logger().Error("release: configuration", "err", err.Error())
			return service.Summary{}, errors.New(booking.ErrorMessage(err) + ": " + err.Error())
		}
		sum, err := d.Svc.Release(ctx)
		err = d.Svc.Classify(err)
		attrs := []any{"function", "release", "released", sum.Released, "confirmed", sum.Confirmed,
			"refunded", sum.Refunded, "audited", sum.Audited, "signinsDeleted", sum.SigninsDeleted,
			"duration_ms", time.Since(start).Milliseconds()}
		if err != nil {
			e.Logger().Error("release run failed", append(attrs, "code", booking.ErrorCode(err), "err", err.Error())...)
			return sum, err
		}
		e.Logger().Info("release run", attrs...)
		return sum, nil
	}
}
