package booking

import (
	"slices"
	"time"
)

// The booking state machine, as data. Every change of a booking's status is one
// row of Transitions: who may ask for it, what happens to the seat, whether the
// deposit is refunded, which messages it causes, and whether a seat it frees is
// handed to the waitlist. Plan turns a requested Change and the facts the store
// read inside its transaction into the writes that change needs; the store runs
// them and decides nothing. shared/README.md's state table is checked against
// this one (infra/doccheck).

// StatusNew stands for "no booking yet" in the rows that create one.
const StatusNew Status = -1

// SeatEffect is what a transition does to the slot's booked counter.
type SeatEffect int

const (
	SeatKept     SeatEffect = iota // the booking holds (or does not hold) a seat before and after
	SeatReturned                   // booked - 1: the seat is free again
	SeatRetaken                    // booked + 1, only if the slot is still bookable with a free seat
	SeatTaken                      // a new booking takes a seat (reserve, waitlist offer)
	// SeatMoved: the booking keeps its status and moves to another slot (a
	// reschedule): the new slot's seat is taken conditionally and the old
	// one's returned, the two rows in slot_id order, in one transaction.
	SeatMoved
)

// RefundRule says whether a transition refunds the deposit.
type RefundRule int

const (
	RefundNever  RefundRule = iota
	RefundIfPaid            // a full refund of what was paid, decided in the same transaction
)

// Transition is one row of the state machine.
type Transition struct {
	Event  string // Event*: the audit record it writes
	From   Status // StatusNew for a booking created by it
	To     Status
	Actors []string // who may ask for it
	Seat   SeatEffect
	Refund RefundRule
	// Payment: the change records a verified payment (and so needs one).
	Payment bool
	// Keep: what becomes of a paid booking's deposit in the ledger (a late
	// cancel's and a no-show's is kept; a late check-in gives it back).
	Keep KeepRule
	// Notify are the messages it writes into the outbox in its transaction; a
	// reminder only when the start is within REMIND_BEFORE.
	Notify []NotificationKind
	// SeatRule: for a row that takes a seat (SeatTaken, SeatRetaken,
	// SeatMoved), the condition besides a free seat under which the store's one
	// seat-taking statement takes it.
	SeatRule SeatRule
	// OffersFreedSeat: a seat it returns goes to the first in the slot's line
	// who can take it, in the same transaction.
	OffersFreedSeat bool
	// Why is the row's sentence for the salon and the README.
	Why string
}

