// Package instance builds what a function needs from its settings, once per warm
// instance: the configuration, the store, WeChat Pay, CLS, WeChat login and the
// session signers, put together into the service's use cases. It is the one
// place where the product's packages meet. It hands them out one at a time
// (Reservations, Cancels, ..., Sessions, Shop): each function's router takes
// the getters of what it uses, and nothing else.
package instance

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/config"
	"salon/shared/handler/consoleauth"
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
//
// Each function's router binds its Env with For, naming the settings the
// function uses: only those can stop it (see config.LoadFor). An Env not bound
// to a function builds the whole product and checks every setting.
type Env struct {
	Getenv   func(string) string // nil: os.Getenv
	Log      *slog.Logger        // nil: JSON lines on stdout
	AuditOut io.Writer           // nil: stdout
	Now      func() time.Time    // session token clock; nil: time.Now
	// LoginTimeout bounds the code2session call; zero means DefaultLoginTimeout.
	// Tests shorten it to prove a hung WeChat answers 503 without waiting.
	LoginTimeout time.Duration
	// PayTimeout bounds each call to WeChat Pay; zero means
	// wechatpay.DefaultCallTimeout. Tests shorten it to prove a hung WeChat Pay
	// answers 503 without waiting.
	PayTimeout time.Duration
	// PasswordCost is the bcrypt cost of the staff accounts' passwords; zero
	// means booking.PasswordCost, which production keeps. Tests lower it:
	// under the race detector one hash at the real cost takes seconds of CPU,
	// and on a busy machine a request that makes one outlasts serviceTimeout.
	PasswordCost int

	// fn is the function this Env builds for, and parent the Env it was bound
	// from (whose fields above it reads); both nil for an unbound Env.
	fn     *Function
	parent *Env

	logOnce  sync.Once
	mu       sync.Mutex
	built    *deps
	children []*Env
}

// Function names one SCF function and the settings (config names) it uses.
// Required are those of its settings without a default that it cannot serve
// without (each is checked with config.Require where it is needed; here they
// are named so that CheckSettings can refuse a deploy that leaves one empty).
type Function struct {
	Name     string
	Settings []string
	Required []string
}

