package wxpaysim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"time"
)

// Mode is how the sim signs its answers and notifications, as WeChat does for a
// merchant: with the WeChat Pay public key (Wechatpay-Serial is the public key
// ID), or with a platform certificate's key (Wechatpay-Serial is the
// certificate's serial, and GET /v3/certificates hands the certificate out).
// Merchants in the middle of the switch see both; SetMode models that.
type Mode int

const (
	ModePublicKey Mode = iota
	ModePlatformCert
)

func (m Mode) String() string {
	if m == ModePlatformCert {
		return "platform certificate"
	}
	return "public key"
}

// platformCert is the sim's platform certificate: its own key, not the public
// key's, as WeChat's are distinct.
type platformCert struct {
	key    *rsa.PrivateKey
	cert   *x509.Certificate
	pem    string
	serial string // upper-case hex, as WeChat writes it and the SDK keys it
}

func newPlatformCert(now time.Time) (*platformCert, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("wxpaysim: platform certificate key: %w", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
	if err != nil {
		return nil, err
	}
	sn.SetBit(sn, 158, 1) // 20 bytes without a leading zero, like WeChat's 40 hex digits
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: "Tenpay.com Root CA (wxpaysim)", Organization: []string{"wxpaysim"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(5, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("wxpaysim: platform certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &platformCert{
		key:    key,
		cert:   cert,
		pem:    string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		serial: fmt.Sprintf("%X", cert.SerialNumber.Bytes()),
	}, nil
}

// SetMode switches how answers and notifications are signed from now on.
func (s *Sim) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Mode reports how the sim signs.
func (s *Sim) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// PlatformCertificatePEM is the platform certificate, for WECHATPAY_PLATFORM_CERTS.
func (s *Sim) PlatformCertificatePEM() string { return s.cert.pem }

// PlatformCertSerial is the certificate's serial, sent as Wechatpay-Serial in
// platform-certificate mode.
func (s *Sim) PlatformCertSerial() string { return s.cert.serial }

// PlatformCertKey is the certificate's private key, for tests that forge.
func (s *Sim) PlatformCertKey() *rsa.PrivateKey { return s.cert.key }

// PlatformKey is the public key's private half, for tests that forge.
func (s *Sim) PlatformKey() *rsa.PrivateKey { return s.platformKey }

// signer returns the key and serial of the current mode.
func (s *Sim) signer() (*rsa.PrivateKey, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ModePlatformCert {
		return s.cert.key, s.cert.serial
	}
	return s.platformKey, s.publicKeyID
}

type encryptedCertificate struct {
	SerialNo           string `json:"serial_no"`
	EffectiveTime      string `json:"effective_time"`
	ExpireTime         string `json:"expire_time"`
	EncryptCertificate struct {
		Algorithm      string `json:"algorithm"`
		Nonce          string `json:"nonce"`
		AssociatedData string `json:"associated_data"`
		Ciphertext     string `json:"ciphertext"`
	} `json:"encrypt_certificate"`
}

// certificates implements GET /v3/certificates: the platform certificates,
// AES-256-GCM encrypted with the APIv3 key (associated data "certificate"). A
// merchant that has only the public key has no platform certificate; WeChat
// refuses the download for it, and so does the sim in public-key mode.
func (s *Sim) certificates() result {
	if s.Mode() != ModePlatformCert {
		return fail(http.StatusNotFound, "RESOURCE_NOT_EXISTS", "商户未申请平台证书 (wxpaysim: public-key mode)")
	}
	var c encryptedCertificate
	c.SerialNo = s.cert.serial
	c.EffectiveTime = s.cert.cert.NotBefore.In(cst).Format(time.RFC3339)
	c.ExpireTime = s.cert.cert.NotAfter.In(cst).Format(time.RFC3339)
	c.EncryptCertificate.Algorithm = "AEAD_AES_256_GCM"
	c.EncryptCertificate.AssociatedData = "certificate"
	c.EncryptCertificate.Nonce = randAlnum(12)
	ct, err := seal([]byte(s.apiV3Key), c.EncryptCertificate.Nonce, []byte(s.cert.pem), "certificate")
	if err != nil {
		return fail(http.StatusInternalServerError, "SYSTEM_ERROR", err.Error())
	}
	c.EncryptCertificate.Ciphertext = ct
	return ok(map[string]any{"data": []encryptedCertificate{c}})
}
