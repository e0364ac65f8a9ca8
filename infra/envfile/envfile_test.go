package envfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteIsSourceableAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.env")
	env := map[string]string{"B_PEM": "-----BEGIN X-----\nabc\n-----END X-----\n", "A": "it's"}
	if err := Write(path, "test", env); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, err %v", st.Mode(), err)
	}
	out, err := exec.Command("bash", "-c", `set -a; . "$0"; printf '%s|%s' "$A" "$B_PEM"`, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `it's|-----BEGIN X-----\nabc\n-----END X-----` {
		t.Fatalf("sourced %q", got)
	}
	body, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(body), "# written by test") || strings.Index(string(body), "A=") > strings.Index(string(body), "B_PEM=") {
		t.Fatalf("file %q", body)
	}
}
