package wxpaysim_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

const (
	appID = "wx8888888888888888"
	mchID = "1900000109"
)

var (
	keyOnce sync.Once
	mKey    *rsa.PrivateKey
	mSerial string
	keyErr  error
)

func merchant(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	keyOnce.Do(func() { mKey, mSerial, keyErr = wxpaysim.NewMerchantKeys() })
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	return mKey, mSerial
}

// clock is a business clock a test can move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	sim      *wxpaysim.Sim
	api      *httptest.Server
	client   *wechatpay.Client
	clock    *clock
	received chan *http.Request // notifications, body already read into the request
	bodies   chan []byte
}

func newFixture(t *testing.T, opts ...func(*wxpaysim.Options)) *fixture {
	t.Helper()
	key, serial := merchant(t)
	clk := &clock{t: time.Now()}
	o := wxpaysim.Options{
		AppID: appID, MchID: mchID, MerchantPublicKey: &key.PublicKey, MerchantSerial: serial, Now: clk.Now,
	}
	for _, opt := range opts {
		opt(&o)
	}
	sim, err := wxpaysim.New(o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sim: sim, clock: clk, received: make(chan *http.Request, 32), bodies: make(chan []byte, 32)}
	f.api = httptest.NewServer(sim.Handler())
	t.Cleanup(f.api.Close)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.received <- r
		f.bodies <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	env := sim.Env(key, serial, f.api.URL, recv.URL+"/pay/notify", recv.URL+"/pay/refund-notify")
	cfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if f.client, err = wechatpay.New(cfg); err != nil {
		t.Fatal(err)
	}
	return f
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) prepay(t *testing.T, no string, expire time.Time) {
	t.Helper()
	_, err := f.client.Prepay(ctxT(t), wechatpay.Order{OutTradeNo: no, Description: "美甲定金", OpenID: "oOPENID", AmountFen: 5000, TimeExpire: expire})
	if err != nil {
		t.Fatal(err)
	}
}

// signedRequest builds a request with a merchant Authorization header the way the
// SDK does, so tests can send what the SDK cannot (bad fields, tampering).
func signedRequest(t *testing.T, base, method, uri string, body []byte, key *rsa.PrivateKey, mchid, serial string, ts int64) *http.Request {
	t.Helper()
	nonce := "NONCE0123456789"
	msg := fmt.Sprintf("%s\n%s\n%d\n%s\n%s\n", method, uri, ts, nonce, body)
	sum := sha256.Sum256([]byte(msg))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequest(method, base+uri, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", fmt.Sprintf(`WECHATPAY2-SHA256-RSA2048 mchid="%s",nonce_str="%s",timestamp="%d",serial_no="%s",signature="%s"`,
		mchid, nonce, ts, serial, base64.StdEncoding.EncodeToString(sig)))
	return r
}

type apiAnswer struct {
	status int
	header http.Header
	body   []byte
	code   string
}

func send(t *testing.T, r *http.Request) apiAnswer {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Code string }
	_ = json.Unmarshal(b, &e)
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: b, code: e.Code}
}

