package handler

// The console's routes and the middleware in front of them: sign-in by name and
// password (the built-in owner: admin and ADMIN_TOKEN), sign-out, changing
// one's password, and every page behind the session its route asks for. The
// session itself (cookie, signature, CSRF) is package consoleauth's; the pages
// (package console) receive an authenticated request.

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/handler/consoleauth"
	"salon/shared/instance"
	"salon/shared/service"
)

// consoleRoutes adds the console to the admin function's router: sign-in,
// sign-out and changing one's password here, the pages behind the
// authentication their route asks for. A page the route marks as one action's
// (the staff accounts) is refused with FORBIDDEN to a role that may not take
// it; every change is allowed or refused again by the service.
func (s *adminRoutes) consoleRoutes(rt *apigw.Router) {
	c := &console.Console{}
	rt.HandleFunc("GET /admin/login", s.consoleSignedOut(s.consoleLoginPage))
	rt.HandleFunc("POST /admin/login", s.consoleSignedOut(s.consoleLogin))
	rt.HandleFunc("POST /admin/logout", s.consoleSignedIn(true, "", s.consoleLogout))
	rt.HandleFunc("POST /admin/password", s.consoleSignedIn(true, "", s.consolePassword))
	for _, route := range c.Routes() {
		switch route.Access {
		case console.Asset:
			rt.HandleFunc(route.Pattern, route.Asset)
		case console.SignedIn, console.Change:
			page := route.Page
			rt.HandleFunc(route.Pattern, s.consoleSignedIn(route.Access == console.Change, route.Needs,
				func(w http.ResponseWriter, q *console.Request, _ *consoleauth.Session, _ *consoleCall) {
					page(w, q)
				}))
		}
	}
}

// consoleCall is what the console's sign-in and its pages use for one request:
// the admin token (the built-in owner's password), the console's keys, and
// what the pages are given (among it the accounts, Team).
type consoleCall struct {
	token string
	keys  *consoleauth.Keys
	pages *console.Services
}

// consoleSetup gets what a console request uses. The console needs ADMIN_TOKEN
// (without it the admin function is switched off) and SESSION_SECRET (its
// sessions are signed with it). A failure is answered as the error page.
func (s *adminRoutes) consoleSetup(w http.ResponseWriter, r *http.Request) (*consoleCall, bool) {
	shop, err := s.shop()
	if err != nil {
		console.Fail(w, r, "", err)
		return nil, false
	}
	c, err := s.gatherConsole(shop)
	switch {
	case err != nil:
		console.Fail(w, r, shop.Name, err)
		return nil, false
	case c.token == "":
		console.Off(w, r, shop.Name)
		return nil, false
	}
	return c, true
}

// gatherConsole takes the admin token, the console's keys and the pages' use
// cases from their getters. Once the function's dependencies are built, as
// shop says they are, none of these fails; each is still checked. Without
// ADMIN_TOKEN it stops there: the console is off.
func (s *adminRoutes) gatherConsole(shop instance.Shop) (*consoleCall, error) {
	c := &consoleCall{pages: &console.Services{ShopName: shop.Name}}
	var err error
	if c.token, err = s.token(); err != nil || c.token == "" {
		return c, err
	}
	if c.keys, err = s.keys(); err != nil {
		return nil, err
	}
	p := c.pages
	if p.Reads, err = s.reads(); err != nil {
		return nil, err
	}
	if p.Door, err = s.door(); err != nil {
		return nil, err
	}
	if p.Cancels, err = s.cancels(); err != nil {
		return nil, err
	}
	if p.Moves, err = s.moves(); err != nil {
		return nil, err
	}
	if p.Timetable, err = s.timetable(); err != nil {
		return nil, err
	}
	if p.Team, err = s.team(); err != nil {
		return nil, err
	}
	if p.Menu, err = s.menu(); err != nil {
		return nil, err
	}
	if p.Reports, err = s.reports(); err != nil {
		return nil, err
	}
	if p.Bills, err = s.bills(); err != nil {
		return nil, err
	}
	return c, nil
}

// consoleSignedOut serves the sign-in page and its form.
func (s *adminRoutes) consoleSignedOut(h func(w http.ResponseWriter, q *console.Request, c *consoleCall)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.consoleSetup(w, r)
		if ok {
			h(w, console.NewRequest(r, c.pages, nil, "", nil), c)
		}
	}
}

// consoleSignedIn serves a page that needs a session: without one a view sends
// the browser to sign in, and a change is refused. A change (a form post) must
// also carry the session's CSRF token. Neither failure says more than that the
// change was refused. needs, when set, is the action the page is for: a role
// that may not take it gets FORBIDDEN before the page runs. The request's
// context names the session's staff member, by whose role the service allows.
func (s *adminRoutes) consoleSignedIn(change bool, needs booking.AdminAction, h func(w http.ResponseWriter, q *console.Request, sess *consoleauth.Session, c *consoleCall)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.consoleSetup(w, r)
		if !ok {
			return
		}
		shop := c.pages.ShopName
		sess := c.keys.SessionOf(r, c.pages.Team)
		if sess == nil && !change {
			console.Redirect(w, "login")
			return
		}
		if sess == nil {
			console.Fail(w, r, shop, booking.Errorf(booking.EUNAUTHORIZED, "console change without a session"))
			return
		}
		r = r.WithContext(service.WithStaff(r.Context(), sess.Staff))
		if needs != "" {
			if err := sess.Staff.Role.Allow(needs); err != nil {
				console.FailPage(w, console.NewRequest(r, c.pages, &sess.Staff, sess.CSRF(), nil), err)
				return
			}
		}
		var form url.Values
		if change {
			var err error
			if form, err = console.ParseForm(r); err == nil {
				err = sess.CheckCSRF(form.Get(consoleauth.CSRFField))
			}
			if err != nil {
				console.Fail(w, r, shop, err)
				return
			}
		}
		h(w, console.NewRequest(r, c.pages, &sess.Staff, sess.CSRF(), form), sess, c)
	}
}

