package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"salon/shared/booking"
)

// insertMoney writes one row of the money ledger for a booking in the
// transaction of the change it belongs to, with the booking's order number and
// the database's time. Rows are only ever inserted: no statement of the store
// updates or deletes one (TestNoStatementChangesTheLedger).
func insertMoney(ctx context.Context, tx querier, bookingID int64, actor string, e booking.LedgerEntry) error {
	if len(actor) > 16 {
		actor = actor[:16]
	}
	res, err := tx.ExecContext(ctx, `
		INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, transaction_id, out_refund_no, refund_id, actor, created_at)
		SELECT book_id, ?, ?, ?, out_trade_no, ?, ?, ?, ?, UTC_TIMESTAMP(6) FROM t_booking WHERE book_id = ?`,
		e.Kind, e.AmountFen, e.Method, nullString(e.TransactionID), nullString(e.OutRefundNo), nullString(e.RefundID), actor, bookingID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("ledger: booking %d not found for its %s row", bookingID, e.Kind)
	}
	return nil
}

// nullString is s, or NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Checkout records what the customer of a completed booking paid in the shop:
// one balance row, with an audit record, in one transaction on the booking's
// locked row. Package booking decides whether the booking can be checked out;
// a second checkout of one booking meets the ledger's unique key and is
// INVALID_STATE, whichever of two concurrent ones loses.
func (db *DB) Checkout(ctx context.Context, bookingID int64, c booking.Checkout, actor string) (_ *booking.Booking, err error) {
	defer wrap(&err, "Checkout(book %d)", bookingID)
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		var status booking.Status
		var slotID int64
		err := tx.QueryRowContext(ctx, `SELECT status, slot_id FROM t_booking WHERE book_id = ? FOR UPDATE`, bookingID).Scan(&status, &slotID)
		if errors.Is(err, sql.ErrNoRows) {
			return booking.Errorf(booking.ENOTFOUND, "booking %d not found", bookingID)
		} else if err != nil {
			return err
		}
		e, err := booking.PlanCheckout(bookingID, status, c)
		if err != nil {
			return err
		}
		err = insertMoney(ctx, tx, bookingID, actor, e)
		if k := dupKey(err); k == "uk_money_once" {
			return booking.Errorf(booking.EINVALIDSTATE, "booking %d is already checked out", bookingID)
		} else if err != nil {
			return err
		}
		return insertAudit(ctx, tx, booking.AuditRecord{BookingID: bookingID, SlotID: slotID, Event: booking.EventCheckout,
			FromStatus: int(status), ToStatus: int(status), Actor: actor,
			Reason: fmt.Sprintf("到店付款 %d 分（%s）", c.AmountFen, c.Method)})
	})
	if err != nil {
		return nil, err
	}
	return findBooking(ctx, db.db, bookingID)
}

// BookingLedger is a booking's rows of the money ledger, oldest first.
func (db *DB) BookingLedger(ctx context.Context, bookingID int64) (_ []booking.Money, err error) {
	defer wrap(&err, "BookingLedger(book %d)", bookingID)
	rows, err := db.db.QueryContext(ctx, `
		SELECT money_id, book_id, kind, amount_fen, method, COALESCE(out_trade_no, ''), COALESCE(transaction_id, ''),
		       COALESCE(out_refund_no, ''), COALESCE(refund_id, ''), actor, created_at
		FROM t_money WHERE book_id = ? ORDER BY money_id`, bookingID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.Money
	for rows.Next() {
		var m booking.Money
		if err := rows.Scan(&m.ID, &m.BookingID, &m.Kind, &m.AmountFen, &m.Method, &m.OutTradeNo, &m.TransactionID,
			&m.OutRefundNo, &m.RefundID, &m.Actor, &m.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
