package mysql_test

import (
	"reflect"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/history"
	"salon/shared/mysql/mysqltest"
)

// reportRows are every booking and ledger row as they stand, read with no
// grouping in SQL, to compute a report the plain way (report).
type reportRows struct {
	bookings  []booking.ReportBookingCount // one each, at its slot's start
	completed []booking.ReportCompleted    // one each, with the slot's start in at
	at        []time.Time
	money     []booking.ReportMoneySum // one each, at its time
}

// readReportRows reads the rows: a booking's start from its slot (t_slot); a
// late cancel by its audit record or its kept deposit, as the report decided
// it before the booking carried it; a completed booking's takings from its
// ledger rows.
func readReportRows(t *testing.T, db *mysql.DB) reportRows {
	t.Helper()
	var out reportRows
	takings := map[int64]int64{}
	rows, err := db.SQL().Query(`SELECT book_id, kind, amount_fen, created_at FROM t_money`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, fen int64
		var kind booking.MoneyKind
		var at time.Time
		if err := rows.Scan(&id, &kind, &fen, &at); err != nil {
			t.Fatal(err)
		}
		m := booking.ReportMoneySum{At: at}
		switch kind {
		case booking.MoneyDeposit:
			m.OnlineFen, takings[id] = fen, takings[id]+fen
		case booking.MoneyBalance:
			m.ShopFen, takings[id] = fen, takings[id]+fen
		case booking.MoneyRefund:
			m.RefundedFen, takings[id] = fen, takings[id]-fen
		case booking.MoneyKept:
			m.KeptFen = fen
		}
		out.money = append(out.money, m)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.SQL().Query(`SELECT b.book_id, s.start_at, b.status,
			b.status = 3 AND (EXISTS (SELECT 1 FROM t_audit a WHERE a.book_id = b.book_id AND a.event = 'late_cancel')
				OR EXISTS (SELECT 1 FROM t_money k WHERE k.book_id = b.book_id AND k.kind = 'kept')),
			COALESCE(b.technician_id, 0), COALESCE(tc.name, ''), COALESCE(b.service_id, 0), COALESCE(sv.name, ''), COALESCE(b.minutes, 0)
		FROM t_booking b JOIN t_slot s ON s.slot_id = b.slot_id
		LEFT JOIN t_technician tc ON tc.technician_id = b.technician_id LEFT JOIN t_service sv ON sv.service_id = b.service_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		c := booking.ReportBookingCount{N: 1}
		w := booking.ReportCompleted{Completed: 1}
		if err := rows.Scan(&id, &c.At, &c.Status, &c.LateCancel, &w.TechnicianID, &w.TechnicianName, &w.ServiceID, &w.ServiceName, &w.Minutes); err != nil {
			t.Fatal(err)
		}
		out.bookings = append(out.bookings, c)
		if c.Status == booking.StatusCompleted {
			w.TakingsFen = takings[id]
			out.completed, out.at = append(out.completed, w), append(out.at, c.At)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// report is the report of r from the rows, each put on its shop day in Go
// (booking.BuildReport, by booking.ReportRange.DayOf).
func (rr reportRows) report(r booking.ReportRange) booking.Report {
	in := func(at time.Time) bool { return !at.Before(r.Start) && at.Before(r.End) }
	var f booking.ReportFacts
	for _, c := range rr.bookings {
		if in(c.At) {
			f.Bookings = append(f.Bookings, c)
		}
	}
	for _, m := range rr.money {
		if in(m.At) {
			f.Money = append(f.Money, m)
		}
	}
	for i, w := range rr.completed {
		if in(rr.at[i]) {
			f.Completed = append(f.Completed, w)
		}
	}
	return booking.BuildReport(r, f)
}

// TestReportEqualsItsRowsSummed: on six weeks of a salon's history, with a
// day of the product's own changes on top (every path that writes a booking:
// a reservation, a service's reservation, the walk-ins of both kinds, a
// waitlist offer; moves of both kinds across days; late cancels paid and
// free; a payment, a refund, a checkout), the report of every range is the
// one computed plainly from the rows (reportRows), in a zone without
// daylight saving, in zones whose offset changes inside the range and at
// offsets that are not whole hours; and it stays so once the audit trail is
// gone, which the report never reads.
func TestReportEqualsItsRowsSummed(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	now, err := db.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := history.Salon(now, 7)
	spec.Days = 45
	if _, err := history.Load(ctx, db.SQL(), spec); err != nil {
		t.Fatal(err)
	}
	change := func(c booking.Change) {
		t.Helper()
		if _, err := db.ChangeStatus(ctx, c); err != nil {
			t.Fatalf("%s %d: %v", c.Event, c.BookingID, err)
		}
	}
	pay := func(id, fen int64) {
		t.Helper()
		change(booking.Change{BookingID: id, From: booking.StatusPending, To: booking.StatusConfirmed, Event: booking.EventConfirm,
			Actor: booking.ActorWeChat, Payment: &booking.Payment{TransactionID: "42" + itoa(id), AmountFen: fen, PaidAt: now}})
	}
	reserve := func(openid string, slot int64) int64 {
		t.Helper()
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slot})
		if err != nil {
			t.Fatalf("reserve %s: %v", openid, err)
		}
		return b.ID
	}

	// A paid booking moved by the salon to another day.
	moving := reserve("o-r-move", mysqltest.AddSlot(t, db, 30*time.Hour, 2, 5000))
	pay(moving, 5000)
	if _, err := move(db, moving, mysqltest.AddSlot(t, db, 54*time.Hour, 3, 5000), booking.ActorSalon); err != nil {
		t.Fatal(err)
	}
	// Late cancels, paid (its deposit kept) and free; a walk-in beside them.
	soon := mysqltest.AddSlot(t, db, 3*time.Hour, 3, 5000)
	lateFree := mysqltest.AddSlot(t, db, 2*time.Hour, 3, 0)
	latePaid := reserve("o-r-late-paid", soon)
	pay(latePaid, 5000)
	change(booking.Change{BookingID: latePaid, From: booking.StatusConfirmed, To: booking.StatusCancelled, Event: booking.EventLateCancel, Actor: booking.ActorCustomer})
	free := confirmed(t, db, "o-r-late-free", lateFree)
	change(booking.Change{BookingID: free, From: booking.StatusConfirmed, To: booking.StatusCancelled, Event: booking.EventLateCancel, Actor: booking.ActorCustomer})
	if _, err := db.WalkIn(ctx, booking.WalkInRequest{SlotID: lateFree, Name: "散客"}); err != nil {
		t.Fatal(err)
	}
	// A full slot's seat given back and offered to the one waiting; the
	// refund of the cancelled one succeeds.
	full := mysqltest.AddSlot(t, db, 50*time.Hour, 1, 5000)
	leaving := reserve("o-r-leaving", full)
	pay(leaving, 5000)
	if _, err := db.JoinWaitlist(ctx, "o-r-waiting", full, 3); err != nil {
		t.Fatal(err)
	}
	change(booking.Change{BookingID: leaving, From: booking.StatusConfirmed, To: booking.StatusCancelled, Event: booking.EventCancel, Actor: booking.ActorCustomer})
	if ok, err := db.SetRefundState(ctx, leaving, booking.RefundSucceeded, nil, "503"+itoa(leaving), booking.ActorWeChat, "退款成功"); !ok || err != nil {
		t.Fatalf("refund: %v %v", ok, err)
	}
	var offered int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE slot_id = ? AND openid = 'o-r-waiting'`, full).Scan(&offered); err != nil || offered != 1 {
		t.Fatalf("the seat offered %d times (%v)", offered, err)
	}
	// A technician's services: one reserved, paid, checked in and checked
	// out; one walked in and moved by the salon two hours on.
	svc := mysqltest.AddService(t, db, "延长甲", 60, 12800, 3000)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	start := mysqltest.GridStart(t, db, 26*time.Hour)
	mysqltest.LayCells(t, db, amy, start, 12)
	done, err := reserveService(db, "o-r-service", svc, amy, start)
	if err != nil {
		t.Fatal(err)
	}
	pay(done.ID, 3000)
	change(booking.Change{BookingID: done.ID, From: booking.StatusConfirmed, To: booking.StatusCompleted, Event: booking.EventCheckIn, Actor: booking.ActorSalon})
	if _, err := db.Checkout(ctx, done.ID, booking.Checkout{AmountFen: 9800, Method: "cash"}, booking.ActorSalon); err != nil {
		t.Fatal(err)
	}
	from, to := day(start)
	walked, err := db.WalkIn(ctx, booking.WalkInRequest{ServiceID: svc, StartAt: start.Add(2 * time.Hour), TechnicianID: amy, Name: "散客",
		By: booking.ActorSalon, DayStart: from, DayEnd: to})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := moveTo(db, walked.ID, start.Add(4*time.Hour), 0, booking.ActorSalon); err != nil {
		t.Fatal(err)
	}

	var zones []*time.Location
	for _, name := range []string{"Asia/Shanghai", "Europe/Berlin", "America/New_York", "America/St_Johns", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		zones = append(zones, loc)
	}
	rows := readReportRows(t, db)
	for _, loc := range zones {
		today := now.In(loc)
		for _, span := range [][2]int{{-50, 5}, {-1, 3}, {-365, 0}, {2, 2}} {
			r, err := booking.ParseReportRange(today.AddDate(0, 0, span[0]).Format(time.DateOnly), today.AddDate(0, 0, span[1]).Format(time.DateOnly), loc)
			if err != nil {
				t.Fatal(err)
			}
			f, err := db.ReportFacts(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			got, want := booking.BuildReport(r, f), rows.report(r)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s..%s:\nreport %+v\n  rows %+v", loc, r.From, r.To, got, want)
			}
			if span == [2]int{-50, 5} && (want.Total.Bookings < 5000 || want.Total.LateCancels != 2 || len(want.Technicians) < 5) {
				t.Fatalf("%s: the range holds too little to compare: %+v", loc, want.Total)
			}
		}
	}
	// The report reads the bookings and the ledger only: without the audit
	// trail (retention deletes it) the figures stay, the free late cancel's
	// too, which nothing but its audit record and the booking itself says.
	var late int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE late_cancel = 1`).Scan(&late); err != nil || late != 2 {
		t.Fatalf("%d bookings cancelled late (%v), want the 2 of this test", late, err)
	}
	r, err := booking.ParseReportRange(now.In(zones[0]).AddDate(0, 0, -1).Format(time.DateOnly), now.In(zones[0]).AddDate(0, 0, 3).Format(time.DateOnly), zones[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := db.ReportFacts(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	before := booking.BuildReport(r, f)
	if _, err := db.SQL().Exec(`DELETE FROM t_audit`); err != nil {
		t.Fatal(err)
	}
	if f, err = db.ReportFacts(ctx, r); err != nil {
		t.Fatal(err)
	}
	if after := booking.BuildReport(r, f); !reflect.DeepEqual(after, before) || after.Total.LateCancels != 2 {
		t.Errorf("without the audit trail:\n%+v\nwith it:\n%+v", after, before)
	}
}

// TestMigrationGivesBookingsWhatTheReportCounts: a database at 0027, with
// its report's kept days and a move's from_slot_id, migrated: every booking
// starts when its slot does (a moved one, a technician's by its first cell),
// the cancels late by their audit record or by a kept deposit are late and
// no other booking is, and the report counts them so; the kept days and
// from_slot_id are gone.
func TestMigrationGivesBookingsWhatTheReportCounts(t *testing.T) {
	t.Parallel()
	db, err := mysql.Open(mysqltest.NewDSN(t), mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateTo(ctx, "0027_reserve_span_cells_first"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO t_slot (slot_id, start_at, end_at, capacity, booked, price_fen, is_open, created_at, updated_at, technician_id) VALUES
			(1, '2026-05-03 02:00:00', '2026-05-03 03:30:00', 9, 1, 5000, 1, '2026-05-01 00:00:00', '2026-05-01 00:00:00', NULL),
			(2, '2026-05-04 15:30:00', '2026-05-04 17:00:00', 9, 1, 5000, 1, '2026-05-01 00:00:00', '2026-05-01 00:00:00', NULL),
			(3, '2026-05-03 06:00:00', '2026-05-03 06:30:00', 1, 1, 0, 1, '2026-05-01 00:00:00', '2026-05-01 00:00:00', 1),
			(4, '2026-05-03 06:30:00', '2026-05-03 07:00:00', 1, 1, 0, 1, '2026-05-01 00:00:00', '2026-05-01 00:00:00', 1)`,
		`INSERT INTO t_booking (book_id, slot_id, first_slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at,
			service_id, technician_id, price_fen, minutes) VALUES
			(1, 1, NULL, 'o-late-audit', 3, 0, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-03 01:00:00', NULL, NULL, NULL, NULL),
			(2, 1, NULL, 'o-late-kept', 3, 5000, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-03 01:00:00', NULL, NULL, NULL, NULL),
			(3, 1, NULL, 'o-cancel', 3, 5000, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-02 01:00:00', NULL, NULL, NULL, NULL),
			(4, 2, 1, 'o-moved', 1, 5000, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-02 01:00:00', NULL, NULL, NULL, NULL),
			(5, 1, NULL, 'o-done', 2, 5000, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-03 02:00:00', NULL, NULL, NULL, NULL),
			(6, 3, NULL, 'o-service', 1, 3000, '2026-05-01 01:00:00', '2026-05-01 01:00:00', '2026-05-01 01:00:00', 1, 1, 12800, 60)`,
		`INSERT INTO t_audit (book_id, slot_id, from_slot_id, event, from_status, to_status, actor, reason, created_at) VALUES
			(1, 1, NULL, 'late_cancel', 1, 3, 'customer', '', '2026-05-03 01:00:00'),
			(3, 1, NULL, 'cancel', 1, 3, 'customer', '', '2026-05-02 01:00:00'),
			(4, 2, 1, 'reschedule', 1, 1, 'salon', '', '2026-05-02 01:00:00')`,
		`INSERT INTO t_money (book_id, kind, amount_fen, method, actor, created_at) VALUES
			(2, 'deposit', 5000, 'wechatpay', 'wechatpay', '2026-05-01 01:01:00'),
			(2, 'kept', 5000, 'wechatpay', 'system', '2026-05-03 01:00:00')`,
		`INSERT INTO t_report_day (day_start, day_end, online_fen, shop_fen, refunded_fen, kept_fen, checked_at) VALUES
			('2026-05-02 16:00:00', '2026-05-03 16:00:00', 5000, 0, 0, 5000, '2026-05-04 00:00:00')`,
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL().QueryContext(ctx, `SELECT CONCAT_WS('|', book_id, DATE_FORMAT(starts_at, '%m-%d %H:%i'), late_cancel) FROM t_booking ORDER BY book_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	rows.Close()
	want := []string{"1|05-03 02:00|1", "2|05-03 02:00|1", "3|05-03 02:00|0", "4|05-04 15:30|0", "5|05-03 02:00|0", "6|05-03 06:00|0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bookings after the migration:\n%v\nwant\n%v", got, want)
	}
	var gone int
	if err := db.SQL().QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 't\_report\_day%'
				OR TABLE_NAME = 't_late_0028')
			+ (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't_audit' AND COLUMN_NAME = 'from_slot_id')`).
		Scan(&gone); err != nil || gone != 0 {
		t.Errorf("%d kept-day tables, helper tables or from_slot_id columns left (%v)", gone, err)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	r, err := booking.ParseReportRange("2026-05-03", "2026-05-05", shanghai)
	if err != nil {
		t.Fatal(err)
	}
	f, err := db.ReportFacts(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rep := booking.BuildReport(r, f)
	if d := rep.Days[0]; d.Bookings != 5 || d.Cancelled != 3 || d.LateCancels != 2 || d.Completed != 1 || d.KeptFen != 5000 {
		t.Errorf("05-03: %+v", d)
	}
	if d := rep.Days[1]; d.Bookings != 1 {
		t.Errorf("05-04 (the moved booking, 23:30 shop time): %+v", d)
	}
}
