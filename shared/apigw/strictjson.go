package apigw

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
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
//     {"SLOTID":36} would mean slotId.
//
// It answers BAD_REQUEST for those, nil for a body that passes, and errSyntax
// when the body is not well-formed JSON: the decoder then reports that in its
// own words, so that malformed input is described the same as before.
func checkKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay text: 1e309 is the decoder's to judge, not an error here
	return (&keyWalker{dec: dec}).value(t, 0)
}

var errSyntax = errors.New("not well-formed JSON")

// maxDepth is encoding/json's own nesting limit; deeper input is its error.
const maxDepth = 10000

type keyWalker struct{ dec *json.Decoder }

func (w *keyWalker) value(t reflect.Type, depth int) error {
	if depth > maxDepth {
		return errSyntax
	}
	tok, err := w.dec.Token()
	if err != nil {
		return errSyntax
	}
	t = indirect(t)
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
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
			next := elem
			if fields != nil {
				ft, ok := fields[key]
				if !ok {
					return booking.Errorf(booking.EBADREQUEST, "unknown field %.40q (names match exactly)", key)
				}
				next = ft
			}
			if err := w.value(next, depth+1); err != nil {
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
			if err := w.value(elem, depth+1); err != nil {
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

// fieldsOf lists the JSON names of struct t as encoding/json names them: the
// tag's name, else the Go name; "-" skipped; unexported fields skipped; the
// fields of an untagged embedded struct promoted (the outer name wins).
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
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
		out[name] = f.Type
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
