package testkit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/shared/apigw"
	"salon/shared/openapi"
)

// Contract checks requests and answers against the API's OpenAPI document
// (shared/openapi), so that an answer that drifts from what the document
// says fails the test that saw it. The rules, for one exchange:
//
//   - A request the document has no operation for (a path it does not list, or a
//     method the path does not have) must be answered as an unknown route is:
//     404 NOT_FOUND or 405 BAD_REQUEST, in the API's error shape.
//   - Every other answer must have a status the operation lists, and match that
//     answer's content type, schema and headers: a field gained, lost or retyped
//     fails.
//   - A request the document refuses (a missing field, a wrong type, no token)
//     must be refused: its answer is a 4xx the operation lists. Tests send such
//     requests on purpose; what must never happen is that one succeeds. A
//     console page refuses a browser without a session by sending it to sign
//     in (303 to "login"), which counts as that refusal.
//
// When the exchange names its function, an operation of another function is,
// for it, a route it does not serve: that function answers it 404 or 405.
type Contract struct {
	mu        sync.Mutex // the validator's caches are not documented as safe for concurrent use
	v         validator.Validator
	functions []operationFunction // each operation's x-function
	// fragments names, for a request path the document writes with a
	// fragment ("/admin/" as "/admin/#today", openapi.RequestPath), that
	// fragment: the validator's path lookup ignores a trailing slash, so
	// without it a request for /admin/ is checked against /admin.
	fragments map[string]string
}

// operationFunction is the function that serves one operation.
type operationFunction struct {
	method   string
	segments []string // the path template's, "{...}" for a parameter
	function string
}

// NewContract builds the checker of an OpenAPI document given as JSON.
func NewContract(doc []byte) (*Contract, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	v, errs := validator.NewValidator(d, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi document: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("openapi document is not valid OpenAPI: %s", describe(verrs))
	}
	var paths struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &paths); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	c := &Contract{v: v, fragments: map[string]string{}}
	for path, item := range paths.Paths {
		if p, fragment, ok := strings.Cut(path, "#"); ok {
			c.fragments[p] = fragment
		}
		path = openapi.RequestPath(path)
		for method, raw := range item {
			var op struct {
				Function string `json:"x-function"`
			}
			if json.Unmarshal(raw, &op) == nil && op.Function != "" {
				c.functions = append(c.functions, operationFunction{method: strings.ToUpper(method),
					segments: strings.Split(path, "/"), function: op.Function})
			}
		}
	}
	return c, nil
}

// functionOf returns the function serving method and path by the document: of
// the templates that match, the one with the most literal segments, as
// http.ServeMux picks the most specific pattern.
func (c *Contract) functionOf(method, path string) string {
	segs := strings.Split(path, "/")
	best, bestLiterals := "", -1
	for _, of := range c.functions {
		if of.method != method || len(of.segments) != len(segs) {
			continue
		}
		literals := 0
		match := true
		for i, s := range of.segments {
			if strings.HasPrefix(s, "{") {
				continue
			}
			if s != segs[i] {
				match = false
				break
			}
			literals++
		}
		if match && literals > bestLiterals {
			best, bestLiterals = of.function, literals
		}
	}
	return best
}

// TheContract is the checker of the repository's document, built once.
var TheContract = sync.OnceValues(func() (*Contract, error) {
	doc, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	return NewContract(doc)
})

// Exchange is one request and its answer, as the function saw and gave them.
type Exchange struct {
	Function string // the function that answered; "" when not known
	Method   string
	Path     string // without the gateway's stage
	RawQuery string
	Header   http.Header
	Body     []byte

	Status       int
	AnswerHeader http.Header
	Answer       []byte
}

func (x *Exchange) String() string {
	target := x.Path
	if x.RawQuery != "" {
		target += "?" + x.RawQuery
	}
	return fmt.Sprintf("%s %s -> %d %s", x.Method, target, x.Status, truncateBytes(x.Answer, 300))
}

// Check returns what is wrong with the exchange, nothing when it keeps the
// contract.
func (c *Contract) Check(x *Exchange) []string {
	method := x.Method
	if method == http.MethodHead {
		method = http.MethodGet // a HEAD is its GET without the body; see below
	}
	request := func() *http.Request {
		// Built field by field: a test may send a path no URL parser accepts.
		req := (&http.Request{Method: method, URL: &url.URL{Path: x.Path, RawQuery: x.RawQuery},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "function",
			Header: x.Header.Clone(), Body: io.NopCloser(bytes.NewReader(x.Body)), ContentLength: int64(len(x.Body))}).
			WithContext(context.Background())
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.URL.Fragment = c.fragments[x.Path]
		// The API's bodies are JSON whatever the client says (functions/README.md,
		// Conventions), so a body sent without a type is checked as JSON.
		if len(x.Body) > 0 && req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
		return req
	}
	answer := &http.Response{StatusCode: x.Status, Header: x.AnswerHeader.Clone(), Body: io.NopCloser(bytes.NewReader(x.Answer))}
	if answer.Header == nil {
		answer.Header = http.Header{}
	}

	c.mu.Lock()
	reqOK, reqErrs := c.v.ValidateHttpRequestSync(request())
	var respErrs []*errors.ValidationError
	if x.Method != http.MethodHead {
		_, respErrs = c.v.ValidateHttpResponse(request(), answer)
	}
	c.mu.Unlock()

	servedElsewhere := false
	if x.Function != "" {
		fn := c.functionOf(method, x.Path)
		servedElsewhere = fn != "" && fn != x.Function
	}
	if routeMissing(reqErrs) || servedElsewhere {
		if x.Status != http.StatusNotFound && x.Status != http.StatusMethodNotAllowed {
			return []string{fmt.Sprintf("%s: the document has no %s %s served by %s, yet it was answered %d (an unknown route answers 404 or 405): add it to shared/openapi/openapi.yaml",
				x, method, x.Path, orAny(x.Function), x.Status)}
		}
		var e apigw.ErrorBody
		if err := strictJSON(x.Answer, &e); err != nil || (e.Code != "NOT_FOUND" && e.Code != "BAD_REQUEST") || e.Message == "" {
			return []string{fmt.Sprintf("%s: an unknown route's answer is not {\"code\":\"NOT_FOUND\"|\"BAD_REQUEST\",\"message\"}", x)}
		}
		return nil
	}
	var problems []string
	if len(respErrs) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the answer does not match the document: %s", x, describe(respErrs)))
	}
	if !reqOK && (x.Status < 400 || x.Status > 499) && !signInRedirect(x, reqErrs) {
		problems = append(problems, fmt.Sprintf("%s: the document refuses this request (%s), yet it was answered %d, not a 4xx",
			x, describe(reqErrs), x.Status))
	}
	return problems
}

