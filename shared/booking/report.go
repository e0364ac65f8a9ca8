package booking

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// The owner's reports (GET /admin/reports, the CSV export, the console's 报表):
// the range they cover, the shop zone's offsets over it (by which the store
// puts each fact in its shop day), and the arithmetic that turns the store's
// sums into the figures: what each figure counts is decided here.

// MaxReportDays is the longest range a report covers, from and to both
// counted.
const MaxReportDays = 366

// ReportRange is the dates a report covers in shop time, both counted, and the
// instants that bound them: Start is From's midnight, End the midnight after
// To (UTC).
type ReportRange struct {
	From, To   string
	Start, End time.Time
	Days       []string
	Loc        *time.Location
}

// ParseReportRange reads a report's from and to (YYYY-MM-DD in shop time):
// both must be dates of ParseDate (years MinDateYear-MaxDateYear), from no
// later than to, and at most MaxReportDays days from and to both counted.
// Anything else is BAD_REQUEST.
func ParseReportRange(from, to string, loc *time.Location) (ReportRange, error) {
	f, err := ParseDate(from, loc)
	if err != nil {
		return ReportRange{}, err
	}
	t, err := ParseDate(to, loc)
	if err != nil {
		return ReportRange{}, err
	}
	if t.Before(f) {
		return ReportRange{}, Errorf(EBADREQUEST, "from %s is after to %s", from, to)
	}
	r := ReportRange{From: from, To: to, Start: f.UTC(), Loc: loc}
	for d := 0; ; d++ {
		day := time.Date(f.Year(), f.Month(), f.Day()+d, 0, 0, 0, 0, loc)
		if day.After(t) {
			r.End = day.UTC()
			break
		}
		if d == MaxReportDays {
			return ReportRange{}, Errorf(EBADREQUEST, "from %s to %s is more than %d days", from, to, MaxReportDays)
		}
		r.Days = append(r.Days, day.Format(time.DateOnly))
	}
	return r, nil
}

// DayOf is the shop date of t.
func (r ReportRange) DayOf(t time.Time) string { return t.In(r.Loc).Format(time.DateOnly) }

// DayStart is the first instant (UTC) of the range's day i (0 is From): its
// midnight in shop time, as ParseReportRange takes it.
func (r ReportRange) DayStart(i int) time.Time {
	f := r.Start.In(r.Loc)
	return time.Date(f.Year(), f.Month(), f.Day()+i, 0, 0, 0, 0, r.Loc).UTC()
}

// ReportOffset is the shop zone's offset from UTC, in seconds east, from the
// instant From (UTC) until the next offset's From.
type ReportOffset struct {
	From    time.Time
	Seconds int
}

// Offsets are the shop zone's offsets over the range's instants, in order: the
// first from Start, then one from each change of the offset (daylight saving,
// or a change of the zone's rules) before End. An instant's shop date is the
// date of the instant plus its offset, so the store puts each fact in its day
// with these alone, as a date difference from From, whatever the offset (whole
// hours, 5:45, a 30-minute daylight-saving shift) and with no time-zone table
// in the database.
func (r ReportRange) Offsets() []ReportOffset {
	var out []ReportOffset
	for t := r.Start; t.Before(r.End); {
		local := t.In(r.Loc)
		_, off := local.Zone()
		if n := len(out); n == 0 || out[n-1].Seconds != off {
			out = append(out, ReportOffset{From: t, Seconds: off})
		}
		_, end := local.ZoneBounds()
		if end.IsZero() || !end.After(t) {
			break
		}
		t = end.UTC()
	}
	return out
}

// ReportBookingCount is how many bookings that start on the shop day of At
// (UTC; the store gives the day's first instant) have one status; LateCancel
// splits the cancelled ones: a late cancel (the booking says so: the
// customer's cancel after cancelFreeUntil, or a cancel that kept its
// deposit).
type ReportBookingCount struct {
	At         time.Time
	Status     Status
	LateCancel bool
	N          int
}

// ReportMoneySum is the money that moved on the shop day of At (UTC; the
// store gives the day's first instant), by the ledger's kinds: deposits paid
// online, balances paid in the shop, refunds that succeeded, and deposits kept
// (a kept row and its negation both count, each on its own day).
type ReportMoneySum struct {
	At                                       time.Time
	OnlineFen, ShopFen, RefundedFen, KeptFen int64
}

// ReportCompleted is the completed bookings of the range of one technician
// with one service (0 and "" in seat mode): how many, their minutes, and
// their takings, the deposits and shop payments of those bookings less their
// refunds, whenever that money moved.
type ReportCompleted struct {
	TechnicianID   int64
	TechnicianName string
	ServiceID      int64
	ServiceName    string
	Completed      int
	Minutes        int
	TakingsFen     int64
}

// ReportFacts are the store's sums for one range, read together from the
// facts (the bookings and the ledger) in one snapshot.
type ReportFacts struct {
	Bookings  []ReportBookingCount
	Money     []ReportMoneySum
	Completed []ReportCompleted
}

