package wechatpay_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/wechatbill"
	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

// TestTradeBill fetches the sim's bill of its own payments and refunds over
// HTTP, both calls signed by the merchant, the first answer verified, the
// file checked against its SHA1; and the ways it fails.
func TestTradeBill(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	today := wechatbill.DateOf(time.Now())

	if _, err := h.client.TradeBill(ctx, today); !errors.Is(err, wechatpay.ErrNoStatement) {
		t.Fatalf("a day without trade: %v, want ErrNoStatement", err)
	}
	for _, no := range []string{"BK000000000301", "BK000000000302"} {
		if _, err := h.client.Prepay(ctx, h.order(no)); err != nil {
			t.Fatal(err)
		}
		if err := h.sim.Pay(ctx, no); err != nil {
			t.Fatal(err)
		}
		<-h.payments
	}
	if _, err := h.client.Refund(ctx, wechatpay.RefundRequest{OutTradeNo: "BK000000000302", OutRefundNo: "RF000000000302", RefundFen: 5000, TotalFen: 5000}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.CompleteRefundSilently("RF000000000302", wxpaysim.RefundSuccess); err != nil {
		t.Fatal(err)
	}

	body, err := h.client.TradeBill(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	b, err := wechatbill.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != 3 || b.Summary.SettlementFen != 10000 || b.Summary.RefundFen != 5000 || b.Summary.FeeFen != 30 {
		t.Fatalf("bill %+v", b)
	}
	if _, err := h.client.TradeBill(ctx, wechatbill.DateOf(time.Now().AddDate(0, 0, -2))); !errors.Is(err, wechatpay.ErrNoStatement) {
		t.Fatalf("another day: %v, want ErrNoStatement", err)
	}

	h.sim.PlantBill(wxpaysim.BillPlant{BadHash: true})
	if _, err := h.client.TradeBill(ctx, today); !errors.Is(err, wechatpay.ErrBillHash) {
		t.Fatalf("bad hash: %v, want ErrBillHash", err)
	}
	h.sim.PlantBill(wxpaysim.BillPlant{})

	h.sim.FailNext("/v3/bill/tradebill", wxpaysim.BadSignature, "", 1)
	if _, err := h.client.TradeBill(ctx, today); err == nil {
		t.Fatal("an answer with a bad signature was accepted")
	}
	h.sim.FailNext("/v3/billdownload/", http.StatusInternalServerError, "SYSTEM_ERROR", 1)
	if _, err := h.client.TradeBill(ctx, today); err == nil || errors.Is(err, wechatpay.ErrNoStatement) {
		t.Fatalf("a failed download: %v", err)
	}
	if _, err := h.client.TradeBill(ctx, "2026-13-01"); err == nil {
		t.Fatal("a bad date was sent")
	}
	// Every call above was signed: the sim refuses unsigned ones with 401.
	for _, c := range h.sim.Calls() {
		if c.Status == http.StatusUnauthorized {
			t.Fatalf("the sim refused a signature: %+v", c)
		}
	}
}

// TestTradeBillDownloadHost: the merchant's signed GET of the bill file goes to
// WeChat's API host (https) or to the configured WECHATPAY_API_BASE (its scheme,
// its host, under its path), as WeChat's backup domain or a gateway in front of
// it may name the file; a download_url anywhere else is refused before any
// request is made.
func TestTradeBillDownloadHost(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	today := wechatbill.DateOf(time.Now())
	if _, err := h.client.Prepay(ctx, h.order("BK000000000311")); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Pay(ctx, "BK000000000311"); err != nil {
		t.Fatal(err)
	}
	<-h.payments

	var strayHits atomic.Int32
	stray := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		strayHits.Add(1)
		http.Error(w, "not WeChat", http.StatusTeapot)
	}))
	t.Cleanup(stray.Close)

	// The sim mounted under a path too, and a client whose base names it.
	mux := http.NewServeMux()
	mux.Handle("/wxpay/", http.StripPrefix("/wxpay", h.sim.Handler()))
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	cfg := h.cfg
	cfg.APIBase = gw.URL + "/wxpay/"
	prefixed, err := wechatpay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}

	downloads := func() (n int) {
		for _, c := range h.sim.Calls() {
			if strings.HasPrefix(c.Path, "/v3/billdownload/") {
				if c.Status != http.StatusOK {
					t.Errorf("download answered %d", c.Status)
				}
				n++
			}
		}
		return n
	}
	apiHost := strings.TrimPrefix(h.api.URL, "http://")
	for _, tt := range []struct {
		name   string
		client *wechatpay.Client
		base   string // the download_url's base; "" is WeChat's API host
		ok     bool
	}{
		{"WeChat's host", h.client, "", true},
		{"the configured base's host", h.client, h.api.URL, true},
		{"another host", h.client, stray.URL, false},
		{"another name of the configured host", h.client, "http://localhost:" + apiHost[strings.LastIndex(apiHost, ":")+1:], false},
		{"another host on WeChat's name", h.client, "https://api.mch.weixin.qq.com.example.com", false},
		{"WeChat's host over http", h.client, "http://api.mch.weixin.qq.com", false},
		{"the configured host, another scheme", h.client, "https://" + apiHost, false},
		{"WeChat's host, a base with a path", prefixed, "", true},
		{"the configured base with its path", prefixed, gw.URL + "/wxpay", true},
		{"the configured host outside the base's path", prefixed, gw.URL, false},
		{"the configured host, a path that only begins like the base's", prefixed, gw.URL + "/wxpayx", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.sim.PlantBill(wxpaysim.BillPlant{DownloadBase: tt.base})
			t.Cleanup(func() { h.sim.PlantBill(wxpaysim.BillPlant{}) })
			before := downloads()
			body, err := tt.client.TradeBill(ctx, today)
			after := downloads()
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "download_url") {
					t.Fatalf("download_url on %q: %v, want it refused", tt.base, err)
				}
				if after != before || strayHits.Load() != 0 {
					t.Fatalf("a refused download_url was requested (sim %d, elsewhere %d)", after-before, strayHits.Load())
				}
				return
			}
			if err != nil {
				t.Fatalf("download_url on %q: %v", tt.base, err)
			}
			if after != before+1 {
				t.Fatalf("the sim served %d downloads, want 1", after-before)
			}
			if b, err := wechatbill.Parse(body); err != nil || len(b.Lines) != 1 {
				t.Fatalf("bill %+v, %v", b, err)
			}
		})
	}
	for _, c := range h.sim.Calls() {
		if c.Status == http.StatusUnauthorized {
			t.Fatalf("the sim refused a signature: %+v", c)
		}
	}
}
