package mysql_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"regexp"
	"salon/shared/wechatbill"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/history"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
)

// growing are the tables whose rows accumulate with the salon's history: a
// statement must find its rows in them through an index, never by reading the
// table, one of its indexes whole or a large part of it, and never sort more
// than a page of them (filesort). The other tables are bounded by the product
// itself: t_waitlist (the release run drops the lines of started slots),
// t_signin_failure (pruned as sign-ins go by, and a day old by the release
// run), t_release_run (two days),
// t_console_signout (until expiry).
var growing = map[string]bool{
	"t_booking": true, "t_audit": true, "t_notification": true, "t_customer": true, "t_slot": true, "t_signin_name": true, "t_booking_slot": true,
	"t_money": true,
}

// sortPage is how many rows a statement may sort: the few one key finds (a
// customer's bookings, a day's slots) are not a scan of the table.
const sortPage = 200

// boundedElsewhere are the statements that read more of a growing table than
// the rules above allow, each with what bounds it instead. Every entry is a
// cost that grows with the salon's traffic (not its history) and is listed in
// shared/mysql/README.md.
var boundedElsewhere = map[string]string{
	// Every confirmed booking, sorted by its slot's end: bounded by the seats
	// of the booking window (BOOKING_WINDOW_DAYS), since the run itself moves
	// each past one on to no_show.
	"ORDER BY ends, b.book_id LIMIT": "the confirmed bookings of the booking window",
	// The owner's reports read the slots, bookings and money of their range
	// (at most 366 days) and sum them unsorted: bounded by the range's
	// traffic, whatever the history before it.
	"ORDER BY NULL": "the slots, bookings and money of a report's range",
}

// planHistoryDays is the history the plan test explains on: four months of
// a salon (about 25,000 bookings, 70,000 audit records), enough that the
// optimizer picks the plans it picks on a real salon's database rather than
// scanning a table it knows to be tiny.
const planHistoryDays = 120

// recorder keeps each distinct statement the store sent, with the arguments
// of its first use.
type recorder struct {
	mu    sync.Mutex
	order []string
	args  map[string][]driver.NamedValue
}

func (r *recorder) record(q string, args []driver.NamedValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.args[q]; ok {
		return
	}
	r.order = append(r.order, q)
	r.args[q] = slices.Clone(args)
}

// TestEveryStatementUsesAnIndex runs every operation of the store (each
// method a use case's store interface names, the fields of service.Stores, so
// a method added later fails this test until it is run here too) on a database with a salon's history, records every
// statement the store sends on the wire, and explains each: none may read a
// growing table or one of its indexes whole, or sort its rows (filesort). The
// statements inside the stored procedures, which the wire only shows as a CALL, are
// explained as reserveBodyStatements.
func TestEveryStatementUsesAnIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := mysqltest.NewDSN(t)
	plain, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now, err := plain.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := history.Salon(now, 24)
	spec.Days = planHistoryDays
	counts, err := history.Load(ctx, plain.SQL(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("history: %v", counts)

	rec := &recorder{args: map[string][]driver.NamedValue{}}
	store, err := mysql.OpenRecordingForTest(dsn, mysql.Options{MaxOpenConns: 4}, rec.record)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	ran := runEveryOperation(t, ctx, plain, store)
	stores := reflect.TypeFor[service.Stores]()
	for i := range stores.NumField() {
		useCase := stores.Field(i).Type
		for j := range useCase.NumMethod() {
			name := useCase.Method(j).Name
			if !ran[name] && name != "Close" && name != "Classify" {
				t.Errorf("service.%s.%s is not run by this test: add it to runEveryOperation so its statements are explained", useCase.Name(), name)
			}
		}
	}

	tables := tableRows(t, plain)
	explained := 0
	for _, q := range slices.Concat(rec.order, reserveBodyStatements, raceOnlyStatements) {
		if !explainable(q) {
			continue
		}
		args := rec.args[q]
		if args == nil {
			args = reserveBodyArgs
		}
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = a.Value
		}
		explained++
		bounded := ""
		for k, why := range boundedElsewhere {
			if strings.Contains(strings.Join(strings.Fields(q), " "), k) {
				bounded = why
			}
		}
		for _, p := range explain(t, plain, q, vals) {
			if msg := p.problem(aliases(q), tables); msg != "" && bounded == "" {
				t.Errorf("%s\n  %s", msg, strings.Join(strings.Fields(q), " "))
			}
		}
	}
	t.Logf("%d statements recorded, %d explained", len(rec.order), explained)
	if explained < 60 {
		t.Errorf("only %d statements explained: is the recording connector still in the path?", explained)
	}
}

