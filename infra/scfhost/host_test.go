package scfhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildFn builds testdata/fn into a temporary directory and returns the binary.
func buildFn(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fn", "main")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/fn")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/fn: %v\n%s", err, out)
	}
	return bin
}

// logSink collects the host's log and lets a test wait for a line.
type logSink struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	watchers map[string]chan string
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for sub, ch := range s.watchers {
		if bytes.Contains(p, []byte(sub)) {
			ch <- string(p)
			delete(s.watchers, sub)
		}
	}
	return len(p), nil
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor returns the first log line containing sub, waiting for it if need be.
func (s *logSink) waitFor(t *testing.T, sub string) string {
	t.Helper()
	s.mu.Lock()
	for line := range strings.Lines(s.buf.String()) {
		if strings.Contains(line, sub) {
			s.mu.Unlock()
			return line
		}
	}
	ch := make(chan string, 1)
	if s.watchers == nil {
		s.watchers = map[string]chan string{}
	}
	s.watchers[sub] = ch
	s.mu.Unlock()
	select {
	case line := <-ch:
		return line
	case <-time.After(30 * time.Second):
		t.Fatalf("no log line containing %q; log:\n%s", sub, s.String())
		return ""
	}
}

func newHost(t *testing.T, fns ...Function) (*Host, *logSink) {
	t.Helper()
	sink := &logSink{}
	h := NewHost(sink)
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("host log:\n%s", sink.String())
		}
	})
	for _, fn := range fns {
		if err := h.Register(fn); err != nil {
			t.Fatal(err)
		}
	}
	return h, sink
}

type echoOut struct {
	Event        json.RawMessage   `json:"event"`
	RequestID    string            `json:"requestId"`
	FunctionName string            `json:"functionName"`
	Namespace    string            `json:"namespace"`
	Version      string            `json:"version"`
	MemoryMB     int32             `json:"memoryMb"`
	TimeLimitMs  int32             `json:"timeLimitMs"`
	Deadline     time.Time         `json:"deadline"`
	PID          int               `json:"pid"`
	Env          map[string]string `json:"env"`
	ContextEnv   map[string]string `json:"contextEnv"`
}

// invoke calls fn and decodes a successful answer into out.
func invoke(t *testing.T, h *Host, fn, payload, requestID string, out any) *InvokeError {
	t.Helper()
	b, ierr, err := h.Invoke(context.Background(), fn, []byte(payload), requestID)
	if err != nil {
		t.Fatalf("Invoke(%s): %v", payload, err)
	}
	if ierr != nil {
		return ierr
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return nil
}

func pidOf(t *testing.T, h *Host, fn string) int {
	t.Helper()
	var out struct{ PID int }
	if ierr := invoke(t, h, fn, `{"op":"pid"}`, "", &out); ierr != nil {
		t.Fatalf("op pid: %v", ierr)
	}
	return out.PID
}

// gone reports whether no process has the pid. The host reaps what it kills
// before returning, so a killed child is gone at once, not a zombie.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestInvokePassesContextAndStaysWarm(t *testing.T) {
	h, logs := newHost(t, Function{
		Name: "reserve", Binary: buildFn(t), Env: map[string]string{"FOO": "bar"},
		Timeout: 5 * time.Second, MemoryMB: 256,
	})

	payload := `{"op":"echo","n":1}`
	before := time.Now()
	var first echoOut
	if ierr := invoke(t, h, "reserve", payload, "req-1", &first); ierr != nil {
		t.Fatal(ierr)
	}
	after := time.Now()

	if string(first.Event) != payload {
		t.Errorf("event = %s, want %s", first.Event, payload)
	}
	if first.RequestID != "req-1" || first.FunctionName != "reserve" || first.Namespace != "default" ||
		first.Version != "$LATEST" || first.MemoryMB != 256 || first.TimeLimitMs != 5000 {
		t.Errorf("function context = %+v", first)
	}
	if dl := first.Deadline; dl.Before(before.Add(5*time.Second)) || dl.After(after.Add(5*time.Second)) {
		t.Errorf("deadline %v not 5s after the call (%v .. %v)", dl, before, after)
	}
	wantEnv := map[string]string{
		"FOO": "bar", "FUNCTION_NAME": "reserve", "FUNCTION_MEMORY_SIZE": "256", "FUNCTION_VERSION": "$LATEST",
	}
	for k, v := range wantEnv {
		if first.Env[k] != v {
			t.Errorf("process env %s = %q, want %q", k, first.Env[k], v)
		}
	}
	if port := first.Env["_LAMBDA_SERVER_PORT"]; port == "" || first.Env["_SCF_SERVER_PORT"] != port {
		t.Errorf("ports: _LAMBDA_SERVER_PORT=%q _SCF_SERVER_PORT=%q", port, first.Env["_SCF_SERVER_PORT"])
	}
	if len(first.ContextEnv) != 1 || first.ContextEnv["FOO"] != "bar" {
		t.Errorf("InvokeRequest.Environment = %v, want {FOO: bar}", first.ContextEnv)
	}
	logs.waitFor(t, `[reserve] {"level":"info","msg":"echo","requestId":"req-1"}`)

	var second echoOut
	if ierr := invoke(t, h, "reserve", `{"op":"echo"}`, "", &second); ierr != nil {
		t.Fatal(ierr)
	}
	if second.PID != first.PID {
		t.Errorf("second invocation ran in pid %d, first in %d: not kept warm", second.PID, first.PID)
	}
	if len(second.RequestID) != 36 || second.RequestID == first.RequestID {
		t.Errorf("generated request id = %q", second.RequestID)
	}
}

