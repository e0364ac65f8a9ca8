package apigw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tencentyun/scf-go-lib/functioncontext"

	"salon/shared/booking"
)

// logBuffer collects the router's log output; slog handlers may write concurrently.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not one JSON object: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func mkEvent(method, path string, headers map[string]string, body string) json.RawMessage {
	ev := map[string]any{
		"httpMethod": method, "path": path, "headers": headers, "body": body,
		"isBase64Encoded": false, "queryString": map[string]any{},
		"requestContext": map[string]any{"requestId": "evt-" + path, "sourceIp": "1.2.3.4"},
	}
	b, _ := json.Marshal(ev)
	return b
}

func testRouter(logs *logBuffer) *Router {
	rt := NewRouter("reserve", NewLogger(logs))
	rt.Handle("GET /bookings/mine", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		WriteJSON(w, http.StatusOK, map[string]string{"route": "mine"})
		return nil
	}))
	rt.Handle("GET /bookings/{id}", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		id, err := PathInt64(r, "id")
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, map[string]any{"route": "one", "id": id})
		return nil
	}))
	rt.Handle("POST /bookings/{id}/pay", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		id, err := PathInt64(r, "id")
		if err != nil {
			return err
		}
		SetBookingID(r.Context(), id)
		Logger(r.Context()).Info("paying")
		WriteJSON(w, http.StatusOK, map[string]any{"route": "pay", "id": id, "token": BearerToken(r) != ""})
		return nil
	}))
	rt.Handle("POST /bookings", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		var in struct {
			SlotID int64 `json:"slotId"`
		}
		if err := DecodeJSON(r, &in); err != nil {
			return err
		}
		return booking.Errorf(booking.ESOLDOUT, "slot %d full", in.SlotID)
	}))
	rt.Handle("POST /panic", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		panic("secret panic detail")
	}))
	rt.Handle("POST /internal", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		SetBookingID(r.Context(), 99)
		return fmt.Errorf("query t_booking: %w", errors.New("connection refused at 10.0.0.5"))
	}))
	rt.Handle("POST /nil", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return nil }))
	rt.Handle("POST /nocontent", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		WriteNoContent(w)
		return nil
	}))
	return rt
}

