package mysql_test

import (
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// heldRow is what a new hold writes that does not depend on who holds it or
// when: the booking's columns and its audit record.
type heldRow struct {
	status, amountFen       int64
	canonicalOrderNumber    bool // out_trade_no is booking.OutTradeNo(id)
	endsAsPolicySays        bool // lock_expire is booking.HoldEnd(created_at, start, LOCK_TTL), to the second
	unfinished              bool // active_openid set: the one-unfinished-booking key applies
	auditEvents             int
	auditFrom, auditTo      int
	refundStatus, paidTrans bool // nothing paid or refunded yet
}

// held reads booking id's heldRow, checking the order number and the hold's end
// against what package booking computes.
func held(t *testing.T, db *mysql.DB, id int64) heldRow {
	t.Helper()
	var h heldRow
	var outTradeNo string
	var created, expire, start time.Time
	if err := db.SQL().QueryRow(`SELECT b.status, b.amount_fen, b.out_trade_no, b.created_at, b.lock_expire, s.start_at,
			b.active_openid IS NOT NULL, b.refund_status IS NOT NULL, b.transaction_id IS NOT NULL,
			(SELECT COUNT(*) FROM t_audit a WHERE a.book_id = b.book_id),
			(SELECT MIN(COALESCE(from_status, -1)) FROM t_audit a WHERE a.book_id = b.book_id),
			(SELECT MIN(COALESCE(to_status, -1)) FROM t_audit a WHERE a.book_id = b.book_id)
		FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id WHERE b.book_id = ?`, id).
		Scan(&h.status, &h.amountFen, &outTradeNo, &created, &expire, &start, &h.unfinished, &h.refundStatus, &h.paidTrans,
			&h.auditEvents, &h.auditFrom, &h.auditTo); err != nil {
		t.Fatal(err)
	}
	h.canonicalOrderNumber = outTradeNo == booking.OutTradeNo(id)
	want := booking.HoldEnd(created, start, db.Policy.LockTTL)
	h.endsAsPolicySays = expire.Sub(want).Abs() < time.Second
	return h
}

// TestReserveAndOfferMakeTheSameHold: a reservation (the stored procedure
// salon_reserve, one round trip) and a waitlist offer (Go, inside the change
// that freed the seat) write the same hold, booking.Policy.NewHold's: pending,
// the slot's price, lock_expire the earlier of now + LOCK_TTL and the start, the
// order number booking.OutTradeNo spells, one audit record from -1 to 0. If
// either side drifts (a column, the order-number format, the hold's end), this
// fails.
func TestReserveAndOfferMakeTheSameHold(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for i, c := range []struct {
		name string
		in   time.Duration // the slot's start from now
	}{
		{"a hold of LOCK_TTL", 26 * time.Hour},
		{"a hold cut at the start", 5 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := c.in + time.Duration(i)*time.Minute
			reserved := mysqltest.AddSlot(t, db, at, 1, 5000)
			offered := mysqltest.AddSlot(t, db, at+30*time.Second, 1, 5000)
			tag := string(rune('a' + i))
			r, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-r-" + tag, SlotID: reserved})
			if err != nil {
				t.Fatal(err)
			}
			holder, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-h-" + tag, SlotID: offered})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.JoinWaitlist(ctx, "o-w-"+tag, offered, booking.MaxWaitlistEntries); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: holder.ID, From: booking.StatusPending, To: booking.StatusCancelled,
				Event: booking.EventCancel, Actor: booking.ActorCustomer}); err != nil {
				t.Fatal(err)
			}
			var offer int64
			if err := db.SQL().QueryRow(`SELECT book_id FROM t_booking WHERE openid = ?`, "o-w-"+tag).Scan(&offer); err != nil {
				t.Fatal(err)
			}
			a, b := held(t, db, r.ID), held(t, db, offer)
			if a != b {
				t.Fatalf("reserve wrote %+v, the offer %+v", a, b)
			}
			want := heldRow{status: int64(booking.StatusPending), amountFen: 5000, canonicalOrderNumber: true, endsAsPolicySays: true,
				unfinished: true, auditEvents: 1, auditFrom: -1, auditTo: int(booking.StatusPending)}
			if a != want {
				t.Fatalf("the hold is %+v, booking.Policy.NewHold's is %+v", a, want)
			}
		})
	}
	mysqltest.CheckInvariant(t, db)
}
