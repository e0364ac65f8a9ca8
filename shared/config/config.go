// Package config reads the product's settings (the configuration table of
// functions/README.md) from the environment and checks
// them once per warm instance. Every error names the variable at fault and never
// quotes the value of a secret; errors are INTERNAL booking errors, so a customer
// sees only "INTERNAL" while the log names the variable.
//
// Each function checks only the settings it uses (LoadFor): a bad setting it
// does not use is reported as a warning and left at its default, so a short
// SESSION_SECRET or a typo in SHOP_TZ never stops payment notifications or the
// release run. The settings are one table (settings, below): a new setting is a
// field in Config, its default in defaults, and one row.
package config

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // SHOP_TZ must load on a minimal image without /usr/share/zoneinfo

	"salon/shared/booking"
)

// Defaults, as the configuration table in functions/README.md lists them.
const (
	DefaultMySQLDSN  = "root@tcp(127.0.0.1:3306)/salon"
	DefaultShopTZ    = "Asia/Shanghai"
	DefaultWXAPIBase = "https://api.weixin.qq.com"
	DefaultShopName  = "美甲店"

	// MinSessionSecretBytes matches session.MinSecretBytes: the HMAC-SHA256 key must
	// carry at least as many bytes as the hash.
	MinSessionSecretBytes = 32
	// MinAdminTokenBytes is the shortest ADMIN_TOKEN accepted outside local
	// development: the token is the salon's whole authority, and it is typed
	// into a browser and sent over the internet, so it must not be guessable.
	MinAdminTokenBytes   = 32
	maxBookingWindowDays = 365
)

// DevelopmentSecrets are the secrets the project publishes for local
// development (scripts/dev.sh and the README's examples). Anyone can read them,
// so outside local development (SALON_DEV=1) a setting holding one is refused.
var DevelopmentSecrets = []string{
	"dev-only-session-secret-never-use-in-production", // scripts/dev.sh SESSION_SECRET
	"dev-admin-token", // scripts/dev.sh ADMIN_TOKEN
}

// Config is the product's settings, checked for format.
type Config struct {
	MySQLDSN      string
	ShopTZ        *time.Location
	SessionSecret []byte
	AdminToken    string // empty: admin endpoints disabled (FORBIDDEN)
	WXAppID       string
	WXAppSecret   string
	WXAPIBase     string // without a trailing slash
	CLSEndpoint   string // empty (with CLSTopicID): audit stays in MySQL only
	CLSTopicID    string
	// ShopName is the salon's name in messages and the console.
	ShopName string

	// Policy is the salon's rules in numbers (LOCK_TTL, BOOKING_WINDOW_DAYS,
	// CANCEL_FREE_HOURS, the no-show, refund, reminder and check-in settings):
	// the one value the store and the service are both given.
	booking.Policy

	// Dev is SALON_DEV=1: local development, where the published development
	// secrets and a short ADMIN_TOKEN are accepted.
	Dev bool

	// Warnings name the settings this function does not use that are set but
	// not valid; each was left at its default. The function logs them.
	Warnings []string
}

func defaults() *Config {
	return &Config{
		MySQLDSN:  DefaultMySQLDSN,
		WXAPIBase: DefaultWXAPIBase,
		ShopName:  DefaultShopName,
		Policy:    booking.DefaultPolicy,
	}
}

// A setting is one row of the configuration table (functions/README.md). parse reads a set
// (trimmed, non-empty) value into c, or returns what is wrong with it without
// quoting a secret; it changes c only when the value is good, so a bad value
// leaves the default. get reads any other setting (for pairs that go together).
// A nil parse means another package reads and checks the setting (WeChat Pay's,
// when a function that uses them builds its client).
//
// usedBy names the functions that use the setting, in the sense that matters
// when it is bad: a bad setting on its function's list stops that function
// (INTERNAL; the log names the setting), while a bad setting off the list is
// logged as a warning and left at its default (good settings are read by every
// function either way). So a short SESSION_SECRET stops login, reserve and
// cancel but never payment notifications or the release run, which list only
// what they cannot work without (the store and WeChat Pay). requiredBy names
// the functions that cannot serve without it (Config.Require where it is
// needed; the deploy preflight refuses it empty). This table is the one place
// the product's code writes a setting's name and who uses it: serverless.yml,
// the deploy table and the configuration table are checked against it by
// tests.
type setting struct {
	name       string
	parse      func(c *Config, v string, get func(string) string) error
	usedBy     []string
	requiredBy []string
}

