package wxmsg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"salon/shared/booking"
	"salon/shared/logctx"
	"salon/shared/wxlogin"
)

// DefaultBaseURL is WeChat's API host.
const DefaultBaseURL = "https://api.weixin.qq.com"

// RefreshBefore is how long before its expiry a stored token is no longer used: a
// message sent with it could arrive after it expired.
const RefreshBefore = 5 * time.Minute

// WeChat's error codes this package acts on.
const (
	CodeInvalidToken   = 40001 // the access token is not (or no longer) valid
	CodeExpiredToken   = 42001 // the access token expired
	CodeNoSubscription = 43101 // the customer refused, or used up their one-time subscription
	CodeSystemBusy     = -1
)

// permanentCodes are WeChat's refusals of subscribe/send that no retry can mend:
// the same message would be refused the same way for 24 hours.
var permanentCodes = map[int]bool{
	40003: true, // the openid is not valid for this app
	40037: true, // the template id is not valid
	41030: true, // the page is not a page of the published mini-program
	47003: true, // a keyword's value breaks the template's rules
}

// maxTokenLen is what the token store keeps (t_wx_token.access_token); WeChat
// asks for at least 512.
const maxTokenLen = 1024

const maxResponseSize = 64 << 10

// ErrNoSubscription is the 43101 refusal: the customer never subscribed to this
// template, or used up their one-time subscription. Sending again cannot succeed
// until they subscribe again, so it must never be retried. It is the domain's
// booking.ErrNoSubscription, so the outbox recognises it without knowing WeChat.
var ErrNoSubscription = booking.ErrNoSubscription

// APIError is WeChat answering an error code. errors.Is(err, ErrNoSubscription)
// is true for code 43101. Msg never contains the token or the app secret.
type APIError struct {
	Op   string // "stable_token" or "subscribe/send"
	Code int
	Msg  string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("wxmsg: %s: errcode %d: %s", e.Op, e.Code, e.Msg)
}

// Is makes a 43101 answer match ErrNoSubscription, and a refusal no retry can
// mend (40003, 40037, 41030, 47003) match booking.ErrUndeliverable.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNoSubscription:
		return e.Code == CodeNoSubscription
	case booking.ErrUndeliverable:
		return e.Op == "subscribe/send" && permanentCodes[e.Code]
	}
	return false
}

// TokenStore keeps the access token where every instance sees it (the database),
// so that they share one token instead of each fetching its own.
type TokenStore interface {
	// CachedToken returns the stored token for appID and when it expires; an
	// empty token means none is stored.
	CachedToken(ctx context.Context, appID string) (token string, expiresAt time.Time, err error)
	// SaveToken stores appID's token.
	SaveToken(ctx context.Context, appID, token string, expiresAt time.Time) error
}

// Client sends subscribe messages. It is safe for concurrent use.
type Client struct {
	BaseURL   string // WX_API_BASE; empty means DefaultBaseURL
	AppID     string // WX_APPID
	AppSecret string // WX_APPSECRET
	Tokens    TokenStore
	HTTP      *http.Client     // nil: 5-second timeout, no redirects
	Now       func() time.Time // nil: time.Now; decides when a stored token is too old
}

// Send sends t, filled with v (times in loc), to the customer openid.
//
// The access token is the stored one unless it expires within RefreshBefore; else
// one from stable_token (normal mode, which hands every caller the same valid
// token), stored for the others. When WeChat calls the token invalid or expired
// (40001, 42001), Send takes a fresh one once (force_refresh, unless another
// instance already replaced the bad one in the store) and tries once more.
//
// Errors: ErrNoSubscription (via errors.Is; never retry), booking.ErrUndeliverable
// (via errors.Is, for a refusal no retry can mend), *APIError for other error codes, and transport failures, wrapped. None contains the token or the
// secret.
func (c *Client) Send(ctx context.Context, openid string, t *Template, v Values, loc *time.Location) error {
	switch {
	case c.AppID == "":
		return errors.New("wxmsg: missing required setting WX_APPID")
	case c.AppSecret == "":
		return errors.New("wxmsg: missing required setting WX_APPSECRET")
	case c.Tokens == nil:
		return errors.New("wxmsg: Client.Tokens is nil: the access token must be shared through the store")
	case t == nil:
		return errors.New("wxmsg: no template")
	case openid == "":
		return errors.New("wxmsg: no openid")
	}
	page, data := t.Render(v, loc)
	msg := sendRequest{ToUser: openid, TemplateID: t.ID, Page: page, Data: make(map[string]valueField, len(data))}
	for k, v := range data {
		msg.Data[k] = valueField{Value: v}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("wxmsg: %w", err)
	}

	token, err := c.token(ctx)
	if err != nil {
		return err
	}
	ans, err := c.send(ctx, token, body)
	if err != nil {
		return err
	}
	if ans.ErrCode == CodeInvalidToken || ans.ErrCode == CodeExpiredToken {
		if token, err = c.refresh(ctx, token); err != nil {
			return err
		}
		if ans, err = c.send(ctx, token, body); err != nil {
			return err
		}
	}
	if ans.ErrCode != 0 {
		return &APIError{Op: "subscribe/send", Code: ans.ErrCode, Msg: c.scrubString(truncate(ans.ErrMsg, 200), token)}
	}
	return nil
}

