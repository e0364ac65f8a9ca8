package console

// The day's page (今天, and any other day): its bookings slot by slot with their
// actions, and the rows, times and outcomes the other pages draw the same way.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"salon/shared/booking"
)

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
	// Calendar is the day by technician, nil when the salon has none.
	Calendar *calendar
	// Takings is the money that moved that day so far, the owner's (nil for
	// staff).
	Takings *takingsLine
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
	slots, err := q.s.Timetable.Schedule(q.ctx, from, to)
	if err != nil {
		return err
	}
	bs, err := q.s.Reads.DayBookings(q.ctx, from, to)
	if err != nil {
		return err
	}
	if err := q.s.Reads.WithCustomers(q.ctx, bs...); err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	by, err := q.s.Reads.LastPersonChanges(q.ctx, bs)
	if err != nil {
		return err
	}
	body := &todayBody{Date: day.Format(time.DateOnly), Weekday: weekdays[day.Weekday()],
		Prev: from.AddDate(0, 0, -1).Format(time.DateOnly), Next: to.Format(time.DateOnly),
		IsToday: day.Equal(c.shopDay(q))}
	if body.Takings, err = q.dayTakings(day); err != nil {
		return err
	}
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
	if q.s.Menu != nil {
		walk := calWalkInAsked(q.r.URL.Query())
		if refused != nil {
			walk = refused.Cal
		}
		if !q.may(booking.ActionWalkIn) {
			walk = nil
		}
		if body.Calendar, err = q.calendar(day, bs, walk); err != nil {
			return err
		}
	}
	for i := range slots {
		v := slots[i]
		if body.IsToday && body.Now == 0 && i > 0 && v.EndAt.After(q.now) && !slots[0].EndAt.After(q.now) {
			body.Now = v.ID
		}
		block := slotBlock{View: v, Time: span(v.StartAt, v.EndAt, q.loc()),
			State: slotStateWord(&v), Bookings: bySlot[v.ID],
			WalkIn: q.may(booking.ActionWalkIn) && v.OpenForWalkIn(q.now, q.policy().BookingWindowDays) && v.Booked < v.Capacity}
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
		if q.may(a.Action) && a.Shown(q.policy(), b, q.now) {
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
	b, err := q.s.Reads.Booking(q.ctx, id)
	if err != nil || q.s.Reads.WithCustomers(q.ctx, b) != nil {
		return nil
	}
	return b
}
