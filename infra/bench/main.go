// Command bench measures the product's design against the alternatives it
// rejected, on this machine, and writes infra/bench/results/: BENCHMARKS.md
// (tables, targets), results.json (every cell) and SVG charts.
//
//	scripts/bench.sh [-quick] [-out infra/bench/results]
//
// It is a Go module of its own (go.mod here requires salon through a replace),
// so Redis, NATS, etcd, zap and gonum/plot are requirements of the benchmark and
// never of the product. It runs from the repository root: it builds the function
// binaries from ./functions and writes to infra/bench/results; scripts/bench.sh
// builds it here and starts it there.
//
// It needs MariaDB (MYSQL_DSN, default root@tcp(127.0.0.1:3306)/), Redis on 6379,
// NATS on 4222 and the etcd binary (Debian's etcd-server), which it starts itself
// on a temporary directory. Every scenario gets its own fresh database, dropped
// at the end. Contenders run interleaved (A B C A B C ...), each round starting
// with another one, so drift on a shared machine hits every contender alike, and
// every comparison is a ratio of cells measured in the same run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// Profile sizes a run.
type Profile struct {
	Name       string `json:"name"`
	BurstReps  int    `json:"burst_reps"`     // product, store and gateway
	ContBursts int    `json:"contender_reps"` // every other contender
	// The repetitions SELECT ... FOR UPDATE runs too, at least: the burst's
	// target compares it with the product over the repetitions both ran, and a
	// p99 of fewer than 20 says little.
	TargetBursts int           `json:"target_reps,omitempty"`
	BurstSize    int           `json:"burst_size"`
	Clients      []int         `json:"clients"`
	Reps         int           `json:"reps"`
	Cell         time.Duration `json:"cell"`
	SoldOutReps  int           `json:"sold_out_reps"`
	E2ERequests  int           `json:"e2e_requests"`
	ColdStarts   int           `json:"cold_starts"`
	Holds        int           `json:"holds"`
	OverheadReps int           `json:"overhead_blocks"`
	// The connection budget: instance counts, the private server's
	// max_connections, and the burst's size.
	BudgetInstances []int `json:"budget_instances"`
	BudgetMaxConns  int   `json:"budget_max_connections"`
	BudgetRequests  int   `json:"budget_requests"`
}

var (
	quickProfile = Profile{Name: "quick", BurstReps: 20, ContBursts: 3, TargetBursts: 20, BurstSize: 130, Clients: []int{8, 32, 128}, Reps: 1,
		Cell: 400 * time.Millisecond, SoldOutReps: 2, E2ERequests: 150, ColdStarts: 2, Holds: 100, OverheadReps: 4,
		BudgetInstances: []int{40, 300}, BudgetMaxConns: 60, BudgetRequests: 1000}
	fullProfile = Profile{Name: "full", BurstReps: 100, ContBursts: 20, TargetBursts: 20, BurstSize: 130, Clients: []int{8, 32, 128}, Reps: 3,
		Cell: 2 * time.Second, SoldOutReps: 5, E2ERequests: 1000, ColdStarts: 10, Holds: 500, OverheadReps: 20,
		BudgetInstances: []int{10, 25, 40, 55, 58, 70, 100, 200, 300}, BudgetMaxConns: 60, BudgetRequests: 1000}
)

// Results is everything one run measured; results.json is this.
type Results struct {
	Started   time.Time     `json:"started"`
	Seconds   float64       `json:"seconds"`
	Profile   Profile       `json:"profile"`
	Conns     int           `json:"pool_connections"`
	Machine   Machine       `json:"machine"`
	Networks  []NetworkInfo `json:"networks"`
	Notes     []string      `json:"notes"`
	Bursts    []Burst       `json:"bursts"`
	Cells     []Cell        `json:"throughput"`
	SoldOut   []Cell        `json:"sold_out"`
	E2E       []E2E         `json:"end_to_end"`
	Functions []Function    `json:"functions"`
	Overhead  *Overhead     `json:"gateway_overhead,omitempty"`
	Payments  *Payments     `json:"payments,omitempty"`
	Budget    *Budget       `json:"connection_budget,omitempty"`
	Growth    *Growth       `json:"growth,omitempty"`
	// Reports is the owner's report beside its floor (reports.go).
	Reports *ReportBench `json:"reports,omitempty"`
	// Technicians is the technician scenario's runs (technicians.go).
	Technicians []TechRun         `json:"technicians,omitempty"`
	Targets     []Target          `json:"targets"`
	Errors      map[string]string `json:"errors,omitempty"`
}

