package console

// Today as a calendar by technician: a column each (one at a time on a
// phone, with a switcher), a row each cell of GRID_MINUTES, each booking a
// block over its cells, the free cells leading to a walk-in of a service
// that fits there, her time off marked 休息, the free cells gone by grey,
// the hours she does not work blank, and a line at the time now. The
// signed-in technician's own column comes first.

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"salon/shared/booking"
)

type calendar struct {
	Columns []calColumn
	Rows    []calRow
	// Walk is the walk-in form of a service, opened when a free cell was
	// chosen (or a walk-in of it was just refused).
	Walk *calWalkIn
}

type calColumn struct {
	T booking.Technician
	// Shown is the column a phone shows (the others wait behind the
	// switcher); Mine marks the signed-in technician's own.
	Shown, Mine bool
	Href        string // the switcher's link to this column on a phone
}

type calRow struct {
	Time string // HH:MM
	// Now marks the cell under way, NowAt where in it the time now is (a
	// quarter: 0-3), for the line.
	Now   bool
	NowAt int
	Cells []calCell
}

// calCell is one technician's cell: covered by a block above it (Under), a
// booking's block starting here (Block, over Span cells), free and not yet
// ended (Free, with Href to a walk-in of Fits when a service fits from
// here), time off (Rest: her cell, closed), free but ended (Past), or none
// of those: no cell of hers starts then, not her hours.
type calCell struct {
	Shown bool
	Under bool
	Block *bookingRow
	Span  int
	Time  string
	Free  bool
	Rest  bool
	Past  bool
	Href  string
	Fits  string
}

type calWalkIn struct {
	Tech     int64
	At       string // HH:MM
	Service  int64  // the service chosen
	Services []calService
	Typed    *walkInTyped
}

type calService struct {
	ID       int64
	Label    string
	Selected bool
}

