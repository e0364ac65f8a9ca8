// Package scfhost runs Tencent SCF Go function binaries on this machine the way
// the SCF Go1 runtime runs them (infra/README.md, "The local platform"): the
// binary is started with _LAMBDA_SERVER_PORT set, serves net/rpc with the gob
// codec on that port, and the host calls Function.Invoke with the event, the
// request id, a deadline and the function's environment.
//
// Like SCF, a process serves one invocation at a time and stays warm between
// invocations; a function gets a small pool of such processes so concurrent requests
// are served side by side. A process is replaced when it exits, when the runtime
// answers ShouldExit (a panic), and when an invocation overruns the function timeout:
// the runtime cannot stop a handler that ignores its context, so the host kills the
// process, as SCF destroys the instance.
package scfhost

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"salon/shared/apigw"
)

// Defaults for the zero values of Function's fields.
const (
	DefaultTimeout      = 3 * time.Second // SCF's default function timeout
	DefaultMemoryMB     = 128
	DefaultMaxInstances = 8
	// DefaultInitTimeout bounds the time from starting a process to its answering
	// Ping. SCF's initTimeout defaults to 3 s; a busy development machine (or a
	// -race test run starting eight processes at once) needs more headroom.
	DefaultInitTimeout = 10 * time.Second
)

// Error types the host reports in InvokeError.Type. The runtime itself reports the
// Go type name of the error the handler returned or the value it panicked with.
const (
	TypeTimeout       = "FunctionTimeout" // the invocation overran Function.Timeout; the process was killed
	TypeProcessExited = "ProcessExited"   // the process died during the invocation
	TypeInitError     = "InitError"       // the process did not come up (exited, or never listened)
	TypeRuntimeError  = "RuntimeError"    // the process answered the RPC with a protocol error
)

// listenHost is the only address a function process listens on: loopback,
// where the host dials it.
const listenHost = "127.0.0.1"

// pingTimeout bounds the health check of a warm process before it is reused.
const pingTimeout = 2 * time.Second

var (
	// ErrClosed is returned by Invoke once Close has been called.
	ErrClosed = errors.New("scfhost: host closed")
	// ErrUnknownFunction is returned by Invoke for a name that was never registered.
	ErrUnknownFunction = errors.New("scfhost: unknown function")
)

// Function describes one SCF function: its binary and its configuration.
type Function struct {
	Name         string            // the function's name, as in serverless.yml
	Binary       string            // path of the built executable (the zip's "main")
	Env          map[string]string // the configured environment variables
	Timeout      time.Duration     // the function timeout; DefaultTimeout when zero
	MemoryMB     int               // MemoryLimitInMb; DefaultMemoryMB when zero
	MaxInstances int               // processes run at once at most; DefaultMaxInstances when zero
	InitTimeout  time.Duration     // DefaultInitTimeout when zero
}

// StackFrame is one frame of a panic's stack as the runtime reports it.
type StackFrame struct {
	Path  string `json:"path"`
	Line  int32  `json:"line"`
	Label string `json:"label"`
}

// InvokeError is a failed invocation: an error the handler returned, a panic, a
// timeout or a process that died. It is the function's failure, not the host's.
type InvokeError struct {
	Type       string       `json:"errorType"`
	Message    string       `json:"errorMessage"`
	StackTrace []StackFrame `json:"stackTrace,omitempty"`
	// ShouldExit is set by the runtime after a panic; the host has replaced the process.
	ShouldExit bool `json:"shouldExit,omitempty"`
}

func (e *InvokeError) Error() string { return e.Type + ": " + e.Message }

// Timeout reports whether the invocation overran the function timeout.
func (e *InvokeError) Timeout() bool { return e.Type == TypeTimeout }

// Host starts, invokes and recycles function processes. Its methods are safe for
// concurrent use.
type Host struct {
	logMu  sync.Mutex // serialises writes to logOut from every process and the host
	logOut io.Writer

	mu     sync.Mutex
	closed bool
	done   chan struct{} // closed by Close
	pools  map[string]*pool
	live   map[*instance]struct{} // every started process not yet reaped
	ports  map[int]struct{}       // ports handed to live processes
}

// NewHost returns a host that writes the functions' stdout and stderr, and its own
// notes, to logOut, each line prefixed with "[function] ". A nil logOut discards them.
func NewHost(logOut io.Writer) *Host {
	if logOut == nil {
		logOut = io.Discard
	}
	return &Host{
		logOut: logOut,
		done:   make(chan struct{}),
		pools:  map[string]*pool{},
		live:   map[*instance]struct{}{},
		ports:  map[int]struct{}{},
	}
}

