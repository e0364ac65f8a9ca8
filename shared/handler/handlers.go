package handler

// The slots and login functions: the public schedule, the shop's settings, the
// health check, the API document, and the mini-program's sign-in.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/openapi"
	"salon/shared/service"
	"salon/shared/session"
	"salon/shared/wxlogin"
)

// slotsRoutes are what function slots uses: the schedule, the menu of
// services and their free starts, and the shop's name
// and notification templates for GET /config.
type slotsRoutes struct {
	timetable lazy[*service.Timetable]
	menu      lazy[*service.Menu]
	shop      lazy[instance.Shop]
}

// SlotsRouter serves the public schedule, the menu and its free starts, and
// the health check (function slots).
func SlotsRouter(e *instance.Env) *apigw.Router {
	e = e.For(slotsFunction)
	s := &slotsRoutes{timetable: e.Timetable, menu: e.Menu, shop: e.Shop}
	rt := apigw.NewRouter(slotsFunction.Name, e.Logger())
	rt.HandleFunc("GET /healthz", s.healthz)
	rt.Handle("GET /slots", serve(s.timetable, s.slots))
	rt.Handle("GET /services", serve(s.menu, s.services))
	rt.Handle("GET /availability", serve(s.menu, s.availability))
	rt.Handle("GET /config", serve(s.timetable, s.shopConfig))
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
func (s *slotsRoutes) shopConfig(w http.ResponseWriter, r *http.Request, t *service.Timetable) error {
	shop, err := s.shop()
	if err != nil {
		return err
	}
	templates := map[string]string{}
	for kind, id := range shop.TemplateIDs {
		templates[string(kind)] = id
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{
		"shopName":           shop.Name,
		"bookingWindowDays":  t.Policy.BookingWindowDays,
		"cancelFreeHours":    t.Policy.CancelFreeHours,
		"rescheduleLimit":    t.Policy.RescheduleLimit,
		"subscribeTemplates": templates,
	})
	return nil
}

// healthz answers 503 both when the database does not answer and when the
// dependencies cannot be built: either way this instance cannot serve.
func (s *slotsRoutes) healthz(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, err := s.timetable()
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = t.Ping(pctx)
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

func (s *slotsRoutes) slots(w http.ResponseWriter, r *http.Request, t *service.Timetable) error {
	date, from, to, err := dayQuery(r, t.Loc)
	if err != nil {
		return err
	}
	slots, err := t.Schedule(r.Context(), from, to)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"date": date, "slots": toSlotsJSON(slots, t.Loc)})
	return nil
}

// serviceJSON is a service of the public menu, with the active technicians
// who do it.
type serviceJSON struct {
	ServiceID   int64               `json:"serviceId"`
	Name        string              `json:"name"`
	Minutes     int                 `json:"minutes"`
	PriceFen    int64               `json:"priceFen"`
	DepositFen  int64               `json:"depositFen"`
	Technicians []technicianRefJSON `json:"technicians"`
}

// technicianRefJSON names a technician as the customer picks her.
type technicianRefJSON struct {
	TechnicianID int64  `json:"technicianId"`
	Name         string `json:"name"`
}

func toTechnicianRefsJSON(ts []booking.TechnicianRef) []technicianRefJSON {
	out := make([]technicianRefJSON, len(ts))
	for i, t := range ts {
		out[i] = technicianRefJSON{TechnicianID: t.ID, Name: t.Name}
	}
	return out
}

// services answers the menu: the active services, each with its active
// technicians.
func (s *slotsRoutes) services(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	list, err := menu.Services(r.Context())
	if err != nil {
		return err
	}
	out := make([]serviceJSON, len(list))
	for i, sv := range list {
		out[i] = serviceJSON{ServiceID: sv.ID, Name: sv.Name, Minutes: sv.Minutes, PriceFen: sv.PriceFen,
			DepositFen: sv.DepositFen, Technicians: toTechnicianRefsJSON(sv.Technicians)}
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"services": out})
	return nil
}

// availableStartJSON is a free start of a service, with the technicians free
// for all of it in the order a booking without a named one tries them.
type availableStartJSON struct {
	StartAt     string              `json:"startAt"`
	EndAt       string              `json:"endAt"`
	Technicians []technicianRefJSON `json:"technicians"`
}

// availability answers the free starts of ?date= for ?serviceId=
// (&technicianId= for hers only).
func (s *slotsRoutes) availability(w http.ResponseWriter, r *http.Request, menu *service.Menu) error {
	date, err := oneQuery(r, "date")
	if err != nil {
		return err
	}
	serviceID, err := idQuery(r, "serviceId", true)
	if err != nil {
		return err
	}
	technicianID, err := idQuery(r, "technicianId", false)
	if err != nil {
		return err
	}
	a, err := menu.Availability(r.Context(), date, serviceID, technicianID)
	if err != nil {
		return err
	}
	starts := make([]availableStartJSON, len(a.Starts))
	for i, st := range a.Starts {
		starts[i] = availableStartJSON{StartAt: shopTime(st.StartAt, menu.Loc), EndAt: shopTime(st.EndAt, menu.Loc),
			Technicians: toTechnicianRefsJSON(st.Technicians)}
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"date": a.Date, "serviceId": a.ServiceID, "starts": starts})
	return nil
}

// idQuery reads a query parameter that is an id: a positive integer, once;
// absent is 0 unless required.
func idQuery(r *http.Request, name string, required bool) (int64, error) {
	if _, ok := r.URL.Query()[name]; !ok && !required {
		return 0, nil
	}
	v, err := oneQuery(r, name)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, booking.Errorf(booking.EBADREQUEST, "query %s: want a positive integer", name)
	}
	return id, nil
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

// loginRoutes are what function login uses: WeChat's code2session and how
// long to wait for it, the session signer, and the shop's time zone (Shop). It calls
// no use case: a sign-in has no booking in it.
type loginRoutes struct {
	sessions lazy[*session.Signer]
	wechat   lazy[*wxlogin.Client]
	timeout  func() time.Duration
	shop     lazy[instance.Shop]
}

// LoginRouter exchanges the mini-program's login code for a session token.
func LoginRouter(e *instance.Env) *apigw.Router {
	e = e.For(loginFunction)
	s := &loginRoutes{sessions: e.Sessions, wechat: e.Login, timeout: e.LoginTimeoutOrDefault, shop: e.Shop}
	rt := apigw.NewRouter(loginFunction.Name, e.Logger())
	rt.Handle("POST /login", apigw.HandlerFunc(s.login))
	return rt
}

// maxLoginCodeChars bounds the code of wx.login() a client may send, in
// characters.
const maxLoginCodeChars = 128

func (s *loginRoutes) login(w http.ResponseWriter, r *http.Request) error {
	// The settings login requires, in the order its list names them.
	sessions, err := s.sessions()
	if err != nil {
		return err
	}
	wechat, err := s.wechat()
	if err != nil {
		return err
	}
	shop, err := s.shop()
	if err != nil {
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
	wctx, cancel := context.WithTimeout(r.Context(), s.timeout())
	defer cancel()
	openid, err := wechat.Code2Session(wctx, body.Code)
	if err != nil {
		return err
	}
	token, exp, err := sessions.Issue(openid)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]string{"token": token, "expiresAt": shopTime(exp, shop.Loc)})
	return nil
}
