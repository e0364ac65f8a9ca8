package wxloginsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// post sends a JSON body and decodes the JSON answer.
func post(t *testing.T, s *Server, path string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(b)))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%s: HTTP %d", path, rec.Code)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s: %v: %s", path, err, rec.Body)
	}
	return m
}

func errcode(m map[string]any) int {
	c, _ := m["errcode"].(float64)
	return int(c)
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func tokenReq(force bool) map[string]any {
	return map[string]any{"grant_type": "client_credential", "appid": "wxa", "secret": "sec", "force_refresh": force}
}

func token(t *testing.T, s *Server, force bool) string {
	t.Helper()
	m := post(t, s, "/cgi-bin/stable_token", tokenReq(force))
	tok, _ := m["access_token"].(string)
	if tok == "" {
		t.Fatalf("stable_token: %v", m)
	}
	return tok
}

func sendTo(t *testing.T, s *Server, tok string, body any) map[string]any {
	t.Helper()
	return post(t, s, "/cgi-bin/message/subscribe/send?access_token="+url.QueryEscape(tok), body)
}

func msg(touser string, data map[string]string) map[string]any {
	d := map[string]any{}
	for k, v := range data {
		d[k] = map[string]string{"value": v}
	}
	return map[string]any{"touser": touser, "template_id": "T1", "page": "pages/booking/detail?id=7", "data": d}
}

func TestStableToken(t *testing.T) {
	c := &clock{now: time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)}
	s := New("wxa", "sec")
	s.Now = c.Now

	for name, body := range map[string]map[string]any{
		"wrong appid":  {"grant_type": "client_credential", "appid": "wxb", "secret": "sec"},
		"wrong secret": {"grant_type": "client_credential", "appid": "wxa", "secret": "x"},
		"no secret":    {"grant_type": "client_credential", "appid": "wxa"},
		"grant type":   {"grant_type": "authorization_code", "appid": "wxa", "secret": "sec"},
	} {
		if m := post(t, s, "/cgi-bin/stable_token", body); errcode(m) == 0 || m["access_token"] != nil {
			t.Errorf("%s: %v", name, m)
		}
	}
	if s.Token() != "" {
		t.Fatal("a refused request issued a token")
	}

	// Normal mode: the same token, with the time it has left.
	first := token(t, s, false)
	c.Add(time.Hour)
	m := post(t, s, "/cgi-bin/stable_token", tokenReq(false))
	if m["access_token"] != first || m["expires_in"] != float64(3600) {
		t.Fatalf("second normal call: %v, want the same token with 3600s left", m)
	}
	ok := msg("o1", map[string]string{"thing1": "x"})
	if m := sendTo(t, s, first, ok); errcode(m) != 0 {
		t.Fatalf("send: %v", m)
	}

	// Force refresh: a new token; the old one is invalid (40001), not expired.
	second := token(t, s, true)
	if second == first {
		t.Fatal("force_refresh returned the same token")
	}
	if m := sendTo(t, s, first, ok); errcode(m) != 40001 {
		t.Fatalf("the replaced token: %v", m)
	}
	if m := sendTo(t, s, "made-up", ok); errcode(m) != 40001 {
		t.Fatalf("a made-up token: %v", m)
	}

	// Expired on demand: 42001, and normal mode issues a new one.
	s.ExpireToken()
	if m := sendTo(t, s, second, ok); errcode(m) != 42001 {
		t.Fatalf("the expired token: %v", m)
	}
	third := token(t, s, false)
	if third == second {
		t.Fatal("normal mode returned the expired token")
	}

	// Expired by time.
	c.Add(TokenTTL)
	if m := sendTo(t, s, third, ok); errcode(m) != 42001 {
		t.Fatalf("a token past its time: %v", m)
	}
	if fourth := token(t, s, false); fourth == third {
		t.Fatal("normal mode returned a token past its time")
	}
	all, forced := s.TokenCalls()
	if all != 9 || forced != 1 {
		t.Fatalf("token calls %d (forced %d), want 9 (1)", all, forced)
	}

	req := httptest.NewRequest(http.MethodGet, "/cgi-bin/stable_token", nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), "43002") {
		t.Fatalf("GET stable_token: %s", rec.Body)
	}
}