func TestRejectsForgedAuthorization(t *testing.T) {
	// The simulator judges freshness by a clock that stands still, so the
	// 5-minute cases sit exactly on the window's edge however slow the machine.
	stamp := time.Now()
	f := newFixture(t, func(o *wxpaysim.Options) { o.SignNow = func() time.Time { return stamp } })
	key, serial := merchant(t)
	now := stamp.Unix()
	uri := "/v3/pay/transactions/out-trade-no/BK000000000001?mchid=" + mchID

	// The helper itself is right: a correct signature reaches the business logic.
	if a := send(t, signedRequest(t, f.api.URL, "GET", uri, nil, key, mchID, serial, now)); a.status != 404 || a.code != "ORDER_NOT_EXIST" {
		t.Fatalf("genuine request: %d %s", a.status, a.body)
	}

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tampered := signedRequest(t, f.api.URL, "POST", "/v3/pay/transactions/out-trade-no/BK000000000001/close", []byte(`{"mchid":"`+mchID+`"}`), key, mchID, serial, now)
	tampered.Body = io.NopCloser(strings.NewReader(`{"mchid":"` + mchID + `" }`))
	tampered.ContentLength = -1
	noAuth, _ := http.NewRequest("GET", f.api.URL+uri, nil)
	otherURI := signedRequest(t, f.api.URL, "GET", uri, nil, key, mchID, serial, now)
	otherURI.URL.RawQuery = "mchid=1900000110"

	for name, r := range map[string]*http.Request{
		"no Authorization":      noAuth,
		"another merchant key":  signedRequest(t, f.api.URL, "GET", uri, nil, other, mchID, serial, now),
		"tampered body":         tampered,
		"other request URI":     otherURI,
		"timestamp 5 min old":   signedRequest(t, f.api.URL, "GET", uri, nil, key, mchID, serial, now-300),
		"timestamp 5 min ahead": signedRequest(t, f.api.URL, "GET", uri, nil, key, mchID, serial, now+300),
		"other mchid":           signedRequest(t, f.api.URL, "GET", uri, nil, key, "1900000110", serial, now),
		"other certificate":     signedRequest(t, f.api.URL, "GET", uri, nil, key, mchID, "0123456789ABCDEF", now),
	} {
		t.Run(name, func(t *testing.T) {
			a := send(t, r)
			if a.status != 401 || a.code != "SIGN_ERROR" {
				t.Fatalf("answer %d %s", a.status, a.body)
			}
			if a.header.Get("Wechatpay-Signature") != "" {
				t.Fatal("error answers are unsigned")
			}
		})
	}

	// Through the SDK: a client holding another merchant key is refused.
	env := f.sim.Env(other, serial, f.api.URL, "https://example.com/n", "https://example.com/r")
	cfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Prepay(ctxT(t), wechatpay.Order{OutTradeNo: "BK000000000002", Description: "d", OpenID: "o", AmountFen: 1})
	if s, code, ok := wechatpay.APIErrorCode(err); !ok || s != 401 || code != "SIGN_ERROR" {
		t.Fatalf("forged client: %v", err)
	}
	if len(f.sim.Orders()) != 0 {
		t.Fatal("a forged request created an order")
	}
}

// A 204 is signed too: ts\nnonce\n\n with the platform key.
func TestSuccessAnswersAreSigned(t *testing.T) {
	f := newFixture(t)
	key, serial := merchant(t)
	r := signedRequest(t, f.api.URL, "POST", "/v3/pay/transactions/out-trade-no/BK000000000003/close", []byte(`{"mchid":"`+mchID+`"}`), key, mchID, serial, time.Now().Unix())
	a := send(t, r)
	if a.status != 204 || len(a.body) != 0 {
		t.Fatalf("close: %d %s", a.status, a.body)
	}
	if a.header.Get("Wechatpay-Serial") != f.sim.PublicKeyID() || !strings.HasPrefix(f.sim.PublicKeyID(), "PUB_KEY_ID_0100") {
		t.Fatalf("serial %q", a.header.Get("Wechatpay-Serial"))
	}
	msg := a.header.Get("Wechatpay-Timestamp") + "\n" + a.header.Get("Wechatpay-Nonce") + "\n\n"
	sig, err := base64.StdEncoding.DecodeString(a.header.Get("Wechatpay-Signature"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(msg))
	if err := rsa.VerifyPKCS1v15(f.sim.PlatformPublicKey(), crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("204 signature: %v", err)
	}
	if len(f.sim.APIv3Key()) != 32 {
		t.Fatalf("APIv3 key of %d bytes", len(f.sim.APIv3Key()))
	}
}

func TestPrepayValidation(t *testing.T) {
	f := newFixture(t)
	key, serial := merchant(t)
	base := map[string]any{
		"appid": appID, "mchid": mchID, "description": "美甲定金", "out_trade_no": "BK000000000010",
		"time_expire": "2030-01-01T10:00:00+08:00", "notify_url": "https://example.com/pay/notify",
		"amount": map[string]any{"total": 100, "currency": "CNY"}, "payer": map[string]any{"openid": "oOPENID"},
	}
	cases := []struct {
		name   string
		change func(m map[string]any)
		status int
		code   string
	}{
		{"UTC time_expire", func(m map[string]any) { m["time_expire"] = "2030-01-01T02:00:00Z" }, 400, "PARAM_ERROR"},
		{"fractional time_expire", func(m map[string]any) { m["time_expire"] = "2030-01-01T10:00:00.5+08:00" }, 400, "PARAM_ERROR"},
		{"no openid", func(m map[string]any) { delete(m, "payer") }, 400, "PARAM_ERROR"},
		{"no description", func(m map[string]any) { delete(m, "description") }, 400, "PARAM_ERROR"},
		{"other appid", func(m map[string]any) { m["appid"] = "wx0000000000000000" }, 400, "APPID_MCHID_NOT_MATCH"},
		{"other mchid", func(m map[string]any) { m["mchid"] = "1900000110" }, 400, "PARAM_ERROR"},
		{"bad out_trade_no", func(m map[string]any) { m["out_trade_no"] = "BK 1" }, 400, "PARAM_ERROR"},
		{"notify_url with query", func(m map[string]any) { m["notify_url"] = "https://example.com/n?a=1" }, 400, "PARAM_ERROR"},
		{"zero amount", func(m map[string]any) { m["amount"] = map[string]any{"total": 0} }, 400, "PARAM_ERROR"},
		{"valid", func(map[string]any) {}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			c.change(m)
			body, _ := json.Marshal(m)
			a := send(t, signedRequest(t, f.api.URL, "POST", "/v3/pay/transactions/jsapi", body, key, mchID, serial, time.Now().Unix()))
			if a.status != c.status || a.code != c.code {
				t.Fatalf("answer %d %s", a.status, a.body)
			}
		})
	}
}

