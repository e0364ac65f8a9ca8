package doccheck

// The READMEs state three things the code also states, and the two drift apart
// unless a test compares them: the error codes (shared/booking/error.go, their
// HTTP statuses in shared/apigw), the routes each function serves (its router in
// shared/handler), and the settings serverless.yml passes to the functions (the
// deploy table of infra/README.md). Each check is a function over the README's
// text, so that TestDriftChecksCatchPlantedErrors can feed it a copy with a
// mistake planted and see it fail.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"salon/infra/localgw"
	"salon/shared/apigw"
	"salon/shared/handler"
	"salon/shared/instance"
)

// codeNameRE is the shape of an error code: upper-case words joined by _.
var codeNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// bookingCodes reads the error codes from the constants of
// shared/booking/error.go: every string constant shaped like a code. Parsing the
// file, not listing the codes here, is what makes a new code (whoever adds it)
// part of the check at once.
func bookingCodes(t *testing.T, root string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "error.go", read(t, root, "shared/booking/error.go"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if c, err := strconv.Unquote(lit.Value); err == nil && codeNameRE.MatchString(c) {
					codes = append(codes, c)
				}
			}
		}
	}
	if len(codes) == 0 {
		t.Fatal("no error codes found in shared/booking/error.go: the parser is broken")
	}
	return codes
}

// wechatAnswerCodes are the codes of paynotify's failure answers, which WeChat
// Pay's notification protocol fixes (shared/handler/paynotify.go): not
// booking codes, and answered only with these statuses.
var wechatAnswerCodes = map[string][]int{"FAIL": {401, 500}}

// codeMention is one place functions/README.md names an error code.
type codeMention struct {
	code   string
	status int // 0 when the text gives none
	line   int
	table  bool // a row of the Errors table
}

var (
	// "409 `SOLD_OUT`", in prose and in the answer tables.
	statusCodeRE = regexp.MustCompile("\\b([1-5][0-9][0-9]) `([A-Z][A-Z0-9_]*)`")
	// "| `SOLD_OUT` | 409 | ...": the Errors table.
	errorRowRE = regexp.MustCompile("^\\|\\s*`([A-Z][A-Z0-9_]*)`\\s*\\|\\s*([1-5][0-9][0-9])\\s*\\|")
	// {"code":"SOLD_OUT", ...} in examples, with the status before it if any
	// (lower case is a login code, {"code":"alice"}).
	jsonCodeRE = regexp.MustCompile("(?:\\b([1-5][0-9][0-9]) `?)?\\{\"code\":\"([A-Z][A-Z0-9_]*)\"")
)

// errorCodeMentions finds every error code functions/README.md names: with a
// status ("409 `SOLD_OUT`"), as a row of the Errors table, or as the code of a
// JSON error example.
func errorCodeMentions(text string) []codeMention {
	var out []codeMention
	for i, line := range strings.Split(text, "\n") {
		if m := errorRowRE.FindStringSubmatch(line); m != nil {
			st, _ := strconv.Atoi(m[2])
			out = append(out, codeMention{code: m[1], status: st, line: i + 1, table: true})
			continue
		}
		for _, m := range statusCodeRE.FindAllStringSubmatch(line, -1) {
			st, _ := strconv.Atoi(m[1])
			out = append(out, codeMention{code: m[2], status: st, line: i + 1})
		}
		for _, m := range jsonCodeRE.FindAllStringSubmatch(line, -1) {
			st, _ := strconv.Atoi(m[1]) // 0 without a status
			out = append(out, codeMention{code: m[2], status: st, line: i + 1})
		}
	}
	return out
}

