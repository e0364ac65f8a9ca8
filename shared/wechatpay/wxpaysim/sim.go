// Package wxpaysim simulates WeChat Pay API v3 for tests and local development.
// It speaks the real protocol: it verifies the merchant's Authorization header,
// signs every 2xx answer with its own WeChat Pay public key, or, in
// ModePlatformCert, with a platform certificate it also hands out encrypted at
// GET /v3/certificates, and delivers AES-256-GCM encrypted, signed notifications. A client configured with Env (or
// the keys it exposes) cannot tell it from WeChat for the calls the product makes:
// JSAPI prepay, close, query by out_trade_no, refund and refund query.
//
// Its business rules follow WeChat's documentation and field reports, noted at
// each rule. Two clocks are kept apart on purpose: Options.Now is business time
// (time_expire, success_time), which tests may move freely; Options.SignNow stamps
// signatures and judges Authorization freshness, and must stay near the real
// clock because the SDK checks signatures against time.Now.
package wxpaysim

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Trade states, as WeChat spells them.
const (
	StateNotPay  = "NOTPAY"
	StateSuccess = "SUCCESS"
	StateClosed  = "CLOSED"
	StateRefund  = "REFUND"
)

// Refund states.
const (
	RefundProcessing = "PROCESSING"
	RefundSuccess    = "SUCCESS"
	RefundClosed     = "CLOSED"
	RefundAbnormal   = "ABNORMAL"
)

// Special statuses for FailNext besides real HTTP error statuses.
const (
	// Drop hangs up without answering and without acting on the request: a
	// network failure before WeChat saw the call. net/http retries an idempotent
	// request (GET) once on a reused connection, so use n >= 2 for queries.
	Drop = -1
	// ActThenDrop performs the request and then hangs up: the call happened, but
	// the caller cannot know (a timeout after WeChat acted).
	ActThenDrop = -2
	// BadSignature performs the request and answers 2xx with a signature that does
	// not verify; the SDK rejects the answer although the call happened.
	BadSignature = -3
)

// ErrNotPayable is returned by Pay for an order that is closed, already paid, or
// past its time_expire.
var ErrNotPayable = errors.New("wxpaysim: order is not payable")

// ErrNotFound is returned when a driving method names an unknown order or refund.
var ErrNotFound = errors.New("wxpaysim: no such order or refund")

// Options configure a Sim.
type Options struct {
	AppID string // the mini-program bound to the merchant; prepay with another appid fails
	MchID string // the merchant
	// MerchantPublicKey verifies every request's Authorization header.
	MerchantPublicKey *rsa.PublicKey
	// MerchantSerial, when set, must equal the Authorization serial_no.
	MerchantSerial string
	// Now is business time: order creation, time_expire, success times. Default time.Now.
	Now func() time.Time
	// SignNow stamps Wechatpay-Timestamp and judges the freshness of requests.
	// Default time.Now; move it only to test stale signatures.
	SignNow func() time.Time
	// HTTPClient posts notifications. Default: a client with WeChat's 5 s limit.
	HTTPClient *http.Client
	// OnRequest, when set, runs at the start of every /v3/ request and may block
	// (for example until the test's channel is closed) to model a slow WeChat.
	OnRequest func(r *http.Request)
	// Mode is how answers and notifications are signed; the default is the
	// public key. SetMode changes it later (a merchant switching over).
	Mode Mode
}

// Sim is one simulated merchant account at WeChat Pay. It is safe for concurrent use.
type Sim struct {
	opts        Options
	platformKey *rsa.PrivateKey
	publicKeyID string
	cert        *platformCert
	mode        Mode
	apiV3Key    string

	mu      sync.Mutex
	orders  map[string]*order
	refunds map[string]*refund
	faults  []*fault
	// refusing names orders whose refund requests fail (FailRefundsOf).
	refusing  map[string]bool
	latency   time.Duration
	onRequest func(*http.Request)
	// hung, while non-nil, holds every /v3/ request until it is closed
	// (Hang's release); nil when WeChat answers.
	hung     chan struct{}
	hanging  int           // requests waiting in hung
	hangNote chan struct{} // closed when hanging changes (AwaitHanging)
	calls    []Call
	seq      int64
	// plant is what the bills get wrong (PlantBill); bills holds the files
	// announced by GET /v3/bill/tradebill, by download token.
	plant BillPlant
	bills map[string][]byte
}

