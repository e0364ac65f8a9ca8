// Package handler turns the gateway's requests into service calls: each
// function's main builds one of the routers here and hands it to apigw.Start
// (the SCF runtime's cloudfunction.Start on SCF). A handler checks who is
// asking, decodes and checks the request's shape, calls the service, and
// shapes the JSON answer; the rules themselves live in the service and the
// booking package.
package handler

import (
	"context"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/wire"
)

// depsHandler is a handler that needs the function's dependencies.
type depsHandler func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error)

// withDeps adapts a handler that needs the dependencies; a configuration that
// cannot be built answers INTERNAL (the log names the setting). Every error the
// handler returns is classified here, once for all routes: a database that is
// down or out of connections answers 503 UNAVAILABLE with Retry-After, never 500.
func withDeps(e *wire.Env, h depsHandler) apigw.HandlerFunc {
	return func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		d, err := e.Deps()
		if err != nil {
			return nil, err
		}
		resp, err := h(ctx, d, r)
		return resp, d.Svc.Classify(err)
	}
}

// customer returns the openid of the request's session token. The openid always
// comes from the token, never from the body.
func customerOf(d *wire.Deps, r *apigw.Request) (string, error) {
	if err := d.Cfg.Require("SESSION_SECRET"); err != nil {
		return "", err
	}
	token := r.BearerToken()
	if token == "" {
		return "", booking.Errorf(booking.EUNAUTHORIZED, "no bearer token")
	}
	return d.Sessions.Verify(token)
}

// checkAdmin lets the salon in: by its bearer token, or by a console session
// cookie (a change made with the cookie must carry the session's CSRF token in
// X-CSRF-Token). Without ADMIN_TOKEN the admin API is switched off (FORBIDDEN).
// The token comparison takes the same time whatever the length of a wrong token
// and however much of it matches.
func checkAdmin(ctx context.Context, d *wire.Deps, r *apigw.Request) error {
	if d.Cfg.AdminToken == "" {
		return booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: admin API disabled")
	}
	got := r.BearerToken()
	if got == "" && console.HasSessionCookie(r) {
		return console.CheckAPISession(ctx, d, r)
	}
	if !console.TokenMatches(got, d.Cfg.AdminToken) {
		return booking.Errorf(booking.EUNAUTHORIZED, "wrong admin token")
	}
	return nil
}
