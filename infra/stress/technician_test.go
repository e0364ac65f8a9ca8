package stress

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// The salon also sells a technician's time for a service: her cells of the
// grid, a service of N minutes holding N/GRID_MINUTES consecutive ones. The
// model sets up a small menu at the start and drives it beside the seats.

type menuService struct {
	id      int64
	minutes int
	deposit int64
}

// menu is what the model set up: the services, the technicians with the
// services each does, and the block of cells every technician has.
type menu struct {
	services  []menuService
	techs     []int64
	does      map[int64][]int64 // technician -> services
	cellStart time.Time         // the first cell of every technician's block
	cells     int               // cells per technician, one after another
	grid      time.Duration
	offMu     sync.Mutex // time off and its undoing, one at a time, so their effect can be checked exactly
}

// setUpMenu adds three services (30 minutes and free, confirmed at once; 60
// and 120 with a deposit, held until paid) and three technicians who do two or
// three of them, each with a block of cells a little over a day ahead.
func (m *model) setUpMenu() {
	s := m.s
	short := mysqltest.AddService(s.t, s.store, "手部护理", 30, 6800, 0)
	mid := mysqltest.AddService(s.t, s.store, "单色美甲", 60, 12800, 3000)
	long := mysqltest.AddService(s.t, s.store, "延长甲", 120, 29800, 5000)
	m.menu.services = []menuService{{short, 30, 0}, {mid, 60, 3000}, {long, 120, 5000}}
	m.menu.does = map[int64][]int64{}
	for _, t := range []struct {
		name     string
		services []int64
	}{{"小美", []int64{short, mid, long}}, {"小丽", []int64{mid, long}}, {"阿芳", []int64{short, mid}}} {
		id := mysqltest.AddTechnician(s.t, s.store, t.name, t.services...)
		m.menu.techs = append(m.menu.techs, id)
		m.menu.does[id] = t.services
	}
	m.menu.grid = time.Duration(s.store.Policy.GridMinutes) * time.Minute
	m.menu.cellStart = mysqltest.GridStart(s.t, s.store, 30*time.Hour)
	m.menu.cells = 8 * int(time.Hour/m.menu.grid)
	for _, t := range m.menu.techs {
		mysqltest.LayCells(s.t, s.store, t, m.menu.cellStart, m.menu.cells)
	}
	loc, _ := time.LoadLocation("Asia/Shanghai")
	for _, at := range []time.Time{m.menu.cellStart, m.menu.cellStart.Add(time.Duration(m.menu.cells) * m.menu.grid)} {
		if date := at.In(loc).Format("2006-01-02"); !slices.Contains(m.dates, date) {
			m.dates = append(m.dates, date)
		}
	}
}

// start is the start of cell k of the block, in the shop's time as the API takes it.
func (m *model) start(k int) time.Time {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	return m.menu.cellStart.Add(time.Duration(k) * m.menu.grid).In(loc)
}

// anyStart is a start in the block, now and then one whose service would run
// past the block's end (422: a cell is not open).
func (m *model) anyStart(r *rand.Rand) time.Time { return m.start(r.IntN(m.menu.cells)) }

func (m *model) doTechnician(o op, r *rand.Rand, c *customer) {
	switch o.kind {
	case "tech-reserve":
		m.techReserve(o, r, c)
	case "tech-move":
		m.techMove(r, false)
	case "tech-salon-move":
		m.techMove(r, true)
	case "tech-walk-in":
		m.techWalkIn(r)
	case "tech-off":
		m.techOff(r)
	case "tech-back":
		m.techBack(r)
	}
}

