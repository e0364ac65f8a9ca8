package mysql_test

import (
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// BenchmarkCancelHandsSeatOn times the status change a customer's cancel makes
// when someone waits for the slot: the conditional update, its audit record,
// the seat returned and handed to the first in line (a new hold, the entry
// removed, its audit record and notification, the seat taken again), in one
// transaction. Each iteration sets up a full one-seat slot with one waiter
// outside the timer.
func BenchmarkCancelHandsSeatOn(b *testing.B) {
	db := mysqltest.New(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		slot := mysqltest.AddSlot(b, db, 24*time.Hour+time.Duration(i)*time.Minute, 1, 5000)
		holder, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: nextCustomer(), SlotID: slot})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.JoinWaitlist(ctx, nextCustomer(), slot, booking.MaxWaitlistEntries); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: holder.ID, From: booking.StatusPending, To: booking.StatusCancelled,
			Event: booking.EventCancel, Actor: booking.ActorCustomer, Reason: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}
