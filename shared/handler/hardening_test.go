package handler

import (
	"context"
	"strings"
	"testing"

	"salon/infra/localgw"
	"salon/shared/booking"
	"salon/shared/config"
	"salon/shared/mysql/mysqltest"
)

// hostileKey breaks out of its string on a gbk connection (see the store's
// TestCharsetProof); the handler accepts it as a key.
const hostileKey = "中';UPDATE t_slot SET price_fen=1;#"

// TestHostileIdempotencyKey: through the gateway, the hostile key is stored as
// sent and changes nothing; a MYSQL_DSN asking for gbk makes the function refuse
// to serve, with the reason in the log and nothing changed.
func TestHostileIdempotencyKey(t *testing.T) {
	t.Parallel()
	t.Run("utf8mb4", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot, other := s.freshSlot(3, 5000), s.freshSlot(3, 8000)
		prices := func() string {
			var p string
			if err := s.store.SQL().QueryRow(`SELECT GROUP_CONCAT(price_fen ORDER BY slot_id) FROM t_slot WHERE slot_id IN (?, ?)`, slot, other).Scan(&p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		id, a := s.reserve("o-hostile", slot, "Idempotency-Key", hostileKey)
		if id == 0 {
			t.Fatalf("reserve with the hostile key: %d %s", a.Status, a.Body)
		}
		var stored string
		if err := s.store.SQL().QueryRow(`SELECT idem_key FROM t_booking WHERE book_id = ?`, id).Scan(&stored); err != nil || stored != hostileKey {
			t.Errorf("stored key %q (%v), want %q", stored, err, hostileKey)
		}
		if again, a := s.reserve("o-hostile", slot, "Idempotency-Key", hostileKey); again != id {
			t.Errorf("the same key again: booking %d (%d %s), want %d", again, a.Status, a.Body, id)
		}
		// A lone 0xBF is not UTF-8: refused, or (if the way in replaced it) data.
		if a := s.call("POST", "/bookings", s.token("o-bf"), map[string]any{"slotId": other}, "Idempotency-Key", "\xbf';UPDATE t_slot SET price_fen=1;#"); a.Status != 400 && a.Status != 201 {
			t.Errorf("0xBF key: %d %s", a.Status, a.Body)
		}
		if p := prices(); p != "5000,8000" {
			t.Errorf("prices after the hostile keys: %s, want 5000,8000", p)
		}
	})
	t.Run("gbk refused", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t, func(env map[string]string) {
			sep := "?"
			if strings.Contains(env["MYSQL_DSN"], "?") {
				sep = "&"
			}
			env["MYSQL_DSN"] += sep + "charset=gbk"
		})
		slot := s.freshSlot(3, 5000)
		before := s.dbState()
		s.wantError(s.call("POST", "/bookings", s.token("o-hostile"), map[string]any{"slotId": slot}, "Idempotency-Key", hostileKey), 500, booking.EINTERNAL)
		s.wantError(s.call("GET", "/slots?date=2026-12-01", "", nil), 500, booking.EINTERNAL)
		s.unchanged(before, "functions given a gbk MYSQL_DSN")
		if logs := s.logs.String(); !strings.Contains(logs, "MYSQL_DSN") || !strings.Contains(logs, "charset=gbk") {
			t.Errorf("the log does not say why:\n%s", logs)
		}
	})
}

