package stress

import (
	"io"
	"net"
	"sync"
)

// dbProxy is a TCP proxy in front of MariaDB for the functions' MYSQL_DSN. Down
// makes the database unreachable for them: open connections are cut and new ones
// are accepted and closed at once, which the driver sees exactly like a database
// that restarted or a VPC route that flapped.
type dbProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newDBProxy(target string) (*dbProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &dbProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *dbProxy) Addr() string { return p.ln.Addr().String() }

func (p *dbProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			continue
		}
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

// track registers a connection pair unless the proxy went down meanwhile.
func (p *dbProxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		c.Close()
		s.Close()
		return false
	}
	p.conns[c] = struct{}{}
	p.conns[s] = struct{}{}
	return true
}

func (p *dbProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// SetDown cuts every open connection and refuses new ones (true), or lets
// connections through again (false).
func (p *dbProxy) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
	}
}

func (p *dbProxy) Close() {
	p.ln.Close()
	p.SetDown(true)
	p.wg.Wait()
}
