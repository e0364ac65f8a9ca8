package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/mysql/mysqltest"
)

// The console in a real browser: headless Chromium (Debian's chromium, which
// scripts/test.sh installs when it is missing) drives the admin function behind
// the local gateway over a real database. Everything a page shows is checked
// against the database or the JSON API; every change is made by clicking.
//
// With CONSOLE_SCREENSHOTS=dir the tests also write a screenshot of every page
// at phone and desktop width into dir (the README's pictures come from there).

// browserRequired says whether a missing Chromium fails the test rather than
// skipping it: in CI, and whenever scripts/test.sh runs the suite.
func browserRequired() bool {
	return os.Getenv("CI") != "" || os.Getenv("CONSOLE_BROWSER") == "required"
}

func chromiumPath() string {
	if p := os.Getenv("SALON_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the console's URL, ending in /admin/

	mu      sync.Mutex
	dialogs []string // "confirm: text" of every dialog the pages opened
	dismiss atomic.Bool
}

func newBrowser(t *testing.T, s *system) *browser {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if browserRequired() {
			t.Fatal("chromium is not installed and the browser tests must run (scripts/test.sh installs it: apt-get install chromium)")
		}
		t.Skip("chromium is not installed; scripts/test.sh installs it and runs these tests")
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Without it a page taller than the window loses 15 pixels of width to
		// the scrollbar, and full-page screenshots cut off the right edge.
		chromedp.Flag("hide-scrollbars", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(390, 844),
	)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	b := &browser{t: t, ctx: ctx, base: s.gw.URL + "/admin/"}
	// Every confirm() the console asks is answered here: yes, unless a test
	// wants the salon to say no. alert() is recorded too: an injected script
	// that ran would show up as one.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: !b.dismiss.Load()})
		}
	}()
	if err := chromedp.Do(b.timed(), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	return b
}

// timed bounds one step, so a page that never shows what a test waits for
// fails the test instead of hanging it.
func (b *browser) timed() context.Context {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	b.t.Cleanup(cancel)
	return ctx
}

// open navigates to a console page (relative to /admin/) and answers its status.
func (b *browser) open(rel string) int {
	b.t.Helper()
	resp, err := chromedp.Run(b.timed(), chromedp.NavigateResponse(b.base+rel))
	if err != nil {
		b.t.Fatalf("open %s: %v", rel, err)
	}
	return int(resp.Status)
}

// submit clicks a button that sends a form and waits for the page that answers.
// The button is brought to the middle of the screen first, as a person would
// scroll to it: a page that came back to a row (#bk-17) may have the one to
// click under the sticky top bar, where a click lands on the bar.
func (b *browser) submit(sel string) int {
	b.t.Helper()
	eval[bool](b, `(document.querySelector(`+jsString(sel)+`) || {scrollIntoView() {}}).scrollIntoView({block: "center"}), true`)
	resp, err := chromedp.RunResponse(b.timed(), chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
	return int(resp.Status)
}

// eval runs a JavaScript expression in the page.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.timed(), chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func jsString(s string) string { j, _ := json.Marshal(s); return string(j) }

// text is the text of the first element matching sel, "" when there is none.
func (b *browser) text(sel string) string {
	return strings.TrimSpace(eval[string](b, `(document.querySelector(`+jsString(sel)+`) || {}).textContent || ""`))
}

func (b *browser) attr(sel, name string) string {
	return eval[string](b, `((document.querySelector(`+jsString(sel)+`) || {getAttribute: () => ""}).getAttribute(`+jsString(name)+`)) || ""`)
}

func (b *browser) count(sel string) int {
	return eval[int](b, `document.querySelectorAll(`+jsString(sel)+`).length`)
}

func (b *browser) setValue(sel, v string) {
	b.t.Helper()
	if err := chromedp.Do(b.timed(), chromedp.SetValue(chromedp.CSS(sel), v)); err != nil {
		b.t.Fatalf("set %s: %v", sel, err)
	}
}

func (b *browser) dialogsSeen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.dialogs)
}