// ReportDay is one shop date of a report.
//
// Bookings counts every booking whose slot starts that day except the holds
// that expired unpaid (they never held a sold seat): pending, confirmed,
// completed, cancelled and no-show. Completed, NoShows and Cancelled count
// those statuses; LateCancels the cancelled ones that were late cancels (a
// subset of Cancelled). The money counts on the day it moved:
// NetFen = OnlineFen + ShopFen - RefundedFen; KeptFen is the deposits kept
// that day (a no-show checked in late takes its kept deposit back on the day
// of the check-in, so a day's KeptFen may be negative).
type ReportDay struct {
	Date                                                 string
	Bookings, Completed, NoShows, Cancelled, LateCancels int
	OnlineFen, ShopFen, RefundedFen, KeptFen, NetFen     int64
}

// ReportTakings is one technician's or one service's completed bookings in
// the range: how many, their minutes (technicians), their takings.
type ReportTakings struct {
	ID         int64
	Name       string
	Completed  int
	Minutes    int
	TakingsFen int64
}

// Report is the owner's figures for a range. NoShowRate is no-shows /
// (completed + no-shows) over the whole range, rounded to four decimals, nil
// when both are 0.
type Report struct {
	From, To    string
	Days        []ReportDay
	Total       ReportDay // the days summed; Date is ""
	Technicians []ReportTakings
	Services    []ReportTakings
	NoShowRate  *float64
}

// BuildReport turns a range's facts into its report: one day per date of the
// range, also those with nothing, and the technicians and services by takings,
// highest first. Facts outside the range are not counted.
func BuildReport(r ReportRange, f ReportFacts) Report {
	rep := Report{From: r.From, To: r.To, Days: make([]ReportDay, len(r.Days))}
	index := make(map[string]int, len(r.Days))
	for i, d := range r.Days {
		rep.Days[i].Date = d
		index[d] = i
	}
	day := func(at time.Time) *ReportDay {
		if at.Before(r.Start) || !at.Before(r.End) {
			return nil
		}
		if i, ok := index[r.DayOf(at)]; ok {
			return &rep.Days[i]
		}
		return nil
	}
	for _, c := range f.Bookings {
		d := day(c.At)
		if d == nil || c.Status == StatusExpired {
			continue
		}
		d.Bookings += c.N
		switch c.Status {
		case StatusCompleted:
			d.Completed += c.N
		case StatusNoShow:
			d.NoShows += c.N
		case StatusCancelled:
			d.Cancelled += c.N
			if c.LateCancel {
				d.LateCancels += c.N
			}
		}
	}
	for _, m := range f.Money {
		d := day(m.At)
		if d == nil {
			continue
		}
		d.OnlineFen += m.OnlineFen
		d.ShopFen += m.ShopFen
		d.RefundedFen += m.RefundedFen
		d.KeptFen += m.KeptFen
	}
	for i := range rep.Days {
		d := &rep.Days[i]
		d.NetFen = d.OnlineFen + d.ShopFen - d.RefundedFen
		rep.Total.add(d)
	}
	rep.NoShowRate = NoShowRate(rep.Total.Completed, rep.Total.NoShows)

	techs := map[int64]*ReportTakings{}
	services := map[int64]*ReportTakings{}
	for _, c := range f.Completed {
		if c.TechnicianID != 0 {
			addTakings(techs, c.TechnicianID, c.TechnicianName, c, c.Minutes)
		}
		if c.ServiceID != 0 {
			addTakings(services, c.ServiceID, c.ServiceName, c, 0)
		}
	}
	rep.Technicians, rep.Services = byTakings(techs), byTakings(services)
	return rep
}

func (t *ReportDay) add(d *ReportDay) {
	t.Bookings += d.Bookings
	t.Completed += d.Completed
	t.NoShows += d.NoShows
	t.Cancelled += d.Cancelled
	t.LateCancels += d.LateCancels
	t.OnlineFen += d.OnlineFen
	t.ShopFen += d.ShopFen
	t.RefundedFen += d.RefundedFen
	t.KeptFen += d.KeptFen
	t.NetFen += d.NetFen
}

// NoShowRate is noShows / (completed + noShows) rounded to four decimals, nil
// when both are 0.
func NoShowRate(completed, noShows int) *float64 {
	if completed+noShows == 0 {
		return nil
	}
	rate := math.Round(float64(noShows)/float64(completed+noShows)*10000) / 10000
	return &rate
}

func addTakings(m map[int64]*ReportTakings, id int64, name string, c ReportCompleted, minutes int) {
	t, ok := m[id]
	if !ok {
		t = &ReportTakings{ID: id, Name: name}
		m[id] = t
	}
	t.Completed += c.Completed
	t.Minutes += minutes
	t.TakingsFen += c.TakingsFen
}

// byTakings lists m by takings, highest first, then by completed bookings,
// then by id.
func byTakings(m map[int64]*ReportTakings) []ReportTakings {
	out := make([]ReportTakings, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b ReportTakings) int {
		return cmp.Or(cmp.Compare(b.TakingsFen, a.TakingsFen), cmp.Compare(b.Completed, a.Completed), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// ReportLine is one booking of the CSV export, with the money of its ledger
// rows: what was paid online, in the shop (and how), refunded, and kept now.
type ReportLine struct {
	B             *Booking
	DepositFen    int64
	BalanceFen    int64
	BalanceMethod string // "" when nothing was paid in the shop
	RefundedFen   int64
	KeptFen       int64
}
