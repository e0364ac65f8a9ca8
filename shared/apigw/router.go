package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tencentyun/scf-go-lib/functioncontext"

	"salon/shared/booking"
	"salon/shared/logctx"
)

// Router serves the requests of one SCF function: an http.ServeMux with the
// function's routes, behind the middleware every request goes through (the body
// limit, panic recovery, the answers to paths and methods no route serves, the one
// log line). It is an http.Handler, so the same handlers run under httptest or any
// HTTP server; Invoke is the adapter for the SCF event function.
type Router struct {
	function string
	logger   *slog.Logger
	mux      *http.ServeMux
	routes   []string
	methods  map[string]bool
}

// NewLogger returns the JSON logger every function should log with: one flat object
// per line on w, which is what CLS indexes.
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, nil))
}

// NewRouter returns a router for the named function. A nil logger logs JSON to stdout.
func NewRouter(function string, logger *slog.Logger) *Router {
	if logger == nil {
		logger = NewLogger(os.Stdout)
	}
	return &Router{function: function, logger: logger, mux: http.NewServeMux(), methods: map[string]bool{}}
}

// Handle registers h for an http.ServeMux pattern "METHOD /path", such as
// "POST /bookings/{id}/cancel" (r.PathValue("id") in the handler). Every route
// names its method, and none a host: a Function URL's host is not ours to route
// on. A path ending in "/" would match its whole subtree; end it with "{$}" to
// match that path only. Handle panics on a malformed or conflicting pattern (as
// http.ServeMux does): that is a programming error found at start-up.
func (rt *Router) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		panic("apigw: pattern must be \"METHOD /path\": " + pattern)
	}
	method = strings.ToUpper(method)
	route := strings.TrimSuffix(path, "{$}")
	rt.mux.Handle(method+" "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := stateOf(r.Context()).enter(route, r.Method)
		h.ServeHTTP(w, r.WithContext(logctx.With(r.Context(), log)))
	}))
	rt.routes = append(rt.routes, method+" "+route)
	rt.methods[method] = true
}

// HandleFunc registers a handler function, as Handle does.
func (rt *Router) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	rt.Handle(pattern, http.HandlerFunc(h))
}

// Routes lists what the router serves, "METHOD /path" in the order they were
// registered (an exact-match "{$}" shown as the path it matches), so that the
// documentation can be checked against the code (infra/doccheck) without a
// request being made.
func (rt *Router) Routes() []string { return slices.Clone(rt.routes) }

// reqState is the per-request holder ServeHTTP puts in the context, through which
// handlers add fields to the request's log line.
type reqState struct {
	mu        sync.Mutex
	bookingID int64
	logger    *slog.Logger
	base      *slog.Logger
	route     string
	err       error
	w         *answerWriter
}

type stateKey struct{}

func stateOf(ctx context.Context) *reqState {
	s, _ := ctx.Value(stateKey{}).(*reqState)
	return s
}

// enter records that the request reached one of the router's routes: the log
// line names it, the handler's logger carries it, and what the handler writes
// goes to the client.
func (s *reqState) enter(route, method string) *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.route = route
	s.logger = s.base.With("route", route, "method", method)
	s.w.routed = true
	return s.logger
}

// SetBookingID records the booking a request concerns, for its log line. Outside a
// request served by a Router it does nothing.
func SetBookingID(ctx context.Context, id int64) {
	if s := stateOf(ctx); s != nil {
		s.mu.Lock()
		s.bookingID = id
		s.mu.Unlock()
	}
}

// Logger returns the request-scoped logger (carrying request_id, function, route and
// method), or slog.Default outside a request served by a Router.
func Logger(ctx context.Context) *slog.Logger {
	if s := stateOf(ctx); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.logger != nil {
			return s.logger
		}
	}
	return slog.Default()
}

// answerWriter is the ResponseWriter the middleware hands the mux. Until a route
// is entered it holds what the mux itself writes (its plain-text 404, 405 or
// redirect), for the router to answer in the API's shape instead; from then on
// it passes through, noting the status.
type answerWriter struct {
	w      http.ResponseWriter
	routed bool
	status int // 0 until a header is written
	held   http.Header
}

func (a *answerWriter) Header() http.Header {
	if !a.routed {
		if a.held == nil {
			a.held = http.Header{}
		}
		return a.held
	}
	return a.w.Header()
}

func (a *answerWriter) WriteHeader(status int) {
	if a.status != 0 {
		return // an error after a written answer is logged, not written
	}
	a.status = status
	if a.routed {
		a.w.WriteHeader(status)
	}
}

func (a *answerWriter) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if !a.routed {
		return len(p), nil
	}
	return a.w.Write(p)
}

// requestIDHeaders are where a request id arrives in a plain HTTP request: API
// Gateway's header, then the one SCF gives a web function.
var requestIDHeaders = []string{"X-Api-Requestid", "X-Scf-Request-Id"}

// ServeHTTP serves one request through the middleware and the mux.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var id string
	for _, h := range requestIDHeaders {
		if id = r.Header.Get(h); id != "" {
			break
		}
	}
	rt.serve(w, r, id)
}

