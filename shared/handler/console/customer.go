package console

// One customer: her bookings and the salon's note.

import (
	"net/http"
	"net/url"
	"strconv"

	"salon/shared/booking"
)

// maxHistory is how many of a customer's bookings her page lists.
const maxHistory = 100

type historyRow struct {
	bookingRow
	When string
}

type customerBody struct {
	C    *booking.Customer
	Who  string
	Rows []historyRow
}

func (c *Console) customerPage(w http.ResponseWriter, q *Request) error {
	id, err := strconv.ParseInt(q.r.URL.Query().Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: customer id %q", q.r.URL.Query().Get("id"))
	}
	cust, bs, err := q.s.Reads.CustomerHistory(q.ctx, id, maxHistory)
	if err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	body := &customerBody{C: cust, Who: cust.Name}
	if body.Who == "" {
		body.Who = "顾客 " + shortOpenID(cust.OpenID)
	}
	for _, b := range bs {
		body.Rows = append(body.Rows, historyRow{bookingRow: q.row(b),
			When: b.StartAt.In(q.loc()).Format("2006-01-02 ") + span(b.StartAt, b.EndAt, q.loc())})
	}
	p := q.page(body.Who, "", body)
	switch v := q.r.URL.Query(); {
	case v.Get("ok") != "":
		p.Flash = &flash{OK: true, Text: "备注已保存"}
	case v.Get("fail") != "":
		p.Flash = &flash{Text: "备注没有保存：" + errorWord(v.Get("fail"))}
	}
	render(w, http.StatusOK, "customer", p)
	return nil
}

// customerNote saves the salon's note on a customer and comes back to her page.
func (c *Console) customerNote(w http.ResponseWriter, q *Request) error {
	id, err := strconv.ParseInt(q.form.Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: customer id %q", q.form.Get("id"))
	}
	out := url.Values{"id": {strconv.FormatInt(id, 10)}}
	if _, err := q.s.Door.SetCustomerNote(q.ctx, id, q.form.Get("note")); err != nil {
		out.Set("fail", booking.ErrorCode(err))
	} else {
		out.Set("ok", "note")
	}
	Redirect(w, "customer?"+out.Encode())
	return nil
}
