package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
)

// auditLimit bounds one page of the audit trail.
const auditLimit = 500

// ---- today

type bookingRow struct {
	B      *booking.Booking
	Status string
	Paid   string // the deposit line (moneyOf)
	Refund string
	Who    string
	// When is the booking's day and start (12月3日 14:00).
	When string
	// Phone and About tell the salon who is at the counter: the phone number,
	// and her visits, recent no-shows and the salon's note.
	Phone, About string
	// MoveTo are the slots the salon can move the booking to (改约): for a
	// confirmed booking, the free slots of the next days; MoveConfirm asks first.
	MoveTo      []moveChoice
	MoveConfirm string
	Actions     []actionButton
	// By is the last change a person at the salon made to the booking, and
	// who ("签到 · 小美 14:05"); "" when none did.
	By string
}

type actionButton struct {
	Name, Label, Confirm string
	Danger               bool
}

type slotBlock struct {
	View     booking.SlotView
	Time     string
	State    string
	Bookings []bookingRow
	// WalkIn: the salon can take someone at the counter or on the phone for
	// this slot now (open, not ended, a seat free): the form is shown.
	WalkIn bool
	// Typed is what the salon typed into this slot's walk-in form when it was
	// refused: the form opens with it again.
	Typed *walkInTyped
}

type todayBody struct {
	Date, Weekday, Prev, Next string
	IsToday                   bool
	Slots                     []slotBlock
	Booked, Arrived           int
	// Now is the first slot of today that has not ended, after slots that
	// have: the page opens there (static/console.js), not at the morning's
	// past slots. 0 for another day, when no slot has ended yet (the page
	// opens at its top) or when every one has.
	Now int64
}

func (c *Console) today(w http.ResponseWriter, q *Request) error {
	day, err := c.dayParam(q, "date")
	if err != nil {
		return err
	}
	return c.drawDay(w, q, day, nil)
}

// drawDay draws the page of one day; refused, when not nil, is a walk-in the
// salon was just refused, drawn back into its slot's form with why.
func (c *Console) drawDay(w http.ResponseWriter, q *Request, day time.Time, refused *refusedWalkIn) error {
	from, to := day, day.AddDate(0, 0, 1)
	slots, err := q.d.Svc.Schedule(q.ctx, from, to)
	if err != nil {
		return err
	}
	bs, err := q.d.Svc.DayBookings(q.ctx, from, to)
	if err != nil {
		return err
	}
	if err := q.d.Svc.WithCustomers(q.ctx, bs...); err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	by, err := q.d.Svc.LastPersonChanges(q.ctx, bs)
	if err != nil {
		return err
	}
	body := &todayBody{Date: day.Format(time.DateOnly), Weekday: weekdays[day.Weekday()],
		Prev: from.AddDate(0, 0, -1).Format(time.DateOnly), Next: to.Format(time.DateOnly),
		IsToday: day.Equal(c.shopDay(q))}
	bySlot := map[int64][]bookingRow{}
	for _, b := range bs {
		row := q.row(b)
		if rec, ok := by[b.ID]; ok {
			row.By = q.byWords(rec)
		}
		bySlot[b.SlotID] = append(bySlot[b.SlotID], row)
		if b.Status.HoldsSeat() {
			body.Booked++
		}
		if b.Status == booking.StatusCompleted {
			body.Arrived++
		}
	}
	for i := range slots {
		v := slots[i]
		if body.IsToday && body.Now == 0 && i > 0 && v.EndAt.After(q.now) && !slots[0].EndAt.After(q.now) {
			body.Now = v.ID
		}
		block := slotBlock{View: v, Time: span(v.StartAt, v.EndAt, q.loc()),
			State: slotStateWord(&v), Bookings: bySlot[v.ID],
			WalkIn: q.may(booking.ActionWalkIn) && v.OpenForWalkIn(q.now, q.d.Cfg.BookingWindowDays) && v.Booked < v.Capacity}
		if refused != nil && refused.Slot == v.ID {
			block.Typed = &refused.Typed
		}
		body.Slots = append(body.Slots, block)
	}
	p := q.page("今日 "+body.Date, "today", body)
	p.Flash = q.bookingFlash(q.r.URL.Query(), bs)
	if f := q.walkInFlash(q.r.URL.Query(), bs); f != nil {
		p.Flash = f
	}
	if refused != nil {
		p.Flash = refused.Flash
	}
	render(w, http.StatusOK, "today", p)
	return nil
}

