package handler

import (
	"net/http"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/mysql/mysqltest"
)

// TestAdminServices: the owner adds, lists and changes services; a staff
// member lists them and is refused a change (403); every bad body (null, a
// length off the grid, a deposit above the price, an unknown field) is 400,
// an unknown id 404, and each refusal changes nothing.
func TestAdminServices(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	asStaff := func(method, path string, body any) answer {
		return s.call(method, path, "", body, "Cookie", cookie, consoleauth.CSRFHeader, csrf)
	}

	a := s.call("POST", "/admin/services", testAdmin, map[string]any{"name": "单色美甲", "minutes": 60, "priceFen": 12800, "depositFen": 3000})
	if a.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.Status, a.Body)
	}
	sv := obj(t, a.JSON["service"])
	if sv["name"] != "单色美甲" || sv["minutes"] != float64(60) || sv["priceFen"] != float64(12800) || sv["depositFen"] != float64(3000) || sv["active"] != true {
		t.Errorf("created %v", sv)
	}
	id := itoa64(int64(sv["serviceId"].(float64)))

	before := s.menuState()
	for _, body := range []any{
		map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800},
		map[string]any{"name": "手部护理", "minutes": 45, "priceFen": 6800, "depositFen": 0},
		map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800, "depositFen": 6900},
		map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800, "depositFen": nil},
		map[string]any{"name": nil, "minutes": 30, "priceFen": 6800, "depositFen": 0},
		map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800, "depositFen": 0, "active": true},
		map[string]any{"name": "   ", "minutes": 30, "priceFen": 6800, "depositFen": 0},
		map[string]any{"name": "手部护理", "minutes": "30", "priceFen": 6800, "depositFen": 0},
	} {
		s.wantError(s.call("POST", "/admin/services", testAdmin, body), 400, booking.EBADREQUEST)
	}
	for _, body := range []any{
		map[string]any{},
		map[string]any{"active": nil},
		map[string]any{"priceFen": 1000},                    // below the deposit it keeps
		map[string]any{"minutes": 50},                       // off the grid of 30
		map[string]any{"minutes": 60, "price": 100},         // unknown field
		map[string]any{"depositFen": 3000, "DEPOSITFEN": 1}, // a name matched only case-insensitively
	} {
		s.wantError(s.call("PATCH", "/admin/services/"+id, testAdmin, body), 400, booking.EBADREQUEST)
	}
	s.wantError(s.call("PATCH", "/admin/services/999999", testAdmin, map[string]any{"active": false}), 404, booking.ENOTFOUND)
	s.wantError(s.call("PATCH", "/admin/services/abc", testAdmin, map[string]any{"active": false}), 400, booking.EBADREQUEST)
	s.wantError(s.call("GET", "/admin/services", "", nil), 401, booking.EUNAUTHORIZED)
	s.wantError(s.call("POST", "/admin/services", "wrong-token", map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800, "depositFen": 0}), 401, booking.EUNAUTHORIZED)
	s.wantError(asStaff("POST", "/admin/services", map[string]any{"name": "手部护理", "minutes": 30, "priceFen": 6800, "depositFen": 0}), 403, booking.EFORBIDDEN)
	s.wantError(asStaff("PATCH", "/admin/services/"+id, map[string]any{"active": false}), 403, booking.EFORBIDDEN)
	s.menuUnchanged(before, "the refused changes of the menu")

	a = s.call("PATCH", "/admin/services/"+id, testAdmin, map[string]any{"priceFen": 13800, "active": false})
	if sv := obj(t, a.JSON["service"]); a.Status != http.StatusOK || sv["priceFen"] != float64(13800) || sv["active"] != false || sv["minutes"] != float64(60) {
		t.Fatalf("update: %d %s", a.Status, a.Body)
	}
	// Inactive: off the public menu, still in the salon's list, to the staff too.
	if a := s.call("GET", "/services", "", nil); a.Status != http.StatusOK || len(a.JSON["services"].([]any)) != 0 {
		t.Errorf("public menu: %d %s", a.Status, a.Body)
	}
	a = asStaff("GET", "/admin/services", nil)
	if list, _ := a.JSON["services"].([]any); a.Status != http.StatusOK || len(list) != 1 || obj(t, list[0])["active"] != false {
		t.Errorf("staff's list: %d %s", a.Status, a.Body)
	}
}

