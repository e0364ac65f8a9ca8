package localgw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"salon/infra/scfhost"
)

var testRoutes = []Route{
	{Method: "POST", Path: "/bookings/{id}/pay", Function: "reserve", ServiceTimeout: 8 * time.Second,
		Params: []Param{{Name: "id", Position: "PATH"}, {Name: "date", Position: "QUERY"}, {Name: "X-Trace", Position: "HEADER"}}},
	{Method: "GET", Path: "/bookings/{id}", Function: "reserve"},
	{Method: "GET", Path: "/bookings/mine", Function: "mine"},
	{Method: "ANY", Path: "/any", Function: "any"},
}

func fixedIDs(ids ...string) func() string {
	return func() string {
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("got\n%s\nwant\n%s", gi, wi)
	}
}

func TestRequestBecomesEventAndResponseBecomesHTTP(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0x00, 0xff}
	fake := newFake(`{"isBase64Encoded":true,"statusCode":201,"headers":{"content-type":"image/png","x-custom":"yes","content-length":"999"},"body":"` +
		base64.StdEncoding.EncodeToString(png) + `"}`)
	g := NewGateway(testRoutes, fake, nil)
	g.NewRequestID = fixedIDs("api-req-1", "scf-req-1")

	body := []byte{0x00, 0x01, 0xfe, 0xff}
	r := httptest.NewRequest("POST", "http://salon.test/bookings/42/pay?a=1&a=2&flag&date=2026-12-01&q=%E4%BD%A0+x", bytes.NewReader(body))
	r.RemoteAddr = "192.0.2.7:51234"
	r.Header.Set("Content-Type", "application/octet-stream")
	r.Header.Set("Authorization", "Bearer t0k")
	r.Header.Set("X-Trace", "tr-1")
	r.Header.Add("Accept", "a/b")
	r.Header.Add("Accept", "c/d")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)

	call := <-fake.calls
	if call.fn != "reserve" || call.requestID != "scf-req-1" {
		t.Errorf("invoked %s with request id %s", call.fn, call.requestID)
	}
	jsonEqual(t, call.payload, `{
	  "body": "`+base64.StdEncoding.EncodeToString(body)+`",
	  "headerParameters": {"X-Trace": "tr-1"},
	  "headers": {
	    "accept": "a/b,c/d",
	    "authorization": "Bearer t0k",
	    "content-type": "application/octet-stream",
	    "host": "salon.test",
	    "x-trace": "tr-1",
	    "x-api-requestid": "api-req-1",
	    "x-api-scheme": "http",
	    "x-forwarded-proto": "http",
	    "x-anonymous-consumer": "true",
	    "x-qualifier": "$DEFAULT",
	    "requestsource": "APIGW",
	    "endpoint-timeout": "8"
	  },
	  "httpMethod": "POST",
	  "isBase64Encoded": true,
	  "path": "/bookings/42/pay",
	  "pathParameters": {"id": "42"},
	  "queryString": {"a": ["1", "2"], "flag": true, "date": "2026-12-01", "q": "你 x"},
	  "queryStringParameters": {"date": "2026-12-01"},
	  "requestContext": {
	    "httpMethod": "POST",
	    "identity": {},
	    "path": "/bookings/{id}/pay",
	    "requestId": "api-req-1",
	    "serviceId": "service-local",
	    "sourceIp": "192.0.2.7",
	    "stage": "release"
	  }
	}`)

	res := w.Result()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 || !bytes.Equal(got, png) {
		t.Errorf("answer %d %q, want 201 with the decoded body", res.StatusCode, got)
	}
	if res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Custom") != "yes" || res.Header.Get("X-Api-Requestid") != "api-req-1" {
		t.Errorf("headers = %v", res.Header)
	}
	if res.Header.Get("Content-Length") == "999" {
		t.Error("the function's Content-Length was copied")
	}
}

func TestTextBodyStaysText(t *testing.T) {
	fake := newFake(`{"isBase64Encoded":false,"statusCode":200,"headers":{"content-type":"application/json"},"body":"{\"ok\":true}"}`)
	g := NewGateway(testRoutes, fake, nil)

	for _, c := range []struct {
		name, contentType string
		body              []byte
		base64            bool
	}{
		{"json", "application/json", []byte(`{"slotId":7,"note":"美甲"}`), false},
		{"no content type", "", []byte(`plain`), false},
		{"not utf-8", "application/json", []byte{'{', 0xff, '}'}, true},
		{"binary type", "image/jpeg", []byte(`looks like text`), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/release/bookings/1/pay", bytes.NewReader(c.body))
			if c.contentType != "" {
				r.Header.Set("Content-Type", c.contentType)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			var ev Event
			if err := json.Unmarshal((<-fake.calls).payload, &ev); err != nil {
				t.Fatal(err)
			}
			want := string(c.body)
			if c.base64 {
				want = base64.StdEncoding.EncodeToString(c.body)
			}
			if ev.IsBase64Encoded != c.base64 || ev.Body != want {
				t.Errorf("isBase64Encoded %v body %q; want %v %q", ev.IsBase64Encoded, ev.Body, c.base64, want)
			}
			if ev.Path != "/bookings/1/pay" {
				t.Errorf("path %q: the stage prefix was not removed", ev.Path)
			}
			if w.Code != 200 || w.Body.String() != `{"ok":true}` || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("answer %d %v %s", w.Code, w.Header(), w.Body)
			}
		})
	}
}

