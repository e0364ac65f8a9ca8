package handler

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/shared/mysql/mysqltest"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// beforeEveryPage runs js in every document the browser opens from now on,
// before the page's own scripts: the test's stand-in for what the browser has
// or lacks.
func (b *browser) beforeEveryPage(js string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.timed(), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js}); err != nil {
		b.t.Fatal(err)
	}
}

// checkinCodeOf is booking id's check-in code, as its customer's mini-program
// shows it.
func (s *system) checkinCodeOf(openid string, id int64) string {
	s.t.Helper()
	a := s.call("GET", "/bookings/"+itoa64(id), s.token(openid), nil)
	code, _ := obj(s.t, a.JSON["booking"])["checkinCode"].(string)
	if len(code) != 8 {
		s.t.Fatalf("booking %d has no check-in code: %s", id, a.Body)
	}
	return code
}

// TestDoorCheckInInABrowser: the console's 签到 page. Where the browser has no
// BarcodeDetector there is no 扫码 button and typing the 8 digits checks the
// customer in (a wrong code is refused in words, changing nothing); where it
// has one and a camera, 扫码 reads the code off the customer's QR code, fills the
// field and sends it, asked first like every change.
func TestDoorCheckInInABrowser(t *testing.T) {
	s := newSystem(t)
	slot := s.doorSlot(3, 5000)
	if s.day(slot) != time.Now().In(shanghai(t)).Format(time.DateOnly) {
		t.Skip("the slot falls on tomorrow (the test runs just before midnight in the shop)")
	}
	typed := s.paidBooking("oTyped-0001", slot)
	scanned := s.paidBooking("oScan-00002", slot)
	typedCode, scannedCode := s.checkinCodeOf("oTyped-0001", typed), s.checkinCodeOf("oScan-00002", scanned)

	// A browser without the API (BarcodeDetector removed, whatever this
	// Chromium has).
	b := newBrowser(t, s)
	b.beforeEveryPage(`delete window.BarcodeDetector;`)
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b.open("door"); st != http.StatusOK {
		t.Fatalf("door: %d", st)
	}
	if !eval[bool](b, `document.getElementById('scan').hidden`) {
		t.Fatal("扫码 is offered without BarcodeDetector")
	}
	b.shot("door")
	wrong := "00000000"
	if wrong == typedCode || wrong == scannedCode {
		wrong = "00000001"
	}
	before := s.dbState()
	b.setValue("#code", wrong)
	if st := b.submit("#door button.checkin"); st != http.StatusOK {
		t.Fatalf("wrong code: %d", st)
	}
	if msg := b.text("#flash.bad"); !strings.Contains(msg, "今天没有这个签到码") {
		t.Fatalf("a wrong code says %q", msg)
	}
	s.unchanged(before, "a wrong check-in code")
	b.setValue("#code", typedCode)
	if st := b.submit("#door button.checkin"); st != http.StatusOK {
		t.Fatalf("typed code: %d", st)
	}
	if msg := b.text("#flash.ok"); !strings.HasPrefix(msg, "已签到：") || !strings.Contains(msg, salonWhen(s.slotStart(slot))) {
		t.Fatalf("typed check-in says %q", msg)
	}
	if st := s.status(typed); st != "completed" {
		t.Fatalf("after the typed code: %s", st)
	}
	if d := b.dialogsSeen(); len(d) == 0 || !strings.HasPrefix(d[len(d)-1], "confirm: ") {
		t.Fatalf("the check-in was not asked first: %q", d)
	}

	// A browser with the API and a camera: the stand-ins answer the customer's
	// code from a QR code in front of a (canvas) camera.
	b2 := newBrowser(t, s)
	b2.beforeEveryPage(`
		window.BarcodeDetector = class {
			constructor(opts) { this.formats = (opts && opts.formats) || []; }
			static getSupportedFormats() { return Promise.resolve(['qr_code']); }
			detect(source) { return Promise.resolve(this.formats.includes('qr_code') && source ? [{ rawValue: ` + jsString(scannedCode) + `, format: 'qr_code' }] : []); }
		};
		if (!navigator.mediaDevices) { Object.defineProperty(navigator, 'mediaDevices', { value: {} }); }
		navigator.mediaDevices.getUserMedia = () => {
			const c = document.createElement('canvas'); c.width = 64; c.height = 64;
			return Promise.resolve(c.captureStream());
		};`)
	if st := b2.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b2.open("door"); st != http.StatusOK {
		t.Fatalf("door: %d", st)
	}
	if eval[bool](b2, `document.getElementById('scan').hidden`) || b2.count("#scan:not([hidden])") != 1 {
		t.Fatal("扫码 is not offered although the browser reads QR codes")
	}
	b2.shot("door-scan")
	if st := b2.submit("#scan"); st != http.StatusOK {
		t.Fatalf("scan: %d", st)
	}
	if msg := b2.text("#flash.ok"); !strings.HasPrefix(msg, "已签到：") || !strings.Contains(msg, salonWhen(s.slotStart(slot))) {
		t.Fatalf("scanned check-in says %q", msg)
	}
	if st := s.status(scanned); st != "completed" {
		t.Fatalf("after the scan: %s", st)
	}
	// The same code again: refused in words, the booking stays completed.
	b2.setValue("#code", scannedCode)
	if st := b2.submit("#door button.checkin"); st != http.StatusOK {
		t.Fatalf("again: %d", st)
	}
	if msg := b2.text("#flash.bad"); !strings.Contains(msg, "已经签到过了") || s.status(scanned) != "completed" {
		t.Fatalf("a second check-in says %q, booking %s", msg, s.status(scanned))
	}
}

