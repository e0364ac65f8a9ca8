package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// outcome is what one reservation attempt came to.
type outcome int

const (
	taken    outcome = iota // a seat was taken
	soldOut                 // refused: the slot is full
	conflict                // refused without being full (a lost CAS without retry)
)

// contender is one way to take a seat. Every one but the floor writes a booking
// row and an audit row like the product; the alternatives exist only here, never
// in the product.
type contender interface {
	Name() string
	// Correct says whether the design promises no oversell.
	Correct() bool
	// Slots creates n slots of the given capacity and returns their ids.
	Slots(ctx context.Context, n, capacity int) ([]int64, error)
	// Reserve is one customer's attempt; worker names the calling client (for
	// per-client sessions).
	Reserve(ctx context.Context, worker int, slot int64, customer string) (outcome, error)
	// Count answers, over the given slots, how many bookings exceed capacity
	// (oversells) and how far the booked counters are from the bookings (drift).
	Count(ctx context.Context, slots []int64) (oversells, drift int, err error)
}

// ---- the product -------------------------------------------------------------

type product struct {
	store *mysql.DB
	next  *atomic.Int64 // start-time sequence: t_slot.start_at is unique
	base  time.Time
}

func (p *product) Name() string  { return "product" }
func (p *product) Correct() bool { return true }

func (p *product) Slots(ctx context.Context, n, capacity int) ([]int64, error) {
	return productSlots(ctx, p.store, p.next, p.base, n, capacity, 0)
}

// productSlots creates n product slots one second apart (inside the booking
// window) and answers their ids.
func productSlots(ctx context.Context, store *mysql.DB, next *atomic.Int64, base time.Time, n, capacity int, priceFen int64) ([]int64, error) {
	first := next.Add(int64(n)) - int64(n)
	slots := make([]booking.ScheduledSlot, n)
	for i := range slots {
		start := base.Add(time.Duration(first+int64(i)) * time.Second)
		slots[i] = booking.ScheduledSlot{StartAt: start, EndAt: start.Add(90 * time.Minute), Capacity: capacity, PriceFen: priceFen}
	}
	if _, _, err := store.CreateSlots(ctx, slots); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, n)
	rows, err := store.SQL().QueryContext(ctx, `SELECT slot_id FROM t_slot WHERE start_at >= ? AND start_at < ? ORDER BY start_at`,
		slots[0].StartAt, slots[n-1].StartAt.Add(time.Second))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) != n {
		return nil, fmt.Errorf("created %d slots, found %d", n, len(ids))
	}
	return ids, rows.Err()
}

func (p *product) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	_, _, err := p.store.Reserve(ctx, booking.ReserveRequest{OpenID: customer, SlotID: slot})
	switch {
	case err == nil:
		return taken, nil
	case booking.IsCode(err, booking.ESOLDOUT):
		return soldOut, nil
	}
	return 0, err
}

func (p *product) Count(ctx context.Context, slots []int64) (int, int, error) {
	return countSQL(ctx, p.store.SQL(), slots, `
		SELECT s.capacity, s.booked,
		       (SELECT COUNT(*) FROM t_booking b WHERE b.slot_id = s.slot_id AND b.status IN (0, 1, 2))
		FROM t_slot s WHERE s.slot_id = ?`)
}

// productBefore is the product's reserve as it was before its COMMIT went to the
// server with the seat-taking statement: the same pre-read, then START
// TRANSACTION, the booking, its order number, the audit record and LAST the
// conditional slot UPDATE as one multi-statement on the raw driver connection,
// then COMMIT in a round trip of its own (and, for a request that lost the seat,
// ROLLBACK and a read of why). The slot row stays locked from its UPDATE across
// that round trip. Kept here, SQL and all, to measure the change in the same run.
type productBefore struct {
	product
	raw *sql.DB // with multi-statements, which the store's own pool no longer has
}

func (p *productBefore) Name() string { return cBefore }

