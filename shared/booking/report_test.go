package booking

import (
	"testing"
	"time"
)

func TestParseReportRange(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to string
		days     int
		start    string // UTC
		bad      bool
	}{
		{from: "2026-03-01", to: "2026-03-01", days: 1, start: "2026-02-28T16:00:00Z"},
		{from: "2026-03-01", to: "2026-03-31", days: 31, start: "2026-02-28T16:00:00Z"},
		{from: "2024-01-01", to: "2024-12-31", days: 366, start: "2023-12-31T16:00:00Z"}, // a leap year: 366 is allowed
		{from: "2025-01-01", to: "2026-01-01", days: 366, start: "2024-12-31T16:00:00Z"},
		{from: "2025-01-01", to: "2026-01-02", bad: true}, // 367 days
		{from: "2024-01-01", to: "2025-01-01", bad: true}, // 367 days
		{from: "2026-03-02", to: "2026-03-01", bad: true}, // from after to
		{from: "2026-3-1", to: "2026-03-01", bad: true},
		{from: "2026-03-01", to: "", bad: true},
		{from: "2026-02-30", to: "2026-03-01", bad: true},
		{from: "2026-03-01T00:00", to: "2026-03-01", bad: true},
	} {
		r, err := ParseReportRange(c.from, c.to, shanghai)
		if c.bad {
			if ErrorCode(err) != EBADREQUEST {
				t.Errorf("%s..%s: err %v, want BAD_REQUEST", c.from, c.to, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s..%s: %v", c.from, c.to, err)
			continue
		}
		if len(r.Days) != c.days || r.Days[0] != c.from || r.Days[len(r.Days)-1] != c.to {
			t.Errorf("%s..%s: days %d from %s to %s", c.from, c.to, len(r.Days), r.Days[0], r.Days[len(r.Days)-1])
		}
		if got := r.Start.Format(time.RFC3339); got != c.start {
			t.Errorf("%s..%s: start %s, want %s", c.from, c.to, got, c.start)
		}
		if got := r.End.Sub(r.Start); got != time.Duration(c.days)*24*time.Hour {
			t.Errorf("%s..%s: spans %s", c.from, c.to, got)
		}
	}
}

// A range across a daylight-saving change has days of 23 and 25 hours: each
// fact falls in the shop day of its instant.
func TestParseReportRangeDaylightSaving(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseReportRange("2026-03-28", "2026-03-30", berlin)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.End.Sub(r.Start); got != 71*time.Hour {
		t.Fatalf("spans %s, want 71h", got)
	}
	sunday := time.Date(2026, 3, 29, 23, 45, 0, 0, berlin)
	rep := BuildReport(r, ReportFacts{Bookings: []ReportBookingCount{{At: sunday.UTC(), Status: StatusCompleted, N: 1}}})
	if rep.Days[1].Completed != 1 {
		t.Fatalf("23:45 on the short day counted on %+v", rep.Days)
	}
}

func TestBuildReport(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	r, err := ParseReportRange("2026-03-01", "2026-03-03", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	at := func(day, hour, minute int) time.Time {
		return time.Date(2026, 3, day, hour, minute, 0, 0, shanghai).UTC()
	}
	f := ReportFacts{
		Bookings: []ReportBookingCount{
			{At: at(1, 0, 0), Status: StatusCompleted, N: 3}, // the day's first bucket
			{At: at(1, 23, 45), Status: StatusNoShow, N: 1},  // its last
			{At: at(1, 10, 0), Status: StatusCancelled, N: 2},
			{At: at(1, 10, 0), Status: StatusCancelled, LateCancel: true, N: 1},
			{At: at(1, 10, 0), Status: StatusExpired, N: 5}, // never a booking
			{At: at(1, 10, 0), Status: StatusConfirmed, N: 1},
			{At: at(3, 9, 0), Status: StatusPending, N: 1},
			{At: at(3, 9, 0), Status: StatusCompleted, N: 1},
			{At: at(4, 0, 0), Status: StatusCompleted, N: 9},                     // after the range
			{At: at(1, 0, 0).Add(-15 * time.Minute), Status: StatusNoShow, N: 9}, // before it
		},
		Money: []ReportMoneySum{
			{At: at(1, 9, 0), OnlineFen: 5000, ShopFen: 12000, RefundedFen: 2000},
			{At: at(1, 23, 45), KeptFen: 3000},
			{At: at(3, 12, 0), OnlineFen: 1000, KeptFen: -3000}, // a no-show checked in late
			{At: at(4, 0, 0), OnlineFen: 99999},
		},
		Completed: []ReportCompleted{
			{TechnicianID: 1, TechnicianName: "小美", ServiceID: 10, ServiceName: "单色", Completed: 2, Minutes: 120, TakingsFen: 20000},
			{TechnicianID: 2, TechnicianName: "小丽", ServiceID: 10, ServiceName: "单色", Completed: 1, Minutes: 60, TakingsFen: 10000},
			{TechnicianID: 2, TechnicianName: "小丽", ServiceID: 11, ServiceName: "法式", Completed: 1, Minutes: 90, TakingsFen: 15000},
			{Completed: 1, Minutes: 60, TakingsFen: 8000}, // seat mode: in no list
		},
	}
	rep := BuildReport(r, f)
	want := []ReportDay{
		{Date: "2026-03-01", Bookings: 8, Completed: 3, NoShows: 1, Cancelled: 3, LateCancels: 1,
			OnlineFen: 5000, ShopFen: 12000, RefundedFen: 2000, KeptFen: 3000, NetFen: 15000},
		{Date: "2026-03-02"},
		{Date: "2026-03-03", Bookings: 2, Completed: 1, OnlineFen: 1000, KeptFen: -3000, NetFen: 1000},
	}
	if len(rep.Days) != len(want) {
		t.Fatalf("days %+v", rep.Days)
	}
	for i := range want {
		if rep.Days[i] != want[i] {
			t.Errorf("day %d:\n got %+v\nwant %+v", i, rep.Days[i], want[i])
		}
	}
	total := ReportDay{Bookings: 10, Completed: 4, NoShows: 1, Cancelled: 3, LateCancels: 1,
		OnlineFen: 6000, ShopFen: 12000, RefundedFen: 2000, KeptFen: 0, NetFen: 16000}
	if rep.Total != total {
		t.Errorf("total %+v, want %+v", rep.Total, total)
	}
	if rep.NoShowRate == nil || *rep.NoShowRate != 0.2 {
		t.Errorf("no-show rate %v, want 0.2", rep.NoShowRate)
	}
	wantTechs := []ReportTakings{{2, "小丽", 2, 150, 25000}, {1, "小美", 2, 120, 20000}}
	wantServices := []ReportTakings{{10, "单色", 3, 0, 30000}, {11, "法式", 1, 0, 15000}}
	if !equalTakings(rep.Technicians, wantTechs) || !equalTakings(rep.Services, wantServices) {
		t.Errorf("technicians %+v\nservices %+v", rep.Technicians, rep.Services)
	}
}

func equalTakings(a, b []ReportTakings) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNoShowRate(t *testing.T) {
	for _, c := range []struct {
		completed, noShows int
		want               float64 // -1: nil
	}{
		{0, 0, -1}, {1, 0, 0}, {0, 3, 1}, {2, 1, 0.3333}, {1, 2, 0.6667}, {7, 1, 0.125},
	} {
		got := NoShowRate(c.completed, c.noShows)
		if (got == nil) != (c.want == -1) || got != nil && *got != c.want {
			t.Errorf("NoShowRate(%d, %d) = %v, want %v", c.completed, c.noShows, got, c.want)
		}
	}
}

// TestReportOffsets: the shop zone's offsets over a range, and the rule the
// store applies with them (an instant's shop date is the date of the instant
// plus its offset, counted in days from From), give every instant of the
// range the day DayOf gives it, in a zone without daylight saving, in ones
// with it (a 25-hour and a 23-hour day, a 30-minute shift) and at offsets
// that are not whole hours; DayStart is each day's first instant.
func TestReportOffsets(t *testing.T) {
	for _, c := range []struct {
		zone, from, to string
		offsets        int
	}{
		{"Asia/Shanghai", "2025-01-01", "2026-01-01", 1},
		{"Europe/Berlin", "2026-01-01", "2026-12-31", 3},
		{"Europe/Berlin", "2026-03-28", "2026-03-30", 2},
		{"America/New_York", "2026-10-31", "2026-11-02", 2},
		{"Asia/Kathmandu", "2026-03-01", "2026-03-31", 1},      // +05:45
		{"Australia/Lord_Howe", "2026-01-01", "2026-12-31", 3}, // +11, +10:30, +11
		{"UTC", "2026-03-01", "2026-03-01", 1},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseReportRange(c.from, c.to, loc)
		if err != nil {
			t.Fatal(err)
		}
		offs := r.Offsets()
		if len(offs) != c.offsets || !offs[0].From.Equal(r.Start) {
			t.Errorf("%s %s..%s: offsets %+v, want %d from %s", c.zone, c.from, c.to, offs, c.offsets, r.Start)
			continue
		}
		from, _ := time.Parse(time.DateOnly, r.From)
		dayOf := func(at time.Time) int {
			i := 0
			for i+1 < len(offs) && !at.Before(offs[i+1].From) {
				i++
			}
			local := at.Add(time.Duration(offs[i].Seconds) * time.Second)
			d := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
			return int(d.Sub(from) / (24 * time.Hour))
		}
		for at := r.Start; at.Before(r.End); at = at.Add(7 * time.Minute) {
			i := dayOf(at)
			if i < 0 || i >= len(r.Days) || r.Days[i] != r.DayOf(at) {
				t.Fatalf("%s: %s is day %d by the offsets, %s by DayOf", c.zone, at, i, r.DayOf(at))
			}
		}
		for i := range r.Days {
			start := r.DayStart(i)
			if r.DayOf(start) != r.Days[i] || dayOf(start) != i || (i > 0 && r.DayOf(start.Add(-time.Second)) != r.Days[i-1]) {
				t.Errorf("%s: day %d (%s) starts at %s", c.zone, i, r.Days[i], start)
			}
		}
		if end := r.End.Add(-time.Second); dayOf(end) != len(r.Days)-1 {
			t.Errorf("%s: the range's last second is day %d", c.zone, dayOf(end))
		}
	}
}
