package booking

import (
	"slices"
	"testing"
	"time"
)

var shop = time.FixedZone("CST", 8*3600)

// day9 is 09:00 shop time on a day: the cells of the tests start there.
var day9 = time.Date(2026, 12, 1, 9, 0, 0, 0, shop)

// cells are a technician's cells of 30 minutes from day9, ids from firstID,
// all open and free but for those in booked (by index).
func cells(tech, firstID int64, n int, booked ...int) []Slot {
	var out []Slot
	for i := range n {
		c := Slot{ID: firstID + int64(i), TechnicianID: tech, StartAt: day9.Add(time.Duration(i) * 30 * time.Minute),
			Capacity: 1, Open: true}
		c.EndAt = c.StartAt.Add(30 * time.Minute)
		if slices.Contains(booked, i) {
			c.Booked = 1
		}
		out = append(out, c)
	}
	return out
}

func TestGrid(t *testing.T) {
	for m, ok := range map[int]bool{1: true, 5: true, 15: true, 30: true, 60: true, 0: false, 7: false, 45: false, 90: false, -30: false} {
		if ValidGrid(m) != ok {
			t.Errorf("ValidGrid(%d) = %v", m, !ok)
		}
	}
	if CellsIn(120, 30) != 4 || CellsIn(30, 30) != 1 || CellsIn(90, 15) != 6 {
		t.Error("CellsIn")
	}
	now := time.Date(2026, 12, 1, 1, 47, 31, 9, time.UTC) // 09:47:31 shop time
	if got := CellStart(now, shop, 30); !got.Equal(time.Date(2026, 12, 1, 9, 30, 0, 0, shop)) {
		t.Errorf("CellStart = %s", got)
	}
	if got := CellStart(now, shop, 15); !got.Equal(time.Date(2026, 12, 1, 9, 45, 0, 0, shop)) {
		t.Errorf("CellStart 15 = %s", got)
	}
	// A zone half an hour off the hour: the grid is the shop's clock's.
	india := time.FixedZone("IST", 5*3600+30*60)
	if got := CellStart(now, india, 60); !got.Equal(time.Date(2026, 12, 1, 7, 0, 0, 0, india)) {
		t.Errorf("CellStart IST = %s", got)
	}
}

func TestSpanOf(t *testing.T) {
	closed := cells(1, 10, 6)
	closed[2].Open = false
	missing := slices.Delete(cells(1, 10, 6), 2, 3)
	long := cells(1, 10, 6)
	long[1].EndAt = long[1].EndAt.Add(30 * time.Minute) // a cell of another grid
	for _, tt := range []struct {
		name    string
		cells   []Slot
		start   time.Time
		minutes int
		own     []int64
		want    SpanState
		ids     []int64
	}{
		{"free 2h", cells(1, 10, 6), day9, 120, nil, SpanFree, []int64{10, 11, 12, 13}},
		{"free at the end", cells(1, 10, 6), day9.Add(2 * time.Hour), 60, nil, SpanFree, []int64{14, 15}},
		{"one past the last cell", cells(1, 10, 6), day9.Add(2 * time.Hour), 90, nil, SpanOutside, nil},
		{"before her hours", cells(1, 10, 6), day9.Add(-30 * time.Minute), 60, nil, SpanOutside, nil},
		{"off the grid", cells(1, 10, 6), day9.Add(10 * time.Minute), 60, nil, SpanOutside, nil},
		{"taken in the middle", cells(1, 10, 6, 2), day9, 120, nil, SpanTaken, []int64{10, 11, 12, 13}},
		{"taken by herself", cells(1, 10, 6, 2, 3), day9.Add(30 * time.Minute), 120, []int64{12, 13}, SpanFree, []int64{11, 12, 13, 14}},
		{"closed wins over taken", func() []Slot { c := cells(1, 10, 6, 0); c[1].Open = false; return c }(), day9, 60, nil, SpanOutside, nil},
		{"closed", closed, day9, 120, nil, SpanOutside, nil},
		{"missing", missing, day9, 120, nil, SpanOutside, nil},
		{"a cell of another length", long, day9, 60, nil, SpanOutside, nil},
		{"no length", cells(1, 10, 6), day9, 0, nil, SpanOutside, nil},
		{"adjacent to a booking", cells(1, 10, 6, 0, 1), day9.Add(time.Hour), 60, nil, SpanFree, []int64{12, 13}},
	} {
		got, ids := SpanOf(tt.cells, tt.start, tt.minutes, 30, tt.own)
		if got != tt.want || !slices.Equal(ids, tt.ids) {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, ids, tt.want, tt.ids)
		}
	}
}

