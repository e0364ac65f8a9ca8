package instance

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
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
		"handler/console": {"salon/shared/mysql", "salon/shared/cls", "salon/shared/handler/consoleauth"},
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
