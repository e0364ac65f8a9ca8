package cls_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"

	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/cls/clstest"
)

// env is a getenv whose values a test changes between calls, as SCF does between
// invocations.
type env struct {
	mu sync.Mutex
	m  map[string]string
}

func newEnv(id, key, token string) *env {
	return &env{m: map[string]string{
		"TENCENTCLOUD_SECRETID": id, "TENCENTCLOUD_SECRETKEY": key, "TENCENTCLOUD_SESSIONTOKEN": token,
	}}
}

func (e *env) get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

func (e *env) set(k, v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k] = v
}

const topic = "topic-0001"

func startCLS(t *testing.T, id, key, token string) *clstest.Server {
	t.Helper()
	srv := clstest.NewServer(id, key)
	srv.SetToken(token)
	srv.SetTopicID(topic)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func newShipper(srv *clstest.Server, e *env) *cls.Shipper {
	return cls.New(cls.Config{Endpoint: srv.URL, TopicID: topic, Region: "ap-guangzhou"}, e.get)
}

func TestShipDeliversEveryField(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "tok-1")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", "tok-1"))
	recs := sampleRecords()

	if err := s.Ship(context.Background(), "payment-callback", recs); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.ErrorCode != "" {
		t.Fatalf("rejected: %s %s", r.ErrorCode, r.ErrorMsg)
	}
	if r.Action != "UploadLog" || r.Version != "2020-10-16" || r.Region != "ap-guangzhou" ||
		r.TopicID != topic || r.SecretID != "AKIDtest" || r.Token != "tok-1" {
		t.Errorf("request headers: %+v", r)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if c := r.Header.Get("X-CLS-CompressType"); c != "" {
		t.Errorf("compressed: %q", c)
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "TC3-HMAC-SHA256 Credential=AKIDtest/") {
		t.Errorf("Authorization %q", r.Header.Get("Authorization"))
	}

	logs := srv.Logs()
	if len(logs) != len(recs) {
		t.Fatalf("%d logs stored, want %d", len(logs), len(recs))
	}
	for i, rec := range recs {
		if logs[i].Source != "payment-callback" || logs[i].TopicID != topic {
			t.Errorf("log %d: source %q topic %q", i, logs[i].Source, logs[i].TopicID)
		}
		checkLog(t, logs[i].Log, rec)
	}
}

func TestShipWrongSecretKeyIsRejected(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	s := newShipper(srv, newEnv("AKIDtest", "not-the-key", ""))

	err := s.Ship(context.Background(), "reserve", sampleRecords())
	var sdkErr *tcerr.TencentCloudSDKError
	if !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeSignatureFailure {
		t.Fatalf("err = %v, want %s", err, clstest.CodeSignatureFailure)
	}
	var shipErr *cls.ShipError
	if !errors.As(err, &shipErr) || shipErr.Shipped != 0 {
		t.Errorf("err = %#v, want a ShipError with nothing shipped", err)
	}
	if n := len(srv.Logs()); n != 0 {
		t.Errorf("%d logs stored from a bad signature", n)
	}
}

func TestShipWrongTokenIsRejected(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "tok-right")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", "tok-wrong"))
	err := s.Ship(context.Background(), "reserve", sampleRecords())
	var sdkErr *tcerr.TencentCloudSDKError
	if !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeTokenFailure {
		t.Fatalf("err = %v, want %s", err, clstest.CodeTokenFailure)
	}
}

func TestShipRereadsCredentialsEveryCall(t *testing.T) {
	srv := startCLS(t, "AKIDtmp1", "key-1", "tok-1")
	e := newEnv("AKIDtmp1", "key-1", "tok-1")
	s := newShipper(srv, e)
	recs := sampleRecords()

	if err := s.Ship(context.Background(), "release", recs[:1]); err != nil {
		t.Fatal(err)
	}
	// SCF hands the next invocation new temporary keys; the old ones stop working.
	srv.SetCredential("AKIDtmp2", "key-2", "tok-2")
	e.set("TENCENTCLOUD_SECRETID", "AKIDtmp2")
	e.set("TENCENTCLOUD_SECRETKEY", "key-2")
	e.set("TENCENTCLOUD_SESSIONTOKEN", "tok-2")
	if err := s.Ship(context.Background(), "release", recs[1:2]); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].SecretID != "AKIDtmp1" || reqs[0].Token != "tok-1" || reqs[1].SecretID != "AKIDtmp2" || reqs[1].Token != "tok-2" {
		t.Errorf("server saw %s/%s then %s/%s", reqs[0].SecretID, reqs[0].Token, reqs[1].SecretID, reqs[1].Token)
	}
	if len(srv.Logs()) != 2 {
		t.Errorf("%d logs", len(srv.Logs()))
	}
}

