package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"salon/shared/booking"
	"salon/shared/service"
)

// The console's words and its tables: what each booking action is called and
// does, what the schedule and the health page show. Each table is the one place
// to add a row when the product learns something new (the no-show button, the
// waitlist length, the notifications that fail): one line each.

// bookingAction is one button on a booking. The service decides whether the
// change is allowed; Shown asks the same rule (of package booking, at the
// database's time) so that a button appears only when it would be accepted.
type bookingAction struct {
	Name    string // the form's do=
	Label   string // the button
	Confirm string // asked before sending; %s is the customer and the time (王女士（14:00）)
	Done    string // the outcome, before the customer and the time
	Danger  bool   // shown in red
	// Money, when set, words the button and the question by what the change
	// does to the deposit (moneyOf): a label instead of Label ("" keeps it)
	// and a sentence after the question.
	Money func(m moneyWords) (label, note string)
	// Action is what it is by the roles: the button is drawn only for a role
	// that may take it.
	Action booking.AdminAction
	Shown  func(p booking.Policy, b *booking.Booking, now time.Time) bool
	Run    func(s *Services, ctx context.Context, id int64) (*booking.Booking, error)
}

var bookingActions = []bookingAction{
	{Name: "checkin", Label: "签到", Confirm: "确认 %s已到店签到？", Done: "已签到", Action: booking.ActionCheckIn,
		Run: func(s *Services, ctx context.Context, id int64) (*booking.Booking, error) {
			return s.Door.CheckIn(ctx, id)
		},
		Shown: func(p booking.Policy, b *booking.Booking, now time.Time) bool {
			return b.CanCheckIn(now, p.CheckinOpensBefore)
		}},
	{Name: "noshow", Label: "未到店", Confirm: "确认 %s没有来？", Done: "已标记为未到店", Action: booking.ActionNoShow,
		Run: func(s *Services, ctx context.Context, id int64) (*booking.Booking, error) {
			return s.Door.MarkNoShow(ctx, id)
		},
		Money: func(m moneyWords) (string, string) { return "", m.NoShowNote },
		Shown: func(_ booking.Policy, b *booking.Booking, now time.Time) bool { return b.CanMarkNoShow(now) }},
	// The salon's cancel: of a booking paid through WeChat it refunds (the
	// owner's), of any other there is nothing to refund (staff may too). The
	// service decides again by the booking as it finds it; moneyOf words both.
	salonCancel("cancel", "取消并退款", booking.ActionCancel),
	salonCancel("cancelunpaid", "取消预约", booking.ActionCancelUnpaid),
}

// salonCancel is the salon's cancel button of one kind: the one shown is the
// kind booking.CancelAction says the booking needs, so a role that may not
// refund never sees a cancel that would.
func salonCancel(name, label string, kind booking.AdminAction) bookingAction {
	return bookingAction{Name: name, Label: label, Confirm: "确认取消 %s？", Done: "已取消", Danger: true, Action: kind,
		Run: func(s *Services, ctx context.Context, id int64) (*booking.Booking, error) {
			return s.Cancels.CancelBySalon(ctx, id)
		},
		Money: func(m moneyWords) (string, string) { return m.CancelLabel, m.CancelNote },
		Shown: func(_ booking.Policy, b *booking.Booking, _ time.Time) bool {
			return b.Status.Unfinished() && booking.CancelAction(b) == kind
		}}
}

// moneyWords are what the console says about a booking's money, decided in one
// place (moneyOf) from the booking: paid or not, its refund, a walk-in.
type moneyWords struct {
	// Deposit is the booking's money line: 已付 ¥50.00, 未付 ¥50.00, 到店付款,
	// 免定金, or, once it is over, 定金未退 ¥50.00 (kept: a late cancel, a no-show).
	Deposit string
	// Refund is the refund's state and amount (已退 ¥50.00, 退款处理中 ¥50.00); "" without one.
	Refund string
	// CancelLabel is the cancel button: 取消并退款 only when a paid deposit
	// goes back; 取消预约 where nothing is refunded.
	CancelLabel, CancelNote string
	// NoShowNote follows the no-show question: the deposit kept, if there is one.
	NoShowNote string
	// Outcome is the money of a finished booking, told after a change
	// (定金未退 ¥50.00, 退款处理中 ¥50.00); "" when there is nothing to say.
	Outcome string
}

