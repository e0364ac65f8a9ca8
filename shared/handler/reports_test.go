package handler

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/mysql/mysqltest"
)

// reportDay is the salon menu's day (D, cells from 10:00 shop time) with
// bookings in every outcome and ledger rows around it: on D-2, D-1 and D,
// also on the edges of a day and one after the range.
type reportDay struct {
	m                              salonMenu
	b1, b2, b3, b4, b5, b6, b7     int64
	from, to                       string
	dayBefore, twoBefore, dayAfter time.Time
}

func (s *system) reportDay() reportDay {
	t := s.t
	t.Helper()
	r := reportDay{m: s.salonMenu()}
	m := r.m
	walkIn := func(service, tech int64, cells int, name, phone string) int64 {
		body := map[string]any{"serviceId": service, "startAt": m.at(cells), "technicianId": tech, "name": name}
		if phone != "" {
			body["phone"] = phone
		}
		a := s.walkIn(body)
		if a.Status != http.StatusCreated {
			t.Fatalf("walk-in %s: %d %s", name, a.Status, a.Body)
		}
		return int64(obj(t, a.JSON["booking"])["bookingId"].(float64))
	}
	r.b1 = walkIn(m.manicure, m.mei, 0, `=HYPERLINK("a","b")`, "13800138000")
	r.b2 = walkIn(m.extension, m.li, 0, "-1+1", "")
	r.b3 = walkIn(m.manicure, m.fang, 0, "王女士", "")
	r.b4 = walkIn(m.manicure, m.mei, 2, "李女士", "")
	r.b5 = walkIn(m.manicure, m.li, 4, "@赵", "")
	r.b6 = walkIn(m.manicure, m.fang, 4, "+孙", "")
	r.b7 = walkIn(m.manicure, m.mei, 4, "周女士", "")
	change := func(id int64, to booking.Status, event, actor string) {
		if _, err := s.store.ChangeStatus(context.Background(), booking.Change{BookingID: id, From: booking.StatusConfirmed, To: to,
			Event: event, Actor: actor}); err != nil {
			t.Fatalf("booking %d -> %s: %v", id, to, err)
		}
	}
	change(r.b1, booking.StatusCompleted, booking.EventCheckIn, booking.ActorSalon)
	change(r.b2, booking.StatusCompleted, booking.EventCheckIn, booking.ActorSalon)
	change(r.b3, booking.StatusNoShow, booking.EventNoShow, booking.ActorSalon)
	change(r.b4, booking.StatusCancelled, booking.EventCancel, booking.ActorSalon)        // late: its deposit is kept
	change(r.b5, booking.StatusCancelled, booking.EventLateCancel, booking.ActorCustomer) // late by the audit trail
	change(r.b7, booking.StatusCancelled, booking.EventCancel, booking.ActorSalon)

	d := m.start.In(m.loc) // D 10:00
	at := func(days, hour, minute, second int) time.Time {
		return time.Date(d.Year(), d.Month(), d.Day()+days, hour, minute, second, 0, m.loc)
	}
	r.twoBefore, r.dayBefore, r.dayAfter = at(-2, 0, 0, 0), at(-1, 0, 0, 0), at(1, 0, 0, 0)
	mysqltest.AddLedgerRows(t, s.store,
		mysqltest.LedgerRow{BookingID: r.b1, Kind: "deposit", AmountFen: 3000, At: at(-2, 9, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b3, Kind: "deposit", AmountFen: 3000, At: at(-2, 23, 59, 59)},
		mysqltest.LedgerRow{BookingID: r.b4, Kind: "deposit", AmountFen: 3000, At: at(-1, 0, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b5, Kind: "deposit", AmountFen: 3000, At: at(-1, 10, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b4, Kind: "kept", AmountFen: 3000, At: at(-1, 23, 45, 0)},
		mysqltest.LedgerRow{BookingID: r.b5, Kind: "refund", AmountFen: 3000, At: at(0, 0, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b1, Kind: "balance", AmountFen: 9800, Method: "wechat", At: at(0, 11, 5, 0)},
		mysqltest.LedgerRow{BookingID: r.b2, Kind: "balance", AmountFen: 29800, Method: "alipay", At: at(0, 12, 10, 0)},
		mysqltest.LedgerRow{BookingID: r.b3, Kind: "kept", AmountFen: 3000, At: at(0, 12, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b2, Kind: "refund", AmountFen: 5000, At: at(0, 13, 0, 0)},
		mysqltest.LedgerRow{BookingID: r.b6, Kind: "deposit", AmountFen: 3000, At: at(1, 0, 0, 0)}, // after the range
	)
	r.from, r.to = r.twoBefore.Format(time.DateOnly), m.date()
	return r
}

// TestReport: the owner's report of three days counts every booking on the
// day its slot starts, every movement of money on the day it moved (a
// movement at a shop midnight on the new day, one a second before it on the
// old one, one after the range not at all), the late cancels by the audit
// trail and by a kept deposit, the technicians' and services' takings of
// their completed bookings less refunds, and the no-show rate.
func TestReport(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	r := s.reportDay()
	a := s.call("GET", "/admin/reports?from="+r.from+"&to="+r.to, testAdmin, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("report: %d %s", a.Status, a.Body)
	}
	var got struct {
		From, To string
		Days     []struct {
			Date                                                 string
			Bookings, Completed, NoShows, Cancelled, LateCancels int
			OnlineFen, ShopFen, RefundedFen, KeptFen, NetFen     int64
		}
		Technicians []struct {
			TechnicianID       int64
			Name               string
			Completed, Minutes int
			TakingsFen         int64
		}
		Services []struct {
			ServiceID  int64
			Name       string
			Completed  int
			TakingsFen int64
		}
		NoShowRate *float64
	}
	if err := json.Unmarshal(a.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.From != r.from || got.To != r.to || len(got.Days) != 3 {
		t.Fatalf("range %s..%s, %d days", got.From, got.To, len(got.Days))
	}
	type day = struct {
		Date                                                 string
		Bookings, Completed, NoShows, Cancelled, LateCancels int
		OnlineFen, ShopFen, RefundedFen, KeptFen, NetFen     int64
	}
	want := []day{
		{Date: r.from, OnlineFen: 6000, NetFen: 6000},
		{Date: r.dayBefore.Format(time.DateOnly), OnlineFen: 6000, KeptFen: 3000, NetFen: 6000},
		{Date: r.to, Bookings: 7, Completed: 2, NoShows: 1, Cancelled: 3, LateCancels: 2,
			ShopFen: 39600, RefundedFen: 8000, KeptFen: 3000, NetFen: 31600},
	}
	for i := range want {
		if got.Days[i] != want[i] {
			t.Errorf("day %d:\n got %+v\nwant %+v", i, got.Days[i], want[i])
		}
	}
	if got.NoShowRate == nil || *got.NoShowRate != 0.3333 {
		t.Errorf("noShowRate %v, want 0.3333", got.NoShowRate)
	}
	m := r.m
	techs := []struct {
		TechnicianID       int64
		Name               string
		Completed, Minutes int
		TakingsFen         int64
	}{{m.li, "小丽", 1, 120, 24800}, {m.mei, "小美", 1, 60, 12800}}
	if !reflect.DeepEqual(got.Technicians, techs) {
		t.Errorf("technicians %+v, want %+v", got.Technicians, techs)
	}
	services := []struct {
		ServiceID  int64
		Name       string
		Completed  int
		TakingsFen int64
	}{{m.extension, "延长甲", 1, 24800}, {m.manicure, "单色美甲", 1, 12800}}
	if !reflect.DeepEqual(got.Services, services) {
		t.Errorf("services %+v, want %+v", got.Services, services)
	}

	// A day with nothing has every figure 0 and a null rate.
	a = s.call("GET", "/admin/reports?from="+r.dayAfter.AddDate(0, 0, 1).Format(time.DateOnly)+"&to="+r.dayAfter.AddDate(0, 0, 1).Format(time.DateOnly), testAdmin, nil)
	if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"noShowRate":null`) || !strings.Contains(string(a.Body), `"technicians":[]`) {
		t.Errorf("an empty day: %d %s", a.Status, a.Body)
	}
}

// TestReportRefusals: a staff member is refused (403) whatever range she
// asks, a missing or bad token is 401, and every range that is not one is 400.
func TestReportRefusals(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	for _, path := range []string{"/admin/reports", "/admin/reports.csv"} {
		for _, q := range []string{"?from=2026-03-01&to=2026-03-31", "?from=bad", ""} {
			s.wantError(s.call("GET", path+q, "", nil, "Cookie", cookie, consoleauth.CSRFHeader, csrf), 403, booking.EFORBIDDEN)
		}
		s.wantError(s.call("GET", path+"?from=2026-03-01&to=2026-03-31", "", nil), 401, booking.EUNAUTHORIZED)
		s.wantError(s.call("GET", path+"?from=2026-03-01&to=2026-03-31", "wrong", nil), 401, booking.EUNAUTHORIZED)
		for _, q := range []string{
			"", "?from=2026-03-01", "?to=2026-03-01", "?from=2026-03-02&to=2026-03-01",
			"?from=2025-01-01&to=2026-01-02", "?from=2026-3-1&to=2026-03-02", "?from=2026-02-30&to=2026-03-02",
			"?from=2026-03-01&from=2026-03-01&to=2026-03-02", "?from=2026-03-01&to=2026-03-01T10:00",
		} {
			s.wantError(s.call("GET", path+q, testAdmin, nil), 400, booking.EBADREQUEST)
		}
	}
	// 366 days from and to both counted is the longest range.
	if a := s.call("GET", "/admin/reports?from=2025-01-01&to=2026-01-01", testAdmin, nil); a.Status != http.StatusOK {
		t.Errorf("366 days: %d %s", a.Status, a.Body)
	}
}

// TestReportCSV: the export is one line per booking starting in the range
// after the Chinese header, with a BOM, its content type and file name;
// every column of every line is checked, and the names a spreadsheet would
// take for a formula come out with a leading '.
func TestReportCSV(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	r := s.reportDay()
	a := s.call("GET", "/admin/reports.csv?from="+r.from+"&to="+r.to, testAdmin, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("csv: %d %s", a.Status, a.Body)
	}
	if ct := a.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	if cd := a.Header.Get("Content-Disposition"); cd != `attachment; filename="bookings-`+r.from+`-`+r.to+`.csv"` {
		t.Errorf("content disposition %q", cd)
	}
	body, ok := bytes.CutPrefix(a.Body, []byte("\xEF\xBB\xBF"))
	if !ok {
		t.Fatalf("no BOM: % x", a.Body[:8])
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	d := r.to
	want := [][]string{
		{"日期", "时间", "项目", "技师", "顾客", "电话", "状态", "定金", "到店付款", "付款方式", "退款", "扣留定金"},
		{d, "10:00", "单色美甲", "小美", `'=HYPERLINK("a","b")`, "13800138000", "已签到", "30.00", "98.00", "微信", "0.00", "0.00"},
		{d, "10:00", "延长甲", "小丽", "'-1+1", "", "已签到", "0.00", "298.00", "支付宝", "50.00", "0.00"},
		{d, "10:00", "单色美甲", "阿芳", "王女士", "", "未到店", "30.00", "0.00", "", "0.00", "30.00"},
		{d, "11:00", "单色美甲", "小美", "李女士", "", "已取消", "30.00", "0.00", "", "0.00", "30.00"},
		{d, "12:00", "单色美甲", "小丽", "'@赵", "", "已取消", "30.00", "0.00", "", "30.00", "0.00"},
		{d, "12:00", "单色美甲", "阿芳", "'+孙", "", "已确认", "30.00", "0.00", "", "0.00", "0.00"},
		{d, "12:00", "单色美甲", "小美", "周女士", "", "已取消", "0.00", "0.00", "", "0.00", "0.00"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(rows), len(want), body)
	}
	for i := range want {
		if !reflect.DeepEqual(rows[i], want[i]) {
			t.Errorf("line %d:\n got %q\nwant %q", i, rows[i], want[i])
		}
	}

	// A range without bookings is the header alone.
	empty := r.dayAfter.AddDate(0, 0, 3).Format(time.DateOnly)
	a = s.call("GET", "/admin/reports.csv?from="+empty+"&to="+empty, testAdmin, nil)
	if a.Status != http.StatusOK || strings.Count(string(a.Body), "\n") != 1 {
		t.Errorf("an empty range: %d %q", a.Status, a.Body)
	}
}

// TestReportCountsALateCancelAfterRetention: a late cancel with nothing paid
// (the state machine's late_cancel of a free booking) leaves no money in the
// ledger; its audit record said it was late. When the release run deletes
// that record (shipped to CLS longer ago than AUDIT_RETENTION_DAYS), the
// report still counts the late cancel: the booking says so itself.
func TestReportCountsALateCancelAfterRetention(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(time.Hour, 3, 0)
	id, a := s.reserve("o-late-free", slot)
	if id == 0 || obj(t, a.JSON["booking"])["status"] != "confirmed" {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	if _, err := s.store.ChangeStatus(context.Background(), booking.Change{BookingID: id, From: booking.StatusConfirmed,
		To: booking.StatusCancelled, Event: booking.EventLateCancel, Actor: booking.ActorCustomer}); err != nil {
		t.Fatal(err)
	}
	if ev := s.auditEvents(id); countEvent(ev, booking.EventLateCancel) != 1 {
		t.Fatalf("audit %v", ev)
	}
	var start time.Time
	if err := s.store.SQL().QueryRow(`SELECT start_at FROM t_slot WHERE slot_id = ?`, slot).Scan(&start); err != nil {
		t.Fatal(err)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	date := start.In(shanghai).Format(time.DateOnly)
	lateCancels := func() (cancelled, late int) {
		t.Helper()
		a := s.call("GET", "/admin/reports?from="+date+"&to="+date, testAdmin, nil)
		if a.Status != http.StatusOK {
			t.Fatalf("report: %d %s", a.Status, a.Body)
		}
		d := obj(t, a.JSON["days"].([]any)[0])
		return int(d["cancelled"].(float64)), int(d["lateCancels"].(float64))
	}
	if c, l := lateCancels(); c != 1 || l != 1 {
		t.Fatalf("before retention: %d cancelled, %d late, want 1 and 1", c, l)
	}

	// Its records reached CLS 200 days ago, as if that time had passed: the
	// release run's retention deletes them.
	if _, err := s.store.SQL().Exec(`UPDATE t_audit SET shipped_at = UTC_TIMESTAMP(6) - INTERVAL 200 DAY WHERE book_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if sum := s.relRun(context.Background()); sum.AuditDeleted < 2 {
		t.Fatalf("release run: %+v, want its audit records deleted", sum)
	}
	if ev := s.auditEvents(id); len(ev) != 0 {
		t.Fatalf("audit records left: %v", ev)
	}
	if c, l := lateCancels(); c != 1 || l != 1 {
		t.Errorf("after retention: %d cancelled, %d late, want 1 and 1", c, l)
	}
}