// calendar draws day's technicians, nil when the salon has none. rows of the
// calendar are the cells from the first to the last of any technician's
// cells that day (service.ConsoleReads.TechnicianDay, each cell as it is:
// open or closed, booked or free) or a booking holds; a free cell leads to a
// walk-in when, by the service's rules (service.Menu.Availability), a
// service she does can start at it.
func (q *Request) calendar(day time.Time, bs []*booking.Booking, walk *calWalkIn) (*calendar, error) {
	techs, err := q.s.Menu.Technicians(q.ctx)
	if err != nil {
		return nil, err
	}
	svcs, err := q.s.Menu.AdminServices(q.ctx)
	if err != nil {
		return nil, err
	}
	date := day.Format(time.DateOnly)
	grid := time.Duration(q.policy().GridMinutes) * time.Minute
	// fits are the services that can start at a technician's cell, in the
	// menu's order.
	type at struct {
		tech  int64
		start int64
	}
	fits := map[at][]booking.Service{}
	var first, last time.Time
	cover := func(from, to time.Time) {
		if first.IsZero() || from.Before(first) {
			first = from
		}
		if to.After(last) {
			last = to
		}
	}
	for _, s := range svcs {
		if !s.Active {
			continue
		}
		a, err := q.s.Menu.Availability(q.ctx, date, s.ID, 0)
		if err != nil {
			return nil, err
		}
		for _, st := range a.Starts {
			cover(st.StartAt, st.EndAt)
			for _, t := range st.Technicians {
				k := at{t.ID, st.StartAt.Unix()}
				fits[k] = append(fits[k], s)
			}
		}
	}
	booked := map[int64][]*booking.Booking{}
	for _, b := range bs {
		if b.TechnicianID != 0 && b.Status.HoldsSeat() {
			booked[b.TechnicianID] = append(booked[b.TechnicianID], b)
			cover(b.StartAt, b.EndAt)
		}
	}
	cal := &calendar{Walk: walk}
	for _, t := range techs {
		if t.Active || len(booked[t.ID]) > 0 {
			mine := q.who != nil && q.who.ID != 0 && t.StaffID == q.who.ID
			cal.Columns = append(cal.Columns, calColumn{T: t, Mine: mine})
		}
	}
	if len(cal.Columns) == 0 {
		return nil, nil
	}
	dayCells := map[at]booking.DayCell{}
	for _, c := range cal.Columns {
		hers, err := q.s.Reads.TechnicianDay(q.ctx, c.T.ID, day, day.AddDate(0, 0, 1))
		if err != nil {
			return nil, err
		}
		for _, cell := range hers {
			dayCells[at{c.T.ID, cell.StartAt.Unix()}] = cell
			cover(cell.StartAt, cell.EndAt)
		}
	}
	slices.SortStableFunc(cal.Columns, func(a, b calColumn) int { return boolOrder(b.Mine) - boolOrder(a.Mine) })
	shown := cal.Columns[0].T.ID
	if id, err := strconv.ParseInt(q.r.URL.Query().Get("tech"), 10, 64); err == nil {
		shown = id
	}
	if walk != nil {
		shown = walk.Tech
	}
	for i := range cal.Columns {
		c := &cal.Columns[i]
		c.Shown = c.T.ID == shown
		c.Href = "./?" + url.Values{"date": {date}, "tech": {strconv.FormatInt(c.T.ID, 10)}}.Encode()
	}
	if !slices.ContainsFunc(cal.Columns, func(c calColumn) bool { return c.Shown }) {
		cal.Columns[0].Shown = true
	}
	if first.IsZero() {
		return cal, nil
	}
	// Today, the cell under way is drawn too, for the line at the time now.
	if booking.ShopDay(q.now, q.loc()) == date {
		now := booking.CellStart(q.now, q.loc(), q.policy().GridMinutes)
		cover(now, now.Add(grid))
	}
	n := int((last.Sub(first) + grid - 1) / grid)
	cal.Rows = make([]calRow, n)
	for i := range cal.Rows {
		start := first.Add(time.Duration(i) * grid)
		r := &cal.Rows[i]
		r.Time = start.In(q.loc()).Format("15:04")
		if !q.now.Before(start) && q.now.Before(start.Add(grid)) {
			r.Now, r.NowAt = true, int(4*q.now.Sub(start)/grid)
		}
		r.Cells = make([]calCell, len(cal.Columns))
		for j, c := range cal.Columns {
			cell := &r.Cells[j]
			cell.Shown, cell.Time = c.Shown, r.Time
			if s := fits[at{c.T.ID, start.Unix()}]; len(s) > 0 {
				cell.Fits = s[0].Name
				cell.Href = "./?" + url.Values{"date": {date}, "tech": {strconv.FormatInt(c.T.ID, 10)},
					"at": {r.Time}, "service": {strconv.FormatInt(s[0].ID, 10)}}.Encode() + "#new-walkin"
			}
			switch dc, ok := dayCells[at{c.T.ID, start.Unix()}]; {
			case !ok: // not her hours
			case !dc.Open:
				cell.Rest = true
			case dc.Booked >= dc.Capacity: // under its booking's block
			case !q.now.Before(dc.EndAt):
				cell.Past = true
			default:
				cell.Free = true
			}
			if !cell.Free {
				cell.Href, cell.Fits = "", ""
			}
		}
	}
	for j, c := range cal.Columns {
		for _, b := range booked[c.T.ID] {
			i := int(b.StartAt.Sub(first) / grid)
			cells := max(1, int((b.EndAt.Sub(b.StartAt)+grid-1)/grid))
			row := q.row(b)
			cal.Rows[i].Cells[j] = calCell{Shown: c.Shown, Block: &row, Span: cells, Time: span(b.StartAt, b.EndAt, q.loc())}
			for k := i + 1; k < i+cells && k < n; k++ {
				cal.Rows[k].Cells[j].Under = true
			}
		}
	}
	if walk != nil {
		t := slices.IndexFunc(cal.Columns, func(c calColumn) bool { return c.T.ID == walk.Tech })
		for _, s := range svcs {
			if s.Active && (t < 0 || slices.Contains(cal.Columns[t].T.ServiceIDs, s.ID)) {
				walk.Services = append(walk.Services, calService{ID: s.ID, Selected: s.ID == walk.Service,
					Label: s.Name + "（" + strconv.Itoa(s.Minutes) + " 分钟，" + yuan(s.PriceFen) + "）"})
			}
		}
	}
	return cal, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// calWalkInAsked is the walk-in form a free cell's link asks for
// (?tech=&at=HH:MM&service=), nil when none was.
func calWalkInAsked(v url.Values) *calWalkIn {
	tech, err := strconv.ParseInt(v.Get("tech"), 10, 64)
	if err != nil || v.Get("at") == "" {
		return nil
	}
	if _, err := booking.ParseClock(v.Get("at")); err != nil {
		return nil
	}
	svc, _ := strconv.ParseInt(v.Get("service"), 10, 64)
	return &calWalkIn{Tech: tech, At: v.Get("at"), Service: svc}
}
