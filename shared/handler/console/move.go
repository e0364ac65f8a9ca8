package console

// Moving a booking (改约): the choices the salon is offered.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"salon/shared/apigw"
	"salon/shared/booking"
)

// moveDays is how far ahead the 改约 choices reach, from today (shop time).
const moveDays = 7

type moveChoice struct {
	ID    int64
	Label string
	// When is the new time alone, for the question asked before the move;
	// Started: the slot is under way (listed last, marked 已开始).
	When    string
	Started bool
}

// moveChoices are the slots a booking can be moved to from the console: those
// of today and the next moveDays days that have not ended, are open and have a
// free seat, read once per page; those that have not started first, in time
// order, then those under way, marked (已开始): a move there is rarely meant.
// The service decides (RescheduleBySalon); this only offers what it would
// accept.
func (q *Request) moveChoices() []moveChoice {
	if q.moves != nil {
		return *q.moves
	}
	choices := []moveChoice{}
	q.moves = &choices
	now, err := q.dbNow()
	if err != nil {
		return choices
	}
	today, _, err := booking.DayBounds(booking.ShopDay(now, q.loc()), q.loc())
	if err != nil {
		return choices
	}
	vs, err := q.s.Timetable.Schedule(q.ctx, today, today.AddDate(0, 0, moveDays))
	if err != nil {
		apigw.Logger(q.ctx).Warn("console: the slots to move to", "err", err.Error())
		return choices
	}
	var started []moveChoice
	for _, v := range vs {
		if v.Open && v.EndAt.After(now) && v.Booked < v.Capacity {
			when := v.StartAt.In(q.loc()).Format("01-02 ") + weekdays[v.StartAt.In(q.loc()).Weekday()] + " " + span(v.StartAt, v.EndAt, q.loc())
			m := moveChoice{ID: v.ID, When: when, Started: !v.StartAt.After(now),
				Label: when + fmt.Sprintf("（余 %d，%s）", v.Capacity-v.Booked, yuan(v.PriceFen))}
			if m.Started {
				m.Label += "（已开始）"
				started = append(started, m)
				continue
			}
			choices = append(choices, m)
		}
	}
	choices = append(choices, started...)
	return choices
}

// move moves a booking to the chosen slot (service.RescheduleBySalon: one
// transaction, the old seat handed to the waitlist, the customer told) and comes
// back to where it was asked from. The form carries the slot the page showed
// the booking in (from): a booking moved since, by someone else too, is
// refused, not moved again. No slot chosen is refused in words.
func (c *Console) move(w http.ResponseWriter, q *Request) error {
	id, err1 := strconv.ParseInt(q.form.Get("id"), 10, 64)
	from, err2 := strconv.ParseInt(q.form.Get("from"), 10, 64)
	if err1 != nil || err2 != nil || id <= 0 || from <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: move %q from %q", q.form.Get("id"), q.form.Get("from"))
	}
	apigw.SetBookingID(q.ctx, id)
	outcome := url.Values{"id": {strconv.FormatInt(id, 10)}}
	slot, err := strconv.ParseInt(q.form.Get("slot"), 10, 64)
	if err != nil || slot <= 0 {
		outcome.Set("fail", booking.EBADREQUEST)
		outcome.Set("act", moveAction.Name)
		backTo(w, q, outcome)
		return nil
	}
	if _, err := q.s.Moves.RescheduleBySalon(q.ctx, id, slot, from); err != nil {
		apigw.Logger(q.ctx).Info("console move refused", "err", err.Error())
		outcome.Set("fail", booking.ErrorCode(err))
		outcome.Set("act", moveAction.Name)
	} else {
		outcome.Set("ok", moveAction.Name)
	}
	backTo(w, q, outcome)
	return nil
}
