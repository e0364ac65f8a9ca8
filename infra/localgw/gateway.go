// Package localgw is the local stand-in for Tencent API Gateway and the SCF timer
// trigger: it reads the routes and timers from serverless.yml, turns each HTTP
// request into the API Gateway event (shared/apigw/README.md, "The events a
// function accepts"), invokes the
// mapped function through an Invoker (scfhost in practice), and turns the
// integrated response back into HTTP.
package localgw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"salon/infra/scfhost"
)

// Invoker runs one invocation of a function; *scfhost.Host is one.
type Invoker interface {
	Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error)
}

// Event is the API Gateway trigger event as SCF delivers it.
type Event struct {
	Body                  string            `json:"body"`
	HeaderParameters      map[string]string `json:"headerParameters"`
	Headers               map[string]string `json:"headers"`
	HTTPMethod            string            `json:"httpMethod"`
	IsBase64Encoded       bool              `json:"isBase64Encoded"`
	Path                  string            `json:"path"`
	PathParameters        map[string]string `json:"pathParameters"`
	QueryString           map[string]any    `json:"queryString"` // string, []string, or true for a bare key
	QueryStringParameters map[string]string `json:"queryStringParameters"`
	RequestContext        RequestContext    `json:"requestContext"`
}

// RequestContext is the event's requestContext.
type RequestContext struct {
	HTTPMethod string         `json:"httpMethod"` // the API's configured method
	Identity   map[string]any `json:"identity"`
	Path       string         `json:"path"` // the API's path template
	RequestID  string         `json:"requestId"`
	ServiceID  string         `json:"serviceId"`
	SourceIP   string         `json:"sourceIp"`
	Stage      string         `json:"stage"`
}

// Response is the integrated response a function answers with.
type Response struct {
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
}

// DefaultMaxBody is the largest request body passed on: SCF's limit for a
// synchronous event is 6 MB.
const DefaultMaxBody = 6 << 20

// Gateway is an http.Handler that plays API Gateway in front of the functions.
type Gateway struct {
	ServiceID    string        // requestContext.serviceId; "service-local" when empty
	Stage        string        // requestContext.stage; "release" when empty
	MaxBody      int64         // DefaultMaxBody when zero
	NewRequestID func() string // request ids; scfhost.NewRequestID when nil

	routes  []compiledRoute
	inv     Invoker
	logMu   sync.Mutex
	log     io.Writer
	pending sync.WaitGroup // invocations still running after a gateway timeout
}

type compiledRoute struct {
	Route
	segs     []string // "" marks a parameter
	params   []string // parameter name per segment, "" for literals
	literals int
}

// NewGateway returns a gateway serving routes through inv, logging one line per
// request to log (nil discards).
func NewGateway(routes []Route, inv Invoker, log io.Writer) *Gateway {
	if log == nil {
		log = io.Discard
	}
	g := &Gateway{inv: inv, log: log}
	for _, r := range routes {
		c := compiledRoute{Route: r}
		for _, seg := range strings.Split(strings.Trim(r.Path, "/"), "/") {
			if m := pathParamRE.FindStringSubmatch(seg); m != nil {
				c.segs = append(c.segs, "")
				c.params = append(c.params, m[1])
			} else {
				c.segs = append(c.segs, seg)
				c.params = append(c.params, "")
				c.literals++
			}
		}
		g.routes = append(g.routes, c)
	}
	return g
}