func TestRouter(t *testing.T) {
	auth := map[string]string{"authorization": "Bearer tok-SENSITIVE-123", "content-type": "application/json"}
	tests := []struct {
		name    string
		raw     json.RawMessage
		status  int
		code    string // error code in the body, "" when not an error
		body    string // a part of the body
		noBody  []string
		route   string
		allow   string
		booking float64
	}{
		{name: "literal beats parameter", raw: mkEvent("GET", "/bookings/mine", auth, ""), status: 200, body: `"route":"mine"`, route: "/bookings/mine"},
		{name: "parameter", raw: mkEvent("GET", "/bookings/12", auth, ""), status: 200, body: `"id":12`, route: "/bookings/{id}"},
		{name: "bad parameter", raw: mkEvent("GET", "/bookings/x1", auth, ""), status: 400, code: booking.EBADREQUEST, route: "/bookings/{id}"},
		{name: "nested parameter", raw: mkEvent("POST", "/bookings/34/pay", auth, ""), status: 200, body: `"id":34`, route: "/bookings/{id}/pay", booking: 34},
		{name: "domain error", raw: mkEvent("POST", "/bookings", auth, `{"slotId":5}`), status: 409, code: booking.ESOLDOUT, body: "手慢了", route: "/bookings"},
		{name: "bad json", raw: mkEvent("POST", "/bookings", auth, `{"slotId":"5"}`), status: 400, code: booking.EBADREQUEST, route: "/bookings"},
		{name: "unknown path", raw: mkEvent("GET", "/nope", auth, ""), status: 404, code: booking.ENOTFOUND},
		{name: "empty parameter segment", raw: mkEvent("POST", "/bookings//pay", auth, ""), status: 404, code: booking.ENOTFOUND},
		{name: "trailing slash", raw: mkEvent("GET", "/bookings/mine/", auth, ""), status: 404, code: booking.ENOTFOUND},
		{name: "wrong method", raw: mkEvent("DELETE", "/bookings", auth, ""), status: 405, code: booking.EBADREQUEST, allow: "POST"},
		{name: "wrong method on parameter route", raw: mkEvent("PUT", "/bookings/5", auth, ""), status: 405, code: booking.EBADREQUEST, allow: "GET"},
		{name: "panic", raw: mkEvent("POST", "/panic", auth, ""), status: 500, code: booking.EINTERNAL, noBody: []string{"secret panic detail", "panic"}, route: "/panic"},
		{name: "internal error", raw: mkEvent("POST", "/internal", auth, ""), status: 500, code: booking.EINTERNAL, noBody: []string{"10.0.0.5", "t_booking", "ignored"}, route: "/internal", booking: 99},
		{name: "nil response", raw: mkEvent("POST", "/nil", auth, ""), status: 500, code: booking.EINTERNAL, route: "/nil"},
		{name: "no content", raw: mkEvent("POST", "/nocontent", auth, ""), status: 204, route: "/nocontent"},
		{name: "malformed event", raw: json.RawMessage(`{"httpMethod":`), status: 400, code: booking.EBADREQUEST},
		{name: "timer event", raw: json.RawMessage(`{"Type":"Timer"}`), status: 400, code: booking.EBADREQUEST},
		{name: "too large", raw: mkEvent("POST", "/bookings", auth, strings.Repeat("a", MaxBodyBytes+1)), status: 413, code: booking.EPAYLOADTOOLARGE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			rt := testRouter(logs)
			resp, err := rt.Invoke(context.Background(), tt.raw)
			if err != nil {
				t.Fatalf("Invoke returned a Go error: %v", err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d; body %s", resp.StatusCode, tt.status, resp.Body)
			}
			if resp.Headers == nil {
				t.Error("nil headers")
			}
			if tt.code != "" {
				var eb ErrorBody
				if err := json.Unmarshal([]byte(resp.Body), &eb); err != nil {
					t.Fatalf("error body %q: %v", resp.Body, err)
				}
				if eb.Code != tt.code || eb.Message == "" {
					t.Errorf("error body = %+v, want code %s", eb, tt.code)
				}
				if tt.code == booking.EINTERNAL && eb.Message != booking.ErrorMessage(errors.New("x")) {
					t.Errorf("internal message = %q", eb.Message)
				}
				if ct := resp.Headers["Content-Type"]; !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type = %q", ct)
				}
			}
			if !strings.Contains(resp.Body, tt.body) {
				t.Errorf("body %s does not contain %s", resp.Body, tt.body)
			}
			for _, s := range tt.noBody {
				if strings.Contains(resp.Body, s) {
					t.Errorf("body %s leaks %q", resp.Body, s)
				}
			}
			if resp.Headers["Allow"] != tt.allow {
				t.Errorf("Allow = %q, want %q", resp.Headers["Allow"], tt.allow)
			}

			// Exactly one request line, flat, with the fields CLS indexes.
			var reqLines []map[string]any
			for _, l := range logs.lines(t) {
				if l["msg"] == "request" {
					reqLines = append(reqLines, l)
				}
			}
			if len(reqLines) != 1 {
				t.Fatalf("%d request log lines:\n%s", len(reqLines), logs)
			}
			line := reqLines[0]
			for k, v := range line {
				switch v.(type) {
				case map[string]any, []any:
					t.Errorf("log field %s is not flat: %v", k, v)
				}
			}
			if line["function"] != "reserve" || line["route"] != tt.route || line["status"] != float64(tt.status) {
				t.Errorf("log line %v: want route %q status %d", line, tt.route, tt.status)
			}
			if _, ok := line["duration_ms"].(float64); !ok {
				t.Errorf("duration_ms missing: %v", line)
			}
			if got, _ := line["code"].(string); got != tt.code {
				t.Errorf("log code = %q, want %q", got, tt.code)
			}
			if got, _ := line["booking_id"].(float64); got != tt.booking {
				t.Errorf("log booking_id = %v, want %v", line["booking_id"], tt.booking)
			}
			if tt.code == "" {
				if _, ok := line["error"]; ok {
					t.Errorf("error logged for success: %v", line)
				}
			}
			if s := logs.String(); strings.Contains(s, "tok-SENSITIVE-123") || strings.Contains(strings.ToLower(s), "authorization") {
				t.Errorf("log leaks the Authorization header: %s", s)
			}
		})
	}
}

