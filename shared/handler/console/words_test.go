package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/service"
)

// The money words come from one place, moneyOf, by the booking: a walk-in
// pays in the shop, a deposit paid comes back only with a refund, and a
// finished booking without one kept it.
func TestMoneyWords(t *testing.T) {
	paid := func(b booking.Booking) booking.Booking { b.TransactionID = "4200000001"; return b }
	refund := func(b booking.Booking, st booking.RefundStatus) booking.Booking {
		b.Refund = &booking.Refund{Status: st, AmountFen: b.AmountFen}
		return b
	}
	online := booking.Booking{OpenID: "oLin", AmountFen: 5000}
	walkIn := booking.Booking{CustomerID: 7}
	with := func(b booking.Booking, st booking.Status) booking.Booking { b.Status = st; return b }
	for _, c := range []struct {
		name                               string
		b                                  booking.Booking
		deposit, refund, cancel, outcome   string
		cancelNoteHas, noShowNoteHas, none string
	}{
		{name: "paid, confirmed", b: with(paid(online), booking.StatusConfirmed),
			deposit: "已付 ¥50.00", cancel: "取消并退款", cancelNoteHas: "¥50.00 将全额退回", noShowNoteHas: "定金 ¥50.00 不退"},
		{name: "unpaid, pending", b: with(online, booking.StatusPending),
			deposit: "未付 ¥50.00", cancel: "取消预约", cancelNoteHas: "还没有付款，不涉及退款", none: "全额退回"},
		{name: "walk-in, confirmed", b: with(walkIn, booking.StatusConfirmed),
			deposit: "到店付款", cancel: "取消预约", none: "定金"},
		{name: "walk-in, no-show", b: with(walkIn, booking.StatusNoShow),
			deposit: "到店付款", cancel: "取消预约", none: "定金"},
		{name: "free slot", b: with(booking.Booking{OpenID: "oFree"}, booking.StatusConfirmed),
			deposit: "免定金", cancel: "取消预约", none: "退"},
		{name: "late cancel: the deposit kept", b: with(paid(online), booking.StatusCancelled),
			deposit: "定金未退 ¥50.00", cancel: "取消预约", outcome: "定金未退 ¥50.00"},
		{name: "paid no-show", b: with(paid(online), booking.StatusNoShow),
			deposit: "定金未退 ¥50.00", cancel: "取消预约", outcome: "定金未退 ¥50.00"},
		{name: "cancelled, refund processing", b: with(refund(paid(online), booking.RefundProcessing), booking.StatusCancelled),
			deposit: "已付 ¥50.00", refund: "退款处理中 ¥50.00", cancel: "取消预约", outcome: "退款处理中 ¥50.00"},
		{name: "cancelled, refund pending", b: with(refund(paid(online), booking.RefundPending), booking.StatusCancelled),
			deposit: "已付 ¥50.00", refund: "退款处理中 ¥50.00", cancel: "取消预约", outcome: "退款处理中 ¥50.00"},
		{name: "cancelled, refunded", b: with(refund(paid(online), booking.RefundSucceeded), booking.StatusCancelled),
			deposit: "已付 ¥50.00", refund: "已退 ¥50.00", cancel: "取消预约", outcome: "已退 ¥50.00"},
		{name: "expired, paid late, refunded", b: with(refund(paid(online), booking.RefundSucceeded), booking.StatusExpired),
			deposit: "已付 ¥50.00", refund: "已退 ¥50.00", cancel: "取消预约", outcome: "已退 ¥50.00"},
		{name: "refund failed", b: with(refund(paid(online), booking.RefundFailed), booking.StatusCancelled),
			deposit: "已付 ¥50.00", refund: "退款失败 ¥50.00", cancel: "取消预约", outcome: "退款失败 ¥50.00"},
		{name: "unpaid, cancelled", b: with(online, booking.StatusCancelled),
			deposit: "未付 ¥50.00", cancel: "取消预约", none: "退"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := moneyOf(&c.b)
			if m.Deposit != c.deposit || m.Refund != c.refund || m.CancelLabel != c.cancel || m.Outcome != c.outcome {
				t.Errorf("moneyOf = %+v; want deposit %q refund %q cancel %q outcome %q", m, c.deposit, c.refund, c.cancel, c.outcome)
			}
			if !strings.Contains(m.CancelNote, c.cancelNoteHas) || !strings.Contains(m.NoShowNote, c.noShowNoteHas) {
				t.Errorf("notes %q / %q; want %q / %q in them", m.CancelNote, m.NoShowNote, c.cancelNoteHas, c.noShowNoteHas)
			}
			if c.cancelNoteHas == "" && m.CancelNote != "" || c.noShowNoteHas == "" && m.NoShowNote != "" {
				t.Errorf("notes %q / %q where nothing is refunded or kept", m.CancelNote, m.NoShowNote)
			}
			if c.none != "" {
				for _, w := range []string{m.CancelLabel, m.CancelNote, m.NoShowNote} {
					if strings.Contains(w, c.none) {
						t.Errorf("%q speaks of %q", w, c.none)
					}
				}
			}
		})
	}
}

