package mysql_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
)

// The money ledger is append-only: no statement of the store changes or
// removes a row of t_money once written.

// changesLedger matches a statement that updates, deletes, replaces or empties
// t_money (an INSERT that updates on a duplicate key included), once a
// locking read's FOR UPDATE is taken out.
var (
	changesLedger = regexp.MustCompile(`(?is)\b(UPDATE|DELETE|REPLACE|TRUNCATE)\b.*\bt_money\b|\bt_money\b.*\b(UPDATE|DELETE|REPLACE|TRUNCATE)\b`)
	lockingRead   = regexp.MustCompile(`(?i)\bFOR\s+UPDATE\b`)
)

// ledgerChanges are the statements (file:line) among Go source files and SQL
// migrations that change t_money: in Go, every string literal and every sum of
// literals (the parts that are not literals stand as ?); in SQL, every
// statement.
func ledgerChanges(t *testing.T, files map[string]string) []string {
	t.Helper()
	var out []string
	check := func(where, stmt string) {
		if changesLedger.MatchString(lockingRead.ReplaceAllString(stmt, "")) {
			out = append(out, where)
		}
	}
	for name, text := range files {
		if strings.HasSuffix(name, ".sql") {
			line := 1
			for _, stmt := range strings.Split(text, ";") {
				check(name+":"+strconv.Itoa(line), stmt)
				line += strings.Count(stmt, "\n")
			}
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, text, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch e := n.(type) {
			case *ast.BasicLit, *ast.BinaryExpr:
				if s, ok := literalText(e.(ast.Expr)); ok {
					check(fset.Position(n.Pos()).String(), s)
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// literalText is a string literal's text, or a sum's with what is not a
// literal as ?; ok is false for anything else.
func literalText(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, okX := literalText(e.X)
		y, okY := literalText(e.Y)
		if !okX && !okY {
			return "", false
		}
		if !okX {
			x = " ? "
		}
		if !okY {
			y = " ? "
		}
		return x + y, true
	case *ast.ParenExpr:
		return literalText(e.X)
	}
	return "", false
}

// storeSources are every non-test Go file under shared/mysql and every
// migration after 0023 (the one that creates t_money and fills it once).
func storeSources(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		isGo := strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
		isLaterMigration := filepath.Dir(path) == "migrations" && strings.HasSuffix(name, ".sql") && name > "0023_money.sql"
		if !isGo && !isLaterMigration {
			return nil
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d files of the store", len(files))
	}
	return files
}

// TestNoStatementChangesTheLedger: no statement of the store updates or deletes
// a row of t_money, and the scan finds one planted in Go or in a migration.
func TestNoStatementChangesTheLedger(t *testing.T) {
	files := storeSources(t)
	if got := ledgerChanges(t, files); len(got) != 0 {
		t.Fatalf("statements that change the append-only ledger: %v", got)
	}

	innocent := map[string]string{
		"read.go": "package mysql\n\nconst q = `SELECT amount_fen FROM t_money WHERE book_id = ? FOR UPDATE`\n" +
			"const w = `INSERT INTO t_money (book_id, kind) SELECT book_id, ? FROM t_booking WHERE book_id = ?`\n" +
			"const u = `UPDATE t_booking SET status = ? WHERE book_id = ?`\n",
		"migrations/0026_x.sql": "CREATE INDEX idx_money_kind ON t_money (kind);\nUPDATE t_booking SET refund_id = NULL WHERE 0;\n",
	}
	if got := ledgerChanges(t, innocent); len(got) != 0 {
		t.Errorf("innocent statements flagged: %v", got)
	}
	for _, planted := range []string{
		"package mysql\n\nconst q = `UPDATE t_money SET amount_fen = 0 WHERE money_id = ?`\n",
		"package mysql\n\nconst q = \"DELETE FROM t_money WHERE book_id = ?\"\n",
		"package mysql\n\nfunc f(n string) string { return `DELETE m FROM t_money m JOIN t_booking b ON b.book_id = m.book_id WHERE b.status = ` + n }\n",
		"package mysql\n\nconst q = `REPLACE INTO t_money (money_id, amount_fen) VALUES (?, ?)`\n",
		"package mysql\n\nconst q = `TRUNCATE TABLE t_money`\n",
		"package mysql\n\nconst q = `INSERT INTO t_money (book_id, kind) VALUES (?, ?) ON DUPLICATE KEY UPDATE amount_fen = VALUES(amount_fen)`\n",
	} {
		f := maps.Clone(files)
		f["planted.go"] = planted
		if got := ledgerChanges(t, f); len(got) != 1 || !strings.HasPrefix(got[0], "planted.go:") {
			t.Errorf("the scan missed a planted statement %q: %v", planted, got)
		}
	}
	f := maps.Clone(files)
	f["migrations/0026_fix.sql"] = "-- a repair\nUPDATE t_money SET amount_fen = 100 WHERE money_id = 7;\n"
	if got := ledgerChanges(t, f); len(got) != 1 || !strings.HasPrefix(got[0], "migrations/0026_fix.sql:") {
		t.Errorf("the scan missed a planted migration: %v", got)
	}
}

// TestConcurrentCheckouts: eight checkouts of one completed booking at once,
// with different amounts and ways: exactly one is written, the others are
// INVALID_STATE; and checkouts of eight different bookings at once are all
// written. Each checkout has its audit record.
func TestConcurrentCheckouts(t *testing.T) {
	db := mysqltest.New(t)
	slot := mysqltest.AddSlot(t, db, 3*time.Hour, 20, 0)
	completed := func(i int) int64 {
		b, err := db.WalkIn(ctx, booking.WalkInRequest{SlotID: slot, Name: "客" + strconv.Itoa(i), Phone: fmt.Sprintf("1390000%04d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusCompleted,
			Event: booking.EventCheckIn, Actor: booking.ActorSalon}); err != nil {
			t.Fatal(err)
		}
		return b.ID
	}
	one := completed(0)
	var many []int64
	for i := range 8 {
		many = append(many, completed(i+1))
	}
	const n = 8
	oneErrs, manyErrs := make([]error, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, oneErrs[i] = db.Checkout(ctx, one, booking.Checkout{AmountFen: int64(1000 * (i + 1)), Method: booking.CounterMethods[i%4]}, "staff:"+strconv.Itoa(i))
		}()
		go func() {
			defer wg.Done()
			_, manyErrs[i] = db.Checkout(ctx, many[i], booking.Checkout{AmountFen: 12800, Method: booking.MethodCash}, booking.ActorAdmin)
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range oneErrs {
		switch {
		case err == nil:
			won++
		case booking.IsCode(err, booking.EINVALIDSTATE):
		default:
			t.Errorf("checkout %d: %v", i, err)
		}
	}
	for i, err := range manyErrs {
		if err != nil {
			t.Errorf("checkout of booking %d: %v", many[i], err)
		}
	}
	var balances, audits int
	if err := db.SQL().QueryRow(`SELECT (SELECT COUNT(*) FROM t_money WHERE kind = 'balance' AND book_id = ?),
		(SELECT COUNT(*) FROM t_audit WHERE event = 'checkout' AND book_id = ?)`, one, one).Scan(&balances, &audits); err != nil {
		t.Fatal(err)
	}
	if won != 1 || balances != 1 || audits != 1 {
		t.Errorf("eight checkouts of one booking: %d won, %d balance rows, %d audit records", won, balances, audits)
	}
	for _, id := range many {
		rows, err := db.BookingLedger(ctx, id)
		if err != nil || len(rows) != 1 || rows[0].Kind != booking.MoneyBalance || rows[0].AmountFen != 12800 || rows[0].Actor != booking.ActorAdmin {
			t.Errorf("booking %d's ledger %+v, %v", id, rows, err)
		}
	}
	if _, err := db.Checkout(ctx, 999999, booking.Checkout{AmountFen: 1, Method: booking.MethodCash}, booking.ActorAdmin); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Errorf("checkout of no booking: %v", err)
	}
	mysqltest.CheckInvariant(t, db)
}
