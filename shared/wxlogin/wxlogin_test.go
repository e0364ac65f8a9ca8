package wxlogin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/wxlogin"
	"salon/shared/wxlogin/wxloginsim"
)

const (
	appID  = "wx1234567890abcdef"
	secret = "S3CR3T-app-secret/with+chars"
)

func TestCode2Session(t *testing.T) {
	tests := []struct {
		name    string
		mode    wxloginsim.Mode
		appID   string
		secret  string
		code    string
		timeout time.Duration
		reuse   bool
		want    string // openid on success
		errCode string
		detail  string
	}{
		{name: "success", code: "071abc", want: wxloginsim.OpenID(appID, "071abc")},
		{name: "invalid code", code: "bad-code", errCode: booking.EUNAUTHORIZED, detail: "40029"},
		{name: "risky user", code: "risky-1", errCode: booking.EUNAUTHORIZED, detail: "40226"},
		{name: "reused code", code: "twice", reuse: true, errCode: booking.EUNAUTHORIZED, detail: "40163"},
		{name: "busy", mode: wxloginsim.Busy, code: "071abc", errCode: booking.EUPSTREAM, detail: "-1"},
		{name: "garbage", mode: wxloginsim.Garbage, code: "071abc", errCode: booking.EUPSTREAM, detail: "not JSON"},
		{name: "5xx", mode: wxloginsim.Unavailable, code: "071abc", errCode: booking.EUPSTREAM, detail: "503"},
		{name: "timeout", mode: wxloginsim.Hang, code: "071abc", timeout: 50 * time.Millisecond, errCode: booking.EUPSTREAM, detail: "timeout"},
		{name: "wrong secret", secret: "wrong-" + secret, code: "071abc", errCode: booking.EINTERNAL, detail: "40125"},
		{name: "wrong appid", appID: "wxother", code: "071abc", errCode: booking.EINTERNAL, detail: "40013"},
		{name: "empty code", code: "", errCode: booking.EBADREQUEST},
		{name: "huge code", code: strings.Repeat("c", 513), errCode: booking.EBADREQUEST},
		{name: "128 four-byte characters", code: strings.Repeat("\U0001F485", 128), want: wxloginsim.OpenID(appID, strings.Repeat("\U0001F485", 128))},
		{name: "code needing escaping", code: "a&secret=x#y", want: wxloginsim.OpenID(appID, "a&secret=x#y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := wxloginsim.New(appID, secret)
			sim.RejectReuse = tt.reuse
			sim.SetMode(tt.mode)
			srv := httptest.NewServer(sim)
			defer srv.Close()
			defer sim.Close() // runs first: frees a hung handler so srv.Close returns
			c := &wxlogin.Client{BaseURL: srv.URL + "/", AppID: appID, AppSecret: secret, HTTP: srv.Client()}
			if tt.appID != "" {
				c.AppID = tt.appID
			}
			if tt.secret != "" {
				c.AppSecret = tt.secret
			}
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			if tt.reuse {
				if _, err := c.Code2Session(ctx, tt.code); err != nil {
					t.Fatalf("first use: %v", err)
				}
			}
			got, err := c.Code2Session(ctx, tt.code)
			if got != tt.want || booking.ErrorCode(err) != tt.errCode {
				t.Fatalf("Code2Session = %q, %v; want %q, %q", got, err, tt.want, tt.errCode)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.detail) {
					t.Errorf("detail %q does not mention %q", err, tt.detail)
				}
				for _, s := range []string{secret, "S3CR3T"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error leaks the secret: %v", err)
					}
				}
			}
		})
	}
}

func TestSameCodeSameOpenID(t *testing.T) {
	srv := httptest.NewServer(wxloginsim.New(appID, secret))
	defer srv.Close()
	c := &wxlogin.Client{BaseURL: srv.URL, AppID: appID, AppSecret: secret}
	a, err1 := c.Code2Session(context.Background(), "code-1")
	b, err2 := c.Code2Session(context.Background(), "code-1")
	d, err3 := c.Code2Session(context.Background(), "code-2")
	if err1 != nil || err2 != nil || err3 != nil || a != b || a == d || len(a) != 28 {
		t.Errorf("%q %q %q %v %v %v", a, b, d, err1, err2, err3)
	}
}

func TestNetworkErrorHidesSecret(t *testing.T) {
	// A closed server: the dial fails and net/http's error quotes the whole URL.
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c := &wxlogin.Client{BaseURL: base, AppID: appID, AppSecret: secret}
	_, err := c.Code2Session(context.Background(), "071abc")
	if booking.ErrorCode(err) != booking.EUPSTREAM {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "S3CR3T") || strings.Contains(err.Error(), "secret=") {
		t.Errorf("error leaks the secret: %v", err)
	}
}

func TestMissingCredentials(t *testing.T) {
	for _, c := range []*wxlogin.Client{{AppSecret: secret}, {AppID: appID}} {
		_, err := c.Code2Session(context.Background(), "071abc")
		if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "WX_APP") {
			t.Errorf("err = %v", err)
		}
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var hit atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer srv.Close()
	c := &wxlogin.Client{BaseURL: srv.URL, AppID: appID, AppSecret: secret}
	_, err := c.Code2Session(context.Background(), "071abc")
	if booking.ErrorCode(err) != booking.EUPSTREAM || hit.Load() {
		t.Errorf("err = %v, redirect followed: %v", err, hit.Load())
	}
}