// TestBadSettingStopsOnlyItsFunctions: with a SESSION_SECRET too short (and a
// typo in SHOP_TZ), payment notifications and the release run still work, login
// and the customer routes refuse clearly, and what was refused changed nothing.
func TestBadSettingStopsOnlyItsFunctions(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	paid, a := s.reserve("o-pays", slot)
	if paid == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	expired := s.relExpiredHold("o-expires", slot)

	// The salon breaks two settings and deploys; every function starts afresh.
	s.env["SESSION_SECRET"] = "too-short-session-secret"
	s.env["SHOP_TZ"] = "Asia/Shanghia"
	s.apiEnv.Close()

	before := s.dbState()
	s.wantError(s.call("POST", "/login", "", map[string]string{"code": "c"}), 500, booking.EINTERNAL)
	s.wantError(s.call("POST", "/bookings", s.token("o-new"), map[string]any{"slotId": slot}), 500, booking.EINTERNAL)
	s.unchanged(before, "functions refusing a short SESSION_SECRET")

	if err := s.sim.Pay(context.Background(), booking.OutTradeNo(paid)); err != nil {
		t.Fatalf("payment notification with a short SESSION_SECRET: %v", err)
	}
	if st := s.status(paid); st != "confirmed" {
		t.Errorf("paid booking is %s, want confirmed", st)
	}
	sum, err := relRunEnv(context.Background(), s.apiEnv)
	if err != nil || sum.Released != 1 {
		t.Errorf("release run with a short SESSION_SECRET: %+v %v", sum, err)
	}
	if st := s.status(expired); st != "expired" {
		t.Errorf("expired hold is %s, want expired", st)
	}
	mysqltest.CheckInvariant(t, s.store)

	logs := s.logs.String()
	if !strings.Contains(logs, "invalid setting SESSION_SECRET: must be at least 32 bytes") {
		t.Errorf("login's refusal does not say why:\n%s", logs)
	}
	var warned int
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"setting ignored"`) && strings.Contains(line, "SESSION_SECRET") &&
			(strings.Contains(line, `"function":"paynotify"`) || strings.Contains(line, `"function":"release"`)) {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("paynotify and release should each warn once about SESSION_SECRET, got %d:\n%s", warned, logs)
	}
	if strings.Contains(logs, "too-short-session-secret") {
		t.Error("the log quotes the secret")
	}
}

// TestDevelopmentSecretsRefused: outside SALON_DEV=1 the admin function refuses
// to serve with the published development token or a short one, and says why;
// with SALON_DEV=1 (scripts/dev.sh) it serves.
func TestDevelopmentSecretsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, token, dev, why string
		status                int
	}{
		{"published token", "dev-admin-token", "", "published development value", 500},
		{"short token", "0123456789abcdef0123456789abcde", "", "at least 32 bytes", 500},
		{"published token, SALON_DEV=0", "dev-admin-token", "0", "published development value", 500},
		{"published token in local development", "dev-admin-token", "1", "", 200},
		{"short token in local development", "0123456789abcdef0123456789abcde", "1", "", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSystem(t, func(env map[string]string) {
				env["ADMIN_TOKEN"] = tt.token
				env["SALON_DEV"] = tt.dev
			})
			before := s.dbState()
			a := s.call("POST", "/admin/slots", tt.token, map[string]any{"from": "2026-12-01", "to": "2026-12-01",
				"open": "10:00", "close": "11:30", "slotMinutes": 90, "capacity": 1, "priceFen": 0})
			if tt.status != 200 {
				s.wantError(a, tt.status, booking.EINTERNAL)
				s.unchanged(before, "the admin function with "+tt.name)
				if logs := s.logs.String(); !strings.Contains(logs, "invalid setting ADMIN_TOKEN: ") || !strings.Contains(logs, tt.why) {
					t.Errorf("the log does not say why:\n%s", logs)
				} else if strings.Contains(logs, tt.token) {
					t.Error("the log quotes the token")
				}
				// Functions that do not use ADMIN_TOKEN serve on.
				if a := s.call("GET", "/slots?date=2026-12-01", "", nil); a.Status != 200 {
					t.Errorf("slots: %d %s", a.Status, a.Body)
				}
				return
			}
			if a.Status != 201 {
				t.Errorf("SALON_DEV=1: %d %s", a.Status, a.Body)
			}
		})
	}
}

// TestFunctionSettingsDeclared: every setting a function uses is passed to it by
// serverless.yml (the local runtime passes nothing else, so a missing one fails
// here and locally before it fails on SCF), every function there has its list
// here, and no function is ever given SALON_DEV.
func TestFunctionSettingsDeclared(t *testing.T) {
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, fn := range Functions {
		listed[fn.Name] = true
		declared, ok := spec.Function(fn.Name)
		if !ok {
			t.Errorf("function %s is not in serverless.yml", fn.Name)
			continue
		}
		for _, name := range fn.Settings {
			if _, ok := declared.Env[name]; !ok {
				t.Errorf("function %s uses %s but serverless.yml does not pass it", fn.Name, name)
			}
		}
		if _, err := config.LoadFor(func(string) string { return "" }, fn.Settings); err != nil {
			t.Errorf("function %s: %v", fn.Name, err)
		}
	}
	for _, f := range spec.Functions {
		if !listed[f.Name] {
			t.Errorf("serverless.yml function %s has no settings list in handler.Functions", f.Name)
		}
		if _, ok := f.Env["SALON_DEV"]; ok {
			t.Errorf("serverless.yml gives function %s SALON_DEV: a deployed function must never be in local development mode", f.Name)
		}
	}
}
