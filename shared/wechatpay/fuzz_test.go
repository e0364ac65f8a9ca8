package wechatpay_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

// FuzzParsePaymentNotification feeds arbitrary bodies and header values to the
// parser; it must never panic and must report every failure as
// ErrInvalidNotification. With signed set, the body is signed with the sim's
// real platform key, so the fuzzer gets past the signature check and explores the
// envelope, base64, GCM (including nonce lengths that make the SDK panic) and the
// plaintext.
func FuzzParsePaymentNotification(f *testing.F) {
	h := newHarness(f)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	o := h.order("BK000000000900")
	_, err := h.client.Prepay(ctx, o)
	cancel()
	if err != nil {
		f.Fatal(err)
	}
	seed := func(mutate ...func(*wxpaysim.NotificationParts)) {
		hd, body, err := h.sim.BuildPaymentNotification(o.OutTradeNo, mutate...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, true, hd["Wechatpay-Timestamp"], hd["Wechatpay-Nonce"], hd["Wechatpay-Serial"], hd["Wechatpay-Signature"], hd["Wechatpay-Signature-Type"])
		f.Add(body, false, hd["Wechatpay-Timestamp"], hd["Wechatpay-Nonce"], hd["Wechatpay-Serial"], hd["Wechatpay-Signature"], hd["Wechatpay-Signature-Type"])
	}
	seed()
	seed(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "abc" })
	seed(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "" })
	seed(func(p *wxpaysim.NotificationParts) { p.Ciphertext = "!!not base64!!" })
	seed(func(p *wxpaysim.NotificationParts) { p.Resource = "not an object" })
	seed(func(p *wxpaysim.NotificationParts) { p.Signature = "WECHATPAY/SIGNTEST/AAAA" })
	f.Add([]byte(`{}`), true, "", "n", "", "", "")
	f.Add([]byte(`{"resource":null}`), true, "", "n", "", "", "")
	f.Add([]byte(``), false, "0", "", "", "", "")
	f.Add([]byte(`[`), false, strconv.FormatInt(time.Now().Unix(), 10), "n", h.sim.PublicKeyID(), "%%%", "WECHATPAY2-SHA256-RSA2048")

	f.Fuzz(func(t *testing.T, body []byte, signed bool, ts, nonce, serial, signature, sigType string) {
		headers := map[string]string{
			"Wechatpay-Timestamp":      ts,
			"Wechatpay-Nonce":          nonce,
			"Wechatpay-Serial":         serial,
			"Wechatpay-Signature":      signature,
			"Wechatpay-Signature-Type": sigType,
		}
		if signed {
			var err error
			headers, _, err = h.sim.BuildPaymentNotification(o.OutTradeNo, func(p *wxpaysim.NotificationParts) {
				p.Body = body
				if body == nil {
					p.Body = []byte{}
				}
				if nonce != "" {
					p.Nonce = nonce
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		r := wechatpay.RequestFromEvent(context.Background(), "/pay/notify", headers, body)
		p, err := h.client.ParsePaymentNotification(context.Background(), r)
		if err != nil {
			if !errors.Is(err, wechatpay.ErrInvalidNotification) {
				t.Fatalf("error is not ErrInvalidNotification: %v", err)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("error text of %d bytes", len(err.Error()))
			}
			return
		}
		if p == nil {
			t.Fatal("nil payment without error")
		}
	})
}
