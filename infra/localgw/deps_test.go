package localgw

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// benchmarkOnly are the module paths only the benchmark (the infra/bench module)
// may use: its rejected designs run on Redis, NATS and etcd, and it draws charts.
// A function that reached one of them would ship it to SCF and make the root
// module require it again.
var benchmarkOnly = []string{
	"github.com/nats-io/",
	"github.com/redis/",
	"go.etcd.io/",
	"go.uber.org/zap",
	"gonum.org/",
}

// TestFunctionsDoNotDependOnBenchmarkModules asks the go tool for every package
// each function binary is built from, as package.sh builds them.
func TestFunctionsDoNotDependOnBenchmarkModules(t *testing.T) {
	// Only the main packages are functions (functions/openapi holds the API document's TypeScript tools).
	out := goTool(t, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`, "./functions/...")
	functions := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fn, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		functions++
		if !strings.Contains(" "+deps+" ", " salon/shared/") {
			t.Errorf("%s: no salon/shared package among its dependencies; is go list reading the right tree?", fn)
		}
		for dep := range strings.FieldsSeq(deps) {
			if benchmarkModule(dep) {
				t.Errorf("%s depends on %s, which only the benchmark may use (infra/bench is its own module)", fn, dep)
			}
		}
	}
	if functions == 0 {
		t.Fatal("go list found no function under ./functions")
	}
}

// TestProductModuleDoesNotRequireBenchmarkModules reads the root go.mod: what the
// benchmark needs belongs in infra/bench/go.mod.
func TestProductModuleDoesNotRequireBenchmarkModules(t *testing.T) {
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(goTool(t, "mod", "edit", "-json"), &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "salon" {
		t.Fatalf("read the go.mod of %q, want the product module salon", mod.Module.Path)
	}
	for _, r := range mod.Require {
		if benchmarkModule(r.Path) {
			t.Errorf("go.mod requires %s, which only the benchmark may use: require it in infra/bench/go.mod", r.Path)
		}
	}
}

func benchmarkModule(path string) bool {
	for _, prefix := range benchmarkOnly {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// goTool runs the go command at the repository root (go test puts the go tool
// that runs it first on PATH) and returns its standard output.
func goTool(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return out
}
