package localgw

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const repoRoot = "../.."

// The routes of the HTTP API (functions/README.md, "Routes"), and the functions
// that serve them.
var wantRoutes = map[string]string{
	"GET /healthz":                         "slots",
	"GET /slots":                           "slots",
	"GET /config":                          "slots",
	"GET /openapi.json":                    "slots",
	"GET /bookings/{id}":                   "reserve",
	"POST /admin/checkin":                  "admin",
	"GET /admin/staff":                     "admin",
	"GET /admin/reports":                   "admin",
	"GET /admin/reports.csv":               "admin",
	"POST /admin/staff":                    "admin",
	"PATCH /admin/staff/{id}":              "admin",
	"GET /me":                              "reserve",
	"PUT /me":                              "reserve",
	"POST /admin/bookings":                 "admin",
	"PATCH /admin/customers/{customerId}":  "admin",
	"POST /login":                          "login",
	"POST /bookings":                       "reserve",
	"POST /bookings/{id}/pay":              "reserve",
	"GET /bookings/mine":                   "reserve",
	"POST /bookings/{id}/cancel":           "cancel",
	"POST /bookings/{id}/reschedule":       "cancel",
	"POST /pay/notify":                     "paynotify",
	"POST /pay/refund-notify":              "paynotify",
	"POST /admin/slots":                    "admin",
	"PATCH /admin/slots/{id}":              "admin",
	"GET /admin/bookings":                  "admin",
	"POST /admin/bookings/{id}/cancel":     "admin",
	"POST /admin/bookings/{id}/checkin":    "admin",
	"POST /admin/bookings/{id}/noshow":     "admin",
	"POST /admin/bookings/{id}/checkout":   "admin",
	"POST /admin/bookings/{id}/reschedule": "admin",
	"POST /slots/{id}/waitlist":            "reserve",
	"DELETE /slots/{id}/waitlist":          "reserve",
	"GET /waitlist/mine":                   "reserve",
	"GET /services":                        "slots",
	"GET /availability":                    "slots",
	"GET /admin/services":                  "admin",
	"POST /admin/services":                 "admin",
	"PATCH /admin/services/{id}":           "admin",
	"GET /admin/technicians":               "admin",
	"POST /admin/technicians":              "admin",
	"PATCH /admin/technicians/{id}":        "admin",
	"POST /admin/technicians/{id}/hours":   "admin",
	"POST /admin/technicians/{id}/off":     "admin",
	"GET /admin/reconciliation":            "admin",
	"POST /admin/reconciliation":           "admin",
	// "GET /admin/ and below": the salon console's pages and forms.
	"GET /admin":               "admin",
	"GET /admin/door":          "admin",
	"GET /admin/customer":      "admin",
	"POST /admin/move":         "admin",
	"POST /admin/walkin":       "admin",
	"POST /admin/customer":     "admin",
	"POST /admin/door":         "admin",
	"GET /admin/":              "admin",
	"GET /admin/static/{file}": "admin",
	"GET /admin/login":         "admin",
	"POST /admin/login":        "admin",
	"POST /admin/logout":       "admin",
	"GET /admin/week":          "admin",
	"POST /admin/week":         "admin",
	"GET /admin/booking":       "admin",
	"POST /admin/booking":      "admin",
	"POST /admin/checkout":     "admin",
	"GET /admin/audit":         "admin",
	"GET /admin/health":        "admin",
	"GET /admin/team":          "admin",
	"GET /admin/report":        "admin",
	"POST /admin/team":         "admin",
	"GET /admin/menu":          "admin",
	"POST /admin/menu":         "admin",
	"GET /admin/techs":         "admin",
	"POST /admin/techs":        "admin",
	"GET /admin/password":      "admin",
	"POST /admin/password":     "admin",
}

// The settings of the configuration table in functions/README.md that the
// functions get on SCF.
var wantEnv = []string{
	"MYSQL_DSN", "SHOP_TZ", "LOCK_TTL", "BOOKING_WINDOW_DAYS", "SESSION_SECRET", "ADMIN_TOKEN",
	"WX_APPID", "WX_APPSECRET", "WX_API_BASE",
	"WECHATPAY_MCHID", "WECHATPAY_MCH_CERT_SERIAL", "WECHATPAY_MCH_PRIVATE_KEY", "WECHATPAY_APIV3_KEY",
	"WECHATPAY_PUBLIC_KEY_ID", "WECHATPAY_PUBLIC_KEY", "WECHATPAY_API_BASE",
	"WECHATPAY_NOTIFY_URL", "WECHATPAY_REFUND_NOTIFY_URL", "CLS_ENDPOINT", "CLS_TOPIC_ID",
	"CANCEL_FREE_HOURS", "NO_SHOW_GRACE", "NO_SHOW_LIMIT", "REFUND_QUERY_AFTER",
	"REMIND_BEFORE", "SHOP_NAME", "WX_TMPL_CONFIRMED", "WX_TMPL_REMINDER", "WX_TMPL_WAITLIST", "WX_TMPL_CANCELLED",
}

