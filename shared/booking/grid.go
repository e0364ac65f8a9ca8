package booking

import (
	"cmp"
	"slices"
	"time"
)

// A technician's time is cells: t_slot rows with her id, capacity 1, one per
// GRID_MINUTES, laid by her hours from a start on the grid. A booking of a
// service of m minutes holds the m/GRID_MINUTES consecutive cells of one
// technician from its start (a Span), all taken by one conditional statement
// or none, so no two bookings of one technician ever overlap, whatever their
// lengths. The rules here are pure: which technician a booking tries, whether
// a start is free, what a day offers; the store reads the cells and runs the
// statements.

// DefaultGridMinutes is GRID_MINUTES' default.
const DefaultGridMinutes = 30

// ValidGrid reports whether minutes can be GRID_MINUTES: a length that
// divides the hour, so every hour starts a cell and a day's cells line up
// the same way whatever the day.
func ValidGrid(minutes int) bool { return minutes > 0 && 60%minutes == 0 }

// CellsIn is how many cells of gridMinutes a span of minutes holds.
func CellsIn(minutes, gridMinutes int) int { return minutes / gridMinutes }

// CellStart is the start of the cell of gridMinutes that t falls in, by the
// clock of loc (the shop's): a walk-in without a start sits down in the cell
// running now.
func CellStart(t time.Time, loc *time.Location, gridMinutes int) time.Time {
	l := t.In(loc)
	y, mo, d := l.Date()
	return time.Date(y, mo, d, l.Hour(), l.Minute()-l.Minute()%gridMinutes, 0, 0, loc)
}

// Span is the time a booking of a service holds of one technician: her cells
// that start in [Start, End).
type Span struct {
	TechnicianID int64
	Start, End   time.Time
	// Cells are the ids of those cells, in start order (or, in a move's plan,
	// the ones it takes or returns).
	Cells []int64
}

// Minutes is the span's length.
func (s Span) Minutes() int { return int(s.End.Sub(s.Start) / time.Minute) }

// SpanState is what a technician's cells over one span are, as read.
type SpanState int

const (
	// SpanOutside: a cell of it is missing or closed (outside her hours,
	// time off, a start off the grid): not bookable.
	SpanOutside SpanState = iota
	// SpanTaken: every cell is there and open, one of them held by another
	// booking.
	SpanTaken
	// SpanFree: every cell is there, open and free.
	SpanFree
)

// SpanOf is the state of the span of minutes from start in cells (one
// technician's, in any order) with grid gridMinutes, and the ids of its cells
// in start order when none is missing. own are cells the asking booking holds
// itself: a move that overlaps its own time finds them free.
func SpanOf(cells []Slot, start time.Time, minutes, gridMinutes int, own []int64) (SpanState, []int64) {
	byStart := make(map[int64]*Slot, len(cells))
	for i := range cells {
		byStart[cells[i].StartAt.UnixMicro()] = &cells[i]
	}
	grid := time.Duration(gridMinutes) * time.Minute
	n := CellsIn(minutes, gridMinutes)
	if n <= 0 {
		return SpanOutside, nil
	}
	state, ids := SpanFree, make([]int64, 0, n)
	for k := range n {
		at := start.Add(time.Duration(k) * grid)
		c, ok := byStart[at.UnixMicro()]
		if !ok || !c.Open || !c.EndAt.Equal(at.Add(grid)) {
			return SpanOutside, nil
		}
		if c.Booked >= c.Capacity && !slices.Contains(own, c.ID) {
			state = SpanTaken
		}
		ids = append(ids, c.ID)
	}
	return state, ids
}

