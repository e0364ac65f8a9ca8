package handler

// The bodies that choose what a booking holds: a seat of a slot ({"slotId"}),
// or a service at a start ({"serviceId","startAt"[,"technicianId"]}) or, for a
// move, a start ({"startAt"[,"technicianId"]}). Each body is one form or the
// other, never fields of both: a mix would leave it to the handler to guess
// which the client meant.

import (
	"time"

	"salon/shared/booking"
)

// choiceFields are the fields of either form, pointers so that an absent
// field is told from a zero one (null is refused by the strict decoding).
type choiceFields struct {
	SlotID       *int64  `json:"slotId"`
	ServiceID    *int64  `json:"serviceId"`
	StartAt      *string `json:"startAt"`
	TechnicianID *int64  `json:"technicianId"`
}

// choice is a body read as one form: SlotID for a seat; else the service
// (0 in a move, which keeps its service), the start and the technician (0:
// any free one, or in a move the same one).
type choice struct {
	SlotID       int64
	ServiceID    int64
	StartAt      time.Time
	TechnicianID int64
}

// serviceForm reports whether the body names anything of the service form.
func (f *choiceFields) serviceForm() bool {
	return f.ServiceID != nil || f.StartAt != nil || f.TechnicianID != nil
}

// reserveChoice reads the body of a reservation: {"slotId"} or
// {"serviceId","startAt"[,"technicianId"]}.
func (f *choiceFields) reserveChoice() (choice, error) {
	if f.SlotID != nil {
		return f.slotChoice("slotId, or serviceId and startAt")
	}
	if f.ServiceID == nil || f.StartAt == nil {
		return choice{}, booking.Errorf(booking.EBADREQUEST, "want slotId, or serviceId and startAt")
	}
	return f.serviceChoice()
}

// moveChoice reads the body of a move: {"slotId"} or
// {"startAt"[,"technicianId"]}; a move keeps its service, so naming one is
// refused.
func (f *choiceFields) moveChoice() (choice, error) {
	if f.ServiceID != nil {
		return choice{}, booking.Errorf(booking.EBADREQUEST, "serviceId: a move keeps its service; want slotId, or startAt")
	}
	if f.SlotID != nil {
		return f.slotChoice("slotId, or startAt")
	}
	if f.StartAt == nil {
		return choice{}, booking.Errorf(booking.EBADREQUEST, "want slotId, or startAt")
	}
	return f.serviceChoice()
}

// slotChoice is the slot form, refusing any field of the other.
func (f *choiceFields) slotChoice(want string) (choice, error) {
	if f.serviceForm() {
		return choice{}, booking.Errorf(booking.EBADREQUEST, "want %s, never fields of both", want)
	}
	if *f.SlotID <= 0 {
		return choice{}, booking.Errorf(booking.EBADREQUEST, "slotId: want a positive integer")
	}
	return choice{SlotID: *f.SlotID}, nil
}

// serviceChoice is the service form: the ids positive, the start RFC 3339.
func (f *choiceFields) serviceChoice() (choice, error) {
	var c choice
	if f.ServiceID != nil {
		if *f.ServiceID <= 0 {
			return c, booking.Errorf(booking.EBADREQUEST, "serviceId: want a positive integer")
		}
		c.ServiceID = *f.ServiceID
	}
	if f.TechnicianID != nil {
		if *f.TechnicianID <= 0 {
			return c, booking.Errorf(booking.EBADREQUEST, "technicianId: want a positive integer")
		}
		c.TechnicianID = *f.TechnicianID
	}
	if f.StartAt != nil {
		start, err := parseStart(*f.StartAt)
		if err != nil {
			return c, err
		}
		c.StartAt = start
	}
	return c, nil
}

// parseStart reads a start of the API: RFC 3339 with its offset, as
// GET /availability answers it. Whether it is on the grid is the service's
// to judge (SLOT_NOT_BOOKABLE), like every other rule of a start.
func parseStart(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, booking.Errorf(booking.EBADREQUEST, "startAt: want RFC 3339, e.g. 2026-05-01T14:00:00+08:00")
	}
	return t, nil
}
