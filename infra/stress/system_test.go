package stress

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"salon/infra/testkit"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/shared/apigw"
	"salon/shared/cls/clstest"
	"salon/shared/handler"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wire"
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

// invoker runs the functions' routers in this process the way scfhost runs their
// binaries. Each function has a few warm "instances" (an Env each, so each has its
// own small pool and its own WeChat Pay client), used in turn; each invocation gets
// the function's timeout as its deadline, as SCF gives it.
type invoker struct {
	timeout   time.Duration
	next      atomic.Uint64
	instances map[string][]func(ctx context.Context, raw json.RawMessage) (apigw.Response, error)
}

func (p *invoker) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	hs, ok := p.instances[fn]
	if !ok {
		return nil, nil, fmt.Errorf("no function %q", fn)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	resp, err := hs[p.next.Add(1)%uint64(len(hs))](ctx, payload)
	if err != nil {
		return nil, &scfhost.InvokeError{Message: err.Error()}, nil
	}
	out, err := json.Marshal(resp)
	return out, nil, err
}

// system is the whole product for one stress run.
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
	client   *http.Client

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
	var dsn string
	s.store, dsn = mysqltest.Open(t, 4)
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.dbName = cfg.DBName
	s.killer, err = sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.killer.SetMaxOpenConns(1)
	t.Cleanup(func() { s.killer.Close() })

	if cfg.Net != "tcp" {
		t.Skipf("the stress test needs a TCP MYSQL_DSN to put its proxy in front of, not %s", cfg.Net)
	}
	s.proxy, err = newDBProxy(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.proxy.Close)
	viaProxy := cfg.Clone()
	viaProxy.Addr = s.proxy.Addr()

	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		t.Fatal(err)
	}
	s.sim, err = wxpaysim.New(wxpaysim.Options{AppID: appID, MchID: mchID, MerchantPublicKey: &priv.PublicKey,
		MerchantSerial: serial, OnRequest: s.onWeChatRequest})
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(s.sim.Handler())
	t.Cleanup(simSrv.Close)

	s.login = wxloginsim.New(appID, "stress-app-secret")
	loginSrv := httptest.NewServer(s.login)
	t.Cleanup(func() { s.login.Close(); loginSrv.Close() })

	s.cls = clstest.NewServer(clsSecretID, clsSecretKey)
	s.cls.SetTopicID(clsTopic)
	s.cls.Start()
	t.Cleanup(s.cls.Close)

	var front http.Handler
	s.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { front.ServeHTTP(w, r) }))
	t.Cleanup(s.front.Close)

	s.env = s.sim.Env(priv, serial, simSrv.URL, s.front.URL+"/pay/notify", s.front.URL+"/pay/refund-notify")
	s.env["MYSQL_DSN"] = viaProxy.FormatDSN()
	s.env["SESSION_SECRET"] = sessionKey
	s.env["ADMIN_TOKEN"] = adminToken
	s.env["WX_APPSECRET"] = "stress-app-secret"
	s.env["WX_API_BASE"] = loginSrv.URL
	for _, k := range []string{"CONFIRMED", "REMINDER", "WAITLIST", "CANCELLED"} {
		s.env["WX_TMPL_"+k] = `{"id":"tmpl-` + strings.ToLower(k) + `","data":{"character_string1":"{bookingId}","time2":"{startAt}"}}`
	}
	s.env["CLS_ENDPOINT"] = s.cls.URL
	s.env["CLS_TOPIC_ID"] = clsTopic
	s.env["TENCENTCLOUD_SECRETID"] = clsSecretID
	s.env["TENCENTCLOUD_SECRETKEY"] = clsSecretKey
	s.sessions = &session.Signer{Secret: []byte(sessionKey)}

	log := slog.New(slog.NewJSONHandler(s.logs, nil))
	newEnv := func() *wire.Env {
		e := &wire.Env{Getenv: func(k string) string { return s.env[k] }, Log: log, AuditOut: io.Discard}
		t.Cleanup(func() {
			e.Close()
		})
		return e
	}
	const instances = 2
	inv := &invoker{timeout: fnTimeout, instances: map[string][]func(context.Context, json.RawMessage) (apigw.Response, error){}}
	for range instances {
		inv.instances["reserve"] = append(inv.instances["reserve"], handler.ReserveRouter(newEnv()).Invoke)
		inv.instances["cancel"] = append(inv.instances["cancel"], handler.CancelRouter(newEnv()).Invoke)
		inv.instances["admin"] = append(inv.instances["admin"], handler.AdminRouter(newEnv()).Invoke)
		inv.instances["paynotify"] = append(inv.instances["paynotify"], handler.PayNotifyRouter(newEnv()).Invoke)
		s.release = append(s.release, handler.Release(newEnv()))
	}
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	s.gw = localgw.NewGateway(spec.Routes, inv, nil)
	t.Cleanup(s.gw.Wait)
	front = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/pay/") && s.take(&s.notifyDrop) {
			// The notification never reaches the function: WeChat sees a failure.
			http.Error(w, "unreachable", http.StatusBadGateway)
			return
		}
		s.gw.ServeHTTP(w, r)
	})
	s.client = &http.Client{Timeout: 30 * time.Second}
	return s
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

func (s *system) violationCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.violations)
}

// runRelease is one timer invocation of the release function, with SCF's deadline.
func (s *system) runRelease() (service.Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.release[s.relNext.Add(1)%uint64(len(s.release))](ctx, json.RawMessage(`"release"`))
}

func (s *system) token(openid string) string {
	tok, _, err := s.sessions.Issue(openid)
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

type answer struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

func (a answer) code() string {
	c, _ := a.JSON["code"].(string)
	return c
}

// leakMarkers must never appear in an answer to a customer or the salon.
var leakMarkers = []string{"SELECT", "INSERT", "UPDATE t_", "goroutine", ".go:", "PRIVATE KEY", "Error 1", "salon_t_"}

// call sends one HTTP request through the gateway. bearer may be "".
func (s *system) call(method, path, bearer string, body any, headers ...string) answer {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.front.URL+path, rd)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.violate("%s %s: transport error %v", method, path, err)
		return answer{}
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode, Header: resp.Header}
	a.Body, _ = io.ReadAll(resp.Body)
	json.Unmarshal(a.Body, &a.JSON)
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
