// Package testkit holds small helpers shared by the product's test suites.
package testkit

import (
	"bytes"
	"sync"
)

// SyncBuffer collects log output written from many goroutines (function
// processes, the gateway, the simulators) for a test to scan afterwards.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
