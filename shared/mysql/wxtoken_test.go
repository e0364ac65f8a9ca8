package mysql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"salon/shared/mysql/mysqltest"
)

func TestWxTokenStore(t *testing.T) {
	db := mysqltest.New(t)

	tok, exp, err := db.CachedToken(ctx, "wxapp")
	if err != nil || tok != "" || !exp.IsZero() {
		t.Fatalf("nothing stored: got %q %v %v", tok, exp, err)
	}

	// A token as long as the column, with the microseconds the column keeps.
	long := strings.Repeat("t", 1024)
	at := time.Date(2026, 5, 1, 10, 0, 0, 123456000, time.FixedZone("CST", 8*3600))
	if err := db.SaveToken(ctx, "wxapp", long, at); err != nil {
		t.Fatal(err)
	}
	tok, exp, err = db.CachedToken(ctx, "wxapp")
	if err != nil || tok != long || !exp.Equal(at) {
		t.Fatalf("read back: %d bytes, %v, %v; want 1024 bytes, %v", len(tok), exp, err, at)
	}

	// Saving again replaces it; another app's token is its own.
	if err := db.SaveToken(ctx, "wxapp", "second", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveToken(ctx, "wxother", "other", at); err != nil {
		t.Fatal(err)
	}
	if tok, exp, _ := db.CachedToken(ctx, "wxapp"); tok != "second" || !exp.Equal(at.Add(time.Hour)) {
		t.Fatalf("after the upsert: %q %v", tok, exp)
	}
	if tok, _, _ := db.CachedToken(ctx, "wxother"); tok != "other" {
		t.Fatalf("the other app: %q", tok)
	}

	// Refusals write nothing.
	if err := db.SaveToken(ctx, "wxapp", "", at); err == nil {
		t.Fatal("an empty token was accepted")
	}
	if err := db.SaveToken(ctx, "", "x", at); err == nil {
		t.Fatal("an empty app id was accepted")
	}
	if err := db.SaveToken(ctx, "wxapp", strings.Repeat("t", 1025), at); err == nil {
		t.Fatal("a token longer than the column was accepted")
	}
	if tok, _, _ := db.CachedToken(ctx, "wxapp"); tok != "second" {
		t.Fatalf("a refused save changed the token: %q", tok)
	}
	var rows int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM t_wx_token`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("%d rows (%v), want 2", rows, err)
	}
}

// Every cold instance may store the token at the same moment: one row stays, and
// it holds one of the tokens written, whole.
func TestWxTokenConcurrentSaves(t *testing.T) {
	db := mysqltest.New(t)
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Microsecond)
	errs := make(chan error, 20)
	race(20, func(i int) { errs <- db.SaveToken(ctx, "wxapp", fmt.Sprintf("token-%02d", i), at) })
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	tok, exp, err := db.CachedToken(ctx, "wxapp")
	if err != nil || !strings.HasPrefix(tok, "token-") || len(tok) != 8 || !exp.Equal(at) {
		t.Fatalf("after 20 concurrent saves: %q %v %v", tok, exp, err)
	}
	var rows int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM t_wx_token`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows (%v), want 1", rows, err)
	}
	mysqltest.CheckInvariant(t, db)
}