func (q *Request) row(b *booking.Booking) bookingRow {
	money := moneyOf(b)
	r := bookingRow{B: b, Status: statusWord(b.Status), Paid: money.Deposit, Refund: money.Refund, Who: shortOpenID(b.OpenID),
		When: q.when(b.StartAt)}
	if c := b.Customer; c != nil {
		if c.Name != "" {
			r.Who = c.Name
		} else if b.OpenID == "" {
			r.Who = "到店顾客"
		}
		r.Phone = c.Phone
		r.About = customerAbout(c)
	}
	// The question names the customer and the time: the start alone for a
	// booking of today, the day too for another.
	start := r.When
	if booking.ShopDay(b.StartAt, q.loc()) == booking.ShopDay(q.now, q.loc()) {
		start = b.StartAt.In(q.loc()).Format("15:04")
	}
	what := r.Who + "（" + start + "）"
	if b.Status == booking.StatusConfirmed && q.may(moveAction.Action) {
		for _, m := range q.moveChoices() {
			if m.ID != b.SlotID {
				r.MoveTo = append(r.MoveTo, m)
			}
		}
		// {slot} is the chosen slot's time, put in by static/console.js.
		r.MoveConfirm = fmt.Sprintf("把 %s 的预约（%s）改到 {slot}？原来的座位会让给候补，顾客会收到通知。",
			r.Who, b.StartAt.In(q.loc()).Format("01-02 15:04"))
	}
	for _, a := range bookingActions {
		if q.may(a.Action) && a.Shown(q.d.Svc, b, q.now) {
			label, question := a.Label, fmt.Sprintf(a.Confirm, what)
			if a.Money != nil {
				l, note := a.Money(money)
				if l != "" {
					label = l
				}
				question += note
			}
			r.Actions = append(r.Actions, actionButton{Name: a.Name, Label: label, Confirm: question, Danger: a.Danger})
		}
	}
	return r
}

// customerAbout is what the salon knows of a customer at a glance: visits,
// no-shows in 90 days, and her note.
func customerAbout(c *booking.Customer) string {
	about := fmt.Sprintf("到店 %d 次", c.Visits)
	if c.NoShows90d > 0 {
		about += fmt.Sprintf(" · 90 天内未到 %d 次", c.NoShows90d)
	}
	if c.Note != "" {
		about += " · 备注：" + c.Note
	}
	return about
}

// shortOpenID shows enough of a customer's openid to tell two apart at the door.
func shortOpenID(openid string) string {
	r := []rune(openid)
	if len(r) <= 8 {
		return openid
	}
	return "…" + string(r[len(r)-6:])
}

// when names a moment for the salon: 12月3日 14:00.
func (q *Request) when(t time.Time) string { return dayAndTime(t, q.loc()) }

func dayAndTime(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return fmt.Sprintf("%d月%d日 %s", t.Month(), t.Day(), t.Format("15:04"))
}

func span(from, to time.Time, loc *time.Location) string {
	return from.In(loc).Format("15:04") + "–" + to.In(loc).Format("15:04")
}

// shopDay is today's date in the shop's zone, at midnight.
func (c *Console) shopDay(q *Request) time.Time {
	y, m, d := c.now().In(q.loc()).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, q.loc())
}

// dayParam reads an optional YYYY-MM-DD query parameter; absent means today.
func (c *Console) dayParam(q *Request, name string) (time.Time, error) {
	v := q.r.URL.Query().Get(name)
	if v == "" {
		return c.shopDay(q), nil
	}
	day, _, err := booking.DayBounds(v, q.loc())
	return day, err
}

