package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Timetable is the schedule: the public one (function slots), the salon's
// week with its waitlists, and opening and changing slots.
type Timetable struct {
	*Common
	store  TimetableStore
	notify *Notifier
}

// TimetableStore is what the Timetable asks of the store.
type TimetableStore interface {
	CreateSlots(ctx context.Context, slots []booking.ScheduledSlot) (created, skipped int, err error)
	UpdateSlot(ctx context.Context, id int64, u booking.SlotUpdate, actor string) (*booking.SlotView, error)
	ListSlots(ctx context.Context, from, to time.Time) ([]booking.SlotView, error)
	WaitlistLengths(ctx context.Context, slotIDs []int64) (map[int64]int, error)
}

// CreateSchedule opens the schedule's slots; existing starts are skipped.
func (s *Timetable) CreateSchedule(ctx context.Context, sched booking.Schedule) (created, skipped int, err error) {
	if _, err := allow(ctx, booking.ActionSchedule); err != nil {
		return 0, 0, err
	}
	slots, err := sched.Slots(s.Loc)
	if err != nil {
		return 0, 0, err
	}
	return s.store.CreateSlots(ctx, slots)
}

// UpdateSlot applies the salon's change to a slot: a larger or smaller capacity
// (never below what is booked), or closing it to new bookings.
func (s *Timetable) UpdateSlot(ctx context.Context, slotID int64, u booking.SlotUpdate) (*booking.SlotView, error) {
	who, err := allow(ctx, booking.ActionSlotChange)
	if err != nil {
		return nil, err
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	v, err := s.store.UpdateSlot(ctx, slotID, u, who.Actor())
	if err == nil {
		s.notify.notifyNow(ctx) // new seats may have gone to the waitlist
	}
	return v, err
}

// Schedule returns the slots starting in [from, to), each with whether it can be
// booked now.
func (s *Timetable) Schedule(ctx context.Context, from, to time.Time) ([]booking.SlotView, error) {
	return s.store.ListSlots(ctx, from, to)
}

// ScheduleWithWaitlists is Schedule with each slot's waitlist length, for the
// salon's week (the public schedule does not show it, so it does not pay for it).
func (s *Timetable) ScheduleWithWaitlists(ctx context.Context, from, to time.Time) ([]booking.SlotView, error) {
	vs, err := s.store.ListSlots(ctx, from, to)
	if err != nil || len(vs) == 0 {
		return vs, err
	}
	ids := make([]int64, len(vs))
	for i := range vs {
		ids[i] = vs[i].ID
	}
	waiting, err := s.store.WaitlistLengths(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		vs[i].Waiting = waiting[vs[i].ID]
	}
	return vs, nil
}
