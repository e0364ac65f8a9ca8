package booking

import (
	"slices"
	"testing"
	"time"
)

var testPolicy = Policy{LockTTL: 15 * time.Minute, BookingWindowDays: 14, RemindBefore: 3 * time.Hour, NoShowLimit: 2}

// TestPlanEveryTransition: each row of the state machine, asked by each of its
// actors, plans exactly the writes the row says, paid or not.
func TestPlanEveryTransition(t *testing.T) {
	payment := &Payment{TransactionID: "4200", AmountFen: 5000, PaidAt: time.Now()}
	cases := []struct {
		event        string
		from, to     Status
		actor        string
		paid         bool
		seat         SeatEffect
		refund       bool
		notify       []NotificationKind
		offer        bool
		withPayment  bool
		unlessRefund bool
	}{
		{EventConfirm, StatusPending, StatusConfirmed, ActorWeChat, false, SeatKept, false, []NotificationKind{NotifyConfirmed, NotifyReminder}, false, true, false},
		{EventConfirm, StatusPending, StatusConfirmed, ActorCustomer, false, SeatKept, false, []NotificationKind{NotifyReminder}, false, false, false},
		{EventLatePayment, StatusExpired, StatusConfirmed, ActorWeChat, false, SeatRetaken, false, []NotificationKind{NotifyConfirmed, NotifyReminder}, false, true, true},
		{EventCheckIn, StatusConfirmed, StatusCompleted, ActorSalon, true, SeatKept, false, nil, false, false, false},
		{EventCheckIn, StatusNoShow, StatusCompleted, ActorSalon, true, SeatKept, false, nil, false, false, false},
		{EventCancel, StatusPending, StatusCancelled, ActorCustomer, false, SeatReturned, false, nil, true, false, false},
		{EventCancel, StatusPending, StatusCancelled, ActorSalon, false, SeatReturned, false, []NotificationKind{NotifyCancelled}, true, false, false},
		{EventCancel, StatusConfirmed, StatusCancelled, ActorCustomer, true, SeatReturned, true, nil, true, false, false},
		{EventCancel, StatusConfirmed, StatusCancelled, ActorCustomer, false, SeatReturned, false, nil, true, false, false},
		{EventCancel, StatusConfirmed, StatusCancelled, ActorSalon, true, SeatReturned, true, []NotificationKind{NotifyCancelled}, true, false, false},
		{EventCancel, StatusConfirmed, StatusCancelled, ActorSalon, false, SeatReturned, false, []NotificationKind{NotifyCancelled}, true, false, false},
		{EventLateCancel, StatusConfirmed, StatusCancelled, ActorCustomer, true, SeatReturned, false, nil, true, false, false},
		{EventRelease, StatusPending, StatusExpired, ActorTimer, false, SeatReturned, false, nil, true, false, false},
		{EventNoShow, StatusConfirmed, StatusNoShow, ActorTimer, true, SeatKept, false, nil, false, false, false},
		{EventNoShow, StatusConfirmed, StatusNoShow, ActorSalon, true, SeatKept, false, nil, false, false, false},
	}
	covered := map[*Transition]bool{}
	for _, c := range cases {
		ch := Change{BookingID: 7, From: c.from, To: c.to, Event: c.event, Actor: c.actor, Reason: "test"}
		if c.withPayment {
			ch.Payment = payment
		}
		p, err := testPolicy.Plan(ch, ChangeFacts{SlotID: 3, Paid: c.paid})
		if err != nil {
			t.Errorf("%s %s->%s by %s: %v", c.event, c.from, c.to, c.actor, err)
			continue
		}
		tr, _ := TransitionFor(ch)
		covered[tr] = true
		if p.SlotID != 3 || p.Seat != c.seat || p.StartRefund != c.refund || !slices.Equal(p.Notify, c.notify) ||
			p.OfferFreedSeat != c.offer || p.RecordPayment != c.withPayment || p.UnlessRefunding != c.unlessRefund ||
			p.ForgetOwnPlace != (c.seat == SeatReturned) || p.RemindBefore != testPolicy.RemindBefore {
			t.Errorf("%s %s->%s by %s (paid %v): plan %+v", c.event, c.from, c.to, c.actor, c.paid, p)
		}
	}
	for i := range Transitions {
		if tr := &Transitions[i]; tr.From != StatusNew && tr.Seat != SeatMoved && !covered[tr] {
			t.Errorf("transition %s %s->%s has no case here", tr.Event, tr.From, tr.To)
		}
	}
}