// signIn signs in through the sign-in page as the built-in owner, with token
// as her password.
func (b *browser) signIn(token string) int {
	b.t.Helper()
	return b.signInAs("admin", token)
}

// signInAs signs in through the sign-in page by name and password.
func (b *browser) signInAs(name, password string) int {
	b.t.Helper()
	if st := b.open("login"); st != http.StatusOK {
		b.t.Fatalf("sign-in page: %d", st)
	}
	b.setValue(`input[name="name"]`, name)
	b.setValue(`input[name="password"]`, password)
	return b.submit(`#login button`)
}

// shot writes the current page at phone and desktop width into
// $CONSOLE_SCREENSHOTS, when it is set.
func (b *browser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		if err := chromedp.Do(b.timed(), chromedp.EmulateViewport(size.w, size.h)); err != nil {
			b.t.Fatal(err)
		}
		png, err := chromedp.Run(b.timed(), chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.name+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := chromedp.Do(b.timed(), chromedp.EmulateViewport(390, 844)); err != nil {
		b.t.Fatal(err)
	}
}

// adminBookings reads a day's bookings through the JSON admin API.
func (s *system) adminBookings(day string) map[int64]map[string]any {
	s.t.Helper()
	a := s.call("GET", "/admin/bookings?date="+day, testAdmin, nil)
	if a.Status != http.StatusOK {
		s.t.Fatalf("GET /admin/bookings: %d %s", a.Status, a.Body)
	}
	out := map[int64]map[string]any{}
	for _, v := range a.JSON["bookings"].([]any) {
		b := v.(map[string]any)
		out[int64(b["bookingId"].(float64))] = b
	}
	return out
}

func TestConsoleInABrowser(t *testing.T) {
	s := newSystem(t)
	b := newBrowser(t, s)
	loc := shanghai(t)

	// The day at the door: two slots a little later today (or tomorrow, near
	// midnight), four customers in the states a salon sees.
	paidSlot := s.slot(time.Hour, 4, 5000)
	freeSlot := s.slot(time.Hour+30*time.Minute, 2, 0)
	day := s.slotStart(paidSlot).In(loc).Format(time.DateOnly)
	alice, _ := s.reserve("oAlice-0001", paidSlot)
	bob, _ := s.reserve("oBob-00002", paidSlot)
	carol, _ := s.reserve("oCarol-003", freeSlot)
	dave, _ := s.reserve("oDave-0004", paidSlot)
	erin, _ := s.reserve("oErin-0005", paidSlot)
	if alice == 0 || bob == 0 || carol == 0 || dave == 0 || erin == 0 {
		t.Fatal("reservations failed")
	}
	s.payFor(alice)
	s.payFor(bob)
	s.payFor(erin)
	if s.day(freeSlot) != day {
		t.Skip("the two slots fall on two days (the test runs just before midnight in the shop)")
	}

	// Sign in: a wrong token first, refused without a reason and without a cookie.
	if st := b.signIn("wrong-token"); st != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", st)
	}
	if msg := b.text("#flash"); msg != "登录失败：名字或密码不对，或账号已停用。" {
		t.Fatalf("wrong token message %q", msg)
	}
	b.shot("login")
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}

	// Today's list matches the database: every booking of the day, with its status.
	if st := b.open("?date=" + day); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	want := s.adminBookings(day)
	if got := b.count(".bk"); got != len(want) {
		t.Fatalf("today lists %d bookings, the database has %d", got, len(want))
	}
	for id, jb := range want {
		if got := b.attr(fmt.Sprintf("#bk-%d", id), "data-status"); got != jb["status"] {
			t.Errorf("booking %d on the page %q, in the API %q", id, got, jb["status"])
		}
	}
	if got := b.count("section.slot"); got != 2 {
		t.Fatalf("today lists %d slots, want 2", got)
	}
	if first, second := b.attr("section.slot:nth-of-type(1)", "id"), b.attr("section.slot:nth-of-type(2)", "id"); first != fmt.Sprintf("slot-%d", paidSlot) || second != fmt.Sprintf("slot-%d", freeSlot) {
		t.Fatalf("slots out of time order: %s, %s", first, second)
	}
	if paid := b.text(fmt.Sprintf("#bk-%d .paid", alice)); paid != "已付 ¥50.00" {
		t.Errorf("alice's deposit shows %q", paid)
	}
	if b.count(fmt.Sprintf("#bk-%d button.checkin", dave)) != 0 {
		t.Errorf("a pending booking offers check-in")
	}
	if b.count(fmt.Sprintf("#bk-%d button.checkin", alice)) != 1 || b.count(".bk button.noshow") != 0 {
		t.Errorf("inside the check-in window before the start: check-in %d, no-show buttons %d",
			b.count(fmt.Sprintf("#bk-%d button.checkin", alice)), b.count(".bk button.noshow"))
	}
	b.shot("today")

	// Saying no to the confirmation sends nothing.
	b.dismiss.Store(true)
	if err := chromedp.Do(b.timed(), chromedp.Click(chromedp.CSS(fmt.Sprintf("#bk-%d button.cancel", alice)))); err != nil {
		t.Fatal(err)
	}
	b.dismiss.Store(false)
	if got := s.status(alice); got != "confirmed" {
		t.Fatalf("a dismissed confirmation changed the booking: %s", got)
	}

	// Check in from the page, after the confirmation.
	before := len(b.dialogsSeen())
	if st := b.submit(fmt.Sprintf("#bk-%d button.checkin", carol)); st != http.StatusOK {
		t.Fatalf("check-in: %d", st)
	}
	carolWho := "…ol-003" // the tail of her openid: she gave no name
	if d := b.dialogsSeen(); len(d) != before+1 || d[len(d)-1] != "confirm: 确认 "+carolWho+"（"+salonStart(s.slotStart(freeSlot))+"）已到店签到？" {
		t.Fatalf("check-in was not confirmed first, by her name and time: %q", d)
	}
	if msg := b.text("#flash"); msg != "已签到："+carolWho+" "+salonWhen(s.slotStart(freeSlot)) {
		t.Fatalf("check-in outcome %q", msg)
	}
	if got := s.adminBookings(day)[carol]["status"]; got != "completed" || b.attr(fmt.Sprintf("#bk-%d", carol), "data-status") != "completed" {
		t.Fatalf("after check-in: API %v, page %q", got, b.attr(fmt.Sprintf("#bk-%d", carol), "data-status"))
	}
	if ev := s.auditEvents(carol); ev[len(ev)-1] != booking.EventCheckIn {
		t.Fatalf("audit after check-in: %v", ev)
	}

	// Cancel with refund: the booking is cancelled, the refund started, both audited.
	if st := b.submit(fmt.Sprintf("#bk-%d button.cancel", bob)); st != http.StatusOK {
		t.Fatalf("cancel: %d", st)
	}
	if msg := b.text("#flash"); !strings.HasPrefix(msg, "已取消：…-00002 "+salonWhen(s.slotStart(paidSlot))) || !strings.Contains(msg, "¥50.00") {
		t.Fatalf("cancel outcome %q", msg)
	}
	jb := s.adminBookings(day)[bob]
	refund, _ := jb["refund"].(map[string]any)
	if jb["status"] != "cancelled" || refund == nil || refund["amountFen"] != float64(5000) {
		t.Fatalf("after cancel, the API says %v", jb)
	}
	if ev := s.auditEvents(bob); countEvent(ev, booking.EventCancel) != 1 || countEvent(ev, booking.EventRefund) < 1 {
		t.Fatalf("audit after cancel: %v", ev)
	}
	if got := b.text(fmt.Sprintf("#bk-%d .refund", bob)); !strings.Contains(got, "¥50.00") {
		t.Fatalf("the refund on the page: %q", got)
	}

	// A change that lost a race is refused in words: the customer cancelled
	// Dave's booking after the page was drawn.
	if a := s.call("POST", fmt.Sprintf("/bookings/%d/cancel", dave), s.token("oDave-0004"), nil); a.Status != http.StatusOK {
		t.Fatalf("customer cancel: %d %s", a.Status, a.Body)
	}
	// Dave has not paid: his cancel is 取消预约, which promises no refund.
	if b.count(fmt.Sprintf("#bk-%d button.cancel", dave)) != 0 || b.text(fmt.Sprintf("#bk-%d button.cancelunpaid", dave)) != "取消预约" {
		t.Fatalf("an unpaid booking's cancel: refund-cancel %d, %q", b.count(fmt.Sprintf("#bk-%d button.cancel", dave)), b.text(fmt.Sprintf("#bk-%d button.cancelunpaid", dave)))
	}
	if st := b.submit(fmt.Sprintf("#bk-%d button.cancelunpaid", dave)); st != http.StatusOK {
		t.Fatalf("stale cancel: %d", st)
	}
	if msg := b.text("#flash.bad"); !strings.Contains(msg, "…e-0004 "+salonWhen(s.slotStart(paidSlot))+" 取消预约没有成功") || !strings.Contains(msg, "状态已经变了") {
		t.Fatalf("a refused change says %q", msg)
	}

	// No-show at the door: before check-in opens the page offers neither
	// check-in nor no-show (the API refuses both, TOO_EARLY); once the slot has
	// started the page marks it (the seat and the deposit stay), and a late
	// check-in still takes it to completed.
	late := s.slot(3*time.Hour, 2, 5000)
	frank, _ := s.reserve("oFrank-006", late)
	s.payFor(frank)
	lateDay := s.day(late)
	if st := b.open("?date=" + lateDay); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if n := b.count(fmt.Sprintf("#bk-%d button.noshow, #bk-%d button.checkin", frank, frank)); n != 0 || b.count(fmt.Sprintf("#bk-%d button.cancel", frank)) != 1 {
		t.Fatalf("3 hours before the start: %d check-in or no-show buttons, cancel %d", n, b.count(fmt.Sprintf("#bk-%d button.cancel", frank)))
	}
	s.wantError(s.admin("noshow", frank), 409, booking.ETOOEARLY)
	s.wantError(s.admin("checkin", frank), 409, booking.ETOOEARLY)
	mysqltest.SlotStarts(t, s.store, late, 10*time.Minute)
	if st := b.open("?date=" + s.day(late)); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if st := b.submit(fmt.Sprintf("#bk-%d button.noshow", frank)); st != http.StatusOK {
		t.Fatalf("no-show: %d", st)
	}
	if got := s.status(frank); got != "no_show" || b.attr(fmt.Sprintf("#bk-%d", frank), "data-status") != "no_show" || s.slotBooked(late) != 1 {
		t.Fatalf("after no-show: %s, page %q, booked %d", got, b.attr(fmt.Sprintf("#bk-%d", frank), "data-status"), s.slotBooked(late))
	}
	if st := b.submit(fmt.Sprintf("#bk-%d button.checkin", frank)); st != http.StatusOK || s.status(frank) != "completed" {
		t.Fatalf("late check-in: %d, %s", st, s.status(frank))
	}
	if ev := s.auditEvents(frank); countEvent(ev, booking.EventNoShow) != 1 || ev[len(ev)-1] != booking.EventCheckIn {
		t.Fatalf("audit after no-show and late check-in: %v", ev)
	}

	// The week: create a week of slots with the schedule form.
	start := time.Now().In(loc).AddDate(0, 0, 30)
	from, to := start.Format(time.DateOnly), start.AddDate(0, 0, 6).Format(time.DateOnly)
	if st := b.open("week?from=" + from); st != http.StatusOK {
		t.Fatalf("week: %d", st)
	}
	slotsBefore := s.countRows("t_slot")
	b.setValue(`#schedule input[name="from"]`, from)
	b.setValue(`#schedule input[name="to"]`, to)
	b.setValue(`#schedule input[name="open"]`, "10:00")
	b.setValue(`#schedule input[name="close"]`, "13:00")
	b.setValue(`#schedule input[name="slotMinutes"]`, "60")
	b.setValue(`#schedule input[name="capacity"]`, "2")
	b.setValue(`#schedule input[name="priceYuan"]`, "30.5")
	if st := b.submit(`#schedule button`); st != http.StatusOK {
		t.Fatalf("create the week: %d", st)
	}
	if msg := b.text("#flash"); msg != "新建了 21 个时段，跳过了 0 个已有的时段。" {
		t.Fatalf("create outcome %q", msg)
	}
	if n := s.countRows("t_slot") - slotsBefore; n != 21 || b.count("table.slots tbody tr") != 21 {
		t.Fatalf("created %d slots, the page shows %d", n, b.count("table.slots tbody tr"))
	}
	a := s.call("GET", "/slots?date="+from, "", nil)
	if ss := a.JSON["slots"].([]any); len(ss) != 3 || ss[0].(map[string]any)["priceFen"] != float64(3050) || ss[0].(map[string]any)["capacity"] != float64(2) {
		t.Fatalf("the schedule as the API sees it: %s", a.Body)
	}

	// Close a slot.
	closing := b.attr("table.slots tbody tr", "id")
	closingID, _ := strconv.ParseInt(strings.TrimPrefix(closing, "slot-"), 10, 64)
	if st := b.submit("#" + closing + " form.close button"); st != http.StatusOK {
		t.Fatalf("close: %d", st)
	}
	if msg := b.text("#flash"); !strings.Contains(msg, "已关闭") {
		t.Fatalf("close outcome %q", msg)
	}
	if sl, err := s.store.FindSlot(context.Background(), closingID); err != nil || sl.Open {
		t.Fatalf("slot %d after close: %+v %v", closingID, sl, err)
	}
	if b.attr("#"+closing, "data-open") != "false" || b.count("#"+closing+" form.close") != 0 {
		t.Fatalf("the closed slot still offers to close")
	}
	b.shot("week")
	// And reopen it.
	if st := b.submit("#" + closing + " form.reopen button"); st != http.StatusOK {
		t.Fatalf("reopen: %d", st)
	}
	if sl, err := s.store.FindSlot(context.Background(), closingID); err != nil || !sl.Open || !strings.Contains(b.text("#flash"), "重新开放") {
		t.Fatalf("slot %d after reopen: %+v %v, %q", closingID, sl, err, b.text("#flash"))
	}

	// A capacity below what is booked is refused with a readable message.
	if st := b.open("week?from=" + day); st != http.StatusOK {
		t.Fatalf("week of today: %d", st)
	}
	booked := s.slotBooked(paidSlot) // alice and erin, confirmed
	b.setValue(fmt.Sprintf("#slot-%d form.capacity input[name=capacity]", paidSlot), strconv.Itoa(booked-1))
	if st := b.submit(fmt.Sprintf("#slot-%d form.capacity button", paidSlot)); st != http.StatusOK {
		t.Fatalf("capacity: %d", st)
	}
	if msg := b.text("#flash.bad"); !strings.Contains(msg, fmt.Sprintf("已有 %d 人预约，容量不能少于已预约的人数", booked)) {
		t.Fatalf("capacity below booked says %q", msg)
	}
	if sl, _ := s.store.FindSlot(context.Background(), paidSlot); sl.Capacity != 4 {
		t.Fatalf("a refused capacity changed the slot: %d", sl.Capacity)
	}
	// And a capacity it can take is taken.
	b.setValue(fmt.Sprintf("#slot-%d form.capacity input[name=capacity]", paidSlot), "5")
	b.submit(fmt.Sprintf("#slot-%d form.capacity button", paidSlot))
	if sl, _ := s.store.FindSlot(context.Background(), paidSlot); sl.Capacity != 5 {
		t.Fatalf("capacity 5 not applied: %d", sl.Capacity)
	}

	// One booking by its order number, with its whole history.
	b.open("booking")
	b.setValue(`#lookup input[name="q"]`, booking.OutTradeNo(bob))
	if st := b.submit(`#lookup button`); st != http.StatusOK {
		t.Fatalf("lookup: %d", st)
	}
	if b.text("#trade-no") != booking.OutTradeNo(bob) || b.attr("#booking", "data-status") != "cancelled" {
		t.Fatalf("lookup shows %q %q", b.text("#trade-no"), b.attr("#booking", "data-status"))
	}
	wantHistory := s.auditEvents(bob)
	var gotHistory []string
	for i := range b.count("#history tbody tr") {
		gotHistory = append(gotHistory, b.attr(fmt.Sprintf("#history tbody tr:nth-child(%d)", i+1), "data-event"))
	}
	if !slices.Equal(gotHistory, wantHistory) {
		t.Fatalf("history on the page %v, in the audit %v", gotHistory, wantHistory)
	}
	b.shot("booking")
	if st := b.open("booking?q=999999"); st != http.StatusNotFound || !strings.Contains(b.text("#flash"), "没有找到") {
		t.Fatalf("unknown booking: %d %q", st, b.text("#flash"))
	}

	// The audit trail of the day, newest first, and filtered by event.
	today := time.Now().In(loc).Format(time.DateOnly)
	b.open("audit?date=" + today)
	ids := eval[[]int64](b, `Array.from(document.querySelectorAll("#trail tbody tr[data-audit-id]")).map(r => +r.dataset.auditId)`)
	if len(ids) != s.countRows("t_audit") || !slices.IsSortedFunc(ids, func(x, y int64) int { return int(y - x) }) {
		t.Fatalf("audit page ids %v: want all %d, newest first", ids, s.countRows("t_audit"))
	}
	b.shot("audit")
	b.open("audit?date=" + today + "&event=" + booking.EventCheckIn)
	// Carol's check-in and Frank's late one.
	if b.count("#trail tbody tr[data-audit-id]") != 2 || b.attr("#trail tbody tr", "data-event") != booking.EventCheckIn {
		t.Fatalf("audit filtered by checkin shows %d rows", b.count("#trail tbody tr[data-audit-id]"))
	}

	// Health: the release run's record, the audit backlog, the refunds.
	if _, err := s.store.SQL().Exec(`UPDATE t_booking SET refund_status = 'failed' WHERE book_id = ?`, bob); err != nil {
		t.Fatal(err)
	}
	s.runRelease()
	b.open("health")
	var unshipped, open, failed int
	s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE shipped_at IS NULL`).Scan(&unshipped)
	s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE refund_status IN ('pending','processing')`).Scan(&open)
	s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE refund_status = 'failed'`).Scan(&failed)
	for key, want := range map[string]string{
		"unshipped_audit": strconv.Itoa(unshipped), "refunds_open": strconv.Itoa(open), "refunds_failed": strconv.Itoa(failed),
		"reconciliation": "0",
	} {
		if got := b.attr(`#health [data-key="`+key+`"]`, "data-count"); got != want {
			t.Errorf("health %s counts %q, the database says %q", key, got, want)
		}
	}
	if got := b.text(`#health [data-key="refunds_failed"] small`); !strings.Contains(got, "有 1 笔退款未完成：请在微信支付商户平台查看") {
		t.Errorf("the failed refund says %q", got)
	}
	if got := b.text("#headline"); !strings.HasPrefix(got, "需要处理：") || !strings.Contains(got, "没有完成的退款") {
		t.Errorf("the health headline says %q", got)
	}
	if failed != 1 || !strings.Contains(b.text("#failed-refunds"), fmt.Sprintf("#%d", bob)) {
		t.Errorf("the failed refund is not listed: %q", b.text("#failed-refunds"))
	}
	if got := b.text(`#health [data-key="last_release_run"] .value`); !strings.HasSuffix(got, "完成") {
		t.Errorf("last release run shows %q", got)
	}
	for _, key := range []string{"released", "confirmed", "refunded", "audited"} {
		if b.text(`#run [data-key="`+key+`"] .value`) != "0" {
			t.Errorf("release run count %s shows %q", key, b.text(`#run [data-key="`+key+`"] .value`))
		}
	}
	b.shot("health")

	// Sign out: the cookie is gone, and the pages ask for the token again.
	b.open("")
	if st := b.submit(`form.logout button`); st != http.StatusOK || b.count("#login") != 1 {
		t.Fatalf("sign-out: %d", st)
	}
	if st := b.open(""); b.count("#login") != 1 {
		t.Fatalf("after sign-out today answers %d without the sign-in form", st)
	}
	if d := b.dialogsSeen(); slices.ContainsFunc(d, func(s string) bool { return !strings.HasPrefix(s, "confirm: ") }) {
		t.Fatalf("a page opened a dialog the console never asks: %q", d)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// day is the shop date a slot starts on.
func (s *system) day(slot int64) string {
	return s.slotStart(slot).In(shanghai(s.t)).Format(time.DateOnly)
}

func TestConsoleBrowserSecurity(t *testing.T) {
	s := newSystem(t)
	b := newBrowser(t, s)
	loc := shanghai(t)

	slot := s.slot(2*time.Hour, 3, 0)
	day := s.slotStart(slot).In(loc).Format(time.DateOnly)
	// A customer whose openid and idempotency key carry markup.
	const hostileID = `<script>alert("id")</script>`
	const hostileKey = `<img src=x onerror=alert(1)><script>alert(2)</script>`
	hostile, a := s.reserve(hostileID, slot, "Idempotency-Key", hostileKey)
	victim, _ := s.reserve("oVictim-01", slot)
	if hostile == 0 || victim == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}

	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}

	// The cookie's flags, as the browser stored them.
	jar, err := chromedp.Call(b.timed(), network.GetCookies, network.GetCookiesParams{URLs: []string{b.base}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jar.Cookies) != 1 {
		t.Fatalf("cookies: %+v", jar.Cookies)
	}
	c := jar.Cookies[0]
	exp := time.Unix(int64(c.Expires), 0)
	if c.Name != consoleauth.CookieName || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Secure || c.Path != "/admin" ||
		c.Session || time.Until(exp) < 11*time.Hour || time.Until(exp) > 12*time.Hour {
		t.Fatalf("cookie %+v (expires %s)", c, exp)
	}
	if eval[string](b, `document.cookie`) != "" {
		t.Fatalf("the page's script can read the session cookie")
	}

	// Markup in a customer's data is shown as text, and no script of it runs.
	b.open(fmt.Sprintf("booking?q=%d", hostile))
	if got := b.text("#openid"); got != hostileID {
		t.Fatalf("openid shown as %q", got)
	}
	if got := b.text("#idem-key"); got != hostileKey {
		t.Fatalf("idempotency key shown as %q", got)
	}
	if html := eval[string](b, `document.querySelector("#idem-key").innerHTML`); !strings.Contains(html, "&lt;script&gt;") {
		t.Fatalf("idempotency key not escaped: %s", html)
	}
	if b.count("#booking script, #booking img") != 0 {
		t.Fatal("a customer's markup became elements")
	}
	b.shot("security-escaped")
	b.open("?date=" + day)
	if b.count(".bk script, .bk img") != 0 {
		t.Fatal("a customer's markup became elements on today's page")
	}

	// A change posted without the CSRF token is refused and changes nothing.
	eval[bool](b, fmt.Sprintf(`document.querySelector("#bk-%d form.act input[name=csrf]").remove(), true`, victim))
	if st := b.submit(fmt.Sprintf("#bk-%d button.checkin", victim)); st != http.StatusForbidden {
		t.Fatalf("POST without CSRF: %d", st)
	}
	if got := s.status(victim); got != "confirmed" {
		t.Fatalf("a POST without CSRF changed the booking: %s", got)
	}
	// A wrong token is refused the same way.
	b.open("?date=" + day)
	eval[bool](b, fmt.Sprintf(`document.querySelector("#bk-%d form.act input[name=csrf]").value = "forged", true`, victim))
	if st := b.submit(fmt.Sprintf("#bk-%d button.checkin", victim)); st != http.StatusForbidden {
		t.Fatalf("POST with a forged CSRF token: %d", st)
	}
	if got := s.status(victim); got != "confirmed" {
		t.Fatalf("a forged CSRF token changed the booking: %s", got)
	}
	if d := b.dialogsSeen(); slices.ContainsFunc(d, func(s string) bool { return strings.HasPrefix(s, "alert") }) {
		t.Fatalf("an injected script ran: %q", d)
	}
}
