// Package history writes a salon's past into a migrated, empty schema: years of
// slots and bookings in every final status, with the audit trail, the
// notifications, the refunds, the money ledger, the waitlists, the customers and the release runs
// beside them, and the next days' schedule with its unfinished bookings. The
// benchmark measures the product on it and the plan test explains the store's
// statements on it, so both see the table sizes a salon (or a chain on one
// deployment) reaches, not an empty schema.
//
// The same Spec and seed write the same rows, apart from times, which are
// relative to Spec.Now. Rows go in with multi-row INSERTs of Batch rows, each
// table written as its rows come, on the pool's connections.
package history

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"salon/shared/booking"
)

// Spec sizes a history.
type Spec struct {
	Seed int64
	// Now is the database's clock (UTC): the past ends here, the schedule ahead
	// starts here.
	Now time.Time
	// Days of history before Now; AheadDays of schedule after it.
	Days, AheadDays int
	// SlotsPerDay slots of 30 minutes from 10:00 shop time (02:00 UTC), each
	// with Capacity seats.
	SlotsPerDay, Capacity int
	// Scale multiplies the past: a past slot has Capacity*Scale seats and about
	// Scale times the bookings, audit records and notifications, and there are
	// Scale times the customers (a chain on one deployment). The schedule ahead
	// is the same at every scale, so what is measured there compares like with
	// like. 1 is one salon.
	Scale int
	// Customers of one salon (times Scale).
	Customers int
	// Technicians who sell their time beside the seat schedule, each doing
	// every service of techServices, with a cell of 30 minutes at each of the
	// seat schedule's starts every day, past and ahead, about two thirds of
	// them held by bookings of those services. Not multiplied by Scale: a
	// technician's cell holds one booking, so a chain's past has the same
	// technicians' bookings as one salon's.
	Technicians int
}

// techServices are the services of a history with technicians: their length
// in minutes, full price and deposit.
var techServices = []struct {
	minutes              int
	priceFen, depositFen int64
}{{30, 8000, 0}, {60, 15000, 3000}, {90, 22000, 5000}, {120, 30000, 5000}}

// Salon is three years of one busy salon: about 183,000 bookings of seats
// and 39,000 of four technicians' services.
func Salon(now time.Time, seed int64) Spec {
	return Spec{Seed: seed, Now: now, Days: 3 * 365, AheadDays: 14, SlotsPerDay: 22, Capacity: 8, Scale: 1, Customers: 20000, Technicians: 4}
}

// Batch is how many rows one INSERT carries.
const Batch = 1000

// Counts are the rows written per table.
type Counts struct {
	Slots, Bookings, Audit, Notifications, Waitlist, Customers, ReleaseRuns, SigninFailures, Money int
	Seconds                                                                                        float64
}

func (c Counts) String() string {
	return fmt.Sprintf("%d slots, %d bookings, %d audit records, %d notifications, %d waitlist entries, %d customers, %d release runs, %d ledger rows in %.1f s",
		c.Slots, c.Bookings, c.Audit, c.Notifications, c.Waitlist, c.Customers, c.ReleaseRuns, c.Money, c.Seconds)
}

// table is one table's rows on their way to the database.
type table struct {
	name    string
	columns []string
	rows    chan []any
	n       int
}

func newTable(name string, columns ...string) *table {
	return &table{name: name, columns: columns, rows: make(chan []any, 4*Batch)}
}

// write inserts what arrives on t.rows, Batch rows a statement. The table name
// and columns are constants of this package; values are parameters.
func (t *table) write(ctx context.Context, db *sql.DB) error {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(t.columns)), ",") + ")"
	head := "INSERT INTO " + t.name + " (" + strings.Join(t.columns, ", ") + ") VALUES "
	args := make([]any, 0, Batch*len(t.columns))
	flush := func(n int) error {
		if n == 0 {
			return nil
		}
		q := head + strings.TrimSuffix(strings.Repeat(one+",", n), ",")
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		args = args[:0]
		return nil
	}
	n := 0
	var failed error
	for row := range t.rows {
		if failed != nil {
			continue // drain, so the generator never blocks
		}
		args = append(args, row...)
		n++
		t.n++
		if n == Batch {
			failed = flush(n)
			n = 0
		}
	}
	if failed != nil {
		return failed
	}
	return flush(n)
}