// checkErrorCodes compares the error codes functions/README.md names with the
// code's: statusOf gives each code's HTTP status (apigw.HTTPStatus). Every code
// mentioned must exist and carry its real status; every code must be a row of
// the Errors table.
func checkErrorCodes(readme string, codes []string, statusOf func(string) int) []string {
	known := map[string]bool{}
	for _, c := range codes {
		known[c] = true
	}
	var problems []string
	inTable := map[string]bool{}
	mentions := errorCodeMentions(readme)
	for _, m := range mentions {
		allowed, wechat := wechatAnswerCodes[m.code]
		switch {
		case wechat:
			if m.status != 0 && !slices.Contains(allowed, m.status) {
				problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s with status %d; paynotify answers it only with %v", m.line, m.code, m.status, allowed))
			}
		case !known[m.code]:
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: error code %s is not in shared/booking/error.go", m.line, m.code))
		case m.status != 0 && m.status != statusOf(m.code):
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s is documented as %d; shared/apigw answers it with %d", m.line, m.code, m.status, statusOf(m.code)))
		}
		if m.table {
			inTable[m.code] = true
		}
	}
	for _, c := range codes {
		if !inTable[c] {
			problems = append(problems, fmt.Sprintf("error code %s (shared/booking/error.go) is missing from the Errors table of functions/README.md", c))
		}
	}
	if len(mentions) == 0 {
		problems = append(problems, "functions/README.md names no error code: the parser is broken")
	}
	return problems
}

// TestErrorCodesDocumented: every error code functions/README.md names exists,
// with the HTTP status shared/apigw gives it, and every code the handlers can
// answer (every code of shared/booking/error.go, each mapped by shared/apigw)
// is in its Errors table.
func TestErrorCodesDocumented(t *testing.T) {
	root := repoRoot(t)
	codes := bookingCodes(t, root)
	for _, c := range codes {
		if c != "INTERNAL" && apigw.HTTPStatus(c) == 500 {
			t.Errorf("error code %s has no HTTP status in shared/apigw/response.go (it would answer 500)", c)
		}
	}
	for _, p := range checkErrorCodes(read(t, root, "functions/README.md"), codes, apigw.HTTPStatus) {
		t.Error(p)
	}
}

// A route, "METHOD /path/{param}".
var (
	routeCellRE = regexp.MustCompile("^\\|\\s*`(GET|POST|PUT|PATCH|DELETE) (/[^`?\\s]*)")
	// The console's README writes "`GET /admin/week?from=...`" and
	// "`GET/POST /admin/login`".
	consoleRouteRE = regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE)(?:/(?:GET|POST|PUT|PATCH|DELETE))*) (/admin[^`?\\s]*)")
)

// docRoutes reads the Routes table of functions/README.md: each route and the
// function the table says serves it, with its line.
func docRoutes(text string) (routes map[string]string, lines map[string]int) {
	routes, lines = map[string]string{}, map[string]int{}
	section := ""
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		if section != "Routes" {
			continue
		}
		m := routeCellRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		r := m[1] + " " + m[2]
		routes[r] = strings.TrimSpace(cells[2])
		lines[r] = i + 1
	}
	return routes, lines
}

// consoleDocRoutes reads the routes the console's README names.
func consoleDocRoutes(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range consoleRouteRE.FindAllStringSubmatch(text, -1) {
		for _, method := range strings.Split(m[1], "/") {
			out[method+" "+m[2]] = true
		}
	}
	return out
}

// checkRoutes compares the documented routes with code (route -> the function
// whose router registers it). Every route of functions/README.md's Routes
// table must be registered by the function the table names, every route the
// console's README names must be the admin function's, and every registered
// route must be in one of the two (the console's only in its own README or
// the table).
func checkRoutes(readme, consoleReadme string, code map[string]string) []string {
	var problems []string
	doc, lines := docRoutes(readme)
	if len(doc) == 0 {
		return []string{"functions/README.md has no routes in its Routes table: the parser is broken"}
	}
	console := consoleDocRoutes(consoleReadme)
	for _, r := range sortedKeys(doc) {
		switch fn, ok := code[r]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s is documented, but no router registers it", lines[r], r))
		case fn != doc[r]:
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s is documented as served by %s, but %s's router registers it", lines[r], r, doc[r], fn))
		}
	}
	for _, r := range sortedKeys(console) {
		if fn, ok := code[r]; !ok || fn != "admin" {
			problems = append(problems, fmt.Sprintf("shared/handler/console/README.md: %s is documented, but the admin function's router does not register it", r))
		}
	}
	for _, r := range sortedKeys(code) {
		if _, ok := doc[r]; ok {
			continue
		}
		if code[r] == "admin" && console[r] {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s (function %s) is registered but documented neither in functions/README.md's Routes table nor, for the console, in shared/handler/console/README.md", r, code[r]))
	}
	return problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// routers are the functions' routers, built as the functions build them
// (nothing is connected until a request comes).
func routers() map[string]*apigw.Router {
	env := &instance.Env{}
	return map[string]*apigw.Router{
		"slots":     handler.SlotsRouter(env),
		"login":     handler.LoginRouter(env),
		"reserve":   handler.ReserveRouter(env),
		"cancel":    handler.CancelRouter(env),
		"admin":     handler.AdminRouter(env),
		"paynotify": handler.PayNotifyRouter(env),
	}
}

// TestRoutesDocumented: the routes functions/README.md (and, for the console,
// its README) documents are the routes the functions' routers register, each
// under the function that serves it.
func TestRoutesDocumented(t *testing.T) {
	root := repoRoot(t)
	rts := routers()
	// Every function but the timer's has a router here, so a new function
	// cannot be left out of the check.
	for _, fn := range handler.Functions {
		if _, ok := rts[fn.Name]; !ok && fn.Name != "release" {
			t.Errorf("function %s has no router in this test's list", fn.Name)
		}
	}
	code := map[string]string{}
	for fn, rt := range rts {
		for _, r := range rt.Routes() {
			code[r] = fn
		}
	}
	for _, p := range checkRoutes(read(t, root, "functions/README.md"), read(t, root, "shared/handler/console/README.md"), code) {
		t.Error(p)
	}
}

// envRefRE is a variable serverless.yml reads from the deploying shell.
var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// deployTableNames reads the names in the tables of infra/README.md's section
// "Deploying to Tencent Cloud".
func deployTableNames(text string) map[string]bool {
	names := map[string]bool{}
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## Deploying to Tencent Cloud"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, c := range codeRE.FindAllString(line, -1) {
			if c = strings.Trim(c, "`"); codeNameRE.MatchString(c) {
				names[c] = true
			}
		}
	}
	return names
}

