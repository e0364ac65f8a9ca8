package config

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const (
	secret32 = "0123456789abcdef0123456789abcdef"
	admin32  = "admin-0123456789abcdef0123456789"
)

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.MySQLDSN != "root@tcp(127.0.0.1:3306)/salon" || c.ShopTZ.String() != "Asia/Shanghai" ||
		c.LockTTL != 15*time.Minute || c.BookingWindowDays != 14 || c.WXAPIBase != "https://api.weixin.qq.com" {
		t.Errorf("defaults: %+v", c)
	}
	if c.SessionSecret != nil || c.AdminToken != "" || c.WXAppID != "" || c.WXAppSecret != "" || c.CLSEndpoint != "" || c.CLSTopicID != "" {
		t.Errorf("a setting without a default got one: %+v", c)
	}
	// The embedded tzdata gives Shanghai its +08:00 offset.
	if _, off := time.Date(2026, 12, 1, 0, 0, 0, 0, c.ShopTZ).Zone(); off != 8*3600 {
		t.Errorf("offset %d", off)
	}
}

func TestValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		"MYSQL_DSN":           "salon:pw@tcp(db.internal:3306)/salon?parseTime=true",
		"SHOP_TZ":             "Asia/Tokyo",
		"LOCK_TTL":            " 90s ",
		"BOOKING_WINDOW_DAYS": "30",
		"SESSION_SECRET":      secret32,
		"ADMIN_TOKEN":         admin32,
		"WX_APPID":            "wxapp",
		"WX_APPSECRET":        "wxsecret",
		"WX_API_BASE":         "http://127.0.0.1:9000/",
		"CLS_ENDPOINT":        "https://ap-guangzhou.cls.tencentcs.com",
		"CLS_TOPIC_ID":        "topic-1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		MySQLDSN: "salon:pw@tcp(db.internal:3306)/salon?parseTime=true", Policy: booking.Policy{LockTTL: 90 * time.Second, BookingWindowDays: 30},
		SessionSecret: []byte(secret32), AdminToken: admin32, WXAppID: "wxapp", WXAppSecret: "wxsecret",
		WXAPIBase: "http://127.0.0.1:9000", CLSEndpoint: "https://ap-guangzhou.cls.tencentcs.com", CLSTopicID: "topic-1",
	}
	if c.ShopTZ.String() != "Asia/Tokyo" {
		t.Errorf("ShopTZ = %v", c.ShopTZ)
	}
	c.ShopTZ = nil
	if c.MySQLDSN != want.MySQLDSN || c.LockTTL != want.LockTTL || c.BookingWindowDays != want.BookingWindowDays ||
		string(c.SessionSecret) != secret32 || c.AdminToken != want.AdminToken || c.WXAppID != want.WXAppID ||
		c.WXAppSecret != want.WXAppSecret || c.WXAPIBase != want.WXAPIBase || c.CLSEndpoint != want.CLSEndpoint || c.CLSTopicID != want.CLSTopicID {
		t.Errorf("got %+v\nwant %+v", *c, want)
	}
	if err := c.Require("SESSION_SECRET", "WX_APPID", "WX_APPSECRET", "ADMIN_TOKEN", "CLS_ENDPOINT", "CLS_TOPIC_ID"); err != nil {
		t.Errorf("Require: %v", err)
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		name, value string
		leak        string // must not appear in the error
	}{
		{"SHOP_TZ", "Mars/Olympus", ""},
		{"LOCK_TTL", "15", ""},
		{"LOCK_TTL", "abc", ""},
		{"LOCK_TTL", "0s", ""},
		{"LOCK_TTL", "-5m", ""},
		{"BOOKING_WINDOW_DAYS", "two", ""},
		{"BOOKING_WINDOW_DAYS", "0", ""},
		{"BOOKING_WINDOW_DAYS", "-3", ""},
		{"BOOKING_WINDOW_DAYS", "1.5", ""},
		{"BOOKING_WINDOW_DAYS", "366", ""},
		{"SESSION_SECRET", "too-short-secret-value", "too-short-secret-value"},
		{"SESSION_SECRET", "dev-only-session-secret-never-use-in-production", "dev-only-session-secret-never-use-in-production"},
		{"ADMIN_TOKEN", "dev-admin-token", "dev-admin-token"},
		{"ADMIN_TOKEN", "admin-token-of-31-bytes-0123456", "admin-token-of-31-bytes-0123456"},
		{"SALON_DEV", "yes", ""},
		{"CANCEL_FREE_HOURS", "two", ""},
		{"NO_SHOW_GRACE", "-1m", ""},
		{"NO_SHOW_LIMIT", "-1", ""},
		{"REFUND_QUERY_AFTER", "0", ""},
		{"BILL_AFTER", "10", ""},
		{"BILL_AFTER", "9:30", ""},
		{"BILL_AFTER", "24:00", ""},
		{"BILL_AFTER", "10:60", ""},
		{"BILL_AFTER", "10:00:00", ""},
		{"BILL_AFTER", "10h", ""},
		{"WX_API_BASE", "api.weixin.qq.com", ""},
		{"WX_API_BASE", "ftp://api.weixin.qq.com", ""},
		{"WX_API_BASE", "https://", ""},
		{"WX_API_BASE", "https://h/?x=1", ""},
		{"CLS_TOPIC_ID", "", ""}, // CLS_ENDPOINT set below without a topic
		{"CLS_ENDPOINT", "", ""}, // CLS_TOPIC_ID set below without an endpoint
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			m := map[string]string{tt.name: tt.value}
			switch tt.name {
			case "CLS_TOPIC_ID":
				m["CLS_ENDPOINT"] = "ap-guangzhou.cls.tencentcs.com"
			case "CLS_ENDPOINT":
				m["CLS_TOPIC_ID"] = "topic"
			}
			c, err := Load(env(m))
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("err = %v, want INTERNAL naming %s", err, tt.name)
			}
			if tt.leak != "" && strings.Contains(err.Error(), tt.leak) {
				t.Errorf("err leaks the value: %v", err)
			}
			if booking.ErrorMessage(err) != booking.ErrorMessage(booking.Errorf(booking.EINTERNAL, "")) {
				t.Errorf("customer message %q", booking.ErrorMessage(err))
			}
		})
	}
}

