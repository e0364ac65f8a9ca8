package instance

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"salon/shared/booking"
)

// TestForChecksOnlyTheFunctionsSettings: a function bound with For is stopped
// only by a bad setting it uses; any other bad setting is a warning in its log.
func TestForChecksOnlyTheFunctionsSettings(t *testing.T) {
	env := map[string]string{
		"SESSION_SECRET":  "too-short",
		"SHOP_TZ":         "Asia/Shanghia",
		"WECHATPAY_MCHID": "1900000109", // and none of the keys
	}
	var logs bytes.Buffer
	e := &Env{Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	defer e.Close()

	notify := e.For(Function{Name: "notify", Settings: []string{"MYSQL_DSN"}})
	d, err := notify.Deps()
	if err != nil {
		t.Fatalf("a function using only MYSQL_DSN refused: %v", err)
	}
	if d.Sessions != nil || d.Pay != nil || d.Cfg.ShopTZ.String() != "Asia/Shanghai" {
		t.Errorf("bad unused settings were not left unset or at their defaults: sessions %v pay %v tz %v", d.Sessions, d.Pay, d.Cfg.ShopTZ)
	}
	for _, name := range []string{"SESSION_SECRET", "SHOP_TZ", "WECHATPAY"} {
		if !strings.Contains(logs.String(), name) {
			t.Errorf("no warning names %s:\n%s", name, logs.String())
		}
	}
	if e.For(Function{Name: "notify"}) != notify {
		t.Error("For the same function twice gave two Envs (two pools)")
	}

	for _, uses := range []struct{ setting, named string }{
		{"SESSION_SECRET", "SESSION_SECRET"}, {"SHOP_TZ", "SHOP_TZ"}, {"WECHATPAY_MCHID", "WECHATPAY_"},
	} {
		_, err := e.For(Function{Name: "uses-" + uses.setting, Settings: []string{uses.setting}}).Deps()
		if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), uses.named) {
			t.Errorf("a function using %s: %v, want INTERNAL naming %s", uses.setting, err, uses.named)
		}
	}
	if _, err := e.Deps(); err == nil {
		t.Error("an Env bound to no function (the whole product) accepted bad settings")
	}
}
