package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/history"
)

// Growth is the product's routes and release-run steps measured on an empty
// schema, a salon's three years and a chain's, in the same run, interleaved
// (every operation on every database, round after round), as medians.
type Growth struct {
	Sizes []GrowthSize `json:"sizes"`
	Ops   []GrowthOp   `json:"operations"`
	Reps  int          `json:"reps"`
	// Reports are the owner's report over its ranges, per size, and Floors
	// the same sums by bare grouped statements over the same rows: the
	// report's cost grows with its range, so it is judged against the floor
	// (floorTarget), not against the empty schema.
	Reports []GrowthOp `json:"reports,omitempty"`
	Floors  []GrowthOp `json:"floors,omitempty"`
}

// reportRanges are the owner's report's ranges the growth scenario measures,
// in days, to today; floorTarget: the longest at most this many times its
// floor at p50 on every history.
var reportRanges = []int{31, 366}

const floorTarget = 1.3

// GrowthSize is one database: its history and how long it took to load.
type GrowthSize struct {
	Name   string         `json:"name"`
	Scale  int            `json:"scale"`
	Counts history.Counts `json:"rows"`
}

// GrowthOp is one operation's median per size, in Sizes' order.
type GrowthOp struct {
	Name string    `json:"name"`
	P50  []float64 `json:"p50_ms"`
}

// growthTarget: no operation more than 1.2 times slower at p50 on the largest
// history than on the empty schema.
const growthTarget = 1.2

// growthRun loads the histories and measures; -chain sets the chain's scale
// (0 leaves it out).
func (b *bench) growthRun() {
	g, err := b.growth()
	if err != nil {
		b.fail("growth", err)
	}
	b.res.Growth = g
}

func (b *bench) growth() (*Growth, error) {
	ctx := b.ctx
	type db struct {
		f     *fixture
		store *mysql.DB
	}
	sizes := []GrowthSize{{Name: "empty", Scale: 0}, {Name: "salon", Scale: 1}}
	if b.opts.chain > 0 {
		sizes = append(sizes, GrowthSize{Name: fmt.Sprintf("chain (%dx)", b.opts.chain), Scale: b.opts.chain})
	}
	var dbs []db
	defer func() {
		for _, d := range dbs {
			d.f.close()
		}
	}()
	for i := range sizes {
		f, err := newFixture(ctx, b.dsn, 4)
		if err != nil {
			return nil, err
		}
		dbs = append(dbs, db{f, f.store})
		now, err := f.store.Now(ctx)
		if err != nil {
			return nil, err
		}
		spec := history.Salon(now, 24)
		if sizes[i].Scale == 0 {
			spec.Days = 0 // the schedule ahead only
		} else {
			spec.Scale = sizes[i].Scale
		}
		c, err := history.Load(ctx, f.raw, spec)
		if err != nil {
			return nil, fmt.Errorf("%s history: %w", sizes[i].Name, err)
		}
		sizes[i].Counts = c
		b.logf("growth: %s: %v", sizes[i].Name, c)
	}
	reps := 30
	if b.prof.Name == "full" {
		reps = 200
	}
	g := &Growth{Sizes: sizes, Reps: reps}
	samples := map[string][][]time.Duration{}
	var names []string
	add := func(name string, i int, d time.Duration) {
		if _, ok := samples[name]; !ok {
			names = append(names, name)
			samples[name] = make([][]time.Duration, len(sizes))
		}
		samples[name][i] = append(samples[name][i], d)
	}
	for rep := range reps {
		for i, d := range dbs {
			if err := growthRound(ctx, d.store, rep, func(name string, dur time.Duration) { add(name, i, dur) }); err != nil {
				return g, fmt.Errorf("%s, round %d: %w", sizes[i].Name, rep, err)
			}
		}
	}
	for _, n := range names {
		op := GrowthOp{Name: n}
		for i := range sizes {
			op.P50 = append(op.P50, summarise(samples[n][i]).P50)
		}
		g.Ops = append(g.Ops, op)
	}
	// The owner's report over the last 31 and 366 shop days to today, and
	// its floor, interleaved as above (which of the two goes first
	// alternates by round).
	reportSamples := make([][][]time.Duration, len(reportRanges))
	floorSamples := make([][][]time.Duration, len(reportRanges))
	for k := range reportRanges {
		reportSamples[k], floorSamples[k] = make([][]time.Duration, len(sizes)), make([][]time.Duration, len(sizes))
	}
	for i, d := range dbs {
		for _, days := range reportRanges {
			if err := reportMatchesFloor(ctx, d.store, days); err != nil {
				return g, fmt.Errorf("%s, %d days: %w", sizes[i].Name, days, err)
			}
		}
	}
	for rep := range reps {
		for i, d := range dbs {
			for k, days := range reportRanges {
				timed := []func() (time.Duration, error){
					func() (time.Duration, error) { took, _, err := ownersReport(ctx, d.store, days); return took, err },
					func() (time.Duration, error) { took, _, err := reportFloor(ctx, d.store, days); return took, err },
				}
				for j := range timed {
					which := (j + rep) % 2
					took, err := timed[which]()
					if err != nil {
						return g, fmt.Errorf("%s, %d days: %w", sizes[i].Name, days, err)
					}
					if which == 0 {
						reportSamples[k][i] = append(reportSamples[k][i], took)
					} else {
						floorSamples[k][i] = append(floorSamples[k][i], took)
					}
				}
			}
		}
	}
	for k, days := range reportRanges {
		op := GrowthOp{Name: fmt.Sprintf("GET /admin/reports, %d days (ReportFacts, BuildReport)", days)}
		floor := GrowthOp{Name: fmt.Sprintf("floor, %d days (bare grouped statements)", days)}
		for i := range sizes {
			op.P50 = append(op.P50, summarise(reportSamples[k][i]).P50)
			floor.P50 = append(floor.P50, summarise(floorSamples[k][i]).P50)
		}
		g.Reports, g.Floors = append(g.Reports, op), append(g.Floors, floor)
	}
	return g, nil
}