// bookingFlash turns the outcome a change put in the redirect (?ok=checkin&id=7
// or ?fail=INVALID_STATE&act=checkin&id=7) back into words, naming the customer
// and the time of the booking as it is now (found among shown, the page's
// bookings, or read). Only names from the console's own tables and a number
// are read from the query, never free text.
func (q *Request) bookingFlash(v url.Values, shown []*booking.Booking) *flash {
	id, err := strconv.ParseInt(v.Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	ok, okAction := actionNamed(v.Get("ok"))
	code := v.Get("fail")
	if !okAction && code == "" {
		return nil
	}
	b := q.bookingOf(id, shown)
	who, money := fmt.Sprintf("预约 #%d", id), moneyWords{}
	if b != nil {
		row := q.row(b)
		who, money = row.Who+" "+row.When, moneyOf(b)
	}
	if okAction {
		text := ok.Done + "：" + who
		if money.Outcome != "" && (ok.Name == "cancel" || ok.Name == "cancelunpaid" || ok.Name == "noshow") {
			text += " · " + money.Outcome
		}
		return &flash{OK: true, Text: text}
	}
	label, why := "操作", errorWord(code)
	if a, found := actionNamed(v.Get("act")); found {
		label = a.Label
		if a.Money != nil && b != nil {
			if l, _ := a.Money(money); l != "" {
				label = l
			}
		}
		if b != nil {
			// Worded by what the booking is now: a cancelled one is not
			// "already checked in".
			why = q.refusal(a, code, b)
		}
	}
	return &flash{Text: fmt.Sprintf("%s %s没有成功：%s", who, label, why)}
}

// bookingOf is booking id as it is now: one of shown, or read (with its
// customer); nil when it cannot be read (the outcome then names its number).
func (q *Request) bookingOf(id int64, shown []*booking.Booking) *booking.Booking {
	for _, b := range shown {
		if b.ID == id {
			return b
		}
	}
	b, _, err := q.d.Svc.BookingWithHistory(q.ctx, id)
	if err != nil || q.d.Svc.WithCustomers(q.ctx, b) != nil {
		return nil
	}
	return b
}

// ---- the door: check-in by the customer's code

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
				b, err := q.d.Svc.DoorBooking(q.ctx, typed)
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
	b, err := q.d.Svc.CheckInByCode(q.ctx, code)
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

// ---- moving a booking (改约)

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
	vs, err := q.d.Svc.Schedule(q.ctx, today, today.AddDate(0, 0, moveDays))
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
	if _, err := q.d.Svc.RescheduleBySalon(q.ctx, id, slot, from); err != nil {
		apigw.Logger(q.ctx).Info("console move refused", "err", err.Error())
		outcome.Set("fail", booking.ErrorCode(err))
		outcome.Set("act", moveAction.Name)
	} else {
		outcome.Set("ok", moveAction.Name)
	}
	backTo(w, q, outcome)
	return nil
}

// ---- a walk-in or a phone booking

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
	b, err := q.d.Svc.WalkIn(q.ctx, booking.WalkInRequest{SlotID: slotID, Name: typed.Name, Phone: typed.Phone})
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
		if open, err := q.d.Svc.OpenBookingOfPhone(q.ctx, typed.Phone); err == nil {
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

// ---- one customer: her bookings and the salon's note

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
	cust, bs, err := q.d.Svc.CustomerHistory(q.ctx, id, maxHistory)
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
	if _, err := q.d.Svc.SetCustomerNote(q.ctx, id, q.form.Get("note")); err != nil {
		out.Set("fail", booking.ErrorCode(err))
	} else {
		out.Set("ok", "note")
	}
	Redirect(w, "customer?"+out.Encode())
	return nil
}

// ---- one booking

type bookingBody struct {
	Query string
	// Matches are the bookings a search by phone or name found, newest
	// first, when it found more than one.
	Matches []historyRow
	Row     *bookingRow
	Slot    string
	Created string
	Paid    string
	Lock    string
	History []auditRow
}

type auditRow struct {
	R      booking.AuditRecord
	At     string
	Event  string
	Change string
	Actor  string
	// Slot is the record's slot by its start (12月3日 14:00), Reason its
	// reason with the slots it names by their starts too, and Ref the WeChat
	// Pay number the reason carried, shown apart and muted.
	Slot, Reason, Ref string
}

// maxMatches bounds the bookings one search by phone or name lists.
const maxMatches = 20

