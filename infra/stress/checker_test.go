package stress

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
)

// recorder is a testing.TB that keeps errors instead of failing the test, so the
// checker itself can be shown to catch a broken state.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckerCatchesBrokenStates makes sure the model's checks are not vacuous:
// after a short clean run, each kind of corruption the product must never cause
// is written into the database by hand and must be reported.
func TestCheckerCatchesBrokenStates(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := newModel(s, 1, 6)
	ctx := context.Background()
	// One paid booking and one free one, through the real handlers.
	var paid int64
	for i, sl := range m.slots[:3] {
		c := m.customers[i]
		a := s.call("POST", "/bookings", c.token, map[string]any{"slotId": sl.id})
		if a.Status != 201 {
			t.Fatalf("reserve: %d %s", a.Status, a.Body)
		}
		if sl.price > 0 && paid == 0 {
			paid = bookingIDOf(a)
			if err := s.sim.Pay(ctx, booking.OutTradeNo(paid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Two bookings of a service at one start, with two technicians.
	var techBookings []int64
	for i, tech := range []int64{m.menu.techs[0], m.menu.techs[2]} {
		a := s.call("POST", "/bookings", m.customers[3+i].token, map[string]any{
			"serviceId": m.menu.services[0].id, "startAt": m.start(0).Format(time.RFC3339), "technicianId": tech})
		if a.Status != 201 {
			t.Fatalf("reserve a service: %d %s", a.Status, a.Body)
		}
		techBookings = append(techBookings, bookingIDOf(a))
	}
	m.quiet()
	m.check(true)
	if len(s.violations) > 0 {
		t.Fatalf("clean run has violations: %v", s.violations)
	}

	corruptions := []struct {
		name, sql, want string
		args            []any  // the paid booking when none
		undo            string // run before restore, with undoArgs
		undoArgs        []any
	}{
		{"oversold counter", `UPDATE t_slot SET booked = booked - 1 WHERE slot_id = (SELECT slot_id FROM t_booking WHERE book_id = ?)`, "invariant broken", nil, "", nil},
		{"seat row lost", `DELETE FROM t_booking_slot WHERE book_id = ?`, "invariant broken", nil, "", nil},
		{"seat row of a finished booking", `INSERT INTO t_booking_slot (book_id, slot_id) SELECT MAX(book_id) + 1000, MIN(slot_id) FROM t_booking WHERE book_id >= ?`, "invariant broken", nil, "", nil},
		{"duplicate audit record", `INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at, shipped_at)
			SELECT book_id, slot_id, event, from_status, to_status, actor, reason, created_at, created_at FROM t_audit WHERE book_id = ? AND event = 'confirm'`, "trail stands at", nil, "", nil},
		{"status changed without audit", `UPDATE t_booking SET status = 2 WHERE book_id = ?`, "audit trail ends at", nil, "", nil},
		{"refund without WeChat refund", `UPDATE t_booking SET refund_status = 'succeeded', refund_fen = amount_fen, refund_no = CONCAT('RF', LPAD(book_id, 12, '0')) WHERE book_id = ?`, "keeps its seat and has a refund", nil, "", nil},
		{"payment not recorded", `UPDATE t_booking SET transaction_id = NULL WHERE book_id = ?`, "does not record it", nil, "", nil},
		{"ledger row rewritten", `UPDATE t_money SET amount_fen = amount_fen - 1 WHERE book_id = ? AND kind = 'deposit'`, "deposits", nil,
			`UPDATE t_money SET amount_fen = amount_fen + 1 WHERE book_id = ? AND kind = 'deposit'`, []any{paid}},
		{"deposit kept from a confirmed booking", `INSERT INTO t_money (book_id, kind, amount_fen, method, actor, created_at)
			SELECT book_id, 'kept', amount_fen, 'wechatpay', 'system', UTC_TIMESTAMP(6) FROM t_booking WHERE book_id = ?`, "money not conserved", nil,
			`INSERT INTO t_money (book_id, kind, amount_fen, method, actor, created_at)
			SELECT book_id, 'kept', -amount_fen, 'wechatpay', 'system', UTC_TIMESTAMP(6) FROM t_booking WHERE book_id = ?`, []any{paid}},
		{"one technician's bookings overlap", `UPDATE t_booking SET technician_id = ? WHERE book_id = ?`, "overlap in time",
			[]any{m.menu.techs[0], techBookings[1]}, `UPDATE t_booking SET technician_id = ? WHERE book_id = ?`, []any{m.menu.techs[2], techBookings[1]}},
		{"time off over a held cell", `UPDATE t_slot SET is_open = 0 WHERE slot_id = (SELECT slot_id FROM t_booking WHERE book_id = ?)`, "closed cells are held",
			[]any{techBookings[0]}, `UPDATE t_slot SET is_open = 1 WHERE slot_id = (SELECT slot_id FROM t_booking WHERE book_id = ?)`, []any{techBookings[0]}},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			tx, err := s.store.SQL().Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			args := c.args
			if args == nil {
				args = []any{paid}
			}
			if _, err := tx.Exec(c.sql, args...); err != nil {
				t.Fatal(err)
			}
			// The checker reads through its own pool: commit, check, then undo by hand.
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if c.undo != "" {
					if _, err := s.store.SQL().Exec(c.undo, c.undoArgs...); err != nil {
						t.Fatal(err)
					}
				}
				restore(t, s, paid)
			})
			rec := &recorder{TB: t}
			s.t = rec
			s.violations, s.seen = nil, nil
			m.check(true)
			s.t = t
			all := strings.Join(append(rec.errs, s.violations...), "\n")
			if !strings.Contains(all, c.want) {
				t.Errorf("checker missed %s: want %q in:\n%s", c.name, c.want, all)
			}
		})
	}
}