// TestAdminTechnicians: the owner adds technicians with their services and
// staff account, changes them and unlinks the account with "staffId": null
// (the one request field where null is a value); the staff lists them and is
// refused a change; an account another technician has is 409, unknown ids
// 400 or 404, and every refusal changes nothing.
func TestAdminTechnicians(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	mei := createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	asStaff := func(method, path string, body any) answer {
		return s.call(method, path, "", body, "Cookie", cookie, consoleauth.CSRFHeader, csrf)
	}
	manicure := mysqltest.AddService(t, s.store, "单色美甲", 60, 12800, 3000)
	care := mysqltest.AddService(t, s.store, "手部护理", 30, 6800, 0)

	a := s.call("POST", "/admin/technicians", testAdmin, map[string]any{"name": "小美", "serviceIds": []int64{care, manicure}, "staffId": mei.ID})
	if a.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.Status, a.Body)
	}
	tech := obj(t, a.JSON["technician"])
	if tech["name"] != "小美" || tech["active"] != true || tech["staffId"] != float64(mei.ID) || len(tech["serviceIds"].([]any)) != 2 ||
		tech["serviceIds"].([]any)[0] != float64(manicure) {
		t.Errorf("created %v", tech)
	}
	id := itoa64(int64(tech["technicianId"].(float64)))
	a = s.call("POST", "/admin/technicians", testAdmin, map[string]any{"name": "阿芳", "serviceIds": []int64{}})
	if a.Status != http.StatusCreated || obj(t, a.JSON["technician"])["staffId"] != nil || len(obj(t, a.JSON["technician"])["serviceIds"].([]any)) != 0 {
		t.Fatalf("create without services: %d %s", a.Status, a.Body)
	}
	fang := itoa64(int64(obj(t, a.JSON["technician"])["technicianId"].(float64)))

	before := s.menuState()
	for _, body := range []any{
		map[string]any{"name": "小丽"},
		map[string]any{"name": "小丽", "serviceIds": nil},
		map[string]any{"name": "小丽", "serviceIds": []any{manicure, nil}},
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure}, "staffId": nil},
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure}, "staffId": 0},
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure}, "active": false},
		map[string]any{"name": "小丽", "serviceIds": []int64{0}},
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure, manicure}},       // a service named twice
		map[string]any{"name": "小丽", "serviceIds": []int64{care, manicure, care}},     // uniqueItems
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure, 999999, 999999}}, // twice, and unknown: the shape first
	} {
		s.wantError(s.call("POST", "/admin/technicians", testAdmin, body), 400, booking.EBADREQUEST)
	}
	// An id the request names that does not exist: 404, as for any other.
	for _, body := range []any{
		map[string]any{"name": "小丽", "serviceIds": []int64{999999}},
		map[string]any{"name": "小丽", "serviceIds": []int64{manicure, 999999}},
		map[string]any{"name": "小丽", "serviceIds": []int64{}, "staffId": 999999},
	} {
		s.wantError(s.call("POST", "/admin/technicians", testAdmin, body), 404, booking.ENOTFOUND)
	}
	for _, body := range []any{
		map[string]any{},
		map[string]any{"name": nil},
		map[string]any{"active": nil},
		map[string]any{"serviceIds": nil},
		map[string]any{"staffId": 0},
		map[string]any{"staffId": "1"},
		map[string]any{"serviceIds": []int64{care, care}},
	} {
		s.wantError(s.call("PATCH", "/admin/technicians/"+fang, testAdmin, body), 400, booking.EBADREQUEST)
	}
	for _, body := range []any{
		map[string]any{"serviceIds": []int64{999999}},
		map[string]any{"staffId": 999999},
		map[string]any{"name": "阿芳二", "serviceIds": []int64{care, 999999}},
	} {
		s.wantError(s.call("PATCH", "/admin/technicians/"+fang, testAdmin, body), 404, booking.ENOTFOUND)
	}
	s.wantError(s.call("POST", "/admin/technicians", testAdmin, map[string]any{"name": "小丽", "serviceIds": []int64{}, "staffId": mei.ID}), 409, booking.EINVALIDSTATE)
	s.wantError(s.call("PATCH", "/admin/technicians/"+fang, testAdmin, map[string]any{"staffId": mei.ID}), 409, booking.EINVALIDSTATE)
	s.wantError(s.call("PATCH", "/admin/technicians/999999", testAdmin, map[string]any{"active": false}), 404, booking.ENOTFOUND)
	s.wantError(s.call("GET", "/admin/technicians", "", nil), 401, booking.EUNAUTHORIZED)
	s.wantError(asStaff("POST", "/admin/technicians", map[string]any{"name": "小丽", "serviceIds": []int64{}}), 403, booking.EFORBIDDEN)
	s.wantError(asStaff("PATCH", "/admin/technicians/"+id, map[string]any{"staffId": nil}), 403, booking.EFORBIDDEN)
	s.menuUnchanged(before, "the refused changes of the technicians")

	a = asStaff("GET", "/admin/technicians", nil)
	if list, _ := a.JSON["technicians"].([]any); a.Status != http.StatusOK || len(list) != 2 {
		t.Fatalf("staff's list: %d %s", a.Status, a.Body)
	}
	a = s.call("PATCH", "/admin/technicians/"+id, testAdmin, map[string]any{"staffId": nil, "serviceIds": []int64{care}})
	if tech := obj(t, a.JSON["technician"]); a.Status != http.StatusOK || tech["staffId"] != nil || len(tech["serviceIds"].([]any)) != 1 || tech["name"] != "小美" {
		t.Fatalf("unlink: %d %s", a.Status, a.Body)
	}
	a = s.call("PATCH", "/admin/technicians/"+fang, testAdmin, map[string]any{"staffId": mei.ID, "active": false, "name": "阿芳姐"})
	if tech := obj(t, a.JSON["technician"]); a.Status != http.StatusOK || tech["staffId"] != float64(mei.ID) || tech["active"] != false || tech["name"] != "阿芳姐" {
		t.Fatalf("link to another: %d %s", a.Status, a.Body)
	}
}

