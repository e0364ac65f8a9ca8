package wechatpay

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultAPIBase is WeChat Pay's production API host. The SDK hard-codes it into
// every call; any other WECHATPAY_API_BASE is reached by rewriting requests in the
// transport (see New).
const DefaultAPIBase = "https://api.mch.weixin.qq.com"

// Config is everything the client needs. It holds secrets, so String and GoString
// redact them: a Config that ends up in a log line leaks nothing.
type Config struct {
	AppID         string          // WX_APPID: the mini-program, bound to the merchant
	MchID         string          // WECHATPAY_MCHID
	MchCertSerial string          // WECHATPAY_MCH_CERT_SERIAL: serial of the merchant API certificate
	MchPrivateKey *rsa.PrivateKey // WECHATPAY_MCH_PRIVATE_KEY: signs requests and paySign
	APIv3Key      string          // WECHATPAY_APIV3_KEY: exactly 32 bytes, decrypts notifications
	PublicKeyID   string          // WECHATPAY_PUBLIC_KEY_ID: the serial WeChat signs with in public-key mode
	PublicKey     *rsa.PublicKey  // WECHATPAY_PUBLIC_KEY: verifies what is signed under PublicKeyID

	// WECHATPAY_PLATFORM_CERTS: the platform certificates (PEM, one or more) that
	// verify what WeChat signs under a certificate serial, or the word "download"
	// (DownloadPlatformCerts) to fetch them from /v3/certificates when the client
	// is built. Without a public key this is platform-certificate mode; with both,
	// the combined mode of a merchant switching over. See Mode.
	PlatformCerts         []*x509.Certificate
	DownloadPlatformCerts bool

	APIBase         string // WECHATPAY_API_BASE; empty means DefaultAPIBase
	NotifyURL       string // WECHATPAY_NOTIFY_URL: payment notifications
	RefundNotifyURL string // WECHATPAY_REFUND_NOTIFY_URL: refund notifications

	// HTTPClient is used for every call; nil means a client with a 30 s backstop
	// timeout. The ctx of each call is the real bound.
	HTTPClient *http.Client

	// CallTimeout bounds each call to WeChat Pay (prepay, close, query, refund);
	// zero means DefaultCallTimeout. Not a setting: tests shorten it.
	CallTimeout time.Duration
}

// String describes the configuration without any secret.
func (c Config) String() string {
	return fmt.Sprintf("wechatpay.Config{AppID:%q MchID:%q MchCertSerial:%q MchPrivateKey:%s APIv3Key:%s PublicKeyID:%q PublicKey:%s PlatformCerts:%d DownloadPlatformCerts:%v APIBase:%q NotifyURL:%q RefundNotifyURL:%q}",
		c.AppID, c.MchID, c.MchCertSerial, redacted(c.MchPrivateKey != nil), redacted(c.APIv3Key != ""),
		c.PublicKeyID, redacted(c.PublicKey != nil), len(c.PlatformCerts), c.DownloadPlatformCerts, c.APIBase, c.NotifyURL, c.RefundNotifyURL)
}

// GoString keeps %#v from printing the private key's numbers.
func (c Config) GoString() string { return c.String() }

func redacted(set bool) string {
	if set {
		return "[set]"
	}
	return "[unset]"
}

