package handler

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/mysql/mysqltest"
)

// salonWhen is how the console names a moment: 12月3日 14:00, in the shop's zone.
func salonWhen(t time.Time) string {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	t = t.In(loc)
	return fmt.Sprintf("%d月%d日 %s", t.Month(), t.Day(), t.Format("15:04"))
}

// salonStart is how a console question names a booking's start: the time
// alone for a booking of today (shop time), the day too for another (a slot an
// hour or two ahead falls on tomorrow late in the evening).
func salonStart(t time.Time) string {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	if t.In(loc).Format(time.DateOnly) == time.Now().In(loc).Format(time.DateOnly) {
		return t.In(loc).Format("15:04")
	}
	return salonWhen(t)
}

// pastSlot moves a slot into today's past: it started startedAgo and ended endedAgo.
func (s *system) pastSlot(slot int64, startedAgo, endedAgo time.Duration) {
	s.t.Helper()
	if _, err := s.store.SQL().Exec(`UPDATE t_slot SET start_at = UTC_TIMESTAMP() - INTERVAL ? SECOND, end_at = UTC_TIMESTAMP() - INTERVAL ? SECOND WHERE slot_id = ?`,
		int64(startedAgo.Seconds()), int64(endedAgo.Seconds()), slot); err != nil {
		s.t.Fatal(err)
	}
}

