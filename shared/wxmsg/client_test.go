package wxmsg_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/wxlogin/wxloginsim"
	"salon/shared/wxmsg"
)

// The store the functions use is the token store.
var _ wxmsg.TokenStore = (*mysql.DB)(nil)

const (
	appID  = "wx0123456789abcdef"
	secret = "test-appsecret-never-in-errors"
)

var (
	ctx      = context.Background()
	shanghai = time.FixedZone("CST", 8*3600)
	values   = wxmsg.Values{
		BookingID: 17,
		StartAt:   time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC),
		EndAt:     time.Date(2026, 5, 1, 3, 30, 0, 0, time.UTC),
		AmountFen: 5000,
		ShopName:  "美甲店",
	}
)

// fixture is the simulator over real HTTP and a real database as the token store.
type fixture struct {
	sim  *wxloginsim.Server
	srv  *httptest.Server
	db   *mysql.DB
	tmpl *wxmsg.Template
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	sim := wxloginsim.New(appID, secret)
	sim.AcceptTemplates("tmpl-confirmed")
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { sim.Close(); srv.Close() })
	tmpl, err := wxmsg.ParseTemplate(`{"id":"tmpl-confirmed","page":"pages/booking/detail?id={bookingId}",` +
		`"data":{"thing1":"{shopName}","time2":"{startAt}","amount3":"{amountYuan}元","character_string4":"BK{bookingId}"}}`)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{sim: sim, srv: srv, db: mysqltest.New(t), tmpl: tmpl}
}

func (f *fixture) client() *wxmsg.Client {
	return &wxmsg.Client{BaseURL: f.srv.URL, AppID: appID, AppSecret: secret, Tokens: f.db}
}

// clean fails if err's text carries the secret or the simulator's current token.
func (f *fixture) clean(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), secret) || (f.sim.Token() != "" && strings.Contains(err.Error(), f.sim.Token())) {
		t.Fatalf("error text carries a secret: %v", err)
	}
}

func TestSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.client().Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	msgs := f.sim.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	want := map[string]string{"thing1": "美甲店", "time2": "2026-05-01 10:00", "amount3": "50.00元", "character_string4": "BK17"}
	if m.ToUser != "o-alice" || m.TemplateID != "tmpl-confirmed" || m.Page != "pages/booking/detail?id=17" || len(m.Data) != len(want) {
		t.Fatalf("message %+v", m)
	}
	for k, v := range want {
		if m.Data[k] != v {
			t.Errorf("%s = %q, want %q", k, m.Data[k], v)
		}
	}
	tok, exp, err := f.db.CachedToken(ctx, appID)
	if err != nil || tok != f.sim.Token() || time.Until(exp) < time.Hour {
		t.Fatalf("stored token %v expiring %v (%v)", tok == f.sim.Token(), exp, err)
	}
}

// Two instances with one database share one token: one stable_token call for both.
func TestTokenSharedThroughTheStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.client(), f.client()
	for i, c := range []*wxmsg.Client{a, b, a, b} {
		if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if all, forced := f.sim.TokenCalls(); all != 1 || forced != 0 {
		t.Fatalf("stable_token called %d times (%d forced), want once", all, forced)
	}

	// Within RefreshBefore of its expiry the stored token is not used: a normal
	// stable_token call (WeChat hands back the same token while it lives).
	_, exp, _ := f.db.CachedToken(ctx, appID)
	late := f.client()
	late.Now = func() time.Time { return exp.Add(-wxmsg.RefreshBefore + time.Second) }
	if err := late.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	if all, forced := f.sim.TokenCalls(); all != 2 || forced != 0 {
		t.Fatalf("near expiry: stable_token called %d times (%d forced), want 2 (0)", all, forced)
	}
	if len(f.sim.Messages()) != 5 {
		t.Fatalf("%d messages, want 5", len(f.sim.Messages()))
	}
}

// A token WeChat calls expired (42001) is replaced exactly once, and the message
// goes through.
func TestExpiredTokenRefreshedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	f.sim.ExpireToken()
	if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	if all, forced := f.sim.TokenCalls(); all != 2 || forced != 1 {
		t.Fatalf("stable_token called %d times (%d forced), want 2 (1)", all, forced)
	}
	if sends, msgs := f.sim.SendCalls(), len(f.sim.Messages()); sends != 3 || msgs != 2 {
		t.Fatalf("%d sends, %d messages; want 3 (one refused with 42001), 2", sends, msgs)
	}
	if tok, _, _ := f.db.CachedToken(ctx, appID); tok != f.sim.Token() {
		t.Fatal("the fresh token was not stored")
	}
	// The others now use the stored fresh token without asking.
	if err := f.client().Send(ctx, "o-bob", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	if all, _ := f.sim.TokenCalls(); all != 2 {
		t.Fatalf("stable_token called %d times, want still 2", all)
	}
}

