package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// build compiles scflocal and the scfhost test function into a temporary directory:
// dir/scflocal and dir/bin/fn/main.
func build(t *testing.T) (scflocal, binDir string) {
	t.Helper()
	dir := t.TempDir()
	scflocal = filepath.Join(dir, "scflocal")
	binDir = filepath.Join(dir, "bin")
	for pkg, out := range map[string]string{
		".":                               scflocal,
		"salon/infra/scfhost/testdata/fn": filepath.Join(binDir, "fn", "main"),
	} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return scflocal, binDir
}

// invokeYML declares FOO (and only FOO) for the test function.
const invokeYML = `
component: multi-scf
inputs:
  src: ./dist
  runtime: Go1
  handler: main
  timeout: 10
  environments:
    - { key: FOO, value: '${env:FOO}' }
  functions:
    fn: { src: ./fn }
`

func TestInvokeMode(t *testing.T) {
	scflocal, binDir := build(t)
	event := filepath.Join(t.TempDir(), "event.json")
	yml := filepath.Join(t.TempDir(), "serverless.yml")
	if err := os.WriteFile(yml, []byte(invokeYML), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := []string{"-serverless", yml}
	run := func(payload string) (stdout, stderr string, code int) {
		t.Helper()
		if err := os.WriteFile(event, []byte(payload), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"invoke", "-bin", filepath.Join(binDir, "fn", "main"), "-event", event, "-timeout", "5s"}, spec...)
		cmd := exec.Command(scflocal, args...)
		cmd.Env = append(os.Environ(), "FOO=from-shell", "BAR=not-declared", "SALON_DEV=1")
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return o.String(), e.String(), cmd.ProcessState.ExitCode()
	}

	out, errOut, code := run(`{"op":"echo"}`)
	var echo struct {
		FunctionName string            `json:"functionName"`
		TimeLimitMs  int               `json:"timeLimitMs"`
		Env          map[string]string `json:"env"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &echo) != nil {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if echo.FunctionName != "fn" || echo.TimeLimitMs != 5000 || echo.Env["FOO"] != "from-shell" || echo.Env["SALON_DEV"] != "1" {
		t.Errorf("answer = %+v", echo)
	}
	// Only what serverless.yml declares (and the platform's own) reaches the function.
	for _, k := range []string{"BAR", "PATH"} {
		if v, ok := echo.Env[k]; ok {
			t.Errorf("the function got %s=%q, which serverless.yml does not declare", k, v)
		}
	}

	// Without a serverless.yml nothing is declared: no settings at all.
	spec = nil
	out, errOut, code = run(`{"op":"echo"}`)
	echo.Env = nil
	if code != 0 || json.Unmarshal([]byte(out), &echo) != nil {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, ok := echo.Env["FOO"]; ok || !strings.Contains(errOut, "no -serverless") {
		t.Errorf("without -serverless: env %v, stderr %q", echo.Env, errOut)
	}
	spec = []string{"-serverless", yml}

	out, errOut, code = run(`{"op":"fail"}`)
	if code != 1 || !strings.Contains(out, `"errorMessage":"asked to fail"`) {
		t.Errorf("failing function: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

// lines feeds a reader's lines to a channel, so a test can wait for one.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 1<<14)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

func waitLine(t *testing.T, ch <-chan string, re *regexp.Regexp, seen *[]string) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				t.Fatalf("output ended before a line matching %s:\n%s", re, strings.Join(*seen, "\n"))
			}
			*seen = append(*seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("no line matching %s:\n%s", re, strings.Join(*seen, "\n"))
		}
	}
}

func TestServeMode(t *testing.T) {
	scflocal, binDir := build(t)
	yml := filepath.Join(t.TempDir(), "serverless.yml")
	err := os.WriteFile(yml, []byte(`
component: multi-scf
inputs:
  src: ./dist
  runtime: Go1
  handler: main
  timeout: 10
  environments:
    - { key: FOO, value: '${env:FOO}' }
  functions:
    fn: { src: ./fn }
    missing: { src: ./missing }
  triggers:
    - type: timer
      function: fn
      parameters: { name: tick, cronExpression: '0 */1 * * * * *', enable: true, argument: arg }
    - type: apigw
      parameters:
        name: api
        apis:
          - { path: '/things/{id}', method: POST, function: fn, serviceTimeout: 8, param: [ { name: id, position: PATH, required: true, type: string } ] }
          - { path: /gone, method: GET, function: missing, serviceTimeout: 8 }
          - { path: /env, method: GET, function: fn, serviceTimeout: 8 }
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(scflocal, "serve", "-serverless", yml, "-bin-dir", binDir, "-addr", "127.0.0.1:0", "-release-every", "100ms")
	cmd.Env = append(os.Environ(), "FOO=bar", "BAR=not-declared", "SALON_DEV=1", "TENCENTCLOUD_SECRETID=AKIDlocal")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stopServe := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
		})
	}
	t.Cleanup(func() {
		stopServe()
		_ = cmd.Wait()
	})
	outLines, errLines := lines(stdout), lines(stderr)
	var seenOut, seenErr []string

	m := waitLine(t, outLines, regexp.MustCompile(`listening on (http://\S+)`), &seenOut)
	base := m[1]

	res, err := http.Post(base+"/things/7", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var ev struct {
		PathParameters map[string]string `json:"pathParameters"`
		Body           string            `json:"body"`
	}
	if res.StatusCode != 201 || json.Unmarshal(body, &ev) != nil || ev.PathParameters["id"] != "7" || ev.Body != `{"a":1}` {
		t.Errorf("POST /things/7: %d %s", res.StatusCode, body)
	}

	// Each function gets only what serverless.yml declares for it, and the platform's own.
	res, err = http.Get(base + "/env")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	var env map[string]string
	if res.StatusCode != 200 || json.Unmarshal(body, &env) != nil {
		t.Fatalf("GET /env: %d %s", res.StatusCode, body)
	}
	if env["FOO"] != "bar" || env["SALON_DEV"] != "1" || env["TENCENTCLOUD_SECRETID"] != "AKIDlocal" || env["FUNCTION_NAME"] != "fn" {
		t.Errorf("function environment %v: want FOO, SALON_DEV, TENCENTCLOUD_SECRETID and the runtime's", env)
	}
	for _, k := range []string{"BAR", "PATH"} {
		if _, ok := env[k]; ok {
			t.Errorf("the function got %s, which serverless.yml does not declare", k)
		}
	}

	res, err = http.Get(base + "/gone")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 502 {
		t.Errorf("route of a function without a binary: %d, want 502", res.StatusCode)
	}

	// The timer fires, and the function's pid shows in the host's log.
	waitLine(t, errLines, regexp.MustCompile(`\[fn\] timer tick fired`), &seenErr)
	waitLine(t, errLines, regexp.MustCompile(`\[timer\] tick -> fn at \S+Z \(\S+\): \{"audited":0`), &seenErr)
	var pids []int
	for _, l := range seenErr {
		if m := regexp.MustCompile(`started \(pid (\d+)`).FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no process start in the log:\n%s", strings.Join(seenErr, "\n"))
	}

	stopServe()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGINT: %v", err)
	}
	for _, pid := range pids {
		// Reaped by scflocal before it exited, so not even a zombie is left; its
		// parent is gone, so a survivor would have been re-parented, not reaped.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("function pid %d survived scflocal: %v", pid, err)
		}
	}
}