// reserveBodyStatements are the statements of the stored procedures
// (the latest migration that defines them: salon_take_seat 0019;
// salon_return_seats 0022; salon_reserve and salon_reserve_span 0028) that read or change rows by a condition, in their
// order (their INSERTs read nothing), with the procedure's parameters and
// locals as placeholders in reserveBodyArgs' order, or as literals, since the
// wire only shows the CALL.
var reserveBodyStatements = []string{
	`SELECT start_at FROM t_slot WHERE slot_id = ?`,
	`UPDATE t_booking SET out_trade_no = 'BK000000000001' WHERE book_id = ?`,
	`UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND booked < capacity AND CASE 1
      WHEN 1 THEN (is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
      WHEN 2 THEN (is_open = 1 AND end_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
      WHEN 3 THEN (end_at > UTC_TIMESTAMP(6))
      WHEN 4 THEN TRUE
      ELSE FALSE END`,
	`DELETE FROM t_booking_slot WHERE book_id = ? AND slot_id = 2`,
	`SELECT booked >= capacity FROM t_slot WHERE slot_id = ?`,
	`UPDATE t_slot s JOIN t_booking_slot bs ON bs.slot_id = s.slot_id SET s.booked = s.booked - 1 WHERE bs.book_id = ?`,
	`DELETE FROM t_booking_slot WHERE book_id = ?`,
	`DELETE bs FROM t_booking_slot bs FORCE INDEX (PRIMARY) WHERE bs.book_id = ? AND bs.slot_id = 2`,
	`UPDATE t_slot SET booked = booked - 1 WHERE slot_id = ?`,
	// salon_reserve_span: a cell taken, and (a try come up short) read again.
	`UPDATE t_slot SET booked = booked + 1
        WHERE slot_id = ? AND technician_id = 1 AND is_open = 1 AND booked < capacity AND CASE 1
          WHEN 1 THEN (CAST('2030-01-01 10:00:00' AS DATETIME(6)) > UTC_TIMESTAMP(6) AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
          WHEN 2 THEN (CAST('2030-01-01 10:30:00' AS DATETIME(6)) > UTC_TIMESTAMP(6) AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
          WHEN 3 THEN (CAST('2030-01-01 10:30:00' AS DATETIME(6)) > UTC_TIMESTAMP(6))
          ELSE FALSE END`,
	`SELECT 0 + COUNT(*) FROM t_slot
          WHERE slot_id = ? AND technician_id = 1 AND is_open = 1 AND CASE 1
            WHEN 1 THEN (CAST('2030-01-01 10:00:00' AS DATETIME(6)) > UTC_TIMESTAMP(6) AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
            WHEN 2 THEN (CAST('2030-01-01 10:30:00' AS DATETIME(6)) > UTC_TIMESTAMP(6) AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY)
            WHEN 3 THEN (CAST('2030-01-01 10:30:00' AS DATETIME(6)) > UTC_TIMESTAMP(6))
            ELSE FALSE END
          FOR UPDATE`,
}

var reserveBodyArgs = []driver.NamedValue{{Ordinal: 1, Value: int64(1)}}

