package testkit

import (
	"net/http"
	"strings"
	"testing"

	"salon/shared/openapi"
)

// A booking answer as GET /bookings/{id} gives it: a seat of a slot, so its
// service and technician are null.
const goodBooking = `{"booking":{"bookingId":17,"slotId":42,"status":"confirmed",` +
	`"startAt":"2026-12-02T10:00:00+08:00","endAt":"2026-12-02T11:30:00+08:00",` +
	`"serviceId":null,"serviceName":null,"technicianId":null,"technicianName":null,"amountFen":5000,"priceFen":5000,` +
	`"lockExpireAt":"2026-12-01T15:15:00+08:00","cancelFreeUntil":"2026-12-02T08:00:00+08:00",` +
	`"createdAt":"2026-12-01T15:00:00+08:00","refund":null,"checkinCode":"40215573"}}`

// The same booking made for a service with a technician.
var goodServiceBooking = strings.Replace(goodBooking,
	`"serviceId":null,"serviceName":null,"technicianId":null,"technicianName":null,"amountFen":5000,"priceFen":5000`,
	`"serviceId":3,"serviceName":"法式美甲","technicianId":2,"technicianName":"小美","amountFen":5000,"priceFen":19800`, 1)

// reserve is POST /bookings with body, answered status with goodBooking (in
// its answer's shape when the status is 201).
func reserve(body string, status int) *Exchange {
	x := exchange(status, goodBooking)
	x.Method, x.Path, x.Body = "POST", "/bookings", []byte(body)
	return x
}

// unlinkTechnician is PATCH /admin/technicians/2 {"staffId":null}, answered
// status with the technician.
func unlinkTechnician(status int) *Exchange {
	x := exchange(status, `{"technician":{"technicianId":2,"name":"小美","active":true,"serviceIds":[3],"staffId":null}}`)
	x.Method, x.Path, x.Body = "PATCH", "/admin/technicians/2", []byte(`{"staffId":null}`)
	return x
}

func exchange(status int, answer string) *Exchange {
	return &Exchange{Method: "GET", Path: "/bookings/17", Header: http.Header{"Authorization": {"Bearer t"}},
		Status: status, AnswerHeader: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Answer: []byte(answer)}
}