// hookedStore is the real store with a hook after the first read, to let another
// instance act between this instance reading the token and using it.
type hookedStore struct {
	*mysql.DB
	once  sync.Once
	after func()
}

func (h *hookedStore) CachedToken(ctx context.Context, appID string) (string, time.Time, error) {
	tok, exp, err := h.DB.CachedToken(ctx, appID)
	h.once.Do(h.after)
	return tok, exp, err
}

// When another instance already replaced the token (force_refresh, stored), the
// instance whose token WeChat refused takes the stored one instead of forcing
// yet another, which would invalidate the other's.
func TestRefusedTokenAlreadyReplacedByAnotherInstance(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.client().Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	other := f.client()
	store := &hookedStore{DB: f.db, after: func() {
		// The other instance, seeing 40001 itself, forces a new token and stores it.
		f.sim.ExpireToken()
		if err := other.Send(ctx, "o-bob", f.tmpl, values, shanghai); err != nil {
			t.Error(err)
		}
	}}
	c := f.client()
	c.Tokens = store
	if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	if all, forced := f.sim.TokenCalls(); all != 2 || forced != 1 {
		t.Fatalf("stable_token called %d times (%d forced), want 2 (1: only the other instance's)", all, forced)
	}
	if len(f.sim.Messages()) != 3 {
		t.Fatalf("%d messages, want 3", len(f.sim.Messages()))
	}
}

// 43101: ErrNoSubscription, and no second request.
func TestNoSubscriptionIsNotRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.sim.RefuseMessagesFor("o-carol")
	err := f.client().Send(ctx, "o-carol", f.tmpl, values, shanghai)
	if !errors.Is(err, wxmsg.ErrNoSubscription) || !errors.Is(err, booking.ErrNoSubscription) {
		t.Fatalf("got %v, want ErrNoSubscription", err)
	}
	var api *wxmsg.APIError
	if !errors.As(err, &api) || api.Code != wxmsg.CodeNoSubscription {
		t.Fatalf("got %#v, want an APIError 43101 too", err)
	}
	f.clean(t, err)
	if n := f.sim.SendCalls(); n != 1 {
		t.Fatalf("%d send requests, want 1", n)
	}
	if len(f.sim.Messages()) != 0 {
		t.Fatal("a refused message was listed")
	}
}

// WeChat down: an *APIError for its system error, a plain error for HTTP failures
// and timeouts; none is ErrNoSubscription, none carries a secret.
func TestOutage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()

	f.sim.FailNextSends(1)
	err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai)
	var api *wxmsg.APIError
	if !errors.As(err, &api) || api.Code != wxmsg.CodeSystemBusy || api.Op != "subscribe/send" || errors.Is(err, wxmsg.ErrNoSubscription) {
		t.Fatalf("system error: %v", err)
	}
	f.clean(t, err)

	f.sim.SetMode(wxloginsim.Unavailable)
	err = c.Send(ctx, "o-alice", f.tmpl, values, shanghai)
	if err == nil || errors.As(err, &api) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("503: %v", err)
	}
	f.clean(t, err)

	f.sim.SetMode(wxloginsim.Garbage)
	err = c.Send(ctx, "o-alice", f.tmpl, values, shanghai)
	if err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("garbage: %v", err)
	}

	f.sim.SetMode(wxloginsim.Hang)
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = c.Send(tctx, "o-alice", f.tmpl, values, shanghai)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "access_token") {
		t.Fatalf("timeout: %v", err)
	}
	f.clean(t, err)

	// Back up: the message goes through with the same stored token.
	f.sim.SetMode(wxloginsim.Normal)
	if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err != nil {
		t.Fatal(err)
	}
	if all, _ := f.sim.TokenCalls(); all != 1 {
		t.Fatalf("stable_token called %d times, want 1", all)
	}

	// Nobody there at all.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c.BaseURL = dead.URL
	if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err == nil || errors.As(err, &api) {
		t.Fatalf("closed port: %v", err)
	} else {
		f.clean(t, err)
	}
}

