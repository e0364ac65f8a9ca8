package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

// A booking of a service with a technician's time: the reservation and the
// walk-in. The same creation rows of the state machine as a seat's, planned
// by booking.Policy.Plan from the service and the span of cells it takes;
// the cells taken last by the one seat-taking function, all or none.

// ReserveService books service req.ServiceID at req.StartAt for a customer,
// with req.TechnicianID or any free technician: the reservation of "The
// reservation, step by step" (shared/README.md) with the span's cells for its
// seat and the service's deposit for its amount. It answers the booking and
// whether this call created it (false when an idempotency key named an
// existing reservation).
//
//  1. With an idempotency key, the reservation it names, if any.
//  2. One pre-read, no lock (serviceFacts: three statements): the service
//     and the clock with the customer's unfinished bookings, the technicians,
//     their cells of the day. booking.Policy.TechniciansToTry answers every
//     refusal that needs no write (NOT_FOUND, ACTIVE_BOOKING_EXISTS,
//     SLOT_NOT_BOOKABLE, SOLD_OUT) and orders the free technicians (fewest
//     booked minutes that day, then the lowest id).
//  3. One CALL of salon_reserve_span (reserveSpans): each technician in
//     that order, a short transaction of its own on the server: first her
//     cells by conditional UPDATEs, then, all of them taken, the booking, its
//     audit record and its cells' rows, COMMIT. A technician taken meanwhile
//     rolls back only her counters, and the next is tried; none left is
//     SOLD_OUT (or SLOT_NOT_BOOKABLE when cells closed meanwhile).
//
// None of the reads decides under concurrency: the unique keys (one
// unfinished booking per customer) and the conditional statements do.
func (db *DB) ReserveService(ctx context.Context, req booking.ServiceReserveRequest) (_ *booking.Booking, _ bool, err error) {
	defer wrap(&err, "ReserveService(service %d, technician %d, %s)", req.ServiceID, req.TechnicianID, utc(req.StartAt))
	if req.IdemKey != "" {
		if b, err := db.findServiceByIdemKey(ctx, req); b != nil || err != nil {
			return b, false, err
		}
	}
	facts, active, err := db.serviceFacts(ctx, req.ServiceID, req.TechnicianID, req.DayStart, req.DayEnd, req.OpenID)
	if err != nil {
		return nil, false, err
	}
	spans, err := db.Policy.TechniciansToTry(facts, req.ServiceID, req.StartAt, booking.CreationRule(booking.EventReserve, booking.ActorCustomer))
	switch {
	case booking.IsCode(err, booking.ENOTFOUND):
		return nil, false, err
	case active > 0:
		return db.activeServiceExists(ctx, req)
	case err != nil:
		return nil, false, err
	}
	b, err := db.reserveSpans(ctx, req, facts, spans)
	if booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		return db.activeServiceExists(ctx, req)
	}
	return b, err == nil, err
}