func main() {
	opts := parseFlags()
	if opts.rerender {
		if err := rerender(opts.out); err != nil {
			fmt.Fprintln(os.Stderr, "bench -rerender:", err)
			os.Exit(1)
		}
		return
	}
	if opts.proxy != "" {
		if err := proxyChild(opts.proxy, opts.delay); err != nil {
			fmt.Fprintln(os.Stderr, "bench -proxy:", err)
			os.Exit(1)
		}
		return
	}
	if err := checkRepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run measures every scenario the options want, in this order, and writes the
// report. A scenario that fails is recorded in the results and the run goes on.
func run(opts options) error {
	b, err := newBench(opts)
	if err != nil {
		return err
	}
	defer b.close()
	if opts.cpuProfile != "" {
		stop, err := startCPUProfile(opts.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	defer b.connectPeers()()
	removeBinaries, err := b.buildFunctionBinaries()
	if err != nil {
		return err
	}
	defer removeBinaries()
	b.scenario("burst", b.burstRun)
	b.scenario("throughput", b.throughputRun)
	b.scenario("soldout", b.soldOutRun)
	b.scenario("technicians", b.techniciansRun)
	b.scenarioWithBinaries("e2e", b.e2eRun)
	b.scenarioWithBinaries("cold", b.coldRun)
	b.scenarioWithBinaries("budget", b.budgetRun)
	b.scenario("payments", b.paymentsRun)
	b.scenario("growth", b.growthRun)
	b.scenario("reports", b.reportsRun)
	return b.report()
}

// options are the command line.
type options struct {
	quick      bool
	out        string
	conns      int
	reps       int
	cell       time.Duration
	contenders string // comma-separated names to keep; empty keeps all
	only       string // comma-separated scenarios; empty runs all
	delay      time.Duration
	proxy      string // -proxy mode: name=host:port,... (the distance's own process)
	private    bool   // measure on a MariaDB of the tool's own instead of MYSQL_DSN's
	cpuProfile string // write the client's Go CPU profile here
	statements bool   // with -private: the server's statement digests into statements.txt
	rerender   bool   // write the report again from -out's results.json
	chain      int    // the growth scenario's chain: this many salons' history (0: none)
}

func parseFlags() options {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "the short profile (under 2 minutes)")
	flag.StringVar(&o.out, "out", "infra/bench/results", "where BENCHMARKS.md, results.json and the charts go")
	flag.IntVar(&o.conns, "conns", 16, "connections per pool (the server's max_connections is shared)")
	flag.IntVar(&o.reps, "reps", 0, "override the profile's repetitions of each throughput cell")
	flag.DurationVar(&o.cell, "cell", 0, "override the profile's duration of a throughput cell")
	flag.StringVar(&o.contenders, "contenders", "", "comma-separated contender names to keep (default all)")
	flag.StringVar(&o.only, "only", "", "comma-separated scenarios to run (burst,throughput,soldout,technicians,e2e,cold,budget,payments,growth,reports); default all")
	flag.DurationVar(&o.delay, "delay", 250*time.Microsecond, "one-way delay of the second network every contender is also measured on (0: direct only)")
	flag.BoolVar(&o.private, "private", false, "measure on a private mariadbd the tool starts (own port and data directory, server defaults) instead of MYSQL_DSN's server, so the server's counters and CPU are this run's alone")
	flag.BoolVar(&o.rerender, "rerender", false, "measure nothing: judge the targets and write BENCHMARKS.md again from the results.json in -out (the charts stay as drawn)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write this process's CPU profile (go tool pprof) to the file")
	flag.BoolVar(&o.statements, "statements", false, "with -private: turn on performance_schema and write the server's statement digests (time, rows, lock time per statement shape) to statements.txt beside the report")
	flag.IntVar(&o.chain, "chain", -1, "the growth and reports scenarios' chain-sized history, in salons (0 leaves it out; default 100 in the full profile, 0 in -quick)")
	flag.StringVar(&o.proxy, "proxy", "", "run as the latency proxy for name=host:port,... (started by the tool itself)")
	flag.Parse()
	if o.chain < 0 {
		o.chain = 100
		if o.quick {
			o.chain = 0
		}
	}
	return o
}

// profile is the chosen profile with the command line's overrides.
func (o options) profile() Profile {
	prof := fullProfile
	if o.quick {
		prof = quickProfile
	}
	if o.reps > 0 {
		prof.Reps = o.reps
	}
	if o.cell > 0 {
		prof.Cell = o.cell
	}
	return prof
}

// inList reports whether name is in the comma-separated list; an empty list
// holds everything.
func inList(list, name string) bool {
	return list == "" || strings.Contains(","+list+",", ","+name+",")
}

// bench is one run: what it measures against, and what it has measured so far.
type bench struct {
	opts options
	prof Profile
	ctx  context.Context
	dsn  string // the server, without a database
	res  *Results

	// The networks every contender is measured on: direct, and (with -delay)
	// through the latency proxy.
	nets []*network
	// probe reads the client's and the server's counters around each cell.
	probe *probe
	// private is the tool's own server when -private asked for one.
	private *privateServer
	// cpu accounts for the machine's CPU over the run.
	cpu cpuAccount
	// runID keeps this run's keys and subjects apart from any other run's.
	runID int64
	// binDir holds the function binaries; empty when they could not be built,
	// and the scenarios that run them are left out.
	binDir string
}

func newBench(opts options) (*bench, error) {
	ctx := context.Background()
	b := &bench{opts: opts, prof: opts.profile(), ctx: ctx, dsn: envOr("MYSQL_DSN", "root@tcp(127.0.0.1:3306)/")}
	b.res = &Results{Started: time.Now(), Profile: b.prof, Errors: map[string]string{}}
	server := "the server at MYSQL_DSN"
	if opts.private {
		settings := []string{"max-connections=1000"}
		if opts.statements {
			settings = append(settings, "performance-schema=ON")
		}
		s, err := startPrivateServer(ctx, settings...)
		if err != nil {
			return nil, fmt.Errorf("private server: %w", err)
		}
		b.private, b.dsn = s, s.DSN
		server = "a private mariadbd the tool started (server defaults, max_connections=1000)"
	}
	b.res.Machine = machine(ctx, b.dsn)
	b.res.Machine.Server = server
	b.res.Conns = opts.conns
	b.probe = newProbe(ctx, serverOnly(b.dsn))
	b.cpu = startCPUAccount(b.probe, b.private != nil)
	if b.private != nil {
		b.cpu.track(b.private.pid)
	}
	return b, nil
}

func (b *bench) close() {
	b.probe.close()
	if b.private != nil {
		b.private.stop()
	}
}

// fail records a scenario's error in the results and says it at once.
func (b *bench) fail(scenario string, err error) {
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", scenario, err)
	b.res.Errors[scenario] = err.Error()
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %6.1fs "+format+"\n", append([]any{time.Since(b.res.Started).Seconds()}, args...)...)
}

// scenario runs measure when the command line wants the scenario.
func (b *bench) scenario(name string, measure func()) {
	if inList(b.opts.only, name) {
		measure()
	}
}

// scenarioWithBinaries is scenario for those that run the function binaries.
func (b *bench) scenarioWithBinaries(name string, measure func()) {
	if b.binDir != "" {
		b.scenario(name, measure)
	}
}

// connectPeers starts etcd and, with -delay, the proxy process; then reaches
// MariaDB, Redis, NATS and etcd over each network. A peer that is missing is
// recorded and its contenders left out. The returned func lets them go.
func (b *bench) connectPeers() (closeAll func()) {
	var closers []func()
	b.runID = time.Now().UnixNano()
	direct := &network{Name: networkName(0), redis: envOr("REDIS_ADDR", "127.0.0.1:6379"), nats: envOr("NATS_URL", nats.DefaultURL)}
	if cfg, err := drv.ParseDSN(b.dsn); err == nil && cfg.Net == "tcp" {
		direct.mysql = cfg.Addr
	}
	if endpoint, pid, stopEtcd, err := startEtcd(b.ctx); err != nil {
		b.fail("etcd", err)
		b.res.Notes = append(b.res.Notes, "etcd could not be started ("+err.Error()+"): the etcd contender is missing from this run.")
	} else {
		direct.etcd = endpoint
		b.cpu.track(pid)
		b.res.Machine.Etcd = etcdVersion()
		closers = append(closers, stopEtcd)
	}
	b.nets = []*network{direct}
	if b.opts.delay > 0 {
		if far, err := b.farNetwork(direct); err != nil {
			b.fail("distance", err)
			b.res.Notes = append(b.res.Notes, "the latency proxy could not be started ("+err.Error()+"): every contender is measured direct only.")
		} else {
			b.nets = append(b.nets, far)
			b.cpu.track(far.dist.cmd.Process.Pid)
		}
	}
	for _, n := range b.nets {
		b.reachPeers(n)
		closers = append(closers, n.close)
		b.res.Networks = append(b.res.Networks, b.networkInfo(n))
	}
	return func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
}

// farNetwork starts the proxy process in front of every peer of direct.
func (b *bench) farNetwork(direct *network) (*network, error) {
	if direct.mysql == "" {
		return nil, fmt.Errorf("MYSQL_DSN is not a TCP address")
	}
	up := map[string]string{"mysql": direct.mysql, "redis": direct.redis}
	if u, err := url.Parse(direct.nats); err == nil {
		up["nats"] = u.Host
	}
	if u, err := url.Parse(direct.etcd); err == nil && direct.etcd != "" {
		up["etcd"] = u.Host
	}
	d, err := startDistance(b.opts.delay, up)
	if err != nil {
		return nil, err
	}
	far := &network{Name: networkName(b.opts.delay), delay: b.opts.delay, mysql: d.addr["mysql"], redis: d.addr["redis"],
		nats: "nats://" + d.addr["nats"], dist: d}
	if direct.etcd != "" {
		far.etcd = "http://" + d.addr["etcd"]
	}
	far.closers = append(far.closers, d.close)
	return far, nil
}

// reachPeers connects n's clients of Redis, NATS and etcd.
func (b *bench) reachPeers(n *network) {
	rdb := redis.NewClient(&redis.Options{Addr: n.redis, PoolSize: 160})
	n.closers = append(n.closers, func() { rdb.Close() })
	if err := rdb.Ping(b.ctx).Err(); err != nil {
		b.fail("redis "+n.Name, err)
	} else {
		n.rdb = rdb
	}
	if nc, err := nats.Connect(n.nats); err != nil {
		b.fail("nats "+n.Name, err)
	} else {
		n.nc = nc
		n.closers = append(n.closers, nc.Close)
	}
	if n.etcd != "" {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{n.etcd}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			b.fail("etcd "+n.Name, err)
		} else {
			n.etcdCli = cli
			n.closers = append(n.closers, func() { cli.Close() })
		}
	}
}

// NetworkInfo is one network as measured: the round trip of a trivial
// statement on one connection, and how late the proxy delivered.
type NetworkInfo struct {
	Name        string  `json:"name"`
	DelayUS     int64   `json:"one_way_delay_us"`
	RTT         Latency `json:"do_1_round_trip"`
	ProxyLateUS float64 `json:"proxy_mean_lateness_us,omitempty"`
	Err         string  `json:"error,omitempty"`
}

func (b *bench) networkInfo(n *network) NetworkInfo {
	info := NetworkInfo{Name: n.Name, DelayUS: n.delay.Microseconds()}
	dsn := serverOnly(b.dsn)
	if n.delay > 0 {
		dsn, _ = withAddr(dsn, n.mysql)
	}
	rtt, err := measureRTT(b.ctx, dsn, 500)
	info.RTT = rtt
	if err != nil {
		info.Err = err.Error()
	}
	if n.dist != nil {
		late, _ := n.dist.lateness()
		info.ProxyLateUS = float64(late.Nanoseconds()) / 1000
	}
	b.logf("network %s: DO 1 round trip p50 %.3f ms, p99 %.3f ms", n.Name, rtt.P50, rtt.P99)
	return info
}

// serverOnly is dsn without its database: the tool makes its own.
func serverOnly(dsn string) string {
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		return dsn
	}
	cfg.DBName = ""
	return cfg.FormatDSN()
}