func TestAllowsStart(t *testing.T) {
	now := day9
	for _, tt := range []struct {
		start         time.Duration // from now
		book, walk, n bool
	}{
		{-time.Hour, false, false, false},
		{-30 * time.Minute, false, false, false}, // its first cell ends now
		{-29 * time.Minute, false, true, true},   // the cell running now
		{0, false, true, true},
		{time.Minute, true, true, true},
		{14 * 24 * time.Hour, true, true, true},
		{14*24*time.Hour + time.Minute, false, false, true},
	} {
		start := now.Add(tt.start)
		if got := SeatIfOpenForBooking.AllowsStart(start, 30, now, 14); got != tt.book {
			t.Errorf("booking at %s: %v", tt.start, got)
		}
		if got := SeatIfOpenForWalkIn.AllowsStart(start, 30, now, 14); got != tt.walk {
			t.Errorf("walk-in at %s: %v", tt.start, got)
		}
		if got := SeatIfNotEnded.AllowsStart(start, 30, now, 14); got != tt.n {
			t.Errorf("salon's move at %s: %v", tt.start, got)
		}
		if SeatIfFree.AllowsStart(start, 30, now, 14) || SeatNoRule.AllowsStart(start, 30, now, 14) {
			t.Errorf("a rule without a technician form allows %s", tt.start)
		}
	}
}

func TestTechniciansToTry(t *testing.T) {
	p := testPolicy
	p.GridMinutes = 30
	svc := &Service{ID: 4, Name: "美甲", Minutes: 60, PriceFen: 20000, DepositFen: 5000, Active: true}
	now := day9.Add(-24 * time.Hour)
	cand := func(id int64, does bool, booked ...int) Candidate {
		cs := cells(id, id*100, 8, booked...)
		return Candidate{Technician: TechnicianRef{ID: id, Name: "T"}, Does: does, BookedMinutes: BookedMinutes(cs), Cells: cs}
	}
	ids := func(spans []Span) []int64 {
		var out []int64
		for _, s := range spans {
			out = append(out, s.TechnicianID)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		f     ServiceFacts
		start time.Time
		rule  SeatRule
		want  []int64
		code  string
	}{
		{"fewest booked minutes first, then the lowest id",
			ServiceFacts{Service: svc, Candidates: []Candidate{cand(3, true, 6), cand(1, true, 6, 7), cand(2, true, 7)}, Now: now},
			day9, SeatIfOpenForBooking, []int64{2, 3, 1}, ""},
		{"busy ones left out",
			ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true, 1), cand(2, true), cand(3, true, 0)}, Now: now},
			day9, SeatIfOpenForBooking, []int64{2}, ""},
		{"all busy", ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true, 1), cand(2, true, 0)}, Now: now},
			day9, SeatIfOpenForBooking, nil, ESOLDOUT},
		{"nobody works then", ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true), cand(2, true)}, Now: now},
			day9.Add(-time.Hour), SeatIfOpenForBooking, nil, ESLOTNOTBOOKABLE},
		{"nobody does it", ServiceFacts{Service: svc, Now: now}, day9, SeatIfOpenForBooking, nil, ESLOTNOTBOOKABLE},
		{"the named one", ServiceFacts{Service: svc, Named: 2, Candidates: []Candidate{cand(2, true, 5)}, Now: now},
			day9, SeatIfOpenForBooking, []int64{2}, ""},
		{"the named one busy", ServiceFacts{Service: svc, Named: 2, Candidates: []Candidate{cand(2, true, 1)}, Now: now},
			day9, SeatIfOpenForBooking, nil, ESOLDOUT},
		{"the named one does not do it", ServiceFacts{Service: svc, Named: 2, Candidates: []Candidate{cand(2, false)}, Now: now},
			day9, SeatIfOpenForBooking, nil, ESLOTNOTBOOKABLE},
		{"no such technician", ServiceFacts{Service: svc, Named: 9, Now: now}, day9, SeatIfOpenForBooking, nil, ENOTFOUND},
		{"no such service", ServiceFacts{Candidates: []Candidate{cand(1, true)}, Now: now}, day9, SeatIfOpenForBooking, nil, ENOTFOUND},
		{"started", ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true)}, Now: day9.Add(time.Minute)},
			day9, SeatIfOpenForBooking, nil, ESLOTNOTBOOKABLE},
		{"started, for a walk-in", ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true)}, Now: day9.Add(time.Minute)},
			day9, SeatIfOpenForWalkIn, []int64{1}, ""},
		{"beyond the window", ServiceFacts{Service: svc, Candidates: []Candidate{cand(1, true)}, Now: day9.Add(-15 * 24 * time.Hour)},
			day9, SeatIfOpenForBooking, nil, ESLOTNOTBOOKABLE},
	} {
		spans, err := p.TechniciansToTry(tt.f, 4, tt.start, tt.rule)
		if ErrorCode(err) != tt.code || !slices.Equal(ids(spans), tt.want) {
			t.Errorf("%s: %v %v, want %v %q", tt.name, ids(spans), err, tt.want, tt.code)
		}
		for _, s := range spans {
			if len(s.Cells) != 2 || !s.Start.Equal(tt.start) || !s.End.Equal(tt.start.Add(time.Hour)) || s.Cells[0] != s.TechnicianID*100+int64(tt.start.Sub(day9)/(30*time.Minute)) {
				t.Errorf("%s: span %+v", tt.name, s)
			}
		}
	}
}

