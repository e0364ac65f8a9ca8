package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/mysql"
)

// fixture is one scenario's fresh database: the product's schema (Migrate) and
// the contenders' tables side by side, dropped when the scenario ends. It has
// pools on every network the run measures; store, raw and dsn are the direct ones.
type fixture struct {
	dsn   string // direct, as the function binaries get it
	name  string
	store *mysql.DB // the product's store, direct
	raw   *sql.DB   // the contenders' pool, direct, same driver settings as the store
	at    map[string]*pools
	next  atomic.Int64
	base  time.Time
	drop  func()
}

// pools are a fixture's connections over one network.
type pools struct {
	dsn   string    // plain DSN of this network (for the function binaries)
	store *mysql.DB // the product's store
	raw   *sql.DB   // the contenders'
}

func (ps *pools) close() {
	if ps.raw != nil {
		ps.raw.Close()
	}
	if ps.store != nil {
		ps.store.Close()
	}
}

// openPools opens the store and the contenders' pool on dsn; their
// connections count their writes (driverWrites).
func openPools(dsn string, conns int) (*pools, error) {
	ps := &pools{dsn: dsn}
	var err error
	if ps.store, err = mysql.Open(counted(dsn), mysql.Options{MaxOpenConns: conns, ConnMaxIdleTime: time.Second}); err != nil {
		return nil, err
	}
	pcfg, err := mysql.Config(counted(dsn))
	if err != nil {
		ps.close()
		return nil, err
	}
	pcfg.MultiStatements = true
	conn, err := drv.NewConnector(pcfg)
	if err != nil {
		ps.close()
		return nil, err
	}
	ps.raw = sql.OpenDB(conn)
	ps.raw.SetMaxOpenConns(conns)
	ps.raw.SetMaxIdleConns(conns)
	// The server's connections are shared with other people's tests: a pool not
	// in use gives its connections back within a second.
	ps.raw.SetConnMaxIdleTime(time.Second)
	return ps, nil
}

func newFixture(ctx context.Context, serverDSN string, conns int, nets ...*network) (*fixture, error) {
	cfg, err := drv.ParseDSN(serverDSN)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	rand.Read(b[:])
	name := "salon_bench_" + hex.EncodeToString(b[:])
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	// The name is generated above, never taken from input.
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4"); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create database: %w", err)
	}
	f := &fixture{name: name, at: map[string]*pools{}}
	f.drop = func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Close()
	}
	cfg.DBName = name
	f.dsn = cfg.FormatDSN()
	direct, err := openPools(f.dsn, conns)
	if err != nil {
		f.drop()
		return nil, err
	}
	f.store, f.raw, f.at[networkName(0)] = direct.store, direct.raw, direct
	for _, n := range nets {
		if n.delay == 0 {
			continue
		}
		dsn, err := withAddr(f.dsn, n.mysql)
		if err != nil {
			f.close()
			return nil, err
		}
		if f.at[n.Name], err = openPools(dsn, conns); err != nil {
			f.close()
			return nil, err
		}
	}
	if err := f.store.Migrate(ctx); err != nil {
		f.close()
		return nil, err
	}
	if _, err := f.raw.ExecContext(ctx, benchSchema); err != nil {
		f.close()
		return nil, err
	}
	if err := createForms(ctx, f.raw); err != nil {
		f.close()
		return nil, err
	}
	now, err := f.store.Now(ctx)
	if err != nil {
		f.close()
		return nil, err
	}
	f.base = now.Add(time.Hour).Truncate(time.Second)
	return f, nil
}

func (f *fixture) close() {
	for _, ps := range f.at {
		ps.close()
	}
	f.drop()
}

var customerSeq atomic.Int64

// customer names a fresh customer: each books once, as a launch brings new ones.
func customer() string { return fmt.Sprintf("c%d-%d", os.Getpid(), customerSeq.Add(1)) }

// ---- measurements ------------------------------------------------------------

// Latency is a latency summary in milliseconds.
type Latency struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	q := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return ms(ds[i])
	}
	return Latency{N: len(ds), P50: q(0.5), P99: q(0.99), P999: q(0.999), Max: ms(ds[len(ds)-1])}
}

// Cell is one run of one contender in one configuration.
type Cell struct {
	Scenario  string      `json:"scenario"`
	Network   string      `json:"network"`
	Contender string      `json:"contender"`
	Clients   int         `json:"clients"`
	Rep       int         `json:"rep"`
	Seconds   float64     `json:"seconds"`
	Taken     int         `json:"taken"`
	SoldOut   int         `json:"sold_out"`
	Conflicts int         `json:"conflicts"`
	Errors    int         `json:"errors"`
	FirstErr  string      `json:"first_error,omitempty"`
	SeatsPerS float64     `json:"seats_per_s"`
	OpsPerS   float64     `json:"ops_per_s"`
	Latency   Latency     `json:"latency"`
	Oversells int         `json:"oversells"`
	Drift     int         `json:"drift"`
	Samples   []float64   `json:"-"` // latencies (ms) kept for the charts
	Profile   CellProfile `json:"profile"`
}

