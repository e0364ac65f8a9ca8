package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// The connection budget under scale-out: SCF starts one instance per request in
// flight, each with its own pool, and nothing in the database stops them
// opening more connections than it allows. This scenario runs N instances of
// the real reserve binary under the local runtime against a private MariaDB
// whose max_connections is far below 2N (two per instance is what the pools may
// open), releases a burst of requests through the gateway, and counts every
// answer by status and code, the time until the last one, and what the
// database holds afterwards.

// budgetAppUser is the account the functions connect as: no administrator
// privilege, so max_connections binds it (root may take one more).
const budgetAppUser = "salon_app"

// BudgetRun is one burst at one instance count.
type BudgetRun struct {
	Instances      int            `json:"max_instances"`
	Started        int            `json:"instances_started"`
	MaxConnections int            `json:"max_connections"`
	PeakUsed       int            `json:"max_used_connections"`
	Requests       int            `json:"requests"`
	Seats          int            `json:"seats"`
	Answers        map[string]int `json:"answers"` // "201", "409 SOLD_OUT", "503 UNAVAILABLE", "error" ...
	DrainMS        float64        `json:"all_answered_ms"`
	Latency        Latency        `json:"latency"`
	Bookings       int            `json:"bookings_in_database"`
	Drift          int            `json:"drift"` // sum over slots of |booked - bookings holding a seat|
	Oversells      int            `json:"oversells"`
	FirstErr       string         `json:"first_error,omitempty"`
}

// Budget is the scenario's runs and the server they ran against.
type Budget struct {
	MaxConnections int         `json:"max_connections"`
	Requests       int         `json:"requests"`
	Slots          int         `json:"slots"`
	SeatsPerSlot   int         `json:"seats_per_slot"`
	Runs           []BudgetRun `json:"runs"`
}

// count answers how many answers had the given key.
func (r BudgetRun) count(key string) int { return r.Answers[key] }

// lost is how many 201 answers have no booking or bookings no 201.
func (r BudgetRun) lost() int { return abs(r.Bookings - r.count("201")) }

func (b *bench) budgetRun() {
	b.logf("connection budget: %v instances, max_connections %d, %d requests", b.prof.BudgetInstances, b.prof.BudgetMaxConns, b.prof.BudgetRequests)
	if err := b.budget(); err != nil {
		b.fail("budget", err)
	}
}

func (b *bench) budget() error {
	srv, err := startPrivateServer(b.ctx, fmt.Sprintf("max-connections=%d", b.prof.BudgetMaxConns))
	if err != nil {
		return err
	}
	defer srv.stop()
	admin, err := sql.Open("mysql", srv.DSN)
	if err != nil {
		return err
	}
	defer admin.Close()
	admin.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE USER '" + budgetAppUser + "'@'127.0.0.1'",
		"GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON *.* TO '" + budgetAppUser + "'@'127.0.0.1'",
	} {
		if _, err := admin.ExecContext(b.ctx, q); err != nil {
			return fmt.Errorf("private server: %s: %w", q, err)
		}
	}
	const slots, seats = 10, 50
	res := &Budget{MaxConnections: b.prof.BudgetMaxConns, Requests: b.prof.BudgetRequests, Slots: slots, SeatsPerSlot: seats}
	b.res.Budget = res
	for _, n := range b.prof.BudgetInstances {
		run, err := b.budgetBurst(admin, srv, n, slots, seats)
		if err != nil {
			return fmt.Errorf("%d instances: %w", n, err)
		}
		b.logf("budget: %d instances: %v in %.0f ms", n, run.Answers, run.DrainMS)
		res.Runs = append(res.Runs, run)
	}
	return nil
}

