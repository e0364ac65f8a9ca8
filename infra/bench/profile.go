package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// CellProfile is where the time of one cell went, per operation: what the
// client sent, waited for and spent, and what the server did meanwhile.
// Client figures are this process's; server figures are the whole server's
// (other people's tests on a shared server are in them too; OtherSessions says
// how many other client sessions were running statements when the cell began).
type CellProfile struct {
	Ops           int     `json:"ops"`
	RoundTrips    float64 `json:"round_trips_per_op"`      // commands the driver sent to MariaDB
	PoolWaitMS    float64 `json:"pool_wait_ms_per_op"`     // waiting for a free pooled connection
	ClientCPUUS   float64 `json:"client_cpu_us_per_op"`    // this process
	ServerCPUUS   float64 `json:"server_cpu_us_per_op"`    // the mariadbd process; 0 when not local
	LockWaits     float64 `json:"row_lock_waits_per_op"`   // Innodb_row_lock_waits
	LockWaitMS    float64 `json:"row_lock_wait_ms_per_op"` // Innodb_row_lock_time
	RowsWritten   float64 `json:"rows_written_per_op"`     // Handler_write+update+delete
	Rollbacks     float64 `json:"rollbacks_per_op"`        // Com_rollback
	Deadlocks     int64   `json:"deadlocks"`               // Innodb_deadlocks
	OtherSessions int     `json:"other_sessions_running"`
}

// probe reads the client's and the server's counters around a measurement.
type probe struct {
	mon       *sql.DB // one direct connection of its own, not counted
	serverPID int
}

// snapshot is the counters at one moment.
type snapshot struct {
	writes    int64
	clientCPU time.Duration
	serverCPU time.Duration
	poolWait  time.Duration
	status    map[string]int64
	others    int
}

var probedStatus = []string{"Innodb_row_lock_waits", "Innodb_row_lock_time", "Handler_write",
	"Handler_update", "Handler_delete", "Com_rollback", "Innodb_deadlocks"}

