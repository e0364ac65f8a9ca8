package wechatpay_test

import (
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

const (
	testAppID = "wxd678efh567hg6787"
	testMchID = "1230000109"
)

// The merchant key is generated once per test binary: RSA key generation is the
// slowest step, and nothing depends on the key being fresh per test.
var (
	merchantOnce   sync.Once
	merchantKey    *rsa.PrivateKey
	merchantSerial string
	merchantErr    error
)

func merchant(t testing.TB) (*rsa.PrivateKey, string) {
	t.Helper()
	merchantOnce.Do(func() { merchantKey, merchantSerial, merchantErr = wxpaysim.NewMerchantKeys() })
	if merchantErr != nil {
		t.Fatal(merchantErr)
	}
	return merchantKey, merchantSerial
}

// harness is a simulator behind a real HTTP server, a client configured the way
// a function is (from the environment Env produces), and a receiver that parses
// the notifications the sim delivers.
type harness struct {
	sim      *wxpaysim.Sim
	api      *httptest.Server
	client   *wechatpay.Client
	cfg      wechatpay.Config
	env      map[string]string
	payments chan *wechatpay.Payment
	refunds  chan *wechatpay.RefundNotice
	rejected chan error
}

func newHarness(t testing.TB, tweak ...func(*wxpaysim.Options)) *harness {
	t.Helper()
	return newHarnessEnv(t, nil, tweak...)
}

// newHarnessEnv is newHarness with a hook that edits the function's environment
// before the client is built (to choose a verification mode).
func newHarnessEnv(t testing.TB, envTweak func(sim *wxpaysim.Sim, env map[string]string), tweak ...func(*wxpaysim.Options)) *harness {
	t.Helper()
	key, serial := merchant(t)
	opts := wxpaysim.Options{AppID: testAppID, MchID: testMchID, MerchantPublicKey: &key.PublicKey, MerchantSerial: serial}
	for _, f := range tweak {
		f(&opts)
	}
	sim, err := wxpaysim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		sim:      sim,
		payments: make(chan *wechatpay.Payment, 32),
		refunds:  make(chan *wechatpay.RefundNotice, 32),
		rejected: make(chan error, 32),
	}
	h.api = httptest.NewServer(sim.Handler())
	t.Cleanup(h.api.Close)

	// The receiver needs the client and the client needs the receiver's URL; an
	// atomic pointer hands the client over without a data race.
	var client atomic.Pointer[wechatpay.Client]
	mux := http.NewServeMux()
	mux.HandleFunc("POST /pay/notify", func(w http.ResponseWriter, r *http.Request) {
		p, err := client.Load().ParsePaymentNotification(r.Context(), r)
		if err != nil {
			h.rejected <- err
			failAnswer(w)
			return
		}
		h.payments <- p
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /pay/refund-notify", func(w http.ResponseWriter, r *http.Request) {
		n, err := client.Load().ParseRefundNotification(r.Context(), r)
		if err != nil {
			h.rejected <- err
			failAnswer(w)
			return
		}
		h.refunds <- n
		w.WriteHeader(http.StatusNoContent)
	})
	recv := httptest.NewServer(mux)
	t.Cleanup(recv.Close)

	h.env = sim.Env(key, serial, h.api.URL, recv.URL+"/pay/notify", recv.URL+"/pay/refund-notify")
	if envTweak != nil {
		envTweak(sim, h.env)
	}
	h.cfg, err = wechatpay.ConfigFromEnv(func(k string) string { return h.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c, err := wechatpay.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Store(c)
	h.client = c
	return h
}

func failAnswer(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": "FAIL", "message": "失败"})
}

func (h *harness) order(no string) wechatpay.Order {
	return wechatpay.Order{
		OutTradeNo:  no,
		Description: "美甲定金 12月1日 19:30",
		OpenID:      "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
		AmountFen:   5000,
		TimeExpire:  time.Now().Add(15 * time.Minute),
	}
}

// escapePEM writes PEM values the way an SCF console or .env file stores them.
func escapePEM(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = strings.ReplaceAll(strings.TrimRight(v, "\n"), "\n", `\n`)
	}
	return out
}
