package handler

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"salon/infra/testkit"
	"strings"
	"testing"
	"time"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/shared/apigw"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wire"
	"salon/shared/wxlogin/wxloginsim"
)

const (
	testAppID     = "wx0000000000test"
	testAppSecret = "app-secret-for-tests-only"
	testMchID     = "1900000109"
	testSecret    = "session-secret-0123456789abcdef0123456789"
	testAdmin     = "admin-token-0123456789abcdef0123456789"
)

type syncBuffer = testkit.SyncBuffer

// inProcess invokes the functions' routers in this process, the way scfhost
// invokes their binaries: the gateway event in, the integrated response out.
type inProcess map[string]func(ctx context.Context, raw json.RawMessage) (apigw.Response, error)

func (p inProcess) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	h, ok := p[fn]
	if !ok {
		return nil, nil, fmt.Errorf("no function %q", fn)
	}
	resp, err := h(ctx, payload)
	if err != nil {
		return nil, &scfhost.InvokeError{Message: err.Error()}, nil
	}
	out, err := json.Marshal(resp)
	return out, nil, err
}

// system is the whole product in one test: its own database, the WeChat Pay and
// login simulators over real HTTP, and the functions behind the local gateway
// with the routes of serverless.yml.
type system struct {
	t        *testing.T
	store    *mysql.DB
	sim      *wxpaysim.Sim
	login    *wxloginsim.Server
	gw       *httptest.Server
	env      map[string]string
	apiEnv   *wire.Env
	logs     *syncBuffer
	audit    *syncBuffer
	sessions *session.Signer
	merchant *rsa.PrivateKey
}

func newSystem(t *testing.T, override ...func(map[string]string)) *system {
	t.Helper()
	s := &system{t: t, logs: &syncBuffer{}, audit: &syncBuffer{}}
	var dsn string
	s.store, dsn = mysqltest.Open(t, 8)

	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		t.Fatal(err)
	}
	s.merchant = priv
	s.sim, err = wxpaysim.New(wxpaysim.Options{AppID: testAppID, MchID: testMchID, MerchantPublicKey: &priv.PublicKey, MerchantSerial: serial})
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(s.sim.Handler())
	t.Cleanup(simSrv.Close)
	s.login = wxloginsim.New(testAppID, testAppSecret)
	loginSrv := httptest.NewServer(s.login)
	t.Cleanup(func() { s.login.Close(); loginSrv.Close() })

	var gateway http.Handler
	s.gw = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { gateway.ServeHTTP(w, r) }))
	t.Cleanup(s.gw.Close)

	s.env = s.sim.Env(priv, serial, simSrv.URL, s.gw.URL+"/pay/notify", s.gw.URL+"/pay/refund-notify")
	s.env["MYSQL_DSN"] = dsn
	s.env["SESSION_SECRET"] = testSecret
	s.env["ADMIN_TOKEN"] = testAdmin
	s.env["WX_APPID"] = testAppID
	s.env["WX_APPSECRET"] = testAppSecret
	s.env["WX_API_BASE"] = loginSrv.URL
	for _, f := range override {
		f(s.env)
	}
	s.apiEnv = &wire.Env{
		Getenv:   func(k string) string { return s.env[k] },
		Log:      slog.New(slog.NewJSONHandler(s.logs, nil)),
		AuditOut: s.audit,
	}
	s.sessions = &session.Signer{Secret: []byte(testSecret)}

	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	gateway = localgw.NewGateway(spec.Routes, inProcess{
		"login":     LoginRouter(s.apiEnv).Invoke,
		"slots":     SlotsRouter(s.apiEnv).Invoke,
		"reserve":   ReserveRouter(s.apiEnv).Invoke,
		"cancel":    CancelRouter(s.apiEnv).Invoke,
		"admin":     AdminRouter(s.apiEnv).Invoke,
		"paynotify": PayNotifyRouter(s.apiEnv).Invoke,
	}, nil)
	t.Cleanup(func() { s.apiEnv.Close() })
	return s
}

// token signs a session for openid, as /login would.
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

// call sends one HTTP request through the gateway. bearer may be "".
func (s *system) call(method, path, bearer string, body any, headers ...string) answer {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.gw.URL+path, rd)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.send(req)
}

// send sends req and reads the answer as a client sees it.
func (s *system) send(req *http.Request) answer {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode, Header: resp.Header}
	a.Body, _ = io.ReadAll(resp.Body)
	json.Unmarshal(a.Body, &a.JSON)
	return a
}

// slot creates a slot starting `in` from now and returns its id.
func (s *system) slot(in time.Duration, capacity int, priceFen int64) int64 {
	return mysqltest.AddSlot(s.t, s.store, in, capacity, priceFen)
}

// reserve books slot for openid and returns the booking id and the answer.
func (s *system) reserve(openid string, slot int64, headers ...string) (int64, answer) {
	s.t.Helper()
	a := s.call("POST", "/bookings", s.token(openid), map[string]any{"slotId": slot}, headers...)
	if a.Status != http.StatusCreated {
		return 0, a
	}
	b := a.JSON["booking"].(map[string]any)
	return int64(b["bookingId"].(float64)), a
}

func (s *system) status(id int64) string {
	s.t.Helper()
	b, err := s.store.FindBooking(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return b.Status.String()
}

func (s *system) countRows(table string) int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}
