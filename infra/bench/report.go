package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Target is one of the targets and what this run measured.
type Target struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
	Verdict  string `json:"verdict"`
	Why      string `json:"why"`
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// ratios answers, per rep, a's seats/s over b's in the same scenario, network,
// clients and rep: a ratio of two cells measured side by side.
func ratios(cells []Cell, scenario, network, a, b string, clients int, ops bool) []float64 {
	val := func(c Cell) float64 {
		if ops {
			return c.OpsPerS
		}
		return c.SeatsPerS
	}
	byRep := map[int]float64{}
	for _, c := range cells {
		if c.Scenario == scenario && c.Network == network && c.Contender == b && c.Clients == clients {
			byRep[c.Rep] = val(c)
		}
	}
	var out []float64
	for _, c := range cells {
		if c.Scenario == scenario && c.Network == network && c.Contender == a && c.Clients == clients {
			if d := byRep[c.Rep]; d > 0 {
				out = append(out, val(c)/d)
			}
		}
	}
	return out
}

// medianProfile is the median of each figure over the cells of one contender
// in one scenario, network and client count.
func medianProfile(cells []Cell, scenario, network, contender string, clients int) (CellProfile, bool) {
	var ps []CellProfile
	for _, c := range cells {
		if c.Scenario == scenario && c.Network == network && c.Contender == contender && c.Clients == clients {
			ps = append(ps, c.Profile)
		}
	}
	if len(ps) == 0 {
		return CellProfile{}, false
	}
	pick := func(f func(CellProfile) float64) float64 {
		var xs []float64
		for _, p := range ps {
			xs = append(xs, f(p))
		}
		return median(xs)
	}
	return CellProfile{
		RoundTrips:  pick(func(p CellProfile) float64 { return p.RoundTrips }),
		PoolWaitMS:  pick(func(p CellProfile) float64 { return p.PoolWaitMS }),
		ClientCPUUS: pick(func(p CellProfile) float64 { return p.ClientCPUUS }),
		ServerCPUUS: pick(func(p CellProfile) float64 { return p.ServerCPUUS }),
		LockWaits:   pick(func(p CellProfile) float64 { return p.LockWaits }),
		LockWaitMS:  pick(func(p CellProfile) float64 { return p.LockWaitMS }),
		RowsWritten: pick(func(p CellProfile) float64 { return p.RowsWritten }),
		Rollbacks:   pick(func(p CellProfile) float64 { return p.Rollbacks }),
	}, true
}

// profileText states a profile as measured, per operation.
func profileText(name string, p CellProfile) string {
	return fmt.Sprintf("%s: %.1f round trips, %.2f row-lock waits (%.2f ms), pool wait %.2f ms, server CPU %.0f µs, client CPU %.0f µs, %.1f rows written",
		name, p.RoundTrips, p.LockWaits, p.LockWaitMS, p.PoolWaitMS, p.ServerCPUUS, p.ClientCPUUS, p.RowsWritten)
}

// ratioTarget judges a's throughput against b's on one network: at least min
// times (or, with atMost, at most) at every client count. Its why is the two
// profiles at the client count where the ratio is furthest from the target.
func ratioTarget(res *Results, name, scenario, network, a, b string, min float64, clients []int, cells []Cell, ops, atMost bool) Target {
	t := Target{Name: name, Met: true}
	var parts []string
	worst, worstAt := 0.0, 0
	for _, n := range clients {
		r := median(ratios(cells, scenario, network, a, b, n, ops))
		miss := min - r
		if atMost {
			miss = r - min
		}
		parts = append(parts, fmt.Sprintf("%sx@%d", ratioText(r, min, miss > 0), n))
		if r == 0 || miss > 0 {
			t.Met = false
		}
		if worstAt == 0 || miss > worst {
			worst, worstAt = miss, n
		}
	}
	t.Measured = strings.Join(parts, " ")
	if len(parts) == 0 || len(cells) == 0 {
		t.Met, t.Measured = false, "not measured"
		return t
	}
	per := "per seat"
	if ops {
		per = "per answer"
	}
	pa, okA := medianProfile(cells, scenario, network, a, worstAt)
	pb, okB := medianProfile(cells, scenario, network, b, worstAt)
	if okA && okB {
		t.Why = fmt.Sprintf("%s at %d %s: %s; %s", per, worstAt, plural(worstAt, "client", "clients"), profileText(a, pa), profileText(b, pb))
	}
	return t
}

// ratioText is a ratio to two decimals, or to three when two would print the
// target itself for a ratio that misses it.
func ratioText(r, target float64, missed bool) string {
	t := fmt.Sprintf("%.2f", r)
	if missed && t == fmt.Sprintf("%.2f", target) {
		t = fmt.Sprintf("%.3f", r)
	}
	return t
}

