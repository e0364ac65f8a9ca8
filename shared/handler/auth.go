// Package handler turns the gateway's requests into service calls: each
// function's main builds one of the routers here and hands it to apigw.Start
// (the SCF runtime's cloudfunction.Start on SCF). A handler checks who is
// asking, decodes and checks the request's shape, calls the service, and
// shapes the JSON answer; the rules themselves live in the service and the
// booking package.
package handler

import (
	"log/slog"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/instance"
	"salon/shared/service"
)

// Server is what one function's handlers need, built once when the function's
// main builds its router (SlotsRouter and the others) and passed to every
// handler as its receiver. The dependencies themselves (store, WeChat Pay,
// sessions) are built on first use by the function's instance.Env and a failure is
// not kept, so a fixed setting or a database that came back is picked up by the
// next request; the middleware below hands them to each handler as an argument,
// and no handler asks package instance for anything.
type Server struct {
	env *instance.Env // bound to the function: its settings, its dependencies
	log *slog.Logger
}

// newServer binds e to fn and returns the function's Server and its empty router.
func newServer(e *instance.Env, fn instance.Function) (*Server, *apigw.Router) {
	e = e.For(fn)
	s := &Server{env: e, log: e.Logger()}
	return s, apigw.NewRouter(fn.Name, s.log)
}

// deps returns the function's dependencies, building them on first use.
func (s *Server) deps() (*instance.Deps, error) { return s.env.Deps() }

// depsHandler is a handler that needs the function's dependencies.
type depsHandler func(w http.ResponseWriter, r *http.Request, d *instance.Deps) error

// customerHandler is a handler of a signed-in customer's request.
type customerHandler func(w http.ResponseWriter, r *http.Request, d *instance.Deps, openid string) error

// public serves a route anyone may call. A configuration that cannot be built
// answers INTERNAL (the log names the setting). Every error the handler returns
// is classified here, once for all routes: a database that is down or out of
// connections answers 503 UNAVAILABLE with Retry-After, never 500.
func (s *Server) public(h depsHandler) http.Handler {
	return apigw.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		d, err := s.deps()
		if err != nil {
			return err
		}
		return d.Svc.Classify(h(w, r, d))
	})
}

// customer serves a customer's route: the openid is the session token's, always,
// never a field of the body.
func (s *Server) customer(h customerHandler) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
		openid, err := customerOf(d, r)
		if err != nil {
			return err
		}
		return h(w, r, d, openid)
	})
}

// admin serves a route of the salon's JSON API: by its bearer token, or by a
// console session cookie (a change made with the cookie must carry the
// session's CSRF token in X-CSRF-Token).
func (s *Server) admin(h depsHandler) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request, d *instance.Deps) error {
		who, err := checkAdmin(r, d)
		if err != nil {
			return err
		}
		// The service allows each action by who asks, and records her.
		r = r.WithContext(service.WithStaff(r.Context(), who))
		return h(w, r, d)
	})
}

// customerOf returns the openid of the request's session token.
func customerOf(d *instance.Deps, r *http.Request) (string, error) {
	if err := d.Cfg.Require("SESSION_SECRET"); err != nil {
		return "", err
	}
	token := apigw.BearerToken(r)
	if token == "" {
		return "", booking.Errorf(booking.EUNAUTHORIZED, "no bearer token")
	}
	return d.Sessions.Verify(token)
}

// checkAdmin lets the salon in and says who asks. Without ADMIN_TOKEN the admin
// API is switched off (FORBIDDEN). A request with a bearer token is judged by
// the token alone and is the built-in owner's; one with a console session
// cookie is of the session's staff member. The token comparison takes the same
// time whatever the length of a wrong token and however much of it matches.
func checkAdmin(r *http.Request, d *instance.Deps) (booking.Staff, error) {
	if d.Cfg.AdminToken == "" {
		return booking.Staff{}, booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: admin API disabled")
	}
	got := apigw.BearerToken(r)
	if got == "" && consoleauth.CookieToken(r) != "" {
		return checkAPISession(r, d)
	}
	if !consoleauth.TokenMatches(got, d.Cfg.AdminToken) {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "wrong admin token")
	}
	return booking.BuiltInOwner, nil
}
