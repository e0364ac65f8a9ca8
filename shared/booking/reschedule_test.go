package booking

import (
	"testing"
	"time"
)

// TestRescheduleRules: every rule of a move, for the customer and the salon,
// and the answer of each refusal.
func TestRescheduleRules(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	p := Policy{CancelFreeHours: 2, BookingWindowDays: 14, RescheduleLimit: 1, RemindBefore: 3 * time.Hour}
	from := Slot{ID: 1, StartAt: now.Add(26 * time.Hour), EndAt: now.Add(27 * time.Hour), Capacity: 2, Booked: 1, PriceFen: 5000, Open: true}
	slot := func(edit func(*Slot)) *Slot {
		s := Slot{ID: 2, StartAt: now.Add(50 * time.Hour), EndAt: now.Add(51 * time.Hour), Capacity: 2, Booked: 1, PriceFen: 5000, Open: true}
		if edit != nil {
			edit(&s)
		}
		return &s
	}
	facts := func(edit func(*RescheduleFacts)) RescheduleFacts {
		f := RescheduleFacts{Status: StatusConfirmed, From: from, To: slot(nil), Now: now}
		if edit != nil {
			edit(&f)
		}
		return f
	}
	cases := []struct {
		name  string
		actor string
		facts RescheduleFacts
		to    int64
		want  string // "" accepted
	}{
		{"the customer's move", ActorCustomer, facts(nil), 2, ""},
		{"at cancelFreeUntil exactly", ActorCustomer, facts(func(f *RescheduleFacts) { f.Now = from.StartAt.Add(-2 * time.Hour) }), 2, ""},
		{"after cancelFreeUntil", ActorCustomer, facts(func(f *RescheduleFacts) { f.Now = from.StartAt.Add(-2*time.Hour + time.Second) }), 2, ELATERESCHEDULE},
		{"moved once already", ActorCustomer, facts(func(f *RescheduleFacts) { f.Reschedules = 1 }), 2, ERESCHEDULELIMIT},
		{"a pending booking", ActorCustomer, facts(func(f *RescheduleFacts) { f.Status = StatusPending }), 2, EINVALIDSTATE},
		{"a cancelled booking", ActorSalon, facts(func(f *RescheduleFacts) { f.Status = StatusCancelled }), 2, EINVALIDSTATE},
		{"a completed booking", ActorSalon, facts(func(f *RescheduleFacts) { f.Status = StatusCompleted }), 2, EINVALIDSTATE},
		{"the slot it is in", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = &f.From }), 1, EINVALIDSTATE},
		{"the salon, the slot it is in", ActorSalon, facts(func(f *RescheduleFacts) { f.To = &f.From }), 1, EINVALIDSTATE},
		{"no such slot", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = nil }), 9, ENOTFOUND},
		{"a closed slot", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.Open = false }) }), 2, ESLOTNOTBOOKABLE},
		{"a started slot", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.StartAt = now.Add(-time.Minute) }) }), 2, ESLOTNOTBOOKABLE},
		{"beyond the window", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.StartAt = now.Add(15 * 24 * time.Hour) }) }), 2, ESLOTNOTBOOKABLE},
		{"another price", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.PriceFen = 8000 }) }), 2, EPRICEDIFFERS},
		{"a full slot", ActorCustomer, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.Booked = 2 }) }), 2, ESOLDOUT},
		{"the salon after cancelFreeUntil", ActorSalon, facts(func(f *RescheduleFacts) { f.Now = from.StartAt.Add(time.Minute) }), 2, ""},
		{"the salon past the limit", ActorSalon, facts(func(f *RescheduleFacts) { f.Reschedules = 5 }), 2, ""},
		{"the salon, another price", ActorSalon, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.PriceFen = 0 }) }), 2, ""},
		{"the salon, a closed slot", ActorSalon, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.Open = false }) }), 2, ""},
		{"the salon, beyond the window", ActorSalon, facts(func(f *RescheduleFacts) {
			f.To = slot(func(s *Slot) { s.StartAt = now.Add(30 * 24 * time.Hour); s.EndAt = s.StartAt.Add(time.Hour) })
		}), 2, ""},
		{"the salon, a slot under way", ActorSalon, facts(func(f *RescheduleFacts) {
			f.To = slot(func(s *Slot) { s.StartAt = now.Add(-time.Minute); s.EndAt = now.Add(time.Hour) })
		}), 2, ""},
		{"the salon, a slot that ended", ActorSalon, facts(func(f *RescheduleFacts) {
			f.To = slot(func(s *Slot) { s.StartAt = now.Add(-2 * time.Hour); s.EndAt = now })
		}), 2, ESLOTNOTBOOKABLE},
		{"the salon, a full slot", ActorSalon, facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.Booked = 2 }) }), 2, ESOLDOUT},
	}
	for _, c := range cases {
		ch := Change{BookingID: 7, From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: c.actor, ToSlotID: c.to}
		err := p.RescheduleRefusal(ch, c.facts)
		if got := ErrorCode(err); got != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		plan, perr := p.PlanReschedule(ch, c.facts)
		if ErrorCode(perr) != c.want || (c.want == "") != (plan != nil) {
			t.Errorf("%s: plan %+v, err %v; want %q", c.name, plan, perr, c.want)
		}
	}
	// The reminder is due at once only when the new start is within REMIND_BEFORE.
	soon := facts(func(f *RescheduleFacts) { f.To = slot(func(s *Slot) { s.StartAt = now.Add(2 * time.Hour) }) })
	salonMove := Change{BookingID: 7, From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorSalon, ToSlotID: 2}
	if plan, err := p.PlanReschedule(salonMove, soon); err != nil || !plan.Move.RemindNow {
		t.Errorf("a move to a slot within REMIND_BEFORE: %+v %v", plan, err)
	}
	if plan, err := p.PlanReschedule(salonMove, facts(nil)); err != nil || plan.Move.RemindNow {
		t.Errorf("a move to a slot beyond REMIND_BEFORE: %+v %v", plan, err)
	}
	// A higher limit allows more.
	p.RescheduleLimit = 3
	if err := p.RescheduleRefusal(Change{Actor: ActorCustomer, ToSlotID: 2}, facts(func(f *RescheduleFacts) { f.Reschedules = 2 })); err != nil {
		t.Errorf("limit 3, moved twice: %v", err)
	}
	p.RescheduleLimit = 0
	if err := p.RescheduleRefusal(Change{Actor: ActorCustomer, ToSlotID: 2}, facts(nil)); !IsCode(err, ERESCHEDULELIMIT) {
		t.Errorf("limit 0: %v", err)
	}
}

