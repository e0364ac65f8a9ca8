package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/shared/handler"
	"salon/shared/instance"
	"salon/shared/mysql"
	"salon/shared/session"
)

const benchSecret = "bench-session-secret-0123456789abcdef"

var functionNames = []string{"slots", "login", "reserve", "cancel", "admin", "paynotify", "release"}

// buildFunctions builds every function binary exactly as scripts/package.sh does
// (static, -trimpath, named main) into dir/<name>/main, so sizes are the shipped ones.
func buildFunctions(ctx context.Context, dir string) error {
	for _, fn := range functionNames {
		out := filepath.Join(dir, fn, "main")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./functions/"+fn)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", fn, err, b)
		}
	}
	return nil
}

// pidLog collects the host's log and the pid of every process it started.
type pidLog struct {
	mu   sync.Mutex
	pids map[string][]int
	buf  []byte
}

var startedRE = regexp.MustCompile(`\[([a-z]+)\] scfhost: instance \d+ started \(pid (\d+)`)

func (l *pidLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if m := startedRE.FindSubmatch(l.buf[:i]); m != nil {
			pid, _ := strconv.Atoi(string(m[2]))
			if l.pids == nil {
				l.pids = map[string][]int{}
			}
			l.pids[string(m[1])] = append(l.pids[string(m[1])], pid)
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *pidLog) of(fn string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.pids[fn]...)
}

// memoryKB answers the largest VmRSS (resident set now) and VmHWM (peak
// resident set) over the live pids, in KiB.
func memoryKB(pids []int) (rss, peak int) {
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			switch k {
			case "VmRSS":
				rss = max(rss, n)
			case "VmHWM":
				peak = max(peak, n)
			}
		}
	}
	return rss, peak
}

// platform is the local gateway and runtime over the built binaries.
type platform struct {
	host  *scfhost.Host
	log   *pidLog
	srv   *httptest.Server
	spec  *localgw.Spec
	env   map[string]string
	bin   string
	hc    *http.Client
	signs *session.Signer
}

func functionEnv(dsn string) map[string]string {
	return map[string]string{"MYSQL_DSN": dsn, "SESSION_SECRET": benchSecret, "SHOP_TZ": "Asia/Shanghai"}
}

func newPlatform(binDir, dsn string, fns ...string) (*platform, error) {
	return newPlatformOf(binDir, dsn, 0, fns...)
}

// newPlatformOf is newPlatform with at most maxInstances processes per
// function (0: the runtime's default).
func newPlatformOf(binDir, dsn string, maxInstances int, fns ...string) (*platform, error) {
	spec, err := localgw.LoadServerless("serverless.yml")
	if err != nil {
		return nil, err
	}
	p := &platform{log: &pidLog{}, spec: spec, env: functionEnv(dsn), bin: binDir,
		signs: &session.Signer{Secret: []byte(benchSecret)}}
	p.host = scfhost.NewHost(p.log)
	for _, fn := range fns {
		f, _ := spec.Function(fn)
		if err := p.host.Register(scfhost.Function{Name: fn, Binary: filepath.Join(binDir, fn, "main"), Env: p.env,
			Timeout: f.Timeout, MemoryMB: f.MemoryMB, MaxInstances: maxInstances}); err != nil {
			p.host.Close()
			return nil, err
		}
	}
	p.srv = httptest.NewServer(localgw.NewGateway(spec.Routes, p.host, io.Discard))
	p.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}, Timeout: 30 * time.Second}
	return p, nil
}

func (p *platform) close() {
	p.srv.Close()
	p.host.Close()
}

func (p *platform) token(openid string) string {
	t, _, err := p.signs.Issue(openid)
	if err != nil {
		panic(err)
	}
	return t
}

// call sends one request and answers the status and body.
func (p *platform) call(ctx context.Context, method, path, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.srv.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// gatewayContender is the product's reserve through the gateway and the reserve
// binary, for the launch burst.
type gatewayContender struct {
	product
	p *platform
}

func (g *gatewayContender) Name() string { return "product via gateway" }
func (g *gatewayContender) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	st, body, err := g.p.call(ctx, http.MethodPost, "/bookings", g.p.token(customer), map[string]int64{"slotId": slot})
	switch {
	case err != nil:
		return 0, err
	case st == http.StatusCreated:
		return taken, nil
	case st == http.StatusConflict && bytes.Contains(body, []byte("SOLD_OUT")):
		return soldOut, nil
	}
	return 0, fmt.Errorf("HTTP %d: %s", st, shortErr(string(body)))
}

