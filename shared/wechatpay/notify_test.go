package wechatpay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

func notifyRequest(headers map[string]string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/pay/notify", bytes.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}

// preparedOrder creates an order in the sim so notifications can be built for it.
func preparedOrder(t *testing.T, h *harness, no string) wechatpay.Order {
	t.Helper()
	o := h.order(no)
	if _, err := h.client.Prepay(ctxT(t), o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPayDeliversVerifiedNotification(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000100")
	if err := h.sim.Pay(ctxT(t), o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	p := <-h.payments
	so, _ := h.sim.Order(o.OutTradeNo)
	if p.EventType != "TRANSACTION.SUCCESS" || p.TradeState != "SUCCESS" || p.EventID == "" ||
		p.AppID != testAppID || p.MchID != testMchID || p.OutTradeNo != o.OutTradeNo ||
		p.TransactionID != so.TransactionID || p.PayerOpenID != o.OpenID || p.AmountTotal != 5000 ||
		p.SuccessTime == nil || !p.SuccessTime.Equal(so.SuccessTime.Truncate(time.Second)) {
		t.Fatalf("payment = %+v, sim order = %+v", p, so)
	}
	// A redelivery carries the same event id.
	if err := h.sim.Notify(ctxT(t), o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	if again := <-h.payments; again.EventID != p.EventID || again.TransactionID != p.TransactionID {
		t.Fatalf("redelivery differs: %+v", again)
	}
	if so, _ := h.sim.Order(o.OutTradeNo); so.Notified != 2 {
		t.Fatalf("notified %d times", so.Notified)
	}
}

func TestNotifyConcurrently(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000101")
	if err := h.sim.Pay(ctxT(t), o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	<-h.payments
	if err := h.sim.NotifyConcurrently(ctxT(t), o.OutTradeNo, 5); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if p := <-h.payments; p.OutTradeNo != o.OutTradeNo {
			t.Fatalf("payment = %+v", p)
		}
	}
}

func TestParseAcceptsBuiltNotification(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000102")
	headers, body, err := h.sim.BuildPaymentNotification(o.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(body, []byte(`{"id":"`)) || !bytes.Contains(body, []byte(`"resource_type":"encrypt-resource","event_type":"TRANSACTION.SUCCESS","summary":"支付成功","resource":{"original_type":"transaction","algorithm":"AEAD_AES_256_GCM","ciphertext":"`)) {
		t.Fatalf("envelope not in WeChat's order: %s", body)
	}

	t.Run("plain request", func(t *testing.T) {
		p, err := h.client.ParsePaymentNotification(context.Background(), notifyRequest(headers, body))
		if err != nil {
			t.Fatal(err)
		}
		if p.OutTradeNo != o.OutTradeNo || p.AmountTotal != o.AmountFen || p.TradeState != "SUCCESS" {
			t.Fatalf("payment = %+v", p)
		}
	})

	// API Gateway and Function URLs deliver lower-case header names and may
	// base64-encode the body; the caller decodes, RequestFromEvent canonicalises.
	lower := map[string]string{}
	for k, v := range headers {
		lower[strings.ToLower(k)] = v
	}
	t.Run("gateway event", func(t *testing.T) {
		r := wechatpay.RequestFromEvent(context.Background(), "/pay/notify", lower, body)
		if _, err := h.client.ParsePaymentNotification(r.Context(), r); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("gateway event base64", func(t *testing.T) {
		decoded, err := base64.StdEncoding.DecodeString(base64.StdEncoding.EncodeToString(body))
		if err != nil {
			t.Fatal(err)
		}
		r := wechatpay.RequestFromEvent(context.Background(), "pay/notify", lower, decoded)
		if _, err := h.client.ParsePaymentNotification(r.Context(), r); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong amount verifies; the caller must compare", func(t *testing.T) {
		hd, b, err := h.sim.BuildPaymentNotification(o.OutTradeNo, func(p *wxpaysim.NotificationParts) {
			tx := p.Resource.(*wxpaysim.TransactionResource)
			tx.Amount.Total, tx.AppID, tx.MchID = 1, "wx_other", "1999999999"
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.client.ParsePaymentNotification(context.Background(), notifyRequest(hd, b))
		if err != nil {
			t.Fatal(err)
		}
		if p.AmountTotal != 1 || p.AppID != "wx_other" || p.MchID != "1999999999" {
			t.Fatalf("payment = %+v", p)
		}
	})
}

// Every rejection must wrap ErrInvalidNotification, never panic, and never put
// the request dump the SDK writes into its error text.
func TestParseRejectsForgedNotifications(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000103")
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	build := func(mutate ...func(*wxpaysim.NotificationParts)) (map[string]string, []byte) {
		hd, b, err := h.sim.BuildPaymentNotification(o.OutTradeNo, mutate...)
		if err != nil {
			t.Fatal(err)
		}
		return hd, b
	}
	cases := map[string]func() *http.Request{
		"tampered body byte": func() *http.Request {
			hd, b := build()
			i := bytes.Index(b, []byte(`"ciphertext":"`)) + len(`"ciphertext":"`) + 3
			b[i] ^= 1
			return notifyRequest(hd, b)
		},
		"signed by another key": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.SigningKey = otherKey }))
		},
		"encrypted under another APIv3 key": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.APIv3Key = []byte("0123456789abcdef0123456789abcdef") }))
		},
		"unknown serial": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.Serial = "PUB_KEY_ID_0100999999" }))
		},
		"timestamp 300 s old": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.Timestamp = time.Now().Unix() - 300 }))
		},
		"timestamp 300 s ahead": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.Timestamp = time.Now().Unix() + 301 }))
		},
		"SIGNTEST probe": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) {
				p.Signature = "WECHATPAY/SIGNTEST/" + base64.StdEncoding.EncodeToString([]byte("probe"))
			}))
		},
		"SM2 signature type": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.SignatureType = "WECHATPAY2-SM2-WITH-SM3" }))
		},
		"GCM nonce of 8 bytes": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "short123" }))
		},
		"GCM nonce empty": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "" }))
		},
		"other algorithm": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.Algorithm = "AEAD_SM4_GCM" }))
		},
		"refund event at the payment endpoint": func() *http.Request {
			return notifyRequest(build(func(p *wxpaysim.NotificationParts) { p.EventType = "REFUND.SUCCESS" }))
		},
		"lower-case header map assigned raw": func() *http.Request {
			hd, b := build()
			r := httptest.NewRequest(http.MethodPost, "/pay/notify", bytes.NewReader(b))
			for k, v := range hd {
				r.Header[strings.ToLower(k)] = []string{v}
			}
			return r
		},
		"body left base64-encoded": func() *http.Request {
			hd, b := build()
			return notifyRequest(hd, []byte(base64.StdEncoding.EncodeToString(b)))
		},
		"no headers": func() *http.Request {
			_, b := build()
			return httptest.NewRequest(http.MethodPost, "/pay/notify", bytes.NewReader(b))
		},
		"nil body": func() *http.Request {
			hd, _ := build()
			r := notifyRequest(hd, nil)
			r.Body = nil
			return r
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			r := mk()
			body, _ := readAll(r)
			p, err := h.client.ParsePaymentNotification(context.Background(), r)
			if err == nil {
				t.Fatalf("accepted: %+v", p)
			}
			if !errors.Is(err, wechatpay.ErrInvalidNotification) {
				t.Fatalf("not ErrInvalidNotification: %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "request:") || strings.Contains(msg, "&{") || len(msg) > 300 ||
				(len(body) > 40 && strings.Contains(msg, string(body[:40]))) {
				t.Fatalf("error leaks the request: %s", msg)
			}
			t.Log(msg)
		})
	}
	if _, err := h.client.ParsePaymentNotification(context.Background(), nil); !errors.Is(err, wechatpay.ErrInvalidNotification) {
		t.Fatalf("nil request: %v", err)
	}
}