func (c *Console) bookingPage(w http.ResponseWriter, q *Request) error {
	v := q.r.URL.Query()
	text := strings.TrimSpace(v.Get("q"))
	body := &bookingBody{Query: text}
	p := q.page("查预约", "booking", body)
	if _, err := q.dbNow(); err != nil {
		return err
	}
	// A link (today's list, the audit trail, a change's redirect) names the
	// booking by id; the salon types a number, an order number, a phone or a name.
	id, byID := int64(0), false
	if idText := v.Get("id"); idText != "" {
		if id, byID = bookingIDOf(idText); !byID {
			return booking.Errorf(booking.EBADREQUEST, "console: booking id %q", idText)
		}
	}
	switch search, isSearch := booking.ParseCustomerSearch(text); {
	case byID:
	case text == "":
		render(w, http.StatusOK, "booking", p)
		return nil
	case strings.HasPrefix(strings.ToUpper(text), "BK") || !isSearch:
		if id, byID = bookingIDOf(text); !byID {
			p.Flash = &flash{Text: "请输入预约号、BK 开头的订单号、手机号（或后 4 位）或顾客姓名。"}
			render(w, http.StatusBadRequest, "booking", p)
			return nil
		}
	default:
		bs, err := q.d.Svc.SearchBookings(q.ctx, search, maxMatches)
		if err != nil {
			return err
		}
		if search.PhoneTail != "" { // four digits may also be a booking number
			if n, ok := bookingIDOf(text); ok {
				if b := q.bookingOf(n, bs); b != nil && !slices.ContainsFunc(bs, func(x *booking.Booking) bool { return x.ID == n }) {
					bs = append([]*booking.Booking{b}, bs...)
				}
			}
		}
		switch len(bs) {
		case 0:
			p.Flash = &flash{Text: fmt.Sprintf("没有找到 %s 的预约（可以输入预约号、订单号、手机号或后 4 位、顾客姓名）。", text)}
			render(w, http.StatusNotFound, "booking", p)
			return nil
		case 1:
			id, byID = bs[0].ID, true
		default:
			for _, b := range bs {
				body.Matches = append(body.Matches, historyRow{bookingRow: q.row(b),
					When: b.StartAt.In(q.loc()).Format("2006-01-02 ") + weekdays[b.StartAt.In(q.loc()).Weekday()] + " " + span(b.StartAt, b.EndAt, q.loc())})
			}
			p.Title = fmt.Sprintf("查预约 %s：%d 个", text, len(bs))
			render(w, http.StatusOK, "booking", p)
			return nil
		}
	}
	b, trail, err := q.d.Svc.BookingWithHistory(q.ctx, id)
	if booking.IsCode(err, booking.ENOTFOUND) {
		p.Flash = &flash{Text: fmt.Sprintf("没有找到预约 %s。", cmp.Or(text, strconv.FormatInt(id, 10)))}
		render(w, http.StatusNotFound, "booking", p)
		return nil
	}
	if err != nil {
		return err
	}
	if err := q.d.Svc.WithCustomers(q.ctx, b); err != nil {
		return err
	}
	p.Flash = q.bookingFlash(v, []*booking.Booking{b})
	row := q.row(b)
	body.Row = &row
	body.Slot = b.StartAt.In(q.loc()).Format("2006-01-02 ") + weekdays[b.StartAt.In(q.loc()).Weekday()] + " " + span(b.StartAt, b.EndAt, q.loc())
	body.Created = clock(b.CreatedAt, q.loc())
	body.Lock = clock(b.LockExpire, q.loc())
	if b.PaidAt != nil {
		body.Paid = clock(*b.PaidAt, q.loc())
	}
	starts := q.slotStarts(trail)
	for _, r := range trail {
		body.History = append(body.History, q.auditRow(r, starts))
	}
	p.Title = row.Who + " " + row.When
	render(w, http.StatusOK, "booking", p)
	return nil
}