// checkDeploySettings reports each name serverless.yml needs from the
// deploying shell that infra/README.md's deploy table does not list.
func checkDeploySettings(infraReadme string, needed []string) []string {
	table := deployTableNames(infraReadme)
	if len(table) == 0 {
		return []string{"infra/README.md has no settings table under \"Deploying to Tencent Cloud\": the parser is broken"}
	}
	var problems []string
	for _, n := range needed {
		if !table[n] {
			problems = append(problems, fmt.Sprintf("serverless.yml needs %s from the deploying shell; infra/README.md's deploy table does not list it", n))
		}
	}
	return problems
}

// serverlessNeeds lists what serverless.yml needs from the deploying shell:
// every ${env:NAME} it reads and every name it passes to a function.
func serverlessNeeds(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, m := range envRefRE.FindAllStringSubmatch(read(t, root, "serverless.yml"), -1) {
		set[m[1]] = true
	}
	spec, err := localgw.LoadServerless(root + "/serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range spec.Functions {
		for k := range f.Env {
			set[k] = true
		}
	}
	if len(set) == 0 {
		t.Fatal("serverless.yml needs nothing from the shell: the parser is broken")
	}
	return sortedKeys(set)
}

// TestDeploySettingsDocumented: every setting serverless.yml passes to a
// function, and everything else it reads from the deploying shell, is in the
// deploy table of infra/README.md.
func TestDeploySettingsDocumented(t *testing.T) {
	root := repoRoot(t)
	for _, p := range checkDeploySettings(read(t, root, "infra/README.md"), serverlessNeeds(t, root)) {
		t.Error(p)
	}
}

