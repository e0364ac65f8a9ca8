package apigw

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"salon/shared/booking"
)

// Response is the integrated response API Gateway and Function URLs expect. Body is a
// string; binary bodies are base64-encoded with IsBase64Encoded set.
type Response struct {
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
}

// statusOf is the one table from application codes to HTTP statuses.
var statusOf = map[string]int{
	booking.EBADREQUEST:          http.StatusBadRequest,
	booking.EUNAUTHORIZED:        http.StatusUnauthorized,
	booking.EFORBIDDEN:           http.StatusForbidden,
	booking.ENOTFOUND:            http.StatusNotFound,
	booking.ESOLDOUT:             http.StatusConflict,
	booking.EACTIVEBOOKINGEXISTS: http.StatusConflict,
	booking.EINVALIDSTATE:        http.StatusConflict,
	booking.EPAYLOADTOOLARGE:     http.StatusRequestEntityTooLarge,
	booking.ESLOTNOTBOOKABLE:     http.StatusUnprocessableEntity,
	booking.EINTERNAL:            http.StatusInternalServerError,
	booking.EUPSTREAM:            http.StatusServiceUnavailable,
	booking.ENOSHOWLIMIT:         http.StatusForbidden,
	booking.ELATECANCEL:          http.StatusConflict,
	booking.ESEATSAVAILABLE:      http.StatusConflict,
	booking.EWAITLISTLIMIT:       http.StatusConflict,
	booking.ELATERESCHEDULE:      http.StatusConflict,
	booking.ERESCHEDULELIMIT:     http.StatusConflict,
	booking.EPRICEDIFFERS:        http.StatusConflict,
	booking.ETOOEARLY:            http.StatusConflict,
	booking.EUNAVAILABLE:         http.StatusServiceUnavailable,
	booking.ETOOMANYATTEMPTS:     http.StatusTooManyRequests,
}

// retryAfterOf gives the codes whose answers tell the client when to try again
// (the Retry-After header, in seconds). A database that restarts or runs out of
// connections is back within seconds, and asking sooner only adds to its load.
var retryAfterOf = map[string]string{
	booking.EUNAVAILABLE: RetryAfterSeconds,
}

// RetryAfterSeconds is the Retry-After of an UNAVAILABLE answer.
const RetryAfterSeconds = "2"

// HTTPStatus returns the HTTP status of an application error code. A code outside
// the table is a programming error and answers 500.
func HTTPStatus(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrorResponse answers err as {"code","message"} with the customer message. Any
// error that is not an application error, or carries a code outside the table, is
// INTERNAL with the generic message: its detail belongs in the log only.
func ErrorResponse(err error) *Response {
	return errorResponse(responseCode(err), err)
}

// responseCode is the code the customer sees for err.
func responseCode(err error) string {
	code := booking.ErrorCode(err)
	if _, ok := statusOf[code]; !ok {
		return booking.EINTERNAL
	}
	return code
}

func errorResponse(code string, err error) *Response {
	msg := booking.ErrorMessage(err)
	if code == booking.EINTERNAL || booking.ErrorCode(err) != code {
		// Never the message of an internal error, whatever it was built with.
		msg = booking.Errorf(code, "").Message
	}
	resp := JSON(HTTPStatus(code), ErrorBody{Code: code, Message: msg})
	if after, ok := retryAfterOf[code]; ok {
		resp.Headers["Retry-After"] = after
	}
	var e *booking.Error
	if errors.As(err, &e) && e.Code == code && e.RetryAfter > 0 {
		resp.Headers["Retry-After"] = strconv.Itoa(e.RetryAfter)
	}
	return resp
}

// JSON answers v as JSON with the given status. If v cannot be marshalled the answer
// is a 500 INTERNAL error instead.
func JSON(status int, v any) *Response {
	b, err := json.Marshal(v)
	if err != nil {
		b = internalBody
		status = http.StatusInternalServerError
	}
	return &Response{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json; charset=utf-8"},
		Body:       string(b),
	}
}

var internalBody, _ = json.Marshal(ErrorBody{Code: booking.EINTERNAL, Message: booking.Errorf(booking.EINTERNAL, "").Message})

// NoContent answers 204 with no body.
func NoContent() *Response {
	return &Response{StatusCode: http.StatusNoContent, Headers: map[string]string{}}
}

// write sends resp on w: the answer a handler gives through WriteJSON,
// WriteNoContent and Error, the same Response the event adapter returns.
func write(w http.ResponseWriter, resp *Response) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.StatusCode)
	if resp.Body != "" {
		io.WriteString(w, resp.Body)
	}
}

// WriteJSON answers v as JSON with the given status (500 INTERNAL if v cannot
// be marshalled).
func WriteJSON(w http.ResponseWriter, status int, v any) { write(w, JSON(status, v)) }

// WriteNoContent answers 204 with no body.
func WriteNoContent(w http.ResponseWriter) { write(w, NoContent()) }

// Error answers err as ErrorResponse does and hands it to the request's log
// line (code and error), where its detail goes instead of the answer.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	if s := stateOf(r.Context()); s != nil {
		s.mu.Lock()
		s.err = err
		written := s.w.status != 0
		s.mu.Unlock()
		if written {
			return // the handler answered already; the log line still reports err
		}
	}
	write(w, ErrorResponse(err))
}

// HandlerFunc is a handler that may fail: a returned error is answered with
// Error, so a handler never writes an error answer itself. It is an
// http.Handler like any other.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP runs h and answers its error.
func (h HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h(w, r); err != nil {
		Error(w, r, err)
	}
}