// reportShop is the zone of the reports' shop days: the history's shop,
// Asia/Shanghai (no daylight saving, so the floor may add 8 hours).
var reportShop = time.FixedZone("CST", 8*3600)

// reportSums are the figures the report and its floor both give, summed
// over the range: to hold the floor to the same sums.
type reportSums struct {
	Bookings, Completed, NoShows, Cancelled, LateCancels int
	OnlineFen, ShopFen, RefundedFen, KeptFen, TakingsFen int64
	TechMinutes                                          int
}

// reportRangeOf is the last days shop days to today by store's clock.
func reportRangeOf(ctx context.Context, store *mysql.DB, days int) (booking.ReportRange, error) {
	now, err := store.Now(ctx)
	if err != nil {
		return booking.ReportRange{}, err
	}
	today := now.In(reportShop)
	return booking.ParseReportRange(today.AddDate(0, 0, 1-days).Format(time.DateOnly), today.Format(time.DateOnly), reportShop)
}

// ownersReport is the owner's report of the last days shop days as its route
// makes it, less the HTTP: the store's sums in one snapshot (ReportFacts)
// and package booking's arithmetic (BuildReport); timed from the range
// parsed to the report built.
func ownersReport(ctx context.Context, store *mysql.DB, days int) (time.Duration, reportSums, error) {
	r, err := reportRangeOf(ctx, store, days)
	if err != nil {
		return 0, reportSums{}, err
	}
	start := time.Now()
	f, err := store.ReportFacts(ctx, r)
	if err != nil {
		return 0, reportSums{}, err
	}
	rep := booking.BuildReport(r, f)
	took := time.Since(start)
	t := rep.Total
	sums := reportSums{Bookings: t.Bookings, Completed: t.Completed, NoShows: t.NoShows, Cancelled: t.Cancelled, LateCancels: t.LateCancels,
		OnlineFen: t.OnlineFen, ShopFen: t.ShopFen, RefundedFen: t.RefundedFen, KeptFen: t.KeptFen}
	for _, w := range rep.Technicians {
		sums.TakingsFen += w.TakingsFen
		sums.TechMinutes += w.Minutes
	}
	return took, sums, nil
}

