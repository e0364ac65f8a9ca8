package wechatpay_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestPrepaySignsPaymentAndSendsShanghaiTimeExpire(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	o := h.order("BK000000000001")
	o.TimeExpire = time.Date(2026, 12, 1, 11, 5, 22, 987_000_000, time.UTC) // 19:05:22 in Shanghai
	// The sim's business clock sits before that deadline so the order is payable.
	p, err := h.client.Prepay(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.SignType != "RSA" || !strings.HasPrefix(p.Package, "prepay_id=wx") || len(p.NonceStr) != 32 || p.TimeStamp == "" {
		t.Fatalf("params = %+v", p)
	}
	key, _ := merchant(t)
	msg := testAppID + "\n" + p.TimeStamp + "\n" + p.NonceStr + "\n" + p.Package + "\n"
	sig, err := base64.StdEncoding.DecodeString(p.PaySign)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(msg))
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("paySign does not verify with the merchant public key: %v", err)
	}

	so, found := h.sim.Order("BK000000000001")
	if !found {
		t.Fatal("sim has no order")
	}
	if so.TimeExpireRaw != "2026-12-01T19:05:22+08:00" {
		t.Fatalf("time_expire sent as %q", so.TimeExpireRaw)
	}
	if so.AppID != testAppID || so.MchID != testMchID || so.Total != 5000 || so.OpenID != o.OpenID ||
		so.NotifyURL != h.env["WECHATPAY_NOTIFY_URL"] || so.Description != o.Description {
		t.Fatalf("sim order = %+v", so)
	}
	if "prepay_id="+so.PrepayIDs[0] != p.Package {
		t.Fatalf("package %q, sim prepay ids %v", p.Package, so.PrepayIDs)
	}

	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"timeStamp", "nonceStr", "package", "signType", "paySign"} {
		if m[k] == "" {
			t.Fatalf("JSON lacks %s: %s", k, b)
		}
	}
}

