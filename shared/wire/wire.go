// Package wire builds what a function needs from its settings, once per warm
// instance: the configuration, the store, WeChat Pay, CLS, WeChat login and the
// session signer, put together into a service. It is the one place where the
// product's packages meet; handlers receive the result and call only the service.
package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/config"
	"salon/shared/mysql"
	"salon/shared/service"
	"salon/shared/session"
	"salon/shared/wechatpay"
	"salon/shared/wxlogin"
	"salon/shared/wxmsg"
)

// Env builds a function's dependencies on first use and keeps them for the life of
// the warm instance: configuration read and checked once, one small connection
// pool, one WeChat Pay client. A failure is not kept, so a fixed setting or a
// database that came back is picked up by the next invocation.
type Env struct {
	Getenv   func(string) string // nil: os.Getenv
	Log      *slog.Logger        // nil: JSON lines on stdout
	AuditOut io.Writer           // nil: stdout
	Now      func() time.Time    // session token clock; nil: time.Now
	// LoginTimeout bounds the code2session call; zero means DefaultLoginTimeout.
	// Tests shorten it to prove a hung WeChat answers 503 without waiting.
	LoginTimeout time.Duration

	logOnce sync.Once
	mu      sync.Mutex
	deps    *Deps
}

// DefaultLoginTimeout is how long /login waits for WeChat's code2session: well
// inside the API's serviceTimeout, so a hung WeChat answers 503 UPSTREAM_UNAVAILABLE
// rather than the gateway's timeout.
const DefaultLoginTimeout = 4 * time.Second

// LoginTimeoutOrDefault is the code2session bound this instance uses.
func (e *Env) LoginTimeoutOrDefault() time.Duration {
	if e.LoginTimeout > 0 {
		return e.LoginTimeout
	}
	return DefaultLoginTimeout
}

// Deps are what the handlers use. The store is reachable only through the
// service: a handler has no way around the service's rules.
type Deps struct {
	Cfg      *config.Config
	Svc      *service.Service
	Sessions *session.Signer // nil when SESSION_SECRET is unset
	Login    *wxlogin.Client // nil when WX_APPID is unset
	Pay      *wechatpay.Client
}

func (e *Env) getenv(name string) string {
	if e.Getenv != nil {
		return e.Getenv(name)
	}
	return os.Getenv(name)
}

// Logger returns the function's structured logger. The default is set once, so
// concurrent first calls (a router and a release run) do not race on Log.
func (e *Env) Logger() *slog.Logger {
	e.logOnce.Do(func() {
		if e.Log == nil {
			e.Log = apigw.NewLogger(os.Stdout)
		}
	})
	return e.Log
}

// Deps returns the dependencies, building them on the first successful call.
func (e *Env) Deps() (*Deps, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deps != nil {
		return e.deps, nil
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return nil, err
	}
	store, err := mysql.Open(cfg.MySQLDSN, mysql.SCFOptions)
	if err != nil {
		return nil, booking.Errorf(booking.EINTERNAL, "%v", err)
	}
	store.LockTTL = cfg.LockTTL
	store.WindowDays = cfg.BookingWindowDays
	store.RemindBefore = cfg.RemindBefore

	d := &Deps{Cfg: cfg}
	d.Svc = &service.Service{Store: store, AppID: cfg.WXAppID, Loc: cfg.ShopTZ, Log: e.Logger(),
		CancelFreeHours: cfg.CancelFreeHours, NoShowGrace: cfg.NoShowGrace, NoShowLimit: cfg.NoShowLimit,
		RefundQueryAfter: cfg.RefundQueryAfter, RemindBefore: cfg.RemindBefore}
	if e.getenv("WECHATPAY_MCHID") != "" {
		pcfg, err := wechatpay.ConfigFromEnv(e.getenv)
		if err != nil {
			store.Close()
			return nil, booking.Errorf(booking.EINTERNAL, "%v", err)
		}
		if d.Pay, err = wechatpay.New(pcfg); err != nil {
			store.Close()
			return nil, booking.Errorf(booking.EINTERNAL, "%v", err)
		}
		d.Svc.Pay, d.Svc.MchID = d.Pay, pcfg.MchID
	}
	if ccfg, ok := cls.ConfigFromEnv(e.getenv); ok {
		d.Svc.Shipper = cls.New(ccfg, e.getenv)
	}
	d.Svc.AuditOut = e.AuditOut
	if d.Svc.AuditOut == nil {
		d.Svc.AuditOut = os.Stdout
	}
	if len(cfg.SessionSecret) > 0 {
		d.Sessions = &session.Signer{Secret: cfg.SessionSecret, Now: e.Now}
	}
	if cfg.WXAppID != "" {
		d.Login = &wxlogin.Client{BaseURL: cfg.WXAPIBase, AppID: cfg.WXAppID, AppSecret: cfg.WXAppSecret}
	}
	if cfg.WXAppID != "" && cfg.WXAppSecret != "" {
		d.Svc.Messages = e.messenger(cfg, store)
	}
	e.deps = d
	return d, nil
}

// Close closes the store of the built dependencies, if any (tests, local tools).
func (e *Env) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.deps == nil {
		return nil
	}
	err := e.deps.Svc.Store.Close()
	e.deps = nil
	return err
}

// messenger builds the sender of customer notifications: WeChat subscribe
// messages, with the access token shared by every instance through the store.
// A bad WX_TMPL_* setting is reported here, once per cold start, and turns off
// that kind only.
func (e *Env) messenger(cfg *config.Config, store *mysql.DB) *messenger {
	templates, errs := wxmsg.TemplatesFromEnv(e.getenv)
	for _, err := range errs {
		e.Logger().Error("notification template setting", "err", err.Error())
	}
	return &messenger{
		client: &wxmsg.Client{BaseURL: cfg.WXAPIBase, AppID: cfg.WXAppID, AppSecret: cfg.WXAppSecret, Tokens: store,
			HTTP: &http.Client{Timeout: messageTimeout}},
		templates: templates, loc: cfg.ShopTZ, shopName: cfg.ShopName,
	}
}

// messageTimeout bounds one call to WeChat's message API: a hung WeChat delays a
// notification, never the change that caused it by more than this.
const messageTimeout = 3 * time.Second

// messenger is the service's Messenger over WeChat subscribe messages.
type messenger struct {
	client    *wxmsg.Client
	templates map[booking.NotificationKind]*wxmsg.Template
	loc       *time.Location
	shopName  string
}

// Send sends one outbox notification with its kind's template; a kind without a
// template is off (booking.ErrNotificationOff).
func (m *messenger) Send(ctx context.Context, n booking.Notification) error {
	t := m.templates[n.Kind]
	if t == nil {
		return booking.ErrNotificationOff
	}
	return m.client.Send(ctx, n.OpenID, t, wxmsg.Values{BookingID: n.BookingID, StartAt: n.StartAt, EndAt: n.EndAt,
		AmountFen: n.AmountFen, ShopName: m.shopName}, m.loc)
}