func TestSubscribeSendChecks(t *testing.T) {
	s := New("wxa", "sec")
	s.AcceptTemplates("T1", "T2")
	tok := token(t, s, false)

	long := func(n int, r string) string { return strings.Repeat(r, n) }
	tests := []struct {
		name  string
		body  any
		code  int
		field string // the errmsg must name it
	}{
		{"ok", msg("o1", map[string]string{"thing1": long(20, "美"), "time2": "2026-05-01 10:00~2026-05-01 11:30", "amount3": "50.00元", "character_string4": "BK000000000007", "number5": "3", "date6": "2026年5月1日", "phrase7": "已确认", "name8": "Alice Smith", "phone_number9": "+86 138-0000"}), 0, ""},
		{"no touser", msg("", map[string]string{"thing1": "x"}), 40003, ""},
		{"unknown template", map[string]any{"touser": "o1", "template_id": "T9", "data": map[string]any{"thing1": map[string]string{"value": "x"}}}, 40037, ""},
		{"no data", map[string]any{"touser": "o1", "template_id": "T1"}, 47003, ""},
		{"thing too long", msg("o1", map[string]string{"thing1": long(21, "美")}), 47003, "data.thing1"},
		{"character_string too long", msg("o1", map[string]string{"character_string2": long(33, "a")}), 47003, "data.character_string2"},
		{"symbol too long", msg("o1", map[string]string{"symbol3": "!!!!!!"}), 47003, "data.symbol3"},
		{"phrase too long", msg("o1", map[string]string{"phrase4": "一二三四五六"}), 47003, "data.phrase4"},
		{"name too long", msg("o1", map[string]string{"name5": long(11, "李")}), 47003, "data.name5"},
		{"phone too long", msg("o1", map[string]string{"phone_number6": long(18, "1")}), 47003, "data.phone_number6"},
		{"number not a number", msg("o1", map[string]string{"number7": "12a"}), 47003, "data.number7"},
		{"time not a time", msg("o1", map[string]string{"time8": "tomorrow"}), 47003, "data.time8"},
		{"amount too many digits", msg("o1", map[string]string{"amount9": "12345678901"}), 47003, "data.amount9"},
		{"line break", msg("o1", map[string]string{"thing1": "a\nb"}), 47003, "data.thing1"},
		{"empty value", msg("o1", map[string]string{"thing1": ""}), 47003, "data.thing1"},
		{"unknown type", msg("o1", map[string]string{"shop1": "x"}), 47003, "data.shop1"},
		{"value not a string", map[string]any{"touser": "o1", "template_id": "T1", "data": map[string]any{"thing1": map[string]any{"value": 5}}}, 47003, "data.thing1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Messages())
			m := sendTo(t, s, tok, tt.body)
			if errcode(m) != tt.code {
				t.Fatalf("errcode %d, want %d: %v", errcode(m), tt.code, m)
			}
			if tt.field != "" && !strings.Contains(m["errmsg"].(string), tt.field) {
				t.Fatalf("errmsg %q does not name %s", m["errmsg"], tt.field)
			}
			want := before
			if tt.code == 0 {
				want++
			}
			if got := len(s.Messages()); got != want {
				t.Fatalf("%d messages kept, want %d", got, want)
			}
		})
	}
	if m := sendTo(t, s, "", msg("o1", map[string]string{"thing1": "x"})); errcode(m) != 41001 {
		t.Fatalf("no token: %v", m)
	}
}

func TestSubscribeSendRefusalsOutagesAndTheList(t *testing.T) {
	c := &clock{now: time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)}
	s := New("wxa", "sec")
	s.Now = c.Now
	tok := token(t, s, false)
	s.RefuseMessagesFor("o-refuses")

	if m := sendTo(t, s, tok, msg("o-refuses", map[string]string{"thing1": "x"})); errcode(m) != 43101 {
		t.Fatalf("refused customer: %v", m)
	}
	s.FailNextSends(2)
	for i := 0; i < 2; i++ {
		if m := sendTo(t, s, tok, msg("o1", map[string]string{"thing1": "x"})); errcode(m) != -1 {
			t.Fatalf("outage send %d: %v", i, m)
		}
	}
	if m := sendTo(t, s, tok, msg("o1", map[string]string{"thing1": "美甲店"})); errcode(m) != 0 {
		t.Fatalf("after the outage: %v", m)
	}
	s.SetMode(Busy)
	if m := sendTo(t, s, tok, msg("o1", map[string]string{"thing1": "x"})); errcode(m) != -1 {
		t.Fatalf("busy mode: %v", m)
	}
	s.SetMode(Normal)
	c.Add(time.Minute)
	if m := sendTo(t, s, tok, msg("o2", map[string]string{"thing1": "y"})); errcode(m) != 0 {
		t.Fatalf("o2: %v", m)
	}
	if s.SendCalls() != 6 {
		t.Fatalf("%d send calls, want 6", s.SendCalls())
	}

	req := httptest.NewRequest(http.MethodGet, "/sim/messages?touser=o1", nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var got []Message
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := Message{ToUser: "o1", TemplateID: "T1", Page: "pages/booking/detail?id=7", Data: map[string]string{"thing1": "美甲店"}, ReceivedAt: c.Now().Add(-time.Minute)}
	if len(got) != 1 || got[0].ToUser != want.ToUser || got[0].TemplateID != want.TemplateID || got[0].Page != want.Page ||
		got[0].Data["thing1"] != "美甲店" || !got[0].ReceivedAt.Equal(want.ReceivedAt) {
		t.Fatalf("GET /sim/messages?touser=o1: %s", rec.Body)
	}
	for _, k := range []string{`"touser"`, `"template_id"`, `"page"`, `"data"`, `"received_at"`} {
		if !strings.Contains(rec.Body.String(), k) {
			t.Fatalf("the list has no %s: %s", k, rec.Body)
		}
	}
	if all := s.Messages(); len(all) != 2 || all[1].ToUser != "o2" {
		t.Fatalf("Messages(): %+v", all)
	}

	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sim/messages?touser=nobody", nil))
	if strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Fatalf("no messages should list as [], got %s", rec.Body)
	}
}
