// Package clstest is a local stand-in for the CLS cloud API endpoint
// (cls.tencentcloudapi.com, action UploadLog) for tests. It checks requests the way the
// cloud API 3.0 does: the TC3-HMAC-SHA256 signature, the timestamp window, the session
// token, the action and version headers, then decodes the LogGroupList body and keeps
// every log. Answers use the cloud API JSON shape, so the real SDK parses them.
package clstest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"salon/shared/cls"
)

// Limits the server enforces, as documented for UploadLog.
const (
	MaxBodyBytes  = 5 << 20
	MaxClockSkew  = 5 * time.Minute // the cloud API's timestamp window
	maxLogsPerReq = 10000
)

// Error codes the server answers with, as the cloud API names them.
const (
	CodeInternalError        = "InternalError"
	CodeInvalidAuthorization = "AuthFailure.InvalidAuthorization"
	CodeSecretIDNotFound     = "AuthFailure.SecretIdNotFound"
	CodeSignatureFailure     = "AuthFailure.SignatureFailure"
	CodeSignatureExpire      = "AuthFailure.SignatureExpire"
	CodeTokenFailure         = "AuthFailure.TokenFailure"
	CodeInvalidAction        = "InvalidAction"
	CodeNoSuchVersion        = "NoSuchVersion"
	CodeMissingParameter     = "MissingParameter"
	CodeInvalidParameter     = "InvalidParameter"
	CodeUnsupportedProtocol  = "UnsupportedProtocol"
	CodeTopicNotExist        = "ResourceNotFound.TopicNotExist"

	// CodeClientClosed is clstest's own: it records a request whose client gave up
	// while it waited in SetDelay or the hook. No answer reaches the client.
	CodeClientClosed = "clstest.ClientClosed"
)

const statusClientClosed = 499

// Request is what the server saw of one request, accepted or not.
type Request struct {
	RequestID string
	Action    string
	Version   string
	Region    string
	SecretID  string // from the Authorization credential
	Token     string // X-TC-Token
	TopicID   string // X-CLS-TopicId
	Header    http.Header
	Groups    []cls.LogGroup // the decoded body; nil when rejected before decoding
	Status    int            // HTTP status answered
	ErrorCode string         // "" when accepted
	ErrorMsg  string
}

// Log is one stored log with where it came from.
type Log struct {
	RequestID string
	TopicID   string
	Source    string
	cls.Log
}

// Server is an http.Handler; Start runs it on a local port.
type Server struct {
	// URL is set by Start, e.g. "http://127.0.0.1:PORT"; use it as cls.Config.Endpoint.
	URL string

	ts *httptest.Server

	mu        sync.Mutex
	secretID  string
	secretKey string
	token     string
	topicID   string
	now       func() time.Time
	down      bool
	failNext  int
	delay     time.Duration
	hook      func(*http.Request) error
	requests  []Request
	logs      []Log
}

// NewServer returns a server that accepts requests signed with secretID/secretKey,
// any session token (see SetToken) and any non-empty topic (see SetTopicID).
func NewServer(secretID, secretKey string) *Server {
	return &Server{secretID: secretID, secretKey: secretKey, now: time.Now}
}

// Start serves on a local port over plain HTTP and sets URL.
func (s *Server) Start() {
	s.ts = httptest.NewServer(s)
	s.URL = s.ts.URL
}

// Close stops a started server, waiting for requests in flight.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// SetCredential replaces the accepted keys and token, as when SCF rotates them.
func (s *Server) SetCredential(secretID, secretKey, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secretID, s.secretKey, s.token = secretID, secretKey, token
}

// SetToken makes X-TC-Token required to equal token; "" accepts any token.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetTopicID makes the server answer TopicNotExist for any other topic; "" accepts any.
func (s *Server) SetTopicID(topicID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.topicID = topicID
}

// SetNow replaces the clock used for the timestamp window.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetDown makes every request fail with HTTP 503 and an InternalError body, like an
// unavailable service, until SetDown(false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// FailNext makes the next n requests fail with the cloud API's InternalError answer
// (HTTP 200 with an Error object, as the real API reports errors).
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// SetDelay makes each request wait d before it is handled, or until the client gives
// up on it, whichever comes first.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// SetHook calls hook at the start of every request, before any check. The hook may
// block (for instance on <-r.Context().Done(), which ends when the client gives up);
// a non-nil error answers InternalError with its message. nil removes the hook.
func (s *Server) SetHook(hook func(r *http.Request) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

// Requests returns a copy of every request seen so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Logs returns a copy of every log accepted so far, in arrival order.
func (s *Server) Logs() []Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Log(nil), s.logs...)
}

// apiError is a rejection to answer in the cloud API shape.
type apiError struct {
	status  int
	code    string
	message string
}

func reject(code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusOK, code: code, message: fmt.Sprintf(format, args...)}
}

