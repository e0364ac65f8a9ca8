package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"salon/infra/scfhost"
	"salon/shared/apigw"
)

// Handler is a function's entry point, as its main hands it to the SCF runtime:
// a router's Invoke.
type Handler func(ctx context.Context, event json.RawMessage) (apigw.Response, error)

// InProcess runs the functions' routers in this process the way scfhost runs
// their binaries: the gateway event in, the integrated response out. A function
// may have several warm instances (each its own instance.Env, so its own pool and
// clients), used in turn.
type InProcess struct {
	Functions map[string][]Handler
	// Timeout, when set, is every invocation's deadline, as SCF gives a
	// function its timeout.
	Timeout time.Duration
	next    atomic.Uint64
}

// Invoke runs one invocation of fn on its next instance.
func (p *InProcess) Invoke(ctx context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	hs := p.Functions[fn]
	if len(hs) == 0 {
		return nil, nil, fmt.Errorf("no function %q", fn)
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	return Invoke(ctx, hs[p.next.Add(1)%uint64(len(hs))], payload)
}

// Invoke runs h on payload and answers as the SCF runtime does: the response
// as JSON, or the function's error as an invocation error.
func Invoke(ctx context.Context, h Handler, payload []byte) ([]byte, *scfhost.InvokeError, error) {
	resp, err := h(ctx, payload)
	if err != nil {
		return nil, &scfhost.InvokeError{Message: err.Error()}, nil
	}
	out, err := json.Marshal(resp)
	return out, nil, err
}
