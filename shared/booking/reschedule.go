package booking

import "time"

// A reschedule moves a confirmed booking to another slot: it keeps its id,
// order number, payment and refund rights, and its status (1 -> 1, event
// reschedule); the seat moves. The rules that decide whether it may are here,
// pure, on the facts the store reads inside the move's transaction (the
// booking's row locked), so two moves of one booking cannot both pass them.

// RescheduleFacts are what the store reads for a move, in its transaction.
type RescheduleFacts struct {
	Status      Status
	Reschedules int   // how often the customer moved this booking already
	From        Slot  // the slot the booking is in
	To          *Slot // the slot asked for; nil when it does not exist
	Now         time.Time
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
	// NewStart is the new slot's start, for the audit record's reason.
	NewStart time.Time
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
