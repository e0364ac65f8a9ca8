// Command migrate brings the database at MYSQL_DSN to the product's schema:
// it creates the database when the server does not have it, then applies the
// embedded migrations of shared/mysql that have not run yet. It is safe to run
// again and from several machines at once.
//
//	MYSQL_DSN='root@tcp(127.0.0.1:3306)/salon' go run ./infra/cmd/migrate
//	go run ./infra/cmd/migrate -demo      # and open a demo schedule
//
// -demo opens slots for the next 7 days (today included, shop time SHOP_TZ),
// 10:00-21:00, through the same service call as POST /admin/slots, so running
// it twice creates nothing new. Against TencentDB it runs from a machine inside
// the VPC (a CVM, or Cloud Shell with the VPC attached).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"salon/shared/booking"
	"salon/shared/config"
	"salon/shared/mysql"
	"salon/shared/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, time.Now, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

// demo is the demo schedule's shape; the flags can change it.
type demo struct {
	days, slotMinutes, capacity int
	open, close                 string
	priceFen                    int64
}

func run(ctx context.Context, args []string, getenv func(string) string, now func() time.Time, out io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	withDemo := fs.Bool("demo", false, "also open a demo schedule (skips slots that already exist)")
	var d demo
	fs.IntVar(&d.days, "days", 7, "demo: how many days, from today (shop time)")
	fs.StringVar(&d.open, "open", "10:00", "demo: opening time, HH:MM")
	fs.StringVar(&d.close, "close", "21:00", "demo: closing time, HH:MM; the last slot ends by it")
	fs.IntVar(&d.slotMinutes, "slot-minutes", 90, "demo: slot length")
	fs.IntVar(&d.capacity, "capacity", 3, "demo: seats per slot")
	fs.Int64Var(&d.priceFen, "price-fen", 5000, "demo: deposit per booking, in fen (0: no payment)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if d.days < 1 {
		return fmt.Errorf("-days must be at least 1")
	}

	// Only the two settings migrate uses are read, so a machine that runs it
	// (a CVM in the VPC) needs none of the functions' secrets.
	cfg, err := config.Load(func(k string) string {
		if k == "MYSQL_DSN" || k == "SHOP_TZ" {
			return getenv(k)
		}
		return ""
	})
	if err != nil {
		return err
	}
	created, err := mysql.CreateDatabase(ctx, cfg.MySQLDSN)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintln(out, "migrate: created the database")
	}
	store, err := mysql.Open(cfg.MySQLDSN, mysql.Options{MaxOpenConns: 2})
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "migrate: schema up to date")
	if !*withDemo {
		return nil
	}

	today := now().In(cfg.ShopTZ)
	sched := booking.Schedule{
		From:        today.Format("2006-01-02"),
		To:          today.AddDate(0, 0, d.days-1).Format("2006-01-02"),
		Open:        d.open,
		Close:       d.close,
		SlotMinutes: &d.slotMinutes,
		Capacity:    &d.capacity,
		PriceFen:    &d.priceFen,
	}
	svc := service.New(store)
	svc.Loc, svc.Policy = cfg.ShopTZ, cfg.Policy
	// The operator running migrate holds the deployment's keys: the owner.
	n, skipped, err := svc.CreateSchedule(service.WithStaff(ctx, booking.BuiltInOwner), sched)
	if err != nil {
		return fmt.Errorf("demo schedule: %w", err)
	}
	fmt.Fprintf(out, "migrate: demo schedule %s to %s, %s-%s (%s): %d slots created, %d already there\n",
		sched.From, sched.To, d.open, d.close, cfg.ShopTZ, n, skipped)
	return nil
}
