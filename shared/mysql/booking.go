package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"salon/shared/booking"
)

const bookingColumns = `b.book_id, b.slot_id, COALESCE(b.openid, ''), COALESCE(b.customer_id, 0), b.status, b.amount_fen, COALESCE(b.out_trade_no, ''),
	COALESCE(b.idem_key, ''), b.lock_expire, COALESCE(b.transaction_id, ''), b.paid_at,
	b.refund_status, b.refund_fen, b.refund_no, b.refunded_at, b.refund_attempts, b.created_at, b.updated_at,
	b.reschedules, s.start_at, ` + bookingEnd + `,
	COALESCE(b.service_id, 0), COALESCE(sv.name, ''), COALESCE(b.technician_id, 0), COALESCE(tc.name, ''), COALESCE(b.price_fen, s.price_fen)`

// bookingFrom joins a booking b with its slot s (a technician's booking: its
// first cell) and, for a booking of a service, the service sv and the
// technician tc by their primary keys (their names as they are now).
const bookingFrom = ` FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
	LEFT JOIN t_service sv ON sv.service_id = b.service_id LEFT JOIN t_technician tc ON tc.technician_id = b.technician_id `

// bookingEnd is when booking b in slot s ends: its slot's end in seat mode;
// a technician's booking spans its service, from its first cell's start for
// the minutes it was booked for (whatever the service's length became since).
const bookingEnd = `IF(b.minutes IS NULL, s.end_at, s.start_at + INTERVAL b.minutes MINUTE)`

