package mysql_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// notAnOperation are the exported methods returning an error that name no
// operation of the store, each with the reason.
var notAnOperation = map[string]string{
	"Classify": "it gives another operation's error its code, and returns every error it does not classify as it came",
}

// personal are the names that, in a wrap's arguments, would put a secret or a
// person's data in the log: the customer's openid, name, phone, a staff name,
// password, token, session, address, check-in code, note, idempotency key.
var personal = map[string]bool{
	"openid": true, "name": true, "phone": true, "password": true, "token": true, "sessionid": true,
	"address": true, "code": true, "note": true, "idemkey": true, "appid": true, "lasterror": true,
	"actor": true, "by": true, "reason": true,
}

// TestEveryStoreMethodNamesItsOperation reads the store's source: every
// exported method whose last result is an error names it err and starts with
// defer wrap(&err, "<its own name>(..."), so a failure in the log says which
// operation failed; the arguments name keys, never personal data; and no
// exported method calls another, so an error names one operation, not two.
func TestEveryStoreMethodNamesItsOperation(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{} // the exported methods, by name
	type method struct {
		decl *ast.FuncDecl
		pos  token.Position
	}
	var methods []method
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if file.Name.Name != "mysql" {
			continue
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			exported[fn.Name.Name] = true
			methods = append(methods, method{fn, fset.Position(fn.Pos())})
		}
	}
	if len(methods) < 90 {
		t.Fatalf("found %d exported methods; the test reads the wrong directory", len(methods))
	}
	for name := range notAnOperation {
		if !exported[name] {
			t.Errorf("notAnOperation lists %s, which is no exported method any more", name)
		}
	}

	named := 0
	for _, m := range methods {
		fn, name := m.decl, m.decl.Name.Name
		if fn.Body != nil {
			recv := receiverName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if ok && recv != "" && isIdent(sel.X, recv) && exported[sel.Sel.Name] {
					t.Errorf("%s: %s calls %s.%s: call the unexported method beneath it, so the error names one operation",
						m.pos, name, recv, sel.Sel.Name)
				}
				return true
			})
		}
		if !lastResultIsError(fn.Type) {
			continue
		}
		if _, ok := notAnOperation[name]; ok {
			continue
		}
		results := fn.Type.Results.List
		last := results[len(results)-1]
		if len(last.Names) == 0 || last.Names[len(last.Names)-1].Name != "err" {
			t.Errorf("%s: %s: name the error result err (the others _, unless they have names)", m.pos, name)
			continue
		}
		format, args, ok := deferredWrap(fn)
		if !ok {
			t.Errorf(`%s: %s: its first statement is not defer wrap(&err, "%s(...)", ...)`, m.pos, name, name)
			continue
		}
		if !strings.HasPrefix(format, name+"(") || !strings.HasSuffix(format, ")") {
			t.Errorf("%s: %s: wrap names %q, want %q followed by its keys in parentheses", m.pos, name, format, name+"(")
		}
		for _, a := range args {
			ast.Inspect(a, func(n ast.Node) bool {
				var id string
				switch x := n.(type) {
				case *ast.Ident:
					id = x.Name
				case *ast.SelectorExpr:
					id = x.Sel.Name
				}
				if personal[strings.ToLower(id)] {
					t.Errorf("%s: %s: wrap's argument %s may be a secret or a person's data; name a key (an id, a day) instead",
						m.pos, name, id)
				}
				return true
			})
		}
		named++
	}
	t.Logf("%d exported methods name their operation in their errors", named)
}

// deferredWrap returns the format and arguments of fn's first statement when
// it is defer wrap(&err, "format", args...).
func deferredWrap(fn *ast.FuncDecl) (format string, args []ast.Expr, ok bool) {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return "", nil, false
	}
	d, ok := fn.Body.List[0].(*ast.DeferStmt)
	if !ok || !isIdent(d.Call.Fun, "wrap") || len(d.Call.Args) < 2 {
		return "", nil, false
	}
	if u, ok := d.Call.Args[0].(*ast.UnaryExpr); !ok || u.Op != token.AND || !isIdent(u.X, "err") {
		return "", nil, false
	}
	lit, ok := d.Call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", nil, false
	}
	format, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", nil, false
	}
	return format, d.Call.Args[2:], true
}

func lastResultIsError(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return false
	}
	return isIdent(ft.Results.List[len(ft.Results.List)-1].Type, "error")
}

func receiverName(fn *ast.FuncDecl) string {
	if len(fn.Recv.List) == 0 || len(fn.Recv.List[0].Names) == 0 {
		return ""
	}
	return fn.Recv.List[0].Names[0].Name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestStoreErrorsReadWithTheirOperation fails the store for real three ways
// and reads the errors as the log does: each starts with the operation and its
// keys, and still answers its code, its customer message and the driver's
// error through the name.
func TestStoreErrorsReadWithTheirOperation(t *testing.T) {
	t.Parallel()

	t.Run("a refusal keeps its code", func(t *testing.T) {
		db := mysqltest.New(t)
		_, err := db.ChangeStatus(ctx, booking.Change{BookingID: 12, From: booking.StatusPending, To: booking.StatusCancelled,
			Event: booking.EventCancel, Actor: booking.ActorCustomer})
		const want = "mysql.ChangeStatus(book 12): NOT_FOUND: "
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("ChangeStatus of a booking that does not exist: %v, want it to read %q...", err, want)
		}
		var coded *booking.Error
		if booking.ErrorCode(err) != booking.ENOTFOUND || !errors.As(err, &coded) || coded.Code != booking.ENOTFOUND {
			t.Errorf("the code is lost behind the name: ErrorCode %s", booking.ErrorCode(err))
		}
		// What the customer is shown is the code's message, never the log's text.
		if msg := booking.ErrorMessage(err); msg != booking.Errorf(booking.ENOTFOUND, "").Message || strings.Contains(msg, "mysql.") {
			t.Errorf("the customer would read %q", msg)
		}
	})

	t.Run("a driver error stays reachable", func(t *testing.T) {
		// A schema that was never migrated: every table is missing.
		db, err := mysql.Open(mysqltest.NewDSN(t), mysql.Options{MaxOpenConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		_, err = db.FindBooking(ctx, 12)
		var me *drv.MySQLError
		if err == nil || !strings.HasPrefix(err.Error(), "mysql.FindBooking(book 12): Error 1146") ||
			!errors.As(err, &me) || me.Number != 1146 {
			t.Fatalf("FindBooking on a schema without tables: %v, want mysql.FindBooking(book 12): Error 1146 (the driver's error kept)", err)
		}
		if booking.ErrorCode(err) != booking.EINTERNAL || mysql.Classify(err) != err {
			t.Errorf("a missing table is INTERNAL and not the database's availability: %s, %v", booking.ErrorCode(err), mysql.Classify(err))
		}
	})

	t.Run("an unreachable database is still UNAVAILABLE", func(t *testing.T) {
		// Port 1 on this machine: nothing listens, the dial is refused.
		db, err := mysql.Open("salon@tcp(127.0.0.1:1)/salon", mysql.Options{MaxOpenConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		_, err = db.Now(ctx)
		if err == nil || !strings.HasPrefix(err.Error(), "mysql.Now(): ") {
			t.Fatalf("Now on a database that does not answer: %v, want it to read mysql.Now(): ...", err)
		}
		classified := mysql.Classify(err)
		if booking.ErrorCode(classified) != booking.EUNAVAILABLE || !strings.Contains(classified.Error(), "mysql.Now(): ") {
			t.Errorf("Classify through the name: %s, %v", booking.ErrorCode(classified), classified)
		}
	})
}
