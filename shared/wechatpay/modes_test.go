package wechatpay_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

// Environments for each verification mode, edited from the sim's public-key
// environment.
func publicKeyOnly(*wxpaysim.Sim, map[string]string) {}

func certsOnly(sim *wxpaysim.Sim, env map[string]string) {
	delete(env, "WECHATPAY_PUBLIC_KEY_ID")
	delete(env, "WECHATPAY_PUBLIC_KEY")
	env["WECHATPAY_PLATFORM_CERTS"] = sim.PlatformCertificatePEM()
}

func certsDownloaded(_ *wxpaysim.Sim, env map[string]string) {
	delete(env, "WECHATPAY_PUBLIC_KEY_ID")
	delete(env, "WECHATPAY_PUBLIC_KEY")
	env["WECHATPAY_PLATFORM_CERTS"] = "download"
}

func combined(sim *wxpaysim.Sim, env map[string]string) {
	env["WECHATPAY_PLATFORM_CERTS"] = sim.PlatformCertificatePEM()
}

func combinedDownloaded(_ *wxpaysim.Sim, env map[string]string) {
	env["WECHATPAY_PLATFORM_CERTS"] = "download"
}

func simMode(m wxpaysim.Mode) func(*wxpaysim.Options) {
	return func(o *wxpaysim.Options) { o.Mode = m }
}

// Every mode, end to end against the sim signing the way that mode expects:
// prepay, query, the payment notification, refund and the refund notification.
func TestEveryVerificationModeEndToEnd(t *testing.T) {
	cases := []struct {
		name     string
		env      func(*wxpaysim.Sim, map[string]string)
		signing  wxpaysim.Mode
		wantMode wechatpay.Mode
	}{
		{"public key", publicKeyOnly, wxpaysim.ModePublicKey, wechatpay.ModePublicKey},
		{"platform certificate given", certsOnly, wxpaysim.ModePlatformCert, wechatpay.ModePlatformCert},
		{"platform certificate downloaded", certsDownloaded, wxpaysim.ModePlatformCert, wechatpay.ModePlatformCert},
		{"combined, WeChat still on the certificate", combined, wxpaysim.ModePlatformCert, wechatpay.ModeCombined},
		{"combined, WeChat already on the public key", combined, wxpaysim.ModePublicKey, wechatpay.ModeCombined},
		{"combined with downloaded certificates", combinedDownloaded, wxpaysim.ModePlatformCert, wechatpay.ModeCombined},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessEnv(t, tc.env, simMode(tc.signing))
			if m, err := h.cfg.Mode(); err != nil || m != tc.wantMode {
				t.Fatalf("mode %q, %v; want %q", m, err, tc.wantMode)
			}
			ctx := ctxT(t)
			no := "BKMODE00000" + string(rune('0'+i))
			o := h.order(no)
			params, err := h.client.Prepay(ctx, o)
			if err != nil || params.Package == "" {
				t.Fatalf("prepay: %+v %v", params, err)
			}
			if st, err := h.client.QueryOrder(ctx, no); err != nil || st.TradeState != "NOTPAY" {
				t.Fatalf("query: %+v %v", st, err)
			}
			if err := h.sim.Pay(ctx, no); err != nil {
				t.Fatalf("pay (the notification was refused?): %v", err)
			}
			if p := <-h.payments; p.OutTradeNo != no || p.TradeState != "SUCCESS" {
				t.Fatalf("payment %+v", p)
			}
			r, err := h.client.Refund(ctx, wechatpay.RefundRequest{OutTradeNo: no, OutRefundNo: "RF" + no, RefundFen: o.AmountFen, TotalFen: o.AmountFen})
			if err != nil || r.Status != "PROCESSING" {
				t.Fatalf("refund: %+v %v", r, err)
			}
			if err := h.sim.CompleteRefund(ctx, "RF"+no, wxpaysim.RefundSuccess); err != nil {
				t.Fatalf("refund notification refused: %v", err)
			}
			if n := <-h.refunds; n.OutRefundNo != "RF"+no || string(n.RefundStatus) != "SUCCESS" {
				t.Fatalf("refund notice %+v", n)
			}
			var downloads int
			for _, c := range h.sim.Calls() {
				if c.Path == "/v3/certificates" {
					downloads++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[strings.Contains(tc.name, "downloaded")]; downloads != want {
				t.Errorf("%d certificate downloads, want %d", downloads, want)
			}
		})
	}
}

// The combined mode of a merchant mid-switch: answers and notifications signed
// either way are accepted by the same client, before and after WeChat switches.
func TestCombinedModeAcceptsBothDuringTheSwitch(t *testing.T) {
	h := newHarnessEnv(t, combined, simMode(wxpaysim.ModePlatformCert))
	ctx := ctxT(t)
	o := h.order("BKSWITCH0001")
	if _, err := h.client.Prepay(ctx, o); err != nil {
		t.Fatal(err)
	}
	h.sim.SetMode(wxpaysim.ModePublicKey)
	if _, err := h.client.QueryOrder(ctx, o.OutTradeNo); err != nil {
		t.Fatalf("query after the switch: %v", err)
	}
	if err := h.sim.Pay(ctx, o.OutTradeNo); err != nil {
		t.Fatal(err)
	}
	<-h.payments
	h.sim.SetMode(wxpaysim.ModePlatformCert)
	if err := h.sim.Notify(ctx, o.OutTradeNo); err != nil {
		t.Fatalf("certificate-signed redelivery: %v", err)
	}
	<-h.payments
}

