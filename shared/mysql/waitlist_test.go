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
