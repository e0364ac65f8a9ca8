package main

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// The technician scenario: a technician's time sold in cells of the grid to
// services of different lengths, where the thing to prevent is not an
// oversold seat but two bookings of one technician whose [start, end)
// intersect. Every contender books over the same cells (t_slot rows of a
// technician, laid by the store), and after every run one query counts the
// overlapping pairs among the bookings it made.
//
// The product is mysql.DB.ReserveService through the store. The others are
// the designs of the booking systems the issue names, implemented only here:
//   - check-then-insert (Easy!Appointments): read her bookings that intersect
//     the span, insert if none; nothing holds the answer until the insert.
//   - a unique key on (technician, exact start) (cal.com): the same check,
//     and a unique key that refuses a second booking at the same first cell;
//     a booking at another start that intersects is not its business.
//   - the technician's row FOR UPDATE: lock her t_technician row, then the
//     check, then the insert, in one transaction: sound, and every booking of
//     one technician queues on her row whatever its span.
//
// Each writes what the product writes but the cells: the booking (with its
// order number) and its audit record. Their bookings go to tables of
// t_booking's shape (CREATE TABLE ... LIKE), not t_booking, so the product's
// rule that a booking holding a seat has its cells' t_booking_slot rows stays
// true of t_booking; the unique key contender's table has its key.

const (
	cTechProduct   = "product"
	cTechCheck     = "check-then-insert (no lock)"
	cTechUniqueKey = "unique key (technician, start)"
	cTechForUpdate = "technician row FOR UPDATE then check"
)

// techSchema is the bench contenders' booking tables: t_booking's shape
// (columns, generated columns, keys; LIKE copies no foreign keys on either
// server), ids far above the product's so an audit record never names two.
const techSchema = `
CREATE TABLE bench_tech_booking LIKE t_booking;
ALTER TABLE bench_tech_booking AUTO_INCREMENT = 2000000000;
CREATE TABLE bench_tech_booking_uk LIKE t_booking;
ALTER TABLE bench_tech_booking_uk AUTO_INCREMENT = 3000000000, ADD UNIQUE KEY uk_bench_tech_start (technician_id, slot_id)`

// TechRun is one run of one contender in the technician scenario: a burst,
// the overlap race's rounds, or a throughput cell.
type TechRun struct {
	Kind      string      `json:"kind"` // burst, race, mixed
	Network   string      `json:"network"`
	Contender string      `json:"contender"`
	Clients   int         `json:"clients"`
	Rep       int         `json:"rep"`
	Requests  int         `json:"requests"`
	Taken     int         `json:"taken"`
	SoldOut   int         `json:"sold_out"`
	Errors    int         `json:"errors"`
	FirstErr  string      `json:"first_error,omitempty"`
	Overlaps  int         `json:"overlaps"` // pairs of one technician's bookings whose spans intersect
	Seconds   float64     `json:"seconds"`
	SeatsPerS float64     `json:"seats_per_s"` // bookings made per second
	Latency   Latency     `json:"latency"`
	AllAnswer float64     `json:"all_answered_ms,omitempty"` // burst and race: release to the last answer
	Profile   CellProfile `json:"profile"`
}

// techContender books a service's span of a technician's cells: tech 0 is
// any of techs, in their order.
type techContender interface {
	Name() string
	table() string // where its bookings are, for the overlap count
	Reserve(ctx context.Context, r techRequest) (outcome, error)
}

// techRequest is one customer's booking: the service of minutes long at
// start, with tech (0: any of techs).
type techRequest struct {
	customer string
	service  int64
	minutes  int
	tech     int64
	techs    []int64
	start    time.Time
}

// shopZone is the shop's zone the scenario's days are laid in (China's, as
// the store's tests use): a span never crosses the shop's midnight.
var shopZone = time.FixedZone("CST", 8*3600)

// techProduct is the product: the store's ReserveService, as the service
// calls it (the shop day's bounds from the start).
type techProduct struct{ store *mysql.DB }

func (techProduct) Name() string  { return cTechProduct }
func (techProduct) table() string { return "t_booking" }