// newProbe connects to the server at dsn (any database) and finds its process,
// when it runs on this machine and its pid file can be read.
func newProbe(ctx context.Context, serverDSN string) *probe {
	db, err := sql.Open("mysql", serverDSN)
	if err != nil {
		return &probe{}
	}
	db.SetMaxOpenConns(1)
	pr := &probe{mon: db}
	var pidFile string
	if db.QueryRowContext(ctx, `SELECT @@pid_file`).Scan(&pidFile) == nil {
		if b, err := os.ReadFile(pidFile); err == nil {
			pr.serverPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	return pr
}

func (pr *probe) close() {
	if pr.mon != nil {
		pr.mon.Close()
	}
}

// snap reads every counter; dbs are the pools whose waits count.
func (pr *probe) snap(ctx context.Context, dbs ...*sql.DB) snapshot {
	s := snapshot{writes: driverWrites.Load(), clientCPU: processCPU(), status: map[string]int64{}}
	for _, db := range dbs {
		s.poolWait += db.Stats().WaitDuration
	}
	if pr.serverPID > 0 {
		s.serverCPU = pidCPU(pr.serverPID)
	}
	if pr.mon == nil {
		return s
	}
	rows, err := pr.mon.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('`+strings.Join(probedStatus, "','")+`')`)
	if err == nil {
		for rows.Next() {
			var k, v string
			if rows.Scan(&k, &v) == nil {
				s.status[k], _ = strconv.ParseInt(v, 10, 64)
			}
		}
		rows.Close()
	}
	// Sessions of other clients running a statement now (this one excluded).
	pr.mon.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE COMMAND <> 'Sleep' AND ID <> CONNECTION_ID() AND DB IS NOT NULL AND DB NOT LIKE 'salon\_bench\_%'`).Scan(&s.others)
	return s
}

// between is the profile of ops operations done between a and b.
func between(a, b snapshot, ops int) CellProfile {
	p := CellProfile{Ops: ops, OtherSessions: a.others, Deadlocks: b.status["Innodb_deadlocks"] - a.status["Innodb_deadlocks"]}
	if ops == 0 {
		return p
	}
	n := float64(ops)
	d := func(k string) float64 { return float64(b.status[k] - a.status[k]) }
	p.RoundTrips = float64(b.writes-a.writes) / n
	p.PoolWaitMS = ms(b.poolWait-a.poolWait) / n
	p.ClientCPUUS = float64((b.clientCPU - a.clientCPU).Microseconds()) / n
	p.ServerCPUUS = float64((b.serverCPU - a.serverCPU).Microseconds()) / n
	p.LockWaits = d("Innodb_row_lock_waits") / n
	p.LockWaitMS = d("Innodb_row_lock_time") / n
	p.RowsWritten = (d("Handler_write") + d("Handler_update") + d("Handler_delete")) / n
	p.Rollbacks = d("Com_rollback") / n
	return p
}

// processCPU is this process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// pidCPU is another process's user and system time so far (clock ticks of 10 ms).
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may contain spaces; the fields after it are fixed.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// startCPUProfile writes this process's CPU profile to path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeStatements writes the server's statement digests (performance_schema,
// on with -private -statements), the most time first: the server's side of
// the profile, statement by statement.
func writeStatements(ctx context.Context, dsn, path string) error {
	db, err := sql.Open("mysql", serverOnly(dsn))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT COUNT_STAR, SUM_TIMER_WAIT/1e9, SUM_LOCK_TIME/1e9, SUM_ROWS_AFFECTED, SUM_ROWS_EXAMINED,
		LEFT(REPLACE(DIGEST_TEXT, '\n', ' '), 160)
		FROM performance_schema.events_statements_summary_by_digest
		WHERE SCHEMA_NAME LIKE 'salon\_bench\_%' ORDER BY SUM_TIMER_WAIT DESC LIMIT 40`)
	if err != nil {
		return err
	}
	defer rows.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := tabwriter.NewWriter(f, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "count\ttotal ms\tus each\tlock us each\trows affected\trows examined\tstatement")
	for rows.Next() {
		var n, affected, examined int64
		var total, lock float64
		var text sql.NullString
		if err := rows.Scan(&n, &total, &lock, &affected, &examined, &text); err != nil {
			return err
		}
		fmt.Fprintf(w, "%d\t%.0f\t%.1f\t%.1f\t%d\t%d\t%s\n", n, total, 1000*total/float64(max(n, 1)), 1000*lock/float64(max(n, 1)), affected, examined, text.String)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return w.Flush()
}

// cpuAccount is the machine's CPU at the start of the run.
type cpuAccount struct {
	busy, tool, server time.Duration
	serverPID          int
	// Children that live through the report (the proxy, etcd, a private
	// server) and the CPU each had when tracked: not waited for yet, so not
	// in RUSAGE_CHILDREN.
	children map[int]time.Duration
}

// track counts a long-lived child's CPU from now on as the tool's.
func (a *cpuAccount) track(pid int) {
	if a.children == nil {
		a.children = map[int]time.Duration{}
	}
	a.children[pid] = pidCPU(pid)
}

// startCPUAccount reads the counters at the start; serverPID is followed when
// the server is the shared one (a private server is the tool's own child).
func startCPUAccount(pr *probe, private bool) cpuAccount {
	a := cpuAccount{busy: machineBusy(), tool: toolCPU()}
	if !private && pr.serverPID > 0 {
		a.serverPID = pr.serverPID
		a.server = pidCPU(pr.serverPID)
	}
	return a
}

// finish writes the CPU spent since the start into m.
func (a cpuAccount) finish(m *Machine) {
	m.BusyCPU = (machineBusy() - a.busy).Seconds()
	m.ToolCPU = (toolCPU() - a.tool).Seconds()
	for pid, base := range a.children {
		m.ToolCPU += (pidCPU(pid) - base).Seconds()
	}
	if a.serverPID > 0 {
		m.ServerCPU = (pidCPU(a.serverPID) - a.server).Seconds()
	}
	m.OtherCPU = max(0, m.BusyCPU-m.ToolCPU-m.ServerCPU)
}

// machineBusy is every core's non-idle time so far (/proc/stat, 10 ms ticks).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// toolCPU is this process's CPU and that of the children it has waited for.
func toolCPU() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(syscall.TimevalToNsec(self.Utime) + syscall.TimevalToNsec(self.Stime) +
		syscall.TimevalToNsec(kids.Utime) + syscall.TimevalToNsec(kids.Stime))
}
