package mysql_test

import (
	"slices"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// The console's reads: the audit trail by day and event, newest first; the
// release run's record; refunds by state; console sign-outs.

func TestAuditTrailByDayAndEvent(t *testing.T) {
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 3*time.Hour, 3, 0)
	var ids []int64
	for _, who := range []string{"oA", "oB"} {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: who, SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: ids[0], From: booking.StatusConfirmed, To: booking.StatusCompleted,
		Event: booking.EventCheckIn, Actor: booking.ActorSalon}); err != nil {
		t.Fatal(err)
	}
	now, _ := db.Now(ctx)
	from, to := now.Add(-time.Hour), now.Add(time.Hour)

	all, err := db.ListAudit(ctx, from, to, "", 100)
	if err != nil || len(all) != 3 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID > all[i-1].ID {
			t.Fatalf("not newest first: %d after %d", all[i].ID, all[i-1].ID)
		}
	}
	if all[0].Event != booking.EventCheckIn {
		t.Fatalf("newest is %s", all[0].Event)
	}
	reserves, err := db.ListAudit(ctx, from, to, booking.EventReserve, 100)
	if err != nil || len(reserves) != 2 {
		t.Fatalf("reserves: %d %v", len(reserves), err)
	}
	if limited, _ := db.ListAudit(ctx, from, to, "", 2); len(limited) != 2 || limited[0].ID != all[0].ID {
		t.Fatalf("limit 2: %+v", limited)
	}
	if other, _ := db.ListAudit(ctx, now.Add(-48*time.Hour), now.Add(-24*time.Hour), "", 100); len(other) != 0 {
		t.Fatalf("another day: %d records", len(other))
	}
	events, err := db.AuditEvents(ctx, from, to)
	if err != nil || len(events) != 2 || events[0] != booking.EventCheckIn || events[1] != booking.EventReserve {
		t.Fatalf("events %v %v", events, err)
	}
	n, oldest, err := db.UnshippedAuditBacklog(ctx)
	if err != nil || n != 3 || oldest == nil {
		t.Fatalf("backlog %d %v %v", n, oldest, err)
	}
	if err := db.MarkShipped(ctx, []int64{all[0].ID, all[1].ID, all[2].ID}); err != nil {
		t.Fatal(err)
	}
	if n, oldest, err := db.UnshippedAuditBacklog(ctx); err != nil || n != 0 || oldest != nil {
		t.Fatalf("backlog after shipping %d %v %v", n, oldest, err)
	}
}

func TestReleaseRunRecord(t *testing.T) {
	db := mysqltest.New(t)
	if r, err := db.LastReleaseRun(ctx); err != nil || r != nil {
		t.Fatalf("none yet: %+v %v", r, err)
	}
	now, _ := db.Now(ctx)
	old := booking.ReleaseRun{StartedAt: now.Add(-72 * time.Hour), FinishedAt: now.Add(-72 * time.Hour), Summary: `{"released":9}`}
	last := booking.ReleaseRun{StartedAt: now.Add(-2 * time.Second), FinishedAt: now, Summary: `{"released":1,"audited":4}`, Error: "boom"}
	for _, r := range []booking.ReleaseRun{old, last} {
		if err := db.RecordReleaseRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	r, err := db.LastReleaseRun(ctx)
	if err != nil || r.Summary != last.Summary || r.Error != "boom" || !r.FinishedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("last run %+v %v", r, err)
	}
	if n := countRows(t, db, "t_release_run"); n != 1 {
		t.Fatalf("%d runs kept: the one of three days ago should be pruned", n)
	}
}

func TestRefundsByState(t *testing.T) {
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 3*time.Hour, 5, 0)
	states := []booking.RefundStatus{booking.RefundPending, booking.RefundProcessing, booking.RefundFailed, booking.RefundFailed, booking.RefundSucceeded}
	for i, st := range states {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o" + string(rune('a'+i)), SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL().Exec(`UPDATE t_booking SET refund_status = ?, refund_fen = 100 WHERE book_id = ?`, string(st), b.ID); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := db.CountRefunds(ctx, booking.RefundPending, booking.RefundProcessing, booking.RefundFailed, booking.RefundSucceeded)
	if err != nil || counts[booking.RefundPending] != 1 || counts[booking.RefundProcessing] != 1 || counts[booking.RefundFailed] != 2 || counts[booking.RefundSucceeded] != 1 {
		t.Fatalf("counts %v %v", counts, err)
	}
	failed, err := db.ListRefunds(ctx, 10, booking.RefundFailed)
	if err != nil || len(failed) != 2 || failed[0].Refund.Status != booking.RefundFailed || failed[0].ID > failed[1].ID {
		t.Fatalf("failed %+v %v", failed, err)
	}
	if open, _ := db.ListRefunds(ctx, 1, booking.RefundPending, booking.RefundProcessing); len(open) != 1 {
		t.Fatalf("limit 1: %d", len(open))
	}
}