// ServeHTTP handles one UploadLog request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	hook, delay := s.hook, s.delay
	s.mu.Unlock()

	rec := Request{
		RequestID: newRequestID(),
		Action:    r.Header.Get("X-TC-Action"),
		Version:   r.Header.Get("X-TC-Version"),
		Region:    r.Header.Get("X-TC-Region"),
		Token:     r.Header.Get("X-TC-Token"),
		TopicID:   r.Header.Get("X-CLS-TopicId"),
		Header:    r.Header.Clone(),
	}

	// The body is read before any wait: net/http notices a client that gives up (and
	// ends r.Context()) only once the body has been consumed.
	body, bodyErr := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))

	var aerr *apiError
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	if hook != nil {
		if err := hook(r); err != nil {
			aerr = reject(CodeInternalError, "%v", err)
		}
	}
	if aerr == nil && r.Context().Err() != nil {
		// The client gave up while the request waited: nothing is stored, so a test of
		// a slow CLS sees no half-accepted request.
		aerr = &apiError{status: statusClientClosed, code: CodeClientClosed, message: "the client closed the request"}
	}
	var logs []Log
	if aerr == nil {
		aerr, logs = s.handle(r, body, bodyErr, &rec)
	}

	s.mu.Lock()
	if aerr != nil {
		logs = nil
		rec.Status, rec.ErrorCode, rec.ErrorMsg = aerr.status, aerr.code, aerr.message
	} else {
		rec.Status = http.StatusOK
	}
	s.requests = append(s.requests, rec)
	s.logs = append(s.logs, logs...)
	s.mu.Unlock()

	writeResponse(w, rec.RequestID, aerr)
}

// handle checks and decodes one request. The down and fail-next knobs come first, as
// an unavailable service answers before looking at a request.
func (s *Server) handle(r *http.Request, body []byte, bodyErr error, rec *Request) (*apiError, []Log) {
	s.mu.Lock()
	secretID, secretKey, token, topicID, now, down := s.secretID, s.secretKey, s.token, s.topicID, s.now, s.down
	failing := s.failNext > 0
	if failing && !down {
		s.failNext--
	}
	s.mu.Unlock()

	if down {
		return &apiError{status: http.StatusServiceUnavailable, code: CodeInternalError, message: "service unavailable (clstest: down)"}, nil
	}
	if failing {
		return reject(CodeInternalError, "internal error (clstest: FailNext)"), nil
	}
	if r.Method != http.MethodPost {
		return reject(CodeUnsupportedProtocol, "UploadLog accepts POST only, got %s", r.Method), nil
	}
	if bodyErr != nil {
		return reject(CodeInvalidParameter, "read body: %v", bodyErr), nil
	}
	if len(body) > MaxBodyBytes {
		return reject(CodeInvalidParameter, "body exceeds %d bytes", MaxBodyBytes), nil
	}

	auth, aerr := parseAuthorization(r.Header.Get("Authorization"))
	if aerr != nil {
		return aerr, nil
	}
	rec.SecretID = auth.secretID
	if aerr := verifySignature(r, body, auth, cls.Service, secretID, secretKey, now()); aerr != nil {
		return aerr, nil
	}
	if token != "" && rec.Token != token {
		return reject(CodeTokenFailure, "the session token is invalid"), nil
	}
	if rec.Action != cls.Action {
		return reject(CodeInvalidAction, "action %q is not supported (clstest knows %s only)", rec.Action, cls.Action), nil
	}
	if rec.Version != cls.Version {
		return reject(CodeNoSuchVersion, "version %q does not exist for %s", rec.Version, cls.Action), nil
	}
	if rec.Region == "" {
		return reject(CodeMissingParameter, "X-TC-Region is missing"), nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/octet-stream" {
		return reject(CodeInvalidParameter, "Content-Type must be application/octet-stream, got %q", ct), nil
	}
	if rec.TopicID == "" {
		return reject(CodeMissingParameter, "X-CLS-TopicId is missing"), nil
	}
	if topicID != "" && rec.TopicID != topicID {
		return reject(CodeTopicNotExist, "topic %s does not exist", rec.TopicID), nil
	}
	if c := r.Header.Get("X-CLS-CompressType"); c != "" {
		return reject(CodeInvalidParameter, "clstest accepts uncompressed bodies only, got X-CLS-CompressType %q", c), nil
	}

	groups, err := cls.DecodeLogGroupList(body)
	if err != nil {
		return reject(CodeInvalidParameter, "%v", err), nil
	}
	rec.Groups = groups
	var logs []Log
	for _, g := range groups {
		for _, l := range g.Logs {
			for _, c := range l.Contents {
				if c.Key == "" || strings.HasPrefix(c.Key, "_") {
					return reject(CodeInvalidParameter, "log key %q is empty or starts with _", c.Key), nil
				}
			}
			logs = append(logs, Log{RequestID: rec.RequestID, TopicID: rec.TopicID, Source: g.Source, Log: l})
		}
	}
	if len(logs) > maxLogsPerReq {
		return reject(CodeInvalidParameter, "%d logs in one request, at most %d", len(logs), maxLogsPerReq), nil
	}
	return nil, logs
}

func writeResponse(w http.ResponseWriter, requestID string, aerr *apiError) {
	type errObj struct {
		Code    string `json:"Code"`
		Message string `json:"Message"`
	}
	var body struct {
		Response struct {
			Error     *errObj `json:"Error,omitempty"`
			RequestID string  `json:"RequestId"`
		} `json:"Response"`
	}
	body.Response.RequestID = requestID
	status := http.StatusOK
	if aerr != nil {
		body.Response.Error = &errObj{Code: aerr.code, Message: aerr.message}
		status = aerr.status
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-TC-RequestId", requestID)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