// E2E is one endpoint at one client count through the gateway.
type E2E struct {
	Endpoint string  `json:"endpoint"`
	Clients  int     `json:"clients"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	FirstErr string  `json:"first_error,omitempty"`
	PerS     float64 `json:"requests_per_s"`
	Latency  Latency `json:"latency"`
}

// load sends the n requests made by mk from clients at once.
func load(ctx context.Context, endpoint string, clients, n int, mk func(i int) (int, error)) E2E {
	r := E2E{Endpoint: endpoint, Clients: clients, Requests: n}
	var next atomic.Int64
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	t0 := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s := time.Now()
				_, err := mk(i)
				el := time.Since(s)
				mu.Lock()
				if err != nil {
					r.Errors++
					if r.FirstErr == "" {
						r.FirstErr = shortErr(err.Error())
					}
				} else {
					all = append(all, el)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.PerS = float64(len(all)) / time.Since(t0).Seconds()
	r.Latency = summarise(all)
	return r
}

func expect(st int, body []byte, err error, want int) (int, error) {
	if err != nil {
		return st, err
	}
	if st != want {
		return st, fmt.Errorf("HTTP %d: %s", st, shortErr(string(body)))
	}
	return st, nil
}

// Function is one binary's size, cold start and memory.
type Function struct {
	Name          string  `json:"name"`
	SizeBytes     int64   `json:"size_bytes"`
	ColdStartMS   Latency `json:"cold_start"`
	RSSKB         int     `json:"rss_after_burst_kb"`    // the largest instance's VmRSS after the burst
	PeakRSSKB     int     `json:"peak_rss_kb"`           // the largest instance's VmHWM
	Instances     int     `json:"instances_after_burst"` // instances alive after the burst
	BurstErrors   int     `json:"burst_errors"`          // invocations of the burst that failed
	BurstEvent    string  `json:"burst_event"`           // what the burst sent
	BurstFirstErr string  `json:"burst_first_error,omitempty"`
}

// coldEvent answers a cheap event for each function: one that needs no login and
// (except healthz and release) no database.
func coldEvent(fn string) (method, path string, timer bool) {
	switch fn {
	case "slots":
		return http.MethodGet, "/healthz", false
	case "login":
		return http.MethodPost, "/login", false
	case "reserve":
		return http.MethodGet, "/bookings/mine", false
	case "cancel":
		return http.MethodPost, "/bookings/1/cancel", false
	case "admin":
		return http.MethodGet, "/admin/bookings?date=2026-01-01", false
	case "paynotify":
		return http.MethodPost, "/pay/notify", false
	}
	return "", "", true
}

// recorder captures the event the gateway builds, so that cold starts invoke the
// host with exactly what API Gateway would send.
type recorder struct{ payload []byte }

func (r *recorder) Invoke(_ context.Context, _ string, payload []byte, _ string) ([]byte, *scfhost.InvokeError, error) {
	r.payload = append([]byte(nil), payload...)
	return []byte(`{"statusCode":200,"headers":{},"body":"","isBase64Encoded":false}`), nil, nil
}

func eventFor(spec *localgw.Spec, method, path string, body []byte) ([]byte, error) {
	rec := &recorder{}
	gw := localgw.NewGateway(spec.Routes, rec, io.Discard)
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	gw.ServeHTTP(httptest.NewRecorder(), req)
	if rec.payload == nil {
		return nil, fmt.Errorf("no route for %s %s", method, path)
	}
	return rec.payload, nil
}

// coldStart starts each function's binary n times on a fresh host and times the
// first invocation: process start to first answer. The host dials the
// runtime's port again within a millisecond of a refusal (scfhost).
func coldStart(ctx context.Context, spec *localgw.Spec, bin, fn, dsn string, payload []byte, n int) (Latency, error) {
	var times []time.Duration
	for range n {
		h := scfhost.NewHost(nil)
		sf, _ := spec.Function(fn)
		if err := h.Register(scfhost.Function{Name: fn, Binary: bin, Env: functionEnv(dsn), Timeout: sf.Timeout, MemoryMB: sf.MemoryMB, MaxInstances: 1}); err != nil {
			h.Close()
			return Latency{}, err
		}
		t0 := time.Now()
		_, _, err := h.Invoke(ctx, fn, payload, "")
		el := time.Since(t0)
		h.Close()
		if err != nil {
			return Latency{}, fmt.Errorf("cold start %s: %w", fn, err)
		}
		times = append(times, el)
	}
	return summarise(times), nil
}

// functionsRun measures every function binary: its size, its cold start (n
// starts), and its memory after a burst of burstN invocations released
// together on a host of 8 instances, as the runtime keeps them warm. reserve's
// burst is the launch burst itself (POST /bookings for burstN customers on one
// seat); every other function's is its cheap event.
func functionsRun(ctx context.Context, binDir string, f *fixture, n, burstN int) ([]Function, error) {
	spec, err := localgw.LoadServerless("serverless.yml")
	if err != nil {
		return nil, err
	}
	var out []Function
	for _, fn := range functionNames {
		r := Function{Name: fn}
		bin := filepath.Join(binDir, fn, "main")
		if st, err := os.Stat(bin); err == nil {
			r.SizeBytes = st.Size()
		}
		method, path, timer := coldEvent(fn)
		var payload []byte
		if timer {
			payload, _ = json.Marshal(localgw.NewTimerEvent("release", "", time.Now()))
		} else if payload, err = eventFor(spec, method, path, []byte("{}")); err != nil {
			return nil, err
		}
		if r.ColdStartMS, err = coldStart(ctx, spec, bin, fn, f.dsn, payload, n); err != nil {
			return out, err
		}
		if err := functionBurst(ctx, &r, spec, binDir, f, payload, burstN); err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// functionBurst sends burstN invocations of fn at once through the gateway
// (the timer's straight to the host) and reads its instances' memory.
func functionBurst(ctx context.Context, r *Function, spec *localgw.Spec, binDir string, f *fixture, payload []byte, burstN int) error {
	p, err := newPlatform(binDir, f.dsn, r.Name)
	if err != nil {
		return err
	}
	defer p.close()
	method, path, timer := coldEvent(r.Name)
	var body any
	if method != http.MethodGet {
		body = map[string]any{}
	}
	call := func(int) error {
		_, _, err := p.call(ctx, method, path, "", body)
		return err
	}
	r.BurstEvent = method + " " + path
	switch {
	case timer:
		r.BurstEvent = "the timer event"
		call = func(int) error {
			_, ierr, err := p.host.Invoke(ctx, r.Name, payload, "")
			if err == nil && ierr != nil {
				err = ierr
			}
			return err
		}
	case r.Name == "reserve":
		// Free: a priced slot would also ask WeChat Pay for an order.
		slots, err := productSlots(ctx, f.store, &f.next, f.base, 1, 1, 0)
		if err != nil {
			return err
		}
		r.BurstEvent = "POST /bookings, every request on one seat"
		call = func(int) error {
			st, body, err := p.call(ctx, http.MethodPost, "/bookings", p.token(customer()), map[string]int64{"slotId": slots[0]})
			if err == nil && st != http.StatusCreated && st != http.StatusConflict {
				err = fmt.Errorf("HTTP %d: %s", st, shortErr(string(body)))
			}
			return err
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr sync.Once
	for i := range burstN {
		wg.Go(func() {
			<-start
			if err := call(i); err != nil {
				failed.Add(1)
				firstErr.Do(func() { r.BurstFirstErr = shortErr(err.Error()) })
			}
		})
	}
	close(start)
	wg.Wait()
	pids := p.log.of(r.Name)
	r.Instances = len(pids)
	r.BurstErrors = int(failed.Load())
	r.RSSKB, r.PeakRSSKB = memoryKB(pids)
	return nil
}

// Overhead compares the same request through the gateway and runtime with the
// handler called in process.
type Overhead struct {
	Request    string  `json:"request"`
	Gateway    Latency `json:"gateway_runtime"`
	InProcess  Latency `json:"in_process"`
	DiffP50MS  float64 `json:"p50_difference_ms"`
	Iterations int     `json:"iterations"`
}

func gatewayOverhead(ctx context.Context, p *platform, dsn, date string, blocks, per int) (Overhead, error) {
	path := "/slots?date=" + date
	payload, err := eventFor(p.spec, http.MethodGet, path, nil)
	if err != nil {
		return Overhead{}, err
	}
	env := functionEnv(dsn)
	e := &instance.Env{Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), AuditOut: io.Discard}
	rt := handler.SlotsRouter(e)
	defer func() {
		e.Close()
	}()
	var gw, inp []time.Duration
	for b := range blocks {
		for k := range 2 {
			for range per {
				t0 := time.Now()
				if (b+k)%2 == 0 {
					st, body, err := p.call(ctx, http.MethodGet, path, "", nil)
					if _, err := expect(st, body, err, http.StatusOK); err != nil {
						return Overhead{}, err
					}
					gw = append(gw, time.Since(t0))
				} else {
					resp, err := rt.Invoke(ctx, payload)
					if err != nil || resp.StatusCode != http.StatusOK {
						return Overhead{}, fmt.Errorf("in process: %v %d", err, resp.StatusCode)
					}
					inp = append(inp, time.Since(t0))
				}
			}
		}
	}
	o := Overhead{Request: "GET " + path, Gateway: summarise(gw), InProcess: summarise(inp), Iterations: len(gw)}
	o.DiffP50MS = o.Gateway.P50 - o.InProcess.P50
	return o, nil
}

var _ = mysql.Options{}
