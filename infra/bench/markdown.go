package main

import (
	"fmt"
	"slices"
	"strings"
)

// markdown writes BENCHMARKS.md: the machine and networks, the targets, then
// one section per scenario that ran, the charts, and what each contender is.
// It states what this run measured and how; what the figures mean is written
// by hand, dated, in infra/bench/README.md.
func markdown(res *Results, charts []string) string {
	p := &page{res: res}
	p.header()
	p.targets()
	p.productAgainstBefore()
	p.formsAgainstFloor()
	p.productAgainstTradeFree()
	p.launchBurst()
	for _, sc := range []string{"hot slot", "1000 slots"} {
		p.throughput(sc)
	}
	p.charts(charts)
	p.soldOut()
	p.techniciansSection()
	p.budgetSection()
	p.endToEnd()
	p.functionBinaries()
	p.gatewayOverhead()
	p.payments()
	p.growthSection()
	p.reportsSection()
	p.contenders()
	return p.String()
}

// page is BENCHMARKS.md being written from one run's results.
type page struct {
	strings.Builder
	res *Results
}

func (p *page) w(format string, args ...any) { fmt.Fprintf(&p.Builder, format, args...) }

// header says who wrote the page, on what machine and networks, what else ran
// on the server, and what went wrong in the run.
func (p *page) header() {
	res, m := p.res, p.res.Machine
	p.w("# Benchmarks: does the design hold?\n\n")
	p.w("Written by `scripts/bench.sh%s` (the `infra/bench` module, run from the repository root) on %s, %s profile, %.0f s.\n\n",
		map[bool]string{true: " -quick", false: ""}[res.Profile.Name == "quick"], res.Started.Format("2006-01-02 15:04 MST"), res.Profile.Name, res.Seconds)
	p.w("**Machine:** %s. Go %s", m.Line(), m.GoVersion)
	if m.Etcd != "" {
		p.w("; %s", m.Etcd)
	}
	p.w(". Measured on %s.\n\n", m.Server)
	p.w("**Around the run:** server connections at start %s; other test databases on the server at start %s; load average before %s, after %s. "+
		"CPU time over the run (%d cores x %.0f s = %.0f s): busy %.0f s, of which this tool and the processes it started (the proxy, etcd, the function binaries, its own servers) %.0f s, the server at MYSQL_DSN %.0f s, other processes %.0f s. "+
		"Contenders run interleaved (A B C ... A B C, each round starting with another one, on every network), and every comparison is a ratio of cells from this run.\n\n",
		m.Connections, m.OtherClients, m.LoadBefore, m.LoadAfter, m.Cores, res.Seconds, float64(m.Cores)*res.Seconds, m.BusyCPU, m.ToolCPU, m.ServerCPU, m.OtherCPU)
	p.networks()
	for _, n := range res.Notes {
		p.w("**Note:** %s\n\n", n)
	}
	if len(res.Errors) > 0 {
		p.w("**Errors in this run:**\n\n")
		for k, v := range res.Errors {
			p.w("- %s: %s\n", k, shortErr(v))
		}
		p.w("\n")
	}
}

// networks states each network's measured round trip.
func (p *page) networks() {
	if len(p.res.Networks) == 0 {
		return
	}
	p.w("**Networks:** every contender is measured on each. The distance is a TCP proxy in a process of its own (`infra/bench/proxy.go`) in front of MariaDB, Redis, NATS and etcd that hands every chunk on after the delay, each way.\n\n")
	p.w("| network | one-way delay | `DO 1` round trip p50 ms | p99 ms | proxy's mean lateness µs |\n| --- | --- | --- | --- | --- |\n")
	for _, n := range p.res.Networks {
		late := "-"
		if n.DelayUS > 0 {
			late = fmt.Sprintf("%.1f", n.ProxyLateUS)
		}
		p.w("| %s | %d µs | %.3f | %.3f | %s |\n", n.Name, n.DelayUS, n.RTT.P50, n.RTT.P99, late)
	}
	p.w("\n")
}

