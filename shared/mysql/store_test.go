package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

var ctx = context.Background()

// race runs n functions released together, so they hit the database at once.
func race(n int, f func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer done.Done()
			start.Wait()
			f(i)
		}(i)
	}
	start.Done()
	done.Wait()
}

// burst sends n reserves from n different customers at one slot and counts the
// answers by error code ("" for success).
func burst(t *testing.T, db *mysql.DB, slotID int64, n int, prefix string) map[string]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[string]int{}
	race(n, func(i int) {
		_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: fmt.Sprintf("%s-%d", prefix, i), SlotID: slotID})
		if err != nil && booking.ErrorCode(err) == booking.EINTERNAL {
			t.Errorf("reserve: %v", err)
		}
		mu.Lock()
		codes[booking.ErrorCode(err)]++
		mu.Unlock()
	})
	return codes
}

func countRows(t *testing.T, db *mysql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLastSeatGoesToExactlyOneOf130(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for round := 0; round < 10; round++ {
		slot := mysqltest.AddSlot(t, db, time.Duration(24+round)*time.Hour, 1, 5000)
		codes := burst(t, db, slot, 130, fmt.Sprintf("r%d", round))
		if codes[""] != 1 || codes[booking.ESOLDOUT] != 129 {
			t.Fatalf("round %d: answers %v, want 1 success and 129 SOLD_OUT", round, codes)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

func TestFiveHundredOnTenSeats(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 10, 5000)
	codes := burst(t, db, slot, 500, "c")
	if codes[""] != 10 || codes[booking.ESOLDOUT] != 490 {
		t.Fatalf("answers %v, want 10 successes and 490 SOLD_OUT", codes)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestOneCustomerTwentySlotsAtOnce(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	var slots []int64
	for i := 0; i < 20; i++ {
		slots = append(slots, mysqltest.AddSlot(t, db, time.Duration(24+i)*time.Hour, 3, 5000))
	}
	var ok, active atomic.Int32
	race(20, func(i int) {
		_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "alice", SlotID: slots[i]})
		switch booking.ErrorCode(err) {
		case "":
			ok.Add(1)
		case booking.EACTIVEBOOKINGEXISTS:
			active.Add(1)
		default:
			t.Errorf("unexpected: %v", err)
		}
	})
	if ok.Load() != 1 || active.Load() != 19 {
		t.Fatalf("ok=%d active=%d, want 1 and 19", ok.Load(), active.Load())
	}
	mysqltest.CheckInvariant(t, db)
}

// A request that loses the last seat learns it from the seat-taking statement,
// before it writes anything: of 130, one booking and one audit record exist.
func TestLosersOfTheLastSeatWriteNothing(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 1, 5000)
	codes := burst(t, db, slot, 130, "loser")
	if codes[""] != 1 || codes[booking.ESOLDOUT] != 129 {
		t.Fatalf("answers %v, want 1 success and 129 SOLD_OUT", codes)
	}
	if b, a := countRows(t, db, "t_booking"), countRows(t, db, "t_audit"); b != 1 || a != 1 {
		t.Fatalf("%d bookings and %d audit records, want 1 and 1", b, a)
	}
	mysqltest.CheckInvariant(t, db)
}

// When the customer's own concurrent request wins, the reserve's batch stops at
// the booking's unique key with its transaction open; it must be rolled back on
// that connection, so none goes back to the pool inside a transaction.
func TestACustomerRacingThemselvesLeavesNoTransactionOpen(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	const conns = 8
	db.SQL().SetMaxOpenConns(conns)
	var slots []int64
	for i := 0; i < 4*conns; i++ {
		slots = append(slots, mysqltest.AddSlot(t, db, time.Duration(24+i)*time.Hour, 2, 5000))
	}
	var ok, active atomic.Int32
	race(len(slots), func(i int) {
		_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "dana", SlotID: slots[i]})
		switch booking.ErrorCode(err) {
		case "":
			ok.Add(1)
		case booking.EACTIVEBOOKINGEXISTS:
			active.Add(1)
		default:
			t.Errorf("unexpected: %v", err)
		}
	})
	if ok.Load() != 1 || int(active.Load()) != len(slots)-1 {
		t.Fatalf("ok=%d active=%d, want 1 and %d", ok.Load(), active.Load(), len(slots)-1)
	}
	mysqltest.CheckInvariant(t, db)
	// Hold every connection of the pool at once and ask each.
	held := make([]*sql.Conn, 0, conns)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range conns {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var inTx int
		if err := c.QueryRowContext(ctx, `SELECT @@in_transaction`).Scan(&inTx); err != nil {
			t.Fatal(err)
		}
		if inTx != 0 {
			t.Fatal("a pooled connection is inside a transaction")
		}
	}
}