// Load writes the history of spec into db, whose schema is migrated and empty,
// and runs ANALYZE TABLE on what it wrote so the optimizer sees the sizes.
func Load(ctx context.Context, db *sql.DB, spec Spec) (Counts, error) {
	start := time.Now()
	g := newGen(spec)
	tables := []*table{g.services, g.technicians, g.techServices, g.slots, g.bookings, g.seats, g.audit, g.notifications, g.waitlist, g.customers, g.runs, g.failures, g.money}
	var wg sync.WaitGroup
	errs := make([]error, len(tables))
	for i, t := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = t.write(ctx, db)
		}()
	}
	g.generate(ctx)
	for _, t := range tables {
		close(t.rows)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Counts{}, err
		}
	}
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+t.name); err != nil {
			return Counts{}, err
		}
	}
	return Counts{Slots: g.slots.n, Bookings: g.bookings.n, Audit: g.audit.n, Notifications: g.notifications.n,
		Waitlist: g.waitlist.n, Customers: g.customers.n, ReleaseRuns: g.runs.n, SigninFailures: g.failures.n, Money: g.money.n,
		Seconds: time.Since(start).Seconds()}, nil
}

// gen makes the rows, one slot at a time, from one seeded generator, so a
// spec and seed always make the same history.
type gen struct {
	spec Spec
	rng  *rand.Rand

	slots, bookings, seats, audit, notifications, waitlist, customers, runs, failures, money *table
	services, technicians, techServices                                                      *table

	slotID, bookID, auditID, notificationID int64
	// nextActive hands each unfinished booking of the schedule ahead a
	// customer of its own (one unfinished booking per customer).
	nextActive int
	// codes counts the check-in codes given per shop day.
	codes map[string]int
}

func newGen(spec Spec) *gen {
	if spec.Scale < 1 {
		spec.Scale = 1
	}
	if spec.Customers < 1 {
		spec.Customers = 20000
	}
	return &gen{spec: spec, rng: rand.New(rand.NewPCG(uint64(spec.Seed), 0x5a10)), codes: map[string]int{},
		slots: newTable("t_slot", "slot_id", "start_at", "end_at", "capacity", "booked", "price_fen", "is_open", "created_at", "updated_at", "technician_id"),
		bookings: newTable("t_booking", "book_id", "slot_id", "openid", "customer_id", "status", "amount_fen", "out_trade_no", "idem_key",
			"lock_expire", "transaction_id", "paid_fen", "paid_at", "refund_status", "refund_fen", "refund_no", "refund_id", "refunded_at",
			"refund_requested_at", "refund_next_at", "created_at", "updated_at", "checkin_day", "checkin_code", "reschedules",
			"service_id", "technician_id", "price_fen", "minutes", "starts_at"),
		seats: newTable("t_booking_slot", "book_id", "slot_id"),
		audit: newTable("t_audit", "audit_id", "book_id", "slot_id", "event", "from_status", "to_status", "actor", "reason", "created_at", "shipped_at"),
		notifications: newTable("t_notification", "notification_id", "book_id", "kind", "openid", "status", "attempts", "next_at",
			"last_error", "created_at", "sent_at"),
		waitlist:     newTable("t_waitlist", "slot_id", "openid", "created_at"),
		customers:    newTable("t_customer", "customer_id", "openid", "name", "phone", "note", "created_at", "updated_at"),
		runs:         newTable("t_release_run", "started_at", "finished_at", "summary", "error"),
		failures:     newTable("t_signin_failure", "name", "failed_at"),
		services:     newTable("t_service", "service_id", "name", "minutes", "price_fen", "deposit_fen", "active", "created_at", "updated_at"),
		technicians:  newTable("t_technician", "technician_id", "name", "active", "staff_id", "created_at", "updated_at"),
		techServices: newTable("t_technician_service", "technician_id", "service_id"),
		money: newTable("t_money", "book_id", "kind", "amount_fen", "method", "out_trade_no", "transaction_id", "out_refund_no",
			"refund_id", "actor", "created_at"),
	}
}