// The functions, by the names serverless.yml gives them.
const (
	FunctionSlots     = "slots"
	FunctionLogin     = "login"
	FunctionReserve   = "reserve"
	FunctionCancel    = "cancel"
	FunctionPayNotify = "paynotify"
	FunctionAdmin     = "admin"
	FunctionRelease   = "release"
)

var (
	// storeUsers configure the store: every function that touches the database.
	storeUsers = fns(FunctionSlots, FunctionReserve, FunctionCancel, FunctionAdmin, FunctionPayNotify, FunctionRelease)
	// payUsers build the WeChat Pay client: orders, refunds, notifications.
	payUsers = fns(FunctionReserve, FunctionCancel, FunctionAdmin, FunctionPayNotify, FunctionRelease)
	// sessionUsers verify a customer's session token, or (admin) sign the
	// console's sessions, with SESSION_SECRET.
	sessionUsers = fns(FunctionLogin, FunctionReserve, FunctionCancel, FunctionAdmin)
	// offerUsers make waitlist offers, wherever a seat comes free (a cancel,
	// the salon's changes, an expiry in the release run), and reserve refuses
	// at NO_SHOW_LIMIT.
	offerUsers = fns(FunctionReserve, FunctionCancel, FunctionAdmin, FunctionRelease)
)

// fns is a list of functions, for the table below.
func fns(names ...string) []string { return names }

// FunctionSettings returns the settings function fn uses and those it requires,
// in the table's order.
func FunctionSettings(fn string) (uses, requires []string) {
	for _, s := range settings {
		if slices.Contains(s.usedBy, fn) {
			uses = append(uses, s.name)
		}
		if slices.Contains(s.requiredBy, fn) {
			requires = append(requires, s.name)
		}
	}
	return uses, requires
}

