// Package e2e drives the product the way scripts/dev.sh runs it and SCF deploys
// it: the real function binaries under the SCF Go runtime protocol (scfhost),
// behind the local API Gateway and timer built from serverless.yml (localgw), each
// function given only the environment serverless.yml lists, over a fresh MySQL
// database, with the WeChat login and WeChat Pay simulators over real HTTP. Every
// request goes over HTTP through the gateway; payment and refund notifications
// reach the paynotify binary through the gateway too.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/infra/testkit"
	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wechatpay/wxpaysim"
)

const (
	appID     = "wx00000000000e2e0"
	appSecret = "e2e-app-secret-tests-only"
	mchID     = "1900000109"
	secret    = "e2e-session-secret-0123456789abcdef0123"
	adminTok  = "e2e-admin-token-0123456789abcdef0123"
	repoRoot  = "../.."
)

// binDir holds <function>/main for every function of serverless.yml, built once
// for all tests by TestMain.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "salon-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := buildFunctions(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		binDir = dir
		return m.Run()
	}())
}

// buildFunctions builds every function of serverless.yml as package.sh does
// (static, CGO_ENABLED=0), for this machine, in one go build so the packages they
// share compile once, then lays them out as <dir>/<name>/main.
func buildFunctions(dir string) error {
	spec, err := localgw.LoadServerless(filepath.Join(repoRoot, "serverless.yml"))
	if err != nil {
		return err
	}
	flat := filepath.Join(dir, ".flat")
	args := []string{"build", "-trimpath", "-o", flat + string(filepath.Separator)}
	for _, fn := range spec.Functions {
		args = append(args, "./functions/"+fn.Name)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, fn := range spec.Functions {
		if err := os.MkdirAll(filepath.Join(dir, fn.Name), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(flat, fn.Name), filepath.Join(dir, fn.Name, "main")); err != nil {
			return err
		}
	}
	return os.Remove(flat)
}

type syncBuffer = testkit.SyncBuffer

// runRecorder passes invocations to the host and reports each timer run's result,
// so a test waits for the run it caused instead of sleeping.
type runRecorder struct {
	inv  localgw.Invoker
	runs chan string
}

func (r runRecorder) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	out, ierr, err := r.inv.Invoke(ctx, fn, payload, requestID)
	switch {
	case err != nil:
		r.runs <- "host error: " + err.Error()
	case ierr != nil:
		r.runs <- "function error: " + ierr.Error()
	default:
		r.runs <- string(out)
	}
	return out, ierr, err
}

// system is one running copy of the product: testkit.System with the function
// binaries under scfhost, and the release timer fired by the test.
type system struct {
	*testkit.System
	logs  *syncBuffer
	ticks chan time.Time
	runs  chan string
	shop  *time.Location
}

func start(t *testing.T) *system {
	t.Helper()
	s := &system{logs: &syncBuffer{}, ticks: make(chan time.Time), runs: make(chan string, 4)}
	var err error
	if s.shop, err = time.LoadLocation("Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	var host *scfhost.Host
	s.System = testkit.Start(t, testkit.Options{
		AppID: appID, AppSecret: appSecret, MchID: mchID,
		SessionSecret: secret, AdminToken: adminTok,
		Conns: 4,
		Functions: func(kit *testkit.System) localgw.Invoker {
			host = deploy(kit, s.logs)
			return host
		},
		GatewayLog: s.logs,
	})

	if len(s.Spec.Timers) != 1 {
		t.Fatalf("serverless.yml timers: %+v", s.Spec.Timers)
	}
	timer := &localgw.Timer{Trigger: s.Spec.Timers[0], Ticks: s.ticks, Invoker: runRecorder{host, s.runs}, Log: s.logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { timer.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway and function logs:\n%s", s.logs.String())
		}
	})
	return s
}

// deploy registers every function of serverless.yml with a new scfhost, each
// given what a deployed function would see: only the variables serverless.yml
// lists, each ${env:NAME} taken from the system's settings, the way the deploy
// takes them from the deploying shell. A setting serverless.yml forgets to pass
// is therefore missing here too.
func deploy(kit *testkit.System, log io.Writer) *scfhost.Host {
	host := scfhost.NewHost(log)
	kit.T.Cleanup(func() { host.Close() })
	settings := func(name string) (string, bool) { v := kit.Env[name]; return v, v != "" }
	for _, fn := range kit.Spec.Functions {
		err := host.Register(scfhost.Function{
			Name: fn.Name, Binary: filepath.Join(binDir, fn.Name, "main"),
			Env:     localgw.FunctionEnv(fn, settings),
			Timeout: fn.Timeout, MemoryMB: fn.MemoryMB,
		})
		if err != nil {
			kit.T.Fatal(err)
		}
	}
	return host
}