func (s *adminRoutes) consoleLoginPage(w http.ResponseWriter, q *console.Request, c *consoleCall) {
	if c.keys.SessionOf(q.HTTP(), c.pages.Team) != nil {
		console.Redirect(w, "./")
		return
	}
	console.RenderLogin(w, q, http.StatusOK, "", 0)
}

// consoleLogin signs in by name and password (the service checks them and
// counts failures). A wrong password, an unknown name and a disabled account get
// the same page and words; a locked name gets 429 with Retry-After.
func (s *adminRoutes) consoleLogin(w http.ResponseWriter, q *console.Request, c *consoleCall) {
	r, team, shop := q.HTTP(), c.pages.Team, c.pages.ShopName
	form, err := console.ParseForm(r)
	if err != nil {
		console.Fail(w, r, shop, err)
		return
	}
	name := strings.TrimSpace(form.Get("name"))
	st, err := team.SignIn(r.Context(), name, form.Get("password"), signInAddress(r), c.token)
	var locked *booking.Error
	switch {
	case booking.IsCode(err, booking.EUNAUTHORIZED):
		apigw.Logger(r.Context()).Warn("console sign-in refused")
		console.RenderLogin(w, q, http.StatusUnauthorized, name, 0)
		return
	case errors.As(err, &locked) && locked.Code == booking.ETOOMANYATTEMPTS:
		apigw.Logger(r.Context()).Warn("console sign-in of a locked name")
		w.Header().Set("Retry-After", strconv.Itoa(locked.RetryAfter))
		console.RenderLogin(w, q, http.StatusTooManyRequests, name, locked.RetryAfter)
		return
	case err != nil:
		console.Fail(w, r, shop, team.Classify(err))
		return
	}
	if err := c.keys.Start(w, r, *st); err != nil {
		console.Fail(w, r, shop, err)
		return
	}
	console.Redirect(w, "./")
}

// signInAddress is the client address a sign-in is counted under: the source
// address the gateway reports (apigw puts API Gateway's requestContext.sourceIp
// in RemoteAddr), never X-Forwarded-For or another header the client writes,
// which a guesser would set anew on every try.
func signInAddress(r *http.Request) string { return booking.SignInAddress(r.RemoteAddr) }

// consolePassword changes the signed-in person's own password: the service
// checks her current one (a wrong one counts as a failed sign-in of her name
// from this address; a locked name is 429 with Retry-After), makes the change
// only if her account is unchanged since her session began (else 401: an
// owner's reset ended the session) and ends her sessions; this browser gets a
// new session of the changed account, so she stays signed in here and nowhere
// else.
func (s *adminRoutes) consolePassword(w http.ResponseWriter, q *console.Request, _ *consoleauth.Session, c *consoleCall) {
	r, team := q.HTTP(), c.pages.Team
	form := q.Form()
	if form.Get("new") != form.Get("again") {
		console.PasswordOutcome(w, "mismatch")
		return
	}
	st, err := team.ChangeMyPassword(r.Context(), form.Get("current"), form.Get("new"), signInAddress(r))
	var locked *booking.Error
	switch {
	case errors.As(err, &locked) && locked.Code == booking.ETOOMANYATTEMPTS:
		apigw.Logger(r.Context()).Warn("console password change of a locked name")
		w.Header().Set("Retry-After", strconv.Itoa(locked.RetryAfter))
		console.FailPage(w, q, err)
		return
	case err != nil:
		err = team.Classify(err)
		if booking.IsCode(err, booking.EBADREQUEST) {
			console.PasswordOutcome(w, "refused")
			return
		}
		console.Fail(w, r, c.pages.ShopName, err)
		return
	}
	if err := c.keys.Start(w, r, *st); err != nil {
		// The password is changed and this session ended with it: sign in again.
		apigw.Logger(r.Context()).Error("console session after a password change", "err", err.Error())
		console.Redirect(w, "login")
		return
	}
	console.PasswordOutcome(w, "ok")
}

// consoleLogout ends the session: the browser drops the cookie, and the session
// is recorded as ended so that a copy of the cookie is refused too.
func (s *adminRoutes) consoleLogout(w http.ResponseWriter, q *console.Request, sess *consoleauth.Session, c *consoleCall) {
	r := q.HTTP()
	if err := c.pages.Team.EndConsoleSession(r.Context(), sess.ID, sess.ExpiresAt); err != nil {
		console.Fail(w, r, c.pages.ShopName, err)
		return
	}
	consoleauth.End(w, r)
	console.Redirect(w, "login")
}