// buildFunctionBinaries builds every function into a temporary directory; a
// failed build is recorded and leaves b.binDir empty. The returned func removes
// the directory.
func (b *bench) buildFunctionBinaries() (remove func(), err error) {
	dir, err := os.MkdirTemp("", "salon-bench-bin-")
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	b.logf("building the function binaries")
	if err := buildFunctions(b.ctx, dir); err != nil {
		b.fail("build", err)
	} else {
		b.binDir = dir
	}
	return func() { os.RemoveAll(dir) }, nil
}

// entry is one contender on one network, with the pools it uses.
type entry struct {
	net *network
	c   contender
	ps  *pools
}

// key names an entry in maps: a contender's name is the same on every network.
func (e entry) key() string { return e.net.Name + "|" + e.c.Name() }

// lineUp builds the contenders on a fixture over every network: the product,
// its previous form, the designs it rejected whose peers are up, and the floor,
// keeping those the command line names.
func (b *bench) lineUp(f *fixture) (list []entry, closeAll func()) {
	var closers []func()
	for i, n := range b.nets {
		cs, closeNet := b.lineUpOn(f, n, i)
		closers = append(closers, closeNet)
		for _, c := range b.keepPicked(cs) {
			list = append(list, entry{net: n, c: c, ps: f.at[n.Name]})
		}
	}
	return list, func() {
		for _, c := range closers {
			c()
		}
	}
}

