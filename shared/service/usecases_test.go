package service

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUseCaseInterfacesListWhatTheyCall: each use case's store interface,
// declared in its file, names exactly the store methods that file calls (as
// s.store.X): a method it no longer calls is a dependency it does not have, and
// one it calls is there because the compiler asks for it.
func TestUseCaseInterfacesListWhatTheyCall(t *testing.T) {
	iface := regexp.MustCompile(`(?s)\ntype (\w+Store) interface \{\n(.*?)\n\}`)
	method := regexp.MustCompile(`(?m)^\t([A-Z]\w*)\(`)
	call := regexp.MustCompile(`\bs\.store\.([A-Z]\w*)\b`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	var ifaces []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		m := iface.FindStringSubmatch(src)
		if m == nil {
			if call.MatchString(src) {
				t.Errorf("%s calls the store but declares no store interface of its own", f)
			}
			continue
		}
		seen++
		ifaces = append(ifaces, m[1])
		var declared, called []string
		for _, mm := range method.FindAllStringSubmatch(m[2], -1) {
			declared = append(declared, mm[1])
		}
		for _, mm := range call.FindAllStringSubmatch(src, -1) {
			if !slices.Contains(called, mm[1]) {
				called = append(called, mm[1])
			}
		}
		for _, d := range declared {
			if !slices.Contains(called, d) {
				t.Errorf("%s: %s lists %s, which the file never calls", f, m[1], d)
			}
		}
		for _, c := range called {
			if !slices.Contains(declared, c) {
				t.Errorf("%s: calls s.store.%s, not in %s", f, c, m[1])
			}
		}
	}
	if seen < 10 {
		t.Fatalf("found %d use-case store interfaces, want 10: the test is not reading them", seen)
	}
	// Each is the store of one use case in Stores, and Stores holds nothing
	// else but Basics: no interface gathers the whole store.
	stores := reflect.TypeFor[Stores]()
	var fields []string
	for i := range stores.NumField() {
		if name := stores.Field(i).Type.Name(); name != "Basics" {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	slices.Sort(ifaces)
	if !slices.Equal(fields, ifaces) {
		t.Errorf("Stores holds %v; the use cases declare %v", fields, ifaces)
	}
}
