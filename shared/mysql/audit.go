package mysql

import (
	"context"
	"strings"

	"salon/shared/booking"
)

func nullStatus(s int) any {
	if s < 0 {
		return nil
	}
	return s
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// insertAudit writes one audit record inside the caller's transaction, so the
// record exists exactly when the change it describes does.
func insertAudit(ctx context.Context, tx querier, r booking.AuditRecord) error {
	if len(r.Reason) > 255 {
		r.Reason = r.Reason[:255]
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6))`,
		nullID(r.BookingID), nullID(r.SlotID), r.Event, nullStatus(r.FromStatus), nullStatus(r.ToStatus), r.Actor, r.Reason)
	return err
}

// RecordAudit writes an audit record that accompanies no status change: a rejected
// notification, a reconciliation finding.
func (db *DB) RecordAudit(ctx context.Context, r booking.AuditRecord) (err error) {
	defer wrap(&err, "RecordAudit(book %d, slot %d, %s)", r.BookingID, r.SlotID, r.Event)
	return insertAudit(ctx, db.db, r)
}

const auditColumns = `audit_id, COALESCE(book_id, 0), COALESCE(slot_id, 0), event,
	COALESCE(from_status, -1), COALESCE(to_status, -1), actor, reason, created_at`

func (db *DB) listAudit(ctx context.Context, where string, args ...any) ([]booking.AuditRecord, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+auditColumns+` FROM t_audit `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.AuditRecord
	for rows.Next() {
		var r booking.AuditRecord
		if err := rows.Scan(&r.ID, &r.BookingID, &r.SlotID, &r.Event, &r.FromStatus, &r.ToStatus, &r.Actor, &r.Reason, &r.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// BookingAudit returns a booking's audit trail, oldest first.
func (db *DB) BookingAudit(ctx context.Context, bookingID int64) (_ []booking.AuditRecord, err error) {
	defer wrap(&err, "BookingAudit(book %d)", bookingID)
	return db.listAudit(ctx, `WHERE book_id = ? ORDER BY audit_id`, bookingID)
}

// AuditOfBookings returns the audit records of these bookings, oldest first.
func (db *DB) AuditOfBookings(ctx context.Context, bookingIDs []int64) (_ []booking.AuditRecord, err error) {
	defer wrap(&err, "AuditOfBookings(%d bookings)", len(bookingIDs))
	if len(bookingIDs) == 0 {
		return nil, nil
	}
	args := make([]any, len(bookingIDs))
	for i, id := range bookingIDs {
		args[i] = id
	}
	marks := strings.Repeat("?, ", len(args))
	return db.listAudit(ctx, `WHERE book_id IN (`+marks[:len(marks)-2]+`) ORDER BY audit_id`, args...)
}

// UnshippedAudit returns up to limit records not yet delivered to CLS, oldest first.
func (db *DB) UnshippedAudit(ctx context.Context, limit int) (_ []booking.AuditRecord, err error) {
	defer wrap(&err, "UnshippedAudit()")
	return db.listAudit(ctx, `WHERE shipped_at IS NULL ORDER BY audit_id LIMIT ?`, limit)
}

// MarkShipped records that CLS accepted these records. A crash before this call
// ships them again on the next run; their stable ids make the duplicate visible.
func (db *DB) MarkShipped(ctx context.Context, ids []int64) (err error) {
	defer wrap(&err, "MarkShipped(%d records)", len(ids))
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// The placeholders are generated from the count, never from input.
	_, err = db.db.ExecContext(ctx, `UPDATE t_audit SET shipped_at = UTC_TIMESTAMP(6)
		WHERE shipped_at IS NULL AND audit_id IN (`+placeholders(len(ids))+`)`, args...)
	return err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
