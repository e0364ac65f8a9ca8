package booking

import (
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestScheduleSlots(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	s := Schedule{From: "2026-12-01", To: "2026-12-02", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(5000))}
	slots, err := s.Slots(loc)
	if err != nil {
		t.Fatal(err)
	}
	// 10:00 .. 19:00 start (19:00-20:30 ends by 21:00; 20:30 would not): 7 a day.
	if len(slots) != 14 {
		t.Fatalf("%d slots, want 14", len(slots))
	}
	if got := slots[0].StartAt.UTC().Format(time.RFC3339); got != "2026-12-01T02:00:00Z" {
		t.Fatalf("first slot %s", got)
	}
	if last := slots[6]; last.EndAt.Format("15:04") != "20:30" {
		t.Fatalf("last slot of the day ends %s", last.EndAt.Format("15:04"))
	}
	bad := []Schedule{
		{},
		{From: "2026-12-03", To: "2026-12-01", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))},
		{From: "2026-02-30", To: "2026-03-01", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))},
		{From: "2026-12-01", To: "2026-12-01", Open: "21:00", Close: "10:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))},
		{From: "2026-12-01", To: "2026-12-01", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(51), PriceFen: ptr(int64(0))},
		{From: "2026-12-01", To: "2026-12-01", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(0), PriceFen: ptr(int64(0))},
		{From: "2026-12-01", To: "2026-12-01", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(1000001))},
		{From: "2026-12-01", To: "2026-12-01", Open: "25:00", Close: "26:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))},
		{From: "2026-01-01", To: "2026-12-31", Open: "10:00", Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))},
	}
	for i, b := range bad {
		if _, err := b.Slots(loc); !IsCode(err, EBADREQUEST) {
			t.Errorf("schedule %d: %v, want BAD_REQUEST", i, err)
		}
	}
}

func TestOutTradeNoRoundTrip(t *testing.T) {
	for _, id := range []int64{1, 42, 999999999999} {
		if got, ok := ParseOutTradeNo(OutTradeNo(id)); !ok || got != id {
			t.Fatalf("%d -> %s -> %d %v", id, OutTradeNo(id), got, ok)
		}
	}
	for _, s := range []string{"", "BK", "BK00000000000x", "XX000000000001", "BK000000000000", "BK0000000000001"} {
		if _, ok := ParseOutTradeNo(s); ok {
			t.Fatalf("%q parsed", s)
		}
	}
}

