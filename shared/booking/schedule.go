package booking

import (
	"slices"
	"time"
)

// Schedule is the salon's request to open slots: every day from From to To (shop
// dates), slots of SlotMinutes from Open while a whole slot ends by Close.
type Schedule struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Open        string `json:"open"`
	Close       string `json:"close"`
	SlotMinutes *int   `json:"slotMinutes"`
	Capacity    *int   `json:"capacity"`
	PriceFen    *int64 `json:"priceFen"`
}

// ScheduledSlot is one slot a schedule makes, or one cell of a technician's
// hours (TechnicianID set: capacity 1, price 0).
type ScheduledSlot struct {
	StartAt, EndAt time.Time
	Capacity       int
	PriceFen       int64
	TechnicianID   int64
}

// maxScheduleDays bounds one request so a typo cannot create years of slots.
const maxScheduleDays = 92

// Slots validates the schedule and returns its slots, with times in loc (the
// shop's zone). Any invalid field is BAD_REQUEST and no slot is returned.
func (s *Schedule) Slots(loc *time.Location) ([]ScheduledSlot, error) {
	bad := func(format string, args ...any) ([]ScheduledSlot, error) {
		return nil, Errorf(EBADREQUEST, format, args...)
	}
	if s.SlotMinutes == nil || s.Capacity == nil || s.PriceFen == nil {
		return bad("schedule: every field is required")
	}
	from, to, open, closing, err := scheduleDays("schedule", s.From, s.To, s.Open, s.Close, loc)
	if err != nil {
		return nil, err
	}
	if m := *s.SlotMinutes; m < 5 || m > 720 {
		return bad("schedule: slotMinutes %d outside 5-720", m)
	}
	if c := *s.Capacity; c < MinCapacity || c > MaxCapacity {
		return bad("schedule: capacity %d outside %d-%d", c, MinCapacity, MaxCapacity)
	}
	if p := *s.PriceFen; p < 0 || p > 1000000 {
		return bad("schedule: priceFen %d outside 0-1000000", p)
	}
	return lay(from, to, open, closing, *s.SlotMinutes, loc, ScheduledSlot{Capacity: *s.Capacity, PriceFen: *s.PriceFen}), nil
}

// lay makes the slots of a schedule or a technician's hours: every day from
// from to to, from open while a whole slot of minutes ends by closing, each
// like proto but for its times.
func lay(from, to, open, closing time.Time, minutes int, loc *time.Location, proto ScheduledSlot) []ScheduledSlot {
	length := time.Duration(minutes) * time.Minute
	var out []ScheduledSlot
	for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
		y, m, d := day.Date()
		start := time.Date(y, m, d, open.Hour(), open.Minute(), 0, 0, loc)
		end := time.Date(y, m, d, closing.Hour(), closing.Minute(), 0, 0, loc)
		for t := start; !t.Add(length).After(end); t = t.Add(length) {
			s := proto
			s.StartAt, s.EndAt = t, t.Add(length)
			out = append(out, s)
		}
	}
	return out
}

// scheduleDays reads the from/to and open/close of a schedule or hours by
// the schedule's rules: real dates, from not after to, at most
// maxScheduleDays days; HH:MM, open before close. what names the request in
// the refusal.
func scheduleDays(what, fromS, toS, openS, closeS string, loc *time.Location) (from, to, open, closing time.Time, err error) {
	bad := func(format string, args ...any) (time.Time, time.Time, time.Time, time.Time, error) {
		return from, to, open, closing, Errorf(EBADREQUEST, what+": "+format, args...)
	}
	if fromS == "" || toS == "" || openS == "" || closeS == "" {
		return bad("from, to, open and close are required")
	}
	from, err1 := ParseDate(fromS, loc)
	to, err2 := ParseDate(toS, loc)
	if err1 != nil || err2 != nil {
		return bad("from/to must be real dates YYYY-MM-DD in years %d-%d", MinDateYear, MaxDateYear)
	}
	if from.After(to) {
		return bad("from after to")
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > maxScheduleDays {
		return bad("%d days, at most %d per request", days, maxScheduleDays)
	}
	open, err1 = ParseClock(openS)
	closing, err2 = ParseClock(closeS)
	if err1 != nil || err2 != nil {
		return bad("open/close must be HH:MM")
	}
	if !open.Before(closing) {
		return bad("open not before close")
	}
	return from, to, open, closing, nil
}

// Hours are a technician's working hours (POST /admin/technicians/{id}/hours):
// every day from From to To (shop dates), from Open to Close, by the
// schedule's rules.
type Hours struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Open  string `json:"open"`
	Close string `json:"close"`
}