// pool is one function's processes.
type pool struct {
	fn      Function
	env     []string // the process environment, without the port
	envJSON string   // InvokeRequest.Environment
	slots   chan struct{}
	nextID  atomic.Int64

	mu   sync.Mutex
	idle []*instance // warm processes, most recently used last
}

// Register adds a function. Processes start on demand, at the first invocation.
func (h *Host) Register(fn Function) error {
	if fn.Name == "" {
		return errors.New("scfhost: function without a name")
	}
	if fn.Binary == "" {
		return fmt.Errorf("scfhost: function %s: no binary", fn.Name)
	}
	if st, err := os.Stat(fn.Binary); err != nil {
		return fmt.Errorf("scfhost: function %s: %w", fn.Name, err)
	} else if st.IsDir() {
		return fmt.Errorf("scfhost: function %s: %s is a directory", fn.Name, fn.Binary)
	}
	bin, err := filepath.Abs(fn.Binary)
	if err != nil {
		return fmt.Errorf("scfhost: function %s: %w", fn.Name, err)
	}
	fn.Binary = bin
	if fn.Timeout <= 0 {
		fn.Timeout = DefaultTimeout
	}
	if fn.MemoryMB <= 0 {
		fn.MemoryMB = DefaultMemoryMB
	}
	if fn.MaxInstances <= 0 {
		fn.MaxInstances = DefaultMaxInstances
	}
	if fn.InitTimeout <= 0 {
		fn.InitTimeout = DefaultInitTimeout
	}
	envJSON := ""
	if len(fn.Env) > 0 {
		b, err := json.Marshal(fn.Env)
		if err != nil {
			return fmt.Errorf("scfhost: function %s: environment: %w", fn.Name, err)
		}
		envJSON = string(b)
	}
	p := &pool{
		fn:      fn,
		env:     processEnv(fn),
		envJSON: envJSON,
		slots:   make(chan struct{}, fn.MaxInstances),
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	if _, dup := h.pools[fn.Name]; dup {
		return fmt.Errorf("scfhost: function %s registered twice", fn.Name)
	}
	h.pools[fn.Name] = p
	return nil
}

// processEnv is what SCF puts in a Go function's process environment: the
// configured variables and the runtime's own. The port is added per process.
func processEnv(fn Function) []string {
	keys := make([]string, 0, len(fn.Env))
	for k := range fn.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys)+4)
	for _, k := range keys {
		env = append(env, k+"="+fn.Env[k])
	}
	// Later entries win in os/exec, so the runtime's variables cannot be overridden.
	return append(env,
		"FUNCTION_NAME="+fn.Name,
		"FUNCTION_MEMORY_SIZE="+strconv.Itoa(fn.MemoryMB),
		"FUNCTION_VERSION=$LATEST",
		"USER_CODE_ROOT="+filepath.Dir(fn.Binary),
	)
}

// Invoke runs one invocation of the named function with payload as the event and
// returns the response payload. A failure of the function (an error it returned, a
// panic, a timeout, a process that died) comes back as an InvokeError; the error
// result is for failures of the host: an unknown function, a closed host, a binary
// that cannot be executed, or ctx ending while the invocation waited for a process.
// Once the request is handed to a process, only the function timeout ends it.
// An empty requestID is replaced by a generated one.
func (h *Host) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *InvokeError, error) {
	h.mu.Lock()
	p, ok := h.pools[fn]
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, nil, ErrClosed
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownFunction, fn)
	}
	if requestID == "" {
		requestID = NewRequestID()
	}

	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-h.done:
		return nil, nil, ErrClosed
	}
	defer func() { <-p.slots }()

	in, ierr, err := h.acquire(ctx, p)
	if err != nil || ierr != nil {
		return nil, ierr, err
	}
	out, ierr, reuse, err := h.invoke(in, payload, requestID)
	if reuse {
		p.mu.Lock()
		p.idle = append(p.idle, in)
		p.mu.Unlock()
	} else {
		in.discard()
	}
	return out, ierr, err
}

// acquire returns a warm process that still answers, or starts one.
func (h *Host) acquire(ctx context.Context, p *pool) (*instance, *InvokeError, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		err := in.ping()
		if err == nil {
			return in, nil, nil
		}
		h.logf(p.fn.Name, "scfhost: instance %d (pid %d) no longer answers (%v); replacing it", in.id, in.pid, err)
		in.discard()
	}
	return h.start(ctx, p)
}

