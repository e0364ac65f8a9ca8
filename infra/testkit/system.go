package testkit

import (
	"context"
	"crypto/rsa"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"salon/infra/localgw"
	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wxlogin/wxloginsim"
)

// Options are what a suite chooses about the system it starts. The identities
// (app, merchant, secrets) are the suite's own, so that a leak check can look
// for them in answers.
type Options struct {
	AppID, AppSecret, MchID   string
	SessionSecret, AdminToken string

	// Conns is the size of the test's own pool to the database (System.Store).
	Conns int
	// OnPayRequest, when set, sees every request to the WeChat Pay simulator
	// before it is handled, and may block it (wxpaysim.Options.OnRequest).
	OnPayRequest func(*http.Request)
	// Env changes the settings, in order, after the defaults are in place and
	// before the functions are set up.
	Env []func(map[string]string)
	// Functions returns what runs the functions, given the system with its
	// settings final: routers in this process (InProcess), or scfhost with the
	// built binaries. It runs once, before the gateway serves.
	Functions func(*System) localgw.Invoker
	// Front, when set, wraps the gateway: a door that can fail requests.
	Front func(gateway http.Handler) http.Handler
	// GatewayLog receives the gateway's own log lines; nil discards them.
	GatewayLog io.Writer
	// StandIns says that Functions are not the product's (a test of this
	// package's own machinery): their answers are not checked against the
	// OpenAPI document, which every product answer must match.
	StandIns bool
}

// System is the whole product for one test: a fresh database, the WeChat Pay
// and WeChat server simulators over real HTTP, and the functions behind the
// local API Gateway with the routes of serverless.yml. Its Client calls the
// gateway as a phone or the salon's browser does.
type System struct {
	T testing.TB
	Client

	Store    *mysql.DB // the test's own view of the database
	DSN      string    // the database's DSN as the test's pool uses it
	Pay      *wxpaysim.Sim
	Merchant *rsa.PrivateKey // the merchant key the functions sign WeChat Pay requests with
	WeChat   *wxloginsim.Server
	Spec     *localgw.Spec
	Gateway  *localgw.Gateway
	Server   *httptest.Server // the front door: the gateway, or Options.Front around it
	// Env is every setting, the functions' source: a test may change it, and a
	// function set up (or reset) afterwards reads the change.
	Env      map[string]string
	Sessions *session.Signer
	Admin    string // the salon's admin token
}

// Start brings a system up and stops it when the test ends.
func Start(t testing.TB, opts Options) *System {
	t.Helper()
	s := &System{T: t, Admin: opts.AdminToken, Sessions: &session.Signer{Secret: []byte(opts.SessionSecret)}}
	var err error
	if s.Spec, err = Serverless(); err != nil {
		t.Fatal(err)
	}
	s.Store, s.DSN = mysqltest.Open(t, opts.Conns)

	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		t.Fatal(err)
	}
	s.Merchant = priv
	s.Pay, err = wxpaysim.New(wxpaysim.Options{AppID: opts.AppID, MchID: opts.MchID,
		MerchantPublicKey: &priv.PublicKey, MerchantSerial: serial, OnRequest: opts.OnPayRequest})
	if err != nil {
		t.Fatal(err)
	}
	paySrv := httptest.NewServer(s.Pay.Handler())
	t.Cleanup(paySrv.Close)
	s.WeChat = wxloginsim.New(opts.AppID, opts.AppSecret)
	weChatSrv := httptest.NewServer(s.WeChat)
	t.Cleanup(func() { s.WeChat.Close(); weChatSrv.Close() })

	// The notify URLs name the gateway before the functions behind it exist, so
	// its listener is opened first and served last.
	s.Server = httptest.NewUnstartedServer(nil)
	s.Client = Client{URL: "http://" + s.Server.Listener.Addr().String()}

	s.Env = s.Pay.Env(priv, serial, paySrv.URL, s.URL+"/pay/notify", s.URL+"/pay/refund-notify")
	s.Env["MYSQL_DSN"] = s.DSN
	s.Env["SESSION_SECRET"] = opts.SessionSecret
	s.Env["ADMIN_TOKEN"] = opts.AdminToken
	s.Env["WX_APPID"] = opts.AppID
	s.Env["WX_APPSECRET"] = opts.AppSecret
	s.Env["WX_API_BASE"] = weChatSrv.URL
	for _, f := range opts.Env {
		f(s.Env)
	}

	// Every invocation is checked against the OpenAPI document: an answer that
	// drifts from it fails the test that caused it.
	contract, err := TheContract()
	if err != nil {
		t.Fatal(err)
	}
	functions := opts.Functions(s)
	if !opts.StandIns {
		functions = contract.Invoker(functions, t.Errorf)
	}
	s.Gateway = localgw.NewGateway(s.Spec.Routes, functions, opts.GatewayLog)
	var front http.Handler = s.Gateway
	if opts.Front != nil {
		front = opts.Front(s.Gateway)
	}
	s.Server.Config.Handler = front
	s.Server.Start()
	t.Cleanup(func() { s.Server.Close(); s.Gateway.Wait() })
	return s
}

// Serverless reads the repository's serverless.yml, found from the working
// directory upwards (a test runs in its package's folder).
func Serverless() (*localgw.Spec, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		path := filepath.Join(dir, "serverless.yml")
		if _, err := os.Stat(path); err == nil {
			return localgw.LoadServerless(path)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("testkit: no serverless.yml above the working directory")
		}
		dir = parent
	}
}

// Token signs a session for openid as /login would; for crowds of customers.
func (s *System) Token(openid string) string {
	s.T.Helper()
	return Token(s.T, s.Sessions, openid)
}

// Must is Client.Call for the test's own goroutine: a transport error ends the test.
func (s *System) Must(method, path, bearer string, body any, headers ...string) Answer {
	s.T.Helper()
	a, err := s.Call(method, path, bearer, body, headers...)
	if err != nil {
		s.T.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

// Login logs a customer in through /login with a code the WeChat simulator
// accepts, and returns the session token.
func (s *System) Login(code string) string {
	s.T.Helper()
	a := s.Must("POST", "/login", "", map[string]string{"code": code})
	tok, _ := a.JSON["token"].(string)
	if a.Status != http.StatusOK || tok == "" {
		s.T.Fatalf("login %q: %s", code, a)
	}
	return tok
}

// PayFor pays a booking at WeChat Pay as its customer would; the simulator's
// notification has gone through the gateway to paynotify when it returns.
func (s *System) PayFor(bookingID int64) {
	s.T.Helper()
	if err := s.Pay.Pay(context.Background(), booking.OutTradeNo(bookingID)); err != nil {
		s.T.Fatalf("pay booking %d: %v", bookingID, err)
	}
}

// Mine returns the customer's booking id as GET /bookings/mine shows it.
func (s *System) Mine(token string, id int64) map[string]any {
	s.T.Helper()
	a := s.Must("GET", "/bookings/mine", token, nil)
	if a.Status != http.StatusOK {
		s.T.Fatalf("mine: %s", a)
	}
	for _, v := range a.JSON["bookings"].([]any) {
		b := v.(map[string]any)
		if int64(b["bookingId"].(float64)) == id {
			return b
		}
	}
	s.T.Fatalf("booking %d not in /bookings/mine: %s", id, a)
	return nil
}

// With returns the system for use in subtest t, so that its helpers fail t.
func (s *System) With(t testing.TB) *System {
	sub := *s
	sub.T = t
	return &sub
}
