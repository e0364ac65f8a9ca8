package mysql_test

import (
	"fmt"
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
	window := db.WindowDays
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
	rows, err := db.SQL().Query(`SELECT slot_id, start_at, capacity, booked, is_open, `+
		mysql.OpenForBookingExprForTest+`, `+mysql.BookableExprForTest+`, UTC_TIMESTAMP(6) FROM t_slot`, window, window)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s booking.Slot
		var sqlOpen, sqlBookable bool
		var now time.Time
		if err := rows.Scan(&s.ID, &s.StartAt, &s.Capacity, &s.Booked, &s.Open, &sqlOpen, &sqlBookable, &now); err != nil {
			t.Fatal(err)
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

// TestStatusListsMatchTheDomain checks the schema against booking's lists: the
// generated column behind "one unfinished booking per customer" is set exactly
// for booking.UnfinishedStatuses, and the seat-holding SQL is booking.SeatHolding.
func TestStatusListsMatchTheDomain(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 50, 5000)
	for st := booking.Status(0); st <= 5; st++ {
		openid := fmt.Sprintf("o-status-%d", st)
		if _, err := db.SQL().Exec(`INSERT INTO t_booking (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at)
			VALUES (?, ?, ?, 5000, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, slot, openid, st); err != nil {
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
	if event != booking.EventSlotChange || actor != booking.ActorSalon || reason != "capacity 3 -> 5, closed" {
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
