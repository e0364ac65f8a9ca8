// Package service is what the functions do: it combines the store with WeChat Pay so
// that each function's main only parses its event, calls one method here, and
// shapes the answer. Every status change still goes through the store's one
// status-change path; this package decides which change to ask for.
//
// The behaviour is split by use case (Reservations, Cancels, Cashier, Door,
// Moves, Timetable, Menu, ConsoleReads, Team, ReleaseRun, Reports, Reconciliation,
// and the Notifier they share),
// each a type over the small interface of the store methods it calls, declared
// beside it and nowhere else; Common is what they all share: the policy, the
// shop's time zone, the logger and the database's clock. New builds them once,
// each over its own store (Stores).
package service

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"salon/shared/booking"
	"salon/shared/logctx"
)

// AuditWriter writes a shipped audit record where the function's own log
// collects it (cls.JSONLines on stdout).
type AuditWriter interface {
	WriteAudit(rec booking.AuditRecord) error
}

// AuditShipper delivers audit records to CLS (implemented by *cls.Shipper).
type AuditShipper interface {
	Ship(ctx context.Context, source string, recs []booking.AuditRecord) error
}

// Common is what every use case shares, one value for all of them: the salon's
// rules in numbers, the shop's time zone, the logger, and the store's own
// (its clock, whether it answers, what its failures mean).
type Common struct {
	Loc *time.Location
	Log *slog.Logger
	// Policy is the salon's rules in numbers (package config reads it from the
	// settings); the store is given the same value.
	Policy booking.Policy

	base Basics
}

// Basics is the store's own: its clock (the one every rule about time is
// decided by), whether it answers, what its failures mean (UNAVAILABLE for a
// database that is down or out of connections), and closing it at the end of
// an instance.
type Basics interface {
	Now(ctx context.Context) (time.Time, error)
	Ping(ctx context.Context) error
	Classify(err error) error
	Close() error
}

// Service is every use case, built once by New and sharing one Common
// (setting Loc, Log or Policy here sets it for all). Package instance builds
// one per warm instance and gives each router the use cases it calls; the
// tools and tests call them through its promoted methods.
type Service struct {
	*Common
	*Notifier
	*Cashier
	*Reservations
	*Cancels
	*Door
	*Moves
	*Timetable
	*Menu
	*ConsoleReads
	*Team
	*ReleaseRun
	*Reports
	*Reconciliation
}

// Stores is the store of each use case, as the one interface that names what
// it calls: its own, declared in its file (ReservationsStore in
// reservations.go, ...), and Basics for what they share. A store method is
// written in the store and in the interface of each use case that calls it,
// nowhere else: no interface here gathers the whole store. Package instance
// gives its *mysql.DB for every field; a test may give one use case a store of
// its own.
type Stores struct {
	Basics         Basics
	Notifier       NotifierStore
	Cashier        CashierStore
	Reservations   ReservationsStore
	Cancels        CancelsStore
	Door           DoorStore
	Moves          MovesStore
	Timetable      TimetableStore
	Menu           MenuStore
	ConsoleReads   ConsoleReadsStore
	Team           TeamStore
	ReleaseRun     ReleaseRunStore
	Reports        ReportsStore
	Reconciliation ReconciliationStore
}

// New returns the service, each use case over its store in s, with the
// default policy; the caller sets the rest (WeChat Pay, the shop's time zone,
// the policy from the settings). The store is reachable only through the use
// cases: a handler has no way around their rules. A store left out of s is a
// mistake of the caller's, and panics here rather than at its first call.
func New(s Stores) *Service {
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			panic("service.New: no store for " + v.Type().Field(i).Name)
		}
	}
	c := &Common{base: s.Basics, Policy: booking.DefaultPolicy, Loc: time.UTC}
	n := &Notifier{Common: c, store: s.Notifier}
	pay := &Cashier{Common: c, store: s.Cashier, notify: n}
	bills := &Reconciliation{Common: c, store: s.Reconciliation}
	rel := &ReleaseRun{Common: c, store: s.ReleaseRun, cashier: pay, notify: n, bills: bills}
	return &Service{
		Common:         c,
		Notifier:       n,
		Cashier:        pay,
		Reservations:   &Reservations{Common: c, store: s.Reservations, cashier: pay, notify: n},
		Cancels:        &Cancels{Common: c, store: s.Cancels, cashier: pay, notify: n},
		Door:           &Door{Common: c, store: s.Door},
		Moves:          &Moves{Common: c, store: s.Moves, notify: n},
		Timetable:      &Timetable{Common: c, store: s.Timetable, notify: n},
		Menu:           &Menu{Common: c, store: s.Menu},
		ConsoleReads:   &ConsoleReads{Common: c, store: s.ConsoleReads, notify: n, release: rel},
		Team:           &Team{Common: c, store: s.Team},
		ReleaseRun:     rel,
		Reports:        &Reports{Common: c, store: s.Reports},
		Reconciliation: bills,
	}
}

// Close closes the store, at the end of a warm instance.
func (c *Common) Close() error { return c.base.Close() }

// logger returns the request's logger (request id, function, route) when ctx
// carries one, else the service's.
func (c *Common) logger(ctx context.Context) *slog.Logger {
	return logctx.From(ctx, c.Log)
}

// Classify gives an error from the service the code its answer needs: a
// database that did not answer, refused the connection or dropped it is
// UNAVAILABLE (the store knows which of its errors those are); any other error
// is returned as it is. The handlers apply it to every error they answer.
func (c *Common) Classify(err error) error { return c.base.Classify(err) }

// Now is the database's clock, the one every rule about time is decided by.
func (c *Common) Now(ctx context.Context) (time.Time, error) { return c.base.Now(ctx) }

// Ping checks that the database answers (GET /healthz).
func (c *Common) Ping(ctx context.Context) error { return c.base.Ping(ctx) }