func TestConsoleSignOut(t *testing.T) {
	db := mysqltest.New(t)
	now, _ := db.Now(ctx)
	if ended, err := db.ConsoleSessionEnded(ctx, "sid-1"); err != nil || ended {
		t.Fatalf("before sign-out: %v %v", ended, err)
	}
	if err := db.EndConsoleSession(ctx, "sid-old", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := db.EndConsoleSession(ctx, "sid-1", now.Add(12*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.EndConsoleSession(ctx, "sid-1", now.Add(12*time.Hour)); err != nil {
		t.Fatalf("signing out twice: %v", err)
	}
	if ended, err := db.ConsoleSessionEnded(ctx, "sid-1"); err != nil || !ended {
		t.Fatalf("after sign-out: %v %v", ended, err)
	}
	// A sign-out past its session's expiry is forgotten: the cookie is dead anyway.
	if ended, _ := db.ConsoleSessionEnded(ctx, "sid-old"); ended {
		t.Fatal("an expired sign-out was kept")
	}
}

// The health page's notification counts: only the statuses asked for, and only
// those last due since the given time (the retention's stretch), however many
// older or sent ones the outbox holds.
func TestNotificationCountsSince(t *testing.T) {
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 3*time.Hour, 10, 0)
	now, _ := db.Now(ctx)
	for i, n := range []struct {
		status booking.NotificationStatus
		ago    time.Duration
	}{
		{booking.NotificationFailed, time.Hour}, {booking.NotificationFailed, 40 * 24 * time.Hour},
		{booking.NotificationRefused, 2 * time.Hour}, {booking.NotificationRefused, 3 * time.Hour},
		{booking.NotificationRefused, 31 * 24 * time.Hour}, {booking.NotificationSent, time.Hour},
	} {
		b, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "o-count-" + string(rune('a'+i)), SlotID: slot})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL().Exec(`INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, b.ID, booking.NotifyConfirmed, b.OpenID, n.status, now.Add(-n.ago), now.Add(-n.ago)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.NotificationCounts(ctx, now.Add(-booking.NotificationRetention), booking.NotificationFailed, booking.NotificationRefused)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[booking.NotificationFailed] != 1 || got[booking.NotificationRefused] != 2 {
		t.Fatalf("counts %v, want failed 1 and refused 2 of the last 30 days", got)
	}
}

// The console's 查预约 by phone (in full or its last four digits) and by the
// start of a name: each customer's bookings, mini-program and walk-in alike,
// newest first and bounded; the name's LIKE wildcards are taken literally.
func TestSearchBookingsByPhoneAndName(t *testing.T) {
	db := mysqltest.New(t)
	early := mysqltest.AddSlot(t, db, 3*time.Hour, 5, 0)
	late := mysqltest.AddSlot(t, db, 5*time.Hour, 5, 0)
	walkIn := func(slot int64, name, phone string) int64 {
		b, err := db.WalkIn(ctx, booking.WalkInRequest{SlotID: slot, Name: name, Phone: phone})
		if err != nil {
			t.Fatal(err)
		}
		return b.ID
	}
	wang := walkIn(early, "王女士", "13912345678")
	if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: wang, From: booking.StatusConfirmed, To: booking.StatusCompleted,
		Event: booking.EventCheckIn, Actor: booking.ActorSalon}); err != nil {
		t.Fatal(err)
	}
	wangAgain := walkIn(late, "王女士", "13912345678") // the same customer, by her phone
	fang := walkIn(early, "王芳", "13700005678")
	percent := walkIn(early, "100%满意", "")
	online, _, err := db.Reserve(ctx, booking.ReserveRequest{OpenID: "oLi", SlotID: late})
	if err != nil {
		t.Fatal(err)
	}
	name, phone := "李娜", "13600001234"
	if _, err := db.UpdateCustomer(ctx, "oLi", &name, &phone); err != nil {
		t.Fatal(err)
	}
	ids := func(bs []*booking.Booking) []int64 {
		var out []int64
		for _, b := range bs {
			if b.Customer == nil {
				t.Errorf("booking %d without its customer", b.ID)
			}
			out = append(out, b.ID)
		}
		return out
	}
	for _, c := range []struct {
		by    booking.CustomerSearch
		limit int
		want  []int64
	}{
		{booking.CustomerSearch{Phone: "13912345678"}, 20, []int64{wangAgain, wang}},
		{booking.CustomerSearch{PhoneTail: "5678"}, 20, []int64{fang, wangAgain, wang}},
		{booking.CustomerSearch{PhoneTail: "5678"}, 2, []int64{fang, wangAgain}},
		{booking.CustomerSearch{PhoneTail: "1234"}, 20, []int64{online.ID}},
		{booking.CustomerSearch{NamePrefix: "王"}, 20, []int64{fang, wangAgain, wang}},
		{booking.CustomerSearch{NamePrefix: "王女"}, 20, []int64{wangAgain, wang}},
		{booking.CustomerSearch{NamePrefix: "李"}, 20, []int64{online.ID}},
		{booking.CustomerSearch{NamePrefix: "100%"}, 20, []int64{percent}},
		{booking.CustomerSearch{NamePrefix: "%"}, 20, nil},
		{booking.CustomerSearch{NamePrefix: "_"}, 20, nil},
		{booking.CustomerSearch{NamePrefix: "赵"}, 20, nil},
	} {
		bs, err := db.SearchBookings(ctx, c.by, c.limit)
		if got := ids(bs); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SearchBookings(%+v, %d) = %v %v, want %v", c.by, c.limit, got, err, c.want)
		}
	}
	if _, err := db.SearchBookings(ctx, booking.CustomerSearch{}, 20); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Errorf("an empty search: %v", err)
	}
}