type answer = testkit.Answer

// tomorrow is tomorrow's date in the shop's time zone.
func (s *system) tomorrow() string {
	return time.Now().In(s.shop).AddDate(0, 0, 1).Format("2006-01-02")
}

// openSlot opens one 90-minute slot tomorrow at 10:00 through the admin API and
// returns its id, found through the public schedule.
func (s *system) openSlot(capacity int, priceFen int64) int64 {
	s.T.Helper()
	day := s.tomorrow()
	a := s.Must("POST", "/admin/slots", adminTok, map[string]any{
		"from": day, "to": day, "open": "10:00", "close": "11:30", "slotMinutes": 90, "capacity": capacity, "priceFen": priceFen,
	})
	if a.Status != http.StatusCreated || a.JSON["created"] != 1.0 {
		s.T.Fatalf("admin schedule: %s", a)
	}
	slots := s.slots(day)
	if len(slots) != 1 {
		s.T.Fatalf("slots of %s: %+v", day, slots)
	}
	return int64(slots[0]["slotId"].(float64))
}

func (s *system) slots(day string) []map[string]any {
	s.T.Helper()
	a := s.Must("GET", "/slots?date="+day, "", nil)
	if a.Status != http.StatusOK {
		s.T.Fatalf("slots: %s", a)
	}
	var out []map[string]any
	for _, v := range a.JSON["slots"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

func (s *system) remaining(slot int64) int {
	s.T.Helper()
	for _, sl := range s.slots(s.tomorrow()) {
		if int64(sl["slotId"].(float64)) == slot {
			return int(sl["remaining"].(float64))
		}
	}
	s.T.Fatalf("slot %d not listed", slot)
	return 0
}

// reserve books slot and returns the booking id.
func (s *system) reserve(token string, slot int64) int64 {
	s.T.Helper()
	a := s.Must("POST", "/bookings", token, map[string]any{"slotId": slot})
	if a.Status != http.StatusCreated {
		s.T.Fatalf("reserve: %s", a)
	}
	b := a.JSON["booking"].(map[string]any)
	if b["status"] != "pending_payment" || a.JSON["payment"] == nil {
		s.T.Fatalf("reserve answer: %s", a)
	}
	return int64(b["bookingId"].(float64))
}

// tick fires the release timer once and returns the run's answer.
func (s *system) tick() string {
	s.T.Helper()
	s.ticks <- time.Now()
	return <-s.runs
}

// TestBookPayExpireCancelRefund is the product's life through the real binaries:
// a paid booking is confirmed by the notification the simulator sends through the
// gateway; an unpaid hold is released by the timer and its seat comes back; a
// cancelled paid booking is refunded when WeChat's refund notification arrives.
func TestBookPayExpireCancelRefund(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()

	if a := s.Must("GET", "/healthz", "", nil); a.Status != http.StatusOK || a.JSON["status"] != "ok" {
		t.Fatalf("healthz: %s", a)
	}
	slot := s.openSlot(2, 5000)
	alice, bob := s.Login("alice"), s.Login("bob")

	// Alice books and pays: WeChat's notification goes through the gateway to paynotify.
	paid := s.reserve(alice, slot)
	s.PayFor(paid)
	if b := s.Mine(alice, paid); b["status"] != "confirmed" {
		t.Fatalf("after payment: %v", b)
	}

	// Bob takes the last seat and never pays: when his hold has run out, the next
	// timer run releases it and the seat is free again.
	held := s.reserve(bob, slot)
	if n := s.remaining(slot); n != 0 {
		t.Fatalf("remaining with two holds: %d", n)
	}
	mysqltest.ExpireHold(t, s.Store, held)
	var sum map[string]int
	run := s.tick()
	if err := json.Unmarshal([]byte(run), &sum); err != nil || sum["released"] != 1 {
		t.Fatalf("release run: %s", run)
	}
	if b := s.Mine(bob, held); b["status"] != "expired" {
		t.Fatalf("after release: %v", b)
	}
	if n := s.remaining(slot); n != 1 {
		t.Fatalf("remaining after release: %d, want 1", n)
	}
	if o, ok := s.Pay.Order(booking.OutTradeNo(held)); !ok || o.State != wxpaysim.StateClosed {
		t.Fatalf("the released booking's WeChat order was not closed: %+v", o)
	}

	// Alice cancels: the refund starts, and WeChat's refund notification (through
	// the gateway) settles it.
	a := s.Must("POST", fmt.Sprintf("/bookings/%d/cancel", paid), alice, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("cancel: %s", a)
	}
	if rf, _ := a.JSON["booking"].(map[string]any)["refund"].(map[string]any); rf["status"] != "processing" || rf["amountFen"] != 5000.0 {
		t.Fatalf("cancel answer: %s", a)
	}
	if err := s.Pay.CompleteRefund(ctx, booking.OutRefundNo(paid), wxpaysim.RefundSuccess); err != nil {
		t.Fatalf("refund notification: %v", err)
	}
	b := s.Mine(alice, paid)
	if rf, _ := b["refund"].(map[string]any); b["status"] != "cancelled" || rf["status"] != "succeeded" || rf["refundedAt"] == nil {
		t.Fatalf("after the refund notification: %v", b)
	}
	if n := s.remaining(slot); n != 2 {
		t.Fatalf("remaining at the end: %d, want 2", n)
	}

	// The salon sees both bookings, with who made them.
	a = s.Must("GET", "/admin/bookings?date="+s.tomorrow(), adminTok, nil)
	if a.Status != http.StatusOK || len(a.JSON["bookings"].([]any)) != 2 {
		t.Fatalf("admin bookings: %s", a)
	}
	mysqltest.CheckInvariant(t, s.Store)
}

// TestLastSeatUnderACrowd sends 130 customers at a slot's last seat at once,
// through the gateway to reserve processes: one gets it, everyone else is told
// SOLD_OUT, and the slot's count stays right.
func TestLastSeatUnderACrowd(t *testing.T) {
	t.Parallel()
	s := start(t)
	slot := s.openSlot(2, 5000)
	s.reserve(s.Login("early-bird"), slot) // the first seat; one is left

	const crowd = 130
	tokens := make([]string, crowd)
	for i := range tokens {
		tokens[i] = s.Token(fmt.Sprintf("o-crowd-%03d", i))
	}
	answers := make([]answer, crowd)
	errs := make([]error, crowd)
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i := range crowd {
		wg.Go(func() {
			<-begin
			answers[i], errs[i] = s.Call("POST", "/bookings", tokens[i], map[string]any{"slotId": slot})
		})
	}
	close(begin)
	wg.Wait()

	won, soldOut := 0, 0
	for i, a := range answers {
		switch {
		case errs[i] != nil:
			t.Errorf("customer %d: %v", i, errs[i])
		case a.Status == http.StatusCreated:
			won++
		case a.Status == http.StatusConflict && a.Code() == booking.ESOLDOUT:
			soldOut++
		default:
			t.Errorf("customer %d: %s", i, a)
		}
	}
	if won != 1 || soldOut != crowd-1 {
		t.Errorf("%d got the seat and %d were told SOLD_OUT; want 1 and %d", won, soldOut, crowd-1)
	}
	if n := s.remaining(slot); n != 0 {
		t.Errorf("remaining after the crowd: %d", n)
	}
	mysqltest.CheckInvariant(t, s.Store)
}

// TestEveryRouteReachesItsHandler sends each API of serverless.yml, without
// credentials, to the real binaries: each must be answered by the handler of the
// function serverless.yml names, never by the gateway (404/502) and never by a
// function that does not know the path (404 "no route") or the method (405).
// That the file maps the routes of the API (functions/README.md) is checked in
// localgw; this checks the functions agree with the file.
func TestEveryRouteReachesItsHandler(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, r := range s.Spec.Routes {
		path := r.Path
		for _, p := range r.Params {
			if p.Position == "PATH" {
				value := "1" // an id
				if p.Name == "file" {
					value = "console.css" // one of the console's embedded assets
				}
				path = strings.ReplaceAll(path, "{"+p.Name+"}", value)
			}
		}
		var body any
		if r.Method == "POST" || r.Method == "PATCH" {
			body = map[string]any{}
		}
		a := s.Must(r.Method, path, "", body)
		if a.Status == http.StatusNotFound || a.Status == http.StatusMethodNotAllowed || a.Status >= 500 || a.JSON["errno"] != nil {
			t.Errorf("%s %s (%s): %s", r.Method, r.Path, r.Function, a)
			continue
		}
		t.Logf("%s %s -> %s: %d %s", r.Method, path, r.Function, a.Status, a.Code())
		// The function logged the request under the route's template.
		want := fmt.Sprintf(`"function":%q,"route":%q,"method":%q`, r.Function, r.Path, r.Method)
		if !s.logs.WaitFor(want, 10*time.Second) {
			t.Errorf("%s %s: no log line with %s", r.Method, r.Path, want)
		}
	}
}
