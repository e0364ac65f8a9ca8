package apigw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"salon/shared/booking"
)

// apigwEvent is shaped like captured API Gateway events (shared/apigw/README.md,
// "The events a function accepts"):
// lower-case header names, queryString with an array and a bare key, pathParameters.
const apigwEvent = `{
  "body": "{\"slotId\":42}",
  "headerParameters": {},
  "headers": {
    "accept": "application/json",
    "authorization": "Bearer secret-token-value",
    "content-type": "application/json",
    "host": "service-abc-1250000000.gz.apigw.tencentcs.com",
    "idempotency-key": "k-1",
    "x-api-requestid": "hdr-request-id",
    "x-b3-traceid": "b3",
    "x-qualifier": "$DEFAULT",
    "x-anonymous-consumer": "true",
    "endpoint-timeout": "15",
    "requestsource": "APIGW",
    "x-api-scheme": "https"
  },
  "httpMethod": "POST",
  "isBase64Encoded": false,
  "path": "/bookings/17/pay",
  "pathParameters": {"id": "17"},
  "queryString": {"a": ["b", "c"], "i": true, "date": "2026-12-01"},
  "queryStringParameters": {},
  "requestContext": {
    "httpMethod": "ANY",
    "identity": {},
    "path": "/bookings/{id}/pay",
    "serviceId": "service-abc",
    "sourceIp": "1.2.3.4",
    "stage": "release",
    "requestId": "ctx-request-id"
  }
}`

// functionURLEvent is the Function URL shape of §2.5: no requestContext, no
// pathParameters, no isBase64Encoded; the client address and request id in headers.
const functionURLEvent = `{
  "body": "",
  "headers": {
    "accept": "*/*",
    "host": "1250000000-abcdef.gz.tencentscf.com",
    "user-agent": "curl/8.0",
    "x-scf-remote-addr": "5.6.7.8",
    "x-scf-request-id": "scf-request-id"
  },
  "httpMethod": "get",
  "path": "/slots",
  "queryString": {"date": "2026-12-01"}
}`

// functionURLCaptured is the Function URL event as one public capture showed it, with
// the apigw fields present but empty and a requestContext holding only sourceIp.
const functionURLCaptured = `{
  "body": "",
  "headerParameters": {},
  "headers": {"x-scf-request-id": "scf-2", "x-scf-remote-addr": "9.9.9.9"},
  "httpMethod": "GET",
  "isBase64Encoded": false,
  "path": "/healthz",
  "pathParameters": {},
  "queryString": {},
  "queryStringParameters": {},
  "requestContext": {"sourceIp": "8.8.8.8"}
}`

func TestParseEvent(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(`{"code":"abc"}`))
	tests := []struct {
		name  string
		event string
		want  Request
	}{
		{
			name:  "api gateway",
			event: apigwEvent,
			want: Request{
				Method: "POST", Path: "/bookings/17/pay",
				Query:      url.Values{"a": {"b", "c"}, "i": {""}, "date": {"2026-12-01"}},
				PathParams: map[string]string{"id": "17"},
				Body:       []byte(`{"slotId":42}`),
				RequestID:  "ctx-request-id", SourceIP: "1.2.3.4",
			},
		},
		{
			name:  "function url without requestContext",
			event: functionURLEvent,
			want: Request{
				Method: "GET", Path: "/slots",
				Query:      url.Values{"date": {"2026-12-01"}},
				PathParams: map[string]string{},
				Body:       []byte{},
				RequestID:  "scf-request-id", SourceIP: "5.6.7.8",
			},
		},
		{
			name:  "function url captured shape",
			event: functionURLCaptured,
			want: Request{
				Method: "GET", Path: "/healthz", Query: url.Values{}, PathParams: map[string]string{},
				Body: []byte{}, RequestID: "scf-2", SourceIP: "8.8.8.8",
			},
		},
		{
			name:  "base64 body",
			event: `{"httpMethod":"POST","path":"/login","isBase64Encoded":true,"body":"` + b64 + `"}`,
			want: Request{
				Method: "POST", Path: "/login", Query: url.Values{}, PathParams: map[string]string{},
				Body: []byte(`{"code":"abc"}`),
			},
		},
		{
			name:  "unpadded base64 body",
			event: `{"httpMethod":"POST","path":"/login","isBase64Encoded":true,"body":"` + strings.TrimRight(base64.StdEncoding.EncodeToString([]byte("ab")), "=") + `"}`,
			want: Request{
				Method: "POST", Path: "/login", Query: url.Values{}, PathParams: map[string]string{},
				Body: []byte("ab"),
			},
		},
		{
			name:  "no body, no path",
			event: `{"httpMethod":"GET"}`,
			want:  Request{Method: "GET", Path: "/", Query: url.Values{}, PathParams: map[string]string{}},
		},
		{
			name:  "declared query parameters only",
			event: `{"httpMethod":"GET","path":"/slots","queryStringParameters":{"date":"2026-12-02"},"queryString":{"x":1}}`,
			want: Request{
				Method: "GET", Path: "/slots", Query: url.Values{"date": {"2026-12-02"}, "x": {"1"}},
				PathParams: map[string]string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEvent([]byte(tt.event))
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			hdr := got.Header
			got.Header = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
			if hdr == nil {
				t.Fatal("nil Header")
			}
		})
	}
}