// Transitions is the state machine. Rows of one event and one From differ in
// their actors (the salon's cancel tells the customer, hers does not).
var Transitions = []Transition{
	{Event: EventReserve, From: StatusNew, To: StatusPending, Actors: []string{ActorCustomer}, Seat: SeatTaken, SeatRule: SeatIfOpenForBooking,
		Why: "a reservation of a slot with a price: the seat is held while the customer pays"},
	{Event: EventReserve, From: StatusNew, To: StatusConfirmed, Actors: []string{ActorCustomer}, Seat: SeatTaken, SeatRule: SeatIfOpenForBooking,
		Why: "a reservation of a free slot (priceFen 0), or of a service without a deposit: confirmed at once"},
	{Event: EventWaitlistOffer, From: StatusNew, To: StatusPending, Actors: []string{ActorSystem}, Seat: SeatTaken, SeatRule: SeatIfFree,
		Notify: []NotificationKind{NotifyWaitlist},
		Why:    "a freed seat handed to the first in line, as a hold: never confirmed unasked, also when free"},
	{Event: EventWalkIn, From: StatusNew, To: StatusConfirmed, Actors: []string{ActorSalon}, Seat: SeatTaken, SeatRule: SeatIfOpenForWalkIn,
		Why: "the salon books someone at the counter or on the phone: confirmed at once, amountFen 0 (paid in the shop), no WeChat order, no messages"},
	{Event: EventConfirm, From: StatusPending, To: StatusConfirmed, Actors: []string{ActorWeChat}, Seat: SeatKept,
		Payment: true, Notify: []NotificationKind{NotifyConfirmed, NotifyReminder},
		Why: "a verified payment (notification, or a signed query by the release run or a cancel)"},
	{Event: EventConfirm, From: StatusPending, To: StatusConfirmed, Actors: []string{ActorCustomer}, Seat: SeatKept,
		Notify: []NotificationKind{NotifyReminder},
		Why:    "the customer accepts a free waitlist offer (POST /bookings/{id}/pay)"},
	{Event: EventLatePayment, From: StatusExpired, To: StatusConfirmed, Actors: []string{ActorWeChat}, Seat: SeatRetaken, SeatRule: SeatIfOpenForBooking,
		Payment: true, Notify: []NotificationKind{NotifyConfirmed, NotifyReminder},
		Why: "a payment for a released hold, re-seated when the slot is bookable with a free seat and no refund was started"},
	{Event: EventCheckIn, From: StatusConfirmed, To: StatusCompleted, Actors: []string{ActorSalon}, Seat: SeatKept,
		Why: "the customer arrived (from CHECKIN_OPENS_BEFORE before the start)"},
	{Event: EventCheckIn, From: StatusNoShow, To: StatusCompleted, Actors: []string{ActorSalon}, Seat: SeatKept,
		Keep: KeepGivenBack, Why: "a late check-in: the staff forgot to press the button"},
	{Event: EventCancel, From: StatusPending, To: StatusCancelled, Actors: []string{ActorCustomer}, Seat: SeatReturned,
		OffersFreedSeat: true, Why: "the customer cancels an unpaid hold, until the start"},
	{Event: EventCancel, From: StatusPending, To: StatusCancelled, Actors: []string{ActorSalon}, Seat: SeatReturned,
		Notify: []NotificationKind{NotifyCancelled}, OffersFreedSeat: true, Why: "the salon cancels an unpaid hold"},
	{Event: EventCancel, From: StatusConfirmed, To: StatusCancelled, Actors: []string{ActorCustomer}, Seat: SeatReturned,
		Refund: RefundIfPaid, OffersFreedSeat: true, Why: "the customer cancels until cancelFreeUntil: refunded in full"},
	{Event: EventCancel, From: StatusConfirmed, To: StatusCancelled, Actors: []string{ActorSalon}, Seat: SeatReturned,
		Refund: RefundIfPaid, Notify: []NotificationKind{NotifyCancelled}, OffersFreedSeat: true,
		Why: "the salon cancels, any time before check-in: refunded in full"},
	{Event: EventLateCancel, From: StatusConfirmed, To: StatusCancelled, Actors: []string{ActorCustomer}, Seat: SeatReturned,
		Keep: KeepDeposit, OffersFreedSeat: true, Why: `the customer cancels after cancelFreeUntil with {"forfeitDeposit":true}: the deposit is kept`},
	{Event: EventRelease, From: StatusPending, To: StatusExpired, Actors: []string{ActorTimer}, Seat: SeatReturned,
		OffersFreedSeat: true, Why: "the release run, after lock_expire, once WeChat proves the order unpayable"},
	{Event: EventNoShow, From: StatusConfirmed, To: StatusNoShow, Actors: []string{ActorTimer, ActorSalon}, Seat: SeatKept,
		Keep: KeepDeposit, Why: "nobody checked in: by the release run NO_SHOW_GRACE after the end, or by the salon after the start"},
	{Event: EventReschedule, From: StatusConfirmed, To: StatusConfirmed, Actors: []string{ActorCustomer}, Seat: SeatMoved, SeatRule: SeatIfOpenForBooking,
		Notify: []NotificationKind{NotifyReminder}, OffersFreedSeat: true,
		Why: "the customer moves her booking to a free seat of a slot of the same price, until cancelFreeUntil, RESCHEDULE_LIMIT times"},
	{Event: EventReschedule, From: StatusConfirmed, To: StatusConfirmed, Actors: []string{ActorSalon}, Seat: SeatMoved, SeatRule: SeatIfNotEnded,
		Notify: []NotificationKind{NotifyRescheduled, NotifyReminder}, OffersFreedSeat: true,
		Why: "the salon moves a booking to any slot that has not ended, any time before check-in; the customer is told"},
}

// TransitionFor returns the row that allows change c, or INVALID_STATE when no
// row moves its From to its To by its event for its actor.
func TransitionFor(c Change) (*Transition, error) {
	for i := range Transitions {
		t := &Transitions[i]
		if t.Event == c.Event && t.From == c.From && t.To == c.To && slices.Contains(t.Actors, c.Actor) {
			return t, nil
		}
	}
	return nil, Errorf(EINVALIDSTATE, "no transition %s %s -> %s by %s", c.Event, c.From, c.To, c.Actor)
}

// CreationRule is the seat rule of the state machine's row that creates a
// booking by event for actor (its rows of every status share one), or
// SeatNoRule: the rule a booking of a service's technicians are tried under
// (TechniciansToTry) before the one that is free is planned.
func CreationRule(event, actor string) SeatRule {
	for _, t := range Transitions {
		if t.From == StatusNew && t.Event == event && slices.Contains(t.Actors, actor) {
			return t.SeatRule
		}
	}
	return SeatNoRule
}