// Our own credentials refused: an *APIError from stable_token, without the secret.
func TestBadCredentials(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	c.AppSecret = "wrong-" + secret
	err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai)
	var api *wxmsg.APIError
	if !errors.As(err, &api) || api.Op != "stable_token" || api.Code != 40125 || strings.Contains(err.Error(), "wrong-") {
		t.Fatalf("got %v", err)
	}
	for _, c := range []*wxmsg.Client{
		{BaseURL: f.srv.URL, AppSecret: secret, Tokens: f.db},
		{BaseURL: f.srv.URL, AppID: appID, Tokens: f.db},
		{BaseURL: f.srv.URL, AppID: appID, AppSecret: secret},
	} {
		if err := c.Send(ctx, "o-alice", f.tmpl, values, shanghai); err == nil {
			t.Fatalf("%+v: sent without a setting", c)
		}
	}
	if err := f.client().Send(ctx, "", f.tmpl, values, shanghai); err == nil {
		t.Fatal("sent without an openid")
	}
	if f.sim.SendCalls() != 0 {
		t.Fatalf("%d sends reached WeChat", f.sim.SendCalls())
	}
}

// Values over their keyword's limit are trimmed before sending, so WeChat
// accepts them (the simulator refuses anything over, 47003).
func TestValuesTrimmedToTheLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	v := values
	v.ShopName = "美甲工作室" + strings.Repeat("x", 25) + "\n旗舰店" // 33 characters and a line break
	if utf8.RuneCountInString(v.ShopName) < 30 {
		t.Fatal("the shop name should be longer than 30 characters")
	}
	tmpl, err := wxmsg.ParseTemplate(`{"id":"tmpl-confirmed","data":{"thing1":"{shopName}","phrase2":"{shopName}","character_string3":"BK{bookingId}{amountYuan}{amountYuan}{amountYuan}{amountYuan}{amountYuan}{amountYuan}{amountYuan}","name4":"{shopName}"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client().Send(ctx, "o-alice", tmpl, v, shanghai); err != nil {
		t.Fatal(err)
	}
	got := f.sim.Messages()[0].Data
	if n := utf8.RuneCountInString(got["thing1"]); n != 20 || !strings.HasPrefix(got["thing1"], "美甲工作室xxx") {
		t.Errorf("thing1 %q (%d characters)", got["thing1"], n)
	}
	for k, limit := range map[string]int{"phrase2": 5, "character_string3": 32, "name4": 10} {
		if n := utf8.RuneCountInString(got[k]); n != limit {
			t.Errorf("%s %q: %d characters, want %d", k, got[k], n, limit)
		}
	}
	// The same value untrimmed is what WeChat would refuse.
	raw := strings.NewReader(`{"touser":"o-alice","template_id":"tmpl-confirmed","data":{"thing1":{"value":"` + strings.Repeat("美", 21) + `"}}}`)
	tok, _, _ := f.db.CachedToken(ctx, appID)
	resp, err := http.Post(f.srv.URL+"/cgi-bin/message/subscribe/send?access_token="+tok, "application/json", raw)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "47003") || !strings.Contains(string(body), "data.thing1") {
		t.Fatalf("the simulator accepted 21 characters in a thing: %s", body)
	}
}

// A template id WeChat does not know is its own error code, not a token problem.
func TestUnknownTemplate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tmpl, err := wxmsg.ParseTemplate(`{"id":"tmpl-unknown","data":{"thing1":"{shopName}"}}`)
	if err != nil {
		t.Fatal(err)
	}
	err = f.client().Send(ctx, "o-alice", tmpl, values, shanghai)
	var api *wxmsg.APIError
	if !errors.As(err, &api) || api.Code != 40037 {
		t.Fatalf("got %v", err)
	}
	if all, _ := f.sim.TokenCalls(); all != 1 {
		t.Fatalf("stable_token called %d times", all)
	}
}

// TestWhichRefusalsAreForGood: the subscribe/send refusals no retry can mend
// are booking.ErrUndeliverable (recorded as failed at once); a busy WeChat, an
// expired token and 43101 are not.
func TestWhichRefusalsAreForGood(t *testing.T) {
	for _, c := range []struct {
		op      string
		code    int
		forGood bool
	}{
		{"subscribe/send", 40003, true},
		{"subscribe/send", 40037, true},
		{"subscribe/send", 41030, true},
		{"subscribe/send", 47003, true},
		{"subscribe/send", -1, false},
		{"subscribe/send", 42001, false},
		{"subscribe/send", 43101, false},
		{"stable_token", 40003, false},
	} {
		err := error(&wxmsg.APIError{Op: c.op, Code: c.code})
		if got := errors.Is(err, booking.ErrUndeliverable); got != c.forGood {
			t.Errorf("%s %d: for good %v, want %v", c.op, c.code, got, c.forGood)
		}
	}
}
