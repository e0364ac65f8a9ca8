package handler

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestDatesOutsideTheContractsYears sends dates Go's time package parses but the
// contract refuses (years outside 1000-9998), to every door that takes a date:
// the public schedule, the admin API, the console's pages and both schedule
// forms. Each is 400 BAD_REQUEST, logged as a refusal (never ERROR), and none
// changes anything: before the one date rule, these were 500s (the database
// refused year 0 and year 10000) and a schedule for year 999 was stored at
// 01:54:17 UTC, the local mean time Asia/Shanghai had before 1901.
func TestDatesOutsideTheContractsYears(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	w := &secSweep{s: s}
	slot := s.slot(26*time.Hour, 3, 5000)
	if id, a := s.reserve("o-dates", slot); id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	before := s.secState()

	for _, date := range []string{"0000-01-01", "0001-01-01", "0999-12-31", "9999-01-01", "9999-12-31"} {
		a := s.call("GET", "/slots?date="+date, "", nil)
		w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "GET /slots?date="+date)
		a = s.call("GET", "/admin/bookings?date="+date, testAdmin, nil)
		w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "GET /admin/bookings?date="+date)
		for _, field := range []string{"from", "to"} {
			sched := map[string]any{"from": "2026-12-01", "to": "2026-12-01", "open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0}
			sched[field] = date
			if field == "to" && date < "2026" {
				sched["from"] = date // else "from after to" would be the reason
			}
			a = s.call("POST", "/admin/slots", testAdmin, sched)
			w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "POST /admin/slots "+field+"="+date)
		}
	}
	// The owner's reports, their CSV and the reconciliation of a day, each
	// date alone out of the years and as a range's end: 400, and no bill
	// day kept.
	for _, date := range []string{"0000-01-01", "0999-12-31", "9999-01-01", "9999-12-31"} {
		for _, q := range []string{"?from=" + date + "&to=2026-12-01", "?from=2026-12-01&to=" + date, "?from=" + date + "&to=" + date} {
			for _, path := range []string{"/admin/reports", "/admin/reports.csv"} {
				a := s.call("GET", path+q, testAdmin, nil)
				w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "GET "+path+q)
			}
		}
		a := s.call("GET", "/admin/reconciliation?date="+date, testAdmin, nil)
		w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "GET /admin/reconciliation?date="+date)
		a = s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": date})
		w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "POST /admin/reconciliation "+date)
	}
	var kept int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_bill_day`).Scan(&kept); err != nil || kept != 0 {
		t.Errorf("%d bill days kept after refused dates (%v), want 0", kept, err)
	}
	// A whole schedule in year 999, as the audit sent it.
	a := s.call("POST", "/admin/slots", testAdmin, map[string]any{"from": "0999-06-01", "to": "0999-06-01",
		"open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0})
	w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "a schedule in year 999")

	cookie, csrf := s.consoleSignIn()
	for _, p := range []string{"/admin/?date=0000-01-01", "/admin/week?from=9999-12-31", "/admin/week?from=0001-01-01", "/admin/audit?date=9999-12-31"} {
		if resp := s.consoleGet(p, cookie); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("console GET %s: %d, want 400", p, resp.StatusCode)
		}
	}
	resp := s.consoleForm("/admin/week", cookie, url.Values{"csrf": {csrf}, "do": {"schedule"},
		"from": {"0999-06-01"}, "to": {"0999-06-01"}, "open": {"10:00"}, "close": {"12:00"},
		"slotMinutes": {"60"}, "capacity": {"1"}, "priceYuan": {"0"}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "fail="+booking.EBADREQUEST) {
		t.Errorf("console schedule in year 999: %d %s, want a redirect with fail=BAD_REQUEST", resp.StatusCode, loc)
	}

	s.secUnchanged(before, "dates outside 1000-9998")
	if strings.Contains(s.logs.String(), `"level":"ERROR"`) {
		t.Errorf("a refused date was logged as an error:\n%s", s.logs.String())
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestDatesAtTheContractsEdges: the first and last days of the contract's years
// are dates like any other (the week from 9998-12-31 reaches into 9999, which
// the database still stores).
func TestDatesAtTheContractsEdges(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	for _, date := range []string{"1000-01-01", "9998-12-31"} {
		if a := s.call("GET", "/slots?date="+date, "", nil); a.Status != http.StatusOK {
			t.Errorf("GET /slots?date=%s: %d %s", date, a.Status, a.Body)
		}
		if a := s.call("GET", "/admin/bookings?date="+date, testAdmin, nil); a.Status != http.StatusOK {
			t.Errorf("GET /admin/bookings?date=%s: %d %s", date, a.Status, a.Body)
		}
	}
	cookie, _ := s.consoleSignIn()
	if resp := s.consoleGet("/admin/week?from=9998-12-31", cookie); resp.StatusCode != http.StatusOK {
		t.Errorf("console week from 9998-12-31: %d", resp.StatusCode)
	}
}
