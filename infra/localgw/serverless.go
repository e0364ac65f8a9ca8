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

// What SCF and API Gateway use when serverless.yml leaves a value out: a 3 s
// function timeout, 128 MB, a 15 s serviceTimeout.
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

// build turns the parsed file into a Spec and every mistake in it into an
// error, all of them, in the order of the file.
func build(path string, raw *rawFile) (*Spec, []error) {
	b := &specBuilder{in: &raw.Inputs, routes: map[string]bool{}}
	b.checkInputs(raw)
	b.newSpec(path, raw)
	b.addFunctions()
	b.addTriggers()
	return b.spec, b.errs
}

// specBuilder is one build: the inputs it reads, the Spec it fills and the
// errors it has found.
type specBuilder struct {
	in     *rawInputs
	spec   *Spec
	errs   []error
	routes map[string]bool // "METHOD /path" of the routes added so far
}

func (b *specBuilder) fail(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
}

// defined reports whether inputs.functions defines fn.
func (b *specBuilder) defined(fn string) bool {
	_, ok := b.in.Functions[fn]
	return ok
}

// checkInputs refuses what multi-scf would not deploy as written.
func (b *specBuilder) checkInputs(raw *rawFile) {
	if raw.Component != "multi-scf" {
		b.fail("component is %q; the local platform reads multi-scf files", raw.Component)
	}
	if b.in.Src.Src == "" {
		b.fail("inputs.src is missing")
	}
	if b.in.Environment.Kind != 0 {
		// formatFaasInputs overwrites environment with the (possibly empty) list.
		b.fail("inputs.environment is ignored by multi-scf; use environments: [{key, value}]")
	}
}

// newSpec starts the Spec with the file's identity and inputs.src resolved
// against the file's directory.
func (b *specBuilder) newSpec(path string, raw *rawFile) {
	abs, err := filepath.Abs(path)
	if err != nil {
		b.fail("%v", err)
	}
	b.spec = &Spec{
		Path:      abs,
		App:       raw.App,
		Stage:     raw.Stage,
		Name:      raw.Name,
		Component: raw.Component,
		Region:    b.in.Region,
		Src:       filepath.Join(filepath.Dir(abs), b.in.Src.Src),
	}
}

// addFunctions adds the functions in name order.
func (b *specBuilder) addFunctions() {
	if len(b.in.Functions) == 0 {
		b.fail("inputs.functions is empty")
	}
	names := make([]string, 0, len(b.in.Functions))
	for name := range b.in.Functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.spec.Functions = append(b.spec.Functions, b.function(name, b.in.Functions[name]))
	}
}

// function applies the top-level defaults to one function and checks it.
func (b *specBuilder) function(name string, rf rawFunction) Function {
	in := b.in
	if rf.Environment.Kind != 0 {
		b.fail("function %s: environment is ignored by multi-scf; use environments: [{key, value}]", name)
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
		b.fail("function %s: src is missing (a directory under inputs.src holding the binary)", name)
	} else {
		f.Dir = filepath.Join(b.spec.Src, f.Src)
	}
	if f.Handler == "" {
		b.fail("function %s: handler is missing", name)
	}
	if f.Timeout < time.Second || f.Timeout > 900*time.Second {
		b.fail("function %s: timeout %s outside 1-900 s", name, f.Timeout)
	}
	b.addEnvironment(&f, rf)
	return f
}

// addEnvironment gives f its environments list, or the top-level one: a
// function's list replaces the top-level list, it is not merged into it.
func (b *specBuilder) addEnvironment(f *Function, rf rawFunction) {
	envs := b.in.Environments
	if rf.Environments != nil {
		envs = rf.Environments
	}
	if envs == nil {
		return
	}
	for _, kv := range *envs {
		if kv.Key == "" {
			b.fail("function %s: an environments entry has no key", f.Name)
			continue
		}
		f.Env[kv.Key] = kv.Value
	}
}

// addTriggers adds the API Gateway routes and the timers; other trigger types
// are only checked to name a defined function.
func (b *specBuilder) addTriggers() {
	for i, t := range b.in.Triggers {
		switch t.Type {
		case "apigw":
			b.addAPIGW(i, t)
		case "timer":
			b.addTimer(i, t)
		default:
			if t.Function != "" && !b.defined(t.Function) {
				b.fail("triggers[%d] (%s): function %q is not defined in inputs.functions", i, t.Type, t.Function)
			}
		}
	}
}

