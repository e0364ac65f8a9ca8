package instance

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayers keeps the layers apart: the domain imports nothing of ours,
// handlers reach the store only through the service, the store knows nothing of
// WeChat or transport, and the service knows nothing of transport nor of any
// dependency's package.
func TestLayers(t *testing.T) {
	forbidden := map[string][]string{
		"booking": {"salon/"},
		"handler": {"salon/shared/mysql", "salon/shared/cls"},
		// The console reaches the store only through the service, like the JSON API.
		// The pages are given the use cases they call (console.Services), never
		// the Env that builds them.
		"handler/console": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/handler/consoleauth", "salon/shared/instance"},
		// The console's session knows keys, cookies and the service's answer
		// through its own small interface, nothing of the pages or the store.
		"handler/consoleauth": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/service", "salon/shared/instance",
			"salon/shared/handler/console", "salon/shared/config"},
		// The service speaks to its dependencies through the interfaces it
		// declares (service/store.go), in the domain's words: it imports none.
		"service": {"salon/shared/handler", "salon/shared/apigw", "salon/shared/instance", "salon/shared/mysql",
			"salon/shared/wechatpay", "salon/shared/cls", "salon/shared/wxmsg", "salon/shared/wxlogin", "salon/shared/session"},
		"mysql":     {"salon/shared/service", "salon/shared/handler", "salon/shared/wechatpay", "salon/shared/cls", "salon/shared/apigw", "salon/shared/wxmsg"},
		"wxmsg":     {"salon/shared/mysql", "salon/shared/service", "salon/shared/handler"},
		"wechatpay": {"salon/shared/mysql", "salon/shared/service", "salon/shared/handler"},
		"cls":       {"salon/shared/mysql", "salon/shared/service", "salon/shared/handler"},
		// Config reads and checks settings and passes MYSQL_DSN on as written:
		// the DSN's rules are the store's (mysql.Config), applied by instance.
		"config": {"salon/shared/mysql", "salon/shared/service", "salon/shared/handler", "salon/shared/instance",
			"salon/shared/wechatpay", "salon/shared/cls", "salon/shared/wxmsg"},
	}
	for pkg, bad := range forbidden {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no files (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, path := range importsOf(t, f) {
				for _, b := range bad {
					if path == b || (strings.HasSuffix(b, "/") && strings.HasPrefix(path, b)) {
						t.Errorf("%s imports %s: that crosses a layer", f, path)
					}
				}
			}
		}
	}
}

