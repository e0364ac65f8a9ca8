package openapi

// The document as generators read it: a client generator (oapi-codegen for
// Go, openapi-typescript) makes a type of each schema from its `type`, so a
// schema without one where one is expected becomes interface{} / unknown; and
// strict YAML 1.2 tools refuse merge keys, which only YAML 1.1 knew. Each check
// is a function over the document's text, and TestDocumentChecksCatchPlantedErrors
// feeds them copies with a mistake planted.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
	"gopkg.in/yaml.v3"
)

// checkNoMergeKeys lists every YAML merge key (`<<:`) of a document: YAML 1.2
// has none, and a strict parser reads `<<` as an ordinary key or refuses it.
func checkNoMergeKeys(doc []byte) []string {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.Value == "<<" || k.Tag == "!!merge" {
					problems = append(problems, fmt.Sprintf("line %d: a YAML merge key (<<); write the keys out", k.Line))
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return problems
}

// idProperty is a property that names one of the product's ids: "slotId",
// "bookingId" (not "openid", WeChat's string, nor the "id" of WeChat Pay's
// notification); idParameter a path parameter that does, "id" too.
var (
	idProperty  = regexp.MustCompile(`^[a-z]+Id$`)
	idParameter = regexp.MustCompile(`^(id|[a-z]+Id)$`)
)

// datePattern is the pattern of a shop date.
const datePattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

// checkTypes walks every schema of a document (components, and every
// parameter, header, request body and answer of every operation, inline
// schemas included) and lists each one a generator cannot type:
//   - a schema that is not a composition (allOf, oneOf, anyOf) without a type;
//   - an enum or a const without a type (enum: [BAD_REQUEST] alone is
//     interface{} in Go);
//   - a property or parameter naming an id that is not an integer of format
//     int64 with a maximum;
//   - a string with the date pattern without format date.
func checkTypes(doc []byte) []string {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return []string{err.Error()}
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	seen := map[string]bool{} // where each schema was checked
	var schema func(at string, p *base.SchemaProxy)
	schema = func(at string, p *base.SchemaProxy) {
		if p == nil {
			return
		}
		if p.IsReference() {
			at = p.GetReference() // checked where it is defined, once
		}
		if seen[at] {
			return
		}
		seen[at] = true
		s := p.Schema()
		if s == nil {
			problems = append(problems, fmt.Sprintf("%s: the schema cannot be built: %v", at, p.GetBuildError()))
			return
		}
		composed := len(s.AllOf) > 0 || len(s.OneOf) > 0 || len(s.AnyOf) > 0
		switch {
		case len(s.Type) == 0 && (len(s.Enum) > 0 || s.Const != nil):
			problems = append(problems, fmt.Sprintf("%s: an enum or const without a type", at))
		case len(s.Type) == 0 && !composed:
			problems = append(problems, fmt.Sprintf("%s: a schema without a type", at))
		}
		if s.Pattern == datePattern && s.Format != "date" {
			problems = append(problems, fmt.Sprintf("%s: a date without format: date", at))
		}
		for i, c := range s.AllOf {
			schema(fmt.Sprintf("%s/allOf/%d", at, i), c)
		}
		for i, c := range s.OneOf {
			schema(fmt.Sprintf("%s/oneOf/%d", at, i), c)
		}
		for i, c := range s.AnyOf {
			schema(fmt.Sprintf("%s/anyOf/%d", at, i), c)
		}
		if s.Items != nil && s.Items.IsA() {
			schema(at+"/items", s.Items.A)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.IsA() {
			schema(at+"/additionalProperties", s.AdditionalProperties.A)
		}
		for name, c := range orderedmap.SortAlpha(s.Properties).FromOldest() {
			if idProperty.MatchString(name) {
				problems = append(problems, checkID(at+"/properties/"+name, c)...)
			}
			schema(at+"/properties/"+name, c)
		}
	}
	parameters := func(at string, ps []*v3.Parameter) {
		for _, p := range ps {
			where := at + "/parameters/" + p.Name
			if p.Schema == nil {
				problems = append(problems, where+": a parameter without a schema")
				continue
			}
			if idParameter.MatchString(p.Name) && p.In == "path" {
				problems = append(problems, checkID(where, p.Schema)...)
			}
			schema(where, p.Schema)
		}
	}
	content := func(at string, c *orderedmap.Map[string, *v3.MediaType]) {
		for media, mt := range orderedmap.SortAlpha(c).FromOldest() {
			if mt.Schema == nil {
				problems = append(problems, fmt.Sprintf("%s/content/%s: no schema", at, media))
				continue
			}
			schema(fmt.Sprintf("%s/content/%s", at, media), mt.Schema)
		}
	}
	response := func(at string, r *v3.Response) {
		content(at, r.Content)
		for name, h := range orderedmap.SortAlpha(r.Headers).FromOldest() {
			schema(at+"/headers/"+name, h.Schema)
		}
	}
	if c := m.Model.Components; c != nil {
		for name, p := range orderedmap.SortAlpha(c.Schemas).FromOldest() {
			schema("#/components/schemas/"+name, p)
		}
	}
	for path, item := range orderedmap.SortAlpha(m.Model.Paths.PathItems).FromOldest() {
		parameters(path, item.Parameters)
		for method, op := range orderedmap.SortAlpha(item.GetOperations()).FromOldest() {
			at := method + " " + path
			parameters(at, op.Parameters)
			if op.RequestBody != nil {
				content(at+" requestBody", op.RequestBody.Content)
			}
			if op.Responses == nil {
				continue
			}
			for code, r := range orderedmap.SortAlpha(op.Responses.Codes).FromOldest() {
				response(at+" "+code, r)
			}
			if op.Responses.Default != nil {
				response(at+" default", op.Responses.Default)
			}
		}
	}
	return problems
}

// checkID checks the schema of an id: an integer of format int64 (a generator
// makes it an int64, not an int or a float) with the maximum an int64 holds.
// An id that may be null (a booking's serviceId, a technician's staffId) is
// the same integer with "null" beside it in type, which a generator makes a
// pointer or a `number | null`, never a wrapper of no type.
func checkID(at string, p *base.SchemaProxy) []string {
	s := p.Schema()
	if s == nil {
		return nil // reported by the walk
	}
	types := slices.Sorted(slices.Values(s.Type))
	integer := slices.Equal(types, []string{"integer"}) || slices.Equal(types, []string{"integer", "null"})
	if !integer || s.Format != "int64" || s.Maximum == nil {
		return []string{fmt.Sprintf("%s: an id that is not {type: integer, format: int64, maximum}, or type [integer, \"null\"] where it may be null (type %v, format %q)", at, s.Type, s.Format)}
	}
	return nil
}

// TestDocumentHasNoMergeKeys: the document is YAML 1.2, without the merge
// keys of YAML 1.1.
func TestDocumentHasNoMergeKeys(t *testing.T) {
	for _, p := range checkNoMergeKeys(YAML) {
		t.Error(p)
	}
}

// TestDocumentIsTyped: every schema a generator reads has a type where one is
// expected, every enum and const among them, and every id is an int64.
func TestDocumentIsTyped(t *testing.T) {
	doc, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkTypes(doc) {
		t.Error(p)
	}
}

func TestDocumentChecksCatchPlantedErrors(t *testing.T) {
	plant := func(t *testing.T, old, new string) []byte {
		t.Helper()
		if !strings.Contains(string(YAML), old) {
			t.Fatalf("nothing to plant into: %q is not in the document", old)
		}
		return []byte(strings.Replace(string(YAML), old, new, 1))
	}
	typesOf := func(t *testing.T, doc []byte) string {
		t.Helper()
		j, err := ToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(checkTypes(j), "\n")
	}
	expect := func(t *testing.T, got, want string) {
		t.Helper()
		if !strings.Contains(got, want) {
			t.Errorf("not caught (want %q):\n%s", want, got)
		}
	}
	t.Run("a merge key", func(t *testing.T) {
		doc := plant(t, "    Slot:\n      type: object\n      additionalProperties: false\n      required: [slotId, startAt, endAt, capacity, remaining, priceFen, bookable]\n      properties:\n",
			"    Slot:\n      type: object\n      additionalProperties: false\n      required: [slotId, startAt, endAt, capacity, remaining, priceFen, bookable]\n      properties: &slotProperties\n")
		doc = []byte(strings.Replace(string(doc), "        open: {type: boolean, description: \"False once", "        <<: *slotProperties\n        open: {type: boolean, description: \"False once", 1))
		expect(t, strings.Join(checkNoMergeKeys(doc), "\n"), "a YAML merge key")
	})
	t.Run("an error code without a type", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "{code: {type: string, enum: [BAD_REQUEST]}}", "{code: {enum: [BAD_REQUEST]}}")),
			"#/components/schemas/Error400/allOf/1/properties/code: an enum or const without a type")
	})
	t.Run("a const without a type", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "signType: {type: string, const: RSA}", "signType: {const: RSA}")),
			"#/components/schemas/Payment/properties/signType: an enum or const without a type")
	})
	t.Run("an inline answer without a type", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "status: {type: string, const: ok}", "status: {description: ok}")),
			"get /healthz 200/content/application/json/properties/status: a schema without a type")
	})
	t.Run("an id without int64", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "        slotId: {$ref: \"#/components/schemas/ID\"}\n        position:", "        slotId: {type: integer, minimum: 1}\n        position:")),
			"#/components/schemas/WaitlistEntry/properties/slotId: an id that is not {type: integer, format: int64, maximum}")
	})
	t.Run("a nullable id without int64", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "    NullableID:\n      type: [integer, \"null\"]\n      format: int64\n", "    NullableID:\n      type: [integer, \"null\"]\n")),
			"#/components/schemas/Booking/properties/serviceId: an id that is not")
	})
	t.Run("a nullable id of another type", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "    NullableID:\n      type: [integer, \"null\"]\n", "    NullableID:\n      type: [string, \"null\"]\n")),
			"#/components/schemas/Technician/properties/staffId: an id that is not")
	})
	t.Run("a path id without int64", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "        description: The customer's id.\n        schema: {$ref: \"#/components/schemas/ID\"}", "        description: The customer's id.\n        schema: {type: integer}")),
			"/admin/customers/{customerId}/parameters/customerId: an id that is not")
	})
	t.Run("a date without format", func(t *testing.T) {
		expect(t, typesOf(t, plant(t, "      type: string\n      format: date\n", "      type: string\n")),
			"#/components/schemas/Date: a date without format: date")
	})
}
