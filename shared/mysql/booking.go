package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
)

const bookingColumns = `b.book_id, b.slot_id, b.openid, b.status, b.amount_fen, COALESCE(b.out_trade_no, ''),
	COALESCE(b.idem_key, ''), b.lock_expire, COALESCE(b.transaction_id, ''), b.paid_at,
	b.refund_status, b.refund_fen, b.refund_no, b.refunded_at, b.refund_attempts, b.created_at, b.updated_at,
	s.start_at, s.end_at`

const bookingFrom = ` FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id `

func scanBooking(row interface{ Scan(...any) error }) (*booking.Booking, error) {
	var b booking.Booking
	var refundStatus, refundNo sql.NullString
	var refundFen sql.NullInt64
	var refundedAt sql.NullTime
	var refundAttempts int
	var paidAt sql.NullTime
	if err := row.Scan(&b.ID, &b.SlotID, &b.OpenID, &b.Status, &b.AmountFen, &b.OutTradeNo,
		&b.IdemKey, &b.LockExpire, &b.TransactionID, &paidAt,
		&refundStatus, &refundFen, &refundNo, &refundedAt, &refundAttempts, &b.CreatedAt, &b.UpdatedAt,
		&b.StartAt, &b.EndAt); err != nil {
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
func (db *DB) FindBooking(ctx context.Context, id int64) (*booking.Booking, error) {
	return findBooking(ctx, db.db, id)
}

// FindCustomerBooking returns the customer's own booking. Someone else's booking
// is NOT_FOUND, exactly like one that does not exist, so ids reveal nothing.
func (db *DB) FindCustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error) {
	b, err := db.FindBooking(ctx, id)
	if err != nil {
		return nil, err
	}
	if b.OpenID != openid {
		return nil, booking.Errorf(booking.ENOTFOUND, "booking %d belongs to another customer", id)
	}
	return b, nil
}

// ListCustomerBookings returns a customer's bookings, newest first.
func (db *DB) ListCustomerBookings(ctx context.Context, openid string, limit int) ([]*booking.Booking, error) {
	return db.listBookings(ctx, `WHERE b.openid = ? ORDER BY b.book_id DESC LIMIT ?`, openid, limit)
}

// CountNoShows returns how many of the customer's bookings are no-shows whose
// slot started within the last `within` (NO_SHOW_LIMIT's window).
func (db *DB) CountNoShows(ctx context.Context, openid string, within time.Duration) (int, error) {
	var n int
	err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
		WHERE b.openid = ? AND b.status = ? AND s.start_at >= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND`,
		openid, booking.StatusNoShow, within.Microseconds()).Scan(&n)
	return n, err
}

// ListSlotBookings returns the bookings of the slots starting in [from, to), for
// the salon's day view.
func (db *DB) ListSlotBookings(ctx context.Context, from, to time.Time) ([]*booking.Booking, error) {
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

// Reserve takes a seat for the customer (steps 1-4 of "The reservation, step by
// step" in shared/README.md). It answers the
// booking and whether this call created it (false when an idempotency key named an
// existing reservation).
//
// The order of work matters when a hundred customers want the last seat: every
// check that needs no lock runs first, the booking and its audit record are
// written next (they lock only their own new rows), and the slot row, the one
// thing all of them contend for, is locked last, by one conditional UPDATE, and
// held only until the commit that immediately follows.
func (db *DB) Reserve(ctx context.Context, req booking.ReserveRequest) (*booking.Booking, bool, error) {
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
	err := db.db.QueryRowContext(ctx, `
		SELECT `+slotColumns+`, `+openForBookingExpr+`, UTC_TIMESTAMP(6),
		       (SELECT COUNT(*) FROM t_booking WHERE active_openid = ?)
		FROM t_slot WHERE slot_id = ?`, db.WindowDays, req.OpenID, req.SlotID).
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
			slot.ID, slot.Open, slot.StartAt.Format(time.RFC3339), now.Format(time.RFC3339), db.WindowDays)
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

// reserveSQL is the whole write of a reservation, sent as one multi-statement
// round trip inside a transaction the caller commits or rolls back: three round
// trips per seat (the pre-read, this, COMMIT) instead of seven (BEGIN and four
// statements apart). The slot row's lock is held from the last statement to the
// commit either way; what the saved round trips buy is latency (four network
// round trips fewer between SCF and TencentDB) and CPU per seat. infra/bench
// measures it against the seven-round-trip version (product-before).
//
// The booking and its audit record lock only their own new rows. The slot row,
// the one thing every request for the last seat contends for, is taken LAST, by
// one conditional UPDATE. Reading booked and writing booked+1 in two steps is what
// sold the last seat six times: here the database re-checks the condition on the
// locked row, so of any number of concurrent requests exactly as many succeed as
// there are seats. It is never retried: 0 rows means the seat went to someone
// else, and the caller rolls the booking back.
//
// The order number is derived from the new id in SQL (booking.OutTradeNo's
// format: BK and at least twelve digits), so it needs no second round trip.
//
// The seat is taken only while the slot is bookable (bookableExpr), so a slot
// closed or started since the pre-read gives no seat either.
const reserveSQL = `START TRANSACTION;
INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?);
SET @salon_book_id = LAST_INSERT_ID();
UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(@salon_book_id, GREATEST(12, LENGTH(@salon_book_id)), '0'))
	WHERE book_id = @salon_book_id;
INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
	VALUES (@salon_book_id, ?, ?, NULL, ?, ?, ?, UTC_TIMESTAMP(6));
UPDATE t_slot SET booked = booked + 1
	WHERE slot_id = ? AND ` + bookableExpr

// Positions of reserveSQL's statements in the driver's per-statement results.
const (
	reserveInsertStmt = 1
	reserveSlotStmt   = 5
	reserveStmts      = 6
)

func (db *DB) reserveTx(ctx context.Context, req booking.ReserveRequest, slot *booking.Slot, now time.Time) (*booking.Booking, error) {
	status := booking.StatusPending
	event := "hold"
	if slot.PriceFen == 0 {
		// No deposit to wait for: the booking is confirmed at once.
		status = booking.StatusConfirmed
		event = "free slot"
	}
	lockExpire := booking.HoldEnd(now, slot.StartAt, db.LockTTL)
	var idem any
	if req.IdemKey != "" {
		idem = req.IdemKey
	}
	args := []driver.NamedValue{
		{Ordinal: 1, Value: slot.ID}, {Ordinal: 2, Value: req.OpenID}, {Ordinal: 3, Value: int64(status)},
		{Ordinal: 4, Value: slot.PriceFen}, {Ordinal: 5, Value: idem}, {Ordinal: 6, Value: lockExpire},
		{Ordinal: 7, Value: now}, {Ordinal: 8, Value: now},
		{Ordinal: 9, Value: slot.ID}, {Ordinal: 10, Value: booking.EventReserve}, {Ordinal: 11, Value: int64(status)},
		{Ordinal: 12, Value: booking.ActorCustomer}, {Ordinal: 13, Value: event},
		{Ordinal: 14, Value: slot.ID}, {Ordinal: 15, Value: int64(db.WindowDays)},
	}

	conn, err := db.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var id int64
	taken := false
	// database/sql cannot see the per-statement results of a multi-statement, so
	// the transaction is driven on the driver connection itself. It never goes
	// back to the pool inside a transaction: every path ends in COMMIT or
	// ROLLBACK, and a connection where neither is certain is discarded
	// (ErrBadConn), which makes the server roll back.
	err = conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("mysql: driver connection cannot execute")
		}
		rollback := func(cause error) error {
			if _, err := ex.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); err != nil {
				return errors.Join(cause, driver.ErrBadConn)
			}
			return cause
		}
		res, err := ex.ExecContext(ctx, reserveSQL, args)
		if err != nil {
			return rollback(err)
		}
		mr, ok := res.(drv.Result)
		if !ok {
			return rollback(errors.New("mysql: no per-statement results"))
		}
		ids, rows := mr.AllLastInsertIds(), mr.AllRowsAffected()
		if len(ids) != reserveStmts || len(rows) != reserveStmts {
			return rollback(errors.New("mysql: reserve: unexpected statement results"))
		}
		id = ids[reserveInsertStmt]
		if rows[reserveSlotStmt] == 0 {
			return rollback(nil)
		}
		if _, err := ex.ExecContext(ctx, "COMMIT", nil); err != nil {
			// Whether the commit happened is unknown; the connection is dropped.
			return errors.Join(err, driver.ErrBadConn)
		}
		taken = true
		return nil
	})
	// Back to the pool before any further query: whyNotTaken needs a connection,
	// and holding this one meanwhile can starve a small pool into deadlock.
	conn.Close()
	if k := dupKey(err); k != "" {
		return nil, booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "insert: duplicate %s", k)
	} else if err != nil {
		return nil, err
	}
	if !taken {
		return nil, whyNotTaken(ctx, db.db, slot.ID)
	}
	return &booking.Booking{
		ID: id, SlotID: slot.ID, OpenID: req.OpenID, Status: status, AmountFen: slot.PriceFen,
		OutTradeNo: booking.OutTradeNo(id), IdemKey: req.IdemKey, LockExpire: lockExpire,
		CreatedAt: now, UpdatedAt: now, StartAt: slot.StartAt, EndAt: slot.EndAt,
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
		return nil, booking.Errorf(booking.EINVALIDSTATE, "idempotency key names booking %d of slot %d", b.ID, b.SlotID)
	}
	return b, nil
}
