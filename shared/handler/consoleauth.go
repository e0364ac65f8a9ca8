package handler

// The console's authentication: sign-in by name and password (the built-in
// owner: admin and ADMIN_TOKEN), the signed session cookie naming who signed in,
// CSRF, sign-out, and the middleware in front of every console page and of the
// JSON admin API's cookie sign-in. The pages themselves (package console)
// receive an authenticated request and know nothing of keys or cookies.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/instance"
	"salon/shared/service"
	"salon/shared/session"
)

const (
	// consoleSessionTTL is how long a sign-in lasts: a working day at the salon.
	consoleSessionTTL = 12 * time.Hour
	// csrfField is the hidden form field of every change the console posts.
	csrfField = "csrf"

	sessionPrefix = "c2."
	// The purposes of the keys derived from SESSION_SECRET and ADMIN_TOKEN:
	// changing either secret ends every session and every CSRF token. (v2: the
	// session names its staff member; v1 sessions were all the owner's.)
	sessionPurpose = "salon console session v2"
	csrfPurpose    = "salon console csrf v2"
)

// consoleSession is a signed-in console session: its id (what sign-out
// records), who it is of, and its CSRF token.
type consoleSession struct {
	ID        string
	ExpiresAt time.Time
	Staff     booking.Staff
	csrf      string
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

// issue starts a session of st and answers it with its cookie token.
func (k *keys) issue(st booking.Staff) (*consoleSession, string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	token, exp, err := k.signer.Issue(sessionSubject(id, st))
	if err != nil {
		return nil, "", err
	}
	return &consoleSession{ID: id, ExpiresAt: exp, Staff: st, csrf: k.csrfOf(id)}, token, nil
}

// verify checks a cookie token: signature and expiry here, then the service
// says whose it is (not signed out; the account enabled and unchanged).
func (k *keys) verify(ctx context.Context, d *instance.Deps, token string) (*consoleSession, error) {
	sub, exp, err := k.signer.VerifyExpiry(token)
	if err != nil {
		return nil, err
	}
	id, staffID, stamp, err := parseSessionSubject(sub)
	if err != nil {
		return nil, err
	}
	st, err := d.Svc.ConsoleSession(ctx, id, staffID, stamp)
	if err != nil {
		return nil, err
	}
	return &consoleSession{ID: id, ExpiresAt: exp, Staff: st, csrf: k.csrfOf(id)}, nil
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
func checkAPISession(r *http.Request, d *instance.Deps) (booking.Staff, error) {
	k, err := keysOf(d, nil)
	if err != nil {
		return booking.Staff{}, err
	}
	s, err := k.verify(r.Context(), d, cookieToken(r))
	if err != nil {
		return booking.Staff{}, err
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return s.Staff, nil
	}
	if err := s.checkCSRF(r.Header.Get(console.CSRFHeader)); err != nil {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "session cookie without the CSRF header on %s", r.Method)
	}
	return s.Staff, nil
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

// consoleRoutes adds the console to the admin function's router: sign-in,
// sign-out and changing one's password here, the pages behind the
// authentication their route asks for. A page the route marks as one action's
// (the staff accounts) is refused with FORBIDDEN to a role that may not take
// it; every change is allowed or refused again by the service.
func (s *Server) consoleRoutes(rt *apigw.Router) {
	c := &console.Console{}
	rt.HandleFunc("GET /admin/login", s.consoleSignedOut(s.consoleLoginPage))
	rt.HandleFunc("POST /admin/login", s.consoleSignedOut(s.consoleLogin))
	rt.HandleFunc("POST /admin/logout", s.consoleSignedIn(true, "", s.consoleLogout))
	rt.HandleFunc("POST /admin/password", s.consoleSignedIn(true, "", s.consolePassword))
	for _, route := range c.Routes() {
		switch route.Access {
		case console.Asset:
			rt.HandleFunc(route.Pattern, route.Asset)
		case console.SignedIn, console.Change:
			page := route.Page
			rt.HandleFunc(route.Pattern, s.consoleSignedIn(route.Access == console.Change, route.Needs,
				func(w http.ResponseWriter, q *console.Request, _ *consoleSession, _ *keys) { page(w, q) }))
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
			h(w, console.NewRequest(r, d, nil, "", nil), k)
		}
	}
}

// consoleSignedIn serves a page that needs a session: without one a view sends
// the browser to sign in, and a change is refused. A change (a form post) must
// also carry the session's CSRF token. Neither failure says more than that the
// change was refused. needs, when set, is the action the page is for: a role
// that may not take it gets FORBIDDEN before the page runs. The request's
// context names the session's staff member, by whose role the service allows.
func (s *Server) consoleSignedIn(change bool, needs booking.AdminAction, h func(w http.ResponseWriter, q *console.Request, sess *consoleSession, k *keys)) http.HandlerFunc {
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
		r = r.WithContext(service.WithStaff(r.Context(), sess.Staff))
		if needs != "" {
			if err := sess.Staff.Role.Allow(needs); err != nil {
				console.FailPage(w, console.NewRequest(r, d, &sess.Staff, sess.csrf, nil), err)
				return
			}
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
		h(w, console.NewRequest(r, d, &sess.Staff, sess.csrf, form), sess, k)
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
	console.RenderLogin(w, q, http.StatusOK, "", 0)
}

// consoleLogin signs in by name and password (the service checks them and
// counts failures). A wrong password, an unknown name and a disabled account get
// the same page and words; a locked name gets 429 with Retry-After.
func (s *Server) consoleLogin(w http.ResponseWriter, q *console.Request, k *keys) {
	r, d := q.HTTP(), q.Deps()
	form, err := console.ParseForm(r)
	if err != nil {
		console.Fail(w, r, d, err)
		return
	}
	name := strings.TrimSpace(form.Get("name"))
	st, err := d.Svc.SignIn(r.Context(), name, form.Get("password"), signInAddress(r), d.Cfg.AdminToken)
	var locked *booking.Error
	switch {
	case booking.IsCode(err, booking.EUNAUTHORIZED):
		apigw.Logger(r.Context()).Warn("console sign-in refused")
		console.RenderLogin(w, q, http.StatusUnauthorized, name, 0)
		return
	case errors.As(err, &locked) && locked.Code == booking.ETOOMANYATTEMPTS:
		apigw.Logger(r.Context()).Warn("console sign-in of a locked name")
		w.Header().Set("Retry-After", strconv.Itoa(locked.RetryAfter))
		console.RenderLogin(w, q, http.StatusTooManyRequests, name, locked.RetryAfter)
		return
	case err != nil:
		console.Fail(w, r, d, d.Svc.Classify(err))
		return
	}
	if err := startSession(w, r, k, *st); err != nil {
		console.Fail(w, r, d, err)
		return
	}
	console.Redirect(w, "./")
}

// signInAddress is the client address a sign-in is counted under: the source
// address the gateway reports (apigw puts API Gateway's requestContext.sourceIp
// in RemoteAddr), never X-Forwarded-For or another header the client writes,
// which a guesser would set anew on every try.
func signInAddress(r *http.Request) string { return booking.SignInAddress(r.RemoteAddr) }

// startSession issues a session of st and sets its cookie.
func startSession(w http.ResponseWriter, r *http.Request, k *keys, st booking.Staff) error {
	sess, token, err := k.issue(st)
	if err != nil {
		return err
	}
	apigw.Logger(r.Context()).Info("console sign-in", "session", sess.ID[:6], "actor", st.Actor())
	w.Header().Set("Set-Cookie", sessionCookie(token, overHTTPS(r), sess.ExpiresAt))
	return nil
}

// consolePassword changes the signed-in person's own password: the service
// checks her current one (a wrong one counts as a failed sign-in of her name
// from this address; a locked name is 429 with Retry-After), makes the change
// only if her account is unchanged since her session began (else 401: an
// owner's reset ended the session) and ends her sessions; this browser gets a
// new session of the changed account, so she stays signed in here and nowhere
// else.
func (s *Server) consolePassword(w http.ResponseWriter, q *console.Request, _ *consoleSession, k *keys) {
	r, d := q.HTTP(), q.Deps()
	form := q.Form()
	if form.Get("new") != form.Get("again") {
		console.PasswordOutcome(w, "mismatch")
		return
	}
	st, err := d.Svc.ChangeMyPassword(r.Context(), form.Get("current"), form.Get("new"), signInAddress(r))
	var locked *booking.Error
	switch {
	case errors.As(err, &locked) && locked.Code == booking.ETOOMANYATTEMPTS:
		apigw.Logger(r.Context()).Warn("console password change of a locked name")
		w.Header().Set("Retry-After", strconv.Itoa(locked.RetryAfter))
		console.FailPage(w, q, err)
		return
	case err != nil:
		err = d.Svc.Classify(err)
		if booking.IsCode(err, booking.EBADREQUEST) {
			console.PasswordOutcome(w, "refused")
			return
		}
		console.Fail(w, r, d, err)
		return
	}
	if err := startSession(w, r, k, *st); err != nil {
		// The password is changed and this session ended with it: sign in again.
		apigw.Logger(r.Context()).Error("console session after a password change", "err", err.Error())
		console.Redirect(w, "login")
		return
	}
	console.PasswordOutcome(w, "ok")
}

// consoleLogout ends the session: the browser drops the cookie, and the session
// is recorded as ended so that a copy of the cookie is refused too.
func (s *Server) consoleLogout(w http.ResponseWriter, q *console.Request, sess *consoleSession, _ *keys) {
	r, d := q.HTTP(), q.Deps()
	if err := d.Svc.EndConsoleSession(r.Context(), sess.ID, sess.ExpiresAt); err != nil {
		console.Fail(w, r, d, err)
		return
	}
	w.Header().Set("Set-Cookie", sessionCookie("", overHTTPS(r), time.Time{}))
	console.Redirect(w, "login")
}
