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
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"salon/shared/booking"

	drv "github.com/go-sql-driver/mysql"
)

// DB is the store. It is safe for concurrent use.
type DB struct {
	db *sql.DB

	// Policy is the salon's rules in numbers, the same value the service has:
	// its transactions read LOCK_TTL and BOOKING_WINDOW_DAYS in their SQL, and
	// hand the rest to package booking's plans.
	Policy booking.Policy
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

// Config returns the driver configuration the store needs for dsn: UTF-8
// (utf8mb4) on the connection, UTC times, a UTC session zone, short network
// timeouts, and client-side interpolation of parameters (one round trip per
// statement instead of three; values are still escaped by the driver, never
// concatenated by us).
//
// The character set is pinned because the driver's escaping is only as good as
// its agreement with the server about where a character ends. With a
// multi-byte set such as gbk, the byte 0x5C (backslash) can be the second half
// of a character: the backslash the driver puts before a quote is eaten, and
// the quote ends the string. With multi-statements on, an Idempotency-Key such
// as "中';UPDATE t_slot SET price_fen=1;#" then re-prices every slot
// (TestCharsetProof). utf8mb4 has no such bytes, so a DSN that asks for any
// other character set or collation is refused here, not silently rewritten.
func Config(dsn string) (*drv.Config, error) {
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_DSN: %w", err)
	}
	if err := checkCharset(dsn); err != nil {
		return nil, err
	}
	if cfg.Collation == "" {
		// The driver's own default, said out loud: the handshake then sets the
		// client, connection and result character sets to utf8mb4.
		cfg.Collation = defaultCollation
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	// No multi-statements, whatever the DSN asks: nothing in the store sends
	// two statements in one round trip (the reservation's write is one CALL,
	// reserveSQL), and without them a value that escaped its string, had the
	// escaping ever failed (above), could not start a statement of its own.
	cfg.MultiStatements = false
	// Affected rows mean changed rows, whatever the DSN asks: CreateSlots
	// counts the slots it created by them (an existing start is 0 rows).
	cfg.ClientFoundRows = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	// Production's rules on every connection, whatever the server's default or
	// the DSN says (a DSN's sql_mode, in any case, is replaced, not merged).
	for k := range cfg.Params {
		if strings.EqualFold(k, "sql_mode") {
			delete(cfg.Params, k)
		}
	}
	cfg.Params["sql_mode"] = "'" + SQLMode + "'"
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

// SQLMode is MySQL 8.0's default sql_mode, the one TencentDB for MySQL 8.0
// runs with. The store sets it on every connection so that MariaDB, here and
// in the tests, refuses what production would refuse: a non-aggregated column
// outside GROUP BY, a value that does not fit its column, a zero or partly zero
// date, a division by zero in a write. (MariaDB's own default lacks
// ONLY_FULL_GROUP_BY, NO_ZERO_IN_DATE and NO_ZERO_DATE.) A stored procedure
// keeps the sql_mode of the session that created it, so the migrations, which
// run through the store, create salon_reserve under this mode too.
const SQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// defaultCollation is the connection collation when the DSN names none: the
// driver's default, and MariaDB's default for utf8mb4.
const defaultCollation = "utf8mb4_general_ci"

// checkCharset refuses a DSN whose parameters choose a connection character
// set or collation other than utf8mb4: the driver's charset and collation, and
// any session variable that does the same (the driver sends unknown parameters
// as SET name=value, so character_set_client=gbk would work as well as
// charset=gbk). The parameters are read the way the driver reads them: after
// the first '?' that follows the last '/'.
func checkCharset(dsn string) error {
	rest := dsn[strings.LastIndexByte(dsn, '/')+1:]
	_, query, ok := strings.Cut(rest, "?")
	if !ok {
		return nil
	}
	for param := range strings.SplitSeq(query, "&") {
		key, value, ok := strings.Cut(param, "=")
		if !ok {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		lower := strings.ToLower(key)
		collation := lower == "collation" || strings.HasPrefix(lower, "collation_")
		if !collation && lower != "charset" && lower != "names" && !strings.HasPrefix(lower, "character_set") {
			continue
		}
		// charset may list several to try in turn; every one must be utf8mb4.
		for _, v := range strings.Split(value, ",") {
			v = strings.ToLower(strings.Trim(strings.TrimSpace(v), `'"`))
			if v != "utf8mb4" && (!collation || !strings.HasPrefix(v, "utf8mb4_")) {
				return fmt.Errorf("MYSQL_DSN: %s=%s: the store talks utf8mb4 only (in a multi-byte character set such as gbk an escaped value can end its string); remove %s or set it to utf8mb4", key, value, key)
			}
		}
	}
	return nil
}

// Open returns a store for dsn without connecting; the first query connects, so a
// slow database does not hold up an SCF instance's start.
func Open(dsn string, opt Options) (*DB, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	return openConfig(cfg, opt)
}

// openConfig opens a store on a driver configuration Config made.
func openConfig(cfg *drv.Config, opt Options) (*DB, error) {
	conn, err := drv.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_DSN: %w", err)
	}
	return openConnector(conn, opt), nil
}

// openConnector opens a store on conn: the driver's, or (in the plan test) one
// that records every statement on its way to the driver.
func openConnector(conn driver.Connector, opt Options) *DB {
	db := sql.OpenDB(conn)
	if opt.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opt.MaxOpenConns)
		db.SetMaxIdleConns(opt.MaxOpenConns)
	}
	db.SetConnMaxLifetime(opt.ConnMaxLifetime)
	db.SetConnMaxIdleTime(opt.ConnMaxIdleTime)
	return &DB{db: db, Policy: booking.DefaultPolicy}
}

