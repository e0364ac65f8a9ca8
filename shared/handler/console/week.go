package console

// The week: its slots, the schedule form and the slots' changes.

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
	slots, err := q.s.Timetable.ScheduleWithWaitlists(q.ctx, from, to)
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
		created, skipped, err := q.s.Timetable.CreateSchedule(q.ctx, sched)
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
		if _, err := q.s.Timetable.UpdateSlot(q.ctx, id, u); err != nil {
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
