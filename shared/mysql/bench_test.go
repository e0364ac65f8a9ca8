package mysql_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// Each customer books once, so every iteration uses a fresh openid; capacity is
// large enough never to run out, which measures the path that takes a seat.

var customerSeq atomic.Int64

func nextCustomer() string { return fmt.Sprintf("bench-%d", customerSeq.Add(1)) }

func BenchmarkReserveHotSlot(b *testing.B) {
	db := mysqltest.New(b)
	slot := mysqltest.AddSlot(b, db, 24*time.Hour, 1<<30, 5000)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: nextCustomer(), SlotID: slot}); err != nil {
				b.Error(err)
			}
		}
	})
}

func BenchmarkReserveSpread1000(b *testing.B) {
	db := mysqltest.New(b)
	slots := make([]int64, 1000)
	for i := range slots {
		slots[i] = mysqltest.AddSlot(b, db, time.Duration(i+1)*10*time.Minute, 1<<30, 5000)
	}
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			slot := slots[n.Add(1)%int64(len(slots))]
			if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: nextCustomer(), SlotID: slot}); err != nil {
				b.Error(err)
			}
		}
	})
}

// BenchmarkSoldOut is a reserve on a full slot: the cheapest refusal.
func BenchmarkReserveSoldOut(b *testing.B) {
	db := mysqltest.New(b)
	slot := mysqltest.AddSlot(b, db, 24*time.Hour, 1, 5000)
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "first", SlotID: slot}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			db.Reserve(ctx, booking.ReserveRequest{OpenID: nextCustomer(), SlotID: slot})
		}
	})
}

// BenchmarkBareConditionalUpdate is the floor: the seat-taking statement alone,
// autocommitted, on one hot row.
func BenchmarkBareConditionalUpdate(b *testing.B) {
	db := mysqltest.New(b)
	slot := mysqltest.AddSlot(b, db, 24*time.Hour, 1<<30, 5000)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.SQL().ExecContext(ctx, `UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND booked < capacity`, slot); err != nil {
				b.Error(err)
			}
		}
	})
}

// The reserve writes the order number in SQL, in the same round trip as the
// booking: the stored column must be exactly booking.OutTradeNo of the new id,
// and the connection must come back to the pool outside any transaction.
func TestReserveStoresOrderNumber(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	db.SQL().SetMaxOpenConns(1) // one connection: a transaction left open would show below
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 2, 5000)
	for _, who := range []string{"order-a", "order-b"} {
		b, created, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: who, SlotID: slot})
		if err != nil || !created {
			t.Fatalf("reserve %s: %v %v", who, created, err)
		}
		var stored string
		var inTx int
		if err := db.SQL().QueryRow(`SELECT out_trade_no, @@in_transaction FROM t_booking WHERE book_id = ?`, b.ID).Scan(&stored, &inTx); err != nil {
			t.Fatal(err)
		}
		if stored != booking.OutTradeNo(b.ID) || b.OutTradeNo != stored {
			t.Errorf("booking %d: stored %q, answered %q, want %q", b.ID, stored, b.OutTradeNo, booking.OutTradeNo(b.ID))
		}
		if inTx != 0 {
			t.Errorf("connection returned to the pool inside a transaction")
		}
	}
	if _, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "order-c", SlotID: slot}); !booking.IsCode(err, booking.ESOLDOUT) {
		t.Fatalf("third reserve on two seats: %v", err)
	}
	mysqltest.CheckInvariant(t, db)
}
