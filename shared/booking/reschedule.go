package booking

import (
	"slices"
	"time"
)

// A reschedule moves a confirmed booking to another slot: it keeps its id,
// order number, payment and refund rights, and its status (1 -> 1, event
// reschedule); the seat moves. The rules that decide whether it may are here,
// pure, on the facts the store reads inside the move's transaction (the
// booking's row locked), so two moves of one booking cannot both pass them.

// RescheduleFacts are what the store reads for a move, in its transaction.
type RescheduleFacts struct {
	Status      Status
	Reschedules int   // how often the customer moved this booking already
	From        Slot  // the slot the booking is in (a technician's booking: its first cell)
	To          *Slot // the slot asked for; nil when it does not exist
	Now         time.Time

	// A technician's booking (Span set): its span now, with the cells it
	// holds; the service it is of; and the technician asked for (nil: there
	// is no such technician) with her cells of the span asked for.
	Span      *Span
	ServiceID int64
	ToTech    *Candidate
}

// Move is the part of a ChangePlan that only a move has.
type Move struct {
	ToSlotID int64
	// Count adds one to the booking's count of the customer's reschedules.
	Count bool
	// The reminder written for the old time is dropped, so it is due again for
	// the new one: written at once when the new start is within REMIND_BEFORE
	// (RemindNow), else by the release run when it falls due. Decided here on
	// the database's clock of the facts, so the store reads no slot for it.
	RemindNow bool
	// NewStart is the new slot's start: the booking's start from now on
	// (t_booking.starts_at), and the audit record's reason.
	NewStart time.Time

	// A technician's booking: the span it moves to, whose Cells are the ones
	// it takes there (those of the new span it does not hold already), and
	// Give the cells of its old span the new one does not keep. ToSlotID is
	// the new span's first cell.
	ToSpan *Span
	Give   []int64
}

// RescheduleRefusal is why the move c of a booking with facts f is refused
// under policy p, or nil. The checks run in the order the API lists them:
//   - the booking must be confirmed, and the slot another one (INVALID_STATE);
//   - the slot must exist (NOT_FOUND);
//   - the customer: until cancelFreeUntil (LATE_RESCHEDULE), fewer than
//     RESCHEDULE_LIMIT moves so far (RESCHEDULE_LIMIT), to a slot she could
//     reserve now (SLOT_NOT_BOOKABLE) of the same price (PRICE_DIFFERS);
//   - the salon: to a slot that has not ended (SLOT_NOT_BOOKABLE), any price;
//   - and a free seat (SOLD_OUT), which the store's conditional statement
//     decides again under concurrency.
func (p Policy) RescheduleRefusal(c Change, f RescheduleFacts) error {
	if f.Span != nil || !c.ToStart.IsZero() {
		_, err := p.spanMove(c, f)
		return err
	}
	switch {
	case f.Status != StatusConfirmed:
		return Errorf(EINVALIDSTATE, "booking %d is %s; only a confirmed booking moves", c.BookingID, f.Status)
	case c.ToSlotID == f.From.ID:
		return Errorf(EINVALIDSTATE, "booking %d is in slot %d already", c.BookingID, c.ToSlotID)
	case f.To == nil:
		return Errorf(ENOTFOUND, "slot %d not found", c.ToSlotID)
	}
	to := f.To
	switch c.Actor {
	case ActorCustomer:
		if free := f.From.StartAt.Add(-time.Duration(p.CancelFreeHours) * time.Hour); f.Now.After(free) {
			return Errorf(ELATERESCHEDULE, "booking %d: reschedules ended %s", c.BookingID, free.Format(time.RFC3339))
		}
		if f.Reschedules >= p.RescheduleLimit {
			return Errorf(ERESCHEDULELIMIT, "booking %d moved %d times, limit %d", c.BookingID, f.Reschedules, p.RescheduleLimit)
		}
		if !to.OpenForBooking(f.Now, p.BookingWindowDays) {
			return Errorf(ESLOTNOTBOOKABLE, "slot %d: open=%v start=%s", to.ID, to.Open, to.StartAt.Format(time.RFC3339))
		}
		if to.PriceFen != f.From.PriceFen {
			return Errorf(EPRICEDIFFERS, "slot %d costs %d, slot %d %d", to.ID, to.PriceFen, f.From.ID, f.From.PriceFen)
		}
	case ActorSalon:
		if !to.EndAt.After(f.Now) {
			return Errorf(ESLOTNOTBOOKABLE, "slot %d ended %s", to.ID, to.EndAt.Format(time.RFC3339))
		}
	default:
		return Errorf(EINVALIDSTATE, "no reschedule by %s", c.Actor)
	}
	if to.Booked >= to.Capacity {
		return Errorf(ESOLDOUT, "slot %d full", to.ID)
	}
	return nil
}

