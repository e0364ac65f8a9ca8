package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

func TestReconcileExitCodes(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	store, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	slot := mysqltest.AddSlot(t, store, 30*time.Hour, 5, 5000)
	mysqltest.AddSlot(t, store, 31*time.Hour, 5, 5000)
	if _, _, err := store.Reserve(context.Background(), booking.ReserveRequest{OpenID: "o-1", SlotID: slot}); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "MYSQL_DSN" {
			return dsn
		}
		return ""
	}
	check := func(wantCode int, wantOut string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), env, &out, &errOut); code != wantCode || !strings.Contains(out.String(), wantOut) {
			t.Fatalf("exit %d, want %d; stdout %q (want %q); stderr %q", code, wantCode, out.String(), wantOut, errOut.String())
		}
	}

	check(exitClean, "OK")

	if _, err := store.SQL().Exec(`UPDATE t_slot SET booked = booked + 2 WHERE slot_id = ?`, slot); err != nil {
		t.Fatal(err)
	}
	check(exitDrift, "DRIFT slot "+strconv.FormatInt(slot, 10)+" (starts ")
	check(exitDrift, "booked=3 holding=1 capacity=5")
	var booked int
	if err := store.SQL().QueryRow(`SELECT booked FROM t_slot WHERE slot_id = ?`, slot).Scan(&booked); err != nil || booked != 3 {
		t.Fatalf("the check changed the slot: booked %d (%v)", booked, err)
	}
	var audits int
	if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE event = 'drift'`).Scan(&audits); err != nil || audits != 0 {
		t.Fatalf("the check wrote %d drift records (%v); it only reads", audits, err)
	}
	if _, err := store.SQL().Exec(`UPDATE t_slot SET booked = booked - 2 WHERE slot_id = ?`, slot); err != nil {
		t.Fatal(err)
	}
	mysqltest.CheckInvariant(t, store)
	check(exitClean, "OK")

	// Two cells of one technician that overlap (written around the store):
	// reported, and left as they are.
	svc := mysqltest.AddService(t, store, "单色", 30, 0, 0)
	amy := mysqltest.AddTechnician(t, store, "Amy", svc)
	cell := mysqltest.LayCells(t, store, amy, mysqltest.GridStart(t, store, 30*time.Hour), 1)[0]
	if _, err := store.SQL().Exec(`INSERT INTO t_slot (start_at, end_at, capacity, booked, price_fen, technician_id, is_open, created_at, updated_at)
		SELECT start_at + INTERVAL 15 MINUTE, end_at, 1, 0, 0, technician_id, 1, created_at, updated_at FROM t_slot WHERE slot_id = ?`, cell); err != nil {
		t.Fatal(err)
	}
	check(exitDrift, "DRIFT slot "+strconv.FormatInt(cell, 10)+" (starts ")
	check(exitDrift, "overlaps slot ")
}

func TestReconcileUnreachable(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "MYSQL_DSN" {
			return "root@tcp(127.0.0.1:1)/salon?timeout=1s"
		}
		return ""
	}
	if code := run(context.Background(), env, &out, &errOut); code != exitError || errOut.Len() == 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}