// Order is a snapshot of a simulated order.
type Order struct {
	OutTradeNo    string    `json:"out_trade_no"`
	AppID         string    `json:"appid"`
	MchID         string    `json:"mchid"`
	Description   string    `json:"description"`
	Attach        string    `json:"attach,omitempty"`
	NotifyURL     string    `json:"notify_url"`
	OpenID        string    `json:"openid"`
	Total         int64     `json:"total"`
	TimeExpireRaw string    `json:"time_expire_raw,omitempty"` // time_expire exactly as the merchant sent it
	TimeExpire    time.Time `json:"time_expire,omitzero"`      // effective deadline (raised to creation + 1 min)
	CreatedAt     time.Time `json:"created_at"`
	State         string    `json:"state"`       // NOTPAY, SUCCESS or CLOSED; see TradeState for REFUND
	TradeState    string    `json:"trade_state"` // what a query answers: State, or REFUND once refunded
	TransactionID string    `json:"transaction_id,omitempty"`
	SuccessTime   time.Time `json:"success_time,omitzero"`
	PrepayIDs     []string  `json:"prepay_ids"` // one per successful prepay call
	Refunded      int64     `json:"refunded"`   // sum of refunds not CLOSED
	Notified      int       `json:"notified"`   // payment notifications answered 2xx
}

// Refund is a snapshot of a simulated refund.
type Refund struct {
	OutRefundNo   string    `json:"out_refund_no"`
	RefundID      string    `json:"refund_id"`
	OutTradeNo    string    `json:"out_trade_no"`
	TransactionID string    `json:"transaction_id"`
	Reason        string    `json:"reason,omitempty"`
	NotifyURL     string    `json:"notify_url,omitempty"`
	Status        string    `json:"status"` // PROCESSING, SUCCESS, CLOSED or ABNORMAL
	Amount        int64     `json:"amount"` // refunded fen
	Total         int64     `json:"total"`  // the order's amount
	CreatedAt     time.Time `json:"created_at"`
	SuccessTime   time.Time `json:"success_time,omitzero"`
	Notified      int       `json:"notified"`
}

// Call records one /v3/ request the sim received, for tests that assert what the
// product asked WeChat.
type Call struct {
	Method string
	Path   string
	Status int // answered status; 0 when the connection was dropped
}

type order struct {
	Order
	eventID       string // a payment has one event id however often it is delivered
	requestedTime time.Time
	hasExpire     bool
}

type refund struct {
	Refund
	eventID string
}

type fault struct {
	prefix string
	status int
	code   string
	left   int
}

