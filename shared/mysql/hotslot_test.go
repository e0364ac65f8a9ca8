package mysql_test

import (
	"database/sql"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestTheSlotRowIsLockedOnlyForTheSeat: the reservation asks for the slot row's
// lock by its last statement, so every request for a hot slot queues for the
// seat's UPDATE and the COMMIT alone. The slot row is held by another
// transaction while a reservation runs; when the reservation waits for it, its
// booking with its order number, its audit record and its seat row must be
// written already (seen uncommitted), the seat not yet taken. Then the other
// transaction lets go: rolled back, the waiting reservation takes the seat;
// committed after closing the slot, it takes none and nothing it wrote stays.
func TestTheSlotRowIsLockedOnlyForTheSeat(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	for i, c := range []struct {
		name      string
		closeSlot bool // the holder closes the slot and commits
		want      string
	}{
		{"the holder rolls back", false, ""},
		{"the holder closes the slot", true, booking.ESLOTNOTBOOKABLE},
	} {
		t.Run(c.name, func(t *testing.T) {
			slot := mysqltest.AddSlot(t, db, time.Duration(24+i)*time.Hour, 2, 5000)
			customer := "o-queued-" + string(rune('a'+i))
			holder, err := db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback()
			if _, err := holder.Exec(`SELECT booked FROM t_slot WHERE slot_id = ? FOR UPDATE`, slot); err != nil {
				t.Fatal(err)
			}

			type answer struct {
				b   *booking.Booking
				err error
			}
			done := make(chan answer, 1)
			go func() {
				b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: customer, SlotID: slot})
				done <- answer{b, err}
			}()

			// The reservation's transaction waits for a row lock: the slot's.
			waitFor(t, done, func() bool {
				// INNODB_TRX is the whole server's: only this database's count.
				var waiting int
				err := db.SQL().QueryRow(`SELECT COUNT(*) FROM information_schema.INNODB_TRX t
					JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
					WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`).Scan(&waiting)
				if err != nil {
					t.Fatal(err)
				}
				return waiting == 1
			})
			w := written(t, db.SQL(), customer, slot)
			if w.bookingID == 0 || w.orderNumber != booking.OutTradeNo(w.bookingID) || w.audits != 1 || w.seatRows != 1 || w.booked != 0 {
				t.Fatalf("while the reservation waits for the slot row: %+v; want its booking with order number %q, one audit record, one seat row, and booked 0",
					w, booking.OutTradeNo(w.bookingID))
			}

			if c.closeSlot {
				if _, err := holder.Exec(`UPDATE t_slot SET is_open = 0 WHERE slot_id = ?`, slot); err != nil {
					t.Fatal(err)
				}
				if err := holder.Commit(); err != nil {
					t.Fatal(err)
				}
			} else if err := holder.Rollback(); err != nil {
				t.Fatal(err)
			}
			var a answer
			select {
			case a = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the reservation did not finish after the slot row was let go")
			}
			if booking.ErrorCode(a.err) != c.want {
				t.Fatalf("reservation: %v, want %q", a.err, c.want)
			}
			after := written(t, db.SQL(), customer, slot)
			switch {
			case c.want == "" && (after.bookingID != a.b.ID || after.orderNumber != a.b.OutTradeNo || after.audits != 1 || after.seatRows != 1 || after.booked != 1):
				t.Errorf("after the seat was taken: %+v, answered booking %d %q", after, a.b.ID, a.b.OutTradeNo)
			case c.want != "" && (after.bookingID != 0 || after.booked != 0 || auditsOf(t, db.SQL(), w.bookingID) != 0):
				t.Errorf("after the seat was refused: %+v; want nothing of booking %d left", after, w.bookingID)
			}
			mysqltest.CheckInvariant(t, db)
		})
	}
}

// waitFor polls until ready holds, failing if the reservation answers first or
// a few seconds pass. INNODB_TRX is a cache the server refreshes only when it
// was last read more than 0.1 s ago, so each look waits longer than that first.
func waitFor[T any](t *testing.T, done <-chan T, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(150 * time.Millisecond)
		select {
		case a := <-done:
			t.Fatalf("the reservation answered without waiting for the slot row: %+v", a)
		default:
		}
		if ready() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reservation never waited for the slot row")
		}
	}
}

// rowsWritten is what a reservation of one customer in one slot has written,
// as a dirty read sees it (committed or not).
type rowsWritten struct {
	bookingID        int64
	orderNumber      string
	audits, seatRows int
	booked           int
}

func written(t *testing.T, db *sql.DB, openid string, slot int64) rowsWritten {
	t.Helper()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadUncommitted, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var w rowsWritten
	err = tx.QueryRow(`SELECT b.book_id, COALESCE(b.out_trade_no, ''),
			(SELECT COUNT(*) FROM t_audit a WHERE a.book_id = b.book_id),
			(SELECT COUNT(*) FROM t_booking_slot bs WHERE bs.book_id = b.book_id AND bs.slot_id = b.slot_id)
		FROM t_booking b WHERE b.openid = ? AND b.slot_id = ?`, openid, slot).Scan(&w.bookingID, &w.orderNumber, &w.audits, &w.seatRows)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if err := tx.QueryRow(`SELECT booked FROM t_slot WHERE slot_id = ?`, slot).Scan(&w.booked); err != nil {
		t.Fatal(err)
	}
	return w
}

// auditsOf counts the audit records of a booking, committed.
func auditsOf(t *testing.T, db *sql.DB, bookingID int64) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t_audit WHERE book_id = ?`, bookingID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
