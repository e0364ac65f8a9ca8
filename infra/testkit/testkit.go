// Package testkit is the test harness the product's suites share: System starts
// the whole product for one test (a fresh database, the WeChat Pay and WeChat
// server simulators over real HTTP, the functions behind the local API Gateway
// with serverless.yml's routes) around whatever runs the functions (InProcess
// routers, or scfhost with the built binaries), and its Client calls it, logs
// in and pays as a customer would. The handler tests, the stress test and the
// end-to-end test each add only what is their own.
package testkit

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// SyncBuffer collects log output written from many goroutines (function
// processes, the gateway, the simulators) for a test to scan afterwards.
type SyncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return n, err
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitFor reports whether s appears in the buffer within limit. A function's
// log line travels through its process's stdout pipe, so it can arrive a moment
// after the answer it belongs to; this waits for the write itself, not a guess.
func (b *SyncBuffer) WaitFor(s string, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if strings.Contains(b.buf.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}
