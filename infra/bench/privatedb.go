package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// privateServer is a MariaDB of the tool's own: its own data directory, port
// and settings, so a scenario can give it a small max_connections, and its
// counters and CPU are this run's alone. Only it is ever stopped; the server
// at MYSQL_DSN is never touched.
type privateServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	pid  int
	DSN  string // root@tcp(127.0.0.1:port)/
	exit chan struct{}
}

// startPrivateServer initialises a data directory and starts mariadbd on a
// free loopback port with the given settings (name=value, as --name=value on
// top of the server's defaults), and answers once the server says it is ready
// for connections.
func startPrivateServer(ctx context.Context, settings ...string) (*privateServer, error) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mariadbd"); err != nil {
			return nil, errors.New("no mariadbd binary (apt-get install mariadb-server)")
		}
	}
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return nil, errors.New("no mariadb-install-db (apt-get install mariadb-server)")
	}
	dir, err := os.MkdirTemp("", "salon-bench-mariadb-")
	if err != nil {
		return nil, err
	}
	user := "root"
	if os.Getuid() != 0 {
		user = os.Getenv("USER")
	}
	data := filepath.Join(dir, "data")
	// Its own tmpdir, beside the data directory (inside it, MariaDB would
	// list it as a database): the default is the system's /tmp, shared with
	// every other mariadbd on the machine, whose temporary tables
	// (#sql-temptable-<pid>-...) can then collide with this one's ("Error on
	// delete of '#sql-temptable-...MAI' (Errcode: 2)"). mariadb-install-db
	// passes the option on to its bootstrap server.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--tmpdir="+tmp, "--auth-root-authentication-method=normal",
		"--user="+user, "--skip-test-db").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("mariadb-install-db: %v: %s", err, shortErr(string(out)))
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"--no-defaults", "--datadir=" + data, "--socket=" + filepath.Join(dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--tmpdir=" + tmp, "--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--user=" + user, "--skip-name-resolve", "--max-connect-errors=1000000000"}
	for _, s := range settings {
		args = append(args, "--"+s)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &privateServer{dir: dir, port: port, cmd: cmd, pid: cmd.Process.Pid, exit: make(chan struct{}),
		DSN: fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port)}
	// The server says when it is ready; wait for that line, not for a port.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var tail []string
		said := false
		for sc.Scan() {
			line := sc.Text()
			if !said && strings.Contains(line, "ready for connections") {
				said = true
				ready <- nil
			}
			if !said {
				tail = append(tail, line)
			}
		}
		if !said {
			ready <- fmt.Errorf("mariadbd ended before it was ready: %s", shortErr(strings.Join(tail[max(0, len(tail)-3):], " / ")))
		}
	}()
	go func() {
		cmd.Wait()
		close(s.exit)
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop ends this server (and only it) and removes its data.
func (s *privateServer) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
	}
	os.RemoveAll(s.dir)
}

// freePort answers a loopback TCP port nobody listens on at the moment.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