func TestParseEventHeadersCanonical(t *testing.T) {
	r, err := ParseEvent([]byte(apigwEvent))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"Authorization":   "Bearer secret-token-value",
		"authorization":   "Bearer secret-token-value",
		"Content-Type":    "application/json",
		"Idempotency-Key": "k-1",
		"X-Api-Requestid": "hdr-request-id",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("Header.Get(%q) = %q, want %q", name, got, want)
		}
	}
	if _, ok := r.Header["Idempotency-Key"]; !ok {
		t.Errorf("header map key not canonical: %v", r.Header)
	}
	if got := BearerToken(r.HTTPRequest(context.Background())); got != "secret-token-value" {
		t.Errorf("BearerToken = %q", got)
	}
}

func TestParseEventRequestIDFallback(t *testing.T) {
	r, err := ParseEvent([]byte(`{"httpMethod":"GET","path":"/","headers":{"x-api-requestid":"gw-id","x-scf-request-id":"scf-id"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.RequestID != "gw-id" {
		t.Errorf("RequestID = %q, want gw-id", r.RequestID)
	}
}

func TestParseEventErrors(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	bigB64 := base64.StdEncoding.EncodeToString([]byte(big))
	justOver := base64.StdEncoding.EncodeToString(make([]byte, MaxBodyBytes+1))
	atLimit := base64.StdEncoding.EncodeToString(make([]byte, MaxBodyBytes))
	tests := []struct {
		name  string
		event string
		code  string // "" means success
	}{
		{"1 MiB body", `{"httpMethod":"POST","path":"/login","body":"` + big + `"}`, booking.EPAYLOADTOOLARGE},
		{"1 MiB base64 body", `{"httpMethod":"POST","path":"/login","isBase64Encoded":true,"body":"` + bigB64 + `"}`, booking.EPAYLOADTOOLARGE},
		{"one byte over after decoding", `{"httpMethod":"POST","isBase64Encoded":true,"body":"` + justOver + `"}`, booking.EPAYLOADTOOLARGE},
		{"exactly the limit", `{"httpMethod":"POST","isBase64Encoded":true,"body":"` + atLimit + `"}`, ""},
		{"empty", ``, booking.EBADREQUEST},
		{"null", `null`, booking.EBADREQUEST},
		{"array", `[1,2]`, booking.EBADREQUEST},
		{"truncated", `{"httpMethod":"GET"`, booking.EBADREQUEST},
		{"not json", `hello`, booking.EBADREQUEST},
		{"timer event", `{"Type":"Timer","TriggerName":"t","Time":"2026-01-01T00:00:00Z","Message":""}`, booking.EBADREQUEST},
		{"method not a string", `{"httpMethod":1,"path":"/"}`, booking.EBADREQUEST},
		{"header not a string", `{"httpMethod":"GET","headers":{"a":1}}`, booking.EBADREQUEST},
		{"bad base64", `{"httpMethod":"POST","isBase64Encoded":true,"body":"!!!"}`, booking.EBADREQUEST},
		{"query object", `{"httpMethod":"GET","queryString":{"a":{"b":1}}}`, booking.EBADREQUEST},
		{"query nested array", `{"httpMethod":"GET","queryString":{"a":[["b"]]}}`, booking.EBADREQUEST},
		{"body not a string", `{"httpMethod":"POST","body":{"a":1}}`, booking.EBADREQUEST},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseEvent([]byte(tt.event))
			if got := booking.ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{apigwEvent, functionURLEvent, functionURLCaptured, `{}`, `null`, `{"httpMethod":"GET","queryString":{"a":[1,true,null,"x"]}}`,
		`{"httpMethod":"POST","isBase64Encoded":true,"body":"e30="}`} {
		f.Add([]byte(s))
	}
	rt := NewRouter("fuzz", NewLogger(discard{}))
	rt.Handle("GET /slots", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { WriteNoContent(w); return nil }))
	rt.Handle("POST /bookings/{id}/pay", HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if _, err := PathInt64(r, "id"); err != nil {
			return err
		}
		var v struct{ A int }
		if err := DecodeJSON(r, &v); err != nil {
			return err
		}
		WriteJSON(w, 200, v)
		return nil
	}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := ParseEvent(raw)
		if err == nil {
			if r.Header == nil || r.Query == nil || r.PathParams == nil || r.Method == "" {
				t.Fatalf("incomplete request %+v", r)
			}
			if len(r.Body) > MaxBodyBytes {
				t.Fatalf("body of %d bytes accepted", len(r.Body))
			}
			BearerToken(r.HTTPRequest(context.Background()))
		} else if c := booking.ErrorCode(err); c != booking.EBADREQUEST && c != booking.EPAYLOADTOOLARGE {
			t.Fatalf("unexpected code %s", c)
		}
		resp, err := rt.Invoke(context.Background(), json.RawMessage(raw))
		if err != nil || resp.StatusCode < 200 || resp.StatusCode > 599 || !json.Valid([]byte(resp.Body)) && resp.Body != "" {
			t.Fatalf("Invoke: %+v %v", resp, err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
