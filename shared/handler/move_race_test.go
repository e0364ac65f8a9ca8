package handler

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// moveFrom is the salon's move of booking id to slot to, decided on the slot
// it was seen in (fromSlotId).
func (s *system) moveFrom(id, to, from int64) answer {
	s.t.Helper()
	return s.call("POST", "/admin/bookings/"+itoa64(id)+"/reschedule", testAdmin, map[string]any{"slotId": to, "fromSlotId": from})
}

// TestCheckinCodeRacesTheSalonsMove: the customer's app asks for her booking
// (which gives it today's check-in code) while the salon moves it to tomorrow,
// round after round, with real goroutines: whichever comes first, the booking
// never keeps a code of a day other than its slot's.
func TestCheckinCodeRacesTheSalonsMove(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	loc := shanghai(t)
	today := s.slot(26*time.Hour, 200, 5000)
	tomorrow := s.slot(28*time.Hour, 200, 5000)
	const rounds, askers = 40, 4
	ids := make([]int64, rounds)
	for i := range ids {
		ids[i] = s.paidBooking("o-race-code-"+itoa64(int64(i)), today)
	}
	mysqltest.SlotStarts(t, s.store, today, time.Minute) // under way: today's, the code shows
	if s.day(today) != time.Now().In(loc).Format(time.DateOnly) {
		t.Skip("the slot falls on yesterday (the test runs just after midnight in the shop)")
	}
	moved := 0
	for i, id := range ids {
		openid := "o-race-code-" + itoa64(int64(i))
		var wg sync.WaitGroup
		start := make(chan struct{})
		statuses := make(chan int, askers+1)
		for range askers {
			wg.Go(func() {
				<-start
				a := s.call("GET", "/bookings/"+itoa64(id), s.token(openid), nil)
				if a.Status != http.StatusOK {
					t.Errorf("round %d: GET answered %d %s", i, a.Status, a.Body)
				}
				statuses <- a.Status
			})
		}
		wg.Go(func() {
			<-start
			a := s.rescheduleBySalon(id, tomorrow)
			if a.Status == http.StatusOK {
				statuses <- 0
			} else {
				t.Errorf("round %d: the move answered %d %s", i, a.Status, a.Body)
				statuses <- a.Status
			}
		})
		close(start)
		wg.Wait()
		close(statuses)
		for st := range statuses {
			switch st {
			case 0:
				moved++
			case http.StatusOK:
			default:
				t.Fatalf("round %d: an answer %d", i, st)
			}
		}
		var codeDay, slotDay *string
		if err := s.store.SQL().QueryRow(`SELECT DATE_FORMAT(b.checkin_day, '%Y-%m-%d'), DATE_FORMAT(CONVERT_TZ(s.start_at, '+00:00', '+08:00'), '%Y-%m-%d')
			FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id WHERE b.book_id = ?`, id).Scan(&codeDay, &slotDay); err != nil {
			t.Fatal(err)
		}
		if codeDay != nil && *codeDay != *slotDay {
			t.Fatalf("round %d: booking %d in a slot of %s keeps a check-in code of %s", i, id, *slotDay, *codeDay)
		}
		if c := obj(t, s.call("GET", "/bookings/"+itoa64(id), s.token(openid), nil).JSON["booking"])["checkinCode"]; c != nil {
			t.Fatalf("round %d: the booking moved to tomorrow shows code %v", i, c)
		}
	}
	if moved != rounds {
		t.Fatalf("%d of %d moves made", moved, rounds)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestConcurrentSalonMovesFromTheShownSlot: two people at the salon move one
// booking at once from the slot their pages showed, to two different slots:
// exactly one move is made (200), the other is 409 INVALID_STATE, and the
// booking is where the one made put it. A move from a slot the booking is no
// longer in is refused the same way, and a malformed fromSlotId is 400; both
// change nothing.
func TestConcurrentSalonMovesFromTheShownSlot(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	const rounds = 12
	for i := range rounds {
		step := time.Duration(i) * 7 * time.Minute
		shown := s.slot(30*time.Hour+step, 2, 5000)
		targets := []int64{s.slot(40*time.Hour+step, 2, 5000), s.slot(50*time.Hour+step, 2, 8000)}
		id := s.paidBooking("o-race-move-"+itoa64(int64(i)), shown)
		answers := make([]answer, len(targets))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for k, to := range targets {
			wg.Go(func() {
				<-start
				answers[k] = s.moveFrom(id, to, shown)
			})
		}
		close(start)
		wg.Wait()
		var won int64
		refused := 0
		for k, a := range answers {
			switch {
			case a.Status == http.StatusOK:
				if won != 0 {
					t.Fatalf("round %d: both moves answered 200", i)
				}
				won = targets[k]
			case a.Status == http.StatusConflict && a.code() == booking.EINVALIDSTATE:
				refused++
			default:
				t.Fatalf("round %d: a move answered %d %s", i, a.Status, a.Body)
			}
		}
		if won == 0 || refused != 1 {
			t.Fatalf("round %d: %d refused, moved to %d", i, refused, won)
		}
		if b := s.findBk(id); b.SlotID != won || s.slotBooked(shown) != 0 || s.slotBooked(won) != 1 {
			t.Fatalf("round %d: booking in %d, want %d; booked %d and %d", i, b.SlotID, won, s.slotBooked(shown), s.slotBooked(won))
		}
	}

	// One at a time: a page showing an old slot is refused too.
	shown := s.slot(29*time.Hour, 2, 5000)
	to := s.slot(39*time.Hour, 2, 5000)
	id := s.paidBooking("o-race-move-stale", shown)
	if a := s.moveFrom(id, to, shown); a.Status != http.StatusOK {
		t.Fatalf("the first move: %d %s", a.Status, a.Body)
	}
	before := s.dbState()
	s.wantError(s.moveFrom(id, shown, shown), 409, booking.EINVALIDSTATE)
	for _, bad := range []any{0, -3, "31", 1.5, nil, true} {
		s.wantError(s.call("POST", "/admin/bookings/"+itoa64(id)+"/reschedule", testAdmin, map[string]any{"slotId": shown, "fromSlotId": bad}), 400, booking.EBADREQUEST)
	}
	s.unchanged(before, "moves from a slot the booking is no longer in, and malformed ones")
	mysqltest.CheckInvariant(t, s.store)
}
