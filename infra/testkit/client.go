package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"salon/shared/session"
)

// Answer is an HTTP answer as a client sees it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any // the body, when it is a JSON object
}

// Code is the error code of an error answer, "" if none.
func (a Answer) Code() string {
	c, _ := a.JSON["code"].(string)
	return c
}

func (a Answer) String() string { return fmt.Sprintf("%d %s", a.Status, a.Body) }

// Client sends requests to the system's front door. It is safe to use from many
// goroutines; what a transport error means is the caller's to decide.
type Client struct {
	URL  string
	HTTP *http.Client // nil: http.DefaultClient
}

// Call sends one request; bearer may be "". A string or []byte body is sent as
// it is (raw or broken JSON), anything else (a nil map too) as its JSON; headers
// are name, value pairs.
func (c Client) Call(method, path, bearer string, body any, headers ...string) (Answer, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return Answer{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		return Answer{}, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return c.Send(req)
}

// Send sends req and reads the whole answer.
func (c Client) Send(req *http.Request) (Answer, error) {
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	a := Answer{Status: resp.StatusCode, Header: resp.Header}
	if a.Body, err = io.ReadAll(resp.Body); err != nil {
		return a, err
	}
	_ = json.Unmarshal(a.Body, &a.JSON)
	return a, nil
}

// Token signs a session for openid with signer, as /login would.
func Token(t testing.TB, signer *session.Signer, openid string) string {
	t.Helper()
	tok, _, err := signer.Issue(openid)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