// raceOnlyStatements are the store's statements that only a lost race sends,
// which one operation at a time never reaches (the pre-read refuses first),
// with reserveBodyArgs' first argument and literals for the rest: why a
// technician's cells were not taken (whyCellsNotTaken, after the conditional
// UPDATE of a reservation, walk-in, late payment or move came up short), and
// why a seat-mode move's seat was not (reschedule's refusal).
var raceOnlyStatements = []string{
	`SELECT COUNT(*) FROM t_slot WHERE slot_id IN (?, 2, 3)
		AND technician_id = 1 AND is_open = 1 AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) > UTC_TIMESTAMP(6)
		AND CAST('2030-01-01 10:00:00' AS DATETIME(6)) <= UTC_TIMESTAMP(6) + INTERVAL 14 DAY FOR UPDATE`,
	`SELECT booked >= capacity FROM t_slot WHERE slot_id = ? FOR UPDATE`,
}

// explainable: statements that read or change rows by a condition. A plain
// INSERT ... VALUES reads nothing; transaction control, session settings and
// the CALL (explained by its body) have no plan.
func explainable(q string) bool {
	f := strings.ToUpper(strings.TrimSpace(q))
	switch {
	case strings.HasPrefix(f, "SELECT"):
		return strings.Contains(f, " FROM ")
	case strings.HasPrefix(f, "UPDATE"), strings.HasPrefix(f, "DELETE"):
		return true
	case strings.HasPrefix(f, "INSERT"):
		return strings.Contains(f, "SELECT")
	}
	return false
}

var aliasRE = regexp.MustCompile(`(?i)\b(t_[a-z_]+)(?:\s+(?:AS\s+)?([a-z]\w*))?`)

// aliases maps each table name and alias of q to its table.
func aliases(q string) map[string]string {
	out := map[string]string{}
	for _, m := range aliasRE.FindAllStringSubmatch(q, -1) {
		out[m[1]] = m[1]
		if a := strings.ToLower(m[2]); a != "" && !sqlWords[strings.ToUpper(a)] {
			out[m[2]] = m[1]
		}
	}
	return out
}

var sqlWords = map[string]bool{"SET": true, "WHERE": true, "JOIN": true, "LEFT": true, "ON": true, "VALUES": true, "GROUP": true,
	"ORDER": true, "LIMIT": true, "FOR": true, "USING": true, "INNER": true, "SELECT": true, "AND": true, "OR": true, "AS": true}

// planRow is one row of EXPLAIN's table (both servers' columns by name).
type planRow struct {
	table, typ, key, extra string
	rows                   int64
	hasLimit               bool
}

func (p planRow) problem(alias map[string]string, tableRows map[string]int64) string {
	table, ok := alias[p.table]
	if !ok || !growing[table] {
		return ""
	}
	n := tableRows[table]
	switch {
	case p.typ == "ALL":
		return fmt.Sprintf("%s: full table scan (%d rows estimated of %d)", table, p.rows, n)
	case p.typ == "index" && !p.hasLimit:
		return fmt.Sprintf("%s: full scan of index %s (%d rows estimated of %d)", table, p.key, p.rows, n)
	case strings.Contains(p.extra, "filesort") && p.rows > max(sortPage, n/100):
		return fmt.Sprintf("%s: filesort over %d rows (%s)", table, p.rows, p.extra)
	case n >= 5000 && p.rows > n/5:
		return fmt.Sprintf("%s: reads %d of its %d rows through %s (%s)", table, p.rows, n, p.key, p.typ)
	}
	return ""
}