// TestDriftChecksCatchPlantedErrors: each check passes on the repository's
// own text and fails on a copy with one mistake planted, so none of them can
// pass by finding nothing.
func TestDriftChecksCatchPlantedErrors(t *testing.T) {
	root := repoRoot(t)
	readme := read(t, root, "functions/README.md")
	console := read(t, root, "shared/handler/console/README.md")
	infra := read(t, root, "infra/README.md")
	codes := bookingCodes(t, root)
	code := map[string]string{}
	for fn, rt := range routers() {
		for _, r := range rt.Routes() {
			code[r] = fn
		}
	}
	needs := serverlessNeeds(t, root)

	if p := checkErrorCodes(readme, codes, apigw.HTTPStatus); len(p) > 0 {
		t.Fatalf("the real README fails: %v", p)
	}
	if p := checkRoutes(readme, console, code); len(p) > 0 {
		t.Fatalf("the real READMEs fail: %v", p)
	}
	if p := checkDeploySettings(infra, needs); len(p) > 0 {
		t.Fatalf("the real README fails: %v", p)
	}

	t.Run("unknown code in an answer table", func(t *testing.T) {
		bad := plant(t, readme, "| 409 `LATE_CANCEL` |", "| 409 `CANCEL_TOO_LATE` |")
		expect(t, checkErrorCodes(bad, codes, apigw.HTTPStatus), "CANCEL_TOO_LATE is not in shared/booking/error.go")
	})
	t.Run("unknown code in the Errors table", func(t *testing.T) {
		bad := plant(t, readme, "| `SOLD_OUT` | 409 |", "| `SOLD_OUT` | 409 | the slot is full |\n| `TOO_LATE` | 409 |")
		expect(t, checkErrorCodes(bad, codes, apigw.HTTPStatus), "TOO_LATE is not in shared/booking/error.go")
	})
	t.Run("wrong status", func(t *testing.T) {
		bad := plant(t, readme, "| `SOLD_OUT` | 409 |", "| `SOLD_OUT` | 410 |")
		expect(t, checkErrorCodes(bad, codes, apigw.HTTPStatus), "SOLD_OUT is documented as 410")
	})
	t.Run("code missing from the Errors table", func(t *testing.T) {
		// A code only the code has: the README says nothing of it.
		expect(t, checkErrorCodes(readme, append(slices.Clone(codes), "TOO_EARLY_FOR_TEST"), apigw.HTTPStatus),
			"TOO_EARLY_FOR_TEST (shared/booking/error.go) is missing from the Errors table")
	})
	t.Run("route that does not exist", func(t *testing.T) {
		bad := plant(t, readme, "| `GET /bookings/mine` | reserve |", "| `GET /bookings/all` | reserve |")
		expect(t, checkRoutes(bad, console, code), "GET /bookings/all is documented, but no router registers it")
		expect(t, checkRoutes(bad, console, code), "GET /bookings/mine (function reserve) is registered but documented neither")
	})
	t.Run("route under the wrong function", func(t *testing.T) {
		bad := plant(t, readme, "| `POST /bookings/{id}/cancel`, optional body `{\"forfeitDeposit\":true}` | cancel |",
			"| `POST /bookings/{id}/cancel`, optional body `{\"forfeitDeposit\":true}` | reserve |")
		expect(t, checkRoutes(bad, console, code), "documented as served by reserve, but cancel's router registers it")
	})
	t.Run("console route undocumented", func(t *testing.T) {
		bad := plant(t, console, "`GET /admin/health`", "`GET /admin/status`")
		expect(t, checkRoutes(readme, bad, code), "GET /admin/health (function admin) is registered but documented neither")
		expect(t, checkRoutes(readme, bad, code), "console/README.md: GET /admin/status is documented")
	})
	t.Run("deploy setting missing", func(t *testing.T) {
		bad := strings.ReplaceAll(plant(t, infra, "`LOCK_TTL`", "`LOCK_TIME`"), "`LOCK_TTL`", "`LOCK_TIME`")
		expect(t, checkDeploySettings(bad, needs), "serverless.yml needs LOCK_TTL")
	})
}

// plant is text with its first old replaced by new: a drift planted on
// purpose, which a check must then report. A planting that finds nothing to
// replace fails the test, so a check is never credited for a drift that was
// never planted.
func plant(t *testing.T, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("nothing to plant into: %q is not in the text", old)
	}
	return strings.Replace(text, old, new, 1)
}

// expect fails the test unless one of problems reports want.
func expect(t *testing.T, problems []string, want string) {
	t.Helper()
	for _, p := range problems {
		if strings.Contains(p, want) {
			return
		}
	}
	t.Errorf("planted drift not reported (want %q), got %v", want, problems)
}