// techReserve books a service at a start, with a technician named (now and
// then one who does not do it: 422) or with any. With a key half the time, and
// then retried with it on 5xx: every 201 of one key names the same booking.
func (m *model) techReserve(o op, r *rand.Rand, c *customer) {
	svc := m.menu.services[r.IntN(len(m.menu.services))]
	at := m.anyStart(r)
	body := map[string]any{"serviceId": svc.id, "startAt": at.Format(time.RFC3339)}
	var named int64
	if r.IntN(2) == 0 {
		named = m.menu.techs[r.IntN(len(m.menu.techs))]
		body["technicianId"] = named
		m.count("tech-reserve-named")
	} else {
		m.count("tech-reserve-any")
	}
	var hdr []string
	retries := 0
	if r.IntN(2) == 0 {
		hdr, retries = []string{"Idempotency-Key", fmt.Sprintf("tkey-%d", o.idx)}, o.n
	}
	var first int64
	for attempt := 0; attempt <= retries; attempt++ {
		a := m.s.call("POST", "/bookings", c.token, body, hdr...)
		m.expect("tech-reserve", a, "201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "422 SLOT_NOT_BOOKABLE")
		switch {
		case a.Status == http.StatusCreated:
			id := bookingIDOf(a)
			if first != 0 && id != first {
				m.s.violate("tech-reserve key %v named booking %d, then %d", hdr, first, id)
			}
			first = id
			m.techBooked("tech-reserve", svc, at, named, a, false)
			m.mu.Lock()
			m.owner[id] = o.cust
			m.mu.Unlock()
			if r.IntN(4) == 0 && hdr != nil {
				continue // the answer never reached the phone: she asks again with her key
			}
			return
		case a.Status >= 500:
			continue
		default:
			return
		}
	}
}

// techBooked checks a 201 of a service's booking: the service, the start, the
// technician named (or, for any, one who does the service), and the status
// its deposit decides (a walk-in is confirmed and free). A reserve answered
// again by its key may name a booking moved since: its start is not checked then.
func (m *model) techBooked(what string, svc menuService, at time.Time, named int64, a answer, walkIn bool) {
	b, _ := a.JSON["booking"].(map[string]any)
	id := bookingIDOf(a)
	if id <= 0 || b == nil {
		m.s.violate("%s answered 201 without a booking: %s", what, a.Body)
		return
	}
	tech, _ := b["technicianId"].(float64)
	if sid, _ := b["serviceId"].(float64); int64(sid) != svc.id {
		m.s.violate("%s of service %d answered booking %d of service %v", what, svc.id, id, b["serviceId"])
	}
	if named != 0 && int64(tech) != named && !m.wasMoved(id) {
		m.s.violate("%s with technician %d answered booking %d with technician %v", what, named, id, b["technicianId"])
	}
	if !slices.Contains(m.menu.does[int64(tech)], svc.id) {
		m.s.violate("%s of service %d gave booking %d to technician %v, who does not do it", what, svc.id, id, b["technicianId"])
	}
	got, err := time.Parse(time.RFC3339, fmt.Sprint(b["startAt"]))
	if (err != nil || !got.Equal(at)) && !m.wasMoved(id) {
		m.s.violate("%s at %s answered booking %d at %v", what, at.Format(time.RFC3339), id, b["startAt"])
	}
	st, _ := b["status"].(string)
	switch {
	case walkIn:
		if st != "confirmed" || b["amountFen"] != 0.0 {
			m.s.violate("%s answered %v", what, b)
		}
	case svc.deposit == 0 && st != "confirmed" && !m.wasMoved(id):
		m.s.violate("%s of a service without deposit answered booking %d %s", what, id, st)
	case svc.deposit > 0 && st == "pending_payment" && a.JSON["payment"] == nil:
		m.s.violate("%s answered pending booking %d without payment parameters", what, id)
	}
}

// techMove moves a confirmed booking of a service to a start of the block,
// with her technician (technicianId left out) or one named. The customer's
// move: her own, under the slot rules; the salon's: any booking of a service,
// now and then one in any status (then a clean refusal).
func (m *model) techMove(r *rand.Rand, bySalon bool) {
	statuses := "1"
	if bySalon && r.IntN(5) == 0 {
		statuses = "0, 1, 2, 3, 4, 5"
	}
	who := `AND openid LIKE 'o-stress-%'`
	if bySalon {
		who = ""
	}
	// The statuses are constants of this function, not input.
	rows, err := m.s.store.SQL().Query(`SELECT book_id, COALESCE(openid, ''), technician_id FROM t_booking
		WHERE technician_id IS NOT NULL AND status IN (` + statuses + `) ` + who + ` ORDER BY book_id`)
	if err != nil {
		return // a fault killed the checker's connection: no pick
	}
	type pick struct {
		id     int64
		openid string
		tech   int64
	}
	var picks []pick
	for rows.Next() {
		var p pick
		if rows.Scan(&p.id, &p.openid, &p.tech) == nil {
			picks = append(picks, p)
		}
	}
	rows.Close()
	if rows.Err() != nil || len(picks) == 0 {
		return
	}
	p := picks[r.IntN(len(picks))]
	at := m.anyStart(r)
	body := map[string]any{"startAt": at.Format(time.RFC3339)}
	tech := p.tech
	if r.IntN(2) == 0 {
		tech = m.menu.techs[r.IntN(len(m.menu.techs))]
		body["technicianId"] = tech
	}
	var a answer
	what := "tech-move"
	if bySalon {
		what = "tech-salon-move"
		a = m.s.call("POST", "/admin/bookings/"+itoa(p.id)+"/reschedule", adminToken, body)
		m.expect(what, a, "200", "409 INVALID_STATE", "409 SOLD_OUT", "422 SLOT_NOT_BOOKABLE")
	} else {
		cust, err := strconv.Atoi(strings.TrimPrefix(p.openid, "o-stress-"))
		if err != nil || cust >= len(m.customers) {
			return
		}
		a = m.s.call("POST", "/bookings/"+itoa(p.id)+"/reschedule", m.customers[cust].token, body)
		m.expect(what, a, "200", "409 INVALID_STATE", "409 LATE_RESCHEDULE", "409 RESCHEDULE_LIMIT", "409 SOLD_OUT", "422 SLOT_NOT_BOOKABLE")
	}
	if a.Status != http.StatusOK {
		return
	}
	m.mu.Lock()
	m.moves[what]++
	m.mu.Unlock()
	b, _ := a.JSON["booking"].(map[string]any)
	got, err := time.Parse(time.RFC3339, fmt.Sprint(b["startAt"]))
	st, _ := b["status"].(string)
	if err != nil || !got.Equal(at) || b["bookingId"] != float64(p.id) || b["technicianId"] != float64(tech) || st != "confirmed" {
		m.s.violate("%s of booking %d to %s with technician %d answered 200 with %v", what, p.id, at.Format(time.RFC3339), tech, b)
	}
}

// techWalkIn: the salon books a service for someone at the counter or on the
// phone, at a start of the block (now and then without one: the cell running
// now, which no technician has), with a technician named or any.
func (m *model) techWalkIn(r *rand.Rand) {
	svc := m.menu.services[r.IntN(len(m.menu.services))]
	body := map[string]any{"serviceId": svc.id, "name": "到店顾客"}
	if n := r.IntN(4); n > 0 {
		body["phone"] = fmt.Sprintf("1390000000%d", n)
	}
	at := m.anyStart(r)
	if r.IntN(10) == 0 {
		at = time.Time{}
	} else {
		body["startAt"] = at.Format(time.RFC3339)
	}
	var named int64
	if r.IntN(2) == 0 {
		named = m.menu.techs[r.IntN(len(m.menu.techs))]
		body["technicianId"] = named
	}
	a := m.s.call("POST", "/admin/bookings", adminToken, body)
	m.expect("tech-walk-in", a, "201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "422 SLOT_NOT_BOOKABLE")
	if a.Status == http.StatusCreated {
		if at.IsZero() {
			m.s.violate("tech-walk-in without a start booked a cell running now, which no technician has: %s", a.Body)
			return
		}
		m.techBooked("tech-walk-in", svc, at, named, a, true)
	}
}

// techOff closes a range of one technician's cells, half the time a range over
// a cell a booking holds (which must be refused whole). Offs and their
// undoing run one at a time, so the cells of the range change only by this
// call and by nothing else: after 200 each is closed, and closed counts the
// ones that were open; after 409 every one that was open still is.
func (m *model) techOff(r *rand.Rand) {
	m.menu.offMu.Lock()
	defer m.menu.offMu.Unlock()
	db := m.s.store.SQL()
	tech := m.menu.techs[r.IntN(len(m.menu.techs))]
	from := m.anyStart(r)
	if r.IntN(2) == 0 {
		var held time.Time
		var t int64
		err := db.QueryRow(`SELECT s.start_at, s.technician_id FROM t_booking_slot bs JOIN t_slot s ON s.slot_id = bs.slot_id
			WHERE s.technician_id IS NOT NULL ORDER BY bs.book_id DESC, s.start_at LIMIT 1 OFFSET ?`, r.IntN(20)).Scan(&held, &t)
		if err == nil {
			loc, _ := time.LoadLocation("Asia/Shanghai")
			tech, from = t, held.In(loc).Add(-time.Duration(r.IntN(2))*m.menu.grid)
		}
	}
	to := from.Add(time.Duration(1+r.IntN(3)) * m.menu.grid)
	if to.Format("2006-01-02") != from.Format("2006-01-02") {
		return // a range within one shop day only
	}
	openBefore, err := m.openCells(tech, from, to)
	if err != nil {
		return
	}
	m.count("tech-off-asked")
	a := m.s.call("POST", "/admin/technicians/"+itoa(tech)+"/off", adminToken,
		map[string]any{"date": from.Format("2006-01-02"), "from": from.Format("15:04"), "to": to.Format("15:04")})
	m.expect("tech-off", a, "200", "409 INVALID_STATE")
	openAfter, err := m.openCells(tech, from, to)
	if err != nil {
		return
	}
	switch a.Status {
	case http.StatusOK:
		m.count("tech-off-closed")
		if closed, _ := a.JSON["closed"].(float64); len(openAfter) != 0 || int(closed) != len(openBefore) {
			m.s.violate("time off of technician %d %s-%s answered 200 closed=%v: %d cells were open, %d still are",
				tech, from.Format(time.RFC3339), to.Format("15:04"), a.JSON["closed"], len(openBefore), len(openAfter))
		}
	case http.StatusConflict:
		m.count("tech-off-refused")
		if list, _ := a.JSON["bookings"].([]any); len(list) == 0 {
			m.s.violate("time off refused without the bookings in the way: %s", a.Body)
		}
		if !slices.Equal(openBefore, openAfter) {
			m.s.violate("time off of technician %d %s-%s refused, yet the open cells went from %v to %v",
				tech, from.Format(time.RFC3339), to.Format("15:04"), openBefore, openAfter)
		}
	}
}

// openCells lists the technician's open cells that start in [from, to).
func (m *model) openCells(tech int64, from, to time.Time) ([]int64, error) {
	rows, err := m.s.store.SQL().Query(`SELECT slot_id FROM t_slot WHERE technician_id = ? AND is_open = 1
		AND start_at >= ? AND start_at < ? ORDER BY slot_id`, tech, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// techBack: the salon takes a technician's time off back, so that a long run
// does not close every cell. The product has no call for it (hours skip the
// cells there are), so the model reopens her closed cells nobody holds in the
// database, as it moves slots in time.
func (m *model) techBack(r *rand.Rand) {
	m.menu.offMu.Lock()
	defer m.menu.offMu.Unlock()
	m.s.store.SQL().Exec(`UPDATE t_slot SET is_open = 1 WHERE technician_id = ? AND is_open = 0 AND booked = 0`,
		m.menu.techs[r.IntN(len(m.menu.techs))])
}

// checkTechnicians: no two bookings holding a technician's time overlap, and
// no closed cell is held (time off over a booking is refused whole; moves and
// walk-ins take open cells only).
func (m *model) checkTechnicians() {
	db := m.s.store.SQL()
	rows, err := db.Query(`SELECT a.book_id, b.book_id, a.technician_id
		FROM t_booking a JOIN t_booking b ON b.technician_id = a.technician_id AND b.book_id > a.book_id
		JOIN t_slot fa ON fa.slot_id = a.slot_id JOIN t_slot fb ON fb.slot_id = b.slot_id
		WHERE a.status IN (0, 1, 2, 5) AND b.status IN (0, 1, 2, 5)
		  AND fa.start_at < fb.start_at + INTERVAL b.minutes MINUTE AND fb.start_at < fa.start_at + INTERVAL a.minutes MINUTE
		ORDER BY a.book_id, b.book_id`)
	if err != nil {
		m.s.violate("checker could not read the technicians' bookings: %v", err)
		return
	}
	for rows.Next() {
		var x, y, t int64
		if rows.Scan(&x, &y, &t) == nil {
			m.s.violate("bookings %d and %d of technician %d overlap in time", x, y, t)
		}
	}
	rows.Close()
	var closedHeld int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t_booking_slot bs JOIN t_slot s ON s.slot_id = bs.slot_id
		JOIN t_booking b ON b.book_id = bs.book_id
		WHERE s.technician_id IS NOT NULL AND s.is_open = 0 AND b.status IN (0, 1, 2, 5)`).Scan(&closedHeld); err == nil && closedHeld > 0 {
		m.s.violate("%d closed cells are held by bookings", closedHeld)
	}
}

// techOutcome counts the services' bookings by status (the expired ones are
// multi-cell holds the release run let go) and the moves of them answered 200.
func (m *model) techOutcome(c map[string]int) {
	rows, err := m.s.store.SQL().Query(`SELECT status, minutes, COUNT(*) FROM t_booking WHERE technician_id IS NOT NULL GROUP BY status, minutes`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var st, minutes, n int
		if rows.Scan(&st, &minutes, &n) == nil {
			c["tech-bookings-"+booking.Status(st).String()] += n
			if booking.Status(st) == booking.StatusExpired && minutes > int(m.menu.grid/time.Minute) {
				c["tech-expired-multicell"] += n
			}
		}
	}
}
