package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"salon/shared/booking"
)

// customerColumns read a customer c with her counts: visits (completed
// bookings) and no-shows in NoShowWindow, over her mini-program bookings
// (openid) and the salon's bookings for her (customer_id) alike. Each count is
// the sum of two, one per key, each found through its own index (a booking that
// names both is counted by customer_id only): an OR of the two keys in one
// subquery read t_booking whole for every customer on the console's day page.
// Their parameters: customerArgs.
var customerColumns = `c.customer_id, COALESCE(c.openid, ''), COALESCE(c.name, ''), COALESCE(c.phone, ''), COALESCE(c.note, ''),
	(SELECT COUNT(*) FROM t_booking vb WHERE vb.customer_id = c.customer_id AND vb.status = ?)
	+ (SELECT COUNT(*) FROM t_booking vo WHERE vo.openid = c.openid AND vo.status = ? AND (vo.customer_id IS NULL OR vo.customer_id <> c.customer_id)),
	` + noShowsWhere(`nb.customer_id = c.customer_id`) + ` + ` +
	noShowsWhere(`nb.openid = c.openid AND (nb.customer_id IS NULL OR nb.customer_id <> c.customer_id)`)

func customerArgs() []any {
	noShows := []any{booking.StatusNoShow, booking.NoShowWindow.Microseconds()}
	return append([]any{booking.StatusCompleted, booking.StatusCompleted}, append(noShows, noShows...)...)
}

func scanCustomer(row interface{ Scan(...any) error }) (*booking.Customer, error) {
	var c booking.Customer
	err := row.Scan(&c.ID, &c.OpenID, &c.Name, &c.Phone, &c.Note, &c.Visits, &c.NoShows90d)
	return &c, err
}

