// Package consoleauth is how the salon's console knows who is asking: the
// signed session cookie naming the staff member who signed in, its CSRF token,
// the cookie's attributes, and the admin token's constant-time comparison. It
// keeps no state: a session is a token signed with keys derived from
// SESSION_SECRET and ADMIN_TOKEN, and whose it still is (not signed out, the
// account enabled and unchanged) the service says, through Accounts. Package
// handler puts it in front of the console's pages and of the JSON admin API's
// cookie sign-in; the pages (package console) know nothing of keys or cookies.
package consoleauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/session"
)

const (
	// SessionTTL is how long a sign-in lasts: a working day at the salon.
	SessionTTL = 12 * time.Hour
	// CSRFField is the hidden form field of every change the console posts.
	CSRFField = "csrf"
	// CookieName is the console's session cookie.
	CookieName = "salon_console"
	// CSRFHeader carries the CSRF token of a change the JSON admin API receives
	// with the session cookie instead of the bearer token.
	CSRFHeader = "X-CSRF-Token"

	sessionPrefix = "c2."
	// The purposes of the keys derived from SESSION_SECRET and ADMIN_TOKEN:
	// changing either secret ends every session and every CSRF token. (v2: the
	// session names its staff member; v1 sessions were all the owner's.)
	sessionPurpose = "salon console session v2"
	csrfPurpose    = "salon console csrf v2"
)

// Session is a signed-in console session: its id (what sign-out records),
// when it ends, who it is of, and its CSRF token.
type Session struct {
	ID        string
	ExpiresAt time.Time
	Staff     booking.Staff
	csrf      string
}

// CSRF is the session's CSRF token, which every change must carry.
func (s *Session) CSRF() string { return s.csrf }

// CheckCSRF compares a submitted CSRF token with the session's.
func (s *Session) CheckCSRF(got string) error {
	if !hmac.Equal([]byte(got), []byte(s.csrf)) {
		return booking.Errorf(booking.EFORBIDDEN, "missing or wrong CSRF token")
	}
	return nil
}

// Accounts says whose a session with a good signature is: the service, which
// refuses one signed out, or of an account disabled or changed since
// (stamp is the account's booking.Staff.SessionStamp at the sign-in).
type Accounts interface {
	ConsoleSession(ctx context.Context, id string, staffID, stamp int64) (booking.Staff, error)
}

// The signed subject of a session token is "<id>.<staff id>.<stamp>": the
// session's random id, the account (0: the built-in owner) and the account's
// booking.Staff.SessionStamp at the sign-in, so that a change of the account
// ends the session. The signature covers it all; none of it is secret.
func sessionSubject(id string, st booking.Staff) string {
	stamp := int64(0)
	if st.ID != 0 {
		stamp = st.SessionStamp()
	}
	return id + "." + strconv.FormatInt(st.ID, 10) + "." + strconv.FormatInt(stamp, 10)
}

func parseSessionSubject(sub string) (id string, staffID, stamp int64, err error) {
	parts := strings.Split(sub, ".")
	if len(parts) == 3 && parts[0] != "" {
		staffID, err1 := strconv.ParseInt(parts[1], 10, 64)
		stamp, err2 := strconv.ParseInt(parts[2], 10, 64)
		if err1 == nil && err2 == nil && staffID >= 0 {
			return parts[0], staffID, stamp, nil
		}
	}
	return "", 0, 0, booking.Errorf(booking.EUNAUTHORIZED, "console session: malformed subject")
}

// TokenMatches reports whether got is the admin token. Both are hashed first and
// the fixed-length digests compared in constant time, so the answer takes the
// same time whatever the length of a wrong token and however much of it matches.
func TokenMatches(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1 && want != ""
}

// Keys holds the console's session signer and CSRF key for one configuration.
type Keys struct {
	signer *session.Signer
	csrf   []byte
}

// NewKeys derives the console's keys from SESSION_SECRET and ADMIN_TOKEN; now
// is the sessions' clock (nil: time.Now).
func NewKeys(sessionSecret []byte, adminToken string, now func() time.Time) *Keys {
	admin := []byte(adminToken)
	return &Keys{
		signer: &session.Signer{Secret: session.DeriveKey(sessionSecret, sessionPurpose, admin),
			Prefix: sessionPrefix, TTL: SessionTTL, Now: now},
		csrf: session.DeriveKey(sessionSecret, csrfPurpose, admin),
	}
}

