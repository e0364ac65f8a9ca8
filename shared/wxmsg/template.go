// Package wxmsg is WeChat's server API for the product's notifications: the access
// token (cgi-bin/stable_token, shared by every instance through a TokenStore) and
// subscribe messages (cgi-bin/message/subscribe/send), with the templates that
// shape them from the WX_TMPL_* settings.
package wxmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"salon/shared/booking"
)

// TimeLayout is how {startAt} and {endAt} are written, in the shop's zone: WeChat's
// time and date keywords accept it.
const TimeLayout = "2006-01-02 15:04"

// maxSetting bounds one WX_TMPL_* value; a real template is a few hundred bytes.
const maxSetting = 4096

// keywordType is a template keyword's type, named by the prefix of its name
// (thing1, time2, ...). WeChat refuses a value over its type's limit (47003), so
// Render trims to it.
type keywordType struct {
	prefix string
	limit  int // in characters (runes); 0: a format (time, date, amount), not trimmed
}

// keywordTypes are WeChat's subscribe-message keyword types and their limits.
var keywordTypes = []keywordType{
	{"thing", 20},
	{"number", 32},
	{"letter", 32},
	{"symbol", 5},
	{"character_string", 32},
	{"time", 0},
	{"date", 0},
	{"amount", 0},
	{"phone_number", 17},
	{"car_number", 8},
	{"name", 10},
	{"phrase", 5},
}

// typeOf returns the type of a keyword name: a known type followed by its number,
// as WeChat names them.
func typeOf(name string) (keywordType, bool) {
	for _, t := range keywordTypes {
		rest, ok := strings.CutPrefix(name, t.prefix)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return t, true
		}
	}
	return keywordType{}, false
}

// placeholders are the names a template's texts may use, in braces.
var placeholders = map[string]bool{
	"bookingId":  true,
	"startAt":    true,
	"endAt":      true,
	"amountYuan": true,
	"shopName":   true,
}

// Template is one kind's subscribe-message template, parsed from its setting.
type Template struct {
	ID       string // the template id from the mini-program's console
	Page     string // the page the message opens, with placeholders; empty: none
	keywords []keyword
}

type keyword struct {
	name string
	typ  keywordType
	text string // with placeholders
}

// Keywords returns the template's keyword names, sorted.
func (t *Template) Keywords() []string {
	names := make([]string, len(t.keywords))
	for i, k := range t.keywords {
		names[i] = k.name
	}
	return names
}

// SettingFor names the setting that configures kind's template (WX_TMPL_CONFIRMED, ...).
func SettingFor(kind booking.NotificationKind) string {
	return "WX_TMPL_" + strings.ToUpper(string(kind))
}

// TemplatesFromEnv reads every kind's template from its setting. An unset setting
// turns that kind off (it is absent from the map); a bad one is reported as an error
// naming the setting and also turns only that kind off. Errors never quote the
// setting's value, in case a secret was pasted into the wrong variable.
func TemplatesFromEnv(getenv func(string) string) (map[booking.NotificationKind]*Template, []error) {
	out := map[booking.NotificationKind]*Template{}
	var errs []error
	for _, kind := range booking.NotificationKinds {
		name := SettingFor(kind)
		raw := getenv(name)
		if strings.TrimSpace(raw) == "" {
			continue
		}
		t, err := ParseTemplate(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w; %s notifications are off", name, err, kind))
			continue
		}
		out[kind] = t
	}
	return out, errs
}

