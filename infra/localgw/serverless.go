package localgw

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Spec is what the local platform needs from serverless.yml: the functions, the
// API Gateway routes and the timers. The deployed configuration and the local one
// are the same file, so they cannot drift apart.
type Spec struct {
	Path      string // the file it was read from
	App       string
	Stage     string
	Name      string
	Component string
	Region    string
	Src       string // inputs.src resolved against the file's directory
	Functions []Function
	Routes    []Route
	Timers    []TimerTrigger
}

// Function is one entry of inputs.functions, with the top-level defaults applied
// the way multi-scf applies them (a function's field replaces the top-level one).
type Function struct {
	Name     string // the key under inputs.functions
	Src      string // as written, relative to Spec.Src
	Dir      string // Src resolved against Spec.Src
	Handler  string
	Runtime  string
	Timeout  time.Duration
	MemoryMB int
	// Env holds the values as written: "${env:NAME}" is left for the caller to
	// resolve (see ExpandEnv).
	Env map[string]string
}

// Route is one API of the apigw trigger.
type Route struct {
	Method         string // upper case; ANY matches every method
	Path           string // the template, e.g. /bookings/{id}/pay
	Function       string
	ServiceTimeout time.Duration
	Params         []Param
}

// Param is a declared front-end parameter of an API.
type Param struct {
	Name     string
	Position string // PATH, QUERY or HEADER
	Required bool
	Type     string
	Default  string
}

// TimerTrigger is one timer trigger.
type TimerTrigger struct {
	Name     string // the trigger name; the event's TriggerName
	Function string
	Cron     string // SCF's 7-field cron: second minute hour day month week year
	Enable   bool
	Argument string // the event's Message
}

// Function returns the named function.
func (s *Spec) Function(name string) (Function, bool) {
	for _, f := range s.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// The YAML as multi-scf reads it (serverless-components/tencent-multi-scf 02cf563,
// src/formatter.ts).
type rawFile struct {
	App       string    `yaml:"app"`
	Stage     string    `yaml:"stage"`
	Component string    `yaml:"component"`
	Name      string    `yaml:"name"`
	Inputs    rawInputs `yaml:"inputs"`
}

type rawFunctionFields struct {
	Handler      string    `yaml:"handler"`
	Runtime      string    `yaml:"runtime"`
	MemorySize   *int      `yaml:"memorySize"`
	Timeout      *int      `yaml:"timeout"`
	Environments *[]rawKV  `yaml:"environments"`
	Environment  yaml.Node `yaml:"environment"`
}

type rawInputs struct {
	rawFunctionFields `yaml:",inline"`
	Src               rawSrc                 `yaml:"src"`
	Region            string                 `yaml:"region"`
	Functions         map[string]rawFunction `yaml:"functions"`
	Triggers          []rawTrigger           `yaml:"triggers"`
}

type rawFunction struct {
	rawFunctionFields `yaml:",inline"`
	Src               string `yaml:"src"`
}

type rawKV struct {
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
}

// rawSrc is either a path or {src, exclude}.
type rawSrc struct {
	Src string
}

func (s *rawSrc) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&s.Src)
	}
	var v struct {
		Src string `yaml:"src"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	s.Src = v.Src
	return nil
}

type rawTrigger struct {
	Type       string    `yaml:"type"`
	Function   string    `yaml:"function"`
	Parameters yaml.Node `yaml:"parameters"`
}

type rawAPIGW struct {
	Name        string   `yaml:"name"`
	ServiceName string   `yaml:"serviceName"`
	APIs        []rawAPI `yaml:"apis"`
}

type rawAPI struct {
	Path           string     `yaml:"path"`
	Method         string     `yaml:"method"`
	Function       string     `yaml:"function"`
	ServiceTimeout *int       `yaml:"serviceTimeout"`
	Param          []rawParam `yaml:"param"`
}

type rawParam struct {
	Name         string    `yaml:"name"`
	Position     string    `yaml:"position"`
	Required     bool      `yaml:"required"`
	Type         string    `yaml:"type"`
	DefaultValue yaml.Node `yaml:"defaultValue"`
}

type rawTimer struct {
	Name           string `yaml:"name"`
	CronExpression string `yaml:"cronExpression"`
	Enable         bool   `yaml:"enable"`
	Argument       string `yaml:"argument"`
}

// Platform defaults (docs/scf-platform.md §6).
const (
	defaultTimeoutSeconds        = 3
	defaultMemoryMB              = 128
	defaultServiceTimeoutSeconds = 15
)

var (
	methods     = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true, "ANY": true}
	pathParamRE = regexp.MustCompile(`^\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
)