func TestFreeStarts(t *testing.T) {
	p := testPolicy
	p.GridMinutes = 30
	svc := &Service{ID: 4, Minutes: 90, Active: true}
	now := day9.Add(40 * time.Minute) // the 09:00 and 09:30 starts have passed
	one := cells(1, 100, 6, 3)        // 09:00-12:00, 10:30 booked
	two := cells(2, 200, 4)           // 09:00-11:00
	two[3].Open = false               // 10:30 off
	f := ServiceFacts{Service: svc, Now: now, DayStart: day9.Add(-9 * time.Hour), DayEnd: day9.Add(15 * time.Hour), Candidates: []Candidate{
		{Technician: TechnicianRef{ID: 1, Name: "A"}, Does: true, BookedMinutes: BookedMinutes(one), Cells: one},
		{Technician: TechnicianRef{ID: 2, Name: "B"}, Does: true, Cells: two},
		{Technician: TechnicianRef{ID: 3, Name: "C"}, Does: false, Cells: cells(3, 300, 6)},
	}}
	starts, err := p.FreeStarts(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	// 10:00 needs 10:00-11:30: A has 10:30 booked, B 10:30 off. 11:00 needs
	// 11:00-12:30: nobody has 12:00. Only 09:30 of B... has passed. So: none
	// but for A at 11:00? 11:00-12:30 needs a cell at 12:00: A ends at 12:00.
	if len(starts) != 0 {
		t.Fatalf("starts %+v, want none", starts)
	}
	svc.Minutes = 30
	starts, _ = p.FreeStarts(f, 4)
	var got []string
	for _, s := range starts {
		var names string
		for _, tr := range s.Technicians {
			names += tr.Name
		}
		got = append(got, s.StartAt.In(shop).Format("15:04")+"-"+s.EndAt.In(shop).Format("15:04")+" "+names)
	}
	// B first where both are free: fewer minutes booked that day.
	want := []string{"10:00-10:30 BA", "11:00-11:30 A", "11:30-12:00 A"}
	if !slices.Equal(got, want) {
		t.Fatalf("starts %q, want %q", got, want)
	}
	// Only the day's own starts: cells read past its end judge a span, and
	// start nothing.
	f.DayEnd = day9.Add(2 * time.Hour) // 11:00
	if starts, _ = p.FreeStarts(f, 4); len(starts) != 1 || !starts[0].StartAt.Equal(day9.Add(time.Hour)) {
		t.Fatalf("starts before 11:00: %+v", starts)
	}
	if _, err := p.FreeStarts(ServiceFacts{Now: now}, 4); !IsCode(err, ENOTFOUND) {
		t.Fatalf("no service: %v", err)
	}
	if _, err := p.FreeStarts(ServiceFacts{Service: svc, Named: 7, Now: now}, 4); !IsCode(err, ENOTFOUND) {
		t.Fatalf("no technician: %v", err)
	}
	if s, err := p.FreeStarts(ServiceFacts{Service: svc, Named: 3, Candidates: f.Candidates[2:], Now: now}, 4); err != nil || len(s) != 0 {
		t.Fatalf("a technician who does not do it: %v %v", s, err)
	}
}

func TestServiceUpdate(t *testing.T) {
	s, err := ServiceUpdate{Name: ptr("  法式美甲 "), Minutes: ptr(90), PriceFen: ptr(int64(30000)), DepositFen: ptr(int64(5000))}.NewService(30)
	if err != nil || s.Name != "法式美甲" || !s.Active || s.Minutes != 90 {
		t.Fatalf("%+v %v", s, err)
	}
	for i, u := range []ServiceUpdate{
		{},
		{Minutes: ptr(45)},
		{Minutes: ptr(0)},
		{Minutes: ptr(510)},
		{PriceFen: ptr(int64(4000))}, // under the deposit
		{PriceFen: ptr(int64(MaxPriceFen + 1))},
		{DepositFen: ptr(int64(-1))},
		{Name: ptr("")},
		{Name: ptr("一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十一")},
	} {
		if _, err := u.Apply(s, 30); !IsCode(err, EBADREQUEST) {
			t.Errorf("update %d: %v, want BAD_REQUEST", i, err)
		}
	}
	off := false
	if got, err := (ServiceUpdate{Active: &off, PriceFen: ptr(int64(5000)), Minutes: ptr(480)}).Apply(s, 30); err != nil || got.Active || got.PriceFen != 5000 || got.Minutes != 480 || got.Name != s.Name {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := (ServiceUpdate{Minutes: ptr(45)}).Apply(s, 15); err != nil {
		t.Fatalf("45 minutes on a 15-minute grid: %v", err)
	}
	if _, err := (ServiceUpdate{Name: ptr("x")}).NewService(30); !IsCode(err, EBADREQUEST) {
		t.Fatalf("a new service without its numbers: %v", err)
	}
}

func TestTechnicianUpdate(t *testing.T) {
	tech, err := TechnicianUpdate{Name: ptr("小美"), ServiceIDs: &[]int64{3, 1}}.NewTechnician()
	if err != nil || tech.Name != "小美" || !tech.Active || !slices.Equal(tech.ServiceIDs, []int64{1, 3}) || tech.StaffID != 0 {
		t.Fatalf("%+v %v", tech, err)
	}
	if !tech.Does(3) || tech.Does(2) {
		t.Fatal("Does")
	}
	got, err := TechnicianUpdate{SetStaff: true, StaffID: 5}.Apply(tech)
	if err != nil || got.StaffID != 5 || got.Name != "小美" {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err = (TechnicianUpdate{SetStaff: true}).Apply(got); err != nil || got.StaffID != 0 {
		t.Fatalf("unlinked: %+v %v", got, err)
	}
	if got, err = (TechnicianUpdate{ServiceIDs: &[]int64{}}).Apply(got); err != nil || got.ServiceIDs == nil || len(got.ServiceIDs) != 0 {
		t.Fatalf("no services: %+v %v", got, err)
	}
	many := make([]int64, MaxTechnicianServices+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for i, u := range []TechnicianUpdate{
		{},
		{Name: ptr(" ")},
		{Name: ptr("一二三四五六七八九十一二三四五六七八九十一")},
		{ServiceIDs: &[]int64{0, 2}},
		{ServiceIDs: &[]int64{3, 1, 3}}, // a service named twice
		{ServiceIDs: &many},
		{SetStaff: true, StaffID: -1},
	} {
		if _, err := u.Apply(tech); !IsCode(err, EBADREQUEST) {
			t.Errorf("update %d: %v, want BAD_REQUEST", i, err)
		}
	}
	if _, err := (TechnicianUpdate{Name: ptr("x")}).NewTechnician(); !IsCode(err, EBADREQUEST) {
		t.Fatal("a new technician without her services")
	}
}

func TestHoursAndTimeOff(t *testing.T) {
	h := Hours{From: "2026-12-01", To: "2026-12-02", Open: "10:00", Close: "12:15"}
	cs, err := h.Cells(shop, 30, 7)
	if err != nil {
		t.Fatal(err)
	}
	// 10:00 .. 11:30 (11:45 would end after 12:15 on a 30-minute grid): 4 a day.
	if len(cs) != 8 || cs[0].TechnicianID != 7 || cs[0].Capacity != 1 || cs[0].PriceFen != 0 ||
		!cs[3].StartAt.Equal(time.Date(2026, 12, 1, 11, 30, 0, 0, shop)) || !cs[3].EndAt.Equal(time.Date(2026, 12, 1, 12, 0, 0, 0, shop)) {
		t.Fatalf("%+v", cs)
	}
	for i, bad := range []Hours{
		{},
		{From: "2026-12-01", To: "2026-12-01", Open: "10:10", Close: "12:00"}, // off the grid
		{From: "2026-12-02", To: "2026-12-01", Open: "10:00", Close: "12:00"},
		{From: "2026-12-01", To: "2026-12-01", Open: "12:00", Close: "10:00"},
		{From: "2026-01-01", To: "2026-12-01", Open: "10:00", Close: "12:00"},
		{From: "2026-12-01", To: "2026-12-01", Open: "9:00", Close: "12:00"},
	} {
		if _, err := bad.Cells(shop, 30, 7); !IsCode(err, EBADREQUEST) {
			t.Errorf("hours %d: %v, want BAD_REQUEST", i, err)
		}
	}
	if cs, err := (&Hours{From: "2026-12-01", To: "2026-12-01", Open: "10:10", Close: "10:30"}).Cells(shop, 5, 7); err != nil || len(cs) != 4 {
		t.Fatalf("a 5-minute grid: %d %v", len(cs), err)
	}
	o := TimeOff{Date: "2026-12-01", From: "13:00", To: "14:30"}
	from, to, err := o.Range(shop)
	if err != nil || !from.Equal(time.Date(2026, 12, 1, 13, 0, 0, 0, shop)) || !to.Equal(time.Date(2026, 12, 1, 14, 30, 0, 0, shop)) {
		t.Fatalf("%s %s %v", from, to, err)
	}
	for i, bad := range []TimeOff{{}, {Date: "2026-12-01", From: "14:00", To: "14:00"}, {Date: "2026-13-01", From: "13:00", To: "14:00"}, {Date: "2026-12-01", From: "13", To: "14:00"}} {
		if _, _, err := bad.Range(shop); !IsCode(err, EBADREQUEST) {
			t.Errorf("time off %d: %v, want BAD_REQUEST", i, err)
		}
	}
}

// The creation rows of a booking of a service: the deposit is the amount,
// none confirms a reservation at once, a walk-in is confirmed for nothing;
// the plan takes the span's cells, its first cell the booking's slot. The
// waitlist has no technician form.
func TestPlanServiceBookings(t *testing.T) {
	p := testPolicy
	p.GridMinutes = 30
	now := day9.Add(-2 * time.Hour)
	span := &Span{TechnicianID: 2, Start: day9, End: day9.Add(time.Hour), Cells: []int64{21, 22}}
	for _, tt := range []struct {
		event, actor string
		deposit      int64
		status       Status
		amount       int64
		rule         SeatRule
	}{
		{EventReserve, ActorCustomer, 5000, StatusPending, 5000, SeatIfOpenForBooking},
		{EventReserve, ActorCustomer, 0, StatusConfirmed, 0, SeatIfOpenForBooking},
		{EventWalkIn, ActorSalon, 5000, StatusConfirmed, 0, SeatIfOpenForWalkIn},
	} {
		svc := &Service{ID: 4, Minutes: 60, PriceFen: 20000, DepositFen: tt.deposit, Active: true}
		plan, err := p.Plan(Change{Event: tt.event, From: StatusNew, Actor: tt.actor}, ChangeFacts{New: &NewFacts{Now: now, Service: svc, Span: span}})
		if err != nil {
			t.Fatalf("%s: %v", tt.event, err)
		}
		if plan.Hold.Status != tt.status || plan.Hold.AmountFen != tt.amount || plan.SlotID != 21 || plan.Span != span ||
			plan.SeatRule != tt.rule || plan.Seat != SeatTaken || plan.OfferFreedSeat {
			t.Errorf("%s deposit %d: %+v %+v", tt.event, tt.deposit, plan, plan.Hold)
		}
		if tt.status == StatusPending && !plan.Hold.LockExpire.Equal(now.Add(p.LockTTL)) {
			t.Errorf("hold ends %s", plan.Hold.LockExpire)
		}
	}
	svc := &Service{ID: 4, Minutes: 60, Active: true}
	for _, c := range []struct {
		change Change
		facts  NewFacts
	}{
		{Change{Event: EventWaitlistOffer, From: StatusNew, Actor: ActorSystem}, NewFacts{Now: now, Service: svc, Span: span}},
		{Change{Event: EventReserve, From: StatusNew, Actor: ActorCustomer}, NewFacts{Now: now, Service: svc}},
		{Change{Event: EventReserve, From: StatusNew, Actor: ActorCustomer}, NewFacts{Now: now, Service: svc, Span: &Span{}}},
	} {
		if _, err := p.Plan(c.change, ChangeFacts{New: &c.facts}); !IsCode(err, EINVALIDSTATE) {
			t.Errorf("%s: %v, want INVALID_STATE", c.change.Event, err)
		}
	}
}

// A change of a technician's booking moves every cell: a return gives back
// the cells it holds and offers them to no line; a late payment takes the
// span again, whole, or is refused before anything is written.
func TestPlanTechnicianBookingChanges(t *testing.T) {
	p := testPolicy
	p.GridMinutes = 30
	held := &Span{TechnicianID: 1, Start: day9, End: day9.Add(time.Hour), Cells: []int64{100, 101}}
	plan, err := p.Plan(Change{BookingID: 7, From: StatusConfirmed, To: StatusCancelled, Event: EventCancel, Actor: ActorSalon},
		ChangeFacts{SlotID: 100, Paid: true, Span: held})
	if err != nil || plan.Span == nil || !slices.Equal(plan.Span.Cells, []int64{100, 101}) || plan.OfferFreedSeat || plan.ForgetOwnPlace || !plan.StartRefund {
		t.Fatalf("cancel: %+v %v", plan, err)
	}
	late := Change{BookingID: 7, From: StatusExpired, To: StatusConfirmed, Event: EventLatePayment, Actor: ActorWeChat,
		Payment: &Payment{TransactionID: "4200", AmountFen: 5000}}
	expired := &Span{TechnicianID: 1, Start: day9, End: day9.Add(time.Hour)}
	plan, err = p.Plan(late, ChangeFacts{SlotID: 100, Span: expired, Around: cells(1, 100, 4)})
	if err != nil || !slices.Equal(plan.Span.Cells, []int64{100, 101}) || plan.SeatRule != SeatIfOpenForBooking || !plan.UnlessRefunding {
		t.Fatalf("late payment: %+v %v", plan, err)
	}
	if expired.Cells != nil {
		t.Fatal("the plan wrote into the facts")
	}
	// Taken meanwhile: the conditional statement refuses it (SOLD_OUT), so
	// the plan still asks; a cell closed is refused here.
	if _, err := p.Plan(late, ChangeFacts{SlotID: 100, Span: expired, Around: cells(1, 100, 4, 1)}); err != nil {
		t.Fatalf("late payment into a taken cell: %v", err)
	}
	closed := cells(1, 100, 4)
	closed[1].Open = false
	if _, err := p.Plan(late, ChangeFacts{SlotID: 100, Span: expired, Around: closed}); !IsCode(err, ESLOTNOTBOOKABLE) {
		t.Fatalf("late payment into time off: %v", err)
	}
}

// The move of a technician's booking: to another start or technician, the
// same service and length; the cells it already holds stay, the others are
// taken and given back.
func TestPlanSpanMove(t *testing.T) {
	p := testPolicy
	p.GridMinutes = 30
	p.CancelFreeHours = 2
	p.RescheduleLimit = 1
	from := &Span{TechnicianID: 1, Start: day9, End: day9.Add(time.Hour), Cells: []int64{100, 101}}
	mine := cells(1, 100, 8, 0, 1)
	other := Candidate{Technician: TechnicianRef{ID: 2}, Does: true, Cells: cells(2, 200, 8, 3)}
	self := Candidate{Technician: TechnicianRef{ID: 1}, Does: true, Cells: mine}
	base := RescheduleFacts{Status: StatusConfirmed, From: Slot{ID: 100, StartAt: day9}, Now: day9.Add(-24 * time.Hour), Span: from, ServiceID: 4}
	move := func(actor string, start time.Time, tech int64) Change {
		return Change{BookingID: 7, From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: actor, ToStart: start, ToTechnicianID: tech}
	}
	for _, tt := range []struct {
		name       string
		c          Change
		to         *Candidate
		mod        func(*RescheduleFacts)
		code       string
		take, give []int64
		toSlot     int64
	}{
		{"half an hour later, the same technician", move(ActorCustomer, day9.Add(30*time.Minute), 0), &self, nil, "", []int64{102}, []int64{100}, 101},
		{"two hours later", move(ActorCustomer, day9.Add(2*time.Hour), 0), &self, nil, "", []int64{104, 105}, []int64{100, 101}, 104},
		{"to another technician at the same start", move(ActorSalon, day9, 2), &other, nil, "", []int64{200, 201}, []int64{100, 101}, 200},
		{"where it is", move(ActorCustomer, day9, 1), &self, nil, EINVALIDSTATE, nil, nil, 0},
		{"onto her booked cell", move(ActorSalon, day9.Add(time.Hour), 2), &other, nil, ESOLDOUT, nil, nil, 0},
		{"past her hours", move(ActorSalon, day9.Add(3*time.Hour+30*time.Minute), 2), &other, nil, ESLOTNOTBOOKABLE, nil, nil, 0},
		{"no such technician", move(ActorSalon, day9, 9), nil, nil, ENOTFOUND, nil, nil, 0},
		{"she does not do it", move(ActorSalon, day9, 2), &Candidate{Technician: TechnicianRef{ID: 2}, Cells: other.Cells}, nil, ESLOTNOTBOOKABLE, nil, nil, 0},
		{"a slot for a technician's booking", Change{BookingID: 7, From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorSalon, ToSlotID: 5}, nil, nil, EINVALIDSTATE, nil, nil, 0},
		{"a start for a seat-mode booking", move(ActorSalon, day9, 2), &other, func(f *RescheduleFacts) { f.Span = nil }, EINVALIDSTATE, nil, nil, 0},
		{"not confirmed", move(ActorSalon, day9, 2), &other, func(f *RescheduleFacts) { f.Status = StatusCompleted }, EINVALIDSTATE, nil, nil, 0},
		{"the customer too late", move(ActorCustomer, day9.Add(2*time.Hour), 0), &self, func(f *RescheduleFacts) { f.Now = day9.Add(-time.Hour) }, ELATERESCHEDULE, nil, nil, 0},
		{"the customer once", move(ActorCustomer, day9.Add(2*time.Hour), 0), &self, func(f *RescheduleFacts) { f.Reschedules = 1 }, ERESCHEDULELIMIT, nil, nil, 0},
		{"the customer beyond the window", move(ActorCustomer, day9.Add(2*time.Hour), 0), &self, func(f *RescheduleFacts) { f.Now = day9.Add(-15 * 24 * time.Hour) }, ESLOTNOTBOOKABLE, nil, nil, 0},
		{"the salon into the cell running now", move(ActorSalon, day9.Add(2*time.Hour), 2), &other, func(f *RescheduleFacts) { f.Now = day9.Add(2*time.Hour + 10*time.Minute) }, "", []int64{204, 205}, []int64{100, 101}, 204},
		{"the salon into a cell that ended", move(ActorSalon, day9.Add(2*time.Hour), 2), &other, func(f *RescheduleFacts) { f.Now = day9.Add(2*time.Hour + 30*time.Minute) }, ESLOTNOTBOOKABLE, nil, nil, 0},
	} {
		f := base
		f.ToTech = tt.to
		if tt.mod != nil {
			tt.mod(&f)
		}
		plan, err := p.PlanReschedule(tt.c, f)
		if ErrorCode(err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
			continue
		}
		if err != nil {
			if p.RescheduleRefusal(tt.c, f) == nil {
				t.Errorf("%s: RescheduleRefusal lets it pass", tt.name)
			}
			continue
		}
		m := plan.Move
		if !slices.Equal(m.ToSpan.Cells, tt.take) || !slices.Equal(m.Give, tt.give) || m.ToSlotID != tt.toSlot || plan.SlotID != 100 ||
			plan.OfferFreedSeat || m.Count != (tt.c.Actor == ActorCustomer) || !m.ToSpan.End.Equal(m.ToSpan.Start.Add(time.Hour)) {
			t.Errorf("%s: plan %+v move %+v span %+v", tt.name, plan, m, m.ToSpan)
		}
	}
}