// Each button's words follow the money: the cancel button is 取消并退款 only
// where a deposit goes back, and the questions name no deposit where none is.
func TestButtonWordsFollowTheMoney(t *testing.T) {
	ask := func(name string, b booking.Booking) (label, question string) {
		a, _ := actionNamed(name)
		label, question = a.Label, fmt.Sprintf(a.Confirm, "王女士（14:00）")
		if a.Money != nil {
			l, note := a.Money(moneyOf(&b))
			if l != "" {
				label = l
			}
			question += note
		}
		return label, question
	}
	walkIn := booking.Booking{CustomerID: 3, Status: booking.StatusConfirmed}
	paid := booking.Booking{OpenID: "o", AmountFen: 5000, TransactionID: "42", Status: booking.StatusConfirmed}
	for _, c := range []struct {
		action       string
		b            booking.Booking
		label, asked string
	}{
		{"checkin", walkIn, "签到", "确认 王女士（14:00）已到店签到？"},
		{"noshow", walkIn, "未到店", "确认 王女士（14:00）没有来？"},
		{"noshow", paid, "未到店", "确认 王女士（14:00）没有来？定金 ¥50.00 不退。"},
		{"cancel", walkIn, "取消预约", "确认取消 王女士（14:00）？"},
		{"cancel", paid, "取消并退款", "确认取消 王女士（14:00）？已付的定金 ¥50.00 将全额退回。"},
	} {
		if label, asked := ask(c.action, c.b); label != c.label || asked != c.asked {
			t.Errorf("%s of %+v: %q %q; want %q %q", c.action, c.b, label, asked, c.label, c.asked)
		}
	}
}

