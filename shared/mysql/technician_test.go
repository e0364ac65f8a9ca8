package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// shopTZ is the shop's zone of these tests: the day of a start, and the
// booked minutes that day, are the shop's.
var shopTZ = time.FixedZone("CST", 8*3600)

// day is the shop day of start, as the service gives it to the store.
func day(start time.Time) (time.Time, time.Time) {
	from, to, err := booking.DayBounds(booking.ShopDay(start, shopTZ), shopTZ)
	if err != nil {
		panic(err)
	}
	return from, to
}

// reserveService books service at start for openid with technician (0: any).
func reserveService(db *mysql.DB, openid string, service, technician int64, start time.Time) (*booking.Booking, error) {
	from, to := day(start)
	b, _, err := db.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: openid, ServiceID: service, TechnicianID: technician,
		StartAt: start, DayStart: from, DayEnd: to})
	return b, err
}

func cellsBooked(tb testing.TB, db *mysql.DB, cells ...int64) []int {
	tb.Helper()
	var out []int
	for _, c := range cells {
		out = append(out, booked(tb, db, c))
	}
	return out
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

var half = 30 * time.Minute

// TestReserveAService: a booking of a service takes every cell of its span,
// holds its deposit as the amount and its full price, ends with its service,
// names the service and the technician; without a deposit it is confirmed
// at once; every refusal writes nothing.
func TestReserveAService(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	gel := mysqltest.AddService(t, db, "光疗甲", 120, 30000, 5000)
	free := mysqltest.AddService(t, db, "修眉", 30, 0, 0)
	other := mysqltest.AddService(t, db, "睫毛", 60, 20000, 2000)
	amy := mysqltest.AddTechnician(t, db, "Amy", gel, free)
	bea := mysqltest.AddTechnician(t, db, "Bea", other)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	cells := mysqltest.LayCells(t, db, amy, start, 8)
	mysqltest.LayCells(t, db, bea, start, 8)

	b, err := reserveService(db, "o-1", gel, amy, start)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != booking.StatusPending || b.AmountFen != 5000 || b.PriceFen != 30000 || b.ServiceID != gel || b.ServiceName != "光疗甲" ||
		b.TechnicianID != amy || b.TechnicianName != "Amy" || b.SlotID != cells[0] || !b.StartAt.Equal(start) ||
		!b.EndAt.Equal(start.Add(2*time.Hour)) || b.OutTradeNo != booking.OutTradeNo(b.ID) || !b.LockExpire.After(time.Now().Add(-time.Minute)) {
		t.Fatalf("booking %+v", b)
	}
	if got := cellsBooked(t, db, cells...); !slices.Equal(got, []int{1, 1, 1, 1, 0, 0, 0, 0}) {
		t.Fatalf("cells booked %v", got)
	}
	f, err := reserveService(db, "o-2", free, 0, start.Add(2*time.Hour))
	if err != nil || f.Status != booking.StatusConfirmed || f.AmountFen != 0 || f.TechnicianID != amy || f.SlotID != cells[4] {
		t.Fatalf("free service: %+v %v", f, err)
	}
	before := countRows(t, db, "t_booking") + countRows(t, db, "t_audit") + countRows(t, db, "t_booking_slot")
	for _, tt := range []struct {
		name       string
		openid     string
		service    int64
		technician int64
		start      time.Time
		code       string
	}{
		{"overlapping her booking", "o-3", free, amy, start.Add(90 * time.Minute), booking.ESOLDOUT},
		{"any technician, all busy", "o-3", free, 0, start, booking.ESOLDOUT},
		{"she does not do it", "o-3", gel, bea, start, booking.ESLOTNOTBOOKABLE},
		{"past her hours", "o-3", gel, amy, start.Add(3 * time.Hour), booking.ESLOTNOTBOOKABLE},
		{"off the grid", "o-3", free, amy, start.Add(3*time.Hour + 10*time.Minute), booking.ESLOTNOTBOOKABLE},
		{"no such service", "o-3", 999, 0, start, booking.ENOTFOUND},
		{"no such technician", "o-3", gel, 999, start, booking.ENOTFOUND},
		{"an unfinished booking already", "o-1", free, amy, start.Add(3 * time.Hour), booking.EACTIVEBOOKINGEXISTS},
	} {
		if _, err := reserveService(db, tt.openid, tt.service, tt.technician, tt.start); !booking.IsCode(err, tt.code) {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if after := countRows(t, db, "t_booking") + countRows(t, db, "t_audit") + countRows(t, db, "t_booking_slot"); after != before {
		t.Fatalf("refusals wrote %d rows", after-before)
	}
	// Started, or beyond the window.
	mysqltest.LayCells(t, db, bea, mysqltest.GridStart(t, db, -2*time.Hour), 2)
	if _, err := reserveService(db, "o-4", other, bea, mysqltest.GridStart(t, db, -2*time.Hour)); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Errorf("started: %v", err)
	}
	far := mysqltest.GridStart(t, db, 15*24*time.Hour)
	mysqltest.LayCells(t, db, bea, far, 2)
	if _, err := reserveService(db, "o-4", other, bea, far); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Errorf("beyond the window: %v", err)
	}
	// An inactive service is not on the menu; an inactive technician does not
	// do it.
	off := false
	if _, err := db.UpdateService(ctx, other, booking.ServiceUpdate{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := reserveService(db, "o-4", other, bea, start); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Errorf("inactive service: %v", err)
	}
	if _, err := db.UpdateTechnician(ctx, amy, booking.TechnicianUpdate{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := reserveService(db, "o-4", free, amy, start.Add(3*time.Hour)); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Errorf("inactive technician: %v", err)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestServiceIdempotencyKey: the same key answers the same booking, also
// without naming the technician; another start, service or technician is
// INVALID_STATE; twenty at once make one booking.
func TestServiceIdempotencyKey(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 10000, 3000)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	mysqltest.LayCells(t, db, amy, start, 4)
	mysqltest.LayCells(t, db, bea, start, 4)
	from, to := day(start)
	req := booking.ServiceReserveRequest{OpenID: "o-key", ServiceID: svc, StartAt: start, IdemKey: "k-1", DayStart: from, DayEnd: to}
	var mu sync.Mutex
	ids := map[int64]int{}
	created := 0
	race(20, func(int) {
		b, c, err := db.ReserveService(ctx, req)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("retry: %v", err)
			return
		}
		ids[b.ID]++
		if c {
			created++
		}
	})
	if len(ids) != 1 || created != 1 {
		t.Fatalf("bookings %v, created %d: want one, created once", ids, created)
	}
	var first int64
	for id := range ids {
		first = id
	}
	b, _ := db.FindBooking(ctx, first)
	named := req
	named.TechnicianID = b.TechnicianID
	if again, c, err := db.ReserveService(ctx, named); err != nil || c || again.ID != first {
		t.Fatalf("with her named: %+v %v %v", again, c, err)
	}
	for _, mod := range []func(*booking.ServiceReserveRequest){
		func(r *booking.ServiceReserveRequest) { r.StartAt = r.StartAt.Add(half) },
		func(r *booking.ServiceReserveRequest) { r.ServiceID = 999 },
		func(r *booking.ServiceReserveRequest) { r.TechnicianID = amy + bea - b.TechnicianID },
	} {
		r := req
		mod(&r)
		if _, _, err := db.ReserveService(ctx, r); !booking.IsCode(err, booking.EINVALIDSTATE) {
			t.Errorf("another reservation with the key: %v", err)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// TestNoOverlapWhateverTheLengths: a 120-minute and a 60-minute booking of
// one technician that overlap by 30 minutes, asked at once, 50 rounds (the
// short one after the long one's end in even rounds, before its start in
// odd ones): never both; adjacent ones both succeed. The invariant holds
// after every round.
func TestNoOverlapWhateverTheLengths(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	long := mysqltest.AddService(t, db, "延长甲", 120, 0, 0)
	short := mysqltest.AddService(t, db, "卸甲", 60, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", long, short)
	base := mysqltest.GridStart(t, db, 2*time.Hour)
	const rounds = 50
	// Each round has 4 hours of her time of its own: 8 cells, the long
	// booking from the second.
	for r := range rounds {
		mysqltest.LayCells(t, db, amy, base.Add(time.Duration(r)*4*time.Hour), 8)
	}
	for r := range rounds {
		longAt := base.Add(time.Duration(r)*4*time.Hour + time.Hour)
		shortAt := longAt.Add(90 * time.Minute) // its last 30 minutes
		if r%2 == 1 {
			shortAt = longAt.Add(-30 * time.Minute) // its first 30 minutes
		}
		var errs [2]error
		race(2, func(i int) {
			if i == 0 {
				_, errs[0] = reserveService(db, fmt.Sprintf("long-%d", r), long, amy, longAt)
			} else {
				_, errs[1] = reserveService(db, fmt.Sprintf("short-%d", r), short, amy, shortAt)
			}
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !booking.IsCode(err, booking.ESOLDOUT):
				t.Fatalf("round %d: %v, want SOLD_OUT for the loser", r, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of the two overlapping bookings made (%v)", r, won, errs)
		}
		mysqltest.CheckInvariant(t, db)
	}
	// Adjacent: a short one ending where the long one starts, and one
	// starting where it ends, all three at once: all three made.
	adj := base.Add(rounds * 4 * time.Hour)
	mysqltest.LayCells(t, db, amy, adj, 8)
	var errs [3]error
	race(3, func(i int) {
		switch i {
		case 0:
			_, errs[i] = reserveService(db, "adj-long", long, amy, adj.Add(time.Hour))
		case 1:
			_, errs[i] = reserveService(db, "adj-before", short, amy, adj)
		case 2:
			_, errs[i] = reserveService(db, "adj-after", short, amy, adj.Add(3*time.Hour))
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("adjacent booking %d: %v", i, err)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// Test130AnyTechnicianAtOneStart: 130 customers ask at once for one start
// with any technician, three of whom are free: exactly three bookings, each
// with another technician, and 127 SOLD_OUT.
func Test130AnyTechnicianAtOneStart(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 90, 10000, 3000)
	busy := mysqltest.AddService(t, db, "别的", 30, 0, 0)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	var techs []int64
	for i := range 4 {
		id := mysqltest.AddTechnician(t, db, fmt.Sprintf("T%d", i), svc, busy)
		mysqltest.LayCells(t, db, id, start.Add(-time.Hour), 8)
		techs = append(techs, id)
	}
	// The fourth is busy in the middle of the span.
	if _, err := reserveService(db, "busy", busy, techs[3], start.Add(half)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	codes := map[string]int{}
	var made []*booking.Booking
	race(130, func(i int) {
		b, err := reserveService(db, fmt.Sprintf("any-%d", i), svc, 0, start)
		mu.Lock()
		defer mu.Unlock()
		codes[booking.ErrorCode(err)]++
		if err == nil {
			made = append(made, b)
		} else if booking.ErrorCode(err) == booking.EINTERNAL {
			t.Errorf("reserve: %v", err)
		}
	})
	if codes[""] != 3 || codes[booking.ESOLDOUT] != 127 {
		t.Fatalf("answers %v, want 3 made and 127 SOLD_OUT", codes)
	}
	seen := map[int64]bool{}
	for _, b := range made {
		seen[b.TechnicianID] = true
		if !b.StartAt.Equal(start) || b.TechnicianID == techs[3] {
			t.Errorf("booking %+v", b)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("the three bookings are with %d technicians", len(seen))
	}
	// A try that came up short wrote no booking (migration 0027 takes the
	// cells first): the booking ids have no gap an insert rolled back left.
	var rows, span int
	if err := db.SQL().QueryRow(`SELECT COUNT(*), MAX(book_id) - MIN(book_id) + 1 FROM t_booking`).Scan(&rows, &span); err != nil {
		t.Fatal(err)
	}
	if rows != 4 || span != 4 {
		t.Errorf("%d bookings over %d ids: a lost try inserted a booking", rows, span)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestAnyTechnicianPickOrder: without a named technician the one with the
// fewest booked minutes that day is taken, then the lowest id.
func TestAnyTechnicianPickOrder(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	// 10:00 shop time the day after tomorrow: the pre-bookings five hours
	// later fall on the same shop day whatever the time of the run (from
	// tomorrow's grid start they crossed midnight in the shop's evening, and
	// then nobody had minutes booked that day).
	tomorrow, _ := day(mysqltest.GridStart(t, db, 24*time.Hour))
	start := tomorrow.Add(34 * time.Hour)
	from, _ := day(start)
	var techs []int64
	for i := range 3 {
		id := mysqltest.AddTechnician(t, db, fmt.Sprintf("T%d", i), svc)
		mysqltest.LayCells(t, db, id, start, 12)
		techs = append(techs, id)
	}
	// T0 has an hour booked that day, T1 half an hour (on a 30-minute
	// service), T2 none: T2, then T1 ... but T1 and T2 tie after T2's first.
	half30 := mysqltest.AddService(t, db, "修眉", 30, 0, 0)
	for _, id := range techs[:2] {
		if _, err := db.UpdateTechnician(ctx, id, booking.TechnicianUpdate{ServiceIDs: &[]int64{svc, half30}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reserveService(db, "pre-0", svc, techs[0], start.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := reserveService(db, "pre-1", half30, techs[1], start.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for i := range 3 {
		b, err := reserveService(db, fmt.Sprintf("pick-%d", i), svc, 0, start)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.TechnicianID)
	}
	if want := []int64{techs[2], techs[1], techs[0]}; !slices.Equal(got, want) {
		t.Fatalf("picked %v, want %v", got, want)
	}
	f, err := db.ServiceDay(ctx, svc, 0, from, from.Add(24*time.Hour))
	if err != nil || len(f.Candidates) != 3 || f.Service == nil || f.Service.ID != svc {
		t.Fatalf("facts %+v %v", f, err)
	}
	minutes := map[int64]int{}
	for _, c := range f.Candidates {
		minutes[c.Technician.ID] = c.BookedMinutes
	}
	if minutes[techs[0]] != 120 || minutes[techs[1]] != 90 || minutes[techs[2]] != 60 {
		t.Fatalf("booked minutes %v", minutes)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestReturnsGiveBackEveryCell: expiry, the customer's cancel and the
// salon's (with its refund) give back every cell of the span; a late
// payment takes them all again, or none (a cell taken meanwhile: SOLD_OUT;
// one closed: SLOT_NOT_BOOKABLE), and then the payment is refunded by the
// service.
func TestReturnsGiveBackEveryCell(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "光疗甲", 90, 30000, 5000)
	short := mysqltest.AddService(t, db, "修眉", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc, short)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	cells := mysqltest.LayCells(t, db, amy, start, 3)
	change := func(id int64, from, to booking.Status, event, actor string, p *booking.Payment) (*booking.Booking, error) {
		return db.ChangeStatus(ctx, booking.Change{BookingID: id, From: from, To: to, Event: event, Actor: actor, Payment: p})
	}
	pay := func(n string) *booking.Payment {
		return &booking.Payment{TransactionID: n, AmountFen: 5000, PaidAt: time.Now()}
	}
	hold := func(openid string) *booking.Booking {
		b, err := reserveService(db, openid, svc, amy, start)
		if err != nil || !slices.Equal(cellsBooked(t, db, cells...), ones(3)) {
			t.Fatalf("reserve: %v %v", err, cellsBooked(t, db, cells...))
		}
		return b
	}
	freeAgain := func(what string) {
		t.Helper()
		if got := cellsBooked(t, db, cells...); !slices.Equal(got, []int{0, 0, 0}) {
			t.Fatalf("%s: cells booked %v", what, got)
		}
		mysqltest.CheckInvariant(t, db)
	}

	a := hold("o-expire")
	if _, err := change(a.ID, booking.StatusPending, booking.StatusExpired, booking.EventRelease, booking.ActorTimer, nil); err != nil {
		t.Fatal(err)
	}
	freeAgain("expired")
	// Paid in the last second: every cell again.
	if b, err := change(a.ID, booking.StatusExpired, booking.StatusConfirmed, booking.EventLatePayment, booking.ActorWeChat, pay("late-1")); err != nil || b.Status != booking.StatusConfirmed {
		t.Fatalf("late payment: %+v %v", b, err)
	}
	if !slices.Equal(cellsBooked(t, db, cells...), ones(3)) {
		t.Fatalf("late payment took %v", cellsBooked(t, db, cells...))
	}
	mysqltest.CheckInvariant(t, db)
	if _, err := change(a.ID, booking.StatusConfirmed, booking.StatusCancelled, booking.EventCancel, booking.ActorSalon, nil); err != nil {
		t.Fatal(err)
	}
	freeAgain("the salon's cancel")
	if b, _ := db.FindBooking(ctx, a.ID); b.Refund == nil || b.Refund.AmountFen != 5000 {
		t.Fatalf("the salon's cancel of a paid booking: refund %+v", b.Refund)
	}

	c := hold("o-cancel")
	if _, err := change(c.ID, booking.StatusPending, booking.StatusCancelled, booking.EventCancel, booking.ActorCustomer, nil); err != nil {
		t.Fatal(err)
	}
	freeAgain("the customer's cancel")

	// A late payment finds one cell of the three taken meanwhile: nothing
	// taken, nothing changed.
	d := hold("o-late")
	if _, err := change(d.ID, booking.StatusPending, booking.StatusExpired, booking.EventRelease, booking.ActorTimer, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := reserveService(db, "o-brow", short, amy, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := change(d.ID, booking.StatusExpired, booking.StatusConfirmed, booking.EventLatePayment, booking.ActorWeChat, pay("late-2")); !booking.IsCode(err, booking.ESOLDOUT) {
		t.Fatalf("late payment into a taken cell: %v", err)
	}
	if got := cellsBooked(t, db, cells...); !slices.Equal(got, []int{0, 0, 1}) {
		t.Fatalf("a refused late payment left cells %v", got)
	}
	if b, _ := db.FindBooking(ctx, d.ID); b.Status != booking.StatusExpired {
		t.Fatalf("status %s", b.Status)
	}
	// And one closed (time off of the first hour): not bookable.
	if _, err := db.TakeTimeOff(ctx, amy, start, start.Add(time.Hour), booking.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := change(d.ID, booking.StatusExpired, booking.StatusConfirmed, booking.EventLatePayment, booking.ActorWeChat, pay("late-2")); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Fatalf("late payment into time off: %v", err)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestTimeOff: the cells of the range close, all or none: a booked one
// refuses it with INVALID_STATE naming the bookings in the way; a closed
// start is not bookable; an unknown technician is NOT_FOUND.
func TestTimeOff(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	cells := mysqltest.LayCells(t, db, amy, start, 8)
	b, err := reserveService(db, "o-1", svc, amy, start.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.TakeTimeOff(ctx, amy, start.Add(time.Hour), start.Add(3*time.Hour), booking.ActorAdmin)
	var way *booking.InTheWay
	if !errors.As(err, &way) || !booking.IsCode(err, booking.EINVALIDSTATE) || len(way.Bookings) != 1 || way.Bookings[0].ID != b.ID {
		t.Fatalf("time off over a booking: %v %+v", err, way)
	}
	if way.Bookings[0].Customer == nil {
		t.Fatal("the booking in the way comes without its customer")
	}
	for _, c := range cells {
		if s, _ := db.FindSlot(ctx, c); !s.Open {
			t.Fatalf("a refused time off closed cell %d", c)
		}
	}
	n, err := db.TakeTimeOff(ctx, amy, start, start.Add(time.Hour+10*time.Minute), booking.ActorAdmin)
	if err != nil || n != 3 { // 09:00, 09:30, 10:00 start before 10:10
		t.Fatalf("closed %d: %v", n, err)
	}
	if n, err := db.TakeTimeOff(ctx, amy, start, start.Add(time.Hour), booking.ActorAdmin); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
	if _, err := reserveService(db, "o-2", svc, amy, start.Add(time.Hour)); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Fatalf("a start in time off: %v", err)
	}
	if _, err := db.TakeTimeOff(ctx, 999, start, start.Add(time.Hour), booking.ActorAdmin); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Fatalf("unknown technician: %v", err)
	}
	var audited int
	db.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE event = 'slot_change' AND slot_id = ?`, cells[0]).Scan(&audited)
	if audited != 1 {
		t.Fatalf("%d audit records of the time off", audited)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestTimeOffRacesAReserve: time off over a start and a reservation of it,
// at once, 30 rounds: exactly one of them wins, never both.
func TestTimeOffRacesAReserve(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	base := mysqltest.GridStart(t, db, 24*time.Hour)
	const rounds = 30
	mysqltest.LayCells(t, db, amy, base, 2*rounds)
	wins := map[string]int{}
	for r := range rounds {
		at := base.Add(time.Duration(r) * time.Hour)
		var offErr, resErr error
		race(2, func(i int) {
			if i == 0 {
				// Only the second cell of the span: the booking needs it too.
				_, offErr = db.TakeTimeOff(ctx, amy, at.Add(half), at.Add(time.Hour), booking.ActorAdmin)
			} else {
				_, resErr = reserveService(db, fmt.Sprintf("o-%d", r), svc, amy, at)
			}
		})
		switch {
		case offErr == nil && booking.IsCode(resErr, booking.ESLOTNOTBOOKABLE):
			wins["time off"]++
		case resErr == nil && booking.IsCode(offErr, booking.EINVALIDSTATE):
			wins["booking"]++
		default:
			t.Fatalf("round %d: time off %v, reserve %v: want exactly one to win", r, offErr, resErr)
		}
		mysqltest.CheckInvariant(t, db)
	}
	t.Logf("won: %v", wins)
}

// TestSeatPathsDoNotSeeCells: a technician's cell named by its id is no
// slot of the seat schedule: reserve, walk-in, a move, the waitlist and the
// salon's change of a slot answer NOT_FOUND, and the schedule lists none.
func TestSeatPathsDoNotSeeCells(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	cell := mysqltest.LayCells(t, db, amy, start, 1)[0]
	seat := mysqltest.AddSlot(t, db, 48*time.Hour, 2, 0)
	seated := confirmed(t, db, "o-seat", seat)
	capacity := 5
	for name, err := range map[string]error{
		"reserve": func() error {
			_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-1", SlotID: cell})
			return err
		}(),
		"walk-in": func() error { _, err := db.WalkIn(ctx, booking.WalkInRequest{SlotID: cell, Name: "李"}); return err }(),
		"move":    func() error { _, err := move(db, seated, cell, booking.ActorSalon); return err }(),
		"waitlist": func() error {
			_, err := db.JoinWaitlist(ctx, "o-2", cell, booking.MaxWaitlistEntries)
			return err
		}(),
		"capacity": func() error {
			_, err := db.UpdateSlot(ctx, cell, booking.SlotUpdate{Capacity: &capacity}, booking.ActorAdmin)
			return err
		}(),
	} {
		if !booking.IsCode(err, booking.ENOTFOUND) {
			t.Errorf("%s of a cell: %v, want NOT_FOUND", name, err)
		}
	}
	from, to := day(start)
	slots, err := db.ListSlots(ctx, from.Add(-24*time.Hour), to.Add(48*time.Hour))
	if err != nil || len(slots) != 1 || slots[0].ID != seat {
		t.Fatalf("the schedule lists %+v %v", slots, err)
	}
	if s, err := db.FindSlot(ctx, cell); err != nil || s.TechnicianID != amy {
		t.Fatalf("a cell found by its id: %+v %v", s, err)
	}
	// A seat slot and a cell may share a start; each schedule skips its own.
	created, skipped, err := db.CreateSlots(ctx, []booking.ScheduledSlot{
		{StartAt: start, EndAt: start.Add(time.Hour), Capacity: 3, PriceFen: 100},
		{StartAt: start, EndAt: start.Add(half), Capacity: 1, TechnicianID: amy},
	})
	if err != nil || created != 1 || skipped != 1 {
		t.Fatalf("a seat slot at a cell's start: created %d skipped %d %v", created, skipped, err)
	}
	// A cell holds one booking and has no price: the schema refuses more.
	if _, err := db.SQL().Exec(`UPDATE t_slot SET capacity = 2 WHERE slot_id = ?`, cell); err == nil {
		t.Fatal("a cell of capacity 2")
	}
	mysqltest.CheckInvariant(t, db)
}

// TestTakeCellsFollowsTheRules: the one seat-taking function takes a span's
// cells exactly when the domain allows it (booking.SeatRule.AllowsStart on
// the start, every cell open and free), all of them or none, for every rule
// with a technician form and spans started, running, ahead, beyond the
// window, with a cell closed or taken.
func TestTakeCellsFollowsTheRules(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	p := db.Policy
	window := time.Duration(p.BookingWindowDays) * 24 * time.Hour
	var spans []booking.Span
	// Starts two hours ago, with the first cell ended, running or ahead (on
	// a 30-minute grid GridStart rounds up: -45m is a start 15 to 45 minutes
	// ago, -15m one 0 to 15 minutes ahead), ahead, at the window's edge and
	// beyond it.
	for i, in := range []time.Duration{-2 * time.Hour, -45 * time.Minute, -15 * time.Minute, time.Hour, window - time.Hour, window + time.Hour} {
		for _, state := range []string{"free", "closed", "taken"} {
			start := mysqltest.GridStart(t, db, in)
			// Each span its own technician, so that the spans never share cells.
			tech := mysqltest.AddTechnician(t, db, fmt.Sprintf("T%d%s", i, state))
			ids := mysqltest.LayCells(t, db, tech, start, 2)
			switch state {
			case "closed":
				db.SQL().Exec(`UPDATE t_slot SET is_open = 0 WHERE slot_id = ?`, ids[1])
			case "taken":
				db.SQL().Exec(`UPDATE t_slot SET booked = 1 WHERE slot_id = ?`, ids[1])
			}
			spans = append(spans, booking.Span{TechnicianID: tech, Start: start, End: start.Add(time.Hour), Cells: ids})
		}
	}
	allowed := 0
	for _, rule := range []booking.SeatRule{booking.SeatIfOpenForBooking, booking.SeatIfOpenForWalkIn, booking.SeatIfNotEnded, booking.SeatIfFree, booking.SeatNoRule} {
		for i, sp := range spans {
			tx, err := db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var now time.Time
			rows, err := tx.QueryContext(ctx, `SELECT slot_id, start_at, end_at, capacity, booked, is_open, UTC_TIMESTAMP(6) FROM t_slot WHERE technician_id = ? ORDER BY start_at FOR UPDATE`, sp.TechnicianID)
			if err != nil {
				t.Fatal(err)
			}
			var cells []booking.Slot
			for rows.Next() {
				var c booking.Slot
				if err := rows.Scan(&c.ID, &c.StartAt, &c.EndAt, &c.Capacity, &c.Booked, &c.Open, &now); err != nil {
					t.Fatal(err)
				}
				cells = append(cells, c)
			}
			rows.Close()
			state, _ := booking.SpanOf(cells, sp.Start, 60, p.GridMinutes, nil)
			want := state == booking.SpanFree && rule.AllowsStart(sp.Start, p.GridMinutes, now, p.BookingWindowDays)
			taken, err := mysql.TakeCellsForTest(ctx, tx, 5000+int64(i), sp, rule, p)
			if rule == booking.SeatIfFree || rule == booking.SeatNoRule {
				if err == nil {
					t.Errorf("span %d: cells taken under rule %d, which has no technician form", i, rule)
				}
				tx.Rollback()
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if taken != want {
				t.Errorf("rule %d, span %d (start %s, now %s, %v): taken %v, the domain allows %v", rule, i, sp.Start, now, state, taken, want)
			}
			if taken {
				allowed++
				var booked, rows int
				tx.QueryRowContext(ctx, `SELECT SUM(booked), (SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ?) FROM t_slot WHERE technician_id = ?`,
					5000+int64(i), sp.TechnicianID).Scan(&booked, &rows)
				if booked != 2 || rows != 2 {
					t.Errorf("rule %d, span %d: taken, %d booked, %d rows", rule, i, booked, rows)
				}
				if err := mysql.ReturnSeatsForTest(ctx, tx, 5000+int64(i), sp.Cells...); err != nil {
					t.Fatal(err)
				}
				tx.QueryRowContext(ctx, `SELECT SUM(booked), (SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ?) FROM t_slot WHERE technician_id = ?`,
					5000+int64(i), sp.TechnicianID).Scan(&booked, &rows)
				if booked != 0 || rows != 0 {
					t.Errorf("rule %d, span %d: returned, %d booked, %d rows", rule, i, booked, rows)
				}
			}
			tx.Rollback()
		}
	}
	if allowed == 0 {
		t.Fatal("no rule allowed any span: the grid tests nothing")
	}
}

// TestReturningSeatsLocksNoGap: while a transaction returns the seats of the
// newest booking (deleting its rows by their full keys), a new booking of
// other seats goes through: the return locks its rows, not the gap after
// them where every new seat row goes. A seat of the seat schedule, a
// technician's one cell, and her several cells.
func TestReturningSeatsLocksNoGap(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	long := mysqltest.AddService(t, db, "美甲", 90, 0, 0)
	short := mysqltest.AddService(t, db, "修眉", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", long, short)
	bea := mysqltest.AddTechnician(t, db, "Bea", long, short)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	amyCells := mysqltest.LayCells(t, db, amy, start, 6)
	mysqltest.LayCells(t, db, bea, start, 6)
	seats := []int64{mysqltest.AddSlot(t, db, 30*time.Hour, 3, 0), mysqltest.AddSlot(t, db, 31*time.Hour, 3, 0)}
	for i, c := range []struct {
		name string
		hold func() (int64, []int64) // the newest booking and the seats it holds
		next func(ctx context.Context) error
	}{
		{"a seat", func() (int64, []int64) {
			return confirmed(t, db, "o-seat-a", seats[0]), seats[:1]
		}, func(ctx context.Context) error {
			_, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-seat-b", SlotID: seats[1]})
			return err
		}},
		{"one cell", func() (int64, []int64) {
			b, err := reserveService(db, "o-cell-a", short, amy, start)
			if err != nil {
				t.Fatal(err)
			}
			return b.ID, amyCells[:1]
		}, func(ctx context.Context) error {
			from, to := day(start)
			_, _, err := db.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-cell-b", ServiceID: short, TechnicianID: bea,
				StartAt: start, DayStart: from, DayEnd: to})
			return err
		}},
		{"three cells", func() (int64, []int64) {
			b, err := reserveService(db, "o-cells-a", long, amy, start.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return b.ID, amyCells[2:5]
		}, func(ctx context.Context) error {
			from, to := day(start)
			_, _, err := db.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-cells-b", ServiceID: long, TechnicianID: bea,
				StartAt: start.Add(time.Hour), DayStart: from, DayEnd: to})
			return err
		}},
	} {
		id, held := c.hold()
		tx, err := db.SQL().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mysql.ReturnSeatsForTest(ctx, tx, id, held...); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = c.next(ctx)
		cancel()
		tx.Rollback()
		if err != nil {
			t.Errorf("%d. a booking of other seats while %s is returned: %v", i, c.name, err)
		}
	}
	mysqltest.CheckInvariant(t, db)
}

// moveTo moves a technician's booking to start with technician (0: the same).
func moveTo(db *mysql.DB, id int64, start time.Time, technician int64, actor string) (*booking.Booking, error) {
	return db.Reschedule(ctx, booking.Change{BookingID: id, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: actor, Reason: "改约", ToStart: start, ToTechnicianID: technician})
}

// TestMoveATechniciansBooking: a move takes the new span's cells and returns
// the old one's in one transaction, keeps the cells the two share, follows
// the new technician, counts the customer's move, and writes one audit
// record; a refused move changes nothing.
func TestMoveATechniciansBooking(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 90, 0, 0)
	other := mysqltest.AddService(t, db, "别的", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc, other)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	cat := mysqltest.AddTechnician(t, db, "Cat", other)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	a := mysqltest.LayCells(t, db, amy, start, 8)
	b := mysqltest.LayCells(t, db, bea, start, 8)
	mysqltest.LayCells(t, db, cat, start, 8)
	bk, err := reserveService(db, "o-move", svc, amy, start)
	if err != nil {
		t.Fatal(err)
	}
	// Half an hour later, the same technician: one cell taken, one returned.
	moved, err := moveTo(db, bk.ID, start.Add(half), 0, booking.ActorCustomer)
	if err != nil || moved.SlotID != a[1] || !moved.StartAt.Equal(start.Add(half)) || !moved.EndAt.Equal(start.Add(2*time.Hour)) ||
		moved.Reschedules != 1 || moved.TechnicianID != amy {
		t.Fatalf("moved %+v %v", moved, err)
	}
	if got := cellsBooked(t, db, a[:5]...); !slices.Equal(got, []int{0, 1, 1, 1, 0}) {
		t.Fatalf("her cells %v", got)
	}
	mysqltest.CheckInvariant(t, db)
	// To Bea, by the salon: Amy's three cells back, Bea's taken.
	moved, err = moveTo(db, bk.ID, start.Add(2*time.Hour), bea, booking.ActorSalon)
	if err != nil || moved.TechnicianID != bea || moved.TechnicianName != "Bea" || moved.SlotID != b[4] || moved.Reschedules != 1 {
		t.Fatalf("moved to Bea %+v %v", moved, err)
	}
	if got := append(cellsBooked(t, db, a...), cellsBooked(t, db, b...)...); !slices.Equal(got, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0}) {
		t.Fatalf("cells %v", got)
	}
	var reason string
	db.SQL().QueryRow(`SELECT reason FROM t_audit WHERE book_id = ? AND event = 'reschedule' ORDER BY audit_id DESC LIMIT 1`, bk.ID).Scan(&reason)
	if reason == "" {
		t.Fatal("no audit record of the move")
	}
	// Refusals change nothing.
	if _, err := reserveService(db, "o-block", other, amy, start); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		start time.Time
		tech  int64
		actor string
		code  string
	}{
		{"where it is", start.Add(2 * time.Hour), 0, booking.ActorSalon, booking.EINVALIDSTATE},
		{"onto a booking", start, amy, booking.ActorSalon, booking.ESOLDOUT},
		{"past her hours", start.Add(3*time.Hour + 30*time.Minute), amy, booking.ActorSalon, booking.ESLOTNOTBOOKABLE},
		{"she does not do it", start, cat, booking.ActorSalon, booking.ESLOTNOTBOOKABLE},
		{"no such technician", start, 999, booking.ActorSalon, booking.ENOTFOUND},
		{"the customer's second move", start.Add(time.Hour), amy, booking.ActorCustomer, booking.ERESCHEDULELIMIT},
	} {
		if _, err := moveTo(db, bk.ID, tt.start, tt.tech, tt.actor); !booking.IsCode(err, tt.code) {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if _, err := move(db, bk.ID, a[6], booking.ActorSalon); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Errorf("a technician's booking to a slot: %v", err)
	}
	seat := mysqltest.AddSlot(t, db, 50*time.Hour, 2, 0)
	seated := confirmed(t, db, "o-seat", seat)
	if _, err := moveTo(db, seated, start, amy, booking.ActorSalon); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Errorf("a seat-mode booking to a start: %v", err)
	}
	if got, _ := db.FindBooking(ctx, bk.ID); got.SlotID != b[4] || got.TechnicianID != bea {
		t.Fatalf("a refused move changed the booking: %+v", got)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestMovesRaceReservesAndCancels: in each of 20 rounds, a booking moves
// into the cells another booking holds while that one is cancelled and a
// third customer reserves the same cells, all at once: the cells go to at
// most one of the move and the reservation, the cancel always succeeds, and
// the invariant holds after every round.
func TestMovesRaceReservesAndCancels(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	base := mysqltest.GridStart(t, db, 3*time.Hour)
	const rounds = 20
	mysqltest.LayCells(t, db, amy, base, 4*rounds)
	mysqltest.LayCells(t, db, bea, base, 4*rounds)
	outcomes := map[string]int{}
	for r := range rounds {
		at := base.Add(time.Duration(r) * 2 * time.Hour)
		mover, err := reserveService(db, fmt.Sprintf("mover-%d", r), svc, bea, at)
		if err != nil {
			t.Fatal(err)
		}
		holder, err := reserveService(db, fmt.Sprintf("holder-%d", r), svc, amy, at.Add(half))
		if err != nil {
			t.Fatal(err)
		}
		var moveErr, cancelErr, reserveErr error
		race(3, func(i int) {
			switch i {
			case 0:
				_, moveErr = moveTo(db, mover.ID, at.Add(half), amy, booking.ActorSalon)
			case 1:
				_, cancelErr = db.ChangeStatus(ctx, booking.Change{BookingID: holder.ID, From: booking.StatusConfirmed, To: booking.StatusCancelled,
					Event: booking.EventCancel, Actor: booking.ActorSalon})
			case 2:
				_, reserveErr = reserveService(db, fmt.Sprintf("late-%d", r), svc, amy, at)
			}
		})
		if cancelErr != nil {
			t.Fatalf("round %d: cancel %v", r, cancelErr)
		}
		for _, err := range []error{moveErr, reserveErr} {
			if err != nil && !booking.IsCode(err, booking.ESOLDOUT) {
				t.Fatalf("round %d: %v, want SOLD_OUT for a loser", r, err)
			}
		}
		if moveErr == nil && reserveErr == nil {
			t.Fatalf("round %d: the move and the reservation both have 30 minutes of Amy's", r)
		}
		outcomes[fmt.Sprintf("move %v, reserve %v", moveErr == nil, reserveErr == nil)]++
		mysqltest.CheckInvariant(t, db)
	}
	t.Logf("outcomes: %v", outcomes)
}

// TestWalkInAService: the salon books a service for someone at the counter:
// confirmed at once for nothing, into the cell running now (a walk-in may
// sit down in it), with the technician free or the one named; the
// one-unfinished-booking rule holds.
func TestWalkInAService(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 20000, 5000)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	running := mysqltest.GridStart(t, db, -time.Duration(db.Policy.GridMinutes)*time.Minute) // started, not ended
	mysqltest.LayCells(t, db, amy, running, 4)
	mysqltest.LayCells(t, db, bea, running, 4)
	from, to := day(running)
	walkIn := func(name, phone string, tech int64, start time.Time) (*booking.Booking, error) {
		return db.WalkIn(ctx, booking.WalkInRequest{ServiceID: svc, TechnicianID: tech, StartAt: start, Name: name, Phone: phone,
			By: "staff:1", DayStart: from, DayEnd: to})
	}
	b, err := walkIn("李女士", "13800000001", bea, running)
	if err != nil || b.Status != booking.StatusConfirmed || b.AmountFen != 0 || b.PriceFen != 20000 || b.TechnicianID != bea ||
		b.Customer == nil || b.Customer.Name != "李女士" || b.OpenID != "" || b.OutTradeNo != "" {
		t.Fatalf("walk-in %+v %v", b, err)
	}
	if picked, err := walkIn("王女士", "", 0, running); err != nil || picked.TechnicianID != amy {
		t.Fatalf("any technician: %+v %v", picked, err)
	}
	if _, err := walkIn("赵女士", "", 0, running); !booking.IsCode(err, booking.ESOLDOUT) {
		t.Fatalf("nobody free: %v", err)
	}
	if _, err := walkIn("李女士", "13800000001", amy, running.Add(time.Hour)); !booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		t.Fatalf("a second unfinished booking of one phone: %v", err)
	}
	if _, err := walkIn("周女士", "", amy, running.Add(-time.Hour)); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Fatalf("an hour ago: %v", err)
	}
	var rec string
	db.SQL().QueryRow(`SELECT actor FROM t_audit WHERE book_id = ? AND event = 'walk_in'`, b.ID).Scan(&rec)
	if rec != "staff:1" {
		t.Fatalf("audit actor %q", rec)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestASeatBookingNamesNoService: a seat-mode booking, as reserve answers it
// and as every read finds it, has no service or technician and its slot's
// price as its full price.
func TestASeatBookingNamesNoService(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 24*time.Hour, 2, 5000)
	made, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-seat", SlotID: slot})
	if err != nil {
		t.Fatal(err)
	}
	read, err := db.FindBooking(ctx, made.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*booking.Booking{made, read} {
		if b.PriceFen != 5000 || b.AmountFen != 5000 || b.ServiceID != 0 || b.ServiceName != "" || b.TechnicianID != 0 || b.TechnicianName != "" ||
			!b.EndAt.Equal(b.StartAt.Add(90*time.Minute)) {
			t.Errorf("seat-mode booking %+v", b)
		}
	}
}

// TestATechniciansBookingEndsWithItsService: the release run's no-show of a
// technician's booking waits NO_SHOW_GRACE after its service ends, not after
// its first cell.
func TestATechniciansBookingEndsWithItsService(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 90, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	mysqltest.LayCells(t, db, amy, start, 3)
	b, err := reserveService(db, "o-end", svc, amy, start)
	if err != nil || b.Status != booking.StatusConfirmed {
		t.Fatalf("%+v %v", b, err)
	}
	due := func() bool {
		t.Helper()
		ds, err := db.DueNoShows(ctx, 30*time.Minute, 20)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ds, func(d booking.SeatedBooking) bool { return d.BookingID == b.ID })
	}
	// Her cells as if it had started 100 minutes ago: its first cell ended
	// 70 minutes ago, the service 10 minutes ago.
	now, _ := db.Now(ctx)
	shift := start.Sub(now) + 100*time.Minute
	if _, err := db.SQL().Exec(`UPDATE t_slot SET start_at = start_at - INTERVAL ? MICROSECOND, end_at = end_at - INTERVAL ? MICROSECOND
		WHERE technician_id = ?`, shift.Microseconds(), shift.Microseconds(), amy); err != nil {
		t.Fatal(err)
	}
	if due() {
		t.Fatal("due 10 minutes after the service ended")
	}
	if _, err := db.SQL().Exec(`UPDATE t_slot SET start_at = start_at - INTERVAL 30 MINUTE, end_at = end_at - INTERVAL 30 MINUTE
		WHERE technician_id = ?`, amy); err != nil {
		t.Fatal(err)
	}
	if !due() {
		t.Fatal("not due 40 minutes after the service ended")
	}
}

// TestHoursOnAFinerGridNeverOverlap: her hours laid at 30 minutes, then laid
// again after GRID_MINUTES became 15, make no cell that overlaps one of hers
// (only the hours beyond the old ones are laid), so a 15-minute booking at
// 10:15 cannot land on a 10:00-10:30 one; the drift check finds nothing.
func TestHoursOnAFinerGridNeverOverlap(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	halfHour := mysqltest.AddService(t, db, "单色", 30, 0, 0)
	quarter := mysqltest.AddService(t, db, "修甲", 15, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", halfHour, quarter)
	start := mysqltest.GridStart(t, db, 26*time.Hour) // on the 30-minute grid
	old := mysqltest.LayCells(t, db, amy, start, 4)   // two hours of 30-minute cells
	if _, err := reserveService(db, "first", halfHour, amy, start); err != nil {
		t.Fatal(err)
	}

	db.Policy.GridMinutes = 15
	var cells []booking.ScheduledSlot
	for i := range 12 { // the same two hours and one more, on 15 minutes
		at := start.Add(time.Duration(i) * 15 * time.Minute)
		cells = append(cells, booking.ScheduledSlot{StartAt: at, EndAt: at.Add(15 * time.Minute), Capacity: 1, TechnicianID: amy})
	}
	created, skipped, err := db.CreateSlots(ctx, cells)
	if err != nil || created != 4 || skipped != 8 {
		t.Fatalf("laid again on 15 minutes: created %d skipped %d (%v), want 4 and 8", created, skipped, err)
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot WHERE technician_id = ?`, amy).Scan(&n); err != nil || n != len(old)+4 {
		t.Fatalf("%d cells of hers (%v), want %d", n, err, len(old)+4)
	}
	if _, err := reserveService(db, "second", quarter, amy, start.Add(15*time.Minute)); !booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
		t.Fatalf("15 minutes inside the booked 30: %v, want SLOT_NOT_BOOKABLE", err)
	}
	// The new quarter-hours after the old cells are hers to book.
	if _, err := reserveService(db, "third", quarter, amy, start.Add(2*time.Hour+15*time.Minute)); err != nil {
		t.Fatalf("a new 15-minute cell: %v", err)
	}
	if d, err := db.FindDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift %v (%v), want none", d, err)
	}
	mysqltest.CheckInvariant(t, db)
}

// TestHoursRaceNeverOverlap: two layings of her hours at once, one on 30
// minutes and one on 15, over the same morning: whichever comes first, the
// cells never overlap.
func TestHoursRaceNeverOverlap(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "单色", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	start := mysqltest.GridStart(t, db, 26*time.Hour)
	for round := range 10 {
		at := start.Add(time.Duration(round) * 4 * time.Hour)
		var errs [2]error
		race(2, func(i int) {
			step := time.Duration(30/(i+1)) * time.Minute // 30, then 15
			var cells []booking.ScheduledSlot
			for c := at; c.Before(at.Add(2 * time.Hour)); c = c.Add(step) {
				cells = append(cells, booking.ScheduledSlot{StartAt: c, EndAt: c.Add(step), Capacity: 1, TechnicianID: amy})
			}
			_, _, errs[i] = db.CreateSlots(ctx, cells)
		})
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var minutes int
		if err := db.SQL().QueryRow(`SELECT COALESCE(SUM(TIMESTAMPDIFF(MINUTE, start_at, end_at)), 0) FROM t_slot
			WHERE technician_id = ? AND start_at >= ? AND start_at < ?`, amy, at, at.Add(2*time.Hour)).Scan(&minutes); err != nil || minutes != 120 {
			t.Fatalf("round %d: her cells cover %d minutes of the two hours (%v), want 120 exactly", round, minutes, err)
		}
		mysqltest.CheckInvariant(t, db)
	}
	if d, err := db.FindDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("drift %v (%v), want none", d, err)
	}
}

// TestFindDriftReportsOverlappingCells: cells of one technician that overlap
// (written around CreateSlots) are reported, each pair once, and left alone.
func TestFindDriftReportsOverlappingCells(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "单色", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	start := mysqltest.GridStart(t, db, 26*time.Hour)
	cells := mysqltest.LayCells(t, db, amy, start, 2)
	mysqltest.LayCells(t, db, bea, start.Add(15*time.Minute), 1) // another technician: no overlap
	res, err := db.SQL().Exec(`INSERT INTO t_slot (start_at, end_at, capacity, booked, price_fen, technician_id, is_open, created_at, updated_at)
		VALUES (?, ?, 1, 0, 0, ?, 1, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, start.Add(15*time.Minute), start.Add(30*time.Minute), amy)
	if err != nil {
		t.Fatal(err)
	}
	inside, _ := res.LastInsertId()
	d, err := db.FindDrift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 1 || d[0].SlotID != cells[0] || d[0].Overlaps != inside {
		t.Fatalf("drift %+v, want slot %d overlapped by %d", d, cells[0], inside)
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot WHERE technician_id = ?`, amy).Scan(&n); err != nil || n != 3 {
		t.Fatalf("the check changed her cells: %d (%v)", n, err)
	}
}
