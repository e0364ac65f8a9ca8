package apigw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"salon/shared/booking"
)

// PathInt64 returns the named path value (r.PathValue, set by the router's
// http.ServeMux pattern) as a positive integer, or BAD_REQUEST.
func PathInt64(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	if v == "" || len(v) > 19 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, booking.Errorf(booking.EBADREQUEST, "path parameter %s is not a positive integer", name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, booking.Errorf(booking.EBADREQUEST, "path parameter %s is not a positive integer", name)
	}
	return n, nil
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header, or ""
// when there is none. The scheme is matched case-insensitively.
func BearerToken(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return ""
	}
	return strings.TrimSpace(h[len(scheme):])
}

// body is a request body the router has read in full (and found within
// MaxBodyBytes): handlers and a notification's verification can each read the
// exact bytes, however often.
type body struct {
	*bytes.Reader
	data []byte
}

func (body) Close() error { return nil }

// ReadBody returns the request's body. Behind the router it is the body the
// router read and limited; anywhere else it is read here, with the same limit.
func ReadBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*body); ok {
		return b.data, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, booking.Errorf(booking.EBADREQUEST, "body could not be read")
	}
	if len(data) > MaxBodyBytes {
		return nil, booking.Errorf(booking.EPAYLOADTOOLARGE, "body over %d bytes", MaxBodyBytes)
	}
	r.Body = &body{Reader: bytes.NewReader(data), data: data}
	return data, nil
}

// DecodeJSON decodes the request body into v strictly: one JSON value, no unknown
// fields, names matched exactly, no key twice in an object, no wrong types,
// nothing after it. Any failure is BAD_REQUEST with a short
// detail for the log that never quotes the body.
func DecodeJSON(r *http.Request, v any) error {
	raw, err := ReadBody(r)
	if err != nil {
		return err
	}
	return decodeJSON(raw, v)
}

func decodeJSON(raw []byte, v any) error {
	body := bytes.TrimSpace(raw)
	if len(body) == 0 {
		return booking.Errorf(booking.EBADREQUEST, "empty body")
	}
	if bytes.Equal(body, []byte("null")) {
		return booking.Errorf(booking.EBADREQUEST, "body is null")
	}
	// Exact names and each key once, before anything is decoded into v (so a
	// refused body leaves v alone); malformed JSON is left to the decoder below.
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil && !errors.Is(err, errSyntax) {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ie *json.InvalidUnmarshalError
		if errors.As(err, &ie) {
			return fmt.Errorf("apigw.DecodeJSON: %w", err) // a bug in the caller: INTERNAL
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return booking.Errorf(booking.EBADREQUEST, "truncated JSON")
		}
		return booking.Errorf(booking.EBADREQUEST, "%s", shortJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return booking.Errorf(booking.EBADREQUEST, "trailing data after the JSON value")
	}
	return nil
}
