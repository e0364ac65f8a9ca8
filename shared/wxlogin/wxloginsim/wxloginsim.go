// Package wxloginsim is a local stand-in for WeChat's server API, for tests and local
// development: code2session (login), stable_token (access tokens) and
// message/subscribe/send (subscribe messages, listed at GET /sim/messages) and
// wxa/business/getuserphonenumber (phone codes issued by PhoneCode). It
// answers like WeChat: HTTP 200 with JSON, errors as errcode/errmsg. The openid is
// derived from the appid and the code, so the same code always logs in the same
// customer.
package wxloginsim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Mode selects how the simulator answers, so tests can exercise WeChat's failures.
type Mode int

const (
	Normal      Mode = iota // answer like WeChat
	Garbage                 // HTTP 200 with a body that is not JSON
	Busy                    // errcode -1, "system error"
	Hang                    // answer nothing until the caller gives up
	Unavailable             // HTTP 503
)

// Server is an http.Handler serving GET /sns/jscode2session, POST
// /cgi-bin/stable_token, POST /cgi-bin/message/subscribe/send, POST
// /wxa/business/getuserphonenumber and GET /sim/messages. A Mode other than
// Normal applies to all but the last: WeChat down is down for all.
type Server struct {
	AppID     string
	AppSecret string
	// RejectReuse makes a code usable once, like WeChat (errcode 40163 the second time).
	RejectReuse bool
	// Now is the simulator's clock for token expiry and message times; nil: time.Now.
	Now func() time.Time

	mu    sync.Mutex
	mode  Mode
	used  map[string]bool
	calls int
	stop  chan struct{} // closed by Close: releases hung requests
	msg   messaging
	phone phones
}

// New returns a simulator that accepts the given app credentials.
func New(appID, appSecret string) *Server {
	return &Server{AppID: appID, AppSecret: appSecret}
}

// SetMode changes how the following requests are answered.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

// Close releases requests held in Hang mode, so that a server shutting down does not
// wait for their callers to give up. Later Hang requests return at once.
func (s *Server) Close() {
	ch := s.stopped()
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *Server) stopped() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		s.stop = make(chan struct{})
	}
	return s.stop
}

// Calls returns how many code2session requests have been received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// OpenID returns the openid the simulator gives for code under appID.
func OpenID(appID, code string) string {
	sum := sha256.Sum256([]byte(appID + code))
	return "o" + hex.EncodeToString(sum[:])[:27]
}

func sessionKey(appID, code string) string {
	sum := sha256.Sum256([]byte("session_key:" + appID + code))
	return hex.EncodeToString(sum[:16])
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/sns/jscode2session":
		s.code2Session(w, r)
	case "/cgi-bin/stable_token":
		s.stableToken(w, r)
	case "/cgi-bin/message/subscribe/send":
		s.subscribeSend(w, r)
	case "/wxa/business/getuserphonenumber":
		s.phoneNumber(w, r)
	case "/sim/messages":
		s.listMessages(w, r)
	default:
		http.NotFound(w, r)
	}
}

// failed answers the request as the current mode says and reports whether it did;
// in Normal mode it does nothing.
func (s *Server) failed(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	switch mode {
	case Garbage:
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>502 Bad Gateway</html>"))
	case Busy:
		writeJSON(w, errBody(-1, "system error"))
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.stopped():
		}
	case Unavailable:
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
	default:
		return false
	}
	return true
}

func (s *Server) code2Session(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.failed(w, r) {
		return
	}

	q := r.URL.Query()
	appID, secret, code := q.Get("appid"), q.Get("secret"), q.Get("js_code")
	switch {
	case appID == "":
		writeJSON(w, errBody(41002, "appid missing"))
	case appID != s.AppID:
		writeJSON(w, errBody(40013, "invalid appid"))
	case secret == "":
		writeJSON(w, errBody(41004, "appsecret missing"))
	case secret != s.AppSecret:
		writeJSON(w, errBody(40125, "invalid appsecret"))
	case q.Get("grant_type") != "authorization_code":
		writeJSON(w, errBody(40002, "invalid grant_type"))
	case code == "":
		writeJSON(w, errBody(41008, "missing code"))
	case strings.HasPrefix(code, "bad"):
		writeJSON(w, errBody(40029, "invalid code"))
	case strings.HasPrefix(code, "risky"):
		writeJSON(w, errBody(40226, "high risk user"))
	case s.reused(code):
		writeJSON(w, errBody(40163, "code been used"))
	default:
		writeJSON(w, map[string]any{"openid": OpenID(appID, code), "session_key": sessionKey(appID, code)})
	}
}

// reused records code and reports whether it was seen before, when RejectReuse is on.
func (s *Server) reused(code string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.RejectReuse {
		return false
	}
	if s.used == nil {
		s.used = map[string]bool{}
	}
	if s.used[code] {
		return true
	}
	s.used[code] = true
	return false
}

func errBody(code int, msg string) map[string]any {
	return map[string]any{"errcode": code, "errmsg": msg + ", rid: sim"}
}

// writeJSON answers 200, as WeChat does even for errors.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; encoding=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}