// TestSharedImportsNoFunction: the functions are built on shared/, so no
// package under shared/, nor its tests, imports one of functions/ (the API's
// document is package shared/openapi for that reason).
func TestSharedImportsNoFunction(t *testing.T) {
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		files++
		for _, imp := range importsOf(t, path) {
			if imp == "salon/functions" || strings.HasPrefix(imp, "salon/functions/") {
				t.Errorf("%s imports %s: shared/ is beneath the functions, never above them", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files under shared/: the walk is not reading the tree", files)
	}
}

// importsOf is the import paths of one Go file.
func importsOf(t *testing.T, file string) []string {
	t.Helper()
	af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, imp := range af.Imports {
		paths = append(paths, strings.Trim(imp.Path.Value, `"`))
	}
	return paths
}

// maxHandlerFileLines is the most lines a file of package handler or
// handler/console may have (tests aside).
const maxHandlerFileLines = 500

// TestHandlerFilesStaySmall: the handler is one file per function's routes
// and the console one per page or group of pages; a file past
// maxHandlerFileLines is two things that want a file each.
func TestHandlerFilesStaySmall(t *testing.T) {
	for _, dir := range []string{"../handler", "../handler/console", "../handler/consoleauth"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n > maxHandlerFileLines {
				t.Errorf("%s has %d lines (at most %d): split it by page, route or concern", f, n, maxHandlerFileLines)
			}
		}
	}
}

// handlerNames are what package handler may name of package instance: the Env
// a function's main passes to its router, a function and its settings, and
// the two types a getter answers.
var handlerNames = map[string]bool{"Env": true, "Function": true, "Shop": true, "PayNotifications": true}

// handlerGetters are what a router's constructor may take from its Env:
// binding it to the function, the logger, and getters of one thing each. A
// getter of everything (Service, or a bundle like the Deps handlers were once
// given) is a locator: a handler could then reach whatever it likes.
var handlerGetters = map[string]bool{
	"For": true, "Logger": true, "LoginTimeoutOrDefault": true,
	"Reservations": true, "Cancels": true, "Cashier": true, "Door": true, "Moves": true, "Timetable": true,
	"ConsoleReads": true, "Team": true, "Menu": true, "ReleaseRun": true, "Reports": true, "Reconciliation": true,
	"Sessions": true, "ConsoleKeys": true, "AdminToken": true, "Login": true, "Shop": true, "PayNotifications": true,
}

// TestHandlersAreGivenWhatTheyUse: each function's router is given the
// use cases and the few other things its handlers use, as fields set once by
// its constructor; no file of package handler (console and consoleauth
// included) names a bundle of dependencies or keeps the Env itself.
func TestHandlersAreGivenWhatTheyUse(t *testing.T) {
	constructors := 0
	err := filepath.WalkDir("../handler", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		faults, n := locatorUses(t, path, src)
		constructors += n
		for _, f := range faults {
			t.Error(f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The six routers and the release timer.
	if constructors < 7 {
		t.Fatalf("found %d functions taking an *instance.Env under handler: the check is not reading the routers", constructors)
	}
}

// TestLocatorUsesFindsALocator: the check above finds each way back to a
// locator.
func TestLocatorUsesFindsALocator(t *testing.T) {
	for name, src := range map[string]string{
		"the bundle":           `func h(d *instance.Deps) {}`,
		"an Env in a field":    `type routes struct{ env *instance.Env }`,
		"an Env in a closure":  `func R(e *instance.Env) func() { return func() { e.Reservations() } }`,
		"a getter of all":      `func R(e *instance.Env) { s := routes{svc: e.Service} }`,
		"the Env passed on":    `func R(e *instance.Env) { keep(e) }`,
		"a method taking one":  `func (s *routes) R(e *instance.Env) {}`,
		"an Env in a variable": `var env *instance.Env`,
	} {
		faults, _ := locatorUses(t, name, []byte("package handler\n\nimport \"salon/shared/instance\"\n\n"+src+"\n"))
		if len(faults) == 0 {
			t.Errorf("%s: not found in %s", name, src)
		}
	}
	good := `func R(e *instance.Env) *routes {
	e = e.For(fn)
	return &routes{run: e.ReleaseRun, shop: e.Shop, log: e.Logger()}
}`
	if faults, n := locatorUses(t, "good", []byte("package handler\n\nimport \"salon/shared/instance\"\n\n"+good+"\n")); len(faults) > 0 || n != 1 {
		t.Errorf("a router constructor taking getters: %d constructors, faults %q", n, faults)
	}
}

// locatorUses returns how one Go file of package handler reaches past what it
// is given, and how many functions in it take an *instance.Env (the
// routers' constructors, each allowed only handlerGetters of it).
func locatorUses(t *testing.T, name string, src []byte) (faults []string, constructors int) {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkg := ""
	for _, imp := range af.Imports {
		if strings.Trim(imp.Path.Value, `"`) == "salon/shared/instance" {
			pkg = "instance"
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	if pkg == "" {
		return nil, 0
	}
	fault := func(n ast.Node, format string, args ...any) {
		faults = append(faults, fset.Position(n.Pos()).String()+": "+fmt.Sprintf(format, args...))
	}
	isEnv := func(e ast.Expr) bool {
		star, ok := e.(*ast.StarExpr)
		if !ok {
			return false
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == pkg && sel.Sel.Name == "Env"
	}
	// Every name of package instance, and where an *instance.Env may stand:
	// only as a parameter of a function (not a method) of the package.
	envParams := map[*ast.Field]bool{}
	for _, decl := range af.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil {
			for _, p := range fd.Type.Params.List {
				if isEnv(p.Type) {
					envParams[p] = true
				}
			}
		}
	}
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == pkg && !handlerNames[n.Sel.Name] {
				fault(n, "names %s.%s: a handler is given what it uses, not a bundle of dependencies", pkg, n.Sel.Name)
			}
		case *ast.Field:
			if isEnv(n.Type) && !envParams[n] {
				fault(n, "keeps an *%s.Env (a field, a method's or a closure's parameter): only a router's constructor takes one", pkg)
			}
		case *ast.ValueSpec:
			if n.Type != nil && isEnv(n.Type) {
				fault(n, "keeps an *%s.Env in a variable", pkg)
			}
		}
		return true
	})
	// Inside a constructor, the Env is only bound to its function and asked
	// for getters; it is never passed on nor kept by a closure.
	for _, decl := range af.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil {
			continue
		}
		params := map[string]bool{}
		for _, p := range fd.Type.Params.List {
			if envParams[p] {
				for _, id := range p.Names {
					params[id.Name] = true
				}
			}
		}
		if len(params) == 0 {
			continue
		}
		constructors++
		var stack []ast.Node
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			defer func() { stack = append(stack, n) }()
			id, ok := n.(*ast.Ident)
			if !ok || !params[id.Name] {
				return true
			}
			for _, outer := range stack {
				if _, ok := outer.(*ast.FuncLit); ok {
					fault(id, "a closure keeps the *%s.Env %s", pkg, id.Name)
					return true
				}
			}
			switch parent := stack[len(stack)-1].(type) {
			case *ast.SelectorExpr:
				if parent.X == id && handlerGetters[parent.Sel.Name] {
					return true
				}
				if parent.X == id {
					fault(id, "takes %s.%s from the Env: not a getter of one thing", id.Name, parent.Sel.Name)
					return true
				}
			case *ast.AssignStmt:
				if slices.Contains(parent.Lhs, ast.Expr(id)) {
					return true
				}
			}
			fault(id, "uses the *%s.Env %s other than through its getters", pkg, id.Name)
			return true
		})
	}
	return faults, constructors
}