// TestPlanRefusals: a change the state machine has no row for, by the wrong
// actor, a creation asked as a change, or with a payment where the row records
// none (and the reverse) is INVALID_STATE.
func TestPlanRefusals(t *testing.T) {
	payment := &Payment{TransactionID: "4200", AmountFen: 5000}
	for name, c := range map[string]Change{
		"completed to cancelled":     {From: StatusCompleted, To: StatusCancelled, Event: EventCancel, Actor: ActorSalon},
		"expired to cancelled":       {From: StatusExpired, To: StatusCancelled, Event: EventCancel, Actor: ActorCustomer},
		"cancelled to confirmed":     {From: StatusCancelled, To: StatusConfirmed, Event: EventLatePayment, Actor: ActorWeChat, Payment: payment},
		"no-show to cancelled":       {From: StatusNoShow, To: StatusCancelled, Event: EventCancel, Actor: ActorSalon},
		"a customer's check-in":      {From: StatusConfirmed, To: StatusCompleted, Event: EventCheckIn, Actor: ActorCustomer},
		"the salon's late cancel":    {From: StatusConfirmed, To: StatusCancelled, Event: EventLateCancel, Actor: ActorSalon},
		"a customer's no-show":       {From: StatusConfirmed, To: StatusNoShow, Event: EventNoShow, Actor: ActorCustomer},
		"the timer's cancel":         {From: StatusPending, To: StatusCancelled, Event: EventCancel, Actor: ActorTimer},
		"release of a paid booking":  {From: StatusConfirmed, To: StatusExpired, Event: EventRelease, Actor: ActorTimer},
		"the wrong event":            {From: StatusPending, To: StatusCancelled, Event: EventRelease, Actor: ActorCustomer},
		"a reservation as a change":  {From: StatusNew, To: StatusPending, Event: EventReserve, Actor: ActorCustomer},
		"a payment with no payment":  {From: StatusPending, To: StatusConfirmed, Event: EventConfirm, Actor: ActorWeChat},
		"a customer's paid confirm":  {From: StatusPending, To: StatusConfirmed, Event: EventConfirm, Actor: ActorCustomer, Payment: payment},
		"a payment on a check-in":    {From: StatusConfirmed, To: StatusCompleted, Event: EventCheckIn, Actor: ActorSalon, Payment: payment},
		"the same status":            {From: StatusConfirmed, To: StatusConfirmed, Event: EventConfirm, Actor: ActorWeChat, Payment: payment},
		"an unknown actor":           {From: StatusPending, To: StatusCancelled, Event: EventCancel, Actor: "someone"},
		"the system cancels":         {From: StatusConfirmed, To: StatusCancelled, Event: EventCancel, Actor: ActorSystem},
		"wechatpay re-seats no-show": {From: StatusNoShow, To: StatusConfirmed, Event: EventLatePayment, Actor: ActorWeChat, Payment: payment},
		"a reschedule as a change":   {From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorCustomer, ToSlotID: 2},
		"a cancel with a target":     {From: StatusConfirmed, To: StatusCancelled, Event: EventCancel, Actor: ActorCustomer, ToSlotID: 2},
		"a cancel of a moved one":    {From: StatusConfirmed, To: StatusCancelled, Event: EventCancel, Actor: ActorCustomer, SlotID: 9},
	} {
		if p, err := testPolicy.Plan(c, ChangeFacts{SlotID: 1, Paid: true}); !IsCode(err, EINVALIDSTATE) {
			t.Errorf("%s: plan %+v, err %v; want INVALID_STATE", name, p, err)
		}
	}
}

