package mysql

import (
	"context"
	"time"

	"salon/shared/booking"
)

// messagedBooking is the condition on a booking (its columns unqualified) that
// its customer hears about it: a booking the salon made at the counter or on
// the phone (walk_in) has no WeChat order and causes no messages.
const messagedBooking = `out_trade_no IS NOT NULL AND openid IS NOT NULL`

// enqueueNotification writes a notification of the booking into the outbox,
// inside the caller's transaction, so it exists exactly when the change that
// causes it does. One per booking and kind: writing it again changes nothing.
func enqueueNotification(ctx context.Context, q querier, bookingID int64, kind booking.NotificationKind) error {
	_, err := q.ExecContext(ctx, `INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
		SELECT book_id, ?, openid, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) FROM t_booking WHERE book_id = ? AND `+messagedBooking+`
		ON DUPLICATE KEY UPDATE notification_id = notification_id`, kind, booking.NotificationPending, bookingID)
	return err
}

// EnqueueReminders writes the reminder of every confirmed booking whose slot
// starts within remindBefore and that has none yet. The outbox's unique key makes
// this exactly once per booking however many runs overlap. It reports how many it
// wrote.
func (db *DB) EnqueueReminders(ctx context.Context, remindBefore time.Duration) (_ int, err error) {
	defer wrap(&err, "EnqueueReminders()")
	return enqueueReminders(ctx, db.db, remindBefore, 0)
}

// enqueueReminders writes the due reminders of confirmed bookings: of one
// booking (inside the transaction that confirms it), or of all (bookingID 0).
func enqueueReminders(ctx context.Context, q querier, remindBefore time.Duration, bookingID int64) (int, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
		SELECT b.book_id, ?, b.openid, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)
		FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
		WHERE b.status = ? AND (? = 0 OR b.book_id = ?) AND `+messagedBooking+`
		  AND s.start_at > UTC_TIMESTAMP(6) AND s.start_at <= UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
		ON DUPLICATE KEY UPDATE notification_id = notification_id`,
		booking.NotifyReminder, booking.NotificationPending, booking.StatusConfirmed, bookingID, bookingID, remindBefore.Microseconds())
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ClaimDueNotifications leases to the caller up to limit pending notifications
// that are due, oldest due first, with the booking facts their templates name
// (its status as it is now among them) and the database's time of that read.
// The lease keeps an overlapping sender away; one that dies leaves them due
// again when it ends.
func (db *DB) ClaimDueNotifications(ctx context.Context, lease time.Duration, limit int) (_ []booking.Notification, _ time.Time, err error) {
	defer wrap(&err, "ClaimDueNotifications()")
	ids, err := claimDueNotifications.run(ctx, db, lease, booking.NotificationPending, limit)
	if err != nil || len(ids) == 0 {
		return nil, time.Time{}, err
	}
	rows, err := db.db.QueryContext(ctx, `SELECT n.notification_id, n.book_id, n.kind, n.openid, n.attempts, n.created_at,
		s.start_at, `+bookingEnd+`, b.amount_fen, b.status, UTC_TIMESTAMP(6)
		FROM t_notification n JOIN t_booking b ON b.book_id = n.book_id JOIN t_slot s ON s.slot_id = b.slot_id
		WHERE n.notification_id IN (`+placeholders(len(ids))+`) ORDER BY n.next_at, n.notification_id`, ids...)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer rows.Close()
	var out []booking.Notification
	var now time.Time
	for rows.Next() {
		var n booking.Notification
		if err := rows.Scan(&n.ID, &n.BookingID, &n.Kind, &n.OpenID, &n.Attempts, &n.CreatedAt, &n.StartAt, &n.EndAt, &n.AmountFen,
			&n.BookingStatus, &now); err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, n)
	}
	return out, now, rows.Err()
}

// FinishNotification records a notification's final outcome: sent, refused
// (no subscription), failed (retried for too long) or off (no template).
func (db *DB) FinishNotification(ctx context.Context, id int64, status booking.NotificationStatus, lastError string) (err error) {
	defer wrap(&err, "FinishNotification(notification %d)", id)
	if len(lastError) > 255 {
		lastError = lastError[:255]
	}
	_, err = db.db.ExecContext(ctx, `UPDATE t_notification SET status = ?, last_error = ?,
		sent_at = IF(? = ?, UTC_TIMESTAMP(6), sent_at) WHERE notification_id = ?`,
		status, lastError, status, booking.NotificationSent, id)
	return err
}

// RetryNotification records a failed send: one more attempt, the next one not
// before `after` from now.
func (db *DB) RetryNotification(ctx context.Context, id int64, after time.Duration, lastError string) (err error) {
	defer wrap(&err, "RetryNotification(notification %d)", id)
	if len(lastError) > 255 {
		lastError = lastError[:255]
	}
	_, err = db.db.ExecContext(ctx, `UPDATE t_notification SET attempts = attempts + 1, last_error = ?,
		next_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE notification_id = ? AND status = ?`,
		lastError, after.Microseconds(), id, booking.NotificationPending)
	return err
}

// NotificationCounts returns how many notifications in each of the given
// statuses were last due at or after since (a finished one: when it finished).
// Each status is one range of idx_notification_due (status, next_at), so the
// count reads the recent rows only, however many were ever sent.
func (db *DB) NotificationCounts(ctx context.Context, since time.Time, statuses ...booking.NotificationStatus) (_ map[booking.NotificationStatus]int, err error) {
	defer wrap(&err, "NotificationCounts(since %s)", utc(since))
	if len(statuses) == 0 {
		return map[booking.NotificationStatus]int{}, nil
	}
	args := make([]any, 0, len(statuses)+1)
	for _, st := range statuses {
		args = append(args, st)
	}
	args = append(args, since.UTC())
	rows, err := db.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM t_notification
		WHERE status IN (`+placeholders(len(statuses))+`) AND next_at >= ? GROUP BY status`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[booking.NotificationStatus]int{}
	for rows.Next() {
		var st booking.NotificationStatus
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// CountRetryingNotifications counts pending notifications that failed at least
// once: the ones WeChat keeps refusing right now.
func (db *DB) CountRetryingNotifications(ctx context.Context) (_ int, err error) {
	defer wrap(&err, "CountRetryingNotifications()")
	var n int
	err = db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_notification WHERE status = ? AND attempts > 0`,
		booking.NotificationPending).Scan(&n)
	return n, err
}
