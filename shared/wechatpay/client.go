// Package wechatpay is the product's only door to WeChat Pay API v3: JSAPI prepay
// for the mini-program, close, query, refunds, and verified parsing of the
// payment and refund notifications. It wraps wechatpay-go v0.2.21 and verifies
// WeChat's signatures in one of three modes chosen by the settings (Config.Mode):
// the WeChat Pay public key (no network at cold start), platform certificates
// (given, or downloaded at cold start), or both while a merchant switches over.
//
// What it deliberately leaves to the caller: business checks on notifications and
// query results (appid, mchid, amount, out_trade_no against the booking), and the
// decision what an error means for a seat. Error replies from WeChat (non-2xx) are
// NOT signature-checked by the SDK, so treat them as hints and confirm with a
// signed QueryOrder before moving money or seats.
//
// The simulator in the wxpaysim subpackage speaks the same protocol for tests and
// local development.
package wechatpay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"salon/shared/booking"
	"strings"
	"time"

	"github.com/wechatpay-apiv3/wechatpay-go/core"
	"github.com/wechatpay-apiv3/wechatpay-go/core/auth"
	"github.com/wechatpay-apiv3/wechatpay-go/core/auth/validators"
	"github.com/wechatpay-apiv3/wechatpay-go/core/auth/verifiers"
	"github.com/wechatpay-apiv3/wechatpay-go/core/downloader"
	"github.com/wechatpay-apiv3/wechatpay-go/core/notify"
	"github.com/wechatpay-apiv3/wechatpay-go/core/option"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments/jsapi"
	"github.com/wechatpay-apiv3/wechatpay-go/services/refunddomestic"
)

// ErrOrderNotExist is returned by QueryOrder when WeChat answers 404
// ORDER_NOT_EXIST (older tables spell it ORDERNOTEXIST): no WeChat order exists
// under that out_trade_no, so nobody can pay it.
var ErrOrderNotExist = booking.ErrOrderNotExist

// shanghai is WeChat's time zone. A fixed zone, not LoadLocation, because a
// minimal SCF image may carry no tzdata, and China has no daylight saving time.
var shanghai = time.FixedZone("CST", 8*3600)

// defaultTimeout is only the HTTP client's backstop; every call is bounded by
// its CallTimeout (below) and by the caller's ctx, whichever ends first.
const defaultTimeout = 30 * time.Second

// DefaultCallTimeout bounds each call to WeChat Pay. The HTTP functions have
// 10 s (serverless.yml) and API Gateway gives up after its serviceTimeout of
// 8 s with a 504 of its own, after which whatever the function still does is
// unseen by the customer. A customer's cancel of a pending booking makes two
// calls in a row (close, then query): at 3 s each, a WeChat Pay that does not
// answer costs at most 6 s, and the function still answers 503
// UPSTREAM_UNAVAILABLE itself with 2 s to spare for the database. WeChat Pay
// answers in well under a second when it is healthy, so 3 s cuts off only an
// outage. The release run (60 s) gains too: one hung call no longer eats its
// whole deadline.
const DefaultCallTimeout = 3 * time.Second

// Client calls WeChat Pay and parses its notifications. It is safe for concurrent
// use; build it once per container.
type Client struct {
	appID, mchID               string
	notifyURL, refundNotifyURL string
	jsapi                      jsapi.JsapiApiService
	refunds                    refunddomestic.RefundsApiService
	notify                     *notify.Handler
	callTimeout                time.Duration
	// sdk makes the signed calls the SDK has no service for (the bills);
	// download is the same client without answer verification, for the bill
	// file itself, whose answer WeChat does not sign (its hash is checked).
	sdk, download *core.Client
	// base is WECHATPAY_API_BASE parsed (DefaultAPIBase when unset): where
	// every request goes, and where else a bill's download_url may point.
	base *url.URL
}

