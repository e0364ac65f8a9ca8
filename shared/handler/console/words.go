package console

import (
	"context"
	"fmt"
	"strconv"
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
	Confirm string // asked before sending; %s is the booking (#id 10:00 …)
	Done    string // the outcome, after "预约 #id "
	Danger  bool   // shown in red
	// Action is what it is by the roles: the button is drawn only for a role
	// that may take it.
	Action booking.AdminAction
	Shown  func(s *service.Service, b *booking.Booking, now time.Time) bool
	Run    func(*service.Service, context.Context, int64) (*booking.Booking, error)
}

var bookingActions = []bookingAction{
	{Name: "checkin", Label: "签到", Confirm: "确认 %s 已到店签到？", Done: "已签到", Action: booking.ActionCheckIn, Run: (*service.Service).CheckIn,
		Shown: func(s *service.Service, b *booking.Booking, now time.Time) bool {
			return b.CanCheckIn(now, s.Policy.CheckinOpensBefore)
		}},
	{Name: "noshow", Label: "未到店", Confirm: "确认 %s 没有来？定金不退。", Done: "已标记为未到店（定金不退）", Action: booking.ActionNoShow, Run: (*service.Service).MarkNoShow,
		Shown: func(_ *service.Service, b *booking.Booking, now time.Time) bool { return b.CanMarkNoShow(now) }},
	{Name: "cancel", Label: "取消并退款", Confirm: "确认取消 %s？已付的定金将全额退回。", Done: "已取消（已付的定金全额退回，见退款状态）", Danger: true, Action: booking.ActionCancel, Run: (*service.Service).CancelBySalon,
		Shown: func(_ *service.Service, b *booking.Booking, _ time.Time) bool { return b.Status.Unfinished() }},
}

// moveAction names 改约 in the outcome of a move (its form is not a button of
// bookingActions: it carries the slot chosen).
var moveAction = bookingAction{Name: "move", Label: "改约", Action: booking.ActionReschedule, Done: "已改约（原来的座位已让给候补，顾客会收到通知）"}

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
		return at(b.CheckInOpens(q.d.Svc.Policy.CheckinOpensBefore)) + " 起可签到"
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
	booking.RefundPending:    "退款待发起",
	booking.RefundProcessing: "退款处理中",
	booking.RefundSucceeded:  "已退款",
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
}

func eventWord(e string) string {
	if w, ok := eventWords[e]; ok {
		return w + "（" + e + "）"
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

// errorWords say, for the salon, why a change did not happen. A code missing
// here gets the product's general message for it.
var errorWords = map[string]string{
	booking.ENOTFOUND:     "没有找到，可能已被删除或编号有误",
	booking.EINVALIDSTATE: "状态已经变了，不能这样操作；请看下面的最新状态",
	booking.EUPSTREAM:     "微信支付暂时连不上，这次没有改动，请稍后再试",
	booking.EBADREQUEST:   "填写的内容不正确",
	booking.EINTERNAL:     "系统出错了，请刷新看看结果，稍后再试",
	booking.ESOLDOUT:      "这个时段已经约满",
	booking.EFORBIDDEN:    "只有店主可以做这个操作",
}

func errorWord(code string) string {
	if w, ok := errorWords[code]; ok {
		return w
	}
	if msg := booking.Errorf(code, "").Message; msg != "" {
		return msg
	}
	return errorWords[booking.EINTERNAL]
}

// slotFact is one column of the week's schedule.
type slotFact struct {
	Label string
	Value func(v *booking.SlotView) string
}

var slotFacts = []slotFact{
	{"已约/容量", func(v *booking.SlotView) string { return fmt.Sprintf("%d/%d", v.Booked, v.Capacity) }},
	{"定金", func(v *booking.SlotView) string { return yuan(v.PriceFen) }},
	{"状态", slotStateWord},
	{"候补", func(v *booking.SlotView) string { return strconv.Itoa(v.Waiting) }},
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

// healthItem is one line of the health page.
type healthItem struct {
	Key   string // names the line for tests and scripts
	Label string
	Value string
	Bad   bool   // shown in red
	Note  string // a hint for the salon
}

func healthItems(h *service.Health, loc *time.Location) []healthItem {
	items := []healthItem{lastRunItem(h, loc)}
	backlog := healthItem{Key: "unshipped_audit", Label: "未上传的审计记录", Value: strconv.Itoa(h.UnshippedAudit)}
	if !h.CLSConfigured {
		backlog.Note = "未配置 CLS：审计记录只保存在数据库里"
	} else if h.OldestUnshipped != nil && h.Now.Sub(*h.OldestUnshipped) > 5*time.Minute {
		backlog.Bad = true
		backlog.Note = "最早一条写于 " + clock(*h.OldestUnshipped, loc) + "，CLS 可能连不上"
	}
	items = append(items,
		backlog,
		healthItem{Key: "refunds_open", Label: "退款处理中", Value: strconv.Itoa(h.RefundsOpen), Note: "已发起、微信尚未确认完成"},
		healthItem{Key: "refunds_failed", Label: "退款失败", Value: strconv.Itoa(h.RefundsFailed), Bad: h.RefundsFailed > 0, Note: "需要店里在微信支付商户平台处理"},
		healthItem{Key: "reconciliation", Label: "对账（时段计数与预约）", Value: driftWord(h), Bad: len(h.Drift) > 0},
		notificationItem(h),
	)
	return items
}

func notificationItem(h *service.Health) healthItem {
	it := healthItem{Key: "notifications_failing", Label: "发送失败的通知",
		Value: strconv.Itoa(h.NotificationsFailing + h.NotificationsFailed),
		Bad:   h.NotificationsFailing+h.NotificationsFailed > 0,
		Note: fmt.Sprintf("重试中 %d，24 小时后放弃 %d；顾客未订阅 %d（后两项为近 %d 天）", h.NotificationsFailing, h.NotificationsFailed, h.NotificationsRefused,
			int(booking.NotificationRetention/(24*time.Hour)))}
	if !h.MessagesConfigured {
		it.Note = "未配置微信小程序（WX_APPID）：通知只保存在数据库里"
	}
	return it
}

func lastRunItem(h *service.Health, loc *time.Location) healthItem {
	it := healthItem{Key: "last_release_run", Label: "最近一次释放任务"}
	r := h.LastRun
	switch {
	case r == nil:
		it.Value, it.Bad, it.Note = "还没有运行过", true, "定时任务每分钟运行一次"
	case r.Error != "":
		it.Value, it.Bad = clock(r.FinishedAt, loc)+" 失败", true
	default:
		it.Value = clock(r.FinishedAt, loc) + " 完成"
		if h.Now.Sub(r.FinishedAt) > 5*time.Minute {
			it.Bad, it.Note = true, "超过 5 分钟没有运行，请检查定时触发器"
		}
	}
	return it
}

func driftWord(h *service.Health) string {
	if len(h.Drift) == 0 {
		return "一致"
	}
	return strconv.Itoa(len(h.Drift)) + " 个时段不一致"
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
