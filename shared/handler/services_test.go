package handler

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"salon/infra/testkit"
	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// salonMenu is a menu of two services and three technicians with cells from
// start (50 h ahead, on the grid) for four hours: what the tests of the
// service routes book.
type salonMenu struct {
	manicure, extension int64 // 60 min 128元 deposit 30元; 120 min 298元, no deposit
	mei, li, fang       int64 // 美 and 丽 do both; 芳 only the manicure
	start               time.Time
	loc                 *time.Location
}

func (s *system) salonMenu() salonMenu {
	s.t.Helper()
	m := salonMenu{loc: shanghai(s.t)}
	m.manicure = mysqltest.AddService(s.t, s.store, "单色美甲", 60, 12800, 3000)
	m.extension = mysqltest.AddService(s.t, s.store, "延长甲", 120, 29800, 0)
	m.mei = mysqltest.AddTechnician(s.t, s.store, "小美", m.manicure, m.extension)
	m.li = mysqltest.AddTechnician(s.t, s.store, "小丽", m.manicure, m.extension)
	m.fang = mysqltest.AddTechnician(s.t, s.store, "阿芳", m.manicure)
	// 10:00 shop time two days ahead, so that the eight cells (four hours)
	// fall on one shop day whatever the hour of the run.
	ahead := mysqltest.GridStart(s.t, s.store, 50*time.Hour).In(m.loc)
	m.start = time.Date(ahead.Year(), ahead.Month(), ahead.Day(), 10, 0, 0, 0, m.loc)
	for _, tech := range []int64{m.mei, m.li, m.fang} {
		mysqltest.LayCells(s.t, s.store, tech, m.start, 8)
	}
	return m
}

// at is the start cells after m.start, as the API writes it (RFC 3339, shop time).
func (m salonMenu) at(cells int) string {
	return m.start.Add(time.Duration(cells) * 30 * time.Minute).In(m.loc).Format(time.RFC3339)
}

func (m salonMenu) date() string { return m.start.In(m.loc).Format("2006-01-02") }

// menuState is dbState with the menu and the technicians, for the refusals
// of the routes that change them.
func (s *system) menuState() string {
	s.t.Helper()
	st := s.dbState()
	for _, q := range []string{
		`SELECT CONCAT_WS('|', service_id, name, minutes, price_fen, deposit_fen, active) FROM t_service ORDER BY service_id`,
		`SELECT CONCAT_WS('|', technician_id, name, active, COALESCE(staff_id, 0)) FROM t_technician ORDER BY technician_id`,
		`SELECT CONCAT_WS('|', technician_id, service_id) FROM t_technician_service ORDER BY technician_id, service_id`,
		`SELECT CONCAT_WS('|', book_id, slot_id, COALESCE(service_id, 0), COALESCE(technician_id, 0), price_fen, amount_fen) FROM t_booking ORDER BY book_id`,
		`SELECT CONCAT_WS('|', book_id, slot_id) FROM t_booking_slot ORDER BY book_id, slot_id`,
	} {
		rows, err := s.store.SQL().Query(q)
		if err != nil {
			s.t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				s.t.Fatal(err)
			}
			st += line + "\n"
		}
		rows.Close()
	}
	return st
}

