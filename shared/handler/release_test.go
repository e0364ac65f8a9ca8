package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/infra/testkit"
	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/cls/clstest"
	"salon/shared/instance"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/wechatpay/wxpaysim"
)

// The release run is driven here the way the timer drives it: the handler of
// functions/release with a timer event, its summary checked as the JSON the timer
// receives, against the real database, the WeChat Pay simulator and a local CLS.

const (
	relTimerEvent   = `{"Type":"Timer","TriggerName":"release-every-minute","Time":"2026-01-01T00:00:00Z","Message":"release"}`
	relCLSSecretID  = "AKIDreleasetest"
	relCLSSecretKey = "release-test-secret-key"
	relCLSToken     = "release-test-session-token"
	relCLSTopic     = "topic-salon-audit"
	relPayPath      = "/v3/pay/transactions/out-trade-no/"
)

// relSummary is the release function's answer as JSON.
type relSummary struct {
	Released, Confirmed, Refunded, Audited, NoShows, RefundsSettled, Notified int
	AuditDeleted, NotificationsDeleted, SigninsDeleted                        int
}

// release runs the release function once with ctx and returns its answer, decoded
// from the JSON the timer receives (which must hold exactly the ten counters).
func (s *system) relRun(ctx context.Context) relSummary {
	s.t.Helper()
	sum, err := relRunEnv(ctx, s.apiEnv)
	if err != nil {
		s.t.Fatal(err)
	}
	return sum
}

// runRelease is release without testing.T, for goroutines.
func relRunEnv(ctx context.Context, e *instance.Env) (relSummary, error) {
	out, err := Release(e)(ctx, json.RawMessage(relTimerEvent))
	if err != nil {
		return relSummary{}, fmt.Errorf("release run: %v", err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return relSummary{}, err
	}
	var m map[string]int
	if err := json.Unmarshal(raw, &m); err != nil {
		return relSummary{}, fmt.Errorf("summary %s: %v", raw, err)
	}
	if len(m) != 10 {
		return relSummary{}, fmt.Errorf("summary %s: want exactly released, confirmed, refunded, audited, noShows, refundsSettled, notified, auditDeleted, notificationsDeleted, signinsDeleted", raw)
	}
	sum := relSummary{Released: -1, Confirmed: -1, Refunded: -1, Audited: -1, NoShows: -1, RefundsSettled: -1, Notified: -1,
		AuditDeleted: -1, NotificationsDeleted: -1, SigninsDeleted: -1}
	for k, v := range m {
		switch k {
		case "released":
			sum.Released = v
		case "confirmed":
			sum.Confirmed = v
		case "refunded":
			sum.Refunded = v
		case "audited":
			sum.Audited = v
		case "noShows":
			sum.NoShows = v
		case "refundsSettled":
			sum.RefundsSettled = v
		case "notified":
			sum.Notified = v
		case "auditDeleted":
			sum.AuditDeleted = v
		case "notificationsDeleted":
			sum.NotificationsDeleted = v
		case "signinsDeleted":
			sum.SigninsDeleted = v
		default:
			return relSummary{}, fmt.Errorf("summary %s: unknown key %q", raw, k)
		}
	}
	return sum, nil
}

// relWithCLS starts a local CLS that accepts only the test's role credentials, token
// and topic, and points the system at it.
func relWithCLS(t *testing.T) (*clstest.Server, func(map[string]string)) {
	return testkit.StartCLS(t, testkit.CLSAccount{SecretID: relCLSSecretID, SecretKey: relCLSSecretKey,
		Token: relCLSToken, Topic: relCLSTopic, Region: "ap-shanghai"})
}

// withLostNotifications points WeChat's notify_url at a receiver that always fails,
// so a payment made at the simulator is known to WeChat only (its notifications are
// delivered by hand with deliverPayment, as WeChat's retries would).
func relLostNotifications(t *testing.T) func(map[string]string) {
	hole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "lost", http.StatusServiceUnavailable)
	}))
	t.Cleanup(hole.Close)
	return func(env map[string]string) { env["WECHATPAY_NOTIFY_URL"] = hole.URL + "/pay/notify" }
}

func (s *system) relDeliverPayment(outTradeNo string) {
	s.t.Helper()
	h, body, err := s.sim.BuildPaymentNotification(outTradeNo)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.sim.Deliver(context.Background(), s.gw.URL+"/pay/notify", h, body); err != nil {
		s.t.Fatalf("deliver payment notification: %v", err)
	}
}

// expiredHold reserves slot for openid through the API and moves the hold's expiry
// into the past. It returns the booking id.
func (s *system) relExpiredHold(openid string, slot int64) int64 {
	s.t.Helper()
	id, a := s.reserve(openid, slot)
	if id == 0 {
		s.t.Fatalf("reserve for %s: %d %s", openid, a.Status, a.Body)
	}
	mysqltest.ExpireHold(s.t, s.store, id)
	return id
}

// relStoreHold is an expired hold whose prepay never reached WeChat (the store's
// reservation alone): cheaper than relExpiredHold where WeChat's order is not the point.
func (s *system) relStoreHold(openid string, slot int64) int64 {
	s.t.Helper()
	b, _, err := s.store.Reserve(context.Background(), booking.ReserveRequest{OpenID: openid, SlotID: slot})
	if err != nil {
		s.t.Fatal(err)
	}
	mysqltest.ExpireHold(s.t, s.store, b.ID)
	return b.ID
}