func TestIdempotencyKeyTwentyAtOnce(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 3, 5000)
	ids := make([]int64, 20)
	var created atomic.Int32
	race(20, func(i int) {
		b, c, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "bob", SlotID: slot, IdemKey: "key-1"})
		if err != nil {
			t.Errorf("reserve %d: %v", i, err)
			return
		}
		if c {
			created.Add(1)
		}
		ids[i] = b.ID
	})
	for i, id := range ids {
		if id != ids[0] || id == 0 {
			t.Fatalf("answer %d names booking %d, answer 0 names %d", i, id, ids[0])
		}
	}
	if created.Load() != 1 || countRows(t, db, "t_booking") != 1 {
		t.Fatalf("created=%d bookings=%d, want 1 and 1", created.Load(), countRows(t, db, "t_booking"))
	}
	// The same key for another slot is a client bug, not a second booking.
	other := mysqltest.AddSlot(t, db, 25*time.Hour, 3, 5000)
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "bob", SlotID: other, IdemKey: "key-1"}); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("same key, other slot: %v, want INVALID_STATE", err)
	}
	// Another customer may use the same key string.
	if _, c, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "carol", SlotID: slot, IdemKey: "key-1"}); err != nil || !c {
		t.Fatalf("other customer, same key: created=%v err=%v", c, err)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestOneChangeWinsOfCancelExpireConfirm(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for round := 0; round < 20; round++ {
		slot := mysqltest.AddSlot(t, db, time.Duration(24+round)*time.Hour, 2, 5000)
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: fmt.Sprintf("dave-%d", round), SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		changes := []booking.Change{
			{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusCancelled, Event: booking.EventCancel, Actor: "customer"},
			{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusExpired, Event: booking.EventRelease, Actor: "timer"},
			{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed, Event: booking.EventConfirm, Actor: "wechatpay",
				Payment: &booking.Payment{TransactionID: "4200", AmountFen: 5000, PaidAt: time.Now()}},
		}
		var wins atomic.Int32
		race(len(changes), func(i int) {
			_, err := db.ChangeStatus(ctx, changes[i])
			switch booking.ErrorCode(err) {
			case "":
				wins.Add(1)
			case booking.EINVALIDSTATE:
			default:
				t.Errorf("change %d: %v", i, err)
			}
		})
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d changes won, want 1", round, wins.Load())
		}
		final, _ := db.FindBooking(ctx, b.ID)
		trail, err := db.BookingAudit(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(trail) != 2 || trail[0].Event != booking.EventReserve || trail[1].ToStatus != int(final.Status) {
			t.Fatalf("round %d: audit %+v does not show exactly one change to %s", round, trail, final.Status)
		}
		s, _ := db.FindSlot(ctx, slot)
		if want := map[bool]int{true: 1, false: 0}[final.Status.HoldsSeat()]; s.Booked != want {
			t.Fatalf("round %d: final %s, booked %d", round, final.Status, s.Booked)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

func TestCancelAndRebookSameSlotRepeatedly(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 1, 5000)
	for i := 0; i < 3; i++ {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "erin", SlotID: slot})
		if err != nil {
			t.Fatalf("booking %d: %v", i, err)
		}
		if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusCancelled, Event: booking.EventCancel, Actor: "customer"}); err != nil {
			t.Fatalf("cancel %d: %v", i, err)
		}
	}
	if n := countRows(t, db, "t_booking"); n != 3 {
		t.Fatalf("%d bookings, want 3", n)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	closed := mysqltest.AddSlot(t, db, 24*time.Hour, 3, 5000)
	no := false
	if _, err := db.UpdateSlot(ctx, closed, booking.SlotUpdate{Open: &no}, booking.ActorSalon); err != nil {
		t.Fatal(err)
	}
	started := mysqltest.AddSlot(t, db, -time.Minute, 3, 5000)
	tooFar := mysqltest.AddSlot(t, db, 15*24*time.Hour, 3, 5000)
	full := mysqltest.AddSlot(t, db, 25*time.Hour, 1, 5000)
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "first", SlotID: full}); err != nil {
		t.Fatal(err)
	}
	bookings, audits := countRows(t, db, "t_booking"), countRows(t, db, "t_audit")

	for _, tc := range []struct {
		slot int64
		want string
	}{
		{999999, booking.ENOTFOUND},
		{closed, booking.ESLOTNOTBOOKABLE},
		{started, booking.ESLOTNOTBOOKABLE},
		{tooFar, booking.ESLOTNOTBOOKABLE},
		{full, booking.ESOLDOUT},
	} {
		if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "frank", SlotID: tc.slot}); !booking.IsCode(err, tc.want) {
			t.Errorf("slot %d: %v, want %s", tc.slot, err, tc.want)
		}
	}
	one := 0
	if _, err := db.UpdateSlot(ctx, full, booking.SlotUpdate{Capacity: &one}, booking.ActorSalon); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Errorf("capacity below booked: %v, want INVALID_STATE", err)
	}
	if _, err := db.UpdateSlot(ctx, 999999, booking.SlotUpdate{Capacity: &one}, booking.ActorSalon); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Errorf("unknown slot: %v, want NOT_FOUND", err)
	}
	if b, a := countRows(t, db, "t_booking"), countRows(t, db, "t_audit"); b != bookings || a != audits {
		t.Fatalf("refusals wrote rows: bookings %d->%d audit %d->%d", bookings, b, audits, a)
	}
	s, _ := db.FindSlot(ctx, full)
	if s.Capacity != 1 {
		t.Fatalf("capacity changed to %d", s.Capacity)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestCapacityChangeRacingReservations(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 10, 5000)
	race(41, func(i int) {
		if i == 40 {
			c := 5
			db.UpdateSlot(ctx, slot, booking.SlotUpdate{Capacity: &c}, booking.ActorSalon)
			return
		}
		db.Reserve(ctx, booking.ReserveRequest{OpenID: fmt.Sprintf("g%d", i), SlotID: slot})
	})
	mysqltest.CheckInvariant(t, db)
}

