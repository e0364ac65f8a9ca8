package instance

import (
	"context"
	"encoding/json"

	"salon/shared/apigw"
	"salon/shared/config"
	"salon/shared/handler"
	"salon/shared/service"
)

// The product's functions and the settings each uses and requires. Which
// function uses which setting is written once, in package config's table of
// settings (config.FunctionSettings says why it matters: a bad setting on a
// function's list stops it, one off the list is a warning). Every name a
// function uses must also be passed to it by serverless.yml
// (TestFunctionSettingsDeclared).
var (
	slotsFunction     = function(config.FunctionSlots)
	loginFunction     = function(config.FunctionLogin)
	reserveFunction   = function(config.FunctionReserve)
	cancelFunction    = function(config.FunctionCancel)
	payNotifyFunction = function(config.FunctionPayNotify)
	adminFunction     = function(config.FunctionAdmin)
	releaseFunction   = function(config.FunctionRelease)
)

// Functions are the product's functions and the settings each uses, by name.
var Functions = []Function{slotsFunction, loginFunction, reserveFunction, cancelFunction,
	payNotifyFunction, adminFunction, releaseFunction}

// function is the named function with its settings from package config.
func function(name string) Function {
	uses, requires := config.FunctionSettings(name)
	return Function{Name: name, Settings: uses, Required: requires}
}

// Each function's router: e bound to the function (For), and the router's
// constructor in package handler given the getters of what it uses, one
// thing each, never the Env nor a bundle of its things (Service). A getter
// builds the function's dependencies on first use and keeps no failure.

// SlotsRouter is function slots: the public schedule, the menu and its free
// starts, the shop's settings, the health check and the API document.
func SlotsRouter(e *Env) *apigw.Router {
	e = e.For(slotsFunction)
	return handler.SlotsRouter(e.Logger(), e.Timetable, e.Menu, e.Shop)
}

// LoginRouter is function login: the mini-program's sign-in.
func LoginRouter(e *Env) *apigw.Router {
	e = e.For(loginFunction)
	return handler.LoginRouter(e.Logger(), e.Sessions, e.Login, e.LoginTimeoutOrDefault, e.Shop)
}

// ReserveRouter is function reserve: reservations, paying again, the
// waitlist, the customer's bookings and details.
func ReserveRouter(e *Env) *apigw.Router {
	e = e.For(reserveFunction)
	return handler.ReserveRouter(e.Logger(), e.Sessions, e.Reservations)
}

// CancelRouter is function cancel: the customer's cancel and move.
func CancelRouter(e *Env) *apigw.Router {
	e = e.For(cancelFunction)
	return handler.CancelRouter(e.Logger(), e.Sessions, e.Cancels, e.Moves)
}

// PayNotifyRouter is function paynotify: WeChat Pay's notifications.
func PayNotifyRouter(e *Env) *apigw.Router {
	e = e.For(payNotifyFunction)
	return handler.PayNotifyRouter(e.Logger(), e.Cashier, e.PayNotifications)
}

// AdminRouter is function admin: the salon's JSON API and the console.
func AdminRouter(e *Env) *apigw.Router {
	e = e.For(adminFunction)
	return handler.AdminRouter(e.Logger(), handler.AdminUses{
		Token: e.AdminToken, Keys: e.ConsoleKeys,
		Cancels: e.Cancels, Door: e.Door, Moves: e.Moves, Timetable: e.Timetable,
		ConsoleReads: e.ConsoleReads, Team: e.Team, Menu: e.Menu, Reports: e.Reports,
		Reconciliation: e.Reconciliation, Shop: e.Shop,
	})
}

// Release is function release, the timer's run.
func Release(e *Env) func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	e = e.For(releaseFunction)
	return handler.Release(e.Logger(), e.ReleaseRun)
}