// TestTransitionsKeepTheSeatInvariant: a row's seat effect is exactly what its
// statuses imply (booked counts the bookings that hold a seat), so no row can
// drift the counter.
func TestTransitionsKeepTheSeatInvariant(t *testing.T) {
	for _, tr := range Transitions {
		var want SeatEffect
		switch {
		case tr.From == StatusNew:
			want = SeatTaken
		case tr.Event == EventReschedule:
			want = SeatMoved // holds a seat before and after, of another slot
		case tr.From.HoldsSeat() == tr.To.HoldsSeat():
			want = SeatKept
		case tr.From.HoldsSeat():
			want = SeatReturned
		default:
			want = SeatRetaken
		}
		if tr.Seat != want {
			t.Errorf("%s %s->%s: seat effect %d, its statuses say %d", tr.Event, tr.From, tr.To, tr.Seat, want)
		}
		if tr.OffersFreedSeat && tr.Seat != SeatReturned && tr.Seat != SeatMoved {
			t.Errorf("%s %s->%s offers a seat it does not free", tr.Event, tr.From, tr.To)
		}
		if (tr.Seat == SeatReturned || tr.Seat == SeatMoved) && !tr.OffersFreedSeat {
			t.Errorf("%s %s->%s frees a seat the waitlist never gets", tr.Event, tr.From, tr.To)
		}
	}
}

