package mysql

import (
	"context"
	"database/sql"
	"time"

	"salon/shared/booking"
)

// Retention: what CLS holds need not stay in MySQL, and a notification that
// was sent (or given up) long ago is read by nothing. The release run deletes
// both in batches of at most limit rows, each its own short transaction under
// READ COMMITTED: it locks only the rows it deletes, no gaps, so an insert of
// the hot path (the reservation's audit record, a new notification) never
// waits for it, and a run that stops between batches leaves nothing half done.

// DeleteShippedAudit deletes up to limit audit records that CLS accepted more
// than olderThan ago (by the database's clock), oldest first, and reports how
// many it deleted. A record is shipped after it is written, so each of them is
// at least that old too; a record CLS has not accepted (shipped_at NULL) is
// never deleted, whatever its age. The range is the start of
// idx_audit_unshipped (shipped_at, audit_id), in its order.
func (db *DB) DeleteShippedAudit(ctx context.Context, olderThan time.Duration, limit int) (_ int, err error) {
	defer wrap(&err, "DeleteShippedAudit()")
	return db.deleteBatch(ctx, `DELETE FROM t_audit WHERE shipped_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
		ORDER BY shipped_at, audit_id LIMIT ?`, olderThan.Microseconds(), limit)
}

// DeleteFinishedNotifications deletes up to limit notifications that were
// finished (sent, refused, failed or off) and last due more than olderThan
// ago, and reports how many it deleted. A pending one is never deleted. Each
// status is a range of idx_notification_due (status, next_at); next_at is
// never before created_at, so each deleted one is at least that old.
func (db *DB) DeleteFinishedNotifications(ctx context.Context, olderThan time.Duration, limit int) (_ int, err error) {
	defer wrap(&err, "DeleteFinishedNotifications()")
	deleted := 0
	for _, st := range []booking.NotificationStatus{booking.NotificationSent, booking.NotificationRefused, booking.NotificationFailed, booking.NotificationOff} {
		if deleted >= limit {
			break
		}
		n, err := db.deleteBatch(ctx, `DELETE FROM t_notification WHERE status = ? AND next_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
			ORDER BY next_at LIMIT ?`, st, olderThan.Microseconds(), limit-deleted)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteBatch runs one batch's DELETE in a transaction of its own.
func (db *DB) deleteBatch(ctx context.Context, q string, args ...any) (int, error) {
	var n int64
	err := db.transact(ctx, readCommitted, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