func (p *page) targets() {
	p.w("## Targets\n\n| target | measured (ratio in this run) | verdict | profile (measured, per operation) |\n| --- | --- | --- | --- |\n")
	for _, t := range p.res.Targets {
		p.w("| %s | %s | **%s** | %s |\n", t.Name, t.Measured, t.Verdict, t.Why)
	}
	p.w("\nRatios are the median over repetitions of per-repetition ratios (`x@N` = at N concurrent clients). " +
		"The profile is given at the client count furthest from the target: round trips are the commands the driver sent (a new connection's handshake included), row-lock waits are the server's Innodb_row_lock_waits and Innodb_row_lock_time, rows written its Handler_write + Handler_update + Handler_delete, server CPU the mariadbd process's in 10 ms ticks (all three server-wide), client CPU this process's.\n\n")
}

// productAgainstBefore gives the product's throughput against its previous
// form, same run, every network.
func (p *page) productAgainstBefore() {
	res := p.res
	var mv []string
	for _, n := range res.Networks {
		for _, sc := range []string{"hot slot", "1000 slots"} {
			for _, c := range res.Profile.Clients {
				if r := median(ratios(res.Cells, sc, n.Name, cProduct, cBefore, c, false)); r > 0 {
					mv = append(mv, fmt.Sprintf("%.2fx (%s, %s, %d clients)", r, n.Name, sc, c))
				}
			}
		}
	}
	if len(mv) == 0 {
		return
	}
	p.w("## The product against its previous form\n\n`%s` is the reserve as it was before this run's version of shared/mysql (see the contenders below). Seats/s of the product over it, same run: %s.\n\n", cBefore, strings.Join(mv, ", "))
}