func (p techProduct) Reserve(ctx context.Context, r techRequest) (outcome, error) {
	from, to, err := booking.DayBounds(booking.ShopDay(r.start, shopZone), shopZone)
	if err != nil {
		return 0, err
	}
	_, _, err = p.store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: r.customer, ServiceID: r.service,
		TechnicianID: r.tech, StartAt: r.start, DayStart: from, DayEnd: to})
	switch {
	case err == nil:
		return taken, nil
	case booking.IsCode(err, booking.ESOLDOUT):
		return soldOut, nil
	}
	return 0, err
}

// techBench is the bench contenders' shared plumbing: the check, the writes.
type techBench struct {
	db  *sql.DB
	tbl string // bench_tech_booking or bench_tech_booking_uk (constants, never input)
}

func (t techBench) table() string { return t.tbl }

// busy reads technician tech's cell at start and whether she has a booking
// in tbl whose span intersects [start, start+minutes): her cells that start
// in the longest service's length before the span's end (uk_slot_start),
// their bookings by first cell (the booking's slot index). A plain read: it
// locks nothing. q is the pool or the transaction.
func (t techBench) busy(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, tech int64, start time.Time, minutes int) (cell int64, busy bool, err error) {
	end := start.Add(time.Duration(minutes) * time.Minute)
	var n int
	err = q.QueryRowContext(ctx, `SELECT (SELECT slot_id FROM t_slot WHERE technician_key = ? AND start_at = ?),
		(SELECT COUNT(*) FROM t_slot s JOIN `+t.tbl+` b ON b.slot_id = s.slot_id
		WHERE s.technician_key = ? AND s.start_at > ? - INTERVAL 480 MINUTE AND s.start_at < ?
		  AND b.status IN (0, 1, 2, 5) AND s.start_at + INTERVAL b.minutes MINUTE > ?)`,
		tech, start, tech, end, end, start).Scan(&cell, &n)
	return cell, n > 0, err
}

// insert writes the booking at first cell (confirmed, as a service with no
// deposit is; its start the request's), its order number and its audit
// record in tx. A duplicate of
// the unique key is errTaken.
func (t techBench) insert(ctx context.Context, tx *sql.Tx, r techRequest, tech, cell int64) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO `+t.tbl+` (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at,
			service_id, technician_id, price_fen, minutes, starts_at)
		VALUES (?, ?, 1, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, 0, ?, ?)`,
		cell, r.customer, r.service, tech, r.minutes, r.start.UTC())
	var me *drv.MySQLError
	if errors.As(err, &me) && me.Number == 1062 {
		return errTaken
	} else if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+t.tbl+` SET out_trade_no = ? WHERE book_id = ?`, booking.OutTradeNo(id), id); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
		VALUES (?, ?, ?, NULL, 1, ?, 'bench', UTC_TIMESTAMP(6))`, id, cell, booking.EventReserve, booking.ActorCustomer)
	return err
}

var errTaken = errors.New("the technician is taken")

// each tries the request's technician, or each of its technicians in turn,
// with try: the first that books is taken, none is soldOut.
func each(r techRequest, try func(tech int64) (bool, error)) (outcome, error) {
	techs := r.techs
	if r.tech != 0 {
		techs = []int64{r.tech}
	}
	for _, tech := range techs {
		ok, err := try(tech)
		if err != nil {
			return 0, err
		}
		if ok {
			return taken, nil
		}
	}
	return soldOut, nil
}

// checkThenInsert reads, then writes: two requests that both read before
// either writes both book.
type checkThenInsert struct{ techBench }

func (checkThenInsert) Name() string { return cTechCheck }

func (c checkThenInsert) Reserve(ctx context.Context, r techRequest) (outcome, error) {
	return each(r, func(tech int64) (bool, error) {
		cell, busy, err := c.busy(ctx, c.db, tech, r.start, r.minutes)
		if busy || err != nil {
			return false, err
		}
		return c.write(ctx, r, tech, cell)
	})
}