// TestPlanReschedule: the customer's and the salon's moves plan the writes
// their rows say; anything else is INVALID_STATE.
func TestPlanReschedule(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	p := Policy{CancelFreeHours: 2, BookingWindowDays: 14, RescheduleLimit: 1, RemindBefore: 3 * time.Hour}
	f := RescheduleFacts{Status: StatusConfirmed, Now: now,
		From: Slot{ID: 1, StartAt: now.Add(26 * time.Hour), EndAt: now.Add(27 * time.Hour), Capacity: 2, Booked: 1, PriceFen: 5000, Open: true},
		To:   &Slot{ID: 2, StartAt: now.Add(50 * time.Hour), EndAt: now.Add(51 * time.Hour), Capacity: 2, PriceFen: 5000, Open: true}}
	move := Change{BookingID: 7, From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, ToSlotID: 2}
	for _, c := range []struct {
		actor  string
		notify []NotificationKind
		count  bool
	}{
		{ActorCustomer, []NotificationKind{NotifyReminder}, true},
		{ActorSalon, []NotificationKind{NotifyRescheduled, NotifyReminder}, false},
	} {
		ch := move
		ch.Actor = c.actor
		plan, err := p.PlanReschedule(ch, f)
		if err != nil {
			t.Fatalf("%s: %v", c.actor, err)
		}
		if plan.SlotID != 1 || plan.Seat != SeatMoved || !plan.OfferFreedSeat || plan.StartRefund || plan.RecordPayment ||
			len(plan.Notify) != len(c.notify) || plan.Notify[0] != c.notify[0] || plan.RemindBefore != p.RemindBefore ||
			plan.Move == nil || plan.Move.ToSlotID != 2 || plan.Move.Count != c.count || (plan.SeatRule == SeatIfOpenForBooking) != c.count {
			t.Errorf("%s: plan %+v move %+v", c.actor, plan, plan.Move)
		}
	}
	for name, c := range map[string]Change{
		"by the timer":         {From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorTimer, ToSlotID: 2},
		"of a pending booking": {From: StatusPending, To: StatusPending, Event: EventReschedule, Actor: ActorCustomer, ToSlotID: 2},
		"to another status":    {From: StatusConfirmed, To: StatusCancelled, Event: EventReschedule, Actor: ActorSalon, ToSlotID: 2},
		"a cancel as a move":   {From: StatusConfirmed, To: StatusCancelled, Event: EventCancel, Actor: ActorSalon, ToSlotID: 2},
		"with a payment":       {From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorSalon, ToSlotID: 2, Payment: &Payment{}},
		"moved meanwhile":      {From: StatusConfirmed, To: StatusConfirmed, Event: EventReschedule, Actor: ActorSalon, ToSlotID: 2, SlotID: 5},
	} {
		if plan, err := p.PlanReschedule(c, f); !IsCode(err, EINVALIDSTATE) {
			t.Errorf("%s: plan %+v, err %v; want INVALID_STATE", name, plan, err)
		}
	}
}

// TestRescheduledStillTrue: the salon's message of a move is sent only while
// the booking is still confirmed.
func TestRescheduledStillTrue(t *testing.T) {
	now := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	n := Notification{Kind: NotifyRescheduled, StartAt: now.Add(time.Hour), BookingStatus: StatusConfirmed}
	if !n.StillTrue(now) {
		t.Error("a confirmed booking's move is not true")
	}
	for _, st := range []Status{StatusCancelled, StatusCompleted, StatusNoShow} {
		n.BookingStatus = st
		if n.StillTrue(now) {
			t.Errorf("a %s booking's move is still true", st)
		}
	}
}