// CheckSettings runs, without connecting anywhere, the checks a function runs
// on its settings when it starts: the configuration of the settings it uses
// (config.LoadFor, and MYSQL_DSN by the store's rules), the settings it
// requires, the WeChat Pay client's settings
// when WECHATPAY_MCHID switches it on, and the notification templates. The
// deploy preflight (infra/cmd/deploycheck) asks it of each function's
// environment, as serverless.yml would give it, before anything is deployed.
// Checks that need the network (MYSQL_DSN's server, WECHATPAY_PLATFORM_CERTS=
// download) are left to the function.
func CheckSettings(fn Function, getenv func(string) string) error {
	cfg, err := config.LoadFor(getenv, fn.Settings)
	if err != nil {
		return err
	}
	if err := cfg.Require(fn.Required...); err != nil {
		return err
	}
	var errs []error
	if err := checkDSN(cfg.MySQLDSN); err != nil && slices.Contains(fn.Settings, "MYSQL_DSN") {
		errs = append(errs, err)
	}
	if getenv("WECHATPAY_MCHID") != "" && slices.Contains(fn.Settings, "WECHATPAY_MCHID") {
		// As build: the client of a function that uses WeChat Pay.
		pcfg, err := wechatpay.ConfigFromEnv(getenv)
		if err == nil && !pcfg.DownloadPlatformCerts {
			_, err = wechatpay.New(pcfg)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.WXAppID != "" && cfg.WXAppSecret != "" {
		// A function logs these and turns the kind off; before a deploy, a
		// template that would silently send nothing is a mistake to fix.
		_, terrs := wxmsg.TemplatesFromEnv(getenv)
		errs = append(errs, terrs...)
	}
	return errors.Join(errs...)
}

// For returns the Env of one function: the same environment, logger, audit
// output and clocks as e (read when the dependencies are built, so a test may
// still set them), and dependencies of its own, built from the settings fn
// uses. Asking again for a function of the same name returns the same Env, so
// a test that builds a router per request still has one pool per function.
// Closing e closes them too.
func (e *Env) For(fn Function) *Env {
	root := e.root()
	root.mu.Lock()
	defer root.mu.Unlock()
	for _, c := range root.children {
		if c.fn.Name == fn.Name {
			return c
		}
	}
	child := &Env{fn: &fn, parent: root}
	root.children = append(root.children, child)
	return child
}

func (e *Env) root() *Env {
	if e.parent != nil {
		return e.parent
	}
	return e
}

// DefaultLoginTimeout is how long /login waits for WeChat's code2session: well
// inside the API's serviceTimeout, so a hung WeChat answers 503 UPSTREAM_UNAVAILABLE
// rather than the gateway's timeout.
const DefaultLoginTimeout = 4 * time.Second

// LoginTimeoutOrDefault is the code2session bound this instance uses.
func (e *Env) LoginTimeoutOrDefault() time.Duration {
	if t := e.root().LoginTimeout; t > 0 {
		return t
	}
	return DefaultLoginTimeout
}

// deps are everything one function's Env builds, kept together so that they
// are built (and fail) together; the getters below hand them out one at a time.
type deps struct {
	cfg         *config.Config
	svc         *service.Service
	sessions    *session.Signer   // nil when SESSION_SECRET is unset
	consoleKeys *consoleauth.Keys // nil when SESSION_SECRET is unset
	login       *wxlogin.Client   // nil when WX_APPID is unset
	pay         *wechatpay.Client // nil when WeChat Pay is not configured
	shop        Shop
}

// Shop is what the API and the console show of the salon's settings besides
// its rules, which are the use cases' own (service.Common's Policy).
type Shop struct {
	Name string // SHOP_NAME
	// Loc is the shop's time zone (SHOP_TZ), the use cases' Loc, for a
	// function that calls none (login).
	Loc *time.Location
	// TemplateIDs are the subscribe-message template ids of the kinds of
	// notification that are on (WX_TMPL_*), for GET /config.
	TemplateIDs map[booking.NotificationKind]string
}

// PayNotifications checks a WeChat Pay notification's signature and decrypts
// it (*wechatpay.Client): all that function paynotify asks of WeChat Pay
// itself. What the notification then changes is the Cashier's.
type PayNotifications interface {
	ParsePaymentNotification(ctx context.Context, r *http.Request) (*booking.PaymentNotice, error)
	ParseRefundNotification(ctx context.Context, r *http.Request) (*booking.RefundNotice, error)
}

func (e *Env) getenv(name string) string {
	if g := e.root().Getenv; g != nil {
		return g(name)
	}
	return os.Getenv(name)
}

// Logger returns the function's structured logger. The default is set once, so
// concurrent first calls (a router and a release run) do not race on Log.
func (e *Env) Logger() *slog.Logger {
	r := e.root()
	r.logOnce.Do(func() {
		if r.Log == nil {
			r.Log = apigw.NewLogger(os.Stdout)
		}
	})
	return r.Log
}

// load returns the function's dependencies, building them on the first
// successful call. A failure is not kept: the next call builds again.
func (e *Env) load() (*deps, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.built != nil {
		return e.built, nil
	}
	d, err := e.build()
	if err != nil {
		return nil, err
	}
	e.built = d
	return d, nil
}

// get is one of the function's dependencies, chosen by pick, building them all
// on first use.
func get[T any](e *Env, pick func(*deps) T) (T, error) {
	d, err := e.load()
	if err != nil {
		var none T
		return none, err
	}
	return pick(d), nil
}

// The use cases (package service), one getter each: a router takes the
// getters of those it calls. Each builds the function's dependencies on first
// use, and a failure is not kept, so a fixed setting or a database that came
// back is picked up by the next request.

func (e *Env) Reservations() (*service.Reservations, error) {
	return get(e, func(d *deps) *service.Reservations { return d.svc.Reservations })
}

func (e *Env) Cancels() (*service.Cancels, error) {
	return get(e, func(d *deps) *service.Cancels { return d.svc.Cancels })
}

func (e *Env) Cashier() (*service.Cashier, error) {
	return get(e, func(d *deps) *service.Cashier { return d.svc.Cashier })
}

func (e *Env) Door() (*service.Door, error) {
	return get(e, func(d *deps) *service.Door { return d.svc.Door })
}

func (e *Env) Moves() (*service.Moves, error) {
	return get(e, func(d *deps) *service.Moves { return d.svc.Moves })
}

func (e *Env) Timetable() (*service.Timetable, error) {
	return get(e, func(d *deps) *service.Timetable { return d.svc.Timetable })
}

func (e *Env) Menu() (*service.Menu, error) {
	return get(e, func(d *deps) *service.Menu { return d.svc.Menu })
}

func (e *Env) ConsoleReads() (*service.ConsoleReads, error) {
	return get(e, func(d *deps) *service.ConsoleReads { return d.svc.ConsoleReads })
}

func (e *Env) Team() (*service.Team, error) {
	return get(e, func(d *deps) *service.Team { return d.svc.Team })
}

// Reports are the owner's figures: the reports, the export, the day's takings.
func (e *Env) Reports() (*service.Reports, error) {
	return get(e, func(d *deps) *service.Reports { return d.svc.Reports })
}

func (e *Env) ReleaseRun() (*service.ReleaseRun, error) {
	return get(e, func(d *deps) *service.ReleaseRun { return d.svc.ReleaseRun })
}

func (e *Env) Reconciliation() (*service.Reconciliation, error) {
	return get(e, func(d *deps) *service.Reconciliation { return d.svc.Reconciliation })
}

// Service is every use case over the function's store, for the tests and the
// local tools that set up what a request will find. The routers are given
// only the getters of the use cases they call.
func (e *Env) Service() (*service.Service, error) {
	return get(e, func(d *deps) *service.Service { return d.svc })
}

// Sessions is the signer of the customers' session tokens; without
// SESSION_SECRET, INTERNAL naming it.
func (e *Env) Sessions() (*session.Signer, error) {
	d, err := e.load()
	if err != nil {
		return nil, err
	}
	if err := d.cfg.Require("SESSION_SECRET"); err != nil {
		return nil, err
	}
	return d.sessions, nil
}

// ConsoleKeys are the console's session and CSRF keys, derived from
// SESSION_SECRET and ADMIN_TOKEN; without SESSION_SECRET, INTERNAL naming it.
func (e *Env) ConsoleKeys() (*consoleauth.Keys, error) {
	d, err := e.load()
	if err != nil {
		return nil, err
	}
	if err := d.cfg.Require("SESSION_SECRET"); err != nil {
		return nil, err
	}
	return d.consoleKeys, nil
}

// AdminToken is ADMIN_TOKEN: the salon's bearer token and the built-in
// owner's password; "" switches the admin API and the console off.
func (e *Env) AdminToken() (string, error) {
	return get(e, func(d *deps) string { return d.cfg.AdminToken })
}

// Login is WeChat's code2session client; without WX_APPID or WX_APPSECRET,
// INTERNAL naming the first missing.
func (e *Env) Login() (*wxlogin.Client, error) {
	d, err := e.load()
	if err != nil {
		return nil, err
	}
	if err := d.cfg.Require("WX_APPID", "WX_APPSECRET"); err != nil {
		return nil, err
	}
	return d.login, nil
}

// Shop is the shop's name and time zone and the notification templates that
// are on.
func (e *Env) Shop() (Shop, error) {
	return get(e, func(d *deps) Shop { return d.shop })
}

// PayNotifications verifies WeChat Pay's notifications; nil when WeChat Pay
// is not configured (WECHATPAY_MCHID unset).
func (e *Env) PayNotifications() (PayNotifications, error) {
	d, err := e.load()
	if err != nil || d.pay == nil {
		// A nil *wechatpay.Client would make a non-nil interface.
		return nil, err
	}
	return d.pay, nil
}

// uses reports whether this Env's function uses the named setting (every
// setting, for an Env not bound to a function).
func (e *Env) uses(name string) bool {
	return e.fn == nil || slices.Contains(e.fn.Settings, name)
}

func (e *Env) build() (*deps, error) {
	root, log := e.root(), e.Logger()
	function := "salon"
	var cfg *config.Config
	var err error
	if e.fn == nil {
		cfg, err = config.Load(e.getenv)
	} else {
		function = e.fn.Name
		cfg, err = config.LoadFor(e.getenv, e.fn.Settings)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn("setting ignored", "function", function, "warning", w)
	}
	if err := checkDSN(cfg.MySQLDSN); err != nil {
		if e.uses("MYSQL_DSN") {
			return nil, err
		}
		// Same rule as config's: a bad setting stops only what uses it.
		log.Warn("setting ignored", "function", function,
			"warning", "MYSQL_DSN (not used by this function, left at its default): "+err.Error())
		cfg.MySQLDSN = config.DefaultMySQLDSN
	}
	store, err := mysql.Open(cfg.MySQLDSN, mysql.SCFOptions)
	if err != nil {
		return nil, booking.Errorf(booking.EINTERNAL, "%v", err)
	}
	// One policy, read from the settings once, for the store and the service.
	store.Policy = cfg.Policy

	d := &deps{cfg: cfg, shop: Shop{Name: cfg.ShopName, Loc: cfg.ShopTZ, TemplateIDs: map[booking.NotificationKind]string{}}}
	// A bad template is reported where it would be sent (messenger) and by the
	// deploy preflight; here its kind is simply off.
	templates, _ := wxmsg.TemplatesFromEnv(e.getenv)
	for kind, t := range templates {
		d.shop.TemplateIDs[kind] = t.ID
	}
	d.svc = NewService(store)
	d.svc.AppID, d.svc.Loc, d.svc.Log, d.svc.Policy = cfg.WXAppID, cfg.ShopTZ, log, cfg.Policy
	d.svc.Passwords = booking.Passwords{Cost: root.PasswordCost}
	if e.getenv("WECHATPAY_MCHID") != "" {
		pay, mchID, err := e.weChatPay()
		switch {
		case err == nil:
			d.pay, d.svc.Pay, d.svc.MchID, d.svc.Bills = pay, pay, mchID, pay
			// Only the local simulator serves today's bill.
			d.svc.RunToday = cfg.Dev
		case e.uses("WECHATPAY_MCHID"):
			store.Close()
			return nil, booking.Errorf(booking.EINTERNAL, "%v", err)
		default:
			// Same rule as config's: a bad setting stops only what uses it.
			log.Warn("setting ignored", "function", function,
				"warning", "WeChat Pay settings (not used by this function, left unset): "+err.Error())
		}
	}
	if ccfg, ok := cls.ConfigFromEnv(e.getenv); ok && cfg.CLSEndpoint != "" {
		d.svc.Shipper = cls.New(ccfg, e.getenv)
	}
	out := root.AuditOut
	if out == nil {
		out = os.Stdout
	}
	d.svc.AuditOut = cls.JSONLines{W: out}
	if len(cfg.SessionSecret) > 0 {
		d.sessions = &session.Signer{Secret: cfg.SessionSecret, Now: root.Now}
		// The console's sessions keep the wall clock, as they always have.
		d.consoleKeys = consoleauth.NewKeys(cfg.SessionSecret, cfg.AdminToken, nil)
	}
	if cfg.WXAppID != "" {
		d.login = &wxlogin.Client{BaseURL: cfg.WXAPIBase, AppID: cfg.WXAppID, AppSecret: cfg.WXAppSecret}
	}
	if cfg.WXAppID != "" && cfg.WXAppSecret != "" {
		d.svc.Messages = e.messenger(cfg, store)
		// Phone numbers (PUT /me) with the same shared access token.
		d.svc.Phones = &wxmsg.Client{BaseURL: cfg.WXAPIBase, AppID: cfg.WXAppID, AppSecret: cfg.WXAppSecret, Tokens: store}
	}
	return d, nil
}

// NewService is every use case over db, the whole store: each is given db as
// its store (service.Stores), with the default policy and no WeChat; the
// caller sets the rest. The local tools build theirs with it too.
func NewService(db *mysql.DB) *service.Service {
	return service.New(service.Stores{Basics: db, Notifier: db, Cashier: db, Reservations: db, Cancels: db,
		Door: db, Moves: db, Timetable: db, Menu: db, ConsoleReads: db, Team: db, ReleaseRun: db,
		Reports: db, Reconciliation: db})
}

// checkDSN checks MYSQL_DSN by the store's rules (mysql.Config: a
// go-sql-driver DSN in utf8mb4). Config passes the string on as written, so
// that the rule lives in the store alone; the error names the setting and the
// fault, never the password, and is INTERNAL like config's.
func checkDSN(dsn string) error {
	if _, err := mysql.Config(dsn); err != nil {
		return booking.Errorf(booking.EINTERNAL, "invalid setting MYSQL_DSN: %v", err)
	}
	return nil
}

// weChatPay builds the WeChat Pay client from its settings.
func (e *Env) weChatPay() (*wechatpay.Client, string, error) {
	pcfg, err := wechatpay.ConfigFromEnv(e.getenv)
	if err != nil {
		return nil, "", err
	}
	pcfg.CallTimeout = e.root().PayTimeout
	pay, err := wechatpay.New(pcfg)
	if err != nil {
		return nil, "", err
	}
	return pay, pcfg.MchID, nil
}

// Close closes the store of the built dependencies, if any, and those of the
// functions bound from e (tests, local tools).
func (e *Env) Close() error {
	e.mu.Lock()
	children := e.children
	e.children = nil
	var err error
	if e.built != nil {
		err = e.built.svc.Close()
		e.built = nil
	}
	e.mu.Unlock()
	for _, c := range children {
		err = errors.Join(err, c.Close())
	}
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
		// The client's own HTTP client: bounded, and never following a redirect
		// (it would carry the access token to another host).
		client:    &wxmsg.Client{BaseURL: cfg.WXAPIBase, AppID: cfg.WXAppID, AppSecret: cfg.WXAppSecret, Tokens: store},
		templates: templates, loc: cfg.ShopTZ, shopName: cfg.ShopName,
	}
}

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