// moneyOf decides the money words of a booking. A walk-in or phone booking
// (no openid: the salon made it) is paid in the shop and has no deposit; a
// deposit is paid when WeChat Pay said so (booking.Paid); a paid deposit comes
// back only through a refund, so a finished booking without one kept it.
func moneyOf(b *booking.Booking) moneyWords {
	m := moneyWords{CancelLabel: "取消预约", Refund: refundWord(b.Refund)}
	amount := yuan(b.AmountFen)
	finished := b.Status == booking.StatusCancelled || b.Status == booking.StatusNoShow || b.Status == booking.StatusExpired
	switch {
	case b.OpenID == "" && b.AmountFen == 0:
		m.Deposit = "到店付款"
	case b.AmountFen == 0:
		m.Deposit = "免定金"
	case !b.Paid():
		m.Deposit = "未付 " + amount
		if b.Status == booking.StatusPending {
			m.CancelNote = "顾客还没有付款，不涉及退款。"
		}
	case b.Refund != nil:
		m.Deposit = "已付 " + amount
		m.Outcome = m.Refund
	case finished:
		m.Deposit = "定金未退 " + amount
		m.Outcome = m.Deposit
	default:
		m.Deposit = "已付 " + amount
		m.CancelLabel = "取消并退款"
		m.CancelNote = "已付的定金 " + amount + " 将全额退回。"
		m.NoShowNote = "定金 " + amount + " 不退。"
	}
	return m
}

// moveAction names 改约 in the outcome of a move (its form is not a button of
// bookingActions: it carries the slot chosen).
var moveAction = bookingAction{Name: "move", Label: "改约", Action: booking.ActionReschedule, Done: "已改约"}

func actionNamed(name string) (*bookingAction, bool) {
	if name == moveAction.Name {
		return &moveAction, true
	}
	for i := range bookingActions {
		if bookingActions[i].Name == name {
			return &bookingActions[i], true
		}
	}
	return nil, false
}

// refusedBecause says, by a booking's status, why a change of it is refused
// when the status is the reason ("这个预约" and these words, then what cannot
// be done); a status missing here says nothing more than the error's code.
var refusedBecause = map[booking.Status]string{
	booking.StatusPending:   "还没有付款",
	booking.StatusCompleted: "已经签到过了",
	booking.StatusCancelled: "已取消",
	booking.StatusExpired:   "没有付款，已过期",
	booking.StatusNoShow:    "已标记为未到店",
}

// refusedVerbs name what could not be done at the door, after "不能"; other
// changes refused by the status say the status changed, and to what.
var refusedVerbs = map[string]string{"checkin": "签到", "noshow": "标记未到店"}

// refusal words why action a on booking b was refused with code, by what b is
// now (read after the refusal): its status when that is the reason (a
// cancelled booking is not "already checked in"); too early, from when (with
// the date when that is not today); a move refused because the booking is no
// longer where the page showed it, where it is now. Otherwise the console's
// general words for the code.
func (q *Request) refusal(a *bookingAction, code string, b *booking.Booking) string {
	now, err := q.dbNow()
	if err != nil {
		return errorWord(code)
	}
	at := func(t time.Time) string {
		if booking.ShopDay(t, q.loc()) == booking.ShopDay(now, q.loc()) {
			return t.In(q.loc()).Format("15:04")
		}
		return t.In(q.loc()).Format("01-02 15:04")
	}
	switch {
	case code == booking.ETOOEARLY && b.Status == booking.StatusConfirmed && a.Name == "checkin":
		return at(b.CheckInOpens(q.policy().CheckinOpensBefore)) + " 起可签到"
	case code == booking.ETOOEARLY && b.Status == booking.StatusConfirmed && a.Name == "noshow":
		return "时段 " + at(b.StartAt) + " 开始后才能标记未到店"
	case code == booking.EINVALIDSTATE && b.Status == booking.StatusConfirmed && a.Name == "move":
		return "这个预约刚被改过，现在在 " + at(b.StartAt) + "；请看最新的时段再改"
	case code == booking.EINVALIDSTATE || code == booking.ETOOEARLY:
		why, ok := refusedBecause[b.Status]
		verb, atTheDoor := refusedVerbs[a.Name]
		switch {
		case !ok:
		case b.Status == booking.StatusCompleted && a.Name == "checkin":
			return "这个预约" + why
		case atTheDoor:
			return "这个预约" + why + "，不能" + verb
		default:
			return "状态已经变了：这个预约" + why
		}
	}
	return errorWord(code)
}

