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