// menuUnchanged fails the test if the database, menu included, is not as
// before (menuState).
func (s *system) menuUnchanged(before, what string) {
	s.t.Helper()
	if after := s.menuState(); after != before {
		s.t.Errorf("%s changed the database:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// wantServiceBooking checks the service fields of a booking answer.
func wantServiceBooking(t *testing.T, b map[string]any, service int64, serviceName string, tech int64, techName string, priceFen, amountFen float64) {
	t.Helper()
	if b["serviceId"] != float64(service) || b["serviceName"] != serviceName || b["technicianId"] != float64(tech) ||
		b["technicianName"] != techName || b["priceFen"] != priceFen || b["amountFen"] != amountFen {
		t.Errorf("booking %v: want service %d %s, technician %d %s, priceFen %v amountFen %v", b, service, serviceName, tech, techName, priceFen, amountFen)
	}
}

// TestServicesAndAvailability: GET /services lists the active services with
// the technicians who do them; GET /availability the free starts of a day
// for a service, each with the technicians free, in pick order, and only
// hers with technicianId; a taken start drops out; every bad query is 400,
// an unknown service or technician 404.
func TestServicesAndAvailability(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := s.salonMenu()
	retired := mysqltest.AddService(t, s.store, "旧款", 30, 100, 0)
	if a := s.call("PATCH", "/admin/services/"+itoa64(retired), testAdmin, map[string]any{"active": false}); a.Status != http.StatusOK {
		t.Fatalf("retire: %d %s", a.Status, a.Body)
	}

	a := s.call("GET", "/services", "", nil)
	services, _ := a.JSON["services"].([]any)
	if a.Status != http.StatusOK || len(services) != 2 {
		t.Fatalf("GET /services: %d %s", a.Status, a.Body)
	}
	manicure := obj(t, services[0])
	if manicure["serviceId"] != float64(m.manicure) || manicure["name"] != "单色美甲" || manicure["minutes"] != float64(60) ||
		manicure["priceFen"] != float64(12800) || manicure["depositFen"] != float64(3000) || len(manicure["technicians"].([]any)) != 3 {
		t.Errorf("manicure %v", manicure)
	}
	if techs := obj(t, services[1])["technicians"].([]any); len(techs) != 2 || obj(t, techs[0])["name"] != "小美" {
		t.Errorf("extension's technicians %v", techs)
	}

	avail := func(query string) answer { return s.call("GET", "/availability?"+query, "", nil) }
	q := "date=" + m.date() + "&serviceId=" + itoa64(m.extension)
	a = avail(q)
	starts, _ := a.JSON["starts"].([]any)
	// Eight cells of two technicians: a 120-minute service starts at the
	// first five of them.
	if a.Status != http.StatusOK || a.JSON["date"] != m.date() || a.JSON["serviceId"] != float64(m.extension) || len(starts) != 5 {
		t.Fatalf("availability: %d %s", a.Status, a.Body)
	}
	first := obj(t, starts[0])
	if first["startAt"] != m.at(0) || first["endAt"] != m.at(4) || len(first["technicians"].([]any)) != 2 ||
		obj(t, first["technicians"].([]any)[0])["technicianId"] != float64(m.mei) {
		t.Errorf("first start %v", first)
	}
	if a := avail(q + "&technicianId=" + itoa64(m.fang)); a.Status != http.StatusOK || len(a.JSON["starts"].([]any)) != 0 {
		t.Errorf("阿芳 does not do extensions: %d %s", a.Status, a.Body)
	}

	// 小美 booked at the first start: she is no longer free there, 小丽 is.
	if a := s.call("POST", "/bookings", s.token("o-av"), map[string]any{"serviceId": m.extension, "startAt": m.at(0), "technicianId": m.mei}); a.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	a = avail(q + "&technicianId=" + itoa64(m.mei))
	if starts := a.JSON["starts"].([]any); a.Status != http.StatusOK || len(starts) != 1 || obj(t, starts[0])["startAt"] != m.at(4) {
		t.Errorf("小美 after her booking: %d %s", a.Status, a.Body)
	}
	a = avail(q)
	if first := obj(t, a.JSON["starts"].([]any)[0]); first["startAt"] != m.at(0) || len(first["technicians"].([]any)) != 1 ||
		obj(t, first["technicians"].([]any)[0])["name"] != "小丽" {
		t.Errorf("the first start after 小美's booking: %v", first)
	}

	for _, bad := range []string{
		"serviceId=" + itoa64(m.manicure), "date=" + m.date(), "date=tomorrow&serviceId=1", "date=" + m.date() + "&serviceId=abc",
		"date=" + m.date() + "&serviceId=0", "date=" + m.date() + "&serviceId=-1", "date=" + m.date() + "&serviceId=1&serviceId=2",
		"date=" + m.date() + "&serviceId=" + itoa64(m.manicure) + "&technicianId=", "date=" + m.date() + "&serviceId=+1",
	} {
		s.wantError(avail(bad), 400, booking.EBADREQUEST)
	}
	s.wantError(avail("date="+m.date()+"&serviceId=999999"), 404, booking.ENOTFOUND)
	s.wantError(avail("date="+m.date()+"&serviceId="+itoa64(retired)), 404, booking.ENOTFOUND)
	s.wantError(avail(q+"&technicianId=999999"), 404, booking.ENOTFOUND)
}

// TestReserveAService: the service form of POST /bookings books the
// technician picked (or named) with the deposit to pay, its answers and
// GET /bookings/{id} carry the service, the technician and the full price;
// an Idempotency-Key replays it; every refusal answers its code and changes
// nothing; a seat of a slot answers null for the service fields.
func TestReserveAService(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := s.salonMenu()
	slot := s.slot(30*time.Hour, 2, 5000)
	mysqltest.AddTechnician(t, s.store, "小红") // does nothing: never picked

	reserve := func(openid string, body any, headers ...string) answer {
		return s.call("POST", "/bookings", s.token(openid), body, headers...)
	}
	a := reserve("o-svc", map[string]any{"serviceId": m.manicure, "startAt": m.at(2)}, "Idempotency-Key", "k-svc-1")
	if a.Status != http.StatusCreated || a.JSON["payment"] == nil {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	wantServiceBooking(t, b, m.manicure, "单色美甲", m.mei, "小美", 12800, 3000)
	if b["status"] != "pending_payment" || b["startAt"] != m.at(2) || b["endAt"] != m.at(4) {
		t.Errorf("booking %v", b)
	}
	id := int64(b["bookingId"].(float64))
	if again := reserve("o-svc", map[string]any{"serviceId": m.manicure, "startAt": m.at(2)}, "Idempotency-Key", "k-svc-1"); again.Status != http.StatusCreated ||
		obj(t, again.JSON["booking"])["bookingId"] != b["bookingId"] {
		t.Errorf("replay: %d %s", again.Status, again.Body)
	}
	s.payFor(id)
	a = s.call("GET", "/bookings/"+itoa64(id), s.token("o-svc"), nil)
	wantServiceBooking(t, obj(t, a.JSON["booking"]), m.manicure, "单色美甲", m.mei, "小美", 12800, 3000)

	// No deposit: confirmed at once, no payment; 阿芳 named.
	a = reserve("o-svc-2", map[string]any{"serviceId": m.extension, "startAt": m.at(0), "technicianId": m.li})
	if a.Status != http.StatusCreated || a.JSON["payment"] != nil || obj(t, a.JSON["booking"])["status"] != "confirmed" {
		t.Fatalf("reserve without deposit: %d %s", a.Status, a.Body)
	}
	wantServiceBooking(t, obj(t, a.JSON["booking"]), m.extension, "延长甲", m.li, "小丽", 29800, 0)

	// A seat of a slot: the service fields null, its price the slot's.
	_, a = s.reserve("o-seat", slot)
	if sb := obj(t, a.JSON["booking"]); a.Status != http.StatusCreated || sb["serviceId"] != nil || sb["serviceName"] != nil ||
		sb["technicianId"] != nil || sb["technicianName"] != nil || sb["priceFen"] != float64(5000) {
		t.Errorf("seat booking: %d %s", a.Status, a.Body)
	}

	before := s.menuState()
	for _, body := range []any{
		map[string]any{"serviceId": m.manicure},
		map[string]any{"startAt": m.at(4)},
		map[string]any{"slotId": slot, "serviceId": m.manicure, "startAt": m.at(4)},
		map[string]any{"slotId": slot, "technicianId": m.fang},
		map[string]any{"serviceId": m.manicure, "startAt": "14:00"},
		map[string]any{"serviceId": m.manicure, "startAt": "2026-05-01 14:00"},
		map[string]any{"serviceId": m.manicure, "startAt": nil},
		map[string]any{"serviceId": m.manicure, "startAt": m.at(4), "technicianId": nil},
		map[string]any{"serviceId": nil, "startAt": m.at(4)},
		map[string]any{"serviceId": 0, "startAt": m.at(4)},
		map[string]any{"serviceId": m.manicure, "startAt": m.at(4), "technicianId": 0},
		map[string]any{"serviceId": "1", "startAt": m.at(4)},
		map[string]any{"serviceId": m.manicure, "startAt": m.at(4), "extra": 1},
		`{"serviceId":1,"serviceId":2,"startAt":"` + m.at(4) + `"}`,
	} {
		s.wantError(reserve("o-new", body), 400, booking.EBADREQUEST)
	}
	s.wantError(s.call("POST", "/bookings", "", map[string]any{"serviceId": m.manicure, "startAt": m.at(4)}), 401, booking.EUNAUTHORIZED)
	s.wantError(reserve("o-new", map[string]any{"serviceId": 999999, "startAt": m.at(4)}), 404, booking.ENOTFOUND)
	s.wantError(reserve("o-new", map[string]any{"serviceId": m.manicure, "startAt": m.at(4), "technicianId": 999999}), 404, booking.ENOTFOUND)
	offGrid := m.start.Add(40 * time.Minute).In(m.loc).Format(time.RFC3339)
	s.wantError(reserve("o-new", map[string]any{"serviceId": m.manicure, "startAt": offGrid}), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(reserve("o-new", map[string]any{"serviceId": m.manicure, "startAt": m.at(7)}), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(reserve("o-new", map[string]any{"serviceId": m.extension, "startAt": m.at(4), "technicianId": m.fang}), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(reserve("o-new", map[string]any{"serviceId": m.manicure, "startAt": m.at(2), "technicianId": m.mei}), 409, booking.ESOLDOUT)
	s.wantError(reserve("o-svc", map[string]any{"serviceId": m.manicure, "startAt": m.at(5)}), 409, booking.EACTIVEBOOKINGEXISTS)
	s.wantError(reserve("o-svc", map[string]any{"serviceId": m.extension, "startAt": m.at(2)}, "Idempotency-Key", "k-svc-1"), 409, booking.EINVALIDSTATE)
	s.menuUnchanged(before, "the refused reservations")
}

// TestRescheduleAServiceByHTTP: the customer moves her booking of a service
// to another start, the salon to another start and technician; the slot form
// and the start form refuse each other's fields, a seat-mode booking refuses
// a start (409 INVALID_STATE), and each refusal changes nothing.
func TestRescheduleAServiceByHTTP(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := s.salonMenu()
	slot := s.slot(30*time.Hour, 2, 5000)
	seat := s.paidBooking("o-mv-seat", slot)
	a := s.call("POST", "/bookings", s.token("o-mv"), map[string]any{"serviceId": m.extension, "startAt": m.at(0)})
	if a.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	id := itoa64(int64(obj(t, a.JSON["booking"])["bookingId"].(float64)))
	move := func(openid, id string, body any) answer {
		return s.call("POST", "/bookings/"+id+"/reschedule", s.token(openid), body)
	}
	salonMove := func(id string, body any) answer {
		return s.call("POST", "/admin/bookings/"+id+"/reschedule", testAdmin, body)
	}

	before := s.menuState()
	for _, body := range []any{
		map[string]any{},
		map[string]any{"startAt": nil},
		map[string]any{"startAt": "10:00"},
		map[string]any{"startAt": m.at(2), "technicianId": nil},
		map[string]any{"startAt": m.at(2), "serviceId": m.extension},
		map[string]any{"startAt": m.at(2), "slotId": slot},
		map[string]any{"technicianId": m.li},
	} {
		s.wantError(move("o-mv", id, body), 400, booking.EBADREQUEST)
		s.wantError(salonMove(id, body), 400, booking.EBADREQUEST)
	}
	s.wantError(salonMove(id, map[string]any{"startAt": m.at(2), "fromSlotId": slot}), 400, booking.EBADREQUEST)
	s.wantError(move("o-other", id, map[string]any{"startAt": m.at(2)}), 404, booking.ENOTFOUND)
	s.wantError(move("o-mv", id, map[string]any{"startAt": m.at(2), "technicianId": m.fang}), 422, booking.ESLOTNOTBOOKABLE)
	s.wantError(move("o-mv", id, map[string]any{"slotId": slot}), 409, booking.EINVALIDSTATE)
	s.wantError(move("o-mv-seat", itoa64(seat), map[string]any{"startAt": m.at(2)}), 409, booking.EINVALIDSTATE)
	s.wantError(salonMove(itoa64(seat), map[string]any{"startAt": m.at(2)}), 409, booking.EINVALIDSTATE)
	s.menuUnchanged(before, "the refused moves")

	a = move("o-mv", id, map[string]any{"startAt": m.at(2)})
	if a.Status != http.StatusOK {
		t.Fatalf("customer's move: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	wantServiceBooking(t, b, m.extension, "延长甲", m.mei, "小美", 29800, 0)
	if b["startAt"] != m.at(2) || b["endAt"] != m.at(6) {
		t.Errorf("moved: %v", b)
	}
	a = salonMove(id, map[string]any{"startAt": m.at(4), "technicianId": m.li})
	if a.Status != http.StatusOK || obj(t, a.JSON["booking"])["customer"] == nil {
		t.Fatalf("salon's move: %d %s", a.Status, a.Body)
	}
	b = obj(t, a.JSON["booking"])
	wantServiceBooking(t, b, m.extension, "延长甲", m.li, "小丽", 29800, 0)
	if b["startAt"] != m.at(4) || b["endAt"] != m.at(8) {
		t.Errorf("moved by the salon: %v", b)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestWalkInAService: POST /admin/bookings with the service form books a
// technician for someone at the counter, confirmed with amountFen 0 and the
// full price to pay in the shop; the forms refuse each other's fields.
func TestWalkInAService(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := s.salonMenu()
	slot := s.slot(30*time.Hour, 2, 5000)

	before := s.menuState()
	for _, body := range []map[string]any{
		{"name": "王女士"},
		{"slotId": slot, "serviceId": m.manicure, "name": "王女士"},
		{"slotId": slot, "startAt": m.at(0), "name": "王女士"},
		{"serviceId": m.manicure, "startAt": nil, "name": "王女士"},
		{"serviceId": m.manicure, "startAt": "10:30", "name": "王女士"},
		{"serviceId": m.manicure, "technicianId": 0, "name": "王女士"},
		{"serviceId": m.manicure, "startAt": m.at(0), "name": "王女士", "phone": nil},
	} {
		s.wantError(s.walkIn(body), 400, booking.EBADREQUEST)
	}
	s.wantError(s.walkIn(map[string]any{"serviceId": 999999, "startAt": m.at(0), "name": "王女士"}), 404, booking.ENOTFOUND)
	s.wantError(s.call("POST", "/admin/bookings", "", map[string]any{"serviceId": m.manicure, "startAt": m.at(0), "name": "王女士"}), 401, booking.EUNAUTHORIZED)
	s.menuUnchanged(before, "the refused walk-ins")

	a := s.walkIn(map[string]any{"serviceId": m.manicure, "startAt": m.at(0), "technicianId": m.fang, "name": "王女士", "phone": "13800138000"})
	if a.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	b := obj(t, a.JSON["booking"])
	wantServiceBooking(t, b, m.manicure, "单色美甲", m.fang, "阿芳", 12800, 0)
	if b["status"] != "confirmed" || b["startAt"] != m.at(0) || obj(t, b["customer"])["name"] != "王女士" {
		t.Errorf("walk-in %v", b)
	}
	s.wantError(s.walkIn(map[string]any{"serviceId": m.manicure, "startAt": m.at(1), "technicianId": m.fang, "name": "李女士"}), 409, booking.ESOLDOUT)
	mysqltest.CheckInvariant(t, s.store)
}

// Test130AnyTechnicianReservesByHTTP: 130 customers ask at once, through the
// gateway, for one start of a service without naming a technician, three
// technicians free: exactly three bookings, each with another technician,
// and 127 SOLD_OUT; the seats add up.
func Test130AnyTechnicianReservesByHTTP(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	m := s.salonMenu()
	const customers = 130
	tokens := make([]string, customers)
	for i := range tokens {
		tokens[i] = s.token("o-burst-" + itoa64(int64(i)))
	}
	body := map[string]any{"serviceId": m.manicure, "startAt": m.at(2)}
	answers := make([]testkit.Answer, customers)
	errs := make([]error, customers)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range customers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			answers[i], errs[i] = testkit.Client{URL: s.gw.URL}.Call("POST", "/bookings", tokens[i], body)
		}()
	}
	close(ready)
	wg.Wait()

	created, soldOut := 0, 0
	techs := map[any]bool{}
	for i, a := range answers {
		switch {
		case errs[i] != nil:
			t.Errorf("customer %d: %v", i, errs[i])
		case a.Status == http.StatusCreated:
			created++
			techs[obj(t, a.JSON["booking"])["technicianId"]] = true
		case a.Status == http.StatusConflict && a.Code() == booking.ESOLDOUT:
			soldOut++
		default:
			t.Errorf("customer %d: %d %s", i, a.Status, a.Body)
		}
	}
	if created != 3 || soldOut != customers-3 || len(techs) != 3 {
		t.Errorf("%d created on %d technicians, %d SOLD_OUT; want 3 on 3 and %d", created, len(techs), soldOut, customers-3)
	}
	if n := s.countRows("t_booking"); n != 3 {
		t.Errorf("%d bookings, want 3", n)
	}
	mysqltest.CheckInvariant(t, s.store)
}
