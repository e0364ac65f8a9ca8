// Command reconcile checks, for every slot that has not started, that its booked
// counter equals the seats its bookings hold (their t_booking_slot rows, of
// bookings in a status that holds a seat: invariant 2 in shared/README.md), and
// that no two cells of one technician overlap in time, with the same store query
// the release run uses every minute. It prints each drift and exits 1 if there is
// any, 0 if there is none, 2 if it could not check.
//
//	MYSQL_DSN='user:pw@tcp(host:3306)/salon' go run ./infra/cmd/reconcile
//	scripts/reconcile.sh
//
// It only reads: a drift is a bug to find, and "repairing" the counter could give
// a paid seat away. The release run records each drift it finds in the audit
// trail (event "drift"); this command records nothing, so it can be run at will.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"salon/shared/config"
	"salon/shared/mysql"
	"salon/shared/service"
)

// Exit codes.
const (
	exitClean = 0
	exitDrift = 1
	exitError = 2
)

// timeout bounds the whole check; the query scans only slots that have not started.
const timeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	// Only the database: a bad setting of the functions' never stops the check.
	cfg, err := config.LoadFor(getenv, []string{"MYSQL_DSN"})
	if err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return exitError
	}
	store, err := mysql.Open(cfg.MySQLDSN, mysql.Options{MaxOpenConns: 2})
	if err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return exitError
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	drifts, err := store.FindDrift(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "reconcile: check the slots:", err)
		return exitError
	}
	for _, d := range drifts {
		when := "start unknown"
		if sl, err := store.FindSlot(ctx, d.SlotID); err == nil {
			when = "starts " + sl.StartAt.In(cfg.ShopTZ).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(stdout, "DRIFT slot %d (%s): %s\n", d.SlotID, when, service.DriftReason(d))
	}
	if len(drifts) > 0 {
		fmt.Fprintf(stdout, "%d slot(s) drifted; nothing was changed: find the cause before correcting any counter\n", len(drifts))
		return exitDrift
	}
	fmt.Fprintln(stdout, "OK: every slot that has not started matches its bookings, and no technician's cells overlap")
	return exitClean
}