// AllowsStart reports whether a booking of a technician's time may start at
// start under rule r at now (the database's clock), apart from its cells
// being open and free: the rule's condition of a slot, judged on the span's
// first cell (start to start plus the grid). A customer's booking or move
// (SeatIfOpenForBooking): not started, within the booking window; the
// salon's walk-in (SeatIfOpenForWalkIn): the first cell not ended, within the
// window; the salon's move (SeatIfNotEnded): the first cell not ended. The
// store's cell-taking statement spells the same (a test of the store checks
// the two agree). The waitlist's SeatIfFree has no technician form.
func (r SeatRule) AllowsStart(start time.Time, gridMinutes int, now time.Time, windowDays int) bool {
	firstEnd := start.Add(time.Duration(gridMinutes) * time.Minute)
	inWindow := !start.After(now.Add(time.Duration(windowDays) * 24 * time.Hour))
	switch r {
	case SeatIfOpenForBooking:
		return start.After(now) && inWindow
	case SeatIfOpenForWalkIn:
		return firstEnd.After(now) && inWindow
	case SeatIfNotEnded:
		return firstEnd.After(now)
	}
	return false
}

// Candidate is a technician considered for a booking of a service, with the
// facts that decide whether and in which order she is tried.
type Candidate struct {
	Technician TechnicianRef
	// Does: she is active and does the service.
	Does bool
	// BookedMinutes are her minutes held by bookings that shop day.
	BookedMinutes int
	// Cells are her cells of that day (or at least of the span asked for).
	Cells []Slot
}

// ServiceFacts are what the store reads for a booking of a service at a
// start (a reservation, a walk-in) or for a day's free starts.
type ServiceFacts struct {
	// Service is nil when the menu has no such active service.
	Service *Service
	// Named is the technician asked for, 0 for any. Candidates are she alone
	// when she exists (Does false when she does not do the service), else the
	// active technicians who do it; each with her cells of the shop day.
	Named      int64
	Candidates []Candidate
	Now        time.Time
	// DayStart and DayEnd are the shop day the facts are of: FreeStarts lists
	// the starts in it (a candidate's cells may run past its end, so that a
	// span crossing midnight is judged on every cell).
	DayStart, DayEnd time.Time
}

// menuRefusal is NOT_FOUND for a service not on the menu or a named
// technician who does not exist, SLOT_NOT_BOOKABLE for one who does not do
// the service.
func (f ServiceFacts) menuRefusal(serviceID int64) error {
	switch {
	case f.Service == nil:
		return Errorf(ENOTFOUND, "service %d not found", serviceID)
	case f.Named != 0 && len(f.Candidates) == 0:
		return Errorf(ENOTFOUND, "technician %d not found", f.Named)
	case f.Named != 0 && !f.Candidates[0].Does:
		return Errorf(ESLOTNOTBOOKABLE, "technician %d does not do service %d", f.Named, f.Service.ID)
	}
	return nil
}

// pickOrder sorts candidates the way a booking without a named technician
// tries them: fewest booked minutes that day first, then the lowest id, so
// the work spreads over the day's technicians in an order anyone can predict.
func pickOrder(cs []Candidate) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.BookedMinutes, b.BookedMinutes), cmp.Compare(a.Technician.ID, b.Technician.ID))
	})
}