// reserveSpanSQL is the whole write of a reservation of a service, its
// commits and its outcome, in one call of the stored procedure
// salon_reserve_span (migrations/0024, its cells first since 0027): the technicians' spans in the order
// to try, the span's start and the end of its first cell (the seat rule's
// clock), the rule, the booking window, then the booking's row as the plan
// has it. Two round trips past the idempotency read (the pre-read's three
// statements and this) instead of some ten (a transaction of seven
// statements a technician, and the booking read back): the same reason as
// reserveSQL's, and every cell's lock is held for the server's own work only.
const reserveSpanSQL = `CALL salon_reserve_span(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// reserveSpans books the first of spans (technicians in the order to try)
// whose cells it can take, by reserveSpanSQL, and answers the booking as
// findBooking would read it, built from the plan and the procedure's answer
// (the id, the technician, the row's created_at) rather than read back.
//
// Each span's creation row comes from booking.Policy.Plan (reserve: its hold,
// pending with the deposit to pay or confirmed at once without one, its audit
// actor and seat rule). Only its first cell differs between technicians,
// which the procedure takes per try; a plan that differed otherwise, or wrote
// a message, could not ride in the one call, and is an error rather than a
// booking written otherwise than planned. A refusal is the procedure's SIGNAL:
// SOLD_OUT when a try met a booked cell, else SLOT_NOT_BOOKABLE; a duplicate
// on the booking's unique keys is ACTIVE_BOOKING_EXISTS. A deadlock's victim
// (its tries all rolled back) is run again whole.
func (db *DB) reserveSpans(ctx context.Context, req booking.ServiceReserveRequest, facts booking.ServiceFacts, spans []booking.Span) (*booking.Booking, error) {
	if len(spans) == 0 {
		return nil, booking.Errorf(booking.ESLOTNOTBOOKABLE, "no technician to try")
	}
	change := booking.Change{Event: booking.EventReserve, From: booking.StatusNew, Actor: booking.ActorCustomer}
	plans := make(map[int64]*booking.ChangePlan, len(spans))
	tries := make([][]any, len(spans))
	var first *booking.ChangePlan
	for i := range spans {
		span := spans[i]
		plan, err := db.Policy.Plan(change, booking.ChangeFacts{New: &booking.NewFacts{Now: facts.Now, Service: facts.Service, Span: &span}})
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = plan
		}
		if len(plan.Notify) > 0 || plan.Hold == nil || *plan.Hold != *first.Hold || plan.SeatRule != first.SeatRule || plan.AuditActor() != first.AuditActor() {
			return nil, fmt.Errorf("mysql: reserve of technician %d: a plan the one call cannot write (%+v)", span.TechnicianID, plan)
		}
		plans[span.TechnicianID] = plan
		cells := slices.Clone(span.Cells)
		slices.Sort(cells) // the order the cells are locked in, as takeCells' IN list
		tries[i] = []any{span.TechnicianID, plan.SlotID, cells}
	}
	start := spans[0].Start
	if _, _, err := cellRuleSQL(first.SeatRule, start, db.Policy); err != nil {
		return nil, err
	}
	triesJSON, err := json.Marshal(tries)
	if err != nil {
		return nil, err
	}
	hold := *first.Hold
	reason := "待付定金，技师时间保留中"
	if hold.Status == booking.StatusConfirmed {
		reason = "无需定金，直接确认"
	}
	var idem any
	if req.IdemKey != "" {
		idem = req.IdemKey
	}
	svc := *facts.Service
	var (
		id, tech int64
		created  time.Time
	)
	err = retryDeadlock(func() error {
		// Every error rolls back on the server (the procedure's exit handler),
		// so the connection goes back to the pool clean.
		return db.db.QueryRowContext(ctx, reserveSpanSQL, string(triesJSON), start.UTC(),
			start.Add(time.Duration(db.Policy.GridMinutes)*time.Minute).UTC(), int(first.SeatRule), db.Policy.BookingWindowDays,
			req.OpenID, int64(hold.Status), hold.AmountFen, idem, hold.LockExpire, svc.ID, svc.PriceFen, spans[0].Minutes(),
			first.Event, first.AuditActor(), reason).Scan(&id, &tech, &created)
	})
	if k := dupKey(err); k == "uk_booking_active" || k == "uk_booking_customer_active" || k == "uk_booking_idem" {
		return nil, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "insert: duplicate %s", k)
	}
	switch spanRefusal(err) {
	case "span sold out":
		return nil, booking.Errorf(booking.ESOLDOUT, "every technician's span at %s taken meanwhile", start.Format(time.RFC3339))
	case "span not bookable":
		return nil, booking.Errorf(booking.ESLOTNOTBOOKABLE, "every technician's span at %s closed, or the start passed, meanwhile", start.Format(time.RFC3339))
	}
	if err != nil {
		return nil, err
	}
	plan, ok := plans[tech]
	if !ok {
		return nil, fmt.Errorf("mysql: booking %d: technician %d was not tried", id, tech)
	}
	b := &booking.Booking{
		ID: id, SlotID: plan.SlotID, OpenID: req.OpenID, Status: hold.Status, AmountFen: hold.AmountFen,
		OutTradeNo: booking.OutTradeNo(id), IdemKey: req.IdemKey, LockExpire: hold.LockExpire.UTC(),
		CreatedAt: created, UpdatedAt: created, StartAt: plan.Span.Start.UTC(), EndAt: plan.Span.End.UTC(),
		ServiceID: svc.ID, ServiceName: svc.Name, TechnicianID: tech, PriceFen: svc.PriceFen,
	}
	for _, c := range facts.Candidates {
		if c.Technician.ID == tech {
			b.TechnicianName = c.Technician.Name
		}
	}
	return b, nil
}

// spanRefusal is salon_reserve_span's SIGNAL (SQLSTATE 45000): its message,
// or "" for any other error.
func spanRefusal(err error) string {
	var me *drv.MySQLError
	if errors.As(err, &me) && string(me.SQLState[:]) == "45000" {
		return me.Message
	}
	return ""
}

// trySpans tries spans in turn, each by book in a transaction of its own
// (one the server picks as a deadlock's victim is run again), until one
// commits: that booking. A span taken or closed meanwhile moves on to the
// next; after the last, the refusal is SOLD_OUT if any span was taken, else
// SLOT_NOT_BOOKABLE. Any other error ends the tries. The walk-in's way, in
// Go (its customer is found or made in the same transaction); the
// reservation's is one CALL (reserveSpans).
func (db *DB) trySpans(ctx context.Context, spans []booking.Span, book func(tx *sql.Tx, span booking.Span) (int64, error)) (*booking.Booking, error) {
	var refused error
	for _, span := range spans {
		var id int64
		err := db.transact(ctx, nil, func(tx *sql.Tx) (err error) {
			id, err = book(tx, span)
			return err
		})
		switch {
		case err == nil:
			return findBooking(ctx, db.db, id)
		case booking.IsCode(err, booking.ESOLDOUT):
			refused = err
		case booking.IsCode(err, booking.ESLOTNOTBOOKABLE):
			if refused == nil {
				refused = err
			}
		default:
			return nil, err
		}
	}
	return nil, refused
}

// insertServiceBooking writes a new booking of service svc as plan says: its
// first cell and its start, status and amount (the hold), the service,
// technician, full price and length. The salon's walk-in: no WeChat order number, no
// idempotency key (a reservation's row is written by salon_reserve_span).
// The unique keys refuse a customer's second unfinished booking
// (ACTIVE_BOOKING_EXISTS).
func insertServiceBooking(ctx context.Context, tx *sql.Tx, plan *booking.ChangePlan, svc booking.Service, openid, customerID any) (int64, error) {
	if openid == "" {
		openid = nil
	}
	hold := plan.Hold
	res, err := tx.ExecContext(ctx, `INSERT INTO t_booking (slot_id, openid, customer_id, status, amount_fen, idem_key, lock_expire,
			created_at, updated_at, service_id, technician_id, price_fen, minutes, starts_at)
		VALUES (?, ?, ?, ?, ?, NULL, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, ?, ?, ?)`,
		plan.SlotID, openid, customerID, hold.Status, hold.AmountFen, hold.LockExpire,
		svc.ID, plan.Span.TechnicianID, svc.PriceFen, plan.Span.Minutes(), plan.Span.Start.UTC())
	if k := dupKey(err); k == "uk_booking_active" || k == "uk_booking_customer_active" || k == "uk_booking_idem" {
		return 0, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "insert: duplicate %s", k)
	} else if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// recordAndTake writes a new booking's audit record and its row's messages,
// and last takes its span's cells under the row's rule: no cells is the
// refusal whyCellsNotTaken reads, and the caller's transaction rolls back.
func (db *DB) recordAndTake(ctx context.Context, tx *sql.Tx, id int64, plan *booking.ChangePlan, reason string) error {
	if err := insertAudit(ctx, tx, booking.AuditRecord{BookingID: id, SlotID: plan.SlotID, Event: plan.Event,
		FromStatus: int(plan.From), ToStatus: int(plan.Hold.Status), Actor: plan.AuditActor(), Reason: reason}); err != nil {
		return err
	}
	for _, kind := range plan.Notify { // none today: neither creation row writes a message
		if err := enqueueNotification(ctx, tx, id, kind); err != nil {
			return err
		}
	}
	err := takeSeats(ctx, tx, id, plan.Span.Cells, plan.Span, plan.SeatRule, db.Policy)
	if errors.Is(err, errSeatNotTaken) {
		return whyCellsNotTaken(ctx, tx, plan.Span.Cells, *plan.Span, plan.SeatRule, db.Policy)
	}
	return err
}

// activeServiceExists is activeExists for a reservation of a service: the
// booking this request's idempotency key names when a retry won, else
// ACTIVE_BOOKING_EXISTS.
func (db *DB) activeServiceExists(ctx context.Context, req booking.ServiceReserveRequest) (*booking.Booking, bool, error) {
	if req.IdemKey != "" {
		if b, err := db.findServiceByIdemKey(ctx, req); b != nil || err != nil {
			return b, false, err
		}
	}
	return nil, false, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "customer holds an unfinished booking")
}

// findServiceByIdemKey returns the reservation an idempotency key already
// names, nil if none. The key names one reservation: another service, start
// or technician (when one is named) is INVALID_STATE. A booking moved since
// answers for where it was reserved: its first cell's start and technician
// (first_slot_id, kept from its first move on).
func (db *DB) findServiceByIdemKey(ctx context.Context, req booking.ServiceReserveRequest) (*booking.Booking, error) {
	b, err := scanBooking(db.db.QueryRowContext(ctx, `SELECT `+bookingColumns+bookingFrom+`WHERE b.openid = ? AND b.idem_key = ?`, req.OpenID, req.IdemKey))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var start time.Time
	var tech int64
	if err := db.db.QueryRowContext(ctx, `SELECT start_at, technician_key FROM t_slot
		WHERE slot_id = (SELECT COALESCE(first_slot_id, slot_id) FROM t_booking WHERE book_id = ?)`, b.ID).Scan(&start, &tech); err != nil {
		return nil, err
	}
	if b.ServiceID != req.ServiceID || !start.Equal(req.StartAt) || (req.TechnicianID != 0 && tech != req.TechnicianID) {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "idempotency key names booking %d: service %d at %s with technician %d",
			b.ID, b.ServiceID, start.Format(time.RFC3339), tech)
	}
	return b, nil
}

// walkInService is WalkIn for a service (req.ServiceID): the creation row
// walk_in planned for the service and a span, confirmed at once for nothing
// (paid in the shop). The technicians are tried as a reservation tries them
// (booking.Policy.TechniciansToTry under the row's rule,
// booking.SeatIfOpenForWalkIn: the cell running now still takes the person
// sitting down), each in a transaction of its own with the customer found or
// made (walkInCustomer), the booking, its audit record and last the cells.
func (db *DB) walkInService(ctx context.Context, req booking.WalkInRequest) (*booking.Booking, error) {
	facts, _, err := db.serviceFacts(ctx, req.ServiceID, req.TechnicianID, req.DayStart, req.DayEnd, "")
	if err != nil {
		return nil, err
	}
	spans, err := db.Policy.TechniciansToTry(facts, req.ServiceID, req.StartAt, booking.CreationRule(booking.EventWalkIn, booking.ActorSalon))
	if err != nil {
		return nil, err
	}
	b, err := db.trySpans(ctx, spans, func(tx *sql.Tx, span booking.Span) (int64, error) {
		customerID, openid, err := walkInCustomer(ctx, tx, req)
		if err != nil {
			return 0, err
		}
		plan, err := db.Policy.Plan(booking.Change{Event: booking.EventWalkIn, From: booking.StatusNew, Actor: booking.ActorSalon, By: req.By},
			booking.ChangeFacts{New: &booking.NewFacts{Now: facts.Now, Service: facts.Service, Span: &span}})
		if err != nil {
			return 0, err
		}
		id, err := insertServiceBooking(ctx, tx, plan, *facts.Service, openid, customerID)
		if err != nil {
			return 0, err
		}
		return id, db.recordAndTake(ctx, tx, id, plan, "店内代约（到店或电话），到店付款")
	})
	if err != nil {
		return nil, err
	}
	return b, db.attachCustomers(ctx, []*booking.Booking{b})
}