// ConfigFromEnv reads the WeChat Pay settings (shared/wechatpay/README.md,
// "Configuring a real merchant") through getenv
// (os.Getenv in production, a map in tests). Every setting except
// WECHATPAY_API_BASE is required. An error names the setting at fault and never
// quotes its value, because most of these values are secrets.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var (
		c    Config
		errs []error
	)
	req := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
		return v
	}

	c.AppID = req("WX_APPID")
	c.MchID = req("WECHATPAY_MCHID")
	c.MchCertSerial = req("WECHATPAY_MCH_CERT_SERIAL")
	if v := req("WECHATPAY_MCH_PRIVATE_KEY"); v != "" {
		k, err := parsePrivateKey(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_MCH_PRIVATE_KEY: %w", err))
		}
		c.MchPrivateKey = k
	}
	// The APIv3 key is not trimmed: it is a byte string and a space could be part of it.
	c.APIv3Key = getenv("WECHATPAY_APIV3_KEY")
	if err := checkAPIv3Key(c.APIv3Key); err != nil {
		errs = append(errs, fmt.Errorf("WECHATPAY_APIV3_KEY %w", err))
	}
	// The verification settings are optional one by one; Config.verification
	// checks that they form one of the three modes.
	c.PublicKeyID = strings.TrimSpace(getenv("WECHATPAY_PUBLIC_KEY_ID"))
	if v := strings.TrimSpace(getenv("WECHATPAY_PUBLIC_KEY")); v != "" {
		k, err := parsePublicKey(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_PUBLIC_KEY: %w", err))
		}
		c.PublicKey = k
	}
	unreadable := c.PublicKey == nil && strings.TrimSpace(getenv("WECHATPAY_PUBLIC_KEY")) != ""
	switch v := strings.TrimSpace(getenv("WECHATPAY_PLATFORM_CERTS")); {
	case v == "":
	case strings.EqualFold(v, PlatformCertsDownload):
		c.DownloadPlatformCerts = true
	default:
		certs, err := parseCertificates(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_PLATFORM_CERTS: %w", err))
		}
		c.PlatformCerts = certs
		unreadable = unreadable || certs == nil
	}
	// A setting already reported as unreadable is not reported again as missing.
	if _, err := c.verification(); err != nil && !unreadable {
		errs = append(errs, err)
	}
	c.APIBase = strings.TrimSpace(getenv("WECHATPAY_API_BASE"))
	if c.APIBase == "" {
		c.APIBase = DefaultAPIBase
	} else if _, err := parseBase(c.APIBase); err != nil {
		errs = append(errs, fmt.Errorf("WECHATPAY_API_BASE %w", err))
	}
	if v := req("WECHATPAY_NOTIFY_URL"); v != "" {
		if err := checkNotifyURL(v); err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_NOTIFY_URL %w", err))
		}
		c.NotifyURL = v
	}
	if v := req("WECHATPAY_REFUND_NOTIFY_URL"); v != "" {
		if err := checkNotifyURL(v); err != nil {
			errs = append(errs, fmt.Errorf("WECHATPAY_REFUND_NOTIFY_URL %w", err))
		}
		c.RefundNotifyURL = v
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("wechatpay config: %w", errors.Join(errs...))
	}
	return c, nil
}

// normalisePEM undoes what environment variables do to PEM text: SCF consoles and
// .env files often store the newlines as the two characters `\n`, and Windows
// editors add `\r`. pem.Decode finds nothing in such text.
func normalisePEM(s string) string {
	s = strings.ReplaceAll(s, `\r\n`, "\n")
	s = strings.ReplaceAll(s, `\n`, "\n")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(s) + "\n"
}

// parsePrivateKey accepts the merchant key as WeChat hands it out (PKCS#8
// "PRIVATE KEY", apiclient_key.pem) and also the PKCS#1 "RSA PRIVATE KEY" form
// that openssl tools sometimes produce; the SDK only needs the *rsa.PrivateKey.
// Errors describe the shape, never the content.
func parsePrivateKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(normalisePEM(s)))
	if block == nil {
		return nil, errors.New("not PEM text (expected -----BEGIN PRIVATE KEY-----)")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKCS#8 private key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("not an RSA private key")
		}
		return rk, nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKCS#1 private key")
		}
		return k, nil
	default:
		return nil, fmt.Errorf("PEM block is %q, expected PRIVATE KEY", block.Type)
	}
}

// parsePublicKey accepts WeChat Pay's pub_key.pem (PKIX "PUBLIC KEY") and the
// PKCS#1 "RSA PUBLIC KEY" form.
func parsePublicKey(s string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(normalisePEM(s)))
	if block == nil {
		return nil, errors.New("not PEM text (expected -----BEGIN PUBLIC KEY-----)")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKIX public key")
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("not an RSA public key")
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("malformed PKCS#1 public key")
		}
		return k, nil
	default:
		return nil, fmt.Errorf("PEM block is %q, expected PUBLIC KEY", block.Type)
	}
}

