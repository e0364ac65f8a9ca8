package console

// One booking: found by its number, order number, phone or name; its history and its actions.

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
)

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
	// Ledger is the booking's money as the ledger records it (收款记录), and
	// Checkout the checkout form when the booking can be checked out.
	Ledger   []moneyRow
	Checkout *checkoutForm
}

// moneyRow is one row of a booking's ledger in words.
type moneyRow struct {
	M                        booking.Money
	At, Kind, Amount, Method string
	Actor, Ref               string
}

// checkoutForm is the checkout of a completed booking not checked out yet:
// the amount suggested (its price less the deposit paid online) and the ways
// to pay.
type checkoutForm struct {
	Yuan    string
	Methods []methodChoice
}

type methodChoice struct {
	Value, Label string
}

// moneyKindWords and moneyMethodWords say the ledger's kinds and methods.
var (
	moneyKindWords = map[booking.MoneyKind]string{
		booking.MoneyDeposit: "定金", booking.MoneyBalance: "到店付款", booking.MoneyRefund: "退款", booking.MoneyKept: "定金不退",
	}
	moneyMethodWords = map[booking.MoneyMethod]string{
		booking.MethodWeChatPay: "微信支付（线上）", booking.MethodWeChat: "微信", booking.MethodAlipay: "支付宝",
		booking.MethodCash: "现金", booking.MethodCard: "刷卡",
	}
)

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
		bs, err := q.s.Reads.SearchBookings(q.ctx, search, maxMatches)
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
	b, trail, err := q.s.Reads.BookingWithHistory(q.ctx, id)
	if booking.IsCode(err, booking.ENOTFOUND) {
		p.Flash = &flash{Text: fmt.Sprintf("没有找到预约 %s。", cmp.Or(text, strconv.FormatInt(id, 10)))}
		render(w, http.StatusNotFound, "booking", p)
		return nil
	}
	if err != nil {
		return err
	}
	if err := q.s.Reads.WithCustomers(q.ctx, b); err != nil {
		return err
	}
	p.Flash = q.bookingFlash(v, []*booking.Booking{b})
	if f := checkoutFlash(v.Get("checkout")); f != nil {
		p.Flash = f
	}
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
	if err := q.ledger(body, b); err != nil {
		return err
	}
	p.Title = row.Who + " " + row.When
	render(w, http.StatusOK, "booking", p)
	return nil
}

// ledger fills in the booking's ledger rows and, for a completed booking not
// checked out yet and a person who may check out, the checkout form.
func (q *Request) ledger(body *bookingBody, b *booking.Booking) error {
	rows, err := q.s.Reads.BookingLedger(q.ctx, b.ID)
	if err != nil {
		return err
	}
	checkedOut := false
	for _, m := range rows {
		label := moneyKindWords[m.Kind]
		if m.Kind == booking.MoneyKept && m.AmountFen < 0 {
			label = "补签到，定金转为已到店"
		}
		body.Ledger = append(body.Ledger, moneyRow{M: m, At: clock(m.CreatedAt, q.loc()), Kind: label, Amount: yuan(m.AmountFen),
			Method: moneyMethodWords[m.Method], Actor: q.actorName(m.Actor), Ref: cmp.Or(m.RefundID, m.TransactionID)})
		checkedOut = checkedOut || m.Kind == booking.MoneyBalance
	}
	if b.Status == booking.StatusCompleted && !checkedOut && q.may(booking.ActionCheckout) {
		f := &checkoutForm{Yuan: yuanField(b.BalanceDue())}
		for _, m := range booking.CounterMethods {
			f.Methods = append(f.Methods, methodChoice{Value: string(m), Label: moneyMethodWords[m]})
		}
		body.Checkout = f
	}
	return nil
}

// checkoutChange records what the customer paid in the shop, as POST
// /admin/bookings/{id}/checkout does, and answers with the booking's page and
// the outcome in words.
func (c *Console) checkoutChange(w http.ResponseWriter, q *Request) error {
	id, err := strconv.ParseInt(q.form.Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return booking.Errorf(booking.EBADREQUEST, "console: booking id %q", q.form.Get("id"))
	}
	apigw.SetBookingID(q.ctx, id)
	outcome := url.Values{"id": {strconv.FormatInt(id, 10)}}
	fen, err := fenOf(q.form.Get("yuan"))
	if err == nil {
		_, err = q.s.Door.Checkout(q.ctx, id, booking.Checkout{AmountFen: fen, Method: booking.MoneyMethod(q.form.Get("method"))})
	} else {
		err = booking.Errorf(booking.EBADREQUEST, "console: checkout amount %q", q.form.Get("yuan"))
	}
	if err != nil {
		code := booking.ErrorCode(err)
		if code == booking.EINTERNAL {
			apigw.Logger(q.ctx).Error("console checkout", "err", err.Error())
		} else {
			apigw.Logger(q.ctx).Info("console checkout refused", "err", err.Error())
		}
		outcome.Set("checkout", code)
	} else {
		outcome.Set("checkout", "ok")
	}
	Redirect(w, "booking?"+outcome.Encode()+"#money")
	return nil
}

// checkoutFlash says a checkout's outcome.
func checkoutFlash(code string) *flash {
	switch code {
	case "":
		return nil
	case "ok":
		return &flash{OK: true, Text: "已记录到店付款。"}
	case booking.EBADREQUEST:
		return &flash{Text: "到店付款没有记录：请填写金额（元，最多两位小数，不超过 10000）并选择付款方式。"}
	case booking.EINVALIDSTATE:
		return &flash{Text: "到店付款没有记录：只有已签到的预约可以结账，且每个预约只能结账一次。"}
	}
	return &flash{Text: "到店付款没有记录：" + errorWord(code)}
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
	starts, err := q.s.Reads.SlotStarts(q.ctx, ids)
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
	if _, err := a.Run(q.s, q.ctx, id); err != nil {
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