// New creates a simulator with a fresh platform key, public key ID and APIv3 key.
func New(opts Options) (*Sim, error) {
	if opts.AppID == "" || opts.MchID == "" {
		return nil, errors.New("wxpaysim: AppID and MchID are required")
	}
	if opts.MerchantPublicKey == nil {
		return nil, errors.New("wxpaysim: MerchantPublicKey is required to verify requests")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SignNow == nil {
		opts.SignNow = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("wxpaysim: platform key: %w", err)
	}
	cert, err := newPlatformCert(opts.SignNow())
	if err != nil {
		return nil, err
	}
	return &Sim{
		opts:        opts,
		platformKey: key,
		cert:        cert,
		mode:        opts.Mode,
		publicKeyID: "PUB_KEY_ID_0100" + randDigits(25),
		apiV3Key:    randAlnum(32),
		orders:      map[string]*order{},
		refunds:     map[string]*refund{},
		onRequest:   opts.OnRequest,
	}, nil
}

// PlatformPublicKey is WECHATPAY_PUBLIC_KEY: it verifies the sim's answers and notifications.
func (s *Sim) PlatformPublicKey() *rsa.PublicKey { return &s.platformKey.PublicKey }

// PublicKeyID is WECHATPAY_PUBLIC_KEY_ID, sent as Wechatpay-Serial.
func (s *Sim) PublicKeyID() string { return s.publicKeyID }

// APIv3Key is WECHATPAY_APIV3_KEY (32 ASCII characters), which encrypts notifications.
func (s *Sim) APIv3Key() string { return s.apiV3Key }

// AppID is the mini-program the simulated merchant is bound to.
func (s *Sim) AppID() string { return s.opts.AppID }

// MchID is the sim's merchant id.
func (s *Sim) MchID() string { return s.opts.MchID }

// Env returns every variable a function needs to talk to this sim, PEM values
// with real newlines (ConfigFromEnv also accepts literal \n escapes). A merchant
// key that cannot be encoded leaves WECHATPAY_MCH_PRIVATE_KEY empty, which the
// configuration then reports by name.
func (s *Sim) Env(merchantPriv *rsa.PrivateKey, merchantSerial, baseURL, notifyURL, refundNotifyURL string) map[string]string {
	privPEM, _ := PrivateKeyPEM(merchantPriv)
	pubPEM, _ := PublicKeyPEM(s.PlatformPublicKey())
	return map[string]string{
		"WX_APPID":                    s.opts.AppID,
		"WECHATPAY_MCHID":             s.opts.MchID,
		"WECHATPAY_MCH_CERT_SERIAL":   merchantSerial,
		"WECHATPAY_MCH_PRIVATE_KEY":   privPEM,
		"WECHATPAY_APIV3_KEY":         s.apiV3Key,
		"WECHATPAY_PUBLIC_KEY_ID":     s.publicKeyID,
		"WECHATPAY_PUBLIC_KEY":        pubPEM,
		"WECHATPAY_API_BASE":          strings.TrimRight(baseURL, "/"),
		"WECHATPAY_NOTIFY_URL":        notifyURL,
		"WECHATPAY_REFUND_NOTIFY_URL": refundNotifyURL,
	}
}

// NewMerchantKeys generates a merchant API key pair and a certificate serial in
// WeChat's form (40 upper-case hex digits), for tests and local development.
func NewMerchantKeys() (priv *rsa.PrivateKey, serial string, err error) {
	priv, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, "", fmt.Errorf("wxpaysim: merchant key: %w", err)
	}
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return nil, "", err
	}
	return priv, fmt.Sprintf("%X", b), nil
}