func (s *system) relSeats(slot int64) int {
	s.t.Helper()
	sl, err := s.store.FindSlot(context.Background(), slot)
	if err != nil {
		s.t.Fatal(err)
	}
	return sl.Booked
}

// endLease ends a booking's lease, as the passing of time does between two timer
// ticks.
func (s *system) relEndLease(id int64) {
	s.t.Helper()
	if _, err := s.store.SQL().Exec(`UPDATE t_booking SET claim_until = '1970-01-01' WHERE book_id = ?`, id); err != nil {
		s.t.Fatal(err)
	}
}

// leased counts the bookings some release run has claimed.
func (s *system) relLeased() int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking WHERE claim_until > UTC_TIMESTAMP(6)`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// auditTrail reads every audit record with whether it was shipped.
func (s *system) relAuditTrail() (recs []booking.AuditRecord, shipped map[int64]bool) {
	s.t.Helper()
	rows, err := s.store.SQL().Query(`SELECT audit_id, COALESCE(book_id, 0), COALESCE(slot_id, 0), event,
		COALESCE(from_status, -1), COALESCE(to_status, -1), actor, reason, created_at, shipped_at IS NOT NULL
		FROM t_audit ORDER BY audit_id`)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	shipped = map[int64]bool{}
	for rows.Next() {
		var r booking.AuditRecord
		var sh bool
		if err := rows.Scan(&r.ID, &r.BookingID, &r.SlotID, &r.Event, &r.FromStatus, &r.ToStatus, &r.Actor, &r.Reason, &r.CreatedAt, &sh); err != nil {
			s.t.Fatal(err)
		}
		recs = append(recs, r)
		shipped[r.ID] = sh
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	return recs, shipped
}

func (s *system) relUnshipped() int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE shipped_at IS NULL`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// relLogLine is one structured log line of the functions.
type relLogLine map[string]any