func TestPayRules(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	if err := f.sim.Pay(ctx, "BK000000000404"); !errors.Is(err, wxpaysim.ErrNotFound) {
		t.Fatalf("unknown order: %v", err)
	}

	f.prepay(t, "BK000000000020", f.clock.Now().Add(15*time.Minute))
	f.clock.Add(15*time.Minute + time.Second)
	if err := f.sim.Pay(ctx, "BK000000000020"); !errors.Is(err, wxpaysim.ErrNotPayable) {
		t.Fatalf("pay after time_expire: %v", err)
	}
	_, err := f.client.Prepay(ctx, wechatpay.Order{OutTradeNo: "BK000000000020", Description: "美甲定金", OpenID: "oOPENID", AmountFen: 5000, TimeExpire: f.clock.Now().Add(10 * time.Minute)})
	if s, code, ok := wechatpay.APIErrorCode(err); !ok || s != 403 || code != "OUT_TRADE_NO_USED" {
		t.Fatalf("prepay with another time_expire: %v", err)
	}
	if err := f.sim.PayLate(ctx, "BK000000000020"); err != nil {
		t.Fatalf("late payment: %v", err)
	}
	r := <-f.received
	body := <-f.bodies
	if r.URL.Path != "/pay/notify" || r.Header.Get("Wechatpay-Serial") != f.sim.PublicKeyID() ||
		r.Header.Get("Wechatpay-Signature-Type") != "WECHATPAY2-SHA256-RSA2048" || !bytes.Contains(body, []byte(`"event_type":"TRANSACTION.SUCCESS"`)) {
		t.Fatalf("notification %v %s", r.Header, body)
	}
	if err := f.sim.Pay(ctx, "BK000000000020"); !errors.Is(err, wxpaysim.ErrNotPayable) {
		t.Fatalf("paying twice: %v", err)
	}
	o, _ := f.sim.Order("BK000000000020")
	if o.State != "SUCCESS" || o.Notified != 1 || o.TransactionID == "" {
		t.Fatalf("order = %+v", o)
	}

	// Closed orders cannot be paid, except by PayLate which models a payment that
	// completed just before the close.
	f.prepay(t, "BK000000000021", f.clock.Now().Add(15*time.Minute))
	if err := f.client.CloseOrder(ctx, "BK000000000021"); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.Pay(ctx, "BK000000000021"); !errors.Is(err, wxpaysim.ErrNotPayable) {
		t.Fatalf("paying a closed order: %v", err)
	}
	if err := f.sim.Notify(ctx, "BK000000000021"); err == nil {
		t.Fatal("notified an unpaid order")
	}
}

func TestIdenticalPrepayAfterExpiryIsClosed(t *testing.T) {
	f := newFixture(t)
	expire := f.clock.Now().Add(15 * time.Minute)
	f.prepay(t, "BK000000000022", expire)
	f.clock.Add(16 * time.Minute)
	_, err := f.client.Prepay(ctxT(t), wechatpay.Order{OutTradeNo: "BK000000000022", Description: "美甲定金", OpenID: "oOPENID", AmountFen: 5000, TimeExpire: expire})
	if s, code, ok := wechatpay.APIErrorCode(err); !ok || s != 400 || code != "ORDER_CLOSED" {
		t.Fatalf("prepay after expiry: %v", err)
	}
}