func scanBooking(row interface{ Scan(...any) error }) (*booking.Booking, error) {
	var b booking.Booking
	var refundStatus, refundNo sql.NullString
	var refundFen sql.NullInt64
	var refundedAt sql.NullTime
	var refundAttempts int
	var paidAt sql.NullTime
	if err := row.Scan(&b.ID, &b.SlotID, &b.OpenID, &b.CustomerID, &b.Status, &b.AmountFen, &b.OutTradeNo,
		&b.IdemKey, &b.LockExpire, &b.TransactionID, &paidAt,
		&refundStatus, &refundFen, &refundNo, &refundedAt, &refundAttempts, &b.CreatedAt, &b.UpdatedAt,
		&b.Reschedules, &b.StartAt, &b.EndAt,
		&b.ServiceID, &b.ServiceName, &b.TechnicianID, &b.TechnicianName, &b.PriceFen); err != nil {
		return nil, err
	}
	if paidAt.Valid {
		t := paidAt.Time
		b.PaidAt = &t
	}
	if refundStatus.Valid {
		b.Refund = &booking.Refund{Status: booking.RefundStatus(refundStatus.String), AmountFen: refundFen.Int64,
			OutRefundNo: refundNo.String, Attempts: refundAttempts}
		if refundedAt.Valid {
			t := refundedAt.Time
			b.Refund.RefundedAt = &t
		}
	}
	return &b, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func findBooking(ctx context.Context, q querier, id int64) (*booking.Booking, error) {
	b, err := scanBooking(q.QueryRowContext(ctx, `SELECT `+bookingColumns+bookingFrom+`WHERE b.book_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "booking %d not found", id)
	}
	return b, err
}

// FindBooking returns a booking by id.
func (db *DB) FindBooking(ctx context.Context, id int64) (_ *booking.Booking, err error) {
	defer wrap(&err, "FindBooking(book %d)", id)
	return findBooking(ctx, db.db, id)
}

// FindCustomerBooking returns the customer's own booking. Someone else's booking
// is NOT_FOUND, exactly like one that does not exist, so ids reveal nothing.
func (db *DB) FindCustomerBooking(ctx context.Context, openid string, id int64) (_ *booking.Booking, err error) {
	defer wrap(&err, "FindCustomerBooking(book %d)", id)
	b, err := findBooking(ctx, db.db, id)
	if err != nil {
		return nil, err
	}
	if b.OpenID != openid {
		return nil, booking.Errorf(booking.ENOTFOUND, "booking %d belongs to another customer", id)
	}
	return b, nil
}

// ListCustomerBookings returns a customer's bookings, newest first.
func (db *DB) ListCustomerBookings(ctx context.Context, openid string, limit int) (_ []*booking.Booking, err error) {
	defer wrap(&err, "ListCustomerBookings()")
	return db.listBookings(ctx, `WHERE b.openid = ? ORDER BY b.book_id DESC LIMIT ?`, openid, limit)
}

// CountNoShows returns how many of the customer's bookings are no-shows whose
// slot started within the last `within` (NO_SHOW_LIMIT's window).
func (db *DB) CountNoShows(ctx context.Context, openid string, within time.Duration) (_ int, err error) {
	defer wrap(&err, "CountNoShows()")
	var n int
	err = db.db.QueryRowContext(ctx, `SELECT `+noShowsOf("?"), openid, booking.StatusNoShow, within.Microseconds()).Scan(&n)
	return n, err
}

// noShowsOf counts the no-shows of the customer named by the SQL expression
// openid whose slots started within a window; its parameters are the no-show
// status and the window in microseconds. Reserve's refusal and the waitlist's
// passing over count them the same way.
func noShowsOf(openid string) string {
	return noShowsWhere(`nb.openid = ` + openid)
}

// noShowsWhere is noShowsOf for the bookings nb that the SQL condition who
// picks: the salon's view of a customer counts her walk-ins (customer_id) with
// her mini-program bookings (openid) in the same window.
func noShowsWhere(who string) string {
	return `(SELECT COUNT(*) FROM t_booking nb JOIN t_slot ns ON ns.slot_id = nb.slot_id
		WHERE ` + who + ` AND nb.status = ? AND ns.start_at >= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)`
}

// ListSlotBookings returns the bookings of the slots starting in [from, to), for
// the salon's day view.
func (db *DB) ListSlotBookings(ctx context.Context, from, to time.Time) (_ []*booking.Booking, err error) {
	defer wrap(&err, "ListSlotBookings(%s)", span(from, to))
	return db.listBookings(ctx, `WHERE s.start_at >= ? AND s.start_at < ? ORDER BY s.start_at, b.book_id`, from.UTC(), to.UTC())
}

func (db *DB) listBookings(ctx context.Context, where string, args ...any) ([]*booking.Booking, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+bookingColumns+bookingFrom+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*booking.Booking
	for rows.Next() {
		b, err := scanBooking(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Reserve takes a seat for the customer (steps 1-3 of "The reservation, step by
// step" in shared/README.md; step 4, the WeChat order, is the service's). It
// answers the booking and whether this call created it (false when an
// idempotency key named an existing reservation).
//
// The order of work matters when a hundred customers want the last seat: every
// check that needs no lock runs first (one read), then one round trip writes the
// booking and its audit record, takes the seat and commits (or, if the seat went
// meanwhile, rolls the two back). The slot row, the one thing all of them contend
// for, is locked by the conditional UPDATE, the transaction's last statement, and
// released by the COMMIT that the server runs right after, in the same round
// trip: held for those two only, never while a network round trip passes.
func (db *DB) Reserve(ctx context.Context, req booking.ReserveRequest) (_ *booking.Booking, _ bool, err error) {
	defer wrap(&err, "Reserve(slot %d)", req.SlotID)
	if req.IdemKey != "" {
		if b, err := db.findByIdemKey(ctx, req); b != nil || err != nil {
			return b, false, err
		}
	}

	// One read answers every cheap refusal: no such slot, the customer already has
	// an unfinished booking, the slot is not bookable, or it is full. A full slot
	// costs one indexed read and no write. None of these is trusted for the write:
	// the unique key and the conditional UPDATE below decide under concurrency.
	var (
		slot           booking.Slot
		openForBooking bool
		now            time.Time
		activeCount    int
	)
	err = db.db.QueryRowContext(ctx, `
		SELECT `+slotColumns+`, `+openForBookingExpr+`, UTC_TIMESTAMP(6),
		       (SELECT COUNT(*) FROM t_booking WHERE active_openid = ?)
		FROM t_slot WHERE slot_id = ? AND `+seatSchedule, db.Policy.BookingWindowDays, req.OpenID, req.SlotID).
		Scan(&slot.ID, &slot.StartAt, &slot.EndAt, &slot.Capacity, &slot.Booked, &slot.PriceFen, &slot.Open,
			&openForBooking, &now, &activeCount)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, booking.Errorf(booking.ENOTFOUND, "slot %d not found", req.SlotID)
	case err != nil:
		return nil, false, err
	case activeCount > 0:
		return db.activeExists(ctx, req)
	case !openForBooking:
		return nil, false, booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d: open=%v start=%s now=%s window=%dd",
			slot.ID, slot.Open, slot.StartAt.Format(time.RFC3339), now.Format(time.RFC3339), db.Policy.BookingWindowDays)
	case slot.Booked >= slot.Capacity:
		return nil, false, booking.Errorf(booking.ESOLDOUT, "slot %d full (read)", slot.ID)
	}

	// The write is one transaction: one the server rolled back to break a
	// deadlock (a waitlist offer to this customer at this moment) is run again.
	var b *booking.Booking
	err = retryDeadlock(func() error {
		var err error
		b, err = db.reserveTx(ctx, req, &slot, now)
		return err
	})
	if booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		return db.activeExists(ctx, req)
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// activeExists answers a reservation refused because the customer holds an
// unfinished booking. When that booking is the one this request's idempotency key
// names (a concurrent or earlier retry won), it is the answer instead. The winner
// has committed by the time its key blocked us, so this fresh read sees it.
func (db *DB) activeExists(ctx context.Context, req booking.ReserveRequest) (*booking.Booking, bool, error) {
	if req.IdemKey != "" {
		if b, err := db.findByIdemKey(ctx, req); b != nil || err != nil {
			return b, false, err
		}
	}
	return nil, false, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "customer holds an unfinished booking")
}

// reserveSQL is the whole write of a reservation, its commit and its outcome in
// one call of the stored procedure salon_reserve (migrations/0005, as last
// defined by 0019): two round trips per seat (the pre-read and this) instead of
// seven (BEGIN, four statements, COMMIT apart) or three (the writes, then COMMIT
// on its own).
//
// The COMMIT runs on the server right after the seat is taken, so the slot
// row's lock, which every request for the last seat queues behind, is held
// only for the server's own work, never while a network round trip passes
// between SCF and TencentDB. When the COMMIT came back in a round trip of its
// own, every seat of a hot slot cost the lock one network round trip; infra/bench
// measures that form (product-before) against this one, direct and at a distance.
// A procedure rather than a multi-statement because only a routine can decide on
// the server (IF, an exit handler that rolls back before the error leaves), and it
// costs the server the least: parsed once per connection, no INSERT ... SELECT
// guards, no session variables. That is why the reservation is not written by
// takeSeats from Go: the seat would cost the lock a round trip to the COMMIT.
//
// Inside, the booking (its order number derived from the new id in SQL:
// booking.OutTradeNo's format) and its audit record are written first, and the
// seat is taken LAST, by the one seat-taking procedure every other path calls
// through takeSeats (salon_take_seat: the conditional UPDATE under the plan's
// seat rule, the booking's t_booking_slot row), with the COMMIT right after:
// the slot row is locked for that call only, not for the writes. Reading booked
// and writing booked+1 in two steps is what sold the last seat six times: here
// the database re-checks the condition on the locked row, so of any number of
// concurrent requests exactly as many succeed as there are seats. It is never
// retried. A request that lost the race after the pre-read rolls its two rows
// back on the server, so nothing it wrote stays; a full slot never gets this far
// (the pre-read). The booking's unique keys are checked by its INSERT, before
// the seat: a customer's concurrent second request fails on the first one's
// key. The seat is taken only while the slot is open for booking (the row's
// rule, booking.SeatIfOpenForBooking), so a slot closed or started since the
// pre-read gives no seat either; the answer tells the two apart (a read after
// the commit): the new booking's id or NULL, and whether the slot is full.
const reserveSQL = `CALL salon_reserve(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (db *DB) reserveTx(ctx context.Context, req booking.ReserveRequest, slot *booking.Slot, now time.Time) (*booking.Booking, error) {
	// The state machine's creation row of a reservation: the one definition of
	// a new hold (pending with the usual hold, or, with no deposit to wait for,
	// confirmed at once) and the seat's rule (open for booking).
	plan, err := db.Policy.Plan(booking.Change{Event: booking.EventReserve, From: booking.StatusNew, Actor: booking.ActorCustomer},
		booking.ChangeFacts{New: &booking.NewFacts{Slot: *slot, Now: now}})
	if err != nil {
		return nil, err
	}
	hold := *plan.Hold
	status, lockExpire := hold.Status, hold.LockExpire
	reason := "待付定金，座位保留中"
	if status == booking.StatusConfirmed {
		reason = "免费时段，直接确认"
	}
	var idem any
	if req.IdemKey != "" {
		idem = req.IdemKey
	}
	var (
		id   sql.NullInt64
		full bool
	)
	// Every error rolls back on the server (the procedure's exit handler, or the
	// server itself when the connection is lost), so the connection goes back to
	// the pool clean whatever happens.
	err = db.db.QueryRowContext(ctx, reserveSQL, slot.ID, db.Policy.BookingWindowDays, req.OpenID, int64(status), hold.AmountFen, idem,
		lockExpire, now, plan.Event, plan.AuditActor(), reason, int(plan.SeatRule)).Scan(&id, &full)
	if k := dupKey(err); k != "" {
		// The customer's own concurrent request got there first.
		return nil, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "insert: duplicate %s", k)
	} else if err != nil {
		return nil, err
	}
	switch {
	case !id.Valid && full:
		return nil, booking.Errorf(booking.ESOLDOUT, "slot %d full", slot.ID)
	case !id.Valid:
		return nil, booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d closed or started meanwhile", slot.ID)
	}
	return &booking.Booking{
		ID: id.Int64, SlotID: slot.ID, OpenID: req.OpenID, Status: status, AmountFen: hold.AmountFen,
		OutTradeNo: booking.OutTradeNo(id.Int64), IdemKey: req.IdemKey, LockExpire: lockExpire,
		CreatedAt: now, UpdatedAt: now, StartAt: slot.StartAt, EndAt: slot.EndAt, PriceFen: slot.PriceFen,
	}, nil
}

// whyNotTaken tells a full slot from one closed or started meanwhile.
func whyNotTaken(ctx context.Context, q querier, slotID int64) error {
	var full bool
	err := q.QueryRowContext(ctx, `SELECT booked >= capacity FROM t_slot WHERE slot_id = ?`, slotID).Scan(&full)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if full {
		return booking.Errorf(booking.ESOLDOUT, "slot %d full", slotID)
	}
	return booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d closed or started meanwhile", slotID)
}

// findByIdemKey returns the reservation an idempotency key already names, nil if
// none. The same key with another slot is a client bug: INVALID_STATE.
func (db *DB) findByIdemKey(ctx context.Context, req booking.ReserveRequest) (*booking.Booking, error) {
	b, err := scanBooking(db.db.QueryRowContext(ctx, `SELECT `+bookingColumns+bookingFrom+`WHERE b.openid = ? AND b.idem_key = ?`, req.OpenID, req.IdemKey))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if b.SlotID != req.SlotID {
		// A booking moved since (a reschedule) answers a retry of the request
		// that made it too: the key with the slot it was reserved in, which the
		// booking keeps from its first move on (first_slot_id; the audit
		// trail's reserve record may be gone, deleted by retention).
		var reserved int64
		err := db.db.QueryRowContext(ctx, `SELECT COALESCE(first_slot_id, slot_id) FROM t_booking WHERE book_id = ?`, b.ID).Scan(&reserved)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if reserved != req.SlotID {
			return nil, booking.Errorf(booking.EINVALIDSTATE, "idempotency key names booking %d reserved in slot %d (now %d)", b.ID, reserved, b.SlotID)
		}
	}
	return b, nil
}