func TestRepositoryServerlessYML(t *testing.T) {
	spec, err := LoadServerless(filepath.Join(repoRoot, "serverless.yml"))
	if err != nil {
		t.Fatal(err)
	}

	defined := map[string]Function{}
	for _, f := range spec.Functions {
		defined[f.Name] = f
		if f.Handler != "main" || f.Runtime != "Go1" || f.MemoryMB != 128 {
			t.Errorf("function %s: handler %q runtime %q memory %d, want main Go1 128", f.Name, f.Handler, f.Runtime, f.MemoryMB)
		}
		wantTimeout := 10 * time.Second
		if f.Name == "release" {
			wantTimeout = 60 * time.Second
		}
		if f.Timeout != wantTimeout {
			t.Errorf("function %s: timeout %s, want %s", f.Name, f.Timeout, wantTimeout)
		}
		if filepath.Clean(f.Src) != f.Name {
			t.Errorf("function %s: src %q, want ./%s (package.sh builds dist/<name>)", f.Name, f.Src, f.Name)
		}
		for _, k := range wantEnv {
			if v, ok := f.Env[k]; !ok || v != "${env:"+k+"}" {
				t.Errorf("function %s: environment %s = %q, want ${env:%s}", f.Name, k, v, k)
			}
		}
		for k := range f.Env {
			if strings.HasPrefix(k, "TENCENTCLOUD_") || strings.HasPrefix(k, "SCF_") || strings.HasPrefix(k, "QCLOUD_") {
				t.Errorf("function %s: environment %s is reserved: SCF sets it", f.Name, k)
			}
		}
	}

	got := map[string]string{}
	for _, r := range spec.Routes {
		got[r.Method+" "+r.Path] = r.Function
		f, ok := defined[r.Function]
		if !ok {
			t.Errorf("route %s %s: function %q is not defined", r.Method, r.Path, r.Function)
			continue
		}
		if r.ServiceTimeout >= f.Timeout {
			t.Errorf("route %s %s: serviceTimeout %s not below the function timeout %s", r.Method, r.Path, r.ServiceTimeout, f.Timeout)
		}
	}
	for k, fn := range wantRoutes {
		if got[k] != fn {
			t.Errorf("route %s -> %q, want %q", k, got[k], fn)
		}
	}
	for k := range got {
		if _, ok := wantRoutes[k]; !ok {
			t.Errorf("route %s is not in the API (functions/README.md)", k)
		}
	}

	if len(spec.Timers) != 1 {
		t.Fatalf("timers = %+v, want the release timer", spec.Timers)
	}
	tm := spec.Timers[0]
	if _, ok := defined[tm.Function]; !ok || tm.Function != "release" || tm.Cron != "0 */1 * * * * *" || !tm.Enable {
		t.Errorf("timer = %+v, want release, enabled, every minute", tm)
	}

	// Every deployed function has its source, and every function's source is
	// deployed. A function is a folder with a main.go (functions/openapi, the
	// API document's TypeScript types and tools, is not one).
	entries, err := os.ReadDir(filepath.Join(repoRoot, "functions"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(repoRoot, "functions", e.Name(), "main.go")); e.IsDir() && err == nil {
			dirs[e.Name()] = true
		}
	}
	for d := range dirs {
		if _, ok := defined[d]; !ok {
			t.Errorf("functions/%s is not deployed by serverless.yml", d)
		}
	}
	var missing []string
	for name := range defined {
		if !dirs[name] {
			missing = append(missing, "functions/"+name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("serverless.yml deploys functions without a source directory: %s", strings.Join(missing, ", "))
	}
}

func TestLoadServerlessRefusesTraps(t *testing.T) {
	const head = `
component: multi-scf
inputs:
  src: ./dist
  runtime: Go1
  handler: main
  timeout: 10
  functions:
    api: { src: ./api }
    job: { src: ./job }
  triggers:
`
	cases := map[string]struct{ triggers, want string }{
		"undefined route function": {`
    - type: apigw
      parameters:
        name: s
        apis:
          - { path: /x, method: GET, function: nope, serviceTimeout: 8 }`, `function "nope" is not defined`},
		"undeclared path param": {`
    - type: apigw
      parameters:
        name: s
        apis:
          - { path: '/x/{id}', method: GET, function: api, serviceTimeout: 8 }`, "{id} is not declared"},
		"service timeout not below": {`
    - type: apigw
      parameters:
        name: s
        apis:
          - { path: /x, method: GET, function: api }`, "serviceTimeout 15s is not below the timeout 10s"},
		"duplicate route": {`
    - type: apigw
      parameters:
        name: s
        apis:
          - { path: /x, method: GET, function: api, serviceTimeout: 8 }
          - { path: /x, method: get, function: job, serviceTimeout: 8 }`, "defined twice"},
		"five-field cron": {`
    - type: timer
      function: job
      parameters: { name: t, cronExpression: '*/1 * * * *', enable: true }`, "has 5 fields"},
		"undefined timer function": {`
    - type: timer
      function: nope
      parameters: { name: t, cronExpression: '0 */1 * * * * *', enable: true }`, `function "nope" is not defined`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "serverless.yml")
			if err := os.WriteFile(path, []byte(head+strings.TrimPrefix(c.triggers, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadServerless(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}

	t.Run("legacy environment", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "serverless.yml")
		y := strings.Replace(head, "  timeout: 10\n", "  timeout: 10\n  environment: { variables: { A: b } }\n", 1)
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadServerless(path); err == nil || !strings.Contains(err.Error(), "use environments") {
			t.Errorf("err = %v, want the environments advice", err)
		}
	})
}

func TestLoadServerlessDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serverless.yml")
	y := `
component: multi-scf
inputs:
  src: { src: ./dist, exclude: [ '*.zip' ] }
  runtime: Go1
  handler: main
  environments:
    - { key: A, value: top }
  functions:
    one: { src: ./one }
    two: { src: ./two, timeout: 30, memorySize: 256, environments: [ { key: B, value: own } ] }
`
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := LoadServerless(path)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := spec.Function("one")
	two, _ := spec.Function("two")
	if one.Timeout != 3*time.Second || one.MemoryMB != 128 || one.Env["A"] != "top" {
		t.Errorf("one = %+v, want SCF's defaults and the top-level environment", one)
	}
	if two.Timeout != 30*time.Second || two.MemoryMB != 256 || two.Env["B"] != "own" || two.Env["A"] != "" {
		t.Errorf("two = %+v, want its own fields, its environments replacing the top-level list", two)
	}
	if want := filepath.Join(filepath.Dir(path), "dist", "one"); one.Dir != want {
		t.Errorf("one.Dir = %s, want %s", one.Dir, want)
	}
}

func TestExpandEnv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"A": "x", "E": ""}[k]
		return v, ok
	}
	for in, want := range map[string]struct {
		s  string
		ok bool
	}{
		"${env:A}":            {"x", true},
		"p-${env:A}-${env:E}": {"p-x-", true},
		"${env:MISSING}":      {"", false},
		"plain":               {"plain", true},
	} {
		s, ok := ExpandEnv(in, lookup)
		if s != want.s || ok != want.ok {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q, %v", in, s, ok, want.s, want.ok)
		}
	}
}

