package stress

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/infra/localgw"
	"salon/infra/testkit"
	"salon/shared/cls/clstest"
	"salon/shared/handler"
	"salon/shared/instance"
	"salon/shared/mysql"
	"salon/shared/service"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wxlogin/wxloginsim"
)

const (
	appID        = "wx00000000stress"
	mchID        = "1900000109"
	sessionKey   = "stress-session-secret-0123456789abcdef"
	adminToken   = "stress-admin-token-0123456789abcdef"
	clsSecretID  = "AKIDstress0000000000000000000000"
	clsSecretKey = "stress-cls-secret-key-000000000"
	clsTopic     = "topic-stress"
)

type syncBuffer = testkit.SyncBuffer

// system is the whole product for one stress run: testkit.System with the
// functions reaching the database through a fault-injecting proxy, a few warm
// instances of each function, a local CLS, and a front door that can drop
// WeChat's notifications.
type system struct {
	t        testing.TB
	dbName   string
	store    *mysql.DB // direct to the server: the checker's view
	killer   *sql.DB   // direct, one connection: kills the others
	proxy    *dbProxy
	sim      *wxpaysim.Sim
	login    *wxloginsim.Server // WeChat's server API: access tokens and subscribe messages
	cls      *clstest.Server
	gw       *localgw.Gateway
	front    *httptest.Server
	env      map[string]string
	release  []func(ctx context.Context, raw json.RawMessage) (service.Summary, error)
	relNext  atomic.Uint64
	logs     *syncBuffer
	sessions *session.Signer
	client   testkit.Client

	// notifyDrop fails the next n notification deliveries at the front door,
	// as if paynotify were unreachable; WeChat then delivers again later.
	notifyDrop atomic.Int32
	// hang makes the next n WeChat Pay requests wait until their caller gives up
	// (its invocation deadline) before WeChat acts on them.
	hang atomic.Int32

	mu         sync.Mutex
	violations []string
	seen       map[string]bool
}

// fnTimeout is the functions' timeout in the stress system: short, so that a
// WeChat call that hangs makes its caller give up quickly.
const fnTimeout = 2 * time.Second

// hangCap bounds how long a hung WeChat request waits for its caller to give up
// (the release run's deadline is far away).
const hangCap = fnTimeout + 500*time.Millisecond

func newSystem(t testing.TB) *system {
	t.Helper()
	s := &system{t: t, logs: &syncBuffer{}}
	var toCLS func(map[string]string)
	s.cls, toCLS = testkit.StartCLS(t, testkit.CLSAccount{SecretID: clsSecretID, SecretKey: clsSecretKey, Topic: clsTopic})

	kit := testkit.Start(t, testkit.Options{
		AppID: appID, AppSecret: "stress-app-secret", MchID: mchID,
		SessionSecret: sessionKey, AdminToken: adminToken,
		Conns:        4,
		OnPayRequest: s.onWeChatRequest,
		Env:          []func(map[string]string){s.throughProxy, withTemplates, toCLS},
		Functions:    s.instances,
		Front:        s.dropNotifications,
	})
	s.store, s.sim, s.login, s.gw, s.front = kit.Store, kit.Pay, kit.WeChat, kit.Gateway, kit.Server
	s.env, s.sessions = kit.Env, kit.Sessions
	s.client = testkit.Client{URL: kit.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}
	return s
}