const (
	cProduct = "product"
	cBefore  = "product-before (COMMIT in a second round trip)"
	cFor     = "SELECT ... FOR UPDATE"
	cBare    = "bare conditional UPDATE (floor)"
	cFree    = "read-then-write (no lock)"
	cGateway = "product via gateway"
)

// forUpdateFactor is how many times FOR UPDATE's hot-slot throughput the
// product must reach: the targets, direct and at production distance.
func forUpdateFactor(network string) float64 {
	if network == networkName(0) {
		return 1.4
	}
	return 2
}

// tradeFreeFactor is how close the product's hot slot must come to the same
// reservation without the order number's write: the target for the
// order number, that it costs (almost) nothing on a hot slot.
const tradeFreeFactor = 0.95

func targets(res *Results) []Target {
	ts := correctnessTargets(res)
	for _, n := range res.Networks {
		net := n.Name
		f := forUpdateFactor(net)
		ts = append(ts,
			ratioTarget(res, fmt.Sprintf("%s: hot slot: product >= %gx SELECT ... FOR UPDATE", net, f), "hot slot", net, cProduct, cFor, f, res.Profile.Clients, res.Cells, false, false),
			ratioTarget(res, net+": hot slot: product >= 0.5x bare conditional UPDATE", "hot slot", net, cProduct, cBare, 0.5, res.Profile.Clients, res.Cells, false, false),
			ratioTarget(res, fmt.Sprintf("%s: hot slot: product >= %gx %s", net, tradeFreeFactor, cSeatLastNoTrade), "hot slot", net, cProduct, cSeatLastNoTrade, tradeFreeFactor, res.Profile.Clients, res.Cells, false, false),
			ratioTarget(res, net+": 1000 slots: product >= 1.2x SELECT ... FOR UPDATE", "1000 slots", net, cProduct, cFor, 1.2, res.Profile.Clients, res.Cells, false, false),
			// Sold out compares costs: the floor's refusals per second over the product's.
			ratioTarget(res, net+": sold out: one reserve on a full slot <= 1.5x one bare conditional UPDATE (cost)", "sold out", net, cBare, cProduct, 1.5, []int{1, 8}, res.SoldOut, true, true),
			burstTarget(res, net),
		)
	}
	ts = append(ts, budgetTarget(res))
	ov := Target{Name: "gateway + runtime add <= 1 ms p50 over the in-process handler", Measured: "not measured"}
	if o := res.Overhead; o != nil {
		ov.Measured = fmt.Sprintf("+%.2f ms (%.2f vs %.2f)", o.DiffP50MS, o.Gateway.P50, o.InProcess.P50)
		ov.Met = o.DiffP50MS <= 1
		ov.Why = fmt.Sprintf("p99 %.2f ms through the gateway, %.2f ms in process, %d requests each", o.Gateway.P99, o.InProcess.P99, o.Iterations)
	}
	ts = append(ts, ov)
	ts = append(ts, techTargets(res)...)
	ts = append(ts, reportsTarget(res))
	for i := range ts {
		ts[i].Verdict = "NOT MET"
		if ts[i].Met {
			ts[i].Verdict = "met"
		}
	}
	return ts
}

// correctnessTargets: no correct design oversells or drifts, and the check can
// see an oversell when there is one.
func correctnessTargets(res *Results) []Target {
	bad, runs := 0, 0
	var badWho []string
	for _, b := range res.Bursts {
		if b.Path == cFree {
			continue
		}
		runs++
		if b.Oversells > 0 || b.Drift > 0 || b.Successes > 1 {
			bad++
			badWho = append(badWho, b.Path+" ("+b.Network+")")
		}
	}
	for _, c := range append(slices.Clone(res.Cells), res.SoldOut...) {
		if c.Contender == cFree {
			continue
		}
		runs++
		if c.Oversells > 0 || c.Drift > 0 {
			bad++
			badWho = append(badWho, c.Contender+" ("+c.Scenario+", "+c.Network+")")
		}
	}
	t := Target{Name: "zero oversells: product and every correct contender, every repetition, every network",
		Measured: fmt.Sprintf("%d of %d runs oversold or drifted", bad, runs), Met: bad == 0 && runs > 0,
		Why: "counted from the database after each run: bookings per slot against capacity, and booked against bookings"}
	if bad > 0 {
		t.Why += "; failing: " + strings.Join(slices.Compact(badWho), ", ")
	}
	over, reps, withOver := 0, 0, 0
	for _, b := range res.Bursts {
		if b.Path == cFree {
			reps++
			over += b.Oversells
			if b.Oversells > 0 {
				withOver++
			}
		}
	}
	return []Target{t, {Name: "the lock-free contender oversells (the check can see it)",
		Measured: fmt.Sprintf("%d oversold seats, in %d of %d bursts", over, withOver, reps), Met: over > 0,
		Why: "the same count as above, on read-then-write"}}
}

