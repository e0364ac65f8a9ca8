// Package openapi holds the API's OpenAPI 3.1 document, openapi.yaml beside
// this file, which the slots function serves as JSON at GET /openapi.json and
// the tests validate every request and answer against. It is written by hand
// (functions/README.md says why). The document lives here, under shared/,
// because go:embed reaches no file outside its own folder and package handler
// serves it: a package of shared/ imports nothing of functions/. Its TypeScript
// types and the tools that generate and lint them stay in functions/openapi,
// where a mini-program team looks for them.
package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// YAML is the document as written.
//
//go:embed openapi.yaml
var YAML []byte

// JSON returns the document as JSON, converted once. A document that is not
// valid YAML, or has a key that is not a string, is a programming error that
// every test reports; JSON then answers the error.
func JSON() ([]byte, error) { return jsonOnce() }

var jsonOnce = sync.OnceValues(func() ([]byte, error) { return ToJSON(YAML) })

// RequestPath is the path a request for the document's path key p is sent to:
// p without its fragment. The console's start page is the path "/admin/", which
// the document writes "/admin/#today" because the linter's rules refuse a path
// key ending in "/"; a client never sends a URL's fragment, and the validator
// matches a key by its path alone (functions/README.md, "The OpenAPI document").
func RequestPath(p string) string {
	path, _, _ := strings.Cut(p, "#")
	return path
}

// ToJSON converts an OpenAPI document written in YAML (anchors resolved; the
// document has no merge keys, which YAML 1.2 does not know) to JSON, with the keys of every object sorted.
func ToJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if err := stringKeys(v, ""); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// stringKeys checks that every mapping of the document has string keys, as JSON
// needs: a status code written 200 instead of "200" is an int to YAML.
func stringKeys(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if err := stringKeys(e, at+"/"+k); err != nil {
				return err
			}
		}
	case map[any]any:
		for k := range v {
			return fmt.Errorf("openapi: %s: key %v is not a string (quote it)", at, k)
		}
	case []any:
		for i, e := range v {
			if err := stringKeys(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
