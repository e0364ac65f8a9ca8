package doccheck

// The OpenAPI document (shared/openapi/openapi.yaml) is the contract: the
// tests validate every answer against it (infra/testkit's Contract). What is
// checked here is that it lists exactly the routes the functions' routers
// register, each under the function that serves it, and that the route tables
// of functions/README.md say what the document says, so that neither can
// drift from the other. Each check is a function over text, and
// TestOpenAPIChecksCatchPlantedErrors feeds them copies with a mistake planted.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"salon/shared/openapi"
)

// operation is what the README tables state of one operation of the document.
type operation struct {
	function string // x-function
	auth     string // as the Routes table's auth column writes it
	success  int    // the lowest 2xx or 3xx status it answers
	console  bool   // a console page (tag console): documented in the console's README
}

// documentOperations reads the operations of an OpenAPI document in JSON,
// by "METHOD /path".
func documentOperations(doc []byte) (map[string]operation, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	methods := []string{"get", "put", "post", "delete", "patch", "head", "options"}
	out := map[string]operation{}
	for path, item := range d.Paths {
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op struct {
				Function  string                       `json:"x-function"`
				Tags      []string                     `json:"tags"`
				Security  []map[string]json.RawMessage `json:"security"`
				Responses map[string]json.RawMessage   `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			o := operation{function: op.Function, auth: "none", console: slices.Contains(op.Tags, "console")}
			for _, s := range op.Security {
				switch {
				case s["customerToken"] != nil:
					o.auth = "customer"
				case s["adminToken"] != nil:
					o.auth = "admin"
				}
			}
			if slices.Contains(op.Tags, "wechatpay") {
				o.auth = "WeChat Pay signature"
			}
			for code := range op.Responses {
				if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 400 && (o.success == 0 || n < o.success) {
					o.success = n
				}
			}
			out[strings.ToUpper(m)+" "+openapi.RequestPath(path)] = o
		}
	}
	return out, nil
}

// checkDocumentRoutes compares the document's operations with the routes the
// routers register (route -> function). The message for a route the document
// lacks says what to add, so that whoever adds a route knows where it goes.
func checkDocumentRoutes(doc map[string]operation, code map[string]string) []string {
	var problems []string
	for _, r := range sortedKeys(code) {
		op, ok := doc[r]
		method, path, _ := strings.Cut(r, " ")
		switch {
		case !ok && strings.HasPrefix(path, "/admin"):
			console := !strings.HasPrefix(path, "/admin/") || isConsolePath(path)
			problems = append(problems, fmt.Sprintf("%s (function %s) is registered but not in shared/openapi/openapi.yaml: add under paths: %q: %s: an operation with x-function: %s, tags: [%s], security: %s (security: [] for a public page), a unique operationId, its requestBody (a console form: requestBody: *consoleForm) and its answers (a console page: responses: *consolePage; a JSON route: each status with its schema)",
				r, code[r], path, strings.ToLower(method), code[r], map[bool]string{true: "console", false: "admin"}[console], map[bool]string{true: "*console", false: "*admin"}[console]))
		case !ok:
			problems = append(problems, fmt.Sprintf("%s (function %s) is registered but not in shared/openapi/openapi.yaml: add under paths: %q: %s: an operation with x-function: %s, its security (security: [] for a public route), its parameters, requestBody and every status it answers with its schema",
				r, code[r], path, strings.ToLower(method), code[r]))
		case op.function != code[r]:
			problems = append(problems, fmt.Sprintf("shared/openapi/openapi.yaml: %s has x-function %q, but %s's router registers it", r, op.function, code[r]))
		}
	}
	for _, r := range sortedKeys(doc) {
		if _, ok := code[r]; !ok {
			problems = append(problems, fmt.Sprintf("shared/openapi/openapi.yaml: %s is in the document, but no router registers it", r))
		}
	}
	return problems
}

// isConsolePath reports whether an /admin/ path is a page rather than the JSON
// API: the JSON API's paths are the ones with a resource in the plural.
func isConsolePath(path string) bool {
	for _, api := range []string{"/admin/slots", "/admin/bookings", "/admin/customers", "/admin/checkin", "/admin/staff"} {
		if path == api || strings.HasPrefix(path, api+"/") {
			return false
		}
	}
	return true
}

// checkRouteTable compares the Routes table of functions/README.md with the
// document: every row is an operation of the document with its function, its
// auth and its success status, and every operation but the console's pages
// (which the console's README lists) has a row.
func checkRouteTable(readme string, doc map[string]operation) []string {
	var problems []string
	rows, lines := docRoutes(readme)
	if len(rows) == 0 {
		return []string{"functions/README.md has no routes in its Routes table: the parser is broken"}
	}
	cells := routeTableCells(readme)
	for _, r := range sortedKeys(rows) {
		op, ok := doc[r]
		if !ok {
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s is in the Routes table, but not in shared/openapi/openapi.yaml", lines[r], r))
			continue
		}
		c := cells[r]
		if c.function != op.function {
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s is served by %s in the Routes table, by %s in the document", lines[r], r, c.function, op.function))
		}
		if c.auth != op.auth {
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s needs %q in the Routes table, %q in the document", lines[r], r, c.auth, op.auth))
		}
		if c.success != op.success {
			problems = append(problems, fmt.Sprintf("functions/README.md:%d: %s succeeds with %d in the Routes table, %d in the document", lines[r], r, c.success, op.success))
		}
	}
	for _, r := range sortedKeys(doc) {
		if _, ok := rows[r]; !ok && !doc[r].console {
			problems = append(problems, fmt.Sprintf("shared/openapi/openapi.yaml: %s is missing from functions/README.md's Routes table", r))
		}
	}
	return problems
}

// tableCells is a row of the Routes table: function, auth, success status.
type tableCells struct {
	function, auth string
	success        int
}

var leadingStatusRE = regexp.MustCompile(`^([0-9]{3})\b`)

func routeTableCells(readme string) map[string]tableCells {
	out := map[string]tableCells{}
	section := ""
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		m := routeCellRE.FindStringSubmatch(line)
		if section != "Routes" || m == nil {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 6 {
			continue
		}
		c := tableCells{function: strings.TrimSpace(cells[2]), auth: strings.TrimSpace(cells[3])}
		if s := leadingStatusRE.FindString(strings.TrimSpace(cells[4])); s != "" {
			c.success, _ = strconv.Atoi(s)
		}
		out[m[1]+" "+m[2]] = c
	}
	return out
}

// servesRouteRE is a route in the functions table at the top of
// functions/README.md, after "`GET`/`POST /me`" is read as "`GET/POST /me`".
var servesRouteRE = regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE)(?:/(?:GET|POST|PUT|PATCH|DELETE))*) (/[^`?\\s]*)`")

// checkFunctionTable compares the table of functions at the top of
// functions/README.md ("| function | serves | trigger |") with the document:
// every route a function's row names is that function's in the document, and
// every route of the document but the console's pages is named in its
// function's row.
func checkFunctionTable(readme string, doc map[string]operation) []string {
	var problems []string
	named := map[string]string{}
	for i, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "## ") {
			break // the table is above the first section
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		fn := strings.Trim(strings.TrimSpace(cells[1]), "`")
		serves := strings.ReplaceAll(cells[2], "`/`", "/")
		for _, m := range servesRouteRE.FindAllStringSubmatch(serves, -1) {
			for _, method := range strings.Split(m[1], "/") {
				r := method + " " + m[2]
				named[r] = fn
				if op, ok := doc[r]; !ok {
					problems = append(problems, fmt.Sprintf("functions/README.md:%d: the %s row names %s, which is not in shared/openapi/openapi.yaml", i+1, fn, r))
				} else if op.function != fn {
					problems = append(problems, fmt.Sprintf("functions/README.md:%d: the %s row names %s, which the document gives to %s", i+1, fn, r, op.function))
				}
			}
		}
	}
	if len(named) == 0 {
		return []string{"functions/README.md has no routes in its table of functions: the parser is broken"}
	}
	for _, r := range sortedKeys(doc) {
		if _, ok := named[r]; !ok && !doc[r].console {
			problems = append(problems, fmt.Sprintf("shared/openapi/openapi.yaml: %s is missing from the %s row of functions/README.md's table of functions", r, doc[r].function))
		}
	}
	return problems
}

