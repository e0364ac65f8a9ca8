package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The distance runs in a process of its own: the bench re-executes itself with
// -proxy, so the proxy's CPU (its clock thread sleeps and spins) is never taken
// from the client's Go scheduler, and the client's profile stays the client's,
// as it would be with a real network between them.

// proxyChild is the -proxy mode: one latencyProxy per "name=host:port" upstream,
// all on one clock. It prints "name addr" for each, then "ready", and answers
// each "stats" line on stdin with "stats <mean lateness ns> <deliveries>"; it
// exits when stdin ends (its parent went away).
func proxyChild(spec string, delay time.Duration) error {
	clock := newDeliveryClock(delay)
	out := bufio.NewWriter(os.Stdout)
	for _, item := range strings.Split(spec, ",") {
		name, upstream, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("-proxy: %q is not name=host:port", item)
		}
		p, err := newLatencyProxy(upstream, clock)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", name, p.Addr())
	}
	fmt.Fprintln(out, "ready")
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "stats" {
			fmt.Fprintf(out, "stats %d %d\n", clock.meanLate().Nanoseconds(), clock.runs.Load())
			out.Flush()
		}
	}
	return nil
}

// distance is a running proxy process and the addresses it forwards from.
type distance struct {
	delay time.Duration
	addr  map[string]string // upstream name -> the proxy's address for it
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	mu    sync.Mutex
}

// startDistance starts the proxy process for the upstreams (name -> host:port).
func startDistance(delay time.Duration, upstreams map[string]string) (*distance, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var spec []string
	for name, addr := range upstreams {
		spec = append(spec, name+"="+addr)
	}
	cmd := exec.Command(self, "-proxy", strings.Join(spec, ","), "-delay", delay.String())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &distance{delay: delay, addr: map[string]string{}, cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	for d.out.Scan() {
		line := d.out.Text()
		if line == "ready" {
			return d, nil
		}
		if name, addr, ok := strings.Cut(line, " "); ok {
			d.addr[name] = addr
		}
	}
	d.close()
	return nil, fmt.Errorf("proxy process ended before it was ready: %v", d.out.Err())
}

// lateness asks the proxy how late its deliveries ran on average.
func (d *distance) lateness() (mean time.Duration, deliveries int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := io.WriteString(d.in, "stats\n"); err != nil || !d.out.Scan() {
		return 0, 0
	}
	var ns int64
	fmt.Sscanf(d.out.Text(), "stats %d %d", &ns, &deliveries)
	return time.Duration(ns), deliveries
}

func (d *distance) close() {
	d.in.Close()
	d.cmd.Process.Kill()
	d.cmd.Wait()
}

// ---- networks ------------------------------------------------------------------

// network is one distance between the client and every peer: direct, or
// through the proxy. Every contender is measured on each.
type network struct {
	Name    string
	delay   time.Duration
	mysql   string // host:port of MariaDB as seen from here
	redis   string
	nats    string // nats://host:port
	etcd    string // http://host:port
	closers []func()

	// The peers of the rejected designs, reached over this network; nil when
	// they could not be reached, and the contenders that need them are left out.
	rdb     *redis.Client
	nc      *nats.Conn
	etcdCli *clientv3.Client
	dist    *distance // the proxy process; nil for direct
}

func (n *network) close() {
	for i := len(n.closers) - 1; i >= 0; i-- {
		n.closers[i]()
	}
}

// networkName names a distance in the report.
func networkName(delay time.Duration) string {
	if delay == 0 {
		return "direct"
	}
	return fmt.Sprintf("%g ms each way", float64(delay.Microseconds())/1000)
}

// withAddr is dsn pointed at another host:port; the rest unchanged.
func withAddr(dsn, addr string) (string, error) {
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	cfg.Addr = addr
	return cfg.FormatDSN(), nil
}

// ---- counting round trips --------------------------------------------------------

// driverWrites counts every write the benchmark's own pools make to MariaDB:
// the driver writes each command as one packet, so over a cell, writes per
// operation are round trips per operation. Contenders run one at a time, so
// the count over a cell is that contender's.
var driverWrites atomic.Int64

// countedNet is the driver network name whose connections count their writes.
const countedNet = "bench-counted"

func init() {
	drv.RegisterDialContext(countedNet, func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countedConn{c}, nil
	})
}

type countedConn struct{ net.Conn }

func (c countedConn) Write(p []byte) (int, error) {
	driverWrites.Add(1)
	return c.Conn.Write(p)
}

// counted is dsn with its connections counted (TCP only).
func counted(dsn string) string {
	cfg, err := drv.ParseDSN(dsn)
	if err != nil || cfg.Net != "tcp" {
		return dsn
	}
	cfg.Net = countedNet
	return cfg.FormatDSN()
}

// measureRTT answers the round trip of one trivial statement (DO 1) on one
// connection to dsn: n of them in a row.
func measureRTT(ctx context.Context, dsn string, n int) (Latency, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return Latency{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		return Latency{}, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return Latency{}, err
	}
	defer conn.Close()
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := conn.ExecContext(ctx, "DO 1"); err != nil {
			return Latency{}, err
		}
		ds = append(ds, time.Since(t0))
	}
	return summarise(ds), nil
}