// TestConsoleShowsTheCustomer: the salon sees who is at the counter, not an
// openid: today's list and the booking page show a walk-in's name and phone, a
// mini-program customer's name once she gave one, and the customer's visits,
// recent no-shows and the salon's note.
func TestConsoleShowsTheCustomer(t *testing.T) {
	s := newSystem(t)
	slot := s.doorSlot(5, 5000)
	a := s.call("POST", "/admin/bookings", testAdmin, map[string]any{"slotId": slot, "name": "王小美", "phone": "13800138000"})
	if a.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	walkIn := int64(obj(t, a.JSON["booking"])["bookingId"].(float64))
	customer := obj(t, obj(t, a.JSON["booking"])["customer"])["customerId"].(float64)
	if a := s.call("PATCH", fmt.Sprintf("/admin/customers/%d", int64(customer)), testAdmin, map[string]any{"note": "喜欢猫眼，对丙酮过敏"}); a.Status != http.StatusOK {
		t.Fatalf("note: %d %s", a.Status, a.Body)
	}
	online := s.paidBooking("oNamed-0001", slot)
	if a := s.call("PUT", "/me", s.token("oNamed-0001"), map[string]any{"name": "李娜"}); a.Status != http.StatusOK {
		t.Fatalf("name: %d %s", a.Status, a.Body)
	}
	anonymous := s.paidBooking("oAnon-00002", slot)

	b := newBrowser(t, s)
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b.open("?date=" + s.day(slot)); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	for _, c := range []struct {
		id               int64
		who, phone, note string
	}{
		{walkIn, "王小美", "13800138000", "备注：喜欢猫眼，对丙酮过敏"},
		{online, "李娜", "", ""},
		{anonymous, "…002", "", ""},
	} {
		sel := fmt.Sprintf("#bk-%d", c.id)
		if got := b.text(sel + " .who"); !strings.HasPrefix(got, strings.TrimPrefix(c.who, "…")) && !strings.HasSuffix(got, strings.TrimPrefix(c.who, "…")) {
			t.Errorf("booking %d shows %q, want %q", c.id, got, c.who)
		}
		if got := b.text(sel + " .phone"); got != c.phone {
			t.Errorf("booking %d phone %q, want %q", c.id, got, c.phone)
		}
		if about := b.text(sel + " .about"); !strings.HasPrefix(about, "到店 0 次") || !strings.Contains(about, c.note) {
			t.Errorf("booking %d about %q, want visits and %q", c.id, about, c.note)
		}
	}
	b.shot("today-customers")

	// Her page, from her name: her bookings and the salon's note, which the
	// salon changes there.
	if st := b.submit(fmt.Sprintf("#bk-%d a.who", walkIn)); st != http.StatusOK {
		t.Fatalf("customer page: %d", st)
	}
	if got := b.text("#customer h1"); got != "王小美" || b.text("#phone") != "13800138000" || b.count("#history tbody tr[data-status]") != 1 {
		t.Fatalf("customer page: %q, phone %q, %d bookings", got, b.text("#phone"), b.count("#history tbody tr[data-status]"))
	}
	b.setValue("#note-text", "只做法式")
	if st := b.submit("#note button"); st != http.StatusOK {
		t.Fatalf("save note: %d", st)
	}
	if msg := b.text("#flash.ok"); msg != "备注已保存" || eval[string](b, `document.getElementById('note-text').value`) != "只做法式" {
		t.Fatalf("note saved says %q", msg)
	}
	b.shot("customer")
	var note string
	s.store.SQL().QueryRow(`SELECT note FROM t_customer WHERE customer_id = ?`, int64(customer)).Scan(&note)
	if note != "只做法式" {
		t.Fatalf("note in the database %q", note)
	}
	if st := b.open(fmt.Sprintf("booking?q=%d", walkIn)); st != http.StatusOK {
		t.Fatalf("booking page: %d", st)
	}
	if who := b.text("#who"); !strings.Contains(who, "王小美") || !strings.Contains(who, "13800138000") || !strings.Contains(who, "只做法式") {
		t.Fatalf("the booking page shows %q", who)
	}
	if b.count("#openid") != 0 {
		t.Fatal("a walk-in shows an openid row")
	}

	// A phone booking from today's page, for a customer the salon knows by her
	// phone: the same customer, a second booking refused as she already holds one.
	if st := b.open("?date=" + s.day(slot)); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	form := fmt.Sprintf("#walkin-%d", slot)
	if err := chromedp.Do(b.timed(), chromedp.Click(chromedp.CSS(fmt.Sprintf("#slot-%d details.walkin summary", slot)))); err != nil {
		t.Fatal(err)
	}
	b.setValue(form+` input[name="name"]`, "赵敏")
	b.setValue(form+` input[name="phone"]`, "13900139000")
	if st := b.submit(form + " button"); st != http.StatusOK {
		t.Fatalf("walk-in from the page: %d", st)
	}
	msg := b.text("#flash.ok")
	// The page comes back to the new booking's row (#bk-<id>).
	var id int64
	if _, err := fmt.Sscanf(eval[string](b, `location.hash`), "#bk-%d", &id); err != nil || s.status(id) != "confirmed" ||
		msg != "已登记 赵敏 "+salonWhen(s.slotStart(slot))+"（到店付款）" {
		t.Fatalf("the walk-in says %q (booking %d, %s)", msg, id, eval[string](b, `location.hash`))
	}
	if got := b.text(fmt.Sprintf("#bk-%d .who", id)); got != "赵敏" {
		t.Fatalf("the walk-in shows as %q", got)
	}
	before := s.dbState()
	if err := chromedp.Do(b.timed(), chromedp.Click(chromedp.CSS(fmt.Sprintf("#slot-%d details.walkin summary", slot)))); err != nil {
		t.Fatal(err)
	}
	b.setValue(form+` input[name="name"]`, "赵敏")
	b.setValue(form+` input[name="phone"]`, "13900139000")
	if st := b.submit(form + " button"); st != http.StatusOK {
		t.Fatalf("second walk-in: %d", st)
	}
	// The refusal names the booking she holds (her name, its time, a link to
	// it), and the form still holds what was typed.
	when := s.slotStart(slot).In(shanghai(t)).Format("15:04")
	if msg := b.text("#flash.bad"); !strings.Contains(msg, "已有一个未完成的预约") || !strings.Contains(msg, "赵敏") || !strings.Contains(msg, when) {
		t.Fatalf("a second booking for her says %q, want her name and %s", msg, when)
	}
	if href := b.attr("#flash-link", "href"); !strings.HasSuffix(href, fmt.Sprintf("booking?id=%d", id)) {
		t.Fatalf("the refusal links to %q, want booking %d", href, id)
	}
	if name, phone := eval[string](b, `document.querySelector('`+form+` input[name="name"]').value`),
		eval[string](b, `document.querySelector('`+form+` input[name="phone"]').value`); name != "赵敏" || phone != "13900139000" {
		t.Fatalf("the form after the refusal holds %q %q", name, phone)
	}
	b.shot("walkin-refused")
	s.unchanged(before, "a refused walk-in")
	if st := b.submit("#flash-link"); st != http.StatusOK || !strings.Contains(b.text("#who"), "赵敏") {
		t.Fatalf("the refusal's link: %d, the page shows %q", st, b.text("#who"))
	}
}