func TestFaultInjection(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	f.prepay(t, "BK000000000030", f.clock.Now().Add(15*time.Minute))

	f.sim.FailNext("/v3/pay/transactions/out-trade-no/", wxpaysim.Drop, "", 1)
	f.sim.FailNext("/v3/pay/transactions/out-trade-no/", 429, "FREQUENCY_LIMITED", 2)
	if err := f.client.CloseOrder(ctx, "BK000000000030"); err == nil {
		t.Fatal("dropped close reported success")
	}
	for range 2 {
		err := f.client.CloseOrder(ctx, "BK000000000030")
		if s, code, ok := wechatpay.APIErrorCode(err); !ok || s != 429 || code != "FREQUENCY_LIMITED" {
			t.Fatalf("injected 429: %v", err)
		}
	}
	if o, _ := f.sim.Order("BK000000000030"); o.State != "NOTPAY" {
		t.Fatalf("faults acted: %+v", o)
	}
	if err := f.client.CloseOrder(ctx, "BK000000000030"); err != nil {
		t.Fatalf("after the faults: %v", err)
	}
	calls := f.sim.Calls()
	want := []int{200, 0, 429, 429, 204}
	if len(calls) != len(want) {
		t.Fatalf("calls = %+v", calls)
	}
	for i, c := range calls {
		if c.Status != want[i] {
			t.Fatalf("call %d = %+v, want status %d", i, c, want[i])
		}
	}

	f.sim.SetLatency(time.Hour)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := f.client.QueryOrder(short, "BK000000000030"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("latency: %v", err)
	}
	f.sim.SetLatency(0)
	if st, err := f.client.QueryOrder(ctx, "BK000000000030"); err != nil || st.TradeState != "CLOSED" {
		t.Fatalf("query: %+v %v", st, err)
	}
}

func TestControlEndpoints(t *testing.T) {
	f := newFixture(t)
	f.prepay(t, "BK000000000040", f.clock.Now().Add(15*time.Minute))
	post := func(path string) (int, []byte) {
		resp, err := http.Post(f.api.URL+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if s, b := post("/sim/pay?out_trade_no=BK000000000040"); s != 200 || !bytes.Contains(b, []byte(`"state":"SUCCESS"`)) {
		t.Fatalf("/sim/pay: %d %s", s, b)
	}
	<-f.received
	<-f.bodies
	if s, _ := post("/sim/pay?out_trade_no=BK000000000040"); s != 409 {
		t.Fatalf("paying twice: %d", s)
	}
	if s, _ := post("/sim/pay?out_trade_no=BK000000000099"); s != 404 {
		t.Fatalf("unknown: %d", s)
	}
	if _, err := f.client.Refund(ctxT(t), wechatpay.RefundRequest{OutTradeNo: "BK000000000040", OutRefundNo: "RF000000000040", RefundFen: 5000, TotalFen: 5000}); err != nil {
		t.Fatal(err)
	}
	if s, b := post("/sim/refund?out_refund_no=RF000000000040&status=SUCCESS"); s != 200 || !bytes.Contains(b, []byte(`"status":"SUCCESS"`)) {
		t.Fatalf("/sim/refund: %d %s", s, b)
	}
	r := <-f.received
	body := <-f.bodies
	if r.URL.Path != "/pay/refund-notify" || !bytes.Contains(body, []byte(`"event_type":"REFUND.SUCCESS"`)) {
		t.Fatalf("refund notification %s %s", r.URL.Path, body)
	}

	resp, err := http.Get(f.api.URL + "/sim/orders")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var orders []wxpaysim.Order
	if err := json.NewDecoder(resp.Body).Decode(&orders); err != nil {
		t.Fatal(err)
	}
	if len(orders) != 1 || orders[0].OutTradeNo != "BK000000000040" || orders[0].TradeState != "REFUND" || orders[0].Notified != 1 {
		t.Fatalf("/sim/orders = %+v", orders)
	}
}

func TestPEMHelpers(t *testing.T) {
	key, serial := merchant(t)
	if len(serial) != 40 || strings.ToUpper(serial) != serial {
		t.Fatalf("serial %q", serial)
	}
	priv, err := wxpaysim.PrivateKeyPEM(key)
	if err != nil || !strings.HasPrefix(priv, "-----BEGIN PRIVATE KEY-----\n") {
		t.Fatalf("private PEM: %v %.40q", err, priv)
	}
	pub, err := wxpaysim.PublicKeyPEM(&key.PublicKey)
	if err != nil || !strings.HasPrefix(pub, "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("public PEM: %v %.40q", err, pub)
	}
	if _, err := wxpaysim.PrivateKeyPEM(nil); err == nil {
		t.Fatal("nil key encoded")
	}
}
