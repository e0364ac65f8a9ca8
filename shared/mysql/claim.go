package mysql

import (
	"context"
	"database/sql"
	"time"
)

// claim is how a release run (or any sender) takes work that overlapping runs
// must not share: under READ COMMITTED, a locking read with SKIP LOCKED picks the
// due rows (so two runs claiming at the same moment never wait on each other or
// on reservations), and the lease column is moved forward in the same short
// transaction, so the rows stay away from other runs while this one talks to
// WeChat, without holding a lock across those calls. A run that dies loses its
// lease when it ends, and the rows are due again.
//
// pick is a SELECT of ids ending in FOR UPDATE SKIP LOCKED; lease names the
// statement that moves the lease forward by its first parameter, in
// microseconds, for the ids that follow it. Both are constants of this package.
type claim struct {
	pick  string
	lease string
}

// run claims the rows pick selects with args for `lease`, and returns their ids
// (as query arguments), in pick's order.
func (c claim) run(ctx context.Context, db *DB, lease time.Duration, args ...any) ([]any, error) {
	var ids []any
	err := db.transact(ctx, readCommitted, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, c.pick, args...)
		if err != nil {
			return err
		}
		if ids, err = scanIDs(rows); err != nil || len(ids) == 0 {
			return err
		}
		leaseArgs := append([]any{lease.Microseconds()}, ids...)
		_, err = tx.ExecContext(ctx, c.lease+` (`+placeholders(len(ids))+`)`, leaseArgs...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

var (
	claimExpiredHolds = claim{
		pick: `SELECT book_id FROM t_booking
			WHERE status = ? AND lock_expire <= UTC_TIMESTAMP(6) AND claim_until <= UTC_TIMESTAMP(6)
			ORDER BY lock_expire LIMIT ? FOR UPDATE SKIP LOCKED`,
		lease: `UPDATE t_booking SET claim_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE book_id IN`,
	}
	claimDueRefunds = claim{
		pick: `SELECT book_id FROM t_booking
			WHERE (refund_status = ? OR (refund_status = ? AND refund_requested_at <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))
			  AND refund_next_at <= UTC_TIMESTAMP(6)
			ORDER BY refund_next_at, book_id LIMIT ? FOR UPDATE SKIP LOCKED`,
		lease: `UPDATE t_booking SET refund_next_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE book_id IN`,
	}
	claimDueNotifications = claim{
		pick: `SELECT notification_id FROM t_notification
			WHERE status = ? AND next_at <= UTC_TIMESTAMP(6) ORDER BY next_at, notification_id LIMIT ? FOR UPDATE SKIP LOCKED`,
		lease: `UPDATE t_notification SET next_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE notification_id IN`,
	}
)