// TechniciansToTry is the order in which a new booking of service serviceID
// at start, under rule (the creation row's), tries technicians: those whose
// cells of the span are all there, open and free, fewest booked minutes that
// day first, then the lowest id; each as the span it would take. The store
// tries them in turn, each in a transaction of its own, since one may be
// taken meanwhile. Or why none can be tried:
//   - NOT_FOUND: no such service on the menu, or no such technician;
//   - SLOT_NOT_BOOKABLE: the named technician does not do the service, the
//     start breaks the rule (started, beyond the window), or no technician
//     considered has every cell of the span open (outside her hours, time
//     off, a start off the grid);
//   - SOLD_OUT: every technician with the span open has a cell of it taken.
func (p Policy) TechniciansToTry(f ServiceFacts, serviceID int64, start time.Time, rule SeatRule) ([]Span, error) {
	if err := f.menuRefusal(serviceID); err != nil {
		return nil, err
	}
	if !rule.AllowsStart(start, p.GridMinutes, f.Now, p.BookingWindowDays) {
		return nil, Errorf(ESLOTNOTBOOKABLE, "start %s: started, ended or beyond the window", start.Format(time.RFC3339))
	}
	minutes := f.Service.Minutes
	end := start.Add(time.Duration(minutes) * time.Minute)
	cands := slices.Clone(f.Candidates)
	pickOrder(cands)
	var spans []Span
	open := false
	for _, c := range cands {
		if !c.Does {
			continue
		}
		state, ids := SpanOf(c.Cells, start, minutes, p.GridMinutes, nil)
		open = open || state != SpanOutside
		if state == SpanFree {
			spans = append(spans, Span{TechnicianID: c.Technician.ID, Start: start, End: end, Cells: ids})
		}
	}
	switch {
	case len(spans) > 0:
		return spans, nil
	case open:
		return nil, Errorf(ESOLDOUT, "service %d at %s: every technician busy", serviceID, start.Format(time.RFC3339))
	}
	return nil, Errorf(ESLOTNOTBOOKABLE, "service %d at %s: no technician works then", serviceID, start.Format(time.RFC3339))
}

// FreeStart is a start of a service at which at least one technician is free.
type FreeStart struct {
	StartAt, EndAt time.Time
	// Technicians are those free at it, in the order a booking without a
	// named technician tries them (the first is whom it would get then).
	Technicians []TechnicianRef
}

// FreeStarts lists the starts of f's service on f's shop day at which a technician considered has every cell of the span open and
// free, a customer could reserve it now (not started, within the booking
// window), each with the technicians free at it; earliest first. A service
// not on the menu or a named technician who does not exist is NOT_FOUND; one
// who does not do the service has no free start.
func (p Policy) FreeStarts(f ServiceFacts, serviceID int64) ([]FreeStart, error) {
	if err := f.menuRefusal(serviceID); err != nil {
		if IsCode(err, ESLOTNOTBOOKABLE) {
			return []FreeStart{}, nil
		}
		return nil, err
	}
	minutes := f.Service.Minutes
	cands := slices.Clone(f.Candidates)
	pickOrder(cands)
	byStart := map[int64]*FreeStart{}
	for _, c := range cands {
		if !c.Does {
			continue
		}
		for _, cell := range c.Cells {
			if cell.StartAt.Before(f.DayStart) || !cell.StartAt.Before(f.DayEnd) {
				continue
			}
			if !SeatIfOpenForBooking.AllowsStart(cell.StartAt, p.GridMinutes, f.Now, p.BookingWindowDays) {
				continue
			}
			if state, _ := SpanOf(c.Cells, cell.StartAt, minutes, p.GridMinutes, nil); state != SpanFree {
				continue
			}
			k := cell.StartAt.UnixMicro()
			if byStart[k] == nil {
				byStart[k] = &FreeStart{StartAt: cell.StartAt, EndAt: cell.StartAt.Add(time.Duration(minutes) * time.Minute)}
			}
			byStart[k].Technicians = append(byStart[k].Technicians, c.Technician)
		}
	}
	out := make([]FreeStart, 0, len(byStart))
	for _, s := range byStart {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b FreeStart) int { return a.StartAt.Compare(b.StartAt) })
	return out, nil
}

// BookedMinutes are the minutes of cells held by a booking.
func BookedMinutes(cells []Slot) int {
	n := 0
	for _, c := range cells {
		if c.Booked > 0 {
			n += int(c.EndAt.Sub(c.StartAt) / time.Minute)
		}
	}
	return n
}

// InTheWay is a refusal (INVALID_STATE) of a change that bookings stand in
// the way of, naming them: time off over cells someone holds. errors.As
// finds it; ErrorCode and ErrorMessage see its *Error.
type InTheWay struct {
	Err      *Error
	Bookings []*Booking
}

func (e *InTheWay) Error() string { return e.Err.Error() }

// Unwrap is the refusal's *Error, for ErrorCode and errors.As.
func (e *InTheWay) Unwrap() error { return e.Err }
