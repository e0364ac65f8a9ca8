package mysql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// TestBookableSQLMatchesTheDomain evaluates the store's SQL spelling of
// "open for booking" and "bookable" on slots of every kind and compares each
// answer with booking.Slot's Go definition at the database's clock.
func TestBookableSQLMatchesTheDomain(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	window := db.Policy.BookingWindowDays
	starts := []time.Duration{-2 * time.Hour, -time.Minute, time.Minute, 2 * time.Hour,
		time.Duration(window)*24*time.Hour - time.Hour, time.Duration(window)*24*time.Hour + time.Hour}
	var ids []int64
	for _, in := range starts {
		for _, full := range []bool{false, true} {
			for _, open := range []bool{true, false} {
				// Distinct starts: the schedule keeps one slot per start.
				id := mysqltest.AddSlot(t, db, in+time.Duration(len(ids))*time.Second, 2, 5000)
				if full {
					if _, err := db.SQL().Exec(`UPDATE t_slot SET booked = capacity WHERE slot_id = ?`, id); err != nil {
						t.Fatal(err)
					}
				}
				if !open {
					if _, err := db.SQL().Exec(`UPDATE t_slot SET is_open = 0 WHERE slot_id = ?`, id); err != nil {
						t.Fatal(err)
					}
				}
				ids = append(ids, id)
			}
		}
	}
	rows, err := db.SQL().Query(`SELECT slot_id, start_at, end_at, capacity, booked, is_open, `+
		mysql.OpenForBookingExprForTest+`, `+mysql.BookableExprForTest+`, `+mysql.WalkInOpenExprForTest+`, UTC_TIMESTAMP(6) FROM t_slot`, window, window, window)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s booking.Slot
		var sqlOpen, sqlBookable, sqlWalkIn bool
		var now time.Time
		if err := rows.Scan(&s.ID, &s.StartAt, &s.EndAt, &s.Capacity, &s.Booked, &s.Open, &sqlOpen, &sqlBookable, &sqlWalkIn, &now); err != nil {
			t.Fatal(err)
		}
		if got := s.OpenForWalkIn(now, window); got != sqlWalkIn {
			t.Errorf("slot %d (start %s, end %s, now %s, open %v): Go OpenForWalkIn %v, SQL %v", s.ID, s.StartAt, s.EndAt, now, s.Open, got, sqlWalkIn)
		}
		if got := s.OpenForBooking(now, window); got != sqlOpen {
			t.Errorf("slot %d (start %s, now %s, open %v): Go OpenForBooking %v, SQL %v", s.ID, s.StartAt, now, s.Open, got, sqlOpen)
		}
		if got := s.Bookable(now, window); got != sqlBookable {
			t.Errorf("slot %d (start %s, booked %d/%d, open %v): Go Bookable %v, SQL %v", s.ID, s.StartAt, s.Booked, s.Capacity, s.Open, got, sqlBookable)
		}
		n++
	}
	if n != len(ids) {
		t.Fatalf("compared %d slots, made %d", n, len(ids))
	}
}