var settings = []setting{
	{"SALON_DEV", func(c *Config, v string, _ func(string) string) error {
		switch v {
		case "1":
			c.Dev = true
		case "0":
		default:
			return fmt.Errorf("only 1 means local development (0 or unset: not), got %q", v)
		}
		return nil
	}, nil, nil},
	{"MYSQL_DSN", func(c *Config, v string, _ func(string) string) error {
		// Passed on as written: what a DSN the store can use is (a go-sql-driver
		// DSN in utf8mb4) is the store's rule, mysql.Config, which package
		// instance applies where it opens the store and in CheckSettings.
		c.MySQLDSN = v
		return nil
	}, storeUsers, nil},
	{"SHOP_TZ", func(c *Config, v string, _ func(string) string) error {
		loc, err := time.LoadLocation(v)
		if err != nil {
			return fmt.Errorf("unknown time zone %q", v)
		}
		c.ShopTZ = loc
		return nil
	}, fns(FunctionSlots, FunctionLogin, FunctionReserve, FunctionCancel, FunctionAdmin), nil},
	{"LOCK_TTL", duration(func(c *Config) *time.Duration { return &c.LockTTL }, false), storeUsers, nil},
	{"BOOKING_WINDOW_DAYS", wholeNumber(func(c *Config) *int { return &c.BookingWindowDays }, 1, maxBookingWindowDays), storeUsers, nil},
	{"SESSION_SECRET", func(c *Config, v string, _ func(string) string) error {
		if len(v) < MinSessionSecretBytes {
			return fmt.Errorf("must be at least %d bytes, has %d", MinSessionSecretBytes, len(v))
		}
		if err := notPublished(c, v); err != nil {
			return err
		}
		c.SessionSecret = []byte(v)
		return nil
	}, fns(FunctionLogin, FunctionReserve, FunctionCancel), sessionUsers},
	{"ADMIN_TOKEN", func(c *Config, v string, _ func(string) string) error {
		if err := notPublished(c, v); err != nil {
			return err
		}
		if !c.Dev && len(v) < MinAdminTokenBytes {
			return fmt.Errorf("must be at least %d bytes outside local development (SALON_DEV=1), has %d; make one with: openssl rand -hex 32", MinAdminTokenBytes, len(v))
		}
		c.AdminToken = v
		return nil
	}, fns(FunctionAdmin), nil},
	{"WX_APPID", text(func(c *Config) *string { return &c.WXAppID }), append(fns(FunctionLogin), payUsers...), fns(FunctionLogin)},
	{"WX_APPSECRET", text(func(c *Config) *string { return &c.WXAppSecret }), fns(FunctionLogin, FunctionReserve), fns(FunctionLogin)},
	{"WX_API_BASE", func(c *Config, v string, _ func(string) string) error {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("want an http(s) base URL such as %s, got %q", DefaultWXAPIBase, v)
		}
		c.WXAPIBase = strings.TrimRight(v, "/")
		return nil
	}, fns(FunctionLogin, FunctionReserve), nil},
	{"WECHATPAY_MCHID", nil, payUsers, nil},
	{"WECHATPAY_MCH_CERT_SERIAL", nil, payUsers, nil},
	{"WECHATPAY_MCH_PRIVATE_KEY", nil, payUsers, nil},
	{"WECHATPAY_APIV3_KEY", nil, payUsers, nil},
	{"WECHATPAY_PUBLIC_KEY_ID", nil, payUsers, nil},
	{"WECHATPAY_PUBLIC_KEY", nil, payUsers, nil},
	{"WECHATPAY_API_BASE", nil, payUsers, nil},
	{"WECHATPAY_NOTIFY_URL", nil, payUsers, nil},
	{"WECHATPAY_REFUND_NOTIFY_URL", nil, payUsers, nil},
	// The audit trail goes to CLS only with both; one without the other is a typo.
	{"CLS_ENDPOINT", pair(func(c *Config) *string { return &c.CLSEndpoint }, "CLS_TOPIC_ID"), nil, nil},
	{"CLS_TOPIC_ID", pair(func(c *Config) *string { return &c.CLSTopicID }, "CLS_ENDPOINT"), nil, nil},
	{"CANCEL_FREE_HOURS", wholeNumber(func(c *Config) *int { return &c.CancelFreeHours }, 0, 24*maxBookingWindowDays), fns(FunctionReserve, FunctionCancel, FunctionAdmin), nil},
	{"NO_SHOW_GRACE", duration(func(c *Config) *time.Duration { return &c.NoShowGrace }, true), nil, nil},
	{"NO_SHOW_LIMIT", wholeNumber(func(c *Config) *int { return &c.NoShowLimit }, 0, 1000), offerUsers, nil},
	{"REFUND_QUERY_AFTER", duration(func(c *Config) *time.Duration { return &c.RefundQueryAfter }, false), nil, nil},
	{"REMIND_BEFORE", duration(func(c *Config) *time.Duration { return &c.RemindBefore }, false), nil, nil},
	{"SHOP_NAME", text(func(c *Config) *string { return &c.ShopName }), fns(FunctionAdmin), nil},
	{"CHECKIN_OPENS_BEFORE", duration(func(c *Config) *time.Duration { return &c.CheckinOpensBefore }, false), fns(FunctionAdmin), nil},
	{"RESCHEDULE_LIMIT", wholeNumber(func(c *Config) *int { return &c.RescheduleLimit }, 0, 100), fns(FunctionCancel), nil},
	{"AUDIT_RETENTION_DAYS", wholeNumber(func(c *Config) *int { return &c.AuditRetentionDays }, 0, 36500), nil, nil},
	// The length of a technician's cell: the store counts a service's cells
	// by it wherever one is taken (a reservation, a walk-in, a move, a late
	// payment), so every function that touches the database uses it. It must
	// divide the hour (booking.ValidGrid). Changing it leaves the cells
	// already laid as they are: a span over cells of another length is not
	// bookable until her hours are laid again.
	{"GRID_MINUTES", func(c *Config, v string, _ func(string) string) error {
		n, err := strconv.Atoi(v)
		if err != nil || !booking.ValidGrid(n) {
			return fmt.Errorf("want a number of minutes that divides 60 (5, 10, 15, 20, 30, 60, ...), got %q", v)
		}
		c.GridMinutes = n
		return nil
	}, storeUsers, nil},
	// The shop's time after which the release run fetches yesterday's WeChat
	// Pay trade bill (WeChat has it ready from about 10:00 Beijing time).
	{"BILL_AFTER", func(c *Config, v string, _ func(string) string) error {
		t, err := booking.ParseClock(v)
		if err != nil {
			return fmt.Errorf("want a time of day HH:MM such as 10:00, got %q", v)
		}
		c.BillAfter = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
		return nil
	}, fns(FunctionRelease), nil},
}

// The shapes of value most settings take.

func text(field func(*Config) *string) func(*Config, string, func(string) string) error {
	return func(c *Config, v string, _ func(string) string) error {
		*field(c) = v
		return nil
	}
}

func pair(field func(*Config) *string, partner string) func(*Config, string, func(string) string) error {
	return func(c *Config, v string, get func(string) string) error {
		if get(partner) == "" {
			return fmt.Errorf("is set but %s is not; set both or neither", partner)
		}
		*field(c) = v
		return nil
	}
}

// duration reads a Go duration: positive, or also 0 when zero means something.
func duration(field func(*Config) *time.Duration, zero bool) func(*Config, string, func(string) string) error {
	return func(c *Config, v string, _ func(string) string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d == 0 && !zero) {
			return fmt.Errorf("want a positive Go duration such as 30m, got %q", v)
		}
		*field(c) = d
		return nil
	}
}