// ChangeFacts are what the store reads of the booking inside the change's
// transaction, before anything is written.
type ChangeFacts struct {
	SlotID int64
	Paid   bool // a verified payment is recorded on it
	// PaidFen is what was paid (the deposit), when Paid.
	PaidFen int64
	// New is given for a row that creates a booking (From StatusNew): the slot
	// and the database's clock, from which NewHold decides the new status.
	New *NewFacts
	// Span is a technician's booking's time (nil in seat mode): her, its
	// start and end, and the cells it holds now (none once it holds none).
	// Around are her cells of that time as they are now, for a row that
	// takes them again (a late payment).
	Span   *Span
	Around []Slot
}

// NewFacts are what the store reads for a booking it creates (reserve,
// waitlist offer, walk-in), before anything is written.
type NewFacts struct {
	Slot Slot
	Now  time.Time
	// A booking of a service (the technician forms of reserve and walk-in):
	// the service, and the span of the technician it takes (Slot unused).
	Service *Service
	Span    *Span
}

// ChangePlan is the writes one status change needs, in the order the store runs
// them; the slot row is always touched last, so its lock is held only until the
// commit.
type ChangePlan struct {
	Change
	SlotID int64
	// RecordPayment writes c.Payment onto the booking.
	RecordPayment bool
	// StartRefund records, with the change, that what was paid is to be
	// refunded in full, so the refund can never be forgotten between the commit
	// and the call to WeChat.
	StartRefund bool
	// Ledger are the rows of the money ledger the change writes (a payment's
	// deposit, a deposit kept or given back), in its transaction.
	Ledger []LedgerEntry
	// LateCancel marks the booking's cancel as late (t_booking.late_cancel):
	// the customer's cancel after cancelFreeUntil, which keeps a deposit when
	// there is one. The owner's report counts it from the booking, which
	// retention never deletes, not from the audit trail.
	LateCancel bool
	// UnlessRefunding makes the change conditional on no refund being under way:
	// a booking whose payment is being refunded never takes a seat again.
	UnlessRefunding bool
	// Notify are the outbox rows to write; RemindBefore bounds the reminder.
	Notify       []NotificationKind
	RemindBefore time.Duration
	Seat         SeatEffect
	// SeatRule is the row's condition for taking a seat (SeatTaken,
	// SeatRetaken, SeatMoved): what the store's seat-taking statement is given.
	SeatRule SeatRule
	// Hold is a created booking's status, deposit and hold (From StatusNew).
	Hold *Hold
	// ForgetOwnPlace drops the customer's own entry of this slot's line, and
	// OfferFreedSeat hands the freed seat on: a seat given up is never handed
	// back to the customer who gave it up.
	ForgetOwnPlace, OfferFreedSeat bool

	// A move (SeatMoved, planned by PlanReschedule): the slot it moves to, and
	// how the seat is taken there. SlotID above is the slot it leaves.
	Move *Move

	// Span is a technician's booking's time (nil in seat mode), whose cells
	// the seat effect applies to, all of them at once: a created booking's or
	// a late payment's to take, a return's to give back. SlotID is then its
	// first cell.
	Span *Span
}