// Openid is the openid of mini-program customer i (1-based) of a history.
func Openid(i int) string { return fmt.Sprintf("o-hist-%07d", i) }

// walkInBase is where the walk-in customers' ids start.
const walkInBase = 1 << 30

func (g *gen) customerCount() int { return g.spec.Customers * g.spec.Scale }

func (g *gen) generate(ctx context.Context) {
	sp := g.spec
	now := sp.Now.UTC().Truncate(time.Microsecond)
	day0 := now.Truncate(24*time.Hour).AddDate(0, 0, -sp.Days)
	created := day0.Add(-24 * time.Hour)
	for i := 1; i <= g.customerCount(); i++ {
		at := created.Add(time.Duration(g.rng.Int64N(int64(max(1, sp.Days))*24)) * time.Hour)
		g.customers.rows <- []any{int64(i), Openid(i), fmt.Sprintf("客%d", i), fmt.Sprintf("138%08d", i), nil, at, at}
	}
	walkIns := max(1, g.customerCount()/20)
	for i := 1; i <= walkIns; i++ {
		g.customers.rows <- []any{int64(walkInBase + i), nil, fmt.Sprintf("散客%d", i), fmt.Sprintf("139%08d", i), nil, created, created}
	}
	if sp.Technicians > 0 {
		for i, s := range techServices {
			g.services.rows <- []any{int64(i + 1), fmt.Sprintf("服务%d分钟", s.minutes), s.minutes, s.priceFen, s.depositFen, 1, created, created}
		}
		for t := 1; t <= sp.Technicians; t++ {
			g.technicians.rows <- []any{int64(t), fmt.Sprintf("技师%d", t), 1, nil, created, created}
			for i := range techServices {
				g.techServices.rows <- []any{int64(t), int64(i + 1)}
			}
		}
	}
	for d := 0; d < sp.Days+sp.AheadDays; d++ {
		if ctx.Err() != nil {
			return
		}
		day := day0.AddDate(0, 0, d)
		for s := 0; s < sp.SlotsPerDay; s++ {
			start := day.Add(2*time.Hour + time.Duration(s)*30*time.Minute)
			g.slot(start, start.Before(now), walkIns)
		}
		for t := 1; t <= sp.Technicians; t++ {
			g.techDay(int64(t), day, now, walkIns)
		}
	}
	// The release runs of the last two days, one a minute (the run prunes older).
	for at := now.Add(-48 * time.Hour); at.Before(now); at = at.Add(time.Minute) {
		g.runs.rows <- []any{at, at.Add(300 * time.Millisecond), `{"released":0,"confirmed":0,"refunded":0,"audited":3}`, ""}
	}
	// Failed sign-ins of the last quarter hour (older ones are pruned).
	for i := 0; i < 50; i++ {
		g.failures.rows <- []any{fmt.Sprintf("staff%d", i%7), now.Add(-time.Duration(g.rng.Int64N(int64(15 * time.Minute))))}
	}
}

// slot writes one slot with its bookings.
func (g *gen) slot(start time.Time, past bool, walkIns int) {
	sp := g.spec
	g.slotID++
	id := g.slotID
	capacity := sp.Capacity
	if past {
		capacity *= sp.Scale
	}
	price := int64(5000)
	if g.rng.IntN(20) == 0 {
		price = 0
	}
	now := sp.Now.UTC().Truncate(time.Microsecond)
	booked := 0
	// Seats sold: most slots fill up well; a few finished bookings that hold no
	// seat (cancelled, expired) come on top.
	held := capacity/2 + g.rng.IntN(capacity/2+1)
	others := g.rng.IntN(capacity/3 + 2)
	for i := 0; i < held+others; i++ {
		holds := i < held
		booked += g.booking(id, start, price, past, holds, now, walkIns, nil)
	}
	g.slots.rows <- []any{id, start, start.Add(30 * time.Minute), capacity, booked, price, 1, start.AddDate(0, 0, -30), start.AddDate(0, 0, -30), nil}
	if !past && booked >= capacity {
		// Someone waits for the full slot.
		g.waitlist.rows <- []any{id, Openid(g.rng.IntN(g.customerCount()) + 1), now.Add(-time.Duration(g.rng.Int64N(int64(48 * time.Hour))))}
	}
}