func (k *Keys) csrfOf(sessionID string) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Issue starts a session of st and answers it with its cookie token.
func (k *Keys) Issue(st booking.Staff) (*Session, string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	token, exp, err := k.signer.Issue(sessionSubject(id, st))
	if err != nil {
		return nil, "", err
	}
	return &Session{ID: id, ExpiresAt: exp, Staff: st, csrf: k.csrfOf(id)}, token, nil
}

// Verify checks a cookie token: signature and expiry here, then accounts says
// whose it is.
func (k *Keys) Verify(ctx context.Context, accounts Accounts, token string) (*Session, error) {
	sub, exp, err := k.signer.VerifyExpiry(token)
	if err != nil {
		return nil, err
	}
	id, staffID, stamp, err := parseSessionSubject(sub)
	if err != nil {
		return nil, err
	}
	st, err := accounts.ConsoleSession(ctx, id, staffID, stamp)
	if err != nil {
		return nil, err
	}
	return &Session{ID: id, ExpiresAt: exp, Staff: st, csrf: k.csrfOf(id)}, nil
}

// SessionOf returns the request's valid session, or nil. Why a cookie was
// refused goes to the log only.
func (k *Keys) SessionOf(r *http.Request, accounts Accounts) *Session {
	token := CookieToken(r)
	if token == "" {
		return nil
	}
	sess, err := k.Verify(r.Context(), accounts, token)
	if err != nil {
		apigw.Logger(r.Context()).Info("console session refused", "err", err.Error())
		return nil
	}
	return sess
}

// CheckAPIRequest authenticates a JSON admin API request by its session cookie.
// A read needs only the cookie; a change must also carry the session's CSRF
// token in the X-CSRF-Token header, so that a page of another site can never
// make the salon's browser change anything (SameSite=Strict already keeps the
// cookie off such requests; the token does not rely on it).
func (k *Keys) CheckAPIRequest(r *http.Request, accounts Accounts) (booking.Staff, error) {
	s, err := k.Verify(r.Context(), accounts, CookieToken(r))
	if err != nil {
		return booking.Staff{}, err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return s.Staff, nil
	}
	if err := s.CheckCSRF(r.Header.Get(CSRFHeader)); err != nil {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "session cookie without the CSRF header on %s", r.Method)
	}
	return s.Staff, nil
}

// Start issues a session of st and sets its cookie on w.
func (k *Keys) Start(w http.ResponseWriter, r *http.Request, st booking.Staff) error {
	sess, token, err := k.Issue(st)
	if err != nil {
		return err
	}
	apigw.Logger(r.Context()).Info("console sign-in", "session", sess.ID[:6], "actor", st.Actor())
	w.Header().Set("Set-Cookie", Cookie(token, OverHTTPS(r), sess.ExpiresAt))
	return nil
}

// End tells the browser to drop the session cookie. (Recording the session
// as ended, so that a copy of the cookie is refused too, is the service's.)
func End(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Set-Cookie", Cookie("", OverHTTPS(r), time.Time{}))
}

// CookieToken returns the session cookie's value, or "".
func CookieToken(r *http.Request) string {
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

// Cookie is the Set-Cookie value that stores token, or (token "") removes
// the cookie. It has no Path: the browser then scopes it to the directory of the
// sign-in URL, which is the console's directory whatever prefix the deployment
// puts in front of /admin/ (API Gateway's /release stage, a custom domain's
// mapping), and sign-out clears it from the same directory.
func Cookie(token string, secure bool, exp time.Time) string {
	c := &http.Cookie{Name: CookieName, Value: token, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(SessionTTL / time.Second)
		c.Expires = exp
	}
	return c.String()
}

// OverHTTPS reports whether the browser reached the console over HTTPS, so its
// cookie gets Secure. X-Forwarded-Proto, which a front door that terminates TLS
// sets (the local gateway sets it too), decides either way. API Gateway's
// X-Api-Scheme is trusted only to say https. Without either, only a loopback
// host (local development over plain HTTP) goes without Secure: every deployed
// front door (API Gateway, Function URLs) is HTTPS, and a cookie without Secure
// there could be read off a plain-HTTP request to the same host.
func OverHTTPS(r *http.Request) bool {
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		return strings.EqualFold(strings.TrimSpace(first), "https")
	}
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Api-Scheme")), "https") {
		return true
	}
	host := r.Host
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