// bookingIDOf reads a booking id or an order number (BK and twelve digits).
func bookingIDOf(s string) (int64, bool) {
	if strings.HasPrefix(strings.ToUpper(s), "BK") {
		return booking.ParseOutTradeNo("BK" + s[2:])
	}
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// byWords says what a person of the salon last did to a booking, who and when.
func (q *Request) byWords(r booking.AuditRecord) string {
	what := eventWords[r.Event]
	if what == "" {
		what = r.Event
	}
	return what + " · " + q.actorName(r.Actor) + " " + r.CreatedAt.In(q.loc()).Format("15:04")
}

// movedSlots finds the slots a move's audit reason names ("门店改约：时段 7 -> 50",
// as the store writes it), and arrow the "->" of a reason's change.
var (
	movedSlots = regexp.MustCompile(`时段 (\d+) -> (\d+)`)
	// wechatNumber is a WeChat Pay transaction or refund number in a reason
	// ("已付款 4200…", "退款处理中：5000…"): 16 digits or more.
	wechatNumber = regexp.MustCompile(`[：:]?\s*([0-9]{16,})`)
	arrow        = strings.NewReplacer(" -> ", " → ")
)

// slotStarts are the starts of the slots these audit records concern, and of
// those their reasons name, for saying them as times rather than numbers.
func (q *Request) slotStarts(recs []booking.AuditRecord) map[int64]time.Time {
	var ids []int64
	for _, r := range recs {
		ids = append(ids, r.SlotID)
		for _, m := range movedSlots.FindAllStringSubmatch(r.Reason, -1) {
			for _, n := range m[1:] {
				if id, err := strconv.ParseInt(n, 10, 64); err == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	starts, err := q.d.Svc.SlotStarts(q.ctx, ids)
	if err != nil {
		apigw.Logger(q.ctx).Warn("console: the starts of the audit's slots", "err", err.Error())
	}
	return starts
}

// slotName says a slot by its start, or by its number when it is gone.
func (q *Request) slotName(id int64, starts map[int64]time.Time) string {
	if t, ok := starts[id]; ok {
		return q.when(t)
	}
	return fmt.Sprintf("时段 #%d", id)
}

// reasonByTimes says an audit reason with the slots it names by their times
// (slot names them) and its changes with an arrow: "门店改约：时段 7 -> 50"
// becomes "门店改约：12月3日 14:00 → 12月4日 10:00".
func reasonByTimes(reason string, slot func(id int64) string) string {
	return arrow.Replace(movedSlots.ReplaceAllStringFunc(reason, func(m string) string {
		ids := movedSlots.FindStringSubmatch(m)
		from, _ := strconv.ParseInt(ids[1], 10, 64)
		to, _ := strconv.ParseInt(ids[2], 10, 64)
		return slot(from) + " → " + slot(to)
	}))
}

// reasonAndRef takes the WeChat Pay numbers out of an audit reason, to show
// them apart: "已付款 4200000001234567" is "已付款" and "4200000001234567".
func reasonAndRef(reason string) (string, string) {
	var refs []string
	for _, m := range wechatNumber.FindAllStringSubmatch(reason, -1) {
		refs = append(refs, m[1])
	}
	return strings.TrimSpace(wechatNumber.ReplaceAllString(reason, "")), strings.Join(refs, " ")
}

func (q *Request) auditRow(r booking.AuditRecord, starts map[int64]time.Time) auditRow {
	row := auditRow{R: r, At: clock(r.CreatedAt, q.loc()), Event: eventWord(r.Event), Actor: q.actorName(r.Actor)}
	if r.SlotID != 0 {
		row.Slot = q.slotName(r.SlotID, starts)
	}
	row.Reason, row.Ref = reasonAndRef(reasonByTimes(r.Reason, func(id int64) string { return q.slotName(id, starts) }))
	if r.FromStatus >= 0 || r.ToStatus >= 0 {
		if r.FromStatus == r.ToStatus {
			row.Change = statusWordOf(r.ToStatus)
		} else if r.FromStatus < 0 {
			row.Change = "→ " + statusWordOf(r.ToStatus)
		} else {
			row.Change = statusWordOf(r.FromStatus) + " → " + statusWordOf(r.ToStatus)
		}
	}
	return row
}

// bookingChange runs one booking action (check in, cancel, ...) and sends the
// browser back where it came from with the outcome.
func (c *Console) bookingChange(w http.ResponseWriter, q *Request) error {
	id, err := strconv.ParseInt(q.form.Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: booking id %q", q.form.Get("id"))
	}
	a, ok := actionNamed(q.form.Get("do"))
	if !ok || a.Run == nil {
		return booking.Errorf(booking.EBADREQUEST, "console: unknown booking action")
	}
	apigw.SetBookingID(q.ctx, id)
	outcome := url.Values{"id": {strconv.FormatInt(id, 10)}}
	if _, err := a.Run(q.d.Svc, q.ctx, id); err != nil {
		code := booking.ErrorCode(err)
		if code == booking.EINTERNAL {
			apigw.Logger(q.ctx).Error("console booking action", "action", a.Name, "err", err.Error())
		} else {
			apigw.Logger(q.ctx).Info("console booking action refused", "action", a.Name, "err", err.Error())
		}
		outcome.Set("fail", code)
		outcome.Set("act", a.Name)
	} else {
		outcome.Set("ok", a.Name)
	}
	backTo(w, q, outcome)
	return nil
}

// backTo answers a booking change with the page it was asked from: the day, or
// the booking's own page, with the outcome.
func backTo(w http.ResponseWriter, q *Request, outcome url.Values) {
	if q.form.Get("back") == "today" {
		if day := q.form.Get("date"); day != "" {
			if _, _, err := booking.DayBounds(day, q.loc()); err == nil {
				outcome.Set("date", day)
			}
		}
		Redirect(w, "./?"+outcome.Encode()+"#bk-"+outcome.Get("id"))
		return
	}
	Redirect(w, "booking?"+outcome.Encode())
}

// ---- the week

type weekBody struct {
	From, To, Prev, Next string
	Facts                []string
	Days                 []weekDay
	Empty                bool // no slot this week: the schedule form opens
	Form                 scheduleForm
	// CanSchedule and CanChangeSlots: the signed-in role may create slots,
	// and close, reopen or resize one (the forms are drawn only then).
	CanSchedule, CanChangeSlots bool
}

type weekDay struct {
	Date, Weekday string
	Slots         []weekSlot
}

type weekSlot struct {
	View  booking.SlotView
	Time  string
	Facts []weekFact
}

// weekFact is one value of a slot in the week, with the name a card shows
// before it (slotFact.Card).
type weekFact struct{ Card, Value string }

// scheduleForm is the schedule body of POST /admin/slots as a form: the same
// fields, with the deposit in yuan for the salon instead of fen.
type scheduleForm struct {
	From, To, Open, Close, SlotMinutes, Capacity, PriceYuan string
}

func (c *Console) week(w http.ResponseWriter, q *Request) error {
	from, err := c.dayParam(q, "from")
	if err != nil {
		return err
	}
	to := from.AddDate(0, 0, 7)
	slots, err := q.d.Svc.ScheduleWithWaitlists(q.ctx, from, to)
	if err != nil {
		return err
	}
	body := &weekBody{From: from.Format(time.DateOnly), To: to.AddDate(0, 0, -1).Format(time.DateOnly),
		Prev: from.AddDate(0, 0, -7).Format(time.DateOnly), Next: to.Format(time.DateOnly),
		Form: scheduleForm{From: from.Format(time.DateOnly), To: to.AddDate(0, 0, -1).Format(time.DateOnly),
			Open: "10:00", Close: "21:00", SlotMinutes: "90", Capacity: "3", PriceYuan: "50"}}
	for _, f := range slotFacts {
		body.Facts = append(body.Facts, f.Label)
	}
	dayIndex := map[string]int{}
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		dayIndex[d.Format(time.DateOnly)] = len(body.Days)
		body.Days = append(body.Days, weekDay{Date: d.Format(time.DateOnly), Weekday: weekdays[d.Weekday()]})
	}
	for i := range slots {
		v := slots[i]
		ws := weekSlot{View: v, Time: span(v.StartAt, v.EndAt, q.loc())}
		for _, f := range slotFacts {
			ws.Facts = append(ws.Facts, weekFact{Card: f.Card, Value: f.Value(&v)})
		}
		// A slot is listed under the shop day it starts.
		if i, ok := dayIndex[v.StartAt.In(q.loc()).Format(time.DateOnly)]; ok {
			body.Days[i].Slots = append(body.Days[i].Slots, ws)
		}
	}
	body.Empty = len(slots) == 0
	body.CanSchedule, body.CanChangeSlots = q.may(booking.ActionSchedule), q.may(booking.ActionSlotChange)
	p := q.page("排班 "+body.From, "week", body)
	p.Flash = weekFlash(q.r.URL.Query(), slots, q.loc())
	render(w, http.StatusOK, "week", p)
	return nil
}

// weekChange creates slots from the schedule form, closes a slot, or changes
// its capacity, through the same service calls as POST and PATCH /admin/slots.
func (c *Console) weekChange(w http.ResponseWriter, q *Request) error {
	back := url.Values{}
	if from := q.form.Get("from_page"); from != "" {
		if _, _, err := booking.DayBounds(from, q.loc()); err == nil {
			back.Set("from", from)
		}
	}
	fail := func(act string, err error) error {
		if booking.ErrorCode(err) == booking.EINTERNAL {
			return err
		}
		apigw.Logger(q.ctx).Info("console schedule change refused", "action", act, "err", err.Error())
		back.Set("fail", booking.ErrorCode(err))
		back.Set("act", act)
		fragment := ""
		if back.Has("slot") {
			fragment = "#slot-" + back.Get("slot")
		}
		Redirect(w, "week?"+back.Encode()+fragment)
		return nil
	}
	switch q.form.Get("do") {
	case "schedule":
		sched, err := scheduleOf(q.form)
		if err != nil {
			return fail("schedule", err)
		}
		created, skipped, err := q.d.Svc.CreateSchedule(q.ctx, sched)
		if err != nil {
			return fail("schedule", err)
		}
		back.Set("ok", "schedule")
		back.Set("created", strconv.Itoa(created))
		back.Set("skipped", strconv.Itoa(skipped))
		if !back.Has("from") {
			back.Set("from", sched.From)
		}
		Redirect(w, "week?"+back.Encode())
		return nil
	case "close", "reopen", "capacity":
		act := q.form.Get("do")
		id, err := strconv.ParseInt(q.form.Get("slot"), 10, 64)
		if err != nil || id <= 0 {
			return booking.Errorf(booking.EBADREQUEST, "console: slot id %q", q.form.Get("slot"))
		}
		back.Set("slot", strconv.FormatInt(id, 10))
		var u booking.SlotUpdate
		switch act {
		case "close", "reopen":
			open := act == "reopen"
			u.Open = &open
		default:
			n, err := strconv.Atoi(strings.TrimSpace(q.form.Get("capacity")))
			if err != nil {
				return fail(act, booking.Errorf(booking.EBADREQUEST, "console: capacity %q", q.form.Get("capacity")))
			}
			u.Capacity = &n
			back.Set("cap", strconv.Itoa(n))
		}
		if _, err := q.d.Svc.UpdateSlot(q.ctx, id, u); err != nil {
			return fail(act, err)
		}
		back.Set("ok", act)
		Redirect(w, "week?"+back.Encode()+"#slot-"+strconv.FormatInt(id, 10))
		return nil
	}
	return booking.Errorf(booking.EBADREQUEST, "console: unknown schedule action")
}

// scheduleOf reads the schedule form into the schedule of POST /admin/slots;
// the service validates it exactly as it validates the JSON body.
func scheduleOf(f url.Values) (booking.Schedule, error) {
	s := booking.Schedule{From: f.Get("from"), To: f.Get("to"), Open: f.Get("open"), Close: f.Get("close")}
	minutes, err1 := strconv.Atoi(strings.TrimSpace(f.Get("slotMinutes")))
	capacity, err2 := strconv.Atoi(strings.TrimSpace(f.Get("capacity")))
	fen, err3 := fenOf(f.Get("priceYuan"))
	if err1 != nil || err2 != nil || err3 != nil {
		return s, booking.Errorf(booking.EBADREQUEST, "console: schedule form numbers")
	}
	s.SlotMinutes, s.Capacity, s.PriceFen = &minutes, &capacity, &fen
	return s, nil
}

// fenOf reads an amount in yuan with at most two decimals ("50", "50.5",
// "50.05") exactly, without floating point.
func fenOf(yuan string) (int64, error) {
	yuan = strings.TrimSpace(yuan)
	whole, frac, hasFrac := strings.Cut(yuan, ".")
	if whole == "" || len(whole) > 7 || strings.TrimLeft(whole, "0123456789") != "" ||
		(hasFrac && (frac == "" || len(frac) > 2 || strings.TrimLeft(frac, "0123456789") != "")) {
		return 0, fmt.Errorf("not an amount in yuan")
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// weekFlash turns a schedule change's outcome back into words, for the slot it
// concerned as it is now.
func weekFlash(v url.Values, slots []booking.SlotView, loc *time.Location) *flash {
	slotID, _ := strconv.ParseInt(v.Get("slot"), 10, 64)
	var slot *booking.SlotView
	for i := range slots {
		if slots[i].ID == slotID {
			slot = &slots[i]
		}
	}
	name := fmt.Sprintf("时段 #%d", slotID)
	if slot != nil {
		name = "时段 " + dayAndTime(slot.StartAt, loc)
	}
	switch v.Get("ok") {
	case "schedule":
		created, _ := strconv.Atoi(v.Get("created"))
		skipped, _ := strconv.Atoi(v.Get("skipped"))
		return &flash{OK: true, Text: fmt.Sprintf("新建了 %d 个时段，跳过了 %d 个已有的时段。", created, skipped)}
	case "close":
		return &flash{OK: true, Text: name + " 已关闭，不再接受新的预约；已有的预约不受影响。"}
	case "reopen":
		return &flash{OK: true, Text: name + " 已重新开放预约；空位先给候补的顾客。"}
	case "capacity":
		n, _ := strconv.Atoi(v.Get("cap"))
		return &flash{OK: true, Text: fmt.Sprintf("%s 的容量已改为 %d。", name, n)}
	}
	code := v.Get("fail")
	if code == "" {
		return nil
	}
	switch act := v.Get("act"); {
	case act == "schedule" && code == booking.EBADREQUEST:
		return &flash{Text: "排班没有创建：请检查日期和时间。开始日期不能晚于结束日期，开门要早于打烊，一次最多 92 天，每个时段 5–720 分钟，容量 1–50，定金 0–10000 元（最多两位小数）。"}
	case act == "capacity" && code == booking.EINVALIDSTATE:
		booked := ""
		if slot != nil {
			booked = fmt.Sprintf("已有 %d 人预约，", slot.Booked)
		}
		return &flash{Text: fmt.Sprintf("%s 的容量没有修改：%s容量不能少于已预约的人数。", name, booked)}
	case act == "capacity" && code == booking.EBADREQUEST:
		return &flash{Text: fmt.Sprintf("%s 的容量没有修改：容量要在 %d–%d 之间。", name, booking.MinCapacity, booking.MaxCapacity)}
	case act == "close" || act == "reopen" || act == "capacity":
		return &flash{Text: fmt.Sprintf("%s 没有修改：%s", name, errorWord(code))}
	}
	return &flash{Text: "没有修改：" + errorWord(code)}
}

// ---- the audit trail

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
	recs, events, err := q.d.Svc.AuditTrail(q.ctx, day, day.AddDate(0, 0, 1), event, auditLimit)
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

// ---- health

type healthBody struct {
	// Headline is the page's first line (一切正常, or what needs doing), OK
	// whether nothing does.
	Headline      string
	OK            bool
	Unshipped     int // audit records not yet shipped to CLS, among the technical details
	Items         []healthItem
	RunCounts     []healthItem
	RunError      string
	RunStarted    string
	OpenRefunds   []bookingRow
	FailedRefunds []bookingRow
	Drift         []booking.SlotDrift
}

func (c *Console) health(w http.ResponseWriter, q *Request) error {
	h, err := q.d.Svc.Health(q.ctx)
	if err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	body := &healthBody{Items: healthItems(h, q.loc()), Drift: h.Drift}
	body.Headline, body.OK = healthHeadline(body.Items)
	body.Unshipped = h.UnshippedAudit
	if r := h.LastRun; r != nil {
		body.RunCounts = summaryCounts(r.Summary)
		body.RunError = r.Error
		body.RunStarted = clock(r.StartedAt, q.loc()) + "，用时 " + r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
	}
	for _, b := range h.OpenRefunds {
		body.OpenRefunds = append(body.OpenRefunds, q.row(b))
	}
	for _, b := range h.FailedRefunds {
		body.FailedRefunds = append(body.FailedRefunds, q.row(b))
	}
	render(w, http.StatusOK, "health", q.page("健康", "health", body))
	return nil
}

// summaryCounts lists the counts of a release run's summary: the known ones in
// the order of summaryWords, any others after them by name.
func summaryCounts(summary string) []healthItem {
	var counts map[string]any
	dec := json.NewDecoder(strings.NewReader(summary))
	dec.UseNumber()
	if err := dec.Decode(&counts); err != nil {
		return nil
	}
	var out []healthItem
	for _, w := range summaryWords {
		if n, ok := counts[w.Key]; ok {
			out = append(out, healthItem{Key: w.Key, Label: w.Word, Value: fmt.Sprint(n)})
			delete(counts, w.Key)
		}
	}
	rest := make([]string, 0, len(counts))
	for k := range counts {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, healthItem{Key: k, Label: k, Value: fmt.Sprint(counts[k])})
	}
	return out
}
