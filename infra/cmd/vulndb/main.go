// Command vulndb builds a Go vulnerability database that govulncheck reads
// offline (-db file:///dir), from the reports of the golang.org/x/vulndb module
// as the Go module proxy serves it, so the check needs no vuln.go.dev:
//
//	go run ./infra/cmd/vulndb -module <dir of golang.org/x/vulndb@version> -out <dir>
//
// The module holds every report as an OSV entry (data/osv/GO-YYYY-NNNN.json).
// The database is those entries, byte for byte, under ID/, and the two index
// files govulncheck reads first: index/db.json (when the database was last
// modified) and index/modules.json (which entries name each module). Its own
// tools (x/vulndb/cmd/indexdb) need the whole x/vulndb module and its cloud
// dependencies; this needs nothing but the standard library.
//
// The entries in the module carry no modification time (the real database
// takes it from the git history at deploy time), so index/db.json says the
// time of the module's version (-modified, from the proxy's .info file), and
// each entry in index/modules.json says the entry's own. The index names no
// "fixed" version for an entry: govulncheck then reads every entry of a module
// it uses and decides by the entry's own ranges, a few milliseconds slower
// than skipping the ones fixed before the version in use, and never wrong.
//
// The database is written beside -out and renamed into place at the end, so a
// run that stops half way leaves no database that looks complete.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

func main() {
	module := flag.String("module", "", "the directory of the golang.org/x/vulndb module (go mod download -json gives it as Dir)")
	out := flag.String("out", "", "the directory to write the database to (must not exist)")
	modified := flag.String("modified", "", "the database's modification time, RFC 3339 (the module version's Time)")
	flag.Parse()
	if *module == "" || *out == "" || *modified == "" {
		fmt.Fprintln(os.Stderr, "usage: vulndb -module DIR -out DIR -modified RFC3339")
		os.Exit(2)
	}
	at, err := time.Parse(time.RFC3339, *modified)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulndb: -modified:", err)
		os.Exit(2)
	}
	n, err := build(filepath.Join(*module, "data", "osv"), *out, at)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
	fmt.Printf("vulndb: %d entries written to %s\n", n, *out)
}

// entry is what the index needs of an OSV entry.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// moduleVuln and moduleMeta are index/modules.json's form
// (https://go.dev/security/vuln/database#api).
type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

// build writes the database of the OSV entries in osvDir to out and answers
// how many entries it holds.
func build(osvDir, out string, modified time.Time) (_ int, err error) {
	if _, err := os.Stat(out); err == nil {
		return 0, fmt.Errorf("%s exists", out)
	}
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("no OSV entries in %s", osvDir)
	}
	tmp := out + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	for _, d := range []string{"ID", "index"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			return 0, err
		}
	}
	modules := map[string]*moduleMeta{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return 0, fmt.Errorf("%s: %v", f, err)
		}
		// govulncheck finds an entry by its id: the file must be named after it.
		if e.ID == "" || filepath.Base(f) != e.ID+".json" {
			return 0, fmt.Errorf("%s: entry id %q does not match the file name", f, e.ID)
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), raw, 0o644); err != nil {
			return 0, err
		}
		seen := map[string]bool{}
		for _, a := range e.Affected {
			path := a.Package.Name
			if path == "" {
				return 0, fmt.Errorf("%s: an affected package without a name", f)
			}
			if seen[path] {
				continue
			}
			seen[path] = true
			m := modules[path]
			if m == nil {
				m = &moduleMeta{Path: path}
				modules[path] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
	}
	if modules["stdlib"] == nil {
		return 0, errors.New("no entry names the standard library (stdlib): not the Go vulnerability database")
	}
	index := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		sort.Slice(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		index = append(index, m)
	}
	sort.Slice(index, func(i, j int) bool { return index[i].Path < index[j].Path })
	if err := writeJSON(filepath.Join(tmp, "index", "modules.json"), index); err != nil {
		return 0, err
	}
	if err := writeJSON(filepath.Join(tmp, "index", "db.json"), struct {
		Modified time.Time `json:"modified"`
	}{modified.UTC()}); err != nil {
		return 0, err
	}
	return len(files), os.Rename(tmp, out)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