// statusWords names a booking's status for the salon; a status missing here is
// shown by its code name.
var statusWords = map[booking.Status]string{
	booking.StatusPending:   "待付款",
	booking.StatusConfirmed: "已确认",
	booking.StatusCompleted: "已签到",
	booking.StatusCancelled: "已取消",
	booking.StatusExpired:   "已过期",
	booking.StatusNoShow:    "未到店",
}

func statusWord(s booking.Status) string {
	if w, ok := statusWords[s]; ok {
		return w
	}
	return s.String()
}

func statusWordOf(code int) string {
	if code < 0 {
		return ""
	}
	return statusWord(booking.Status(code))
}

var refundWords = map[booking.RefundStatus]string{
	booking.RefundPending:    "退款处理中",
	booking.RefundProcessing: "退款处理中",
	booking.RefundSucceeded:  "已退",
	booking.RefundFailed:     "退款失败",
}

func refundWord(r *booking.Refund) string {
	if r == nil {
		return ""
	}
	w, ok := refundWords[r.Status]
	if !ok {
		w = string(r.Status)
	}
	return w + " " + yuan(r.AmountFen)
}

// eventWords names audit events; an event missing here is shown by its name.
var eventWords = map[string]string{
	booking.EventReserve:       "预约",
	booking.EventConfirm:       "付款确认",
	booking.EventLatePayment:   "逾期付款",
	booking.EventCheckIn:       "签到",
	booking.EventCancel:        "取消",
	booking.EventRelease:       "超时释放",
	booking.EventRefund:        "退款",
	booking.EventRejected:      "通知被拒",
	booking.EventDrift:         "计数不一致",
	booking.EventSlotChange:    "时段调整",
	booking.EventNoShow:        "未到店",
	booking.EventLateCancel:    "临近取消（定金不退）",
	booking.EventWaitlistOffer: "候补递补",
	booking.EventWalkIn:        "到店/电话登记",
	booking.EventReschedule:    "改约",
	booking.EventCheckout:      "结账（到店付款）",
}

// eventWord names an audit event in the salon's words; the code name is shown
// only for an event the console does not know yet.
func eventWord(e string) string {
	if w, ok := eventWords[e]; ok {
		return w
	}
	return e
}

var actorWords = map[string]string{
	booking.ActorCustomer: "顾客",
	booking.ActorSalon:    "店里",
	booking.ActorTimer:    "定时任务",
	booking.ActorWeChat:   "微信支付",
	booking.ActorSystem:   "系统",
	booking.ActorAdmin:    "店主",
}

func actorWord(a string) string {
	if w, ok := actorWords[a]; ok {
		return w
	}
	return a
}

// refusal names a refusal's words: the code, and the form it refused ("" for
// any form; onDoor, onWalkIn where the words depend on what was asked).
type refusal struct{ Where, Code string }

const (
	onDoor   = "door"   // the check-in by code
	onWalkIn = "walkin" // a walk-in or a phone booking
	onMenu   = "menu"   // the 项目 and 技师 pages
)

// errorWords say, for the salon, why a change did not happen: the one table of
// the console's refusals. A form's own entry comes first, then the general one
// (Where ""); a code missing here gets the product's general message for it.
var errorWords = map[refusal]string{
	{"", booking.ENOTFOUND}:     "没有找到，可能已被删除或编号有误",
	{"", booking.EINVALIDSTATE}: "状态已经变了，不能这样操作；请看下面的最新状态",
	{"", booking.EUPSTREAM}:     "微信支付暂时连不上，这次没有改动，请稍后再试",
	{"", booking.EBADREQUEST}:   "填写的内容不正确",
	{"", booking.EINTERNAL}:     "系统出错了，请刷新看看结果，稍后再试",
	{"", booking.ESOLDOUT}:      "这个时段已经约满",
	{"", booking.EFORBIDDEN}:    "只有店主可以做这个操作，请店主操作",

	{onDoor, booking.ENOTFOUND}:     "今天没有这个签到码的预约，请核对数字",
	{onDoor, booking.EBADREQUEST}:   "签到码是 8 位数字",
	{onDoor, booking.EINVALIDSTATE}: "这个预约现在不能签到",
	{onDoor, booking.ETOOEARLY}:     "还没到签到时间",

	{onWalkIn, booking.EBADREQUEST}:          "请填写顾客姓名（最多 20 字）；电话为 11 位数字，可以不填",
	{onWalkIn, booking.ESOLDOUT}:             "这个时段已经满了",
	{onWalkIn, booking.ESLOTNOTBOOKABLE}:     "这个时段现在不能登记（已结束或已停止预约）",
	{onWalkIn, booking.EACTIVEBOOKINGEXISTS}: "这位顾客已有一个未完成的预约",

	{onMenu, booking.EBADREQUEST}: "填写的内容不正确：名称不能为空，时长是排班格子的整数倍，定金不超过价格，日期和时间要完整",
	{onMenu, booking.ENOTFOUND}:   "没有找到这个项目、技师或账号，请刷新后再试",
}

