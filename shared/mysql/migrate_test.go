package mysql_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// TestMigrateAPopulatedV1Database builds the schema as the first release left it,
// fills it with bookings in every state (a refund in flight among them), and
// upgrades it: every row keeps its values, the in-flight refund becomes due, and
// the store works on the result.
func TestMigrateAPopulatedV1Database(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	db, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0001_init"); err != nil {
		t.Fatal(err)
	}
	seed := []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) VALUES
			(1, UTC_TIMESTAMP() + INTERVAL 1 DAY, UTC_TIMESTAMP() + INTERVAL 1 DAY + INTERVAL 90 MINUTE, 3, 3, 5000, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, UTC_TIMESTAMP() - INTERVAL 1 DAY, UTC_TIMESTAMP() - INTERVAL 1 DAY + INTERVAL 90 MINUTE, 2, 0, 0, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		`INSERT INTO t_booking (book_id, slot_id, openid, status, amount_fen, out_trade_no, idem_key, lock_expire, transaction_id, paid_fen, paid_at,
			refund_status, refund_fen, refund_no, created_at, updated_at) VALUES
			(1, 1, 'o-a', 0, 5000, 'BK000000000001', 'k1', UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE, NULL, NULL, NULL, NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, 1, 'o-b', 1, 5000, 'BK000000000002', NULL, UTC_TIMESTAMP(6), '4200000002', 5000, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(3, 1, 'o-c', 2, 5000, 'BK000000000003', NULL, UTC_TIMESTAMP(6), '4200000003', 5000, UTC_TIMESTAMP(6), NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(4, 1, 'o-d', 3, 5000, 'BK000000000004', NULL, UTC_TIMESTAMP(6), '4200000004', 5000, UTC_TIMESTAMP(6), 'processing', 5000, 'RF000000000004', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(5, 1, 'o-e', 4, 5000, 'BK000000000005', NULL, UTC_TIMESTAMP(6), NULL, NULL, NULL, NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(6, 1, 'o-f', 3, 5000, 'BK000000000006', NULL, UTC_TIMESTAMP(6), '4200000006', 5000, UTC_TIMESTAMP(6), 'pending', 5000, 'RF000000000006', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		`INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at) VALUES
			(1, 1, 'reserve', NULL, 0, 'customer', 'hold', UTC_TIMESTAMP(6))`,
	}
	for _, q := range seed {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// Every v1 column of every row, as text, before and after.
	snapshot := func() string {
		var out string
		for _, q := range []string{
			`SELECT CONCAT_WS('|', slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) FROM t_slot ORDER BY slot_id`,
			`SELECT CONCAT_WS('|', book_id, slot_id, openid, status, amount_fen, out_trade_no, COALESCE(idem_key, '-'), lock_expire, claim_until,
				COALESCE(transaction_id, '-'), COALESCE(paid_fen, '-'), COALESCE(paid_at, '-'), COALESCE(refund_status, '-'),
				COALESCE(refund_fen, '-'), COALESCE(refund_no, '-'), COALESCE(refund_id, '-'), COALESCE(refunded_at, '-'),
				created_at, updated_at, COALESCE(active_openid, '-')) FROM t_booking ORDER BY book_id`,
			`SELECT CONCAT_WS('|', audit_id, book_id, slot_id, event, COALESCE(from_status, '-'), to_status, actor, reason, created_at) FROM t_audit ORDER BY audit_id`,
		} {
			rows, err := db.SQL().Query(q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var line string
				rows.Scan(&line)
				out += line + "\n"
			}
			rows.Close()
		}
		return out
	}
	before := snapshot()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("v1 data changed by the upgrade:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	var due, requested int
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE refund_next_at IS NOT NULL`).Scan(&due)
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE refund_requested_at IS NOT NULL`).Scan(&requested)
	if due != 2 || requested != 1 {
		t.Fatalf("in-flight refunds: %d due, %d requested; want 2 and 1", due, requested)
	}
	// The store reads the upgraded rows, and the in-flight refunds are taken up.
	b, err := db.FindBooking(ctx, 4)
	if err != nil || b.Refund == nil || b.Refund.Status != booking.RefundProcessing {
		t.Fatalf("booking 4 after the upgrade: %+v %v", b, err)
	}
	claimed, err := db.ClaimDueRefunds(ctx, 0, 0, 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d due refunds: %v", len(claimed), err)
	}
	mysqltest.CheckInvariant(t, db)
	// A second run is a no-op.
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateKeepsTheFirstSlotOfMovedBookings: 0017 backfills the slot a
// booking moved before it was made in, from the first record of the booking
// that retention has not deleted; a booking that never moved, or whose record
// is gone, keeps NULL (slot_id, or no trace). A retry of the moved booking's
// reservation then answers it from the booking, with its audit trail deleted.
func TestMigrateKeepsTheFirstSlotOfMovedBookings(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	db, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0013_reserve_seat_last"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) VALUES
			(1, UTC_TIMESTAMP() + INTERVAL 1 DAY, UTC_TIMESTAMP() + INTERVAL 1 DAY + INTERVAL 90 MINUTE, 3, 0, 0, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, UTC_TIMESTAMP() + INTERVAL 2 DAY, UTC_TIMESTAMP() + INTERVAL 2 DAY + INTERVAL 90 MINUTE, 3, 3, 0, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		// 1 moved from slot 1 (reserved there, then two moves); 2 never moved;
		// 3 moved, its records already deleted.
		`INSERT INTO t_booking (book_id, slot_id, openid, status, amount_fen, out_trade_no, idem_key, lock_expire, created_at, updated_at) VALUES
			(1, 2, 'o-a', 1, 0, 'BK000000000001', 'k1', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, 2, 'o-b', 1, 0, 'BK000000000002', 'k2', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(3, 2, 'o-c', 1, 0, 'BK000000000003', 'k3', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		`INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at) VALUES
			(1, 1, 'reserve', NULL, 1, 'customer', '', UTC_TIMESTAMP(6)),
			(2, 2, 'reserve', NULL, 1, 'customer', '', UTC_TIMESTAMP(6)),
			(1, 2, 'reschedule', 1, 1, 'customer', '', UTC_TIMESTAMP(6)),
			(1, 1, 'reschedule', 1, 1, 'admin', '', UTC_TIMESTAMP(6)),
			(1, 2, 'reschedule', 1, 1, 'admin', '', UTC_TIMESTAMP(6))`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL().Query(`SELECT book_id, COALESCE(first_slot_id, 0) FROM t_booking ORDER BY book_id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for rows.Next() {
		var id, first int64
		if err := rows.Scan(&id, &first); err != nil {
			t.Fatal(err)
		}
		got[id] = first
	}
	rows.Close()
	if want := map[int64]int64{1: 1, 2: 0, 3: 0}; !maps.Equal(got, want) {
		t.Fatalf("first_slot_id after 0017: %v, want %v", got, want)
	}
	if _, err := db.SQL().Exec(`DELETE FROM t_audit`); err != nil {
		t.Fatal(err)
	}
	b, created, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-a", SlotID: 1, IdemKey: "k1"})
	if err != nil || created || b.ID != 1 || b.SlotID != 2 {
		t.Fatalf("the key of the moved booking with its first slot: %+v created=%v %v", b, created, err)
	}
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-c", SlotID: 1, IdemKey: "k3"}); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("the key of a booking moved with no trace left: %v, want INVALID_STATE", err)
	}
}

// A migration is cut at the delimiter that ends a line: ";" until a DELIMITER
// line changes it, as a stored routine's body (whose statements end in ";")
// needs; comment lines are dropped.
func TestSplitStatementsHonoursDelimiter(t *testing.T) {
	got := mysql.SplitStatementsForTest(`-- a comment
CREATE TABLE a (id INT);
DROP PROCEDURE IF EXISTS p;

DELIMITER //
CREATE PROCEDURE p()
BEGIN
  -- inside
  SELECT 1;
  SELECT 2;
END //
delimiter ;
INSERT INTO a VALUES (1);
`)
	want := []string{
		"CREATE TABLE a (id INT)",
		"DROP PROCEDURE IF EXISTS p",
		"CREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n  SELECT 2;\nEND",
		"INSERT INTO a VALUES (1)",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d statements %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// TestMigrationMergesCustomersOfOnePhone builds the schema as 0013 left it,
// with the duplicates concurrent walk-ins made (several rows of one phone, one
// person holding several unfinished bookings), and upgrades it: one row per
// phone, the walk-ins' bookings, notes and names merged onto it, no booking
// cancelled (an unfinished one the keeper cannot take keeps its row, without
// the phone), NULL phones still many, and the unique key then refuses a
// second row of a phone.
func TestMigrationMergesCustomersOfOnePhone(t *testing.T) {
	t.Parallel()
	db, err := mysql.Open(mysqltest.NewDSN(t), mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0013_reserve_seat_last"); err != nil {
		t.Fatal(err)
	}
	const a, b, c = "13800000001", "13800000002", "13800000003"
	for _, q := range []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) VALUES
			(1, UTC_TIMESTAMP() + INTERVAL 1 DAY, UTC_TIMESTAMP() + INTERVAL 1 DAY + INTERVAL 90 MINUTE, 5, 2, 0, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, UTC_TIMESTAMP() - INTERVAL 1 DAY, UTC_TIMESTAMP() - INTERVAL 1 DAY + INTERVAL 90 MINUTE, 5, 3, 0, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		`INSERT INTO t_customer (customer_id, openid, name, phone, note, created_at, updated_at) VALUES
			(1, 'o-k', 'Her', '` + a + `', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, NULL, '陈', '` + a + `', '对甲油胶过敏', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(3, NULL, '陈女士', '` + a + `', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(4, NULL, '陈三', '` + a + `', '对甲油胶过敏', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(5, NULL, '王', '` + b + `', 'n5', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(6, NULL, '王王', '` + b + `', 'n6', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(7, 'o-x', NULL, '` + c + `', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(8, 'o-y', 'Y', '` + c + `', 'y', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(9, NULL, '空', '', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(10, NULL, '无', NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(11, NULL, '无二', NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(12, NULL, NULL, '13800000004', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(13, NULL, '后来', '13800000004', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		// Completed visits of 2, 5 and 6; confirmed bookings ahead of 3 and 4:
		// one person holding two unfinished bookings.
		`INSERT INTO t_booking (book_id, slot_id, openid, customer_id, status, amount_fen, lock_expire, created_at, updated_at) VALUES
			(1, 2, NULL, 2, 2, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, 1, NULL, 3, 1, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(3, 1, NULL, 4, 1, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(4, 2, NULL, 5, 2, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(5, 2, NULL, 6, 2, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	type row struct {
		openid, name, phone, note string
		byCustomer                int
	}
	customers := map[int64]row{}
	rows, err := db.SQL().Query(`SELECT customer_id, COALESCE(openid, '-'), COALESCE(name, '-'), COALESCE(phone, '-'), COALESCE(note, '-'), name_by_customer FROM t_customer`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var r row
		if err := rows.Scan(&id, &r.openid, &r.name, &r.phone, &r.note, &r.byCustomer); err != nil {
			t.Fatal(err)
		}
		customers[id] = r
	}
	rows.Close()
	want := map[int64]row{
		1:  {"o-k", "Her", a, "对甲油胶过敏", 1}, // the mini-program customer keeps the phone, gets the note once
		4:  {"-", "陈三", "-", "对甲油胶过敏", 0},  // still holds an unfinished booking she could not take
		5:  {"-", "王", b, "n5\nn6", 0},
		7:  {"o-x", "-", c, "-", 0},
		8:  {"o-y", "Y", "-", "y", 1}, // another openid: loses the phone only
		9:  {"-", "空", "-", "-", 0},
		10: {"-", "无", "-", "-", 0},
		11: {"-", "无二", "-", "-", 0},
		12: {"-", "后来", "13800000004", "-", 0}, // the earliest, named by the later one
	}
	for id, w := range want {
		if got, ok := customers[id]; !ok || got != w {
			t.Errorf("customer %d: %+v (present %v), want %+v", id, got, ok, w)
		}
	}
	if len(customers) != len(want) {
		t.Errorf("%d customers after the merge, want %d: %v", len(customers), len(want), customers)
	}
	bookings := map[int64]string{}
	rows, err = db.SQL().Query(`SELECT book_id, CONCAT(COALESCE(openid, '-'), '/', customer_id) FROM t_booking`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var who string
		rows.Scan(&id, &who)
		bookings[id] = who
	}
	rows.Close()
	for id, w := range map[int64]string{1: "o-k/1", 2: "o-k/1", 3: "-/4", 4: "-/5", 5: "-/5"} {
		if bookings[id] != w {
			t.Errorf("booking %d belongs to %s, want %s", id, bookings[id], w)
		}
	}
	var helpers int
	db.SQL().QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 't\_merge%'`).Scan(&helpers)
	if helpers != 0 {
		t.Errorf("%d helper tables left", helpers)
	}
	// The store reads the merged customer with her visit; the key refuses a
	// second row of a phone and takes any number without one.
	if cu, err := db.CustomerByOpenID(ctx, "o-k"); err != nil || cu.Visits != 1 || cu.Note != "对甲油胶过敏" {
		t.Errorf("o-k after the merge: %+v %v", cu, err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO t_customer (name, phone, created_at, updated_at) VALUES ('x', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, a); err == nil {
		t.Errorf("a second customer of phone %s was accepted", a)
	}
	if _, err := db.SQL().Exec(`INSERT INTO t_customer (name, phone, created_at, updated_at) VALUES ('x', NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`); err != nil {
		t.Errorf("another customer without a phone: %v", err)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestMigrationRecordsTheSeatsHeld builds the schema as 0018 left it, with a
// booking in every status, and upgrades it: each booking that holds a seat
// (pending, confirmed, completed, no_show) gets its one t_booking_slot row in
// its slot, the others none, and the invariant holds on the result; a booking
// migrated with its seat then returns it through the one seat-returning path.
func TestMigrationRecordsTheSeatsHeld(t *testing.T) {
	t.Parallel()
	db, err := mysql.Open(mysqltest.NewDSN(t), mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0018_customer_search"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) VALUES
			(1, UTC_TIMESTAMP() + INTERVAL 1 DAY, UTC_TIMESTAMP() + INTERVAL 1 DAY + INTERVAL 90 MINUTE, 5, 2, 5000, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, UTC_TIMESTAMP() - INTERVAL 1 DAY, UTC_TIMESTAMP() - INTERVAL 1 DAY + INTERVAL 90 MINUTE, 5, 2, 5000, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		`INSERT INTO t_booking (book_id, slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at) VALUES
			(1, 1, 'o-0', 0, 5000, UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(2, 1, 'o-1', 1, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(3, 2, 'o-2', 2, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(4, 1, 'o-3', 3, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(5, 1, 'o-4', 4, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)),
			(6, 2, 'o-5', 5, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	rows, err := db.SQL().QueryContext(ctx, `SELECT book_id, slot_id FROM t_booking_slot ORDER BY book_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b, s int64
		if err := rows.Scan(&b, &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d@%d", b, s))
	}
	rows.Close()
	if want := []string{"1@1", "2@1", "3@2", "6@2"}; !slices.Equal(got, want) {
		t.Errorf("seat rows %v, want %v (the bookings in status 0, 1, 2, 5)", got, want)
	}
	mysqltest.CheckInvariant(t, db)
	if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: 2, From: booking.StatusConfirmed, To: booking.StatusCancelled,
		Event: booking.EventCancel, Actor: booking.ActorSalon, By: "owner"}); err != nil {
		t.Fatal(err)
	}
	var booked, held int
	db.SQL().QueryRowContext(ctx, `SELECT booked, (SELECT COUNT(*) FROM t_booking_slot WHERE book_id = 2) FROM t_slot WHERE slot_id = 1`).Scan(&booked, &held)
	if booked != 1 || held != 0 {
		t.Errorf("after the cancel: booked %d, %d rows of the booking; want 1 and 0", booked, held)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestMigrationMovesTheMoneyIntoTheLedger: a database at 0022 with bookings
// paid, refunded (and a refund still processing), late-cancelled, no-show,
// completed, unpaid and walked in, migrated: each payment WeChat confirmed is a
// deposit at its payment time, each refund that succeeded a refund at its
// success time with WeChat's numbers, each deposit a late cancel or a no-show
// kept a kept row at that change's audit time; nothing else.
func TestMigrationMovesTheMoneyIntoTheLedger(t *testing.T) {
	t.Parallel()
	db, err := mysql.Open(mysqltest.NewDSN(t), mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0022_return_seat_by_key"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at) VALUES
			(1, '2026-05-03 06:00:00', '2026-05-03 07:30:00', 9, 0, 5000, 1, '2026-05-01 00:00:00', '2026-05-01 00:00:00')`,
		`INSERT INTO t_booking (book_id, slot_id, openid, status, amount_fen, out_trade_no, lock_expire, transaction_id, paid_fen, paid_at,
			refund_status, refund_fen, refund_no, refund_id, refunded_at, created_at, updated_at) VALUES
			(1, 1, 'o-paid', 1, 5000, 'BK000000000001', '2026-05-01 01:00:00', '4200000001', 5000, '2026-05-01 01:01:00', NULL, NULL, NULL, NULL, NULL, '2026-05-01 01:00:00', '2026-05-01 01:01:00'),
			(2, 1, 'o-refunded', 3, 5000, 'BK000000000002', '2026-05-01 02:00:00', '4200000002', 5000, '2026-05-01 02:01:00', 'succeeded', 5000, 'RF000000000002', '5030000002', '2026-05-01 03:00:00', '2026-05-01 02:00:00', '2026-05-01 03:00:00'),
			(3, 1, 'o-late', 3, 5000, 'BK000000000003', '2026-05-01 04:00:00', '4200000003', 5000, '2026-05-01 04:01:00', NULL, NULL, NULL, NULL, NULL, '2026-05-01 04:00:00', '2026-05-03 05:00:00'),
			(4, 1, 'o-noshow', 5, 5000, 'BK000000000004', '2026-05-01 05:00:00', '4200000004', 5000, '2026-05-01 05:01:00', NULL, NULL, NULL, NULL, NULL, '2026-05-01 05:00:00', '2026-05-03 09:00:00'),
			(5, 1, 'o-processing', 3, 5000, 'BK000000000005', '2026-05-01 06:00:00', '4200000005', 5000, '2026-05-01 06:01:00', 'processing', 5000, 'RF000000000005', NULL, NULL, '2026-05-01 06:00:00', '2026-05-01 07:00:00'),
			(6, 1, 'o-done', 2, 5000, 'BK000000000006', '2026-05-01 07:00:00', '4200000006', 5000, '2026-05-01 07:01:00', NULL, NULL, NULL, NULL, NULL, '2026-05-01 07:00:00', '2026-05-03 06:10:00'),
			(7, 1, 'o-unpaid', 3, 5000, 'BK000000000007', '2026-05-01 08:00:00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-05-01 08:00:00', '2026-05-01 08:05:00'),
			(8, 1, 'o-expired', 4, 5000, 'BK000000000008', '2026-05-01 09:00:00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-05-01 09:00:00', '2026-05-01 09:15:00'),
			(9, 1, 'o-walkin', 1, 0, NULL, '2026-05-01 10:00:00', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-05-01 10:00:00', '2026-05-01 10:00:00')`,
		`INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at) VALUES
			(3, 1, 'late_cancel', 1, 3, 'customer', '', '2026-05-03 04:30:00'),
			(4, 1, 'no_show', 1, 5, 'timer', '', '2026-05-03 08:00:00')`,
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL().QueryContext(ctx, `SELECT CONCAT_WS('|', book_id, kind, amount_fen, method, COALESCE(out_trade_no, '-'),
		COALESCE(transaction_id, '-'), COALESCE(out_refund_no, '-'), COALESCE(refund_id, '-'), actor, DATE_FORMAT(created_at, '%m-%d %H:%i'))
		FROM t_money ORDER BY book_id, money_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	rows.Close()
	want := []string{
		"1|deposit|5000|wechatpay|BK000000000001|4200000001|-|-|wechatpay|05-01 01:01",
		"2|deposit|5000|wechatpay|BK000000000002|4200000002|-|-|wechatpay|05-01 02:01",
		"2|refund|5000|wechatpay|BK000000000002|-|RF000000000002|5030000002|wechatpay|05-01 03:00",
		"3|deposit|5000|wechatpay|BK000000000003|4200000003|-|-|wechatpay|05-01 04:01",
		"3|kept|5000|wechatpay|BK000000000003|-|-|-|system|05-03 04:30",
		"4|deposit|5000|wechatpay|BK000000000004|4200000004|-|-|wechatpay|05-01 05:01",
		"4|kept|5000|wechatpay|BK000000000004|-|-|-|system|05-03 08:00",
		"5|deposit|5000|wechatpay|BK000000000005|4200000005|-|-|wechatpay|05-01 06:01",
		"6|deposit|5000|wechatpay|BK000000000006|4200000006|-|-|wechatpay|05-01 07:01",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ledger after the migration:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// From here on the store writes the ledger: the refund still processing
	// succeeds.
	if ok, err := db.SetRefundState(ctx, 5, booking.RefundSucceeded, nil, "5030000005", booking.ActorWeChat, "退款通知 SUCCESS"); !ok || err != nil {
		t.Fatalf("refund 5: %v %v", ok, err)
	}
	led, err := db.BookingLedger(ctx, 5)
	if err != nil || len(led) != 2 || led[1].Kind != booking.MoneyRefund || led[1].RefundID != "5030000005" || led[1].AmountFen != 5000 {
		t.Errorf("booking 5's ledger after its refund: %+v %v", led, err)
	}
}