// TestTechnicianHoursAndTimeOff: the owner lays a technician's cells (sent
// twice, the second makes none) and closes a part of a day; a time off over
// a booking is 409 INVALID_STATE naming the bookings in the way with their
// customers and closes nothing; bad clocks and dates are 400, an unknown
// technician 404, the staff 403.
func TestTechnicianHoursAndTimeOff(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	createStaff(t, s.svc(), "小丽", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小丽", techPassword)
	manicure := mysqltest.AddService(t, s.store, "单色美甲", 60, 12800, 3000)
	mei := itoa64(mysqltest.AddTechnician(t, s.store, "小美", manicure))
	loc := shanghai(t)
	now, err := s.store.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	day := now.In(loc).AddDate(0, 0, 3).Format("2006-01-02")
	hours := map[string]any{"from": day, "to": day, "open": "10:00", "close": "12:00"}

	a := s.call("POST", "/admin/technicians/"+mei+"/hours", testAdmin, hours)
	if a.Status != http.StatusCreated || a.JSON["created"] != float64(4) || a.JSON["skipped"] != float64(0) {
		t.Fatalf("hours: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/admin/technicians/"+mei+"/hours", testAdmin, hours); a.Status != http.StatusCreated || a.JSON["created"] != float64(0) || a.JSON["skipped"] != float64(4) {
		t.Fatalf("hours again: %d %s", a.Status, a.Body)
	}
	ten, _ := time.ParseInLocation("2006-01-02 15:04", day+" 10:00", loc)
	a = s.call("POST", "/admin/bookings", testAdmin, map[string]any{"serviceId": manicure, "startAt": ten.Add(time.Hour).Format(time.RFC3339), "name": "王女士"})
	if a.Status != http.StatusCreated {
		t.Fatalf("walk-in: %d %s", a.Status, a.Body)
	}
	booked := obj(t, a.JSON["booking"])["bookingId"]

	before := s.menuState()
	for _, body := range []map[string]any{
		{"from": day, "to": day, "open": "10:0", "close": "12:00"},
		{"from": day, "to": day, "open": "25:00", "close": "26:00"},
		{"from": day, "to": day, "open": "10:15", "close": "12:00"},
		{"from": day, "to": day, "open": "12:00", "close": "10:00"},
		{"from": day, "to": day, "open": nil, "close": "12:00"},
		{"from": "3 days from now", "to": day, "open": "10:00", "close": "12:00"},
		{"from": day, "to": day, "open": "10:00"},
	} {
		s.wantError(s.call("POST", "/admin/technicians/"+mei+"/hours", testAdmin, body), 400, booking.EBADREQUEST)
	}
	for _, body := range []map[string]any{
		{"date": day, "from": "1100", "to": "12:00"},
		{"date": day, "from": "12:00", "to": "11:00"},
		{"date": day, "from": nil, "to": "12:00"},
		{"date": nil, "from": "10:00", "to": "12:00"},
		{"date": day, "from": "10:00"},
	} {
		s.wantError(s.call("POST", "/admin/technicians/"+mei+"/off", testAdmin, body), 400, booking.EBADREQUEST)
	}
	s.wantError(s.call("POST", "/admin/technicians/999999/hours", testAdmin, hours), 404, booking.ENOTFOUND)
	s.wantError(s.call("POST", "/admin/technicians/"+mei+"/hours", "", hours), 401, booking.EUNAUTHORIZED)
	s.wantError(s.call("POST", "/admin/technicians/"+mei+"/hours", "", hours, "Cookie", cookie, consoleauth.CSRFHeader, csrf), 403, booking.EFORBIDDEN)
	s.wantError(s.call("POST", "/admin/technicians/"+mei+"/off", "", map[string]any{"date": day, "from": "10:00", "to": "11:00"},
		"Cookie", cookie, consoleauth.CSRFHeader, csrf), 403, booking.EFORBIDDEN)

	// Over the booking: refused, with it and its customer.
	a = s.call("POST", "/admin/technicians/"+mei+"/off", testAdmin, map[string]any{"date": day, "from": "10:00", "to": "12:00"})
	if a.Status != http.StatusConflict || a.code() != booking.EINVALIDSTATE || a.JSON["message"] != booking.Errorf(booking.EINVALIDSTATE, "").Message {
		t.Fatalf("time off over a booking: %d %s", a.Status, a.Body)
	}
	inTheWay, _ := a.JSON["bookings"].([]any)
	if len(inTheWay) != 1 || obj(t, inTheWay[0])["bookingId"] != booked || obj(t, inTheWay[0])["customerName"] != "王女士" ||
		obj(t, inTheWay[0])["startAt"] != ten.Add(time.Hour).Format(time.RFC3339) {
		t.Errorf("bookings in the way: %s", a.Body)
	}
	s.noLeak(string(a.Body))
	s.menuUnchanged(before, "the refused hours and time off")

	a = s.call("POST", "/admin/technicians/"+mei+"/off", testAdmin, map[string]any{"date": day, "from": "10:00", "to": "11:00"})
	if a.Status != http.StatusOK || a.JSON["closed"] != float64(2) {
		t.Fatalf("time off: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/admin/technicians/"+mei+"/off", testAdmin, map[string]any{"date": day, "from": "10:00", "to": "11:00"}); a.Status != http.StatusOK || a.JSON["closed"] != float64(0) {
		t.Fatalf("time off again: %d %s", a.Status, a.Body)
	}
	a = s.call("GET", "/availability?date="+day+"&serviceId="+itoa64(manicure), "", nil)
	if a.Status != http.StatusOK || len(a.JSON["starts"].([]any)) != 0 {
		t.Errorf("availability after the time off and the booking: %d %s", a.Status, a.Body)
	}
	mysqltest.CheckInvariant(t, s.store)
}