func theDocument(t *testing.T) map[string]operation {
	t.Helper()
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := documentOperations(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func registeredRoutes() map[string]string {
	code := map[string]string{}
	for fn, rt := range routers() {
		for _, r := range rt.Routes() {
			code[r] = fn
		}
	}
	return code
}

// TestOpenAPIListsEveryRoute: the document's operations are the routes the
// routers register, the console's pages included, each under its function.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	for _, p := range checkDocumentRoutes(theDocument(t), registeredRoutes()) {
		t.Error(p)
	}
}

// TestREADMERouteTablesMatchOpenAPI: functions/README.md's table of functions
// and its Routes table say what the document says.
func TestREADMERouteTablesMatchOpenAPI(t *testing.T) {
	readme := read(t, repoRoot(t), "functions/README.md")
	doc := theDocument(t)
	for _, p := range append(checkRouteTable(readme, doc), checkFunctionTable(readme, doc)...) {
		t.Error(p)
	}
}

func TestOpenAPIChecksCatchPlantedErrors(t *testing.T) {
	readme := read(t, repoRoot(t), "functions/README.md")
	doc := theDocument(t)
	code := registeredRoutes()
	if p := append(checkRouteTable(readme, doc), checkFunctionTable(readme, doc)...); len(p) > 0 {
		t.Fatalf("the real README fails: %v", p)
	}
	if p := checkDocumentRoutes(doc, code); len(p) > 0 {
		t.Fatalf("the real document fails: %v", p)
	}
	without := func(r string) map[string]operation {
		d := map[string]operation{}
		for k, v := range doc {
			if k != r {
				d[k] = v
			}
		}
		return d
	}

	t.Run("a console route the document lacks", func(t *testing.T) {
		// What happens when a route is added to the console and not to the document.
		withNew := map[string]string{"GET /admin/staff-list": "admin"}
		for k, v := range code {
			withNew[k] = v
		}
		expect(t, checkDocumentRoutes(doc, withNew), `GET /admin/staff-list (function admin) is registered but not in shared/openapi/openapi.yaml: add under paths: "/admin/staff-list": get: an operation with x-function: admin, tags: [console]`)
	})
	t.Run("a JSON route the document lacks", func(t *testing.T) {
		expect(t, checkDocumentRoutes(without("GET /bookings/mine"), code), `GET /bookings/mine (function reserve) is registered but not in shared/openapi/openapi.yaml: add under paths: "/bookings/mine": get:`)
	})
	t.Run("a route in the document nobody serves", func(t *testing.T) {
		d := without("")
		d["GET /bookings/all"] = operation{function: "reserve", auth: "customer", success: 200}
		expect(t, checkDocumentRoutes(d, code), "GET /bookings/all is in the document, but no router registers it")
		expect(t, checkRouteTable(readme, d), "GET /bookings/all is missing from functions/README.md's Routes table")
	})
	t.Run("a route under the wrong function in the document", func(t *testing.T) {
		d := without("")
		d["POST /bookings/{id}/cancel"] = operation{function: "reserve", auth: "customer", success: 200}
		expect(t, checkDocumentRoutes(d, code), `POST /bookings/{id}/cancel has x-function "reserve", but cancel's router registers it`)
	})
	t.Run("a Routes row the document lacks", func(t *testing.T) {
		bad := plant(t, readme, "| `GET /bookings/mine` | reserve |", "| `GET /bookings/all` | reserve |")
		expect(t, checkRouteTable(bad, doc), "GET /bookings/all is in the Routes table, but not in shared/openapi/openapi.yaml")
		expect(t, checkRouteTable(bad, doc), "GET /bookings/mine is missing from functions/README.md's Routes table")
	})
	t.Run("a wrong success status", func(t *testing.T) {
		bad := plant(t, readme, "| `POST /slots/{id}/waitlist` | reserve | customer | 201", "| `POST /slots/{id}/waitlist` | reserve | customer | 200")
		expect(t, checkRouteTable(bad, doc), "POST /slots/{id}/waitlist succeeds with 200 in the Routes table, 201 in the document")
	})
	t.Run("a wrong auth", func(t *testing.T) {
		bad := plant(t, readme, "| `GET /me` | reserve | customer |", "| `GET /me` | reserve | none |")
		expect(t, checkRouteTable(bad, doc), `GET /me needs "none" in the Routes table, "customer" in the document`)
	})
	t.Run("a wrong function in the table of functions", func(t *testing.T) {
		bad := plant(t, readme, "| `login` | `POST /login` |", "| `login` | `POST /login`, `GET /me` |")
		expect(t, checkFunctionTable(bad, doc), "the login row names GET /me, which the document gives to reserve")
	})
	t.Run("a route missing from the table of functions", func(t *testing.T) {
		bad := plant(t, readme, ", `GET /config`", "")
		expect(t, checkFunctionTable(bad, doc), "GET /config is missing from the slots row")
	})
}