// New builds the client from cfg. It makes no network call. When cfg.APIBase is
// not WeChat's production host, every request is rewritten in the transport to
// that scheme and host, because the SDK has no base-URL option.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	httpClient, err := buildHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	base, err := parseBase(cmp.Or(strings.TrimRight(cfg.APIBase, "/"), DefaultAPIBase))
	if err != nil {
		return nil, fmt.Errorf("wechatpay config: WECHATPAY_API_BASE %w", err)
	}
	mode, _ := cfg.verification() // validate checked it
	verifier, err := buildVerifier(cfg, mode, httpClient)
	if err != nil {
		return nil, err
	}
	opts := []core.ClientOption{option.WithHTTPClient(httpClient)}
	if mode == ModePublicKey {
		// The SDK's own option for this mode (it also sets the cipher for
		// encrypted request fields); no network at cold start.
		opts = append(opts, option.WithWechatPayPublicKeyAuthCipher(cfg.MchID, cfg.MchCertSerial, cfg.MchPrivateKey, cfg.PublicKeyID, cfg.PublicKey))
	} else {
		opts = append(opts, option.WithMerchantCredential(cfg.MchID, cfg.MchCertSerial, cfg.MchPrivateKey), option.WithVerifier(verifier))
	}
	sdk, err := core.NewClient(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: build client: %w", err)
	}
	// The notification handler uses the same verifier as the answers: a
	// notification is accepted under exactly the serials an answer would be.
	h, err := notify.NewRSANotifyHandler(cfg.APIv3Key, verifier)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: build notification handler: %w", err)
	}
	return &Client{
		appID:           cfg.AppID,
		mchID:           cfg.MchID,
		notifyURL:       cfg.NotifyURL,
		refundNotifyURL: cfg.RefundNotifyURL,
		jsapi:           jsapi.JsapiApiService{Client: sdk},
		refunds:         refunddomestic.RefundsApiService{Client: sdk},
		notify:          h,
		callTimeout:     cmp.Or(cfg.CallTimeout, DefaultCallTimeout),
		sdk:             sdk,
		download:        core.NewClientWithValidator(sdk, &validators.NullValidator{}),
		base:            base,
	}, nil
}

// downloadTimeout bounds the download of platform certificates when a client is
// built with WECHATPAY_PLATFORM_CERTS=download (one extra round trip per cold start).
const downloadTimeout = 10 * time.Second

// buildVerifier returns the verifier of mode: the public key alone, the platform
// certificates alone, or both (the SDK's combined verifier picks the public key
// when the serial is its ID and the certificates otherwise).
func buildVerifier(cfg Config, mode Mode, httpClient *http.Client) (auth.Verifier, error) {
	pubkey := func() auth.Verifier { return verifiers.NewSHA256WithRSAPubkeyVerifier(cfg.PublicKeyID, *cfg.PublicKey) }
	if mode == ModePublicKey {
		return pubkey(), nil
	}
	var certs core.CertificateGetter
	if cfg.DownloadPlatformCerts {
		d, err := downloadCertificates(cfg, httpClient)
		if err != nil {
			return nil, err
		}
		certs = d
	} else {
		certs = core.NewCertificateMapWithList(cfg.PlatformCerts)
	}
	if mode == ModeCombined {
		return verifiers.NewSHA256WithRSACombinedVerifier(certs, cfg.PublicKeyID, *cfg.PublicKey), nil
	}
	return verifiers.NewSHA256WithRSAVerifier(certs), nil
}

// downloadCertificates fetches the platform certificates once, through the same
// HTTP client (so WECHATPAY_API_BASE applies, which the SDK's auto-download
// singleton ignores) and without its 24-hour background goroutine, which SCF
// would freeze between invocations. The certificates arrive AES-256-GCM encrypted
// under the APIv3 key, which is what authenticates the first download; the SDK
// verifies later downloads with the certificates it holds.
func downloadCertificates(cfg Config, httpClient *http.Client) (*downloader.CertificateDownloader, error) {
	dl, err := core.NewClient(context.Background(),
		option.WithMerchantCredential(cfg.MchID, cfg.MchCertSerial, cfg.MchPrivateKey),
		option.WithoutValidator(),
		option.WithHTTPClient(httpClient),
	)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: build certificate download client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), downloadTimeout)
	defer cancel()
	d, err := downloader.NewCertificateDownloaderWithClient(ctx, dl, cfg.APIv3Key)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: download platform certificates (WECHATPAY_PLATFORM_CERTS=%s): %w", PlatformCertsDownload, err)
	}
	return d, nil
}

