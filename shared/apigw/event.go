// Package apigw is the HTTP side the functions share: the router (an
// http.ServeMux behind the middleware every request needs), the adapter that
// turns API Gateway and Function URL events into *http.Request and what a
// handler wrote into integrated responses, and the one table from application
// error codes to HTTP statuses.
package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"salon/shared/booking"
)

// MaxBodyBytes is the largest request body accepted, after base64 decoding.
const MaxBodyBytes = 64 << 10

// Request is one HTTP request as the event carried it, whichever trigger sent it;
// HTTPRequest makes it the *http.Request the handlers serve.
type Request struct {
	Method     string
	Path       string
	Header     http.Header // canonical keys: use Get, never index the map with a lower-case name
	Query      url.Values
	PathParams map[string]string // the event's own; handlers read r.PathValue, which the mux sets from Path
	Body       []byte
	RequestID  string
	SourceIP   string
}

// HTTPRequest is the request as net/http's server would hand it to a handler:
// the path and query in URL, the Host header moved to Host, the client's
// address in RemoteAddr, the body readable once (the router reads it in full).
// The method is kept as the event gives it, even one net/http would refuse to
// send, so that the router answers it (405) instead of the adapter failing.
func (r *Request) HTTPRequest(ctx context.Context) *http.Request {
	h := r.Header.Clone()
	host := h.Get("Host")
	h.Del("Host")
	req := &http.Request{
		Method: r.Method, URL: &url.URL{Path: r.Path, RawQuery: r.Query.Encode()},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: host, RemoteAddr: r.SourceIP, RequestURI: r.Path,
		ContentLength: int64(len(r.Body)), Body: http.NoBody,
	}
	if len(r.Body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(r.Body))
	}
	return req.WithContext(ctx)
}

// event is the union of the API Gateway event and the Function URL event. The
// Function URL event drops requestContext, pathParameters and isBase64Encoded, so
// every field may be missing.
type event struct {
	Body                  *string                    `json:"body"`
	Headers               map[string]string          `json:"headers"`
	HTTPMethod            string                     `json:"httpMethod"`
	Path                  string                     `json:"path"`
	IsBase64Encoded       bool                       `json:"isBase64Encoded"`
	QueryString           map[string]json.RawMessage `json:"queryString"`
	QueryStringParameters map[string]json.RawMessage `json:"queryStringParameters"`
	PathParameters        map[string]string          `json:"pathParameters"`
	RequestContext        *struct {
		RequestID string `json:"requestId"`
		SourceIP  string `json:"sourceIp"`
	} `json:"requestContext"`
}

// ParseEvent decodes an API Gateway or Function URL event. An event that is not an
// HTTP event is BAD_REQUEST; a body over MaxBodyBytes is PAYLOAD_TOO_LARGE.
func ParseEvent(raw []byte) (*Request, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, booking.Errorf(booking.EBADREQUEST, "event is not a JSON object")
	}
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, booking.Errorf(booking.EBADREQUEST, "unparseable event: %s", shortJSONError(err))
	}
	method := strings.ToUpper(strings.TrimSpace(ev.HTTPMethod))
	if method == "" {
		return nil, booking.Errorf(booking.EBADREQUEST, "event has no httpMethod")
	}
	r := &Request{
		Method:     method,
		Path:       ev.Path,
		Header:     make(http.Header, len(ev.Headers)),
		Query:      url.Values{},
		PathParams: make(map[string]string, len(ev.PathParameters)),
	}
	if r.Path == "" {
		r.Path = "/"
	}
	for k, v := range ev.Headers {
		// Real events carry lower-case names; Set canonicalizes so Get finds them.
		r.Header.Set(k, v)
	}
	for k, v := range ev.QueryString {
		if err := addQuery(r.Query, k, v); err != nil {
			return nil, err
		}
	}
	// queryStringParameters holds only the parameters declared on the API, a subset
	// of queryString; it matters only for events built without queryString.
	for k, v := range ev.QueryStringParameters {
		if _, ok := r.Query[k]; !ok {
			if err := addQuery(r.Query, k, v); err != nil {
				return nil, err
			}
		}
	}
	for k, v := range ev.PathParameters {
		r.PathParams[k] = v
	}
	if ev.Body != nil {
		body := *ev.Body
		if ev.IsBase64Encoded {
			b, err := decodeBase64(body)
			if err != nil {
				return nil, booking.Errorf(booking.EBADREQUEST, "isBase64Encoded body is not base64")
			}
			r.Body = b
		} else {
			r.Body = []byte(body)
		}
		if len(r.Body) > MaxBodyBytes {
			return nil, booking.Errorf(booking.EPAYLOADTOOLARGE, "body is %d bytes, limit %d", len(r.Body), MaxBodyBytes)
		}
	}
	if ev.RequestContext != nil {
		r.RequestID = ev.RequestContext.RequestID
		r.SourceIP = ev.RequestContext.SourceIP
	}
	if r.RequestID == "" {
		r.RequestID = r.Header.Get("X-Api-Requestid")
	}
	if r.RequestID == "" {
		r.RequestID = r.Header.Get("X-Scf-Request-Id")
	}
	if r.SourceIP == "" {
		r.SourceIP = r.Header.Get("X-Scf-Remote-Addr")
	}
	return r, nil
}

// addQuery adds one queryString entry. API Gateway sends a repeated key as an array
// and a key without a value as true.
func addQuery(q url.Values, key string, v json.RawMessage) error {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return booking.Errorf(booking.EBADREQUEST, "query parameter %q: bad string", key)
		}
		q.Add(key, s)
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return booking.Errorf(booking.EBADREQUEST, "query parameter %q: bad array", key)
		}
		for _, it := range items {
			it = bytes.TrimSpace(it)
			if len(it) > 0 && it[0] == '[' {
				return booking.Errorf(booking.EBADREQUEST, "query parameter %q: nested array", key)
			}
			if err := addQuery(q, key, it); err != nil {
				return err
			}
		}
	case 't', 'f':
		// A bare key (?flag) arrives as true; there is no value to keep.
		q.Add(key, "")
	case 'n':
		// null: nothing to add.
	case '{':
		return booking.Errorf(booking.EBADREQUEST, "query parameter %q: unexpected object", key)
	default:
		// A number: keep its literal text.
		q.Add(key, string(v))
	}
	return nil
}

func decodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// shortJSONError describes a JSON decoding error without quoting the input.
func shortJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON at offset " + strconv.FormatInt(se.Offset, 10)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Sprintf("field %s: want %s, got %s", field, te.Type, jsonKind(te.Value))
	default:
		return truncate(err.Error(), 120)
	}
}

// jsonKind keeps only the kind of a JSON value from UnmarshalTypeError.Value
// ("number 1.5" becomes "number") so that no input text reaches the log.
func jsonKind(v string) string {
	if i := strings.IndexByte(v, ' '); i > 0 {
		return v[:i]
	}
	return v
}