func TestRouterLogsInternalDetail(t *testing.T) {
	logs := &logBuffer{}
	resp, _ := testRouter(logs).Invoke(context.Background(), mkEvent("POST", "/internal", nil, ""))
	if strings.Contains(resp.Body, "connection refused") {
		t.Fatalf("detail leaked: %s", resp.Body)
	}
	line := logs.lines(t)[0]
	if e, _ := line["error"].(string); !strings.Contains(e, "connection refused at 10.0.0.5") {
		t.Errorf("log error = %q", e)
	}
	if line["level"] != "ERROR" || line["method"] != "POST" || line["request_id"] != "evt-/internal" {
		t.Errorf("log line %v", line)
	}

	logs = &logBuffer{}
	resp, _ = testRouter(logs).Invoke(context.Background(), mkEvent("POST", "/panic", nil, ""))
	line = logs.lines(t)[0]
	if e, _ := line["error"].(string); !strings.Contains(e, "secret panic detail") {
		t.Errorf("panic not logged: %v", line)
	}
	if s, _ := line["stack"].(string); !strings.Contains(s, "router_test.go") {
		t.Errorf("panic stack not logged: %v", line)
	}
	if resp.StatusCode != 500 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

func TestRouterRequestIDAndHandlerLogger(t *testing.T) {
	logs := &logBuffer{}
	ctx := functioncontext.NewContext(context.Background(), &functioncontext.FunctionContext{RequestID: "scf-invoke-1"})
	resp, err := testRouter(logs).Invoke(ctx, mkEvent("POST", "/bookings/8/pay", map[string]string{"authorization": "Bearer tok-SENSITIVE-123"}, ""))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%+v %v", resp, err)
	}
	lines := logs.lines(t)
	if len(lines) != 2 {
		t.Fatalf("want the handler's line and the request line, got %v", lines)
	}
	for _, l := range lines {
		if l["request_id"] != "scf-invoke-1" || l["function"] != "reserve" {
			t.Errorf("line %v lacks the SCF request id", l)
		}
	}
	if lines[0]["msg"] != "paying" || lines[0]["route"] != "/bookings/{id}/pay" {
		t.Errorf("handler line %v", lines[0])
	}
	if lines[1]["booking_id"] != float64(8) {
		t.Errorf("request line %v", lines[1])
	}
}

func TestOutsideInvoke(t *testing.T) {
	SetBookingID(context.Background(), 1) // no holder: must not panic
	if Logger(context.Background()) == nil {
		t.Fatal("nil logger")
	}
}

func TestErrorResponse(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{booking.Errorf(booking.EBADREQUEST, "x"), 400, booking.EBADREQUEST},
		{booking.Errorf(booking.EUNAUTHORIZED, "x"), 401, booking.EUNAUTHORIZED},
		{booking.Errorf(booking.EFORBIDDEN, "x"), 403, booking.EFORBIDDEN},
		{booking.Errorf(booking.ENOTFOUND, "x"), 404, booking.ENOTFOUND},
		{booking.Errorf(booking.ESOLDOUT, "x"), 409, booking.ESOLDOUT},
		{booking.Errorf(booking.EACTIVEBOOKINGEXISTS, "x"), 409, booking.EACTIVEBOOKINGEXISTS},
		{booking.Errorf(booking.EINVALIDSTATE, "x"), 409, booking.EINVALIDSTATE},
		{booking.Errorf(booking.EPAYLOADTOOLARGE, "x"), 413, booking.EPAYLOADTOOLARGE},
		{booking.Errorf(booking.ESLOTNOTBOOKABLE, "x"), 422, booking.ESLOTNOTBOOKABLE},
		{booking.Errorf(booking.EINTERNAL, "x"), 500, booking.EINTERNAL},
		{booking.Errorf(booking.EUPSTREAM, "x"), 503, booking.EUPSTREAM},
		{booking.Errorf(booking.EUNAVAILABLE, "x"), 503, booking.EUNAVAILABLE},
		{errors.Join(booking.Errorf(booking.EUNAVAILABLE, "x"), errors.New("db down")), 503, booking.EUNAVAILABLE},
		{fmt.Errorf("wrapped: %w", booking.Errorf(booking.ESOLDOUT, "x")), 409, booking.ESOLDOUT},
		{errors.New("db down"), 500, booking.EINTERNAL},
		{&booking.Error{Code: booking.EINTERNAL, Message: "leaky detail"}, 500, booking.EINTERNAL},
		{&booking.Error{Code: "MADE_UP", Message: "leaky detail"}, 500, booking.EINTERNAL},
	}
	for _, tt := range tests {
		resp := ErrorResponse(tt.err)
		var eb ErrorBody
		if err := json.Unmarshal([]byte(resp.Body), &eb); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.status || eb.Code != tt.code || eb.Message == "" {
			t.Errorf("ErrorResponse(%v) = %d %+v", tt.err, resp.StatusCode, eb)
		}
		if strings.Contains(resp.Body, "leaky") || strings.Contains(resp.Body, "db down") || strings.Contains(resp.Body, `"x"`) {
			t.Errorf("ErrorResponse(%v) leaks: %s", tt.err, resp.Body)
		}
		// Only an unavailable database tells the client when to come back.
		if after, ok := resp.Headers["Retry-After"]; ok != (tt.code == booking.EUNAVAILABLE) || (ok && after != RetryAfterSeconds) {
			t.Errorf("ErrorResponse(%v): Retry-After %q (set: %v)", tt.err, after, ok)
		}
	}
}

