package main

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"syscall"
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