// TestConsoleAtTheCounterInABrowser is the console at 390 px as the owner sees
// it at the counter: every tab in sight, the day opening at the slot under way,
// the customer's name and time instead of numbers, money words that say what
// happens to the deposit, 签到 and 未到店 drawn apart, a change coming back to
// its row, the week's cards with their labels, and 查预约 by phone and by name.
func TestConsoleAtTheCounterInABrowser(t *testing.T) {
	s := newSystem(t)
	loc := shanghai(t)
	now := time.Now().In(loc)
	// A morning of slots that have ended, one under way, one later.
	if now.Hour() < 9 || now.Add(2*time.Hour).Day() != now.Day() {
		t.Skip("the day's past slots and the slot under way need the shop's day between 09:00 and 22:00")
	}
	var past []int64
	for i := range 6 {
		sl := s.slot(time.Duration(40+i)*time.Hour, 3, 5000)
		s.pastSlot(sl, time.Duration(8*60-i*60)*time.Minute, time.Duration(7*60-i*60+15)*time.Minute)
		past = append(past, sl)
	}
	current := s.slot(47*time.Hour, 3, 5000)
	later := s.slot(90*time.Minute, 3, 5000)

	// 林小姐 paid her deposit and is due now; 王女士 and 王芳 came to the counter.
	paid := s.paidBooking("oLin-000001", current)
	if a := s.call("PUT", "/me", s.token("oLin-000001"), map[string]any{"name": "林小姐"}); a.Status != http.StatusOK {
		t.Fatalf("name: %d %s", a.Status, a.Body)
	}
	walkIn := func(slot int64, name, phone string) int64 {
		a := s.call("POST", "/admin/bookings", testAdmin, map[string]any{"slotId": slot, "name": name, "phone": phone})
		if a.Status != http.StatusCreated {
			t.Fatalf("walk-in: %d %s", a.Status, a.Body)
		}
		return int64(obj(t, a.JSON["booking"])["bookingId"].(float64))
	}
	wang := walkIn(current, "王女士", "13912345678")
	fang := walkIn(later, "王芳", "13700001111")
	mysqltest.SlotStarts(t, s.store, current, 10*time.Minute)
	day := s.day(current)
	if s.day(past[0]) != day || s.day(later) != day {
		t.Skip("the slots fall on two shop days")
	}

	b := newBrowser(t, s)
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}

	// Every tab is in sight at 390 px, the last one (员工) too: nothing cut off
	// at the right edge, and a tap on it reaches it.
	visible := eval[bool](b, `(() => {
		const a = Array.from(document.querySelectorAll(".top nav a")).pop();
		const r = a.getBoundingClientRect();
		const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		return a.textContent === "员工" && r.left >= 0 && r.right <= window.innerWidth && r.width > 0 && hit === a;
	})()`)
	if !visible || eval[int](b, `window.innerWidth`) != 390 {
		t.Fatalf("the 员工 tab is not in sight at %d px", eval[int](b, `window.innerWidth`))
	}
	// The day's title keeps its date on one line.
	if lines := eval[int](b, `(() => { const d = document.querySelector(".daybar h1 .date"); return d.getClientRects().length; })()`); lines != 1 {
		t.Errorf("the date of the day's title is broken over %d lines", lines)
	}

	// Today opens at the slot under way, not at the morning's ended slots.
	top := eval[float64](b, fmt.Sprintf(`document.getElementById("slot-%d").getBoundingClientRect().top`, current))
	if eval[float64](b, `window.scrollY`) <= 0 || top < 0 || top > 200 || b.count(fmt.Sprintf("#slot-%d[data-now]", current)) != 1 {
		t.Fatalf("today did not open at the slot under way: scrolled %v, its top at %v", eval[float64](b, `window.scrollY`), top)
	}

	// People, times and money words, not numbers: the walk-in is cancelled
	// without a refund and her no-show keeps no deposit; 林小姐's cancel is a refund.
	if got := b.text(fmt.Sprintf("#bk-%d button.cancelunpaid", wang)); got != "取消预约" {
		t.Errorf("a walk-in's cancel says %q", got)
	}
	if got := b.text(fmt.Sprintf("#bk-%d button.cancel", paid)); got != "取消并退款" {
		t.Errorf("a paid booking's cancel says %q", got)
	}
	hhmm := s.slotStart(current).In(loc).Format("15:04")
	if got := b.attr(fmt.Sprintf("#bk-%d button.noshow", wang), "class"); got == "" {
		t.Fatal("the walk-in offers no 未到店")
	}
	if q := b.attr(fmt.Sprintf("#bk-%d form.act:has(button.noshow)", wang), "data-confirm"); q != "确认 王女士（"+hhmm+"）没有来？" {
		t.Errorf("a walk-in's no-show asks %q", q)
	}
	if q := b.attr(fmt.Sprintf("#bk-%d form.act:has(button.checkin)", wang), "data-confirm"); q != "确认 王女士（"+hhmm+"）已到店签到？" {
		t.Errorf("the check-in asks %q", q)
	}
	if q := b.attr(fmt.Sprintf("#bk-%d form.act:has(button.noshow)", paid), "data-confirm"); !strings.Contains(q, "定金 ¥50.00 不退") {
		t.Errorf("a paid no-show asks %q", q)
	}
	// 签到 and 未到店 side by side do not look alike.
	style := func(sel string) string {
		return eval[string](b, `(() => { const s = getComputedStyle(document.querySelector(`+jsString(sel)+`)); return [s.backgroundColor, s.color, s.borderStyle].join(" "); })()`)
	}
	if in, out := style(fmt.Sprintf("#bk-%d button.checkin", wang)), style(fmt.Sprintf("#bk-%d button.noshow", wang)); in == out {
		t.Errorf("签到 and 未到店 have the same style: %s", in)
	}
	b.shot("counter-today")

	// A change comes back to its row, in sight, and says whom it was for.
	if st := b.submit(fmt.Sprintf("#bk-%d button.checkin", wang)); st != http.StatusOK {
		t.Fatalf("check-in: %d", st)
	}
	if hash := eval[string](b, `location.hash`); hash != fmt.Sprintf("#bk-%d", wang) {
		t.Fatalf("after the check-in the page is at %q", hash)
	}
	rowTop := eval[float64](b, fmt.Sprintf(`document.getElementById("bk-%d").getBoundingClientRect().top`, wang))
	if rowTop < 0 || rowTop > float64(eval[int](b, `window.innerHeight`)) || eval[float64](b, `window.scrollY`) <= 0 {
		t.Errorf("the row acted on is not in sight: its top at %v", rowTop)
	}
	if msg := b.text("#flash"); msg != "已签到：王女士 "+salonWhen(s.slotStart(current)) {
		t.Errorf("the check-in says %q", msg)
	}
	// A paid no-show says the deposit was kept.
	if st := b.submit(fmt.Sprintf("#bk-%d button.noshow", paid)); st != http.StatusOK {
		t.Fatalf("no-show: %d", st)
	}
	if msg := b.text("#flash"); msg != "已标记为未到店：林小姐 "+salonWhen(s.slotStart(current))+" · 定金未退 ¥50.00" {
		t.Errorf("the no-show says %q", msg)
	}
	if got := b.text(fmt.Sprintf("#bk-%d .paid", paid)); got != "定金未退 ¥50.00" {
		t.Errorf("a no-show's deposit shows %q", got)
	}

	// The week's cards name their values.
	if st := b.open("week?from=" + day); st != http.StatusOK {
		t.Fatalf("week: %d", st)
	}
	card := eval[string](b, fmt.Sprintf(`document.getElementById("slot-%d").innerText`, later))
	for _, want := range []string{"已约 1/3", "定金 ¥50.00", "候补 0"} {
		if !strings.Contains(card, want) {
			t.Errorf("the week's card %q lacks %q", card, want)
		}
	}
	if lines := eval[int](b, `document.querySelector(".daybar h1 .date").getClientRects().length`); lines != 1 {
		t.Errorf("the week's title breaks a date over %d lines", lines)
	}
	b.shot("counter-week")

	// 查预约 by phone, in full and its last four digits, and by name.
	for _, q := range []string{"13912345678", "5678", "王女"} {
		b.open("booking")
		b.setValue(`#lookup input[name="q"]`, q)
		if st := b.submit(`#lookup button`); st != http.StatusOK {
			t.Fatalf("search %s: %d", q, st)
		}
		if got := b.text("#booking h1"); !strings.HasPrefix(got, "王女士 "+salonWhen(s.slotStart(current))) {
			t.Errorf("search %s shows %q", q, got)
		}
	}
	b.open("booking?q=" + "王")
	got := eval[[]string](b, `Array.from(document.querySelectorAll("#matches li")).map(li => li.dataset.booking)`)
	if want := []string{itoa64(fang), itoa64(wang)}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("search 王 lists %v, want %v (newest first)", got, want)
	}
	b.shot("counter-search")
	if st := b.open("booking?q=" + "赵"); st != http.StatusNotFound || !strings.Contains(b.text("#flash"), "没有找到") {
		t.Errorf("a name nobody has: %d %q", st, b.text("#flash"))
	}

	// A move in the audit trail says the two slots' times, and events are in words.
	other := s.slot(30*time.Hour, 3, 5000)
	if a := s.call("POST", fmt.Sprintf("/admin/bookings/%d/reschedule", fang), testAdmin, map[string]any{"slotId": other}); a.Status != http.StatusOK {
		t.Fatalf("move: %d %s", a.Status, a.Body)
	}
	b.open("audit?date=" + time.Now().In(loc).Format(time.DateOnly) + "&event=reschedule")
	if got, want := b.text("#trail tbody tr .reason"), "门店改约："+salonWhen(s.slotStart(later))+" → "+salonWhen(s.slotStart(other)); got != want {
		t.Errorf("the move's reason reads %q, want %q", got, want)
	}
	if got := b.text("#trail tbody tr td:nth-child(2)"); got != "改约" {
		t.Errorf("the move's event reads %q", got)
	}

	// One booking: the name and time in the headline, the numbers folded away.
	if st := b.open("booking?id=" + itoa64(paid)); st != http.StatusOK {
		t.Fatalf("booking: %d", st)
	}
	if eval[bool](b, `document.getElementById("tech").open`) || !strings.HasPrefix(b.text("#booking h1"), "林小姐 ") {
		t.Errorf("the booking's headline %q, its numbers open", b.text("#booking h1"))
	}
}
