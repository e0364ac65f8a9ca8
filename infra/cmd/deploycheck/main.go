// Command deploycheck is the deploy preflight: scripts/deploy.sh runs it before
// anything is built or sent to Tencent Cloud, and deploys only when it exits 0.
//
//	go run ./infra/cmd/deploycheck [-serverless serverless.yml]
//
// It refuses, naming each one, every ${env:NAME} serverless.yml reads that is
// unset in this shell: the Tencent deploy turns an unset variable into the
// string "undefined" (a function named salon-undefined-..., LOCK_TTL and
// SHOP_TZ failing, SHOP_NAME "undefined"), never into an empty value. Then it
// gives each function the environment serverless.yml would give it, with the
// variables substituted, and runs the product's own checks on it
// (instance.CheckSettings with the function's settings from handler.Functions):
// a setting the product would refuse stops the deploy here, not after it.
// Values that the deploy itself uses (STAGE, SCF_ROLE, VPC_ID, SUBNET_ID) must
// not be empty either. No value is ever printed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"salon/infra/localgw"
	"salon/shared/handler"
	"salon/shared/instance"
)

func main() {
	os.Exit(run(os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

// envLimit is the size SCF is reported to allow a function's environment in
// total (not verified here); over it is a warning, not a refusal.
const envLimit = 4096

func run(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("deploycheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("serverless", "serverless.yml", "the multi-scf file to deploy")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	problems, err := check(*path, lookup, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "deploycheck: %v\n", err)
		return 2
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "deploycheck: %s\n", p)
		}
		fmt.Fprintf(stderr, "deploycheck: refused: %d problem(s); nothing was deployed\n", len(problems))
		return 1
	}
	fmt.Fprintln(stdout, "deploycheck: every setting is set and every function accepts its settings")
	return 0
}

// check returns what stops the deploy, one line each; err is for a file it
// cannot read.
func check(path string, lookup func(string) (string, bool), stdout io.Writer) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	refs, err := envRefs(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	spec, err := localgw.LoadServerless(path)
	if err != nil {
		return nil, err
	}

	var unset []string
	for _, r := range refs {
		if _, ok := lookup(r.name); !ok {
			unset = append(unset, r.name)
		}
	}
	if len(unset) > 0 {
		// Nothing more is checked: an unset name would be "undefined" there.
		return []string{fmt.Sprintf("unset: %s (the deploy would write each as the string \"undefined\"; export each, empty where the product's default will do: export NAME=)",
			strings.Join(unset, ", "))}, nil
	}

	var problems []string
	for _, r := range refs {
		if v, _ := lookup(r.name); r.deploy && strings.TrimSpace(v) == "" {
			problems = append(problems, fmt.Sprintf("%s is empty: the deploy itself needs it (%s)", r.name, r.where))
		}
	}
	for _, fn := range spec.Functions {
		wf, ok := productFunction(fn.Name)
		if !ok {
			problems = append(problems, fmt.Sprintf("function %s: serverless.yml deploys it, but handler.Functions does not name its settings", fn.Name))
			continue
		}
		env := map[string]string{}
		size := 0
		for k, v := range fn.Env {
			env[k], _ = localgw.ExpandEnv(v, lookup)
			size += len(k) + 1 + len(env[k])
		}
		// Only what serverless.yml gives the function: the deploying shell's
		// SALON_DEV or TENCENTCLOUD_* never reach a deployed function.
		getenv := func(name string) string { return env[name] }
		if err := instance.CheckSettings(wf, getenv); err != nil {
			problems = append(problems, fmt.Sprintf("function %s: %s", fn.Name, oneLine(err)))
			continue
		}
		if size > envLimit {
			fmt.Fprintf(stdout, "deploycheck: warning: function %s: its environment is %d bytes; SCF is reported to allow about %d\n", fn.Name, size, envLimit)
		}
		fmt.Fprintf(stdout, "deploycheck: function %s: settings accepted\n", fn.Name)
	}
	return problems, nil
}

func productFunction(name string) (instance.Function, bool) {
	i := slices.IndexFunc(handler.Functions, func(f instance.Function) bool { return f.Name == name })
	if i < 0 {
		return instance.Function{}, false
	}
	return handler.Functions[i], true
}

func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// envRef is one variable serverless.yml reads from the deploying shell.
type envRef struct {
	name   string
	deploy bool   // used outside a function's environments: by the deploy itself
	where  string // the first key path that uses it
}

// envRefs finds every ${env:NAME} in the file's values (not its comments), in
// the order of first use.
func envRefs(b []byte) ([]envRef, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	byName := map[string]*envRef{}
	var order []string
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], append(slices.Clone(path), n.Content[i].Value))
			}
		case yaml.ScalarNode:
			inEnv := slices.Contains(path, "environments") || slices.Contains(path, "environment")
			for _, m := range envRefRE.FindAllStringSubmatch(n.Value, -1) {
				r := byName[m[1]]
				if r == nil {
					r = &envRef{name: m[1], where: strings.Join(path, ".")}
					byName[m[1]] = r
					order = append(order, m[1])
				}
				r.deploy = r.deploy || !inEnv
			}
		}
	}
	walk(&doc, nil)
	if len(order) == 0 {
		return nil, errors.New("no ${env:...} found")
	}
	out := make([]envRef, len(order))
	for i, n := range order {
		out[i] = *byName[n]
	}
	return out, nil
}
