package booking

import (
	"slices"
	"time"
)

// A report of a year reads a year of bookings and money. Days that have ended
// change rarely (a late checkout, a refund, a no-show checked in after all),
// so the store keeps each ended day's sums once it has read them, and a later
// report reads the kept sums instead of the day's rows: its cost grows with
// the days of the range, not with the bookings they hold.
//
// A kept day is used only while nothing that counts on it has changed since
// it was last found current. Every such change leaves a trace with the
// database's time: a booking's status, move or checkout writes an audit record
// (a move names the slot it left), and money is a ledger row. So the store
// reads the traces written since the oldest day it would use, and the rules
// below decide which days are read afresh.

// ReportSettle is how long after a day ends its sums are kept, and how far
// back before a kept day's check the traces are read again: a change whose
// transaction began before the check but committed after it is seen by the
// next report. No transaction of the product lasts that long.
const ReportSettle = 15 * time.Minute

// ReportRenew is how old a kept day's check may grow before a report that
// used it renews it (writes its new time): the traces a report reads are those
// since the oldest check it relies on, so renewing keeps that read short,
// and not renewing a recent one spares a write per day on every report.
const ReportRenew = time.Hour

// ReportDaySpan is one shop day of a report as instants: [Start, End) in UTC.
type ReportDaySpan struct {
	Date       string
	Start, End time.Time
}

// Spans are the range's days as instants, in order.
func (r ReportRange) Spans() []ReportDaySpan {
	out := make([]ReportDaySpan, len(r.Days))
	for i, d := range r.Days {
		day, _ := time.ParseInLocation(time.DateOnly, d, r.Loc)
		next := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, r.Loc)
		out[i] = ReportDaySpan{Date: d, Start: day.UTC(), End: next.UTC()}
	}
	return out
}

// ReportKept is the stamp of one kept day: the instants it was kept for and
// when its sums were last found current.
type ReportKept struct {
	Start, End time.Time
	CheckedAt  time.Time
}

// ReportChange is a trace of a change to the sums of the day that holds At
// (a booking's slot start, or the time money moved), written at When.
type ReportChange struct {
	At, When time.Time
}

// ReportPlan is how a report's days are read: Kept from the kept sums, Runs
// (half-open index ranges [i, j) of the days, in order) from the bookings and
// the ledger; Keep are the days of the runs that have ended, whose sums the
// store keeps afterwards, and Renew the kept days whose check the store
// renews (older than ReportRenew).
type ReportPlan struct {
	Kept  []int
	Runs  [][2]int
	Keep  []int
	Renew []int
}

// reportTrust says whether a kept day may be used at now at all: the traces
// that would show a change are audit records, which the release run deletes
// changesKept after CLS took them (0: never), so a day last checked longer ago
// than that is read afresh.
func reportTrust(k ReportKept, now time.Time, changesKept time.Duration) bool {
	return changesKept <= 0 || k.CheckedAt.After(now.Add(-changesKept+ReportSettle))
}

// ReportChangesSince is the instant from which the traces must be read to
// judge the kept days that may be used: ReportSettle before the oldest check
// among them. ok is false when no kept day may be used (nothing to read).
func ReportChangesSince(days []ReportDaySpan, kept map[time.Time]ReportKept, now time.Time, changesKept time.Duration) (since time.Time, ok bool) {
	for _, d := range days {
		k, found := kept[d.Start]
		if !found || !k.End.Equal(d.End) || !reportTrust(k, now, changesKept) {
			continue
		}
		if at := k.CheckedAt.Add(-ReportSettle); !ok || at.Before(since) {
			since, ok = at, true
		}
	}
	return since, ok
}