// match finds the route for method and path; a literal segment beats a parameter.
func (g *Gateway) match(method, path string) (*compiledRoute, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *compiledRoute
	var bestParams map[string]string
	for i := range g.routes {
		r := &g.routes[i]
		if len(r.segs) != len(segs) || !r.allowMethod(method) {
			continue
		}
		params := map[string]string{}
		ok := true
		for j, seg := range segs {
			if r.params[j] != "" {
				if seg == "" {
					ok = false
					break
				}
				params[r.params[j]] = seg
			} else if r.segs[j] != seg {
				ok = false
				break
			}
		}
		if ok && (best == nil || r.literals > best.literals) {
			best, bestParams = r, params
		}
	}
	return best, bestParams
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	apiReqID := g.requestID()
	w.Header().Set("X-Api-RequestId", apiReqID)

	stage := g.Stage
	if stage == "" {
		stage = "release"
	}
	path := r.URL.Path
	// The deployed URL carries the stage (/release/slots); the event's path does not.
	if rest, ok := strings.CutPrefix(path, "/"+stage+"/"); ok {
		path = "/" + rest
	}
	route, pathParams := g.match(r.Method, path)
	if route == nil {
		g.fail(w, http.StatusNotFound, apiReqID, fmt.Sprintf("There is no api match for %s %s", r.Method, path))
		g.logf("%s %s -> 404 no route (%s)", r.Method, r.URL.RequestURI(), apiReqID)
		return
	}

	ev, status, err := g.event(r, route, path, pathParams, apiReqID, stage)
	if err != nil {
		g.fail(w, status, apiReqID, err.Error())
		g.logf("%s %s -> %d %v (%s)", r.Method, r.URL.RequestURI(), status, err, apiReqID)
		return
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		g.fail(w, http.StatusInternalServerError, apiReqID, err.Error())
		return
	}

	scfReqID := g.requestID()
	type result struct {
		out  []byte
		ierr *scfhost.InvokeError
		err  error
	}
	done := make(chan result, 1)
	g.pending.Add(1)
	go func() {
		defer g.pending.Done()
		// The invocation is not tied to the client's connection: API Gateway does
		// not stop a function when the caller goes away.
		out, ierr, err := g.inv.Invoke(context.WithoutCancel(r.Context()), route.Function, payload, scfReqID)
		done <- result{out, ierr, err}
	}()
	var res result
	if route.ServiceTimeout > 0 {
		t := time.NewTimer(route.ServiceTimeout)
		defer t.Stop()
		select {
		case res = <-done:
		case <-t.C:
			g.fail(w, http.StatusGatewayTimeout, apiReqID, fmt.Sprintf("backend %s did not answer within serviceTimeout %s", route.Function, route.ServiceTimeout))
			g.logf("%s %s -> %s 504 serviceTimeout %s (%s, scf %s)", r.Method, r.URL.RequestURI(), route.Function, route.ServiceTimeout, apiReqID, scfReqID)
			return
		}
	} else {
		res = <-done
	}

	code, detail := g.respond(w, apiReqID, res.out, res.ierr, res.err)
	g.logf("%s %s -> %s %d %s%s (%s, scf %s)", r.Method, r.URL.RequestURI(), route.Function, code,
		time.Since(began).Round(time.Millisecond), detail, apiReqID, scfReqID)
}

// event builds the API Gateway event for r.
func (g *Gateway) event(r *http.Request, route *compiledRoute, path string, pathParams map[string]string, reqID, stage string) (*Event, int, error) {
	max := g.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err)
	}
	if int64(len(body)) > max {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", max)
	}

	serviceID := g.ServiceID
	if serviceID == "" {
		serviceID = "service-local"
	}
	headers := map[string]string{}
	for k, vs := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	// What API Gateway adds on its way to the function.
	headers["x-api-requestid"] = reqID
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	headers["x-api-scheme"] = scheme
	// What the function's answer may depend on (the console's Secure cookie): a
	// proxy in front of this gateway that terminated TLS has said so already.
	if headers["x-forwarded-proto"] == "" {
		headers["x-forwarded-proto"] = scheme
	}
	headers["x-anonymous-consumer"] = "true"
	headers["x-qualifier"] = "$DEFAULT"
	headers["requestsource"] = "APIGW"
	if route.ServiceTimeout > 0 {
		headers["endpoint-timeout"] = fmt.Sprint(int(route.ServiceTimeout / time.Second))
	}

	query, first := parseQuery(r.URL.RawQuery)
	ev := &Event{
		HeaderParameters:      map[string]string{},
		Headers:               headers,
		HTTPMethod:            r.Method,
		Path:                  path,
		PathParameters:        pathParams,
		QueryString:           query,
		QueryStringParameters: map[string]string{},
		RequestContext: RequestContext{
			HTTPMethod: route.Method,
			Identity:   map[string]any{},
			Path:       route.Path,
			RequestID:  reqID,
			ServiceID:  serviceID,
			SourceIP:   sourceIP(r.RemoteAddr),
			Stage:      stage,
		},
	}
	// queryStringParameters and headerParameters hold only the declared parameters.
	for _, p := range route.Params {
		switch p.Position {
		case "QUERY":
			if v, ok := first[p.Name]; ok {
				ev.QueryStringParameters[p.Name] = v
			}
		case "HEADER":
			if v := r.Header.Get(p.Name); v != "" {
				ev.HeaderParameters[p.Name] = v
			}
		}
	}
	if isBinary(r.Header.Get("Content-Type"), body) {
		ev.IsBase64Encoded = true
		ev.Body = base64.StdEncoding.EncodeToString(body)
	} else {
		ev.Body = string(body)
	}
	return ev, 0, nil
}