// Plan is the change c, asked for a booking with facts, under policy p: the
// writes it needs, or INVALID_STATE when the state machine has no such row.
//
// A row that creates a booking (From StatusNew: reserve, waitlist offer,
// walk-in) is planned here too, from facts.New: NewHold decides the status
// (c.To is set from it), and the row for that status, event and actor must
// exist; the plan carries the hold, the row's messages and its seat rule.
func (p Policy) Plan(c Change, facts ChangeFacts) (*ChangePlan, error) {
	if c.From == StatusNew {
		return p.planNew(c, facts)
	}
	t, err := TransitionFor(c)
	if err != nil {
		return nil, err
	}
	if t.Seat == SeatMoved || c.ToSlotID != 0 {
		return nil, Errorf(EINVALIDSTATE, "%s moves a booking: planned by PlanReschedule", t.Event)
	}
	if c.SlotID != 0 && c.SlotID != facts.SlotID {
		return nil, Errorf(EINVALIDSTATE, "booking %d moved from slot %d to %d meanwhile", c.BookingID, c.SlotID, facts.SlotID)
	}
	if t.Payment != (c.Payment != nil) {
		return nil, Errorf(EINVALIDSTATE, "%s by %s: payment given %v, the transition records one %v", c.Event, c.Actor, c.Payment != nil, t.Payment)
	}
	plan := &ChangePlan{Change: c, SlotID: facts.SlotID, RecordPayment: t.Payment,
		StartRefund:     t.Refund == RefundIfPaid && facts.Paid,
		Ledger:          ledgerOf(t, c, facts),
		LateCancel:      t.To == StatusCancelled && t.Keep == KeepDeposit,
		UnlessRefunding: t.Seat == SeatRetaken,
		Notify:          t.Notify, RemindBefore: p.RemindBefore, Seat: t.Seat, SeatRule: t.SeatRule,
		ForgetOwnPlace: t.Seat == SeatReturned, OfferFreedSeat: t.OffersFreedSeat}
	if facts.Span == nil {
		return plan, nil
	}
	// A technician's booking: every cell of its span moves with the status.
	// The waitlist is the seat schedule's, so a freed cell is offered to
	// nobody (whoever wants it books it), and there is no line to leave.
	plan.ForgetOwnPlace, plan.OfferFreedSeat = false, false
	span := *facts.Span
	if t.Seat == SeatRetaken {
		// Taken again only whole: a cell gone from her hours or closed
		// since makes it unbookable before anything is written.
		state, ids := SpanOf(facts.Around, span.Start, span.Minutes(), p.GridMinutes, nil)
		if state == SpanOutside {
			return nil, Errorf(ESLOTNOTBOOKABLE, "booking %d: technician %d does not work all of %s-%s now",
				c.BookingID, span.TechnicianID, span.Start.Format(time.RFC3339), span.End.Format(time.RFC3339))
		}
		span.Cells = ids
	}
	plan.Span = &span
	return plan, nil
}

// planNew plans a row that creates a booking (see Plan).
func (p Policy) planNew(c Change, facts ChangeFacts) (*ChangePlan, error) {
	if facts.New == nil {
		return nil, Errorf(EINVALIDSTATE, "%s creates a booking: planned from the slot it is made in", c.Event)
	}
	if c.Payment != nil || c.ToSlotID != 0 || c.BookingID != 0 {
		return nil, Errorf(EINVALIDSTATE, "%s creates a booking: no payment, target or booking id", c.Event)
	}
	n := facts.New
	var hold Hold
	slotID := n.Slot.ID
	switch {
	case n.Service == nil:
		hold = p.NewHold(n.Slot, n.Now, c.Event)
	case n.Span == nil || len(n.Span.Cells) == 0 || c.Event == EventWaitlistOffer:
		// The waitlist is the seat schedule's; a service's booking takes the
		// cells of a span.
		return nil, Errorf(EINVALIDSTATE, "%s of service %d: no span of cells to take", c.Event, n.Service.ID)
	default:
		hold = p.NewServiceHold(*n.Service, n.Span.Start, n.Now, c.Event)
		slotID = n.Span.Cells[0]
	}
	c.To = hold.Status
	t, err := TransitionFor(c)
	if err != nil {
		return nil, err
	}
	if t.Seat != SeatTaken {
		return nil, Errorf(EINVALIDSTATE, "%s %s -> %s takes no seat", c.Event, c.From, c.To)
	}
	return &ChangePlan{Change: c, SlotID: slotID, Notify: t.Notify, RemindBefore: p.RemindBefore,
		Seat: SeatTaken, SeatRule: t.SeatRule, Hold: &hold, Span: n.Span}, nil
}

// Policy is the salon's rules in numbers: the settings that the rules of
// package booking, the service and the store's transactions read. Package config
// builds the one value from the settings; the store and the service are handed
// that same value.
type Policy struct {
	LockTTL            time.Duration // LOCK_TTL: how long a new hold lasts
	BookingWindowDays  int           // BOOKING_WINDOW_DAYS: how far ahead a slot can be booked
	CancelFreeHours    int           // CANCEL_FREE_HOURS: a customer's cancel is refunded in full until this long before the start
	NoShowGrace        time.Duration // NO_SHOW_GRACE: how long after its end an unchecked booking becomes a no-show
	NoShowLimit        int           // NO_SHOW_LIMIT: no-shows in 90 days that block reserving and offers; 0 is off
	RefundQueryAfter   time.Duration // REFUND_QUERY_AFTER: how long a refund may stay processing before it is queried
	RemindBefore       time.Duration // REMIND_BEFORE: how long before the start the reminder goes out
	CheckinOpensBefore time.Duration // CHECKIN_OPENS_BEFORE: how long before the start check-in opens
	RescheduleLimit    int           // RESCHEDULE_LIMIT: how often a customer may move one booking
	AuditRetentionDays int           // AUDIT_RETENTION_DAYS: the release run deletes audit records CLS accepted this many days ago; 0 keeps them
	GridMinutes        int           // GRID_MINUTES: the length of a technician's cell; divides 60
	BillAfter          time.Duration // BILL_AFTER: from the shop's midnight, when the release run fetches yesterday's WeChat Pay bill
}

