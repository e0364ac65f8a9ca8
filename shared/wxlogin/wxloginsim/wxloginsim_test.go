package wxloginsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func get(t *testing.T, s *Server, method, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path+"?"+q.Encode(), nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

func TestServer(t *testing.T) {
	q := func(appid, secret, code, grant string) url.Values {
		return url.Values{"appid": {appid}, "secret": {secret}, "js_code": {code}, "grant_type": {grant}}
	}
	const path = "/sns/jscode2session"
	tests := []struct {
		name    string
		method  string
		path    string
		q       url.Values
		status  int
		errcode float64
		openid  string
	}{
		{"ok", "GET", path, q("wxa", "sec", "c1", "authorization_code"), 200, 0, OpenID("wxa", "c1")},
		{"wrong appid", "GET", path, q("wxb", "sec", "c1", "authorization_code"), 200, 40013, ""},
		{"wrong secret", "GET", path, q("wxa", "x", "c1", "authorization_code"), 200, 40125, ""},
		{"no secret", "GET", path, q("wxa", "", "c1", "authorization_code"), 200, 41004, ""},
		{"grant type", "GET", path, q("wxa", "sec", "c1", "client_credential"), 200, 40002, ""},
		{"no code", "GET", path, q("wxa", "sec", "", "authorization_code"), 200, 41008, ""},
		{"bad code", "GET", path, q("wxa", "sec", "bad1", "authorization_code"), 200, 40029, ""},
		{"other path", "GET", "/cgi-bin/token", q("wxa", "sec", "c1", "authorization_code"), 404, 0, ""},
		{"post", "POST", path, q("wxa", "sec", "c1", "authorization_code"), 405, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("wxa", "sec")
			status, m := get(t, s, tt.method, tt.path, tt.q)
			if status != tt.status {
				t.Fatalf("status %d", status)
			}
			if ec, _ := m["errcode"].(float64); ec != tt.errcode {
				t.Errorf("errcode %v, want %v", m["errcode"], tt.errcode)
			}
			if oid, _ := m["openid"].(string); oid != tt.openid {
				t.Errorf("openid %q, want %q", oid, tt.openid)
			}
		})
	}
}

func TestModesAndReuse(t *testing.T) {
	s := New("wxa", "sec")
	s.RejectReuse = true
	q := url.Values{"appid": {"wxa"}, "secret": {"sec"}, "js_code": {"c"}, "grant_type": {"authorization_code"}}
	if _, m := get(t, s, "GET", "/sns/jscode2session", q); m["openid"] == nil {
		t.Fatalf("first use refused: %v", m)
	}
	if _, m := get(t, s, "GET", "/sns/jscode2session", q); m["errcode"] != float64(40163) {
		t.Errorf("reuse accepted: %v", m)
	}
	s.SetMode(Busy)
	if _, m := get(t, s, "GET", "/sns/jscode2session", q); m["errcode"] != float64(-1) {
		t.Errorf("busy: %v", m)
	}
	s.SetMode(Unavailable)
	if st, _ := get(t, s, "GET", "/sns/jscode2session", q); st != http.StatusServiceUnavailable {
		t.Errorf("unavailable: %d", st)
	}
	s.SetMode(Garbage)
	if st, m := get(t, s, "GET", "/sns/jscode2session", q); st != 200 || m != nil {
		t.Errorf("garbage: %d %v", st, m)
	}
	// Hang returns once the server is closed, without the caller giving up.
	s.SetMode(Hang)
	s.Close()
	s.Close() // idempotent
	get(t, s, "GET", "/sns/jscode2session", q)
	if s.Calls() != 6 {
		t.Errorf("Calls = %d", s.Calls())
	}
}