func TestPrepayIdenticalRetryGetsFreshPrepayID(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	o := h.order("BK000000000002")
	p1, err := h.client.Prepay(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := h.client.Prepay(ctx, o)
	if err != nil {
		t.Fatalf("identical retry: %v", err)
	}
	if p1.Package == p2.Package {
		t.Fatal("retry reused the prepay_id")
	}
	so, _ := h.sim.Order(o.OutTradeNo)
	if len(so.PrepayIDs) != 2 || len(h.sim.Orders()) != 1 {
		t.Fatalf("sim: %d orders, prepay ids %v", len(h.sim.Orders()), so.PrepayIDs)
	}

	changed := o
	changed.AmountFen++
	_, err = h.client.Prepay(ctx, changed)
	if status, code, ok := wechatpay.APIErrorCode(err); !ok || status != 403 || code != "OUT_TRADE_NO_USED" {
		t.Fatalf("changed amount: %v", err)
	}
}

func TestPrepayRejectsMissingFieldsLocally(t *testing.T) {
	h := newHarness(t)
	for _, mutate := range []func(*wechatpay.Order){
		func(o *wechatpay.Order) { o.OutTradeNo = "" },
		func(o *wechatpay.Order) { o.OpenID = "" },
		func(o *wechatpay.Order) { o.AmountFen = 0 },
		func(o *wechatpay.Order) { o.Description = "" },
	} {
		o := h.order("BK000000000003")
		mutate(&o)
		if _, err := h.client.Prepay(ctxT(t), o); err == nil {
			t.Fatalf("accepted %+v", o)
		}
	}
	if n := len(h.sim.Calls()); n != 0 {
		t.Fatalf("%d calls reached WeChat", n)
	}
}

func TestPrepayTimeExpireUnderOneMinuteIsRaised(t *testing.T) {
	now := time.Date(2026, 12, 1, 19, 0, 0, 0, time.FixedZone("CST", 8*3600))
	h := newHarness(t, func(o *wxpaysim.Options) { o.Now = func() time.Time { return now } })
	o := h.order("BK000000000004")
	o.TimeExpire = now.Add(20 * time.Second)
	if _, err := h.client.Prepay(ctxT(t), o); err != nil {
		t.Fatal(err)
	}
	so, _ := h.sim.Order(o.OutTradeNo)
	if !so.TimeExpire.Equal(now.Add(time.Minute)) {
		t.Fatalf("effective time_expire %v, want %v", so.TimeExpire, now.Add(time.Minute))
	}
}

func TestCloseAndQuery(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)

	if _, err := h.client.QueryOrder(ctx, "BK000000000404"); !errors.Is(err, wechatpay.ErrOrderNotExist) {
		t.Fatalf("unknown order: %v", err)
	} else if status, code, ok := wechatpay.APIErrorCode(err); !ok || status != 404 || code != "ORDER_NOT_EXIST" {
		t.Fatalf("unknown order: status %d code %q", status, code)
	}

	o := h.order("BK000000000010")
	if _, err := h.client.Prepay(ctx, o); err != nil {
		t.Fatal(err)
	}
	st, err := h.client.QueryOrder(ctx, o.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if st.TradeState != "NOTPAY" || st.TransactionID != "" || st.SuccessTime != nil || st.AmountTotal != 5000 ||
		st.AppID != testAppID || st.MchID != testMchID || st.OutTradeNo != o.OutTradeNo {
		t.Fatalf("NOTPAY state = %+v", st)
	}

	// Close is signed 204, also for numbers WeChat never saw and for a second close.
	for _, no := range []string{o.OutTradeNo, o.OutTradeNo, "BK000000000405"} {
		if err := h.client.CloseOrder(ctx, no); err != nil {
			t.Fatalf("close %s: %v", no, err)
		}
	}
	if st, err = h.client.QueryOrder(ctx, o.OutTradeNo); err != nil || st.TradeState != "CLOSED" {
		t.Fatalf("after close: %+v, %v", st, err)
	}
	if _, err := h.client.Prepay(ctx, o); !hasCode(err, 400, "ORDER_CLOSED") {
		t.Fatalf("prepay of closed order: %v", err)
	}
	if err := h.sim.Pay(ctx, o.OutTradeNo); !errors.Is(err, wxpaysim.ErrNotPayable) {
		t.Fatalf("paying a closed order: %v", err)
	}

	paid := h.order("BK000000000011")
	if _, err := h.client.Prepay(ctx, paid); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Pay(ctx, paid.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	<-h.payments
	st, err = h.client.QueryOrder(ctx, paid.OutTradeNo)
	if err != nil {
		t.Fatal(err)
	}
	if st.TradeState != "SUCCESS" || !strings.HasPrefix(st.TransactionID, "4200") || st.SuccessTime == nil ||
		st.PayerOpenID != paid.OpenID || st.AmountTotal != 5000 {
		t.Fatalf("SUCCESS state = %+v", st)
	}
	if _, off := st.SuccessTime.Zone(); off != 8*3600 {
		t.Fatalf("success_time offset %d", off)
	}
	if err := h.client.CloseOrder(ctx, paid.OutTradeNo); !hasCode(err, 400, "ORDERPAID") {
		t.Fatalf("close of paid order: %v", err)
	}
}

func hasCode(err error, status int, code string) bool {
	s, c, ok := wechatpay.APIErrorCode(err)
	return ok && s == status && c == code
}

func TestRefund(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	o := h.order("BK000000000020")
	if _, err := h.client.Prepay(ctx, o); err != nil {
		t.Fatal(err)
	}
	req := wechatpay.RefundRequest{OutTradeNo: o.OutTradeNo, OutRefundNo: "RF000000000020", Reason: "时段已满", RefundFen: 5000, TotalFen: 5000}
	if _, err := h.client.Refund(ctx, req); !hasCode(err, 404, "RESOURCE_NOT_EXISTS") {
		t.Fatalf("refund of unpaid order: %v", err)
	}
	if err := h.sim.Pay(ctx, o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	<-h.payments

	r1, err := h.client.Refund(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Status != "PROCESSING" || r1.OutRefundNo != req.OutRefundNo || r1.RefundID == "" || r1.SuccessTime != nil {
		t.Fatalf("refund = %+v", r1)
	}
	// The same out_refund_no again refunds nothing more: it answers the same refund.
	r2, err := h.client.Refund(ctx, req)
	if err != nil || r2.RefundID != r1.RefundID {
		t.Fatalf("duplicate refund number: %+v, %v", r2, err)
	}
	if rs := h.sim.Refunds(); len(rs) != 1 || rs[0].Amount != 5000 || rs[0].NotifyURL != h.env["WECHATPAY_REFUND_NOTIFY_URL"] || rs[0].Reason != "时段已满" {
		t.Fatalf("sim refunds = %+v", rs)
	}
	other := req
	other.OutRefundNo = "RF000000000021"
	other.RefundFen = 1
	if _, err := h.client.Refund(ctx, other); !hasCode(err, 403, "NOT_ENOUGH") {
		t.Fatalf("over-refund: %v", err)
	}
	if st, err := h.client.QueryOrder(ctx, o.OutTradeNo); err != nil || st.TradeState != "REFUND" {
		t.Fatalf("order after refund: %+v, %v", st, err)
	}

	q, err := h.client.QueryRefund(ctx, req.OutRefundNo)
	if err != nil || q.Status != "PROCESSING" || q.RefundID != r1.RefundID {
		t.Fatalf("query refund: %+v, %v", q, err)
	}
	if _, err := h.client.QueryRefund(ctx, "RF000000000099"); !hasCode(err, 404, "RESOURCE_NOT_EXISTS") {
		t.Fatalf("query unknown refund: %v", err)
	}

	// WeChat finishes the refund and notifies; the receiver parses it.
	if err := h.sim.CompleteRefund(ctx, req.OutRefundNo, "SUCCESS"); err != nil {
		t.Fatal(err)
	}
	n := <-h.refunds
	if n.EventType != "REFUND.SUCCESS" || n.RefundStatus != "SUCCESS" || n.OutRefundNo != req.OutRefundNo ||
		n.RefundID != r1.RefundID || n.OutTradeNo != o.OutTradeNo || n.MchID != testMchID ||
		n.RefundFen != 5000 || n.TotalFen != 5000 || n.SuccessTime == nil || n.TransactionID == "" || n.EventID == "" {
		t.Fatalf("refund notice = %+v", n)
	}
	q, err = h.client.QueryRefund(ctx, req.OutRefundNo)
	if err != nil || q.Status != "SUCCESS" || q.SuccessTime == nil {
		t.Fatalf("query refund after success: %+v, %v", q, err)
	}
}

func TestRefundRejectsBadAmountsLocally(t *testing.T) {
	h := newHarness(t)
	for _, r := range []wechatpay.RefundRequest{
		{OutTradeNo: "BK000000000030", OutRefundNo: "RF000000000030", RefundFen: 0, TotalFen: 100},
		{OutTradeNo: "BK000000000030", OutRefundNo: "RF000000000030", RefundFen: 101, TotalFen: 100},
		{OutTradeNo: "BK000000000030", RefundFen: 100, TotalFen: 100},
	} {
		if _, err := h.client.Refund(ctxT(t), r); err == nil {
			t.Fatalf("accepted %+v", r)
		}
	}
}

// Failures a caller must tell apart: a WeChat error answer (APIErrorCode ok), an
// answer whose signature fails, a call whose connection dropped after WeChat
// acted, and a slow WeChat cut off by the caller's deadline. Only the first is an
// API error; the others leave the outcome unknown.
func TestErrorClassification(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	o := h.order("BK000000000040")
	if _, err := h.client.Prepay(ctx, o); err != nil {
		t.Fatal(err)
	}

	h.sim.FailNext("/v3/pay/transactions/out-trade-no/", 500, "SYSTEM_ERROR", 1)
	err := h.client.CloseOrder(ctx, o.OutTradeNo)
	if !hasCode(err, 500, "SYSTEM_ERROR") {
		t.Fatalf("injected 500: %v", err)
	}
	if so, _ := h.sim.Order(o.OutTradeNo); so.State != "NOTPAY" {
		t.Fatal("an injected error must not act")
	}

	h.sim.FailNext("/v3/pay/transactions/out-trade-no/", wxpaysim.BadSignature, "", 1)
	_, err = h.client.QueryOrder(ctx, o.OutTradeNo)
	if err == nil {
		t.Fatal("bad response signature accepted")
	}
	if _, _, ok := wechatpay.APIErrorCode(err); ok || errors.Is(err, wechatpay.ErrOrderNotExist) {
		t.Fatalf("signature failure classified as API error: %v", err)
	}

	h.sim.FailNext("/v3/pay/transactions/out-trade-no/", wxpaysim.ActThenDrop, "", 1)
	if err := h.client.CloseOrder(ctx, o.OutTradeNo); err == nil {
		t.Fatal("dropped connection reported success")
	} else if _, _, ok := wechatpay.APIErrorCode(err); ok {
		t.Fatalf("dropped connection classified as API error: %v", err)
	}
	if st, err := h.client.QueryOrder(ctx, o.OutTradeNo); err != nil || st.TradeState != "CLOSED" {
		t.Fatalf("the close happened although its answer was lost: %+v, %v", st, err)
	}

	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.sim.SetOnRequest(func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := h.client.QueryOrder(short, o.OutTradeNo); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow WeChat: %v", err)
	}
}

// WECHATPAY_API_BASE may carry a path (a simulator mounted under a prefix): the
// transport prepends it, the server strips it, and the signature still covers the
// path the SDK signed.
func TestAPIBaseWithPathPrefix(t *testing.T) {
	h := newHarness(t)
	mux := http.NewServeMux()
	mux.Handle("/wxpay/", http.StripPrefix("/wxpay", h.sim.Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg := h.cfg
	cfg.APIBase = srv.URL + "/wxpay/"
	c, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := h.order("BK000000000050")
	if _, err := c.Prepay(ctxT(t), o); err != nil {
		t.Fatal(err)
	}
	if st, err := c.QueryOrder(ctxT(t), o.OutTradeNo); err != nil || st.TradeState != "NOTPAY" {
		t.Fatalf("query through prefix: %+v, %v", st, err)
	}
}

// The caller's http.Client is copied, not modified, when the rewrite is installed.
func TestNewDoesNotModifyCallersHTTPClient(t *testing.T) {
	h := newHarness(t)
	hc := &http.Client{Timeout: 7 * time.Second}
	cfg := h.cfg
	cfg.HTTPClient = hc
	c, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if hc.Transport != nil {
		t.Fatal("caller's client was modified")
	}
	if _, err := c.QueryOrder(ctxT(t), "BK000000000060"); !errors.Is(err, wechatpay.ErrOrderNotExist) {
		t.Fatalf("query through copied client: %v", err)
	}
}