// readAll returns the body and puts it back, so a case can compare it with the error.
func readAll(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(r.Body)
	r.Body = httpNopCloser{bytes.NewReader(buf.Bytes())}
	return buf.Bytes(), err
}

type httpNopCloser struct{ *bytes.Reader }

func (httpNopCloser) Close() error { return nil }

// A sim whose signing clock runs six minutes behind produces notifications the
// SDK finds stale against the real clock.
func TestParseRejectsStaleClock(t *testing.T) {
	var mu sync.Mutex
	skew := time.Duration(0)
	h := newHarness(t, func(o *wxpaysim.Options) {
		o.SignNow = func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	})
	o := preparedOrder(t, h, "BK000000000104")
	mu.Lock()
	skew = -6 * time.Minute
	mu.Unlock()
	hd, b, err := h.sim.BuildPaymentNotification(o.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ParsePaymentNotification(context.Background(), notifyRequest(hd, b)); !errors.Is(err, wechatpay.ErrInvalidNotification) ||
		!strings.Contains(err.Error(), "expires") {
		t.Fatalf("stale notification: %v", err)
	}
}

// Pay's delivery fails when the receiver rejects the notification, and the sim
// reports it; the order stays paid and a later Notify succeeds.
func TestPayReportsRejectedDelivery(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000105")
	cfg := h.cfg
	cfg.APIv3Key = "0123456789abcdef0123456789abcdef" // the receiver's key no longer matches
	wrong, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := wrong.ParsePaymentNotification(r.Context(), r); err != nil {
			failAnswer(w)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	hd, b, err := h.sim.BuildPaymentNotification(o.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Deliver(ctxT(t), srv.URL, hd, b); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("delivery to a rejecting receiver: %v", err)
	}
}

func TestRefundNotificationRoundTrip(t *testing.T) {
	h := newHarness(t)
	o := preparedOrder(t, h, "BK000000000106")
	ctx := ctxT(t)
	if err := h.sim.Pay(ctx, o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	<-h.payments
	if _, err := h.client.Refund(ctx, wechatpay.RefundRequest{OutTradeNo: o.OutTradeNo, OutRefundNo: "RF000000000106", RefundFen: 5000, TotalFen: 5000}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.CompleteRefund(ctx, "RF000000000106", "ABNORMAL"); err != nil {
		t.Fatal(err)
	}
	n := <-h.refunds
	if n.EventType != "REFUND.ABNORMAL" || n.RefundStatus != "ABNORMAL" || n.SuccessTime != nil || n.RefundFen != 5000 {
		t.Fatalf("notice = %+v", n)
	}
	if err := h.sim.CompleteRefund(ctx, "RF000000000106", "SUCCESS"); err == nil {
		t.Fatal("a settled refund changed status")
	}

	// A payment notification sent to the refund endpoint is refused.
	hd, b, err := h.sim.BuildPaymentNotification(o.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ParseRefundNotification(ctx, notifyRequest(hd, b)); !errors.Is(err, wechatpay.ErrInvalidNotification) {
		t.Fatalf("payment at refund endpoint: %v", err)
	}
	// A refund notification built directly parses too, through the gateway path.
	hd, b, err = h.sim.BuildRefundNotification("RF000000000106")
	if err != nil {
		t.Fatal(err)
	}
	lower := map[string]string{}
	for k, v := range hd {
		lower[strings.ToLower(k)] = v
	}
	r := wechatpay.RequestFromEvent(ctx, "/pay/refund-notify", lower, b)
	if n, err := h.client.ParseRefundNotification(ctx, r); err != nil || n.OutRefundNo != "RF000000000106" {
		t.Fatalf("built refund notice: %+v, %v", n, err)
	}
}
