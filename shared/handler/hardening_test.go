package handler

import (
	"strings"
	"testing"

	"salon/shared/booking"
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
