package config

import (
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const secret32 = "0123456789abcdef0123456789abcdef"

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
		"ADMIN_TOKEN":         "admin-token",
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
		MySQLDSN: "salon:pw@tcp(db.internal:3306)/salon?parseTime=true", LockTTL: 90 * time.Second, BookingWindowDays: 30,
		SessionSecret: []byte(secret32), AdminToken: "admin-token", WXAppID: "wxapp", WXAppSecret: "wxsecret",
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
		{"MYSQL_DSN", "root@tcp(127.0.0.1:3306", ""},
		{"MYSQL_DSN", "user:hunter2@tcp(host:3306)salon", "hunter2"},
		{"MYSQL_DSN", "user:hunter2@tcp(host:3306)/salon?charset=gbk", "hunter2"},
		{"MYSQL_DSN", "user:hunter2@tcp(host:3306)/salon?character_set_client=gbk", "hunter2"},
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