func findCustomer(ctx context.Context, q querier, where string, args ...any) (*booking.Customer, error) {
	c, err := scanCustomer(q.QueryRowContext(ctx, `SELECT `+customerColumns+` FROM t_customer c WHERE `+where,
		append(customerArgs(), args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "no such customer")
	}
	return c, err
}

// ensureCustomers creates the rows of the mini-program customers among openids
// that have none yet: a customer's row is made the first time it is needed. A
// row another request made at the same moment is kept (the unique key on
// openid), so this is safe to run concurrently.
func ensureCustomers(ctx context.Context, q querier, openids []string) error {
	if len(openids) == 0 {
		return nil
	}
	args := make([]any, len(openids))
	for i, o := range openids {
		args[i] = o
	}
	rows, err := q.QueryContext(ctx, `SELECT openid FROM t_customer WHERE openid IN (`+placeholders(len(openids))+`)`, args...)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return err
		}
		have[o] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var missing []any
	for _, o := range openids {
		if !have[o] {
			missing = append(missing, o)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = q.ExecContext(ctx, `INSERT INTO t_customer (openid, created_at, updated_at) VALUES `+
		repeatRows(`(?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, len(missing))+
		` ON DUPLICATE KEY UPDATE customer_id = customer_id`, missing...)
	return err
}

// CustomerByOpenID returns the mini-program customer of openid, with her
// counts, creating her row (no name, no phone) the first time.
func (db *DB) CustomerByOpenID(ctx context.Context, openid string) (_ *booking.Customer, err error) {
	defer wrap(&err, "CustomerByOpenID()")
	if err := ensureCustomers(ctx, db.db, []string{openid}); err != nil {
		return nil, err
	}
	return findCustomer(ctx, db.db, `c.openid = ?`, openid)
}

// UpdateCustomer sets the name and/or the phone of the mini-program customer of
// openid (nil leaves one as it is), creating her row the first time. Her name
// is hers from then on (name_by_customer): a walk-in never replaces it. A phone
// is one customer (uk_customer_phone), so a phone someone else has is taken
// over (takePhone): a walk-in's row becomes hers, bookings, visits and note
// with it; another mini-program customer only loses the number.
func (db *DB) UpdateCustomer(ctx context.Context, openid string, name, phone *string) (_ *booking.Customer, err error) {
	defer wrap(&err, "UpdateCustomer()")
	if err := ensureCustomers(ctx, db.db, []string{openid}); err != nil {
		return nil, err
	}
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		var me customerRow
		if err := tx.QueryRowContext(ctx, `SELECT customer_id, openid, name, phone, note FROM t_customer WHERE openid = ? FOR UPDATE`,
			openid).Scan(&me.id, &me.openid, &me.name, &me.phone, &me.note); err != nil {
			return err
		}
		if name != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE t_customer SET name = ?, name_by_customer = 1, updated_at = UTC_TIMESTAMP(6)
				WHERE customer_id = ?`, *name, me.id); err != nil {
				return err
			}
			me.name = sql.NullString{String: *name, Valid: true}
		}
		if phone != nil && (!me.phone.Valid || me.phone.String != *phone) {
			return takePhone(ctx, tx, me, *phone)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return findCustomer(ctx, db.db, `c.openid = ?`, openid)
}

// customerRow is a t_customer row as a merge reads it.
type customerRow struct {
	id                        int64
	openid, name, phone, note sql.NullString
}

// takePhone gives phone to the mini-program customer me, inside her
// transaction (her row locked). The row that has the phone, if any, is locked
// first (a walk-in taking the same new phone at this moment waits, or this
// waits for it):
//   - a walk-in customer (no openid) is her from now on: its bookings are hers
//     (named by her openid too, as every salon booking for a mini-program
//     customer), its note is joined below hers (booking.JoinNotes), its name is
//     hers while she has none, and its row goes. When both hold an unfinished
//     booking she would hold two: ACTIVE_BOOKING_EXISTS, and nothing changes.
//   - another mini-program customer (WeChat vouches the number is hers now)
//     keeps her bookings and her note and loses the number.
func takePhone(ctx context.Context, tx *sql.Tx, me customerRow, phone string) error {
	var holder customerRow
	err := tx.QueryRowContext(ctx, `SELECT customer_id, openid, name, phone, note FROM t_customer WHERE phone = ? FOR UPDATE`,
		phone).Scan(&holder.id, &holder.openid, &holder.name, &holder.phone, &holder.note)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	case holder.openid.Valid:
		if _, err := tx.ExecContext(ctx, `UPDATE t_customer SET phone = NULL, updated_at = UTC_TIMESTAMP(6) WHERE customer_id = ?`,
			holder.id); err != nil {
			return err
		}
	default:
		var theirs, mine int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_booking WHERE active_customer = ?`, holder.id).Scan(&theirs); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM t_booking WHERE active_openid = ?)
			+ (SELECT COUNT(*) FROM t_booking WHERE active_customer = ?)`, me.openid.String, me.id).Scan(&mine); err != nil {
			return err
		}
		if theirs > 0 && mine > 0 {
			return booking.Errorf(booking.EACTIVEBOOKINGEXISTS,
				"phone of walk-in customer %d: both it and customer %d hold an unfinished booking", holder.id, me.id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE t_booking SET customer_id = ?, openid = COALESCE(openid, ?), updated_at = UTC_TIMESTAMP(6)
			WHERE customer_id = ?`, me.id, me.openid.String, holder.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM t_customer WHERE customer_id = ?`, holder.id); err != nil {
			return err
		}
		if note := booking.JoinNotes(me.note.String, holder.note.String); note != "" {
			me.note = sql.NullString{String: note, Valid: true}
		}
		if !me.name.Valid {
			me.name = holder.name
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE t_customer SET phone = ?, note = ?, name = ?, updated_at = UTC_TIMESTAMP(6) WHERE customer_id = ?`,
		phone, me.note, me.name, me.id)
	return err
}

// SetCustomerNote sets the salon's note on a customer ("" clears it); an
// unknown id is NOT_FOUND.
func (db *DB) SetCustomerNote(ctx context.Context, id int64, note string) (_ *booking.Customer, err error) {
	defer wrap(&err, "SetCustomerNote(customer %d)", id)
	var v any
	if note != "" {
		v = note
	}
	res, err := db.db.ExecContext(ctx, `UPDATE t_customer SET note = ?, updated_at = UTC_TIMESTAMP(6) WHERE customer_id = ?`, v, id)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// 0 rows also when the note is unchanged: only a missing row is NOT_FOUND.
		if _, err := findCustomer(ctx, db.db, `c.customer_id = ?`, id); err != nil {
			return nil, err
		}
	}
	return findCustomer(ctx, db.db, `c.customer_id = ?`, id)
}

// AttachCustomers fills in the customer of each booking, with her counts, for
// the salon's views: the row of its customer_id (a booking the salon made), or
// of its openid (a mini-program booking; made the first time it is needed).
func (db *DB) AttachCustomers(ctx context.Context, bs []*booking.Booking) (err error) {
	defer wrap(&err, "AttachCustomers(%d bookings)", len(bs))
	return db.attachCustomers(ctx, bs)
}

// attachCustomers is AttachCustomers, under the name of the exported method
// that calls it.
func (db *DB) attachCustomers(ctx context.Context, bs []*booking.Booking) error {
	var openids []string
	var ids []any
	seen := map[string]bool{}
	for _, b := range bs {
		switch {
		case b.CustomerID != 0:
			ids = append(ids, b.CustomerID)
		case b.OpenID != "" && !seen[b.OpenID]:
			seen[b.OpenID] = true
			openids = append(openids, b.OpenID)
		}
	}
	if err := ensureCustomers(ctx, db.db, openids); err != nil {
		return err
	}
	var conds []string
	args := customerArgs()
	if len(ids) > 0 {
		conds = append(conds, `c.customer_id IN (`+placeholders(len(ids))+`)`)
		args = append(args, ids...)
	}
	if len(openids) > 0 {
		conds = append(conds, `c.openid IN (`+placeholders(len(openids))+`)`)
		for _, o := range openids {
			args = append(args, o)
		}
	}
	if len(conds) == 0 {
		return nil
	}
	rows, err := db.db.QueryContext(ctx, `SELECT `+customerColumns+` FROM t_customer c WHERE `+strings.Join(conds, " OR "), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	byID, byOpenID := map[int64]*booking.Customer{}, map[string]*booking.Customer{}
	for rows.Next() {
		c, err := scanCustomer(rows)
		if err != nil {
			return err
		}
		byID[c.ID] = c
		if c.OpenID != "" {
			byOpenID[c.OpenID] = c
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, b := range bs {
		if b.CustomerID != 0 {
			b.Customer = byID[b.CustomerID]
		} else {
			b.Customer = byOpenID[b.OpenID]
		}
	}
	return nil
}

// WalkIn takes a seat for someone at the counter or on the phone: the booking
// booking.Policy.NewHold defines for a walk-in (confirmed, 0 fen: paid in the
// shop), no WeChat order, no messages, the audit record walk_in by the salon.
// The customer is walkInCustomer's; a known one books under the
// one-unfinished-booking rule (the unique keys on active_openid and
// active_customer: ACTIVE_BOOKING_EXISTS). The booking is the state machine's
// creation row walk_in, planned by booking.Policy.Plan. The seat is taken last,
// by the one seat-taking function every reservation uses, under the row's rule
// (booking.SeatIfOpenForWalkIn: a slot under way is still open to the person
// sitting down now): no seat is SOLD_OUT or SLOT_NOT_BOOKABLE and rolls
// everything back.
func (db *DB) WalkIn(ctx context.Context, req booking.WalkInRequest) (_ *booking.Booking, err error) {
	defer wrap(&err, "WalkIn(slot %d, service %d, technician %d)", req.SlotID, req.ServiceID, req.TechnicianID)
	if req.ServiceID != 0 {
		return db.walkInService(ctx, req)
	}
	var id int64
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		var slot booking.Slot
		var open bool
		var now sql.NullTime
		err := tx.QueryRowContext(ctx, `SELECT `+slotColumns+`, `+walkInOpenExpr+`, UTC_TIMESTAMP(6) FROM t_slot WHERE slot_id = ? AND `+seatSchedule,
			db.Policy.BookingWindowDays, req.SlotID).Scan(&slot.ID, &slot.StartAt, &slot.EndAt, &slot.Capacity, &slot.Booked, &slot.PriceFen, &slot.Open, &open, &now)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return booking.Errorf(booking.ENOTFOUND, "slot %d not found", req.SlotID)
		case err != nil:
			return err
		case !open:
			return booking.Errorf(booking.ESLOTNOTBOOKABLE, "slot %d: closed, ended or beyond the window for a walk-in", slot.ID)
		case slot.Booked >= slot.Capacity:
			return booking.Errorf(booking.ESOLDOUT, "slot %d full (read)", slot.ID)
		}

		customerID, openid, err := walkInCustomer(ctx, tx, req)
		if err != nil {
			return err
		}

		// The state machine's creation row of a walk-in: its hold and its seat
		// rule (a slot under way still takes the person sitting down now).
		plan, err := db.Policy.Plan(booking.Change{Event: booking.EventWalkIn, From: booking.StatusNew, Actor: booking.ActorSalon, By: req.By},
			booking.ChangeFacts{New: &booking.NewFacts{Slot: slot, Now: now.Time}})
		if err != nil {
			return err
		}
		hold := *plan.Hold
		res, err := tx.ExecContext(ctx, `INSERT INTO t_booking (slot_id, openid, customer_id, status, amount_fen, lock_expire, created_at, updated_at, starts_at)
			VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?)`,
			slot.ID, openid, customerID, hold.Status, hold.AmountFen, hold.LockExpire, slot.StartAt.UTC())
		if k := dupKey(err); k == "uk_booking_active" || k == "uk_booking_customer_active" {
			return booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "customer %d holds an unfinished booking (%s)", customerID, k)
		} else if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, booking.AuditRecord{BookingID: id, SlotID: slot.ID, Event: plan.Event,
			FromStatus: int(plan.From), ToStatus: int(hold.Status), Actor: plan.AuditActor(), Reason: "店内代约（到店或电话），到店付款"}); err != nil {
			return err
		}
		for _, kind := range plan.Notify { // none today: the row writes no message
			if err := enqueueNotification(ctx, tx, id, kind); err != nil {
				return err
			}
		}
		// Last, the seat: the slot row is locked only until the commit.
		return takeSeats(ctx, tx, id, []int64{slot.ID}, nil, plan.SeatRule, db.Policy)
	})
	if errors.Is(err, errSeatNotTaken) {
		// Told apart after the rollback, by a fresh read: the transaction's own
		// snapshot may predate the seat that went to someone else.
		return nil, whyNotTaken(ctx, db.db, req.SlotID)
	}
	if err != nil {
		return nil, err
	}
	b, err := findBooking(ctx, db.db, id)
	if err != nil {
		return nil, err
	}
	return b, db.attachCustomers(ctx, []*booking.Booking{b})
}

// walkInCustomer is the customer a walk-in books as, inside its transaction: a
// phone is one customer (uk_customer_phone), so the row is made or found by one
// statement, never by a read first (walk-ins with one new phone at the same
// moment make one customer: the others wait on the key and then find it). A
// known customer keeps the name she gave herself; one the salon typed before is
// replaced by the new one. Without a phone a new customer is made each time.
// openid is the customer's, for a mini-program customer.
func walkInCustomer(ctx context.Context, tx *sql.Tx, req booking.WalkInRequest) (id int64, openid sql.NullString, err error) {
	if req.Phone == "" {
		res, err := tx.ExecContext(ctx, `INSERT INTO t_customer (openid, name, phone, created_at, updated_at)
			VALUES (NULL, ?, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, req.Name)
		if err != nil {
			return 0, openid, err
		}
		id, err = res.LastInsertId()
		return id, openid, err
	}
	// The new name is passed twice rather than read back with VALUES(), which
	// MySQL 8.0 deprecates.
	if _, err := tx.ExecContext(ctx, `INSERT INTO t_customer (openid, name, phone, created_at, updated_at)
		VALUES (NULL, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE name = IF(name_by_customer = 1, name, ?), updated_at = UTC_TIMESTAMP(6)`,
		req.Name, req.Phone, req.Name); err != nil {
		return 0, openid, err
	}
	// A locking read: the row as it is now (another walk-in's, committed after
	// this transaction's snapshot), not as the snapshot saw it.
	err = tx.QueryRowContext(ctx, `SELECT customer_id, openid FROM t_customer WHERE phone = ? FOR UPDATE`, req.Phone).Scan(&id, &openid)
	return id, openid, err
}

// OpenBookingOfPhone returns the unfinished (pending or confirmed) booking of
// the customer with phone, with her, for the salon to see which booking
// refused a walk-in; NOT_FOUND when she holds none or nobody has the phone.
// Each key of "unfinished" is looked up by its own unique key.
func (db *DB) OpenBookingOfPhone(ctx context.Context, phone string) (_ *booking.Booking, err error) {
	defer wrap(&err, "OpenBookingOfPhone()")
	for _, where := range []string{
		`WHERE b.active_customer = (SELECT customer_id FROM t_customer WHERE phone = ?)`,
		`WHERE b.active_openid = (SELECT openid FROM t_customer WHERE phone = ?)`,
	} {
		bs, err := db.listBookings(ctx, where, phone)
		if err != nil {
			return nil, err
		}
		if len(bs) > 0 {
			return bs[0], db.attachCustomers(ctx, bs[:1])
		}
	}
	return nil, booking.Errorf(booking.ENOTFOUND, "no unfinished booking of that phone")
}

// CustomerHistory returns customer id with her counts and her bookings, newest
// first, at most limit: her mini-program bookings (openid) and the salon's for
// her (customer_id). An unknown id is NOT_FOUND.
func (db *DB) CustomerHistory(ctx context.Context, id int64, limit int) (_ *booking.Customer, _ []*booking.Booking, err error) {
	defer wrap(&err, "CustomerHistory(customer %d)", id)
	c, err := findCustomer(ctx, db.db, `c.customer_id = ?`, id)
	if err != nil {
		return nil, nil, err
	}
	bs, err := db.listBookings(ctx, `WHERE b.customer_id = ? OR (? <> '' AND b.openid = ?) ORDER BY b.book_id DESC LIMIT ?`,
		c.ID, c.OpenID, c.OpenID, limit)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range bs {
		b.Customer = c
	}
	return c, bs, nil
}