// validate checks a Config built by hand the same way ConfigFromEnv checks the
// environment, naming the setting and never its value.
func (c Config) validate() error {
	var errs []error
	need := func(v, name string) {
		if strings.TrimSpace(v) == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
	}
	need(c.AppID, "WX_APPID")
	need(c.MchID, "WECHATPAY_MCHID")
	need(c.MchCertSerial, "WECHATPAY_MCH_CERT_SERIAL")
	if c.MchPrivateKey == nil {
		errs = append(errs, errors.New("WECHATPAY_MCH_PRIVATE_KEY is not set"))
	}
	if err := checkAPIv3Key(c.APIv3Key); err != nil {
		errs = append(errs, fmt.Errorf("WECHATPAY_APIV3_KEY %w", err))
	}
	if _, err := c.verification(); err != nil {
		errs = append(errs, err)
	}
	if c.APIBase != "" {
		if _, err := parseBase(c.APIBase); err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_API_BASE %w", err))
		}
	}
	need(c.NotifyURL, "WECHATPAY_NOTIFY_URL")
	need(c.RefundNotifyURL, "WECHATPAY_REFUND_NOTIFY_URL")
	if len(errs) > 0 {
		return fmt.Errorf("wechatpay config: %w", errors.Join(errs...))
	}
	return nil
}

// buildHTTPClient copies the caller's client (never mutating it) and installs the
// host rewrite only when the base differs from production, so production traffic
// goes through an untouched transport.
func buildHTTPClient(cfg Config) (*http.Client, error) {
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	} else {
		hc.Timeout = defaultTimeout
	}
	base := strings.TrimRight(cfg.APIBase, "/")
	if base == "" || base == DefaultAPIBase {
		return &hc, nil
	}
	target, err := parseBase(base)
	if err != nil {
		return nil, fmt.Errorf("wechatpay config: WECHATPAY_API_BASE %w", err)
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = rewriteTransport{target: target, next: next}
	return &hc, nil
}

// rewriteTransport sends a request meant for api.mch.weixin.qq.com to another
// base URL. The SDK signed the original RequestURI before the transport runs, so a
// path prefix in the base must be stripped by the server before it checks the
// Authorization header.
type rewriteTransport struct {
	target *url.URL
	next   http.RoundTripper
}

func (rt rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context()) // a RoundTripper must not modify the caller's request
	r2.URL.Scheme, r2.URL.Host, r2.Host = rt.target.Scheme, rt.target.Host, rt.target.Host
	if p := rt.target.Path; p != "" {
		r2.URL.Path = p + r.URL.Path
		if r.URL.RawPath != "" {
			r2.URL.RawPath = rt.target.EscapedPath() + r.URL.RawPath
		}
	}
	return rt.next.RoundTrip(r2)
}

// closeResult releases the connection behind an SDK result. The SDK replaces the
// body with an in-memory copy after reading it, but does not close the original in
// every path (for example a 204 from close).
func closeResult(res *core.APIResult) {
	if res != nil && res.Response != nil && res.Response.Body != nil {
		_, _ = io.Copy(io.Discard, res.Response.Body)
		_ = res.Response.Body.Close()
	}
}

// withDeadline bounds one call by the client's call timeout, or by ctx's own
// deadline when that comes first: a WeChat Pay that does not answer costs the
// caller at most that long, and the request is abandoned (cancelled, its
// connection closed) rather than left to complete unseen after the function
// answered. The error is then a deadline error, which the service answers as
// UPSTREAM_UNAVAILABLE like any failed call.
func (c *Client) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, c.callTimeout)
}

// Order is one JSAPI order, PaymentParams what wx.requestPayment takes: the
// service's vocabulary (package booking), which this client speaks.
type (
	Order         = booking.PayOrder
	PaymentParams = booking.PaymentParams
)

