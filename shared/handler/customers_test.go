package handler

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
)

// me reads GET /me's customer.
func (s *system) me(openid string) map[string]any {
	s.t.Helper()
	a := s.call("GET", "/me", s.token(openid), nil)
	if a.Status != http.StatusOK {
		s.t.Fatalf("GET /me: %d %s", a.Status, a.Body)
	}
	return obj(s.t, a.JSON["customer"])
}

// walkIn books through POST /admin/bookings.
func (s *system) walkIn(body map[string]any) answer {
	s.t.Helper()
	return s.call("POST", "/admin/bookings", testAdmin, body)
}

func wantCustomer(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("customer %s = %v, want %v (%v)", k, got[k], v, got)
		}
	}
}

func TestMeNameAndPhone(t *testing.T) {
	s := newSystem(t)
	const alice = "o-alice-me"
	tok := s.token(alice)

	// A customer who never said her name: null, and she books as before.
	if c := s.me(alice); len(c) != 3 || c["name"] != nil || c["phoneMasked"] != nil || c["noShows90d"] != 0.0 {
		t.Fatalf("a new customer: %v", c)
	}
	a := s.call("PUT", "/me", tok, map[string]any{"name": "  王小美 "})
	if a.Status != 200 || obj(t, a.JSON["customer"])["name"] != "王小美" {
		t.Fatalf("PUT name: %d %s", a.Status, a.Body)
	}

	// Bad names and bodies: 400, nothing changes.
	before := s.dbState()
	for _, body := range []any{
		map[string]any{"name": ""},
		map[string]any{"name": "   "},
		map[string]any{"name": strings.Repeat("美", 21)},
		map[string]any{"name": "a\nb"},
		map[string]any{"name": "tab\there"},
		// Invisible and bidirectional characters (booking's TestCleanName has each).
		map[string]any{"name": "\u202Eevil"},
		map[string]any{"name": "\u200B\u200B"},
		map[string]any{"name": "\uFEFF"},
		map[string]any{"name": "小\u2066美"},
		map[string]any{"name": "\u3164"},
		map[string]any{"name": "\u00AD"},
		map[string]any{},
		map[string]any{"nickname": "x"},
		map[string]any{"name": 7},
		map[string]any{"phoneCode": ""},
	} {
		s.wantError(s.call("PUT", "/me", tok, body), 400, "BAD_REQUEST")
	}
	s.unchanged(before, "bad PUT /me")
	if c := s.me(alice); c["name"] != "王小美" {
		t.Errorf("name after bad requests: %v", c)
	}
	a = s.call("PUT", "/me", tok, map[string]any{"name": strings.Repeat("美", 20)})
	if a.Status != 200 {
		t.Errorf("a 20-character name: %d %s", a.Status, a.Body)
	}
	s.call("PUT", "/me", tok, map[string]any{"name": "王小美"})

	// The phone: a code from WeChat, exchanged once, shown masked, never in full.
	code := s.login.PhoneCode("13812345678")
	a = s.call("PUT", "/me", tok, map[string]any{"phoneCode": code})
	if a.Status != 200 {
		t.Fatalf("PUT phoneCode: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, a.JSON["customer"]), map[string]any{"name": "王小美", "phoneMasked": "138****5678", "noShows90d": 0.0})
	if strings.Contains(string(a.Body), "13812345678") {
		t.Errorf("the full number reached the mini-program: %s", a.Body)
	}
	if c := s.me(alice); c["phoneMasked"] != "138****5678" {
		t.Errorf("GET /me after the phone: %v", c)
	}

	// The same code again, or one WeChat never issued: 400, nothing changes,
	// also the name sent with it.
	before = s.dbState()
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"phoneCode": code}), 400, "BAD_REQUEST")
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"name": "别的名字", "phoneCode": "never-issued"}), 400, "BAD_REQUEST")
	// A bad name with a good code: refused before WeChat is asked, so the code stays good.
	kept := s.login.PhoneCode("13900009999")
	calls := s.login.PhoneCalls()
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"name": "", "phoneCode": kept}), 400, "BAD_REQUEST")
	if s.login.PhoneCalls() != calls {
		t.Errorf("a bad name still asked WeChat for the number")
	}
	s.unchanged(before, "a rejected phone code")

	// WeChat down: 503, nothing changes; the code works once WeChat is back.
	s.login.SetMode(wxloginsim.Unavailable)
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"name": "别的名字", "phoneCode": kept}), 503, "UPSTREAM_UNAVAILABLE")
	s.login.SetMode(wxloginsim.Hang)
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"phoneCode": kept}), 503, "UPSTREAM_UNAVAILABLE")
	s.login.SetMode(wxloginsim.Normal)
	s.unchanged(before, "PUT /me while WeChat is down")
	a = s.call("PUT", "/me", tok, map[string]any{"name": "小美", "phoneCode": kept})
	if a.Status != 200 {
		t.Fatalf("after WeChat came back: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, a.JSON["customer"]), map[string]any{"name": "小美", "phoneMasked": "139****9999"})

	// Without a token: 401.
	s.wantError(s.call("GET", "/me", "", nil), 401, "UNAUTHORIZED")
	s.wantError(s.call("PUT", "/me", "", map[string]any{"name": "x"}), 401, "UNAUTHORIZED")
}

func TestAdminBookingsCarryTheCustomer(t *testing.T) {
	s := newSystem(t)
	const alice = "o-alice-admin"
	tok := s.token(alice)
	s.call("PUT", "/me", tok, map[string]any{"name": "Alice"})
	if a := s.call("PUT", "/me", tok, map[string]any{"phoneCode": s.login.PhoneCode("13811112222")}); a.Status != 200 {
		t.Fatalf("phone: %d %s", a.Status, a.Body)
	}

	// A visit: a free slot reserved and checked in.
	first := s.slot(time.Hour, 2, 0)
	id1, a := s.reserve(alice, first)
	if id1 == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	a = s.call("POST", fmt.Sprintf("/admin/bookings/%d/checkin", id1), testAdmin, nil)
	if a.Status != 200 {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	c := obj(t, obj(t, a.JSON["booking"])["customer"])
	wantCustomer(t, c, map[string]any{"name": "Alice", "phone": "13811112222", "visits": 1.0, "noShows90d": 0.0, "note": nil})
	customerID := c["customerId"]

	// A no-show: the salon books her by phone into a slot under way, and she never came.
	started := s.slot(-30*time.Minute, 2, 5000)
	a = s.walkIn(map[string]any{"slotId": started, "name": "阿丽", "phone": "13811112222"})
	if a.Status != 201 {
		t.Fatalf("walk-in by her phone: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	if b["openid"] != alice || obj(t, b["customer"])["customerId"] != customerID || obj(t, b["customer"])["name"] != "Alice" {
		t.Errorf("her phone did not book as her: %v", b)
	}
	a = s.call("POST", fmt.Sprintf("/admin/bookings/%.0f/noshow", b["bookingId"]), testAdmin, nil)
	if a.Status != 200 {
		t.Fatalf("noshow: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, obj(t, a.JSON["booking"])["customer"]), map[string]any{"visits": 1.0, "noShows90d": 1.0})
	// She sees the no-show too (her own count, the NO_SHOW_LIMIT count).
	if me := s.me(alice); me["noShows90d"] != 1.0 {
		t.Errorf("GET /me noShows90d: %v", me)
	}

	// The salon's note.
	path := fmt.Sprintf("/admin/customers/%.0f", customerID)
	a = s.call("PATCH", path, testAdmin, map[string]any{"note": " 对甲油胶过敏 "})
	if a.Status != 200 {
		t.Fatalf("PATCH note: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, a.JSON["customer"]), map[string]any{"note": "对甲油胶过敏", "name": "Alice", "visits": 1.0})
	a = s.call("GET", "/admin/bookings?date="+shopDate(t, time.Now().Add(-30*time.Minute)), testAdmin, nil)
	found := false
	for _, v := range a.JSON["bookings"].([]any) {
		bj := obj(t, v)
		if bj["customer"] == nil {
			t.Errorf("an admin booking without its customer: %v", bj)
			continue
		}
		if bj["openid"] == alice {
			found = true
			wantCustomer(t, obj(t, bj["customer"]), map[string]any{"note": "对甲油胶过敏", "phone": "13811112222", "noShows90d": 1.0})
		}
	}
	if !found {
		t.Errorf("alice not in the day's bookings: %s", a.Body)
	}
	// The customer's own views never carry the salon's customer block.
	if a := s.call("GET", "/bookings/mine", tok, nil); strings.Contains(string(a.Body), "对甲油胶过敏") || strings.Contains(string(a.Body), "13811112222") {
		t.Errorf("the customer sees the salon's view: %s", a.Body)
	}

	// A customer who never opened /me still has a customer in the salon's list.
	later := s.slot(3*time.Hour, 2, 0)
	if id, a := s.reserve("o-bob-silent", later); id == 0 {
		t.Fatalf("bob: %d %s", a.Status, a.Body)
	}
	a = s.call("GET", "/admin/bookings?date="+shopDate(t, time.Now().Add(3*time.Hour)), testAdmin, nil)
	for _, v := range a.JSON["bookings"].([]any) {
		if bj := obj(t, v); bj["openid"] == "o-bob-silent" {
			wantCustomer(t, obj(t, bj["customer"]), map[string]any{"name": nil, "phone": nil, "visits": 0.0, "note": nil})
		}
	}

	// Bad notes and ids: a clear error, nothing changes.
	before := s.dbState()
	s.wantError(s.call("PATCH", path, testAdmin, map[string]any{"note": strings.Repeat("注", 201)}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", path, testAdmin, map[string]any{}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", path, testAdmin, map[string]any{"note": "x", "name": "y"}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", "/admin/customers/999999", testAdmin, map[string]any{"note": "x"}), 404, "NOT_FOUND")
	s.wantError(s.call("PATCH", "/admin/customers/abc", testAdmin, map[string]any{"note": "x"}), 400, "BAD_REQUEST")
	s.wantError(s.call("PATCH", path, "", map[string]any{"note": "x"}), 401, "UNAUTHORIZED")
	s.unchanged(before, "bad notes")
	// The same note again is no change and no error; "" clears it.
	if a := s.call("PATCH", path, testAdmin, map[string]any{"note": "对甲油胶过敏"}); a.Status != 200 {
		t.Errorf("the same note again: %d %s", a.Status, a.Body)
	}
	if a := s.call("PATCH", path, testAdmin, map[string]any{"note": ""}); a.Status != 200 || obj(t, a.JSON["customer"])["note"] != nil {
		t.Errorf("clearing the note: %d %s", a.Status, a.Body)
	}
	if a := s.call("PATCH", path, testAdmin, map[string]any{"note": strings.Repeat("注", 200)}); a.Status != 200 {
		t.Errorf("a 200-character note: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestWalkIn(t *testing.T) {
	s := newSystem(t)
	orders := len(s.sim.Orders())

	// A slot under way: the walk-in sitting down now.
	now := s.slot(-30*time.Minute, 2, 5000)
	a := s.walkIn(map[string]any{"slotId": now, "name": " 李女士 "})
	if a.Status != 201 {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	if b["status"] != "confirmed" || b["amountFen"] != 0.0 || b["openid"] != "" {
		t.Errorf("walk-in booking %v", b)
	}
	wantCustomer(t, obj(t, b["customer"]), map[string]any{"name": "李女士", "phone": nil, "visits": 0.0, "noShows90d": 0.0})
	id := int64(b["bookingId"].(float64))
	var event, actor string
	if err := s.store.SQL().QueryRow(`SELECT event, actor FROM t_audit WHERE book_id = ?`, id).Scan(&event, &actor); err != nil || event != "walk_in" || actor != "admin" {
		t.Errorf("audit %q by %q (%v), want walk_in by admin (the bearer token)", event, actor, err)
	}

	// A phone booking for later, then the same phone again while it is unfinished.
	later := s.slot(2*time.Hour, 3, 5000)
	a = s.walkIn(map[string]any{"slotId": later, "name": "王先生", "phone": "13700001111"})
	if a.Status != 201 {
		t.Fatalf("phone booking: %d %s", a.Status, a.Body)
	}
	wang := obj(t, obj(t, a.JSON["booking"])["customer"])
	wangBooking := obj(t, a.JSON["booking"])["bookingId"]
	before := s.dbState()
	s.wantError(s.walkIn(map[string]any{"slotId": now, "name": "王", "phone": "13700001111"}), 409, "ACTIVE_BOOKING_EXISTS")
	s.unchanged(before, "a second unfinished booking by phone")
	// Cancelled, the same phone books again as the same customer; the name the
	// salon typed before gives way to the one it types now.
	if a := s.call("POST", fmt.Sprintf("/admin/bookings/%.0f/cancel", wangBooking), testAdmin, nil); a.Status != 200 || obj(t, a.JSON["booking"])["refund"] != nil {
		t.Fatalf("cancel the phone booking: %d %s", a.Status, a.Body)
	}
	a = s.walkIn(map[string]any{"slotId": now, "name": "王二", "phone": "13700001111"})
	if a.Status != 201 {
		t.Fatalf("the phone again: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, obj(t, a.JSON["booking"])["customer"]), map[string]any{"customerId": wang["customerId"], "name": "王二", "phone": "13700001111"})

	// A mini-program customer who gave her phone: the walk-in is hers, under her
	// one-unfinished rule, against her online booking too.
	const carol = "o-carol-walkin"
	s.call("PUT", "/me", s.token(carol), map[string]any{"phoneCode": s.login.PhoneCode("13922223333")})
	if id, a := s.reserve(carol, later); id == 0 {
		t.Fatalf("carol reserves: %d %s", a.Status, a.Body)
	}
	another := s.slot(6*time.Hour, 2, 0)
	before = s.dbState()
	s.wantError(s.walkIn(map[string]any{"slotId": another, "name": "Carol", "phone": "13922223333"}), 409, "ACTIVE_BOOKING_EXISTS")
	s.unchanged(before, "a walk-in for a customer holding an online booking")

	// A full slot, one that ended, one closed, one beyond the window, one that
	// does not exist; bad names and phones: a clear error, nothing changes.
	full := s.slot(4*time.Hour, 1, 0)
	if id, a := s.reserve("o-dave-full", full); id == 0 {
		t.Fatalf("dave: %d %s", a.Status, a.Body)
	}
	ended := s.slot(-3*time.Hour, 2, 0)
	closed := s.slot(5*time.Hour, 2, 0)
	if a := s.call("PATCH", fmt.Sprintf("/admin/slots/%d", closed), testAdmin, map[string]any{"open": false}); a.Status != 200 {
		t.Fatalf("close: %d %s", a.Status, a.Body)
	}
	far := s.slot(20*24*time.Hour, 2, 0)
	before = s.dbState()
	s.wantError(s.walkIn(map[string]any{"slotId": full, "name": "赵"}), 409, "SOLD_OUT")
	s.wantError(s.walkIn(map[string]any{"slotId": ended, "name": "赵"}), 422, "SLOT_NOT_BOOKABLE")
	s.wantError(s.walkIn(map[string]any{"slotId": closed, "name": "赵"}), 422, "SLOT_NOT_BOOKABLE")
	s.wantError(s.walkIn(map[string]any{"slotId": far, "name": "赵"}), 422, "SLOT_NOT_BOOKABLE")
	s.wantError(s.walkIn(map[string]any{"slotId": 999999, "name": "赵"}), 404, "NOT_FOUND")
	for _, body := range []map[string]any{
		{"slotId": later},
		{"slotId": later, "name": "  "},
		{"slotId": later, "name": strings.Repeat("赵", 21)},
		{"slotId": later, "name": "赵\u0000"},
		{"slotId": later, "name": "赵\u202E"},
		{"slotId": later, "name": "\u3164\u3164"},
		{"slotId": later, "name": "赵", "phone": "1370000111"},
		{"slotId": later, "name": "赵", "phone": "137-0000-1111"},
		{"slotId": later, "name": "赵", "phone": 13700001111},
		{"slotId": later, "name": "赵", "email": "x@y"},
		{"slotId": 0, "name": "赵"},
		{"slotId": "x", "name": "赵"},
	} {
		s.wantError(s.walkIn(body), 400, "BAD_REQUEST")
	}
	s.wantError(s.call("POST", "/admin/bookings", "", map[string]any{"slotId": later, "name": "赵"}), 401, "UNAUTHORIZED")
	s.unchanged(before, "refused walk-ins")

	// No WeChat order and no message for any walk-in, also for the salon's cancel.
	if len(s.sim.Orders()) != orders+1 { // carol's online reservation only
		t.Errorf("%d WeChat orders, want %d", len(s.sim.Orders()), orders+1)
	}
	var messages int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_notification n JOIN t_booking b ON b.book_id = n.book_id WHERE b.out_trade_no IS NULL`).Scan(&messages); err != nil || messages != 0 {
		t.Errorf("%d notifications of walk-ins (%v)", messages, err)
	}
	if n, err := s.store.EnqueueReminders(t.Context(), 24*time.Hour); err != nil {
		t.Fatal(err)
	} else if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_notification n JOIN t_booking b ON b.book_id = n.book_id WHERE b.out_trade_no IS NULL`).Scan(&messages); err != nil || messages != 0 {
		t.Errorf("reminders (%d written) include %d of walk-ins", n, messages)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestWalkInRacesOnlineReservesForTheLastSeat: the salon seats a walk-in while
// customers reserve the same last seat online, with real goroutines through the
// gateway: exactly one of them gets it, by the one conditional UPDATE.
func TestWalkInRacesOnlineReservesForTheLastSeat(t *testing.T) {
	s := newSystem(t)
	const online = 6
	for round := 0; round < 4; round++ {
		slot := s.slot(time.Duration(round+1)*time.Hour, 1, int64(round%2)*5000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, soldOut := map[string]int{}, 0
		start := make(chan struct{})
		record := func(who string, a answer) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case a.Status == 201:
				won[who]++
			case a.Status == 409 && a.code() == "SOLD_OUT":
				soldOut++
			default:
				t.Errorf("round %d %s: %d %s", round, who, a.Status, a.Body)
			}
		}
		for i := 0; i < online; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				_, a := s.reserve(fmt.Sprintf("o-race-%d-%d", round, i), slot)
				record("online", a)
			}(i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			record("walk-in", s.walkIn(map[string]any{"slotId": slot, "name": fmt.Sprintf("到店%d", round)}))
		}()
		close(start)
		wg.Wait()
		if won["online"]+won["walk-in"] != 1 || soldOut != online {
			t.Errorf("round %d: won %v, sold out %d; want exactly one seat sold", round, won, soldOut)
		}
		var booked int
		if err := s.store.SQL().QueryRow(`SELECT booked FROM t_slot WHERE slot_id = ?`, slot).Scan(&booked); err != nil || booked != 1 {
			t.Errorf("round %d: booked %d (%v)", round, booked, err)
		}
	}
	mysqltest.CheckInvariant(t, s.store)
}

// phoneCustomers counts the customer rows of a phone.
func (s *system) phoneCustomers(phone string) int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_customer WHERE phone = ?`, phone).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// TestConcurrentWalkInsWithOneNewPhone: twenty walk-ins with one phone nobody
// has yet, at the same moment, through the gateway with real goroutines: one
// customer row, one booking, the others ACTIVE_BOOKING_EXISTS (one phone is one
// customer, by its unique key, not by a read first).
func TestConcurrentWalkInsWithOneNewPhone(t *testing.T) {
	s := newSystem(t)
	const n = 20
	for round, phone := range []string{"13600000001", "13600000002"} {
		slot := s.slot(time.Duration(round+1)*time.Hour, n, 0)
		var wg sync.WaitGroup
		var mu sync.Mutex
		created, refused := 0, 0
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				a := s.walkIn(map[string]any{"slotId": slot, "name": fmt.Sprintf("同一人%d", i), "phone": phone})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case a.Status == 201:
					created++
				case a.Status == 409 && a.code() == "ACTIVE_BOOKING_EXISTS":
					refused++
				default:
					t.Errorf("round %d walk-in %d: %d %s", round, i, a.Status, a.Body)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if created != 1 || refused != n-1 {
			t.Errorf("round %d: %d booked, %d ACTIVE_BOOKING_EXISTS; want 1 and %d", round, created, refused, n-1)
		}
		if c := s.phoneCustomers(phone); c != 1 {
			t.Errorf("round %d: %d customers with phone %s, want 1", round, c, phone)
		}
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestTheSalonsNameNeverReplacesHers: a walk-in with her phone books as her,
// and the name the salon types never replaces the one she gave herself; it
// does fill in and replace a name the salon typed before.
func TestTheSalonsNameNeverReplacesHers(t *testing.T) {
	s := newSystem(t)
	const amy, bea = "o-amy-name", "o-bea-name"
	s.call("PUT", "/me", s.token(amy), map[string]any{"name": "小美", "phoneCode": s.login.PhoneCode("13811110001")})
	a := s.walkIn(map[string]any{"slotId": s.slot(time.Hour, 2, 0), "name": "王女士", "phone": "13811110001"})
	if a.Status != 201 {
		t.Fatalf("walk-in by her phone: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, obj(t, a.JSON["booking"])["customer"]), map[string]any{"name": "小美", "phone": "13811110001"})
	if c := s.me(amy); c["name"] != "小美" {
		t.Errorf("GET /me after the salon typed another name: %v", c)
	}

	// Bea gave her phone but no name: the salon's names fill it in, the later
	// one replacing the earlier, until she gives her own.
	tok := s.token(bea)
	s.call("PUT", "/me", tok, map[string]any{"phoneCode": s.login.PhoneCode("13811110002")})
	for i, name := range []string{"李小姐", "李贝贝"} {
		slot := s.slot(time.Duration(2+i)*time.Hour, 2, 0)
		a := s.walkIn(map[string]any{"slotId": slot, "name": name, "phone": "13811110002"})
		if a.Status != 201 {
			t.Fatalf("walk-in %d: %d %s", i, a.Status, a.Body)
		}
		if c := s.me(bea); c["name"] != name {
			t.Errorf("after the salon typed %s: %v", name, c)
		}
		s.call("POST", fmt.Sprintf("/admin/bookings/%.0f/cancel", obj(t, a.JSON["booking"])["bookingId"]), testAdmin, nil)
	}
	s.call("PUT", "/me", tok, map[string]any{"name": "Bea"})
	if a := s.walkIn(map[string]any{"slotId": s.slot(4*time.Hour, 2, 0), "name": "李三", "phone": "13811110002"}); a.Status != 201 {
		t.Fatalf("walk-in after her own name: %d %s", a.Status, a.Body)
	}
	if c := s.me(bea); c["name"] != "Bea" {
		t.Errorf("the salon's name replaced hers: %v", c)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestHerPhoneJoinsTheWalkIn: a walk-in customer the salon knows by phone (a
// visit, a booking ahead, an allergy noted) gives that phone in the
// mini-program: one customer from then on, hers, with the walk-in's bookings,
// visits and note (joined below her own note); her name stays hers.
func TestHerPhoneJoinsTheWalkIn(t *testing.T) {
	s := newSystem(t)
	const phone = "13822220001"
	const cara = "o-cara-join"

	// The walk-in: a visit (checked in) and the salon's note.
	a := s.walkIn(map[string]any{"slotId": s.slot(-30*time.Minute, 2, 0), "name": "陈女士", "phone": phone})
	if a.Status != 201 {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	visit := obj(t, a.JSON["booking"])
	walkInID := obj(t, visit["customer"])["customerId"]
	if a := s.call("POST", fmt.Sprintf("/admin/bookings/%.0f/checkin", visit["bookingId"]), testAdmin, nil); a.Status != 200 {
		t.Fatalf("checkin: %d %s", a.Status, a.Body)
	}
	if a := s.call("PATCH", fmt.Sprintf("/admin/customers/%.0f", walkInID), testAdmin, map[string]any{"note": "对甲油胶过敏"}); a.Status != 200 {
		t.Fatalf("note: %d %s", a.Status, a.Body)
	}
	// A phone booking ahead, still unfinished.
	ahead := s.slot(5*time.Hour, 2, 0)
	a = s.walkIn(map[string]any{"slotId": ahead, "name": "陈女士", "phone": phone})
	if a.Status != 201 {
		t.Fatalf("phone booking ahead: %d %s", a.Status, a.Body)
	}
	aheadID := obj(t, a.JSON["booking"])["bookingId"]

	// Cara in the mini-program: her name, the salon's note on her, then the phone.
	tok := s.token(cara)
	s.call("PUT", "/me", tok, map[string]any{"name": "Cara"})
	id, a := s.reserve(cara, s.slot(2*time.Hour, 2, 0))
	if id == 0 {
		t.Fatalf("cara reserves: %d %s", a.Status, a.Body)
	}
	// While both hold an unfinished booking they cannot become one: she would
	// hold two. Refused, nothing changes.
	before := s.dbState()
	s.wantError(s.call("PUT", "/me", tok, map[string]any{"phoneCode": s.login.PhoneCode(phone)}), 409, "ACTIVE_BOOKING_EXISTS")
	s.unchanged(before, "a phone whose walk-in holds an unfinished booking while she holds one")
	if a := s.call("POST", fmt.Sprintf("/bookings/%d/cancel", id), tok, nil); a.Status != 200 {
		t.Fatalf("cara cancels: %d %s", a.Status, a.Body)
	}
	mine := s.customerOf(cara)
	if a := s.call("PATCH", fmt.Sprintf("/admin/customers/%d", mine.ID), testAdmin, map[string]any{"note": "喜欢裸色"}); a.Status != 200 {
		t.Fatalf("her note: %d %s", a.Status, a.Body)
	}

	a = s.call("PUT", "/me", tok, map[string]any{"phoneCode": s.login.PhoneCode(phone)})
	if a.Status != 200 {
		t.Fatalf("PUT phoneCode: %d %s", a.Status, a.Body)
	}
	wantCustomer(t, obj(t, a.JSON["customer"]), map[string]any{"name": "Cara", "phoneMasked": "138****0001"})
	if c := s.phoneCustomers(phone); c != 1 {
		t.Errorf("%d customers with the phone, want 1", c)
	}
	// The walk-in's bookings are hers: the one ahead answers with her as its
	// customer, her visit counted, both notes kept.
	a = s.call("GET", "/admin/bookings?date="+shopDate(t, time.Now().Add(5*time.Hour)), testAdmin, nil)
	found := false
	for _, v := range a.JSON["bookings"].([]any) {
		if bj := obj(t, v); bj["bookingId"] == aheadID {
			found = true
			if bj["openid"] != cara {
				t.Errorf("the walk-in's booking ahead is not hers: %v", bj)
			}
			wantCustomer(t, obj(t, bj["customer"]), map[string]any{"customerId": float64(mine.ID), "name": "Cara", "phone": phone,
				"visits": 1.0, "note": "喜欢裸色\n对甲油胶过敏"})
		}
	}
	if !found {
		t.Errorf("the booking ahead is not in the day: %s", a.Body)
	}
	var left int
	s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_customer WHERE customer_id = ?`, walkInID).Scan(&left)
	if left != 0 {
		t.Errorf("the walk-in's row is still there")
	}
	// And the salon's next walk-in with the phone books as her, under her rule.
	s.wantError(s.walkIn(map[string]any{"slotId": s.slot(6*time.Hour, 2, 0), "name": "陈", "phone": phone}), 409, "ACTIVE_BOOKING_EXISTS")

	// Another mini-program customer who gives the same number (WeChat vouches
	// it is hers now) takes the number only; Cara keeps her bookings and note.
	const dora = "o-dora-join"
	if a := s.call("PUT", "/me", s.token(dora), map[string]any{"phoneCode": s.login.PhoneCode(phone)}); a.Status != 200 {
		t.Fatalf("dora: %d %s", a.Status, a.Body)
	}
	if c := s.me(cara); c["phoneMasked"] != nil || c["name"] != "Cara" {
		t.Errorf("cara after dora took the number: %v", c)
	}
	if c := s.customerOf(cara); c.Note != "喜欢裸色\n对甲油胶过敏" || c.Visits != 1 || c.Phone != "" {
		t.Errorf("cara's record after dora took the number: %v", c)
	}
	if c := s.phoneCustomers(phone); c != 1 {
		t.Errorf("%d customers with the phone, want 1", c)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// customerOf is the customer of openid as the salon's views see her (the
// store's answer, with her counts and the note).
func (s *system) customerOf(openid string) *booking.Customer {
	s.t.Helper()
	c, err := s.store.CustomerByOpenID(s.t.Context(), openid)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}
