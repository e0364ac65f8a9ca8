package handler

// The console's authentication: sign-in with ADMIN_TOKEN, the signed session
// cookie, CSRF, sign-out, and the middleware in front of every console page and
// of the JSON admin API's cookie sign-in. The pages themselves (package console)
// receive an authenticated request and know nothing of keys or cookies.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/instance"
	"salon/shared/session"
)

const (
	// consoleSessionTTL is how long a sign-in lasts: a working day at the salon.
	consoleSessionTTL = 12 * time.Hour
	// csrfField is the hidden form field of every change the console posts.
	csrfField = "csrf"

	sessionPrefix = "c1."
	// The purposes of the keys derived from SESSION_SECRET and ADMIN_TOKEN:
	// changing either secret ends every session and every CSRF token.
	sessionPurpose = "salon console session v1"
	csrfPurpose    = "salon console csrf v1"
)

// consoleSession is a signed-in console session.
type consoleSession struct {
	ID        string
	ExpiresAt time.Time
	csrf      string
}

// tokenMatches reports whether got is the admin token. Both are hashed first and
// the fixed-length digests compared in constant time, so the answer takes the
// same time whatever the length of a wrong token and however much of it matches.
func tokenMatches(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1 && want != ""
}

// keys holds the console's signer and CSRF key for one configuration.
type keys struct {
	signer *session.Signer
	csrf   []byte
}

func keysOf(d *instance.Deps, now func() time.Time) (*keys, error) {
	if err := d.Cfg.Require("SESSION_SECRET"); err != nil {
		return nil, err
	}
	admin := []byte(d.Cfg.AdminToken)
	return &keys{
		signer: &session.Signer{Secret: session.DeriveKey(d.Cfg.SessionSecret, sessionPurpose, admin),
			Prefix: sessionPrefix, TTL: consoleSessionTTL, Now: now},
		csrf: session.DeriveKey(d.Cfg.SessionSecret, csrfPurpose, admin),
	}, nil
}

func (k *keys) csrfOf(sessionID string) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue starts a session and answers it with its cookie token.
func (k *keys) issue() (*consoleSession, string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	token, exp, err := k.signer.Issue(id)
	if err != nil {
		return nil, "", err
	}
	return &consoleSession{ID: id, ExpiresAt: exp, csrf: k.csrfOf(id)}, token, nil
}

// verify checks a cookie token: signature, expiry, and that the session was
// not signed out.
func (k *keys) verify(ctx context.Context, d *instance.Deps, token string) (*consoleSession, error) {
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
	return &consoleSession{ID: id, ExpiresAt: exp, csrf: k.csrfOf(id)}, nil
}

// checkCSRF compares a submitted CSRF token with the session's.
func (s *consoleSession) checkCSRF(got string) error {
	if !hmac.Equal([]byte(got), []byte(s.csrf)) {
		return booking.Errorf(booking.EFORBIDDEN, "missing or wrong CSRF token")
	}
	return nil
}

// cookieToken returns the session cookie's value, or "".
func cookieToken(r *http.Request) string {
	for _, line := range r.Header.Values("Cookie") {
		cs, err := http.ParseCookie(line)
		if err != nil {
			continue
		}
		for _, c := range cs {
			if c.Name == console.CookieName {
				return c.Value
			}
		}
	}
	return ""
}

