package main

import (
	"context"
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
}

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

// historyDB is one database of the scenarios that measure on histories: its
// fixture and its store.
type historyDB struct {
	f     *fixture
	store *mysql.DB
}

// loadHistories makes a fresh database for each size (empty: the schedule
// ahead only; a salon's three years; a chain's, with -chain) and loads its
// history, logging as scenario; the databases are the caller's to close
// (closeHistories), also when it fails.
func (b *bench) loadHistories(scenario string) ([]GrowthSize, []historyDB, error) {
	ctx := b.ctx
	sizes := []GrowthSize{{Name: "empty", Scale: 0}, {Name: "salon", Scale: 1}}
	if b.opts.chain > 0 {
		sizes = append(sizes, GrowthSize{Name: fmt.Sprintf("chain (%dx)", b.opts.chain), Scale: b.opts.chain})
	}
	var dbs []historyDB
	for i := range sizes {
		f, err := newFixture(ctx, b.dsn, 4)
		if err != nil {
			return sizes, dbs, err
		}
		dbs = append(dbs, historyDB{f, f.store})
		now, err := f.store.Now(ctx)
		if err != nil {
			return sizes, dbs, err
		}
		spec := history.Salon(now, 24)
		if sizes[i].Scale == 0 {
			spec.Days = 0 // the schedule ahead only
		} else {
			spec.Scale = sizes[i].Scale
		}
		c, err := history.Load(ctx, f.raw, spec)
		if err != nil {
			return sizes, dbs, fmt.Errorf("%s history: %w", sizes[i].Name, err)
		}
		sizes[i].Counts = c
		b.logf("%s: %s: %v", scenario, sizes[i].Name, c)
	}
	return sizes, dbs, nil
}

func closeHistories(dbs []historyDB) {
	for _, d := range dbs {
		d.f.close()
	}
}

func (b *bench) growth() (*Growth, error) {
	ctx := b.ctx
	sizes, dbs, err := b.loadHistories("growth")
	defer closeHistories(dbs)
	if err != nil {
		return nil, err
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
	return g, nil
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
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