const beforeSQL = `START TRANSACTION;
INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at, starts_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);
SET @salon_book_id = LAST_INSERT_ID();
UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(@salon_book_id, GREATEST(12, LENGTH(@salon_book_id)), '0'))
	WHERE book_id = @salon_book_id;
INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
	VALUES (@salon_book_id, ?, ?, NULL, ?, ?, ?, UTC_TIMESTAMP(6));
UPDATE t_slot SET booked = booked + 1
	WHERE slot_id = ? AND (is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL ? DAY AND booked < capacity)`

// preRead is the product's pre-read as the bench's own forms run it: the
// slot, whether it is bookable, the database's clock and whether the customer
// holds an unfinished booking, in one indexed read. A full slot is refused
// here, without a write; ok says the write should be tried.
func (p *product) preRead(ctx context.Context, db *sql.DB, slot int64, customer string) (price int64, start, now time.Time, ok bool, err error) {
	var capacity, booked, active int
	var open bool
	err = db.QueryRowContext(ctx, `SELECT capacity, booked, price_fen, start_at,
		(is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL ? DAY), UTC_TIMESTAMP(6),
		(SELECT COUNT(*) FROM t_booking WHERE active_openid = ?) FROM t_slot WHERE slot_id = ?`, p.store.Policy.BookingWindowDays, customer, slot).
		Scan(&capacity, &booked, &price, &start, &open, &now, &active)
	switch {
	case err != nil:
		return 0, start, now, false, err
	case active > 0 || !open:
		return 0, start, now, false, fmt.Errorf("slot %d not bookable for %s", slot, customer)
	}
	return price, start, now.UTC(), booked < capacity, nil
}

func (p *productBefore) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	db := p.raw
	price, start, now, ok, err := p.preRead(ctx, db, slot, customer)
	if err != nil {
		return 0, err
	}
	if !ok {
		return soldOut, nil
	}
	status, event := booking.StatusPending, "hold"
	if price == 0 {
		status, event = booking.StatusConfirmed, "free slot"
	}
	args := []driver.NamedValue{
		{Ordinal: 1, Value: slot}, {Ordinal: 2, Value: customer}, {Ordinal: 3, Value: int64(status)},
		{Ordinal: 4, Value: price}, {Ordinal: 5, Value: nil}, {Ordinal: 6, Value: booking.HoldEnd(now, start, p.store.Policy.LockTTL)},
		{Ordinal: 7, Value: now}, {Ordinal: 8, Value: now}, {Ordinal: 9, Value: start.UTC()},
		{Ordinal: 10, Value: slot}, {Ordinal: 11, Value: booking.EventReserve}, {Ordinal: 12, Value: int64(status)},
		{Ordinal: 13, Value: booking.ActorCustomer}, {Ordinal: 14, Value: event},
		{Ordinal: 15, Value: slot}, {Ordinal: 16, Value: int64(p.store.Policy.BookingWindowDays)},
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	took := false
	err = conn.Raw(func(dc any) error {
		ex := dc.(driver.ExecerContext)
		rollback := func(cause error) error {
			if _, err := ex.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); err != nil {
				return errors.Join(cause, driver.ErrBadConn)
			}
			return cause
		}
		res, err := ex.ExecContext(ctx, beforeSQL, args)
		if err != nil {
			return rollback(err)
		}
		if rows := res.(drv.Result).AllRowsAffected(); len(rows) != 6 || rows[5] == 0 {
			return rollback(nil)
		}
		if _, err := ex.ExecContext(ctx, "COMMIT", nil); err != nil {
			return errors.Join(err, driver.ErrBadConn)
		}
		took = true
		return nil
	})
	conn.Close()
	if err != nil {
		return 0, err
	}
	if took {
		return taken, nil
	}
	var full bool
	if err := db.QueryRowContext(ctx, `SELECT booked >= capacity FROM t_slot WHERE slot_id = ?`, slot).Scan(&full); err != nil {
		return 0, err
	}
	if !full {
		return 0, fmt.Errorf("slot %d closed meanwhile", slot)
	}
	return soldOut, nil
}

// ---- contenders on their own simple tables -----------------------------------

