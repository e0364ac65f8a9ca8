// Package scfcli holds template.yaml, the description of the functions that
// Tencent's SCF CLI reads. This test keeps it equal to serverless.yml.
package scfcli_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"

	"salon/infra/localgw"
)

// The TencentCloud SAM shape the CLI validates (tcfcli/common/tcsam).
type function struct {
	Type       string `yaml:"Type"`
	Properties struct {
		CodeUri     string `yaml:"CodeUri"`
		Description string `yaml:"Description"`
		Handler     string `yaml:"Handler"`
		Runtime     string `yaml:"Runtime"`
		MemorySize  int    `yaml:"MemorySize"`
		Timeout     int    `yaml:"Timeout"`
		Environment struct {
			Variables map[string]string `yaml:"Variables"`
		} `yaml:"Environment"`
		Events map[string]event `yaml:"Events"`
	} `yaml:"Properties"`
}

type event struct {
	Type       string         `yaml:"Type"`
	Properties map[string]any `yaml:"Properties"`
}

func load(t *testing.T) (map[string]function, *localgw.Spec) {
	t.Helper()
	b, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]map[string]yaml.Node `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Resources) != 1 {
		t.Fatalf("namespaces %v: the CLI needs the namespace named on its command line; keep exactly one, default", doc.Resources)
	}
	ns, ok := doc.Resources["default"]
	if !ok {
		t.Fatal("no namespace default")
	}
	fns := map[string]function{}
	for name, node := range ns {
		if name == "Type" {
			var typ string
			_ = node.Decode(&typ)
			if typ != "TencentCloud::Serverless::Namespace" {
				t.Errorf("namespace Type %q", typ)
			}
			continue
		}
		var f function
		if err := node.Decode(&f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fns[name] = f
	}
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	return fns, spec
}

func TestTemplateDescribesTheFunctionsOfServerlessYML(t *testing.T) {
	fns, spec := load(t)
	var want, got []string
	for _, f := range spec.Functions {
		want = append(want, f.Name)
	}
	for name := range fns {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("template functions %v, serverless.yml %v", got, want)
	}

	for _, sf := range spec.Functions {
		f := fns[sf.Name]
		p := f.Properties
		if f.Type != "TencentCloud::Serverless::Function" {
			t.Errorf("%s: Type %q", sf.Name, f.Type)
		}
		if p.Handler != sf.Handler || p.Runtime != sf.Runtime {
			t.Errorf("%s: handler/runtime %s/%s, serverless.yml %s/%s", sf.Name, p.Handler, p.Runtime, sf.Handler, sf.Runtime)
		}
		if p.MemorySize != sf.MemoryMB || p.Timeout != int(sf.Timeout.Seconds()) {
			t.Errorf("%s: memory %d MB timeout %d s, serverless.yml %d MB %v", sf.Name, p.MemorySize, p.Timeout, sf.MemoryMB, sf.Timeout)
		}
		if want := filepath.ToSlash(filepath.Join("../../dist", sf.Name)); p.CodeUri != want {
			t.Errorf("%s: CodeUri %q, want %q (scripts/package.sh's output)", sf.Name, p.CodeUri, want)
		}
		var names, wantNames []string
		for k, v := range p.Environment.Variables {
			names = append(names, k)
			if v != "" {
				t.Errorf("%s: %s has a value in the template; values go in --env-vars, never in the repo", sf.Name, k)
			}
		}
		for k := range sf.Env {
			wantNames = append(wantNames, k)
		}
		sort.Strings(names)
		sort.Strings(wantNames)
		if !reflect.DeepEqual(names, wantNames) {
			t.Errorf("%s: environment names\n template     %v\n serverless.yml %v", sf.Name, names, wantNames)
		}
	}
}

func TestTemplateTriggersMatchServerlessYML(t *testing.T) {
	fns, spec := load(t)
	http := map[string]bool{}
	for _, r := range spec.Routes {
		http[r.Function] = true
	}
	timers := map[string]localgw.TimerTrigger{}
	for _, tm := range spec.Timers {
		timers[tm.Name] = tm
	}
	seenTimers := map[string]bool{}
	for name, f := range fns {
		apigw := 0
		for evName, ev := range f.Properties.Events {
			switch ev.Type {
			case "Timer":
				tm, ok := timers[evName]
				if !ok || tm.Function != name {
					t.Errorf("%s: timer %s is not a timer of this function in serverless.yml", name, evName)
					continue
				}
				seenTimers[evName] = true
				if ev.Properties["CronExpression"] != tm.Cron {
					t.Errorf("%s: cron %v, serverless.yml %q", evName, ev.Properties["CronExpression"], tm.Cron)
				}
				if ev.Properties["Enable"] != tm.Enable {
					t.Errorf("%s: Enable %v, serverless.yml %v", evName, ev.Properties["Enable"], tm.Enable)
				}
				checkKeys(t, name+"/"+evName, ev.Properties, "CronExpression", "Enable")
			case "APIGW":
				apigw++
				checkKeys(t, name+"/"+evName, ev.Properties, "StageName", "HttpMethod", "IntegratedResponse")
				if ev.Properties["StageName"] != "release" || ev.Properties["HttpMethod"] != "ANY" || ev.Properties["IntegratedResponse"] != true {
					t.Errorf("%s: API Gateway event %v", name, ev.Properties)
				}
			default:
				t.Errorf("%s: event %s of type %q", name, evName, ev.Type)
			}
		}
		if (apigw > 0) != http[name] {
			t.Errorf("%s: %d API Gateway events, serverless.yml routes: %v", name, apigw, http[name])
		}
	}
	for name := range timers {
		if !seenTimers[name] {
			t.Errorf("timer %s of serverless.yml is missing from the template", name)
		}
	}
}

// checkKeys enforces the CLI schema's additionalProperties: false.
func checkKeys(t *testing.T, where string, props map[string]any, allowed ...string) {
	t.Helper()
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for k := range props {
		if !ok[k] {
			t.Errorf("%s: property %s is not allowed by the SCF CLI's schema", where, k)
		}
	}
}
