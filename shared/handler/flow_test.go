package handler

import (
	"context"
	"net/http"
	"testing"
	"time"

	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
)

func TestHappyPathLoginReservePayCancel(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()

	a := s.call("POST", "/login", "", map[string]string{"code": "good-code"})
	if a.Status != 200 || a.JSON["token"] == "" || a.JSON["expiresAt"] == nil {
		t.Fatalf("login: %d %s", a.Status, a.Body)
	}
	if _, leaked := a.JSON["session_key"]; leaked {
		t.Fatal("session key returned")
	}
	token := a.JSON["token"].(string)
	openid := wxloginsim.OpenID(testAppID, "good-code")

	slot := s.slot(26*time.Hour, 2, 5000)
	day := time.Now().Add(26 * time.Hour).In(shanghai(t)).Format("2006-01-02")
	a = s.call("GET", "/slots?date="+day, "", nil)
	if a.Status != 200 || len(a.JSON["slots"].([]any)) == 0 {
		t.Fatalf("slots: %d %s", a.Status, a.Body)
	}

	a = s.call("POST", "/bookings", token, map[string]any{"slotId": slot})
	if a.Status != 201 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	b := a.JSON["booking"].(map[string]any)
	pay := a.JSON["payment"].(map[string]any)
	if b["status"] != "pending_payment" || b["amountFen"].(float64) != 5000 || pay["package"] == "" || pay["paySign"] == "" || pay["signType"] != "RSA" {
		t.Fatalf("reserve answer %s", a.Body)
	}
	id := int64(b["bookingId"].(float64))
	outTradeNo := "BK" + pad12(id)

	// The customer closed the payment sheet: the same order again.
	a = s.call("POST", "/bookings/"+itoa64(id)+"/pay", token, nil)
	if a.Status != 200 || a.JSON["payment"] == nil {
		t.Fatalf("pay again: %d %s", a.Status, a.Body)
	}
	if len(s.sim.Orders()) != 1 {
		t.Fatalf("%d WeChat orders, want 1", len(s.sim.Orders()))
	}

	if err := s.sim.Pay(ctx, outTradeNo); err != nil {
		t.Fatalf("pay: %v", err)
	}
	if st := s.status(id); st != "confirmed" {
		t.Fatalf("after payment: %s", st)
	}
	a = s.call("GET", "/bookings/mine", token, nil)
	if a.Status != 200 || len(a.JSON["bookings"].([]any)) != 1 {
		t.Fatalf("mine: %d %s", a.Status, a.Body)
	}

	a = s.call("POST", "/bookings/"+itoa64(id)+"/cancel", token, nil)
	if a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	refund := a.JSON["booking"].(map[string]any)["refund"].(map[string]any)
	if refund["status"] != "processing" || refund["amountFen"].(float64) != 5000 {
		t.Fatalf("refund after cancel: %s", a.Body)
	}
	if err := s.sim.CompleteRefund(ctx, "RF"+pad12(id), "SUCCESS"); err != nil {
		t.Fatal(err)
	}
	bk, _ := s.store.FindBooking(ctx, id)
	if bk.Refund == nil || bk.Refund.Status != "succeeded" || bk.Refund.RefundedAt == nil {
		t.Fatalf("refund after notification: %+v", bk.Refund)
	}
	_ = openid
	mysqltest.CheckInvariant(t, s.store)
	if s.countRows("t_audit") < 4 {
		t.Fatal("audit trail missing")
	}
	_ = http.StatusOK
}