// logsSince parses the log lines written after offset (a length of s.logs).
func (s *system) relLogsSince(offset int) []relLogLine {
	s.t.Helper()
	var out []relLogLine
	for _, l := range strings.Split(strings.TrimSpace(s.logs.String()[offset:]), "\n") {
		if l == "" {
			continue
		}
		var m relLogLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func relLinesWith(lines []relLogLine, msgPart string) []relLogLine {
	var out []relLogLine
	for _, l := range lines {
		if m, _ := l["msg"].(string); strings.Contains(m, msgPart) {
			out = append(out, l)
		}
	}
	return out
}

func relNum(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// checkShipped checks that every audit record of the database arrived at CLS with
// every field, times times each (times 0: at least once), and that the stdout copy
// holds every shipped record as a flat JSON line.
func relCheckShipped(t *testing.T, s *system, srv *clstest.Server, times int) {
	t.Helper()
	recs, shipped := s.relAuditTrail()
	got := map[int64][]clstest.Log{}
	for _, l := range srv.Logs() {
		id, err := strconv.ParseInt(l.Get(cls.KeyAuditID), 10, 64)
		if err != nil {
			t.Fatalf("log without audit_id: %+v", l)
		}
		got[id] = append(got[id], l)
	}
	lines := map[int64]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(s.audit.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		for k, v := range m {
			switch v.(type) {
			case string, float64:
			default:
				t.Fatalf("audit line %q: field %s is not flat", l, k)
			}
		}
		if m["log"] != "audit" {
			t.Fatalf("audit line without log=audit: %q", l)
		}
		lines[relNum(m["audit_id"])] = m
	}
	if len(got) != len(recs) {
		t.Errorf("CLS holds %d distinct records, the database %d", len(got), len(recs))
	}
	for _, r := range recs {
		logs := got[r.ID]
		switch {
		case len(logs) == 0:
			t.Errorf("audit %d (%s) never reached CLS", r.ID, r.Event)
			continue
		case times > 0 && len(logs) != times:
			t.Errorf("audit %d (%s) reached CLS %d times, want %d", r.ID, r.Event, len(logs), times)
		}
		if !shipped[r.ID] {
			t.Errorf("audit %d reached CLS but is not marked shipped", r.ID)
		}
		created := r.CreatedAt.UTC().Format(time.RFC3339Nano)
		want := map[string]string{
			cls.KeyAuditID: strconv.FormatInt(r.ID, 10), cls.KeyEvent: r.Event,
			cls.KeyBookingID: strconv.FormatInt(r.BookingID, 10), cls.KeySlotID: strconv.FormatInt(r.SlotID, 10),
			cls.KeyFromStatus: strconv.Itoa(r.FromStatus), cls.KeyToStatus: strconv.Itoa(r.ToStatus),
			cls.KeyActor: r.Actor, cls.KeyReason: r.Reason, cls.KeyCreatedAt: created,
		}
		for _, l := range logs {
			if l.TopicID != relCLSTopic || l.Source != service.SourceRelease || l.TimeMs != r.CreatedAt.UnixMilli() || len(l.Contents) != len(want) {
				t.Errorf("audit %d at CLS: topic %q source %q time %d contents %d", r.ID, l.TopicID, l.Source, l.TimeMs, len(l.Contents))
			}
			for k, v := range want {
				if g := l.Get(k); g != v {
					t.Errorf("audit %d at CLS: %s = %q, want %q", r.ID, k, g, v)
				}
			}
		}
		line := lines[r.ID]
		if line == nil {
			t.Errorf("audit %d: no stdout line", r.ID)
			continue
		}
		if line["event"] != r.Event || relNum(line["booking_id"]) != r.BookingID || relNum(line["slot_id"]) != r.SlotID ||
			relNum(line["from_status"]) != int64(r.FromStatus) || relNum(line["to_status"]) != int64(r.ToStatus) ||
			line["actor"] != r.Actor || line["reason"] != r.Reason || line["created_at"] != created {
			t.Errorf("audit %d: stdout line %v does not match %+v", r.ID, line, r)
		}
	}
	for _, req := range srv.Requests() {
		if req.ErrorCode == "" && (req.Token != relCLSToken || req.SecretID != relCLSSecretID || req.Region != "ap-shanghai") {
			t.Errorf("accepted request with token %q secret id %q region %q", req.Token, req.SecretID, req.Region)
		}
	}
}

func TestReleaseRunReleasesExpiredHolds(t *testing.T) {
	t.Parallel()
	srv, cl := relWithCLS(t)
	s := newSystem(t, cl)
	ctx := context.Background()
	slot := s.slot(30*time.Hour, 3, 5000)
	a := s.relExpiredHold("o-rel-a", slot)
	b := s.relExpiredHold("o-rel-b", slot)
	fresh, _ := s.reserve("o-rel-fresh", slot)
	if s.relSeats(slot) != 3 {
		t.Fatalf("booked %d before the run", s.relSeats(slot))
	}

	sum := s.relRun(ctx)
	if sum != (relSummary{Released: 2, Audited: 5}) { // 3 reserve + 2 release records
		t.Fatalf("summary %+v", sum)
	}
	for _, id := range []int64{a, b} {
		if st := s.status(id); st != "expired" {
			t.Fatalf("booking %d is %s, want expired", id, st)
		}
		o, _ := s.sim.Order(booking.OutTradeNo(id))
		if o.State != wxpaysim.StateClosed {
			t.Fatalf("WeChat order of %d is %s, want CLOSED", id, o.State)
		}
		trail, _ := s.store.BookingAudit(ctx, id)
		last := trail[len(trail)-1]
		if len(trail) != 2 || last.Event != booking.EventRelease || last.FromStatus != 0 || last.ToStatus != 4 || last.Actor != booking.ActorTimer {
			t.Fatalf("audit of %d: %+v", id, trail)
		}
	}
	if st := s.status(fresh); st != "pending_payment" {
		t.Fatalf("unexpired hold is %s", st)
	}
	if s.relSeats(slot) != 1 {
		t.Fatalf("booked %d after the run, want 1", s.relSeats(slot))
	}
	relCheckShipped(t, s, srv, 1)

	// A second run finds nothing to do and ships nothing again.
	if sum := s.relRun(ctx); sum != (relSummary{}) {
		t.Fatalf("second run %+v", sum)
	}
	relCheckShipped(t, s, srv, 1)
	mysqltest.CheckInvariant(t, s.store)
}

func TestReleaseConfirmsAHoldPaidAtWeChat(t *testing.T) {
	t.Parallel()
	s := newSystem(t, relLostNotifications(t))
	ctx := context.Background()
	slot := s.slot(30*time.Hour, 1, 5000)
	id := s.relExpiredHold("o-paid", slot)
	no := booking.OutTradeNo(id)
	// The customer paid in the last second; the notification has not come.
	if err := s.sim.Pay(ctx, no); err == nil {
		t.Fatal("the notification was delivered; want it lost")
	}
	if o, _ := s.sim.Order(no); o.State != wxpaysim.StateSuccess {
		t.Fatalf("order %s", o.State)
	}

	if sum := s.relRun(ctx); sum != (relSummary{Confirmed: 1}) {
		t.Fatalf("summary %+v", sum)
	}
	bk, _ := s.store.FindBooking(ctx, id)
	o, _ := s.sim.Order(no)
	if bk.Status != booking.StatusConfirmed || bk.TransactionID != o.TransactionID || s.relSeats(slot) != 1 {
		t.Fatalf("after the run: %s transaction %q (WeChat %q), booked %d", bk.Status, bk.TransactionID, o.TransactionID, s.relSeats(slot))
	}

	// WeChat's retry of the notification arrives later and changes nothing.
	s.relDeliverPayment(no)
	trail, _ := s.store.BookingAudit(ctx, id)
	confirms := 0
	for _, r := range trail {
		if r.Event == booking.EventConfirm {
			confirms++
		}
		if r.Event == booking.EventRelease {
			t.Fatal("a paid booking was released")
		}
	}
	if confirms != 1 || s.status(id) != "confirmed" || len(s.sim.Refunds()) != 0 {
		t.Fatalf("confirms %d, status %s, refunds %d", confirms, s.status(id), len(s.sim.Refunds()))
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestReleaseKeepsHoldsWeChatCannotProveUnpaid(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	slot := s.slot(30*time.Hour, 5, 5000)
	notClosed := s.relExpiredHold("o-notpay", slot)
	queryDown := s.relExpiredHold("o-query5xx", slot)
	// Prepay failed: the booking is pending and WeChat has no order for it.
	s.sim.FailNext("/v3/pay/transactions/jsapi", http.StatusInternalServerError, "SYSTEM_ERROR", 1)
	if _, a := s.reserve("o-noorder", slot); a.Status != http.StatusServiceUnavailable || a.code() != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("reserve with WeChat down: %d %s", a.Status, a.Body)
	}
	mine, _ := s.store.ListCustomerBookings(ctx, "o-noorder", 1)
	noOrder := mine[0].ID
	mysqltest.ExpireHold(t, s.store, noOrder)

	// The close answers 204 without closing (the query still says NOTPAY); the
	// query of the other answers 500 (the prefix also catches its close first).
	s.sim.FailNext(relPayPath+booking.OutTradeNo(notClosed)+"/close", http.StatusNoContent, "", 1)
	s.sim.FailNext(relPayPath+booking.OutTradeNo(queryDown), http.StatusInternalServerError, "SYSTEM_ERROR", 2)
	off := len(s.logs.String())

	if sum := s.relRun(ctx); sum != (relSummary{Released: 1}) {
		t.Fatalf("summary %+v", sum)
	}
	if s.status(notClosed) != "pending_payment" || s.status(queryDown) != "pending_payment" || s.status(noOrder) != "expired" {
		t.Fatalf("statuses: NOTPAY %s, query 5xx %s, no order %s", s.status(notClosed), s.status(queryDown), s.status(noOrder))
	}
	if o, _ := s.sim.Order(booking.OutTradeNo(notClosed)); o.State != wxpaysim.StateNotPay {
		t.Fatalf("order after the 204 close: %s", o.State)
	}
	if s.relSeats(slot) != 2 {
		t.Fatalf("booked %d, want the 2 unproven holds", s.relSeats(slot))
	}
	kept := map[int64]bool{}
	for _, l := range relLinesWith(s.relLogsSince(off), "kept for the next run") {
		kept[relNum(l["booking_id"])] = true
	}
	if !kept[notClosed] || !kept[queryDown] || len(kept) != 2 {
		t.Fatalf("kept holds logged: %v", kept)
	}

	// The next tick (their leases have run out) closes them for good.
	s.relEndLease(notClosed)
	s.relEndLease(queryDown)
	if sum := s.relRun(ctx); sum != (relSummary{Released: 2}) {
		t.Fatalf("next run %+v", sum)
	}
	if s.status(notClosed) != "expired" || s.status(queryDown) != "expired" || s.relSeats(slot) != 0 {
		t.Fatalf("after the next run: %s %s booked %d", s.status(notClosed), s.status(queryDown), s.relSeats(slot))
	}
	mysqltest.CheckInvariant(t, s.store)
}

func TestReleaseStopsClaimingAtTheBudget(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(30*time.Hour, 30, 5000)
	const holds = 25
	for i := range holds {
		s.relStoreHold(fmt.Sprintf("o-budget-%d", i), slot)
	}

	// Less than the margin is left: the run claims nothing and still answers.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	sum := s.relRun(ctx)
	cancel()
	if sum.Released != 0 || sum.Confirmed != 0 || s.relLeased() != 0 {
		t.Fatalf("near the deadline: %+v, %d claimed", sum, s.relLeased())
	}

	// A little more than the margin: the run claims one batch, WeChat hangs on the
	// first close until the budget is spent, and no further batch is claimed.
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	var closes sync.WaitGroup
	closes.Add(1)
	var once sync.Once
	s.sim.SetOnRequest(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/close") {
			once.Do(closes.Done)
			<-hung
		}
	})
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second+1500*time.Millisecond)
	defer cancel()
	sum = s.relRun(ctx)
	closes.Wait()
	if sum.Released != 0 || sum.Confirmed != 0 {
		t.Fatalf("with WeChat hanging: %+v", sum)
	}
	if n := s.relLeased(); n < 1 || n > 20 {
		t.Fatalf("%d holds claimed, want one batch (1..20)", n)
	}
	if s.relSeats(slot) != holds {
		t.Fatalf("booked %d, want every hold kept (%d)", s.relSeats(slot), holds)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestPaymentRacesRelease lets a payment (at WeChat, then its notification) and a
// release run meet on the same expired booking, many times. The payment starts at
// a different point of the run in turn: with the run, when WeChat receives the
// run's close, when it receives the run's query, and after the run (when another
// customer has meanwhile taken the freed seat, so the money must go back).
func TestPaymentRacesRelease(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	const rounds = 24
	outcomes := map[string]int{}
	for i := range rounds {
		variant := i % 4
		slot := s.slot(30*time.Hour+time.Duration(i)*2*time.Hour, 1, 5000)
		id := s.relExpiredHold(fmt.Sprintf("o-race-%d", i), slot)
		no := booking.OutTradeNo(id)

		start, payNow := make(chan struct{}), make(chan struct{})
		var once sync.Once
		s.sim.SetOnRequest(func(r *http.Request) {
			isClose := strings.HasSuffix(r.URL.Path, no+"/close")
			isQuery := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, no)
			if (variant == 1 && isClose) || (variant == 2 && isQuery) {
				once.Do(func() { close(payNow) })
			}
		})
		var wg sync.WaitGroup
		var payErr, relErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			switch variant {
			case 1, 2:
				<-payNow
			case 3:
				return
			}
			payErr = s.sim.PayLate(ctx, no)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, relErr = relRunEnv(ctx, s.apiEnv)
			once.Do(func() { close(payNow) }) // the run never reached WeChat's order
		}()
		close(start)
		wg.Wait()
		s.sim.SetOnRequest(nil)
		if relErr != nil {
			t.Fatal(relErr)
		}
		if variant == 3 {
			if st := s.status(id); st != "expired" {
				t.Fatalf("round %d: released first, but booking is %s", i, st)
			}
			if other, a := s.reserve(fmt.Sprintf("o-race-seat-%d", i), slot); other == 0 {
				t.Fatalf("round %d: the freed seat: %d %s", i, a.Status, a.Body)
			}
			payErr = s.sim.PayLate(ctx, no)
		}
		if payErr != nil {
			// The notification was answered with a failure; WeChat retries it.
			t.Logf("round %d: %v; redelivered", i, payErr)
			s.relDeliverPayment(no)
		}

		bk, _ := s.store.FindBooking(ctx, id)
		o, _ := s.sim.Order(no)
		switch {
		case bk.Status == booking.StatusConfirmed && bk.TransactionID == o.TransactionID && bk.Refund == nil:
			outcomes["confirmed"]++
		case bk.Status == booking.StatusExpired && bk.Refund != nil && bk.Refund.AmountFen == o.Total && len(s.sim.Refunds()) > 0:
			outcomes["refunded"]++
		default:
			t.Fatalf("round %d: booking %s (transaction %q, refund %+v) while WeChat holds the payment %s", i, bk.Status, bk.TransactionID, bk.Refund, o.TransactionID)
		}
		trail, _ := s.store.BookingAudit(ctx, id)
		seated := 0
		for _, r := range trail {
			switch r.Event {
			case booking.EventConfirm, booking.EventLatePayment:
				seated++
				fallthrough
			case booking.EventRelease:
				outcomes[r.Event]++ // which ordering this round took
			}
		}
		if bk.Status == booking.StatusConfirmed && seated != 1 {
			t.Fatalf("round %d: confirmed %d times: %+v", i, seated, trail)
		}
		want := 1 // the booking's seat, or the other customer's
		if variant != 3 && bk.Status != booking.StatusConfirmed {
			want = 0
		}
		if got := s.relSeats(slot); got != want {
			t.Fatalf("round %d: slot booked %d, want %d", i, got, want)
		}
		mysqltest.CheckInvariant(t, s.store)
	}
	t.Logf("outcomes over %d rounds: %v", rounds, outcomes)
	if outcomes["refunded"] < rounds/4 {
		t.Fatalf("the no-seat rounds did not refund: %v", outcomes)
	}
}

func TestConcurrentReleaseRuns(t *testing.T) {
	t.Parallel()
	for _, runs := range []int{2, 5} {
		t.Run(fmt.Sprintf("%d runs", runs), func(t *testing.T) {
			t.Parallel()
			srv, cl := relWithCLS(t)
			s := newSystem(t, cl)
			ctx := context.Background()
			const holds = 40
			slots := []int64{s.slot(30*time.Hour, holds/2, 5000), s.slot(32*time.Hour, holds/2, 5000)}
			ids := make([]int64, holds)
			for i := range ids {
				// A quarter with a WeChat order to close, the rest whose prepay failed.
				if i%4 == 0 {
					ids[i] = s.relExpiredHold(fmt.Sprintf("o-conc-%d", i), slots[i%2])
				} else {
					ids[i] = s.relStoreHold(fmt.Sprintf("o-conc-%d", i), slots[i%2])
				}
			}
			// Each run is its own SCF instance: its own pool and WeChat client.
			envs := make([]*instance.Env, runs)
			for i := range envs {
				envs[i] = &instance.Env{Getenv: s.apiEnv.Getenv, Log: s.apiEnv.Log, AuditOut: s.audit}
				t.Cleanup(func() { envs[i].Close() })
			}
			sums := make([]relSummary, runs)
			errs := make([]error, runs)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range envs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					sums[i], errs[i] = relRunEnv(ctx, envs[i])
				}()
			}
			close(start)
			wg.Wait()
			released := 0
			for i := range sums {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				released += sums[i].Released
			}
			if released != holds {
				t.Fatalf("runs released %d in all (%+v), want %d", released, sums, holds)
			}
			for _, id := range ids {
				trail, _ := s.store.BookingAudit(ctx, id)
				n := 0
				for _, r := range trail {
					if r.Event == booking.EventRelease {
						n++
					}
				}
				if n != 1 || s.status(id) != "expired" {
					t.Fatalf("booking %d: %s with %d release records", id, s.status(id), n)
				}
			}
			for _, sl := range slots {
				if s.relSeats(sl) != 0 {
					t.Fatalf("slot %d: booked %d after every hold was released", sl, s.relSeats(sl))
				}
			}
			mysqltest.CheckInvariant(t, s.store)

			// Overlapping runs may ship a record twice (same audit_id); one more run
			// ships whatever is left, and nothing is lost.
			s.relRun(ctx)
			if s.relUnshipped() != 0 {
				t.Fatalf("%d records left unshipped", s.relUnshipped())
			}
			relCheckShipped(t, s, srv, 0)
		})
	}
}