// TestContractCatchesDrift: the checker passes a true answer and fails each
// drift of it: a field gained, lost or retyped, an undocumented status, a wrong
// code for the status, a bad Retry-After, a route the document lacks answered,
// and a refused request answered with success. The last case plants the drift
// in a copy of the document instead of the answer.
func TestContractCatchesDrift(t *testing.T) {
	c, err := TheContract()
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{goodBooking, goodServiceBooking} {
		if p := c.Check(exchange(200, answer)); len(p) > 0 {
			t.Fatalf("a true answer fails: %v", p)
		}
	}
	// A body that chooses either way is the document's: a seat of a slot, or a
	// service at a start (oneOf); and the one nullable request field is null.
	for _, x := range []*Exchange{reserve(`{"slotId":42}`, 201), reserve(`{"serviceId":3,"startAt":"2026-12-02T10:00:00+08:00"}`, 201),
		reserve(`{"serviceId":3,"startAt":"2026-12-02T10:00:00+08:00","technicianId":2}`, 201), unlinkTechnician(200)} {
		if p := c.Check(x); len(p) > 0 {
			t.Errorf("a true exchange fails: %v", p)
		}
	}
	drifts := []struct {
		name string
		x    *Exchange
		want string
	}{
		{"gained field", exchange(200, strings.Replace(goodBooking, `"refund":null`, `"refund":null,"note":"x"`, 1)), "additional properties 'note' not allowed"},
		{"lost field", exchange(200, strings.Replace(goodBooking, `"amountFen":5000,`, ``, 1)), "missing property 'amountFen'"},
		{"retyped field", exchange(200, strings.Replace(goodBooking, `"amountFen":5000`, `"amountFen":"5000"`, 1)), "amountFen"},
		{"null where none is allowed", exchange(200, strings.Replace(goodBooking, `"slotId":42`, `"slotId":null`, 1)), "slotId"},
		{"a nullable field left out", exchange(200, strings.Replace(goodBooking, `"technicianId":null,`, ``, 1)), "missing property 'technicianId'"},
		{"unknown status value", exchange(200, strings.Replace(goodBooking, `"confirmed"`, `"paid"`, 1)), "status"},
		{"not a time", exchange(200, strings.Replace(goodBooking, `"2026-12-01T15:00:00+08:00"`, `"2026-12-01 15:00"`, 1)), "createdAt"},
		{"undocumented status", exchange(409, `{"code":"INVALID_STATE","message":"m"}`), "response code '409'"},
		{"code of another status", exchange(404, `{"code":"SOLD_OUT","message":"m"}`), "NOT_FOUND"},
		{"route the document lacks", &Exchange{Method: "GET", Path: "/refunds", Status: 200,
			AnswerHeader: http.Header{"Content-Type": {"application/json"}}, Answer: []byte(`{"bookings":[]}`)}, "the document has no GET /refunds"},
		{"another function's route answered", &Exchange{Function: "slots", Method: "GET", Path: "/bookings/17", Header: http.Header{"Authorization": {"Bearer t"}},
			Status: 200, AnswerHeader: http.Header{"Content-Type": {"application/json"}}, Answer: []byte(goodBooking)}, "the document has no GET /bookings/17 served by slots"},
		{"refused request answered 201", &Exchange{Method: "POST", Path: "/bookings", Header: http.Header{"Authorization": {"Bearer t"}},
			Body: []byte(`{"slotId":"42"}`), Status: 201, AnswerHeader: http.Header{"Content-Type": {"application/json"}},
			Answer: []byte(goodBooking)}, "the document refuses this request"},
		{"both forms of a reservation answered 201", reserve(`{"slotId":42,"serviceId":3,"startAt":"2026-12-02T10:00:00+08:00"}`, 201), "the document refuses this request"},
		{"a service without its start answered 201", reserve(`{"serviceId":3}`, 201), "the document refuses this request"},
		{"null for a field not nullable answered 201", reserve(`{"serviceId":3,"startAt":"2026-12-02T10:00:00+08:00","technicianId":null}`, 201), "the document refuses this request"},
		{"bad Retry-After", &Exchange{Method: "GET", Path: "/slots", RawQuery: "date=2026-12-02", Status: 503,
			AnswerHeader: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"soon"}},
			Answer:       []byte(`{"code":"UNAVAILABLE","message":"m"}`)}, "header 'retry-after' failed to validate"},
	}
	page := func(path string, status int, cookie bool) *Exchange {
		x := &Exchange{Function: "admin", Method: "GET", Path: path, Header: http.Header{}, Status: status,
			AnswerHeader: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Answer: []byte("<!doctype html><p>今日</p>")}
		if cookie {
			x.Header.Set("Cookie", "salon_console=s")
		}
		if status == http.StatusSeeOther {
			x.AnswerHeader, x.Answer = http.Header{"Location": {"login"}}, nil
		}
		return x
	}
	// The console's start page, written "/admin/#today" in the document, is
	// checked as /admin/ (not as /admin, which only redirects); a page without
	// a session sends the browser to sign in.
	for _, x := range []*Exchange{page("/admin/", 200, true), page("/admin/week", 200, true), page("/admin/", 303, false), page("/admin", 303, false)} {
		if p := c.Check(x); len(p) > 0 {
			t.Errorf("a true console answer fails: %v", p)
		}
	}
	drifts = append(drifts, []struct {
		name string
		x    *Exchange
		want string
	}{
		{"a console page served without a session", page("/admin/", 200, false), "the document refuses this request (API Key salon_console not found"},
		{"the start page's answer on /admin", page("/admin", 200, true), "response code '200' does not exist"},
	}...)
	for _, d := range drifts {
		t.Run(d.name, func(t *testing.T) {
			p := c.Check(d.x)
			if !strings.Contains(strings.Join(p, "\n"), d.want) {
				t.Errorf("drift not caught (want %q): %v", d.want, p)
			}
		})
	}

	t.Run("drift planted in the document", func(t *testing.T) {
		// The document says checkinCode is a number: the true answer must now fail.
		planted := strings.Replace(string(openapi.YAML), "        checkinCode:\n          type: [string, \"null\"]",
			"        checkinCode:\n          type: [integer, \"null\"]", 1)
		if planted == string(openapi.YAML) {
			t.Fatal("nothing to plant into: the document's checkinCode is not where this test expects it")
		}
		doc, err := openapi.ToJSON([]byte(planted))
		if err != nil {
			t.Fatal(err)
		}
		pc, err := NewContract(doc)
		if err != nil {
			t.Fatal(err)
		}
		if p := pc.Check(exchange(200, goodBooking)); !strings.Contains(strings.Join(p, "\n"), "checkinCode") {
			t.Errorf("drift not caught: %v", p)
		}
	})
}
