package mysql_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// largeSchedule is the largest schedule one request may ask for: 92 days of
// 5-minute slots from 00:00 while a slot ends by 23:59, 287 a day, 26,404 in all.
func largeSchedule(t testing.TB, from time.Time) []booking.ScheduledSlot {
	t.Helper()
	fiveMin, capacity, price := 5, 3, int64(5000)
	s := booking.Schedule{From: from.Format(time.DateOnly), To: from.AddDate(0, 0, 91).Format(time.DateOnly),
		Open: "00:00", Close: "23:59", SlotMinutes: &fiveMin, Capacity: &capacity, PriceFen: &price}
	slots, err := s.Slots(time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 26404 {
		t.Fatalf("%d slots, want 26404", len(slots))
	}
	return slots
}

// TestCreateSlotsCountsExactly: a schedule over several batches, some of
// whose starts exist already (at the first and last place, on both sides of a
// batch's edge, and a run across one), creates exactly the new ones, counts
// the others as skipped, and leaves the existing ones as they were.
func TestCreateSlotsCountsExactly(t *testing.T) {
	t.Parallel()
	db := mysqltest.New(t)
	base := time.Date(2300, 1, 1, 2, 0, 0, 0, time.UTC)
	const n = 2*mysql.SlotBatch + 345
	all := make([]booking.ScheduledSlot, n)
	for i := range all {
		start := base.Add(time.Duration(i) * 10 * time.Minute)
		all[i] = booking.ScheduledSlot{StartAt: start, EndAt: start.Add(10 * time.Minute), Capacity: 3, PriceFen: 5000}
	}
	existing := map[int]bool{0: true, n - 1: true, mysql.SlotBatch - 1: true, mysql.SlotBatch: true, 2*mysql.SlotBatch + 1: true}
	for i := 700; i < 1300; i++ {
		existing[i] = true
	}
	var first []booking.ScheduledSlot
	for i := range existing {
		s := all[i]
		s.Capacity, s.PriceFen = 7, 1 // so that a changed row would show
		first = append(first, s)
	}
	created, skipped, err := db.CreateSlots(ctx, first)
	if err != nil || created != len(existing) || skipped != 0 {
		t.Fatalf("the existing slots: created %d skipped %d (%v), want %d 0", created, skipped, err, len(existing))
	}

	created, skipped, err = db.CreateSlots(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if created != n-len(existing) || skipped != len(existing) {
		t.Errorf("created %d skipped %d, want %d %d", created, skipped, n-len(existing), len(existing))
	}
	var rows, kept, fresh int
	if err := db.SQL().QueryRow(`SELECT COUNT(*), SUM(capacity = 7 AND price_fen = 1), SUM(capacity = 3 AND price_fen = 5000) FROM t_slot`).Scan(&rows, &kept, &fresh); err != nil {
		t.Fatal(err)
	}
	if rows != n || kept != len(existing) || fresh != n-len(existing) {
		t.Errorf("%d rows, %d kept as they were, %d new; want %d, %d, %d", rows, kept, fresh, n, len(existing), n-len(existing))
	}

	// Sent again: all skipped. A start given twice in one request: once created.
	if created, skipped, err := db.CreateSlots(ctx, all); err != nil || created != 0 || skipped != n {
		t.Errorf("again: created %d skipped %d (%v), want 0 %d", created, skipped, err, n)
	}
	twice := booking.ScheduledSlot{StartAt: base.AddDate(0, 1, 0), EndAt: base.AddDate(0, 1, 0).Add(time.Hour), Capacity: 1}
	if created, skipped, err := db.CreateSlots(ctx, []booking.ScheduledSlot{twice, twice}); err != nil || created != 1 || skipped != 1 {
		t.Errorf("a start twice: created %d skipped %d (%v), want 1 1", created, skipped, err)
	}
	// One bad slot in the last batch: nothing of the request is created.
	bad := make([]booking.ScheduledSlot, 0, n)
	for _, s := range all {
		s.StartAt, s.EndAt = s.StartAt.AddDate(1, 0, 0), s.EndAt.AddDate(1, 0, 0)
		bad = append(bad, s)
	}
	bad[n-2].EndAt = bad[n-2].StartAt // chk_slot_times
	if _, _, err := db.CreateSlots(ctx, bad); err == nil {
		t.Error("a schedule with an impossible slot was accepted")
	}
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot`).Scan(&rows); err != nil || rows != n+1 {
		t.Errorf("%d rows after the refused schedule (%v), want %d", rows, err, n+1)
	}
	mysqltest.CheckInvariant(t, db)

	// The counts rest on affected rows meaning changed rows, which a DSN
	// cannot turn into found rows.
	if cfg, err := mysql.Config("root@tcp(127.0.0.1:3306)/salon?clientFoundRows=true"); err != nil || cfg.ClientFoundRows {
		t.Errorf("Config kept clientFoundRows=true (%v)", err)
	}
}

// TestCreateSlotsRoundTrips: the largest schedule costs a few dozen round
// trips to the database, not one per slot. One per slot was 26,404 round
// trips: 2.9 s here, about 13 s at TencentDB's distance, past the admin
// function's timeout. Counted at a proxy, as the turns of the conversation.
func TestCreateSlotsRoundTrips(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	direct, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg, err := drv.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newTurnProxy(t, cfg.Addr)
	cfg.Addr = p.addr()
	db, err := mysql.Open(cfg.FormatDSN(), mysql.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil { // the handshake is not the schedule's
		t.Fatal(err)
	}
	slots := largeSchedule(t, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC))
	before := p.turns.Load()
	created, skipped, err := db.CreateSlots(ctx, slots)
	turns := p.turns.Load() - before
	if err != nil || created != len(slots) || skipped != 0 {
		t.Fatalf("created %d skipped %d: %v", created, skipped, err)
	}
	// BEGIN, the batches, COMMIT.
	if want := int64((len(slots)+mysql.SlotBatch-1)/mysql.SlotBatch + 2); turns > want {
		t.Errorf("%d round trips for %d slots, want at most %d", turns, len(slots), want)
	}
	t.Logf("%d slots in %d round trips", len(slots), turns)
}

// BenchmarkCreateSlotsLargeSchedule creates the largest schedule one request
// may ask for (26,404 slots), new starts every iteration.
func BenchmarkCreateSlotsLargeSchedule(b *testing.B) {
	db := mysqltest.New(b)
	from := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		b.StopTimer()
		slots := largeSchedule(b, from)
		from = from.AddDate(0, 0, 92)
		b.StartTimer()
		if created, _, err := db.CreateSlots(ctx, slots); err != nil || created != len(slots) {
			b.Fatalf("created %d: %v", created, err)
		}
	}
}

// turnProxy forwards TCP to the database and counts the turns of each
// conversation: a burst from the client after the server spoke is one round
// trip, however the bytes were split into reads.
type turnProxy struct {
	ln    net.Listener
	turns atomic.Int64
	wg    sync.WaitGroup
}

func newTurnProxy(t *testing.T, upstream string) *turnProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &turnProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				client.Close()
				continue
			}
			var clientTurn atomic.Bool // the client spoke last
			p.wg.Add(2)
			go p.pipe(client, server, func() {
				if !clientTurn.Swap(true) {
					p.turns.Add(1)
				}
			})
			go p.pipe(server, client, func() { clientTurn.Store(false) })
		}
	}()
	return p
}

func (p *turnProxy) addr() string { return p.ln.Addr().String() }

func (p *turnProxy) pipe(src, dst net.Conn, saw func()) {
	defer p.wg.Done()
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			saw()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
