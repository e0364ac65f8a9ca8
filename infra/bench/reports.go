package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// ReportBench is the owner's report measured on the histories of the growth
// scenario's sizes (empty, a salon's three years, a chain's), beside its
// floor: Reports and Floors are one median per size, in Sizes' order, for
// each of reportRanges. The report's cost grows with its range, so it is
// judged against the floor (floorTarget), not against the empty schema.
type ReportBench struct {
	Sizes   []GrowthSize `json:"sizes"`
	Reps    int          `json:"reps"`
	Reports []GrowthOp   `json:"reports"`
	Floors  []GrowthOp   `json:"floors"`
}

// reportRanges are the owner's report's ranges measured, in days, to today;
// floorTarget: the longest at most this many times its floor at p50 on every
// history.
var reportRanges = []int{31, 366}

const floorTarget = 1.3

// reportsRun loads the histories and measures the report and its floor.
func (b *bench) reportsRun() {
	r, err := b.reportsBench()
	if err != nil {
		b.fail("reports", err)
	}
	b.res.Reports = r
}

// reportsBench measures, on each size's database, the report and its floor
// over each range, round after round, every database in turn, the two
// alternating which goes first; their sums are checked equal first.
func (b *bench) reportsBench() (*ReportBench, error) {
	ctx := b.ctx
	sizes, dbs, err := b.loadHistories("reports")
	defer closeHistories(dbs)
	if err != nil {
		return nil, err
	}
	reps := 30
	if b.prof.Name == "full" {
		reps = 200
	}
	g := &ReportBench{Sizes: sizes, Reps: reps}
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
						return g, fmt.Errorf("%s, %d days, round %d: %w", sizes[i].Name, days, rep, err)
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

// reportsTarget: the longest range's report at most floorTarget times its
// floor at p50 on every history (not the empty schema, whose few rows time
// round trips).
func reportsTarget(res *Results) Target {
	last := len(reportRanges) - 1
	t := Target{Name: fmt.Sprintf("owner's report, %d days, <= %.1fx its floor on every history", reportRanges[last], floorTarget), Measured: "not measured"}
	g := res.Reports
	if g == nil || len(g.Reports) != len(reportRanges) || len(g.Floors) != len(reportRanges) {
		return t
	}
	worst, n := 0.0, 0
	for i, s := range g.Sizes {
		if s.Scale == 0 {
			continue
		}
		worst, n = max(worst, g.Reports[last].P50[i]/g.Floors[last].P50[i]), n+1
	}
	if n == 0 {
		return t
	}
	t.Measured = fmt.Sprintf("%.2fx", worst)
	t.Met = worst <= floorTarget
	t.Why = "p50 of the report (ReportFacts, BuildReport) over p50 of the bare grouped statements, the worst history"
	return t
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

// reportsSection writes the owner's report's medians beside its floor's: per
// range and database, the report against its floor on each.
func (p *page) reportsSection() {
	g := p.res.Reports
	if g == nil || len(g.Reports) != len(reportRanges) || len(g.Floors) != len(reportRanges) {
		return
	}
	p.w("## The owner's report on a salon's three years\n\n")
	p.w("| database | slots | bookings | ledger rows | load s |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range g.Sizes {
		c := s.Counts
		p.w("| %s | %d | %d | %d | %.1f |\n", s.Name, c.Slots, c.Bookings, c.Money, c.Seconds)
	}
	p.w("\n")
	last := len(reportRanges) - 1
	p.w("The owner's report (`ReportFacts`, its sums from the bookings and the ledger in one read-only snapshot, and `BuildReport`) over the last %d and %d shop days to today, beside its floor: the same sums from the same rows by the barest grouped statements (the bookings by shop day, status and late cancel; the ledger by shop day and kind; the technicians' completed bookings and their ledger rows by technician and service), run one after the other without a transaction; both read to the last row, and their sums checked equal before the rounds. %d rounds, every database in turn, one at a time, direct, the two alternating which goes first, medians (ms). Target: the %d-day report at most %.1f times its floor on every history (the empty schema's few rows time round trips, and are not judged).\n\n",
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
		for i, s := range g.Sizes {
			r := g.Reports[k].P50[i] / g.Floors[k].P50[i]
			met := ""
			if k == last && s.Scale > 0 {
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