func TestFunctionErrorKeepsProcess(t *testing.T) {
	h, _ := newHost(t, Function{Name: "fn", Binary: buildFn(t)})
	pid := pidOf(t, h, "fn")
	ierr := invoke(t, h, "fn", `{"op":"fail"}`, "", nil)
	if ierr == nil || ierr.Type != "errorString" || ierr.Message != "asked to fail" || ierr.ShouldExit {
		t.Fatalf("error = %+v", ierr)
	}
	if got := pidOf(t, h, "fn"); got != pid {
		t.Errorf("pid after a returned error = %d, want the same %d", got, pid)
	}
}

func TestPanicIsReportedAndProcessReplaced(t *testing.T) {
	h, _ := newHost(t, Function{Name: "fn", Binary: buildFn(t)})
	pid := pidOf(t, h, "fn")
	ierr := invoke(t, h, "fn", `{"op":"panic"}`, "", nil)
	if ierr == nil || ierr.Message != "boom" || !ierr.ShouldExit || len(ierr.StackTrace) == 0 {
		t.Fatalf("error = %+v", ierr)
	}
	if !gone(pid) {
		t.Errorf("pid %d still running after a panic", pid)
	}
	if got := pidOf(t, h, "fn"); got == pid {
		t.Errorf("invocation after a panic ran in the old pid %d", pid)
	}
}

func TestTimeoutKillsProcess(t *testing.T) {
	h, _ := newHost(t, Function{Name: "fn", Binary: buildFn(t), Timeout: 300 * time.Millisecond})
	pid := pidOf(t, h, "fn")
	start := time.Now()
	ierr := invoke(t, h, "fn", `{"op":"hang"}`, "", nil)
	if ierr == nil || !ierr.Timeout() || !strings.Contains(ierr.Message, "timed out after 300ms") {
		t.Fatalf("error = %+v, want a timeout", ierr)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("timed out after %s, before the 300ms timeout", d)
	}
	if !gone(pid) {
		t.Errorf("pid %d still running after the timeout", pid)
	}
	if got := pidOf(t, h, "fn"); got == pid {
		t.Errorf("invocation after a timeout ran in the old pid %d", pid)
	}
}