// reportFloor is the floor of the owner's report: the same sums from the
// same rows by the barest grouped statements, one after the other on the
// pool, no transaction: the bookings by shop day (the instant plus eight
// hours), status and late cancel; the ledger rows by shop day and kind; the
// technicians' completed bookings by technician and service; their ledger
// rows by technician, service and kind. Every group is read from the wire;
// the sums are added up in Go.
func reportFloor(ctx context.Context, store *mysql.DB, days int) (time.Duration, reportSums, error) {
	r, err := reportRangeOf(ctx, store, days)
	if err != nil {
		return 0, reportSums{}, err
	}
	db := store.SQL()
	var sums reportSums
	from, to := r.Start, r.End
	start := time.Now()
	each := func(q string, scan func(*sql.Rows) error, args ...any) error {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	err = each(`SELECT DATE(starts_at + INTERVAL 8 HOUR) AS d, status, late_cancel, COUNT(*) FROM t_booking
		WHERE starts_at >= ? AND starts_at < ? GROUP BY d, status, late_cancel ORDER BY NULL`, func(rows *sql.Rows) error {
		var d time.Time
		var status booking.Status
		var late bool
		var n int
		if err := rows.Scan(&d, &status, &late, &n); err != nil {
			return err
		}
		switch status {
		case booking.StatusExpired:
			return nil
		case booking.StatusCompleted:
			sums.Completed += n
		case booking.StatusNoShow:
			sums.NoShows += n
		case booking.StatusCancelled:
			sums.Cancelled += n
			if late {
				sums.LateCancels += n
			}
		}
		sums.Bookings += n
		return nil
	}, from, to)
	if err == nil {
		err = each(`SELECT DATE(created_at + INTERVAL 8 HOUR) AS d, kind, SUM(amount_fen) FROM t_money
			WHERE created_at >= ? AND created_at < ? GROUP BY d, kind ORDER BY NULL`, func(rows *sql.Rows) error {
			var d time.Time
			var kind booking.MoneyKind
			var fen int64
			if err := rows.Scan(&d, &kind, &fen); err != nil {
				return err
			}
			switch kind {
			case booking.MoneyDeposit:
				sums.OnlineFen += fen
			case booking.MoneyBalance:
				sums.ShopFen += fen
			case booking.MoneyRefund:
				sums.RefundedFen += fen
			case booking.MoneyKept:
				sums.KeptFen += fen
			}
			return nil
		}, from, to)
	}
	if err == nil {
		err = each(`SELECT technician_id, service_id, COUNT(*), SUM(minutes) FROM t_booking
			WHERE starts_at >= ? AND starts_at < ? AND status = ? AND technician_id IS NOT NULL
			GROUP BY technician_id, service_id ORDER BY NULL`, func(rows *sql.Rows) error {
			var tech, service int64
			var n, minutes int
			if err := rows.Scan(&tech, &service, &n, &minutes); err != nil {
				return err
			}
			sums.TechMinutes += minutes
			return nil
		}, from, to, booking.StatusCompleted)
	}
	if err == nil {
		err = each(`SELECT b.technician_id, b.service_id, m.kind, SUM(m.amount_fen) FROM t_booking b JOIN t_money m ON m.book_id = b.book_id
			WHERE b.starts_at >= ? AND b.starts_at < ? AND b.status = ? AND b.technician_id IS NOT NULL
			GROUP BY b.technician_id, b.service_id, m.kind ORDER BY NULL`, func(rows *sql.Rows) error {
			var tech, service, fen int64
			var kind booking.MoneyKind
			if err := rows.Scan(&tech, &service, &kind, &fen); err != nil {
				return err
			}
			switch kind {
			case booking.MoneyDeposit, booking.MoneyBalance:
				sums.TakingsFen += fen
			case booking.MoneyRefund:
				sums.TakingsFen -= fen
			}
			return nil
		}, from, to, booking.StatusCompleted)
	}
	return time.Since(start), sums, err
}

// reportMatchesFloor holds the floor to the report: the same sums on store
// over the last days shop days, or an error saying where they differ.
func reportMatchesFloor(ctx context.Context, store *mysql.DB, days int) error {
	_, got, err := ownersReport(ctx, store, days)
	if err != nil {
		return err
	}
	_, floor, err := reportFloor(ctx, store, days)
	if err != nil {
		return err
	}
	if got != floor {
		return fmt.Errorf("the report's sums %+v, its floor's %+v", got, floor)
	}
	return nil
}

// growthRound runs each measured operation once on store: what each route and
// release-run step asks of the store, on the schedule ahead (the same at every
// size), a customer with years of bookings behind her, and today's console.
func growthRound(ctx context.Context, store *mysql.DB, rep int, measure func(string, time.Duration)) error {
	timed := func(name string, fn func() error) error {
		start := time.Now()
		err := fn()
		measure(name, time.Since(start))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	day := now.Truncate(24*time.Hour).AddDate(0, 0, 2)
	// Two slots with a free seat that take a deposit (a free slot's booking is
	// confirmed at once, and the payment step needs a pending one).
	var slotA, slotB int64
	if err := store.SQL().QueryRowContext(ctx, `SELECT MIN(slot_id), MAX(slot_id) FROM t_slot WHERE start_at >= ? AND start_at < ? AND booked < capacity AND price_fen > 0`,
		day, day.Add(24*time.Hour)).Scan(&slotA, &slotB); err != nil {
		return err
	}
	openid := fmt.Sprintf("o-growth-%d", rep)
	// A technician's cell free two days ahead, for the 30-minute service (one
	// cell: any free cell is a start it can book), and that shop day.
	var techStart time.Time
	if err := store.SQL().QueryRowContext(ctx, `SELECT MIN(start_at) FROM t_slot WHERE start_at >= ? AND start_at < ? AND technician_id IS NOT NULL AND booked = 0 AND is_open = 1`,
		day, day.AddDate(0, 0, 7)).Scan(&techStart); err != nil {
		return fmt.Errorf("a free cell: %w", err)
	}
	shopDayStart, shopDayEnd, err := booking.DayBounds(booking.ShopDay(techStart, growthShop), growthShop)
	if err != nil {
		return err
	}
	regular := history.Openid(1 + rep%1000)
	var b *booking.Booking
	steps := []struct {
		name string
		fn   func() error
	}{
		{"GET /slots (ListSlots, WaitlistLengths)", func() error {
			vs, err := store.ListSlots(ctx, day, day.Add(24*time.Hour))
			if err != nil {
				return err
			}
			ids := make([]int64, len(vs))
			for i, v := range vs {
				ids[i] = v.ID
			}
			_, err = store.WaitlistLengths(ctx, ids)
			return err
		}},
		{"POST /bookings (CountNoShows, Reserve)", func() error {
			if _, err := store.CountNoShows(ctx, openid, booking.NoShowWindow); err != nil {
				return err
			}
			b, _, err = store.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slotA, IdemKey: openid})
			return err
		}},
		{"GET /availability (ServiceDay, 4 technicians)", func() error {
			f, err := store.ServiceDay(ctx, growthService, 0, shopDayStart, shopDayEnd)
			if err != nil {
				return err
			}
			_, err = store.Policy.FreeStarts(f, growthService)
			return err
		}},
		{"POST /bookings of a service (CountNoShows, ReserveService, any technician)", func() error {
			who := openid + "-svc"
			if _, err := store.CountNoShows(ctx, who, booking.NoShowWindow); err != nil {
				return err
			}
			_, _, err := store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: who, ServiceID: growthService,
				StartAt: techStart, DayStart: shopDayStart, DayEnd: shopDayEnd})
			return err
		}},
		{"POST /bookings/{id}/pay (FindCustomerBooking)", func() error {
			_, err := store.FindCustomerBooking(ctx, openid, b.ID)
			return err
		}},
		{"payment notification (ChangeStatus 0 -> 1)", func() error {
			_, err := store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
				Event: booking.EventConfirm, Actor: booking.ActorWeChat, Payment: &booking.Payment{TransactionID: "42" + openid, AmountFen: b.AmountFen, PaidAt: now}})
			return err
		}},
		{"GET /bookings/mine (a customer with history)", func() error {
			_, err := store.ListCustomerBookings(ctx, regular, 50)
			return err
		}},
		{"reschedule (salon)", func() error {
			_, err := store.Reschedule(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
				Event: booking.EventReschedule, Actor: booking.ActorSalon, ToSlotID: slotB})
			return err
		}},
		{"cancel (salon, with refund)", func() error {
			_, err := store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusCancelled,
				Event: booking.EventCancel, Actor: booking.ActorSalon, SlotID: slotB})
			return err
		}},
		{"release: claim expired holds", func() error { _, err := store.ClaimExpired(ctx, 20, time.Minute); return err }},
		{"release: due no-shows", func() error { _, err := store.DueNoShows(ctx, 30*time.Minute, 20); return err }},
		{"release: claim due refunds", func() error { _, err := store.ClaimDueRefunds(ctx, time.Hour, time.Nanosecond, 20); return err }},
		{"release: drop started waitlists", func() error { _, err := store.DropStartedWaitlists(ctx); return err }},
		{"release: enqueue reminders", func() error { _, err := store.EnqueueReminders(ctx, 3*time.Hour); return err }},
		{"release: claim due notifications", func() error {
			_, _, err := store.ClaimDueNotifications(ctx, time.Nanosecond, 20)
			return err
		}},
		{"release: reconciliation (FindDrift)", func() error { _, err := store.FindDrift(ctx); return err }},
		{"release: retention (one batch each)", func() error {
			if _, err := store.DeleteShippedAudit(ctx, 180*24*time.Hour, 500); err != nil {
				return err
			}
			_, err := store.DeleteFinishedNotifications(ctx, booking.NotificationRetention, 500)
			return err
		}},
		{"console: day page (ListSlotBookings, AttachCustomers, AuditOfBookings)", func() error {
			bs, err := store.ListSlotBookings(ctx, day, day.Add(24*time.Hour))
			if err != nil {
				return err
			}
			if err := store.AttachCustomers(ctx, bs); err != nil {
				return err
			}
			ids := make([]int64, len(bs))
			for i, bk := range bs {
				ids[i] = bk.ID
			}
			_, err = store.AuditOfBookings(ctx, ids) // who at the salon last changed each
			return err
		}},
		{"console: audit page (ListAudit, AuditEvents)", func() error {
			if _, err := store.ListAudit(ctx, now.Add(-24*time.Hour), now, "", 200); err != nil {
				return err
			}
			_, err := store.AuditEvents(ctx, now.Add(-24*time.Hour), now)
			return err
		}},
		{"console: health page (counts, backlog, last run)", func() error {
			dbNow, err := store.Now(ctx) // the service's health page reads the clock too
			if err != nil {
				return err
			}
			if _, err := store.NotificationCounts(ctx, dbNow.Add(-booking.NotificationRetention), booking.NotificationFailed, booking.NotificationRefused); err != nil {
				return err
			}
			if _, err := store.CountRefunds(ctx, booking.RefundPending, booking.RefundProcessing, booking.RefundFailed); err != nil {
				return err
			}
			if _, _, err := store.UnshippedAuditBacklog(ctx); err != nil {
				return err
			}
			_, err = store.LastReleaseRun(ctx)
			return err
		}},
		{"console: customer page (CustomerHistory)", func() error {
			c, err := store.CustomerByOpenID(ctx, regular)
			if err != nil {
				return err
			}
			_, _, err = store.CustomerHistory(ctx, c.ID, 50)
			return err
		}},
		{"console: week page (ListSlots, WaitlistLengths, 7 days)", func() error {
			vs, err := store.ListSlots(ctx, day, day.AddDate(0, 0, 7))
			if err != nil {
				return err
			}
			ids := make([]int64, len(vs))
			for i, v := range vs {
				ids[i] = v.ID
			}
			_, err = store.WaitlistLengths(ctx, ids)
			return err
		}},
		{"console: booking page (FindBooking, BookingAudit, AttachCustomers)", func() error {
			bk, err := store.FindBooking(ctx, b.ID)
			if err != nil {
				return err
			}
			if _, err := store.BookingAudit(ctx, b.ID); err != nil {
				return err
			}
			return store.AttachCustomers(ctx, []*booking.Booking{bk})
		}},
		{"console: door, check-in by code (FindByCheckinCode)", func() error {
			// A code no booking of today has: the lookup is the page's cost
			// either way (one key of uk_booking_checkin).
			_, err := store.FindByCheckinCode(ctx, booking.ShopDay(now, time.UTC), "00000000")
			if booking.IsCode(err, booking.ENOTFOUND) {
				err = nil
			}
			return err
		}},
		{"console: staff accounts (ListStaff)", func() error { _, err := store.ListStaff(ctx); return err }},
	}
	for _, s := range steps {
		if err := timed(s.name, s.fn); err != nil {
			return err
		}
	}
	return nil
}

