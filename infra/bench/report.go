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

// ratios answers, per rep, a's seats/s over b's in the same scenario, clients
// and rep: a ratio of two cells measured side by side.
func ratios(cells []Cell, scenario, a, b string, clients int, ops bool) []float64 {
	val := func(c Cell) float64 {
		if ops {
			return c.OpsPerS
		}
		return c.SeatsPerS
	}
	byRep := map[int]float64{}
	for _, c := range cells {
		if c.Scenario == scenario && c.Contender == b && c.Clients == clients {
			byRep[c.Rep] = val(c)
		}
	}
	var out []float64
	for _, c := range cells {
		if c.Scenario == scenario && c.Contender == a && c.Clients == clients {
			if d := byRep[c.Rep]; d > 0 {
				out = append(out, val(c)/d)
			}
		}
	}
	return out
}

func ratioTarget(res *Results, name, scenario, a, b string, min float64, why string) Target {
	t := Target{Name: name, Met: true, Why: why}
	var parts []string
	for _, n := range res.Profile.Clients {
		r := median(ratios(res.Cells, scenario, a, b, n, false))
		parts = append(parts, fmt.Sprintf("%.2fx@%d", r, n))
		if r < min {
			t.Met = false
		}
	}
	t.Measured = strings.Join(parts, " ")
	if len(parts) == 0 || res.Cells == nil {
		t.Met, t.Measured = false, "not measured"
	}
	return t
}

const (
	cProduct = "product"
	cBefore  = "product-before (7 round trips)"
	cFor     = "SELECT ... FOR UPDATE"
	cBare    = "bare conditional UPDATE (floor)"
	cFree    = "read-then-write (no lock)"
	cGateway = "product via gateway"
)

func targets(res *Results) []Target {
	var ts []Target
	// Correctness.
	bad, runs := 0, 0
	var badWho []string
	correct := map[string]bool{}
	for _, b := range res.Bursts {
		if b.Path == cFree {
			continue
		}
		runs++
		if b.Oversells > 0 || b.Drift > 0 || b.Successes > 1 {
			bad++
			badWho = append(badWho, b.Path)
		}
		correct[b.Path] = true
	}
	for _, c := range res.Cells {
		if c.Contender == cFree {
			continue
		}
		runs++
		if c.Oversells > 0 || c.Drift > 0 {
			bad++
			badWho = append(badWho, c.Contender+" ("+c.Scenario+")")
		}
	}
	t := Target{Name: "zero oversells: product and every correct contender, every repetition",
		Measured: fmt.Sprintf("%d of %d runs oversold or drifted", bad, runs), Met: bad == 0 && runs > 0,
		Why: "checked from the database after each run: bookings per slot vs capacity, and booked vs bookings"}
	if bad > 0 {
		t.Why += "; failing: " + strings.Join(slices.Compact(badWho), ", ")
	}
	ts = append(ts, t)
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
	ts = append(ts, Target{Name: "the lock-free contender oversells (the check can see it)",
		Measured: fmt.Sprintf("%d oversold seats, in %d of %d bursts", over, withOver, reps), Met: over > 0,
		Why: "read-then-write lets every request that read booked=0 write a booking; the same count finds none for the product"})

	ts = append(ts, ratioTarget(res, "hot slot: product >= 1.4x SELECT ... FOR UPDATE", "hot slot", cProduct, cFor, 1.4,
		"FOR UPDATE holds the slot row across the whole transaction; the product locks it only for its last statement and the commit"))
	ts = append(ts, ratioTarget(res, "hot slot: product >= 0.5x bare conditional UPDATE", "hot slot", cProduct, cBare, 0.5,
		"the floor is one autocommitted single-row UPDATE; the product also reads once and writes the booking, its order number and the audit record; on 2 shared cores, where client and server compete for CPU, the work per seat sets the pace, not the lock"))
	ts = append(ts, ratioTarget(res, "1000 slots: product >= 1.2x SELECT ... FOR UPDATE", "1000 slots", cProduct, cFor, 1.2,
		"with no contention there is no lock wait for the product's order to save: both read once and write the same four rows, the product in three round trips, FOR UPDATE in seven; on 2 shared cores with client and server on one box a round trip is cheap and the writes and the commit's fsync dominate"))

	// Sold out: cost of a refusal relative to one bare UPDATE refused (0 rows).
	so := Target{Name: "sold out: one reserve on a full slot <= 1.5x one bare conditional UPDATE (cost)", Met: true,
		Why: "a full slot is refused by one indexed read, no write, no lock"}
	var parts []string
	for _, n := range []int{1, 8} {
		r := median(ratios(res.SoldOut, "sold out", cBare, cProduct, n, true))
		parts = append(parts, fmt.Sprintf("%.2fx@%d", r, n))
		if r > 1.5 || r == 0 {
			so.Met = false
		}
	}
	so.Measured = strings.Join(parts, " ")
	ts = append(ts, so)

	ov := Target{Name: "gateway + runtime add <= 1 ms p50 over the in-process handler", Measured: "not measured",
		Why: "HTTP to the local gateway, the event, net/rpc+gob to the warm function process and back"}
	if res.Overhead != nil {
		ov.Measured = fmt.Sprintf("+%.2f ms (%.2f vs %.2f)", res.Overhead.DiffP50MS, res.Overhead.Gateway.P50, res.Overhead.InProcess.P50)
		ov.Met = res.Overhead.DiffP50MS <= 1
	}
	ts = append(ts, ov)
	for i := range ts {
		ts[i].Verdict = "NOT MET"
		if ts[i].Met {
			ts[i].Verdict = "met"
		}
	}
	return ts
}

// ---- output ------------------------------------------------------------------

func write(dir string, res *Results) error {
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
		for _, sc := range []string{"hot slot", "1000 slots"} {
			name := "latency-" + strings.ReplaceAll(sc, " ", "-") + ".svg"
			if err := latencyChart(res, sc, mid, filepath.Join(dir, name)); err != nil {
				return err
			}
			charts = append(charts, name)
			name = "throughput-" + strings.ReplaceAll(sc, " ", "-") + ".svg"
			if err := throughputChart(res, sc, filepath.Join(dir, name)); err != nil {
				return err
			}
			charts = append(charts, name)
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
func latencyChart(res *Results, scenario string, clients int, path string) error {
	p := newPlot(res, fmt.Sprintf("Reserve latency distribution, %s, %d clients (%s profile)", scenario, clients, res.Profile.Name))
	p.X.Label.Text = "latency (ms, log scale)"
	p.Y.Label.Text = "fraction of requests answered"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Left = true
	for i, name := range contenderNames(res.Cells) {
		var xs []float64
		for _, c := range res.Cells {
			if c.Scenario == scenario && c.Contender == name && c.Clients == clients {
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
func throughputChart(res *Results, scenario, path string) error {
	p := newPlot(res, fmt.Sprintf("Seats taken per second, %s, against concurrent clients (median of %d)", scenario, res.Profile.Reps))
	p.X.Label.Text = "concurrent clients (log scale)"
	p.Y.Label.Text = "seats/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(ticks(res.Profile.Clients))
	for i, name := range contenderNames(res.Cells) {
		var pts plotter.XYs
		for _, n := range res.Profile.Clients {
			var v []float64
			for _, c := range res.Cells {
				if c.Scenario == scenario && c.Contender == name && c.Clients == n {
					v = append(v, c.SeatsPerS)
				}
			}
			if len(v) > 0 {
				pts = append(pts, plotter.XY{X: float64(n), Y: median(v)})
			}
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
