package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The network between SCF and TencentDB costs a few hundred microseconds per
// round trip; loopback costs tens. A latencyProxy puts that distance back: it
// forwards TCP connections to an upstream and hands every chunk it reads to the
// other side `delay` after it arrived, in each direction. It delays, it does not
// throttle: chunks sent back to back leave back to back, so pipelined traffic
// (a multi-statement's OK packets) stays pipelined.
//
// Go's timers wake up to about a millisecond late on these machines, far more
// than the delay itself, so every chunk of every proxy goes through one
// deliveryClock: a goroutine locked to its own OS thread with the kernel's timer
// slack at 1 ns, which sleeps until shortly before the earliest delivery and
// spins the rest (measured: about 25 µs late without the spin, a few with it).
type latencyProxy struct {
	ln       net.Listener
	upstream string
	delay    time.Duration
	clock    *deliveryClock

	// Chunks forwarded toward the upstream and back; a request/answer pair is
	// at least one of each.
	chunksUp, chunksDown atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// newLatencyProxy listens on a free loopback port and forwards to upstream
// (host:port) through clock.
func newLatencyProxy(upstream string, clock *deliveryClock) (*latencyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{ln: ln, upstream: upstream, delay: clock.delay, clock: clock, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is where clients connect instead of the upstream.
func (p *latencyProxy) Addr() string { return p.ln.Addr().String() }

func (p *latencyProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// track remembers a connection so Close can end it; false when the proxy is closed.
func (p *latencyProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *latencyProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// serve connects the client to the upstream. The TCP handshake to a server
// that far away costs a round trip before the first byte, so the dial waits
// one (the handshake on loopback itself costs next to nothing).
func (p *latencyProxy) serve(client net.Conn) {
	p.clock.wait(2 * p.delay)
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	done := make(chan struct{}, 2)
	go p.pipe(client, server, &p.chunksUp, done)
	go p.pipe(server, client, &p.chunksDown, done)
	<-done
	<-done
	client.Close()
	server.Close()
	p.untrack(client, server)
}

// pipe reads src and schedules each chunk for dst; the end of src is
// scheduled too, so dst sees it after the last chunk, as far away as the rest.
func (p *latencyProxy) pipe(src, dst net.Conn, count *atomic.Int64, done chan<- struct{}) {
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			count.Add(1)
			p.clock.schedule(func() {
				if _, werr := dst.Write(chunk); werr != nil {
					src.Close()
				}
			})
		}
		if err != nil {
			p.clock.schedule(func() {
				if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
					tc.CloseWrite()
				} else {
					dst.Close()
				}
				done <- struct{}{}
			})
			return
		}
	}
}

// Close stops accepting and ends every forwarded connection.
func (p *latencyProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// deliveryClock runs scheduled deliveries `delay` after they were scheduled, in
// the order they were scheduled (a constant delay keeps that order), on one
// OS thread that sleeps precisely. A delivery must not block for long: it is a
// write of a chunk to a loopback socket whose reader keeps reading.
type deliveryClock struct {
	delay time.Duration

	mu      sync.Mutex
	queue   []delivery
	wake    chan struct{} // one token: the queue went from empty to not
	stopped bool
	done    chan struct{}

	// late sums how far after its due time each delivery ran, for the report.
	late, runs atomic.Int64
}

type delivery struct {
	due time.Time
	run func()
}

// spinMargin is how long before a due time the clock stops sleeping and spins:
// the kernel wakes a thread with 1 ns slack a few tens of microseconds late on
// a busy 2-core machine.
const spinMargin = 50 * time.Microsecond

func newDeliveryClock(delay time.Duration) *deliveryClock {
	c := &deliveryClock{delay: delay, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.loop()
	return c
}

// schedule runs f delay from now.
func (c *deliveryClock) schedule(f func()) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.queue = append(c.queue, delivery{due: time.Now().Add(c.delay), run: f})
	first := len(c.queue) == 1
	c.mu.Unlock()
	if first {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// wait blocks the caller for d, as precisely as the clock delivers.
func (c *deliveryClock) wait(d time.Duration) {
	for ; d > 0; d -= c.delay {
		ch := make(chan struct{})
		c.schedule(func() { close(ch) })
		select {
		case <-ch:
		case <-c.done:
			return
		}
	}
}

func (c *deliveryClock) loop() {
	runtime.LockOSThread()
	// PR_SET_TIMERSLACK: the default slack of 50 µs would be added to every sleep.
	syscall.RawSyscall(syscall.SYS_PRCTL, 29, 1, 0)
	defer close(c.done)
	for {
		c.mu.Lock()
		for len(c.queue) == 0 {
			if c.stopped {
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		due := c.queue[0].due
		c.mu.Unlock()
		sleepUntil(due)
		now := time.Now()
		c.mu.Lock()
		n := 0
		for n < len(c.queue) && !c.queue[n].due.After(now) {
			n++
		}
		ready := append([]delivery(nil), c.queue[:n]...)
		c.queue = append(c.queue[:0], c.queue[n:]...)
		c.mu.Unlock()
		for _, d := range ready {
			c.late.Add(int64(now.Sub(d.due)))
			c.runs.Add(1)
			d.run()
		}
	}
}

// sleepUntil returns at t or just after: a kernel sleep to spinMargin before
// it, then a spin.
func sleepUntil(t time.Time) {
	if d := time.Until(t) - spinMargin; d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		syscall.Nanosleep(&ts, nil)
	}
	for time.Now().Before(t) {
	}
}

// meanLate is the mean lateness of the deliveries so far.
func (c *deliveryClock) meanLate() time.Duration {
	if n := c.runs.Load(); n > 0 {
		return time.Duration(c.late.Load() / n)
	}
	return 0
}

// stop ends the clock once the queue is empty; later schedules are dropped.
func (c *deliveryClock) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}

func (c *deliveryClock) String() string {
	return fmt.Sprintf("%s each way", c.delay)
}