// Prepay creates (or re-opens) the JSAPI order and signs the payment parameters
// with the merchant key. Calling it again with the same Order sends byte-identical
// order fields, which WeChat answers with a fresh prepay_id instead of
// OUT_TRADE_NO_USED; this is how a customer who closed the payment sheet, or a
// retry after a timeout, pays the same order.
//
// time_expire is sent in +08:00 with whole seconds, as WeChat documents it; the
// SDK would otherwise send a UTC time as "...Z".
func (c *Client) Prepay(ctx context.Context, o Order) (*PaymentParams, error) {
	switch {
	case o.OutTradeNo == "":
		return nil, errors.New("wechatpay: prepay: out_trade_no is empty")
	case o.Description == "":
		return nil, fmt.Errorf("wechatpay: prepay %s: description is empty", o.OutTradeNo)
	case o.OpenID == "":
		// The SDK marks openid omitempty, but WeChat requires it for JSAPI.
		return nil, fmt.Errorf("wechatpay: prepay %s: openid is empty", o.OutTradeNo)
	case o.AmountFen <= 0:
		return nil, fmt.Errorf("wechatpay: prepay %s: amount must be positive", o.OutTradeNo)
	}
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	req := jsapi.PrepayRequest{
		Appid:       core.String(c.appID),
		Mchid:       core.String(c.mchID),
		Description: core.String(o.Description),
		OutTradeNo:  core.String(o.OutTradeNo),
		NotifyUrl:   core.String(c.notifyURL),
		Amount:      &jsapi.Amount{Total: core.Int64(o.AmountFen), Currency: core.String("CNY")},
		Payer:       &jsapi.Payer{Openid: core.String(o.OpenID)},
	}
	if !o.TimeExpire.IsZero() {
		req.TimeExpire = core.Time(o.TimeExpire.In(shanghai).Truncate(time.Second))
	}
	resp, res, err := c.jsapi.PrepayWithRequestPayment(ctx, req)
	closeResult(res)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: prepay %s: %w", o.OutTradeNo, err)
	}
	if resp.PrepayId == nil || *resp.PrepayId == "" {
		return nil, fmt.Errorf("wechatpay: prepay %s: answer has no prepay_id", o.OutTradeNo)
	}
	return &PaymentParams{
		TimeStamp: deref(resp.TimeStamp),
		NonceStr:  deref(resp.NonceStr),
		Package:   deref(resp.Package),
		SignType:  deref(resp.SignType),
		PaySign:   deref(resp.PaySign),
	}, nil
}

// CloseOrder asks WeChat to make the order unpayable. Success is NOT proof that the
// order is closed: WeChat answers 204 for orders already closed and for numbers it
// never saw. Follow it with QueryOrder and act only on CLOSED or ErrOrderNotExist.
// An error with code ORDERPAID is unsigned and only a hint that it was paid.
func (c *Client) CloseOrder(ctx context.Context, outTradeNo string) error {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	res, err := c.jsapi.CloseOrder(ctx, jsapi.CloseOrderRequest{
		OutTradeNo: core.String(outTradeNo),
		Mchid:      core.String(c.mchID),
	})
	closeResult(res)
	if err != nil {
		return fmt.Errorf("wechatpay: close %s: %w", outTradeNo, err)
	}
	return nil
}

// OrderState is a signature-verified answer to QueryOrder (booking.OrderState).
// TradeState is one of SUCCESS, REFUND, NOTPAY, CLOSED, REVOKED, USERPAYING,
// PAYERROR. The caller checks AppID, MchID and AmountTotal against its booking
// before trusting a SUCCESS, exactly as for a notification.
type OrderState = booking.OrderState

// QueryOrder asks WeChat for the state of an order by out_trade_no; this signed
// answer is the authority the release timer and cancel act on. An unknown number
// is ErrOrderNotExist (errors.Is), which also carries the API error.
func (c *Client) QueryOrder(ctx context.Context, outTradeNo string) (*OrderState, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	tx, res, err := c.jsapi.QueryOrderByOutTradeNo(ctx, jsapi.QueryOrderByOutTradeNoRequest{
		OutTradeNo: core.String(outTradeNo),
		Mchid:      core.String(c.mchID),
	})
	closeResult(res)
	if err != nil {
		// Only WeChat's code counts: a bare 404 could come from a misrouted
		// WECHATPAY_API_BASE, and reading it as "no order" would free a paid seat.
		if _, code, ok := APIErrorCode(err); ok && (code == "ORDER_NOT_EXIST" || code == "ORDERNOTEXIST") {
			return nil, fmt.Errorf("wechatpay: query %s: %w (%w)", outTradeNo, ErrOrderNotExist, err)
		}
		return nil, fmt.Errorf("wechatpay: query %s: %w", outTradeNo, err)
	}
	return orderState(tx), nil
}

func orderState(tx *payments.Transaction) *OrderState {
	s := &OrderState{
		TradeState:    booking.TradeState(deref(tx.TradeState)),
		TransactionID: deref(tx.TransactionId),
		AppID:         deref(tx.Appid),
		MchID:         deref(tx.Mchid),
		OutTradeNo:    deref(tx.OutTradeNo),
		SuccessTime:   parseTime(deref(tx.SuccessTime)),
	}
	if tx.Payer != nil {
		s.PayerOpenID = deref(tx.Payer.Openid)
	}
	if tx.Amount != nil && tx.Amount.Total != nil {
		s.AmountTotal = *tx.Amount.Total
	}
	return s
}

