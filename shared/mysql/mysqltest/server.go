package mysqltest

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/mysql"
)

// Server is a private MariaDB server for the tests that need a database that
// goes away, restarts or refuses connections: its own data directory, its own
// port, started and stopped by the test and by nothing else. The shared server
// at MYSQL_DSN is never touched.
type Server struct {
	tb   testing.TB
	opt  ServerOptions
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	proc   *exec.Cmd
	exited chan struct{} // closed when proc has exited
	log    *lockedTail
}

// ServerOptions configure a private server.
type ServerOptions struct {
	// MaxConnections is the server's max_connections; 0 keeps MariaDB's
	// default (151), and MariaDB raises anything below 10 to 10. It binds the
	// application account of DSN; root (the tests' own view) may take one
	// more, as an administrator can on TencentDB.
	MaxConnections int
}

// AppUser is the account DSN names: what the functions connect as, with the
// privileges an application account has on TencentDB and none of an
// administrator's (no CONNECTION ADMIN: max_connections binds it).
const AppUser = "salon"

// startTimeout bounds a start: initialising a data directory and InnoDB's
// recovery after an unclean stop take seconds on a busy machine.
const startTimeout = 60 * time.Second

// StartServer initialises a data directory with mariadb-install-db, starts
// mariadbd on a free port of 127.0.0.1 and waits until it is ready for
// connections. The server is killed and its directory removed when the test
// ends. The test is skipped only when mariadbd is not installed.
func StartServer(tb testing.TB, opt ServerOptions) *Server {
	tb.Helper()
	bin := lookBinary("mariadbd", "/usr/sbin/mariadbd", "/usr/libexec/mariadbd")
	if bin == "" {
		tb.Skip("mariadbd is not installed: this test needs a private MariaDB it can stop and restart")
	}
	install := lookBinary("mariadb-install-db", "/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db")
	if install == "" {
		tb.Fatal("mariadbd is installed but mariadb-install-db is not")
	}
	// A short path: the server's Unix socket must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "salon-mariadb-")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{tb: tb, opt: opt, bin: bin, dir: dir, log: &lockedTail{}}
	tb.Cleanup(func() {
		s.kill()
		os.RemoveAll(dir)
	})
	if err := os.Mkdir(s.tmpDir(), 0o700); err != nil {
		tb.Fatal(err)
	}
	// The bootstrap server of mariadb-install-db takes --tmpdir like mariadbd
	// (it passes options it does not know on), and needs it as much.
	out, err := exec.Command(install, "--no-defaults", "--datadir="+filepath.Join(dir, "data"),
		"--tmpdir="+s.tmpDir(),
		"--auth-root-authentication-method=normal", "--user="+currentUser(), "--skip-test-db",
		"--innodb-log-file-size=8M").CombinedOutput()
	if err != nil {
		tb.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s.Start()
	admin, err := sql.Open("mysql", s.RootDSN(""))
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	for _, host := range []string{"localhost", "127.0.0.1"} {
		for _, q := range []string{
			"CREATE USER '" + AppUser + "'@'" + host + "'",
			"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES, LOCK TABLES, " +
				"CREATE TEMPORARY TABLES, CREATE ROUTINE, ALTER ROUTINE, EXECUTE ON *.* TO '" + AppUser + "'@'" + host + "'",
		} {
			if _, err := admin.Exec(q); err != nil {
				tb.Fatalf("private server: %s: %v", q, err)
			}
		}
	}
	return s
}

// tmpDir is the server's own temporary directory, beside its data directory
// (inside it, MariaDB would list it as a database). Left at its default,
// tmpdir is the system's /tmp, shared with every other mariadbd on the
// machine: the temporary tables of one server (#sql-temptable-<pid>-...) were
// then deleted or replaced by another's, and a server failed with "Error on
// delete of '#sql-temptable-...MAI' (Errcode: 2)", mid-test or while
// mariadb-install-db bootstrapped it.
func (s *Server) tmpDir() string { return filepath.Join(s.dir, "tmp") }

func lookBinary(name string, fallbacks ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range fallbacks {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// currentUser is the account mariadbd runs as: it refuses to run as root
// unless told to.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// DSN returns the DSN of database db on this server for the application
// account (AppUser): the MYSQL_DSN to give the functions.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("%s@tcp(127.0.0.1:%d)/%s", AppUser, s.port, db)
}

// RootDSN returns the DSN of database db for root.
func (s *Server) RootDSN(db string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s", s.port, db)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Open creates a fresh migrated database on this server (dropped when the
// test ends, if the server is up) and returns a store on it for root with a
// pool of maxConns (the test's own view: slots, the invariant), and the
// database's DSN for the application account (the functions' MYSQL_DSN).
func (s *Server) Open(tb testing.TB, maxConns int) (*mysql.DB, string) {
	tb.Helper()
	store, rootDSN := open(tb, newDSNOn(tb, s.RootDSN("")), maxConns)
	cfg, err := drv.ParseDSN(rootDSN)
	if err != nil {
		tb.Fatal(err)
	}
	return store, s.DSN(cfg.DBName)
}

// Start starts the server (again, after Stop) on the same port and data
// directory, and waits until it is ready for connections.
func (s *Server) Start() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.tb.Fatal("mysqltest: the private server is already running")
	}
	args := []string{"--no-defaults",
		"--datadir=" + filepath.Join(s.dir, "data"),
		"--socket=" + filepath.Join(s.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(s.dir, "mysqld.pid"),
		"--tmpdir=" + s.tmpDir(),
		"--port=" + strconv.Itoa(s.port), "--bind-address=127.0.0.1",
		"--user=" + currentUser(),
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M",
		// Refused and cut connections are what these tests are about; they
		// must not get 127.0.0.1 blocked (error 1129).
		"--max-connect-errors=1000000",
	}
	if s.opt.MaxConnections > 0 {
		args = append(args, "--max-connections="+strconv.Itoa(s.opt.MaxConnections))
	}
	cmd := exec.Command(s.bin, args...)
	setProcAttr(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		s.tb.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("start mariadbd: %v", err)
	}
	ready := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		// mariadbd logs to stderr; it is ready once it says so.
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			s.log.add(sc.Text())
			if !signalled && strings.Contains(sc.Text(), "ready for connections") {
				signalled = true
				close(ready)
			}
		}
		cmd.Wait()
		close(exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-exited:
		s.tb.Fatalf("mariadbd exited while starting:\n%s", s.log.String())
	case <-timer.C:
		cmd.Process.Kill()
		<-exited
		s.tb.Fatalf("mariadbd not ready after %s:\n%s", startTimeout, s.log.String())
	}
	s.proc, s.exited = cmd, exited
}

// Stop shuts the server down the way a service manager does (SIGTERM: open
// connections are closed, statements in flight fail) and waits until it has
// exited.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill stops the server at once (SIGKILL), as a crash does; the next Start
// recovers InnoDB.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

// Restart is Stop then Start.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	s.Start()
}

func (s *Server) stop(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	s.proc.Process.Signal(sig)
	<-s.exited
	s.proc, s.exited = nil, nil
}

func (s *Server) kill() { s.stop(syscall.SIGKILL) }

// Log returns the server's recent log lines, for a failing test's message.
func (s *Server) Log() string { return s.log.String() }

// lockedTail keeps the last lines of a process's log.
type lockedTail struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedTail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > 200 {
		l.lines = l.lines[len(l.lines)-200:]
	}
}

func (l *lockedTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
