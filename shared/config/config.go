// Package config reads the settings of design.md from the environment and checks
// them once per warm instance. Every error names the variable at fault and never
// quotes the value of a secret; errors are INTERNAL booking errors, so a customer
// sees only "INTERNAL" while the log names the variable.
package config

import (
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // SHOP_TZ must load on a minimal image without /usr/share/zoneinfo

	"salon/shared/booking"
	"salon/shared/mysql"
)

// Defaults from design.md.
const (
	DefaultMySQLDSN          = "root@tcp(127.0.0.1:3306)/salon"
	DefaultShopTZ            = "Asia/Shanghai"
	DefaultLockTTL           = 15 * time.Minute
	DefaultBookingWindowDays = 14
	DefaultWXAPIBase         = "https://api.weixin.qq.com"
	DefaultCancelFreeHours   = 2
	DefaultNoShowGrace       = 30 * time.Minute
	DefaultRefundQueryAfter  = 5 * time.Minute
	DefaultRemindBefore      = 3 * time.Hour
	DefaultShopName          = "美甲店"

	// MinSessionSecretBytes matches session.MinSecretBytes: the HMAC-SHA256 key must
	// carry at least as many bytes as the hash.
	MinSessionSecretBytes = 32
	maxBookingWindowDays  = 365
)

// Config is the product's settings, checked for format.
type Config struct {
	MySQLDSN          string
	ShopTZ            *time.Location
	LockTTL           time.Duration
	BookingWindowDays int
	SessionSecret     []byte
	AdminToken        string // empty: admin endpoints disabled (FORBIDDEN)
	WXAppID           string
	WXAppSecret       string
	WXAPIBase         string // without a trailing slash
	CLSEndpoint       string // empty (with CLSTopicID): audit stays in MySQL only
	CLSTopicID        string

	// CancelFreeHours: a customer's cancel is refunded in full until this many
	// hours before the start (0: until the start).
	CancelFreeHours int
	// NoShowGrace: how long after its slot ends a confirmed booking nobody
	// checked in becomes a no-show.
	NoShowGrace time.Duration
	// NoShowLimit: no-shows in 90 days that block reserving; 0 switches it off.
	NoShowLimit int
	// RefundQueryAfter: how long a refund may stay processing before the release
	// run asks WeChat about it.
	RefundQueryAfter time.Duration
	// RemindBefore: how long before the start the reminder goes out.
	RemindBefore time.Duration
	// ShopName is the salon's name in messages and the console.
	ShopName string
}

// Load reads and checks the settings through getenv (nil means os.Getenv). Unset
// settings take the defaults of design.md; whether a setting without a default is
// needed is for each function to say with Require.
func Load(getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := &Config{
		MySQLDSN:          DefaultMySQLDSN,
		LockTTL:           DefaultLockTTL,
		BookingWindowDays: DefaultBookingWindowDays,
		AdminToken:        get("ADMIN_TOKEN"),
		WXAppID:           get("WX_APPID"),
		WXAppSecret:       get("WX_APPSECRET"),
		WXAPIBase:         DefaultWXAPIBase,
		CLSEndpoint:       get("CLS_ENDPOINT"),
		CLSTopicID:        get("CLS_TOPIC_ID"),
		CancelFreeHours:   DefaultCancelFreeHours,
		NoShowGrace:       DefaultNoShowGrace,
		RefundQueryAfter:  DefaultRefundQueryAfter,
		RemindBefore:      DefaultRemindBefore,
		ShopName:          DefaultShopName,
	}
	if v := get("SHOP_NAME"); v != "" {
		c.ShopName = v
	}

	if v := get("MYSQL_DSN"); v != "" {
		c.MySQLDSN = v
	}
	if _, err := mysql.Config(c.MySQLDSN); err != nil {
		// The store's checks (a go-sql-driver DSN in utf8mb4); the message names
		// the fault, not the password.
		return nil, invalid("MYSQL_DSN", "%v", err)
	}

	tz := get("SHOP_TZ")
	if tz == "" {
		tz = DefaultShopTZ
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, invalid("SHOP_TZ", "unknown time zone %q", tz)
	}
	c.ShopTZ = loc

	if v := get("LOCK_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, invalid("LOCK_TTL", "want a positive Go duration such as 15m, got %q", v)
		}
		c.LockTTL = d
	}

	if v := get("BOOKING_WINDOW_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxBookingWindowDays {
			return nil, invalid("BOOKING_WINDOW_DAYS", "want a whole number of days from 1 to %d, got %q", maxBookingWindowDays, v)
		}
		c.BookingWindowDays = n
	}

	if v := get("CANCEL_FREE_HOURS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 24*maxBookingWindowDays {
			return nil, invalid("CANCEL_FREE_HOURS", "want a whole number of hours, 0 or more, got %q", v)
		}
		c.CancelFreeHours = n
	}
	if v := get("NO_SHOW_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000 {
			return nil, invalid("NO_SHOW_LIMIT", "want a whole number, 0 (off) or more, got %q", v)
		}
		c.NoShowLimit = n
	}
	for _, d := range []struct {
		name string
		into *time.Duration
		zero bool // whether 0 is a meaningful value
	}{
		{"NO_SHOW_GRACE", &c.NoShowGrace, true},
		{"REFUND_QUERY_AFTER", &c.RefundQueryAfter, false},
		{"REMIND_BEFORE", &c.RemindBefore, false},
	} {
		if v := get(d.name); v != "" {
			dur, err := time.ParseDuration(v)
			if err != nil || dur < 0 || (dur == 0 && !d.zero) {
				return nil, invalid(d.name, "want a positive Go duration such as 30m, got %q", v)
			}
			*d.into = dur
		}
	}

	if v := get("SESSION_SECRET"); v != "" {
		if len(v) < MinSessionSecretBytes {
			return nil, invalid("SESSION_SECRET", "must be at least %d bytes, has %d", MinSessionSecretBytes, len(v))
		}
		c.SessionSecret = []byte(v)
	}

	if v := get("WX_API_BASE"); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, invalid("WX_API_BASE", "want an http(s) base URL such as %s, got %q", DefaultWXAPIBase, v)
		}
		c.WXAPIBase = strings.TrimRight(v, "/")
	}

	// The audit trail goes to CLS only with both; one without the other is a typo.
	if c.CLSEndpoint != "" && c.CLSTopicID == "" {
		return nil, invalid("CLS_TOPIC_ID", "must be set when CLS_ENDPOINT is")
	}
	if c.CLSTopicID != "" && c.CLSEndpoint == "" {
		return nil, invalid("CLS_ENDPOINT", "must be set when CLS_TOPIC_ID is")
	}
	return c, nil
}

func invalid(name, format string, args ...any) error {
	e := booking.Errorf(booking.EINTERNAL, format, args...)
	e.Detail = "invalid setting " + name + ": " + e.Detail
	return e
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