// checkAPIv3Key insists on 32 bytes because the SDK does not: a 16- or 24-byte
// key silently selects AES-128/192 and every notification then fails to decrypt.
// The message gives the length, which is not secret, and not the key.
func checkAPIv3Key(k string) error {
	switch {
	case k == "":
		return errors.New("is not set")
	case len(k) != 32:
		return fmt.Errorf("must be exactly 32 bytes, got %d", len(k))
	}
	return nil
}

// parseBase accepts an absolute http(s) URL without query or fragment. A path is
// allowed (it is prepended to every request path) for a simulator mounted under a
// prefix, which must then strip it before checking signatures.
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be an absolute http(s) URL without query")
	}
	return u, nil
}

// checkNotifyURL applies WeChat's rules for notify_url that can be checked
// locally: absolute, no query string, at most 255 characters. Plain http is
// allowed for the local simulator; WeChat itself requires https.
func checkNotifyURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("must be an absolute http(s) URL")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not carry a query string")
	case len(s) > 255:
		return errors.New("must be at most 255 characters")
	}
	return nil
}

// PlatformCertsDownload is the WECHATPAY_PLATFORM_CERTS value that fetches the
// platform certificates from WeChat (GET /v3/certificates) when the client is built.
const PlatformCertsDownload = "download"

// Mode is how WeChat Pay's signatures on answers and notifications are verified.
type Mode string

const (
	// ModePublicKey: the WeChat Pay public key (WECHATPAY_PUBLIC_KEY_ID and
	// WECHATPAY_PUBLIC_KEY). Merchants registered since late 2024 have only this.
	ModePublicKey Mode = "public-key"
	// ModePlatformCert: platform certificates (WECHATPAY_PLATFORM_CERTS), the
	// older accounts' way.
	ModePlatformCert Mode = "platform-certificate"
	// ModeCombined: both, for a merchant switching from certificates to the public
	// key: a signature under the public key ID is checked with the public key,
	// any other serial with the certificates.
	ModeCombined Mode = "combined"
)

// Mode reports the verification mode the settings select; an incomplete or
// empty set is an error naming the settings.
func (c Config) Mode() (Mode, error) { return c.verification() }

func (c Config) verification() (Mode, error) {
	hasID, hasKey := strings.TrimSpace(c.PublicKeyID) != "", c.PublicKey != nil
	hasCerts := len(c.PlatformCerts) > 0 || c.DownloadPlatformCerts
	switch {
	case hasID != hasKey:
		return "", errors.New("WECHATPAY_PUBLIC_KEY_ID and WECHATPAY_PUBLIC_KEY go together: set both or neither")
	case len(c.PlatformCerts) > 0 && c.DownloadPlatformCerts:
		return "", errors.New("WECHATPAY_PLATFORM_CERTS is either certificates or the word download, not both")
	case hasKey && hasCerts:
		return ModeCombined, nil
	case hasKey:
		return ModePublicKey, nil
	case hasCerts:
		return ModePlatformCert, nil
	}
	return "", errors.New("no way to verify WeChat Pay's signatures: set WECHATPAY_PUBLIC_KEY_ID and WECHATPAY_PUBLIC_KEY (public-key mode), or WECHATPAY_PLATFORM_CERTS (platform certificates, or the word download), or both while switching")
}

// parseCertificates reads one or more PEM certificates (WeChat's wechatpay_*.pem)
// with RSA keys. Errors describe the shape only.
func parseCertificates(s string) ([]*x509.Certificate, error) {
	rest := []byte(normalisePEM(s))
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block is %q, expected CERTIFICATE", block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d is malformed", len(certs)+1)
		}
		if _, ok := cert.PublicKey.(*rsa.PublicKey); !ok {
			return nil, fmt.Errorf("certificate %d does not carry an RSA key", len(certs)+1)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("no certificate found (expected -----BEGIN CERTIFICATE----- or the word %s)", PlatformCertsDownload)
	}
	return certs, nil
}
