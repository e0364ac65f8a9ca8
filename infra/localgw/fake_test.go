package localgw

import (
	"context"
	"sync"

	"salon/infra/scfhost"
)

type invocation struct {
	fn        string
	payload   []byte
	requestID string
}

// fakeInvoker records invocations and answers with what it was given.
type fakeInvoker struct {
	calls chan invocation
	out   []byte
	ierr  *scfhost.InvokeError
	err   error
	block chan struct{} // when set, Invoke waits for it before answering
}

func newFake(out string) *fakeInvoker {
	return &fakeInvoker{calls: make(chan invocation, 16), out: []byte(out)}
}

func (f *fakeInvoker) Invoke(_ context.Context, fn string, payload []byte, requestID string) ([]byte, *scfhost.InvokeError, error) {
	f.calls <- invocation{fn, append([]byte(nil), payload...), requestID}
	if f.block != nil {
		<-f.block
	}
	return f.out, f.ierr, f.err
}

// syncBuffer is a log writer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