// Close closes the pool.
func (db *DB) Close() (err error) {
	defer wrap(&err, "Close()")
	return db.db.Close()
}

// SQL exposes the pool for the migration tool, tests and benchmarks.
func (db *DB) SQL() *sql.DB { return db.db }

// Ping checks that the database answers (GET /healthz).
func (db *DB) Ping(ctx context.Context) (err error) {
	defer wrap(&err, "Ping()")
	return db.db.PingContext(ctx)
}

// Now returns the database's clock.
func (db *DB) Now(ctx context.Context) (_ time.Time, err error) {
	defer wrap(&err, "Now()")
	var now time.Time
	err = db.db.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6)`).Scan(&now)
	return now, err
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
	errDeadlock        = 1213 // the server rolled this transaction back to break a deadlock
	errLockWaitTimeout = 1205
	// errAutoIncRead: InnoDB could not hand out an AUTO_INCREMENT value, seen
	// when another session waiting on the table's auto-increment lock is killed
	// (the stress test's killed connections found it). The statement failed,
	// nothing was written, and the transaction can run again.
	errAutoIncRead     = 1467
	errDupEntry        = 1062
	errCheckViolation  = 4025 // MariaDB: CONSTRAINT failed
	errCheckViolation8 = 3819 // MySQL 8.0: Check constraint is violated
)

// deadlockRetries is how often a transaction the server chose as a deadlock's
// victim is run again. Handing a freed seat to the waitlist inside a cancel can
// meet a reservation of the same customer at that moment, each waiting for a lock
// the other holds; the server rolls one back whole, so running it again is safe.
const deadlockRetries = 3

// transact runs fn in one transaction of the given isolation, commits it when
// fn succeeds, and rolls it back otherwise (also when fn panics). nil opts is the
// server's default isolation: no store method relies on a snapshot (every
// decision is a conditional write or a locking read, and re-reads after a lost
// race run outside the transaction), and a plain BEGIN costs one round trip
// where asking for an isolation level costs another. A transaction the server rolled back as a deadlock's
// victim is run again whole (retryDeadlock), so fn must write only through tx
// and keep its results in variables it sets anew each time. It is the one
// place the store begins a transaction.
func (db *DB) transact(ctx context.Context, opts *sql.TxOptions, fn func(tx *sql.Tx) error) error {
	return retryDeadlock(func() error {
		tx, err := db.db.BeginTx(ctx, opts)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// readCommitted is for the release claims: under READ COMMITTED their locking
// scans take no gap locks, so they never block reservations inserting new holds.
var readCommitted = &sql.TxOptions{Isolation: sql.LevelReadCommitted}

// retryDeadlock runs tx, a whole transaction, again when the server rolled it
// back as a deadlock's victim, a lock wait timed out, or an auto-increment value
// could not be read: contention that passes, where running again is safe.
func retryDeadlock(tx func() error) error {
	var err error
	for attempt := 0; attempt < deadlockRetries; attempt++ {
		if err = tx(); err == nil {
			return nil
		}
		if n := mysqlErrNo(err); n != errDeadlock && n != errLockWaitTimeout && n != errAutoIncRead {
			return err
		}
	}
	return err
}

func mysqlErrNo(err error) uint16 {
	var me *drv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// dupKey returns the name of the unique key that err violated, or "".
func dupKey(err error) string {
	var me *drv.MySQLError
	if !errors.As(err, &me) || me.Number != errDupEntry {
		return ""
	}
	// "Duplicate entry 'x' for key 'uk_booking_active'" (MySQL 8 prefixes the table).
	msg := me.Message
	for _, k := range []string{"uk_booking_active", "uk_booking_customer_active", "uk_booking_idem", "uk_booking_trade", "uk_booking_checkin", "uk_slot_start", "uk_money_once"} {
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