// formsAgainstFloor gives each form of the reservation's write against the
// floor on the hot slot, same run, every network, with its per-seat profile:
// what each holds the slot row's lock for, and what it costs.
func (p *page) formsAgainstFloor() {
	res := p.res
	names := []string{cProduct, cBefore}
	for _, f := range formProcedures {
		names = append(names, f.name)
	}
	var rows []string
	for _, n := range res.Networks {
		for _, name := range names {
			var rs []string
			for _, c := range res.Profile.Clients {
				if r := median(ratios(res.Cells, "hot slot", n.Name, name, cBare, c, false)); r > 0 {
					rs = append(rs, fmt.Sprintf("%.2fx@%d", r, c))
				}
			}
			if len(rs) == 0 {
				continue
			}
			row := fmt.Sprintf("| %s | %s | %s |", n.Name, name, strings.Join(rs, " "))
			for _, c := range res.Profile.Clients {
				pr, ok := medianProfile(res.Cells, "hot slot", n.Name, name, c)
				if !ok {
					row += " |"
					continue
				}
				row += fmt.Sprintf(" %.0f µs, %.1f rt, %.2f waits (%.2f ms), %.1f rows |", pr.ServerCPUUS, pr.RoundTrips, pr.LockWaits, pr.LockWaitMS, pr.RowsWritten)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	p.w("## The reservation's forms against the floor (hot slot)\n\n" +
		"Each form is the product's pre-read and one CALL of a procedure with salon_reserve's parameters (`forms.go`); they differ in what runs while the slot row is locked. " +
		"Seats/s over the bare conditional UPDATE's, same run, and per seat at each client count: server CPU, round trips, row-lock waits (their time), rows written.\n\n")
	p.w("| network | form | vs floor |")
	for _, c := range res.Profile.Clients {
		p.w(" per seat @%d |", c)
	}
	p.w("\n| --- | --- | --- |%s\n%s\n\n", strings.Repeat(" --- |", len(res.Profile.Clients)), strings.Join(rows, "\n"))
}

// productAgainstTradeFree gives the product's hot slot against the form that
// never writes the order number, per network and client count, with the
// target's verdict per cell, and where else the order number could be written
// against the same form.
func (p *page) productAgainstTradeFree() {
	res := p.res
	others := []string{cSeatLast, cTradeAfterCommit, cTradeApart}
	var rows []string
	for _, n := range res.Networks {
		for _, c := range res.Profile.Clients {
			r := median(ratios(res.Cells, "hot slot", n.Name, cProduct, cSeatLastNoTrade, c, false))
			if r == 0 {
				continue
			}
			verdict := "NOT MET"
			if r >= tradeFreeFactor {
				verdict = "met"
			}
			row := fmt.Sprintf("| %s | %d | %.0f | %.0f | %sx | **%s** |", n.Name, c,
				medianSeats(res.Cells, "hot slot", n.Name, cProduct, c), medianSeats(res.Cells, "hot slot", n.Name, cSeatLastNoTrade, c),
				ratioText(r, tradeFreeFactor, r < tradeFreeFactor), verdict)
			for _, o := range others {
				row += fmt.Sprintf(" %.2fx |", median(ratios(res.Cells, "hot slot", n.Name, o, cSeatLastNoTrade, c, false)))
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	p.w("## The product against the no-order-number form (hot slot)\n\n"+
		"Target: the product's seats/s at least %gx those of `%s` (`forms.go`: the product's pre-read and CALL without the order number's write), in every cell. "+
		"Seats/s are medians over the repetitions, the ratio the median of per-repetition ratios. "+
		"The last three columns put the order number elsewhere, against the same form: in the transaction before the seat (the product's own procedure, on the bench's pool), after the COMMIT in the same CALL, and in a round trip of its own after the CALL (as a write at prepay would be).\n\n",
		tradeFreeFactor, cSeatLastNoTrade)
	p.w("| network | clients | product seats/s | no-order-number form seats/s | product / form | verdict | in the transaction / form | after the COMMIT / form | own round trip / form |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n%s\n\n", strings.Join(rows, "\n"))
}

// medianSeats is one contender's median seats/s in one cell of a scenario.
func medianSeats(cells []Cell, scenario, network, contender string, clients int) float64 {
	var s []float64
	for _, c := range cells {
		if c.Scenario == scenario && c.Network == network && c.Contender == contender && c.Clients == clients {
			s = append(s, c.SeatsPerS)
		}
	}
	return median(s)
}

func (p *page) launchBurst() {
	res := p.res
	if len(res.Bursts) == 0 {
		return
	}
	p.w("## Launch burst: %d reserves released together on the last seat\n\n", res.Profile.BurstSize)
	p.w("Each repetition is a fresh one-seat slot and %d fresh customers, started together by closing one channel. "+
		"Oversells and drift are counted from the database afterwards. \"All answered\" is the time from the release until the last of the %d got its answer. "+
		"The store paths use a pool of %d connections (the server's max_connections: %s); the gateway path runs the real `reserve` binary under the local SCF runtime with its default of 8 instances, two connections each. "+
		"The profile columns are per request, median over the repetitions.\n\n",
		res.Profile.BurstSize, res.Profile.BurstSize, res.Conns, res.Machine.MaxConnections)
	p.w("| network | path | repetitions | successes per burst (min-max) | oversold seats (total) | bursts with an oversell | errors | all answered p50 (ms) | p99 (ms) | round trips | row-lock waits | lock wait ms | server CPU µs | client CPU µs | rows written |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, n := range res.Networks {
		for _, path := range burstPaths(res.Bursts) {
			p.burstRow(path, n.Name)
		}
	}
	p.w("\n")
}

// burstPaths are the paths the bursts ran, in the order they first ran.
func burstPaths(bursts []Burst) []string {
	var paths []string
	for _, x := range bursts {
		if !slices.Contains(paths, x.Path) {
			paths = append(paths, x.Path)
		}
	}
	return paths
}

// burstRow sums up every repetition of the burst on one path and network.
func (p *page) burstRow(path, network string) {
	var times []float64
	minS, maxS, over, withOver, errs, n := 1<<30, 0, 0, 0, 0, 0
	firstErr := ""
	for _, x := range p.res.Bursts {
		if x.Path != path || x.Network != network {
			continue
		}
		n++
		times = append(times, x.AllAnswerd)
		minS, maxS = min(minS, x.Successes), max(maxS, x.Successes)
		over += x.Oversells
		if x.Oversells > 0 {
			withOver++
		}
		errs += x.Errors
		if firstErr == "" {
			firstErr = x.FirstErr
		}
	}
	if n == 0 {
		return
	}
	slices.Sort(times)
	pr := burstProfile(p.res, path, network)
	p.w("| %s | %s | %d | %d-%d | %d | %d | %s | %.1f | %.1f | %s |\n", network, path, n, minS, maxS, over, withOver, errorCell(errs, shortErr(firstErr)),
		quantile(times, 0.5), quantile(times, 0.99), profileCells(pr))
}

// profileCells are a profile's table cells: round trips, lock waits, lock
// wait ms, server CPU, client CPU, rows written.
func profileCells(pr CellProfile) string {
	return fmt.Sprintf("%.1f | %.2f | %.2f | %.0f | %.0f | %.1f", pr.RoundTrips, pr.LockWaits, pr.LockWaitMS, pr.ServerCPUUS, pr.ClientCPUUS, pr.RowsWritten)
}

// errorCell is an error count with the first error, if any, in brackets.
func errorCell(count int, first string) string {
	cell := fmt.Sprint(count)
	if first != "" {
		cell += " (" + first + ")"
	}
	return cell
}

func (p *page) throughput(scenario string) {
	res := p.res
	var cells []Cell
	for _, c := range res.Cells {
		if c.Scenario == scenario {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return
	}
	p.w("## Throughput: %s\n\n", scenario)
	p.w("Each cell runs for %s with N clients, each client reserving for a fresh customer in a loop; %s. Seats/s counts seats taken; latency is per attempt; the profile columns are per attempt. Median over %d repetitions.\n\n",
		res.Profile.Cell, map[string]string{"hot slot": "every request on one slot with room for all", "1000 slots": "requests spread round-robin over 1000 slots"}[scenario], res.Profile.Reps)
	p.w("| network | contender | clients | seats/s | p50 ms | p99 ms | p99.9 ms | refused (lost CAS) | errors | oversold | drift | round trips | row-lock waits | lock wait ms | pool wait ms | server CPU µs | client CPU µs | rows written |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, n := range res.Networks {
		for _, name := range contenderNames(cells) {
			for _, c := range res.Profile.Clients {
				p.throughputRow(cells, n.Name, name, c)
			}
		}
	}
	p.w("\n")
}

// throughputRow is the median over repetitions of one contender at n clients.
func (p *page) throughputRow(cells []Cell, network, name string, n int) {
	var s, p50, p99, p999 []float64
	conf, errs, over, drift, reps := 0, 0, 0, 0, 0
	firstErr := ""
	for _, c := range cells {
		if c.Network == network && c.Contender == name && c.Clients == n {
			reps++
			s, p50, p99, p999 = append(s, c.SeatsPerS), append(p50, c.Latency.P50), append(p99, c.Latency.P99), append(p999, c.Latency.P999)
			conf += c.Conflicts
			errs += c.Errors
			over, drift = max(over, c.Oversells), max(drift, c.Drift)
			if firstErr == "" {
				firstErr = c.FirstErr
			}
		}
	}
	if reps == 0 {
		return
	}
	pr, _ := medianProfile(cells, cells[0].Scenario, network, name, n)
	p.w("| %s | %s | %d | %.0f | %.2f | %.2f | %.2f | %d | %s | %d | %d | %s |\n", network, name, n, median(s), median(p50), median(p99), median(p999),
		conf, errorCell(errs, shortErr(firstErr)), over, drift, poolProfileCells(pr))
}

// poolProfileCells are profileCells with the pool wait after the lock wait.
func poolProfileCells(pr CellProfile) string {
	return fmt.Sprintf("%.1f | %.2f | %.2f | %.2f | %.0f | %.0f | %.1f", pr.RoundTrips, pr.LockWaits, pr.LockWaitMS, pr.PoolWaitMS, pr.ServerCPUUS, pr.ClientCPUUS, pr.RowsWritten)
}

func (p *page) charts(charts []string) {
	for _, c := range charts {
		p.w("![%s](%s)\n\n", c, c)
	}
}

func (p *page) soldOut() {
	res := p.res
	if len(res.SoldOut) == 0 {
		return
	}
	p.w("## The sold-out path\n\nA reserve for a fresh customer on a full slot against the floor's refusal: the bare conditional UPDATE on the same full row (0 rows affected), interleaved, %d repetitions, on every network.\n\n", res.Profile.SoldOutReps)
	p.w("| network | path | clients | refusals/s | p50 ms | p99 ms | round trips | row-lock waits | lock wait ms | server CPU µs | client CPU µs | rows written |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, n := range res.Networks {
		for _, name := range []string{cProduct, cBare} {
			for _, c := range []int{1, 8} {
				var s, p50, p99 []float64
				for _, x := range res.SoldOut {
					if x.Network == n.Name && x.Contender == name && x.Clients == c {
						s, p50, p99 = append(s, x.OpsPerS), append(p50, x.Latency.P50), append(p99, x.Latency.P99)
					}
				}
				if len(s) == 0 {
					continue
				}
				pr, _ := medianProfile(res.SoldOut, "sold out", n.Name, name, c)
				p.w("| %s | %s | %d | %.0f | %.3f | %.3f | %s |\n", n.Name, name, c, median(s), median(p50), median(p99), profileCells(pr))
			}
		}
	}
	p.w("\n")
}

func (p *page) endToEnd() {
	res := p.res
	if len(res.E2E) == 0 {
		return
	}
	p.w("## End to end through the local gateway\n\nHTTP to `infra/localgw`, the API Gateway event, `infra/scfhost` and the real function binaries (default 8 instances per function), MariaDB behind, direct. %d requests per row; POST /bookings on free slots spread over 1000; each cancel is its customer's own confirmed booking.\n\n", res.Profile.E2ERequests)
	p.w("| endpoint | clients | requests/s | p50 ms | p99 ms | p99.9 ms | errors |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, ep := range []string{"GET /slots", "POST /bookings", "POST /bookings/{id}/cancel"} {
		for _, e := range res.E2E {
			if e.Endpoint == ep {
				p.w("| %s | %d | %.0f | %.2f | %.2f | %.2f | %s |\n", e.Endpoint, e.Clients, e.PerS, e.Latency.P50, e.Latency.P99, e.Latency.P999, errorCell(e.Errors, e.FirstErr))
			}
		}
	}
	p.w("\n")
}

func (p *page) functionBinaries() {
	res := p.res
	if len(res.Functions) == 0 {
		return
	}
	p.w("## Function binaries\n\nCold start: a fresh runtime host starts the binary and invokes it once with a cheap event (healthz, an unauthenticated route, or the timer for release); the time runs from process start to the first answer, %d starts each. "+
		"The host dials the runtime's port again 50 µs to 1 ms after a refused dial (no 20 ms polling step). "+
		"Memory: after a burst of %d invocations released together on a host of at most 8 instances (reserve: the launch burst, POST /bookings on one seat; the others: the same cheap event), the largest instance's resident set (VmRSS) and peak (VmHWM).\n\n", res.Profile.ColdStarts, res.Profile.BurstSize)
	p.w("| function | binary size | cold start p50 ms | max ms | RSS after the burst | peak RSS | instances | burst errors |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range res.Functions {
		p.w("| %s | %.1f MiB | %.1f | %.1f | %.1f MiB | %.1f MiB | %d | %s |\n", f.Name, float64(f.SizeBytes)/(1<<20), f.ColdStartMS.P50, f.ColdStartMS.Max,
			float64(f.RSSKB)/1024, float64(f.PeakRSSKB)/1024, f.Instances, errorCell(f.BurstErrors, f.BurstFirstErr))
	}
	p.w("\n")
}

func (p *page) gatewayOverhead() {
	o := p.res.Overhead
	if o == nil {
		return
	}
	p.w("## Gateway overhead\n\n`%s`, one client, %d requests each way in alternating blocks: through HTTP, the local gateway and the warm `slots` binary, against `SlotsRouter(...).Invoke` with the same event in this process.\n\n", o.Request, o.Iterations)
	p.w("| path | p50 ms | p99 ms |\n| --- | --- | --- |\n| gateway + runtime | %.3f | %.3f |\n| in process | %.3f | %.3f |\n| difference | %.3f | |\n\n", o.Gateway.P50, o.Gateway.P99, o.InProcess.P50, o.InProcess.P99, o.DiffP50MS)
}

func (p *page) payments() {
	pay := p.res.Payments
	if pay == nil {
		return
	}
	p.w("## Release run and payment notifications\n\nWeChat Pay simulator (`wxpaysim`) in process over real HTTP: every request signed and verified, every notification signed and AES-GCM encrypted.\n\n")
	p.w("| job | count | seconds | per second | notes |\n| --- | --- | --- | --- | --- |\n")
	p.w("| release of expired holds (one `Service.Release` run: close order + signed query + status change each, then drift check and audit shipping) | %d of %d | %.2f | %.0f | |\n", pay.Released, pay.Holds, pay.ReleaseSeconds, pay.ReleasedPerS)
	p.w("| payment notifications confirmed (sim pays, delivers; handler verifies, decrypts, `HandlePayment`) | %d of %d | %.2f | %.0f | %d concurrent, %d errors %s |\n\n", pay.Confirmed, pay.Notifications, pay.NotifySeconds, pay.ConfirmedPerS, pay.NotifyClients, pay.NotifyErrors, pay.FirstErr)
}

// contenders says how each contender takes a seat and what it promises.
func (p *page) contenders() {
	p.w(`## The contenders

All run on the same MariaDB, the same driver settings (client-side interpolation), the same pool size, and, except the floor, write the booking, its order number and its audit record per seat as the product does, into the product's own t_booking and t_audit; only their slot rows live in a table of their own (and so they write no t_booking_slot row, which the product and its forms write with the seat). They live only in infra/bench, never in the product.

| contender | how a seat is taken | promises |
| --- | --- | --- |
| product | shared/mysql Reserve: one pre-read (slot, the customer's active booking, DB clock; a full slot is refused here, no write), then one CALL of salon_reserve: in one transaction the booking, its order number, the audit record, and last the seat by salon_take_seat (its t_booking_slot row, then the conditional UPDATE of the slot), then COMMIT, and the outcome (two round trips; the slot row is locked from the UPDATE to the COMMIT, on the server) | no oversell |
| ` + cBefore + ` | the product's reserve before this: the same pre-read, then START TRANSACTION, the booking, its order number, the audit record and LAST the conditional UPDATE of the slot as one multi-statement, then COMMIT in a round trip of its own (three round trips; the slot row is locked across the last one) | no oversell |
| read-then-write (no lock) | read booked, write booked+1 (the launch-weekend bug) | none: oversells |
| SELECT ... FOR UPDATE | lock the slot row first, check, write, commit | no oversell |
| version CAS, no retry | read version, write, bump slot only if the version is unchanged; a lost race is refused although seats remain | no oversell, but false refusals |
| version CAS + retries | the same, retried until it wins or the slot is full | no oversell |
| Redis lock (SET NX PX) | per-slot lock in Redis around check-then-act, released by a Lua compare-and-delete | no oversell while the lock's TTL outlives the work |
| etcd lease lock | concurrency.Mutex on a per-client lease around check-then-act | no oversell while the lease lives |
| Redis Lua counter | Lua check-and-increment in Redis, then the booking in MySQL (seat given back if the write fails); the slot row is not maintained | no oversell while Redis keeps the counter |
| queue (NATS, one consumer) | NATS request-reply to a single consumer that runs check-then-act | no oversell while there is one consumer |
| bare conditional UPDATE (floor) | the seat-taking statement alone, autocommitted, no booking | the floor |
`)
}