// invoke sends one request to a process and waits for the answer or the function
// timeout. reuse reports whether the process may serve the next request.
func (h *Host) invoke(in *instance, payload []byte, requestID string) (out []byte, ierr *InvokeError, reuse bool, err error) {
	fn := in.pool.fn
	deadline := time.Now().Add(fn.Timeout)
	req := &invokeRequest{
		Payload:         payload,
		RequestId:       requestID,
		Deadline:        invokeRequestTimestamp{Seconds: deadline.Unix(), Nanos: int64(deadline.Nanosecond())},
		Namespace:       "default",
		FunctionName:    fn.Name,
		FunctionVersion: "$LATEST",
		MemoryLimitInMb: int32(fn.MemoryMB),
		TimeLimitInMs:   int32(fn.Timeout.Milliseconds()),
		Environment:     in.pool.envJSON,
	}
	resp := new(invokeResponse)
	call := in.client.Go("Function.Invoke", req, resp, make(chan *rpc.Call, 1))
	timer := time.NewTimer(fn.Timeout)
	defer timer.Stop()
	select {
	case <-call.Done:
	case <-timer.C:
		in.discard()
		if h.isClosed() {
			return nil, nil, false, ErrClosed
		}
		h.logf(fn.Name, "scfhost: request %s timed out after %s; killed instance %d (pid %d)", requestID, fn.Timeout, in.id, in.pid)
		return nil, &InvokeError{Type: TypeTimeout, Message: fmt.Sprintf("Invoking task timed out after %s", fn.Timeout)}, false, nil
	}
	if call.Error != nil {
		if h.isClosed() {
			return nil, nil, false, ErrClosed
		}
		var se rpc.ServerError
		if errors.As(call.Error, &se) {
			return nil, &InvokeError{Type: TypeRuntimeError, Message: string(se)}, false, nil
		}
		// The connection broke: the process died (os.Exit, a fatal error, a signal).
		return nil, &InvokeError{
			Type:    TypeProcessExited,
			Message: "function process exited during the invocation (" + in.exitStatus(time.Second) + ")",
		}, false, nil
	}
	if e := resp.Error; e != nil {
		ierr := &InvokeError{Type: e.Type, Message: e.Message, ShouldExit: e.ShouldExit}
		for _, f := range e.StackTrace {
			if f != nil {
				ierr.StackTrace = append(ierr.StackTrace, StackFrame{Path: f.Path, Line: f.Line, Label: f.Label})
			}
		}
		if e.ShouldExit {
			h.logf(fn.Name, "scfhost: request %s panicked (%s); replacing instance %d (pid %d)", requestID, e.Message, in.id, in.pid)
		}
		return nil, ierr, !e.ShouldExit, nil
	}
	return resp.Payload, nil, true, nil
}

// start launches a new process for p and waits until it answers Ping.
func (h *Host) start(ctx context.Context, p *pool) (*instance, *InvokeError, error) {
	fn := p.fn
	began := time.Now()
	in := &instance{pool: p, id: int(p.nextID.Add(1)), done: make(chan struct{})}
	stdout := h.newLineWriter(fn.Name)
	stderr := h.newLineWriter(fn.Name)

	// Start under the lock, so that Close either sees the process or the start sees
	// the host closed: no process can outlive Close.
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, nil, ErrClosed
	}
	port, err := h.reservePort()
	if err != nil {
		h.mu.Unlock()
		return nil, nil, err
	}
	cmd := exec.Command(fn.Binary)
	cmd.Dir = filepath.Dir(fn.Binary)
	cmd.Env = append(append([]string(nil), p.env...),
		"_LAMBDA_SERVER_PORT="+strconv.Itoa(port),
		"_SCF_SERVER_PORT="+strconv.Itoa(port),
		// On SCF the runtime listens on 0.0.0.0; on a developer's machine that
		// would put every function on the network. apigw.Start listens on
		// this host instead when it is set (SCF never sets it).
		apigw.ListenHostEnv+"="+listenHost,
	)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // do not hang on output pipes held by a grandchild
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		delete(h.ports, port)
		h.mu.Unlock()
		return nil, nil, fmt.Errorf("scfhost: start %s: %w", fn.Name, err)
	}
	in.cmd, in.pid, in.port = cmd, cmd.Process.Pid, port
	h.live[in] = struct{}{}
	h.mu.Unlock()
	go h.reap(in, stdout, stderr)

	// scf-go-lib listens only after main has run up to apigw.Start, and
	// Linux tells nobody when another process starts listening: dial, and when
	// the dial is refused dial again after a pause that starts at 50 us and
	// doubles up to 1 ms. A cold start is then seen within about a millisecond
	// of the runtime listening (a fixed 20 ms step hid up to 20 ms of it), and
	// the dials cost the starting process next to nothing.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	initTimer := time.NewTimer(fn.InitTimeout)
	defer initTimer.Stop()
	pause := 50 * time.Microsecond
	retry := time.NewTimer(time.Hour) // armed by Reset below
	defer retry.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			in.client = rpc.NewClient(conn)
			break
		}
		retry.Reset(pause)
		pause = min(2*pause, time.Millisecond)
		select {
		case <-in.done:
			if h.isClosed() {
				return nil, nil, ErrClosed
			}
			return nil, &InvokeError{Type: TypeInitError, Message: "function process exited during initialisation (" + exitText(in.exitErr) + ")"}, nil
		case <-h.done:
			in.discard()
			return nil, nil, ErrClosed
		case <-ctx.Done():
			in.discard()
			return nil, nil, ctx.Err()
		case <-initTimer.C:
			in.discard()
			return nil, &InvokeError{Type: TypeInitError, Message: fmt.Sprintf("function did not listen on _LAMBDA_SERVER_PORT within %s", fn.InitTimeout)}, nil
		case <-retry.C:
		}
	}
	if err := in.ping(); err != nil {
		in.discard()
		if h.isClosed() {
			return nil, nil, ErrClosed
		}
		return nil, &InvokeError{Type: TypeInitError, Message: "function does not answer Function.Ping: " + err.Error()}, nil
	}
	h.logf(fn.Name, "scfhost: instance %d started (pid %d, port %d) in %s", in.id, in.pid, port, time.Since(began).Round(time.Millisecond))
	return in, nil, nil
}