// TestConsoleMovesABooking: 改约 on today's list offers the free slots of the
// next days, and moving one there is one change: the booking in its new slot,
// the old seat free again; a slot that filled up meanwhile is refused in words.
func TestConsoleMovesABooking(t *testing.T) {
	s := newSystem(t)
	from := s.doorSlot(2, 5000)
	to := s.slot(30*time.Hour, 1, 5000)
	full := s.slot(31*time.Hour, 1, 5000)
	id := s.paidBooking("oMove-00001", from)
	pending := s.mustReservePaid("oMove-00002", from)

	b := newBrowser(t, s)
	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	if st := b.open("?date=" + s.day(from)); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if b.count(fmt.Sprintf("#bk-%d form.move", pending)) != 0 {
		t.Fatal("a pending booking offers 改约")
	}
	sel := fmt.Sprintf("#bk-%d form.move", id)
	options := eval[[]string](b, `Array.from(document.querySelectorAll(`+jsString(sel+" option")+`)).map(o => o.value)`)
	if !slices.Contains(options, itoa64(to)) || !slices.Contains(options, itoa64(full)) || slices.Contains(options, itoa64(from)) {
		t.Fatalf("改约 offers %v; want %d and %d, not its own slot %d", options, to, full, from)
	}
	b.shot("move")
	// The other slot fills up before the salon presses the button.
	s.paidBooking("oMove-00003", full)
	before := s.dbState()
	if err := chromedp.Do(b.timed(), chromedp.SetValue(chromedp.CSS(sel+` select`), itoa64(full))); err != nil {
		t.Fatal(err)
	}
	if st := b.submit(sel + " button"); st != http.StatusOK {
		t.Fatalf("move to a full slot: %d", st)
	}
	if msg := b.text("#flash.bad"); !strings.Contains(msg, "…-00001 "+salonWhen(s.slotStart(from))+" 改约没有成功") {
		t.Fatalf("a move to a full slot says %q", msg)
	}
	s.unchanged(before, "a move to a slot that filled up")
	if err := chromedp.Do(b.timed(), chromedp.SetValue(chromedp.CSS(sel+` select`), itoa64(to))); err != nil {
		t.Fatal(err)
	}
	if st := b.submit(sel + " button"); st != http.StatusOK {
		t.Fatalf("move: %d", st)
	}
	if msg := b.text("#flash.ok"); msg != "已改约：…-00001 "+salonWhen(s.slotStart(to)) {
		t.Fatalf("the move says %q", msg)
	}
	if bk := s.findBk(id); bk.SlotID != to || s.slotBooked(from) != 1 || s.slotBooked(to) != 1 {
		t.Fatalf("after the move: slot %d, booked %d and %d", bk.SlotID, s.slotBooked(from), s.slotBooked(to))
	}
	mysqltest.CheckInvariant(t, s.store)
}
