// Command migrate brings the database at MYSQL_DSN to the product's schema:
// it creates the database when the server does not have it, then applies the
// embedded migrations of shared/mysql that have not run yet. It is safe to run
// again and from several machines at once.
//
//	MYSQL_DSN='root@tcp(127.0.0.1:3306)/salon' go run ./infra/cmd/migrate
//	go run ./infra/cmd/migrate -demo      # and open a demo schedule
//
// -demo opens slots for the next 7 days (today included, shop time SHOP_TZ),
// 10:00-21:00, through the same service call as POST /admin/slots, and a menu
// of three services done by three technicians whose hours are the same days
// and times (demoMenu), through the calls of POST /admin/services,
// /admin/technicians and /admin/technicians/{id}/hours; running it twice
// creates nothing new. Against TencentDB it runs from a machine inside
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
	"salon/shared/instance"
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

	// Only the settings migrate uses are read (GRID_MINUTES: the demo
	// technicians' cells must be the functions' grid), so a machine that runs it
	// (a CVM in the VPC) needs none of the functions' secrets.
	cfg, err := config.Load(func(k string) string {
		if k == "MYSQL_DSN" || k == "SHOP_TZ" || k == "GRID_MINUTES" {
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
	svc := instance.NewService(store)
	svc.Loc, svc.Policy = cfg.ShopTZ, cfg.Policy
	// The operator running migrate holds the deployment's keys: the owner.
	n, skipped, err := svc.CreateSchedule(service.WithStaff(ctx, booking.BuiltInOwner), sched)
	if err != nil {
		return fmt.Errorf("demo schedule: %w", err)
	}
	fmt.Fprintf(out, "migrate: demo schedule %s to %s, %s-%s (%s): %d slots created, %d already there\n",
		sched.From, sched.To, d.open, d.close, cfg.ShopTZ, n, skipped)
	hours := booking.Hours{From: sched.From, To: sched.To, Open: d.open, Close: d.close}
	return openDemoMenu(service.WithStaff(ctx, booking.BuiltInOwner), svc.Menu, hours, out)
}

// demoService is a service of the demo menu.
type demoService struct {
	name                 string
	minutes              int
	priceFen, depositFen int64
}

// demoMenu is the demo's services and technicians: who does what (by the
// services' names).
var demoMenu = struct {
	services    []demoService
	technicians map[string][]string
	order       []string
}{
	services: []demoService{
		{"单色美甲", 60, 12800, 3000},
		{"延长甲", 120, 29800, 5000},
		{"手部护理", 30, 6800, 0}, // no deposit: confirmed at once, without payment
	},
	technicians: map[string][]string{
		"小美": {"单色美甲", "延长甲", "手部护理"},
		"小丽": {"单色美甲", "延长甲"},
		"阿芳": {"单色美甲", "手部护理"},
	},
	order: []string{"小美", "小丽", "阿芳"},
}

// openDemoMenu adds the demo's services and technicians that are not there
// yet (by name, so a second run adds none) and opens every demo technician's
// hours, the cells there already skipped.
func openDemoMenu(ctx context.Context, menu *service.Menu, hours booking.Hours, out io.Writer) error {
	have, err := menu.AdminServices(ctx)
	if err != nil {
		return fmt.Errorf("demo menu: %w", err)
	}
	serviceID := map[string]int64{}
	for _, sv := range have {
		serviceID[sv.Name] = sv.ID
	}
	newServices := 0
	for _, d := range demoMenu.services {
		if _, ok := serviceID[d.name]; ok {
			continue
		}
		name, minutes, price, deposit := d.name, d.minutes, d.priceFen, d.depositFen
		sv, err := menu.CreateService(ctx, booking.ServiceUpdate{Name: &name, Minutes: &minutes, PriceFen: &price, DepositFen: &deposit})
		if err != nil {
			return fmt.Errorf("demo service %s: %w", d.name, err)
		}
		serviceID[d.name] = sv.ID
		newServices++
	}
	techs, err := menu.Technicians(ctx)
	if err != nil {
		return fmt.Errorf("demo menu: %w", err)
	}
	technicianID := map[string]int64{}
	for _, t := range techs {
		technicianID[t.Name] = t.ID
	}
	newTechnicians, cells, skipped := 0, 0, 0
	for _, name := range demoMenu.order {
		if _, ok := technicianID[name]; !ok {
			var ids []int64
			for _, sv := range demoMenu.technicians[name] {
				ids = append(ids, serviceID[sv])
			}
			name := name
			t, err := menu.CreateTechnician(ctx, booking.TechnicianUpdate{Name: &name, ServiceIDs: &ids})
			if err != nil {
				return fmt.Errorf("demo technician %s: %w", name, err)
			}
			technicianID[name] = t.ID
			newTechnicians++
		}
		n, k, err := menu.OpenHours(ctx, technicianID[name], hours)
		if err != nil {
			return fmt.Errorf("demo hours of %s: %w", name, err)
		}
		cells, skipped = cells+n, skipped+k
	}
	fmt.Fprintf(out, "migrate: demo menu: %d services (%d new), %d technicians (%d new), hours %s to %s, %s-%s: %d cells created, %d already there\n",
		len(demoMenu.services), newServices, len(demoMenu.order), newTechnicians, hours.From, hours.To, hours.Open, hours.Close, cells, skipped)
	return nil
}
