package mysql_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

func move(db *mysql.DB, id, to int64, actor string) (*booking.Booking, error) {
	return db.Reschedule(ctx, booking.Change{BookingID: id, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: actor, Reason: "改约", ToSlotID: to})
}

// confirmed reserves a seat of a free slot, which confirms it at once.
func confirmed(tb testing.TB, db *mysql.DB, openid string, slot int64) int64 {
	tb.Helper()
	b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slot})
	if err != nil || b.Status != booking.StatusConfirmed {
		tb.Fatalf("reserve %s in %d: %+v %v", openid, slot, b, err)
	}
	return b.ID
}

func booked(tb testing.TB, db *mysql.DB, slot int64) int {
	tb.Helper()
	s, err := db.FindSlot(ctx, slot)
	if err != nil {
		tb.Fatal(err)
	}
	return s.Booked
}

// TestRescheduleInOneTransaction: a move takes the new slot's seat, returns
// the old one's and hands it to the first in line, counts the customer's move,
// clears the check-in code, makes the reminder due again, drops her place in
// the new slot's line, and writes one audit record naming both slots; a
// refused move changes nothing.
func TestRescheduleInOneTransaction(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	a := mysqltest.AddSlot(t, db, 26*time.Hour, 1, 0)
	bSlot := mysqltest.AddSlot(t, db, 50*time.Hour, 1, 0)
	id := confirmed(t, db, "mover", a)
	other := confirmed(t, db, "other", bSlot)
	if _, err := db.JoinWaitlist(ctx, "waiter", a, booking.MaxWaitlistEntries); err != nil {
		t.Fatal(err)
	}
	if _, err := db.JoinWaitlist(ctx, "mover", bSlot, booking.MaxWaitlistEntries); err != nil {
		t.Fatal(err)
	}
	if read, err := db.FindBooking(ctx, id); err != nil {
		t.Fatal(err)
	} else if c, err := db.CheckinCode(ctx, read, "2026-12-02"); err != nil || c == "" {
		t.Fatalf("check-in code: %q %v", c, err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
		VALUES (?, 'reminder', 'mover', 'sent', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, id); err != nil {
		t.Fatal(err)
	}

	// B is full: SOLD_OUT, nothing changed.
	if _, err := move(db, id, bSlot, booking.ActorCustomer); !booking.IsCode(err, booking.ESOLDOUT) {
		t.Fatalf("move to a full slot: %v", err)
	}
	if got, _ := db.FindBooking(ctx, id); got.SlotID != a || got.Reschedules != 0 || booked(t, db, a) != 1 {
		t.Fatalf("a refused move changed the booking: %+v", got)
	}
	if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: other, From: booking.StatusConfirmed, To: booking.StatusCancelled,
		Event: booking.EventCancel, Actor: booking.ActorCustomer, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	// B's freed seat is not offered to the mover, first in B's line: she holds
	// an unfinished booking, so she is passed over and B has a free seat.
	got, err := move(db, id, bSlot, booking.ActorCustomer)
	if err != nil {
		t.Fatal(err)
	}
	if got.SlotID != bSlot || got.Status != booking.StatusConfirmed || got.Reschedules != 1 || booked(t, db, bSlot) != 1 {
		t.Fatalf("moved: %+v, B booked %d", got, booked(t, db, bSlot))
	}
	// A's seat went to the waiter in the same transaction.
	var offer int64
	if err := db.SQL().QueryRow(`SELECT book_id FROM t_booking WHERE openid = 'waiter' AND slot_id = ? AND status = 0`, a).Scan(&offer); err != nil {
		t.Fatalf("no offer to the waiter: %v", err)
	}
	if booked(t, db, a) != 1 {
		t.Fatalf("A booked %d after the offer", booked(t, db, a))
	}
	var code, entries int
	var reminder string
	var dueLater bool
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE book_id = ? AND (checkin_day IS NOT NULL OR checkin_code IS NOT NULL)`, id).Scan(&code)
	db.SQL().QueryRow(`SELECT n.status, n.next_at BETWEEN s.start_at - INTERVAL 3 HOUR - INTERVAL 1 SECOND AND s.start_at - INTERVAL 3 HOUR + INTERVAL 1 SECOND
		FROM t_notification n JOIN t_slot s ON s.slot_id = ? WHERE n.book_id = ? AND n.kind = 'reminder'`, bSlot, id).Scan(&reminder, &dueLater)
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_waitlist WHERE openid = 'mover'`).Scan(&entries)
	if code != 0 || reminder != "pending" || !dueLater || entries != 0 {
		t.Fatalf("after the move: check-in code %d, the sent reminder %s (due REMIND_BEFORE before the new start: %v), waitlist entries %d",
			code, reminder, dueLater, entries)
	}
	recs, err := db.BookingAudit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var moves []booking.AuditRecord
	for _, r := range recs {
		if r.Event == booking.EventReschedule {
			moves = append(moves, r)
		}
	}
	if len(moves) != 1 || moves[0].SlotID != bSlot || moves[0].FromStatus != 1 || moves[0].ToStatus != 1 ||
		!strings.Contains(moves[0].Reason, itoa(a)) || !strings.Contains(moves[0].Reason, itoa(bSlot)) {
		t.Fatalf("audit of the move: %+v", moves)
	}
	// A second move of the customer's: over the limit. The salon's is not counted.
	if _, err := move(db, id, mysqltest.AddSlot(t, db, 51*time.Hour, 1, 0), booking.ActorCustomer); !booking.IsCode(err, booking.ERESCHEDULELIMIT) {
		t.Fatalf("second move: %v", err)
	}
	soon := mysqltest.AddSlot(t, db, 2*time.Hour, 1, 8000)
	got, err = move(db, id, soon, booking.ActorSalon)
	if err != nil || got.SlotID != soon || got.Reschedules != 1 || got.AmountFen != 0 {
		t.Fatalf("the salon's move: %+v %v", got, err)
	}
	// Within REMIND_BEFORE: the reminder is written at once, and the salon's message.
	var kinds []string
	rows, _ := db.SQL().Query(`SELECT kind FROM t_notification WHERE book_id = ? AND status = 'pending' ORDER BY kind`, id)
	for rows.Next() {
		var k string
		rows.Scan(&k)
		kinds = append(kinds, k)
	}
	rows.Close()
	if strings.Join(kinds, ",") != "reminder,rescheduled" {
		t.Fatalf("outbox after the salon's move into REMIND_BEFORE: %v", kinds)
	}
	mysqltest.CheckInvariant(t, db)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// atOnce runs fns at the same moment, each in its own goroutine, and returns
// their errors.
func atOnce(fns ...func() error) []error {
	errs := make([]error, len(fns))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, fn := range fns {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = fn()
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// TestRescheduleRacesAReserveForTheLastSeat: a move onto B's last seat and a
// reserve of it, at once, many times: exactly one wins each time, the loser
// changed nothing (SOLD_OUT).
func TestRescheduleRacesAReserveForTheLastSeat(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for i := 0; i < 20; i++ {
		a := mysqltest.AddSlot(t, db, 26*time.Hour+time.Duration(i)*time.Minute, 1, 0)
		b := mysqltest.AddSlot(t, db, 50*time.Hour+time.Duration(i)*time.Minute, 1, 0)
		id := confirmed(t, db, "m-"+itoa(int64(i)), a)
		errs := atOnce(
			func() error { _, err := move(db, id, b, booking.ActorCustomer); return err },
			func() error {
				_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "r-" + itoa(int64(i)), SlotID: b})
				return err
			})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !booking.IsCode(err, booking.ESOLDOUT):
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if won != 1 || booked(t, db, b) != 1 {
			t.Fatalf("round %d: %d won (%v), B booked %d", i, won, errs, booked(t, db, b))
		}
		got, _ := db.FindBooking(ctx, id)
		if (errs[0] == nil) != (got.SlotID == b) || booked(t, db, a) != map[bool]int{true: 0, false: 1}[errs[0] == nil] {
			t.Fatalf("round %d: booking in %d, A booked %d, move err %v", i, got.SlotID, booked(t, db, a), errs[0])
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// TestRescheduleRacesTheCancel: the customer's move and her cancel of the same
// booking at once: exactly one wins (the cancel names the slot it decided on),
// and every seat is where its booking is.
func TestRescheduleRacesTheCancel(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for i := 0; i < 20; i++ {
		a := mysqltest.AddSlot(t, db, 26*time.Hour+time.Duration(i)*time.Minute, 2, 0)
		b := mysqltest.AddSlot(t, db, 50*time.Hour+time.Duration(i)*time.Minute, 2, 0)
		id := confirmed(t, db, "c-"+itoa(int64(i)), a)
		errs := atOnce(
			func() error { _, err := move(db, id, b, booking.ActorCustomer); return err },
			func() error {
				_, err := db.ChangeStatus(ctx, booking.Change{BookingID: id, From: booking.StatusConfirmed, To: booking.StatusCancelled,
					Event: booking.EventCancel, Actor: booking.ActorCustomer, Reason: "test", SlotID: a})
				return err
			})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !booking.IsCode(err, booking.EINVALIDSTATE):
				t.Fatalf("round %d: %v", i, err)
			}
		}
		got, _ := db.FindBooking(ctx, id)
		switch {
		case won != 1:
			t.Fatalf("round %d: %d won: %v", i, won, errs)
		case errs[0] == nil && (got.Status != booking.StatusConfirmed || got.SlotID != b || booked(t, db, a) != 0 || booked(t, db, b) != 1):
			t.Fatalf("round %d: the move won, booking %+v, A %d B %d", i, got, booked(t, db, a), booked(t, db, b))
		case errs[1] == nil && (got.Status != booking.StatusCancelled || got.SlotID != a || booked(t, db, a) != 0 || booked(t, db, b) != 0):
			t.Fatalf("round %d: the cancel won, booking %+v, A %d B %d", i, got, booked(t, db, a), booked(t, db, b))
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// TestRescheduleHandsTheFreedSeatOn: moves out of A's last seat race a
// reserve of it while someone waits for A: the waiter gets the seat in the
// move's own transaction, so the reserve meets a full slot.
func TestRescheduleHandsTheFreedSeatOn(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for i := 0; i < 10; i++ {
		a := mysqltest.AddSlot(t, db, 26*time.Hour+time.Duration(i)*time.Minute, 1, 0)
		b := mysqltest.AddSlot(t, db, 50*time.Hour+time.Duration(i)*time.Minute, 1, 0)
		id := confirmed(t, db, "h-"+itoa(int64(i)), a)
		waiter := "w-" + itoa(int64(i))
		if _, err := db.JoinWaitlist(ctx, waiter, a, booking.MaxWaitlistEntries); err != nil {
			t.Fatal(err)
		}
		errs := atOnce(
			func() error { _, err := move(db, id, b, booking.ActorCustomer); return err },
			func() error {
				_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "x-" + itoa(int64(i)), SlotID: a})
				return err
			})
		if errs[0] != nil || !booking.IsCode(errs[1], booking.ESOLDOUT) {
			t.Fatalf("round %d: move %v, reserve of A %v", i, errs[0], errs[1])
		}
		var status int
		if err := db.SQL().QueryRow(`SELECT status FROM t_booking WHERE openid = ? AND slot_id = ?`, waiter, a).Scan(&status); err != nil || status != int(booking.StatusPending) {
			t.Fatalf("round %d: the waiter's offer: %d %v", i, status, err)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// BenchmarkReschedule times one move beside BenchmarkReserveHotSlot: the
// locked read of the booking, the read of both slots, the booking's update,
// its audit record and outbox rows, the two slot rows, and the look at the old
// slot's line, in one transaction. Each goroutine moves its own booking back
// and forth between two hot slots, as the salon (whose moves are not counted).
func BenchmarkReschedule(b *testing.B) {
	db := mysqltest.New(b)
	slots := [2]int64{mysqltest.AddSlot(b, db, 24*time.Hour, 1<<30, 0), mysqltest.AddSlot(b, db, 48*time.Hour, 1<<30, 0)}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := confirmed(b, db, nextCustomer(), slots[0])
		at := 0
		for pb.Next() {
			at = 1 - at
			if _, err := move(db, id, slots[at], booking.ActorSalon); err != nil {
				b.Error(err)
			}
		}
	})
}
