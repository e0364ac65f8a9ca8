// Package mysqltest gives each test its own fresh, migrated database on the real
// MySQL/MariaDB server at MYSQL_DSN, so tests run in parallel without seeing each
// other, and holds the invariant check (shared/README.md, "Invariants") that every
// concurrency test ends with.
package mysqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"

	drv "github.com/go-sql-driver/mysql"
)

// DefaultDSN is MYSQL_DSN's default (functions/README.md, "Configuration").
const DefaultDSN = "root@tcp(127.0.0.1:3306)/salon"

// ServerDSN returns MYSQL_DSN, or the default.
func ServerDSN() string {
	if dsn := os.Getenv("MYSQL_DSN"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// NewDSN creates a fresh empty database on the test server, drops it when the test
// ends, and returns its DSN.
func NewDSN(tb testing.TB) string {
	tb.Helper()
	return newDSNOn(tb, ServerDSN())
}

// NewDSNCharset is NewDSN for a database whose default character set is
// charset (latin1, utf8mb3, ...), as an older schema or a hand-made one may
// have: tables name their own, but a stored routine's string parameters take
// the database's unless they say otherwise.
func NewDSNCharset(tb testing.TB, charset string) string {
	tb.Helper()
	switch charset {
	case "latin1", "utf8mb3", "utf8mb4", "ascii", "gbk":
	default:
		tb.Fatalf("NewDSNCharset: %q is not one of the character sets tests use", charset)
	}
	return newDSNCharsetOn(tb, ServerDSN(), charset)
}

// newDSNOn is NewDSN on the server of serverDSN.
func newDSNOn(tb testing.TB, serverDSN string) string {
	tb.Helper()
	return newDSNCharsetOn(tb, serverDSN, "utf8mb4")
}

// newDSNCharsetOn creates the database with the default character set charset,
// one of the names NewDSNCharset allows.
func newDSNCharsetOn(tb testing.TB, serverDSN, charset string) string {
	tb.Helper()
	cfg, err := drv.ParseDSN(serverDSN)
	if err != nil {
		tb.Fatalf("MYSQL_DSN: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "salon_t_" + hex.EncodeToString(b[:])
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		tb.Fatal(err)
	}
	// The name is generated above from random hex, never from input; the
	// character set is one of a fixed list.
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET " + charset); err != nil {
		admin.Close()
		tb.Fatalf("create test database (is MariaDB running? scripts/test.sh starts one): %v", err)
	}
	tb.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Close()
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// New returns a store on a fresh migrated database with a pool big enough for
// concurrency tests (and small enough that parallel tests stay below the
// server's default max_connections of 151).
func New(tb testing.TB) *mysql.DB {
	db, _ := Open(tb, 24)
	return db
}

// Open is New with a pool of maxConns connections; it also returns the database's
// DSN, for tests that hand it to functions as MYSQL_DSN.
func Open(tb testing.TB, maxConns int) (*mysql.DB, string) {
	tb.Helper()
	return open(tb, NewDSN(tb), maxConns)
}

func open(tb testing.TB, dsn string, maxConns int) (*mysql.DB, string) {
	tb.Helper()
	db, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: maxConns})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return db, dsn
}

// AddSlot creates a slot starting `in` from now (by the database's clock) lasting
// 90 minutes, and returns its id.
func AddSlot(tb testing.TB, db *mysql.DB, in time.Duration, capacity int, priceFen int64) int64 {
	tb.Helper()
	ctx := context.Background()
	now, err := db.Now(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	start := now.Add(in).Truncate(time.Second)
	created, _, err := db.CreateSlots(ctx, []booking.ScheduledSlot{{StartAt: start, EndAt: start.Add(90 * time.Minute), Capacity: capacity, PriceFen: priceFen}})
	if err != nil || created != 1 {
		tb.Fatalf("AddSlot: created %d: %v", created, err)
	}
	var id int64
	if err := db.SQL().QueryRow(`SELECT slot_id FROM t_slot WHERE technician_key = 0 AND start_at = ?`, start).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

// AddService adds a service to the menu and returns its id.
func AddService(tb testing.TB, db *mysql.DB, name string, minutes int, priceFen, depositFen int64) int64 {
	tb.Helper()
	s, err := db.CreateService(context.Background(), booking.Service{Name: name, Minutes: minutes, PriceFen: priceFen, DepositFen: depositFen, Active: true})
	if err != nil {
		tb.Fatalf("AddService: %v", err)
	}
	return s.ID
}

// AddTechnician adds an active technician who does the given services and
// returns her id.
func AddTechnician(tb testing.TB, db *mysql.DB, name string, serviceIDs ...int64) int64 {
	tb.Helper()
	t, err := db.CreateTechnician(context.Background(), booking.Technician{Name: name, Active: true, ServiceIDs: serviceIDs})
	if err != nil {
		tb.Fatalf("AddTechnician: %v", err)
	}
	return t.ID
}

// GridStart is a start on the store's grid at least `in` from now by the
// database's clock: the next whole cell (in UTC, which the shop's zone of
// whole or half hours shares for any grid of up to 30 minutes).
func GridStart(tb testing.TB, db *mysql.DB, in time.Duration) time.Time {
	tb.Helper()
	now, err := db.Now(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	grid := time.Duration(db.Policy.GridMinutes) * time.Minute
	return now.Add(in).Truncate(grid).Add(grid)
}

// LayCells lays n cells of the grid for technician from start (her hours, as
// CreateSlots lays them) and returns their ids, by start. Cells there
// already are kept.
func LayCells(tb testing.TB, db *mysql.DB, technician int64, start time.Time, n int) []int64 {
	tb.Helper()
	grid := time.Duration(db.Policy.GridMinutes) * time.Minute
	var cells []booking.ScheduledSlot
	for i := range n {
		at := start.Add(time.Duration(i) * grid)
		cells = append(cells, booking.ScheduledSlot{StartAt: at, EndAt: at.Add(grid), Capacity: 1, TechnicianID: technician})
	}
	if _, _, err := db.CreateSlots(context.Background(), cells); err != nil {
		tb.Fatalf("LayCells: %v", err)
	}
	rows, err := db.SQL().Query(`SELECT slot_id FROM t_slot WHERE technician_id = ? AND start_at >= ? AND start_at < ? ORDER BY start_at`,
		technician, start, start.Add(time.Duration(n)*grid))
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	if len(ids) != n {
		tb.Fatalf("LayCells: %d cells of %d", len(ids), n)
	}
	return ids
}

// ExpireHold moves a booking's hold into the past, as if its lock TTL had run out.
// Tests use it instead of sleeping.
func ExpireHold(tb testing.TB, db *mysql.DB, bookingID int64) {
	tb.Helper()
	if _, err := db.SQL().Exec(`UPDATE t_booking SET lock_expire = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE book_id = ?`, bookingID); err != nil {
		tb.Fatal(err)
	}
}

// SlotStarts moves a slot in time so that it started `ago` before now by the
// database's clock (negative: it starts that far ahead), lasting 90 minutes, as
// if time had passed; its bookings start with it (t_booking.starts_at). Tests
// use it instead of waiting for an appointment.
func SlotStarts(tb testing.TB, db *mysql.DB, slotID int64, ago time.Duration) {
	tb.Helper()
	if _, err := db.SQL().Exec(`UPDATE t_slot SET start_at = UTC_TIMESTAMP() - INTERVAL ? MICROSECOND,
		end_at = UTC_TIMESTAMP() - INTERVAL ? MICROSECOND + INTERVAL 90 MINUTE WHERE slot_id = ?`,
		ago.Microseconds(), ago.Microseconds(), slotID); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.SQL().Exec(`UPDATE t_booking b JOIN t_slot s ON s.slot_id = b.slot_id SET b.starts_at = s.start_at
		WHERE s.slot_id = ?`, slotID); err != nil {
		tb.Fatal(err)
	}
}

// CheckInvariant fails the test unless, for every slot (a seat-mode slot or a
// technician's cell), 0 <= booked <= capacity and booked equals its
// t_booking_slot rows of bookings in a status that holds a seat; the table is
// the seats held now: a seat-mode booking holding a seat has exactly one row,
// of its own slot; a technician's booking holding one has a row for every
// cell of its span and no other (her cells from its first cell's start for
// its minutes, their lengths adding up to its minutes); any other booking
// none; and no customer holds two unfinished bookings. Every concurrency test
// ends with it.
func CheckInvariant(tb testing.TB, db *mysql.DB) {
	tb.Helper()
	holding := func() []any {
		return []any{booking.StatusPending, booking.StatusConfirmed, booking.StatusCompleted, booking.StatusNoShow}
	}
	rows, err := db.SQL().Query(`
		SELECT s.slot_id, s.booked, s.capacity,
		       (SELECT COUNT(*) FROM t_booking_slot bs JOIN t_booking b ON b.book_id = bs.book_id
		         WHERE bs.slot_id = s.slot_id AND b.status IN (?, ?, ?, ?))
		FROM t_slot s`, holding()...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var booked, capacity, held int
		if err := rows.Scan(&id, &booked, &capacity, &held); err != nil {
			tb.Fatal(err)
		}
		if booked < 0 || booked > capacity || booked != held {
			tb.Errorf("invariant broken on slot %d: booked=%d capacity=%d seats held by bookings holding a seat=%d", id, booked, capacity, held)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	// The rows are the seats held now: none of a booking that holds no seat (or
	// of none at all, or of no slot), each seat-mode booking holding a seat
	// holds its own slot's, and a technician's booking holds cells of hers
	// within its span only ...
	var stray, missing int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking_slot bs
		LEFT JOIN t_slot s ON s.slot_id = bs.slot_id
		LEFT JOIN t_booking b ON b.book_id = bs.book_id
		LEFT JOIN t_slot f ON f.slot_id = b.slot_id
		WHERE s.slot_id IS NULL OR b.book_id IS NULL OR b.status NOT IN (?, ?, ?, ?)
		   OR (b.technician_id IS NULL AND (b.slot_id <> bs.slot_id OR s.technician_id IS NOT NULL))
		   OR (b.technician_id IS NOT NULL AND (s.technician_id IS NULL OR s.technician_id <> b.technician_id
		       OR s.start_at < f.start_at OR s.start_at >= f.start_at + INTERVAL b.minutes MINUTE))`, holding()...).Scan(&stray); err != nil {
		tb.Fatal(err)
	}
	// ... and all of them: exactly one row, or cells covering its minutes.
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking b WHERE b.status IN (?, ?, ?, ?) AND (
		(b.technician_id IS NULL AND (SELECT COUNT(*) FROM t_booking_slot bs WHERE bs.book_id = b.book_id) <> 1)
		OR (b.technician_id IS NOT NULL AND COALESCE((SELECT SUM(TIMESTAMPDIFF(MINUTE, s.start_at, s.end_at))
			FROM t_booking_slot bs JOIN t_slot s ON s.slot_id = bs.slot_id WHERE bs.book_id = b.book_id), 0) <> b.minutes))`, holding()...).Scan(&missing); err != nil {
		tb.Fatal(err)
	}
	// ... and no two cells of one technician overlap in time.
	var overlapping int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot s JOIN t_slot o
		ON o.technician_key = s.technician_key AND o.start_at > s.start_at AND o.start_at < s.end_at
		WHERE s.technician_key <> 0`).Scan(&overlapping); err != nil {
		tb.Fatal(err)
	}
	if overlapping != 0 {
		tb.Errorf("invariant broken: %d pairs of one technician's cells overlap", overlapping)
	}
	if stray != 0 || missing != 0 {
		tb.Errorf("invariant broken: %d seat rows of bookings not holding that seat, %d bookings holding a seat without exactly its rows", stray, missing)
	}
	// By openid (mini-program customers) and by customer (also walk-ins, who
	// have no openid).
	for _, who := range []string{"openid", "customer_id"} {
		var dup int
		if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM (SELECT ` + who + ` FROM t_booking WHERE status IN (0, 1) AND ` + who + ` IS NOT NULL
			GROUP BY ` + who + ` HAVING COUNT(*) > 1) d`).Scan(&dup); err != nil {
			tb.Fatal(err)
		}
		if dup > 0 {
			tb.Errorf("invariant broken: %d customers (by %s) hold more than one unfinished booking", dup, who)
		}
	}
}