// A client in one mode refuses what is signed in the other, answers and
// notifications alike, and a signature under the right serial made with the
// wrong key.
func TestWrongModeSignaturesRefused(t *testing.T) {
	cases := []struct {
		name    string
		env     func(*wxpaysim.Sim, map[string]string)
		signing wxpaysim.Mode
	}{
		{"public-key client, certificate-signed WeChat", publicKeyOnly, wxpaysim.ModePlatformCert},
		{"certificate client, public-key-signed WeChat", certsOnly, wxpaysim.ModePublicKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessEnv(t, tc.env, simMode(tc.signing))
			ctx := ctxT(t)
			o := h.order("BKWRONG00001")
			_, err := h.client.Prepay(ctx, o)
			if _, _, isAPI := wechatpay.APIErrorCode(err); err == nil || isAPI {
				t.Fatalf("prepay answer accepted or misread: %v", err)
			}
			if _, err := h.client.QueryOrder(ctx, o.OutTradeNo); err == nil {
				t.Fatal("query answer accepted")
			}
			headers, body, err := h.sim.BuildPaymentNotification(o.OutTradeNo)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.sim.Deliver(ctx, h.env["WECHATPAY_NOTIFY_URL"], headers, body); err == nil {
				t.Fatal("notification accepted")
			}
			if err := <-h.rejected; err == nil {
				t.Fatal("no rejection recorded")
			}
		})
	}

	t.Run("certificate serial, public key's signature", func(t *testing.T) {
		h := newHarnessEnv(t, combined, simMode(wxpaysim.ModePlatformCert))
		ctx := ctxT(t)
		o := preparedOrder(t, h, "BKWRONG00002")
		headers, body, err := h.sim.BuildPaymentNotification(o.OutTradeNo, func(p *wxpaysim.NotificationParts) {
			p.Serial = h.sim.PlatformCertSerial()
			p.SigningKey = h.sim.PlatformKey()
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.sim.Deliver(ctx, h.env["WECHATPAY_NOTIFY_URL"], headers, body); err == nil {
			t.Fatal("notification accepted")
		}
		<-h.rejected
		headers, body, _ = h.sim.BuildPaymentNotification(o.OutTradeNo, func(p *wxpaysim.NotificationParts) {
			p.Serial = h.sim.PublicKeyID()
			p.SigningKey = h.sim.PlatformCertKey()
		})
		if err := h.sim.Deliver(ctx, h.env["WECHATPAY_NOTIFY_URL"], headers, body); err == nil {
			t.Fatal("notification under the public key id signed by the certificate key accepted")
		}
		<-h.rejected
	})
}

func TestDownloadFromAMerchantWithoutCertificatesFailsAtBuild(t *testing.T) {
	key, serial := merchant(t)
	sim, err := wxpaysim.New(wxpaysim.Options{AppID: testAppID, MchID: testMchID, MerchantPublicKey: &key.PublicKey, MerchantSerial: serial})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	env := sim.Env(key, serial, srv.URL, "https://salon.example/pay/notify", "https://salon.example/pay/refund-notify")
	certsDownloaded(sim, env)
	cfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wechatpay.New(cfg); err == nil || !strings.Contains(err.Error(), "WECHATPAY_PLATFORM_CERTS=download") {
		t.Fatalf("err = %v", err)
	}
}

func TestVerificationSettingsRefusedWhenIncomplete(t *testing.T) {
	h := newHarness(t)
	cert := h.sim.PlatformCertificatePEM()
	cases := []struct {
		name string
		edit func(env map[string]string)
		want string
	}{
		{"nothing to verify with", func(env map[string]string) {
			delete(env, "WECHATPAY_PUBLIC_KEY_ID")
			delete(env, "WECHATPAY_PUBLIC_KEY")
		}, "WECHATPAY_PLATFORM_CERTS"},
		{"key without its id", func(env map[string]string) { delete(env, "WECHATPAY_PUBLIC_KEY_ID") }, "go together"},
		{"id without its key", func(env map[string]string) { delete(env, "WECHATPAY_PUBLIC_KEY") }, "go together"},
		{"certificate that is not PEM", func(env map[string]string) { env["WECHATPAY_PLATFORM_CERTS"] = "auto" }, "WECHATPAY_PLATFORM_CERTS: no certificate"},
		{"a key where a certificate belongs", func(env map[string]string) {
			env["WECHATPAY_PLATFORM_CERTS"] = env["WECHATPAY_PUBLIC_KEY"]
		}, `"PUBLIC KEY", expected CERTIFICATE`},
		{"truncated certificate", func(env map[string]string) {
			env["WECHATPAY_PLATFORM_CERTS"] = strings.Replace(cert, "\n", "\nAAAA", 3)
		}, "WECHATPAY_PLATFORM_CERTS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range h.env {
				env[k] = v
			}
			tc.edit(env)
			_, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "MII") { // the start of every DER key or certificate in base64
				t.Errorf("error quotes the value: %v", err)
			}
		})
	}
	// Escaped newlines (SCF console, .env) work for certificates as for keys.
	env := escapePEM(h.env)
	env["WECHATPAY_PLATFORM_CERTS"] = strings.ReplaceAll(strings.TrimRight(cert+cert, "\n"), "\n", `\n`)
	cfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil || len(cfg.PlatformCerts) != 2 {
		t.Fatalf("%d certificates, %v", len(cfg.PlatformCerts), err)
	}
	if m, _ := cfg.Mode(); m != wechatpay.ModeCombined {
		t.Fatalf("mode %s", m)
	}
}