// lineUpOn is every contender on network n (the i-th).
func (b *bench) lineUpOn(f *fixture, n *network, i int) (list []contender, closeAll func()) {
	ps := f.at[n.Name]
	t := tables{db: ps.raw}
	p := &product{store: ps.store, next: &f.next, base: f.base}
	list = append([]contender{p, &productBefore{product: *p, raw: ps.raw}}, forms(p, ps.raw)...)
	list = append(list, lockFree{t}, forUpdate{t}, versionCAS{t, 0}, versionCAS{t, 1000})
	var closers []func()
	if n.rdb != nil {
		list = append(list, redisLock{t, n.rdb, fmt.Sprintf("bench:%d:%d:lock:", b.runID, i)}, redisCounter{t, n.rdb, fmt.Sprintf("bench:%d:%d:seats:", b.runID, i)})
	}
	if n.etcdCli != nil {
		e := &etcdLock{tables: t, cli: n.etcdCli, prefix: fmt.Sprintf("/bench/%d/%d/lock/", b.runID, i), sess: map[int]*concurrency.Session{}}
		list = append(list, e)
		closers = append(closers, e.close)
	}
	if n.nc != nil {
		q, err := newQueue(t, n.nc, fmt.Sprintf("bench.%d.%d.%s", b.runID, i, f.name))
		if err != nil {
			b.fail("queue "+n.Name, err)
		} else {
			list = append(list, q)
			closers = append(closers, func() { q.sub.Unsubscribe() })
		}
	}
	list = append(list, bare{t})
	return list, func() {
		for _, c := range closers {
			c()
		}
	}
}