// refusalWord says why a change was refused, in the words of the form that
// asked (where) when it has its own, else in the console's general words.
func refusalWord(where, code string) string {
	if w, ok := errorWords[refusal{where, code}]; ok {
		return w
	}
	if w, ok := errorWords[refusal{"", code}]; ok {
		return w
	}
	if msg := booking.Errorf(code, "").Message; msg != "" {
		return msg
	}
	return errorWords[refusal{"", booking.EINTERNAL}]
}

// errorWord says why a change was refused, in the console's general words.
func errorWord(code string) string { return refusalWord("", code) }

// slotFact is one column of the week's schedule. Label heads the column on a
// wide screen; Card names the value where the row is a card (a phone), "" for
// a value that says what it is (the state).
type slotFact struct {
	Label, Card string
	Value       func(v *booking.SlotView) string
}

var slotFacts = []slotFact{
	{"已约/容量", "已约", func(v *booking.SlotView) string { return fmt.Sprintf("%d/%d", v.Booked, v.Capacity) }},
	{"定金", "定金", func(v *booking.SlotView) string { return yuan(v.PriceFen) }},
	{"状态", "", slotStateWord},
	{"候补", "候补", func(v *booking.SlotView) string { return strconv.Itoa(v.Waiting) }},
}

func slotStateWord(v *booking.SlotView) string {
	switch {
	case !v.Open:
		return "已关闭"
	case v.Bookable:
		return "可预约"
	case v.Booked >= v.Capacity:
		return "已约满"
	}
	return "不可预约"
}

// healthItem is one line of the health page, in the salon's words: what is
// the matter and what to do, if anything. The technical terms (the release
// run, CLS, reconciliation) stay in the page's collapsed technical details.
type healthItem struct {
	Key   string // names the line for tests and scripts
	Label string
	Value string
	Count int  // the number the line is about (data-count), for tests and scripts
	Bad   bool // the salon (or its technician) should act: shown in red, and named at the top
	Note  string
}

func healthItems(h *service.Health, loc *time.Location) []healthItem {
	items := []healthItem{lastRunItem(h, loc)}
	backlog := healthItem{Key: "unshipped_audit", Label: "操作记录的云端备份", Count: h.UnshippedAudit, Value: "已备份"}
	switch {
	case !h.CLSConfigured:
		backlog.Value, backlog.Note = "只保存在本系统", "没有配置腾讯云日志，操作记录只保存在数据库里，无需处理"
	case h.UnshippedAudit > 0 && h.OldestUnshipped != nil && h.Now.Sub(*h.OldestUnshipped) > 5*time.Minute:
		backlog.Value = fmt.Sprintf("%d 条暂未上传", h.UnshippedAudit)
		backlog.Note = "审计记录暂未上传到腾讯云日志（最早一条写于 " + clock(*h.OldestUnshipped, loc) + "），系统会自动重试，无需处理"
	case h.UnshippedAudit > 0:
		backlog.Value, backlog.Note = fmt.Sprintf("%d 条正在上传", h.UnshippedAudit), "系统每分钟上传一次，无需处理"
	}
	open := healthItem{Key: "refunds_open", Label: "退款处理中", Count: h.RefundsOpen, Value: "没有"}
	if h.RefundsOpen > 0 {
		open.Value, open.Note = fmt.Sprintf("%d 笔", h.RefundsOpen), "微信支付正在处理，通常几分钟内到账，无需处理"
	}
	failed := healthItem{Key: "refunds_failed", Label: "没有完成的退款", Count: h.RefundsFailed, Value: "没有"}
	if h.RefundsFailed > 0 {
		failed.Value, failed.Bad = fmt.Sprintf("%d 笔", h.RefundsFailed), true
		failed.Note = fmt.Sprintf("有 %d 笔退款未完成：请在微信支付商户平台查看（预约列在下面）", h.RefundsFailed)
	}
	seats := healthItem{Key: "reconciliation", Label: "时段的已约人数", Count: len(h.Drift), Value: "正确"}
	if len(h.Drift) > 0 {
		seats.Value, seats.Bad = fmt.Sprintf("%d 个时段对不上", len(h.Drift)), true
		seats.Note = "这些时段显示的已约人数和实际预约不一致，或同一技师的时间格有重叠：请联系技术人员（时段列在下面的技术信息里）"
	}
	return append(items, backlog, open, failed, seats, notificationItem(h))
}

