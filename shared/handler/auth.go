// Package handler turns the gateway's requests into service calls: each
// function's main builds one of the routers here and hands it to apigw.Start
// (the SCF runtime's cloudfunction.Start on SCF). A handler checks who is
// asking, decodes and checks the request's shape, calls the service, and
// shapes the JSON answer; the rules themselves live in the service and the
// booking package.
package handler

import (
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/service"
	"salon/shared/session"
)

// Each function's router is a struct of what its handlers use: the use cases
// they call and the few other things they need (the session signer, the
// shop's name), each as the getter of its function's instance.Env, taken once
// when the function's main builds the router. The Env builds them on first
// use and keeps no failure, so a fixed setting or a database that came back is
// picked up by the next request; a handler reaches nothing it was not given.

// lazy is one dependency, built on first use; a failure is not kept.
type lazy[T any] func() (T, error)

// useCase is what the middleware asks of every use case: what an error means
// (service.Common.Classify: a database that is down or out of connections is
// UNAVAILABLE).
type useCase interface {
	Classify(err error) error
}

// serve is a route that calls the use case get gives: a use case that cannot
// be built answers its error (INTERNAL; the log names the setting). Every error
// the handler returns is classified here, once for all routes: a database that
// is down or out of connections answers 503 UNAVAILABLE with Retry-After,
// never 500.
func serve[U useCase](get lazy[U], h func(w http.ResponseWriter, r *http.Request, u U) error) http.Handler {
	return apigw.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		u, err := get()
		if err != nil {
			return err
		}
		return u.Classify(h(w, r, u))
	})
}

// customers lets a customer in by her session token.
type customers struct {
	sessions lazy[*session.Signer]
}

// customer serves a customer's route: the openid is the session token's, always,
// never a field of the body.
func customer[U useCase](c customers, get lazy[U], h func(w http.ResponseWriter, r *http.Request, u U, openid string) error) http.Handler {
	return serve(get, func(w http.ResponseWriter, r *http.Request, u U) error {
		openid, err := c.openid(r)
		if err != nil {
			return err
		}
		return h(w, r, u, openid)
	})
}

// openid returns the openid of the request's session token.
func (c customers) openid(r *http.Request) (string, error) {
	signer, err := c.sessions()
	if err != nil {
		return "", err
	}
	token := apigw.BearerToken(r)
	if token == "" {
		return "", booking.Errorf(booking.EUNAUTHORIZED, "no bearer token")
	}
	return signer.Verify(token)
}

// salon lets the salon in: by ADMIN_TOKEN, or by a console session (its keys,
// and the accounts, which say whose a session still is).
type salon struct {
	token    lazy[string]
	keys     lazy[*consoleauth.Keys]
	accounts lazy[*service.Team]
}

// admin serves a route of the salon's JSON API: by its bearer token, or by a
// console session cookie (a change made with the cookie must carry the
// session's CSRF token in X-CSRF-Token).
func admin[U useCase](s salon, get lazy[U], h func(w http.ResponseWriter, r *http.Request, u U) error) http.Handler {
	return serve(get, func(w http.ResponseWriter, r *http.Request, u U) error {
		who, err := s.who(r)
		if err != nil {
			return err
		}
		// The service allows each action by who asks, and records her.
		r = r.WithContext(service.WithStaff(r.Context(), who))
		return h(w, r, u)
	})
}

// who lets the salon in and says who asks. Without ADMIN_TOKEN the admin API
// is switched off (FORBIDDEN). A request with a bearer token is judged by the
// token alone and is the built-in owner's; one with a console session cookie
// is of the session's staff member. The token comparison takes the same time
// whatever the length of a wrong token and however much of it matches.
func (s salon) who(r *http.Request) (booking.Staff, error) {
	token, err := s.token()
	if err != nil {
		return booking.Staff{}, err
	}
	if token == "" {
		return booking.Staff{}, booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: admin API disabled")
	}
	got := apigw.BearerToken(r)
	if got == "" && consoleauth.CookieToken(r) != "" {
		return s.apiSession(r)
	}
	if !consoleauth.TokenMatches(got, token) {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "wrong admin token")
	}
	return booking.BuiltInOwner, nil
}

// apiSession authenticates a JSON admin API request by its session cookie
// (consoleauth.Keys.CheckAPIRequest says how).
func (s salon) apiSession(r *http.Request) (booking.Staff, error) {
	k, err := s.keys()
	if err != nil {
		return booking.Staff{}, err
	}
	accounts, err := s.accounts()
	if err != nil {
		return booking.Staff{}, err
	}
	return k.CheckAPIRequest(r, accounts)
}
