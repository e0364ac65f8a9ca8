package instance

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"salon/shared/booking"
	"salon/shared/config"
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
	d, err := notify.load()
	if err != nil {
		t.Fatalf("a function using only MYSQL_DSN refused: %v", err)
	}
	if d.sessions != nil || d.pay != nil || d.cfg.ShopTZ.String() != "Asia/Shanghai" {
		t.Errorf("bad unused settings were not left unset or at their defaults: sessions %v pay %v tz %v", d.sessions, d.pay, d.cfg.ShopTZ)
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
		_, err := e.For(Function{Name: "uses-" + uses.setting, Settings: []string{uses.setting}}).load()
		if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), uses.named) {
			t.Errorf("a function using %s: %v, want INTERNAL naming %s", uses.setting, err, uses.named)
		}
	}
	if _, err := e.load(); err == nil {
		t.Error("an Env bound to no function (the whole product) accepted bad settings")
	}
}

// TestStoreChecksTheDSN: MYSQL_DSN is checked by the store's rules
// (mysql.Config), config only passing it on: a function that uses the store
// is stopped by a bad one, at start and by the deploy preflight, with an
// INTERNAL error naming the setting and not the password; a function that
// does not use it logs a warning and keeps the default.
func TestStoreChecksTheDSN(t *testing.T) {
	for _, dsn := range []string{
		"root@tcp(127.0.0.1:3306",
		"user:hunter2@tcp(host:3306)salon",
		"user:hunter2@tcp(host:3306)/salon?charset=gbk",
		"user:hunter2@tcp(host:3306)/salon?character_set_client=gbk",
	} {
		t.Run(dsn, func(t *testing.T) {
			getenv := func(k string) string { return map[string]string{"MYSQL_DSN": dsn}[k] }
			refused := func(what string, err error) {
				t.Helper()
				if booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "invalid setting MYSQL_DSN: ") {
					t.Errorf("%s: %v, want INTERNAL naming MYSQL_DSN", what, err)
				}
				if err != nil && strings.Contains(err.Error(), "hunter2") {
					t.Errorf("%s: the error quotes the password: %v", what, err)
				}
			}
			var logs bytes.Buffer
			e := &Env{Getenv: getenv, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
			defer e.Close()

			store := Function{Name: "store", Settings: []string{"MYSQL_DSN"}}
			_, err := e.For(store).load()
			refused("a function using the store", err)
			refused("the preflight of a function using the store", CheckSettings(store, getenv))
			_, err = e.load()
			refused("the whole product", err)

			login := Function{Name: "login", Settings: []string{"SHOP_TZ"}}
			d, err := e.For(login).load()
			if err != nil {
				t.Fatalf("a function not using the store refused: %v", err)
			}
			if d.cfg.MySQLDSN != config.DefaultMySQLDSN {
				t.Errorf("a function not using the store kept the bad DSN %q", d.cfg.MySQLDSN)
			}
			if !strings.Contains(logs.String(), "MYSQL_DSN (not used by this function, left at its default)") || strings.Contains(logs.String(), "hunter2") {
				t.Errorf("no warning naming MYSQL_DSN without its password:\n%s", logs.String())
			}
			if err := CheckSettings(login, getenv); err != nil {
				t.Errorf("the preflight of a function not using the store: %v", err)
			}
		})
	}
}

// TestGettersKeepNoFailure: a getter that failed on a bad setting succeeds
// once the setting is fixed, with no new Env (a warm instance picks it up at
// its next request); a getter that needs a setting that is unset says which,
// while the use cases still work; and without WeChat Pay the notification
// verifier is nil, not an interface around a nil client.
func TestGettersKeepNoFailure(t *testing.T) {
	env := map[string]string{"SESSION_SECRET": "too-short"}
	e := &Env{Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))}
	defer e.Close()
	fn := e.For(Function{Name: "customer", Settings: []string{"SESSION_SECRET"}})

	if _, err := fn.Sessions(); booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "SESSION_SECRET") {
		t.Errorf("Sessions with a short SESSION_SECRET: %v, want INTERNAL naming it", err)
	}
	if _, err := fn.Reservations(); err == nil {
		t.Error("a use case was built although its function's setting is bad")
	}
	env["SESSION_SECRET"] = "session-secret-0123456789abcdef0123456789"
	if s, err := fn.Sessions(); err != nil || s == nil {
		t.Errorf("Sessions once SESSION_SECRET is fixed: %v, %v", s, err)
	}
	if r, err := fn.Reservations(); err != nil || r == nil {
		t.Errorf("Reservations once SESSION_SECRET is fixed: %v, %v", r, err)
	}

	delete(env, "SESSION_SECRET")
	unset := e.For(Function{Name: "no-secret", Settings: []string{"SESSION_SECRET"}})
	for name, get := range map[string]func() (any, error){
		"Sessions":    func() (any, error) { return unset.Sessions() },
		"ConsoleKeys": func() (any, error) { return unset.ConsoleKeys() },
	} {
		if _, err := get(); booking.ErrorCode(err) != booking.EINTERNAL || !strings.Contains(err.Error(), "missing required setting SESSION_SECRET") {
			t.Errorf("%s without SESSION_SECRET: %v", name, err)
		}
	}
	if c, err := unset.Cancels(); err != nil || c == nil {
		t.Errorf("Cancels without SESSION_SECRET: %v, %v", c, err)
	}
	if n, err := unset.PayNotifications(); err != nil || n != nil {
		t.Errorf("PayNotifications without WeChat Pay: %v (%T), %v; want nil", n, n, err)
	}
}

// TestPasswordCost: an Env as the functions build it (no PasswordCost), bound
// to a function, hashes the accounts' passwords at booking.PasswordCost; only
// an Env given a PasswordCost, as tests give one, hashes at that cost.
func TestPasswordCost(t *testing.T) {
	for _, tt := range []struct{ set, want int }{{0, booking.PasswordCost}, {bcrypt.MinCost, bcrypt.MinCost}} {
		e := &Env{Getenv: func(string) string { return "" }, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), PasswordCost: tt.set}
		defer e.Close()
		d, err := e.For(Function{Name: "admin"}).load()
		if err != nil {
			t.Fatal(err)
		}
		h, err := d.svc.Passwords.Hash("correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := bcrypt.Cost([]byte(h)); err != nil || got != tt.want {
			t.Errorf("PasswordCost %d: a hash of cost %d (%v), want %d", tt.set, got, err, tt.want)
		}
	}
}