type sendRequest struct {
	ToUser     string                `json:"touser"`
	TemplateID string                `json:"template_id"`
	Page       string                `json:"page,omitempty"`
	Data       map[string]valueField `json:"data"`
}

type valueField struct {
	Value string `json:"value"`
}

type errAnswer struct {
	ErrCode int    `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

func (c *Client) send(ctx context.Context, token string, body []byte) (errAnswer, error) {
	var ans errAnswer
	err := c.post(ctx, "subscribe/send", "/cgi-bin/message/subscribe/send?access_token="+url.QueryEscape(token), body, &ans, token)
	return ans, err
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// token returns the stored token while it has more than RefreshBefore to live, else
// a new one. A store that cannot be read is logged and skipped: stable_token in
// normal mode answers the token the others use anyway.
func (c *Client) token(ctx context.Context) (string, error) {
	tok, exp, err := c.Tokens.CachedToken(ctx, c.AppID)
	if err != nil {
		logctx.From(ctx, nil).Warn("wxmsg: reading the stored access token failed; asking WeChat", "err", c.scrub(err, ""))
	} else if tok != "" && exp.After(c.now().Add(RefreshBefore)) {
		return tok, nil
	}
	return c.fetch(ctx, false)
}

// refresh replaces a token WeChat refused. Force-refreshing invalidates the token
// every other instance holds, so when the store already has a different, live
// token (another instance refreshed first) that one is used instead.
func (c *Client) refresh(ctx context.Context, refused string) (string, error) {
	tok, exp, err := c.Tokens.CachedToken(ctx, c.AppID)
	if err == nil && tok != "" && tok != refused && exp.After(c.now().Add(RefreshBefore)) {
		return tok, nil
	}
	return c.fetch(ctx, true)
}

type stableTokenRequest struct {
	GrantType    string `json:"grant_type"`
	AppID        string `json:"appid"`
	Secret       string `json:"secret"`
	ForceRefresh bool   `json:"force_refresh"`
}

type stableTokenAnswer struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"`
	ErrCode     int    `json:"errcode"`
	ErrMsg      string `json:"errmsg"`
}

// fetch asks stable_token for a token and stores it. A store that cannot be
// written is logged, not fatal: the token works, and the next instance fetches
// the same one.
func (c *Client) fetch(ctx context.Context, force bool) (string, error) {
	body, err := json.Marshal(stableTokenRequest{GrantType: "client_credential", AppID: c.AppID, Secret: c.AppSecret, ForceRefresh: force})
	if err != nil {
		return "", fmt.Errorf("wxmsg: %w", err)
	}
	asked := c.now()
	var ans stableTokenAnswer
	if err := c.post(ctx, "stable_token", "/cgi-bin/stable_token", body, &ans, ""); err != nil {
		return "", err
	}
	switch {
	case ans.ErrCode != 0:
		return "", &APIError{Op: "stable_token", Code: ans.ErrCode, Msg: c.scrubString(truncate(ans.ErrMsg, 200), ans.AccessToken)}
	case ans.AccessToken == "":
		return "", errors.New("wxmsg: stable_token: answer without access_token")
	case len(ans.AccessToken) > maxTokenLen:
		return "", fmt.Errorf("wxmsg: stable_token: a token of %d bytes, more than the %d the store keeps", len(ans.AccessToken), maxTokenLen)
	case ans.ExpiresIn <= 0:
		return "", errors.New("wxmsg: stable_token: answer without expires_in")
	}
	// Counted from before the request, so the token is never thought to live
	// longer than it does.
	expiresAt := asked.Add(time.Duration(ans.ExpiresIn) * time.Second)
	if err := c.Tokens.SaveToken(ctx, c.AppID, ans.AccessToken, expiresAt); err != nil {
		logctx.From(ctx, nil).Warn("wxmsg: storing the access token failed; other instances will fetch it again", "err", c.scrub(err, ans.AccessToken))
	}
	return ans.AccessToken, nil
}

// post sends body to path and decodes WeChat's JSON answer into out. WeChat
// answers errors with HTTP 200 and an errcode; any other status is a failure of
// the way there.
func (c *Client) post(ctx context.Context, op, path string, body []byte, out any, token string) error {
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("wxmsg: %s: bad WX_API_BASE: %s", op, c.scrub(err, token))
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = wxlogin.DefaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("wxmsg: %s: %w", op, c.cause(err, token))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize))
	if err != nil {
		return fmt.Errorf("wxmsg: %s: reading the answer: %w", op, c.cause(err, token))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("wxmsg: %s: HTTP %d", op, resp.StatusCode)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("wxmsg: %s: the answer is not JSON (%d bytes)", op, len(raw))
	}
	return nil
}

// cause returns err without the request URL (a *url.Error quotes it, token and
// all), keeping the chain (timeouts, cancellation) when its text is clean.
func (c *Client) cause(err error, token string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if s := c.scrub(err, token); s != err.Error() {
		return errors.New(s)
	}
	return err
}

func (c *Client) scrub(err error, token string) string {
	return c.scrubString(err.Error(), token)
}

// scrubString removes the app secret and token from s, as written and as escaped
// in a URL.
func (c *Client) scrubString(s, token string) string {
	for _, secret := range []string{c.AppSecret, token} {
		if secret == "" {
			continue
		}
		for _, v := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