// RefundRequest and RefundResult are the service's (package booking).
type (
	RefundRequest = booking.RefundRequest
	RefundResult  = booking.RefundResult
)

// Refund requests a domestic refund in CNY, notified at WECHATPAY_REFUND_NOTIFY_URL.
func (c *Client) Refund(ctx context.Context, r RefundRequest) (*RefundResult, error) {
	switch {
	case r.OutTradeNo == "" || r.OutRefundNo == "":
		return nil, errors.New("wechatpay: refund: out_trade_no and out_refund_no are required")
	case r.RefundFen <= 0 || r.TotalFen <= 0 || r.RefundFen > r.TotalFen:
		return nil, fmt.Errorf("wechatpay: refund %s: amounts must satisfy 0 < refund <= total", r.OutRefundNo)
	}
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	req := refunddomestic.CreateRequest{
		OutTradeNo:  core.String(r.OutTradeNo),
		OutRefundNo: core.String(r.OutRefundNo),
		NotifyUrl:   core.String(c.refundNotifyURL),
		Amount: &refunddomestic.AmountReq{
			Refund:   core.Int64(r.RefundFen),
			Total:    core.Int64(r.TotalFen),
			Currency: core.String("CNY"), // required by the SDK for refunds
		},
	}
	if r.Reason != "" {
		req.Reason = core.String(r.Reason)
	}
	resp, res, err := c.refunds.Create(ctx, req)
	closeResult(res)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: refund %s: %w", r.OutRefundNo, refundRefusal(err))
	}
	return refundResult(resp), nil
}

// refundRefusal tells the service what a failed refund request means, in its
// words: NOT_ENOUGH (the merchant's balance) is booking.ErrRefundWaitsForBalance,
// the same request succeeds once the salon tops it up; another 4xx that is not
// busy or throttled (SYSTEM_ERROR, FREQUENCY_LIMITED, 429) is
// booking.ErrRefundRefused, for the salon to handle; anything else (5xx, the
// network, a timeout) may have been done or not, and is worth asking again with
// the same out_refund_no.
func refundRefusal(err error) error {
	status, code, ok := APIErrorCode(err)
	switch {
	case !ok:
		return err
	case code == "NOT_ENOUGH":
		return fmt.Errorf("%w: %w", booking.ErrRefundWaitsForBalance, err)
	case status >= 400 && status < 500 && status != 429 && code != "SYSTEM_ERROR" && code != "FREQUENCY_LIMITED":
		return fmt.Errorf("%w (%s): %w", booking.ErrRefundRefused, code, err)
	}
	return err
}

// QueryRefund asks WeChat for the state of a refund by out_refund_no. An unknown
// number is an API error with code RESOURCE_NOT_EXISTS (see APIErrorCode).
func (c *Client) QueryRefund(ctx context.Context, outRefundNo string) (*RefundResult, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	resp, res, err := c.refunds.QueryByOutRefundNo(ctx, refunddomestic.QueryByOutRefundNoRequest{
		OutRefundNo: core.String(outRefundNo),
	})
	closeResult(res)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: query refund %s: %w", outRefundNo, err)
	}
	return refundResult(resp), nil
}

func refundResult(r *refunddomestic.Refund) *RefundResult {
	out := &RefundResult{
		RefundID:    deref(r.RefundId),
		OutRefundNo: deref(r.OutRefundNo),
		SuccessTime: r.SuccessTime,
	}
	if r.Status != nil {
		out.Status = booking.WeChatRefundState(*r.Status)
	}
	return out
}

// APIErrorCode reports the HTTP status and WeChat error code when err (wrapped or
// not) is a non-2xx answer from WeChat. ok is false for everything else: network
// errors, timeouts, local validation, and failed response signatures, whose
// outcome is unknown (the operation may have happened). Unlike core.IsAPIError it
// unwraps. Remember that these answers are not signed.
func APIErrorCode(err error) (status int, code string, ok bool) {
	var apiErr *core.APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode, apiErr.Code, true
	}
	return 0, "", false
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseTime reads WeChat's RFC 3339 times. A value it cannot read becomes nil
// rather than an error: the time is informational, and failing a verified payment
// over it would only make WeChat retry the same bytes forever.
func parseTime(s string) *time.Time {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	return &t
}
