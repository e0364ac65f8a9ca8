package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"salon/shared/booking"
)

// Staff accounts and the sign-in lock-out.

const staffColumns = `staff_id, name, role, disabled, password_changed_at, created_at, updated_at, password_hash`

func scanStaff(row interface{ Scan(...any) error }) (*booking.StaffCredential, error) {
	var c booking.StaffCredential
	err := row.Scan(&c.ID, &c.Name, &c.Role, &c.Disabled, &c.PasswordChangedAt, &c.CreatedAt, &c.UpdatedAt, &c.PasswordHash)
	return &c, err
}

func findStaff(ctx context.Context, q querier, where string, args ...any) (*booking.StaffCredential, error) {
	c, err := scanStaff(q.QueryRowContext(ctx, `SELECT `+staffColumns+` FROM t_staff WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, booking.Errorf(booking.ENOTFOUND, "no such staff member")
	}
	return c, err
}

// CreateStaff adds an account; a name already taken (compared as the database
// compares names, without case) is INVALID_STATE.
func (db *DB) CreateStaff(ctx context.Context, s booking.NewStaff) (_ *booking.Staff, err error) {
	defer wrap(&err, "CreateStaff()")
	res, err := db.db.ExecContext(ctx, `INSERT INTO t_staff (name, role, password_hash, disabled, password_changed_at, created_at, updated_at)
		VALUES (?, ?, ?, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, s.Name, string(s.Role), s.PasswordHash)
	if mysqlErrNo(err) == errDupEntry {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "staff name %q is taken", s.Name)
	} else if err != nil {
		return nil, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	c, err := findStaff(ctx, db.db, `staff_id = ?`, id)
	if err != nil {
		return nil, err
	}
	return &c.Staff, nil
}

// ListStaff is every account, by name, without hashes.
func (db *DB) ListStaff(ctx context.Context) (_ []booking.Staff, err error) {
	defer wrap(&err, "ListStaff()")
	rows, err := db.db.QueryContext(ctx, `SELECT `+staffColumns+` FROM t_staff ORDER BY name, staff_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []booking.Staff{}
	for rows.Next() {
		c, err := scanStaff(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c.Staff)
	}
	return out, rows.Err()
}

// FindStaff is one account, without its hash; NOT_FOUND when there is none.
func (db *DB) FindStaff(ctx context.Context, id int64) (_ *booking.Staff, err error) {
	defer wrap(&err, "FindStaff(staff %d)", id)
	c, err := findStaff(ctx, db.db, `staff_id = ?`, id)
	if err != nil {
		return nil, err
	}
	return &c.Staff, nil
}

// StaffCredential is the account of name with its hash, for the sign-in check;
// NOT_FOUND when there is none.
func (db *DB) StaffCredential(ctx context.Context, name string) (_ *booking.StaffCredential, err error) {
	defer wrap(&err, "StaffCredential()")
	return findStaff(ctx, db.db, `name = ?`, name)
}

// UpdateStaff disables (or enables) an account or sets its password hash,
// with the account's row locked. With u.IfUnchangedSince set, it changes
// nothing and answers INVALID_STATE unless the account is enabled and its
// updated_at is still that time (decided under the lock, so a change committed
// by someone else in between, the owner's reset, wins).
func (db *DB) UpdateStaff(ctx context.Context, id int64, u booking.StaffUpdate) (_ *booking.Staff, err error) {
	defer wrap(&err, "UpdateStaff(staff %d)", id)
	var out *booking.Staff
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		before, err := findStaff(ctx, tx, `staff_id = ? FOR UPDATE`, id)
		if err != nil {
			return err
		}
		if !u.IfUnchangedSince.IsZero() && (before.Disabled || !before.UpdatedAt.Equal(u.IfUnchangedSince)) {
			return booking.Errorf(booking.EINVALIDSTATE, "staff %d changed since %s", id, u.IfUnchangedSince.Format(time.RFC3339Nano))
		}
		if u.Disabled != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE t_staff SET disabled = ?, updated_at = UTC_TIMESTAMP(6) WHERE staff_id = ?`, *u.Disabled, id); err != nil {
				return err
			}
		}
		if u.PasswordHash != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE t_staff SET password_hash = ?, password_changed_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6)
				WHERE staff_id = ?`, *u.PasswordHash, id); err != nil {
				return err
			}
		}
		c, err := findStaff(ctx, tx, `staff_id = ?`, id)
		if err != nil {
			return err
		}
		out = &c.Staff
		return nil
	})
	return out, err
}

// recentFailures reads the newest failed sign-ins of name, newest first: of
// address (at most booking.SignInMaxFailures) and of all addresses (at most
// booking.SignInMaxFailuresAllAddresses), with the database's time.
func recentFailures(ctx context.Context, q querier, name, address string) (here, all []time.Time, now time.Time, err error) {
	if err := q.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6)`).Scan(&now); err != nil {
		return nil, nil, now, err
	}
	read := func(query string, args ...any) ([]time.Time, error) {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []time.Time
		for rows.Next() {
			var t time.Time
			if err := rows.Scan(&t); err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, rows.Err()
	}
	if here, err = read(`SELECT failed_at FROM t_signin_failure WHERE name = ? AND address = ?
		ORDER BY failed_at DESC, failure_id DESC LIMIT ?`, name, address, booking.SignInMaxFailures); err != nil {
		return nil, nil, now, err
	}
	if all, err = read(`SELECT failed_at FROM t_signin_failure WHERE name = ?
		ORDER BY failed_at DESC, failure_id DESC LIMIT ?`, name, booking.SignInMaxFailuresAllAddresses); err != nil {
		return nil, nil, now, err
	}
	return here, all, now, nil
}

