package service_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/service"
	"salon/shared/wechatbill"
	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

// billRig is the service on a fresh database with the WeChat Pay simulator
// over real HTTP (real signatures, keys made here) as its bill source. The
// simulator's business clock is the rig's, so a payment is taken at the time
// a test says.
type billRig struct {
	t     *testing.T
	svc   *service.Service
	store *mysql.DB
	sim   *wxpaysim.Sim
	pay   *wechatpay.Client
	mu    sync.Mutex
	clock time.Time
	book  int64
}

var shanghai = time.FixedZone("CST", 8*3600)

func newBillRig(t *testing.T) *billRig {
	t.Helper()
	r := &billRig{t: t, clock: time.Now()}
	svc, store := newService(t)
	r.svc, r.store = svc, store
	key, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		t.Fatal(err)
	}
	r.sim, err = wxpaysim.New(wxpaysim.Options{AppID: "wx0000000000test", MchID: "1900000109",
		MerchantPublicKey: &key.PublicKey, MerchantSerial: serial, Now: r.now})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(r.sim.Handler())
	t.Cleanup(api.Close)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(recv.Close)
	env := r.sim.Env(key, serial, api.URL, recv.URL+"/pay/notify", recv.URL+"/pay/refund-notify")
	cfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if r.pay, err = wechatpay.New(cfg); err != nil {
		t.Fatal(err)
	}
	svc.Bills = r.pay
	return r
}

func (r *billRig) now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clock
}

func (r *billRig) setClock(at time.Time) {
	r.mu.Lock()
	r.clock = at
	r.mu.Unlock()
}

// paidAt has the simulator take a payment of fen at at (WeChat's time).
func (r *billRig) paidAt(no string, fen int64, at time.Time) {
	r.t.Helper()
	r.setClock(at)
	if _, err := r.pay.Prepay(ctx, wechatpay.Order{OutTradeNo: no, Description: "美甲定金", OpenID: "o-bill", AmountFen: fen, TimeExpire: at.Add(15 * time.Minute)}); err != nil {
		r.t.Fatal(err)
	}
	if err := r.sim.Pay(ctx, no); err != nil {
		r.t.Fatal(err)
	}
}

// refundedAt has the simulator refund the whole payment no at at.
func (r *billRig) refundedAt(no, refundNo string, fen int64, at time.Time) {
	r.t.Helper()
	r.setClock(at)
	if _, err := r.pay.Refund(ctx, wechatpay.RefundRequest{OutTradeNo: no, OutRefundNo: refundNo, RefundFen: fen, TotalFen: fen}); err != nil {
		r.t.Fatal(err)
	}
	if err := r.sim.CompleteRefundSilently(refundNo, wxpaysim.RefundSuccess); err != nil {
		r.t.Fatal(err)
	}
}

// ledger puts a row into t_money with a plain INSERT, as 0023 describes the
// rows the store writes: kind deposit with out_trade_no and transaction_id,
// or refund with out_refund_no, method wechatpay, at at.
func (r *billRig) ledger(kind, no, refundNo string, fen int64, at time.Time) {
	r.t.Helper()
	r.book++
	var refund any
	if refundNo != "" {
		refund = refundNo
	}
	if _, err := r.store.SQL().Exec(`INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, transaction_id, out_refund_no, actor, created_at)
		VALUES (?, ?, ?, 'wechatpay', ?, ?, ?, 'wechatpay', ?)`, r.book, kind, fen, no, "4200"+no, refund, at.UTC()); err != nil {
		r.t.Fatal(err)
	}
}

// billCalls counts the requests for a bill the simulator answered.
func (r *billRig) billCalls() int {
	n := 0
	for _, c := range r.sim.Calls() {
		if c.Path == "/v3/bill/tradebill" {
			n++
		}
	}
	return n
}