func TestRouting(t *testing.T) {
	for _, c := range []struct{ method, path, fn string }{
		{"GET", "/bookings/mine", "mine"}, // a literal segment beats {id}
		{"GET", "/bookings/17", "reserve"},
		{"DELETE", "/any", "any"},
		{"GET", "/bookings/17/pay", ""}, // wrong method
		{"GET", "/bookings", ""},
		{"GET", "/nope", ""},
	} {
		fake := newFake(`{"statusCode":204,"headers":{},"body":""}`)
		g := NewGateway(testRoutes, fake, nil)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if c.fn == "" {
			if w.Code != 404 || !strings.Contains(w.Body.String(), `"errno":404`) || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %s, want a 404 JSON error", c.method, c.path, w.Code, w.Body)
			}
			continue
		}
		if got := (<-fake.calls).fn; got != c.fn || w.Code != 204 {
			t.Errorf("%s %s: invoked %s, answered %d; want %s, 204", c.method, c.path, got, w.Code, c.fn)
		}
	}
}

func TestFailuresBecomeGatewayErrors(t *testing.T) {
	cases := []struct {
		name   string
		fake   *fakeInvoker
		status int
		says   string
	}{
		{"function error", &fakeInvoker{ierr: &scfhost.InvokeError{Type: "errorString", Message: "db down"}}, 502, "db down"},
		{"panic", &fakeInvoker{ierr: &scfhost.InvokeError{Type: "string", Message: "boom", ShouldExit: true}}, 502, "boom"},
		{"timeout", &fakeInvoker{ierr: &scfhost.InvokeError{Type: scfhost.TypeTimeout, Message: "timed out"}}, 504, "timed out"},
		{"host error", &fakeInvoker{err: scfhost.ErrClosed}, 502, "host closed"},
		{"not JSON", &fakeInvoker{out: []byte(`"hello"`)}, 502, "Invalid scf response"},
		{"no statusCode", &fakeInvoker{out: []byte(`{"body":"x"}`)}, 502, "no statusCode"},
		{"bad base64", &fakeInvoker{out: []byte(`{"statusCode":200,"isBase64Encoded":true,"body":"%%%"}`)}, 502, "isBase64Encoded"},
		{"body not a string", &fakeInvoker{out: []byte(`{"statusCode":200,"body":{"a":1}}`)}, 502, "Invalid scf response"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fake.calls = make(chan invocation, 1)
			logs := &syncBuffer{}
			g := NewGateway(testRoutes, c.fake, logs)
			w := httptest.NewRecorder()
			g.ServeHTTP(w, httptest.NewRequest("GET", "/bookings/1", nil))
			var body struct {
				Errno int    `json:"errno"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %s: %v", w.Body, err)
			}
			if w.Code != c.status || body.Errno != c.status || !strings.Contains(body.Error, c.says) {
				t.Errorf("answer %d %s; want %d mentioning %q", w.Code, w.Body, c.status, c.says)
			}
			if !strings.Contains(logs.String(), "[gateway] GET /bookings/1 -> reserve") {
				t.Errorf("log %q", logs.String())
			}
		})
	}
}

func TestServiceTimeout(t *testing.T) {
	fake := newFake(`{"statusCode":200,"headers":{},"body":""}`)
	fake.block = make(chan struct{})
	routes := []Route{{Method: "GET", Path: "/slow", Function: "slow", ServiceTimeout: 50 * time.Millisecond}}
	g := NewGateway(routes, fake, nil)
	w := httptest.NewRecorder()
	g.ServeHTTP(w, httptest.NewRequest("GET", "/slow", nil))
	if w.Code != 504 || !strings.Contains(w.Body.String(), "serviceTimeout") {
		t.Errorf("answer %d %s, want 504", w.Code, w.Body)
	}
	close(fake.block) // the function finishes on its own; nobody waits for its answer
	g.Wait()
}

// TestGatewayInvokesARealFunction runs the gateway over scfhost and the test
// function, which answers with the event it got, base64-encoded.
func TestGatewayInvokesARealFunction(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fn", "main")
	if out, err := exec.Command("go", "build", "-o", bin, "salon/infra/scfhost/testdata/fn").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	host := scfhost.NewHost(&syncBuffer{})
	t.Cleanup(func() { host.Close() })
	if err := host.Register(scfhost.Function{Name: "fn", Binary: bin, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	routes := []Route{{Method: "POST", Path: "/things/{id}", Function: "fn", ServiceTimeout: 8 * time.Second,
		Params: []Param{{Name: "id", Position: "PATH"}}}}
	srv := httptest.NewServer(NewGateway(routes, host, nil))
	defer srv.Close()

	sent := []byte{0xde, 0xad, 0xbe, 0xef}
	res, err := http.Post(srv.URL+"/things/abc?x=1", "application/octet-stream", bytes.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 || res.Header.Get("Content-Type") != "application/octet-stream" || res.Header.Get("X-Fn") != "fn" {
		t.Fatalf("answer %d %v %s", res.StatusCode, res.Header, got)
	}
	var ev Event
	if err := json.Unmarshal(got, &ev); err != nil {
		t.Fatalf("body is not the event: %v\n%s", err, got)
	}
	if ev.HTTPMethod != "POST" || ev.Path != "/things/abc" || ev.PathParameters["id"] != "abc" ||
		!ev.IsBase64Encoded || ev.Body != base64.StdEncoding.EncodeToString(sent) ||
		ev.QueryString["x"] != "1" || ev.RequestContext.SourceIP != "127.0.0.1" || ev.RequestContext.Path != "/things/{id}" {
		t.Errorf("event = %+v", ev)
	}
}