// DefaultPolicy is each setting's default, as the configuration table lists it.
var DefaultPolicy = Policy{
	LockTTL:            15 * time.Minute,
	BookingWindowDays:  14,
	CancelFreeHours:    2,
	NoShowGrace:        30 * time.Minute,
	NoShowLimit:        0,
	RefundQueryAfter:   5 * time.Minute,
	RemindBefore:       3 * time.Hour,
	CheckinOpensBefore: 2 * time.Hour,
	RescheduleLimit:    1,
	AuditRetentionDays: 180,
	GridMinutes:        DefaultGridMinutes,
	BillAfter:          10 * time.Hour,
}

// NotificationRetention is how long a finished notification (sent, refused,
// failed, off) stays in the outbox before the release run deletes it. It is a
// fixed rule, not a setting: nothing reads a finished notification but the
// console's counts, and the outbox's one-per-booking-and-kind key, which keeps
// a reminder from being written twice, only matters while its slot is ahead:
// a reminder is written REMIND_BEFORE before the start, so one finished 30
// days ago belongs to a slot long over (as long as REMIND_BEFORE is under 30
// days).
const NotificationRetention = 30 * 24 * time.Hour

// Waiter is one customer in a slot's line, with the facts that decide whether
// a freed seat can be hers.
type Waiter struct {
	EntryID int64
	OpenID  string
	// HoldsUnfinished: she holds an unfinished booking elsewhere (she could not
	// reserve now either).
	HoldsUnfinished bool
	// HoldsSeatHere: she holds a seat of this very slot.
	HoldsSeatHere bool
	// NoShows counts her no-shows whose slots started within NoShowWindow.
	NoShows int
}

// CanTakeOffer reports whether a freed seat may go to w: not to a customer who
// holds an unfinished booking, a seat of this slot already, or has reached
// NO_SHOW_LIMIT (she would be refused at reserve). Those passed over keep
// their place.
func (p Policy) CanTakeOffer(w Waiter) bool {
	return !w.HoldsUnfinished && !w.HoldsSeatHere && !(p.NoShowLimit > 0 && w.NoShows >= p.NoShowLimit)
}

// FirstToOffer returns the first waiter of line (in line order) who can take a
// freed seat and is not in passed, or false.
func (p Policy) FirstToOffer(line []Waiter, passed map[int64]bool) (Waiter, bool) {
	for _, w := range line {
		if !passed[w.EntryID] && p.CanTakeOffer(w) {
			return w, true
		}
	}
	return Waiter{}, false
}

// Hold is a new booking that takes a seat: a reservation, a waitlist offer or
// the salon's walk-in.
// Both are made by this one definition (the stored procedure of reserve
// spells the same; a test of the store holds the two together).
type Hold struct {
	Status     Status
	AmountFen  int64
	LockExpire time.Time
}

// NewHold is the booking a seat of slot becomes at now: pending with the usual
// hold for a slot with a price; for a free slot confirmed at once when the
// customer reserves it herself, and pending (to be accepted) when it is offered;
// the salon's walk-in is confirmed at once for nothing (paid in the shop), with
// no hold to end.
func (p Policy) NewHold(slot Slot, now time.Time, event string) Hold {
	return p.hold(slot.PriceFen, slot.StartAt, now, event)
}

// NewServiceHold is NewHold for a booking of service starting at start: the
// amount is the service's deposit, so a service without one is confirmed at
// once when the customer reserves it (no payment to wait for).
func (p Policy) NewServiceHold(service Service, start, now time.Time, event string) Hold {
	return p.hold(service.DepositFen, start, now, event)
}

// hold is the one definition behind NewHold and NewServiceHold: amountFen is
// what the customer pays online.
func (p Policy) hold(amountFen int64, start, now time.Time, event string) Hold {
	if event == EventWalkIn {
		return Hold{Status: StatusConfirmed, AmountFen: 0, LockExpire: now}
	}
	h := Hold{Status: StatusPending, AmountFen: amountFen, LockExpire: HoldEnd(now, start, p.LockTTL)}
	if event == EventReserve && amountFen == 0 {
		h.Status = StatusConfirmed
	}
	return h
}