// Cells validates the hours and returns technician's cells: one of
// gridMinutes (GRID_MINUTES) from Open while a whole cell ends by Close,
// every day, capacity 1 and no price (a service has the price). Open must be
// on the grid, so every cell starts on it. Any invalid field is BAD_REQUEST
// and no cell is returned.
func (h *Hours) Cells(loc *time.Location, gridMinutes int, technicianID int64) ([]ScheduledSlot, error) {
	from, to, open, closing, err := scheduleDays("hours", h.From, h.To, h.Open, h.Close, loc)
	if err != nil {
		return nil, err
	}
	if !ValidGrid(gridMinutes) {
		return nil, Errorf(EINTERNAL, "GRID_MINUTES %d does not divide an hour", gridMinutes)
	}
	if open.Minute()%gridMinutes != 0 {
		return nil, Errorf(EBADREQUEST, "hours: open %s is not on the grid of %d minutes", h.Open, gridMinutes)
	}
	return lay(from, to, open, closing, gridMinutes, loc, ScheduledSlot{Capacity: 1, PriceFen: 0, TechnicianID: technicianID}), nil
}

// TimeOff closes a technician's cells that start in [From, To) of Date (POST
// /admin/technicians/{id}/off).
type TimeOff struct {
	Date string `json:"date"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Range is the time off as instants of loc (the shop's zone): from not
// before to is BAD_REQUEST.
func (o *TimeOff) Range(loc *time.Location) (from, to time.Time, err error) {
	day, err := ParseDate(o.Date, loc)
	if err != nil {
		return from, to, err
	}
	f, err1 := ParseClock(o.From)
	t, err2 := ParseClock(o.To)
	if err1 != nil || err2 != nil {
		return from, to, Errorf(EBADREQUEST, "off: from/to must be HH:MM")
	}
	if !f.Before(t) {
		return from, to, Errorf(EBADREQUEST, "off: from %s not before to %s", o.From, o.To)
	}
	y, m, d := day.Date()
	return time.Date(y, m, d, f.Hour(), f.Minute(), 0, 0, loc), time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, loc), nil
}

// ParseClock reads a time of day of the API: HH:MM, two digits each, 00:00 to
// 23:59 (functions/README.md, "Conventions"). Go's "15:04" alone also takes a
// one-digit hour ("9:00"), which the contract refuses.
func ParseClock(s string) (time.Time, error) {
	if len(s) != len("15:04") || s[2] != ':' {
		return time.Time{}, Errorf(EBADREQUEST, "time of day %.40q is not HH:MM", s)
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		return time.Time{}, Errorf(EBADREQUEST, "time of day %.40q is not HH:MM", s)
	}
	return t, nil
}

// The years a date of the API may name (functions/README.md, "Conventions").
// Go parses 0000-9999, but MySQL's DATETIME starts at 1000-01-01 (earlier
// values are errors or zero dates, depending on sql_mode), and a day, a week or
// a 92-day schedule starting in 9999 runs past 9999-12-31, the last it can
// hold. Every start this allows, plus a week or a schedule's end, still fits.
const (
	MinDateYear = 1000
	MaxDateYear = 9998
)

// ParseDate is the one date rule of the API, used by every handler, the
// console and the schedule's validation: date is YYYY-MM-DD (exactly that
// shape, a day that exists) in years MinDateYear-MaxDateYear, and names
// midnight of that day in loc, the shop's zone. Anything else is BAD_REQUEST.
func ParseDate(date string, loc *time.Location) (time.Time, error) {
	day, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		return time.Time{}, Errorf(EBADREQUEST, "date %.40q is not YYYY-MM-DD", date)
	}
	if y := day.Year(); y < MinDateYear || y > MaxDateYear {
		return time.Time{}, Errorf(EBADREQUEST, "date %s: the year is outside %d-%d", date, MinDateYear, MaxDateYear)
	}
	return day, nil
}

// DayBounds returns the start of the shop day named by date (see ParseDate)
// and of the next day. A slot is listed under the day it starts.
func DayBounds(date string, loc *time.Location) (time.Time, time.Time, error) {
	day, err := ParseDate(date, loc)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return day, day.AddDate(0, 0, 1), nil
}

// ClearOf is cells less each one that overlaps any of taken in time, and how
// many it left out: a technician's new cells never overlap her existing ones
// (laid before GRID_MINUTES changed, or at the same start), so no instant of
// her time is two cells that two bookings could take. Two spans overlap when
// each starts before the other ends; touching ends do not overlap.
func ClearOf(cells []ScheduledSlot, taken []Span) (clear []ScheduledSlot, skipped int) {
	for _, c := range cells {
		if slices.ContainsFunc(taken, func(t Span) bool { return Overlap(c.StartAt, c.EndAt, t.Start, t.End) }) {
			skipped++
			continue
		}
		clear = append(clear, c)
	}
	return clear, skipped
}

// Overlap reports whether [aStart, aEnd) and [bStart, bEnd) share an instant:
// each starts before the other ends; touching ends do not overlap.
func Overlap(aStart, aEnd, bStart, bEnd time.Time) bool {
	return aStart.Before(bEnd) && bStart.Before(aEnd)
}
