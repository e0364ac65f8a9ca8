package console

// The door: check-in by the customer's code.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"salon/shared/apigw"
	"salon/shared/booking"
)

// doorBody is empty: after a refusal the field is empty again for the next
// code, and the outcome names the code that was tried.
type doorBody struct{}

// door is the check-in page: a field for the code the customer shows, which a
// phone's camera fills where the browser reads QR codes (static/console.js). A
// refusal is worded by the booking of today with that code as it is now
// (cancelled, not paid, checked in already, too early: from when).
func (c *Console) door(w http.ResponseWriter, q *Request) error {
	body := &doorBody{}
	p := q.page("到店签到", "door", body)
	v := q.r.URL.Query()
	if id, err := strconv.ParseInt(v.Get("ok"), 10, 64); err == nil && id > 0 {
		who := fmt.Sprintf("预约 #%d（%s）", id, v.Get("slot"))
		if b := q.bookingOf(id, nil); b != nil {
			row := q.row(b)
			who = row.Who + " " + row.When
		}
		p.Flash = &flash{OK: true, Text: "已签到：" + who}
	} else if code := v.Get("fail"); code != "" {
		why := refusalWord(onDoor, code)
		if typed := v.Get("code"); booking.ValidCheckinCode(typed) {
			if code == booking.EINVALIDSTATE || code == booking.ETOOEARLY {
				b, err := q.s.Door.DoorBooking(q.ctx, typed)
				if err != nil && !booking.IsCode(err, booking.ENOTFOUND) {
					// The general words stand; the page itself still works.
					apigw.Logger(q.ctx).Warn("console: the booking of a refused code", "err", err.Error())
				}
				if err == nil {
					checkin, _ := actionNamed("checkin")
					why = q.refusal(checkin, code, b)
				}
			}
			why = "签到码 " + typed + "：" + why
		}
		p.Flash = &flash{Text: "签到没有成功：" + why}
	}
	render(w, http.StatusOK, "door", p)
	return nil
}

// doorChange checks in by the posted code and comes back to the door page with
// the outcome.
func (c *Console) doorChange(w http.ResponseWriter, q *Request) error {
	code := strings.TrimSpace(q.form.Get("code"))
	b, err := q.s.Door.CheckInByCode(q.ctx, code)
	out := url.Values{}
	if err != nil {
		out.Set("fail", booking.ErrorCode(err))
		out.Set("code", code)
		if booking.ErrorCode(err) == booking.EINTERNAL {
			apigw.Logger(q.ctx).Error("console check-in by code", "err", err.Error())
		}
	} else {
		apigw.SetBookingID(q.ctx, b.ID)
		out.Set("ok", strconv.FormatInt(b.ID, 10))
		out.Set("slot", span(b.StartAt, b.EndAt, q.loc()))
	}
	Redirect(w, "door?"+out.Encode())
	return nil
}
