package handler

import (
	"context"
	"crypto/rsa"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"salon/infra/localgw"
	"salon/infra/testkit"
	"salon/shared/instance"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
	"salon/shared/wxlogin/wxloginsim"
)

const (
	testAppID     = "wx0000000000test"
	testAppSecret = "app-secret-for-tests-only"
	testMchID     = "1900000109"
	testSecret    = "session-secret-0123456789abcdef0123456789"
	testAdmin     = "admin-token-0123456789abcdef0123456789"
	// testPasswordCost is the bcrypt cost of the accounts' passwords here:
	// under the race detector a hash at production's cost (booking.PasswordCost,
	// kept by shared/instance's TestPasswordCost) takes seconds, and a request
	// that makes one would outlast the gateway's serviceTimeout on a busy machine.
	testPasswordCost = bcrypt.MinCost
)

type syncBuffer = testkit.SyncBuffer

// system is the whole product in one test (testkit.System: its own database, the
// WeChat Pay and login simulators over real HTTP, and the functions behind the
// local gateway with the routes of serverless.yml), here with the functions'
// routers in this process sharing one instance.Env, under the names these tests use.
type system struct {
	kit      *testkit.System
	t        *testing.T
	store    *mysql.DB
	sim      *wxpaysim.Sim
	login    *wxloginsim.Server
	gw       *httptest.Server
	env      map[string]string
	apiEnv   *instance.Env
	logs     *syncBuffer
	audit    *syncBuffer
	sessions *session.Signer
	merchant *rsa.PrivateKey
}

func newSystem(t *testing.T, override ...func(map[string]string)) *system {
	t.Helper()
	s := &system{t: t, logs: &syncBuffer{}, audit: &syncBuffer{}}
	kit := testkit.Start(t, testkit.Options{
		AppID: testAppID, AppSecret: testAppSecret, MchID: testMchID,
		SessionSecret: testSecret, AdminToken: testAdmin,
		Conns: 8,
		Env:   override,
		Functions: func(kit *testkit.System) localgw.Invoker {
			s.apiEnv = &instance.Env{
				Getenv:       func(k string) string { return kit.Env[k] },
				Log:          slog.New(slog.NewJSONHandler(s.logs, nil)),
				AuditOut:     s.audit,
				PasswordCost: testPasswordCost,
			}
			t.Cleanup(func() { s.apiEnv.Close() })
			return &testkit.InProcess{Functions: map[string][]testkit.Handler{
				"login":     {LoginRouter(s.apiEnv).Invoke},
				"slots":     {SlotsRouter(s.apiEnv).Invoke},
				"reserve":   {ReserveRouter(s.apiEnv).Invoke},
				"cancel":    {CancelRouter(s.apiEnv).Invoke},
				"admin":     {AdminRouter(s.apiEnv).Invoke},
				"paynotify": {PayNotifyRouter(s.apiEnv).Invoke},
			}}
		},
	})
	s.kit, s.store, s.sim, s.login, s.gw = kit, kit.Store, kit.Pay, kit.WeChat, kit.Server
	s.env, s.sessions, s.merchant = kit.Env, kit.Sessions, kit.Merchant
	return s
}

// checked is h with every invocation checked against the OpenAPI document, for
// a test that invokes a router directly instead of through the gateway (which
// checks every invocation itself).
func (s *system) checked(function string, h testkit.Handler) testkit.Handler {
	s.t.Helper()
	c, err := testkit.TheContract()
	if err != nil {
		s.t.Fatal(err)
	}
	return c.Handler(function, h, s.t.Errorf)
}

// token signs a session for openid, as /login would.
func (s *system) token(openid string) string {
	s.t.Helper()
	return testkit.Token(s.t, s.sessions, openid)
}

type answer testkit.Answer

func (a answer) code() string { return testkit.Answer(a).Code() }

// call sends one HTTP request through the gateway. bearer may be "".
func (s *system) call(method, path, bearer string, body any, headers ...string) answer {
	s.t.Helper()
	a, err := testkit.Client{URL: s.gw.URL}.Call(method, path, bearer, body, headers...)
	if err != nil {
		s.t.Fatal(err)
	}
	return answer(a)
}

// send sends req and reads the answer as a client sees it.
func (s *system) send(req *http.Request) answer {
	s.t.Helper()
	a, err := testkit.Client{}.Send(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return answer(a)
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

// payFor pays booking id through the WeChat Pay simulator and checks it is confirmed.
func (s *system) payFor(id int64) {
	s.t.Helper()
	s.kit.PayFor(id)
	if got := s.status(id); got != "confirmed" {
		s.t.Fatalf("booking %d after payment: %s", id, got)
	}
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