// throughput runs clients workers against slots for d and answers the cell.
func throughput(ctx context.Context, c contender, scenario string, slots []int64, clients int, d time.Duration, rep int) Cell {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      []time.Duration
		counts   [3]int
		errs     int
		firstErr string
		pick     atomic.Int64
	)
	stop := time.Now().Add(d)
	began := time.Now()
	for w := range clients {
		wg.Go(func() {
			var local []time.Duration
			var lc [3]int
			le := 0
			var lerr string
			for time.Now().Before(stop) {
				slot := slots[int(pick.Add(1))%len(slots)]
				octx, cancel := context.WithTimeout(ctx, 10*time.Second)
				t0 := time.Now()
				o, err := c.Reserve(octx, w, slot, customer())
				el := time.Since(t0)
				cancel()
				if err != nil {
					le++
					if lerr == "" {
						lerr = err.Error()
					}
					continue
				}
				lc[o]++
				local = append(local, el)
			}
			mu.Lock()
			all = append(all, local...)
			for i := range counts {
				counts[i] += lc[i]
			}
			errs += le
			if firstErr == "" {
				firstErr = lerr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	secs := time.Since(began).Seconds()
	cell := Cell{Scenario: scenario, Contender: c.Name(), Clients: clients, Rep: rep, Seconds: secs,
		Taken: counts[taken], SoldOut: counts[soldOut], Conflicts: counts[conflict], Errors: errs, FirstErr: firstErr,
		SeatsPerS: float64(counts[taken]) / secs, OpsPerS: float64(len(all)) / secs}
	cell.Latency = summarise(all)
	cell.Samples = sampleMS(all, 2000)
	var err error
	cell.Oversells, cell.Drift, err = c.Count(ctx, slots)
	if err != nil && cell.FirstErr == "" {
		cell.FirstErr = "count: " + err.Error()
	}
	return cell
}

// sampleMS keeps at most n evenly spaced values of a sorted slice, in ms.
func sampleMS(sorted []time.Duration, n int) []float64 {
	if len(sorted) == 0 {
		return nil
	}
	step := max(1, len(sorted)/n)
	out := make([]float64, 0, n+1)
	for i := 0; i < len(sorted); i += step {
		out = append(out, ms(sorted[i]))
	}
	return out
}

// Burst is one launch: n concurrent reserves released together on the last seat.
type Burst struct {
	Path       string      `json:"path"` // store or gateway, or the contender's name
	Network    string      `json:"network"`
	Rep        int         `json:"rep"`
	Requests   int         `json:"requests"`
	Successes  int         `json:"successes"`
	SoldOut    int         `json:"sold_out"`
	Errors     int         `json:"errors"`
	FirstErr   string      `json:"first_error,omitempty"`
	Oversells  int         `json:"oversells"`
	Drift      int         `json:"drift"`
	AllAnswerd float64     `json:"all_answered_ms"`
	Profile    CellProfile `json:"profile"`
}

// burst releases n reserves on a one-seat slot at once.
func burst(ctx context.Context, c contender, n, rep int) Burst {
	b := Burst{Path: c.Name(), Rep: rep, Requests: n}
	slots, err := c.Slots(ctx, 1, 1)
	if err != nil {
		b.Errors, b.FirstErr = n, err.Error()
		return b
	}
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	var mu sync.Mutex
	for w := range n {
		ready.Add(1)
		wg.Go(func() {
			who := customer()
			ready.Done()
			<-start
			octx, cancel := context.WithTimeout(ctx, 20*time.Second)
			o, err := c.Reserve(octx, w, slots[0], who)
			cancel()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				b.Errors++
				if b.FirstErr == "" {
					b.FirstErr = err.Error()
				}
			case o == taken:
				b.Successes++
			default:
				b.SoldOut++
			}
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	wg.Wait()
	b.AllAnswerd = ms(time.Since(t0))
	b.Oversells, b.Drift, err = c.Count(ctx, slots)
	if err != nil && b.FirstErr == "" {
		b.FirstErr = "count: " + err.Error()
	}
	return b
}

// rotate answers cs starting at i mod len: each round starts with another
// contender, so neither position nor drift favours one.
func rotate[T any](cs []T, i int) []T {
	i %= len(cs)
	return append(append([]T(nil), cs[i:]...), cs[:i]...)
}

func shortErr(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
