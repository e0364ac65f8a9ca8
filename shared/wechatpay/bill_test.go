package wechatpay_test

import (
	"errors"
	"net/http"
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
