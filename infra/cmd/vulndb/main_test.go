package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// osvEntry is a minimal OSV entry of the Go vulnerability database.
func osvEntry(id string, modules ...string) string {
	var affected []string
	for _, m := range modules {
		affected = append(affected, `{"package":{"name":"`+m+`","ecosystem":"Go"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.3"}]}]}`)
	}
	return `{"schema_version":"1.3.1","id":"` + id + `","modified":"0001-01-01T00:00:00Z","details":"x","affected":[` + strings.Join(affected, ",") + `]}`
}

func writeEntries(t *testing.T, entries map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range entries {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildWritesGovulncheckLayout: every entry byte for byte under ID/, each
// module with its entries (once per entry, sorted) in index/modules.json, and
// the given time in index/db.json.
func TestBuildWritesGovulncheckLayout(t *testing.T) {
	e1 := osvEntry("GO-2026-0002", "stdlib", "toolchain")
	e2 := osvEntry("GO-2026-0001", "stdlib", "stdlib")
	e3 := osvEntry("GO-2025-0009", "example.com/m")
	src := writeEntries(t, map[string]string{"GO-2026-0002.json": e1, "GO-2026-0001.json": e2, "GO-2025-0009.json": e3, "README.md": "not an entry"})
	out := filepath.Join(t.TempDir(), "db")
	at := time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)
	n, err := build(src, out, at)
	if err != nil || n != 3 {
		t.Fatalf("build: %d entries, %v", n, err)
	}
	for id, want := range map[string]string{"GO-2026-0002": e1, "GO-2026-0001": e2, "GO-2025-0009": e3} {
		got, err := os.ReadFile(filepath.Join(out, "ID", id+".json"))
		if err != nil || string(got) != want {
			t.Errorf("ID/%s.json: %q %v", id, got, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "index", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	var modules []moduleMeta
	if err := json.Unmarshal(raw, &modules); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range modules {
		var ids []string
		for _, v := range m.Vulns {
			ids = append(ids, v.ID)
		}
		got = append(got, m.Path+":"+strings.Join(ids, ","))
	}
	if want := "example.com/m:GO-2025-0009 stdlib:GO-2026-0001,GO-2026-0002 toolchain:GO-2026-0002"; strings.Join(got, " ") != want {
		t.Errorf("modules index: %s, want %s", strings.Join(got, " "), want)
	}
	raw, err = os.ReadFile(filepath.Join(out, "index", "db.json"))
	if err != nil || string(raw) != `{"modified":"2026-11-05T23:49:57Z"}` {
		t.Errorf("db.json: %s %v", raw, err)
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the partial directory is left: %v", err)
	}
}

// TestBuildRefuses: a directory that is not the database's leaves no
// database behind: no entries, an entry whose file is not named after its
// id, no standard library entry, an existing output.
func TestBuildRefuses(t *testing.T) {
	at := time.Now()
	cases := map[string]map[string]string{
		"no entries":     {},
		"misnamed entry": {"GO-2026-0001.json": osvEntry("GO-2026-0002", "stdlib")},
		"no stdlib":      {"GO-2026-0001.json": osvEntry("GO-2026-0001", "example.com/m")},
		"not json":       {"GO-2026-0001.json": "{"},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "db")
			if _, err := build(writeEntries(t, entries), out, at); err == nil {
				t.Fatal("built")
			}
			for _, dir := range []string{out, out + ".partial"} {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("%s was left: %v", dir, err)
				}
			}
		})
	}
	existing := t.TempDir()
	if _, err := build(writeEntries(t, map[string]string{"GO-2026-0001.json": osvEntry("GO-2026-0001", "stdlib")}), existing, at); err == nil {
		t.Error("built over an existing directory")
	}
}
