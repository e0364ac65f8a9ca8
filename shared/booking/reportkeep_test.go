package booking

import (
	"reflect"
	"testing"
	"time"
)

func TestPlanReport(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseReportRange("2026-03-01", "2026-03-05", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	days := r.Spans()
	day := func(i int) time.Time { return days[i].Start }
	// Now is 2026-03-05 10:00 shop time: the 1st to the 4th have ended.
	now := day(4).Add(10 * time.Hour)
	checked := now.Add(-time.Minute)
	keptAll := func(at time.Time) map[time.Time]ReportKept {
		m := map[time.Time]ReportKept{}
		for i := range 4 {
			m[day(i)] = ReportKept{Start: day(i), End: days[i].End, CheckedAt: at}
		}
		return m
	}
	const week = 7 * 24 * time.Hour
	for _, c := range []struct {
		name        string
		kept        map[time.Time]ReportKept
		changes     []ReportChange
		now         time.Time
		changesKept time.Duration
		want        ReportPlan
	}{
		{name: "nothing kept: all read, the ended days kept",
			want: ReportPlan{Runs: [][2]int{{0, 5}}, Keep: []int{0, 1, 2, 3}}},
		{name: "kept and unchanged", kept: keptAll(checked),
			want: ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}}},
		{name: "a change after the check", kept: keptAll(checked),
			changes: []ReportChange{{At: day(1).Add(3 * time.Hour), When: checked.Add(time.Minute)}},
			want:    ReportPlan{Kept: []int{0, 2, 3}, Runs: [][2]int{{1, 2}, {4, 5}}, Keep: []int{1}}},
		{name: "a change written just before the check may not have been seen", kept: keptAll(checked),
			changes: []ReportChange{{At: day(2), When: checked.Add(-ReportSettle)}},
			want:    ReportPlan{Kept: []int{0, 1, 3}, Runs: [][2]int{{2, 3}, {4, 5}}, Keep: []int{2}}},
		{name: "a change long before the check was seen by it", kept: keptAll(checked),
			changes: []ReportChange{{At: day(2), When: checked.Add(-ReportSettle - time.Microsecond)}},
			want:    ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}}},
		{name: "a change at a day's last instant is that day's", kept: keptAll(checked),
			changes: []ReportChange{{At: days[3].End.Add(-time.Microsecond), When: now}},
			want:    ReportPlan{Kept: []int{0, 1, 2}, Runs: [][2]int{{3, 5}}, Keep: []int{3}}},
		{name: "changes outside the range change nothing", kept: keptAll(checked),
			changes: []ReportChange{{At: day(0).Add(-time.Microsecond), When: now}, {At: days[4].End, When: now}},
			want:    ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}}},
		{name: "a day kept for other instants (SHOP_TZ changed)", kept: func() map[time.Time]ReportKept {
			m := keptAll(checked)
			m[day(0)] = ReportKept{Start: day(0), End: days[0].End.Add(time.Hour), CheckedAt: checked}
			return m
		}(), want: ReportPlan{Kept: []int{1, 2, 3}, Runs: [][2]int{{0, 1}, {4, 5}}, Keep: []int{0}}},
		{name: "checked longer ago than the audit trail is kept", kept: keptAll(now.Add(-week)), changesKept: week,
			want: ReportPlan{Runs: [][2]int{{0, 5}}, Keep: []int{0, 1, 2, 3}}},
		{name: "checked within the audit trail's keeping, and renewed", kept: keptAll(now.Add(-week + time.Hour)), changesKept: week,
			want: ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}, Renew: []int{0, 1, 2, 3}}},
		{name: "a check just under ReportRenew old is not renewed", kept: keptAll(now.Add(-ReportRenew)),
			want: ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}}},
		{name: "one just over is", kept: keptAll(now.Add(-ReportRenew - time.Microsecond)),
			want: ReportPlan{Kept: []int{0, 1, 2, 3}, Runs: [][2]int{{4, 5}}, Renew: []int{0, 1, 2, 3}}},
		{name: "a day that ended less than ReportSettle ago is read, not kept",
			now:  day(4).Add(ReportSettle - time.Microsecond),
			want: ReportPlan{Runs: [][2]int{{0, 5}}, Keep: []int{0, 1, 2}}},
	} {
		at := now
		if !c.now.IsZero() {
			at = c.now
		}
		kept := c.kept
		if kept == nil {
			kept = map[time.Time]ReportKept{}
		}
		got := PlanReport(days, kept, c.changes, at, c.changesKept)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestReportChangesSince(t *testing.T) {
	r, err := ParseReportRange("2026-03-01", "2026-03-03", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	days := r.Spans()
	now := days[2].End
	old, recent := now.Add(-10*time.Hour), now.Add(-time.Hour)
	kept := map[time.Time]ReportKept{
		days[0].Start: {Start: days[0].Start, End: days[0].End, CheckedAt: recent},
		days[1].Start: {Start: days[1].Start, End: days[1].End, CheckedAt: old},
	}
	if since, ok := ReportChangesSince(days, kept, now, 0); !ok || !since.Equal(old.Add(-ReportSettle)) {
		t.Errorf("since %s %v, want the oldest check less ReportSettle", since, ok)
	}
	// The older check is beyond the audit trail's keeping: only the recent one counts.
	if since, ok := ReportChangesSince(days, kept, now, 5*time.Hour); !ok || !since.Equal(recent.Add(-ReportSettle)) {
		t.Errorf("since %s %v, want the trusted check less ReportSettle", since, ok)
	}
	if _, ok := ReportChangesSince(days, map[time.Time]ReportKept{}, now, 0); ok {
		t.Error("nothing kept: nothing to read")
	}
}

// TestDayFacts: the facts of a day summed as they are kept, those of other
// days left out.
func TestDayFacts(t *testing.T) {
	r, err := ParseReportRange("2026-03-01", "2026-03-02", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Spans()[0]
	in, next := d.Start.Add(time.Hour), d.End
	f := ReportFacts{
		Bookings: []ReportBookingCount{{At: in, Status: StatusCompleted, N: 2}, {At: in.Add(time.Hour), Status: StatusCompleted, N: 1},
			{At: in, Status: StatusCancelled, LateCancel: true, N: 1}, {At: next, Status: StatusCompleted, N: 5}},
		Money: []ReportMoneySum{{At: in, OnlineFen: 100, KeptFen: 5}, {At: in.Add(time.Hour), ShopFen: 7, RefundedFen: 3}, {At: next, OnlineFen: 1}},
		Completed: []ReportCompleted{{At: in, TechnicianID: 1, ServiceID: 2, Completed: 1, Minutes: 60, TakingsFen: 10},
			{At: in.Add(time.Hour), TechnicianID: 1, ServiceID: 2, Completed: 2, Minutes: 120, TakingsFen: 20},
			{At: next, TechnicianID: 1, ServiceID: 2, Completed: 9}},
	}
	want := ReportFacts{
		Bookings:  []ReportBookingCount{{At: d.Start, Status: StatusCompleted, N: 3}, {At: d.Start, Status: StatusCancelled, LateCancel: true, N: 1}},
		Money:     []ReportMoneySum{{At: d.Start, OnlineFen: 100, ShopFen: 7, RefundedFen: 3, KeptFen: 5}},
		Completed: []ReportCompleted{{At: d.Start, TechnicianID: 1, ServiceID: 2, Completed: 3, Minutes: 180, TakingsFen: 30}},
	}
	if got := DayFacts(d, f); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestFactsByDay: each fact goes to the day its instant falls in, a day's
// end to the next, one outside every day nowhere; each day's DayFacts of its
// part equals its DayFacts of all the facts.
func TestFactsByDay(t *testing.T) {
	r, err := ParseReportRange("2026-03-01", "2026-03-03", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	days := r.Spans()
	first, last := days[0], days[len(days)-1]
	f := ReportFacts{
		Bookings: []ReportBookingCount{{At: first.Start, Status: StatusCompleted, N: 1}, {At: first.End, Status: StatusNoShow, N: 2},
			{At: last.End, Status: StatusCompleted, N: 9}, {At: first.Start.Add(-time.Second), Status: StatusCompleted, N: 8}},
		Money:     []ReportMoneySum{{At: last.Start.Add(time.Hour), OnlineFen: 100}, {At: first.End.Add(-time.Nanosecond), ShopFen: 7}},
		Completed: []ReportCompleted{{At: days[1].Start.Add(time.Minute), TechnicianID: 1, ServiceID: 2, Completed: 1, Minutes: 60}},
	}
	got := FactsByDay(days, f)
	want := []ReportFacts{
		{Bookings: f.Bookings[:1], Money: f.Money[1:2]},
		{Bookings: f.Bookings[1:2], Completed: f.Completed},
		{Money: f.Money[:1]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	for i, d := range days {
		if a, b := DayFacts(d, got[i]), DayFacts(d, f); !reflect.DeepEqual(a, b) {
			t.Errorf("day %d: its part sums to %+v, all the facts to %+v", i, a, b)
		}
	}
}