// signInRedirect reports whether the exchange is a console page refusing a
// request that lacks only the session the document asks for: a page sends the
// browser to sign in (303, Location "login") where an API answers 401.
func signInRedirect(x *Exchange, errs []*errors.ValidationError) bool {
	if x.Status != http.StatusSeeOther || x.AnswerHeader.Get("Location") != "login" || len(errs) == 0 {
		return false
	}
	for _, e := range errs {
		if e.ValidationType != helpers.SecurityValidation {
			return false
		}
	}
	return true
}

// routeMissing reports whether the validator found no operation for the request.
func routeMissing(errs []*errors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationType == helpers.PathValidation &&
			(e.ValidationSubType == helpers.ValidationMissing || e.ValidationSubType == helpers.ValidationMissingOperation) {
			return true
		}
	}
	return false
}

func orAny(function string) string {
	if function == "" {
		return "any function"
	}
	return function
}

func describe(errs []*errors.ValidationError) string {
	var parts []string
	for _, e := range errs {
		s := e.Message
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		for _, f := range e.SchemaValidationErrors {
			s += "; " + f.Reason
			if f.FieldPath != "" {
				s += " at " + f.FieldPath
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func truncateBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// Reporter is where a contract breach is told: testing.TB's Errorf.
type Reporter func(format string, args ...any)

// CheckEvent checks one invocation of a function: the API Gateway or Function
// URL event it was given and the integrated response it answered. An event
// that is not an HTTP event must have been refused with a 4xx error.
func (c *Contract) CheckEvent(function string, payload []byte, resp apigw.Response) []string {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			return []string{fmt.Sprintf("answer %d: body is not Base64: %v", resp.StatusCode, err)}
		}
		body = b
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	req, err := apigw.ParseEvent(payload)
	if err != nil {
		var e apigw.ErrorBody
		if resp.StatusCode < 400 || resp.StatusCode > 499 || strictJSON(body, &e) != nil || e.Code == "" {
			return []string{fmt.Sprintf("an event that is not an HTTP event (%v) was answered %d %s", err, resp.StatusCode, truncateBytes(body, 300))}
		}
		return nil
	}
	return c.Check(&Exchange{Function: function, Method: req.Method, Path: req.Path, RawQuery: req.Query.Encode(), Header: req.Header, Body: req.Body,
		Status: resp.StatusCode, AnswerHeader: header, Answer: body})
}

// Handler returns h, the named function's, with every invocation checked;
// report hears each breach.
func (c *Contract) Handler(function string, h Handler, report Reporter) Handler {
	return func(ctx context.Context, event json.RawMessage) (apigw.Response, error) {
		resp, err := h(ctx, event)
		if err == nil {
			for _, p := range c.CheckEvent(function, event, resp) {
				report("contract: %s", p)
			}
		}
		return resp, err
	}
}

// Invoker returns inv with every invocation of an HTTP function checked (the
// release function answers a timer, not a route). What the functions answer is
// checked, not what the gateway itself answers (its own 404 for a route
// serverless.yml lacks, its 504 at serviceTimeout).
func (c *Contract) Invoker(inv localgw.Invoker, report Reporter) localgw.Invoker {
	return checkedInvoker{c: c, inv: inv, report: report}
}

type checkedInvoker struct {
	c      *Contract
	inv    localgw.Invoker
	report Reporter
}

func (ci checkedInvoker) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	out, ierr, err := ci.inv.Invoke(ctx, fn, payload, requestID)
	if err != nil || ierr != nil || fn == "release" {
		return out, ierr, err
	}
	var resp apigw.Response
	if jerr := json.Unmarshal(out, &resp); jerr != nil {
		ci.report("contract: function %s answered no integrated response: %v", fn, jerr)
		return out, ierr, err
	}
	for _, p := range ci.c.CheckEvent(fn, payload, resp) {
		ci.report("contract: function %s: %s", fn, p)
	}
	return out, ierr, err
}

// HTTP returns h, the named function's router, with every request and answer
// checked, for a router served over plain HTTP.
func (c *Contract) HTTP(function string, h http.Handler, report Reporter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			report("contract: reading the request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for _, p := range c.Check(&Exchange{Function: function, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header, Body: body,
			Status: rec.Code, AnswerHeader: rec.Header(), Answer: rec.Body.Bytes()}) {
			report("contract: %s", p)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}