// growthService is the history's 30-minute service (shared/mysql/history's
// first), which every one of its technicians does; growthShop the shop's zone
// its days are laid in.
const growthService = 1

var growthShop = time.FixedZone("CST", 8*3600)

// growthSection writes the table of medians and ratios.
func (p *page) growthSection() {
	g := p.res.Growth
	if g == nil || len(g.Ops) == 0 {
		return
	}
	p.w("## As the data grows: empty, a salon's three years, a chain\n\n")
	p.w("Each database is a fresh schema with the same schedule ahead (the next 14 days, 22 slots a day, 8 seats, and four technicians with a cell at each of those starts, with their bookings); the salon's and the chain's also hold the past (`shared/mysql/history`, seed 24), loaded with multi-row INSERTs of %d rows. ", history.Batch)
	p.w("Every operation runs on every database in turn, %d rounds, on one connection at a time, direct; the figures are medians (ms), the ratios against the empty schema. Target: no ratio above %.1f.\n\n", g.Reps, growthTarget)
	p.w("| database | slots | bookings | audit records | notifications | customers | load s |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range g.Sizes {
		c := s.Counts
		p.w("| %s | %d | %d | %d | %d | %d | %.1f |\n", s.Name, c.Slots, c.Bookings, c.Audit, c.Notifications, c.Customers, c.Seconds)
	}
	p.w("\n| operation |")
	for _, s := range g.Sizes {
		p.w(" %s p50 ms |", s.Name)
	}
	for _, s := range g.Sizes[1:] {
		p.w(" %s / empty |", s.Name)
	}
	p.w(" met |\n|")
	for range 2 + 2*len(g.Sizes) - 1 {
		p.w(" --- |")
	}
	p.w("\n")
	for _, op := range g.Ops {
		p.w("| %s |", op.Name)
		for _, v := range op.P50 {
			p.w(" %.3f |", v)
		}
		worst := 0.0
		for _, v := range op.P50[1:] {
			r := v / op.P50[0]
			worst = max(worst, r)
			p.w(" %.2fx |", r)
		}
		p.w(" %s |\n", yesNo(worst <= growthTarget))
	}
	p.w("\n")
	p.reportGrowth()
}

