package apigw

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"salon/shared/booking"
)

func TestDecodeJSON(t *testing.T) {
	type login struct {
		Code   string `json:"code"`
		SlotID int64  `json:"slotId"`
	}
	tests := []struct {
		name   string
		body   string
		code   string // "" means success
		detail string // a part of the log detail
	}{
		{"ok", `{"code":"abc","slotId":7}`, "", ""},
		{"ok with whitespace", " \n{\"code\":\"abc\"}\n ", "", ""},
		{"empty body", ``, booking.EBADREQUEST, "empty body"},
		{"blank body", "  \n", booking.EBADREQUEST, "empty body"},
		{"null", `null`, booking.EBADREQUEST, "null"},
		{"malformed", `{"code":}`, booking.EBADREQUEST, "malformed JSON"},
		{"truncated", `{"code":"abc"`, booking.EBADREQUEST, "truncated"},
		{"wrong type string for int", `{"slotId":"7"}`, booking.EBADREQUEST, "slotId"},
		{"wrong type float for int", `{"slotId":1.5}`, booking.EBADREQUEST, "slotId"},
		{"wrong top-level type", `[1]`, booking.EBADREQUEST, "want"},
		{"unknown field", `{"code":"abc","admin":true}`, booking.EBADREQUEST, "unknown field"},
		{"trailing object", `{"code":"abc"}{"code":"x"}`, booking.EBADREQUEST, "trailing data"},
		{"trailing garbage", `{"code":"abc"} x`, booking.EBADREQUEST, "trailing data"},
		{"trailing comma", `{"code":"abc"},`, booking.EBADREQUEST, "trailing data"},
		// encoding/json matches names case-insensitively and keeps the last of a
		// repeated key; the contract wants exact names and each key once.
		{"name in capitals", `{"SLOTID":36}`, booking.EBADREQUEST, "unknown field"},
		{"name in another case", `{"code":"abc","slotid":7}`, booking.EBADREQUEST, "unknown field"},
		{"name with a long s", "{\"code\":\"abc\",\"\u017flotId\":1}", booking.EBADREQUEST, "unknown field"}, // Go folds ſ to s
		{"duplicated key", `{"slotId":1,"slotId":2}`, booking.EBADREQUEST, "duplicate key"},
		{"duplicated key, same value", `{"code":"a","code":"a"}`, booking.EBADREQUEST, "duplicate key"},
		{"duplicated key, other case", `{"slotId":1,"SlotId":2}`, booking.EBADREQUEST, "unknown field"},
		{"duplicated key, escaped", `{"code":"a","c\u006fde":"b"}`, booking.EBADREQUEST, "duplicate key"},
		{"escaped exact name", `{"c\u006fde":"abc"}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v login
			err := DecodeJSON(bodyRequest(tt.body), &v)
			if got := booking.ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.code)
			}
			if err != nil && !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("detail %q does not mention %q", err, tt.detail)
			}
		})
	}
	t.Run("detail never quotes the body", func(t *testing.T) {
		err := DecodeJSON(bodyRequest(`{"slotId":"s3cr3t-value"}`), &login{})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nested objects are checked too", func(t *testing.T) {
		type inner struct {
			N int `json:"n"`
		}
		type outer struct {
			In    inner            `json:"in"`
			List  []inner          `json:"list"`
			Ptr   *inner           `json:"ptr"`
			Map   map[string]int   `json:"map"`
			Any   any              `json:"any"`
			Plain int              // no tag: its Go name, exactly
			Skip  int              `json:"-"`
			Raw   map[string]inner `json:"raw"`
		}
		for body, code := range map[string]string{
			`{"in":{"n":1},"list":[{"n":1},{"n":2}],"ptr":{"n":3},"map":{"a":1,"A":2},"any":{"x":{"y":1}},"Plain":1,"raw":{"k":{"n":1}}}`: "",
			`{"in":{"N":1}}`:              booking.EBADREQUEST,
			`{"in":{"n":1,"n":2}}`:        booking.EBADREQUEST,
			`{"list":[{"n":1},{"N":2}]}`:  booking.EBADREQUEST,
			`{"ptr":{"n":1,"n":1}}`:       booking.EBADREQUEST,
			`{"map":{"a":1,"a":2}}`:       booking.EBADREQUEST,
			`{"any":{"x":{"y":1,"y":2}}}`: booking.EBADREQUEST,
			`{"any":[{"y":1,"y":2}]}`:     booking.EBADREQUEST,
			`{"plain":1}`:                 booking.EBADREQUEST,
			`{"Skip":1}`:                  booking.EBADREQUEST,
			`{"-":1}`:                     booking.EBADREQUEST,
			`{"raw":{"k":{"n":1,"N":2}}}`: booking.EBADREQUEST,
		} {
			if got := booking.ErrorCode(DecodeJSON(bodyRequest(body), &outer{})); got != code {
				t.Errorf("%s: code %q, want %q", body, got, code)
			}
		}
	})
	t.Run("null only where a field allows it", func(t *testing.T) {
		// encoding/json reads null as "leave the field alone"; the contract
		// refuses it for every field but those tagged nullable.
		type inner struct {
			N *int `json:"n"`
		}
		type body struct {
			Count   *int           `json:"count"`
			Flag    bool           `json:"flag"`
			Text    *string        `json:"text"`
			StaffID *int64         `json:"staffId" apigw:"nullable"`
			In      inner          `json:"in"`
			List    []int          `json:"list"`
			Map     map[string]int `json:"map"`
			Any     any            `json:"any"`
		}
		for text, code := range map[string]string{
			`{"count":1,"flag":true,"text":"a","staffId":2}`: "",
			`{"staffId":null}`:        "",
			`{"count":null}`:          booking.EBADREQUEST,
			`{"flag":null}`:           booking.EBADREQUEST,
			`{"text":null}`:           booking.EBADREQUEST,
			`{"count":1,"text":null}`: booking.EBADREQUEST,
			`{"in":null}`:             booking.EBADREQUEST,
			`{"in":{"n":null}}`:       booking.EBADREQUEST,
			`{"list":null}`:           booking.EBADREQUEST,
			`{"list":[1,null]}`:       booking.EBADREQUEST,
			`{"map":{"a":null}}`:      booking.EBADREQUEST,
			`{"any":null}`:            booking.EBADREQUEST,
			`{"any":{"x":[null]}}`:    booking.EBADREQUEST,
		} {
			v := body{Flag: true}
			err := DecodeJSON(bodyRequest(text), &v)
			if got := booking.ErrorCode(err); got != code {
				t.Errorf("%s: code %q (%v), want %q", text, got, err, code)
			}
			if code != "" && (!v.Flag || v.Count != nil || v.Text != nil) {
				t.Errorf("%s: refused, yet the value changed: %+v", text, v)
			}
		}
		v := body{StaffID: new(int64)}
		if err := DecodeJSON(bodyRequest(`{"staffId":null}`), &v); err != nil || v.StaffID != nil {
			t.Errorf("a nullable field's null: err %v, staffId %v, want nil", err, v.StaffID)
		}
	})
	t.Run("a refused body leaves the value alone", func(t *testing.T) {
		v := login{Code: "before"}
		if err := DecodeJSON(bodyRequest(`{"code":"after","CODE":"x"}`), &v); err == nil || v.Code != "before" {
			t.Errorf("err = %v, value %+v", err, v)
		}
	})
	t.Run("non-pointer is internal", func(t *testing.T) {
		err := DecodeJSON(bodyRequest(`{}`), login{})
		if booking.ErrorCode(err) != booking.EINTERNAL {
			t.Errorf("err = %v", err)
		}
	})
}

func TestPathInt64(t *testing.T) {
	tests := []struct {
		val  string
		want int64
		ok   bool
	}{
		{"17", 17, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1e3", 0, false},
		{" 1", 0, false},
		{"", 0, false},
		{"abc", 0, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetPathValue("id", tt.val)
		got, err := PathInt64(r, "id")
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("PathInt64(%q) = %d, %v", tt.val, got, err)
		}
		if err != nil && booking.ErrorCode(err) != booking.EBADREQUEST {
			t.Errorf("PathInt64(%q) code = %s", tt.val, booking.ErrorCode(err))
		}
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct{ header, want string }{
		{"Bearer abc.def", "abc.def"},
		{"bearer abc", "abc"},
		{"BEARER  abc ", "abc"},
		{"Basic abc", ""},
		{"Bearer", ""},
		{"Bearer ", ""},
		{"", ""},
		{"abc", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		if got := BearerToken(r); got != tt.want {
			t.Errorf("BearerToken(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}

// bodyRequest is a request with body, as a handler receives it.
func bodyRequest(body string) *http.Request {
	return httptest.NewRequest("POST", "/", strings.NewReader(body))
}