func wholeNumber(field func(*Config) *int, min, max int) func(*Config, string, func(string) string) error {
	return func(c *Config, v string, _ func(string) string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return fmt.Errorf("want a whole number from %d to %d, got %q", min, max, v)
		}
		*field(c) = n
		return nil
	}
}

// notPublished refuses a published development secret outside local development.
func notPublished(c *Config, v string) error {
	if !c.Dev && slices.Contains(DevelopmentSecrets, v) {
		return fmt.Errorf("is the published development value (scripts/dev.sh); it is accepted only with SALON_DEV=1 (local development): set your own, e.g. openssl rand -hex 32")
	}
	return nil
}

// Names returns the name of every setting, in the table's order.
func Names() []string {
	names := make([]string, len(settings))
	for i, s := range settings {
		names[i] = s.name
	}
	return names
}

// Load reads every setting and checks all of them (the tools; a test of the
// whole product). See LoadFor.
func Load(getenv func(string) string) (*Config, error) {
	return LoadFor(getenv, Names())
}

// LoadFor reads the settings through getenv (nil means os.Getenv) for a function
// that uses the named ones. Unset settings take their defaults;
// whether a setting without a default is needed is for each function to say with
// Require. A bad setting the function uses is an error naming it; a bad setting
// it does not use is left at its default and named in Config.Warnings. A name
// the table does not know is an error too, so a typo in a function's list
// cannot pass silently.
//
// Settings read by other packages (WeChat Pay's) are only named here, and
// MYSQL_DSN is passed on unchecked; their checks run where they are read.
func LoadFor(getenv func(string) string, uses []string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	for _, name := range uses {
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.name == name }) {
			return nil, booking.Errorf(booking.EINTERNAL, "config: %s is not a setting", name)
		}
	}
	c := defaults()
	var bad []string // every bad setting the function uses, so one deploy fixes them all
	for _, s := range settings {
		v := get(s.name)
		if s.parse == nil || v == "" {
			continue
		}
		err := s.parse(c, v, get)
		switch {
		case err == nil:
		case slices.Contains(uses, s.name):
			bad = append(bad, fmt.Sprintf("invalid setting %s: %v", s.name, err))
		default:
			c.Warnings = append(c.Warnings, fmt.Sprintf("invalid setting %s (not used by this function, left at its default): %v", s.name, err))
		}
	}
	if len(bad) > 0 {
		return nil, booking.Errorf(booking.EINTERNAL, "%s", strings.Join(bad, "; "))
	}
	if c.ShopTZ == nil {
		// The default from the embedded tzdata; it cannot fail.
		c.ShopTZ, _ = time.LoadLocation(DefaultShopTZ)
	}
	return c, nil
}

// required maps each setting a function may require to whether it is present.
// Settings with a default are always present and need no entry.
var required = map[string]func(*Config) bool{
	"SESSION_SECRET": func(c *Config) bool { return len(c.SessionSecret) > 0 },
	"ADMIN_TOKEN":    func(c *Config) bool { return c.AdminToken != "" },
	"WX_APPID":       func(c *Config) bool { return c.WXAppID != "" },
	"WX_APPSECRET":   func(c *Config) bool { return c.WXAppSecret != "" },
	"CLS_ENDPOINT":   func(c *Config) bool { return c.CLSEndpoint != "" },
	"CLS_TOPIC_ID":   func(c *Config) bool { return c.CLSTopicID != "" },
}

// Require reports the first of the named settings that is unset, as an INTERNAL
// error whose detail names it. A name this package does not know is reported too, so
// a typo in a function's list cannot pass silently.
func (c *Config) Require(names ...string) error {
	for _, name := range names {
		present, ok := required[name]
		if !ok {
			return booking.Errorf(booking.EINTERNAL, "config: %s is not a setting that can be required", name)
		}
		if !present(c) {
			return booking.Errorf(booking.EINTERNAL, "missing required setting %s", name)
		}
	}
	return nil
}

// Loader loads the configuration on first use and keeps it for the life of the warm
// instance. A failure is not kept: SCF may apply a function's environment on each
// invoke, so the next invocation tries again.
type Loader struct {
	Getenv func(string) string // nil means os.Getenv

	mu  sync.Mutex
	cfg *Config
}

// Get returns the loaded configuration, loading it if this is the first success.
func (l *Loader) Get() (*Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg != nil {
		return l.cfg, nil
	}
	c, err := Load(l.Getenv)
	if err != nil {
		return nil, err
	}
	l.cfg = c
	return c, nil
}