// ParseTemplate parses one template setting:
//
//	{"id":"<template id>","page":"pages/booking/detail?id={bookingId}","data":{"time2":"{startAt}","thing1":"{shopName}"}}
//
// Strictly: no unknown fields, an id, at least one keyword, every keyword name a
// known type followed by its number, every text non-empty, every {placeholder} known.
func ParseTemplate(raw string) (*Template, error) {
	if len(raw) > maxSetting {
		return nil, fmt.Errorf("longer than %d bytes", maxSetting)
	}
	var in struct {
		ID   *string            `json:"id"`
		Page *string            `json:"page"`
		Data *map[string]string `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	if in.ID == nil || strings.TrimSpace(*in.ID) == "" {
		return nil, errors.New(`"id" is missing`)
	}
	id := *in.ID
	if len(id) > 128 || strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, errors.New(`"id" is not a template id (printable ASCII, at most 128 characters)`)
	}
	t := &Template{ID: id}
	if in.Page != nil {
		t.Page = *in.Page
		if err := checkText(t.Page); err != nil {
			return nil, fmt.Errorf(`"page": %w`, err)
		}
	}
	if in.Data == nil || len(*in.Data) == 0 {
		return nil, errors.New(`"data" has no keywords`)
	}
	for name, text := range *in.Data {
		typ, ok := typeOf(name)
		if !ok {
			return nil, fmt.Errorf("keyword %q does not start with a WeChat keyword type (thing, time, amount, ...) followed by its number", clip(name))
		}
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("keyword %s has no text", name)
		}
		if err := checkText(text); err != nil {
			return nil, fmt.Errorf("keyword %s: %w", name, err)
		}
		t.keywords = append(t.keywords, keyword{name: name, typ: typ, text: text})
	}
	sort.Slice(t.keywords, func(i, j int) bool { return t.keywords[i].name < t.keywords[j].name })
	return t, nil
}

// describeJSONError turns a decoding error into one that names where, not what:
// the value is not quoted back.
func describeJSONError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not a JSON object (syntax error at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return errors.New("not a JSON object")
	case errors.As(err, &typ) && typ.Field == "data":
		return errors.New(`"data" must be an object of strings`)
	case errors.As(err, &typ):
		return fmt.Errorf("%q must be a string", clip(typ.Field))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not a complete JSON object")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown field %s (want id, page, data)", clip(strings.TrimPrefix(err.Error(), "json: unknown field ")))
	default:
		return errors.New("not a JSON object of id, page and data")
	}
}

// checkText checks that every {placeholder} in s is known and every brace closed.
func checkText(s string) error {
	for {
		i := strings.IndexAny(s, "{}")
		if i < 0 {
			return nil
		}
		if s[i] == '}' {
			return errors.New(`"}" without "{"`)
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return errors.New(`"{" without "}"`)
		}
		name := s[i+1 : i+j]
		if !placeholders[name] {
			return fmt.Errorf("unknown placeholder {%s} (known: {bookingId} {startAt} {endAt} {amountYuan} {shopName})", clip(name))
		}
		s = s[i+j+1:]
	}
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 32 {
		return s
	}
	return string([]rune(s)[:32]) + "…"
}

// Values are the facts a message may name.
type Values struct {
	BookingID      int64
	StartAt, EndAt time.Time
	AmountFen      int64
	ShopName       string
}

// Render fills the template for v: the page (each placeholder's value
// query-escaped, since the page is a path with a query) and each keyword's value,
// cleaned of control characters and line breaks, and trimmed to its type's limit so
// WeChat does not refuse it (a thing cut short ends with "…"). Times are written in
// loc (nil: UTC).
func (t *Template) Render(v Values, loc *time.Location) (page string, data map[string]string) {
	if loc == nil {
		loc = time.UTC
	}
	vals := map[string]string{
		"bookingId":  strconv.FormatInt(v.BookingID, 10),
		"startAt":    v.StartAt.In(loc).Format(TimeLayout),
		"endAt":      v.EndAt.In(loc).Format(TimeLayout),
		"amountYuan": yuan(v.AmountFen),
		"shopName":   v.ShopName,
	}
	page = fill(t.Page, func(name string) string { return url.QueryEscape(vals[name]) })
	data = make(map[string]string, len(t.keywords))
	for _, k := range t.keywords {
		data[k.name] = limit(clean(fill(k.text, func(name string) string { return vals[name] })), k.typ)
	}
	return page, data
}

// fill replaces each {placeholder} of s (all known: ParseTemplate checked them).
func fill(s string, value func(string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(value(s[i+1 : i+j]))
		s = s[i+j+1:]
	}
}

// yuan writes fen as yuan with two decimals: 5000 -> "50.00".
func yuan(fen int64) string {
	sign := ""
	if fen < 0 {
		sign, fen = "-", -fen
	}
	return fmt.Sprintf("%s%d.%02d", sign, fen/100, fen%100)
}

// clean turns line breaks, tabs and other control or invisible format characters
// into single spaces and trims the ends: WeChat allows none of them in a value.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "")
	var b bytes.Buffer
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// limit trims s to typ's limit in characters.
func limit(s string, typ keywordType) string {
	if typ.limit == 0 || utf8.RuneCountInString(s) <= typ.limit {
		return s
	}
	r := []rune(s)
	if typ.prefix == "thing" {
		return strings.TrimSpace(string(r[:typ.limit-1])) + "…"
	}
	return strings.TrimSpace(string(r[:typ.limit]))
}
