package doccheck

// The mini-program guide in functions/README.md ("For the mini-program") shows
// JavaScript a mini-program would run. Its calls and the fields it reads and
// sends must be the OpenAPI document's, or a client developer copies a call
// that cannot work.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"salon/shared/openapi"
)

var (
	// call('GET', '/bookings/' + booking.bookingId) and call('PUT', '/me', { phoneCode: ... })
	guideCallRE = regexp.MustCompile(`call\('([A-Z]+)', '([^']*)'( \+ [\w.]+)?(?:, \{([^}]*)\})?`)
	// const { booking, payment } = await call(...), const { booking: b } = ...
	guideDestructureRE = regexp.MustCompile(`const \{([^}]*)\} = await call`)
	// b.status, booking.bookingId, customer.phoneMasked, config.subscribeTemplates
	guideMemberRE = regexp.MustCompile(`\b(?:booking|b|customer|config)\.(\w+)`)
	guideKeyRE    = regexp.MustCompile(`(\w+)\s*(?::|,|$)`)
)

// guideCode is the JavaScript of the guide's section.
func guideCode(readme string) string {
	start := strings.Index(readme, "\n## For the mini-program\n")
	if start < 0 {
		return ""
	}
	rest := readme[start+1:]
	if end := strings.Index(rest[3:], "\n## "); end >= 0 {
		rest = rest[:end+3]
	}
	var code []string
	for i, block := range strings.Split(rest, "```") {
		if i%2 == 1 && strings.HasPrefix(block, "js\n") {
			code = append(code, block)
		}
	}
	return strings.Join(code, "\n")
}

// propertyNames are every property any schema of the document names.
func propertyNames(doc []byte) (map[string]bool, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for k := range props {
					names[k] = true
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return names, nil
}

// checkGuide returns the calls and fields of the guide's code the document
// does not have.
func checkGuide(readme string, doc map[string]operation, props map[string]bool) []string {
	code := guideCode(readme)
	calls := guideCallRE.FindAllStringSubmatch(code, -1)
	if len(calls) == 0 {
		return []string{"functions/README.md: no call('METHOD', '/path') in the mini-program guide: the parser is broken"}
	}
	var problems []string
	field := func(name, where string) {
		if !props[name] {
			problems = append(problems, fmt.Sprintf("functions/README.md, mini-program guide: %s uses the field %q, which no schema of shared/openapi/openapi.yaml has", where, name))
		}
	}
	for _, m := range calls {
		path := m[2]
		if m[3] != "" {
			path += "{}" // the expression appended fills the last segment
		}
		if !guideRouteExists(doc, m[1], path) {
			problems = append(problems, fmt.Sprintf("functions/README.md, mini-program guide: %s %s is not an operation of shared/openapi/openapi.yaml", m[1], path))
		}
		for _, k := range guideKeyRE.FindAllStringSubmatch(m[4], -1) {
			field(k[1], m[1]+" "+m[2]+"'s body")
		}
	}
	for _, m := range guideDestructureRE.FindAllStringSubmatch(code, -1) {
		for _, part := range strings.Split(m[1], ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), ":")
			field(strings.TrimSpace(name), "an answer read as {"+m[1]+"}")
		}
	}
	for _, m := range guideMemberRE.FindAllStringSubmatch(code, -1) {
		field(m[1], m[0])
	}
	return problems
}

// guideRouteExists matches a guide path ("{}" for a segment filled in) to the
// document's templates.
func guideRouteExists(doc map[string]operation, method, path string) bool {
	segs := strings.Split(path, "/")
	for r := range doc {
		m, template, _ := strings.Cut(r, " ")
		ts := strings.Split(template, "/")
		if m != method || len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			param := strings.HasPrefix(ts[i], "{")
			if (segs[i] == "{}") != param || (!param && ts[i] != segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func guideInputs(t *testing.T) (string, map[string]operation, map[string]bool) {
	t.Helper()
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	props, err := propertyNames(b)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, repoRoot(t), "functions/README.md"), theDocument(t), props
}

// TestGuideUsesTheDocument: the guide's snippets call only operations of the
// document and use only fields its schemas have.
func TestGuideUsesTheDocument(t *testing.T) {
	readme, doc, props := guideInputs(t)
	for _, p := range checkGuide(readme, doc, props) {
		t.Error(p)
	}
}

func TestGuideCheckCatchesPlantedErrors(t *testing.T) {
	readme, doc, props := guideInputs(t)
	for _, c := range []struct{ old, new, want string }{
		{"b.status === 'confirmed'", "b.state === 'confirmed'", `b.state uses the field "state"`},
		{"call('GET', '/bookings/' + booking.bookingId)", "call('GET', '/booking/' + booking.bookingId)", "GET /booking/{} is not an operation"},
		{"call('PUT', '/me', { phoneCode: e.detail.code })", "call('PUT', '/me', { phoneNumber: e.detail.code })", `uses the field "phoneNumber"`},
		{"const { booking, payment } = await call", "const { booking, pay } = await call", `uses the field "pay"`},
	} {
		if !strings.Contains(readme, c.old) {
			t.Fatalf("nothing to plant into: %q is not in the guide", c.old)
		}
		bad := strings.Replace(readme, c.old, c.new, 1)
		if p := checkGuide(bad, doc, props); !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("planted %q not reported (want %q): %v", c.new, c.want, p)
		}
	}
}

// guideAdapter is the TypeScript block of the guide that is the wx.request
// adapter (it starts "// wxrequest.ts"), "" when there is none.
func guideAdapter(readme string) string {
	for i, block := range strings.Split(readme, "```") {
		if i%2 == 1 && strings.HasPrefix(block, "ts\n// wxrequest.ts") {
			return strings.TrimPrefix(block, "ts\n")
		}
	}
	return ""
}

// checkGuideAdapter compares the guide's adapter with the file scripts/test.sh
// type-checks against the generated types (functions/openapi/wxrequest.ts).
func checkGuideAdapter(readme, file string) []string {
	got := guideAdapter(readme)
	switch {
	case got == "":
		return []string{"functions/README.md, mini-program guide: no ```ts block starting // wxrequest.ts: the adapter is missing or the parser is broken"}
	case got != file:
		return []string{"functions/README.md, mini-program guide: the wx.request adapter is not functions/openapi/wxrequest.ts as committed (the file is what the tests type-check): copy the file into the guide"}
	}
	return nil
}

// TestGuideAdapterIsTheCheckedFile: the guide's wx.request adapter is, to the
// byte, the file tsc checks against openapi.d.ts.
func TestGuideAdapterIsTheCheckedFile(t *testing.T) {
	root := repoRoot(t)
	readme, file := read(t, root, "functions/README.md"), read(t, root, "functions/openapi/wxrequest.ts")
	for _, p := range checkGuideAdapter(readme, file) {
		t.Error(p)
	}
	t.Run("planted", func(t *testing.T) {
		const old = `header["Authorization"] = "Bearer " + init.token;`
		if !strings.Contains(readme, old) {
			t.Fatalf("nothing to plant into: %q is not in the guide", old)
		}
		bad := strings.Replace(readme, old, `header["Authorization"] = init.token;`, 1)
		if p := checkGuideAdapter(bad, file); len(p) == 0 {
			t.Error("a guide whose adapter differs from the file passes")
		}
		if p := checkGuideAdapter(strings.Replace(readme, "```ts\n// wxrequest.ts", "```ts\n// adapter.ts", 1), file); len(p) == 0 {
			t.Error("a guide without the adapter passes")
		}
	})
}