// TestFirstToOffer: a freed seat goes to the first in line who could reserve
// now; those passed over keep their place for the next seat.
func TestFirstToOffer(t *testing.T) {
	line := []Waiter{
		{EntryID: 1, OpenID: "busy", HoldsUnfinished: true},
		{EntryID: 2, OpenID: "here", HoldsSeatHere: true},
		{EntryID: 3, OpenID: "missed", NoShows: 2},
		{EntryID: 4, OpenID: "once", NoShows: 1},
		{EntryID: 5, OpenID: "fresh"},
	}
	cases := []struct {
		name   string
		policy Policy
		passed map[int64]bool
		want   string
	}{
		{"limit 2", Policy{NoShowLimit: 2}, nil, "once"},
		{"limit 1", Policy{NoShowLimit: 1}, nil, "fresh"},
		{"limit off", Policy{}, nil, "missed"},
		{"first one passed over by a race", Policy{}, map[int64]bool{3: true}, "once"},
		{"nobody left", Policy{NoShowLimit: 1}, map[int64]bool{5: true}, ""},
	}
	for _, c := range cases {
		w, ok := c.policy.FirstToOffer(line, c.passed)
		if got := map[bool]string{true: w.OpenID}[ok]; got != c.want {
			t.Errorf("%s: offered to %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNewHold: reserve and the waitlist offer make the same hold, except that a
// free slot is confirmed at once only when the customer reserves it herself.
func TestNewHold(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	soon := Slot{StartAt: now.Add(10 * time.Minute), PriceFen: 5000}
	later := Slot{StartAt: now.Add(5 * time.Hour), PriceFen: 0}
	p := Policy{LockTTL: 15 * time.Minute}
	for _, c := range []struct {
		slot   Slot
		event  string
		status Status
		expire time.Time
	}{
		{soon, EventReserve, StatusPending, soon.StartAt},
		{soon, EventWaitlistOffer, StatusPending, soon.StartAt},
		{later, EventReserve, StatusConfirmed, now.Add(15 * time.Minute)},
		{later, EventWaitlistOffer, StatusPending, now.Add(15 * time.Minute)},
	} {
		h := p.NewHold(c.slot, now, c.event)
		if h.Status != c.status || !h.LockExpire.Equal(c.expire) || h.AmountFen != c.slot.PriceFen {
			t.Errorf("%s of a slot at %s priced %d: %+v", c.event, c.slot.StartAt, c.slot.PriceFen, h)
		}
	}
}

// TestPlanCreations: the rows that create a booking are planned by Plan too,
// from the slot and the clock: NewHold decides the status, the row for it must
// exist for the event and actor, and the plan carries the row's messages and
// seat rule; a creation by an actor the table does not name, with a payment,
// or without the slot is INVALID_STATE.
func TestPlanCreations(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	priced := Slot{ID: 7, StartAt: now.Add(48 * time.Hour), EndAt: now.Add(49 * time.Hour), Capacity: 2, PriceFen: 5000, Open: true}
	free := priced
	free.PriceFen = 0
	for _, c := range []struct {
		name   string
		event  string
		actor  string
		slot   Slot
		to     Status
		notify []NotificationKind
		rule   SeatRule
	}{
		{"a reservation of a priced slot", EventReserve, ActorCustomer, priced, StatusPending, nil, SeatIfOpenForBooking},
		{"a reservation of a free slot", EventReserve, ActorCustomer, free, StatusConfirmed, nil, SeatIfOpenForBooking},
		{"an offer of a free slot", EventWaitlistOffer, ActorSystem, free, StatusPending, []NotificationKind{NotifyWaitlist}, SeatIfFree},
		{"an offer of a priced slot", EventWaitlistOffer, ActorSystem, priced, StatusPending, []NotificationKind{NotifyWaitlist}, SeatIfFree},
		{"a walk-in", EventWalkIn, ActorSalon, priced, StatusConfirmed, nil, SeatIfOpenForWalkIn},
	} {
		p, err := testPolicy.Plan(Change{Event: c.event, From: StatusNew, Actor: c.actor}, ChangeFacts{New: &NewFacts{Slot: c.slot, Now: now}})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		hold := testPolicy.NewHold(c.slot, now, c.event)
		if p.To != c.to || p.Hold == nil || *p.Hold != hold || p.Seat != SeatTaken || p.SeatRule != c.rule ||
			!slices.Equal(p.Notify, c.notify) || p.SlotID != c.slot.ID || p.From != StatusNew {
			t.Errorf("%s: plan %+v (hold %+v)", c.name, p, p.Hold)
		}
	}
	payment := &Payment{TransactionID: "4200", AmountFen: 5000}
	for name, c := range map[string]struct {
		change Change
		facts  ChangeFacts
	}{
		"a walk-in by the customer":   {Change{Event: EventWalkIn, From: StatusNew, Actor: ActorCustomer}, ChangeFacts{New: &NewFacts{Slot: priced, Now: now}}},
		"a reservation by the salon":  {Change{Event: EventReserve, From: StatusNew, Actor: ActorSalon}, ChangeFacts{New: &NewFacts{Slot: priced, Now: now}}},
		"an offer by the customer":    {Change{Event: EventWaitlistOffer, From: StatusNew, Actor: ActorCustomer}, ChangeFacts{New: &NewFacts{Slot: priced, Now: now}}},
		"a cancel creating a booking": {Change{Event: EventCancel, From: StatusNew, Actor: ActorCustomer}, ChangeFacts{New: &NewFacts{Slot: priced, Now: now}}},
		"a creation with a payment":   {Change{Event: EventReserve, From: StatusNew, Actor: ActorCustomer, Payment: payment}, ChangeFacts{New: &NewFacts{Slot: priced, Now: now}}},
		"a creation without the slot": {Change{Event: EventReserve, From: StatusNew, Actor: ActorCustomer}, ChangeFacts{SlotID: 7}},
	} {
		if p, err := testPolicy.Plan(c.change, c.facts); !IsCode(err, EINVALIDSTATE) {
			t.Errorf("%s: plan %+v, err %v; want INVALID_STATE", name, p, err)
		}
	}
}

// TestSeatRules: each row that takes a seat names the rule it is taken under,
// the others none; and each rule allows exactly the slots its definition says.
func TestSeatRules(t *testing.T) {
	for _, tr := range Transitions {
		takes := tr.Seat == SeatTaken || tr.Seat == SeatRetaken || tr.Seat == SeatMoved
		if takes != (tr.SeatRule != SeatNoRule) {
			t.Errorf("%s %s->%s by %v: seat effect %d, rule %d", tr.Event, tr.From, tr.To, tr.Actors, tr.Seat, tr.SeatRule)
		}
	}
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(start time.Duration, open bool, booked int) Slot {
		return Slot{StartAt: now.Add(start), EndAt: now.Add(start + time.Hour), Capacity: 2, Booked: booked, Open: open}
	}
	for _, c := range []struct {
		name                            string
		slot                            Slot
		booking, walkIn, notEnded, free bool
	}{
		{"ahead, open, free seat", at(time.Hour, true, 1), true, true, true, true},
		{"ahead, full", at(time.Hour, true, 2), false, false, false, false},
		{"ahead, closed", at(time.Hour, false, 0), false, false, true, true},
		{"under way", at(-10*time.Minute, true, 0), false, true, true, true},
		{"ended", at(-2*time.Hour, true, 0), false, false, false, true},
		{"beyond the window", at(15*24*time.Hour, true, 0), false, false, true, true},
	} {
		for rule, want := range map[SeatRule]bool{SeatIfOpenForBooking: c.booking, SeatIfOpenForWalkIn: c.walkIn, SeatIfNotEnded: c.notEnded, SeatIfFree: c.free, SeatNoRule: false} {
			if got := rule.Allows(c.slot, now, 14); got != want {
				t.Errorf("%s: rule %d allows %v, want %v", c.name, rule, got, want)
			}
		}
	}
}
