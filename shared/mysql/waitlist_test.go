package mysql_test

import (
	"fmt"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestOfferRacesTheWaitersOwnReservation: a seat handed to the first in line
// inside a cancel, while that very customer reserves another slot. Each side
// waits for a lock the other holds (the new booking's unique key, the slot row);
// the server breaks the deadlock by rolling one back whole, and the store runs
// it again. The cancel always succeeds, the customer ends with exactly one
// unfinished booking, and the invariant holds.
func TestOfferRacesTheWaitersOwnReservation(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for round := 0; round < 20; round++ {
		full := mysqltest.AddSlot(t, db, 30*time.Hour+time.Duration(round)*time.Minute, 1, 5000)
		other := mysqltest.AddSlot(t, db, 40*time.Hour+time.Duration(round)*time.Minute, 5, 5000)
		holder, waiter := fmt.Sprintf("o-holder-%d", round), fmt.Sprintf("o-waiter-%d", round)
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: holder, SlotID: full})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.JoinWaitlist(ctx, waiter, full, booking.MaxWaitlistEntries); err != nil {
			t.Fatal(err)
		}
		var cancelErr, reserveErr error
		race(2, func(i int) {
			if i == 0 {
				_, cancelErr = db.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusCancelled,
					Event: booking.EventCancel, Actor: booking.ActorCustomer, Reason: "race"})
			} else {
				_, _, reserveErr = db.Reserve(ctx, booking.ReserveRequest{OpenID: waiter, SlotID: other})
			}
		})
		if cancelErr != nil {
			t.Fatalf("round %d: cancel: %v", round, cancelErr)
		}
		if reserveErr != nil && !booking.IsCode(reserveErr, booking.EACTIVEBOOKINGEXISTS) {
			t.Fatalf("round %d: the waiter's reserve: %v", round, reserveErr)
		}
		var unfinished int
		db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE openid = ? AND status IN (0, 1)`, waiter).Scan(&unfinished)
		if unfinished != 1 {
			t.Fatalf("round %d: the waiter holds %d unfinished bookings", round, unfinished)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// TestWaitlistJoinNeverCrossesAFreedSeat: a customer joins the line of a full
// one-seat slot at the moment its holder cancels. Either the join sees the seat
// free (SEATS_AVAILABLE) or the cancel sees the new entry and offers her the
// seat; never does she wait in line beside a free seat a stranger could take.
func TestWaitlistJoinNeverCrossesAFreedSeat(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	outcomes := map[string]int{}
	for round := 0; round < 120; round++ {
		slot := mysqltest.AddSlot(t, db, 30*time.Hour+time.Duration(round)*time.Minute, 1, 5000)
		holder, waiter := fmt.Sprintf("o-holder-%d", round), fmt.Sprintf("o-waiter-%d", round)
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: holder, SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		var cancelErr, joinErr error
		race(2, func(i int) {
			if i == 0 {
				_, cancelErr = db.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusCancelled,
					Event: booking.EventCancel, Actor: booking.ActorCustomer, Reason: "race"})
			} else {
				_, joinErr = db.JoinWaitlist(ctx, waiter, slot, booking.MaxWaitlistEntries)
			}
		})
		if cancelErr != nil {
			t.Fatalf("round %d: cancel: %v", round, cancelErr)
		}
		var waiting, offered, booked int
		db.SQL().QueryRow(`SELECT COUNT(*) FROM t_waitlist WHERE slot_id = ?`, slot).Scan(&waiting)
		db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE slot_id = ? AND openid = ? AND status = ?`, slot, waiter, booking.StatusPending).Scan(&offered)
		db.SQL().QueryRow(`SELECT booked FROM t_slot WHERE slot_id = ?`, slot).Scan(&booked)
		switch {
		case joinErr == nil && offered == 1 && waiting == 0 && booked == 1:
			outcomes["joined, then offered the seat"]++
		case booking.IsCode(joinErr, booking.ESEATSAVAILABLE) && offered == 0 && waiting == 0 && booked == 0:
			outcomes["saw the seat free"]++
		default:
			t.Fatalf("round %d: join %v; %d waiting, %d offers, booked %d", round, joinErr, waiting, offered, booked)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	mysqltest.CheckInvariant(t, db)
}

// TestConcurrentJoinsAllSucceed: 48 customers join the lines of two full slots
// at once. The server may pick one join as a deadlock's victim; the store runs
// it again, so every join succeeds and each line holds positions 1-48.
func TestConcurrentJoinsAllSucceed(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	var slots []int64
	for i := 0; i < 2; i++ {
		slot := mysqltest.AddSlot(t, db, 30*time.Hour+time.Duration(i)*time.Hour, 1, 5000)
		if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: fmt.Sprintf("o-holder-%d", i), SlotID: slot}); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, slot)
	}
	const n = 48
	errs := make([]error, n)
	race(n, func(i int) {
		for k := range slots {
			slot := slots[(i+k)%len(slots)]
			if _, err := db.JoinWaitlist(ctx, fmt.Sprintf("o-w-%02d", i), slot, booking.MaxWaitlistEntries); err != nil {
				errs[i] = err
				return
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("customer %d: %v", i, err)
		}
	}
	for _, slot := range slots {
		var count int
		db.SQL().QueryRow(`SELECT COUNT(*) FROM t_waitlist WHERE slot_id = ?`, slot).Scan(&count)
		if count != n {
			t.Errorf("slot %d: %d in line, want %d", slot, count, n)
		}
		e, err := db.JoinWaitlist(ctx, "o-w-00", slot, booking.MaxWaitlistEntries)
		if err != nil || e.Position < 1 || e.Position > n {
			t.Errorf("slot %d: entry %+v %v", slot, e, err)
		}
	}
	mysqltest.CheckInvariant(t, db)
}