func explain(t *testing.T, db *mysql.DB, q string, args []any) []planRow {
	t.Helper()
	rows, err := db.SQL().Query("EXPLAIN "+q, args...)
	if err != nil {
		t.Errorf("EXPLAIN %s: %v", q, err)
		return nil
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []planRow
	hasLimit := regexp.MustCompile(`(?i)\bLIMIT\b`).MatchString(q)
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		p := planRow{hasLimit: hasLimit}
		for i, c := range cols {
			s := ""
			if b, ok := vals[i].([]byte); ok {
				s = string(b)
			} else if vals[i] != nil {
				s = fmt.Sprint(vals[i])
			}
			switch strings.ToLower(c) {
			case "table":
				p.table = s
			case "type":
				p.typ = s
			case "key":
				p.key = s
			case "extra":
				p.extra = s
			case "rows":
				p.rows, _ = strconv.ParseInt(s, 10, 64)
			}
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func tableRows(t *testing.T, db *mysql.DB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for table := range growing {
		var n int64
		// The table names are this file's constants.
		if err := db.SQL().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// runEveryOperation runs each of the store's operations once, on the
// history's schedule ahead, and returns the names of the store methods it
// ran. An operation that fails fails the test: its statements
// would be missing.
func runEveryOperation(t *testing.T, ctx context.Context, plain, s *mysql.DB) map[string]bool {
	t.Helper()
	ran := map[string]bool{}
	must := func(name string, err error) {
		t.Helper()
		ran[name] = true
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	q := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := plain.SQL().QueryRow(query, args...).Scan(&id); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return id
	}
	// Slots ahead: two with free seats and a price, a full one, one for the walk-in.
	free := `SELECT slot_id FROM t_slot WHERE start_at > UTC_TIMESTAMP() + INTERVAL 1 DAY AND booked < capacity AND price_fen > 0 ORDER BY start_at LIMIT 1 OFFSET ?`
	slotA, slotB, slotC := q(free, 0), q(free, 1), q(free, 2)
	full := q(`SELECT slot_id FROM t_slot WHERE start_at > UTC_TIMESTAMP() + INTERVAL 1 DAY AND booked >= capacity AND technician_id IS NULL ORDER BY start_at LIMIT 1`)
	regular := history.Openid(5)
	expired := q(`SELECT book_id FROM t_booking WHERE status = 4 AND refund_status IS NULL AND technician_id IS NULL ORDER BY book_id LIMIT 1`)

	_, err := s.Now(ctx)
	must("Now", err)
	must("Ping", s.Ping(ctx))

	// The customer's routes.
	b, _, err := s.Reserve(ctx, booking.ReserveRequest{OpenID: "o-plan-1", SlotID: slotA, IdemKey: "plan-1"})
	must("Reserve", err)
	_, _, err = s.Reserve(ctx, booking.ReserveRequest{OpenID: "o-plan-1", SlotID: slotA, IdemKey: "plan-1"})
	must("Reserve", err)
	_, err = s.FindBooking(ctx, b.ID)
	must("FindBooking", err)
	_, err = s.FindCustomerBooking(ctx, "o-plan-1", b.ID)
	must("FindCustomerBooking", err)
	mine, err := s.ListCustomerBookings(ctx, regular, 50)
	must("ListCustomerBookings", err)
	_, err = s.CountNoShows(ctx, regular, 90*24*time.Hour)
	must("CountNoShows", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
		Event: booking.EventConfirm, Actor: booking.ActorWeChat, Payment: &booking.Payment{TransactionID: "4200plan", AmountFen: b.AmountFen, PaidAt: time.Now()}})
	must("ChangeStatus", err)
	moved, err := s.Reschedule(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: booking.ActorSalon, ToSlotID: slotB})
	must("Reschedule", err)
	slot, err := s.FindSlot(ctx, slotB)
	must("FindSlot", err)
	day := slot.StartAt.In(time.FixedZone("CST", 8*3600)).Format(time.DateOnly)
	code, err := s.CheckinCode(ctx, moved, day)
	must("CheckinCode", err)
	_, err = s.FindByCheckinCode(ctx, day, code)
	must("FindByCheckinCode", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusCancelled,
		Event: booking.EventCancel, Actor: booking.ActorSalon, SlotID: slotB})
	must("ChangeStatus", err)
	_, err = s.JoinWaitlist(ctx, "o-plan-2", full, 3)
	must("JoinWaitlist", err)
	_, err = s.CustomerWaitlist(ctx, "o-plan-2")
	must("CustomerWaitlist", err)
	_, err = s.WaitlistLengths(ctx, []int64{full, slotA})
	must("WaitlistLengths", err)
	must("LeaveWaitlist", s.LeaveWaitlist(ctx, "o-plan-2", full))
	_, err = s.CustomerByOpenID(ctx, regular)
	must("CustomerByOpenID", err)
	name, phone := "小林", "13900000001"
	c, err := s.UpdateCustomer(ctx, regular, &name, &phone)
	must("UpdateCustomer", err)

	// Refunds: the cancel above started one; a late payment of an expired hold another.
	_, err = s.StartRefund(ctx, expired, booking.StatusExpired, booking.Payment{TransactionID: "4200late", AmountFen: 5000, PaidAt: time.Now()},
		booking.ActorWeChat, "late")
	must("StartRefund", err)
	_, err = s.SetRefundState(ctx, b.ID, booking.RefundProcessing, nil, "", booking.ActorWeChat, "processing")
	must("SetRefundState", err)
	must("DeferRefund", s.DeferRefund(ctx, expired, time.Minute))
	_, err = s.ListRefunds(ctx, 50, booking.RefundPending, booking.RefundProcessing, booking.RefundFailed)
	must("ListRefunds", err)
	_, err = s.CountRefunds(ctx, booking.RefundPending, booking.RefundProcessing, booking.RefundFailed)
	must("CountRefunds", err)

	// The release run.
	_, err = s.ClaimExpired(ctx, 20, time.Minute)
	must("ClaimExpired", err)
	_, err = s.DueNoShows(ctx, 30*time.Minute, 20)
	must("DueNoShows", err)
	_, err = s.ClaimDueRefunds(ctx, 0, time.Minute, 20)
	must("ClaimDueRefunds", err)
	_, err = s.DropStartedWaitlists(ctx)
	must("DropStartedWaitlists", err)
	_, err = s.EnqueueReminders(ctx, 48*time.Hour)
	must("EnqueueReminders", err)
	ns, _, err := s.ClaimDueNotifications(ctx, time.Minute, 20)
	must("ClaimDueNotifications", err)
	if len(ns) < 2 {
		t.Fatalf("%d notifications due after the reminders, want at least 2", len(ns))
	}
	must("FinishNotification", s.FinishNotification(ctx, ns[0].ID, booking.NotificationSent, ""))
	must("RetryNotification", s.RetryNotification(ctx, ns[1].ID, time.Minute, "busy"))
	_, err = s.FindDrift(ctx)
	must("FindDrift", err)
	must("RecordAudit", s.RecordAudit(ctx, booking.AuditRecord{SlotID: slotA, Event: booking.EventDrift, FromStatus: -1, ToStatus: -1,
		Actor: booking.ActorSystem, Reason: "plan"}))
	recs, err := s.UnshippedAudit(ctx, 500)
	must("UnshippedAudit", err)
	ids := make([]int64, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	must("MarkShipped", s.MarkShipped(ctx, ids))
	_, err = s.DeleteShippedAudit(ctx, 30*24*time.Hour, 500)
	must("DeleteShippedAudit", err)
	_, err = s.DeleteFinishedNotifications(ctx, booking.NotificationRetention, 500)
	must("DeleteFinishedNotifications", err)
	must("RecordReleaseRun", s.RecordReleaseRun(ctx, booking.ReleaseRun{StartedAt: time.Now(), FinishedAt: time.Now(), Summary: "{}"}))

	// The console.
	from := slot.StartAt.Truncate(24 * time.Hour)
	_, err = s.ListSlots(ctx, from, from.Add(24*time.Hour))
	must("ListSlots", err)
	bs, err := s.ListSlotBookings(ctx, from, from.Add(24*time.Hour))
	must("ListSlotBookings", err)
	must("AttachCustomers", s.AttachCustomers(ctx, append(bs, mine...)))
	dayIDs := make([]int64, len(bs))
	for i, b := range bs {
		dayIDs[i] = b.ID
	}
	_, err = s.AuditOfBookings(ctx, dayIDs) // who did what on the console's day page
	must("AuditOfBookings", err)
	// The owner's reports: a month and a year of the history, its export,
	// and a day's takings.
	dbNow, err := plain.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// In Shanghai, and in a zone whose offset changes within the year (the
	// shop day by a CASE over its offsets).
	for _, c := range []struct {
		days int
		loc  *time.Location
	}{{31, shanghai}, {366, shanghai}, {366, berlin}} {
		today := dbNow.In(c.loc)
		r, err := booking.ParseReportRange(today.AddDate(0, 0, 1-c.days).Format(time.DateOnly), today.Format(time.DateOnly), c.loc)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ReportFacts(ctx, r)
		must("ReportFacts", err)
	}
	_, err = s.ReportLines(ctx, dbNow.AddDate(0, 0, -31), dbNow)
	must("ReportLines", err)
	takingsDay := from.In(shanghai).Format(time.DateOnly)
	dayRange, err := booking.ParseReportRange(takingsDay, takingsDay, shanghai)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ReportMoney(ctx, dayRange)
	must("ReportMoney", err)
	_, _, err = s.CustomerHistory(ctx, c.ID, 50)
	must("CustomerHistory", err)
	_, err = s.SetCustomerNote(ctx, c.ID, "常客")
	must("SetCustomerNote", err)
	for _, by := range []booking.CustomerSearch{{Phone: phone}, {PhoneTail: phone[len(phone)-4:]}, {NamePrefix: "小"}, {NamePrefix: "客"}, {NamePrefix: "散客12"}} {
		_, err = s.SearchBookings(ctx, by, 20) // the console's 查预约 by phone and by name
		must("SearchBookings", err)
	}
	_, err = s.WalkIn(ctx, booking.WalkInRequest{SlotID: slotC, Name: "散客", Phone: "13700000002"})
	must("WalkIn", err)
	_, err = s.OpenBookingOfPhone(ctx, "13700000002")
	must("OpenBookingOfPhone", err)
	// The walk-in's phone joins a mini-program customer (the merge), then
	// another one takes the number (it moves).
	walkInPhone := "13700000002"
	_, err = s.UpdateCustomer(ctx, "o-plan-phone-1", nil, &walkInPhone)
	must("UpdateCustomer merging a walk-in", err)
	_, err = s.UpdateCustomer(ctx, "o-plan-phone-2", nil, &walkInPhone)
	must("UpdateCustomer taking the number", err)
	capacity := 12
	_, err = s.UpdateSlot(ctx, slotC, booking.SlotUpdate{Capacity: &capacity}, booking.ActorSalon)
	must("UpdateSlot", err)
	start := slot.StartAt.AddDate(1, 0, 0)
	_, _, err = s.CreateSlots(ctx, []booking.ScheduledSlot{{StartAt: start, EndAt: start.Add(time.Hour), Capacity: 2, PriceFen: 100}})
	must("CreateSlots", err)
	now, _ := plain.Now(ctx)
	auditDay := now.Truncate(24*time.Hour).AddDate(0, 0, -3)
	_, err = s.ListAudit(ctx, auditDay, auditDay.Add(24*time.Hour), "", 100)
	must("ListAudit", err)
	_, err = s.ListAudit(ctx, auditDay, auditDay.Add(24*time.Hour), booking.EventCancel, 100)
	must("ListAudit", err)
	_, err = s.AuditEvents(ctx, auditDay, auditDay.Add(24*time.Hour))
	must("AuditEvents", err)
	_, err = s.BookingAudit(ctx, b.ID)
	must("BookingAudit", err)
	// A completed booking not checked out yet (the history checks most out).
	completed := q(`SELECT book_id FROM t_booking b WHERE status = 2 AND NOT EXISTS (SELECT 1 FROM t_money m WHERE m.book_id = b.book_id AND m.kind = 'balance') ORDER BY book_id DESC LIMIT 1`)
	_, err = s.Checkout(ctx, completed, booking.Checkout{AmountFen: 12800, Method: booking.MethodCash}, booking.ActorAdmin)
	must("Checkout", err)
	_, err = s.BookingLedger(ctx, completed)
	must("BookingLedger", err)

	// The reconciliation with WeChat Pay's bill: a day's online ledger rows,
	// its result kept (with a difference), read back, the recent days.
	_, err = s.LedgerOnline(ctx, auditDay.Add(-15*time.Minute), auditDay.Add(24*time.Hour+15*time.Minute))
	must("LedgerOnline", err)
	fen := int64(100)
	must("SaveBillDay", s.SaveBillDay(ctx, wechatbill.DayResult{Date: auditDay.Format(time.DateOnly), Status: wechatbill.StatusDifferences,
		Result:   wechatbill.Result{BillRows: 1, Differences: []wechatbill.Difference{{OutTradeNo: "BK1", Kind: wechatbill.MissingHere, TheirsFen: &fen}}},
		Attempts: 1, AttemptedAt: now}))
	_, err = s.BillDay(ctx, auditDay.Format(time.DateOnly))
	must("BillDay", err)
	_, err = s.BillDays(ctx, []string{auditDay.AddDate(0, 0, -1).Format(time.DateOnly), auditDay.Format(time.DateOnly)})
	must("BillDays", err)
	_, err = s.RecentBillDays(ctx, 7)
	must("RecentBillDays", err)
	_, _, err = s.UnshippedAuditBacklog(ctx)
	must("UnshippedAuditBacklog", err)
	_, err = s.NotificationCounts(ctx, now.Add(-booking.NotificationRetention), booking.NotificationFailed, booking.NotificationRefused)
	must("NotificationCounts", err)
	_, err = s.CountRetryingNotifications(ctx)
	must("CountRetryingNotifications", err)
	_, err = s.LastReleaseRun(ctx)
	must("LastReleaseRun", err)
	must("EndConsoleSession", s.EndConsoleSession(ctx, "plan-session", time.Now().Add(time.Hour)))
	_, err = s.ConsoleSessionEnded(ctx, "plan-session")
	must("ConsoleSessionEnded", err)

	// Staff and the sign-in.
	st, err := s.CreateStaff(ctx, booking.NewStaff{Name: "plan", Role: booking.RoleStaff, PasswordHash: "$2a$10$plan"})
	must("CreateStaff", err)
	_, err = s.ListStaff(ctx)
	must("ListStaff", err)
	_, err = s.FindStaff(ctx, st.ID)
	must("FindStaff", err)
	disabled := false
	_, err = s.UpdateStaff(ctx, st.ID, booking.StaffUpdate{Disabled: &disabled})
	must("UpdateStaff", err)
	_, err = s.StaffCredential(ctx, "plan")
	must("StaffCredential", err)
	must("SignInLocked", s.SignInLocked(ctx, "plan", "192.0.2.1"))
	must("RecordSignIn", s.RecordSignIn(ctx, "plan", "192.0.2.1", false))
	must("RecordSignIn", s.RecordSignIn(ctx, "plan", "192.0.2.1", true))
	_, err = s.DeleteOldSignIns(ctx, booking.SignInRecordsKept, 500)
	must("DeleteOldSignIns", err)

	// The menu and a technician's time: her cells laid ahead, a booking of a
	// service (any technician), its move, its cancel giving back every cell,
	// a late payment taking them again, a walk-in, time off refused and made.
	svc, err := s.CreateService(ctx, booking.Service{Name: "光疗甲", Minutes: 90, PriceFen: 30000, DepositFen: 5000, Active: true})
	must("CreateService", err)
	minutes := 60
	_, err = s.UpdateService(ctx, svc.ID, booking.ServiceUpdate{Minutes: &minutes})
	must("UpdateService", err)
	amy, err := s.CreateTechnician(ctx, booking.Technician{Name: "Amy", Active: true, ServiceIDs: []int64{svc.ID}, StaffID: st.ID})
	must("CreateTechnician", err)
	bea, err := s.CreateTechnician(ctx, booking.Technician{Name: "Bea", Active: true, ServiceIDs: []int64{svc.ID}})
	must("CreateTechnician", err)
	name2 := "Bea2"
	_, err = s.UpdateTechnician(ctx, bea.ID, booking.TechnicianUpdate{Name: &name2, ServiceIDs: &[]int64{svc.ID}})
	must("UpdateTechnician", err)
	_, err = s.ListTechnicians(ctx)
	must("ListTechnicians", err)
	_, err = s.FindTechnician(ctx, amy.ID)
	must("FindTechnician", err)
	_, err = s.Menu(ctx)
	must("Menu", err)
	_, err = s.ListServices(ctx)
	must("ListServices", err)
	shop := time.FixedZone("CST", 8*3600)
	tomorrow := now.In(shop).AddDate(0, 0, 2)
	dayStart := time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 0, 0, 0, 0, shop)
	open := dayStart.Add(10 * time.Hour)
	var cells []booking.ScheduledSlot
	for _, tech := range []int64{amy.ID, bea.ID} {
		for i := range 16 {
			at := open.Add(time.Duration(i) * 30 * time.Minute)
			cells = append(cells, booking.ScheduledSlot{StartAt: at, EndAt: at.Add(30 * time.Minute), Capacity: 1, TechnicianID: tech})
		}
	}
	_, _, err = s.CreateSlots(ctx, cells)
	must("CreateSlots", err)
	_, err = s.ServiceDay(ctx, svc.ID, 0, dayStart, dayStart.AddDate(0, 0, 1))
	must("ServiceDay", err)
	req := booking.ServiceReserveRequest{OpenID: "o-plan-svc", ServiceID: svc.ID, StartAt: open, IdemKey: "plan-svc",
		DayStart: dayStart, DayEnd: dayStart.AddDate(0, 0, 1)}
	sb, _, err := s.ReserveService(ctx, req)
	must("ReserveService", err)
	_, _, err = s.ReserveService(ctx, req) // the key again
	must("ReserveService", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: sb.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
		Event: booking.EventConfirm, Actor: booking.ActorWeChat, Payment: &booking.Payment{TransactionID: "4200svc", AmountFen: sb.AmountFen, PaidAt: time.Now()}})
	must("ChangeStatus", err)
	_, err = s.Reschedule(ctx, booking.Change{BookingID: sb.ID, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: booking.ActorSalon, ToStart: open.Add(30 * time.Minute), ToTechnicianID: bea.ID})
	must("Reschedule", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: sb.ID, From: booking.StatusConfirmed, To: booking.StatusCancelled,
		Event: booking.EventCancel, Actor: booking.ActorSalon})
	must("ChangeStatus", err)
	lb, _, err := s.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-plan-late", ServiceID: svc.ID, TechnicianID: amy.ID,
		StartAt: open.Add(2 * time.Hour), DayStart: dayStart, DayEnd: dayStart.AddDate(0, 0, 1)})
	must("ReserveService", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: lb.ID, From: booking.StatusPending, To: booking.StatusExpired,
		Event: booking.EventRelease, Actor: booking.ActorTimer})
	must("ChangeStatus", err)
	_, err = s.ChangeStatus(ctx, booking.Change{BookingID: lb.ID, From: booking.StatusExpired, To: booking.StatusConfirmed,
		Event: booking.EventLatePayment, Actor: booking.ActorWeChat, Payment: &booking.Payment{TransactionID: "4200late-svc", AmountFen: lb.AmountFen, PaidAt: time.Now()}})
	must("ChangeStatus", err)
	_, err = s.WalkIn(ctx, booking.WalkInRequest{ServiceID: svc.ID, StartAt: open.Add(4 * time.Hour), Name: "散客", By: "admin",
		DayStart: dayStart, DayEnd: dayStart.AddDate(0, 0, 1)})
	must("WalkIn", err)
	if _, err := s.TakeTimeOff(ctx, amy.ID, open.Add(2*time.Hour), open.Add(3*time.Hour), booking.ActorAdmin); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("time off over a booking: %v", err)
	}
	_, err = s.TakeTimeOff(ctx, amy.ID, open.Add(6*time.Hour), open.Add(7*time.Hour), booking.ActorAdmin)
	must("TakeTimeOff", err)
	_, err = s.TechnicianDayCells(ctx, amy.ID, dayStart, dayStart.AddDate(0, 0, 1)) // the console's calendar
	must("TechnicianDayCells", err)

	// The access token every function shares.
	must("SaveToken", s.SaveToken(ctx, "wxplan", "token", time.Now().Add(time.Hour)))
	_, _, err = s.CachedToken(ctx, "wxplan")
	must("CachedToken", err)
	return ran
}
