// Package session issues and verifies the customer's session tokens.
//
// A token is "s1." + base64url(payload) + "." + base64url(HMAC-SHA256(key, "s1." +
// base64url(payload))), where the payload is the JSON {"sub","exp","iat"}. There is
// one algorithm and no header a client could use to choose another; the version prefix
// is covered by the MAC, and anything not of exactly this shape is rejected before the
// payload is read.
package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"salon/shared/booking"
)

const (
	prefix = "s1."
	// MinSecretBytes is the shortest SESSION_SECRET accepted: the HMAC-SHA256 key
	// should carry at least as many bytes as the hash.
	MinSecretBytes = 32
	// DefaultTTL is how long a token lives when Signer.TTL is zero. The mini-program
	// logs in again silently (wx.login) when its token is refused.
	DefaultTTL = 7 * 24 * time.Hour
	// maxTokenLen bounds the work done on garbage; real tokens are about 150 bytes.
	maxTokenLen = 1024
	maxSubLen   = 128
)

var b64 = base64.RawURLEncoding.Strict()

// Signer issues and verifies session tokens.
type Signer struct {
	Secret []byte           // SESSION_SECRET, at least MinSecretBytes
	TTL    time.Duration    // zero means DefaultTTL
	Now    func() time.Time // nil means time.Now
	// Prefix names the kind of token and is covered by the MAC; "" means "s1."
	// (the customer's). Another kind of token uses its own prefix and a key of
	// its own (DeriveKey), so one kind is never accepted as another.
	Prefix string
}

type payload struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
	Iat int64  `json:"iat"`
}

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// check reports a misconfigured signer. It is INTERNAL, never UNAUTHORIZED: a bad key
// is the operator's fault, not the customer's.
func (s *Signer) prefix() string {
	if s.Prefix != "" {
		return s.Prefix
	}
	return prefix
}

// DeriveKey returns a key of its own for one purpose (another kind of token, a
// CSRF token) from SESSION_SECRET and whatever else should end those tokens when
// it changes: HMAC-SHA256(secret, purpose || 0 || context...).
func DeriveKey(secret []byte, purpose string, context ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	for _, c := range context {
		m.Write(c)
	}
	return m.Sum(nil)
}

func (s *Signer) check() error {
	if len(s.Secret) < MinSecretBytes {
		return booking.Errorf(booking.EINTERNAL, "SESSION_SECRET must be at least %d bytes (has %d)", MinSecretBytes, len(s.Secret))
	}
	if s.TTL < 0 {
		return booking.Errorf(booking.EINTERNAL, "session TTL %v is negative", s.TTL)
	}
	return nil
}

func (s *Signer) mac(signed string) []byte {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Issue returns a token for openid and the moment it expires.
func (s *Signer) Issue(openid string) (token string, expiresAt time.Time, err error) {
	if err := s.check(); err != nil {
		return "", time.Time{}, err
	}
	if openid == "" || len(openid) > maxSubLen {
		return "", time.Time{}, booking.Errorf(booking.EINTERNAL, "session: openid of %d bytes", len(openid))
	}
	ttl := s.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	now := s.now()
	// Whole seconds, so that the expiry the client is told is the one Verify applies.
	exp := now.Add(ttl).Truncate(time.Second)
	body, err := json.Marshal(payload{Sub: openid, Exp: exp.Unix(), Iat: now.Unix()})
	if err != nil {
		return "", time.Time{}, err
	}
	signed := s.prefix() + b64.EncodeToString(body)
	return signed + "." + b64.EncodeToString(s.mac(signed)), exp, nil
}

// Verify returns the openid of a valid, unexpired token. Any other token is
// UNAUTHORIZED, with a detail (malformed, bad signature, expired) for the log.
func (s *Signer) Verify(token string) (openid string, err error) {
	openid, _, err = s.VerifyExpiry(token)
	return openid, err
}

// VerifyExpiry is Verify that also answers when the token expires.
func (s *Signer) VerifyExpiry(token string) (sub string, expiresAt time.Time, err error) {
	sub, exp, err := s.verify(token)
	if err != nil {
		return "", time.Time{}, err
	}
	return sub, time.Unix(exp, 0), nil
}

func (s *Signer) verify(token string) (string, int64, error) {
	if err := s.check(); err != nil {
		return "", 0, err
	}
	prefix := s.prefix()
	if len(token) > maxTokenLen || !strings.HasPrefix(token, prefix) {
		return "", 0, malformed("not a session token")
	}
	// The base64 decoder skips \r and \n even in strict mode; a token is one exact
	// string, so anything outside the base64url alphabet and the dots is refused here.
	for i := len(prefix); i < len(token); i++ {
		if c := token[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", 0, malformed("character outside base64url")
		}
	}
	body64, sig64, ok := strings.Cut(token[len(prefix):], ".")
	if !ok || body64 == "" || sig64 == "" || strings.Contains(sig64, ".") {
		return "", 0, malformed("wrong number of segments")
	}
	sig, err := b64.DecodeString(sig64)
	if err != nil || len(sig) != sha256.Size {
		return "", 0, malformed("signature encoding")
	}
	// The MAC is checked before the payload is decoded, so nothing a forger wrote is
	// ever parsed.
	if !hmac.Equal(sig, s.mac(token[:len(prefix)+len(body64)])) {
		return "", 0, booking.Errorf(booking.EUNAUTHORIZED, "session token: bad signature")
	}
	raw, err := b64.DecodeString(body64)
	if err != nil {
		return "", 0, malformed("payload encoding")
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || dec.More() {
		return "", 0, malformed("payload")
	}
	if p.Sub == "" || len(p.Sub) > maxSubLen || p.Exp <= 0 || p.Iat > p.Exp {
		return "", 0, malformed("payload fields")
	}
	if !s.now().Before(time.Unix(p.Exp, 0)) {
		return "", 0, booking.Errorf(booking.EUNAUTHORIZED, "session token: expired at %s", time.Unix(p.Exp, 0).UTC().Format(time.RFC3339))
	}
	return p.Sub, p.Exp, nil
}

func malformed(why string) error {
	return booking.Errorf(booking.EUNAUTHORIZED, "session token: malformed (%s)", why)
}