// The console's wording rules, one table each.
func TestWordingRules(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	t.Run("a moment is a day and a time", func(t *testing.T) {
		for in, want := range map[time.Time]string{
			time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC):  "12月3日 14:00",
			time.Date(2026, 1, 31, 16, 5, 0, 0, time.UTC): "2月1日 00:05",
		} {
			if got := dayAndTime(in, loc); got != want {
				t.Errorf("dayAndTime(%v) = %q, want %q", in, got, want)
			}
		}
	})
	t.Run("an audit reason names slots by their times", func(t *testing.T) {
		name := func(id int64) string {
			return map[int64]string{7: "12月3日 14:00", 50: "12月4日 10:00"}[id]
		}
		for in, want := range map[string]string{
			"门店改约：时段 7 -> 50": "门店改约：12月3日 14:00 → 12月4日 10:00",
			"顾客改约：时段 50 -> 7": "顾客改约：12月4日 10:00 → 12月3日 14:00",
			"容量 3 -> 5":       "容量 3 → 5",
			"late":            "late",
		} {
			if got := reasonByTimes(in, name); got != want {
				t.Errorf("reasonByTimes(%q) = %q, want %q", in, got, want)
			}
		}
	})
	t.Run("a WeChat Pay number is shown apart from the reason", func(t *testing.T) {
		for _, c := range []struct{ in, reason, ref string }{
			{"已付款 4200000001234567890", "已付款", "4200000001234567890"},
			{"退款处理中：50000000000000000001001796305076", "退款处理中", "50000000000000000001001796305076"},
			{"付款后取消，全额退款", "付款后取消，全额退款", ""},
			{"容量 3 → 5", "容量 3 → 5", ""},
		} {
			if reason, ref := reasonAndRef(c.in); reason != c.reason || ref != c.ref {
				t.Errorf("reasonAndRef(%q) = %q %q, want %q %q", c.in, reason, ref, c.reason, c.ref)
			}
		}
	})
	t.Run("an event is named in words, without its code", func(t *testing.T) {
		for e, w := range eventWords {
			if got := eventWord(e); got != w || strings.Contains(got, e) {
				t.Errorf("eventWord(%q) = %q", e, got)
			}
		}
		if got := eventWord("someday_event"); got != "someday_event" {
			t.Errorf("an unknown event shows as %q", got)
		}
	})
	t.Run("a refusal: the form's words, else the general ones, in one table", func(t *testing.T) {
		for _, c := range []struct{ where, code, want string }{
			{onDoor, booking.ENOTFOUND, "今天没有这个签到码的预约，请核对数字"},
			{"", booking.ENOTFOUND, "没有找到，可能已被删除或编号有误"},
			{onWalkIn, booking.ESOLDOUT, "这个时段已经满了"},
			{onDoor, booking.ESOLDOUT, "这个时段已经约满"},
			{onWalkIn, booking.EFORBIDDEN, "只有店主可以做这个操作，请店主操作"},
			{"", "NO_SUCH_CODE", "系统出错了，请刷新看看结果，稍后再试"},
		} {
			if got := refusalWord(c.where, c.code); got != c.want {
				t.Errorf("refusalWord(%q, %q) = %q, want %q", c.where, c.code, got, c.want)
			}
		}
	})
	t.Run("the week's cards name their values", func(t *testing.T) {
		v := booking.SlotView{Booked: 0, Waiting: 0}
		v.Capacity, v.PriceFen, v.Open = 3, 5000, true
		var card []string
		for _, f := range slotFacts {
			card = append(card, strings.TrimSpace(f.Card+" "+f.Value(&v)))
		}
		if got := strings.Join(card, " · "); got != "已约 0/3 · 定金 ¥50.00 · 不可预约 · 候补 0" {
			t.Errorf("the card reads %q", got)
		}
	})
	t.Run("the health page says what to do", func(t *testing.T) {
		now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
		ran := &booking.ReleaseRun{StartedAt: now.Add(-time.Minute), FinishedAt: now.Add(-time.Minute)}
		old := now.Add(-time.Hour)
		for _, c := range []struct {
			name     string
			h        service.Health
			headline string
			says     []string
		}{
			{"all well", service.Health{Now: now, LastRun: ran, CLSConfigured: true, MessagesConfigured: true},
				"一切正常，无需处理。", nil},
			{"a failed refund", service.Health{Now: now, LastRun: ran, CLSConfigured: true, MessagesConfigured: true, RefundsFailed: 2},
				"需要处理：没有完成的退款：2 笔", []string{"有 2 笔退款未完成：请在微信支付商户平台查看"}},
			{"audit not shipped: nothing to do", service.Health{Now: now, LastRun: ran, CLSConfigured: true, MessagesConfigured: true, UnshippedAudit: 4, OldestUnshipped: &old},
				"一切正常，无需处理。", []string{"审计记录暂未上传到腾讯云日志", "系统会自动重试，无需处理"}},
			{"the timer stopped", service.Health{Now: now, LastRun: &booking.ReleaseRun{FinishedAt: now.Add(-time.Hour)}, CLSConfigured: true, MessagesConfigured: true},
				"需要处理：", []string{"请联系技术人员"}},
		} {
			items := healthItems(&c.h, loc)
			headline, _ := healthHeadline(items)
			if !strings.HasPrefix(headline, c.headline) {
				t.Errorf("%s: headline %q, want %q", c.name, headline, c.headline)
			}
			var all strings.Builder
			for _, it := range items {
				fmt.Fprintf(&all, "%s %s %s\n", it.Label, it.Value, it.Note)
			}
			for _, w := range c.says {
				if !strings.Contains(all.String(), w) {
					t.Errorf("%s: the page does not say %q:\n%s", c.name, w, all.String())
				}
			}
			for _, jargon := range []string{"释放任务", "CLS", "对账", "审计记录只"} {
				if strings.Contains(headline+all.String(), jargon) {
					t.Errorf("%s: developer words %q on the salon's lines:\n%s", c.name, jargon, all.String())
				}
			}
		}
	})
}