func (b *specBuilder) addAPIGW(i int, t rawTrigger) {
	var p rawAPIGW
	if err := t.Parameters.Decode(&p); err != nil {
		b.fail("triggers[%d] (apigw): %v", i, err)
		return
	}
	if p.Name == "" {
		b.fail("triggers[%d] (apigw): parameters.name is missing (multi-scf takes the service name from it)", i)
	}
	for j, a := range p.APIs {
		b.spec.Routes = append(b.spec.Routes, b.route(fmt.Sprintf("triggers[%d].apis[%d] (%s %s)", i, j, a.Method, a.Path), t, a))
	}
}

// route reads one API of an apigw trigger (its function defaults to the
// trigger's) and checks it; where names it in the errors.
func (b *specBuilder) route(where string, t rawTrigger, a rawAPI) Route {
	r := Route{Method: strings.ToUpper(a.Method), Path: a.Path, Function: a.Function}
	if r.Function == "" {
		r.Function = t.Function
	}
	if !methods[r.Method] {
		b.fail("%s: method %q", where, a.Method)
	}
	if !strings.HasPrefix(r.Path, "/") {
		b.fail("%s: path must start with /", where)
	}
	if !b.defined(r.Function) {
		b.fail("%s: function %q is not defined in inputs.functions", where, r.Function)
	}
	key := r.Method + " " + r.Path
	if b.routes[key] {
		b.fail("%s: defined twice", where)
	}
	b.routes[key] = true
	r.ServiceTimeout = time.Duration(pickInt(a.ServiceTimeout, nil, defaultServiceTimeoutSeconds)) * time.Second
	r.Params = b.params(where, a.Param)
	b.checkPathParams(where, r)
	b.checkServiceTimeout(where, r)
	return r
}

// params reads an API's declared parameters and checks their positions.
func (b *specBuilder) params(where string, raw []rawParam) []Param {
	var params []Param
	for _, rp := range raw {
		prm := Param{Name: rp.Name, Position: strings.ToUpper(rp.Position), Required: rp.Required, Type: rp.Type}
		if rp.DefaultValue.Kind == yaml.ScalarNode {
			prm.Default = rp.DefaultValue.Value
		}
		switch prm.Position {
		case "PATH", "QUERY", "HEADER":
		default:
			b.fail("%s: param %s: position %q (PATH, QUERY or HEADER)", where, rp.Name, rp.Position)
		}
		params = append(params, prm)
	}
	return params
}

// checkPathParams wants every {name} in the path to be a whole segment and
// declared as a PATH parameter.
func (b *specBuilder) checkPathParams(where string, r Route) {
	declared := map[string]bool{}
	for _, prm := range r.Params {
		if prm.Position == "PATH" {
			declared[prm.Name] = true
		}
	}
	for _, seg := range strings.Split(r.Path, "/") {
		if m := pathParamRE.FindStringSubmatch(seg); m != nil && !declared[m[1]] {
			b.fail("%s: path parameter {%s} is not declared in param (position PATH)", where, m[1])
		} else if m == nil && strings.ContainsAny(seg, "{}") {
			b.fail("%s: segment %q: a path parameter must be a whole segment", where, seg)
		}
	}
}

// checkServiceTimeout wants the gateway to give up before the function does:
// otherwise a function timeout reaches the client as HTTP 200.
func (b *specBuilder) checkServiceTimeout(where string, r Route) {
	if f, ok := b.spec.Function(r.Function); ok && r.ServiceTimeout >= f.Timeout {
		b.fail("%s: serviceTimeout %s is not below the timeout %s of %s: a function timeout would reach the client as HTTP 200",
			where, r.ServiceTimeout, f.Timeout, f.Name)
	}
}

func (b *specBuilder) addTimer(i int, t rawTrigger) {
	var p rawTimer
	if err := t.Parameters.Decode(&p); err != nil {
		b.fail("triggers[%d] (timer): %v", i, err)
		return
	}
	tt := TimerTrigger{Name: p.Name, Function: t.Function, Cron: p.CronExpression, Enable: p.Enable, Argument: p.Argument}
	where := fmt.Sprintf("triggers[%d] (timer %s)", i, p.Name)
	if !b.defined(tt.Function) {
		b.fail("%s: function %q is not defined in inputs.functions", where, tt.Function)
	}
	if tt.Name == "" {
		b.fail("%s: parameters.name is missing", where)
	}
	if n := len(strings.Fields(tt.Cron)); n != 7 {
		b.fail("%s: cronExpression %q has %d fields; SCF's has 7 (second minute hour day month week year)", where, tt.Cron, n)
	}
	b.spec.Timers = append(b.spec.Timers, tt)
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