func TestFreeSlotConfirmsAtOnce(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 2, 0)
	b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "gina", SlotID: slot})
	if err != nil || b.Status != booking.StatusConfirmed {
		t.Fatalf("free slot: %+v %v", b, err)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestLatePaymentTakesASeatBackOnlyIfFree(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 1, 5000)
	expire := func(openid string) *booking.Booking {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusExpired, Event: booking.EventRelease, Actor: "timer"}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	late := booking.Change{From: booking.StatusExpired, To: booking.StatusConfirmed, Event: booking.EventLatePayment, Actor: "wechatpay",
		Payment: &booking.Payment{TransactionID: "42", AmountFen: 5000, PaidAt: time.Now()}}

	a := expire("hana")
	late.BookingID = a.ID
	if b, err := db.ChangeStatus(ctx, late); err != nil || b.Status != booking.StatusConfirmed || b.TransactionID != "42" {
		t.Fatalf("late payment with a free seat: %+v %v", b, err)
	}
	// The seat is taken now; another expired booking cannot come back.
	other := mysqltest.AddSlot(t, db, 48*time.Hour, 1, 5000)
	_ = other
	if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: a.ID, From: booking.StatusConfirmed, To: booking.StatusCancelled, Event: booking.EventCancel, Actor: "salon"}); err != nil {
		t.Fatal(err)
	}
	b := expire("ivan")
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "jack", SlotID: slot}); err != nil {
		t.Fatal(err)
	}
	late.BookingID = b.ID
	if _, err := db.ChangeStatus(ctx, late); !booking.IsCode(err, booking.ESOLDOUT) {
		t.Fatalf("late payment on a full slot: %v, want SOLD_OUT", err)
	}
	// A customer who meanwhile booked elsewhere is not given a second seat.
	slot2 := mysqltest.AddSlot(t, db, 72*time.Hour, 5, 5000)
	c, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "kate", SlotID: slot2})
	if err != nil {
		t.Fatal(err)
	}
	db.ChangeStatus(ctx, booking.Change{BookingID: c.ID, From: booking.StatusPending, To: booking.StatusExpired, Event: booking.EventRelease, Actor: "timer"})
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "kate", SlotID: slot2}); err != nil {
		t.Fatal(err)
	}
	late.BookingID = c.ID
	if _, err := db.ChangeStatus(ctx, late); !booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		t.Fatalf("late payment while holding another booking: %v, want ACTIVE_BOOKING_EXISTS", err)
	}
	started, err := db.StartRefund(ctx, c.ID, booking.StatusExpired, *late.Payment, "wechatpay", "no seat")
	if err != nil || !started {
		t.Fatalf("start refund: %v %v", started, err)
	}
	if again, _ := db.StartRefund(ctx, c.ID, booking.StatusExpired, *late.Payment, "wechatpay", "dup"); again {
		t.Fatal("a second refund was started")
	}
	now := time.Now()
	if ok, _ := db.SetRefundState(ctx, c.ID, booking.RefundSucceeded, &now, "", "wechatpay", "done"); !ok {
		t.Fatal("refund success not recorded")
	}
	if ok, _ := db.SetRefundState(ctx, c.ID, booking.RefundFailed, nil, "", "wechatpay", "late"); ok {
		t.Fatal("a final refund state was left")
	}
	got, _ := db.FindBooking(ctx, c.ID)
	if got.Refund == nil || got.Refund.Status != booking.RefundSucceeded || got.Refund.AmountFen != 5000 || got.Refund.RefundedAt == nil {
		t.Fatalf("refund %+v", got.Refund)
	}
	mysqltest.CheckInvariant(t, db)
}