// TestReserveProcedureTakesSeatsOnlyWhenBookable: the stored procedure that
// takes the seat spells "bookable" exactly as the store does (the Go constant
// with its parameter named), and called directly, past the pre-read, as a
// request that lost a race would reach it, it takes no seat of a slot that is
// closed, started, outside the window or full, and writes nothing.
func TestReserveProcedureTakesSeatsOnlyWhenBookable(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	var body string
	if err := db.SQL().QueryRow(`SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'salon_reserve'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	if want := "CALL salon_take_seat(v_book_id, p_slot_id, p_rule, p_window_days)"; !strings.Contains(body, want) {
		t.Errorf("salon_reserve does not take the seat by %s", want)
	}

	closed := mysqltest.AddSlot(t, db, 24*time.Hour, 3, 5000)
	started := mysqltest.AddSlot(t, db, -time.Minute, 3, 5000)
	tooFar := mysqltest.AddSlot(t, db, time.Duration(db.Policy.BookingWindowDays+1)*24*time.Hour, 3, 5000)
	full := mysqltest.AddSlot(t, db, 25*time.Hour, 1, 5000)
	free := mysqltest.AddSlot(t, db, 26*time.Hour, 1, 5000)
	if _, err := db.SQL().Exec(`UPDATE t_slot SET is_open = 0 WHERE slot_id = ?`, closed); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-first", SlotID: full}); err != nil {
		t.Fatal(err)
	}
	call := func(slot int64, openid string) (id *int64, isFull bool) {
		t.Helper()
		if err := db.SQL().QueryRow(mysql.ReserveSQLForTest, slot, db.Policy.BookingWindowDays, openid, booking.StatusPending, 5000, nil,
			time.Now().UTC().Add(time.Hour), time.Now().UTC(), booking.EventReserve, booking.ActorCustomer, "hold", booking.SeatIfOpenForBooking).Scan(&id, &isFull); err != nil {
			t.Fatal(err)
		}
		return id, isFull
	}
	for _, tc := range []struct {
		name string
		slot int64
		full bool
	}{{"closed", closed, false}, {"started", started, false}, {"outside the window", tooFar, false}, {"full", full, true}} {
		if id, isFull := call(tc.slot, "o-"+tc.name); id != nil || isFull != tc.full {
			t.Errorf("%s slot: booking %v, full %v; want none, full %v", tc.name, id, isFull, tc.full)
		}
	}
	var bookings, audits int
	db.SQL().QueryRow(`SELECT (SELECT COUNT(*) FROM t_booking), (SELECT COUNT(*) FROM t_audit WHERE book_id IS NOT NULL)`).Scan(&bookings, &audits)
	if bookings != 1 || audits != 1 {
		t.Fatalf("refused calls wrote: %d bookings and %d audit records, want the first customer's 1 and 1", bookings, audits)
	}
	id, _ := call(free, "o-free")
	if id == nil {
		t.Fatal("a bookable slot gave no seat")
	}
	var tradeNo string
	db.SQL().QueryRow(`SELECT out_trade_no FROM t_booking WHERE book_id = ?`, *id).Scan(&tradeNo)
	if tradeNo != booking.OutTradeNo(*id) {
		t.Errorf("order number %q, want %q", tradeNo, booking.OutTradeNo(*id))
	}
	mysqltest.CheckInvariant(t, db)
}

// TestStatusListsMatchTheDomain checks the schema against booking's lists: the
// generated column behind "one unfinished booking per customer" is set exactly
// for booking.UnfinishedStatuses, and the seat-holding SQL is booking.SeatHolding.
func TestStatusListsMatchTheDomain(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 50, 5000)
	for st := booking.Status(0); st <= 5; st++ {
		openid := fmt.Sprintf("o-status-%d", st)
		if _, err := db.SQL().Exec(`INSERT INTO t_booking (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at, starts_at)
			SELECT slot_id, ?, ?, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), start_at FROM t_slot WHERE slot_id = ?`, openid, st, slot); err != nil {
			t.Fatal(err)
		}
		var active *string
		if err := db.SQL().QueryRow(`SELECT active_openid FROM t_booking WHERE openid = ?`, openid).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if (active != nil) != st.Unfinished() {
			t.Errorf("status %d: active_openid set=%v, booking says unfinished=%v", st, active != nil, st.Unfinished())
		}
	}
	want := ""
	for i, s := range booking.SeatHolding {
		if i > 0 {
			want += ", "
		}
		want += fmt.Sprint(int(s))
	}
	if mysql.SeatHoldingSQLForTest != want {
		t.Errorf("seat-holding SQL %q, booking.SeatHolding %q", mysql.SeatHoldingSQLForTest, want)
	}
}

// TestUpdateSlotIsAudited: the salon's slot change is one transaction with its
// audit record; a refused change writes nothing.
func TestUpdateSlotIsAudited(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 3, 5000)
	five, no := 5, false
	v, err := db.UpdateSlot(ctx, slot, booking.SlotUpdate{Capacity: &five, Open: &no}, booking.ActorSalon)
	if err != nil {
		t.Fatal(err)
	}
	if v.Capacity != 5 || v.Open || v.Bookable {
		t.Fatalf("after update: %+v", v)
	}
	var event, actor, reason string
	if err := db.SQL().QueryRow(`SELECT event, actor, reason FROM t_audit WHERE slot_id = ? AND book_id IS NULL`, slot).
		Scan(&event, &actor, &reason); err != nil {
		t.Fatal(err)
	}
	if event != booking.EventSlotChange || actor != booking.ActorSalon || reason != "容量 3 -> 5，停止预约" {
		t.Fatalf("audit %q %q %q", event, actor, reason)
	}
	// The same change again changes nothing and records nothing.
	if _, err := db.UpdateSlot(ctx, slot, booking.SlotUpdate{Capacity: &five, Open: &no}, booking.ActorSalon); err != nil {
		t.Fatal(err)
	}
	var n int
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE slot_id = ?`, slot).Scan(&n)
	if n != 1 {
		t.Fatalf("%d audit records, want 1", n)
	}
}

