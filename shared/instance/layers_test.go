package instance

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layers are the product's packages, lowest first, by import path without
// "salon/" (a trailing "/" names the package and every one under it). A
// package imports packages of its own layer or of lower ones only: an import
// that runs back up, to a higher layer, crosses the layers, and so does a
// package that is on none. The forbidden lists in TestLayers keep apart those
// of one layer, or of two, that must not meet.
var layers = [][]string{
	// The domain, and what needs nothing of ours but it.
	{"shared/booking", "shared/wechatbill", "shared/logctx", "shared/cloudapi"},
	// The rules (service), and beside them the doors to the outside world
	// that the rules reach through interfaces of their own.
	{"shared/service", "shared/mysql/", "shared/wechatpay/", "shared/cls/", "shared/wxlogin/", "shared/wxmsg",
		"shared/session", "shared/config", "shared/apigw", "shared/openapi"},
	// The door for requests: the routers, the console's pages and session.
	{"shared/handler/"},
	// The composition root: builds the rest and gives each router what it uses.
	{"shared/instance"},
	// The functions: each asks instance for its router.
	{"functions/"},
}

// layerOf is the index in layers of the package at path (without
// "salon/"), -1 when it is on none.
func layerOf(path string) int {
	for i, l := range layers {
		for _, p := range l {
			if path == p || (strings.HasSuffix(p, "/") && (path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, p))) {
				return i
			}
		}
	}
	return -1
}

