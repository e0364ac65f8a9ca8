package mysql_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// TestReserveServiceAnswersWhatItWrote: the reservation of a service reads
// nothing back after its one CALL, so the booking it answers is built from
// the plan and the procedure's answer; it must be the booking as the store
// reads it, with the rows the Go path wrote: its order number, its
// idempotency key, one audit record of the reserve at its first cell, one
// t_booking_slot row a cell. With any technician, the one with fewer booked
// minutes that day is taken (Bea, while Amy has an hour).
func TestReserveServiceAnswersWhatItWrote(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	gel := mysqltest.AddService(t, db, "光疗甲", 90, 30000, 5000)
	amy := mysqltest.AddTechnician(t, db, "Amy", gel)
	bea := mysqltest.AddTechnician(t, db, "Bea", gel)
	// 10:00 shop time the day after tomorrow: Amy's booking two hours later
	// falls on the same shop day (her minutes that day put Bea first) at any
	// hour of the run.
	tomorrow, _ := day(mysqltest.GridStart(t, db, 24*time.Hour))
	start := tomorrow.Add(34 * time.Hour)
	mysqltest.LayCells(t, db, amy, start, 8)
	cells := mysqltest.LayCells(t, db, bea, start, 8)
	if _, err := reserveService(db, "o-0", gel, amy, start.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	from, to := day(start)
	b, created, err := db.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-1", ServiceID: gel, StartAt: start.In(shopTZ),
		DayStart: from, DayEnd: to, IdemKey: "k-1"})
	if err != nil || !created {
		t.Fatalf("reserve: %v (created %v)", err, created)
	}
	read, err := db.FindBooking(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, read) {
		t.Fatalf("answered %+v\nread     %+v", b, read)
	}
	if b.TechnicianID != bea || b.SlotID != cells[0] || b.IdemKey != "k-1" || b.OutTradeNo != booking.OutTradeNo(b.ID) {
		t.Fatalf("booking %+v", b)
	}
	audit, err := db.BookingAudit(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 || audit[0].Event != booking.EventReserve || audit[0].FromStatus != -1 || audit[0].ToStatus != int(booking.StatusPending) ||
		audit[0].Actor != booking.ActorCustomer || audit[0].SlotID != cells[0] {
		t.Fatalf("audit %+v", audit)
	}
	var rows int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ?`, b.ID).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d seat rows (%v), want 3", rows, err)
	}
	again, created, err := db.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-1", ServiceID: gel, StartAt: start,
		DayStart: from, DayEnd: to, IdemKey: "k-1"})
	if err != nil || created || again.ID != b.ID {
		t.Fatalf("retry: %+v created %v, %v", again, created, err)
	}
	mysqltest.CheckInvariant(t, db)
}

// callReserveSpan calls salon_reserve_span as the store does, with tries
// (technician, first cell, cells) of a one-hour reservation at start: what
// the procedure decides on the rows it locks, after a pre-read that saw
// every cell free. Its answer: the booking and technician, or the error.
func callReserveSpan(t *testing.T, db *mysql.DB, openid string, service int64, start time.Time, tries ...[]any) (int64, int64, error) {
	t.Helper()
	js, err := json.Marshal(append([][]any{}, tries...))
	if err != nil {
		t.Fatal(err)
	}
	var id, tech int64
	var created time.Time
	err = db.SQL().QueryRow(`CALL salon_reserve_span(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, string(js), start.UTC(), start.Add(half).UTC(),
		int(booking.SeatIfOpenForBooking), db.Policy.BookingWindowDays, openid, int(booking.StatusConfirmed), 0, nil,
		time.Now().UTC(), service, 0, 60, booking.EventReserve, booking.ActorCustomer, "test").Scan(&id, &tech, &created)
	return id, tech, err
}

// TestReserveSpanDecidesOnTheLockedCells: salon_reserve_span, handed
// technicians whose cells changed since the pre-read, takes the first whose
// cells are all still free and open, leaving nothing of the tries before
// (no booking, audit record, seat row or counter); none left is SIGNALled
// as sold out when a try met a booked cell, else as not bookable (a closed
// cell: time off), and writes nothing.
func TestReserveSpanDecidesOnTheLockedCells(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	brows := mysqltest.AddService(t, db, "修眉", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc, brows)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	cara := mysqltest.AddTechnician(t, db, "Cara", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	a := mysqltest.LayCells(t, db, amy, start, 2)
	b := mysqltest.LayCells(t, db, bea, start, 2)
	c := mysqltest.LayCells(t, db, cara, start, 2)
	// Amy's second cell is booked, Cara's second is time off.
	if _, err := reserveService(db, "o-0", brows, amy, start.Add(half)); err != nil {
		t.Fatal(err)
	}
	if booked(t, db, a[1]) != 1 {
		t.Fatal("Amy's second cell is not the one booked")
	}
	if _, err := db.TakeTimeOff(ctx, cara, start.Add(half), start.Add(time.Hour), booking.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		return countRows(t, db, "t_booking") + countRows(t, db, "t_audit") + countRows(t, db, "t_booking_slot")
	}
	before := rows()
	for _, tt := range []struct {
		name  string
		tries [][]any
		want  string
	}{
		{"a booked cell", [][]any{{amy, a[0], a}}, "span sold out"},
		{"a closed cell", [][]any{{cara, c[0], c}}, "span not bookable"},
		{"closed, then booked", [][]any{{cara, c[0], c}, {amy, a[0], a}}, "span sold out"},
		{"booked, then closed", [][]any{{amy, a[0], a}, {cara, c[0], c}}, "span sold out"},
		{"no technician", nil, "span not bookable"},
	} {
		_, _, err := callReserveSpan(t, db, "o-1", svc, start, tt.tries...)
		var me *drv.MySQLError
		if !errors.As(err, &me) || string(me.SQLState[:]) != "45000" || me.Message != tt.want {
			t.Errorf("%s: %v, want the SIGNAL %q", tt.name, err, tt.want)
		}
		if n := rows(); n != before {
			t.Fatalf("%s: %d rows written", tt.name, n-before)
		}
	}
	if got := slices.Concat(cellsBooked(t, db, a...), cellsBooked(t, db, c...)); !slices.Equal(got, []int{0, 1, 0, 0}) {
		t.Fatalf("cells booked %v after the refusals", got)
	}
	id, tech, err := callReserveSpan(t, db, "o-1", svc, start, []any{amy, a[0], a}, []any{cara, c[0], c}, []any{bea, b[0], b})
	if err != nil || tech != bea {
		t.Fatalf("booked with %d: %v, want Bea", tech, err)
	}
	if n := rows(); n != before+1+1+2 {
		t.Fatalf("%d rows written, want the booking, its audit record and two seat rows", n-before)
	}
	got, err := db.FindBooking(ctx, id)
	if err != nil || got.TechnicianID != bea || got.SlotID != b[0] || !got.EndAt.Equal(start.Add(time.Hour)) {
		t.Fatalf("booking %+v, %v", got, err)
	}
	if got := slices.Concat(cellsBooked(t, db, a...), cellsBooked(t, db, b...), cellsBooked(t, db, c...)); !slices.Equal(got, []int{0, 1, 1, 1, 0, 0}) {
		t.Fatalf("cells booked %v", got)
	}
	mysqltest.CheckInvariant(t, db)
}
