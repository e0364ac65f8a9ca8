package handler

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/shared/mysql/mysqltest"

	"github.com/chromedp/chromedp"
)

// TestConsoleCalendarInABrowser: the owner puts two services on the menu
// (项目) and two technicians to work (技师: who does what, one with her staff
// account, and their hours); today's calendar then has a column each, a free
// cell leads to a walk-in form of a service that fits, prefilled, and the
// walk-in appears as a block in her column over the cells it takes; time off
// over it is refused, naming her. The technician with the staff account
// signs in on her phone: her column first and the only one shown until she
// switches, and no button of the owner's on the menu's pages. The calendar
// tells apart what is not free: 小美's time off (her cell, closed: hatched,
// 休息), the hour 小丽 does not work (no cell: blank) and the free cells gone
// by (grey), none of them leading to a walk-in.
func TestConsoleCalendarInABrowser(t *testing.T) {
	s := newSystem(t)
	loc := shanghai(t)
	now := time.Now().In(loc)
	if now.Hour() >= 22 || now.Hour() < 1 {
		t.Skip("too close to the shop's midnight for a free hour today and a free cell gone by")
	}
	today := now.Format(time.DateOnly)
	owner := newBrowser(t, s)
	if st := owner.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("owner sign-in: %d", st)
	}

	// 项目: two services; the first one's price edited.
	if st := owner.open("menu"); st != http.StatusOK {
		t.Fatalf("services: %d", st)
	}
	for _, svc := range []struct{ name, minutes, price, deposit string }{{"单色美甲", "60", "128", "30"}, {"卸甲", "30", "30", "0"}} {
		owner.setValue(`#newservice input[name="name"]`, svc.name)
		owner.setValue(`#newservice input[name="minutes"]`, svc.minutes)
		owner.setValue(`#newservice input[name="priceYuan"]`, svc.price)
		owner.setValue(`#newservice input[name="depositYuan"]`, svc.deposit)
		if st := owner.submit("#newservice button"); st != http.StatusOK || owner.text("#flash.ok") != "已新建项目" {
			t.Fatalf("create %s: %d %q", svc.name, st, owner.text("#flash"))
		}
	}
	manicure := s.idOf(`SELECT service_id FROM t_service WHERE name = '单色美甲'`)
	row := fmt.Sprintf("#svc-%d", manicure)
	eval[bool](owner, `(document.querySelector(`+jsString(row+" details")+`).open = true)`)
	owner.setValue(row+` input[name="priceYuan"]`, "138.5")
	if st := owner.submit(row + " form button"); st != http.StatusOK || !strings.Contains(owner.text(row), "¥138.50") ||
		!strings.Contains(owner.text(row), "60 分钟") || owner.attr(row, "data-active") != "true" {
		t.Fatalf("edit: %d %q", st, owner.text(row))
	}
	owner.setValue(`#newservice input[name="name"]`, "定金太多")
	owner.setValue(`#newservice input[name="priceYuan"]`, "100")
	owner.setValue(`#newservice input[name="depositYuan"]`, "200")
	if st := owner.submit("#newservice button"); st != http.StatusOK || !strings.Contains(owner.text("#flash.bad"), "定金不超过价格") ||
		strings.Contains(owner.text("#services"), "定金太多") {
		t.Fatalf("a deposit above the price: %d %q", st, owner.text("#flash"))
	}
	owner.shot("services")

	// 技师: 小美 with her staff account and both services, 小丽 the manicure
	// only; a week of hours for both, 小丽's ending half an hour earlier, and
	// 小美 off for that last half hour today.
	password := owner.newStaff("小美")
	if st := owner.open("techs"); st != http.StatusOK {
		t.Fatalf("technicians: %d", st)
	}
	for _, tech := range []struct{ name, staff string }{{"小美", "小美"}, {"小丽", ""}} {
		owner.setValue(`#newtech input[name="name"]`, tech.name)
		eval[bool](owner, `(() => { const s = document.querySelector('#newtech select[name="staff"]');
			s.value = [...s.options].find(o => o.textContent === `+jsString(tech.staff)+` || (o.value === '' && `+jsString(tech.staff)+` === '')).value; return true })()`)
		eval[bool](owner, `(() => { for (const c of document.querySelectorAll('#newtech input[name="service"]'))
			c.checked = `+jsString(tech.name)+` === '小美' || c.value === '`+strconv.FormatInt(manicure, 10)+`'; return true })()`)
		if st := owner.submit("#newtech button"); st != http.StatusOK || owner.text("#flash.ok") != "已新建技师" {
			t.Fatalf("create %s: %d %q", tech.name, st, owner.text("#flash"))
		}
	}
	mei := s.idOf(`SELECT technician_id FROM t_technician WHERE name = '小美'`)
	li := s.idOf(`SELECT technician_id FROM t_technician WHERE name = '小丽'`)
	if txt := owner.text(fmt.Sprintf("#tech-%d", mei)); !strings.Contains(txt, "账号 小美") || !strings.Contains(txt, "单色美甲、卸甲") {
		t.Fatalf("小美's row: %q", txt)
	}
	if txt := owner.text(fmt.Sprintf("#tech-%d .does", li)); txt != "做：单色美甲" {
		t.Fatalf("小丽's services: %q", txt)
	}
	for _, h := range []struct {
		id           int64
		close, cells string
	}{{mei, "23:30", "新开 329 个时段"}, {li, "23:00", "新开 322 个时段"}} {
		form := fmt.Sprintf("#tech-%d form.hours", h.id)
		owner.setValue(form+` input[name="open"]`, "00:00")
		owner.setValue(form+` input[name="close"]`, h.close)
		eval[bool](owner, `(document.querySelector(`+jsString(form)+`).closest('details').open = true)`)
		if st := owner.submit(form + " button"); st != http.StatusOK || !strings.Contains(owner.text("#flash.ok"), h.cells) {
			t.Fatalf("hours: %d %q", st, owner.text("#flash"))
		}
	}
	meiOff := fmt.Sprintf("#tech-%d form.off", mei)
	eval[bool](owner, `(document.querySelector(`+jsString(meiOff)+`).closest('details').open = true)`)
	owner.setValue(meiOff+` input[name="date"]`, today)
	owner.setValue(meiOff+` input[name="from"]`, "23:00")
	owner.setValue(meiOff+` input[name="to"]`, "23:30")
	if st := owner.submit(meiOff + " button"); st != http.StatusOK || owner.text("#flash.ok") != "已安排休息" {
		t.Fatalf("小美's time off: %d %q", st, owner.text("#flash"))
	}
	owner.shot("technicians")

	// Today, on a desktop: a column each; 小丽's first free cell of the
	// manicure leads to the walk-in form, prefilled.
	if err := chromedp.Do(owner.timed(), chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	if st := owner.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if got := eval[string](owner, `[...document.querySelectorAll('#cal thead th.col')].map(th => th.textContent).join(',')`); got != "小美,小丽" {
		t.Fatalf("the owner's columns: %q", got)
	}
	if owner.count("#now") != 1 {
		t.Fatal("no line at the time now")
	}
	// 23:00: 小美 off (休息, hatched), 小丽 not working (blank); 00:00, gone by
	// for both (grey); none of them a walk-in; each drawn apart.
	cellAt := func(tech int64, at string) string {
		return fmt.Sprintf(`#cal td[data-tech="%d"][data-at="%s"]`, tech, at)
	}
	look := func(sel string) string {
		return eval[string](owner, `(() => { const s = getComputedStyle(document.querySelector(`+jsString(sel)+`)); return s.backgroundColor + ' ' + s.backgroundImage })()`)
	}
	for _, c := range []struct {
		sel, class, text string
	}{{cellAt(mei, "23:00"), "rest", "休息"}, {cellAt(li, "23:00"), "off", ""}, {cellAt(mei, "00:00"), "past", ""}, {cellAt(li, "00:00"), "past", ""}} {
		if owner.count(c.sel) != 1 || !strings.Contains(owner.attr(c.sel, "class"), c.class) || owner.text(c.sel) != c.text || owner.count(c.sel+" a") != 0 {
			t.Fatalf("%s: %d cells, class %q, text %q, want %s %q and no link", c.sel, owner.count(c.sel), owner.attr(c.sel, "class"), owner.text(c.sel), c.class, c.text)
		}
	}
	rest, notHers, past, free := look(cellAt(mei, "23:00")), look(cellAt(li, "23:00")), look(cellAt(li, "00:00")), look(fmt.Sprintf(`#cal td.free[data-tech="%d"]`, li))
	if rest == notHers || rest == past || notHers == past || past == free || notHers == free || rest == free || !strings.Contains(rest, "gradient") {
		t.Fatalf("time off %q, not her hours %q, gone by %q, free %q: want each drawn apart, time off hatched", rest, notHers, past, free)
	}
	gap := fmt.Sprintf(`#cal td.free[data-tech="%d"] a.gap`, li)
	at := owner.attr(gap, "href")
	if !strings.Contains(at, "service="+strconv.FormatInt(manicure, 10)) || !strings.Contains(owner.text(gap), "单色美甲") {
		t.Fatalf("小丽's free cell: %q %q", at, owner.text(gap))
	}
	if st := owner.submit(gap); st != http.StatusOK || owner.count("#calwalkin") != 1 {
		t.Fatalf("the free cell's walk-in form: %d", st)
	}
	start := owner.attr(`#calwalkin input[name="startAt"]`, "value")
	if v := eval[string](owner, `document.querySelector('#calwalkin select[name="technicianId"]').value`); v != strconv.FormatInt(li, 10) {
		t.Fatalf("the form's technician: %s", v)
	}
	if v := eval[string](owner, `document.querySelector('#calwalkin select[name="serviceId"]').value`); v != strconv.FormatInt(manicure, 10) {
		t.Fatalf("the form's service: %s", v)
	}
	owner.setValue(`#calwalkin input[name="name"]`, "王女士")
	if st := owner.submit("#calwalkin button"); st != http.StatusOK || !strings.Contains(owner.text("#flash.ok"), "已登记 王女士") {
		t.Fatalf("walk-in: %d %q", st, owner.text("#flash"))
	}
	walkIn := s.idOf(`SELECT MAX(book_id) FROM t_booking WHERE technician_id = ` + strconv.FormatInt(li, 10))
	block := fmt.Sprintf("#bk-%d", walkIn)
	if owner.attr(block, "data-tech") != strconv.FormatInt(li, 10) || owner.attr(block, "rowspan") != "2" ||
		!strings.Contains(owner.text(block), "王女士") || !strings.Contains(owner.text(block), "单色美甲") || !strings.Contains(owner.text(block), start+"–") {
		t.Fatalf("the walk-in's block: tech %s, rowspan %s, %q", owner.attr(block, "data-tech"), owner.attr(block, "rowspan"), owner.text(block))
	}
	// Over its two cells: as tall as two rows, in 小丽's column.
	ratio := eval[float64](owner, `document.querySelector(`+jsString(block)+`).getBoundingClientRect().height / document.querySelector('#cal tbody th.t').getBoundingClientRect().height`)
	sameColumn := eval[bool](owner, `Math.abs(document.querySelector(`+jsString(block)+`).getBoundingClientRect().left - document.querySelector('#cal thead th.col[data-tech="`+strconv.FormatInt(li, 10)+`"]').getBoundingClientRect().left) < 2`)
	if ratio < 1.8 || ratio > 2.3 || !sameColumn {
		t.Fatalf("the block is %.2f rows tall, under her name: %v", ratio, sameColumn)
	}
	// On a phone, 小丽's column, chosen with the switcher's link.
	if st := owner.open(fmt.Sprintf("?tech=%d", li)); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	owner.shot("calendar")

	// Time off over the walk-in is refused, naming her.
	if st := owner.open("techs"); st != http.StatusOK {
		t.Fatalf("technicians: %d", st)
	}
	off := fmt.Sprintf("#tech-%d form.off", li)
	eval[bool](owner, `(document.querySelector(`+jsString(off)+`).closest('details').open = true)`)
	owner.setValue(off+` input[name="date"]`, today)
	owner.setValue(off+` input[name="from"]`, start)
	owner.setValue(off+` input[name="to"]`, "23:30")
	if st := owner.submit(off + " button"); st != http.StatusConflict || !strings.Contains(owner.text(fmt.Sprintf("#way-%d", walkIn)), "王女士") {
		t.Fatalf("time off over a booking: %d %q %q", st, owner.text("#flash"), owner.text("#in-the-way"))
	}
	owner.shot("technicians-off-refused")

	// 小美 on her phone: her column first and alone, the switcher to 小丽's;
	// the menu's pages read-only.
	mine := newBrowser(t, s)
	if st := mine.signInAs("小美", password); st != http.StatusOK {
		t.Fatalf("小美 signs in: %d", st)
	}
	if st := mine.open(""); st != http.StatusOK {
		t.Fatalf("today: %d", st)
	}
	if got := eval[string](mine, `[...document.querySelectorAll('#cal thead th.col')].map(th => th.textContent).join(',')`); got != "小美（我）,小丽" {
		t.Fatalf("小美's columns: %q", got)
	}
	shown := `[...document.querySelectorAll('#cal thead th.col')].filter(th => getComputedStyle(th).display !== 'none').map(th => th.dataset.tech).join(',')`
	if got := eval[string](mine, shown); got != strconv.FormatInt(mei, 10) {
		t.Fatalf("a phone shows the columns %q", got)
	}
	mine.shot("calendar-mine")
	if st := mine.submit(fmt.Sprintf(`.techs a[data-tech="%d"]`, li)); st != http.StatusOK || eval[string](mine, shown) != strconv.FormatInt(li, 10) ||
		mine.count(block) != 1 {
		t.Fatalf("switched to 小丽: %d, shown %q", st, eval[string](mine, shown))
	}
	for _, page := range []string{"menu", "techs"} {
		if st := mine.open(page); st != http.StatusOK || mine.count("#readonly") != 1 || mine.count("main form") != 0 || mine.count("details.edit") != 0 {
			t.Fatalf("小美's %s page (%d): read-only %d, forms %d", page, st, mine.count("#readonly"), mine.count("main form"))
		}
	}
	if !strings.Contains(mine.text("main"), "小丽") {
		t.Fatal("小美 does not see the technicians")
	}
	before := s.dbState()
	forged := `(() => {
		const f = document.createElement('form'); f.method = 'post'; f.action = 'menu';
		for (const [k, v] of Object.entries({csrf: document.querySelector('meta[name=csrf-token]').content, do: 'create', name: 'x', minutes: '30', priceYuan: '1', depositYuan: '0'})) {
			const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
		}
		const b = document.createElement('button'); b.id = 'forged'; f.appendChild(b); document.body.appendChild(f); return true;
	})()`
	eval[bool](mine, forged)
	if st := mine.submit("#forged"); st != http.StatusForbidden || !strings.Contains(mine.text("#error"), "请店主操作") {
		t.Fatalf("a staff member's service form: %d %q", st, mine.text("#error"))
	}
	s.unchanged(before, "a staff member's refused menu change")
	mysqltest.CheckInvariant(t, s.store)
}

// newStaff makes a staff account on the 员工 page and answers its password.
func (b *browser) newStaff(name string) string {
	b.t.Helper()
	if st := b.open("team"); st != http.StatusOK {
		b.t.Fatalf("team: %d", st)
	}
	b.setValue(`#newstaff input[name="name"]`, name)
	if st := b.submit("#newstaff button"); st != http.StatusOK {
		b.t.Fatalf("create: %d", st)
	}
	return b.text("#secret")
}

// idOf answers the one number a query selects.
func (s *system) idOf(query string) int64 {
	s.t.Helper()
	var id int64
	if err := s.store.SQL().QueryRow(query).Scan(&id); err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
	return id
}
