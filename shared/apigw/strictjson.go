package apigw

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"salon/shared/booking"
)

// checkKeys walks the JSON value in body alongside the Go type t it will be
// decoded into and refuses what encoding/json lets through although the
// contract does not (functions/README.md, "Conventions"):
//   - a key given twice in one object (encoding/json keeps the last, so
//     {"slotId":1,"slotId":2} would silently mean slot 2);
//   - a key that names a struct field only case-insensitively (encoding/json
//     folds case, and folds 'ſ' to 's' and 'K' (Kelvin) to 'k'), so
//     {"SLOTID":36} would mean slotId;
//   - null anywhere inside the body (a field's value, an array's element, a
//     map's value) unless the field is on the allow-list of nullable fields: its
//     struct tag says `apigw:"nullable"`. encoding/json decodes null into any
//     field as "leave it alone", so {"capacity":null} would read as a body
//     without capacity and {"forfeitDeposit":null} as false; the contract
//     refuses null for every field it does not mark nullable.
//
// It answers BAD_REQUEST for those, nil for a body that passes, and errSyntax
// when the body is not well-formed JSON: the decoder then reports that in its
// own words, so that malformed input is described the same as before.
func checkKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay text: 1e309 is the decoder's to judge, not an error here
	return (&keyWalker{dec: dec}).value(t, 0, "", false)
}

var errSyntax = errors.New("not well-formed JSON")

// maxDepth is encoding/json's own nesting limit; deeper input is its error.
const maxDepth = 10000

type keyWalker struct{ dec *json.Decoder }

// value checks the next JSON value, to be decoded into t; at names where it
// is (a field's key, "[]" for an element) for the message, and nullable says
// whether null may stand there.
func (w *keyWalker) value(t reflect.Type, depth int, at string, nullable bool) error {
	if depth > maxDepth {
		return errSyntax
	}
	tok, err := w.dec.Token()
	if err != nil {
		return errSyntax
	}
	t = indirect(t)
	switch tok {
	case nil:
		if depth > 0 && !nullable {
			return booking.Errorf(booking.EBADREQUEST, "%.40s: null is not a value of this field", at)
		}
	case json.Delim('{'):
		var fields map[string]field
		var elem reflect.Type // the type of every value, for a map
		switch {
		case t == nil:
		case t.Kind() == reflect.Struct:
			fields = fieldsOf(t)
		case t.Kind() == reflect.Map:
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for w.dec.More() {
			tok, err := w.dec.Token()
			if err != nil {
				return errSyntax
			}
			key, ok := tok.(string)
			if !ok {
				return errSyntax
			}
			if seen[key] {
				return booking.Errorf(booking.EBADREQUEST, "duplicate key %.40q", key)
			}
			seen[key] = true
			next, nullable := elem, false
			if fields != nil {
				f, ok := fields[key]
				if !ok {
					return booking.Errorf(booking.EBADREQUEST, "unknown field %.40q (names match exactly)", key)
				}
				next, nullable = f.typ, f.nullable
			}
			if err := w.value(next, depth+1, strconv.Quote(key), nullable); err != nil {
				return err
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return errSyntax
		}
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for w.dec.More() {
			if err := w.value(elem, depth+1, at+"[]", false); err != nil {
				return err
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return errSyntax
		}
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// indirect returns the type whose shape the JSON must have: pointers followed;
// nil (any shape, only duplicate keys checked) for an interface or a type that
// decodes itself.
func indirect(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// field is a struct field as the body names it: the type its value decodes
// into, and whether null may stand for it.
type field struct {
	typ      reflect.Type
	nullable bool
}

// NullableTag is the struct tag that puts a request field on the allow-list of
// nullable fields (`json:"staffId" apigw:"nullable"`): the contract marks it
// nullable, and null means something there (it decodes into a nil pointer).
// Every other field refuses null.
const NullableTag = "nullable"

// fieldsOf lists the JSON names of struct t as encoding/json names them: the
// tag's name, else the Go name; "-" skipped; unexported fields skipped; the
// fields of an untagged embedded struct promoted (the outer name wins).
func fieldsOf(t reflect.Type) map[string]field {
	out := map[string]field{}
	var promoted []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := indirect(f.Type); et != nil && et.Kind() == reflect.Struct {
				promoted = append(promoted, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = field{typ: f.Type, nullable: f.Tag.Get("apigw") == NullableTag}
	}
	for _, et := range promoted {
		for name, ft := range fieldsOf(et) {
			if _, ok := out[name]; !ok {
				out[name] = ft
			}
		}
	}
	return out
}