// write is the insert in a transaction of its own; a duplicate key is a
// technician taken.
func (t techBench) write(ctx context.Context, r techRequest, tech, cell int64) (bool, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := t.insert(ctx, tx, r, tech, cell); errors.Is(err, errTaken) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// uniqueStart is check-then-insert into a table whose unique key refuses a
// second booking of a technician at the same first cell.
type uniqueStart struct{ techBench }

func (uniqueStart) Name() string { return cTechUniqueKey }

func (c uniqueStart) Reserve(ctx context.Context, r techRequest) (outcome, error) {
	return checkThenInsert(c).Reserve(ctx, r)
}

// techForUpdate locks the technician's row, then checks and writes, in one
// transaction. Under REPEATABLE READ the transaction's snapshot is taken by
// its first plain read, the check, which runs after the lock is granted, so
// it sees every booking committed by whoever held the lock before.
type techForUpdate struct{ techBench }

func (techForUpdate) Name() string { return cTechForUpdate }

func (c techForUpdate) Reserve(ctx context.Context, r techRequest) (outcome, error) {
	return each(r, func(tech int64) (bool, error) {
		tx, err := c.db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		defer tx.Rollback()
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT technician_id FROM t_technician WHERE technician_id = ? FOR UPDATE`, tech).Scan(&id); err != nil {
			return false, err
		}
		cell, busy, err := c.busy(ctx, tx, tech, r.start, r.minutes)
		if busy || err != nil {
			return false, err
		}
		if err := c.insert(ctx, tx, r, tech, cell); err != nil {
			return false, err
		}
		return true, tx.Commit()
	})
}

// countOverlaps counts the pairs of bookings of one of techs in table whose
// spans intersect, among bookings that hold their time (status 0, 1, 2, 5).
func countOverlaps(ctx context.Context, db *sql.DB, table string, techs []int64) (int, error) {
	args := make([]any, len(techs))
	for i, t := range techs {
		args[i] = t
	}
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*)
		FROM `+table+` a JOIN t_slot sa ON sa.slot_id = a.slot_id
		JOIN `+table+` b ON b.technician_id = a.technician_id AND b.book_id > a.book_id
		JOIN t_slot sb ON sb.slot_id = b.slot_id
		WHERE a.technician_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(techs)), ", ")+`)
		  AND a.status IN (0, 1, 2, 5) AND b.status IN (0, 1, 2, 5)
		  AND sa.start_at < sb.start_at + INTERVAL b.minutes MINUTE
		  AND sb.start_at < sa.start_at + INTERVAL a.minutes MINUTE`, args...).Scan(&n)
	return n, err
}

// techLengths are the services' lengths every run's technicians do.
var techLengths = []int{30, 60, 90, 120}

// techSetup is one run's menu and people: a service of each length and n
// technicians who do them all, each with her cells over days shop days from
// the day after tomorrow (the whole day on the grid, 48 cells of 30
// minutes), so no run shares a technician or a service with another and the
// product's pre-read reads only this run's.
type techSetup struct {
	services map[int]int64 // by minutes
	techs    []int64
	days     []time.Time // each shop day's midnight
}

var techSeq atomic.Int64

func newTechSetup(ctx context.Context, store *mysql.DB, n, days int) (*techSetup, error) {
	s := &techSetup{services: map[int]int64{}}
	seq := techSeq.Add(1)
	var ids []int64
	for _, m := range techLengths {
		svc, err := store.CreateService(ctx, booking.Service{Name: fmt.Sprintf("b%d-%d", seq, m), Minutes: m, PriceFen: 10000, DepositFen: 0, Active: true})
		if err != nil {
			return nil, err
		}
		s.services[m] = svc.ID
		ids = append(ids, svc.ID)
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	first := time.Date(now.In(shopZone).Year(), now.In(shopZone).Month(), now.In(shopZone).Day()+2, 0, 0, 0, 0, shopZone)
	for d := range days {
		s.days = append(s.days, first.AddDate(0, 0, d))
	}
	grid := time.Duration(store.Policy.GridMinutes) * time.Minute
	for i := range n {
		t, err := store.CreateTechnician(ctx, booking.Technician{Name: fmt.Sprintf("b%d-%d", seq, i), Active: true, ServiceIDs: ids})
		if err != nil {
			return nil, err
		}
		s.techs = append(s.techs, t.ID)
		var cells []booking.ScheduledSlot
		for _, day := range s.days {
			for at := day; at.Before(day.AddDate(0, 0, 1)); at = at.Add(grid) {
				cells = append(cells, booking.ScheduledSlot{StartAt: at.UTC(), EndAt: at.Add(grid).UTC(), Capacity: 1, TechnicianID: t.ID})
			}
		}
		if _, _, err := store.CreateSlots(ctx, cells); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// techContenders is every contender on pools ps.
func techContenders(ps *pools) []techContender {
	tb := techBench{db: ps.raw, tbl: "bench_tech_booking"}
	uk := techBench{db: ps.raw, tbl: "bench_tech_booking_uk"}
	return []techContender{techProduct{ps.store}, checkThenInsert{tb}, uniqueStart{uk}, techForUpdate{tb}}
}

func (b *bench) techniciansRun() {
	b.logf("technicians: burst, overlap race, mixed lengths")
	if err := b.technicians(); err != nil {
		b.fail("technicians", err)
	}
}

// technicians measures every contender on every network: the any-technician
// burst TargetBursts times, the overlap race (techRaceRounds rounds a run,
// Reps runs), and mixed-length bookings at every client count, interleaved.
func (b *bench) technicians() error {
	f, err := newFixture(b.ctx, b.dsn, b.opts.conns, b.nets...)
	if err != nil {
		return err
	}
	defer f.close()
	if _, err := f.raw.ExecContext(b.ctx, techSchema); err != nil {
		return err
	}
	type techEntry struct {
		net *network
		c   techContender
		ps  *pools
	}
	var list []techEntry
	for _, n := range b.nets {
		for _, c := range techContenders(f.at[n.Name]) {
			if b.opts.contenders == "" || inList(b.opts.contenders, c.Name()) {
				list = append(list, techEntry{n, c, f.at[n.Name]})
			}
		}
	}
	measure := func(e techEntry, run func() TechRun) {
		b.warm(entry{net: e.net, ps: e.ps})
		before := b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw)
		x := run()
		x.Network, x.Contender = e.net.Name, e.c.Name()
		x.Profile = between(before, b.probe.snap(b.ctx, e.ps.store.SQL(), e.ps.raw), max(x.Requests, 1))
		b.res.Technicians = append(b.res.Technicians, x)
	}
	bursts := max(b.prof.TargetBursts, 1)
	for rep := range bursts {
		for _, e := range rotate(list, rep) {
			s, err := newTechSetup(b.ctx, f.store, techBurstFree, 1)
			if err != nil {
				return err
			}
			measure(e, func() TechRun { return techBurst(b.ctx, e.c, e.ps.raw, s, b.prof.BurstSize, rep) })
		}
	}
	b.logf("technicians: overlap race")
	for rep := range max(b.prof.Reps, 1) {
		for _, e := range rotate(list, rep) {
			s, err := newTechSetup(b.ctx, f.store, 1, (techRaceRounds+7)/8)
			if err != nil {
				return err
			}
			measure(e, func() TechRun { return techRace(b.ctx, e.c, e.ps.raw, s, rep) })
		}
	}
	b.logf("technicians: mixed lengths")
	for _, clients := range b.prof.Clients {
		for rep := range max(b.prof.Reps, 1) {
			for _, e := range rotate(list, rep+clients) {
				s, err := newTechSetup(b.ctx, f.store, techMixedTechs, techMixedDays)
				if err != nil {
					return err
				}
				measure(e, func() TechRun { return techMixed(b.ctx, e.c, e.ps.raw, s, clients, b.prof.Cell, rep) })
			}
		}
	}
	return nil
}

const (
	techBurstFree  = 3  // technicians free at the burst's start
	techRaceRounds = 50 // overlap races a run
	techMixedTechs = 4  // technicians of the mixed-length throughput
	techMixedDays  = 7  // their days of cells
)

// techBurst releases n any-technician reserves of the 60-minute service at
// one start (10:00 of the day) with the setup's technicians all free.
func techBurst(ctx context.Context, c techContender, db *sql.DB, s *techSetup, n, rep int) TechRun {
	x := TechRun{Kind: "burst", Rep: rep, Requests: n, Clients: n}
	start := s.days[0].Add(10 * time.Hour)
	lat := release(ctx, n, func(i int) (outcome, error) {
		return c.Reserve(ctx, techRequest{customer: customer(), service: s.services[60], minutes: 60, techs: s.techs, start: start})
	}, &x)
	x.Latency = summarise(lat)
	x.Overlaps, x.FirstErr = overlapsOr(ctx, db, c, s, x.FirstErr)
	return x
}

// techRace runs techRaceRounds rounds on one technician, each a 120-minute
// booking at T and a 60-minute one at T+90 minutes released together: they
// overlap by 30 minutes, so at most one may book. Round i's T is 3i hours
// after the first day's midnight, so no span crosses the shop's midnight.
func techRace(ctx context.Context, c techContender, db *sql.DB, s *techSetup, rep int) TechRun {
	x := TechRun{Kind: "race", Rep: rep, Clients: 2}
	var lat []time.Duration
	began := time.Now()
	for i := range techRaceRounds {
		t := s.days[0].Add(time.Duration(3*i) * time.Hour)
		lat = append(lat, release(ctx, 2, func(j int) (outcome, error) {
			m := []int{120, 60}[j]
			return c.Reserve(ctx, techRequest{customer: customer(), service: s.services[m], minutes: m, tech: s.techs[0],
				start: t.Add(time.Duration(90*j) * time.Minute)})
		}, &x)...)
	}
	x.Seconds = time.Since(began).Seconds()
	x.SeatsPerS = float64(x.Taken) / x.Seconds // one booking a round: rounds a second
	x.Requests = 2 * techRaceRounds
	x.Latency = summarise(lat)
	x.Overlaps, x.FirstErr = overlapsOr(ctx, db, c, s, x.FirstErr)
	return x
}

// techMixed runs clients workers for d, each booking a random length at a
// random start of a random day with a random one of the setup's technicians.
func techMixed(ctx context.Context, c techContender, db *sql.DB, s *techSetup, clients int, d time.Duration, rep int) TechRun {
	x := TechRun{Kind: "mixed", Rep: rep, Clients: clients}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		lat []time.Duration
	)
	stop := time.Now().Add(d)
	began := time.Now()
	for range clients {
		wg.Go(func() {
			for time.Now().Before(stop) {
				m := techLengths[rand.IntN(len(techLengths))]
				cells := 24 * 60 / 30
				start := s.days[rand.IntN(len(s.days))].Add(time.Duration(rand.IntN(cells-m/30+1)*30) * time.Minute)
				r := techRequest{customer: customer(), service: s.services[m], minutes: m, tech: s.techs[rand.IntN(len(s.techs))], start: start}
				octx, cancel := context.WithTimeout(ctx, 10*time.Second)
				t0 := time.Now()
				o, err := c.Reserve(octx, r)
				el := time.Since(t0)
				cancel()
				mu.Lock()
				x.count(o, err)
				if err == nil {
					lat = append(lat, el)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	x.Seconds = time.Since(began).Seconds()
	x.Requests = x.Taken + x.SoldOut + x.Errors
	x.SeatsPerS = float64(x.Taken) / x.Seconds
	x.Latency = summarise(lat)
	x.Overlaps, x.FirstErr = overlapsOr(ctx, db, c, s, x.FirstErr)
	return x
}

// count adds one answer to the run.
func (x *TechRun) count(o outcome, err error) {
	switch {
	case err != nil:
		x.Errors++
		if x.FirstErr == "" {
			x.FirstErr = err.Error()
		}
	case o == taken:
		x.Taken++
	default:
		x.SoldOut++
	}
}

// release starts n calls of reserve together and answers their latencies,
// counting their answers into x; x.AllAnswer keeps the slowest release's time
// to its last answer.
func release(ctx context.Context, n int, reserve func(i int) (outcome, error), x *TechRun) []time.Duration {
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	for i := range n {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-start
			t0 := time.Now()
			o, err := reserve(i)
			el := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			x.count(o, err)
			if err == nil {
				lat = append(lat, el)
			}
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	wg.Wait()
	x.AllAnswer = max(x.AllAnswer, ms(time.Since(t0)))
	if x.Kind == "burst" {
		x.Seconds = time.Since(t0).Seconds()
		x.SeatsPerS = float64(x.Taken) / x.Seconds
	}
	return lat
}

// overlapsOr counts the run's overlaps; a failed count is the run's first
// error if it has none.
func overlapsOr(ctx context.Context, db *sql.DB, c techContender, s *techSetup, firstErr string) (int, string) {
	n, err := countOverlaps(ctx, db, c.table(), s.techs)
	if err != nil && firstErr == "" {
		firstErr = "count: " + err.Error()
	}
	return n, firstErr
}

// techForUpdateFactor is how far the product must outrun the technician row
// FOR UPDATE at the distance in the any-technician burst, the 130
// requests at one start: the seats/s of a burst (its bookings over the time
// to its last answer). Direct is reported beside it, with no target; so are
// the mixed lengths, where rows are rarely contended and the ratio measures
// the server's work a booking, not the lock.
const techForUpdateFactor = 1.5

// techTargets: the product lets no overlap through in any run, on any
// network; at the distance its burst seats/s is at least techForUpdateFactor
// times the FOR UPDATE form's (median over bursts of per-burst ratios).
func techTargets(res *Results) []Target {
	if len(res.Technicians) == 0 {
		return nil
	}
	zero := Target{Name: "technicians: 0 overlaps for the product in every run", Met: true}
	runs, overlaps := 0, 0
	for _, x := range res.Technicians {
		if x.Contender == cTechProduct {
			runs++
			overlaps += x.Overlaps
			if x.Overlaps > 0 || x.Taken == 0 {
				zero.Met = false
			}
		}
	}
	zero.Measured = fmt.Sprintf("%d overlaps in %d runs", overlaps, runs)
	zero.Why = "each run's bookings counted by a query afterwards (two bookings of one technician whose [start, end) intersect); a run that booked nothing does not meet it"
	ts := []Target{zero}
	for _, n := range res.Networks {
		if n.DelayUS == 0 {
			continue
		}
		t := Target{Name: fmt.Sprintf("%s: technicians, the any-technician burst: product >= %gx %s (seats/s)", n.Name, techForUpdateFactor, cTechForUpdate)}
		rs := techRatios(res.Technicians, "burst", n.Name, res.Profile.BurstSize)
		if len(rs) == 0 {
			t.Measured = "not measured"
		} else {
			r := median(rs)
			t.Met = r >= techForUpdateFactor
			t.Measured = fmt.Sprintf("%sx", ratioText(r, techForUpdateFactor, !t.Met))
			t.Why = fmt.Sprintf("median of %d per-burst ratios (lowest %.2fx, highest %.2fx); no target, beside it: the overlap race %s, mixed lengths %s",
				len(rs), slices.Min(rs), slices.Max(rs), techRaceRatio(res, n.Name), techMixedRatios(res, n.Name))
		}
		ts = append(ts, t)
	}
	return ts
}

// techRaceRatio reads the overlap race's ratio of network net (its rounds a
// second, one booking each), for the record beside the burst's target.
func techRaceRatio(res *Results, net string) string {
	rs := techRatios(res.Technicians, "race", net, 2)
	if len(rs) == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%.2fx", median(rs))
}

// techMixedRatios reads the mixed-length ratios of network net at every
// client count, for the record beside the burst's target.
func techMixedRatios(res *Results, net string) string {
	var parts []string
	for _, c := range res.Profile.Clients {
		if rs := techRatios(res.Technicians, "mixed", net, c); len(rs) > 0 {
			parts = append(parts, fmt.Sprintf("%.2fx@%d", median(rs), c))
		}
	}
	if len(parts) == 0 {
		return "not measured"
	}
	return strings.Join(parts, " ")
}

// techRatios are the product's seats/s over the FOR UPDATE form's in runs of
// kind on network net at clients, one per repetition both ran.
func techRatios(runs []TechRun, kind, net string, clients int) []float64 {
	seats := map[string]map[int]float64{}
	for _, x := range runs {
		if x.Kind == kind && x.Network == net && x.Clients == clients {
			if seats[x.Contender] == nil {
				seats[x.Contender] = map[int]float64{}
			}
			seats[x.Contender][x.Rep] = x.SeatsPerS
		}
	}
	var rs []float64
	for rep, p := range seats[cTechProduct] {
		if f, ok := seats[cTechForUpdate][rep]; ok && f > 0 {
			rs = append(rs, p/f)
		}
	}
	return rs
}

// techniciansSection writes the technician scenario's tables: per kind of
// run, per network and contender (and client count), the runs' answers and
// overlaps summed, and the medians of their seats/s and latencies.
func (p *page) techniciansSection() {
	runs := p.res.Technicians
	if len(runs) == 0 {
		return
	}
	p.w("## Technicians: the any-technician burst, the overlap race, mixed lengths\n\n")
	p.w("Every contender books 30-, 60-, 90- and 120-minute services over the same kind of cells (a technician's `t_slot` rows of 30 minutes, laid by the store; every run has its own services and technicians). "+
		"**Burst:** %d any-technician reserves of 60 minutes released together at one start with %d technicians free. "+
		"**Overlap race:** %d rounds a run, each a 120-minute booking at T and a 60-minute one at T+90 min of one technician released together (they overlap by 30 minutes: at most one may book). "+
		"**Mixed lengths:** each client books a random length at a random cell start of %d days of %d technicians, with a random one of them, for %s. "+
		"Overlaps: after each run, the pairs of one technician's bookings whose [start, end) intersect, by a query. Seats/s are bookings made per second (burst: over the time to the last answer; race: one a round, so rounds a second); p50/p99 are the medians over runs of each run's request latencies.\n\n",
		p.res.Profile.BurstSize, techBurstFree, techRaceRounds, techMixedDays, techMixedTechs, p.res.Profile.Cell)
	type key struct {
		kind, net, c string
		clients      int
	}
	var order []key
	groups := map[key][]TechRun{}
	for _, x := range runs {
		k := key{x.Kind, x.Network, x.Contender, x.Clients}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], x)
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(kindRank(a.kind), kindRank(b.kind)), cmp.Compare(a.net, b.net), cmp.Compare(a.clients, b.clients))
	})
	p.w("| run | network | contender | clients | runs | booked / sold out / errors | overlaps (runs with any) | seats/s | p50 ms | p99 ms | per request: round trips, server CPU, lock waits |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, k := range order {
		g := groups[k]
		var booked, sold, errs, ov, withOv int
		var seats, p50, p99 []float64
		first := ""
		var rt, cpu, waits []float64
		for _, x := range g {
			booked += x.Taken
			sold += x.SoldOut
			errs += x.Errors
			ov += x.Overlaps
			if x.Overlaps > 0 {
				withOv++
			}
			if first == "" {
				first = x.FirstErr
			}
			seats = append(seats, x.SeatsPerS)
			p50 = append(p50, x.Latency.P50)
			p99 = append(p99, x.Latency.P99)
			rt = append(rt, x.Profile.RoundTrips)
			cpu = append(cpu, x.Profile.ServerCPUUS)
			waits = append(waits, x.Profile.LockWaits)
		}
		p.w("| %s | %s | %s | %d | %d | %d / %d / %s | %d (%d) | %.0f | %.2f | %.2f | %.1f rt, %.0f µs, %.2f waits |\n",
			k.kind, k.net, k.c, k.clients, len(g), booked, sold, errorCell(errs, first), ov, withOv,
			median(seats), median(p50), median(p99), median(rt), median(cpu), median(waits))
	}
	p.w("\n")
}

func kindRank(k string) int {
	return map[string]int{"burst": 0, "race": 1, "mixed": 2}[k]
}
