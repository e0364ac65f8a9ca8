package console

// A walk-in or a phone booking.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
)

// walkIn takes a seat of a slot for someone at the counter or on the phone
// (service.WalkIn: the same conditional statement as every reservation,
// confirmed at once, paid in the shop) and comes back to the day. A refusal
// draws the day at once, with the form still holding what was typed (the name
// and phone are not put in an address), and, when her phone names a customer
// who already holds an unfinished booking, which one: her name, its time and a
// link to it.
//
// With a serviceId instead of a slot it books a service from a start
// (startAt, HH:MM of the date) with a technician (technicianId): the
// calendar's walk-in form.
func (c *Console) walkIn(w http.ResponseWriter, q *Request) error {
	req := booking.WalkInRequest{Name: q.form.Get("name"), Phone: q.form.Get("phone")}
	var cal *calWalkIn
	if v := q.form.Get("serviceId"); v != "" {
		var err error
		if req.ServiceID, err = formID(v); err != nil {
			return err
		}
		if req.TechnicianID, err = formID(q.form.Get("technicianId")); err != nil {
			return err
		}
		if req.StartAt, err = startOf(q.form.Get("date"), q.form.Get("startAt"), q.loc()); err != nil {
			return err
		}
		cal = &calWalkIn{Tech: req.TechnicianID, At: q.form.Get("startAt"), Service: req.ServiceID}
	} else {
		var err error
		if req.SlotID, err = formID(q.form.Get("slot")); err != nil {
			return err
		}
	}
	slotID := req.SlotID
	out := url.Values{}
	day := c.shopDay(q)
	if v := q.form.Get("date"); v != "" {
		if d, _, err := booking.DayBounds(v, q.loc()); err == nil {
			out.Set("date", v)
			day = d
		}
	}
	typed := walkInTyped{Name: q.form.Get("name"), Phone: q.form.Get("phone")}
	b, err := q.s.Door.WalkIn(q.ctx, req)
	if err == nil {
		apigw.SetBookingID(q.ctx, b.ID)
		out.Set("walkin", strconv.FormatInt(b.ID, 10))
		Redirect(w, "./?"+out.Encode()+"#bk-"+strconv.FormatInt(b.ID, 10))
		return nil
	}
	apigw.Logger(q.ctx).Info("console walk-in refused", "err", err.Error())
	code := booking.ErrorCode(err)
	f := &flash{Text: "登记没有成功：" + refusalWord(onWalkIn, code)}
	if code == booking.EACTIVEBOOKINGEXISTS && typed.Phone != "" {
		if open, err := q.s.Door.OpenBookingOfPhone(q.ctx, typed.Phone); err == nil {
			who := strings.TrimSpace(typed.Name)
			if open.Customer != nil && open.Customer.Name != "" {
				who = open.Customer.Name
			}
			f.Text = fmt.Sprintf("登记没有成功：%s（%s）已有一个未完成的预约：%s %s，%s。", who, typed.Phone,
				open.StartAt.In(q.loc()).Format("1月2日"), span(open.StartAt, open.EndAt, q.loc()), statusWord(open.Status))
			f.Href, f.Link = fmt.Sprintf("booking?id=%d", open.ID), "查看这个预约"
		}
	}
	if cal != nil {
		cal.Typed = &typed
	}
	return c.drawDay(w, q, day, &refusedWalkIn{Slot: slotID, Typed: typed, Flash: f, Cal: cal})
}

// walkInTyped is what the salon typed into a walk-in form.
type walkInTyped struct{ Name, Phone string }

// refusedWalkIn is a walk-in the salon was just refused: its slot, what was
// typed, and why.
type refusedWalkIn struct {
	Slot  int64
	Typed walkInTyped
	Flash *flash
	// Cal is the calendar's walk-in form of a service, when it was that one.
	Cal *calWalkIn
}

// walkInFlash says how a walk-in went: whom it registered for when, found
// among the day's bookings (shown).
func (q *Request) walkInFlash(v url.Values, shown []*booking.Booking) *flash {
	if id, err := strconv.ParseInt(v.Get("walkin"), 10, 64); err == nil && id > 0 {
		if b := q.bookingOf(id, shown); b != nil {
			row := q.row(b)
			return &flash{OK: true, Text: "已登记 " + row.Who + " " + row.When + "（" + row.Paid + "）"}
		}
		return &flash{OK: true, Text: fmt.Sprintf("预约 #%d 已登记（到店付款）", id)}
	}
	if code := v.Get("walkin_fail"); code != "" {
		return &flash{Text: "登记没有成功：" + refusalWord(onWalkIn, code)}
	}
	return nil
}

// startOf is the instant of a date (YYYY-MM-DD) at a time of day (HH:MM) in
// the shop's zone: a walk-in's start as the calendar's form sends it.
func startOf(date, hhmm string, loc *time.Location) (time.Time, error) {
	day, err := booking.ParseDate(date, loc)
	if err != nil {
		return time.Time{}, err
	}
	t, err := booking.ParseClock(hhmm)
	if err != nil {
		return time.Time{}, err
	}
	y, m, d := day.Date()
	return time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, loc), nil
}
