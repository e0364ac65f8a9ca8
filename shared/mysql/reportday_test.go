package mysql_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

var keptTables = []string{"t_report_day", "t_report_day_booking", "t_report_day_work"}

// reportKeeping reads the report of r as the owner's report does: the facts,
// then the ended days kept.
func reportKeeping(t *testing.T, db *mysql.DB, r booking.ReportRange) (booking.Report, booking.ReportPlan) {
	t.Helper()
	f, err := db.ReportFacts(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.KeepReportDays(ctx, r, f); err != nil {
		t.Fatal(err)
	}
	return booking.BuildReport(r, f), f.Plan
}

// reportAfresh reads the report of r from the bookings and the ledger alone:
// the kept days are set aside for the read and put back after it.
func reportAfresh(t *testing.T, db *mysql.DB, r booking.ReportRange) booking.Report {
	t.Helper()
	raw := db.SQL()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tbl := range keptTables {
		exec("CREATE TABLE aside_" + tbl + " LIKE " + tbl)
		exec("INSERT INTO aside_" + tbl + " SELECT * FROM " + tbl)
		exec("DELETE FROM " + tbl)
	}
	f, err := db.ReportFacts(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Plan.Kept) != 0 {
		t.Fatalf("read afresh, %d days kept", len(f.Plan.Kept))
	}
	for _, tbl := range keptTables {
		exec("INSERT INTO " + tbl + " SELECT * FROM aside_" + tbl)
		exec("DROP TABLE aside_" + tbl)
	}
	return booking.BuildReport(r, f)
}

// TestKeptReportDaysFollowEveryChange: a report keeps its ended days and the
// next one reads them from what was kept, with the same figures; a change to a
// kept day after that (a move away from it by the salon, a check-in, a
// checkout of one of its bookings) has that day read afresh, and every report
// equals the one read from the bookings and the ledger alone.
func TestKeptReportDaysFollowEveryChange(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	past := mysqltest.AddSlot(t, db, time.Hour, 4, 0)
	ahead := mysqltest.AddSlot(t, db, 30*time.Hour, 4, 0)
	leaving := confirmed(t, db, "o-leaving", past)
	staying := confirmed(t, db, "o-staying", past)
	confirmed(t, db, "o-ahead", ahead)
	// At noon two days ago (shop time), as if time had passed; with money of
	// that day.
	now, err := db.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	today := now.In(shanghai)
	noon := time.Date(today.Year(), today.Month(), today.Day()-2, 12, 0, 0, 0, shanghai)
	mysqltest.SlotStarts(t, db, past, now.Sub(noon))
	mysqltest.AddLedgerRows(t, db, mysqltest.LedgerRow{BookingID: staying, Kind: "deposit", AmountFen: 3000, At: noon})

	r, err := booking.ParseReportRange(today.AddDate(0, 0, -5).Format(time.DateOnly), today.AddDate(0, 0, 2).Format(time.DateOnly), shanghai)
	if err != nil {
		t.Fatal(err)
	}
	pastDay := slices.Index(r.Days, noon.Format(time.DateOnly))
	if pastDay < 0 {
		t.Fatal("the past slot's day is not in the range")
	}
	figures := func(rep booking.Report) booking.ReportDay { return rep.Days[pastDay] }
	// A kept day is not trusted with a change written less than
	// booking.ReportSettle before its check; the test's changes are moved an
	// hour back, with the checks, as if that hour had passed (money of the
	// noon two days ago stays on its day).
	anHourPasses := func() {
		t.Helper()
		for _, q := range []string{
			`UPDATE t_audit SET created_at = created_at - INTERVAL 1 HOUR`,
			`UPDATE t_money SET created_at = created_at - INTERVAL 1 HOUR`,
			`UPDATE t_report_day SET checked_at = checked_at - INTERVAL 1 HOUR`,
		} {
			if _, err := db.SQL().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	anHourPasses()

	first, plan := reportKeeping(t, db, r)
	if len(plan.Kept) != 0 || !slices.Contains(plan.Keep, pastDay) {
		t.Fatalf("first report: %+v", plan)
	}
	if d := figures(first); d.Bookings != 2 || d.OnlineFen != 3000 {
		t.Fatalf("the past day: %+v", d)
	}
	second, plan := reportKeeping(t, db, r)
	if !slices.Contains(plan.Kept, pastDay) || len(plan.Kept) < 4 {
		t.Fatalf("second report: %+v", plan)
	}
	if !reflect.DeepEqual(second, first) || !reflect.DeepEqual(second, reportAfresh(t, db, r)) {
		t.Fatalf("from the kept days:\n%+v\nfirst:\n%+v", second, first)
	}

	steps := []struct {
		name   string
		change func()
		want   func(booking.ReportDay) bool
	}{
		{"the salon moves a booking away from the day", func() {
			if _, err := move(db, leaving, ahead, booking.ActorSalon); err != nil {
				t.Fatal(err)
			}
		}, func(d booking.ReportDay) bool { return d.Bookings == 1 }},
		{"the salon checks the other one in", func() {
			if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: staying, From: booking.StatusConfirmed, To: booking.StatusCompleted,
				Event: booking.EventCheckIn, Actor: booking.ActorSalon, Reason: "到店"}); err != nil {
				t.Fatal(err)
			}
		}, func(d booking.ReportDay) bool { return d.Bookings == 1 && d.Completed == 1 }},
		{"and checks it out today", func() {
			if _, err := db.Checkout(ctx, staying, booking.Checkout{AmountFen: 9000, Method: "cash"}, booking.ActorSalon); err != nil {
				t.Fatal(err)
			}
		}, func(d booking.ReportDay) bool { return d.Completed == 1 && d.ShopFen == 0 }},
	}
	for _, s := range steps {
		s.change()
		anHourPasses()
		got, plan := reportKeeping(t, db, r)
		if slices.Contains(plan.Kept, pastDay) {
			t.Fatalf("%s: the day was read from what was kept: %+v", s.name, plan)
		}
		if !s.want(figures(got)) {
			t.Fatalf("%s: the day %+v", s.name, figures(got))
		}
		if afresh := reportAfresh(t, db, r); !reflect.DeepEqual(got, afresh) {
			t.Fatalf("%s:\nkeeping %+v\nafresh  %+v", s.name, got, afresh)
		}
		again, plan := reportKeeping(t, db, r)
		if !slices.Contains(plan.Kept, pastDay) || !reflect.DeepEqual(again, got) {
			t.Fatalf("%s, read again: %+v\n%+v", s.name, plan, again)
		}
	}
	mysqltest.CheckInvariant(t, db)
}
