package clstest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"

	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/cls/clstest"
)

// The SDK is the reference signer here: each case sends one request through
// common.Client, bent in one way, and expects the server's answer code.

type call struct {
	id, key, token string
	service        string
	version        string
	action         string
	topic          string
	compress       string
	transport      http.RoundTripper
	body           []byte
}

func validCall() call {
	rec := booking.AuditRecord{ID: 9, SlotID: 1, Event: "checkin", FromStatus: 1, ToStatus: 2, Actor: "salon",
		CreatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	return call{id: "AKIDtest", key: "secret", token: "tok", service: "cls", version: cls.Version,
		action: cls.Action, topic: "topic-1", body: cls.EncodeLogGroupList("checkin", []booking.AuditRecord{rec})}
}

func (c call) send(t *testing.T, srv *clstest.Server) error {
	t.Helper()
	cp := profile.NewClientProfile()
	cp.HttpProfile.Scheme = "HTTP"
	cp.HttpProfile.Endpoint = strings.TrimPrefix(srv.URL, "http://")
	client := common.NewCommonClient(common.NewTokenCredential(c.id, c.key, c.token), "ap-guangzhou", cp)
	if c.transport != nil {
		client.WithHttpTransport(c.transport)
	}
	req := tchttp.NewCommonRequest(c.service, c.version, c.action)
	h := map[string]string{}
	if c.topic != "" {
		h["X-CLS-TopicId"] = c.topic
	}
	if c.compress != "" {
		h["X-CLS-CompressType"] = c.compress
	}
	req.SetOctetStreamParameters(h, c.body)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req.SetContext(ctx)
	return client.SendOctetStream(req, tchttp.NewCommonResponse())
}

func newServer(t *testing.T) *clstest.Server {
	srv := clstest.NewServer("AKIDtest", "secret")
	srv.SetToken("tok")
	srv.SetTopicID("topic-1")
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// tamper changes one byte of the body after the SDK signed it.
type tamper struct{}

func (tamper) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	b[len(b)-1] ^= 1
	r.Body = io.NopCloser(bytes.NewReader(b))
	return http.DefaultTransport.RoundTrip(r)
}

func TestServerAcceptsValidRequest(t *testing.T) {
	srv := newServer(t)
	if err := validCall().send(t, srv); err != nil {
		t.Fatal(err)
	}
	logs := srv.Logs()
	if len(logs) != 1 || logs[0].Get("audit_id") != "9" || logs[0].Source != "checkin" || logs[0].TopicID != "topic-1" {
		t.Fatalf("logs %+v", logs)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].ErrorCode != "" || reqs[0].RequestID == "" || reqs[0].Status != http.StatusOK {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestServerRejects(t *testing.T) {
	cases := []struct {
		name string
		bend func(*call)
		code string
	}{
		{"wrong secret key", func(c *call) { c.key = "other" }, clstest.CodeSignatureFailure},
		{"unknown secret id", func(c *call) { c.id = "AKIDother" }, clstest.CodeSecretIDNotFound},
		{"body changed after signing", func(c *call) { c.transport = tamper{} }, clstest.CodeSignatureFailure},
		{"wrong token", func(c *call) { c.token = "stale" }, clstest.CodeTokenFailure},
		{"no token", func(c *call) { c.token = "" }, clstest.CodeTokenFailure},
		{"other action", func(c *call) { c.action = "DescribeTopics" }, clstest.CodeInvalidAction},
		{"other version", func(c *call) { c.version = "2019-01-01" }, clstest.CodeNoSuchVersion},
		{"other service in scope", func(c *call) { c.service = "cvm" }, clstest.CodeInvalidAuthorization},
		{"no topic", func(c *call) { c.topic = "" }, clstest.CodeMissingParameter},
		{"unknown topic", func(c *call) { c.topic = "topic-2" }, clstest.CodeTopicNotExist},
		{"compressed", func(c *call) { c.compress = "lz4" }, clstest.CodeInvalidParameter},
		{"not a LogGroupList", func(c *call) { c.body = []byte{0xff, 0xff} }, clstest.CodeInvalidParameter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			c := validCall()
			tc.bend(&c)
			err := c.send(t, srv)
			var sdkErr *tcerr.TencentCloudSDKError
			if !errors.As(err, &sdkErr) || sdkErr.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
			if sdkErr.RequestId == "" {
				t.Errorf("no RequestId in the error answer")
			}
			if n := len(srv.Logs()); n != 0 {
				t.Errorf("%d logs stored", n)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].ErrorCode != tc.code {
				t.Errorf("requests %+v", reqs)
			}
		})
	}
}

func TestServerRejectsStaleTimestamp(t *testing.T) {
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		srv := newServer(t)
		srv.SetNow(func() time.Time { return time.Now().Add(skew) })
		err := validCall().send(t, srv)
		var sdkErr *tcerr.TencentCloudSDKError
		if !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeSignatureExpire {
			t.Errorf("skew %v: err = %v", skew, err)
		}
	}
}

func TestServerRejectsKeyStartingWithUnderscore(t *testing.T) {
	srv := newServer(t)
	// A hand-built LogGroupList (the package encoder never writes such a key).
	body := []byte{
		0x0a, 0x0e, // logGroupList, 14 bytes
		0x0a, 0x0c, // logs, 12 bytes
		0x08, 0x01, // time 1
		0x12, 0x08, // contents, 8 bytes
		0x0a, 0x02, '_', 'k', // key "_k"
		0x12, 0x02, 'v', 'v', // value "vv"
	}
	c := validCall()
	c.body = body
	err := c.send(t, srv)
	var sdkErr *tcerr.TencentCloudSDKError
	if !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeInvalidParameter || !strings.Contains(sdkErr.Message, `"_k"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestServerKnobs(t *testing.T) {
	srv := newServer(t)
	var sdkErr *tcerr.TencentCloudSDKError

	srv.SetDown(true)
	if err := validCall().send(t, srv); !errors.As(err, &sdkErr) {
		t.Fatalf("down: err = %v", err)
	}
	if r := srv.Requests()[0]; r.Status != http.StatusServiceUnavailable {
		t.Errorf("down: status %d", r.Status)
	}
	srv.SetDown(false)

	srv.FailNext(2)
	for i := 0; i < 2; i++ {
		if err := validCall().send(t, srv); !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeInternalError {
			t.Fatalf("FailNext %d: err = %v", i, err)
		}
	}
	if err := validCall().send(t, srv); err != nil {
		t.Fatalf("after FailNext: %v", err)
	}
	if n := len(srv.Logs()); n != 1 {
		t.Errorf("%d logs, want 1", n)
	}
}

func TestServerDelayEndsWhenClientGivesUp(t *testing.T) {
	srv := clstest.NewServer("AKIDtest", "secret")
	srv.SetDelay(time.Hour)
	srv.Start()

	cp := profile.NewClientProfile()
	cp.HttpProfile.Scheme = "HTTP"
	cp.HttpProfile.Endpoint = strings.TrimPrefix(srv.URL, "http://")
	client := common.NewCommonClient(common.NewCredential("AKIDtest", "secret"), "ap-guangzhou", cp)
	req := tchttp.NewCommonRequest("cls", cls.Version, cls.Action)
	req.SetOctetStreamParameters(map[string]string{"X-CLS-TopicId": "t"}, validCall().body)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req.SetContext(ctx)
	if err := client.SendOctetStream(req, tchttp.NewCommonResponse()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}

	srv.Close() // returns once the delayed handler has noticed and finished
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].ErrorCode != clstest.CodeClientClosed {
		t.Fatalf("requests %+v", reqs)
	}
	if n := len(srv.Logs()); n != 0 {
		t.Errorf("%d logs stored for an abandoned request", n)
	}
}
