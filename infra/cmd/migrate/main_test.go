package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// freshName returns a DSN naming a database that does not exist yet, and drops
// it when the test ends.
func freshName(t *testing.T) string {
	t.Helper()
	cfg, err := drv.ParseDSN(mysqltest.ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "salon_m_" + hex.EncodeToString(b[:])
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Close()
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

func TestMigrateCreatesTheDatabaseAndTheDemoSchedule(t *testing.T) {
	t.Parallel()
	dsn := freshName(t)
	env := map[string]string{"MYSQL_DSN": dsn, "SHOP_TZ": "Asia/Shanghai", "SESSION_SECRET": "too short is not migrate's business"}
	// 23:30 UTC is already the next day in Shanghai: the demo starts on the shop's today.
	now := func() time.Time { return time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC) }
	ctx := context.Background()

	var out bytes.Buffer
	if err := run(ctx, []string{"-demo"}, func(k string) string { return env[k] }, now, &out); err != nil {
		t.Fatalf("first run: %v\n%s", err, out.String())
	}
	// 10:00-21:00 in 90-minute slots is 7 a day; 7 days.
	if !strings.Contains(out.String(), "created the database") || !strings.Contains(out.String(), "2026-12-02 to 2026-12-08") ||
		!strings.Contains(out.String(), "49 slots created, 0 already there") {
		t.Fatalf("first run said:\n%s", out.String())
	}
	// Three technicians, 22 cells of 30 minutes a day each, 7 days.
	if !strings.Contains(out.String(), "demo menu: 3 services (3 new), 3 technicians (3 new), hours 2026-12-02 to 2026-12-08, 10:00-21:00: 462 cells created, 0 already there") {
		t.Fatalf("first run said:\n%s", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"-demo"}, func(k string) string { return env[k] }, now, &out); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if strings.Contains(out.String(), "created the database") || !strings.Contains(out.String(), "0 slots created, 49 already there") ||
		!strings.Contains(out.String(), "3 services (0 new), 3 technicians (0 new), hours 2026-12-02 to 2026-12-08, 10:00-21:00: 0 cells created, 462 already there") {
		t.Fatalf("second run said:\n%s", out.String())
	}

	store, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	slots, err := store.ListSlots(ctx, time.Date(2026, 12, 2, 0, 0, 0, 0, shanghai), time.Date(2026, 12, 3, 0, 0, 0, 0, shanghai))
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 7 {
		t.Fatalf("%d slots on the first day, want 7", len(slots))
	}
	if first := slots[0]; !first.StartAt.Equal(time.Date(2026, 12, 2, 10, 0, 0, 0, shanghai)) || first.Capacity != 3 || first.PriceFen != 5000 {
		t.Fatalf("first slot %+v, want 10:00 shop time, 3 seats, 5000 fen", first)
	}

	// The menu, as the customer's GET /services reads it: every service done
	// by someone, 小美 doing all three.
	services, err := store.Menu(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"单色美甲": "60 12800 3000 3", "延长甲": "120 29800 5000 2", "手部护理": "30 6800 0 2"}
	if len(services) != 3 {
		t.Fatalf("services %+v", services)
	}
	for _, sv := range services {
		if got := fmt.Sprintf("%d %d %d %d", sv.Minutes, sv.PriceFen, sv.DepositFen, len(sv.Technicians)); got != want[sv.Name] {
			t.Errorf("service %s: %s, want %s", sv.Name, got, want[sv.Name])
		}
	}
}

func TestMigrateWithoutDemoAndBadSettings(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t) // exists already: nothing to create
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"MYSQL_DSN": dsn}[k] }
	if err := run(context.Background(), nil, getenv, time.Now, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "migrate: schema up to date\n" {
		t.Fatalf("said %q", out.String())
	}

	err := run(context.Background(), nil, func(k string) string {
		return map[string]string{"MYSQL_DSN": dsn, "SHOP_TZ": "Mars/Olympus"}[k]
	}, time.Now, &out)
	if err == nil || !strings.Contains(err.Error(), "SHOP_TZ") {
		t.Fatalf("bad SHOP_TZ: %v", err)
	}
	err = run(context.Background(), nil, func(k string) string {
		return map[string]string{"MYSQL_DSN": "root@tcp(127.0.0.1:3306)/bad-name"}[k]
	}, time.Now, &out)
	if err == nil || !strings.Contains(err.Error(), "letters, digits and _") {
		t.Fatalf("bad database name: %v", err)
	}
}