// PlanReschedule is the move c (event reschedule, confirmed to confirmed, with
// ToSlotID) of a booking with facts f under policy p: the row of the state
// machine that allows it, the rules above, and the writes: the booking's slot
// changes (its check-in code with it), the reminder is due again for the new
// time, the salon's move tells the customer, the new slot's seat is taken and
// the old one's returned and offered to its line.
func (p Policy) PlanReschedule(c Change, f RescheduleFacts) (*ChangePlan, error) {
	t, err := TransitionFor(c)
	if err != nil {
		return nil, err
	}
	if t.Seat != SeatMoved {
		return nil, Errorf(EINVALIDSTATE, "%s %s -> %s moves no booking", c.Event, c.From, c.To)
	}
	if c.Payment != nil {
		return nil, Errorf(EINVALIDSTATE, "a reschedule records no payment")
	}
	if c.SlotID != 0 && c.SlotID != f.From.ID {
		return nil, Errorf(EINVALIDSTATE, "booking %d moved from slot %d to %d meanwhile", c.BookingID, c.SlotID, f.From.ID)
	}
	if f.Span != nil || !c.ToStart.IsZero() {
		m, err := p.spanMove(c, f)
		if err != nil {
			return nil, err
		}
		return &ChangePlan{Change: c, SlotID: f.From.ID, Notify: t.Notify, RemindBefore: p.RemindBefore, Seat: SeatMoved,
			SeatRule: t.SeatRule, Move: m}, nil
	}
	if err := p.RescheduleRefusal(c, f); err != nil {
		return nil, err
	}
	to := f.To
	// The new seat is taken under the row's rule: while a customer could
	// reserve the slot (her move), or while it has not ended (the salon's).
	return &ChangePlan{Change: c, SlotID: f.From.ID, Notify: t.Notify, RemindBefore: p.RemindBefore, Seat: SeatMoved,
		SeatRule: t.SeatRule, OfferFreedSeat: t.OffersFreedSeat,
		Move: &Move{ToSlotID: to.ID, Count: c.Actor == ActorCustomer,
			RemindNow: to.StartAt.After(f.Now) && !to.StartAt.After(f.Now.Add(p.RemindBefore)), NewStart: to.StartAt}}, nil
}