// budgetBurst runs one burst with at most n instances on a fresh database.
func (b *bench) budgetBurst(admin *sql.DB, srv *privateServer, n, nSlots, seats int) (BudgetRun, error) {
	run := BudgetRun{Instances: n, MaxConnections: b.prof.BudgetMaxConns, Requests: b.prof.BudgetRequests, Seats: nSlots * seats, Answers: map[string]int{}}
	f, err := newFixture(b.ctx, srv.DSN, 2)
	if err != nil {
		return run, err
	}
	defer f.close()
	ids, err := productSlots(b.ctx, f.store, &f.next, f.base, nSlots, seats, 0)
	if err != nil {
		return run, err
	}
	cfg, _ := drv.ParseDSN(f.dsn)
	cfg.User = budgetAppUser
	p, err := newPlatformOf(b.binDir, cfg.FormatDSN(), n, "reserve")
	if err != nil {
		return run, err
	}
	defer p.close()
	// The fixture's own pool lets its connections go: only the functions hold any.
	f.store.SQL().SetMaxIdleConns(0)
	f.raw.SetMaxIdleConns(0)
	admin.ExecContext(b.ctx, "FLUSH STATUS")

	type answer struct {
		key string
		el  time.Duration
		err string
	}
	answers := make([]answer, run.Requests)
	tokens := make([]string, run.Requests)
	for i := range tokens {
		tokens[i] = p.token(customer())
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range run.Requests {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			st, body, err := p.call(b.ctx, http.MethodPost, "/bookings", tokens[i], map[string]int64{"slotId": ids[i%len(ids)]})
			a := answer{el: time.Since(t0)}
			switch {
			case err != nil:
				a.key, a.err = "error", err.Error()
			case st == http.StatusCreated:
				a.key = "201"
			default:
				var e struct{ Code string }
				json.Unmarshal(body, &e)
				a.key = strconv.Itoa(st) + " " + e.Code
				if st >= 500 && st != http.StatusServiceUnavailable {
					a.err = shortErr(string(body))
				}
			}
			answers[i] = a
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	run.DrainMS = ms(time.Since(t0))
	var els []time.Duration
	for _, a := range answers {
		run.Answers[a.key]++
		els = append(els, a.el)
		if a.err != "" && run.FirstErr == "" {
			run.FirstErr = shortErr(a.err)
		}
	}
	run.Latency = summarise(els)
	run.Started = len(p.log.of("reserve"))
	var name string
	admin.QueryRowContext(b.ctx, "SHOW GLOBAL STATUS LIKE 'Max_used_connections'").Scan(&name, &run.PeakUsed)
	// The warm instances hold their connections; let them go, so the server
	// has room to be read (their processes end, and the server sees it).
	p.close()
	// What the database holds: every 201 is a booking, and nothing else is.
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		err = f.store.SQL().QueryRowContext(b.ctx, `SELECT COUNT(*) FROM t_booking`).Scan(&run.Bookings)
		if err == nil || mysqlErrNo(err) != 1040 || wait > 5*time.Second {
			break
		}
		time.Sleep(wait) // the server is still closing the instances' connections
	}
	if err != nil {
		return run, err
	}
	p2 := &product{store: f.store}
	run.Oversells, run.Drift, err = p2.Count(b.ctx, ids)
	return run, err
}

func mysqlErrNo(err error) uint16 {
	var me *drv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// budgetLimit is the largest instance count whose burst got no 503 and no 500,
// lost nothing and kept the invariant; 0 when none did.
func budgetLimit(bu *Budget) int {
	best := 0
	for _, r := range bu.Runs {
		if r.count("503 "+booking.EUNAVAILABLE) == 0 && r.count("503 ") == 0 && !has5xx(r) && r.lost() == 0 && r.Drift == 0 && r.Oversells == 0 && r.count("error") == 0 {
			best = max(best, r.Instances)
		}
	}
	return best
}

func has5xx(r BudgetRun) bool {
	for k, v := range r.Answers {
		if v > 0 && len(k) >= 1 && k[0] == '5' {
			return true
		}
	}
	return false
}

// answerKeys are the answers seen in any run, 201 first.
func answerKeys(bu *Budget) []string {
	var keys []string
	for _, r := range bu.Runs {
		for k := range r.Answers {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// budgetSection writes the scenario's table.
func (p *page) budgetSection() {
	bu := p.res.Budget
	if bu == nil || len(bu.Runs) == 0 {
		return
	}
	p.w("## Connection budget under scale-out\n\n")
	p.w("A private mariadbd with max_connections %d; the real `reserve` binary under the local runtime with at most N instances (each instance's pool may open %d connections: %d x N against %d), connecting as an account without administrator privileges. "+
		"Each run: a fresh database with %d free slots of %d seats, %d requests (each a fresh customer, spread over the slots) released together through the local gateway, direct. "+
		"Answers are counted by HTTP status and code; \"all answered\" is the time until the last answer; the database is read afterwards: the bookings it holds against the 201 answers, and booked against the bookings on every slot.\n\n",
		bu.MaxConnections, mysql.SCFOptions.MaxOpenConns, mysql.SCFOptions.MaxOpenConns, bu.MaxConnections, bu.Slots, bu.SeatsPerSlot, bu.Requests)
	keys := answerKeys(bu)
	p.w("| max instances | instances started | max used connections |")
	for _, k := range keys {
		p.w(" %s |", k)
	}
	p.w(" all answered ms | p50 ms | p99 ms | bookings in the database | 201 without a booking or booking without a 201 | drift | oversold | first error |\n|")
	for range 3 + len(keys) + 9 {
		p.w(" --- |")
	}
	p.w("\n")
	for _, r := range bu.Runs {
		p.w("| %d | %d | %d |", r.Instances, r.Started, r.PeakUsed)
		for _, k := range keys {
			p.w(" %d |", r.Answers[k])
		}
		p.w(" %.0f | %.1f | %.1f | %d | %d | %d | %d | %s |\n", r.DrainMS, r.Latency.P50, r.Latency.P99, r.Bookings, r.lost(), r.Drift, r.Oversells, r.FirstErr)
	}
	if n := budgetLimit(bu); n > 0 {
		p.w("\nThe largest N measured with no 503, no 500, no transport error, nothing lost and the invariant kept: %d.\n\n", n)
	} else {
		p.w("\nNo N measured was free of 503, 500 and transport errors.\n\n")
	}
}
