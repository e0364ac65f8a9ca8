// Package envfile writes the shell-sourceable environment files the local
// simulators hand to scripts/dev.sh, so the functions get the keys a simulator
// generated at start-up.
package envfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Write writes env as KEY='VALUE' lines, sorted, to path ("-" for stdout, "" for
// nowhere). Newlines in values (PEM keys) become literal \n, which the functions
// read back; the file is private (0600) and replaced atomically, so a reader never
// sees half of it.
func Write(path, writer string, env map[string]string) error {
	if path == "" {
		return nil
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "# written by %s; valid while that process runs\n", writer)
	for _, k := range keys {
		v := strings.ReplaceAll(strings.TrimRight(env[k], "\n"), "\n", `\n`)
		fmt.Fprintf(&b, "%s='%s'\n", k, strings.ReplaceAll(v, `'`, `'\''`))
	}
	if path == "-" {
		_, err := os.Stdout.WriteString(b.String())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+writer+"-env-*")
	if err != nil {
		return fmt.Errorf("write env: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("write env: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write env: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write env: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write env: %w", err)
	}
	return nil
}