// keepPicked keeps the contenders the command line names (all when it names none).
func (b *bench) keepPicked(list []contender) []contender {
	if b.opts.contenders == "" {
		return list
	}
	var kept []contender
	for _, c := range list {
		if inList(b.opts.contenders, c.Name()) {
			kept = append(kept, c)
		}
	}
	return kept
}

func (b *bench) burstRun() {
	b.logf("launch burst: %d x %d reserves on the last seat", b.prof.BurstReps, b.prof.BurstSize)
	if err := b.bursts(); err != nil {
		b.fail("burst", err)
	}
}

// bursts releases the launch burst on every contender on every network, the
// product (in process and, with the binaries, through the gateway) BurstReps
// times, SELECT ... FOR UPDATE TargetBursts times (the burst target's pair),
// the others ContBursts times.
func (b *bench) bursts() error {
	f, err := newFixture(b.ctx, b.dsn, b.opts.conns, b.nets...)
	if err != nil {
		return err
	}
	defer f.close()
	list, closeAll := b.lineUp(f)
	defer closeAll()
	if b.binDir != "" && inList(b.opts.contenders, cGateway) {
		for _, n := range b.nets {
			ps := f.at[n.Name]
			gw, err := newPlatform(b.binDir, ps.dsn, "reserve")
			if err != nil {
				return err
			}
			defer gw.close()
			p := product{store: ps.store, next: &f.next, base: f.base}
			list = append([]entry{{net: n, c: &gatewayContender{product: p, p: gw}, ps: ps}}, list...)
		}
	}
	for rep := range b.prof.BurstReps {
		for _, e := range rotate(list, rep) {
			if b.burstsIn(e.c, rep) {
				b.warm(e)
				before := b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw)
				x := burst(b.ctx, e.c, b.prof.BurstSize, rep)
				x.Network = e.net.Name
				x.Profile = between(before, b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw), x.Requests)
				b.res.Bursts = append(b.res.Bursts, x)
			}
		}
	}
	return nil
}

