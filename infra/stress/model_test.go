package stress

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wechatpay/wxpaysim"
)

// An op is one step of the schedule. The schedule is generated from the seed
// alone, so a seed always replays the same operations in the same waves; which
// booking an op ends up acting on depends on what the concurrent ops did, as it
// would for real customers.
type op struct {
	idx   int
	kind  string
	cust  int
	other int
	slot  int
	n     int
	seed  uint64
}

// weights of the op kinds: customers, the salon, the timer, WeChat, and faults.
var weights = []struct {
	kind  string
	w     int
	fault bool
}{
	{"reserve", 16, false},
	{"reserve-key", 14, false},    // with Idempotency-Key and retries on 5xx
	{"reserve-drop", 5, false},    // the answer is lost; the client retries with its key
	{"reserve-old-key", 3, false}, // an old key again, same or other slot
	{"pay", 16, false},
	{"pay-again", 4, false}, // POST /bookings/{id}/pay, the customer closed the sheet
	{"pay-dup", 4, false},   // a notification delivered again, or several at once
	{"pay-late", 4, false},  // paid after the hold was released or cancelled
	{"cancel", 7, false},
	{"reschedule", 6, false},       // the customer moves her confirmed booking to a slot
	{"salon-reschedule", 4, false}, // the salon moves a booking to a slot
	{"peek", 3, false},             // someone else's booking through pay and cancel
	{"salon-cancel", 3, false},
	{"capacity", 3, false},
	{"checkin", 4, false},
	{"checkin-code", 3, false}, // the customer shows today's check-in code, the salon checks her in by it
	{"walk-in", 3, false},      // the salon takes someone at the counter or on the phone
	{"noshow", 2, false},       // the salon marks a confirmed booking as a no-show
	{"wait", 4, false},         // join a slot's waitlist (409 SEATS_AVAILABLE when it has a seat)
	{"leave", 1, false},        // leave a slot's waitlist
	{"slot-soon", 1, false},    // a slot's start comes within the free-cancel window
	{"slot-over", 1, false},    // a slot's appointment is over (no-shows fall due)
	{"release", 6, false},
	{"time-passes", 5, false}, // holds expire, release leases lapse
	{"redeliver", 4, false},   // WeChat retries a notification that failed
	{"refund-done", 4, false}, // WeChat finishes a refund and notifies
	// A technician's time for a service (technician_test.go).
	{"tech-reserve", 10, false},   // a service at a start, with a technician named or any
	{"tech-move", 4, false},       // the customer moves her service's booking to a start
	{"tech-salon-move", 3, false}, // the salon moves one
	{"tech-walk-in", 3, false},    // a service for someone at the counter
	{"tech-off", 2, false},        // time off over a range, half the time over a booked cell
	{"tech-back", 1, false},       // the time off is taken back
	{"kill-conns", 3, true},
	{"db-down", 1, true},
	{"wx-fail", 4, true},
	{"wx-hang", 1, true},
	{"wx-slow", 1, true},
	{"cls-down", 1, true},
	{"notify-drop", 2, true},
	{"msg-fail", 2, true},   // WeChat's message API fails the next sends
	{"msg-refuse", 1, true}, // a customer has no subscription (43101)
}

type plan struct {
	waves       [][]op
	checkpoints map[int]bool // after these waves
}

func genPlan(seed uint64, ops, customers, slots int) plan {
	r := rand.New(rand.NewPCG(seed, 0x5a10))
	total := 0
	for _, w := range weights {
		total += w.w
	}
	p := plan{checkpoints: map[int]bool{}}
	var wave []op
	size := 1 + r.IntN(10)
	for i := range ops {
		x := r.IntN(total)
		kind := ""
		for _, w := range weights {
			if x < w.w {
				kind = w.kind
				break
			}
			x -= w.w
		}
		o := op{idx: i, kind: kind, cust: r.IntN(customers), other: r.IntN(customers), slot: r.IntN(slots), n: 1 + r.IntN(3), seed: r.Uint64()}
		wave = append(wave, o)
		if len(wave) == size || i == ops-1 {
			p.waves = append(p.waves, wave)
			if r.IntN(8) == 0 {
				p.checkpoints[len(p.waves)-1] = true
			}
			wave, size = nil, 1+r.IntN(10)
		}
	}
	return p
}

type customer struct {
	openid string
	token  string
}

type slotInfo struct {
	id    int64
	date  string
	price int64
}

type keyUse struct {
	key  string
	slot slotInfo // the slot the key reserved, even once the model replaced it
}