// TestTakeSeatFollowsTheSeatRules: the one seat-taking function takes a seat
// exactly when the domain's rule allows it (booking.SeatRule.Allows), for every
// rule and slots open, closed, started, ended, beyond the window, full and free;
// a seat taken records the booking's t_booking_slot row, and returning it
// gives the seat back and deletes the row. The procedure spells the rules with
// the store's read conditions (the parameter named).
func TestTakeSeatFollowsTheSeatRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mysqltest.New(t)
	window := db.Policy.BookingWindowDays
	var body string
	if err := db.SQL().QueryRow(`SELECT ROUTINE_DEFINITION FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'salon_take_seat'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	for rule, expr := range map[int]string{1: mysql.OpenForBookingExprForTest, 2: mysql.WalkInOpenExprForTest} {
		if want := fmt.Sprintf("WHEN %d THEN %s", rule, strings.ReplaceAll(expr, "?", "p_window_days")); !strings.Contains(body, want) {
			t.Errorf("salon_take_seat does not spell rule %d as the store reads it: %s", rule, want)
		}
	}
	starts := []time.Duration{-2 * time.Hour, -10 * time.Minute, time.Minute, 2 * time.Hour,
		time.Duration(window)*24*time.Hour - time.Hour, time.Duration(window)*24*time.Hour + time.Hour}
	var ids []int64
	for _, in := range starts {
		for _, full := range []bool{false, true} {
			for _, open := range []bool{true, false} {
				id := mysqltest.AddSlot(t, db, in+time.Duration(len(ids))*time.Second, 2, 5000)
				if full {
					if _, err := db.SQL().Exec(`UPDATE t_slot SET booked = capacity WHERE slot_id = ?`, id); err != nil {
						t.Fatal(err)
					}
				}
				if !open {
					if _, err := db.SQL().Exec(`UPDATE t_slot SET is_open = 0 WHERE slot_id = ?`, id); err != nil {
						t.Fatal(err)
					}
				}
				ids = append(ids, id)
			}
		}
	}
	allowed := 0
	for _, rule := range []booking.SeatRule{booking.SeatIfOpenForBooking, booking.SeatIfOpenForWalkIn, booking.SeatIfNotEnded, booking.SeatIfFree, booking.SeatNoRule} {
		for _, id := range ids {
			tx, err := db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var s booking.Slot
			var now time.Time
			if err := tx.QueryRowContext(ctx, `SELECT slot_id, start_at, end_at, capacity, booked, is_open, UTC_TIMESTAMP(6) FROM t_slot WHERE slot_id = ? FOR UPDATE`, id).
				Scan(&s.ID, &s.StartAt, &s.EndAt, &s.Capacity, &s.Booked, &s.Open, &now); err != nil {
				t.Fatal(err)
			}
			want := rule.Allows(s, now, window)
			taken, err := mysql.TakeSeatsForTest(ctx, tx, 1000+id, []int64{id}, rule, window)
			if rule == booking.SeatNoRule {
				if err == nil {
					t.Errorf("slot %d: a seat taken without a rule", id)
				}
				tx.Rollback()
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if taken != want {
				t.Errorf("rule %d, slot %d (start %s, end %s, now %s, booked %d/%d, open %v): taken %v, the domain allows %v",
					rule, id, s.StartAt, s.EndAt, now, s.Booked, s.Capacity, s.Open, taken, want)
			}
			var booked, rows int
			tx.QueryRowContext(ctx, `SELECT booked, (SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ? AND slot_id = ?) FROM t_slot WHERE slot_id = ?`, 1000+id, id, id).Scan(&booked, &rows)
			if taken && (booked != s.Booked+1 || rows != 1) || !taken && (booked != s.Booked || rows != 0) {
				t.Errorf("rule %d, slot %d: taken %v, booked %d -> %d, %d rows of the booking", rule, id, taken, s.Booked, booked, rows)
			}
			if taken {
				allowed++
				if err := mysql.ReturnSeatsForTest(ctx, tx, 1000+id, id); err != nil {
					t.Fatal(err)
				}
				tx.QueryRowContext(ctx, `SELECT booked, (SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ?) FROM t_slot WHERE slot_id = ?`, 1000+id, id).Scan(&booked, &rows)
				if booked != s.Booked || rows != 0 {
					t.Errorf("rule %d, slot %d: returned, booked %d (was %d), %d rows left", rule, id, booked, s.Booked, rows)
				}
			}
			tx.Rollback()
		}
	}
	if allowed == 0 {
		t.Fatal("no rule allowed any slot: the grid tests nothing")
	}
}
