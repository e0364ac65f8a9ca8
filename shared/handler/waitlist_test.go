package handler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

func (s *system) joinWaitlist(openid string, slot int64) answer {
	s.t.Helper()
	return s.call("POST", "/slots/"+itoa64(slot)+"/waitlist", s.token(openid), nil)
}

// offers returns the customers who got a waitlist offer on slot, by audit.
func (s *system) offers(slot int64) map[string]int64 {
	s.t.Helper()
	rows, err := s.store.SQL().Query(`SELECT b.openid, b.book_id FROM t_audit a JOIN t_booking b ON b.book_id = a.book_id
		WHERE a.event = ? AND a.slot_id = ?`, booking.EventWaitlistOffer, slot)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var openid string
		var id int64
		rows.Scan(&openid, &id)
		if _, dup := out[openid]; dup {
			s.t.Errorf("customer %s got two offers", openid)
		}
		out[openid] = id
	}
	return out
}

// TestWaitlistRoutes: joining, positions, the refusals (each changing nothing),
// leaving and the customer's list.
func TestWaitlistRoutes(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	full := s.slot(26*time.Hour, 1, 5000)
	s.mustReservePaid("o-holder", full)
	free := s.slot(27*time.Hour, 2, 5000)
	started := s.slot(-time.Hour, 1, 5000)

	a := s.joinWaitlist("o-w1", full)
	if a.Status != 201 {
		t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if w := obj(t, a.JSON["waitlist"]); w["slotId"] != float64(full) || w["position"] != 1.0 || w["createdAt"] == nil {
		t.Fatalf("entry %v", w)
	}
	if a := s.joinWaitlist("o-w2", full); obj(t, a.JSON["waitlist"])["position"] != 2.0 {
		t.Fatalf("second: %s", a.Body)
	}
	// Twice: the same entry.
	if a := s.joinWaitlist("o-w1", full); a.Status != 201 || obj(t, a.JSON["waitlist"])["position"] != 1.0 {
		t.Fatalf("again: %d %s", a.Status, a.Body)
	}

	before := s.dbState()
	s.wantError(s.joinWaitlist("o-w3", 999999), 404, booking.ENOTFOUND)
	s.wantError(s.joinWaitlist("o-w3", free), 409, booking.ESEATSAVAILABLE)
	s.wantError(s.joinWaitlist("o-w3", started), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(s.call("POST", "/slots/"+itoa64(full)+"/waitlist", "", nil), 401, booking.EUNAUTHORIZED)
	s.wantError(s.call("POST", "/slots/abc/waitlist", s.token("o-w3"), nil), 400, booking.EBADREQUEST)
	s.unchanged(before, "refused joins")

	// At most three slots at once.
	for i := 0; i < 2; i++ {
		other := s.slot(time.Duration(30+i)*time.Hour, 1, 5000)
		s.mustReservePaid(fmt.Sprintf("o-fill-%d", i), other)
		if a := s.joinWaitlist("o-w1", other); a.Status != 201 {
			t.Fatalf("join %d: %d %s", i, a.Status, a.Body)
		}
	}
	fourth := s.slot(33*time.Hour, 1, 5000)
	s.mustReservePaid("o-fill-x", fourth)
	s.wantError(s.joinWaitlist("o-w1", fourth), 409, booking.EWAITLISTLIMIT)

	a = s.call("GET", "/waitlist/mine", s.token("o-w1"), nil)
	list, _ := a.JSON["waitlist"].([]any)
	if a.Status != 200 || len(list) != 3 || obj(t, list[0])["startAt"] == nil || obj(t, list[0])["slotId"] != float64(full) {
		t.Fatalf("mine: %d %s", a.Status, a.Body)
	}

	// Leaving: 204, also when not in line; the one behind moves up.
	for i := 0; i < 2; i++ {
		if a := s.call("DELETE", "/slots/"+itoa64(full)+"/waitlist", s.token("o-w1"), nil); a.Status != 204 {
			t.Fatalf("leave: %d %s", a.Status, a.Body)
		}
	}
	if a := s.joinWaitlist("o-w2", full); obj(t, a.JSON["waitlist"])["position"] != 1.0 {
		t.Fatalf("after the first left: %s", a.Body)
	}
}

// TestFreedSeatsGoToTheWaitlist: 50 customers wait for a full slot while 10
// seats come free at once, through expiries, customer and salon cancels and a
// capacity raise, and 20 other customers try to reserve it. Each freed seat goes
// to exactly one waiting customer, in the order they joined, passing over those
// who hold another unfinished booking; nobody else gets a seat; the invariant
// holds.
func TestFreedSeatsGoToTheWaitlist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 8, 5000)
	other := s.slot(28*time.Hour, 10, 5000)

	// Eight holders: four pending (their holds will expire), four paid.
	var pending, paid []int64
	for i := 0; i < 8; i++ {
		id := s.mustReservePaid(fmt.Sprintf("o-holder-%d", i), slot)
		if i < 4 {
			pending = append(pending, id)
		} else {
			if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
				t.Fatal(err)
			}
			paid = append(paid, id)
		}
	}
	// Fifty in line, in this order; three of them hold a booking elsewhere.
	busy := map[int]bool{2: true, 5: true, 11: true}
	var line []string
	for i := 0; i < 50; i++ {
		openid := fmt.Sprintf("o-wait-%02d", i)
		if busy[i] {
			s.mustReservePaid(openid, other)
		}
		if a := s.joinWaitlist(openid, slot); a.Status != 201 || obj(t, a.JSON["waitlist"])["position"] != float64(i+1) {
			t.Fatalf("join %d: %d %s", i, a.Status, a.Body)
		}
		line = append(line, openid)
	}
	for _, id := range pending {
		mysqltest.ExpireHold(t, s.store, id)
	}

	// Ten seats come free at once: 4 expiries (one release run), 3 customer
	// cancels, 1 salon cancel, capacity 8 -> 10; meanwhile 20 outsiders reserve.
	var wg sync.WaitGroup
	start := make(chan struct{})
	var mu sync.Mutex
	var outsiders []answer
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); <-start; f() }()
	}
	run(func() {
		if _, err := relRunEnv(ctx, s.apiEnv); err != nil {
			t.Error(err)
		}
	})
	for i := 0; i < 3; i++ {
		run(func() {
			if a := s.cancelAs(fmt.Sprintf("o-holder-%d", 4+i), paid[i]); a.Status != 200 {
				t.Errorf("cancel: %d %s", a.Status, a.Body)
			}
		})
	}
	run(func() {
		if a := s.admin("cancel", paid[3]); a.Status != 200 {
			t.Errorf("salon cancel: %d %s", a.Status, a.Body)
		}
	})
	run(func() {
		if a := s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"capacity": 10}); a.Status != 200 {
			t.Errorf("capacity: %d %s", a.Status, a.Body)
		}
	})
	for i := 0; i < 20; i++ {
		run(func() {
			a := s.call("POST", "/bookings", s.token(fmt.Sprintf("o-outsider-%d", i)), map[string]any{"slotId": slot})
			mu.Lock()
			outsiders = append(outsiders, a)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	for _, o := range outsiders {
		if o.Status != 409 || o.code() != booking.ESOLDOUT {
			t.Errorf("an outsider got %d %s while customers waited", o.Status, o.Body)
		}
	}

	offers := s.offers(slot)
	var want []string
	for i, openid := range line {
		if !busy[i] && len(want) < 10 {
			want = append(want, openid)
		}
	}
	var got []string
	for openid, id := range offers {
		got = append(got, openid)
		if st := s.status(id); st != "pending_payment" {
			t.Errorf("offer to %s is %s", openid, st)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("offers went to %v, want the first ten free in line %v", got, want)
	}
	if b := s.slotBooked(slot); b != 10 {
		t.Fatalf("booked %d, want 10", b)
	}
	// Those passed over keep their place, at the front now.
	a := s.call("GET", "/waitlist/mine", s.token("o-wait-02"), nil)
	if l, _ := a.JSON["waitlist"].([]any); len(l) != 1 || obj(t, l[0])["position"] != 1.0 {
		t.Fatalf("passed-over customer: %s", a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)

	// An offer nobody pays expires like any hold; the seat goes to the next in line.
	first := offers[want[0]]
	mysqltest.ExpireHold(t, s.store, first)
	s.relRun(ctx)
	if st := s.status(first); st != "expired" {
		t.Fatalf("unpaid offer: %s", st)
	}
	if next := s.offers(slot); len(next) != 11 || next["o-wait-13"] == 0 {
		t.Fatalf("after the expiry, offers %v; want o-wait-13 next", next)
	}
	// The offered customer pays with POST /bookings/{id}/pay.
	id := s.offers(slot)["o-wait-13"]
	if a := s.call("POST", "/bookings/"+itoa64(id)+"/pay", s.token("o-wait-13"), nil); a.Status != 200 || a.JSON["payment"] == nil {
		t.Fatalf("pay the offer: %d %s", a.Status, a.Body)
	}
	if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
		t.Fatal(err)
	}
	if st := s.status(id); st != "confirmed" {
		t.Fatalf("paid offer: %s", st)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestWaitlistOfAStartedSlotIsDropped: the release run drops the line of a slot
// that has started, and a seat freed in a closed slot is offered to nobody.
func TestWaitlistOfAStartedSlotIsDropped(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 1, 0) // free: an offer still waits for the customer
	holder, _ := s.reserve("o-h", slot)
	if a := s.joinWaitlist("o-a", slot); a.Status != 201 {
		t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if a := s.joinWaitlist("o-b", slot); a.Status != 201 {
		t.Fatalf("join: %d %s", a.Status, a.Body)
	}
	if a := s.cancelAs("o-h", holder); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	offer := s.offers(slot)["o-a"]
	if offer == 0 || s.status(offer) != "pending_payment" {
		t.Fatalf("free slot offer: %v", s.offers(slot))
	}
	// Closed: a cancel frees a seat nobody is offered.
	if a := s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"open": false}); a.Status != 200 {
		t.Fatalf("close: %d", a.Status)
	}
	if a := s.cancelAs("o-a", offer); a.Status != 200 {
		t.Fatalf("cancel offer: %d %s", a.Status, a.Body)
	}
	if len(s.offers(slot)) != 1 || s.slotBooked(slot) != 0 {
		t.Fatalf("closed slot: offers %v, booked %d", s.offers(slot), s.slotBooked(slot))
	}
	// Reopened: the free seat goes to the one still waiting, in the same change.
	if a := s.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"open": true}); a.Status != 200 || obj(t, a.JSON)["open"] != true {
		t.Fatalf("reopen: %d %s", a.Status, a.Body)
	}
	if s.offers(slot)["o-b"] == 0 || s.slotBooked(slot) != 1 {
		t.Fatalf("reopened slot: offers %v, booked %d", s.offers(slot), s.slotBooked(slot))
	}
	mysqltest.SlotStarts(t, s.store, slot, time.Minute)
	s.relRun(context.Background())
	if n := s.countRows("t_waitlist"); n != 0 {
		t.Fatalf("%d entries left for a started slot", n)
	}
	mysqltest.CheckInvariant(t, s.store)
}
