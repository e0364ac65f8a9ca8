package handler

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/wechatpay/wxpaysim"
)

// The payment tests drive the whole product against the WeChat Pay simulator over
// real HTTP: the simulator's notifications reach the paynotify function through
// the local gateway, exactly as WeChat's reach it through API Gateway.

// notifyRelay stands between the simulator and the gateway's /pay/notify. While it
// drops, the customer has paid at WeChat but the notification does not arrive
// (WeChat's delivery failed), which is how a test makes a payment the product has
// not heard of yet.
type notifyRelay struct {
	t       *testing.T
	srv     *httptest.Server
	target  string
	drop    atomic.Bool
	dropped atomic.Int32
}

func (rl *notifyRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rl.drop.Load() {
		rl.dropped.Add(1)
		http.Error(w, `{"code":"FAIL","message":"notifyRelay drops"}`, http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, rl.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// newRelayedSystem is newSystem with the payment notify URL pointing at a notifyRelay
// in front of the gateway.
func newRelayedSystem(t *testing.T) (*system, *notifyRelay) {
	rl := &notifyRelay{t: t}
	rl.srv = httptest.NewServer(rl)
	t.Cleanup(rl.srv.Close)
	s := newSystem(t, func(env map[string]string) {
		rl.target = env["WECHATPAY_NOTIFY_URL"]
		env["WECHATPAY_NOTIFY_URL"] = rl.srv.URL + "/pay/notify"
	})
	return s, rl
}

// svc is every use case over the functions' store, as the test sets up what
// a request will find.
func (s *system) svc() *service.Service {
	s.t.Helper()
	svc, err := s.apiEnv.Service()
	if err != nil {
		s.t.Fatal(err)
	}
	return svc
}

// release runs the timer function once, as the scheduler would.
func (s *system) runRelease() {
	s.t.Helper()
	if _, err := s.svc().Release(context.Background()); err != nil {
		s.t.Fatalf("release run: %v", err)
	}
}

func (s *system) findBk(id int64) *booking.Booking {
	s.t.Helper()
	b, err := s.store.FindBooking(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

func (s *system) slotBooked(slot int64) int {
	s.t.Helper()
	sl, err := s.store.FindSlot(context.Background(), slot)
	if err != nil {
		s.t.Fatal(err)
	}
	return sl.Booked
}

// events returns a booking's audit events, oldest first.
func (s *system) auditEvents(id int64) []string {
	s.t.Helper()
	recs, err := s.store.BookingAudit(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Event
	}
	return out
}

func countEvent(events []string, event string) int {
	n := 0
	for _, e := range events {
		if e == event {
			n++
		}
	}
	return n
}

// paySnap is everything a forged notification must not change.
type paySnap struct {
	Status string
	Booked int
	Audits int
	Refund string
}

func (s *system) paySnapshot(id int64) paySnap {
	s.t.Helper()
	b := s.findBk(id)
	sn := paySnap{Status: b.Status.String(), Booked: s.slotBooked(b.SlotID), Audits: s.countRows("t_audit")}
	if b.Refund != nil {
		sn.Refund = string(b.Refund.Status)
	}
	return sn
}

// post sends a raw notification through the gateway and answers what WeChat would see.
func (s *system) postRaw(path string, headers map[string]string, body []byte) answer {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.gw.URL+path, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return s.send(req)
}

// mineOf returns the customer's booking id as GET /bookings/mine shows it.
func (s *system) mineOf(openid string, id int64) map[string]any {
	s.t.Helper()
	return s.kit.Mine(s.token(openid), id)
}

func (s *system) mustReservePaid(openid string, slot int64, headers ...string) int64 {
	s.t.Helper()
	id, a := s.reserve(openid, slot, headers...)
	if id == 0 {
		s.t.Fatalf("reserve %s slot %d: %d %s", openid, slot, a.Status, a.Body)
	}
	return id
}

func (s *system) cancelAs(openid string, id int64) answer {
	s.t.Helper()
	return s.call("POST", "/bookings/"+itoa64(id)+"/cancel", s.token(openid), nil)
}

// checkMoney is the payment half of the invariant: a paid order at WeChat either
// holds its seat (a no-show's too) or is refunded in full, never both, except
// that a customer's late cancel keeps the deposit; no refund exists without a
// payment; no order is refunded twice.
func checkMoney(t *testing.T, s *system) {
	t.Helper()
	refunds := map[string][]wxpaysim.Refund{}
	for _, rf := range s.sim.Refunds() {
		refunds[rf.OutTradeNo] = append(refunds[rf.OutTradeNo], rf)
	}
	for _, o := range s.sim.Orders() {
		id, ok := booking.ParseOutTradeNo(o.OutTradeNo)
		if !ok {
			t.Errorf("order %s names no booking", o.OutTradeNo)
			continue
		}
		b := s.findBk(id)
		rfs := refunds[o.OutTradeNo]
		delete(refunds, o.OutTradeNo)
		paid := o.State == wxpaysim.StateSuccess
		holds := b.Status.HoldsSeat()
		switch {
		case len(rfs) > 1:
			t.Errorf("booking %d: %d refunds at WeChat", id, len(rfs))
		case !paid && (len(rfs) > 0 || b.Refund != nil):
			t.Errorf("booking %d: refund without a payment (order %s)", id, o.State)
		case paid && holds && (len(rfs) > 0 || b.Refund != nil):
			t.Errorf("booking %d: both a seat (%s) and a refund", id, b.Status)
		case paid && !holds && b.Status != booking.StatusPending && b.Refund == nil &&
			countEvent(s.auditEvents(id), booking.EventLateCancel) != 1:
			// Only the customer's late cancel keeps the deposit of a booking without a seat.
			t.Errorf("booking %d: paid, %s, and no refund", id, b.Status)
		case len(rfs) == 1 && (rfs[0].Amount != o.Total || rfs[0].OutRefundNo != booking.OutRefundNo(id)):
			t.Errorf("booking %d: refund %s of %d, order total %d", id, rfs[0].OutRefundNo, rfs[0].Amount, o.Total)
		}
	}
	for no := range refunds {
		t.Errorf("refund for unknown order %s", no)
	}
}

// TestDuplicateAndConcurrentNotifications: of a notification delivered twice, and
// of ten copies delivered at once, exactly one confirms the booking; every copy is
// answered 204.
func TestDuplicateAndConcurrentNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rl := newRelayedSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)

	// Sequential duplicate.
	first := s.mustReservePaid("o-dup", slot)
	rl.drop.Store(false)
	if err := s.sim.Pay(ctx, booking.OutTradeNo(first)); err != nil {
		t.Fatal(err)
	}
	if err := s.sim.Notify(ctx, booking.OutTradeNo(first)); err != nil {
		t.Fatalf("duplicate not answered 2xx: %v", err)
	}
	if st := s.status(first); st != "confirmed" {
		t.Fatalf("after duplicate: %s", st)
	}
	if n := countEvent(s.auditEvents(first), booking.EventConfirm); n != 1 {
		t.Fatalf("%d confirm records after a duplicate, want 1", n)
	}

	// Ten at once, racing for the 0 -> 1 change itself: the payment is made while
	// the notifyRelay drops, then every copy is released together.
	id := s.mustReservePaid("o-race", slot)
	no := booking.OutTradeNo(id)
	rl.drop.Store(true)
	if err := s.sim.Pay(ctx, no); err == nil {
		t.Fatal("the dropped delivery was reported delivered")
	}
	if st := s.status(id); st != "pending_payment" {
		t.Fatalf("before any delivery: %s", st)
	}
	rl.drop.Store(false)
	if err := s.sim.NotifyConcurrently(ctx, no, 10); err != nil {
		t.Fatalf("not every copy answered 2xx: %v", err)
	}
	if st := s.status(id); st != "confirmed" {
		t.Fatalf("after concurrent copies: %s", st)
	}
	if n := countEvent(s.auditEvents(id), booking.EventConfirm); n != 1 {
		t.Fatalf("%d confirm records after 10 concurrent copies, want 1", n)
	}
	if o, _ := s.sim.Order(no); o.Notified != 10 {
		t.Fatalf("%d copies answered 2xx, want 10", o.Notified)
	}
	b := s.findBk(id)
	if b.TransactionID == "" || b.PaidAt == nil {
		t.Fatalf("payment not recorded: %+v", b)
	}
	if s.slotBooked(slot) != 2 {
		t.Fatalf("booked %d, want 2", s.slotBooked(slot))
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestLatePayment: a payment that arrives after the hold was released re-seats the
// booking when it can, and is refunded in full when it cannot.
func TestLatePayment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// expired reserves and lets the timer release the hold.
	expired := func(s *system, openid string, slot int64) int64 {
		id := s.mustReservePaid(openid, slot)
		mysqltest.ExpireHold(t, s.store, id)
		s.runRelease()
		if st := s.status(id); st != "expired" {
			t.Fatalf("after release: %s", st)
		}
		return id
	}
	refunded := func(t *testing.T, s *system, openid string, id int64, status string) {
		t.Helper()
		if st := s.status(id); st != status {
			t.Fatalf("after late payment without a seat: %s, want %s", st, status)
		}
		rfs := s.sim.Refunds()
		if len(rfs) != 1 || rfs[0].OutRefundNo != booking.OutRefundNo(id) || rfs[0].Amount != 5000 || rfs[0].Total != 5000 {
			t.Fatalf("refunds at WeChat: %+v", rfs)
		}
		j := s.mineOf(openid, id)
		rf, _ := j["refund"].(map[string]any)
		if j["status"] != status || rf == nil || rf["status"] != "processing" || rf["amountFen"].(float64) != 5000 {
			t.Fatalf("booking JSON: %v", j)
		}
		if countEvent(s.auditEvents(id), booking.EventLatePayment)+countEvent(s.auditEvents(id), booking.EventConfirm) != 0 {
			t.Fatalf("a refunded payment was also seated: %v", s.auditEvents(id))
		}
	}

	t.Run("seat free", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot := s.slot(26*time.Hour, 1, 5000)
		id := expired(s, "o-late", slot)
		if err := s.sim.PayLate(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		if st := s.status(id); st != "confirmed" {
			t.Fatalf("late payment with a free seat: %s", st)
		}
		if n := countEvent(s.auditEvents(id), booking.EventLatePayment); n != 1 {
			t.Fatalf("%d late_payment records: %v", n, s.auditEvents(id))
		}
		if s.slotBooked(slot) != 1 || len(s.sim.Refunds()) != 0 {
			t.Fatalf("booked %d, refunds %v", s.slotBooked(slot), s.sim.Refunds())
		}
		// WeChat delivers again: still one seat, no refund.
		if err := s.sim.Notify(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		if s.slotBooked(slot) != 1 || len(s.sim.Refunds()) != 0 || countEvent(s.auditEvents(id), booking.EventLatePayment) != 1 {
			t.Fatal("redelivery changed something")
		}
		mysqltest.CheckInvariant(t, s.store)
		checkMoney(t, s)
	})

	t.Run("no seat", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot := s.slot(26*time.Hour, 1, 5000)
		id := expired(s, "o-late", slot)
		other := s.mustReservePaid("o-other", slot) // takes the freed seat
		if err := s.sim.PayLate(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		refunded(t, s, "o-late", id, "expired")
		if s.slotBooked(slot) != 1 || s.status(other) != "pending_payment" {
			t.Fatalf("booked %d, other %s", s.slotBooked(slot), s.status(other))
		}
		// A redelivery asks for nothing more.
		if err := s.sim.Notify(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		refunded(t, s, "o-late", id, "expired")
		mysqltest.CheckInvariant(t, s.store)
		checkMoney(t, s)
	})

	t.Run("customer holds another booking", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot := s.slot(26*time.Hour, 2, 5000)
		later := s.slot(50*time.Hour, 2, 5000)
		id := expired(s, "o-late", slot)
		again := s.mustReservePaid("o-late", later)
		if err := s.sim.PayLate(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		refunded(t, s, "o-late", id, "expired")
		if s.slotBooked(slot) != 0 || s.status(again) != "pending_payment" || s.slotBooked(later) != 1 {
			t.Fatalf("booked %d/%d, other booking %s", s.slotBooked(slot), s.slotBooked(later), s.status(again))
		}
		mysqltest.CheckInvariant(t, s.store)
		checkMoney(t, s)
	})

	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot := s.slot(26*time.Hour, 2, 5000)
		id := s.mustReservePaid("o-late", slot)
		if a := s.cancelAs("o-late", id); a.Status != 200 {
			t.Fatalf("cancel: %d %s", a.Status, a.Body)
		}
		if err := s.sim.PayLate(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		refunded(t, s, "o-late", id, "cancelled")
		if s.slotBooked(slot) != 0 {
			t.Fatalf("booked %d", s.slotBooked(slot))
		}
		mysqltest.CheckInvariant(t, s.store)
		checkMoney(t, s)
	})
}

// forged lists notifications that must fail verification, each built from a
// genuine one by one change.
func forgedNotifications(t *testing.T, s *system, no string) map[string]func() (map[string]string, []byte) {
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	build := func(m func(*wxpaysim.NotificationParts)) func() (map[string]string, []byte) {
		return func() (map[string]string, []byte) {
			h, body, err := s.sim.BuildPaymentNotification(no, m)
			if err != nil {
				t.Fatal(err)
			}
			return h, body
		}
	}
	genuine := build(func(*wxpaysim.NotificationParts) {})
	return map[string]func() (map[string]string, []byte){
		"tampered body byte": func() (map[string]string, []byte) {
			h, body := genuine()
			i := bytes.Index(body, []byte(`"ciphertext":"`)) + len(`"ciphertext":"`) + 5
			body[i] ^= 0x01
			return h, body
		},
		"body re-marshalled": func() (map[string]string, []byte) {
			h, body := genuine()
			var out bytes.Buffer
			json.Indent(&out, body, "", " ")
			return h, out.Bytes()
		},
		"signed by another key": build(func(p *wxpaysim.NotificationParts) { p.SigningKey = otherKey }),
		"encrypted with another APIv3 key": build(func(p *wxpaysim.NotificationParts) {
			p.APIv3Key = []byte("0123456789abcdef0123456789abcdef")
		}),
		"unknown serial":   build(func(p *wxpaysim.NotificationParts) { p.Serial = "PUB_KEY_ID_0100999999999999999999999999" }),
		"stale timestamp":  build(func(p *wxpaysim.NotificationParts) { p.Timestamp = time.Now().Add(-301 * time.Second).Unix() }),
		"future timestamp": build(func(p *wxpaysim.NotificationParts) { p.Timestamp = time.Now().Add(10 * time.Minute).Unix() }),
		"SIGNTEST probe": build(func(p *wxpaysim.NotificationParts) {
			p.Signature = "WECHATPAY/SIGNTEST/" + base64.StdEncoding.EncodeToString([]byte("probe"))
		}),
		"GCM nonce of 11 bytes":  build(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "abcdefghijk" }),
		"GCM nonce of 16 bytes":  build(func(p *wxpaysim.NotificationParts) { p.GCMNonce = "abcdefghijklmnop" }),
		"SM2 signature type":     build(func(p *wxpaysim.NotificationParts) { p.SignatureType = "WECHATPAY2-SM2-WITH-SM3" }),
		"other algorithm":        build(func(p *wxpaysim.NotificationParts) { p.Algorithm = "AEAD_AES_128_GCM" }),
		"refund event at notify": build(func(p *wxpaysim.NotificationParts) { p.EventType = "REFUND.SUCCESS" }),
		"no signature header": func() (map[string]string, []byte) {
			h, body := genuine()
			delete(h, "Wechatpay-Signature")
			return h, body
		},
		"no headers at all": func() (map[string]string, []byte) {
			_, body := genuine()
			return map[string]string{"Content-Type": "application/json"}, body
		},
		"empty body": func() (map[string]string, []byte) {
			h, _ := genuine()
			return h, nil
		},
	}
}

// TestForgedNotificationsChangeNothing sends every forged variant through the
// real gateway and handler: each is answered with WeChat's FAIL body and changes
// neither the booking, nor the slot, nor the audit trail.
func TestForgedNotificationsChangeNothing(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)
	id := s.mustReservePaid("o-forged", slot)
	no := booking.OutTradeNo(id)
	before := s.paySnapshot(id)

	for name, build := range forgedNotifications(t, s, no) {
		h, body := build()
		a := s.postRaw("/pay/notify", h, body)
		msg, _ := a.JSON["message"].(string)
		if a.Status < 400 || a.code() != "FAIL" || msg == "" {
			t.Errorf("%s: answered %d %s, want 4xx/5xx FAIL", name, a.Status, a.Body)
		}
		if after := s.paySnapshot(id); after != before {
			t.Errorf("%s changed %+v into %+v", name, before, after)
		}
	}
	// A genuine payment notification sent to the refund URL is not a refund.
	h, body, err := s.sim.BuildPaymentNotification(no)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.postRaw("/pay/refund-notify", h, body); a.Status < 400 || a.code() != "FAIL" {
		t.Errorf("payment at the refund URL: %d %s", a.Status, a.Body)
	}
	if after := s.paySnapshot(id); after != before {
		t.Errorf("payment at the refund URL changed %+v into %+v", before, after)
	}

	// The variants failed for their change, not for anything else: the genuine
	// notification they were made from is accepted.
	h, body, err = s.sim.BuildPaymentNotification(no)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.postRaw("/pay/notify", h, body); a.Status != http.StatusNoContent {
		t.Fatalf("genuine notification: %d %s", a.Status, a.Body)
	}
	if st := s.status(id); st != "confirmed" {
		t.Fatalf("genuine notification left %s", st)
	}
	if strings.Contains(s.logs.String(), "request: &") {
		t.Error("the SDK's request dump reached the log")
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestVerifiedMismatchIsAuditedNotApplied: a verified notification that does not
// match its booking changes no status, is audited and logged as an error with the
// reason, and is answered 204 (a retry would not make it match).
func TestVerifiedMismatchIsAuditedNotApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)
	id := s.mustReservePaid("o-mismatch", slot)
	no := booking.OutTradeNo(id)
	tx := func(f func(*wxpaysim.TransactionResource)) func(*wxpaysim.NotificationParts) {
		return func(p *wxpaysim.NotificationParts) { f(p.Resource.(*wxpaysim.TransactionResource)) }
	}
	cases := []struct {
		name, reason string
		mutate       func(*wxpaysim.NotificationParts)
	}{
		{"amount", "amount 1", tx(func(r *wxpaysim.TransactionResource) { r.Amount.Total = 1 })},
		{"appid", "appid", tx(func(r *wxpaysim.TransactionResource) { r.AppID = "wx00000000other" })},
		{"mchid", "mchid", tx(func(r *wxpaysim.TransactionResource) { r.MchID = "1900000999" })},
		{"trade state", "trade_state", tx(func(r *wxpaysim.TransactionResource) { r.TradeState = "NOTPAY" })},
		{"unknown order", "unknown out_trade_no", tx(func(r *wxpaysim.TransactionResource) { r.OutTradeNo = "BK999999999999" })},
	}
	for _, c := range cases {
		before := s.paySnapshot(id)
		h, body, err := s.sim.BuildPaymentNotification(no, c.mutate)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.sim.Deliver(ctx, s.gw.URL+"/pay/notify", h, body); err != nil {
			t.Errorf("%s: %v, want 204", c.name, err)
		}
		after := s.paySnapshot(id)
		if after.Status != before.Status || after.Booked != before.Booked || after.Audits != before.Audits+1 {
			t.Errorf("%s: %+v -> %+v, want one more audit record and nothing else", c.name, before, after)
		}
		recs, err := s.store.UnshippedAudit(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		last := recs[len(recs)-1]
		if last.Event != booking.EventRejected || !strings.Contains(last.Reason, c.reason) {
			t.Errorf("%s: last audit record %+v", c.name, last)
		}
	}
	var rejected int
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, "payment notification rejected") && strings.Contains(line, `"reason"`) {
			rejected++
		}
	}
	if rejected != len(cases) {
		t.Errorf("%d error log lines for rejected notifications, want %d:\n%s", rejected, len(cases), s.logs.String())
	}
	if len(s.sim.Refunds()) != 0 {
		t.Errorf("refunds for notifications that never were payments: %+v", s.sim.Refunds())
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestReplayAfterRefundRefundsOnce: WeChat delivers an old genuine notification
// again after the booking was cancelled and refunded; nothing is refunded twice.
func TestReplayAfterRefundRefundsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)
	id := s.mustReservePaid("o-replay", slot)
	no := booking.OutTradeNo(id)
	if err := s.sim.Pay(ctx, no); err != nil {
		t.Fatal(err)
	}
	oldH, oldBody, err := s.sim.BuildPaymentNotification(no)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.cancelAs("o-replay", id); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	// While the refund is processing, and again once it succeeded.
	for _, stage := range []string{"processing", "succeeded"} {
		if stage == "succeeded" {
			if err := s.sim.CompleteRefund(ctx, booking.OutRefundNo(id), wxpaysim.RefundSuccess); err != nil {
				t.Fatal(err)
			}
		}
		before := s.paySnapshot(id)
		if err := s.sim.Deliver(ctx, s.gw.URL+"/pay/notify", oldH, oldBody); err != nil {
			t.Fatalf("%s: replay not answered 2xx: %v", stage, err)
		}
		if after := s.paySnapshot(id); after != before || after.Status != "cancelled" || after.Refund != stage {
			t.Fatalf("%s: replay changed %+v into %+v", stage, before, after)
		}
		if n := len(s.sim.Refunds()); n != 1 {
			t.Fatalf("%s: %d refunds at WeChat", stage, n)
		}
	}
	if n := countEvent(s.auditEvents(id), booking.EventConfirm); n != 1 {
		t.Fatalf("%d confirm records", n)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestRefundLifecycle: cancelling a paid booking starts a refund; WeChat's
// notification finishes it as succeeded (SUCCESS) or failed (ABNORMAL), once.
func TestRefundLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 3, 5000)

	paidAndCancelled := func(openid string) int64 {
		id := s.mustReservePaid(openid, slot)
		if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
			t.Fatal(err)
		}
		a := s.cancelAs(openid, id)
		if a.Status != 200 {
			t.Fatalf("cancel: %d %s", a.Status, a.Body)
		}
		b := a.JSON["booking"].(map[string]any)
		rf, _ := b["refund"].(map[string]any)
		if b["status"] != "cancelled" || rf == nil || rf["status"] != "processing" || rf["amountFen"].(float64) != 5000 || rf["refundedAt"] != nil {
			t.Fatalf("cancel answer: %s", a.Body)
		}
		return id
	}

	ok := paidAndCancelled("o-ok")
	var found bool
	for _, rf := range s.sim.Refunds() {
		if rf.OutRefundNo == booking.OutRefundNo(ok) {
			found = rf.Status == wxpaysim.RefundProcessing && rf.Amount == 5000 && rf.OutTradeNo == booking.OutTradeNo(ok)
		}
	}
	if !found {
		t.Fatalf("refund not at WeChat: %+v", s.sim.Refunds())
	}
	if err := s.sim.CompleteRefund(ctx, booking.OutRefundNo(ok), wxpaysim.RefundSuccess); err != nil {
		t.Fatal(err)
	}
	b := s.findBk(ok)
	if b.Refund == nil || b.Refund.Status != booking.RefundSucceeded || b.Refund.RefundedAt == nil {
		t.Fatalf("after SUCCESS: %+v", b.Refund)
	}
	j := s.mineOf("o-ok", ok)
	if rf := j["refund"].(map[string]any); rf["status"] != "succeeded" || rf["refundedAt"] == nil {
		t.Fatalf("booking JSON after SUCCESS: %v", j)
	}

	// WeChat delivers the same notification again, and a conflicting one.
	before := s.paySnapshot(ok)
	if err := s.sim.CompleteRefund(ctx, booking.OutRefundNo(ok), wxpaysim.RefundSuccess); err != nil {
		t.Fatalf("duplicate refund notification: %v", err)
	}
	h, body, err := s.sim.BuildRefundNotification(booking.OutRefundNo(ok), func(p *wxpaysim.NotificationParts) {
		p.EventType = "REFUND.ABNORMAL"
		p.Resource.(*wxpaysim.RefundResource).RefundStatus = wxpaysim.RefundAbnormal
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.sim.Deliver(ctx, s.gw.URL+"/pay/refund-notify", h, body); err != nil {
		t.Fatalf("late ABNORMAL: %v", err)
	}
	if after := s.paySnapshot(ok); after != before {
		t.Fatalf("duplicate refund notifications changed %+v into %+v", before, after)
	}
	if at := s.findBk(ok).Refund.RefundedAt; !at.Equal(*b.Refund.RefundedAt) {
		t.Fatalf("refundedAt moved from %v to %v", b.Refund.RefundedAt, at)
	}

	bad := paidAndCancelled("o-abnormal")
	if err := s.sim.CompleteRefund(ctx, booking.OutRefundNo(bad), wxpaysim.RefundAbnormal); err != nil {
		t.Fatal(err)
	}
	if rf := s.findBk(bad).Refund; rf == nil || rf.Status != booking.RefundFailed {
		t.Fatalf("after ABNORMAL: %+v", rf)
	}
	if j := s.mineOf("o-abnormal", bad); j["refund"].(map[string]any)["status"] != "failed" {
		t.Fatalf("booking JSON after ABNORMAL: %v", j)
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestRefundRetriedAfterWeChatError: a refund request WeChat does not accept
// (an error, or an answer lost after WeChat acted) does not undo the cancel; the
// refund stays pending and the next release run asks again with the same refund
// number, so WeChat holds exactly one refund.
func TestRefundRetriedAfterWeChatError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		status int
		code   string
	}{
		{"500 SYSTEM_ERROR", 500, "SYSTEM_ERROR"},
		{"429 FREQUENCY_LIMITED", 429, "FREQUENCY_LIMITED"},
		{"dropped connection", wxpaysim.Drop, ""},
		{"answer lost after acting", wxpaysim.ActThenDrop, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newSystem(t)
			slot := s.slot(26*time.Hour, 2, 5000)
			id := s.mustReservePaid("o-retry", slot)
			if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
				t.Fatal(err)
			}
			s.sim.FailNext("/v3/refund", c.status, c.code, 1)
			a := s.cancelAs("o-retry", id)
			if a.Status != 200 {
				t.Fatalf("cancel: %d %s", a.Status, a.Body)
			}
			b := a.JSON["booking"].(map[string]any)
			if b["status"] != "cancelled" || b["refund"].(map[string]any)["status"] != "processing" {
				t.Fatalf("cancel answer: %s", a.Body)
			}
			if rf := s.findBk(id).Refund; rf == nil || rf.Status != booking.RefundPending {
				t.Fatalf("stored refund %+v, want pending", rf)
			}
			s.refundBackoffPasses(id)
			s.runRelease()
			rfs := s.sim.Refunds()
			if len(rfs) != 1 || rfs[0].OutRefundNo != booking.OutRefundNo(id) || rfs[0].Amount != 5000 {
				t.Fatalf("refunds at WeChat after the release run: %+v", rfs)
			}
			if rf := s.findBk(id).Refund; rf.Status != booking.RefundProcessing {
				t.Fatalf("stored refund %+v, want processing", rf)
			}
			s.runRelease()
			if n := len(s.sim.Refunds()); n != 1 {
				t.Fatalf("%d refunds after a second run", n)
			}
			mysqltest.CheckInvariant(t, s.store)
			checkMoney(t, s)
		})
	}
}

// refundBackoffPasses moves a refund's next attempt to now, as if its backoff
// had passed (the store keeps that time by the database's clock).
func (s *system) refundBackoffPasses(id int64) {
	s.t.Helper()
	if _, err := s.store.SQL().Exec(`UPDATE t_booking SET refund_next_at = UTC_TIMESTAMP(6) WHERE book_id = ?`, id); err != nil {
		s.t.Fatal(err)
	}
}

// TestRefundRefusedIsFailed: WeChat's definite refusal (4xx) marks the refund
// failed for the salon; it is not asked again.
func TestRefundRefusedIsFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)
	id := s.mustReservePaid("o-refused", slot)
	if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err != nil {
		t.Fatal(err)
	}
	s.sim.FailNext("/v3/refund", 400, "INVALID_REQUEST", 1)
	a := s.cancelAs("o-refused", id)
	if a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	b := a.JSON["booking"].(map[string]any)
	if b["status"] != "cancelled" || b["refund"].(map[string]any)["status"] != "failed" {
		t.Fatalf("cancel answer: %s", a.Body)
	}
	s.runRelease()
	if n := len(s.sim.Refunds()); n != 0 {
		t.Fatalf("a refused refund was asked again: %d refunds", n)
	}
	if !strings.Contains(s.logs.String(), "refund refused by WeChat") {
		t.Error("refusal not logged")
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestCancelPendingClosesOrder: cancelling an unpaid booking closes its WeChat
// order; when the customer paid meanwhile (the notification has not arrived), the
// cancel goes on as the cancel of a paid booking, with a full refund.
func TestCancelPendingClosesOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rl := newRelayedSystem(t)
	slot := s.slot(26*time.Hour, 2, 5000)

	id := s.mustReservePaid("o-unpaid", slot)
	a := s.cancelAs("o-unpaid", id)
	if a.Status != 200 || a.JSON["booking"].(map[string]any)["status"] != "cancelled" || a.JSON["booking"].(map[string]any)["refund"] != nil {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	if o, _ := s.sim.Order(booking.OutTradeNo(id)); o.State != wxpaysim.StateClosed {
		t.Fatalf("WeChat order %s, want CLOSED", o.State)
	}
	if err := s.sim.Pay(ctx, booking.OutTradeNo(id)); err == nil {
		t.Fatal("a closed order could still be paid")
	}

	paid := s.mustReservePaid("o-paid", slot)
	rl.drop.Store(true)
	if err := s.sim.Pay(ctx, booking.OutTradeNo(paid)); err == nil || rl.dropped.Load() == 0 {
		t.Fatalf("delivery was not dropped: %v", err)
	}
	if st := s.status(paid); st != "pending_payment" {
		t.Fatalf("before cancel: %s", st)
	}
	a = s.cancelAs("o-paid", paid)
	if a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	b := a.JSON["booking"].(map[string]any)
	rf, _ := b["refund"].(map[string]any)
	if b["status"] != "cancelled" || rf == nil || rf["status"] != "processing" || rf["amountFen"].(float64) != 5000 {
		t.Fatalf("cancel answer: %s", a.Body)
	}
	ev := s.auditEvents(paid)
	if countEvent(ev, booking.EventConfirm) != 1 || countEvent(ev, booking.EventCancel) != 1 {
		t.Fatalf("audit trail %v, want confirm then cancel", ev)
	}
	if rfs := s.sim.Refunds(); len(rfs) != 1 || rfs[0].OutRefundNo != booking.OutRefundNo(paid) || rfs[0].Amount != 5000 {
		t.Fatalf("refunds at WeChat: %+v", rfs)
	}
	// The notification arrives after all: nothing more happens.
	rl.drop.Store(false)
	if err := s.sim.Notify(ctx, booking.OutTradeNo(paid)); err != nil {
		t.Fatal(err)
	}
	if st := s.status(paid); st != "cancelled" || len(s.sim.Refunds()) != 1 {
		t.Fatalf("after the late notification: %s, %d refunds", st, len(s.sim.Refunds()))
	}
	if s.slotBooked(slot) != 0 {
		t.Fatalf("booked %d", s.slotBooked(slot))
	}
	mysqltest.CheckInvariant(t, s.store)
	checkMoney(t, s)
}

// TestPrepayOutage: when WeChat cannot be reached at reserve, the booking keeps
// its seat and answers 503; the retry with the same Idempotency-Key and
// POST /bookings/{id}/pay both name the same WeChat order.
func TestPrepayOutage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		status  int
		prepays int // successful prepay calls WeChat saw in the end
	}{
		{"500 SYSTEM_ERROR", 500, 2},
		{"dropped connection", wxpaysim.Drop, 2},
		{"answer lost after acting", wxpaysim.ActThenDrop, 3},
		{"bad signature on the answer", wxpaysim.BadSignature, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSystem(t)
			slot := s.slot(26*time.Hour, 2, 5000)
			s.sim.FailNext("/v3/pay/transactions/jsapi", c.status, "SYSTEM_ERROR", 1)
			key := []string{"Idempotency-Key", "k-outage-1"}

			a := s.call("POST", "/bookings", s.token("o-outage"), map[string]any{"slotId": slot}, key...)
			if a.Status != http.StatusServiceUnavailable || a.code() != "UPSTREAM_UNAVAILABLE" {
				t.Fatalf("reserve during outage: %d %s", a.Status, a.Body)
			}
			if n := s.countRows("t_booking"); n != 1 {
				t.Fatalf("%d bookings", n)
			}
			if s.slotBooked(slot) != 1 {
				t.Fatalf("the hold was not kept: booked %d", s.slotBooked(slot))
			}

			id, a := s.reserve("o-outage", slot, key...)
			if id == 0 || a.JSON["payment"] == nil {
				t.Fatalf("retry: %d %s", a.Status, a.Body)
			}
			if s.status(id) != "pending_payment" {
				t.Fatalf("status %s", s.status(id))
			}
			pkg1 := a.JSON["payment"].(map[string]any)["package"].(string)

			a = s.call("POST", "/bookings/"+itoa64(id)+"/pay", s.token("o-outage"), nil)
			if a.Status != 200 || a.JSON["payment"] == nil || int64(a.JSON["booking"].(map[string]any)["bookingId"].(float64)) != id {
				t.Fatalf("pay again: %d %s", a.Status, a.Body)
			}
			pkg2 := a.JSON["payment"].(map[string]any)["package"].(string)

			orders := s.sim.Orders()
			if len(orders) != 1 || orders[0].OutTradeNo != booking.OutTradeNo(id) {
				t.Fatalf("WeChat orders: %+v", orders)
			}
			ids := orders[0].PrepayIDs
			if len(ids) != c.prepays || pkg1 != "prepay_id="+ids[len(ids)-2] || pkg2 != "prepay_id="+ids[len(ids)-1] {
				t.Fatalf("packages %q, %q; prepay ids of the one order %v", pkg1, pkg2, ids)
			}
			if n := s.countRows("t_booking"); n != 1 || s.slotBooked(slot) != 1 {
				t.Fatalf("%d bookings, booked %d", n, s.slotBooked(slot))
			}
			if err := s.sim.Pay(context.Background(), booking.OutTradeNo(id)); err != nil {
				t.Fatal(err)
			}
			if s.status(id) != "confirmed" {
				t.Fatalf("after payment: %s", s.status(id))
			}
			mysqltest.CheckInvariant(t, s.store)
			checkMoney(t, s)
		})
	}
}