func TestRequire(t *testing.T) {
	c, err := Load(env(map[string]string{"WX_APPID": "wxapp"}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		names []string
		want  string // the name the error must mention; "" means no error
	}{
		{nil, ""},
		{[]string{"WX_APPID"}, ""},
		{[]string{"SESSION_SECRET"}, "SESSION_SECRET"},
		{[]string{"WX_APPID", "WX_APPSECRET", "SESSION_SECRET"}, "WX_APPSECRET"},
		{[]string{"SESSION_SECRET", "WX_APPSECRET"}, "SESSION_SECRET"},
		{[]string{"ADMIN_TOKEN"}, "ADMIN_TOKEN"},
		{[]string{"CLS_ENDPOINT"}, "CLS_ENDPOINT"},
		{[]string{"WX_APPID", "SESION_SECRET"}, "SESION_SECRET"},
	}
	for _, tt := range tests {
		err := c.Require(tt.names...)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Require(%v) = %v", tt.names, err)
			}
			continue
		}
		if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Require(%v) = %v, want INTERNAL naming %s", tt.names, err, tt.want)
		}
		for _, other := range tt.names {
			if other != tt.want && strings.Contains(err.Error(), other) {
				t.Errorf("Require(%v) = %v names more than the first missing", tt.names, err)
			}
		}
	}
}

func TestLoader(t *testing.T) {
	vals := map[string]string{"LOCK_TTL": "bad"}
	calls := 0
	l := &Loader{Getenv: func(k string) string { calls++; return vals[k] }}
	if _, err := l.Get(); err == nil {
		t.Fatal("bad LOCK_TTL accepted")
	}
	vals["LOCK_TTL"] = "1m"
	c, err := l.Get()
	if err != nil || c.LockTTL != time.Minute {
		t.Fatalf("%+v %v", c, err)
	}
	vals["LOCK_TTL"] = "2m"
	n := calls
	c2, err := l.Get()
	if err != nil || c2 != c || calls != n {
		t.Errorf("not cached: %+v %v", c2, err)
	}
}