// parseQuery turns a raw query into API Gateway's queryString: a key given once is
// a string, a repeated key an array, a key without "=" is true. first holds each
// key's first value.
func parseQuery(raw string) (map[string]any, map[string]string) {
	type entry struct {
		vals []string
		bare bool
	}
	entries := map[string]*entry{}
	var order []string
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		e := entries[k]
		if e == nil {
			e = &entry{}
			entries[k] = e
			order = append(order, k)
		}
		e.vals = append(e.vals, v)
		e.bare = !hasEq && len(e.vals) == 1
	}
	query := map[string]any{}
	first := map[string]string{}
	for _, k := range order {
		e := entries[k]
		first[k] = e.vals[0]
		switch {
		case len(e.vals) > 1:
			query[k] = e.vals
		case e.bare:
			query[k] = true
		default:
			query[k] = e.vals[0]
		}
	}
	return query, first
}

// isBinary reports whether a body goes to the function base64-encoded: when it is
// not UTF-8 text, or its content type says it is binary.
func isBinary(contentType string, body []byte) bool {
	if len(body) == 0 {
		return false
	}
	if !utf8.Valid(body) {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/x-www-form-urlencoded", mt == "application/javascript",
		strings.HasPrefix(mt, "multipart/"):
		return false
	case mt == "application/octet-stream", mt == "application/zip", mt == "application/gzip",
		mt == "application/pdf", mt == "application/x-protobuf", mt == "application/protobuf",
		strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"),
		strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"):
		return true
	}
	return false
}

func sourceIP(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

// hopHeaders are computed by the server, not copied from the function's answer.
var hopHeaders = map[string]bool{"Content-Length": true, "Transfer-Encoding": true, "Connection": true}

// respond writes the function's integrated response, or the gateway's error.
// It returns the status written and a note for the log.
func (g *Gateway) respond(w http.ResponseWriter, reqID string, out []byte, ierr *scfhost.InvokeError, err error) (int, string) {
	switch {
	case err != nil:
		g.fail(w, http.StatusBadGateway, reqID, "scf invocation failed: "+err.Error())
		return http.StatusBadGateway, " host error: " + err.Error()
	case ierr != nil && ierr.Timeout():
		g.fail(w, http.StatusGatewayTimeout, reqID, "scf function timed out: "+ierr.Message)
		return http.StatusGatewayTimeout, " " + ierr.Error()
	case ierr != nil:
		g.fail(w, http.StatusBadGateway, reqID, "scf function error: "+ierr.Error())
		return http.StatusBadGateway, " function error: " + ierr.Error()
	}
	resp, body, perr := parseResponse(out)
	if perr != nil {
		g.fail(w, http.StatusBadGateway, reqID, "Invalid scf response. expected scf response valid JSON. ("+perr.Error()+")")
		return http.StatusBadGateway, " invalid response: " + perr.Error()
	}
	h := w.Header()
	keys := make([]string, 0, len(resp.Headers))
	for k := range resp.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ck := http.CanonicalHeaderKey(k)
		if !hopHeaders[ck] {
			h.Set(ck, resp.Headers[k])
		}
	}
	if h.Get("Content-Type") == "" {
		h["Content-Type"] = nil // pass the answer on as it is: no sniffing
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return resp.StatusCode, ""
}

// parseResponse checks an integrated response and decodes its body.
func parseResponse(out []byte) (*Response, []byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(out, &fields); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if _, ok := fields["statusCode"]; !ok {
		return nil, nil, fmt.Errorf("no statusCode")
	}
	var resp Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, nil, err
	}
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return nil, nil, fmt.Errorf("statusCode %d", resp.StatusCode)
	}
	if !resp.IsBase64Encoded {
		return &resp, []byte(resp.Body), nil
	}
	body, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("isBase64Encoded, but body: %v", err)
	}
	return &resp, body, nil
}

// fail writes an error of the gateway itself, shaped like API Gateway's.
func (g *Gateway) fail(w http.ResponseWriter, status int, reqID, msg string) {
	b, _ := json.Marshal(map[string]any{"errno": status, "error": "requestId " + reqID + " , " + msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func (g *Gateway) requestID() string {
	if g.NewRequestID != nil {
		return g.NewRequestID()
	}
	return scfhost.NewRequestID()
}

func (g *Gateway) logf(format string, args ...any) {
	line := fmt.Sprintf("[gateway] "+format+"\n", args...)
	g.logMu.Lock()
	defer g.logMu.Unlock()
	_, _ = io.WriteString(g.log, line)
}

// Wait blocks until the invocations that outlived their gateway timeout have ended.
func (g *Gateway) Wait() { g.pending.Wait() }
