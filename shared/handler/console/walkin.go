package console

// A walk-in or a phone booking.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

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
func (c *Console) walkIn(w http.ResponseWriter, q *Request) error {
	slotID, err := strconv.ParseInt(q.form.Get("slot"), 10, 64)
	if err != nil || slotID <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: slot id %q", q.form.Get("slot"))
	}
	out := url.Values{}
	day := c.shopDay(q)
	if v := q.form.Get("date"); v != "" {
		if d, _, err := booking.DayBounds(v, q.loc()); err == nil {
			out.Set("date", v)
			day = d
		}
	}
	typed := walkInTyped{Name: q.form.Get("name"), Phone: q.form.Get("phone")}
	b, err := q.s.Door.WalkIn(q.ctx, booking.WalkInRequest{SlotID: slotID, Name: typed.Name, Phone: typed.Phone})
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
	return c.drawDay(w, q, day, &refusedWalkIn{Slot: slotID, Typed: typed, Flash: f})
}

// walkInTyped is what the salon typed into a walk-in form.
type walkInTyped struct{ Name, Phone string }

// refusedWalkIn is a walk-in the salon was just refused: its slot, what was
// typed, and why.
type refusedWalkIn struct {
	Slot  int64
	Typed walkInTyped
	Flash *flash
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
