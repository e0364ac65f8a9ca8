package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestFormsWriteWhatTheProductWrites: every form, and the product, takes the
// seats of a two-seat slot and refuses the third request, and each seat
// leaves what the product's leaves: the booking, one audit record, its seat
// row, and its order number, booking.OutTradeNo's spelling, except in the two
// forms that never write it. So a ratio between two of them measures where
// they differ, not rows one of them forgot.
func TestFormsWriteWhatTheProductWrites(t *testing.T) {
	ctx := context.Background()
	db := mysqltest.New(t)
	if err := createForms(ctx, db.SQL()); err != nil {
		t.Fatal(err)
	}
	p := &product{store: db}
	for i, c := range append([]contender{p}, forms(p, db.SQL())...) {
		slot := mysqltest.AddSlot(t, db, time.Duration(24+i)*time.Hour, 2, 5000)
		var got []outcome
		for j := range 3 {
			o, err := c.Reserve(ctx, 0, slot, fmt.Sprintf("form-%d-%d", i, j))
			if err != nil {
				t.Fatalf("%s: reserve %d: %v", c.Name(), j, err)
			}
			got = append(got, o)
		}
		if fmt.Sprint(got) != fmt.Sprint([]outcome{taken, taken, soldOut}) {
			t.Errorf("%s: outcomes %v, want two seats and a refusal", c.Name(), got)
		}
		rows, err := db.SQL().QueryContext(ctx, `SELECT b.book_id, COALESCE(b.out_trade_no, ''),
				(SELECT COUNT(*) FROM t_audit a WHERE a.book_id = b.book_id),
				(SELECT COUNT(*) FROM t_booking_slot bs WHERE bs.book_id = b.book_id AND bs.slot_id = b.slot_id)
			FROM t_booking b WHERE b.slot_id = ?`, slot)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var id int64
			var tradeNo string
			var audits, seatRows int
			if err := rows.Scan(&id, &tradeNo, &audits, &seatRows); err != nil {
				t.Fatal(err)
			}
			n++
			want := booking.OutTradeNo(id)
			if c.Name() == cSeatLastNoTrade || c.Name() == cSeatFirstNoTrade {
				want = ""
			}
			if tradeNo != want || audits != 1 || seatRows != 1 {
				t.Errorf("%s: booking %d: order number %q (want %q), %d audit records, %d seat rows", c.Name(), id, tradeNo, want, audits, seatRows)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if n != 2 {
			t.Errorf("%s: %d bookings in the slot, want 2", c.Name(), n)
		}
	}
	mysqltest.CheckInvariant(t, db)
}