// benchSchema is the contenders' slot table. Their bookings and audit records go
// into the product's own t_booking and t_audit (same rows, same indexes), so a
// ratio compares ways of taking a seat, not table widths. Their slot ids start
// far above the product's so the two never share a slot_id.
const benchSchema = `
CREATE TABLE bench_slot (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  capacity INT NOT NULL, booked INT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB AUTO_INCREMENT=1000000000`

// tables is the contenders' shared plumbing: slots, the booking write, the count.
type tables struct{ db *sql.DB }

func (t tables) Slots(ctx context.Context, n, capacity int) ([]int64, error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ids := make([]int64, n)
	for i := range ids {
		res, err := tx.ExecContext(ctx, `INSERT INTO bench_slot (capacity) VALUES (?)`, capacity)
		if err != nil {
			return nil, err
		}
		ids[i], _ = res.LastInsertId()
	}
	return ids, tx.Commit()
}

func (t tables) Count(ctx context.Context, slots []int64) (int, int, error) {
	return countSQL(ctx, t.db, slots, `SELECT s.capacity, s.booked,
		(SELECT COUNT(*) FROM t_booking b WHERE b.slot_id = s.id AND b.status IN (0, 1, 2)) FROM bench_slot s WHERE s.id = ?`)
}

func countSQL(ctx context.Context, db *sql.DB, slots []int64, q string) (oversells, drift int, err error) {
	for _, id := range slots {
		var capacity, booked, bookings int
		if err := db.QueryRowContext(ctx, q, id).Scan(&capacity, &booked, &bookings); err != nil {
			return 0, 0, err
		}
		oversells += max(0, bookings-capacity)
		drift += abs(booked - bookings)
	}
	return oversells, drift, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// book writes the booking, its order number and its audit record in tx: the
// same three rows the product writes, one statement each. The contenders'
// slots are bench_slot's, not t_slot's: the booking's start is now.
func book(ctx context.Context, tx *sql.Tx, slot int64, customer string) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO t_booking (slot_id, openid, status, amount_fen, lock_expire, created_at, updated_at, starts_at)
		VALUES (?, ?, 1, 0, UTC_TIMESTAMP(6) + INTERVAL 15 MINUTE, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP())`, slot, customer)
	if err != nil {
		return err
	}
	id, _ := res.LastInsertId()
	if _, err := tx.ExecContext(ctx, `UPDATE t_booking SET out_trade_no = ? WHERE book_id = ?`, booking.OutTradeNo(id), id); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
		VALUES (?, ?, 'reserve', NULL, 1, 'customer', 'free slot', UTC_TIMESTAMP(6))`, id, slot)
	return err
}

func readSlot(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, slot int64, suffix string) (capacity, booked int, version int64, err error) {
	err = q.QueryRowContext(ctx, `SELECT capacity, booked, version FROM bench_slot WHERE id = ?`+suffix, slot).Scan(&capacity, &booked, &version)
	return
}

// checkThenAct is the launch-weekend code: read, decide, write what was read plus
// one. Correct only when something outside serialises it (a lock, one consumer).
func (t tables) checkThenAct(ctx context.Context, slot int64, customer string) (outcome, error) {
	capacity, booked, _, err := readSlot(ctx, t.db, slot, "")
	if err != nil {
		return 0, err
	}
	if booked >= capacity {
		return soldOut, nil
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := book(ctx, tx, slot, customer); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE bench_slot SET booked = ? WHERE id = ?`, booked+1, slot); err != nil {
		return 0, err
	}
	return taken, tx.Commit()
}

type lockFree struct{ tables }

func (lockFree) Name() string  { return "read-then-write (no lock)" }
func (lockFree) Correct() bool { return false }
func (c lockFree) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	return c.checkThenAct(ctx, slot, customer)
}

type forUpdate struct{ tables }

func (forUpdate) Name() string  { return "SELECT ... FOR UPDATE" }
func (forUpdate) Correct() bool { return true }
func (c forUpdate) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	capacity, booked, _, err := readSlot(ctx, tx, slot, " FOR UPDATE")
	if err != nil {
		return 0, err
	}
	if booked >= capacity {
		return soldOut, nil
	}
	if err := book(ctx, tx, slot, customer); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE bench_slot SET booked = booked + 1 WHERE id = ?`, slot); err != nil {
		return 0, err
	}
	return taken, tx.Commit()
}