func (r *billRig) run(date string) *wechatbill.DayResult {
	r.t.Helper()
	d, err := r.svc.RunDay(ctx, date)
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// pastDay is a bill date some days back, and the time of day h:m on it.
func pastDay(daysBack int) (string, func(h, m, s int) time.Time) {
	d := time.Now().In(shanghai).AddDate(0, 0, -daysBack)
	start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, shanghai)
	return start.Format(time.DateOnly), func(h, m, s int) time.Time {
		return start.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
}

func diffsOf(d *wechatbill.DayResult) string {
	var parts []string
	for _, x := range d.Differences {
		v := func(p *int64) string {
			if p == nil {
				return "null"
			}
			return wechatbill.Yuan(*p)
		}
		parts = append(parts, x.Kind+" "+x.OutTradeNo+"/"+x.OutRefundNo+" "+v(x.OursFen)+" "+v(x.TheirsFen))
	}
	return strings.Join(parts, "; ")
}

// TestReconcileMatchedDay: two payments and a refund, each with its ledger
// row, match; the fees are the bill's; the result is kept.
func TestReconcileMatchedDay(t *testing.T) {
	r := newBillRig(t)
	date, at := pastDay(2)
	r.paidAt("BK000000000100", 5000, at(10, 0, 0))
	r.paidAt("BK000000000101", 8000, at(11, 0, 0))
	r.refundedAt("BK000000000101", "RF000000000101", 8000, at(12, 0, 0))
	r.ledger("deposit", "BK000000000100", "", 5000, at(10, 0, 1))
	r.ledger("deposit", "BK000000000101", "", 8000, at(11, 0, 2))
	r.ledger("refund", "BK000000000101", "RF000000000101", 8000, at(12, 0, 3))
	r.ledger("balance", "BK000000000100", "", 12000, at(15, 0, 0)) // paid in the shop: not WeChat Pay's

	if d, err := r.svc.Day(ctx, date); err != nil || d.Status != "not_yet" {
		t.Fatalf("before any run: %+v %v", d, err)
	}
	d := r.run(date)
	if d.Status != "matched" || d.BillRows != 3 || d.Matched != 3 || d.FeesFen != 30+48-48 || len(d.Differences) != 0 || d.Attempts != 1 {
		t.Fatalf("matched day: %+v (%s)", d, diffsOf(d))
	}
	got, err := r.svc.Day(ctx, date)
	if err != nil || got.Status != "matched" || got.Matched != 3 {
		t.Fatalf("kept: %+v %v", got, err)
	}
}

// TestReconcileDifferences: each kind of difference, then the same day
// matched once the difference settles (the simulator's plant lifted, the
// ledger's row written late).
func TestReconcileDifferences(t *testing.T) {
	r := newBillRig(t)
	date, at := pastDay(2)
	r.paidAt("BK000000000200", 5000, at(10, 0, 0))
	r.paidAt("BK000000000201", 6000, at(10, 30, 0))
	r.paidAt("BK000000000202", 7000, at(11, 0, 0))
	r.ledger("deposit", "BK000000000200", "", 5000, at(10, 0, 1))
	r.ledger("deposit", "BK000000000201", "", 6000, at(10, 30, 1))
	// SL202 has no ledger row yet: its notification was lost.

	r.sim.PlantBill(wxpaysim.BillPlant{Drop: "BK000000000200", Change: "BK000000000201", ChangeFen: 5900})
	d := r.run(date)
	want := "missing_in_bill BK000000000200/ 50.00 null; amount BK000000000201/ 60.00 59.00; missing_here BK000000000202/ null 70.00"
	if d.Status != "differences" || d.BillRows != 2 || d.Matched != 0 || diffsOf(d) != want {
		t.Fatalf("differences: %+v\n%s\nwant %s", d, diffsOf(d), want)
	}

	r.sim.PlantBill(wxpaysim.BillPlant{})
	r.ledger("deposit", "BK000000000202", "", 7000, at(11, 20, 0))
	d = r.run(date)
	if d.Status != "matched" || d.Matched != 3 || len(d.Differences) != 0 || d.Attempts != 2 {
		t.Fatalf("settled: %+v (%s)", d, diffsOf(d))
	}
}

// TestReconcileFails: a bad hash and a WeChat that does not answer are a
// failed day with the reason; the next attempt, WeChat back, matches.
func TestReconcileFails(t *testing.T) {
	r := newBillRig(t)
	date, at := pastDay(2)
	r.paidAt("BK000000000300", 5000, at(9, 0, 0))
	r.ledger("deposit", "BK000000000300", "", 5000, at(9, 0, 1))

	r.sim.PlantBill(wxpaysim.BillPlant{BadHash: true})
	if d := r.run(date); d.Status != "failed" || !strings.Contains(d.Error, "SHA1") || d.BillRows != 0 {
		t.Fatalf("bad hash: %+v", d)
	}
	r.sim.PlantBill(wxpaysim.BillPlant{})

	r.sim.FailNext("/v3/bill/", http.StatusInternalServerError, "SYSTEM_ERROR", 1)
	if d := r.run(date); d.Status != "failed" || !strings.Contains(d.Error, "SYSTEM_ERROR") {
		t.Fatalf("WeChat down: %+v", d)
	}
	// WeChat does not answer: the attempt gives up at its deadline and is
	// recorded all the same.
	release := r.sim.Hang()
	hung, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	d, err := r.svc.RunDay(hung, date)
	cancel()
	release()
	if err != nil || d.Status != "failed" || d.Attempts != 3 {
		t.Fatalf("WeChat not answering: %+v %v", d, err)
	}
	if d := r.run(date); d.Status != "matched" || d.Matched != 1 || d.Attempts != 4 || d.Error != "" {
		t.Fatalf("WeChat back: %+v", d)
	}
}

// TestReconcileNoTrade: a day WeChat has no bill of (NO_STATEMENT_EXIST) is
// matched with 0 rows when the ledger has none either, and shows the
// ledger's rows as missing in the bill when it has; a bill for a day the
// ledger knows nothing of shows each line missing here.
func TestReconcileNoTrade(t *testing.T) {
	r := newBillRig(t)
	quiet, _ := pastDay(3)
	if d := r.run(quiet); d.Status != "matched" || d.BillRows != 0 || d.Matched != 0 || len(d.Differences) != 0 {
		t.Fatalf("no trade: %+v", d)
	}

	onlyOurs, at := pastDay(2)
	r.ledger("deposit", "BK000000000400", "", 5000, at(14, 0, 0))
	if d := r.run(onlyOurs); d.Status != "differences" || diffsOf(d) != "missing_in_bill BK000000000400/ 50.00 null" {
		t.Fatalf("no bill, a ledger row: %+v (%s)", d, diffsOf(d))
	}

	onlyTheirs, at1 := pastDay(1)
	r.paidAt("BK000000000401", 5000, at1(14, 0, 0))
	r.refundedAt("BK000000000401", "RF000000000401", 5000, at1(15, 0, 0))
	if d := r.run(onlyTheirs); d.Status != "differences" || d.BillRows != 2 ||
		diffsOf(d) != "missing_here BK000000000401/ null 50.00; missing_here BK000000000401/RF000000000401 null 50.00" {
		t.Fatalf("a bill, no ledger: %+v (%s)", d, diffsOf(d))
	}
}

// TestReconcileDayEdge: WeChat took a payment at 23:59:59, the ledger wrote
// it at 00:00:01: neither day shows a difference (the second day asks for
// the first day's bill to settle its row of 00:00:01). A row of 00:00:05 in
// neither bill is a difference of the second day.
func TestReconcileDayEdge(t *testing.T) {
	r := newBillRig(t)
	first, at := pastDay(2)
	second, at2 := pastDay(1)
	r.paidAt("BK000000000500", 5000, at(23, 59, 59))
	r.ledger("deposit", "BK000000000500", "", 5000, at2(0, 0, 1))
	if d := r.run(first); d.Status != "matched" || d.Matched != 1 {
		t.Fatalf("first day: %+v (%s)", d, diffsOf(d))
	}
	r.paidAt("BK000000000501", 6000, at2(9, 0, 0))
	r.ledger("deposit", "BK000000000501", "", 6000, at2(9, 0, 1))
	if d := r.run(second); d.Status != "matched" || d.Matched != 1 || d.BillRows != 1 {
		t.Fatalf("second day: %+v (%s)", d, diffsOf(d))
	}
	r.ledger("deposit", "BK000000000502", "", 7000, at2(0, 0, 5))
	if d := r.run(second); d.Status != "differences" || diffsOf(d) != "missing_in_bill BK000000000502/ 70.00 null" {
		t.Fatalf("a row at midnight in neither bill: %+v (%s)", d, diffsOf(d))
	}
}

// TestReconcileDates: the owner's run of today answers not_yet without a
// call, of a future date or a malformed one BAD_REQUEST, nothing recorded.
func TestReconcileDates(t *testing.T) {
	r := newBillRig(t)
	today := wechatbill.DateOf(time.Now())
	if d := r.run(today); d.Status != "not_yet" {
		t.Fatalf("today: %+v", d)
	}
	tomorrow := wechatbill.DateOf(time.Now().Add(24 * time.Hour))
	for _, date := range []string{tomorrow, "2026-02-30", "yesterday", "", "2026-1-02"} {
		if d, err := r.svc.RunDay(ctx, date); booking.ErrorCode(err) != booking.EBADREQUEST {
			t.Errorf("RunDay(%q) = %+v, %v; want BAD_REQUEST", date, d, err)
		}
	}
	if n := r.billCalls(); n != 0 {
		t.Fatalf("%d bills asked for", n)
	}
	if days, err := r.svc.Recent(ctx, 10); err != nil || len(days) != 0 {
		t.Fatalf("recorded: %+v %v", days, err)
	}
}

// TestReconcileRelease: the release run's schedule, at times passed in. A
// day's bill is fetched once the day after, after BILL_AFTER in shop time; a
// matched day never again; a day with differences again an hour after its
// last attempt (wechatbill's TestDue: until three days have passed).
func TestReconcileRelease(t *testing.T) {
	r := newBillRig(t)
	r.svc.Policy.BillAfter = 10 * time.Hour
	date, at := pastDay(5) // in the past, so that the rig's payments have happened
	_, next := pastDay(4)
	r.paidAt("BK000000000600", 5000, at(12, 0, 0))
	r.ledger("deposit", "BK000000000600", "", 5000, at(12, 0, 1))

	runAt := func(now time.Time, want int) {
		t.Helper()
		n, err := r.svc.RunDueAt(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("at %v: %d days run, want %d", now, n, want)
		}
	}
	// The three days before, never run, are due at once (no trade: matched).
	runAt(at(10, 0, 0), 3)
	calls := r.billCalls()
	runAt(at(23, 0, 0), 0) // the day is not over
	runAt(next(9, 59, 0), 0)
	if r.billCalls() != calls {
		t.Fatalf("fetched before BILL_AFTER")
	}
	runAt(next(10, 1, 0), 1)
	if d, _ := r.svc.Day(ctx, date); d.Status != "matched" || d.Matched != 1 || r.billCalls() != calls+1 {
		t.Fatalf("after BILL_AFTER: %+v, %d calls", d, r.billCalls()-calls)
	}
	for _, later := range []time.Time{next(10, 2, 0), next(15, 0, 0), next(23, 59, 0)} {
		runAt(later, 0)
	}
	if r.billCalls() != calls+1 {
		t.Fatalf("a matched day fetched again: %d calls", r.billCalls()-calls)
	}

	// A day with differences: again an hour after each attempt.
	date2, at2 := pastDay(4)
	_, next2 := pastDay(3)
	r.ledger("deposit", "BK000000000601", "", 5000, at2(12, 0, 0)) // WeChat has no such payment
	runAt(next2(10, 0, 0), 1)
	runAt(next2(10, 30, 0), 0)
	runAt(next2(11, 0, 0), 1)
	if d, _ := r.svc.Day(ctx, date2); d.Status != "differences" || d.Attempts != 2 {
		t.Fatalf("day with differences: %+v", d)
	}
}

// TestReleaseRunFetchesTheBill: the release run itself (the database's clock)
// fetches yesterday's bill once BILL_AFTER has passed, and a second run does
// not fetch a matched day again.
func TestReleaseRunFetchesTheBill(t *testing.T) {
	r := newBillRig(t)
	r.svc.Policy.BillAfter = 0 // 00:00: yesterday's bill is always due
	date, at := pastDay(1)
	r.paidAt("BK000000000700", 5000, at(12, 0, 0))
	r.ledger("deposit", "BK000000000700", "", 5000, at(12, 0, 1))
	if _, err := r.svc.Release(ctx); err != nil {
		t.Fatal(err)
	}
	calls := r.billCalls()
	if d, _ := r.svc.Day(ctx, date); d.Status != "matched" || d.Matched != 1 {
		t.Fatalf("after the release run: %+v", d)
	}
	if _, err := r.svc.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r.billCalls() != calls {
		t.Fatalf("the second run fetched %d bills", r.billCalls()-calls)
	}
	// WeChat down does not fail the run's other work.
	r2 := newBillRig(t)
	r2.svc.Policy.BillAfter = 0
	r2.sim.FailNext("/v3/bill/", http.StatusServiceUnavailable, "SYSTEM_ERROR", 10)
	if _, err := r2.svc.Release(ctx); err != nil {
		t.Fatalf("the release run failed with WeChat's bill: %v", err)
	}
	if d, _ := r2.svc.Day(ctx, date); d.Status != "failed" {
		t.Fatalf("day with WeChat down: %+v", d)
	}
}

// TestReconcileTodayInDevelopment: with RunToday (SALON_DEV=1), the owner's
// run takes today's bill so far, which the simulator serves.
func TestReconcileTodayInDevelopment(t *testing.T) {
	r := newBillRig(t)
	r.svc.RunToday = true
	now := time.Now()
	r.paidAt("BK000000000800", 5000, now)
	r.ledger("deposit", "BK000000000800", "", 5000, now)
	today := wechatbill.DateOf(now)
	d := r.run(today)
	// Just after midnight (UTC+8) the ledger's row may be at the day's head,
	// where yesterday's bill is asked too: still one line, matched.
	if d.Status != "matched" || d.Matched != 1 {
		t.Fatalf("today in development: %+v (%s)", d, diffsOf(d))
	}
	tomorrow := wechatbill.DateOf(now.Add(24 * time.Hour))
	if _, err := r.svc.RunDay(ctx, tomorrow); booking.ErrorCode(err) != booking.EBADREQUEST {
		t.Fatalf("tomorrow in development: %v", err)
	}
}
