// Command fn is a test function for scfhost and localgw. The event's "op" picks
// what it does; an API Gateway event (one with "httpMethod") is answered with an
// integrated response that carries the event back, base64-encoded; a timer event
// with a release-style summary.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"salon/shared/apigw"
	"sync/atomic"
	"time"

	"github.com/tencentyun/scf-go-lib/functioncontext"
)

type event struct {
	Op          string `json:"op"`
	HTTPMethod  string `json:"httpMethod"`
	Path        string `json:"path"`
	Type        string `json:"Type"`
	TriggerName string `json:"TriggerName"`
}

type echo struct {
	Event        json.RawMessage   `json:"event"`
	RequestID    string            `json:"requestId"`
	FunctionName string            `json:"functionName"`
	Namespace    string            `json:"namespace"`
	Version      string            `json:"version"`
	MemoryMB     int32             `json:"memoryMb"`
	TimeLimitMs  int32             `json:"timeLimitMs"`
	Deadline     string            `json:"deadline"`
	PID          int               `json:"pid"`
	Env          map[string]string `json:"env"`
	ContextEnv   map[string]string `json:"contextEnv"`
}

// inflight counts invocations running in this process at once; SCF (and the host)
// never runs two.
var inflight atomic.Int32

func handle(ctx context.Context, raw json.RawMessage) (any, error) {
	if n := inflight.Add(1); n != 1 {
		inflight.Add(-1)
		return nil, fmt.Errorf("%d invocations at once in one process", n)
	}
	defer inflight.Add(-1)

	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	if ev.HTTPMethod != "" && ev.Path == "/env" {
		b, _ := json.Marshal(processEnv())
		return map[string]any{"statusCode": 200, "headers": map[string]string{"content-type": "application/json"}, "body": string(b)}, nil
	}
	if ev.HTTPMethod != "" {
		return map[string]any{
			"isBase64Encoded": true,
			"statusCode":      201,
			"headers":         map[string]string{"content-type": "application/octet-stream", "x-fn": "fn"},
			"body":            base64.StdEncoding.EncodeToString(raw),
		}, nil
	}
	if ev.Type == "Timer" {
		fmt.Printf("timer %s fired\n", ev.TriggerName)
		return map[string]int{"released": 0, "confirmed": 0, "refunded": 0, "audited": 0}, nil
	}
	switch ev.Op {
	case "echo":
		lc, _ := functioncontext.FromContext(ctx)
		dl, _ := ctx.Deadline()
		out := echo{
			Event:      raw,
			PID:        os.Getpid(),
			Deadline:   dl.UTC().Format(time.RFC3339Nano),
			Env:        processEnv(),
			ContextEnv: lc.Environment,
		}
		out.RequestID, out.FunctionName, out.Namespace, out.Version = lc.RequestID, lc.FunctionName, lc.Namespace, lc.FunctionVersion
		out.MemoryMB, out.TimeLimitMs = lc.MemoryLimitInMb, lc.TimeLimitInMs
		fmt.Printf(`{"level":"info","msg":"echo","requestId":%q}`+"\n", lc.RequestID)
		return out, nil
	case "pid":
		return map[string]int{"pid": os.Getpid()}, nil
	case "busy":
		// Hold the process long enough for concurrent callers to overlap.
		time.Sleep(5 * time.Millisecond)
		return map[string]int{"pid": os.Getpid()}, nil
	case "fail":
		return nil, errors.New("asked to fail")
	case "panic":
		panic("boom")
	case "hang":
		fmt.Printf("hanging pid=%d\n", os.Getpid())
		time.Sleep(time.Hour) // ignores ctx, as a stuck handler does
	case "exit":
		fmt.Fprintln(os.Stderr, "exiting on request")
		os.Exit(3)
	}
	return nil, fmt.Errorf("unknown op %q", ev.Op)
}

// processEnv reports the variables the tests look for that the process has
// (an unset one is absent, not empty).
func processEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{"FOO", "BAR", "PATH", "SALON_DEV", "TENCENTCLOUD_SECRETID",
		"_LAMBDA_SERVER_PORT", "_SCF_SERVER_PORT", "FUNCTION_NAME", "FUNCTION_MEMORY_SIZE", "FUNCTION_VERSION"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

func main() {
	// FN_INIT makes the process fail before it serves: "exit" exits, "hang" never listens.
	switch os.Getenv("FN_INIT") {
	case "exit":
		fmt.Fprintln(os.Stderr, "config missing")
		os.Exit(2)
	case "hang":
		time.Sleep(time.Hour)
	}
	// As the product's functions start: the library's runtime, on the host the
	// local runtime names.
	apigw.Start(handle)
}