// techDay writes technician tech's cells of one day, at the seat schedule's
// starts, with the bookings that hold them: from the first cell on, a cell is
// left free one time in three, else a service that fits in the day books its
// span (and, one time in four, a cancelled or expired booking of the same span
// came first).
func (g *gen) techDay(tech int64, day, now time.Time, walkIns int) {
	sp := g.spec
	n := sp.SlotsPerDay
	ids := make([]int64, n)
	starts := make([]time.Time, n)
	booked := make([]int, n)
	for i := range n {
		g.slotID++
		ids[i], starts[i] = g.slotID, day.Add(2*time.Hour+time.Duration(i)*30*time.Minute)
	}
	for i := 0; i < n; {
		k := g.rng.IntN(len(techServices))
		cells := techServices[k].minutes / 30
		if g.rng.IntN(3) == 0 || i+cells > n {
			i++
			continue
		}
		span := &techSpan{service: int64(k + 1), tech: tech, priceFen: techServices[k].priceFen, minutes: techServices[k].minutes, cells: ids[i : i+cells]}
		past := starts[i].Before(now)
		if g.rng.IntN(4) == 0 {
			g.booking(ids[i], starts[i], techServices[k].depositFen, past, false, now, walkIns, span)
		}
		if g.booking(ids[i], starts[i], techServices[k].depositFen, past, true, now, walkIns, span) == 1 {
			for c := range cells {
				booked[i+c] = 1
			}
		}
		i += cells
	}
	for i := range n {
		created := starts[i].AddDate(0, 0, -30)
		g.slots.rows <- []any{ids[i], starts[i], starts[i].Add(30 * time.Minute), 1, booked[i], 0, 1, created, created, tech}
	}
}

// techSpan is a booking of a service: the service, the technician, the full
// price, its length and the cells it holds (the first is its slot).
type techSpan struct {
	service, tech, priceFen int64
	minutes                 int
	cells                   []int64
}