// restore puts the paid booking back as the clean run left it.
func restore(t *testing.T, s *system, id int64) {
	db := s.store.SQL()
	ord, _ := s.sim.Order(booking.OutTradeNo(id))
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE t_booking SET status = 1, refund_status = NULL, refund_fen = NULL, refund_no = NULL, transaction_id = ? WHERE book_id = ?`, []any{ord.TransactionID, id}},
		{`DELETE FROM t_audit WHERE audit_id NOT IN (SELECT MIN(audit_id) FROM (SELECT * FROM t_audit) a GROUP BY book_id, event, from_status, to_status)`, nil},
		{`DELETE bs FROM t_booking_slot bs LEFT JOIN t_booking b ON b.book_id = bs.book_id WHERE b.book_id IS NULL OR b.status NOT IN (0, 1, 2, 5)`, nil},
		{`INSERT IGNORE INTO t_booking_slot (book_id, slot_id) SELECT book_id, slot_id FROM t_booking WHERE status IN (0, 1, 2, 5)`, nil},
		{`UPDATE t_slot s SET booked = (SELECT COUNT(*) FROM t_booking_slot bs JOIN t_booking b ON b.book_id = bs.book_id
			WHERE bs.slot_id = s.slot_id AND b.status IN (0, 1, 2, 5))`, nil},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExpectRefuses500: under faults an answer may be 503 naming what failed
// (the database, with Retry-After, or WeChat), never 500.
func TestExpectRefuses500(t *testing.T) {
	s := &system{t: t}
	m := &model{s: s, answers: map[string]int{}}
	retry := http.Header{"Retry-After": {"2"}}
	code := func(c string) map[string]any { return map[string]any{"code": c} }
	m.expect("reserve", answer{Status: 503, Header: retry, JSON: code(booking.EUNAVAILABLE)}, "201")
	m.expect("reserve", answer{Status: 503, JSON: code(booking.EUPSTREAM)}, "201")
	m.expect("reserve", answer{Status: 201}, "201")
	if len(s.violations) != 0 {
		t.Fatalf("allowed answers reported: %v", s.violations)
	}
	for _, a := range []answer{
		{Status: 500, JSON: code(booking.EINTERNAL)},
		{Status: 503, JSON: code(booking.EUNAVAILABLE)}, // without Retry-After
		{Status: 503, JSON: code("")},
		{Status: 409, JSON: code(booking.EINVALIDSTATE)},
	} {
		before := len(s.violations)
		m.expect("reserve", a, "201")
		if len(s.violations) != before+1 {
			t.Errorf("answer %d %v not reported", a.Status, a.JSON)
		}
	}
}
