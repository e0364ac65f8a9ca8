package mysql_test

import (
	"strings"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// hostileKey is an Idempotency-Key the handler accepts (64 bytes at most, valid
// UTF-8, no control characters) that breaks out of its string when the
// connection speaks gbk: 中 is E4 B8 AD, the driver escapes the quote as 5C 27,
// gbk reads E4 B8 and AD 5C as two characters, and the quote ends the string.
const hostileKey = "中';UPDATE t_slot SET price_fen=1;#"

// TestCharsetProof is the regression test of the gbk injection: a MYSQL_DSN that
// asks for another character set or collation is refused, under the pinned
// utf8mb4 the hostile key is stored as sent and changes nothing, and (the proof
// that the refusal matters) the same key through a gbk connection re-prices
// every slot to 1 fen.
func TestCharsetProof(t *testing.T) {
	dsn := mysqltest.NewDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, p := range []string{
		"charset=gbk", "charset=GBK", "charset=utf8mb4,gbk", "charset=big5", "charset=sjis", "charset=latin1",
		"collation=gbk_chinese_ci", "collation=big5_chinese_ci",
		"character_set_client=gbk", "Character_Set_Client='gbk'", "character_set_connection=gbk", "character_set_results=gbk",
		"collation_connection=gbk_chinese_ci", "names=gbk", "NAMES=gbk", "charset=gb%6Bk",
	} {
		_, err := mysql.Config(dsn + sep + p)
		key, _, _ := strings.Cut(p, "=")
		if err == nil || !strings.Contains(err.Error(), "MYSQL_DSN") || !strings.Contains(err.Error(), key) {
			t.Errorf("DSN with %s: Config error %v, want a refusal naming MYSQL_DSN and %s", p, err, key)
		}
		if db, err := mysql.Open(dsn+sep+p, mysql.SCFOptions); err == nil {
			db.Close()
			t.Errorf("DSN with %s: Open accepted it", p)
		}
	}
	for _, p := range []string{"charset=utf8mb4", "charset=UTF8MB4", "collation=utf8mb4_unicode_ci", "character_set_client=utf8mb4", "timeout=2s"} {
		if _, err := mysql.Config(dsn + sep + p); err != nil {
			t.Errorf("DSN with %s refused: %v", p, err)
		}
	}

	store, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	slotA := mysqltest.AddSlot(t, store, 48*time.Hour, 3, 5000)
	slotB := mysqltest.AddSlot(t, store, 50*time.Hour, 3, 8000)
	prices := func() map[int64]int64 {
		t.Helper()
		rows, err := store.SQL().Query(`SELECT slot_id, price_fen FROM t_slot`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[int64]int64{}
		for rows.Next() {
			var id, p int64
			if err := rows.Scan(&id, &p); err != nil {
				t.Fatal(err)
			}
			m[id] = p
		}
		return m
	}
	var charset string
	if err := store.SQL().QueryRow(`SELECT @@character_set_client`).Scan(&charset); err != nil || charset != "utf8mb4" {
		t.Errorf("the pinned connection speaks %q (%v), want utf8mb4", charset, err)
	}

	// utf8mb4: the key is data, stored as sent; asking again names the same booking.
	b, created, err := store.Reserve(ctx, booking.ReserveRequest{OpenID: "o-hostile", SlotID: slotA, IdemKey: hostileKey})
	if err != nil || !created {
		t.Fatalf("reserve with the hostile key: created=%v %v", created, err)
	}
	var stored string
	if err := store.SQL().QueryRow(`SELECT idem_key FROM t_booking WHERE book_id = ?`, b.ID).Scan(&stored); err != nil || stored != hostileKey {
		t.Errorf("stored key %q (%v), want %q", stored, err, hostileKey)
	}
	again, created, err := store.Reserve(ctx, booking.ReserveRequest{OpenID: "o-hostile", SlotID: slotA, IdemKey: hostileKey})
	if err != nil || created || again.ID != b.ID {
		t.Errorf("the same key again: booking %+v created=%v %v, want booking %d", again, created, err, b.ID)
	}
	// The classic form, a lone 0xBF before the quote, is not even UTF-8: the
	// handler refuses it, and the store either refuses it or stores it as data.
	store.Reserve(ctx, booking.ReserveRequest{OpenID: "o-bf", SlotID: slotB, IdemKey: "\xbf';UPDATE t_slot SET price_fen=1;#"})
	if got := prices(); got[slotA] != 5000 || got[slotB] != 8000 {
		t.Fatalf("prices changed under utf8mb4: %v", got)
	}
	mysqltest.CheckInvariant(t, store)

	// The proof: the same key through a connection that speaks gbk. The driver
	// (since go-sql-driver/mysql 1.10.2) refuses a gbk charset in its own
	// configuration when it interpolates parameters, as Config does; a
	// connection switched by SET NAMES, which no DSN check can see, is what is
	// left, and it shows what both refusals prevent.
	cfg, err := mysql.Config(dsn)
	if err != nil {
		t.Fatal(err)
	}
	unsafe := cfg.Clone()
	if err := unsafe.Apply(drv.Charset("gbk", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := mysql.OpenConfigForTest(unsafe, mysql.Options{MaxOpenConns: 1}); err == nil {
		t.Error("the driver accepted charset gbk with interpolated parameters")
	}
	// Config also turns multi-statements off, which stops this particular key
	// at a syntax error; the proof turns them on to show what a value that ends
	// its string can do in one step.
	cfg.MultiStatements = true
	gbk, err := mysql.OpenConfigForTest(cfg, mysql.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer gbk.Close()
	// One connection, kept: every statement after this one speaks gbk.
	if _, err := gbk.SQL().ExecContext(ctx, "SET NAMES gbk"); err != nil {
		t.Fatal(err)
	}
	gbk.Reserve(ctx, booking.ReserveRequest{OpenID: "o-attacker", SlotID: slotB, IdemKey: hostileKey})
	if got := prices(); got[slotA] != 1 || got[slotB] != 1 {
		t.Fatalf("the hostile key did not break out under gbk (prices %v): this test no longer proves "+
			"why Config refuses other character sets; find a key that does, and keep the refusal", got)
	}
}

// TestReserveOnANonUTF8MB4Schema: on a database whose default character set is
// latin1 or utf8mb3 (tables say utf8mb4 for themselves, but a stored routine's
// VARCHAR parameters take the database's default unless they name one), an
// Idempotency-Key or an openid outside that set is still stored as sent.
// Before migration 0007 salon_reserve's parameters were latin1/utf8mb3 there,
// and such a key was Error 1366 (Incorrect string value), answered 500.
func TestReserveOnANonUTF8MB4Schema(t *testing.T) {
	t.Parallel()
	for _, charset := range []string{"latin1", "utf8mb3"} {
		t.Run(charset, func(t *testing.T) {
			t.Parallel()
			store, err := mysql.Open(mysqltest.NewDSNCharset(t, charset), mysql.Options{MaxOpenConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if err := store.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var dbCharset string
			if err := store.SQL().QueryRow(`SELECT @@character_set_database`).Scan(&dbCharset); err != nil || dbCharset != charset {
				t.Fatalf("the database's character set is %q (%v), want %q", dbCharset, err, charset)
			}
			slot := mysqltest.AddSlot(t, store, 48*time.Hour, 3, 5000)
			for _, c := range []struct{ openid, key string }{
				{"o-ascii", "预约-键😀"},   // 😀 is outside utf8mb3, 预约 outside latin1
				{"o-顾客😀", "plain-key"}, // an openid is data too
			} {
				b, created, err := store.Reserve(ctx, booking.ReserveRequest{OpenID: c.openid, SlotID: slot, IdemKey: c.key})
				if err != nil || !created {
					t.Fatalf("reserve %q with key %q: created=%v %v", c.openid, c.key, created, err)
				}
				var openid, key string
				if err := store.SQL().QueryRow(`SELECT openid, idem_key FROM t_booking WHERE book_id = ?`, b.ID).Scan(&openid, &key); err != nil {
					t.Fatal(err)
				}
				if openid != c.openid || key != c.key {
					t.Errorf("stored %q %q, want %q %q", openid, key, c.openid, c.key)
				}
				again, created, err := store.Reserve(ctx, booking.ReserveRequest{OpenID: c.openid, SlotID: slot, IdemKey: c.key})
				if err != nil || created || again.ID != b.ID {
					t.Errorf("the same key again: booking %+v created=%v %v, want booking %d", again, created, err, b.ID)
				}
			}
			// A service's reservation (salon_reserve_span) stores them as sent too.
			svc := mysqltest.AddService(t, store, "美甲", 30, 0, 0)
			amy := mysqltest.AddTechnician(t, store, "Amy", svc)
			start := mysqltest.GridStart(t, store, 24*time.Hour)
			mysqltest.LayCells(t, store, amy, start, 1)
			from, to := day(start)
			sb, _, err := store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: "o-技师😀", ServiceID: svc, StartAt: start,
				DayStart: from, DayEnd: to, IdemKey: "预约-键😀"})
			if err != nil {
				t.Fatalf("reserve a service: %v", err)
			}
			var openid, key string
			if err := store.SQL().QueryRow(`SELECT openid, idem_key FROM t_booking WHERE book_id = ?`, sb.ID).Scan(&openid, &key); err != nil ||
				openid != "o-技师😀" || key != "预约-键😀" {
				t.Errorf("a service's booking stored %q %q (%v)", openid, key, err)
			}
			// Every string parameter of the procedures is utf8mb4, so the next
			// parameter someone adds cannot quietly take the schema's set.
			for _, proc := range []struct {
				name    string
				strings int
			}{{"salon_reserve", 5}, {"salon_reserve_span", 6}} {
				rows, err := store.SQL().Query(`SELECT PARAMETER_NAME, CHARACTER_SET_NAME FROM information_schema.PARAMETERS
					WHERE SPECIFIC_SCHEMA = DATABASE() AND SPECIFIC_NAME = ? AND CHARACTER_SET_NAME IS NOT NULL`, proc.name)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					var name, cs string
					if err := rows.Scan(&name, &cs); err != nil {
						t.Fatal(err)
					}
					n++
					if cs != "utf8mb4" {
						t.Errorf("%s's %s is %s, want utf8mb4", proc.name, name, cs)
					}
				}
				if err := rows.Err(); err != nil || n != proc.strings {
					t.Errorf("%d string parameters of %s (%v), want %d", n, proc.name, err, proc.strings)
				}
				rows.Close()
			}
			mysqltest.CheckInvariant(t, store)
		})
	}
}