// serve is ServeHTTP with the request id already found (the event adapter has
// its own sources for it). It logs exactly one line per request.
func (rt *Router) serve(w http.ResponseWriter, r *http.Request, reqID string) {
	start := time.Now()
	aw := &answerWriter{w: w}
	base := rt.logger.With("request_id", reqID, "function", rt.function)
	st := &reqState{base: base, logger: base, w: aw}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))

	var err error
	if _, berr := ReadBody(r); berr != nil {
		aw.routed = true
		Error(aw, r, berr)
	} else {
		err = rt.dispatch(aw, r)
	}

	st.mu.Lock()
	if err == nil {
		err = st.err
	}
	attrs := []slog.Attr{
		slog.String("request_id", reqID),
		slog.String("function", rt.function),
		slog.String("route", st.route),
		slog.String("method", r.Method),
		slog.String("path", truncate(r.URL.Path, 200)),
		slog.Int("status", aw.status),
	}
	if err != nil {
		attrs = append(attrs, slog.String("code", responseCode(err)), slog.String("error", err.Error()))
		if p, ok := err.(*panicError); ok {
			attrs = append(attrs, slog.String("stack", p.stack))
		}
	}
	if st.bookingID != 0 {
		attrs = append(attrs, slog.Int64("booking_id", st.bookingID))
	}
	st.mu.Unlock()
	level := slog.LevelInfo
	if aw.status >= 500 {
		level = slog.LevelError
	}
	attrs = append(attrs, slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
	// The base logger, not the request one: the fields above are written once each.
	rt.logger.LogAttrs(context.WithoutCancel(r.Context()), level, "request", attrs...)
}

// dispatch runs the mux and answers what no handler answered: a path no route
// serves (404 NOT_FOUND, also for a path the mux would redirect to its clean
// form), a known path with another method (405 BAD_REQUEST with Allow), a
// handler that wrote nothing or panicked (500 INTERNAL; the instance keeps
// serving). The error it returns is the one the log line reports.
func (rt *Router) dispatch(aw *answerWriter, r *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: string(debug.Stack())}
			aw.routed = true
			if aw.status == 0 {
				write(aw, ErrorResponse(err))
			}
		}
	}()
	rt.mux.ServeHTTP(aw, r)
	if aw.routed {
		if aw.status == 0 {
			err = fmt.Errorf("handler for %s %s wrote no answer", r.Method, stateOf(r.Context()).route)
			write(aw, ErrorResponse(err))
		}
		return err
	}
	// The mux answered by itself (held, never sent); answer in the API's shape instead.
	muxStatus := aw.status
	aw.routed, aw.status = true, 0
	if muxStatus == http.StatusMethodNotAllowed {
		err = booking.Errorf(booking.EBADREQUEST, "method %s not allowed", r.Method)
		resp := ErrorResponse(err)
		resp.StatusCode = http.StatusMethodNotAllowed
		resp.Headers["Allow"] = rt.allow(aw.held.Get("Allow"))
		write(aw, resp)
		return err
	}
	err = booking.Errorf(booking.ENOTFOUND, "no route for %s", r.Method)
	write(aw, ErrorResponse(err))
	return err
}

// allow is the mux's Allow header without the HEAD it adds for every GET route:
// only the methods routes were registered with.
func (rt *Router) allow(muxAllow string) string {
	var out []string
	for _, m := range strings.Split(muxAllow, ",") {
		if m = strings.TrimSpace(m); rt.methods[m] {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Invoke is the SCF event function's handler: pass it to Start. It turns the API
// Gateway or Function URL event into an *http.Request, serves it like ServeHTTP,
// and turns what the handler wrote into the integrated response. It never returns
// a Go error, because the platform would answer that as 200 with an error text;
// every failure becomes an error response. It logs exactly one line per request.
func (rt *Router) Invoke(ctx context.Context, raw json.RawMessage) (out Response, _ error) {
	defer func() {
		// Only a bug in this package gets here; handler panics are recovered in dispatch.
		if p := recover(); p != nil {
			rt.logger.Error("request", "function", rt.function, "status", http.StatusInternalServerError,
				"code", booking.EINTERNAL, "error", fmt.Sprintf("apigw panic: %v", p), "stack", string(debug.Stack()))
			out = *ErrorResponse(booking.Errorf(booking.EINTERNAL, "apigw panic"))
		}
	}()
	start := time.Now()
	ev, perr := ParseEvent(raw)
	var reqID string
	if ev != nil {
		reqID = ev.RequestID
	}
	if fc, ok := functioncontext.FromContext(ctx); ok && fc.RequestID != "" {
		reqID = fc.RequestID
	}
	if perr != nil {
		resp := ErrorResponse(perr)
		level := slog.LevelInfo
		if resp.StatusCode >= 500 {
			level = slog.LevelError
		}
		rt.logger.LogAttrs(context.WithoutCancel(ctx), level, "request",
			slog.String("request_id", reqID), slog.String("function", rt.function), slog.String("route", ""),
			slog.String("method", ""), slog.String("path", ""), slog.Int("status", resp.StatusCode),
			slog.String("code", responseCode(perr)), slog.String("error", perr.Error()),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
		return *resp, nil
	}
	rec := &recorder{header: http.Header{}}
	req := ev.HTTPRequest(ctx)
	rt.serve(rec, req, reqID)
	return rec.response(req.Method), nil
}

// recorder collects what a handler writes, for Invoke's integrated response.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *recorder) Header() http.Header { return c.header }

func (c *recorder) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *recorder) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

// response is the integrated response: one value per header (the API's answers
// set each header once), the body as text, or Base64 when it is not UTF-8.
func (c *recorder) response(method string) Response {
	resp := Response{StatusCode: c.status, Headers: make(map[string]string, len(c.header))}
	for k, vs := range c.header {
		resp.Headers[k] = strings.Join(vs, ", ")
	}
	if method == http.MethodHead {
		return resp // as net/http: a HEAD answer has no body
	}
	if b := c.body.Bytes(); utf8.Valid(b) {
		resp.Body = string(b)
	} else {
		resp.Body, resp.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	return resp
}

// panicError is a recovered handler panic.
type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
