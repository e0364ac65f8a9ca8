package apigw

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tencentyun/scf-go-lib/functioncontext"

	"salon/shared/booking"
	"salon/shared/logctx"
)

// HandlerFunc answers one routed request. A returned error is answered by
// ErrorResponse and logged; a handler never writes an error answer itself.
type HandlerFunc func(ctx context.Context, r *Request) (*Response, error)

// Router dispatches the events of one SCF function to its handlers. Routes are
// matched on the request path itself, because Function URL events carry no path
// template.
type Router struct {
	function string
	logger   *slog.Logger
	routes   []route
}

type route struct {
	method  string
	pattern string
	segs    []string // "{name}" segments are parameters
	h       HandlerFunc
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
	return &Router{function: function, logger: logger}
}

// Handle registers h for method and pattern. Pattern segments written {name} match
// any one non-empty segment and are put in Request.PathParams. Where two patterns
// match, the one with a literal segment at the first place they differ wins. Handle
// panics on a malformed or duplicate pattern: that is a programming error found at
// start-up.
func (rt *Router) Handle(method, pattern string, h HandlerFunc) {
	if !strings.HasPrefix(pattern, "/") {
		panic("apigw: pattern must start with /: " + pattern)
	}
	method = strings.ToUpper(method)
	segs := strings.Split(pattern, "/")[1:]
	for _, s := range segs {
		if strings.HasPrefix(s, "{") != strings.HasSuffix(s, "}") || s == "{}" {
			panic("apigw: malformed pattern segment " + s + " in " + pattern)
		}
	}
	for _, r := range rt.routes {
		if r.method == method && sameShape(r.segs, segs) {
			panic("apigw: duplicate route " + method + " " + pattern)
		}
	}
	rt.routes = append(rt.routes, route{method: method, pattern: pattern, segs: segs, h: h})
}

// Routes lists what the router serves, "METHOD pattern" in the order they were
// registered, so that the documentation can be checked against the code
// (infra/doccheck) without a request being made.
func (rt *Router) Routes() []string {
	out := make([]string, len(rt.routes))
	for i, r := range rt.routes {
		out[i] = r.method + " " + r.pattern
	}
	return out
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") }

func sameShape(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if isParam(a[i]) != isParam(b[i]) || (!isParam(a[i]) && a[i] != b[i]) {
			return false
		}
	}
	return true
}

// match reports whether the route's pattern matches the split path.
func (r *route) match(segs []string) bool {
	if len(r.segs) != len(segs) {
		return false
	}
	for i, s := range r.segs {
		if isParam(s) {
			if segs[i] == "" {
				return false
			}
		} else if s != segs[i] {
			return false
		}
	}
	return true
}

// moreSpecific reports whether a should win over b when both match one path.
func moreSpecific(a, b *route) bool {
	for i := range a.segs {
		if pa, pb := isParam(a.segs[i]), isParam(b.segs[i]); pa != pb {
			return pb
		}
	}
	return false
}

// find returns the route for method and path, or nil and the methods that path
// allows (none means not found).
func (rt *Router) find(method, path string) (*route, []string) {
	segs := strings.Split(path, "/")[1:]
	var best *route
	var allowed []string
	for i := range rt.routes {
		r := &rt.routes[i]
		if !r.match(segs) {
			continue
		}
		if r.method != method {
			allowed = append(allowed, r.method)
			continue
		}
		if best == nil || moreSpecific(r, best) {
			best = r
		}
	}
	return best, allowed
}

// reqState is the per-request holder Invoke puts in the context, through which
// handlers add fields to the request's log line.
type reqState struct {
	mu        sync.Mutex
	bookingID int64
	logger    *slog.Logger
}

type stateKey struct{}

func stateOf(ctx context.Context) *reqState {
	s, _ := ctx.Value(stateKey{}).(*reqState)
	return s
}

// SetBookingID records the booking a request concerns, for its log line. Outside a
// request routed by Invoke it does nothing.
func SetBookingID(ctx context.Context, id int64) {
	if s := stateOf(ctx); s != nil {
		s.mu.Lock()
		s.bookingID = id
		s.mu.Unlock()
	}
}

