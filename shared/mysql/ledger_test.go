package mysql_test

import (
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
	"testing"
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