// TestFunctionEnv: a function gets the names serverless.yml declares for it and
// the platform's, never the rest of the shell.
func TestFunctionEnv(t *testing.T) {
	shell := map[string]string{
		"MYSQL_DSN": "root@tcp(db:3306)/salon", "SESSION_SECRET": "s", "UNDECLARED": "x", "PATH": "/bin",
		"TENCENTCLOUD_SECRETID": "AKID", "SALON_DEV": "1",
	}
	lookup := func(k string) (string, bool) { v, ok := shell[k]; return v, ok }
	fn := Function{Name: "f", Env: map[string]string{
		"MYSQL_DSN": "${env:MYSQL_DSN}", "SHOP_TZ": "${env:SHOP_TZ}", "FIXED": "literal", "SECRET": "${env:SESSION_SECRET}",
	}}
	got := FunctionEnv(fn, lookup)
	want := map[string]string{
		"MYSQL_DSN": "root@tcp(db:3306)/salon", "FIXED": "literal", "SECRET": "s",
		"TENCENTCLOUD_SECRETID": "AKID", "SALON_DEV": "1",
	}
	if len(got) != len(want) {
		t.Errorf("FunctionEnv = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("FunctionEnv[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	for _, k := range []string{"UNDECLARED", "PATH", "SESSION_SECRET", "SHOP_TZ"} {
		if _, ok := got[k]; ok {
			t.Errorf("FunctionEnv passes %s, which serverless.yml does not declare (or whose variable is unset)", k)
		}
	}
}