func TestShipMissingCredentialsSendsNothing(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	for _, missing := range []string{"TENCENTCLOUD_SECRETID", "TENCENTCLOUD_SECRETKEY"} {
		e := newEnv("AKIDtest", "secret-key", "")
		e.set(missing, "")
		err := newShipper(srv, e).Ship(context.Background(), "reserve", sampleRecords())
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s unset: err = %v", missing, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without credentials", n)
	}
}

func TestShipRejectsUnstoredRecords(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))
	noID := sampleRecords()
	noID[2].ID = 0
	noTime := sampleRecords()
	noTime[3].CreatedAt = time.Time{}
	for name, recs := range map[string][]booking.AuditRecord{"no id": noID, "no time": noTime} {
		if err := s.Ship(context.Background(), "reserve", recs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if err := s.Ship(context.Background(), "reserve", nil); err != nil || len(srv.Requests()) != 0 {
		t.Errorf("empty Ship: err %v, %d requests", err, len(srv.Requests()))
	}
}

func TestShipWhileCLSDownThenAgain(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "tok")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", "tok"))
	recs := sampleRecords()

	srv.SetDown(true)
	err := s.Ship(context.Background(), "release", recs)
	var sdkErr *tcerr.TencentCloudSDKError
	if !errors.As(err, &sdkErr) {
		t.Fatalf("down: err = %v, want an SDK error", err)
	}
	if n := len(srv.Logs()); n != 0 {
		t.Fatalf("%d logs stored while down", n)
	}

	srv.SetDown(false)
	srv.FailNext(1) // the cloud API's own error answer (HTTP 200 with Error)
	if err := s.Ship(context.Background(), "release", recs); !errors.As(err, &sdkErr) || sdkErr.Code != clstest.CodeInternalError {
		t.Fatalf("FailNext: err = %v", err)
	}

	// The caller kept the records and ships them on its next run.
	if err := s.Ship(context.Background(), "release", recs); err != nil {
		t.Fatal(err)
	}
	logs := srv.Logs()
	if len(logs) != len(recs) {
		t.Fatalf("%d logs, want %d", len(logs), len(recs))
	}
	for i, rec := range recs {
		if got := logs[i].Get("audit_id"); got != strconv.FormatInt(rec.ID, 10) {
			t.Errorf("log %d audit_id %q, want %d", i, got, rec.ID)
		}
		checkLog(t, logs[i].Log, rec)
	}

	// A duplicate delivery carries the same audit ids.
	if err := s.Ship(context.Background(), "release", recs[:1]); err != nil {
		t.Fatal(err)
	}
	logs = srv.Logs()
	if first, dup := logs[0].Get("audit_id"), logs[len(logs)-1].Get("audit_id"); first != dup {
		t.Errorf("duplicate has audit_id %q, first delivery %q", dup, first)
	}
}

func TestShipTransportErrorFails(t *testing.T) {
	srv := clstest.NewServer("AKIDtest", "secret-key")
	srv.Start()
	url := srv.URL
	srv.Close() // nothing listens any more
	s := cls.New(cls.Config{Endpoint: url, TopicID: topic}, newEnv("AKIDtest", "secret-key", "").get)
	if err := s.Ship(context.Background(), "reserve", sampleRecords()); err == nil {
		t.Fatal("no error from a closed endpoint")
	}
}

// blockUntilClientGivesUp is a hook for a CLS that never answers in time.
func blockUntilClientGivesUp(entered chan<- struct{}) func(*http.Request) error {
	return func(r *http.Request) error {
		// Never block here: a second attempt (a transport retry) must not hang
		// the server's shutdown waiting for a reader of entered.
		select {
		case entered <- struct{}{}:
		default:
		}
		<-r.Context().Done()
		return nil
	}
}