// model runs the schedule and keeps what the test knows as a client would: the
// bookings it was told about, the idempotency keys it used, and the
// notifications WeChat still has to deliver.
type model struct {
	s         *system
	seed      uint64
	customers []*customer
	slots     []slotInfo
	dates     []string

	mu          sync.Mutex
	owner       map[int64]int    // booking id -> customer
	keyBooking  map[string]int64 // customer/key -> booking id
	keys        [][]keyUse       // per customer
	payQueue    map[string]bool  // out_trade_no whose payment notification WeChat must deliver again
	refundQueue map[string]bool  // out_refund_no whose refund notification WeChat must deliver again
	ops         map[string]int
	moves       map[string]int // reschedules answered 200, by op kind
	answers     map[string]int
	lifts       map[int][]func() // wave -> faults to lift after it
	wave        int
	killed      int          // database connections killed
	menu        menu         // the services and technicians, set up at the start
	seq         atomic.Int64 // unique offsets for moved and new slots' start times
}

func newModel(s *system, seed uint64, customers int) *model {
	m := &model{s: s, seed: seed, owner: map[int64]int{}, keyBooking: map[string]int64{}, keys: make([][]keyUse, customers),
		payQueue: map[string]bool{}, refundQueue: map[string]bool{}, ops: map[string]int{}, moves: map[string]int{}, answers: map[string]int{}, lifts: map[int][]func(){}}
	for i := range customers {
		openid := fmt.Sprintf("o-stress-%04d", i)
		m.customers = append(m.customers, &customer{openid: openid, token: s.token(openid)})
	}
	// Slots of few seats so that customers compete, two of them free (confirmed
	// at reserve, no deposit). Each price is the price of two slots, of the same
	// size: a customer moves only to a slot of her slot's price, so every
	// booking has somewhere to move to.
	loc, _ := time.LoadLocation("Asia/Shanghai")
	prices := []int64{5000, 8000, 0, 3000, 5000, 8000, 0, 3000}
	for i, price := range prices {
		id := mysqltest.AddSlot(s.t, s.store, 30*time.Hour+time.Duration(i)*2*time.Hour, 1+i%4, price)
		sl, err := s.store.FindSlot(context.Background(), id)
		if err != nil {
			s.t.Fatal(err)
		}
		date := sl.StartAt.In(loc).Format("2006-01-02")
		m.slots = append(m.slots, slotInfo{id: id, date: date, price: price})
		if !slices.Contains(m.dates, date) {
			m.dates = append(m.dates, date)
		}
	}
	// Slots moved by slot-soon and slot-over are listed under today or yesterday,
	// and the fresh slots that replace them within the next three days.
	for d := -1; d <= 3; d++ {
		at := time.Now().Add(time.Duration(d) * 24 * time.Hour)
		if date := at.In(loc).Format("2006-01-02"); !slices.Contains(m.dates, date) {
			m.dates = append(m.dates, date)
		}
	}
	m.setUpMenu()
	return m
}

func (m *model) count(kind string) {
	m.mu.Lock()
	m.ops[kind]++
	m.mu.Unlock()
}

func (m *model) answered(what string, a answer) {
	m.mu.Lock()
	k := what + " " + strconv.Itoa(a.Status)
	if c := a.code(); c != "" {
		k += " " + c
	}
	m.answers[k]++
	m.mu.Unlock()
}

// expect records an answer and reports it if its status or code is not one the
// design allows for this call. A fault may make any call answer 503, naming what
// failed: UNAVAILABLE (the database, with Retry-After) or UPSTREAM_UNAVAILABLE
// (WeChat). 500 never: every fault the run injects has a 503 of its own.
func (m *model) expect(what string, a answer, ok ...string) {
	m.answered(what, a)
	switch {
	case a.Status == 0:
		return // a transport error, reported by call
	case a.Status == http.StatusInternalServerError:
		m.s.violate("op %s: 500 %s under a fault that has its own 503: %s", what, a.code(), a.Body)
		return
	case a.Status == http.StatusServiceUnavailable:
		switch a.code() {
		case booking.EUNAVAILABLE:
			if a.Header.Get("Retry-After") == "" {
				m.s.violate("op %s: 503 UNAVAILABLE without Retry-After", what)
			}
		case booking.EUPSTREAM:
		default:
			m.s.violate("op %s: 503 that names neither the database nor WeChat: %s", what, a.Body)
		}
		return
	case a.Status >= 500:
		return // the gateway's own (a function that timed out): not the product's answer
	}
	got := strconv.Itoa(a.Status)
	if a.Status >= 400 {
		got += " " + a.code()
	}
	if !slices.Contains(ok, got) {
		m.s.violate("op %s: unexpected answer %s: %s", what, got, a.Body)
	}
}

func (m *model) lift(after int, f func()) {
	m.mu.Lock()
	m.lifts[m.wave+after] = append(m.lifts[m.wave+after], f)
	m.mu.Unlock()
}

func (m *model) run(p plan) {
	for w, wave := range p.waves {
		m.mu.Lock()
		m.wave = w
		m.mu.Unlock()
		var wg sync.WaitGroup
		for _, o := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.do(o)
			}()
		}
		wg.Wait()
		m.mu.Lock()
		lifts := m.lifts[w]
		delete(m.lifts, w)
		m.mu.Unlock()
		for _, f := range lifts {
			f()
		}
		if p.checkpoints[w] {
			m.s.gw.Wait()
			m.check(false)
		}
	}
}