// spanMove decides the move c of a technician's booking (f.Span) to a new
// start (c.ToStart) with a technician (c.ToTechnicianID, 0 the same one), in
// the order of RescheduleRefusal, and is its Move when allowed:
//   - a confirmed booking, moved by its start and to somewhere else than
//     where it is; a seat-mode booking never moves to a start, nor this one
//     to a slot (INVALID_STATE);
//   - the technician must exist (NOT_FOUND) and do its service;
//   - the customer: until cancelFreeUntil, under RESCHEDULE_LIMIT, to a start
//     she could reserve now; the salon: to a start whose first cell has not
//     ended (SLOT_NOT_BOOKABLE, also for a cell missing or closed);
//   - every cell of the new span free but for those the booking holds itself
//     (SOLD_OUT), which the store's conditional statement decides again.
//
// The service is the same, and so is the booking's length and price: only
// its time and technician change.
func (p Policy) spanMove(c Change, f RescheduleFacts) (*Move, error) {
	switch {
	case f.Status != StatusConfirmed:
		return nil, Errorf(EINVALIDSTATE, "booking %d is %s; only a confirmed booking moves", c.BookingID, f.Status)
	case f.Span == nil:
		return nil, Errorf(EINVALIDSTATE, "booking %d is in a slot of the seat schedule: it moves to a slot, not a start", c.BookingID)
	case c.ToStart.IsZero() || c.ToSlotID != 0:
		return nil, Errorf(EINVALIDSTATE, "booking %d is a technician's: it moves to a start, not a slot", c.BookingID)
	}
	from := *f.Span
	techID := c.ToTechnicianID
	if techID == 0 {
		techID = from.TechnicianID
	}
	switch {
	case techID == from.TechnicianID && c.ToStart.Equal(from.Start):
		return nil, Errorf(EINVALIDSTATE, "booking %d starts at %s with technician %d already", c.BookingID, from.Start.Format(time.RFC3339), techID)
	case f.ToTech == nil || f.ToTech.Technician.ID != techID:
		return nil, Errorf(ENOTFOUND, "technician %d not found", techID)
	case !f.ToTech.Does:
		return nil, Errorf(ESLOTNOTBOOKABLE, "technician %d does not do service %d", techID, f.ServiceID)
	}
	rule := SeatIfNotEnded
	switch c.Actor {
	case ActorCustomer:
		if free := from.Start.Add(-time.Duration(p.CancelFreeHours) * time.Hour); f.Now.After(free) {
			return nil, Errorf(ELATERESCHEDULE, "booking %d: reschedules ended %s", c.BookingID, free.Format(time.RFC3339))
		}
		if f.Reschedules >= p.RescheduleLimit {
			return nil, Errorf(ERESCHEDULELIMIT, "booking %d moved %d times, limit %d", c.BookingID, f.Reschedules, p.RescheduleLimit)
		}
		rule = SeatIfOpenForBooking
	case ActorSalon:
	default:
		return nil, Errorf(EINVALIDSTATE, "no reschedule by %s", c.Actor)
	}
	if !rule.AllowsStart(c.ToStart, p.GridMinutes, f.Now, p.BookingWindowDays) {
		return nil, Errorf(ESLOTNOTBOOKABLE, "start %s: started, ended or beyond the window", c.ToStart.Format(time.RFC3339))
	}
	var own []int64
	if techID == from.TechnicianID {
		own = from.Cells
	}
	minutes := from.Minutes()
	state, ids := SpanOf(f.ToTech.Cells, c.ToStart, minutes, p.GridMinutes, own)
	switch state {
	case SpanOutside:
		return nil, Errorf(ESLOTNOTBOOKABLE, "technician %d does not work all of %d minutes from %s", techID, minutes, c.ToStart.Format(time.RFC3339))
	case SpanTaken:
		return nil, Errorf(ESOLDOUT, "technician %d is booked within %d minutes from %s", techID, minutes, c.ToStart.Format(time.RFC3339))
	}
	to := Span{TechnicianID: techID, Start: c.ToStart, End: c.ToStart.Add(time.Duration(minutes) * time.Minute)}
	for _, id := range ids {
		if !slices.Contains(own, id) {
			to.Cells = append(to.Cells, id)
		}
	}
	var give []int64
	for _, id := range from.Cells {
		if !slices.Contains(ids, id) {
			give = append(give, id)
		}
	}
	return &Move{ToSlotID: ids[0], Count: c.Actor == ActorCustomer, NewStart: c.ToStart,
		RemindNow: c.ToStart.After(f.Now) && !c.ToStart.After(f.Now.Add(p.RemindBefore)), ToSpan: &to, Give: give}, nil
}