// SignInLocked answers TOO_MANY_ATTEMPTS (with when to try again) while name is
// locked out for address, and nil otherwise. It locks nothing: a sign-in asks
// it before it checks a password, and RecordSignIn decides again under the
// name's lock.
func (db *DB) SignInLocked(ctx context.Context, name, address string) (err error) {
	defer wrap(&err, "SignInLocked()")
	here, all, now, err := recentFailures(ctx, db.db, name, address)
	if err != nil {
		return err
	}
	if locked, left := booking.SignInLocked(here, all, now); locked {
		return booking.TooManyAttempts(left)
	}
	return nil
}

// RecordSignIn records the outcome of a checked sign-in of name from address
// with the name's row locked, so that the sign-ins of one name on every
// instance are decided one after another: a name locked for address is
// TOO_MANY_ATTEMPTS whatever the outcome, and its failure is not counted; a
// failure is counted; a success forgets the failures of the name from that
// address (those of other addresses stay: a stranger's count is not reset by
// the account's owner signing in). The name's failures older than the window
// go as well.
func (db *DB) RecordSignIn(ctx context.Context, name, address string, ok bool) (err error) {
	defer wrap(&err, "RecordSignIn()")
	return db.transact(ctx, nil, func(tx *sql.Tx) error {
		// The upsert takes the name's row lock and dates the row, which the
		// release run deletes a day after the name's last sign-in.
		if _, err := tx.ExecContext(ctx, `INSERT INTO t_signin_name (name, last_at) VALUES (?, UTC_TIMESTAMP(6))
			ON DUPLICATE KEY UPDATE last_at = UTC_TIMESTAMP(6)`, name); err != nil {
			return err
		}
		here, all, now, err := recentFailures(ctx, tx, name, address)
		if err != nil {
			return err
		}
		if isLocked, left := booking.SignInLocked(here, all, now); isLocked {
			return booking.TooManyAttempts(left)
		}
		if ok {
			_, err := tx.ExecContext(ctx, `DELETE FROM t_signin_failure WHERE name = ? AND address = ?`, name, address)
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM t_signin_failure WHERE name = ? AND failed_at < ?`,
			name, now.Add(-booking.SignInWindow-booking.SignInLock)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO t_signin_failure (name, address, failed_at) VALUES (?, ?, ?)`, name, address, now)
		return err
	})
}

// DeleteOldSignIns deletes up to limit sign-in records older than olderThan
// (by the database's clock), oldest first: failed sign-ins, then the names
// whose last sign-in is that old (their failures are older still), and
// reports how many it deleted. Each is a range of its time index, a batch of
// its own (see retention.go).
func (db *DB) DeleteOldSignIns(ctx context.Context, olderThan time.Duration, limit int) (_ int, err error) {
	defer wrap(&err, "DeleteOldSignIns()")
	n, err := db.deleteBatch(ctx, `DELETE FROM t_signin_failure WHERE failed_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
		ORDER BY failed_at LIMIT ?`, olderThan.Microseconds(), limit)
	if err != nil || n >= limit {
		return n, err
	}
	m, err := db.deleteBatch(ctx, `DELETE FROM t_signin_name WHERE last_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
		ORDER BY last_at LIMIT ?`, olderThan.Microseconds(), limit-n)
	return n + m, err
}
