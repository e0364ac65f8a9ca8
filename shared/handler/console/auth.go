package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/session"
	"salon/shared/wire"
)

const (
	// CookieName is the console's session cookie.
	CookieName = "salon_console"
	// SessionTTL is how long a sign-in lasts: a working day at the salon.
	SessionTTL = 12 * time.Hour
	// CSRFHeader carries the CSRF token of a change the JSON admin API receives
	// with the session cookie instead of the bearer token.
	CSRFHeader = "X-CSRF-Token"
	// csrfField is the hidden form field of every change the console posts.
	csrfField = "csrf"

	sessionPrefix = "c1."
	// The purposes of the keys derived from SESSION_SECRET and ADMIN_TOKEN:
	// changing either secret ends every session and every CSRF token.
	sessionPurpose = "salon console session v1"
	csrfPurpose    = "salon console csrf v1"
)

// Session is a signed-in console session.
type Session struct {
	ID        string
	ExpiresAt time.Time
	csrf      string
}

// CSRF is the session's CSRF token: every change must carry it.
func (s *Session) CSRF() string { return s.csrf }

// TokenMatches reports whether got is the admin token. Both are hashed first and
// the fixed-length digests compared in constant time, so the answer takes the
// same time whatever the length of a wrong token and however much of it matches.
func TokenMatches(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1 && want != ""
}

// keys holds the console's signer and CSRF key for one configuration.
type keys struct {
	signer *session.Signer
	csrf   []byte
}

func keysOf(d *wire.Deps, now func() time.Time) (*keys, error) {
	if err := d.Cfg.Require("SESSION_SECRET"); err != nil {
		return nil, err
	}
	admin := []byte(d.Cfg.AdminToken)
	return &keys{
		signer: &session.Signer{Secret: session.DeriveKey(d.Cfg.SessionSecret, sessionPurpose, admin),
			Prefix: sessionPrefix, TTL: SessionTTL, Now: now},
		csrf: session.DeriveKey(d.Cfg.SessionSecret, csrfPurpose, admin),
	}, nil
}

func (k *keys) csrfOf(sessionID string) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue starts a session and answers it with its cookie token.
func (k *keys) issue() (*Session, string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	token, exp, err := k.signer.Issue(id)
	if err != nil {
		return nil, "", err
	}
	return &Session{ID: id, ExpiresAt: exp, csrf: k.csrfOf(id)}, token, nil
}

// verify checks a cookie token: signature, expiry, and that the session was
// not signed out.
func (k *keys) verify(ctx context.Context, d *wire.Deps, token string) (*Session, error) {
	id, exp, err := k.signer.VerifyExpiry(token)
	if err != nil {
		return nil, err
	}
	ended, err := d.Svc.ConsoleSessionEnded(ctx, id)
	if err != nil {
		return nil, err
	}
	if ended {
		return nil, booking.Errorf(booking.EUNAUTHORIZED, "console session signed out")
	}
	return &Session{ID: id, ExpiresAt: exp, csrf: k.csrfOf(id)}, nil
}

// checkCSRF compares a submitted CSRF token with the session's.
func (s *Session) checkCSRF(got string) error {
	if !hmac.Equal([]byte(got), []byte(s.csrf)) {
		return booking.Errorf(booking.EFORBIDDEN, "missing or wrong CSRF token")
	}
	return nil
}

// cookieToken returns the session cookie's value, or "".
func cookieToken(r *apigw.Request) string {
	for _, line := range r.Header.Values("Cookie") {
		cs, err := http.ParseCookie(line)
		if err != nil {
			continue
		}
		for _, c := range cs {
			if c.Name == CookieName {
				return c.Value
			}
		}
	}
	return ""
}

// HasSessionCookie reports whether the request carries a console session cookie.
func HasSessionCookie(r *apigw.Request) bool { return cookieToken(r) != "" }

// CheckAPISession authenticates a JSON admin API request by its session cookie.
// A read needs only the cookie; a change must also carry the session's CSRF
// token in the X-CSRF-Token header, so that a page of another site can never
// make the salon's browser change anything (SameSite=Strict already keeps the
// cookie off such requests; the token does not rely on it).
func CheckAPISession(ctx context.Context, d *wire.Deps, r *apigw.Request) error {
	k, err := keysOf(d, nil)
	if err != nil {
		return err
	}
	s, err := k.verify(ctx, d, cookieToken(r))
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if err := s.checkCSRF(r.Header.Get(CSRFHeader)); err != nil {
		return booking.Errorf(booking.EUNAUTHORIZED, "session cookie without the CSRF header on %s", r.Method)
	}
	return nil
}

// sessionCookie is the Set-Cookie value that stores token, or (token "") removes
// the cookie. It has no Path: the browser then scopes it to the directory of the
// sign-in URL, which is the console's directory whatever prefix the deployment
// puts in front of /admin/ (API Gateway's /release stage, a custom domain's
// mapping), and sign-out clears it from the same directory.
func sessionCookie(token string, secure bool, exp time.Time) string {
	c := &http.Cookie{Name: CookieName, Value: token, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(SessionTTL / time.Second)
		c.Expires = exp
	}
	return c.String()
}

// overHTTPS reports whether the browser reached the console over HTTPS, so its
// cookie gets Secure. X-Forwarded-Proto, which a front door that terminates TLS
// sets (the local gateway sets it too), decides either way. API Gateway's
// X-Api-Scheme is trusted only to say https. Without either, only a loopback
// host (local development over plain HTTP) goes without Secure: every deployed
// front door (API Gateway, Function URLs) is HTTPS, and a cookie without Secure
// there could be read off a plain-HTTP request to the same host.
func overHTTPS(r *apigw.Request) bool {
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		return strings.EqualFold(strings.TrimSpace(first), "https")
	}
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Api-Scheme")), "https") {
		return true
	}
	host := r.Header.Get("Host")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return false
	}
	return true
}