// versionCAS reads the version, writes the booking, and bumps the slot only if
// the version is unchanged; a lost race rolls back and (with retries) starts over.
type versionCAS struct {
	tables
	retries int
}

func (c versionCAS) Name() string {
	if c.retries > 0 {
		return "version CAS + retries"
	}
	return "version CAS, no retry"
}
func (versionCAS) Correct() bool { return true }
func (c versionCAS) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	for attempt := 0; ; attempt++ {
		capacity, booked, version, err := readSlot(ctx, c.db, slot, "")
		if err != nil {
			return 0, err
		}
		if booked >= capacity {
			return soldOut, nil
		}
		ok, err := func() (bool, error) {
			tx, err := c.db.BeginTx(ctx, nil)
			if err != nil {
				return false, err
			}
			defer tx.Rollback()
			if err := book(ctx, tx, slot, customer); err != nil {
				return false, err
			}
			res, err := tx.ExecContext(ctx, `UPDATE bench_slot SET booked = booked + 1, version = version + 1 WHERE id = ? AND version = ?`, slot, version)
			if err != nil {
				return false, err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return false, nil
			}
			return true, tx.Commit()
		}()
		if err != nil {
			return 0, err
		}
		if ok {
			return taken, nil
		}
		if attempt >= c.retries {
			return conflict, nil
		}
	}
}

// redisLock wraps check-then-act in a Redis lock per slot (SET NX PX, released
// by a Lua compare-and-delete so a lock that expired and was re-taken is not
// deleted by its former holder).
type redisLock struct {
	tables
	rdb    *redis.Client
	prefix string
}

var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)

func (redisLock) Name() string  { return "Redis lock (SET NX PX)" }
func (redisLock) Correct() bool { return true }
func (c redisLock) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	key := c.prefix + strconv.FormatInt(slot, 10)
	for {
		ok, err := c.rdb.SetNX(ctx, key, customer, 5*time.Second).Result()
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Microsecond):
		}
	}
	defer unlockScript.Run(context.WithoutCancel(ctx), c.rdb, []string{key}, customer)
	return c.checkThenAct(ctx, slot, customer)
}

// etcdLock wraps check-then-act in an etcd lease lock (concurrency.Mutex), one
// session (lease) per client.
type etcdLock struct {
	tables
	cli    *clientv3.Client
	prefix string
	mu     sync.Mutex
	sess   map[int]*concurrency.Session
}

func (*etcdLock) Name() string  { return "etcd lease lock" }
func (*etcdLock) Correct() bool { return true }
func (c *etcdLock) session(worker int) (*concurrency.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.sess[worker]; ok {
		return s, nil
	}
	s, err := concurrency.NewSession(c.cli, concurrency.WithTTL(10))
	if err != nil {
		return nil, err
	}
	c.sess[worker] = s
	return s, nil
}
func (c *etcdLock) Reserve(ctx context.Context, worker int, slot int64, customer string) (outcome, error) {
	s, err := c.session(worker)
	if err != nil {
		return 0, err
	}
	m := concurrency.NewMutex(s, c.prefix+strconv.FormatInt(slot, 10))
	if err := m.Lock(ctx); err != nil {
		return 0, err
	}
	defer m.Unlock(context.WithoutCancel(ctx))
	return c.checkThenAct(ctx, slot, customer)
}
func (c *etcdLock) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sess {
		s.Close()
	}
	c.sess = map[int]*concurrency.Session{}
}

// redisCounter takes the seat with a Lua check-and-increment in Redis and then
// writes the booking in MySQL; a failed write gives the seat back. The slot row
// is not touched, so the database's booked counter is not maintained (no drift
// is reported for it).
type redisCounter struct {
	tables
	rdb    *redis.Client
	prefix string
}

var takeScript = redis.NewScript(`local b = tonumber(redis.call("GET", KEYS[1]) or "0")
if b < tonumber(ARGV[1]) then redis.call("INCR", KEYS[1]) return 1 end
return 0`)