// warm opens every connection of the entry's pools before it is measured.
// The pools close connections idle for a second (the server is shared), and
// the store's pool serves the product alone while the contenders share theirs:
// without this a product burst often began by dialling its connections again
// and the others' did not.
func (b *bench) warm(e entry) {
	for _, db := range []*sql.DB{e.ps.store.SQL(), e.ps.raw} {
		var held []*sql.Conn
		for range b.opts.conns {
			c, err := db.Conn(b.ctx)
			if err != nil {
				break
			}
			c.PingContext(b.ctx)
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
	}
}

// burstsIn reports whether contender c takes part in repetition rep of the burst.
func (b *bench) burstsIn(c contender, rep int) bool {
	switch c.(type) {
	case *product, *gatewayContender:
		return true
	case bare:
		return false // the floor writes no booking: not a reservation
	case forUpdate:
		return rep < max(b.prof.ContBursts, b.prof.TargetBursts)
	}
	return rep < b.prof.ContBursts
}

func (b *bench) throughputRun() {
	for _, sc := range []struct {
		name  string
		slots int
	}{{"hot slot", 1}, {"1000 slots", 1000}} {
		b.logf("throughput: %s", sc.name)
		if err := b.throughputCells(sc.name, sc.slots); err != nil {
			b.fail("throughput "+sc.name, err)
		}
	}
}

// throughputCells measures every contender on every network on its own
// slots at every client count, Reps times, interleaved.
func (b *bench) throughputCells(scenario string, nSlots int) error {
	f, err := newFixture(b.ctx, b.dsn, b.opts.conns, b.nets...)
	if err != nil {
		return err
	}
	defer f.close()
	list, closeAll := b.lineUp(f)
	defer closeAll()
	slots := map[string][]int64{}
	for _, e := range list {
		if slots[e.key()], err = e.c.Slots(b.ctx, nSlots, 1<<30); err != nil {
			return fmt.Errorf("%s: slots: %w", e.c.Name(), err)
		}
	}
	for _, clients := range b.prof.Clients {
		for rep := range b.prof.Reps {
			for _, e := range rotate(list, rep+clients) {
				b.res.Cells = append(b.res.Cells, b.measureCell(e, scenario, slots[e.key()], clients, b.prof.Cell, rep))
			}
		}
	}
	return nil
}

// measureCell runs one throughput cell of entry e with its profile.
func (b *bench) measureCell(e entry, scenario string, slots []int64, clients int, d time.Duration, rep int) Cell {
	b.warm(e)
	before := b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw)
	cell := throughput(b.ctx, e.c, scenario, slots, clients, d, rep)
	cell.Network = e.net.Name
	cell.Profile = between(before, b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw), cell.Latency.N)
	return cell
}

func (b *bench) soldOutRun() {
	b.logf("sold-out path")
	if err := b.soldOutCells(); err != nil {
		b.fail("soldout", err)
	}
}

// soldOutCells compares one reserve on a full slot with one bare conditional
// UPDATE on a full slot (0 rows), both on the product's tables, on every
// network, interleaved.
func (b *bench) soldOutCells() error {
	f, err := newFixture(b.ctx, b.dsn, b.opts.conns, b.nets...)
	if err != nil {
		return err
	}
	defer f.close()
	p := &product{store: f.store, next: &f.next, base: f.base}
	full, err := p.Slots(b.ctx, 1, 1)
	if err != nil {
		return err
	}
	if o, err := p.Reserve(b.ctx, 0, full[0], customer()); err != nil || o != taken {
		return fmt.Errorf("fill the slot: %v %v", o, err)
	}
	var list []entry
	for _, n := range b.nets {
		ps := f.at[n.Name]
		list = append(list, entry{n, &product{store: ps.store, next: &f.next, base: f.base}, ps}, entry{n, &bareProduct{store: ps.store}, ps})
	}
	for _, clients := range []int{1, 8} {
		for rep := range b.prof.SoldOutReps {
			for _, e := range rotate(list, rep) {
				b.res.SoldOut = append(b.res.SoldOut, b.measureCell(e, "sold out", full, clients, b.prof.Cell/2, rep))
			}
		}
	}
	return nil
}

func (b *bench) e2eRun() {
	b.logf("end to end through the gateway")
	if err := endToEnd(b.ctx, b.dsn, b.binDir, b.prof, b.res); err != nil {
		b.fail("e2e", err)
	}
}

func (b *bench) coldRun() {
	b.logf("cold starts")
	if err := b.coldStarts(); err != nil {
		b.fail("cold", err)
	}
}

// coldStarts measures every function's size, cold start and memory after a
// burst into the results.
func (b *bench) coldStarts() error {
	f, err := newFixture(b.ctx, b.dsn, 4)
	if err != nil {
		return err
	}
	defer f.close()
	fns, err := functionsRun(b.ctx, b.binDir, f, b.prof.ColdStarts, b.prof.BurstSize)
	b.res.Functions = fns
	return err
}

func (b *bench) paymentsRun() {
	b.logf("release run and payment notifications")
	if err := b.payments(); err != nil {
		b.fail("payments", err)
	}
}

// payments measures the release run and the payment notifications.
func (b *bench) payments() error {
	f, err := newFixture(b.ctx, b.dsn, 16)
	if err != nil {
		return err
	}
	defer f.close()
	p, err := payments(b.ctx, f, b.prof.Holds, 8)
	b.res.Payments = &p
	return err
}