// Logger returns the request-scoped logger (carrying request_id, function, route and
// method), or slog.Default outside a request routed by Invoke.
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

// Invoke is the SCF handler: pass it to Start (cloudfunction.Start on SCF). It
// never returns a Go error, because the platform would answer that as 200 with
// an error text; every failure becomes an error response. It logs exactly one line per request.
func (rt *Router) Invoke(ctx context.Context, raw json.RawMessage) (out Response, _ error) {
	defer func() {
		// Only a bug in this package gets here; handler panics are recovered in call.
		if p := recover(); p != nil {
			rt.logger.Error("request", "function", rt.function, "status", http.StatusInternalServerError,
				"code", booking.EINTERNAL, "error", fmt.Sprintf("apigw panic: %v", p), "stack", string(debug.Stack()))
			out = *ErrorResponse(booking.Errorf(booking.EINTERNAL, "apigw panic"))
		}
	}()
	start := time.Now()
	st := &reqState{}
	ctx = context.WithValue(ctx, stateKey{}, st)

	var (
		resp    *Response
		err     error
		pattern string
		method  string
		path    string
		reqID   string
	)
	req, perr := ParseEvent(raw)
	if req != nil {
		method, path, reqID = req.Method, req.Path, req.RequestID
	}
	if fc, ok := functioncontext.FromContext(ctx); ok && fc.RequestID != "" {
		reqID = fc.RequestID
	}
	base := rt.logger.With("request_id", reqID, "function", rt.function)
	st.logger = base

	switch {
	case perr != nil:
		err = perr
	default:
		r, allowed := rt.find(req.Method, req.Path)
		switch {
		case r != nil:
			pattern = r.pattern
			for i, s := range r.segs {
				if isParam(s) {
					req.PathParams[s[1:len(s)-1]] = strings.Split(req.Path, "/")[i+1]
				}
			}
			st.mu.Lock()
			st.logger = base.With("route", pattern, "method", method)
			st.mu.Unlock()
			resp, err = call(logctx.With(ctx, st.logger), r.h, req)
			if err != nil {
				resp = nil // the error decides the answer
			} else if resp == nil {
				err = fmt.Errorf("handler for %s %s returned no response", method, pattern)
			}
		case len(allowed) > 0:
			err = booking.Errorf(booking.EBADREQUEST, "method %s not allowed", method)
			resp = ErrorResponse(err)
			resp.StatusCode = http.StatusMethodNotAllowed
			sort.Strings(allowed)
			resp.Headers["Allow"] = strings.Join(allowed, ", ")
		default:
			err = booking.Errorf(booking.ENOTFOUND, "no route for %s", method)
		}
	}
	if err != nil && resp == nil {
		resp = ErrorResponse(err)
	}
	if resp.Headers == nil {
		resp.Headers = map[string]string{}
	}

	attrs := []slog.Attr{
		slog.String("request_id", reqID),
		slog.String("function", rt.function),
		slog.String("route", pattern),
		slog.String("method", method),
		slog.String("path", truncate(path, 200)),
		slog.Int("status", resp.StatusCode),
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, slog.String("code", responseCode(err)), slog.String("error", err.Error()))
		if p, ok := err.(*panicError); ok {
			attrs = append(attrs, slog.String("stack", p.stack))
		}
	}
	if resp.StatusCode >= 500 {
		level = slog.LevelError
	}
	st.mu.Lock()
	if st.bookingID != 0 {
		attrs = append(attrs, slog.Int64("booking_id", st.bookingID))
	}
	st.mu.Unlock()
	attrs = append(attrs, slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
	// The base logger, not the request one: the fields above are written once each.
	rt.logger.LogAttrs(context.WithoutCancel(ctx), level, "request", attrs...)
	return *resp, nil
}

// panicError is a recovered handler panic.
type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// call runs h, turning a panic into an INTERNAL error so the instance keeps serving.
func call(ctx context.Context, h HandlerFunc, r *Request) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &panicError{value: p, stack: string(debug.Stack())}
		}
	}()
	return h(ctx, r)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
