package console

// The audit trail, one day at a time, by event.

import (
	"net/http"
	"time"

	"salon/shared/booking"
)

// auditLimit bounds one page of the audit trail.
const auditLimit = 500

type auditBody struct {
	Date, Prev, Next, Event string
	Events                  []eventChoice
	Rows                    []auditRow
	Limit                   int
	Full                    bool
}

type eventChoice struct {
	Name, Word string
}

func (c *Console) audit(w http.ResponseWriter, q *Request) error {
	day, err := c.dayParam(q, "date")
	if err != nil {
		return err
	}
	event := q.r.URL.Query().Get("event")
	if len(event) > 32 {
		return booking.Errorf(booking.EBADREQUEST, "console: event filter too long")
	}
	recs, events, err := q.s.Reads.AuditTrail(q.ctx, day, day.AddDate(0, 0, 1), event, auditLimit)
	if err != nil {
		return err
	}
	body := &auditBody{Date: day.Format(time.DateOnly), Prev: day.AddDate(0, 0, -1).Format(time.DateOnly),
		Next: day.AddDate(0, 0, 1).Format(time.DateOnly), Event: event, Limit: auditLimit, Full: len(recs) == auditLimit}
	for _, e := range events {
		body.Events = append(body.Events, eventChoice{Name: e, Word: eventWord(e)})
	}
	starts := q.slotStarts(recs)
	for _, r := range recs {
		body.Rows = append(body.Rows, q.auditRow(r, starts))
	}
	render(w, http.StatusOK, "audit", q.page("审计 "+body.Date, "audit", body))
	return nil
}