// booking writes one booking of slot (of a service over span's cells when
// span is not nil), its audit records and notifications, and reports the
// seats it holds (0 or 1).
func (g *gen) booking(slot int64, start time.Time, price int64, past, holds bool, now time.Time, walkIns int, span *techSpan) int {
	g.bookID++
	id := g.bookID
	r := g.rng
	// Booked between two weeks and an hour before the start, never after now.
	createdAt := start.Add(-time.Hour - time.Duration(r.Int64N(int64(13*24*time.Hour))))
	if createdAt.After(now) {
		createdAt = now.Add(-time.Duration(r.Int64N(int64(time.Hour))))
	}
	createdAt = createdAt.Truncate(time.Microsecond)
	var openid, customer, tradeNo, idem any
	walkIn := past && r.IntN(20) == 0
	if walkIn {
		customer = int64(walkInBase + 1 + r.IntN(walkIns))
	} else {
		tradeNo = booking.OutTradeNo(id)
		if r.IntN(2) == 0 {
			idem = fmt.Sprintf("k-%d", id)
		}
	}
	amount := price
	if walkIn {
		amount = 0
	}
	var status booking.Status
	switch {
	case past && holds:
		status = booking.StatusCompleted
		if r.IntN(16) == 0 {
			status = booking.StatusNoShow
		}
	case past:
		status = booking.StatusCancelled
		if r.IntN(3) == 0 {
			status = booking.StatusExpired
		}
	case holds:
		status = booking.StatusConfirmed
		if r.IntN(10) == 0 && amount > 0 {
			status = booking.StatusPending
		}
	default:
		status = booking.StatusCancelled
	}
	if walkIn && !holds {
		status = booking.StatusCancelled
	}
	if !walkIn {
		if status == booking.StatusPending || status == booking.StatusConfirmed {
			g.nextActive++
			openid = Openid(1 + (g.nextActive-1)%g.customerCount())
		} else {
			openid = Openid(1 + r.IntN(g.customerCount()))
		}
	}
	lockExpire := createdAt.Add(15 * time.Minute)
	if status == booking.StatusPending {
		// A hold of the last minutes, not yet expired.
		createdAt = now.Add(-time.Duration(r.Int64N(int64(10 * time.Minute)))).Truncate(time.Microsecond)
		lockExpire = createdAt.Add(15 * time.Minute)
	}
	var paid bool
	switch status {
	case booking.StatusCompleted, booking.StatusNoShow, booking.StatusConfirmed:
		paid = amount > 0
	case booking.StatusCancelled:
		paid = amount > 0 && r.IntN(2) == 0
	}
	paidAt := createdAt.Add(time.Duration(30+r.IntN(300)) * time.Second)
	var txID, paidFen, paidAtV, refundStatus, refundFen, refundNo, refundID, refundedAt, refundReq, refundNext any
	if paid {
		txID, paidFen, paidAtV = fmt.Sprintf("42%018d", id), amount, paidAt
	}
	cancelAt := paidAt.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
	if cancelAt.After(start) {
		cancelAt = start.Add(-time.Hour)
	}
	if cancelAt.After(now) {
		cancelAt = now.Add(-time.Minute)
	}
	refunded := paid && status == booking.StatusCancelled
	if refunded {
		refundStatus, refundFen, refundNo, refundID = string(booking.RefundSucceeded), amount, booking.OutRefundNo(id), fmt.Sprintf("50%018d", id)
		if r.IntN(50) == 0 {
			refundStatus = string(booking.RefundFailed)
		}
		refundedAt, refundReq, refundNext = cancelAt.Add(2*time.Minute), cancelAt.Add(time.Second), cancelAt.Add(2*time.Minute)
	}
	updated := createdAt
	var checkinDay, checkinCode any
	if status == booking.StatusCompleted {
		updated = start.Add(-time.Duration(r.IntN(20)) * time.Minute)
		dayKey := start.Add(8 * time.Hour).Format(time.DateOnly) // shop day, Asia/Shanghai
		n := g.codes[dayKey]
		g.codes[dayKey] = n + 1
		checkinDay, checkinCode = dayKey, fmt.Sprintf("%08d", n*7919%100000000) // unique per day: 7919 is prime to 10^8
	}
	var serviceID, techID, fullPrice, minutes any
	seats := []int64{slot}
	if span != nil {
		serviceID, techID, fullPrice, minutes, seats = span.service, span.tech, span.priceFen, span.minutes, span.cells
	}
	g.bookings.rows <- []any{id, slot, openid, customer, int(status), amount, tradeNo, idem, lockExpire, txID, paidFen, paidAtV,
		refundStatus, refundFen, refundNo, refundID, refundedAt, refundReq, refundNext, createdAt, updated, checkinDay, checkinCode, 0,
		serviceID, techID, fullPrice, minutes, start}
	if status.HoldsSeat() {
		for _, cell := range seats {
			g.seats.rows <- []any{id, cell} // the seats it holds (shared/mysql's invariant)
		}
	}

	// Its money, as the ledger has it (migrations/0023_money.sql): the
	// deposit WeChat Pay confirmed, the refund that succeeded, the deposit a
	// no-show kept, and what a completed booking paid in the shop at checkout
	// (the full price less the deposit) when she left.
	if paid {
		g.money.rows <- []any{id, "deposit", amount, "wechatpay", tradeNo, txID, nil, nil, "wechatpay", paidAt}
	}
	if refunded && refundStatus == string(booking.RefundSucceeded) {
		g.money.rows <- []any{id, "refund", amount, "wechatpay", tradeNo, nil, refundNo, refundID, "wechatpay", refundedAt}
	}
	if paid && status == booking.StatusNoShow {
		g.money.rows <- []any{id, "kept", amount, "wechatpay", tradeNo, nil, nil, nil, "system", start.Add(time.Hour)}
	}
	if status == booking.StatusCompleted {
		full, length := price, 90*time.Minute
		if span != nil {
			full, length = span.priceFen, time.Duration(span.minutes)*time.Minute
		}
		if left := full - amount; left > 0 {
			leftAt := start.Add(length)
			if leftAt.After(now) {
				leftAt = now.Add(-time.Minute)
			}
			g.money.rows <- []any{id, "balance", left, shopMethods[r.IntN(len(shopMethods))], nil, nil, nil, nil, booking.ActorSalon, leftAt}
		}
	}

	// The audit trail of that life, and the messages the customer got.
	actor := booking.ActorCustomer
	event := booking.EventReserve
	first := booking.StatusPending
	if walkIn {
		actor, event, first = booking.ActorSalon, booking.EventWalkIn, booking.StatusConfirmed
	} else if amount == 0 {
		first = booking.StatusConfirmed
	}
	g.auditRow(id, slot, event, -1, int(first), actor, "", createdAt, now)
	if paid {
		g.auditRow(id, slot, booking.EventConfirm, 0, 1, booking.ActorWeChat, "", paidAt, now)
		g.notification(id, booking.NotifyConfirmed, openid, paidAt, now)
	}
	switch status {
	case booking.StatusCompleted, booking.StatusNoShow:
		if openid != nil && amount > 0 {
			g.notification(id, booking.NotifyReminder, openid, start.Add(-3*time.Hour), now)
		}
		if status == booking.StatusCompleted {
			g.auditRow(id, slot, booking.EventCheckIn, 1, 2, booking.ActorSalon, "", updated, now)
		} else {
			g.auditRow(id, slot, booking.EventNoShow, 1, 5, booking.ActorTimer, "", start.Add(time.Hour), now)
		}
	case booking.StatusExpired:
		g.auditRow(id, slot, booking.EventRelease, 0, 4, booking.ActorTimer, "", lockExpire.Add(30*time.Second), now)
	case booking.StatusCancelled:
		from := int(first)
		if paid {
			from = 1
		}
		g.auditRow(id, slot, booking.EventCancel, from, 3, booking.ActorCustomer, "", cancelAt, now)
		if refunded {
			g.auditRow(id, slot, booking.EventRefund, 3, 3, booking.ActorCustomer, "full refund", cancelAt, now)
			g.auditRow(id, slot, booking.EventRefund, 3, 3, booking.ActorWeChat, "processing", cancelAt.Add(time.Second), now)
			g.auditRow(id, slot, booking.EventRefund, 3, 3, booking.ActorWeChat, string(booking.RefundSucceeded), cancelAt.Add(2*time.Minute), now)
		}
	}
	if holds {
		return 1
	}
	return 0
}

// shopMethods are how a history's customers pay in the shop.
var shopMethods = []string{"wechat", "alipay", "cash", "card"}

// auditRow writes one audit record; records older than a minute were shipped
// to CLS a minute after they were written.
func (g *gen) auditRow(book, slot int64, event string, from, to int, actor, reason string, at, now time.Time) {
	g.auditID++
	var fromV any
	if from >= 0 {
		fromV = from
	}
	var shipped any
	if at.Before(now.Add(-time.Minute)) {
		shipped = at.Add(time.Minute)
	}
	g.audit.rows <- []any{g.auditID, book, slot, event, fromV, to, actor, reason, at, shipped}
}

// notification writes one sent (or refused) notification of a booking.
func (g *gen) notification(book int64, kind booking.NotificationKind, openid any, at, now time.Time) {
	if openid == nil || at.After(now) {
		return
	}
	g.notificationID++
	status, sent, lastErr := booking.NotificationSent, any(at.Add(time.Second)), ""
	if g.rng.IntN(10) == 0 {
		status, sent, lastErr = booking.NotificationRefused, nil, "43101 user refuse to accept the msg"
	}
	g.notifications.rows <- []any{g.notificationID, book, string(kind), openid, string(status), 1, at, lastErr, at, sent}
}