// TestLoadForChecksOnlyWhatItUses: a bad setting stops only the functions that
// use it; elsewhere it is a warning and the default stands.
func TestLoadForChecksOnlyWhatItUses(t *testing.T) {
	vals := env(map[string]string{
		"SESSION_SECRET": "too-short", "SHOP_TZ": "Asia/Shanghia", "LOCK_TTL": "2m",
		"CLS_ENDPOINT": "https://cls.tencentcloudapi.com", // without CLS_TOPIC_ID
	})
	c, err := LoadFor(vals, []string{"MYSQL_DSN", "LOCK_TTL"})
	if err != nil {
		t.Fatalf("a function not using SESSION_SECRET, SHOP_TZ or CLS refused: %v", err)
	}
	if c.SessionSecret != nil || c.ShopTZ.String() != DefaultShopTZ || c.CLSEndpoint != "" || c.LockTTL != 2*time.Minute {
		t.Errorf("bad unused settings not left at their defaults (or a good one lost): %+v", c)
	}
	warned := strings.Join(c.Warnings, "\n")
	for _, name := range []string{"SESSION_SECRET", "SHOP_TZ", "CLS_ENDPOINT"} {
		if !strings.Contains(warned, name) {
			t.Errorf("no warning names %s: %q", name, c.Warnings)
		}
	}
	if strings.Contains(warned, "too-short") {
		t.Errorf("a warning quotes the secret: %q", c.Warnings)
	}
	for _, uses := range [][]string{{"SESSION_SECRET"}, {"MYSQL_DSN", "SHOP_TZ"}, {"CLS_ENDPOINT"}} {
		_, err := LoadFor(vals, uses)
		if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "invalid setting "+uses[len(uses)-1]) {
			t.Errorf("a function using %v: err %v, want INTERNAL naming %s", uses, err, uses[len(uses)-1])
		}
	}
	if _, err := LoadFor(vals, []string{"MYSQL_DNS"}); err == nil || !strings.Contains(err.Error(), "MYSQL_DNS") {
		t.Errorf("a typo in a function's list passed: %v", err)
	}
	if c, err := LoadFor(env(nil), Names()); err != nil || len(c.Warnings) != 0 {
		t.Errorf("nothing set: %+v %v", c, err)
	}
}

// TestDevelopmentSecrets: the secrets scripts/dev.sh publishes, and a short
// ADMIN_TOKEN, are refused unless SALON_DEV=1.
func TestDevelopmentSecrets(t *testing.T) {
	b, err := os.ReadFile("../../scripts/dev.sh")
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]string{}
	for _, m := range regexp.MustCompile(`export (SESSION_SECRET|ADMIN_TOKEN)="([^"$]+)"`).FindAllStringSubmatch(string(b), -1) {
		published[m[1]] = m[2]
	}
	if len(published) != 2 {
		t.Fatalf("scripts/dev.sh: found development secrets %v, want SESSION_SECRET and ADMIN_TOKEN", published)
	}
	if !regexp.MustCompile(`(?m)^export SALON_DEV=1$`).Match(b) {
		t.Error("scripts/dev.sh does not export SALON_DEV=1")
	}
	for name, v := range published {
		if !slices.Contains(DevelopmentSecrets, v) {
			t.Errorf("scripts/dev.sh's %s %q is not in DevelopmentSecrets", name, v)
		}
		for _, dev := range []string{"", "0"} {
			_, err := Load(env(map[string]string{name: v, "SALON_DEV": dev}))
			if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), v) {
				t.Errorf("%s = dev.sh's value, SALON_DEV=%q: err %v, want INTERNAL naming %s (not the value)", name, dev, err, name)
			}
		}
		c, err := Load(env(map[string]string{name: v, "SALON_DEV": "1"}))
		if err != nil || !c.Dev {
			t.Errorf("%s = dev.sh's value with SALON_DEV=1: %v", name, err)
		}
	}
	// A short admin token: refused outside development, whatever else is set.
	short := "0123456789abcdef0123456789abcde" // 31 bytes
	if _, err := Load(env(map[string]string{"ADMIN_TOKEN": short})); err == nil || !strings.Contains(err.Error(), "32 bytes") {
		t.Errorf("31-byte ADMIN_TOKEN: %v", err)
	}
	if c, err := Load(env(map[string]string{"ADMIN_TOKEN": short, "SALON_DEV": "1"})); err != nil || c.AdminToken != short {
		t.Errorf("31-byte ADMIN_TOKEN with SALON_DEV=1: %+v %v", c, err)
	}
	if c, err := Load(env(map[string]string{"ADMIN_TOKEN": short + "f"})); err != nil || c.AdminToken != short+"f" {
		t.Errorf("32-byte ADMIN_TOKEN: %+v %v", c, err)
	}
}