func TestExitedProcessIsRestarted(t *testing.T) {
	h, logs := newHost(t, Function{Name: "fn", Binary: buildFn(t)})

	// Exits during an invocation.
	pid := pidOf(t, h, "fn")
	ierr := invoke(t, h, "fn", `{"op":"exit"}`, "", nil)
	if ierr == nil || ierr.Type != TypeProcessExited || !strings.Contains(ierr.Message, "exit status 3") {
		t.Fatalf("error = %+v", ierr)
	}
	logs.waitFor(t, "[fn] exiting on request")
	pid2 := pidOf(t, h, "fn")
	if pid2 == pid {
		t.Fatalf("invocation after an exit ran in the old pid %d", pid)
	}

	// Dies while idle.
	p, err := os.FindProcess(pid2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := pidOf(t, h, "fn"); got == pid2 {
		t.Errorf("invocation after a kill ran in the killed pid %d", pid2)
	}
}

func TestInitFailures(t *testing.T) {
	bin := buildFn(t)
	h, _ := newHost(t,
		Function{Name: "exits", Binary: bin, Env: map[string]string{"FN_INIT": "exit"}},
		Function{Name: "silent", Binary: bin, Env: map[string]string{"FN_INIT": "hang"}, InitTimeout: 300 * time.Millisecond},
	)
	ierr := invoke(t, h, "exits", `{"op":"pid"}`, "", nil)
	if ierr == nil || ierr.Type != TypeInitError || !strings.Contains(ierr.Message, "exit status 2") {
		t.Errorf("exits: error = %+v", ierr)
	}
	ierr = invoke(t, h, "silent", `{"op":"pid"}`, "", nil)
	if ierr == nil || ierr.Type != TypeInitError || !strings.Contains(ierr.Message, "within 300ms") {
		t.Errorf("silent: error = %+v", ierr)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.live) != 0 {
		t.Errorf("%d processes left running after failed starts", len(h.live))
	}
}

func TestConcurrentInvocationsShareAPool(t *testing.T) {
	const requests, max = 130, 8
	h, _ := newHost(t, Function{Name: "reserve", Binary: buildFn(t), MaxInstances: max, Timeout: 30 * time.Second})

	var wg sync.WaitGroup
	pids := make(chan int, requests)
	errs := make(chan error, requests)
	for range requests {
		wg.Go(func() {
			b, ierr, err := h.Invoke(context.Background(), "reserve", []byte(`{"op":"busy"}`), "")
			switch {
			case err != nil:
				errs <- err
			case ierr != nil:
				errs <- ierr
			default:
				var out struct{ PID int }
				if err := json.Unmarshal(b, &out); err != nil {
					errs <- err
				}
				pids <- out.PID
			}
		})
	}
	wg.Wait()
	close(errs)
	close(pids)
	for err := range errs {
		t.Error(err)
	}
	distinct := map[int]bool{}
	n := 0
	for pid := range pids {
		distinct[pid] = true
		n++
	}
	if n != requests {
		t.Errorf("%d of %d requests answered", n, requests)
	}
	if len(distinct) > max {
		t.Errorf("%d processes served, more than MaxInstances %d", len(distinct), max)
	}
}

func TestCloseKillsEveryChild(t *testing.T) {
	h, logs := newHost(t, Function{Name: "fn", Binary: buildFn(t), MaxInstances: 4, Timeout: time.Minute})

	// Three warm processes...
	var wg sync.WaitGroup
	var mu sync.Mutex
	pids := map[int]bool{}
	for range 3 {
		wg.Go(func() {
			b, _, err := h.Invoke(context.Background(), "fn", []byte(`{"op":"busy"}`), "")
			if err != nil {
				t.Error(err)
				return
			}
			var out struct{ PID int }
			_ = json.Unmarshal(b, &out)
			mu.Lock()
			pids[out.PID] = true
			mu.Unlock()
		})
	}
	wg.Wait()

	// ...and one in the middle of an invocation.
	hung := make(chan error, 1)
	go func() {
		_, _, err := h.Invoke(context.Background(), "fn", []byte(`{"op":"hang"}`), "")
		hung <- err
	}()
	line := logs.waitFor(t, "hanging pid=")
	pid, err := strconv.Atoi(strings.TrimSpace(line[strings.Index(line, "pid=")+4:]))
	if err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	pids[pid] = true

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-hung; !errors.Is(err, ErrClosed) {
		t.Errorf("invocation in flight at Close: err = %v, want ErrClosed", err)
	}
	for pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d still running after Close", pid)
		}
	}
	if _, _, err := h.Invoke(context.Background(), "fn", []byte(`{"op":"pid"}`), ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke after Close: err = %v, want ErrClosed", err)
	}
}

func TestInvokeUnknownFunction(t *testing.T) {
	h, _ := newHost(t)
	if _, _, err := h.Invoke(context.Background(), "nope", []byte(`{}`), ""); !errors.Is(err, ErrUnknownFunction) {
		t.Errorf("err = %v, want ErrUnknownFunction", err)
	}
	if err := h.Register(Function{Name: "x", Binary: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("Register accepted a missing binary")
	}
}