// PlanReport decides, at now, which days come from the kept sums: a day kept
// for exactly its instants (a change of SHOP_TZ moves them), trusted, and
// with no trace of a change written since ReportSettle before its check. Every
// other day is read afresh, consecutive ones in one run; of those, the days
// that ended ReportSettle before now are kept.
func PlanReport(days []ReportDaySpan, kept map[time.Time]ReportKept, changes []ReportChange, now time.Time, changesKept time.Duration) ReportPlan {
	changed := make([]bool, len(days))
	for _, c := range changes {
		i, found := dayOf(days, c.At)
		if !found {
			continue
		}
		if k, ok := kept[days[i].Start]; ok && !c.When.Before(k.CheckedAt.Add(-ReportSettle)) {
			changed[i] = true
		}
	}
	var p ReportPlan
	for i, d := range days {
		k, ok := kept[d.Start]
		if ok && k.End.Equal(d.End) && reportTrust(k, now, changesKept) && !changed[i] {
			p.Kept = append(p.Kept, i)
			if k.CheckedAt.Before(now.Add(-ReportRenew)) {
				p.Renew = append(p.Renew, i)
			}
			continue
		}
		if n := len(p.Runs); n > 0 && p.Runs[n-1][1] == i {
			p.Runs[n-1][1] = i + 1
		} else {
			p.Runs = append(p.Runs, [2]int{i, i + 1})
		}
		if !d.End.After(now.Add(-ReportSettle)) {
			p.Keep = append(p.Keep, i)
		}
	}
	return p
}

// dayOf finds the day of days (in order, end to end) that instant at falls in.
func dayOf(days []ReportDaySpan, at time.Time) (int, bool) {
	return slices.BinarySearchFunc(days, at, func(d ReportDaySpan, at time.Time) int {
		switch {
		case !d.End.After(at):
			return -1
		case d.Start.After(at):
			return 1
		}
		return 0
	})
}

// FactsByDay parts the facts of f by the day of days they fall in, in one
// pass, so that each day's DayFacts reads its own facts rather than all of a
// range's (a year's first report keeps some 365 days); facts outside every
// day are left out.
func FactsByDay(days []ReportDaySpan, f ReportFacts) []ReportFacts {
	out := make([]ReportFacts, len(days))
	for _, c := range f.Bookings {
		if i, ok := dayOf(days, c.At); ok {
			out[i].Bookings = append(out[i].Bookings, c)
		}
	}
	for _, m := range f.Money {
		if i, ok := dayOf(days, m.At); ok {
			out[i].Money = append(out[i].Money, m)
		}
	}
	for _, c := range f.Completed {
		if i, ok := dayOf(days, c.At); ok {
			out[i].Completed = append(out[i].Completed, c)
		}
	}
	return out
}

// DayFacts sums the facts of f whose instant falls in [d.Start, d.End), to
// be kept as the day's: one count per status and late cancel, one money sum,
// one line per technician and service; each At is d.Start.
func DayFacts(d ReportDaySpan, f ReportFacts) ReportFacts {
	in := func(at time.Time) bool { return !at.Before(d.Start) && at.Before(d.End) }
	type statusKey struct {
		s    Status
		late bool
	}
	type workKey struct{ tech, service int64 }
	var out ReportFacts
	counts := map[statusKey]int{}
	var keys []statusKey
	for _, c := range f.Bookings {
		if !in(c.At) {
			continue
		}
		k := statusKey{c.Status, c.LateCancel}
		if _, ok := counts[k]; !ok {
			keys = append(keys, k)
		}
		counts[k] += c.N
	}
	for _, k := range keys {
		out.Bookings = append(out.Bookings, ReportBookingCount{At: d.Start, Status: k.s, LateCancel: k.late, N: counts[k]})
	}
	money := ReportMoneySum{At: d.Start}
	for _, m := range f.Money {
		if in(m.At) {
			money.OnlineFen += m.OnlineFen
			money.ShopFen += m.ShopFen
			money.RefundedFen += m.RefundedFen
			money.KeptFen += m.KeptFen
		}
	}
	out.Money = []ReportMoneySum{money}
	work := map[workKey]int{}
	for _, c := range f.Completed {
		if !in(c.At) {
			continue
		}
		k := workKey{c.TechnicianID, c.ServiceID}
		i, ok := work[k]
		if !ok {
			i = len(out.Completed)
			work[k] = i
			out.Completed = append(out.Completed, ReportCompleted{At: d.Start, TechnicianID: c.TechnicianID,
				TechnicianName: c.TechnicianName, ServiceID: c.ServiceID, ServiceName: c.ServiceName})
		}
		w := &out.Completed[i]
		w.Completed += c.Completed
		w.Minutes += c.Minutes
		w.TakingsFen += c.TakingsFen
	}
	return out
}