// TestFunctionSettings: the table says which function a bad setting stops. A
// short SESSION_SECRET or a bad SHOP_TZ never stops payment notifications or
// the release run; login needs no database; NO_SHOW_LIMIT is read wherever a
// seat can be offered to the waitlist.
func TestFunctionSettings(t *testing.T) {
	for _, c := range []struct {
		fn                string
		uses, notUses     []string
		requires, notReqs []string
	}{
		{FunctionPayNotify, []string{"MYSQL_DSN", "WECHATPAY_MCHID", "WX_APPID"}, []string{"SESSION_SECRET", "SHOP_TZ", "ADMIN_TOKEN", "NO_SHOW_LIMIT"}, nil, []string{"SESSION_SECRET"}},
		{FunctionRelease, []string{"MYSQL_DSN", "WECHATPAY_MCHID", "NO_SHOW_LIMIT"}, []string{"SESSION_SECRET", "SHOP_TZ"}, nil, []string{"SESSION_SECRET"}},
		{FunctionLogin, []string{"SESSION_SECRET", "WX_APPID", "WX_APPSECRET", "WX_API_BASE"}, []string{"MYSQL_DSN", "WECHATPAY_MCHID"}, []string{"SESSION_SECRET", "WX_APPID", "WX_APPSECRET"}, nil},
		{FunctionAdmin, []string{"ADMIN_TOKEN", "CHECKIN_OPENS_BEFORE", "NO_SHOW_LIMIT", "SHOP_NAME"}, []string{"SESSION_SECRET"}, []string{"SESSION_SECRET"}, nil},
		{FunctionSlots, []string{"MYSQL_DSN", "SHOP_TZ"}, []string{"SESSION_SECRET", "WECHATPAY_MCHID"}, nil, []string{"SESSION_SECRET"}},
		{FunctionCancel, []string{"RESCHEDULE_LIMIT", "CANCEL_FREE_HOURS", "SESSION_SECRET"}, []string{"ADMIN_TOKEN"}, []string{"SESSION_SECRET"}, nil},
	} {
		uses, requires := FunctionSettings(c.fn)
		for _, n := range c.uses {
			if !slices.Contains(uses, n) {
				t.Errorf("%s does not use %s", c.fn, n)
			}
		}
		for _, n := range c.notUses {
			if slices.Contains(uses, n) {
				t.Errorf("%s uses %s: a bad one would stop it", c.fn, n)
			}
		}
		for _, n := range c.requires {
			if !slices.Contains(requires, n) {
				t.Errorf("%s does not require %s", c.fn, n)
			}
		}
		for _, n := range c.notReqs {
			if slices.Contains(requires, n) {
				t.Errorf("%s requires %s", c.fn, n)
			}
		}
	}
	if uses, _ := FunctionSettings("no-such-function"); len(uses) != 0 {
		t.Errorf("an unknown function uses %v", uses)
	}
}