// checkAPISession authenticates a JSON admin API request by its session cookie.
// A read needs only the cookie; a change must also carry the session's CSRF
// token in the X-CSRF-Token header, so that a page of another site can never
// make the salon's browser change anything (SameSite=Strict already keeps the
// cookie off such requests; the token does not rely on it).
func checkAPISession(r *http.Request, d *instance.Deps) error {
	k, err := keysOf(d, nil)
	if err != nil {
		return err
	}
	s, err := k.verify(r.Context(), d, cookieToken(r))
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if err := s.checkCSRF(r.Header.Get(console.CSRFHeader)); err != nil {
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
	c := &http.Cookie{Name: console.CookieName, Value: token, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(consoleSessionTTL / time.Second)
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
func overHTTPS(r *http.Request) bool {
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

// consoleRoutes adds the console to the admin function's router: sign-in and
// sign-out here, the pages behind the authentication their route asks for.
func (s *Server) consoleRoutes(rt *apigw.Router) {
	c := &console.Console{}
	rt.HandleFunc("GET /admin/login", s.consoleSignedOut(s.consoleLoginPage))
	rt.HandleFunc("POST /admin/login", s.consoleSignedOut(s.consoleLogin))
	rt.HandleFunc("POST /admin/logout", s.consoleSignedIn(true, s.consoleLogout))
	for _, route := range c.Routes() {
		switch route.Access {
		case console.Asset:
			rt.HandleFunc(route.Pattern, route.Asset)
		case console.SignedIn, console.Change:
			page := route.Page
			rt.HandleFunc(route.Pattern, s.consoleSignedIn(route.Access == console.Change,
				func(w http.ResponseWriter, q *console.Request, _ *consoleSession) { page(w, q) }))
		}
	}
}

// consoleSetup gets the dependencies and the console's keys. The console needs
// ADMIN_TOKEN (without it the admin function is switched off) and SESSION_SECRET
// (its sessions are signed with it). A failure is answered as the error page.
func (s *Server) consoleSetup(w http.ResponseWriter, r *http.Request) (*instance.Deps, *keys, bool) {
	d, err := s.deps()
	if err != nil {
		console.Fail(w, r, nil, err)
		return nil, nil, false
	}
	if d.Cfg.AdminToken == "" {
		console.Fail(w, r, d, booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: console disabled"))
		return nil, nil, false
	}
	k, err := keysOf(d, nil)
	if err != nil {
		console.Fail(w, r, d, err)
		return nil, nil, false
	}
	return d, k, true
}

// consoleSignedOut serves the sign-in page and its form.
func (s *Server) consoleSignedOut(h func(w http.ResponseWriter, q *console.Request, k *keys)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, k, ok := s.consoleSetup(w, r)
		if ok {
			h(w, console.NewRequest(r, d, "", nil), k)
		}
	}
}

// consoleSignedIn serves a page that needs a session: without one a view sends
// the browser to sign in, and a change is refused. A change (a form post) must
// also carry the session's CSRF token. Neither failure says more than that the
// change was refused.
func (s *Server) consoleSignedIn(change bool, h func(w http.ResponseWriter, q *console.Request, sess *consoleSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, k, ok := s.consoleSetup(w, r)
		if !ok {
			return
		}
		sess := consoleSessionOf(r, d, k)
		if sess == nil && !change {
			console.Redirect(w, "login")
			return
		}
		if sess == nil {
			console.Fail(w, r, d, booking.Errorf(booking.EUNAUTHORIZED, "console change without a session"))
			return
		}
		var form url.Values
		if change {
			var err error
			if form, err = console.ParseForm(r); err == nil {
				err = sess.checkCSRF(form.Get(csrfField))
			}
			if err != nil {
				console.Fail(w, r, d, err)
				return
			}
		}
		h(w, console.NewRequest(r, d, sess.csrf, form), sess)
	}
}

// consoleSessionOf returns the request's valid session, or nil. Why a cookie was
// refused goes to the log only.
func consoleSessionOf(r *http.Request, d *instance.Deps, k *keys) *consoleSession {
	token := cookieToken(r)
	if token == "" {
		return nil
	}
	sess, err := k.verify(r.Context(), d, token)
	if err != nil {
		apigw.Logger(r.Context()).Info("console session refused", "err", err.Error())
		return nil
	}
	return sess
}

func (s *Server) consoleLoginPage(w http.ResponseWriter, q *console.Request, k *keys) {
	r, d := q.HTTP(), q.Deps()
	if consoleSessionOf(r, d, k) != nil {
		console.Redirect(w, "./")
		return
	}
	console.RenderLogin(w, q, http.StatusOK, false)
}

// consoleLogin signs in with ADMIN_TOKEN. A wrong token gets the same page and
// words whatever was wrong with it; the comparison takes the same time.
func (s *Server) consoleLogin(w http.ResponseWriter, q *console.Request, k *keys) {
	r, d := q.HTTP(), q.Deps()
	form, err := console.ParseForm(r)
	if err != nil {
		console.Fail(w, r, d, err)
		return
	}
	if !tokenMatches(form.Get("token"), d.Cfg.AdminToken) {
		apigw.Logger(r.Context()).Warn("console sign-in refused")
		console.RenderLogin(w, q, http.StatusUnauthorized, true)
		return
	}
	sess, token, err := k.issue()
	if err != nil {
		console.Fail(w, r, d, err)
		return
	}
	apigw.Logger(r.Context()).Info("console sign-in", "session", sess.ID[:6])
	w.Header().Set("Set-Cookie", sessionCookie(token, overHTTPS(r), sess.ExpiresAt))
	console.Redirect(w, "./")
}

// consoleLogout ends the session: the browser drops the cookie, and the session
// is recorded as ended so that a copy of the cookie is refused too.
func (s *Server) consoleLogout(w http.ResponseWriter, q *console.Request, sess *consoleSession) {
	r, d := q.HTTP(), q.Deps()
	if err := d.Svc.EndConsoleSession(r.Context(), sess.ID, sess.ExpiresAt); err != nil {
		console.Fail(w, r, d, err)
		return
	}
	w.Header().Set("Set-Cookie", sessionCookie("", overHTTPS(r), time.Time{}))
	console.Redirect(w, "login")
}