// throughProxy points the functions at the database through the proxy that
// fails and kills their connections, and opens the killer's own connection.
func (s *system) throughProxy(env map[string]string) {
	cfg, err := drv.ParseDSN(env["MYSQL_DSN"])
	if err != nil {
		s.t.Fatal(err)
	}
	s.dbName = cfg.DBName
	s.killer, err = sql.Open("mysql", env["MYSQL_DSN"])
	if err != nil {
		s.t.Fatal(err)
	}
	s.killer.SetMaxOpenConns(1)
	s.t.Cleanup(func() { s.killer.Close() })

	if cfg.Net != "tcp" {
		s.t.Skipf("the stress test needs a TCP MYSQL_DSN to put its proxy in front of, not %s", cfg.Net)
	}
	s.proxy, err = newDBProxy(cfg.Addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(s.proxy.Close)
	viaProxy := cfg.Clone()
	viaProxy.Addr = s.proxy.Addr()
	env["MYSQL_DSN"] = viaProxy.FormatDSN()
}

// withTemplates configures a template for every kind of notification.
func withTemplates(env map[string]string) {
	for _, k := range []string{"CONFIRMED", "REMINDER", "WAITLIST", "CANCELLED"} {
		env["WX_TMPL_"+k] = `{"id":"tmpl-` + strings.ToLower(k) + `","data":{"character_string1":"{bookingId}","time2":"{startAt}"}}`
	}
}

// instances gives each function a few warm "instances" (an Env each, so each
// has its own small pool and its own WeChat Pay client), used in turn, each
// invocation with the function's timeout as its deadline, as SCF gives it.
func (s *system) instances(kit *testkit.System) localgw.Invoker {
	log := slog.New(slog.NewJSONHandler(s.logs, nil))
	newEnv := func() *instance.Env {
		e := &instance.Env{Getenv: func(k string) string { return kit.Env[k] }, Log: log, AuditOut: io.Discard}
		s.t.Cleanup(func() {
			e.Close()
		})
		return e
	}
	const instances = 2
	inv := &testkit.InProcess{Timeout: fnTimeout, Functions: map[string][]testkit.Handler{}}
	for range instances {
		inv.Functions["reserve"] = append(inv.Functions["reserve"], handler.ReserveRouter(newEnv()).Invoke)
		inv.Functions["cancel"] = append(inv.Functions["cancel"], handler.CancelRouter(newEnv()).Invoke)
		inv.Functions["admin"] = append(inv.Functions["admin"], handler.AdminRouter(newEnv()).Invoke)
		inv.Functions["paynotify"] = append(inv.Functions["paynotify"], handler.PayNotifyRouter(newEnv()).Invoke)
		s.release = append(s.release, handler.Release(newEnv()))
	}
	return inv
}

// dropNotifications is the front door: while notifyDrop lasts, a notification
// never reaches the function and WeChat sees a failure.
func (s *system) dropNotifications(gw http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/pay/") && s.take(&s.notifyDrop) {
			http.Error(w, "unreachable", http.StatusBadGateway)
			return
		}
		gw.ServeHTTP(w, r)
	})
}

// take consumes one unit of a fault counter.
func (s *system) take(n *atomic.Int32) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// onWeChatRequest is the sim's OnRequest hook: a hung request waits until its
// caller gave up (or hangCap), and only then does WeChat act on it.
func (s *system) onWeChatRequest(r *http.Request) {
	if !s.take(&s.hang) {
		return
	}
	t := time.NewTimer(hangCap)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}

// violate records a broken rule once, however many checkpoints see it again.
func (s *system) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if !s.seen[msg] {
		s.seen[msg] = true
		s.violations = append(s.violations, msg)
	}
}

// runRelease is one timer invocation of the release function, with SCF's deadline.
func (s *system) runRelease() (service.Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.release[s.relNext.Add(1)%uint64(len(s.release))](ctx, json.RawMessage(`"release"`))
}

func (s *system) token(openid string) string { return testkit.Token(s.t, s.sessions, openid) }

type answer testkit.Answer

func (a answer) code() string { return testkit.Answer(a).Code() }

// leakMarkers must never appear in an answer to a customer or the salon.
var leakMarkers = []string{"SELECT", "INSERT", "UPDATE t_", "goroutine", ".go:", "PRIVATE KEY", "Error 1", "salon_t_"}

// call sends one HTTP request through the gateway. bearer may be "". A transport
// error, a leak or an error without a code is a violation.
func (s *system) call(method, path, bearer string, body any, headers ...string) answer {
	ka, err := s.client.Call(method, path, bearer, body, headers...)
	if err != nil {
		s.violate("%s %s: transport error %v", method, path, err)
		return answer{}
	}
	a := answer(ka)
	if a.Status >= 400 {
		for _, m := range append(leakMarkers, sessionKey, adminToken, s.sim.APIv3Key()) {
			if strings.Contains(string(a.Body), m) {
				s.violate("%s %s answered %d leaking %q: %s", method, path, a.Status, m, a.Body)
			}
		}
		if a.Status < 500 && a.code() == "" {
			s.violate("%s %s answered %d without an error code: %s", method, path, a.Status, a.Body)
		}
	}
	return a
}