// PrivateKeyPEM encodes a key as WeChat's apiclient_key.pem does (PKCS#8 "PRIVATE KEY").
func PrivateKeyPEM(k *rsa.PrivateKey) (string, error) {
	if k == nil {
		return "", errors.New("wxpaysim: nil private key")
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", fmt.Errorf("wxpaysim: encode private key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// PublicKeyPEM encodes a key as WeChat's pub_key.pem does (PKIX "PUBLIC KEY").
func PublicKeyPEM(k *rsa.PublicKey) (string, error) {
	if k == nil {
		return "", errors.New("wxpaysim: nil public key")
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return "", fmt.Errorf("wxpaysim: encode public key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

// Handler serves the v3 API under /v3/ and the unsigned control endpoints under /sim/.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v3/", s.serveAPI)
	mux.HandleFunc("POST /sim/pay", s.simPay)
	mux.HandleFunc("POST /sim/notify", s.simNotify)
	mux.HandleFunc("POST /sim/refund", s.simRefund)
	mux.HandleFunc("GET /sim/orders", s.simOrders)
	mux.HandleFunc("GET /sim/refunds", s.simRefunds)
	mux.HandleFunc("POST /sim/bill", s.simBill)
	return mux
}

// Start listens on addr and serves Handler in the background. It returns the base
// URL (WECHATPAY_API_BASE) and a function that shuts the server down.
func (s *Sim) Start(addr string) (baseURL string, shutdown func(context.Context) error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("wxpaysim: listen: %w", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), srv.Shutdown, nil
}

// FailNext makes the next n /v3/ requests whose path starts with pathPrefix fail
// after their signature was checked: status >= 400 answers {"code","message"}
// without acting; Drop, ActThenDrop and BadSignature model lost connections and
// bad answers. Rules are consumed in the order they were added.
func (s *Sim) FailNext(pathPrefix string, status int, code string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{prefix: pathPrefix, status: status, code: code, left: n})
}

// FailRefundsOf makes every refund request for these orders (out_trade_no) fail
// with 500 SYSTEM_ERROR, after its signature was checked, until AllowRefundsOf:
// refunds that keep failing while others go through.
func (s *Sim) FailRefundsOf(outTradeNos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusing == nil {
		s.refusing = map[string]bool{}
	}
	for _, no := range outTradeNos {
		s.refusing[no] = true
	}
}

// AllowRefundsOf undoes FailRefundsOf for these orders.
func (s *Sim) AllowRefundsOf(outTradeNos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, no := range outTradeNos {
		delete(s.refusing, no)
	}
}

// SetLatency delays every /v3/ answer by d (or until the request is cancelled).
func (s *Sim) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Hang makes WeChat Pay stop answering: every /v3/ request from now on waits,
// having done nothing, until release is called, and is then served as usual
// (WeChat came back), or until its caller gives up (the client's timeout,
// a cancelled context), in which case it is never acted on. release may be
// called more than once; a test releases it itself, so nothing waits on a
// clock.
func (s *Sim) Hang() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hung = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.hung == ch {
				s.hung = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Hanging reports how many /v3/ requests are waiting in a Hang right now.
func (s *Sim) Hanging() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hanging
}

// AwaitHanging waits until exactly n requests wait in a Hang (0: every
// request that arrived has been released or given up by its caller), or ctx
// ends. It is woken by each change, so a test waits without sleeping; before a
// release it makes sure no abandoned request is still pending, which could
// otherwise be acted on when WeChat comes back.
func (s *Sim) AwaitHanging(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		if s.hanging == n {
			s.mu.Unlock()
			return nil
		}
		if s.hangNote == nil {
			s.hangNote = make(chan struct{})
		}
		note := s.hangNote
		s.mu.Unlock()
		select {
		case <-note:
		case <-ctx.Done():
			return fmt.Errorf("wxpaysim: %d requests hanging, want %d: %w", s.Hanging(), n, ctx.Err())
		}
	}
}

// hangingChanged wakes AwaitHanging; the caller holds s.mu.
func (s *Sim) hangingChanged() {
	if s.hangNote != nil {
		close(s.hangNote)
		s.hangNote = nil
	}
}

// SetOnRequest replaces Options.OnRequest; nil removes it.
func (s *Sim) SetOnRequest(f func(r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = f
}

// Orders returns snapshots of all orders, oldest first.
func (s *Sim) Orders() []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Order, 0, len(s.orders))
	for _, o := range s.orders {
		out = append(out, o.snapshot())
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].OutTradeNo < out[j].OutTradeNo
	})
	return out
}

// Order returns a snapshot of one order.
func (s *Sim) Order(outTradeNo string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[outTradeNo]
	if !ok {
		return Order{}, false
	}
	return o.snapshot(), true
}

// Refunds returns snapshots of all refunds, oldest first.
func (s *Sim) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Refund, 0, len(s.refunds))
	for _, r := range s.refunds {
		out = append(out, r.Refund)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].OutRefundNo < out[j].OutRefundNo
	})
	return out
}

// Calls returns the /v3/ requests received so far, in order.
func (s *Sim) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (o *order) snapshot() Order {
	c := o.Order
	c.PrepayIDs = append([]string(nil), o.PrepayIDs...)
	c.TradeState = o.tradeState()
	return c
}

// tradeState derives REFUND from the refunds, as WeChat reports an order with a
// refund in progress or done as REFUND rather than SUCCESS.
func (o *order) tradeState() string {
	if o.State == StateSuccess && o.Refunded > 0 {
		return StateRefund
	}
	return o.State
}

// nextSeq numbers ids; callers hold s.mu.
func (s *Sim) nextSeq() int64 {
	s.seq++
	return s.seq
}

func randDigits(n int) string {
	const digits = "0123456789"
	return randFrom(digits, n)
}

func randAlnum(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	return randFrom(chars, n)
}

func randFrom(alphabet string, n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("wxpaysim: crypto/rand failed: " + err.Error()) // crypto/rand does not fail on supported platforms
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}