func notificationItem(h *service.Health) healthItem {
	n := h.NotificationsFailing + h.NotificationsFailed
	it := healthItem{Key: "notifications_failing", Label: "发给顾客的微信通知", Count: n, Value: "正常"}
	switch {
	case !h.MessagesConfigured:
		it.Value, it.Note = "没有开通", "没有配置微信小程序（WX_APPID），通知不会发出，只保存在系统里"
	case h.NotificationsFailed > 0:
		it.Value, it.Bad = fmt.Sprintf("%d 条没有发出", n), true
		it.Note = fmt.Sprintf("%d 条试了 24 小时仍没发出，顾客没有收到：需要时请电话联系顾客；%d 条还在重试", h.NotificationsFailed, h.NotificationsFailing)
	case h.NotificationsFailing > 0:
		it.Value, it.Note = fmt.Sprintf("%d 条正在重试", n), "系统会自动重发，无需处理"
	}
	if h.MessagesConfigured && h.NotificationsRefused > 0 {
		it.Note = strings.TrimPrefix(it.Note+fmt.Sprintf("；近 %d 天有 %d 位顾客没有订阅通知，收不到消息", int(booking.NotificationRetention/(24*time.Hour)), h.NotificationsRefused), "；")
	}
	return it
}

func lastRunItem(h *service.Health, loc *time.Location) healthItem {
	it := healthItem{Key: "last_release_run", Label: "自动处理（超时未付、提醒、退款）"}
	r := h.LastRun
	switch {
	case r == nil:
		it.Value, it.Bad, it.Note = "还没有运行过", true, "系统每分钟自动运行一次；刚部署时会这样，几分钟后仍如此请联系技术人员"
	case r.Error != "":
		it.Value, it.Bad, it.Note = clock(r.FinishedAt, loc)+" 出错", true, "请联系技术人员（出错的原因在下面的技术信息里）"
	default:
		it.Value = clock(r.FinishedAt, loc) + " 正常完成"
		if h.Now.Sub(r.FinishedAt) > 5*time.Minute {
			it.Bad, it.Note = true, "超过 5 分钟没有运行：请联系技术人员检查定时触发器"
		}
	}
	return it
}

// healthHeadline is the health page's first line: 一切正常, or what needs doing.
func healthHeadline(items []healthItem) (string, bool) {
	var todo []string
	for _, it := range items {
		if it.Bad {
			todo = append(todo, it.Label+"："+it.Value)
		}
	}
	if len(todo) == 0 {
		return "一切正常，无需处理。", true
	}
	return "需要处理：" + strings.Join(todo, "；"), false
}

// summaryWords names the counts of the release run's summary, in this order; a
// count missing here is shown by its JSON name after these.
var summaryWords = []struct{ Key, Word string }{
	{"released", "释放超时未付"},
	{"confirmed", "补确认付款"},
	{"refunded", "发起退款"},
	{"audited", "上传审计"},
	{"noShows", "标记未到店"},
	{"refundsSettled", "查询结清退款"},
	{"notified", "发送通知"},
	{"auditDeleted", "清理已上传审计"},
	{"notificationsDeleted", "清理旧通知"},
	{"signinsDeleted", "清理旧登录记录"},
}

func yuan(fen int64) string {
	sign := ""
	if fen < 0 {
		sign, fen = "-", -fen
	}
	return fmt.Sprintf("%s¥%d.%02d", sign, fen/100, fen%100)
}

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("01-02 15:04:05") }

var weekdays = [...]string{"周日", "周一", "周二", "周三", "周四", "周五", "周六"}