func TestShipSlowCLSHonoursContext(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	entered := make(chan struct{}, 1)
	srv.SetHook(blockUntilClientGivesUp(entered))
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Ship(ctx, "release", sampleRecords())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	reachedOrNot(entered)
	if n := len(srv.Logs()); n != 0 {
		t.Errorf("%d logs stored", n)
	}
}

func TestShipDefaultTimeoutWithoutDeadline(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	entered := make(chan struct{}, 1)
	srv.SetHook(blockUntilClientGivesUp(entered))
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))
	if s.Timeout != cls.DefaultTimeout {
		t.Errorf("Timeout %v, want %v", s.Timeout, cls.DefaultTimeout)
	}
	s.Timeout = 50 * time.Millisecond

	if err := s.Ship(context.Background(), "release", sampleRecords()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	reachedOrNot(entered)
}

// reachedOrNot does not wait for the blocked request to reach the server:
// on a busy machine a 50 ms deadline can pass before it is even sent (a
// wait for it hung the package until the test binary's timeout). Either way
// the shipper answered the deadline and stored nothing.
func reachedOrNot(entered <-chan struct{}) {
	select {
	case <-entered:
	default:
	}
}

func TestShipCancelledContextSendsNothing(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Ship(ctx, "release", sampleRecords()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func manyRecords(n int) []booking.AuditRecord {
	recs := make([]booking.AuditRecord, n)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range recs {
		recs[i] = booking.AuditRecord{ID: int64(i + 1), BookingID: int64(i), SlotID: 7, Event: booking.EventRelease,
			FromStatus: 0, ToStatus: 4, Actor: "timer", Reason: fmt.Sprintf("unpaid #%d", i), CreatedAt: base.Add(time.Duration(i) * time.Millisecond)}
	}
	return recs
}

func TestShipSplitsLargeInput(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))
	recs := manyRecords(2*cls.MaxBatch + 500)

	if err := s.Ship(context.Background(), "release", recs); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Groups[0].Logs))
	}
	if fmt.Sprint(sizes) != "[1000 1000 500]" {
		t.Errorf("batch sizes %v", sizes)
	}
	logs := srv.Logs()
	if len(logs) != len(recs) {
		t.Fatalf("%d logs", len(logs))
	}
	for i, rec := range recs {
		checkLog(t, logs[i].Log, rec)
	}
}

func TestShipStopsAtFirstFailedBatch(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "")
	var mu sync.Mutex
	seen := 0
	srv.SetHook(func(*http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == 2 {
			return errors.New("second batch refused")
		}
		return nil
	})
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", ""))

	err := s.Ship(context.Background(), "release", manyRecords(3*cls.MaxBatch))
	var shipErr *cls.ShipError
	if !errors.As(err, &shipErr) || shipErr.Shipped != cls.MaxBatch {
		t.Fatalf("err = %v, want ShipError with %d shipped", err, cls.MaxBatch)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (fail fast)", n)
	}
	if n := len(srv.Logs()); n != cls.MaxBatch {
		t.Errorf("%d logs", n)
	}
}

// TestShipVerifiesTLS: an https endpoint gets normal certificate checks, so a server
// with a self-signed certificate is refused.
func TestShipVerifiesTLS(t *testing.T) {
	srv := clstest.NewServer("AKIDtest", "secret-key")
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	s := cls.New(cls.Config{Endpoint: ts.URL, TopicID: topic}, newEnv("AKIDtest", "secret-key", "").get)

	err := s.Ship(context.Background(), "reserve", sampleRecords())
	var unknownCA x509.UnknownAuthorityError
	if !errors.As(err, &unknownCA) {
		t.Fatalf("err = %v, want an unknown-authority certificate error", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests got through", n)
	}
}

func TestShipConcurrent(t *testing.T) {
	srv := startCLS(t, "AKIDtest", "secret-key", "tok")
	s := newShipper(srv, newEnv("AKIDtest", "secret-key", "tok"))
	recs := manyRecords(40)
	var wg sync.WaitGroup
	errs := make(chan error, len(recs))
	for i := range recs {
		wg.Go(func() { errs <- s.Ship(context.Background(), "reserve", recs[i:i+1]) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, l := range srv.Logs() {
		seen[l.Get("audit_id")] = true
	}
	if len(seen) != len(recs) {
		t.Errorf("%d distinct audit ids arrived, want %d", len(seen), len(recs))
	}
}