func (redisCounter) Name() string  { return "Redis Lua counter" }
func (redisCounter) Correct() bool { return true }
func (c redisCounter) Slots(ctx context.Context, n, capacity int) ([]int64, error) {
	return c.tables.Slots(ctx, n, capacity)
}
func (c redisCounter) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	var capacity int
	// The capacity would be cached with the counter in a real design; read here.
	if err := c.db.QueryRowContext(ctx, `SELECT capacity FROM bench_slot WHERE id = ?`, slot).Scan(&capacity); err != nil {
		return 0, err
	}
	key := c.prefix + strconv.FormatInt(slot, 10)
	got, err := takeScript.Run(ctx, c.rdb, []string{key}, capacity).Int()
	if err != nil {
		return 0, err
	}
	if got == 0 {
		return soldOut, nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err == nil {
		defer tx.Rollback()
		if err = book(ctx, tx, slot, customer); err == nil {
			err = tx.Commit()
		}
	}
	if err != nil {
		c.rdb.Decr(context.WithoutCancel(ctx), key)
		return 0, err
	}
	return taken, nil
}
func (c redisCounter) Count(ctx context.Context, slots []int64) (int, int, error) {
	over, _, err := c.tables.Count(ctx, slots)
	return over, 0, err
}

// queue serialises every reservation through one NATS consumer that runs
// check-then-act: correct because only one runs at a time.
type queue struct {
	tables
	nc      *nats.Conn
	subject string
	sub     *nats.Subscription
}

type queueReq struct {
	Slot     int64  `json:"slot"`
	Customer string `json:"customer"`
}

type queueResp struct {
	Outcome outcome `json:"outcome"`
	Err     string  `json:"err,omitempty"`
}

func newQueue(t tables, nc *nats.Conn, subject string) (*queue, error) {
	q := &queue{tables: t, nc: nc, subject: subject}
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		var r queueReq
		resp := queueResp{}
		if err := json.Unmarshal(m.Data, &r); err != nil {
			resp.Err = err.Error()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			resp.Outcome, err = q.checkThenAct(ctx, r.Slot, r.Customer)
			cancel()
			if err != nil {
				resp.Err = err.Error()
			}
		}
		b, _ := json.Marshal(resp)
		m.Respond(b)
	})
	if err != nil {
		return nil, err
	}
	// The default pending limit would drop messages in a burst.
	sub.SetPendingLimits(-1, -1)
	q.sub = sub
	return q, nc.Flush()
}

func (*queue) Name() string  { return "queue (NATS, one consumer)" }
func (*queue) Correct() bool { return true }
func (q *queue) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	b, _ := json.Marshal(queueReq{Slot: slot, Customer: customer})
	m, err := q.nc.RequestWithContext(ctx, q.subject, b)
	if err != nil {
		return 0, err
	}
	var r queueResp
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return 0, err
	}
	if r.Err != "" {
		return 0, errors.New(r.Err)
	}
	return r.Outcome, nil
}

// bare is the floor: the seat-taking statement alone, autocommitted, no booking.
type bare struct{ tables }

func (bare) Name() string  { return "bare conditional UPDATE (floor)" }
func (bare) Correct() bool { return true }
func (c bare) Reserve(ctx context.Context, _ int, slot int64, _ string) (outcome, error) {
	res, err := c.db.ExecContext(ctx, `UPDATE bench_slot SET booked = booked + 1 WHERE id = ? AND booked < capacity`, slot)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return soldOut, nil
	}
	return taken, nil
}
func (c bare) Count(ctx context.Context, slots []int64) (int, int, error) {
	// No booking rows: an oversell would show as booked > capacity.
	over := 0
	for _, id := range slots {
		var capacity, booked int
		if err := c.db.QueryRowContext(ctx, `SELECT capacity, booked FROM bench_slot WHERE id = ?`, id).Scan(&capacity, &booked); err != nil {
			return 0, 0, err
		}
		over += max(0, booked-capacity)
	}
	return over, 0, nil
}