func TestAuditWaitsInMySQLWhileCLSIsDown(t *testing.T) {
	t.Parallel()
	srv, cl := relWithCLS(t)
	s := newSystem(t, cl)
	ctx := context.Background()
	slot := s.slot(30*time.Hour, 5, 5000)
	srv.SetDown(true)

	waiting := 0
	for run := range 3 {
		s.relExpiredHold(fmt.Sprintf("o-down-%d", run), slot)
		off := len(s.logs.String())
		if sum := s.relRun(ctx); sum != (relSummary{Released: 1}) {
			t.Fatalf("run %d while CLS is down: %+v", run, sum)
		}
		n := s.relUnshipped()
		if n <= waiting {
			t.Fatalf("run %d: %d records wait, before %d", run, n, waiting)
		}
		waiting = n
		failed := relLinesWith(s.relLogsSince(off), "audit shipping to CLS failed")
		if len(failed) != 1 || failed[0]["level"] != "WARN" || relNum(failed[0]["unshipped"]) != int64(n) {
			t.Fatalf("run %d: want one line about the failed shipping with unshipped=%d, got %v", run, n, failed)
		}
	}
	if len(srv.Logs()) != 0 || s.audit.String() != "" {
		t.Fatalf("records reached CLS (%d) or stdout (%q) while CLS was down", len(srv.Logs()), s.audit.String())
	}

	srv.SetDown(false)
	if sum := s.relRun(ctx); sum != (relSummary{Audited: waiting}) {
		t.Fatalf("run after CLS came back: %+v, want audited %d", sum, waiting)
	}
	relCheckShipped(t, s, srv, 1)
	mysqltest.CheckInvariant(t, s.store)
}

