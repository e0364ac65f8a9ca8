package mysql_test

import (
	"slices"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// TestTechnicianDayCells: a technician's cells of a day, earliest first,
// each as it is: free, booked with the booking holding it, closed (time
// off); none of another technician's or another day's.
func TestTechnicianDayCells(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	svc := mysqltest.AddService(t, db, "美甲", 60, 0, 0)
	amy := mysqltest.AddTechnician(t, db, "Amy", svc)
	bea := mysqltest.AddTechnician(t, db, "Bea", svc)
	start := mysqltest.GridStart(t, db, 24*time.Hour)
	from, to := day(start)
	if start.Add(3 * time.Hour).After(to) {
		start = from.Add(10 * time.Hour)
	}
	cells := mysqltest.LayCells(t, db, amy, start, 6)
	mysqltest.LayCells(t, db, bea, start, 6)
	mysqltest.LayCells(t, db, amy, from.AddDate(0, 0, 1).Add(10*time.Hour), 2) // the next day
	b, err := reserveService(db, "o-1", svc, amy, start.Add(half))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeTimeOff(ctx, amy, start.Add(2*time.Hour), start.Add(3*time.Hour), booking.ActorAdmin); err != nil {
		t.Fatal(err)
	}
	got, err := db.TechnicianDayCells(ctx, amy, from, to)
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		id      int64
		open    bool
		booked  int
		booking int64
	}
	want := []cell{{cells[0], true, 0, 0}, {cells[1], true, 1, b.ID}, {cells[2], true, 1, b.ID}, {cells[3], true, 0, 0}, {cells[4], false, 0, 0}, {cells[5], false, 0, 0}}
	var have []cell
	for i, c := range got {
		have = append(have, cell{c.ID, c.Open, c.Booked, c.BookingID})
		if c.TechnicianID != amy || !c.StartAt.Equal(start.Add(time.Duration(i)*half)) || !c.EndAt.Equal(c.StartAt.Add(half)) {
			t.Errorf("cell %d: %+v", i, c)
		}
	}
	if !slices.Equal(have, want) {
		t.Fatalf("cells %v, want %v", have, want)
	}
}
