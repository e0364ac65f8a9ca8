package main

import (
	"strings"
	"testing"
)

// TestTechTargetsReadTheBurst: the throughput target is the burst's median
// per-burst ratio at the distance, product over FOR UPDATE; the mixed-length
// ratios are written beside it and decide nothing; a run with no burst of
// both is not measured, never met.
func TestTechTargetsReadTheBurst(t *testing.T) {
	const far = "0.25 ms each way"
	run := func(kind, net, c string, clients, rep int, seats float64) TechRun {
		return TechRun{Kind: kind, Network: net, Contender: c, Clients: clients, Rep: rep, Taken: 3, SeatsPerS: seats}
	}
	bursts := func(product ...float64) []TechRun {
		var xs []TechRun
		for rep, p := range product {
			xs = append(xs, run("burst", far, cTechProduct, 130, rep, p), run("burst", far, cTechForUpdate, 130, rep, 10))
			// Direct bursts carry no target: a poor one changes nothing.
			xs = append(xs, run("burst", "direct", cTechProduct, 130, rep, 1), run("burst", "direct", cTechForUpdate, 130, rep, 10))
		}
		// The race and the mixed lengths at parity: written down, not decisive.
		return append(xs, run("race", far, cTechProduct, 2, 0, 100), run("race", far, cTechForUpdate, 2, 0, 100),
			run("mixed", far, cTechProduct, 8, 0, 400), run("mixed", far, cTechForUpdate, 8, 0, 400))
	}
	for _, tc := range []struct {
		name     string
		runs     []TechRun
		met      bool
		measured string
	}{
		{"median above", bursts(25, 12, 16, 30, 14), true, "1.60x"},
		{"median below", bursts(25, 12, 14, 30, 13), false, "1.40x"},
		{"just under rounds to three places", bursts(14.99), false, "1.499x"},
		{"no FOR UPDATE bursts", []TechRun{run("burst", far, cTechProduct, 130, 0, 30)}, false, "not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &Results{Technicians: tc.runs, Networks: []NetworkInfo{{Name: "direct"}, {Name: far, DelayUS: 250}}}
			res.Profile.BurstSize, res.Profile.Clients = 130, []int{8}
			ts := techTargets(res)
			if len(ts) != 2 {
				t.Fatalf("%d targets, want the overlaps' and the distance's burst: %+v", len(ts), ts)
			}
			got := ts[1]
			if got.Met != tc.met || got.Measured != tc.measured {
				t.Fatalf("met %v measured %q, want %v %q", got.Met, got.Measured, tc.met, tc.measured)
			}
			if !strings.Contains(got.Name, "burst") || !strings.Contains(got.Name, far) {
				t.Errorf("target %q does not name the distance's burst", got.Name)
			}
			if tc.measured != "not measured" && !strings.Contains(got.Why, "race 1.00x, mixed lengths 1.00x@8") {
				t.Errorf("why %q does not carry the race's and the mixed lengths' ratios", got.Why)
			}
		})
	}
}