// reservePort finds a free TCP port for a new process. The caller holds h.mu.
// There is a window between closing the probe and the child binding the port;
// ports of live processes are never handed out twice, and a child that loses the
// race to another program exits, which start reports as an init error.
func (h *Host) reservePort() (int, error) {
	for range 50 {
		// The function binds listenHost:port, so probe the same address.
		l, err := net.Listen("tcp4", net.JoinHostPort(listenHost, "0"))
		if err != nil {
			return 0, fmt.Errorf("scfhost: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, used := h.ports[port]; !used {
			h.ports[port] = struct{}{}
			return port, nil
		}
	}
	return 0, errors.New("scfhost: no free port found")
}

// reap waits for a process to exit and forgets it.
func (h *Host) reap(in *instance, outs ...*lineWriter) {
	err := in.cmd.Wait()
	for _, w := range outs {
		w.flush()
	}
	in.exitErr = err
	if !in.killed.Load() {
		h.logf(in.pool.fn.Name, "scfhost: instance %d (pid %d) exited (%s)", in.id, in.pid, exitText(err))
	}
	h.mu.Lock()
	delete(h.live, in)
	delete(h.ports, in.port)
	h.mu.Unlock()
	close(in.done)
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Close kills every process the host started and waits until each has exited.
// Invocations in flight end with ErrClosed; later calls to Invoke fail with it.
func (h *Host) Close() error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
	live := make([]*instance, 0, len(h.live))
	for in := range h.live {
		live = append(live, in)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range live {
		wg.Go(in.terminate)
	}
	wg.Wait()
	return nil
}

func (h *Host) logf(fn, format string, args ...any) {
	line := fmt.Sprintf("[%s] "+format+"\n", append([]any{fn}, args...)...)
	h.logMu.Lock()
	defer h.logMu.Unlock()
	_, _ = io.WriteString(h.logOut, line)
}

// instance is one running function process.
type instance struct {
	pool   *pool
	id     int
	cmd    *exec.Cmd
	pid    int
	port   int
	client *rpc.Client // used only by the goroutine holding the instance

	killOnce sync.Once
	killed   atomic.Bool
	done     chan struct{} // closed once the process has exited and been reaped
	exitErr  error         // the result of Wait; read only after done is closed
}

// ping checks that the process still serves RPC.
func (in *instance) ping() error {
	select {
	case <-in.done:
		return errors.New("process exited (" + exitText(in.exitErr) + ")")
	default:
	}
	call := in.client.Go("Function.Ping", &pingRequest{}, &pingResponse{}, make(chan *rpc.Call, 1))
	t := time.NewTimer(pingTimeout)
	defer t.Stop()
	select {
	case <-call.Done:
		return call.Error
	case <-in.done:
		return errors.New("process exited (" + exitText(in.exitErr) + ")")
	case <-t.C:
		return fmt.Errorf("no answer to Ping within %s", pingTimeout)
	}
}

// terminate kills the process and waits until it has been reaped. Any goroutine
// may call it, any number of times.
func (in *instance) terminate() {
	in.killOnce.Do(func() {
		in.killed.Store(true)
		killProcess(in.cmd, in.done)
	})
	<-in.done
}

// discard terminates the process and closes the connection; only the goroutine
// holding the instance calls it.
func (in *instance) discard() {
	in.terminate()
	if in.client != nil {
		_ = in.client.Close()
	}
}

// exitStatus describes how the process ended, waiting up to wait for it to end.
func (in *instance) exitStatus(wait time.Duration) string {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-in.done:
		return exitText(in.exitErr)
	case <-t.C:
		return "connection lost, process still running"
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// NewRequestID returns a random RFC 4122 version 4 UUID, the form of SCF's request ids.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