// A throttled sign-in tells the client how many seconds its lock has left.
func TestErrorResponseRetryAfterOfTheError(t *testing.T) {
	resp := ErrorResponse(fmt.Errorf("sign-in: %w", booking.TooManyAttempts(14*time.Minute+30*time.Second)))
	var eb ErrorBody
	if err := json.Unmarshal([]byte(resp.Body), &eb); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || eb.Code != booking.ETOOMANYATTEMPTS || resp.Headers["Retry-After"] != "870" {
		t.Fatalf("got %d %+v, Retry-After %q", resp.StatusCode, eb, resp.Headers["Retry-After"])
	}
	if strings.Contains(resp.Body, "14m30s") {
		t.Fatalf("the detail leaks: %s", resp.Body)
	}
}

func TestResponseShape(t *testing.T) {
	b, _ := json.Marshal(JSON(201, map[string]int{"a": 1}))
	want := `{"isBase64Encoded":false,"statusCode":201,"headers":{"Content-Type":"application/json; charset=utf-8"},"body":"{\"a\":1}"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if r := JSON(200, make(chan int)); r.StatusCode != 500 || !strings.Contains(r.Body, booking.EINTERNAL) {
		t.Errorf("unmarshalable value: %+v", r)
	}
	b, _ = json.Marshal(NoContent())
	if string(b) != `{"isBase64Encoded":false,"statusCode":204,"headers":{},"body":""}` {
		t.Errorf("NoContent = %s", b)
	}
}

func TestHandlePanicsOnBadPattern(t *testing.T) {
	ok := HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return nil })
	for _, p := range []string{"GET nolead", "/a/b", "GET /a/{b", "GET /a/{}", "GET example.com/a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handle(%q) did not panic", p)
				}
			}()
			NewRouter("x", nil).Handle(p, ok)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate route accepted")
		}
	}()
	rt := NewRouter("x", nil)
	rt.Handle("GET /a/{id}", ok)
	rt.Handle("GET /a/{other}", ok)
}

// TestRoutes: the router lists what it serves, method upper-cased as Handle
// stores it, in the order of registration.
func TestRoutes(t *testing.T) {
	rt := NewRouter("test", nil)
	h := HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { WriteNoContent(w); return nil })
	rt.Handle("post /bookings/{id}/pay", h)
	rt.Handle("GET /bookings/mine", h)
	got := strings.Join(rt.Routes(), ", ")
	if want := "POST /bookings/{id}/pay, GET /bookings/mine"; got != want {
		t.Errorf("Routes() = %s, want %s", got, want)
	}
}

// TestRouterServesHTTP: the router is an http.Handler, and a real HTTP server in
// front of it (httptest here, an SCF web function likewise) gets the answers the
// event adapter gives: the API's 404 and 405, the body limit, a panic's 500, the
// path values, and one log line carrying the request id of the request's header.
func TestRouterServesHTTP(t *testing.T) {
	logs := &logBuffer{}
	srv := httptest.NewServer(testRouter(logs))
	defer srv.Close()
	tests := []struct {
		method, path, body string
		status             int
		code, allow, part  string
	}{
		{"GET", "/bookings/12", "", 200, "", "", `"id":12`},
		{"GET", "/nope", "", 404, booking.ENOTFOUND, "", ""},
		{"GET", "/bookings/mine/", "", 404, booking.ENOTFOUND, "", ""},
		{"PUT", "/bookings/5", "", 405, booking.EBADREQUEST, "GET", ""},
		{"POST", "/bookings", strings.Repeat("a", MaxBodyBytes+1), 413, booking.EPAYLOADTOOLARGE, "", ""},
		{"POST", "/bookings", `{"slotId":5}`, 409, booking.ESOLDOUT, "", ""},
		{"POST", "/panic", "", 500, booking.EINTERNAL, "", ""},
		{"POST", "/nil", "", 500, booking.EINTERNAL, "", ""},
	}
	for _, tt := range tests {
		logs.mu.Lock()
		logs.buf.Reset()
		logs.mu.Unlock()
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		req.Header.Set("X-Api-Requestid", "http-"+tt.path)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Allow") != tt.allow || !strings.Contains(string(b), tt.part) {
			t.Errorf("%s %s: %d Allow %q %s", tt.method, tt.path, resp.StatusCode, resp.Header.Get("Allow"), b)
		}
		if tt.code != "" {
			var eb ErrorBody
			if err := json.Unmarshal(b, &eb); err != nil || eb.Code != tt.code {
				t.Errorf("%s %s: body %s, want code %s", tt.method, tt.path, b, tt.code)
			}
		}
		var reqLines []map[string]any
		for _, l := range logs.lines(t) {
			if l["msg"] == "request" {
				reqLines = append(reqLines, l)
			}
		}
		if len(reqLines) != 1 || reqLines[0]["request_id"] != "http-"+tt.path || reqLines[0]["status"] != float64(tt.status) {
			t.Errorf("%s %s: request lines %v", tt.method, tt.path, reqLines)
		}
	}
}