func bookingIDOf(a answer) int64 {
	b, _ := a.JSON["booking"].(map[string]any)
	id, _ := b["bookingId"].(float64)
	return int64(id)
}

func (m *model) do(o op) {
	m.count(o.kind)
	r := rand.New(rand.NewPCG(o.seed, 7))
	s := m.s
	c := m.customers[o.cust]
	ctx := context.Background()
	switch o.kind {
	case "reserve":
		m.reserve(o, c, "", false, o.n-1)
	case "reserve-key":
		m.reserve(o, c, fmt.Sprintf("key-%d", o.idx), false, o.n)
	case "reserve-drop":
		m.reserve(o, c, fmt.Sprintf("key-%d", o.idx), true, o.n)
	case "reserve-old-key":
		m.reserveOldKey(o, r, c)
	case "pay", "pay-again":
		b := m.newest(c, o.cust, "pending_payment")
		if b == 0 {
			return
		}
		no := booking.OutTradeNo(b)
		if _, ok := s.sim.Order(no); !ok || o.kind == "pay-again" {
			a := s.call("POST", "/bookings/"+itoa(b)+"/pay", c.token, nil)
			m.expect("pay-again", a, "200", "409 INVALID_STATE")
			bk, _ := a.JSON["booking"].(map[string]any)
			// A free waitlist offer has nothing to pay: /pay accepts it, confirmed.
			free := bk != nil && bk["amountFen"] == 0.0 && bk["status"] == "confirmed"
			if a.Status == 200 && a.JSON["payment"] == nil && !free {
				s.violate("pay again of booking %d: 200 without payment parameters: %s", b, a.Body)
			}
		}
		m.pay(ctx, no, false)
	case "pay-dup":
		var paid []string
		for _, o := range s.sim.Orders() {
			if o.State == wxpaysim.StateSuccess {
				paid = append(paid, o.OutTradeNo)
			}
		}
		if len(paid) == 0 {
			return
		}
		no := paid[r.IntN(len(paid))]
		var err error
		if r.IntN(2) == 0 {
			err = s.sim.NotifyConcurrently(ctx, no, 2+r.IntN(2))
		} else {
			err = s.sim.Notify(ctx, no)
		}
		if err != nil {
			m.queuePay(no)
		}
	case "pay-late":
		b := m.newest(c, o.cust, "expired", "cancelled")
		if b == 0 {
			return
		}
		no := booking.OutTradeNo(b)
		if ord, ok := s.sim.Order(no); ok && ord.State != wxpaysim.StateSuccess {
			m.pay(ctx, no, true)
		}
	case "cancel":
		b := m.newest(c, o.cust, "pending_payment", "confirmed")
		if b == 0 {
			return
		}
		// Half the customers accept losing the deposit of a late cancel.
		var body any
		if r.IntN(2) == 0 {
			body = map[string]any{"forfeitDeposit": true}
		}
		a := s.call("POST", "/bookings/"+itoa(b)+"/cancel", c.token, body)
		m.expect("cancel", a, "200", "409 INVALID_STATE", "409 LATE_CANCEL")
		if a.Status == 200 {
			if st, _ := a.JSON["booking"].(map[string]any)["status"].(string); st != "cancelled" {
				s.violate("cancel of booking %d answered 200 with status %q", b, st)
			}
		}
	case "reschedule":
		// Three times in four, a move the rules allow as far as the model can
		// see: a customer whose confirmed booking she may still move, to a free
		// seat of its price. Otherwise her newest confirmed booking to any slot
		// (mostly a refusal). Concurrent ops of the wave may take the seat or
		// change the booking meanwhile: then it is a refusal too.
		b, sl := int64(0), m.slot(o.slot).id
		if r.IntN(4) != 0 {
			var cust int
			if cust, b, sl = m.movable(r, false); b != 0 {
				c = m.customers[cust]
			}
		}
		if b == 0 {
			if b = m.newest(c, o.cust, "confirmed"); b == 0 {
				return
			}
			sl = m.slot(o.slot).id
		}
		a := s.call("POST", "/bookings/"+itoa(b)+"/reschedule", c.token, map[string]any{"slotId": sl})
		m.expect("reschedule", a, "200", "409 INVALID_STATE", "409 LATE_RESCHEDULE", "409 RESCHEDULE_LIMIT", "409 PRICE_DIFFERS",
			"409 SOLD_OUT", "422 SLOT_NOT_BOOKABLE")
		m.moved("reschedule", b, sl, a)
	case "salon-reschedule":
		// Three times in four, a confirmed booking to a slot with a free seat
		// that has not started (any price, open or closed: the salon's move);
		// otherwise one of a day's bookings in any status, or a confirmed one, to
		// any slot.
		b, sl := int64(0), m.slot(o.slot).id
		if r.IntN(4) != 0 {
			_, b, sl = m.movable(r, true)
		}
		if b == 0 {
			want := []string{"confirmed"}
			if r.IntN(5) == 0 {
				want = nil // any booking: the answer must then be a clean refusal
			}
			if b = m.salonPick(r, want...); b == 0 {
				return
			}
			sl = m.slot(o.slot).id
		}
		a := s.call("POST", "/admin/bookings/"+itoa(b)+"/reschedule", adminToken, map[string]any{"slotId": sl})
		m.expect("salon-reschedule", a, "200", "409 INVALID_STATE", "409 SOLD_OUT", "422 SLOT_NOT_BOOKABLE")
		m.moved("salon-reschedule", b, sl, a)
	case "peek":
		m.peek(r, c, o.cust)
	case "checkin-code":
		m.checkinByCode(r, c)
	case "walk-in":
		// Someone at the counter, by name only, or on the phone with one of a
		// few numbers (a phone the salon knows books as that customer).
		sl := m.slot(o.slot)
		body := map[string]any{"slotId": sl.id, "name": "到店顾客"}
		if n := r.IntN(4); n > 0 {
			body["phone"] = fmt.Sprintf("1380000000%d", n)
		}
		a := s.call("POST", "/admin/bookings", adminToken, body)
		m.expect("walk-in", a, "201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "422 SLOT_NOT_BOOKABLE")
		if a.Status == http.StatusCreated {
			if b, _ := a.JSON["booking"].(map[string]any); b["status"] != "confirmed" || b["amountFen"] != 0.0 {
				s.violate("walk-in answered %v", b)
			}
		}
	case "salon-cancel", "checkin":
		want := []string{"pending_payment", "confirmed"}
		if o.kind == "checkin" {
			want = []string{"confirmed", "no_show"}
		}
		if r.IntN(5) == 0 {
			want = nil // any booking: the answer must then be a clean refusal
		}
		b := m.salonPick(r, want...)
		if b == 0 {
			return
		}
		verb := "cancel"
		if o.kind == "checkin" {
			verb = "checkin"
		}
		a := s.call("POST", "/admin/bookings/"+itoa(b)+"/"+verb, adminToken, nil)
		// TOO_EARLY: a check-in before CHECKIN_OPENS_BEFORE. When exactly is
		// the handler tests' to prove; here ops of one wave move slots and
		// bookings concurrently, so the answer is only required to be clean.
		m.expect(o.kind, a, "200", "409 INVALID_STATE", "409 TOO_EARLY")
	case "wait":
		sl := m.slot(o.slot)
		a := s.call("POST", "/slots/"+itoa(sl.id)+"/waitlist", c.token, nil)
		m.expect("wait", a, "201", "409 SEATS_AVAILABLE", "409 WAITLIST_LIMIT", "422 SLOT_NOT_BOOKABLE", "409 INVALID_STATE")
		if a.code() == booking.EINVALIDSTATE {
			// Only for a customer who held a seat of that slot herself when she
			// asked: she has a booking of it (which a concurrent op of this wave
			// may have cancelled or let expire since).
			// (or that she has moved to another slot since).
			// The checker's own read may be among the connections a fault
			// killed: then it knows nothing, and says nothing.
			var had bool
			err := s.store.SQL().QueryRow(`SELECT EXISTS (SELECT 1 FROM t_booking WHERE slot_id = ? AND openid = ?)
				OR EXISTS (SELECT 1 FROM t_audit a JOIN t_booking b ON b.book_id = a.book_id WHERE b.openid = ? AND a.event = ?)`,
				sl.id, c.openid, c.openid, booking.EventReschedule).Scan(&had)
			if err == nil && !had {
				s.violate("wait: 409 INVALID_STATE for %s, who has no booking of slot %d", c.openid, sl.id)
			}
		}
	case "leave":
		sl := m.slot(o.slot)
		a := s.call("DELETE", "/slots/"+itoa(sl.id)+"/waitlist", c.token, nil)
		m.expect("leave", a, "204")
	case "noshow":
		want := []string{"confirmed"}
		if r.IntN(4) == 0 {
			want = nil
		}
		if b := m.salonPick(r, want...); b != 0 {
			a := s.call("POST", "/admin/bookings/"+itoa(b)+"/noshow", adminToken, nil)
			m.expect("noshow", a, "200", "409 INVALID_STATE", "409 TOO_EARLY") // before the start

		}
	case "slot-soon":
		// Starts in about an hour: inside CANCEL_FREE_HOURS, still bookable. The
		// offset per slot keeps the start times unique.
		s.store.SQL().Exec(`UPDATE t_slot SET start_at = UTC_TIMESTAMP() + INTERVAL ? MINUTE,
			end_at = UTC_TIMESTAMP() + INTERVAL ? MINUTE WHERE slot_id = ? AND start_at > UTC_TIMESTAMP() + INTERVAL 2 HOUR`,
			60+o.slot, 150+o.slot, m.slot(o.slot).id)
	case "slot-over":
		// The appointment started three hours ago and ended more than
		// NO_SHOW_GRACE ago: the next release run marks who never came.
		// The over slot keeps its bookings (the release run marks its no-shows)
		// and a fresh slot takes its place in the schedule, so a long run never
		// runs out of slots to book.
		m.mu.Lock()
		over := m.slots[o.slot]
		m.mu.Unlock()
		s.store.SQL().Exec(`UPDATE t_slot SET start_at = UTC_TIMESTAMP() - INTERVAL ? SECOND,
			end_at = UTC_TIMESTAMP() - INTERVAL ? SECOND WHERE slot_id = ? AND start_at > UTC_TIMESTAMP()`,
			3*3600+m.seq.Add(1), 5400, over.id)
		m.replaceSlot(o.slot)
	case "capacity":
		sl := m.slot(o.slot)
		a := s.call("PATCH", "/admin/slots/"+itoa(sl.id), adminToken, map[string]any{"capacity": 1 + r.IntN(4)})
		m.expect("capacity", a, "200", "409 INVALID_STATE")
	case "release":
		if _, err := s.runRelease(); err != nil {
			m.count("release-failed")
		}
	case "time-passes":
		// Some holds run out, and so do release leases (a run died or is slow).
		s.store.SQL().Exec(`UPDATE t_booking SET lock_expire = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND
			WHERE status = 0 ORDER BY book_id DESC LIMIT ?`, o.n)
		s.store.SQL().Exec(`UPDATE t_booking SET claim_until = '1970-01-01' WHERE claim_until > '1970-01-01'`)
		// And some refunds' backoff, or their wait before a query, runs out.
		s.store.SQL().Exec(`UPDATE t_booking SET refund_next_at = UTC_TIMESTAMP(6), refund_requested_at = refund_requested_at - INTERVAL 1 HOUR
			WHERE refund_status IN ('pending', 'processing') ORDER BY book_id DESC LIMIT ?`, o.n)
	case "tech-reserve", "tech-move", "tech-salon-move", "tech-walk-in", "tech-off", "tech-back":
		m.doTechnician(o, r, c)
	case "redeliver":
		m.redeliver(ctx, r, false)
	case "refund-done":
		var processing []string
		for _, rf := range s.sim.Refunds() {
			if rf.Status == wxpaysim.RefundProcessing {
				processing = append(processing, rf.OutRefundNo)
			}
		}
		if len(processing) > 0 {
			no := processing[r.IntN(len(processing))]
			if err := s.sim.CompleteRefund(ctx, no, wxpaysim.RefundSuccess); err != nil {
				m.queueRefund(no)
			}
		}

	case "kill-conns":
		for range 3 {
			n := s.killConnections()
			m.mu.Lock()
			m.killed += n
			m.mu.Unlock()
		}
	case "db-down":
		s.proxy.SetDown(true)
		m.lift(0, func() { s.proxy.SetDown(false) })
	case "wx-fail":
		prefixes := []string{"/v3/pay/transactions/jsapi", "/v3/pay/transactions/out-trade-no/", "/v3/refund/domestic/refunds", "/v3/"}
		kinds := []struct {
			status int
			code   string
		}{{500, "SYSTEM_ERROR"}, {503, "SYSTEM_ERROR"}, {429, "FREQUENCY_LIMITED"},
			{wxpaysim.Drop, ""}, {wxpaysim.ActThenDrop, ""}, {wxpaysim.BadSignature, ""}}
		k := kinds[r.IntN(len(kinds))]
		s.sim.FailNext(prefixes[r.IntN(len(prefixes))], k.status, k.code, o.n)
		m.count("wx-fail:" + strconv.Itoa(k.status))
	case "msg-fail":
		s.login.FailNextSends(o.n * 3)
	case "msg-refuse":
		s.login.RefuseMessagesFor(c.openid)
	case "wx-hang":
		s.hang.Add(int32(o.n))
	case "wx-slow":
		s.sim.SetLatency(time.Duration(5+r.IntN(40)) * time.Millisecond)
		m.lift(o.n-1, func() { s.sim.SetLatency(0) })
	case "cls-down":
		s.cls.SetDown(true)
		m.lift(o.n-1, func() { s.cls.SetDown(false) })
	case "notify-drop":
		s.notifyDrop.Add(int32(o.n))
	default:
		panic("unknown op " + o.kind)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// reserve books o.slot for c. With a key, a failed or lost answer is retried with
// the same key, which must name the same reservation.
func (m *model) reserve(o op, c *customer, key string, dropFirst bool, retries int) {
	sl := m.slot(o.slot)
	var hdr []string
	if key != "" {
		hdr = []string{"Idempotency-Key", key}
		m.mu.Lock()
		m.keys[o.cust] = append(m.keys[o.cust], keyUse{key, sl})
		m.mu.Unlock()
	}
	for attempt := 0; attempt <= retries; attempt++ {
		a := m.s.call("POST", "/bookings", c.token, map[string]any{"slotId": sl.id}, hdr...)
		ok := []string{"201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "422 SLOT_NOT_BOOKABLE"}
		m.expect("reserve", a, ok...)
		switch {
		case a.Status == http.StatusCreated:
			m.created(o.cust, key, sl, a)
			if attempt == 0 && dropFirst {
				continue // the answer never reached the phone
			}
			return
		case a.Status >= 500:
			continue
		default:
			return
		}
	}
}

// created checks a 201 from reserve and records what the customer learned.
func (m *model) created(cust int, key string, sl slotInfo, a answer) {
	id := bookingIDOf(a)
	b, _ := a.JSON["booking"].(map[string]any)
	if id <= 0 || b == nil {
		m.s.violate("reserve answered 201 without a booking: %s", a.Body)
		return
	}
	if got, _ := b["slotId"].(float64); int64(got) != sl.id && !m.wasMoved(id) {
		// A key names its booking wherever it was moved since (reschedule).
		m.s.violate("reserve of slot %d answered booking %d of slot %v", sl.id, id, b["slotId"])
	}
	if b["status"] == "pending_payment" && a.JSON["payment"] == nil {
		m.s.violate("reserve answered pending booking %d without payment parameters", id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner[id] = cust
	if key == "" {
		return
	}
	k := strconv.Itoa(cust) + "/" + key
	if prev, ok := m.keyBooking[k]; ok && prev != id {
		m.s.violate("idempotency key %s of customer %d named booking %d, now %d", key, cust, prev, id)
	}
	m.keyBooking[k] = id
}

func (m *model) reserveOldKey(o op, r *rand.Rand, c *customer) {
	m.mu.Lock()
	used := slices.Clone(m.keys[o.cust])
	m.mu.Unlock()
	if len(used) == 0 {
		return
	}
	u := used[r.IntN(len(used))]
	m.mu.Lock()
	known, committed := m.keyBooking[strconv.Itoa(o.cust)+"/"+u.key]
	m.mu.Unlock()
	slot := u.slot
	if committed && r.IntN(3) == 0 {
		other := m.slot(r.IntN(len(m.slots)))
		if other.id == slot.id {
			return
		}
		a := m.s.call("POST", "/bookings", c.token, map[string]any{"slotId": other.id}, "Idempotency-Key", u.key)
		m.expect("reserve-old-key-other-slot", a, "409 INVALID_STATE")
		return
	}
	a := m.s.call("POST", "/bookings", c.token, map[string]any{"slotId": slot.id}, "Idempotency-Key", u.key)
	if committed {
		m.expect("reserve-old-key", a, "201")
	} else {
		m.expect("reserve-old-key", a, "201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "422 SLOT_NOT_BOOKABLE")
	}
	if a.Status == http.StatusCreated {
		if committed && bookingIDOf(a) != known {
			m.s.violate("old key %s named booking %d, now %d", u.key, known, bookingIDOf(a))
		}
		m.created(o.cust, u.key, slot, a)
	}
}

// newest is the customer's newest booking in one of the statuses, as the
// mini-program's list shows it; 0 when there is none or the list failed.
func (m *model) newest(c *customer, cust int, statuses ...string) int64 {
	a := m.s.call("GET", "/bookings/mine", c.token, nil)
	m.expect("mine", a, "200")
	if a.Status != http.StatusOK {
		return 0
	}
	list, _ := a.JSON["bookings"].([]any)
	var pick int64
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range list {
		b, _ := x.(map[string]any)
		id, _ := b["bookingId"].(float64)
		if owner, ok := m.owner[int64(id)]; ok && owner != cust {
			m.s.violate("customer %d's list shows booking %d of customer %d", cust, int64(id), owner)
		}
		m.owner[int64(id)] = cust
		if st, _ := b["status"].(string); pick == 0 && slices.Contains(statuses, st) {
			pick = int64(id)
		}
	}
	return pick
}

// pay pays an order at WeChat. A delivery that failed is WeChat's to retry.
func (m *model) pay(ctx context.Context, no string, late bool) {
	var err error
	if late {
		err = m.s.sim.PayLate(ctx, no)
	} else {
		err = m.s.sim.Pay(ctx, no)
	}
	if err != nil {
		if ord, ok := m.s.sim.Order(no); ok && ord.State == wxpaysim.StateSuccess {
			m.queuePay(no)
		}
	}
}

func (m *model) queuePay(no string) {
	m.mu.Lock()
	m.payQueue[no] = true
	m.mu.Unlock()
}

func (m *model) queueRefund(no string) {
	m.mu.Lock()
	m.refundQueue[no] = true
	m.mu.Unlock()
}

// redeliver delivers one (or, when all is true, every) notification WeChat still owes.
func (m *model) redeliver(ctx context.Context, r *rand.Rand, all bool) {
	m.mu.Lock()
	pays := sortedKeys(m.payQueue)
	refunds := sortedKeys(m.refundQueue)
	m.mu.Unlock()
	if !all {
		// One, in no particular order: WeChat's retries are not ordered either.
		if len(pays) > 0 {
			pays = []string{pays[r.IntN(len(pays))]}
		}
		if len(refunds) > 0 {
			refunds = []string{refunds[r.IntN(len(refunds))]}
		}
	}
	for _, no := range pays {
		if err := m.s.sim.Notify(ctx, no); err == nil {
			m.mu.Lock()
			delete(m.payQueue, no)
			m.mu.Unlock()
		}
	}
	for _, no := range refunds {
		if err := m.s.sim.CompleteRefund(ctx, no, wxpaysim.RefundSuccess); err == nil {
			m.mu.Lock()
			delete(m.refundQueue, no)
			m.mu.Unlock()
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// peek tries another customer's booking through every customer endpoint that
// takes an id: it must be NOT_FOUND, exactly like an id that does not exist.
func (m *model) peek(r *rand.Rand, c *customer, cust int) {
	m.mu.Lock()
	var others []int64
	for id, owner := range m.owner {
		if owner != cust {
			others = append(others, id)
		}
	}
	m.mu.Unlock()
	if len(others) == 0 {
		return
	}
	slices.Sort(others)
	id := others[r.IntN(len(others))]
	for _, verb := range []string{"pay", "cancel"} {
		a := m.s.call("POST", "/bookings/"+itoa(id)+"/"+verb, c.token, nil)
		m.expect("peek-"+verb, a, "404 NOT_FOUND")
	}
	m.expect("peek-read", m.s.call("GET", "/bookings/"+itoa(id), c.token, nil), "404 NOT_FOUND")
}

// checkinByCode: the customer's own bookings, and for one that shows a
// check-in code (confirmed, completed or no-show, today), the salon's check-in
// by that code. A code is 8 digits; the booking checked in is hers.
func (m *model) checkinByCode(r *rand.Rand, c *customer) {
	a := m.s.call("GET", "/bookings/mine", c.token, nil)
	m.expect("mine", a, "200")
	list, _ := a.JSON["bookings"].([]any)
	type coded struct {
		id   int64
		code string
	}
	var codes []coded
	for _, x := range list {
		b, _ := x.(map[string]any)
		code, _ := b["checkinCode"].(string)
		id, _ := b["bookingId"].(float64)
		if code == "" {
			continue
		}
		if !booking.ValidCheckinCode(code) {
			m.s.violate("booking %d shows check-in code %q", int64(id), code)
		}
		codes = append(codes, coded{int64(id), code})
	}
	if len(codes) == 0 {
		return
	}
	pick := codes[r.IntN(len(codes))]
	// 404: the slot was moved to another day since the code was read.
	a = m.s.call("POST", "/admin/checkin", adminToken, map[string]any{"code": pick.code})
	m.expect("checkin-code", a, "200", "409 INVALID_STATE", "409 TOO_EARLY", "404 NOT_FOUND")
	if a.Status == http.StatusOK {
		if id, _ := a.JSON["booking"].(map[string]any)["bookingId"].(float64); int64(id) != pick.id {
			m.s.violate("check-in by the code of booking %d checked in booking %d", pick.id, int64(id))
		}
	}
}

// movable picks, from what the database holds now, a confirmed booking of one
// of the model's customers and a slot of the schedule it can move to, and
// answers the customer, the booking and the slot (a zero booking when there is
// none). For the customer's own move (bySalon false): a booking she has not
// moved RescheduleLimit times, whose slot starts after CancelFreeHours from now
// (its cancelFreeUntil is still ahead), to another open slot of the same price
// with a free seat, starting after that window too (the slot-soon op moves
// slots into it). For the salon's: any confirmed booking, to another slot with
// a free seat that has not started.
func (m *model) movable(r *rand.Rand, bySalon bool) (cust int, bookingID, slotID int64) {
	m.mu.Lock()
	ids := make([]any, len(m.slots))
	for i, sl := range m.slots {
		ids[i] = sl.id
	}
	m.mu.Unlock()
	in := strings.Repeat("?, ", len(ids)-1) + "?"
	pol := booking.DefaultPolicy
	bookingCond := `b.reschedules < ? AND s.start_at > UTC_TIMESTAMP(6) + INTERVAL ? HOUR`
	args := []any{booking.StatusConfirmed, pol.RescheduleLimit, pol.CancelFreeHours}
	targetCond := `t.price_fen = s.price_fen AND t.is_open = 1 AND t.start_at > UTC_TIMESTAMP(6) + INTERVAL ? HOUR`
	targetArgs := []any{pol.CancelFreeHours}
	if bySalon {
		bookingCond, args = `TRUE`, []any{booking.StatusConfirmed}
		targetCond, targetArgs = `t.start_at > UTC_TIMESTAMP(6)`, nil
	}
	args = append(append(args, ids...), targetArgs...)
	rows, err := m.s.store.SQL().Query(`SELECT b.openid, b.book_id, t.slot_id
		FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
		JOIN t_slot t ON t.slot_id <> b.slot_id AND t.booked < t.capacity
		WHERE b.status = ? AND b.technician_id IS NULL AND b.openid LIKE 'o-stress-%' AND `+bookingCond+`
		  AND t.slot_id IN (`+in+`) AND `+targetCond+`
		ORDER BY b.book_id, t.slot_id`, args...)
	if err != nil {
		return 0, 0, 0 // a fault killed the checker's connection: no pick
	}
	defer rows.Close()
	type move struct {
		openid        string
		bookingID, to int64
	}
	var moves []move
	for rows.Next() {
		var mv move
		if rows.Scan(&mv.openid, &mv.bookingID, &mv.to) == nil {
			moves = append(moves, mv)
		}
	}
	if rows.Err() != nil || len(moves) == 0 {
		return 0, 0, 0
	}
	mv := moves[r.IntN(len(moves))]
	n, err := strconv.Atoi(strings.TrimPrefix(mv.openid, "o-stress-"))
	if err != nil || n >= len(m.customers) {
		return 0, 0, 0
	}
	return n, mv.bookingID, mv.to
}

// moved checks a reschedule's 200: the booking answered is confirmed, in the
// slot asked for. It counts the moves that succeeded, by who moved.
func (m *model) moved(what string, b, slot int64, a answer) {
	if a.Status != http.StatusOK {
		return
	}
	m.mu.Lock()
	m.moves[what]++
	m.mu.Unlock()
	bk, _ := a.JSON["booking"].(map[string]any)
	if st, _ := bk["status"].(string); st != "confirmed" || bk["slotId"] != float64(slot) || bk["bookingId"] != float64(b) {
		m.s.violate("%s of booking %d to slot %d answered 200 with %v", what, b, slot, bk)
	}
}

// salonPick lists the salon's bookings of a slot day and picks one in a status.
func (m *model) salonPick(r *rand.Rand, statuses ...string) int64 {
	date := m.dates[r.IntN(len(m.dates))]
	a := m.s.call("GET", "/admin/bookings?date="+date, adminToken, nil)
	m.expect("admin-list", a, "200")
	if a.Status != http.StatusOK {
		return 0
	}
	list, _ := a.JSON["bookings"].([]any)
	var ids []int64
	for _, x := range list {
		b, _ := x.(map[string]any)
		st, _ := b["status"].(string)
		id, _ := b["bookingId"].(float64)
		if len(statuses) == 0 || slices.Contains(statuses, st) {
			ids = append(ids, int64(id))
		}
	}
	if len(ids) == 0 {
		return 0
	}
	return ids[r.IntN(len(ids))]
}

// killConnections kills every connection to the test database but its own, from
// a second connection, wherever the others are: mid-transaction, mid-query, idle.
func (s *system) killConnections() int {
	rows, err := s.killer.Query(`SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()`, s.dbName)
	if err != nil {
		return 0
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	n := 0
	for _, id := range ids {
		// The id comes from the server, not from input.
		if _, err := s.killer.Exec("KILL " + strconv.FormatInt(id, 10)); err == nil {
			n++
		}
	}
	return n
}

// slot is the model's slot i, as the schedule stands now.
func (m *model) slot(i int) slotInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.slots[i]
}

// replaceSlot puts a fresh slot of the same price and size in place i of the
// schedule, starting a little over a day from now. The checker's own connections
// may be among those a fault just killed, so it tries a few times.
func (m *model) replaceSlot(i int) {
	s := m.s
	ctx := context.Background()
	in := 30*time.Hour + time.Duration(m.seq.Add(1))*7*time.Minute
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 0 {
			time.Sleep(50 * time.Millisecond) // the database may be down for this wave
		}
		var now time.Time
		if now, err = s.store.Now(ctx); err != nil {
			continue
		}
		start := now.Add(in).Truncate(time.Second)
		sl := booking.ScheduledSlot{StartAt: start, EndAt: start.Add(90 * time.Minute), Capacity: 1 + i%4, PriceFen: m.slot(i).price}
		if _, _, err = s.store.CreateSlots(ctx, []booking.ScheduledSlot{sl}); err != nil {
			continue
		}
		var id int64
		if err = s.store.SQL().QueryRow(`SELECT slot_id FROM t_slot WHERE start_at = ?`, start).Scan(&id); err != nil {
			continue
		}
		loc, _ := time.LoadLocation("Asia/Shanghai")
		m.mu.Lock()
		m.slots[i] = slotInfo{id: id, date: start.In(loc).Format("2006-01-02"), price: m.slots[i].price}
		m.mu.Unlock()
		return
	}
	s.violate("a fresh slot could not be made: %v", err)
}

// wasMoved reports whether booking id was moved to another slot at some
// point. Every caller uses it to excuse an answer that a move explains, so a
// read it cannot make (its connection killed by a fault, the database down for
// the wave: tried for a second) is no evidence either way, and excuses: the
// checker says nothing it does not know.
func (m *model) wasMoved(id int64) bool {
	for attempt := range 20 {
		if attempt > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		var moved bool
		err := m.s.store.SQL().QueryRow(`SELECT EXISTS (SELECT 1 FROM t_audit WHERE book_id = ? AND event = ?)`, id, booking.EventReschedule).Scan(&moved)
		if err == nil {
			return moved
		}
	}
	m.count("checker-read-failed")
	return true
}