// TestRescheduleLimit: RESCHEDULE_LIMIT defaults to 1, takes 0-100, and a bad
// value stops the cancel function, which serves the customer's reschedule.
func TestRescheduleLimit(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"RESCHEDULE_LIMIT": v}[k] }
	}
	if c, err := LoadFor(env(""), []string{"RESCHEDULE_LIMIT"}); err != nil || c.RescheduleLimit != 1 {
		t.Fatalf("default: %v %v", c, err)
	}
	if c, err := LoadFor(env("3"), []string{"RESCHEDULE_LIMIT"}); err != nil || c.RescheduleLimit != 3 {
		t.Fatalf("3: %v %v", c, err)
	}
	if c, err := LoadFor(env("0"), []string{"RESCHEDULE_LIMIT"}); err != nil || c.RescheduleLimit != 0 {
		t.Fatalf("0: %v %v", c, err)
	}
	uses, _ := FunctionSettings(FunctionCancel)
	for _, bad := range []string{"-1", "101", "one"} {
		if _, err := LoadFor(env(bad), uses); err == nil || !strings.Contains(err.Error(), "RESCHEDULE_LIMIT") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestDSNPassedOnAsWritten: config does not judge MYSQL_DSN (the store does,
// through package instance): whatever is set reaches Config.MySQLDSN, and
// unset is the default.
func TestDSNPassedOnAsWritten(t *testing.T) {
	for _, dsn := range []string{"salon:pw@tcp(db.internal:3306)/salon", "user:hunter2@tcp(host:3306)/salon?charset=gbk"} {
		c, err := LoadFor(env(map[string]string{"MYSQL_DSN": dsn}), []string{"MYSQL_DSN"})
		if err != nil || c.MySQLDSN != dsn || len(c.Warnings) != 0 {
			t.Errorf("MYSQL_DSN=%s: %+v %v, want it passed on as written", dsn, c, err)
		}
	}
	if c, err := LoadFor(env(nil), []string{"MYSQL_DSN"}); err != nil || c.MySQLDSN != DefaultMySQLDSN {
		t.Errorf("unset: %+v %v", c, err)
	}
}

// TestGridMinutes: GRID_MINUTES defaults to 30, takes a length that divides
// the hour, and a bad value stops every function with a database (each may
// take a technician's cells), never login.
func TestGridMinutes(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"GRID_MINUTES": v}[k] }
	}
	if c, err := LoadFor(env(""), []string{"GRID_MINUTES"}); err != nil || c.GridMinutes != 30 {
		t.Fatalf("default: %v %v", c, err)
	}
	for _, good := range []int{5, 10, 15, 20, 60} {
		if c, err := LoadFor(env(strconv.Itoa(good)), []string{"GRID_MINUTES"}); err != nil || c.GridMinutes != good {
			t.Fatalf("%d: %v %v", good, c, err)
		}
	}
	for _, fn := range []string{FunctionSlots, FunctionReserve, FunctionCancel, FunctionAdmin, FunctionPayNotify, FunctionRelease} {
		uses, _ := FunctionSettings(fn)
		for _, bad := range []string{"0", "45", "90", "-30", "half"} {
			if _, err := LoadFor(env(bad), uses); err == nil || !strings.Contains(err.Error(), "GRID_MINUTES") {
				t.Errorf("%s with %q: %v", fn, bad, err)
			}
		}
	}
	if uses, _ := FunctionSettings(FunctionLogin); slices.Contains(uses, "GRID_MINUTES") {
		t.Error("login uses GRID_MINUTES")
	}
}

// TestBillAfter: BILL_AFTER defaults to 10:00, takes HH:MM of the shop's day,
// and is the release run's alone.
func TestBillAfter(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"BILL_AFTER": v}[k] }
	}
	for v, want := range map[string]time.Duration{"": 10 * time.Hour, "09:30": 9*time.Hour + 30*time.Minute, "00:00": 0, "23:59": 23*time.Hour + 59*time.Minute} {
		if c, err := LoadFor(env(v), []string{"BILL_AFTER"}); err != nil || c.BillAfter != want {
			t.Errorf("BILL_AFTER=%q: %v %v, want %v", v, c, err, want)
		}
	}
	if uses, _ := FunctionSettings(FunctionRelease); !slices.Contains(uses, "BILL_AFTER") {
		t.Error("the release run does not use BILL_AFTER")
	}
	if uses, _ := FunctionSettings(FunctionPayNotify); slices.Contains(uses, "BILL_AFTER") {
		t.Error("payment notifications use BILL_AFTER: a bad one would stop them")
	}
}
