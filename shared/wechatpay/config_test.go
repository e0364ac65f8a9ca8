package wechatpay_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"strings"
	"testing"

	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

func simEnv(t *testing.T) (map[string]string, *wxpaysim.Sim) {
	t.Helper()
	key, serial := merchant(t)
	sim, err := wxpaysim.New(wxpaysim.Options{AppID: testAppID, MchID: testMchID, MerchantPublicKey: &key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	return sim.Env(key, serial, "http://127.0.0.1:8091", "https://example.com/pay/notify", "https://example.com/pay/refund-notify"), sim
}

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnvAcceptsPEMWithLiteralNewlines(t *testing.T) {
	env, sim := simEnv(t)
	key, serial := merchant(t)
	for name, e := range map[string]map[string]string{
		"real newlines":  env,
		"literal \\n":    escapePEM(env),
		"literal \\r\\n": crlfEscaped(env),
	} {
		t.Run(name, func(t *testing.T) {
			if name != "real newlines" && strings.Contains(e["WECHATPAY_MCH_PRIVATE_KEY"], "\n") {
				t.Fatal("test setup: PEM still has real newlines")
			}
			cfg, err := wechatpay.ConfigFromEnv(getenv(e))
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.MchPrivateKey.Equal(key) || !cfg.PublicKey.Equal(sim.PlatformPublicKey()) {
				t.Fatal("keys do not round-trip")
			}
			if cfg.MchCertSerial != serial || cfg.PublicKeyID != sim.PublicKeyID() || cfg.APIv3Key != sim.APIv3Key() ||
				cfg.AppID != testAppID || cfg.MchID != testMchID || cfg.APIBase != "http://127.0.0.1:8091" {
				t.Fatalf("config = %v", cfg)
			}
		})
	}
}

func crlfEscaped(env map[string]string) map[string]string {
	out := maps.Clone(env)
	for _, k := range []string{"WECHATPAY_MCH_PRIVATE_KEY", "WECHATPAY_PUBLIC_KEY"} {
		out[k] = strings.ReplaceAll(strings.TrimRight(env[k], "\n"), "\n", `\r\n`)
	}
	return out
}

func TestConfigFromEnvDefaultsAPIBase(t *testing.T) {
	env, _ := simEnv(t)
	delete(env, "WECHATPAY_API_BASE")
	cfg, err := wechatpay.ConfigFromEnv(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.APIBase != "https://api.mch.weixin.qq.com" {
		t.Fatalf("APIBase = %q", cfg.APIBase)
	}
}

// Every bad setting must be reported by name, and the message must never quote
// the value: these values are secrets and errors end up in logs.
func TestConfigFromEnvErrorsNameTheSettingNotTheValue(t *testing.T) {
	env, _ := simEnv(t)
	ecKey := ecPrivateKeyPEM(t)
	cases := []struct {
		setting string
		value   string // "" deletes it
	}{
		{"WX_APPID", ""},
		{"WECHATPAY_MCHID", ""},
		{"WECHATPAY_MCH_CERT_SERIAL", ""},
		{"WECHATPAY_MCH_PRIVATE_KEY", ""},
		{"WECHATPAY_MCH_PRIVATE_KEY", "secret-not-a-pem-0123456789"},
		{"WECHATPAY_MCH_PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----\\nc2VjcmV0LWdhcmJhZ2U=\\n-----END PRIVATE KEY-----"},
		{"WECHATPAY_MCH_PRIVATE_KEY", env["WECHATPAY_PUBLIC_KEY"]}, // the keys swapped
		{"WECHATPAY_MCH_PRIVATE_KEY", ecKey},
		{"WECHATPAY_APIV3_KEY", ""},
		{"WECHATPAY_APIV3_KEY", "0123456789abcdef0123456789abcde"},   // 31 bytes
		{"WECHATPAY_APIV3_KEY", "0123456789abcdef"},                  // 16: AES-128, fails at decryption
		{"WECHATPAY_APIV3_KEY", "0123456789abcdef0123456789abcdef0"}, // 33
		{"WECHATPAY_PUBLIC_KEY_ID", ""},
		{"WECHATPAY_PUBLIC_KEY", ""},
		{"WECHATPAY_PUBLIC_KEY", "secret-not-a-pem-0123456789"},
		{"WECHATPAY_PUBLIC_KEY", env["WECHATPAY_MCH_PRIVATE_KEY"]},
		{"WECHATPAY_API_BASE", "ftp://secret-host.example"},
		{"WECHATPAY_NOTIFY_URL", ""},
		{"WECHATPAY_NOTIFY_URL", "https://secret-host.example/notify?token=s3cr3t"},
		{"WECHATPAY_NOTIFY_URL", "secret-relative/notify"},
		{"WECHATPAY_REFUND_NOTIFY_URL", ""},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d_%s", i, c.setting), func(t *testing.T) {
			e := maps.Clone(env)
			if c.value == "" {
				delete(e, c.setting)
			} else {
				e[c.setting] = c.value
			}
			_, err := wechatpay.ConfigFromEnv(getenv(e))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.setting) {
				t.Fatalf("error does not name %s: %v", c.setting, msg)
			}
			if c.value != "" && strings.Contains(msg, c.value) {
				t.Fatalf("error quotes the value: %v", msg)
			}
			for _, secret := range []string{"secret", "s3cr3t", "MII", env["WECHATPAY_APIV3_KEY"]} {
				if strings.Contains(msg, secret) {
					t.Fatalf("error contains %q: %v", secret, msg)
				}
			}
		})
	}
}

func TestConfigStringRedactsSecrets(t *testing.T) {
	env, _ := simEnv(t)
	cfg, err := wechatpay.ConfigFromEnv(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, cfg.APIv3Key) || strings.Contains(s, cfg.MchPrivateKey.D.String()) {
			t.Fatalf("secret printed: %s", s)
		}
	}
}

func TestNewValidatesHandBuiltConfig(t *testing.T) {
	env, _ := simEnv(t)
	cfg, err := wechatpay.ConfigFromEnv(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.APIv3Key = "0123456789abcdef0123456789abcdef"[:24]
	if _, err := wechatpay.New(bad); err == nil || !strings.Contains(err.Error(), "WECHATPAY_APIV3_KEY") {
		t.Fatalf("24-byte APIv3 key: %v", err)
	}
	bad = cfg
	bad.PublicKey = nil
	if _, err := wechatpay.New(bad); err == nil || !strings.Contains(err.Error(), "WECHATPAY_PUBLIC_KEY") {
		t.Fatalf("no public key: %v", err)
	}
	if _, err := wechatpay.New(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestPKCS1PrivateKeyAccepted(t *testing.T) {
	env, _ := simEnv(t)
	key, _ := merchant(t)
	env["WECHATPAY_MCH_PRIVATE_KEY"] = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	cfg, err := wechatpay.ConfigFromEnv(getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.MchPrivateKey.Equal(key) {
		t.Fatal("PKCS#1 key does not round-trip")
	}
}

func ecPrivateKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}