// reportGrowth writes the owner's report's medians beside its floor's: per
// range and database, the report against its floor on each.
func (p *page) reportGrowth() {
	g := p.res.Growth
	if len(g.Reports) != len(reportRanges) || len(g.Floors) != len(reportRanges) {
		return
	}
	last := len(reportRanges) - 1
	p.w("The owner's report (`ReportFacts`, its sums from the bookings and the ledger in one read-only snapshot, and `BuildReport`) over the last %d and %d shop days to today, beside its floor: the same sums from the same rows by the barest grouped statements (the bookings by shop day, status and late cancel; the ledger by shop day and kind; the technicians' completed bookings and their ledger rows by technician and service), run one after the other without a transaction; both read to the last row, and their sums checked equal before the rounds. %d rounds interleaved as above, the two alternating which goes first, medians (ms). Target: the %d-day report at most %.1f times its floor on every history.\n\n",
		reportRanges[0], reportRanges[last], g.Reps, reportRanges[last], floorTarget)
	p.w("| report |")
	for _, s := range g.Sizes {
		p.w(" %s p50 ms |", s.Name)
	}
	p.w("\n|")
	for range 1 + len(g.Sizes) {
		p.w(" --- |")
	}
	p.w("\n")
	for k := range reportRanges {
		for _, op := range []GrowthOp{g.Reports[k], g.Floors[k]} {
			p.w("| %s |", op.Name)
			for _, v := range op.P50 {
				p.w(" %.3f |", v)
			}
			p.w("\n")
		}
	}
	for k, days := range reportRanges {
		p.w("| report / floor, %d days |", days)
		for i := range g.Sizes {
			r := g.Reports[k].P50[i] / g.Floors[k].P50[i]
			met := ""
			if k == last {
				met = " " + yesNo(r <= floorTarget)
			}
			p.w(" %.2fx%s |", r, met)
		}
		p.w("\n")
	}
	p.w("| report, %d days / %d days |", reportRanges[last], reportRanges[0])
	for i := range g.Sizes {
		p.w(" %.2fx |", g.Reports[last].P50[i]/g.Reports[0].P50[i])
	}
	p.w("\n\n")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