// LoadServerless reads a multi-scf serverless.yml. Besides parsing it, it checks
// what would otherwise only fail (or silently misbehave) at deploy time: every
// trigger names a defined function, every path parameter is declared, no route is
// defined twice, and an API's serviceTimeout is below its function's timeout (else
// a function timeout reaches the client as HTTP 200).
func LoadServerless(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw rawFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	spec, errs := build(path, &raw)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", path, errors.Join(errs...))
	}
	return spec, nil
}

func build(path string, raw *rawFile) (*Spec, []error) {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if raw.Component != "multi-scf" {
		fail("component is %q; the local platform reads multi-scf files", raw.Component)
	}
	in := &raw.Inputs
	if in.Src.Src == "" {
		fail("inputs.src is missing")
	}
	if in.Environment.Kind != 0 {
		// formatFaasInputs overwrites environment with the (possibly empty) list.
		fail("inputs.environment is ignored by multi-scf; use environments: [{key, value}]")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		fail("%v", err)
	}
	spec := &Spec{
		Path:      abs,
		App:       raw.App,
		Stage:     raw.Stage,
		Name:      raw.Name,
		Component: raw.Component,
		Region:    in.Region,
		Src:       filepath.Join(filepath.Dir(abs), in.Src.Src),
	}

	if len(in.Functions) == 0 {
		fail("inputs.functions is empty")
	}
	names := make([]string, 0, len(in.Functions))
	for name := range in.Functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rf := in.Functions[name]
		if rf.Environment.Kind != 0 {
			fail("function %s: environment is ignored by multi-scf; use environments: [{key, value}]", name)
		}
		f := Function{
			Name:     name,
			Src:      rf.Src,
			Handler:  pick(rf.Handler, in.Handler),
			Runtime:  pick(rf.Runtime, in.Runtime),
			Timeout:  time.Duration(pickInt(rf.Timeout, in.Timeout, defaultTimeoutSeconds)) * time.Second,
			MemoryMB: pickInt(rf.MemorySize, in.MemorySize, defaultMemoryMB),
			Env:      map[string]string{},
		}
		if f.Src == "" {
			fail("function %s: src is missing (a directory under inputs.src holding the binary)", name)
		} else {
			f.Dir = filepath.Join(spec.Src, f.Src)
		}
		if f.Handler == "" {
			fail("function %s: handler is missing", name)
		}
		if f.Timeout < time.Second || f.Timeout > 900*time.Second {
			fail("function %s: timeout %s outside 1-900 s", name, f.Timeout)
		}
		envs := in.Environments
		if rf.Environments != nil { // replaces the top-level list; no merge
			envs = rf.Environments
		}
		if envs != nil {
			for _, kv := range *envs {
				if kv.Key == "" {
					fail("function %s: an environments entry has no key", name)
					continue
				}
				f.Env[kv.Key] = kv.Value
			}
		}
		spec.Functions = append(spec.Functions, f)
	}
	defined := func(fn string) bool { _, ok := in.Functions[fn]; return ok }

	seen := map[string]bool{}
	for i, t := range in.Triggers {
		switch t.Type {
		case "apigw":
			var p rawAPIGW
			if err := t.Parameters.Decode(&p); err != nil {
				fail("triggers[%d] (apigw): %v", i, err)
				continue
			}
			if p.Name == "" {
				fail("triggers[%d] (apigw): parameters.name is missing (multi-scf takes the service name from it)", i)
			}
			for j, a := range p.APIs {
				r := Route{Method: strings.ToUpper(a.Method), Path: a.Path, Function: a.Function}
				where := fmt.Sprintf("triggers[%d].apis[%d] (%s %s)", i, j, a.Method, a.Path)
				if r.Function == "" {
					r.Function = t.Function
				}
				if !methods[r.Method] {
					fail("%s: method %q", where, a.Method)
				}
				if !strings.HasPrefix(r.Path, "/") {
					fail("%s: path must start with /", where)
				}
				if !defined(r.Function) {
					fail("%s: function %q is not defined in inputs.functions", where, r.Function)
				}
				key := r.Method + " " + r.Path
				if seen[key] {
					fail("%s: defined twice", where)
				}
				seen[key] = true
				r.ServiceTimeout = time.Duration(pickInt(a.ServiceTimeout, nil, defaultServiceTimeoutSeconds)) * time.Second
				declared := map[string]bool{}
				for _, rp := range a.Param {
					prm := Param{Name: rp.Name, Position: strings.ToUpper(rp.Position), Required: rp.Required, Type: rp.Type}
					if rp.DefaultValue.Kind == yaml.ScalarNode {
						prm.Default = rp.DefaultValue.Value
					}
					switch prm.Position {
					case "PATH", "QUERY", "HEADER":
					default:
						fail("%s: param %s: position %q (PATH, QUERY or HEADER)", where, rp.Name, rp.Position)
					}
					if prm.Position == "PATH" {
						declared[prm.Name] = true
					}
					r.Params = append(r.Params, prm)
				}
				for _, seg := range strings.Split(r.Path, "/") {
					if m := pathParamRE.FindStringSubmatch(seg); m != nil && !declared[m[1]] {
						fail("%s: path parameter {%s} is not declared in param (position PATH)", where, m[1])
					} else if m == nil && strings.ContainsAny(seg, "{}") {
						fail("%s: segment %q: a path parameter must be a whole segment", where, seg)
					}
				}
				if f, ok := spec.Function(r.Function); ok && r.ServiceTimeout >= f.Timeout {
					fail("%s: serviceTimeout %s is not below the timeout %s of %s: a function timeout would reach the client as HTTP 200",
						where, r.ServiceTimeout, f.Timeout, f.Name)
				}
				spec.Routes = append(spec.Routes, r)
			}
		case "timer":
			var p rawTimer
			if err := t.Parameters.Decode(&p); err != nil {
				fail("triggers[%d] (timer): %v", i, err)
				continue
			}
			tt := TimerTrigger{Name: p.Name, Function: t.Function, Cron: p.CronExpression, Enable: p.Enable, Argument: p.Argument}
			where := fmt.Sprintf("triggers[%d] (timer %s)", i, p.Name)
			if !defined(tt.Function) {
				fail("%s: function %q is not defined in inputs.functions", where, tt.Function)
			}
			if tt.Name == "" {
				fail("%s: parameters.name is missing", where)
			}
			if n := len(strings.Fields(tt.Cron)); n != 7 {
				fail("%s: cronExpression %q has %d fields; SCF's has 7 (second minute hour day month week year)", where, tt.Cron, n)
			}
			spec.Timers = append(spec.Timers, tt)
		default:
			if t.Function != "" && !defined(t.Function) {
				fail("triggers[%d] (%s): function %q is not defined in inputs.functions", i, t.Type, t.Function)
			}
		}
	}
	return spec, errs
}