// burstsOf are one path's bursts on one network, in the repetitions keep
// allows (nil: all).
func burstsOf(res *Results, path, network string, keep map[int]bool) []Burst {
	var out []Burst
	for _, b := range res.Bursts {
		if b.Path == path && b.Network == network && (keep == nil || keep[b.Rep]) {
			out = append(out, b)
		}
	}
	return out
}

// burstTimes are the sorted all-answered times of bursts.
func burstTimes(bs []Burst) []float64 {
	var xs []float64
	for _, b := range bs {
		xs = append(xs, b.AllAnswerd)
	}
	slices.Sort(xs)
	return xs
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// slowest is the burst that took longest.
func slowest(bs []Burst) Burst {
	var s Burst
	for _, b := range bs {
		if b.AllAnswerd > s.AllAnswerd {
			s = b
		}
	}
	return s
}

// minTargetBursts is the fewest repetitions the burst target is judged on.
const minTargetBursts = 20

// burstTarget: the launch burst answered faster than FOR UPDATE at p50 and
// p99, over the repetitions both ran (interleaved): the product runs more
// repetitions than the other contenders, and the largest of 100 is not the
// largest of 20. Each repetition gives one figure, the time until all its
// requests were answered; p50 and p99 are nearest-rank quantiles of those
// figures (the value at index floor(q*n) of the n sorted, so with fewer than
// 100 repetitions the p99 is the slowest of them). Fewer than
// minTargetBursts repetitions do not meet it.
func burstTarget(res *Results, network string) Target {
	t := Target{Name: network + ": launch burst: product answers all faster than SELECT ... FOR UPDATE at p50 and p99 (the repetitions both ran)"}
	fb := burstsOf(res, cFor, network, nil)
	reps := map[int]bool{}
	for _, b := range fb {
		reps[b.Rep] = true
	}
	pb := burstsOf(res, cProduct, network, reps)
	p, f := burstTimes(pb), burstTimes(fb)
	if len(p) == 0 || len(f) == 0 {
		t.Measured = "not measured"
		return t
	}
	t.Measured = fmt.Sprintf("%d repetitions: p50 %.1f vs %.1f ms, p99 %.1f vs %.1f ms", len(p), quantile(p, 0.5), quantile(f, 0.5), quantile(p, 0.99), quantile(f, 0.99))
	t.Met = quantile(p, 0.5) < quantile(f, 0.5) && quantile(p, 0.99) < quantile(f, 0.99) && len(p) >= minTargetBursts && len(f) >= minTargetBursts
	sp, sf := slowest(pb), slowest(fb)
	t.Why = fmt.Sprintf("p50 and p99 are nearest-rank over the repetitions' all-answered times (p99: the %s of %d)", ordinal(min(len(p)-1, int(0.99*float64(len(p))))+1), len(p))
	if len(p) < minTargetBursts {
		t.Why += fmt.Sprintf("; fewer than %d repetitions: not judged", minTargetBursts)
	}
	t.Why += fmt.Sprintf(". Per request, median burst: %s; %s. Slowest burst of each: %s (repetition %d, %.1f ms); %s (repetition %d, %.1f ms)",
		profileText(cProduct, burstProfile(res, cProduct, network)), profileText(cFor, burstProfile(res, cFor, network)),
		profileText(cProduct, sp.Profile), sp.Rep, sp.AllAnswerd, profileText(cFor, sf.Profile), sf.Rep, sf.AllAnswerd)
	return t
}

// ordinal writes 1st, 2nd, 3rd, 4th ... 20th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// burstProfile is the median of each figure over one path's bursts.
func burstProfile(res *Results, path, network string) CellProfile {
	var cells []Cell
	for _, b := range res.Bursts {
		if b.Path == path && b.Network == network {
			cells = append(cells, Cell{Scenario: "burst", Network: network, Contender: path, Profile: b.Profile})
		}
	}
	p, _ := medianProfile(cells, "burst", network, path, 0)
	return p
}

// ---- output ------------------------------------------------------------------

// write writes results.json, the charts and BENCHMARKS.md into dir. Without
// draw it keeps the charts already there: a report rendered again from
// results.json has no latency samples to draw them from.
func write(dir string, res *Results, draw bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	var charts []string
	if len(res.Cells) > 0 {
		mid := res.Profile.Clients[len(res.Profile.Clients)/2]
		for _, n := range res.Networks {
			slug := "direct"
			if n.DelayUS > 0 {
				slug = "distance"
			}
			for _, sc := range []string{"hot slot", "1000 slots"} {
				name := "latency-" + strings.ReplaceAll(sc, " ", "-") + "-" + slug + ".svg"
				if draw {
					if err := latencyChart(res, sc, n.Name, mid, filepath.Join(dir, name)); err != nil {
						return err
					}
				}
				charts = append(charts, name)
				name = "throughput-" + strings.ReplaceAll(sc, " ", "-") + "-" + slug + ".svg"
				if draw {
					if err := throughputChart(res, sc, n.Name, filepath.Join(dir, name)); err != nil {
						return err
					}
				}
				charts = append(charts, name)
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, "BENCHMARKS.md"), []byte(markdown(res, charts)), 0o644)
}

func contenderNames(cells []Cell) []string {
	var names []string
	for _, c := range cells {
		if !slices.Contains(names, c.Contender) {
			names = append(names, c.Contender)
		}
	}
	return names
}

func newPlot(res *Results, title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title + "\n" + res.Machine.Line()
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	return p
}

// latencyChart draws each contender's latency distribution (a CDF on a log
// axis) at one client count, all repetitions together.
func latencyChart(res *Results, scenario, network string, clients int, path string) error {
	p := newPlot(res, fmt.Sprintf("Reserve latency distribution, %s, %s, %d clients (%s profile)", scenario, network, clients, res.Profile.Name))
	p.X.Label.Text = "latency (ms, log scale)"
	p.Y.Label.Text = "fraction of requests answered"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Left = true
	for i, name := range contenderNames(res.Cells) {
		var xs []float64
		for _, c := range res.Cells {
			if c.Scenario == scenario && c.Network == network && c.Contender == name && c.Clients == clients {
				xs = append(xs, c.Samples...)
			}
		}
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		pts := make(plotter.XYs, 0, len(xs))
		for j, x := range xs {
			pts = append(pts, plotter.XY{X: max(x, 0.01), Y: float64(j+1) / float64(len(xs))})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	return p.Save(9*vg.Inch, 5.5*vg.Inch, path)
}

// throughputChart draws seats/s against concurrency, median over repetitions.
func throughputChart(res *Results, scenario, network, path string) error {
	p := newPlot(res, fmt.Sprintf("Seats taken per second, %s, %s, against concurrent clients (median of %d)", scenario, network, res.Profile.Reps))
	p.X.Label.Text = "concurrent clients (log scale)"
	p.Y.Label.Text = "seats/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(ticks(res.Profile.Clients))
	for i, name := range contenderNames(res.Cells) {
		var pts plotter.XYs
		for _, n := range res.Profile.Clients {
			var v []float64
			for _, c := range res.Cells {
				if c.Scenario == scenario && c.Network == network && c.Contender == name && c.Clients == n {
					v = append(v, c.SeatsPerS)
				}
			}
			if len(v) > 0 {
				pts = append(pts, plotter.XY{X: float64(n), Y: median(v)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(name, l, s)
	}
	p.Add(plotter.NewGrid())
	_ = color.Black
	return p.Save(9*vg.Inch, 5.5*vg.Inch, path)
}

func ticks(ns []int) []plot.Tick {
	var t []plot.Tick
	for _, n := range ns {
		t = append(t, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
	}
	return t
}

// budgetTarget: under scale-out past max_connections, no answer is a 500 and
// nothing is lost, at every instance count.
func budgetTarget(res *Results) Target {
	t := Target{Name: "connection budget: no 500 and nothing lost at any instance count, however far past max_connections", Measured: "not measured"}
	bu := res.Budget
	if bu == nil || len(bu.Runs) == 0 {
		return t
	}
	internal, lost, errs, unavailable := 0, 0, 0, 0
	var parts []string
	for _, r := range bu.Runs {
		for k, v := range r.Answers {
			if strings.HasPrefix(k, "500") {
				internal += v
			}
		}
		u := r.count("503 UNAVAILABLE")
		unavailable += u
		lost += r.lost() + r.Drift + r.Oversells
		errs += r.count("error")
		parts = append(parts, fmt.Sprintf("N=%d: %d x 201, %d x 503", r.Instances, r.count("201"), u))
	}
	t.Measured = fmt.Sprintf("%d x 500, %d lost or drifted, %d transport errors; %s", internal, lost, errs, strings.Join(parts, "; "))
	t.Met = internal == 0 && lost == 0 && errs == 0
	t.Why = fmt.Sprintf("max_connections %d, %d requests per run; the largest N with no 503: %d", bu.MaxConnections, bu.Requests, budgetLimit(bu))
	return t
}

// rerender judges the targets again on the results.json in dir and writes the
// report from it: the figures of the run that wrote it, the targets and the
// text of this build.
func rerender(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	res.Targets = targets(&res)
	return write(dir, &res, false)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