// TestLayers keeps the layers apart: no import runs back up (layers), the
// domain imports nothing of ours, handlers reach the store only through the
// service and are built by instance, never the reverse, the store knows
// nothing of WeChat or transport, and the service knows nothing of transport
// nor of any dependency's package.
func TestLayers(t *testing.T) {
	up, imports := 0, 0
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "testdata" || (rel != "." && rel != "shared" && rel != "functions" &&
				!strings.HasPrefix(rel, "shared/") && !strings.HasPrefix(rel, "functions/")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("package %s is on no layer: place it in layers", pkg)
			return nil
		}
		for _, imp := range importsOf(t, path) {
			target, ours := strings.CutPrefix(imp, "salon/")
			if !ours {
				continue
			}
			imports++
			switch to := layerOf(target); {
			case to < 0:
				t.Errorf("%s imports %s, which is on no layer", rel, imp)
			case to > from:
				up++
				t.Errorf("%s imports %s: that runs back up, from layer %d to layer %d", rel, imp, from, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if imports < 100 {
		t.Fatalf("read %d imports of our packages: the walk is not reading the tree", imports)
	}
	if up > 0 {
		t.Errorf("%d imports run back up; want 0", up)
	}

	forbidden := map[string][]string{
		"booking": {"salon/"},
		// The routers are given what they use by instance, which builds them:
		// the handler never reaches back for it.
		"handler": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/instance"},
		// The console reaches the store only through the service, like the JSON API.
		// The pages are given the use cases they call (console.Services), never
		// the Env that builds them.
		"handler/console": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/handler/consoleauth", "salon/shared/instance"},
		// The console's session knows keys, cookies and the service's answer
		// through its own small interface, nothing of the pages or the store.
		"handler/consoleauth": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/service", "salon/shared/instance",
			"salon/shared/handler/console", "salon/shared/config"},
		// The service speaks to its dependencies through the interfaces it
		// declares (each use case's store in its file, Payments, ...), in the
		// domain's words: it imports none.
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

// TestLayerOf: the layer map places a package, the packages under a
// trailing "/", and nothing else.
func TestLayerOf(t *testing.T) {
	for path, want := range map[string]int{
		"shared/booking": 0, "shared/mysql": 1, "shared/mysql/mysqltest": 1, "shared/handler": 2,
		"shared/handler/consoleauth": 2, "shared/instance": 3, "functions/reserve": 4,
		"shared/mysqlx": -1, "shared/instance/x": -1, "infra/localgw": -1,
	} {
		if got := layerOf(path); got != want {
			t.Errorf("layerOf(%s) = %d, want %d", path, got, want)
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

// bundles are what package handler may not name of package service: the
// bundle of every use case, its builder and the stores under it. A router
// given one could reach whatever it likes (a locator); each is given the use
// cases it calls, one getter each.
var bundles = map[string]bool{"Service": true, "New": true, "Stores": true}

// TestHandlersAreGivenWhatTheyUse: each function's router is given the use
// cases and the few other things its handlers use, as arguments of its
// constructor, by instance (routers.go): each argument a getter of one thing
// of the function's Env (or its logger), never the Env itself nor the
// bundle of all use cases; and no file of package handler (console and
// consoleauth included) names the bundle.
func TestHandlersAreGivenWhatTheyUse(t *testing.T) {
	err := filepath.WalkDir("../handler", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range bundleNames(t, path, src) {
			t.Error(f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("routers.go")
	if err != nil {
		t.Fatal(err)
	}
	faults, constructors := routerArguments(t, "routers.go", src)
	for _, f := range faults {
		t.Error(f)
	}
	// The six routers and the release timer.
	if constructors < 7 {
		t.Fatalf("found %d calls of handler's constructors in routers.go: the check is not reading the routers", constructors)
	}
}

// TestTheChecksFindALocator: the checks above find each way back to a
// locator.
func TestTheChecksFindALocator(t *testing.T) {
	for name, src := range map[string]string{
		"the bundle as a parameter": `func R(s *service.Service) {}`,
		"the bundle in a field":     `type routes struct{ all Lazy[*service.Service] }`,
		"the stores":                `func R(s service.Stores) {}`,
		"the builder":               `var all = service.New`,
	} {
		if faults := bundleNames(t, name, []byte("package handler\n\nimport \"salon/shared/service\"\n\n"+src+"\n")); len(faults) == 0 {
			t.Errorf("%s: not found in %s", name, src)
		}
	}
	for name, src := range map[string]string{
		"the Env":                  `handler.SlotsRouter(e)`,
		"a getter of all":          `handler.SlotsRouter(e.Logger(), e.Service, e.Menu, e.Shop)`,
		"a getter called":          `handler.ReserveRouter(e.Logger(), e.Sessions, get(e))`,
		"the Env in a struct":      `handler.AdminRouter(e.Logger(), handler.AdminUses{Token: e.AdminToken, Env: e})`,
		"a getter of all, by name": `handler.AdminRouter(e.Logger(), handler.AdminUses{Team: e.Service})`,
	} {
		code := "package instance\n\nfunc R(e *Env) { " + src + " }\n"
		if faults, n := routerArguments(t, name, []byte(code)); len(faults) == 0 || n != 1 {
			t.Errorf("%s: %d calls, faults %q in %s", name, n, faults, src)
		}
	}
	good := "package instance\n\nfunc R(e *Env) { handler.AdminRouter(e.Logger(), handler.AdminUses{Token: e.AdminToken, Team: e.Team}) }\n"
	if faults, n := routerArguments(t, "good", []byte(good)); len(faults) > 0 || n != 1 {
		t.Errorf("a router given getters: %d calls, faults %q", n, faults)
	}
}

// bundleNames returns where one Go file of package handler names one of
// bundles of package service.
func bundleNames(t *testing.T, name string, src []byte) (faults []string) {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkg := ""
	for _, imp := range af.Imports {
		if strings.Trim(imp.Path.Value, `"`) == "salon/shared/service" {
			pkg = "service"
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	if pkg == "" {
		return nil
	}
	ast.Inspect(af, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg && bundles[sel.Sel.Name] {
				faults = append(faults, fmt.Sprintf("%s: names %s.%s: a handler is given the use cases it calls, not the bundle of all",
					fset.Position(sel.Pos()), pkg, sel.Sel.Name))
			}
		}
		return true
	})
	return faults
}

// routerArguments returns the arguments of handler's constructors, called in
// one Go file of package instance, that are not a getter of one thing of the
// Env (e.Reservations, ...) or its logger (e.Logger()), and how many such
// calls the file makes. A struct of handler's (handler.AdminUses) is held to
// the same rule field by field.
func routerArguments(t *testing.T, name string, src []byte) (faults []string, calls int) {
	t.Helper()
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	isHandlers := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == "handler"
	}
	var check func(arg ast.Expr)
	check = func(arg ast.Expr) {
		switch a := arg.(type) {
		case *ast.CompositeLit:
			if isHandlers(a.Type) {
				for _, el := range a.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						check(kv.Value)
					} else {
						check(el)
					}
				}
				return
			}
		case *ast.CallExpr:
			if sel, ok := a.Fun.(*ast.SelectorExpr); ok && len(a.Args) == 0 && sel.Sel.Name == "Logger" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "e" {
					return
				}
			}
		case *ast.SelectorExpr:
			if id, ok := a.X.(*ast.Ident); ok && id.Name == "e" && a.Sel.Name != "Service" {
				return
			}
		}
		faults = append(faults, fmt.Sprintf("%s: a router is given something other than a getter of one thing of its Env",
			fset.Position(arg.Pos())))
	}
	ast.Inspect(af, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !isHandlers(call.Fun) {
			return true
		}
		calls++
		for _, arg := range call.Args {
			check(arg)
		}
		return true
	})
	return faults, calls
}
