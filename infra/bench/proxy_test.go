package main

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every byte it reads with the same byte.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// A round trip through the proxy costs at least the delay twice, and every byte
// arrives, in order, including those sent back to back.
func TestLatencyProxyDelaysEachWayAndKeepsTheBytes(t *testing.T) {
	const delay = 250 * time.Microsecond
	clock := newDeliveryClock(delay)
	defer clock.stop()
	p, err := newLatencyProxy(echoServer(t), clock)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	buf := make([]byte, 64)
	var fastest time.Duration = time.Hour
	for i := range 50 {
		msg := []byte{byte(i), 'x', 'y'}
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Since(t0))
		if !bytes.Equal(buf[:len(msg)], msg) {
			t.Fatalf("round %d: got %q, sent %q", i, buf[:len(msg)], msg)
		}
	}
	if fastest < 2*delay {
		t.Errorf("fastest round trip %s, want at least %s", fastest, 2*delay)
	}

	// Two writes back to back come back after one round trip, not two.
	var want []byte
	t0 := time.Now()
	for i := range 20 {
		chunk := bytes.Repeat([]byte{byte('a' + i)}, 1000)
		want = append(want, chunk...)
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("pipelined chunks came back changed or out of order")
	}
	if el := time.Since(t0); el > 20*delay {
		t.Logf("20 pipelined chunks took %s (a loaded machine?)", el)
	}
	if p.chunksUp.Load() == 0 || p.chunksDown.Load() == 0 {
		t.Errorf("chunks counted: up %d down %d", p.chunksUp.Load(), p.chunksDown.Load())
	}
}

// The end of one side reaches the other after the data before it.
func TestLatencyProxyForwardsTheEnd(t *testing.T) {
	clock := newDeliveryClock(100 * time.Microsecond)
	defer clock.stop()
	p, err := newLatencyProxy(echoServer(t), clock)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("last words"))
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "last words" {
		t.Fatalf("read %q, %v", got, err)
	}
}
