package mysql_test

import (
	"context"
	"testing"

	"salon/shared/mysql/history"
	"salon/shared/mysql/mysqltest"
)

// TestHistoryKeepsTheInvariant: the history the plan test and the benchmark
// measure on is a state the store could have reached, seats and technicians'
// cells alike: every slot's booked equals its rows of bookings that hold a
// seat, each technician's booking holds the cells of its span and no other,
// and no customer holds two unfinished bookings.
func TestHistoryKeepsTheInvariant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mysqltest.New(t)
	now, err := db.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := history.Salon(now, 7)
	spec.Days = 20
	c, err := history.Load(ctx, db.SQL(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var cells, spans int
	if err := db.SQL().QueryRow(`SELECT (SELECT COUNT(*) FROM t_slot WHERE technician_id IS NOT NULL),
		(SELECT COUNT(*) FROM t_booking WHERE technician_id IS NOT NULL AND status IN (0, 1, 2, 5))`).Scan(&cells, &spans); err != nil {
		t.Fatal(err)
	}
	if cells != spec.Technicians*spec.SlotsPerDay*(spec.Days+spec.AheadDays) || spans == 0 {
		t.Fatalf("%d cells and %d bookings of technicians holding them in %v", cells, spans, c)
	}
	mysqltest.CheckInvariant(t, db)
}