// TestAuditShippedAfterACrash covers the two crashes around shipping: the run dies
// while it uploads (nothing accepted: the next run ships the records), and it dies
// after CLS accepted them but before they were marked (the next run ships them
// again, and the duplicate is the same audit_id with the same fields).
func TestAuditShippedAfterACrash(t *testing.T) {
	t.Parallel()
	srv, cl := relWithCLS(t)
	s := newSystem(t, cl)
	slot := s.slot(30*time.Hour, 5, 5000)
	id := s.relExpiredHold("o-crash", slot)

	// The invocation is killed while the upload is in flight.
	ctx, kill := context.WithCancel(context.Background())
	var once sync.Once
	srv.SetHook(func(r *http.Request) error {
		once.Do(kill)
		<-r.Context().Done()
		return nil
	})
	sum := s.relRun(ctx)
	srv.SetHook(nil)
	if sum.Released != 1 || sum.Audited != 0 || s.status(id) != "expired" {
		t.Fatalf("killed run: %+v, booking %s", sum, s.status(id))
	}
	if s.relUnshipped() != 2 || len(srv.Logs()) != 0 {
		t.Fatalf("after the kill: %d unshipped, %d at CLS", s.relUnshipped(), len(srv.Logs()))
	}
	// Committed by another function, never shipped by it.
	if _, err := s.store.ChangeStatus(context.Background(), relCheckedInChange(t, s, slot)); err != nil {
		t.Fatal(err)
	}

	if sum := s.relRun(context.Background()); sum != (relSummary{Audited: 4}) { // 2 left by the kill, 2 never shipped
		t.Fatalf("next run: %+v", sum)
	}
	relCheckShipped(t, s, srv, 1)

	// Accepted by CLS, then the run died before marking: shipped again, same id.
	recs, _ := s.relAuditTrail()
	dup := recs[len(recs)-1]
	if _, err := s.store.SQL().Exec(`UPDATE t_audit SET shipped_at = NULL WHERE audit_id = ?`, dup.ID); err != nil {
		t.Fatal(err)
	}
	if sum := s.relRun(context.Background()); sum != (relSummary{Audited: 1}) {
		t.Fatalf("run after the lost mark: %+v", sum)
	}
	var copies []clstest.Log
	for _, l := range srv.Logs() {
		if l.Get(cls.KeyAuditID) == strconv.FormatInt(dup.ID, 10) {
			copies = append(copies, l)
		}
	}
	if len(copies) != 2 || fmt.Sprint(copies[0].Contents) != fmt.Sprint(copies[1].Contents) {
		t.Fatalf("duplicate delivery of %d: %+v", dup.ID, copies)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// changeToCheckedIn books, confirms (free slot) and checks in a booking through
// the store only, leaving two records (reserve, checkin) no function shipped.
func relCheckedInChange(t *testing.T, s *system, _ int64) booking.Change {
	t.Helper()
	free := s.slot(31*time.Hour, 1, 0)
	id, a := s.reserve("o-crash-free", free)
	if id == 0 {
		t.Fatalf("reserve free slot: %d %s", a.Status, a.Body)
	}
	return booking.Change{BookingID: id, From: booking.StatusConfirmed, To: booking.StatusCompleted,
		Event: booking.EventCheckIn, Actor: booking.ActorSalon, Reason: "checked in"}
}

func TestAuditStaysInMySQLWithoutCLS(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(30*time.Hour, 5, 5000)
	for run := range 2 {
		s.relExpiredHold(fmt.Sprintf("o-nocls-%d", run), slot)
		off := len(s.logs.String())
		if sum := s.relRun(context.Background()); sum != (relSummary{Released: 1}) {
			t.Fatalf("run %d: %+v", run, sum)
		}
		lines := relLinesWith(s.relLogsSince(off), "CLS is not configured")
		want := int64(2 * (run + 1)) // a reserve and a release record per run
		if len(lines) != 1 || relNum(lines[0]["unshipped"]) != want {
			t.Fatalf("run %d: want one line saying CLS is not configured with unshipped=%d, got %v", run, want, lines)
		}
	}
	if s.relUnshipped() != 4 || s.audit.String() != "" {
		t.Fatalf("%d unshipped, stdout %q", s.relUnshipped(), s.audit.String())
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestReleaseDeletesWhatIsKeptElsewhere: the release run deletes the audit
// records CLS accepted more than AUDIT_RETENTION_DAYS (180) ago and the
// notifications finished more than 30 days ago, in batches of 500 (1,201
// records take three), says how many in its summary, and keeps every
// unshipped record and every pending notification however old, and
// everything younger.
func TestReleaseDeletesWhatIsKeptElsewhere(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	db := s.store.SQL()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// 1,201 old shipped records, 3 old unshipped ones, 2 shipped 179 days ago.
	for i := range 1201 {
		exec(`INSERT INTO t_audit (event, actor, created_at, shipped_at) VALUES ('reserve', 'customer',
			UTC_TIMESTAMP(6) - INTERVAL 200 DAY, UTC_TIMESTAMP(6) - INTERVAL 190 DAY + INTERVAL ? SECOND)`, i)
	}
	for range 3 {
		exec(`INSERT INTO t_audit (event, actor, created_at) VALUES ('old-unshipped', 'customer', UTC_TIMESTAMP(6) - INTERVAL 400 DAY)`)
	}
	for range 2 {
		exec(`INSERT INTO t_audit (event, actor, created_at, shipped_at) VALUES ('young', 'customer',
			UTC_TIMESTAMP(6) - INTERVAL 179 DAY, UTC_TIMESTAMP(6) - INTERVAL 179 DAY)`)
	}
	notif := func(book int, status string, daysAgo int) {
		exec(`INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
			VALUES (?, 'confirmed', 'o-old', ?, UTC_TIMESTAMP(6) - INTERVAL ? DAY, UTC_TIMESTAMP(6) - INTERVAL ? DAY)`, book, status, daysAgo, daysAgo)
	}
	for i, st := range []string{"sent", "refused", "failed", "off"} {
		notif(100+i, st, 31)
	}
	notif(200, "pending", 90)
	notif(201, "sent", 29)

	if sum := s.relRun(context.Background()); sum != (relSummary{AuditDeleted: 1201, NotificationsDeleted: 4}) {
		t.Fatalf("first run: %+v, want 1201 audit records and 4 notifications deleted", sum)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM t_audit WHERE event = 'old-unshipped' AND shipped_at IS NULL`); n != 3 {
		t.Errorf("%d old unshipped records left, want all 3", n)
	}
	if n := count(`SELECT COUNT(*) FROM t_audit WHERE event IN ('young', 'reserve')`); n != 2 {
		t.Errorf("%d shipped records left, want the 2 young ones", n)
	}
	if n := count(`SELECT COUNT(*) FROM t_notification`); n != 2 {
		t.Errorf("%d notifications left, want the pending and the young one", n)
	}
	if sum := s.relRun(context.Background()); sum != (relSummary{}) {
		t.Fatalf("second run: %+v, want nothing more deleted", sum)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestReleaseDeletesOldSignIns: a stranger trying random names through the
// console leaves one failure and one name row per name, and the release run
// deletes those a day old (the summary and its log line say how many) and
// keeps the younger ones.
func TestReleaseDeletesOldSignIns(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	db := s.store.SQL()
	for i := range 12 {
		resp := s.consoleForm("/admin/login", "", url.Values{"name": {"random-" + strconv.Itoa(i)}, "password": {"a guess"}})
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("sign-in %d: %d", i, resp.StatusCode)
		}
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if f, n := count(`SELECT COUNT(*) FROM t_signin_failure`), count(`SELECT COUNT(*) FROM t_signin_name`); f != 12 || n != 12 {
		t.Fatalf("%d failures and %d names recorded, want 12 of each", f, n)
	}
	// Ten of the names were tried 25 hours ago, two 23 hours ago.
	for _, q := range []string{
		`UPDATE t_signin_failure SET failed_at = failed_at - INTERVAL 25 HOUR WHERE name NOT IN ('random-10', 'random-11')`,
		`UPDATE t_signin_name SET last_at = last_at - INTERVAL 25 HOUR WHERE name NOT IN ('random-10', 'random-11')`,
		`UPDATE t_signin_failure SET failed_at = failed_at - INTERVAL 23 HOUR WHERE name IN ('random-10', 'random-11')`,
		`UPDATE t_signin_name SET last_at = last_at - INTERVAL 23 HOUR WHERE name IN ('random-10', 'random-11')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	offset := len(s.logs.String())
	if sum := s.relRun(context.Background()); sum != (relSummary{SigninsDeleted: 20}) {
		t.Fatalf("run: %+v, want 20 sign-in records deleted", sum)
	}
	if lines := relLinesWith(s.relLogsSince(offset), "release run"); len(lines) != 1 || relNum(lines[0]["signinsDeleted"]) != 20 {
		t.Fatalf("the run's log line: %v", lines)
	}
	if f, n := count(`SELECT COUNT(*) FROM t_signin_failure`), count(`SELECT COUNT(*) FROM t_signin_name`); f != 2 || n != 2 {
		t.Fatalf("%d failures and %d names left, want the 2 young ones of each", f, n)
	}
	if sum := s.relRun(context.Background()); sum != (relSummary{}) {
		t.Fatalf("second run: %+v, want nothing more deleted", sum)
	}
}

// TestReleaseLogLineCarriesTheSummary: the release run's log line carries
// every count of the timer's answer, under the answer's names and with its
// values, and nothing else but the line's own fields.
func TestReleaseLogLineCarriesTheSummary(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	// Something to count: audit records and a notification retention deletes.
	for i := range 3 {
		if _, err := s.store.SQL().Exec(`INSERT INTO t_audit (event, actor, created_at, shipped_at) VALUES ('reserve', 'customer',
			UTC_TIMESTAMP(6) - INTERVAL 400 DAY, UTC_TIMESTAMP(6) - INTERVAL 390 DAY + INTERVAL ? SECOND)`, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.store.SQL().Exec(`INSERT INTO t_notification (book_id, kind, openid, status, next_at, created_at)
		VALUES (1, 'confirmed', 'o-old', 'sent', UTC_TIMESTAMP(6) - INTERVAL 40 DAY, UTC_TIMESTAMP(6) - INTERVAL 40 DAY)`); err != nil {
		t.Fatal(err)
	}
	off := len(s.logs.String())
	out, err := Release(s.apiEnv)(context.Background(), json.RawMessage(relTimerEvent))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	var answer map[string]any
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	if answer["auditDeleted"] != 3.0 || answer["notificationsDeleted"] != 1.0 {
		t.Fatalf("answer %s: want 3 audit records and 1 notification deleted", raw)
	}
	var line relLogLine
	for _, l := range s.relLogsSince(off) {
		if l["msg"] == "release run" {
			line = l
		}
	}
	if line == nil {
		t.Fatalf("no release run log line:\n%s", s.logs.String()[off:])
	}
	own := map[string]bool{"time": true, "level": true, "msg": true, "function": true, "duration_ms": true}
	for k, v := range answer {
		if line[k] != v {
			t.Errorf("log line %s = %v, the answer says %v", k, line[k], v)
		}
	}
	for k := range line {
		if _, ok := answer[k]; !ok && !own[k] {
			t.Errorf("log line has %s = %v, which the answer has not", k, line[k])
		}
	}
	if len(answer) != 10 {
		t.Errorf("answer %s: want the ten counts", raw)
	}
}

func TestReconcileReportsDriftAndRepairsNothing(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	ctx := context.Background()
	slot := s.slot(30*time.Hour, 5, 5000)
	other := s.slot(31*time.Hour, 5, 5000)
	s.reserve("o-drift", slot)
	s.reserve("o-nodrift", other)
	if _, err := s.store.SQL().Exec(`UPDATE t_slot SET booked = booked + 2 WHERE slot_id = ?`, slot); err != nil {
		t.Fatal(err)
	}
	off := len(s.logs.String())
	s.relRun(ctx)

	recs, _ := s.relAuditTrail()
	var drifts []booking.AuditRecord
	for _, r := range recs {
		if r.Event == booking.EventDrift {
			drifts = append(drifts, r)
		}
	}
	if len(drifts) != 1 || drifts[0].SlotID != slot || drifts[0].BookingID != 0 || drifts[0].Actor != "system" ||
		drifts[0].Reason != "booked=3 holding=1 capacity=5" {
		t.Fatalf("drift records: %+v", drifts)
	}
	lines := relLinesWith(s.relLogsSince(off), "slot drift")
	if len(lines) != 1 || lines[0]["level"] != "ERROR" || relNum(lines[0]["slot_id"]) != slot || relNum(lines[0]["booked"]) != 3 || relNum(lines[0]["holding"]) != 1 {
		t.Fatalf("drift log lines: %v", lines)
	}
	if s.relSeats(slot) != 3 || s.relSeats(other) != 1 {
		t.Fatalf("the run touched the counters: %d, %d", s.relSeats(slot), s.relSeats(other))
	}

	// Undo the planted drift so the invariant check sees the real state.
	if _, err := s.store.SQL().Exec(`UPDATE t_slot SET booked = booked - 2 WHERE slot_id = ?`, slot); err != nil {
		t.Fatal(err)
	}
	mysqltest.CheckInvariant(t, s.store)
}
