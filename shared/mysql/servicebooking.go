package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

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
//  3. Each in turn, a short transaction of its own: the booking and its
//     audit record, then last her cells by the one conditional statement
//     (takeCells), COMMIT. A technician taken meanwhile rolls that
//     transaction back, and the next is tried; none left is SOLD_OUT (or
//     SLOT_NOT_BOOKABLE when cells closed meanwhile).
//
// None of the reads decides under concurrency: the unique keys (one
// unfinished booking per customer) and the conditional statement do.
func (db *DB) ReserveService(ctx context.Context, req booking.ServiceReserveRequest) (*booking.Booking, bool, error) {
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
	b, err := db.trySpans(ctx, spans, func(tx *sql.Tx, span booking.Span) (int64, error) {
		return db.reserveSpan(ctx, tx, req, facts, span)
	})
	if booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		return db.activeServiceExists(ctx, req)
	}
	return b, err == nil, err
}

// trySpans tries spans in turn, each by book in a transaction of its own
// (one the server picks as a deadlock's victim is run again), until one
// commits: that booking. A span taken or closed meanwhile moves on to the
// next; after the last, the refusal is SOLD_OUT if any span was taken, else
// SLOT_NOT_BOOKABLE. Any other error ends the tries.
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

// reserveSpan is one try of a reservation: the creation row reserve planned
// for the service and this span (its hold by booking.Policy.NewServiceHold:
// pending with the deposit to pay, or confirmed at once without one), the
// booking and its audit record written, the cells taken last.
func (db *DB) reserveSpan(ctx context.Context, tx *sql.Tx, req booking.ServiceReserveRequest, facts booking.ServiceFacts, span booking.Span) (int64, error) {
	plan, err := db.Policy.Plan(booking.Change{Event: booking.EventReserve, From: booking.StatusNew, Actor: booking.ActorCustomer},
		booking.ChangeFacts{New: &booking.NewFacts{Now: facts.Now, Service: facts.Service, Span: &span}})
	if err != nil {
		return 0, err
	}
	reason := "待付定金，技师时间保留中"
	if plan.Hold.Status == booking.StatusConfirmed {
		reason = "无需定金，直接确认"
	}
	var idem any
	if req.IdemKey != "" {
		idem = req.IdemKey
	}
	id, err := insertServiceBooking(ctx, tx, plan, *facts.Service, req.OpenID, nil, idem, true)
	if err != nil {
		return 0, err
	}
	return id, db.recordAndTake(ctx, tx, id, plan, reason)
}

// insertServiceBooking writes a new booking of service svc as plan says: its
// first cell, status and amount (the hold), the service, technician, full
// price and length, and (withOrder: a customer's reservation, not the
// salon's walk-in, which has no WeChat order and gets no messages) its order
// number. The unique keys refuse a customer's second unfinished booking
// (ACTIVE_BOOKING_EXISTS; also a concurrent retry with the same idempotency
// key, which the caller then finds).
func insertServiceBooking(ctx context.Context, tx *sql.Tx, plan *booking.ChangePlan, svc booking.Service, openid, customerID, idem any, withOrder bool) (int64, error) {
	if openid == "" {
		openid = nil
	}
	hold := plan.Hold
	res, err := tx.ExecContext(ctx, `INSERT INTO t_booking (slot_id, openid, customer_id, status, amount_fen, idem_key, lock_expire,
			created_at, updated_at, service_id, technician_id, price_fen, minutes)
		VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, ?, ?)`,
		plan.SlotID, openid, customerID, hold.Status, hold.AmountFen, idem, hold.LockExpire,
		svc.ID, plan.Span.TechnicianID, svc.PriceFen, plan.Span.Minutes())
	if k := dupKey(err); k == "uk_booking_active" || k == "uk_booking_customer_active" || k == "uk_booking_idem" {
		return 0, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "insert: duplicate %s", k)
	} else if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil || !withOrder {
		return id, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE t_booking SET out_trade_no = ? WHERE book_id = ?`, booking.OutTradeNo(id), id)
	return id, err
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
		id, err := insertServiceBooking(ctx, tx, plan, *facts.Service, openid, customerID, nil, false)
		if err != nil {
			return 0, err
		}
		return id, db.recordAndTake(ctx, tx, id, plan, "店内代约（到店或电话），到店付款")
	})
	if err != nil {
		return nil, err
	}
	return b, db.AttachCustomers(ctx, []*booking.Booking{b})
}