func TestClaimExpiredNeverHandsOneRowToTwoRuns(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 50, 5000)
	for i := 0; i < 40; i++ {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: fmt.Sprintf("l%d", i), SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		if i < 30 {
			mysqltest.ExpireHold(t, db, b.ID)
		}
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	race(5, func(int) {
		for {
			got, err := db.ClaimExpired(ctx, 4, time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if len(got) == 0 {
				return
			}
			mu.Lock()
			for _, b := range got {
				seen[b.ID]++
			}
			mu.Unlock()
		}
	})
	if len(seen) != 30 {
		t.Fatalf("claimed %d distinct bookings, want the 30 expired", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("booking %d claimed %d times", id, n)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	race(4, func(int) {
		db, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 2})
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if err := db.Migrate(ctx); err != nil {
			t.Error(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Error(err)
		}
	})
	db, _ := mysql.Open(dsn, mysql.Options{})
	defer db.Close()
	if n := countRows(t, db, "schema_migrations"); n < 1 {
		t.Fatalf("%d migrations recorded", n)
	}
}

func TestFindDriftReportsAndNeverRepairs(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 5, 5000)
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "m", SlotID: slot}); err != nil {
		t.Fatal(err)
	}
	if d, err := db.FindDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift on a clean store: %v %v", d, err)
	}
	db.SQL().Exec(`UPDATE t_slot SET booked = 3 WHERE slot_id = ?`, slot) // the planted bug
	d, err := db.FindDrift(ctx)
	if err != nil || len(d) != 1 || d[0].SlotID != slot || d[0].Booked != 3 || d[0].Holding != 1 {
		t.Fatalf("drift %+v %v", d, err)
	}
	s, _ := db.FindSlot(ctx, slot)
	if s.Booked != 3 {
		t.Fatal("drift was silently repaired")
	}
}

// TestFindDriftCountsTheSeatRows: the counter is compared with the seats the
// bookings hold (t_booking_slot), not with the bookings: a booking whose seat row
// is lost is a drift.
func TestFindDriftCountsTheSeatRows(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 5, 5000)
	b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "m", SlotID: slot})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`DELETE FROM t_booking_slot WHERE book_id = ?`, b.ID); err != nil { // the planted bug
		t.Fatal(err)
	}
	d, err := db.FindDrift(ctx)
	if err != nil || len(d) != 1 || d[0].SlotID != slot || d[0].Booked != 1 || d[0].Holding != 0 {
		t.Fatalf("drift %+v %v", d, err)
	}
}

func TestCreateSlotsTwiceIsHarmless(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	start := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	slots := []booking.ScheduledSlot{{StartAt: start, EndAt: start.Add(time.Hour), Capacity: 3, PriceFen: 100}, {StartAt: start.Add(time.Hour), EndAt: start.Add(2 * time.Hour), Capacity: 3, PriceFen: 100}}
	if c, s, err := db.CreateSlots(ctx, slots); err != nil || c != 2 || s != 0 {
		t.Fatalf("first: %d %d %v", c, s, err)
	}
	if c, s, err := db.CreateSlots(ctx, slots); err != nil || c != 0 || s != 2 {
		t.Fatalf("second: %d %d %v", c, s, err)
	}
}
