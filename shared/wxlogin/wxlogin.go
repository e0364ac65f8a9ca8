// Package wxlogin exchanges a mini-program login code for the customer's openid
// (WeChat's code2session). The session_key WeChat sends along is dropped here: the
// product never needs it, so it is never returned, stored or logged.
package wxlogin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"salon/shared/booking"
)

// DefaultBaseURL is WeChat's API host.
const DefaultBaseURL = "https://api.weixin.qq.com"

const (
	// maxCodeBytes bounds the code sent in the query: the login handler takes
	// at most 128 characters, which UTF-8 spells in at most 512 bytes.
	maxCodeBytes    = 128 * utf8.UTFMax
	maxResponseSize = 64 << 10
)

// DefaultHTTP is the HTTP client for WeChat's server API when a client is given
// none (here and in package wxmsg). It does not follow redirects, because a
// redirect would carry the app secret or the access token in the query to
// another host.
var DefaultHTTP = &http.Client{
	Timeout: 5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// Client calls code2session.
type Client struct {
	BaseURL   string // WX_API_BASE; empty means DefaultBaseURL
	AppID     string // WX_APPID
	AppSecret string // WX_APPSECRET
	HTTP      *http.Client
}

type code2SessionResponse struct {
	OpenID  string `json:"openid"`
	ErrCode int    `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
	// session_key and unionid are deliberately not decoded.
}

// Code2Session returns the openid WeChat gives for a login code. A code WeChat
// rejects is UNAUTHORIZED; WeChat being busy, down, slow or answering garbage is
// UPSTREAM_UNAVAILABLE; WeChat refusing our own appid or secret is INTERNAL, because
// no customer can fix that. No error text ever contains the app secret.
func (c *Client) Code2Session(ctx context.Context, code string) (openid string, err error) {
	if c.AppID == "" {
		return "", booking.Errorf(booking.EINTERNAL, "missing required setting WX_APPID")
	}
	if c.AppSecret == "" {
		return "", booking.Errorf(booking.EINTERNAL, "missing required setting WX_APPSECRET")
	}
	if code == "" || len(code) > maxCodeBytes {
		return "", booking.Errorf(booking.EBADREQUEST, "login code of %d bytes", len(code))
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	q := url.Values{
		"appid":      {c.AppID},
		"secret":     {c.AppSecret},
		"js_code":    {code},
		"grant_type": {"authorization_code"},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sns/jscode2session?"+q.Encode(), nil)
	if err != nil {
		return "", booking.Errorf(booking.EINTERNAL, "code2session: bad WX_API_BASE: %s", c.scrub(err))
	}
	hc := c.HTTP
	if hc == nil {
		hc = DefaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: %s", c.scrub(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize))
	if err != nil {
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: reading answer: %s", c.scrub(err))
	}
	if resp.StatusCode != http.StatusOK {
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: HTTP %d", resp.StatusCode)
	}
	var r code2SessionResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: answer is not JSON (%d bytes)", len(body))
	}
	msg := c.scrubString(truncate(r.ErrMsg, 200))
	switch {
	case r.ErrCode == 0 && r.OpenID != "":
		return r.OpenID, nil
	case r.ErrCode == 0:
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: answer without openid")
	case r.ErrCode < 0 || r.ErrCode == errRateLimited:
		// -1 is "system busy"; the quota limit clears by itself. Either way the
		// customer should simply try again later.
		return "", booking.Errorf(booking.EUPSTREAM, "code2session: errcode %d: %s", r.ErrCode, msg)
	case configErrCodes[r.ErrCode]:
		return "", booking.Errorf(booking.EINTERNAL, "code2session: WeChat refused WX_APPID/WX_APPSECRET: errcode %d: %s", r.ErrCode, msg)
	default:
		// 40029 invalid code, 40163 code already used, 40226 risky user, and any other
		// refusal of this customer's code.
		return "", booking.Errorf(booking.EUNAUTHORIZED, "code2session: errcode %d: %s", r.ErrCode, msg)
	}
}

// errRateLimited is WeChat's "API minute-quota reach limit".
const errRateLimited = 45011

// configErrCodes are WeChat's refusals of the app's own credentials.
var configErrCodes = map[int]bool{
	40001: true, // invalid credential (secret)
	40002: true, // invalid grant_type
	40013: true, // invalid appid
	40125: true, // invalid appsecret
	41002: true, // appid missing
	41004: true, // appsecret missing
	61024: true, // not a mini-program appid
}

// scrub renders err without the app secret. A *url.Error quotes the whole request URL,
// query and secret included, so only its cause is kept.
func (c *Client) scrub(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
		if ue.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return "timeout: " + c.scrubString(err.Error())
		}
	}
	return c.scrubString(err.Error())
}

func (c *Client) scrubString(s string) string {
	if c.AppSecret == "" {
		return s
	}
	for _, v := range []string{c.AppSecret, url.QueryEscape(c.AppSecret), url.PathEscape(c.AppSecret)} {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
