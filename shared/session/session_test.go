package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
)

var (
	key   = []byte("0123456789abcdef0123456789abcdef")
	other = []byte("fedcba9876543210fedcba9876543210")
	t0    = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

func clock(t *time.Time) func() time.Time { return func() time.Time { return *t } }

func TestRoundTripAndExpiry(t *testing.T) {
	now := t0
	s := &Signer{Secret: key, TTL: time.Hour, Now: clock(&now)}
	tok, exp, err := s.Issue("oABC123")
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(t0.Add(time.Hour)) {
		t.Errorf("expiresAt = %v", exp)
	}
	if !strings.HasPrefix(tok, prefix) || strings.Count(tok, ".") != 2 {
		t.Errorf("token shape %q", tok)
	}
	tests := []struct {
		at     time.Time
		want   string
		detail string
	}{
		{t0, "oABC123", ""},
		{t0.Add(time.Hour - time.Nanosecond), "oABC123", ""},
		{t0.Add(time.Hour), "", "expired"},
		{t0.Add(48 * time.Hour), "", "expired"},
	}
	for _, tt := range tests {
		now = tt.at
		got, err := s.Verify(tok)
		if got != tt.want || (tt.detail == "") != (err == nil) {
			t.Errorf("at %v: Verify = %q, %v", tt.at, got, err)
		}
		if err != nil && (booking.ErrorCode(err) != booking.EUNAUTHORIZED || !strings.Contains(err.Error(), tt.detail)) {
			t.Errorf("at %v: err = %v", tt.at, err)
		}
	}
}

func TestDefaultTTL(t *testing.T) {
	now := t0
	_, exp, err := (&Signer{Secret: key, Now: clock(&now)}).Issue("o1")
	if err != nil || !exp.Equal(t0.Add(DefaultTTL)) {
		t.Errorf("exp %v err %v", exp, err)
	}
}

// sign builds a token with a valid MAC over any payload, as a holder of the key could.
func sign(secret []byte, pfx, payloadJSON string) string {
	signed := pfx + base64.RawURLEncoding.EncodeToString([]byte(payloadJSON))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func TestVerifyRejects(t *testing.T) {
	now := t0
	s := &Signer{Secret: key, TTL: time.Hour, Now: clock(&now)}
	tok, _, err := s.Issue("oABC123")
	if err != nil {
		t.Fatal(err)
	}
	body64, sig64, _ := strings.Cut(tok[len(prefix):], ".")
	wrongKey, _, _ := (&Signer{Secret: other, TTL: time.Hour, Now: clock(&now)}).Issue("oABC123")
	otherPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"oEVIL","exp":9999999999,"iat":1}`))
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	exp := t0.Add(time.Hour).Unix()
	tests := []struct {
		name, token, detail string
	}{
		{"empty", "", "malformed"},
		{"garbage", "not-a-token", "malformed"},
		{"prefix only", prefix, "malformed"},
		{"no signature", prefix + body64, "malformed"},
		{"empty signature", prefix + body64 + ".", "malformed"},
		{"empty payload", prefix + "." + sig64, "malformed"},
		{"extra segment", tok + ".x", "malformed"},
		{"extra empty segment", tok + ".", "malformed"},
		{"other version", "s2." + body64 + "." + sig64, "malformed"},
		{"no version", body64 + "." + sig64, "malformed"},
		{"jwt alg none", "eyJhbGciOiJub25lIn0." + body64 + ".", "malformed"},
		{"padded signature", tok + "=", "malformed"},
		{"signature not base64", prefix + body64 + ".!!!!", "malformed"},
		{"short signature", prefix + body64 + "." + sig64[:10], "malformed"},
		{"tampered payload", prefix + otherPayload + "." + sig64, "bad signature"},
		{"tampered payload byte", prefix + flip(body64, 5) + "." + sig64, "bad signature"},
		{"tampered signature", prefix + body64 + "." + flip(sig64, 3), "bad signature"},
		{"wrong key", wrongKey, "bad signature"},
		{"too long", prefix + strings.Repeat("A", 2000) + "." + sig64, "malformed"},
		{"whitespace", " " + tok, "malformed"},
		{"newline in signature", prefix + body64 + "." + sig64[:5] + "\n" + sig64[5:], "malformed"},
		{"newline in payload", prefix + body64[:5] + "\r\n" + body64[5:] + "." + sig64, "malformed"},
		// Validly signed but not what Issue writes: still refused.
		{"signed non-json", sign(key, prefix, "hello"), "malformed"},
		{"signed unknown field", sign(key, prefix, `{"sub":"o1","exp":9999999999,"iat":1,"admin":true}`), "malformed"},
		{"signed empty sub", sign(key, prefix, `{"sub":"","exp":9999999999,"iat":1}`), "malformed"},
		{"signed missing exp", sign(key, prefix, `{"sub":"o1","iat":1}`), "malformed"},
		{"signed trailing data", sign(key, prefix, `{"sub":"o1","exp":9999999999,"iat":1}{}`), "malformed"},
		{"signed expired", sign(key, prefix, `{"sub":"o1","exp":1,"iat":1}`), "expired"},
		{"signed other version", sign(key, "s2.", `{"sub":"o1","exp":9999999999,"iat":1}`), "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Verify(tt.token)
			if err == nil {
				t.Fatalf("accepted, openid %q", got)
			}
			if booking.ErrorCode(err) != booking.EUNAUTHORIZED || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("err = %v, want UNAUTHORIZED %s", err, tt.detail)
			}
		})
	}
	// A token signed with the key over a well-formed payload is accepted: the cases
	// above fail for the reason they name, not for a helper mistake.
	if got, err := s.Verify(sign(key, prefix, `{"sub":"o1","exp":`+strconv.FormatInt(exp, 10)+`,"iat":1}`)); err != nil || got != "o1" {
		t.Errorf("control token: %q %v", got, err)
	}
}

func TestSecretTooShort(t *testing.T) {
	for _, secret := range [][]byte{nil, []byte("short"), key[:31]} {
		s := &Signer{Secret: secret}
		if _, _, err := s.Issue("o1"); booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "SESSION_SECRET") {
			t.Errorf("Issue with %d-byte secret: %v", len(secret), err)
		}
		if _, err := s.Verify("s1.a.b"); booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "SESSION_SECRET") {
			t.Errorf("Verify with %d-byte secret: %v", len(secret), err)
		}
	}
}

func TestIssueRejectsBadOpenID(t *testing.T) {
	s := &Signer{Secret: key}
	for _, id := range []string{"", strings.Repeat("o", maxSubLen+1)} {
		if _, _, err := s.Issue(id); err == nil {
			t.Errorf("Issue(%d bytes) accepted", len(id))
		}
	}
}

func FuzzVerify(f *testing.F) {
	s := &Signer{Secret: key, Now: func() time.Time { return t0 }}
	tok, _, _ := s.Issue("oABC")
	f.Add(tok)
	f.Add("s1..")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		got, err := s.Verify(token)
		if err == nil && token != tok {
			t.Fatalf("forged token accepted: %q -> %q", token, got)
		}
	})
}

// A token of one kind (prefix and derived key) is never accepted as another: a
// customer's token cannot open the salon console, nor the other way round.
func TestKindsDoNotCross(t *testing.T) {
	now := t0
	customer := &Signer{Secret: key, Now: clock(&now)}
	consoleKey := DeriveKey(key, "console session", []byte("admin-token"))
	console := &Signer{Secret: consoleKey, Prefix: "c1.", TTL: 12 * time.Hour, Now: clock(&now)}
	ctok, _, err := customer.Issue("oCustomer")
	if err != nil {
		t.Fatal(err)
	}
	stok, exp, err := console.Issue("sid-1")
	if err != nil {
		t.Fatal(err)
	}
	if sub, gotExp, err := console.VerifyExpiry(stok); err != nil || sub != "sid-1" || !gotExp.Equal(exp) {
		t.Fatalf("console token: %q %v %v", sub, gotExp, err)
	}
	if _, err := console.Verify(ctok); !booking.IsCode(err, booking.EUNAUTHORIZED) {
		t.Errorf("customer token accepted by the console: %v", err)
	}
	if _, err := customer.Verify(stok); !booking.IsCode(err, booking.EUNAUTHORIZED) {
		t.Errorf("console token accepted as a customer's: %v", err)
	}
	// The same prefix with the customer's key, or another admin token's key, fails too.
	forged := &Signer{Secret: key, Prefix: "c1.", Now: clock(&now)}
	ftok, _, _ := forged.Issue("sid-1")
	if _, err := console.Verify(ftok); !booking.IsCode(err, booking.EUNAUTHORIZED) {
		t.Errorf("console token signed with SESSION_SECRET itself accepted: %v", err)
	}
	rotated := &Signer{Secret: DeriveKey(key, "console session", []byte("new-admin-token")), Prefix: "c1.", Now: clock(&now)}
	if _, err := rotated.Verify(stok); !booking.IsCode(err, booking.EUNAUTHORIZED) {
		t.Errorf("a new ADMIN_TOKEN still accepts the old session: %v", err)
	}
}