func pick(v, top string) string {
	if v != "" {
		return v
	}
	return top
}

func pickInt(v, top *int, def int) int {
	switch {
	case v != nil:
		return *v
	case top != nil:
		return *top
	}
	return def
}

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces each ${env:NAME} in v with lookup(NAME), as the Serverless
// Framework does at deploy time. ok is false when a referenced variable is unset.
func ExpandEnv(v string, lookup func(string) (string, bool)) (s string, ok bool) {
	ok = true
	s = envRefRE.ReplaceAllStringFunc(v, func(m string) string {
		val, found := lookup(envRefRE.FindStringSubmatch(m)[1])
		if !found {
			ok = false
		}
		return val
	})
	return s, ok
}

// PlatformEnv names the variables a function gets locally besides the ones
// serverless.yml declares for it, taken from the local platform's own
// environment: those SCF itself sets in a deployed function (the run role's
// credentials, the region; SCF forbids declaring them), and SALON_DEV, the local
// development mode scripts/dev.sh sets, which serverless.yml never declares so
// that no deployed function runs in it.
var PlatformEnv = []string{
	"TENCENTCLOUD_SECRETID", "TENCENTCLOUD_SECRETKEY", "TENCENTCLOUD_SESSIONTOKEN", "TENCENTCLOUD_REGION",
	"SALON_DEV",
}

// FunctionEnv is a function's environment as the deploy would give it: only the
// names serverless.yml declares for it, each ${env:NAME} resolved through lookup
// (as the Serverless Framework resolves it from the deploying shell; a value
// referring to an unset variable is left out), plus PlatformEnv from lookup. A
// setting the function reads but serverless.yml forgets is therefore missing
// here too, so the omission shows locally before it shows on SCF.
func FunctionEnv(fn Function, lookup func(string) (string, bool)) map[string]string {
	env := map[string]string{}
	for k, v := range fn.Env {
		if s, ok := ExpandEnv(v, lookup); ok {
			env[k] = s
		}
	}
	for _, k := range PlatformEnv {
		if v, ok := lookup(k); ok {
			env[k] = v
		}
	}
	return env
}

// allowMethod reports whether the route's method admits m.
func (r Route) allowMethod(m string) bool {
	return r.Method == "ANY" || r.Method == m
}