// report judges the targets, writes the results and prints the verdicts.
func (b *bench) report() error {
	res := b.res
	res.Seconds = time.Since(res.Started).Seconds()
	res.Machine.LoadAfter = loadavg()
	b.cpu.finish(&res.Machine)
	res.Targets = targets(res)
	if err := write(b.opts.out, res, true); err != nil {
		return err
	}
	if b.opts.statements && b.private != nil {
		if err := writeStatements(b.ctx, b.dsn, filepath.Join(b.opts.out, "statements.txt")); err != nil {
			return err
		}
	}
	b.logf("wrote %s", b.opts.out)
	for _, t := range res.Targets {
		fmt.Printf("%-60s %-14s %s\n", t.Name, t.Measured, t.Verdict)
	}
	return nil
}

// checkRepoRoot refuses to start anywhere but the repository root: the tool
// builds ./functions/<name> and writes infra/bench/results relative to it, and
// since it is a module of its own, `go run .` in infra/bench would start it there.
func checkRepoRoot() error {
	for _, p := range []string{"serverless.yml", "functions", "infra/bench/go.mod"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("run from the repository root (scripts/bench.sh does): %w", err)
		}
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// bareProduct is the seat-taking statement alone on the product's own table.
type bareProduct struct{ store *mysql.DB }

func (*bareProduct) Name() string  { return "bare conditional UPDATE (floor)" }
func (*bareProduct) Correct() bool { return true }
func (*bareProduct) Slots(context.Context, int, int) ([]int64, error) {
	return nil, fmt.Errorf("not used")
}
func (b *bareProduct) Reserve(ctx context.Context, _ int, slot int64, _ string) (outcome, error) {
	r, err := b.store.SQL().ExecContext(ctx, `UPDATE t_slot SET booked = booked + 1 WHERE slot_id = ? AND booked < capacity`, slot)
	if err != nil {
		return 0, err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return soldOut, nil
	}
	return taken, nil
}
func (b *bareProduct) Count(ctx context.Context, slots []int64) (int, int, error) {
	return (&product{store: b.store}).Count(ctx, slots)
}

// endToEnd drives GET /slots, POST /bookings and POST /bookings/{id}/cancel through
// the local gateway and the function binaries, then the gateway overhead.
func endToEnd(ctx context.Context, dsn, binDir string, prof Profile, res *Results) error {
	f, err := newFixture(ctx, dsn, 16)
	if err != nil {
		return err
	}
	defer f.close()
	p, err := newPlatform(binDir, f.dsn, "slots", "reserve", "cancel")
	if err != nil {
		return err
	}
	defer p.close()

	// A listed day like the salon's: 10:00-21:00, 90-minute slots, three days out.
	loc := shopTZ()
	day := f.base.In(loc).AddDate(0, 0, 3)
	date := day.Format("2006-01-02")
	var listed []booking.ScheduledSlot
	for h := 10 * 60; h+90 <= 21*60; h += 90 {
		s := time.Date(day.Year(), day.Month(), day.Day(), 0, h, 0, 0, loc)
		listed = append(listed, booking.ScheduledSlot{StartAt: s, EndAt: s.Add(90 * time.Minute), Capacity: 3, PriceFen: 5000})
	}
	if _, _, err := f.store.CreateSlots(ctx, listed); err != nil {
		return err
	}
	spread, err := productSlots(ctx, f.store, &f.next, f.base, 1000, 1<<20, 0)
	if err != nil {
		return err
	}
	total := 0
	for _, c := range []int{1, 16, 64} {
		_ = c
		total += prof.E2ERequests
	}
	// Bookings to cancel, each its customer's, made through the store.
	type held struct {
		id    int64
		token string
	}
	toCancel := make([]held, total)
	for i := range toCancel {
		who := customer()
		b, _, err := f.store.Reserve(ctx, booking.ReserveRequest{OpenID: who, SlotID: spread[i%len(spread)]})
		if err != nil {
			return err
		}
		toCancel[i] = held{b.ID, p.token(who)}
	}
	cancelled := 0
	for _, clients := range []int{1, 16, 64} {
		n := prof.E2ERequests
		eps := []string{"GET /slots", "POST /bookings", "POST /bookings/{id}/cancel"}
		for _, ep := range rotate(eps, clients) {
			var e E2E
			switch ep {
			case "GET /slots":
				e = load(ctx, ep, clients, n, func(int) (int, error) {
					st, b, err := p.call(ctx, http.MethodGet, "/slots?date="+date, "", nil)
					return expect(st, b, err, http.StatusOK)
				})
			case "POST /bookings":
				e = load(ctx, ep, clients, n, func(i int) (int, error) {
					st, b, err := p.call(ctx, http.MethodPost, "/bookings", p.token(customer()), map[string]int64{"slotId": spread[i%len(spread)]})
					return expect(st, b, err, http.StatusCreated)
				})
			default:
				base := cancelled
				cancelled += n
				e = load(ctx, ep, clients, n, func(i int) (int, error) {
					h := toCancel[base+i]
					st, b, err := p.call(ctx, http.MethodPost, fmt.Sprintf("/bookings/%d/cancel", h.id), h.token, nil)
					return expect(st, b, err, http.StatusOK)
				})
			}
			res.E2E = append(res.E2E, e)
		}
	}
	o, err := gatewayOverhead(ctx, p, f.dsn, date, prof.OverheadReps, 50)
	if err != nil {
		return err
	}
	res.Overhead = &o
	return nil
}

// startEtcd runs Debian's etcd on a temporary directory and loopback ports and
// answers its client endpoint once it takes a write.
func startEtcd(ctx context.Context) (endpoint string, pid int, stop func(), err error) {
	bin, err := exec.LookPath("etcd")
	if err != nil {
		return "", 0, nil, fmt.Errorf("no etcd binary (apt-get install etcd-server): %w", err)
	}
	dir, err := os.MkdirTemp("", "salon-bench-etcd-")
	if err != nil {
		return "", 0, nil, err
	}
	client, peer := "http://127.0.0.1:23790", "http://127.0.0.1:23800"
	cmd := exec.Command(bin, "--name", "bench", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "bench="+peer, "--log-level", "error")
	logf, _ := os.Create(filepath.Join(dir, "etcd.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", 0, nil, err
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.RemoveAll(dir)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		stop()
		return "", 0, nil, err
	}
	defer cli.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, cancel := context.WithTimeout(ctx, time.Second)
		_, err = cli.Put(c, "/bench/ready", "1")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", 0, nil, fmt.Errorf("etcd did not answer: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return client, cmd.Process.Pid, stop, nil
}

func etcdVersion() string {
	out, err := exec.Command("etcd", "--version").Output()
	if err != nil {
		return "?"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// Machine is what every figure states.
type Machine struct {
	CPU            string `json:"cpu"`
	Cores          int    `json:"cores"`
	GoVersion      string `json:"go"`
	MariaDB        string `json:"mariadb"`
	FlushLog       string `json:"innodb_flush_log_at_trx_commit"`
	SyncBinlog     string `json:"sync_binlog"`
	LogBin         string `json:"log_bin"`
	Server         string `json:"server"`
	Connections    string `json:"threads_connected_at_start"`
	MaxConnections string `json:"max_connections"`
	LoadBefore     string `json:"loadavg_before"`
	LoadAfter      string `json:"loadavg_after"`
	Etcd           string `json:"etcd,omitempty"`
	OtherClients   string `json:"other_clients_at_start"`
	// CPU seconds over the whole run: every core's busy time, this tool's own
	// (with the processes it started and waited for: the proxy, the function
	// binaries, a private server), the server at MYSQL_DSN's (0 when private or
	// not found), and the rest: other people's work on the same cores.
	BusyCPU   float64 `json:"machine_busy_cpu_s"`
	ToolCPU   float64 `json:"tool_cpu_s"`
	ServerCPU float64 `json:"shared_server_cpu_s"`
	OtherCPU  float64 `json:"other_processes_cpu_s"`
}

func (m Machine) Line() string {
	return fmt.Sprintf("%s, %d cores; %s, innodb_flush_log_at_trx_commit=%s, sync_binlog=%s, log_bin=%s, max_connections=%s",
		m.CPU, m.Cores, m.MariaDB, m.FlushLog, m.SyncBinlog, m.LogBin, m.MaxConnections)
}

func machine(ctx context.Context, dsn string) Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	// The server's settings, whichever database MYSQL_DSN names: scripts/lib/mysql.sh
	// names salon, which need not exist (every scenario makes its own).
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		return m
	}
	cfg.DBName = ""
	db, err := mysql.Open(cfg.FormatDSN(), mysql.Options{MaxOpenConns: 1})
	if err != nil {
		return m
	}
	defer db.Close()
	db.SQL().QueryRowContext(ctx, `SELECT @@version, @@innodb_flush_log_at_trx_commit, @@sync_binlog, IF(@@log_bin, 'ON', 'OFF'), @@max_connections`).
		Scan(&m.MariaDB, &m.FlushLog, &m.SyncBinlog, &m.LogBin, &m.MaxConnections)
	var name string
	db.SQL().QueryRowContext(ctx, `SHOW STATUS LIKE 'Threads_connected'`).Scan(&name, &m.Connections)
	db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'salon\_t\_%'`).Scan(&m.OtherClients)
	m.MariaDB = "MariaDB " + m.MariaDB
	return m
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
