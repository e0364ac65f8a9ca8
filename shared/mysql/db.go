// Package mysql is the booking store on MySQL 8.0 / MariaDB 10.11: the schema and
// its migrations, the atomic reservation, and the one function through which every
// booking changes status. All SQL of the product lives here, parameterised.
//
// Every time that decides a lock or an expiry comes from the database's clock
// (UTC_TIMESTAMP), never from the function's, so that instances with skewed clocks
// and the release timer agree on when a hold ends.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"salon/shared/booking"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DB is the store. It is safe for concurrent use.
type DB struct {
	db *sql.DB

	// LockTTL is how long a pending booking holds its seat (LOCK_TTL).
	LockTTL time.Duration
	// WindowDays is how far ahead a slot can be booked (BOOKING_WINDOW_DAYS).
	WindowDays int
	// RemindBefore is how long before the start a confirmed booking's reminder is
	// due (REMIND_BEFORE); a booking confirmed inside it gets its reminder at once.
	RemindBefore time.Duration
}

// Options tune the connection pool. SCF runs one request per instance at a time,
// so a function needs very few connections; tests and benchmarks want more.
type Options struct {
	MaxOpenConns    int
	ConnMaxLifetime time.Duration
	ConnMaxIdleTime time.Duration
}

// SCFOptions suit a warm SCF instance: two connections (one request plus a side
// query), lifetimes well below the server's wait_timeout so that a socket left idle
// by a frozen instance is not reused.
var SCFOptions = Options{MaxOpenConns: 2, ConnMaxLifetime: 5 * time.Minute, ConnMaxIdleTime: time.Minute}

// Config returns the driver configuration the store needs for dsn: UTC times, a
// UTC session zone, short network timeouts, and client-side interpolation of
// parameters (one round trip per statement instead of three; values are still
// escaped by the driver, never concatenated by us).
func Config(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_DSN: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	// Reserve sends its whole write as one multi-statement round trip
	// (reserveSQL). Every statement text is a constant and every value is
	// escaped by the driver, so this widens nothing an input could reach.
	cfg.MultiStatements = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	if cfg.Timeout == 0 {
		cfg.Timeout = 3 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	return cfg, nil
}

// Open returns a store for dsn without connecting; the first query connects, so a
// slow database does not hold up an SCF instance's start.
func Open(dsn string, opt Options) (*DB, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_DSN: %w", err)
	}
	db := sql.OpenDB(conn)
	if opt.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opt.MaxOpenConns)
		db.SetMaxIdleConns(opt.MaxOpenConns)
	}
	db.SetConnMaxLifetime(opt.ConnMaxLifetime)
	db.SetConnMaxIdleTime(opt.ConnMaxIdleTime)
	return &DB{db: db, LockTTL: 15 * time.Minute, WindowDays: 14, RemindBefore: 3 * time.Hour}, nil
}

// Close closes the pool.
func (db *DB) Close() error { return db.db.Close() }

// SQL exposes the pool for the migration tool, tests and benchmarks.
func (db *DB) SQL() *sql.DB { return db.db }

// Ping checks that the database answers (GET /healthz).
func (db *DB) Ping(ctx context.Context) error { return db.db.PingContext(ctx) }

// Now returns the database's clock.
func (db *DB) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := db.db.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6)`).Scan(&now)
	return now, err
}

// begin starts a transaction at the server's default isolation. No store method
// relies on a snapshot: every decision is a conditional write or a locking read,
// and re-reads after a lost race run outside the transaction. Plain BEGIN costs one
// round trip; asking for an isolation level costs another on every transaction.
func (db *DB) begin(ctx context.Context) (*sql.Tx, error) {
	return db.db.BeginTx(ctx, nil)
}

// beginReadCommitted is for the release claim: under READ COMMITTED its locking
// scan takes no gap locks, so it never blocks reservations inserting new holds.
func (db *DB) beginReadCommitted(ctx context.Context) (*sql.Tx, error) {
	return db.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
}

// statusList spells statuses for SQL's IN (...). The lists come from package
// booking, never from input, so the SQL and the domain cannot disagree.
func statusList(ss []booking.Status) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = strconv.Itoa(int(s))
	}
	return strings.Join(parts, ", ")
}

// seatHoldingSQL is booking.SeatHolding for IN (...).
var seatHoldingSQL = statusList(booking.SeatHolding)

// MySQL error numbers the store turns into domain outcomes.
const (
	errDupEntry        = 1062
	errCheckViolation  = 4025 // MariaDB: CONSTRAINT failed
	errCheckViolation8 = 3819 // MySQL 8.0: Check constraint is violated
)

func mysqlErrNo(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// dupKey returns the name of the unique key that err violated, or "".
func dupKey(err error) string {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != errDupEntry {
		return ""
	}
	// "Duplicate entry 'x' for key 'uk_booking_active'" (MySQL 8 prefixes the table).
	msg := me.Message
	for _, k := range []string{"uk_booking_active", "uk_booking_idem", "uk_booking_trade", "uk_slot_start"} {
		if containsWord(msg, k) {
			return k
		}
	}
	return "unknown"
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}