func TestErrorCodeNeverLeaksDetail(t *testing.T) {
	err := Errorf(ESOLDOUT, "slot %d", 7)
	if ErrorCode(err) != ESOLDOUT || ErrorMessage(err) != "手慢了，这个时段刚刚被约满" {
		t.Fatal(ErrorCode(err), ErrorMessage(err))
	}
	plain := errTest("dial tcp 10.0.0.1:3306: password=secret")
	if ErrorCode(plain) != EINTERNAL || ErrorMessage(plain) == plain.Error() {
		t.Fatal("internal detail leaked")
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestParseDate: the contract's dates are YYYY-MM-DD in years 1000-9998. Go's
// time package parses years 0000-9999, which the database refuses (years before
// 1000) or cannot hold a day past (9999-12-31 + 1 day), and a year before 1901
// is in Asia/Shanghai's local mean time (+08:05:43), so both ends are refused here.
func TestParseDate(t *testing.T) {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"1000-01-01", "2026-02-28", "2028-02-29", "9998-12-31"} {
		d, err := ParseDate(s, loc)
		if err != nil {
			t.Errorf("ParseDate(%q): %v", s, err)
			continue
		}
		if d.Format(time.DateOnly) != s || d.Location() != loc || d.Hour() != 0 || d.Minute() != 0 {
			t.Errorf("ParseDate(%q) = %v, want its midnight in the shop's zone", s, d)
		}
	}
	for _, s := range []string{"", "0000-01-01", "0001-01-01", "0999-12-31", "9999-01-01", "9999-12-31",
		"2026-02-30", "2026-13-01", "2026-1-01", "2026-01-1", "02026-01-01", "+2026-01-01", " 2026-01-01",
		"2026-01-01 ", "2026-01-01T00:00:00Z", "２０２６-01-01", "2026/01/01"} {
		if _, err := ParseDate(s, loc); !IsCode(err, EBADREQUEST) {
			t.Errorf("ParseDate(%q): %v, want BAD_REQUEST", s, err)
		}
		if _, _, err := DayBounds(s, loc); !IsCode(err, EBADREQUEST) {
			t.Errorf("DayBounds(%q): %v, want BAD_REQUEST", s, err)
		}
		sched := Schedule{From: s, To: "2026-12-01", Open: "10:00", Close: "12:00", SlotMinutes: ptr(60), Capacity: ptr(1), PriceFen: ptr(int64(0))}
		if _, err := sched.Slots(loc); !IsCode(err, EBADREQUEST) {
			t.Errorf("schedule from %q: %v, want BAD_REQUEST", s, err)
		}
		sched.From, sched.To = "1000-01-01", s
		if _, err := sched.Slots(loc); !IsCode(err, EBADREQUEST) {
			t.Errorf("schedule to %q: %v, want BAD_REQUEST", s, err)
		}
	}
	// The audit's case: a schedule in year 999 made slots at 01:54:17 UTC.
	sched := Schedule{From: "0999-06-01", To: "0999-06-01", Open: "10:00", Close: "12:00", SlotMinutes: ptr(60), Capacity: ptr(1), PriceFen: ptr(int64(0))}
	if slots, err := sched.Slots(loc); !IsCode(err, EBADREQUEST) || slots != nil {
		t.Errorf("schedule in year 999: %d slots, %v", len(slots), err)
	}
}

// TestParseClock: a time of day is HH:MM, two digits each (Go's "15:04" alone
// takes "9:00").
func TestParseClock(t *testing.T) {
	for _, s := range []string{"00:00", "09:00", "10:30", "23:59"} {
		if _, err := ParseClock(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "9:00", "9:0", "09:0", "0900", "09.00", " 9:00", "+9:00", "09:00 ", "24:00", "12:60", "１０:00", "09:00:00", "9:00am"} {
		if _, err := ParseClock(s); !IsCode(err, EBADREQUEST) {
			t.Errorf("%q: %v, want BAD_REQUEST", s, err)
		}
		sched := Schedule{From: "2026-12-01", To: "2026-12-01", Open: s, Close: "21:00", SlotMinutes: ptr(90), Capacity: ptr(3), PriceFen: ptr(int64(0))}
		if _, err := sched.Slots(time.UTC); !IsCode(err, EBADREQUEST) {
			t.Errorf("a schedule opening at %q: %v, want BAD_REQUEST", s, err)
		}
	}
}

// TestClearOf: a new cell is left out when it overlaps one of hers in time
// (the same start, inside, across either end), kept when it only touches one.
func TestClearOf(t *testing.T) {
	at := func(hhmm string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", "2026-12-08 "+hhmm)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	taken := []Span{{Start: at("10:00"), End: at("10:30")}, {Start: at("11:00"), End: at("12:00")}}
	cases := []struct {
		from, to string
		keep     bool
	}{
		{"09:45", "10:00", true},  // ends where hers starts
		{"09:45", "10:15", false}, // across her start
		{"10:00", "10:15", false}, // the same start
		{"10:00", "10:30", false}, // the same cell
		{"10:15", "10:30", false}, // inside, the case
		{"10:15", "10:45", false}, // across her end
		{"10:30", "10:45", true},  // starts where hers ends
		{"10:30", "11:00", true},  // between two of hers
		{"10:45", "11:15", false}, // across the next one's start
		{"09:30", "12:30", false}, // over both
		{"12:00", "12:15", true},  // after both
	}
	for _, c := range cases {
		cell := ScheduledSlot{StartAt: at(c.from), EndAt: at(c.to), Capacity: 1, TechnicianID: 7}
		clear, skipped := ClearOf([]ScheduledSlot{cell}, taken)
		if kept := len(clear) == 1 && skipped == 0; kept != c.keep || len(clear)+skipped != 1 {
			t.Errorf("%s-%s: kept %d skipped %d, want kept=%v", c.from, c.to, len(clear), skipped, c.keep)
		}
	}
	if clear, skipped := ClearOf(nil, taken); len(clear) != 0 || skipped != 0 {
		t.Errorf("no cells: %v %d", clear, skipped)
	}
}
