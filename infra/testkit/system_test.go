package testkit

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/infra/localgw"
	"salon/shared/apigw"
)

// fake answers every event with what it saw: which instance, the request's
// body and Authorization header, and whether it had a deadline.
func fake(instance string) Handler {
	return func(ctx context.Context, raw json.RawMessage) (apigw.Response, error) {
		var ev localgw.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return apigw.Response{}, err
		}
		_, deadline := ctx.Deadline()
		body, _ := json.Marshal(map[string]any{
			"instance": instance, "body": ev.Body,
			"authorization": ev.Headers["authorization"], "deadline": deadline,
			"token": "tok-" + instance,
		})
		return apigw.Response{StatusCode: http.StatusOK, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(body)}, nil
	}
}

// TestSystemServesThroughTheGateway starts a system whose functions are fakes
// and checks what a suite relies on: the settings point at the gateway and at
// the simulators, Env hooks run before the functions are set up, the front door
// wraps the gateway, and the client sends bodies and bearers as given.
func TestSystemServesThroughTheGateway(t *testing.T) {
	t.Parallel()
	var seenEnv map[string]string
	var fronted sync.Map
	s := Start(t, Options{StandIns: true,
		AppID: "wx00000000testkit", AppSecret: "testkit-app-secret", MchID: "1900000109",
		SessionSecret: "testkit-session-secret-0123456789abcdef", AdminToken: "testkit-admin-token-0123456789abcdef",
		Conns: 1,
		Env:   []func(map[string]string){func(env map[string]string) { env["SHOP_TZ"] = "Asia/Shanghai" }},
		Functions: func(s *System) localgw.Invoker {
			seenEnv = s.Env
			return &InProcess{Timeout: time.Minute, Functions: map[string][]Handler{
				"login": {fake("a"), fake("b")},
				"slots": {fake("only")},
			}}
		},
		Front: func(gw http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fronted.Store(r.URL.Path, true)
				gw.ServeHTTP(w, r)
			})
		},
	})

	if seenEnv["SHOP_TZ"] != "Asia/Shanghai" || seenEnv["WECHATPAY_NOTIFY_URL"] != s.URL+"/pay/notify" ||
		seenEnv["MYSQL_DSN"] != s.DSN || !strings.HasPrefix(seenEnv["WX_API_BASE"], "http://127.0.0.1:") ||
		seenEnv["ADMIN_TOKEN"] != s.Admin {
		t.Fatalf("settings the functions saw: %v", seenEnv)
	}

	// Two login instances are used in turn, each invocation with a deadline.
	first, second := s.Login("c1"), s.Login("c2")
	if first == second || !strings.HasPrefix(first, "tok-") || !strings.HasPrefix(second, "tok-") {
		t.Errorf("login tokens %q and %q: want one from each instance", first, second)
	}
	a := s.Must("POST", "/login", "", `{"raw":`, "X-Test", "1")
	if a.Status != http.StatusOK || a.JSON["body"] != `{"raw":` || a.JSON["deadline"] != true || a.Code() != "" {
		t.Errorf("raw body: %s", a)
	}
	tok := s.Token("o-kit")
	a = s.Must("GET", "/healthz", tok, nil)
	if a.JSON["authorization"] != "Bearer "+tok || a.JSON["instance"] != "only" {
		t.Errorf("bearer: %s", a)
	}
	if openid, err := s.Sessions.Verify(tok); err != nil || openid != "o-kit" {
		t.Errorf("token of o-kit verifies as %q, %v", openid, err)
	}
	if _, ok := fronted.Load("/healthz"); !ok {
		t.Error("the request did not pass the front door")
	}

	// A route whose function this system does not run: the gateway's own error.
	if a := s.Must("POST", "/bookings", tok, map[string]any{"slotId": 1}); a.Status < 500 {
		t.Errorf("a function that is not there: %s", a)
	}
}
