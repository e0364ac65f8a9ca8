package mysql_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/mysql"
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
			if _, _, err := db.Reserve(ctx, mysql.ReserveRequest{OpenID: nextCustomer(), SlotID: slot}); err != nil {
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
			if _, _, err := db.Reserve(ctx, mysql.ReserveRequest{OpenID: nextCustomer(), SlotID: slot}); err != nil {
				b.Error(err)
			}
		}
	})
}

// BenchmarkSoldOut is a reserve on a full slot: the cheapest refusal.
func BenchmarkReserveSoldOut(b *testing.B) {
	db := mysqltest.New(b)
	slot := mysqltest.AddSlot(b, db, 24*time.Hour, 1, 5000)
	if _, _, err := db.Reserve(ctx, mysql.ReserveRequest{OpenID: "first", SlotID: slot}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			db.Reserve(ctx, mysql.ReserveRequest{OpenID: nextCustomer(), SlotID: slot})
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
