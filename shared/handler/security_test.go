package handler

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/session"
	"salon/shared/wechatpay/wxpaysim"
)

// The security sweep: forged and replayed notifications, token games, other
// customers' bookings, admin authentication, hostile input in every field, and
// what error answers and log lines may never contain. Helpers are prefixed sec
// so they cannot collide with the other tests of the package.

// secSweep collects every error answer of a test for the leak scan at its end.
type secSweep struct {
	s      *system
	mu     sync.Mutex
	errors []string
}

func newSecSweep(t *testing.T, override ...func(map[string]string)) *secSweep {
	w := &secSweep{s: newSystem(t, override...)}
	t.Cleanup(w.scanErrors)
	return w
}

func (w *secSweep) call(method, path, bearer string, body any, headers ...string) answer {
	w.s.t.Helper()
	a := w.s.call(method, path, bearer, body, headers...)
	if a.Status >= 400 {
		w.mu.Lock()
		w.errors = append(w.errors, string(a.Body))
		w.mu.Unlock()
		if a.Status >= 500 && a.Status != http.StatusServiceUnavailable {
			w.s.t.Errorf("%s %s: %d %s: hostile input must never be an internal error", method, path, a.Status, a.Body)
		}
	}
	return a
}

// want checks status and code, and that the body is exactly {code, message}.
func (w *secSweep) want(a answer, status int, code, what string) {
	w.s.t.Helper()
	if a.Status != status || a.code() != code {
		w.s.t.Errorf("%s: got %d %s, want %d %s", what, a.Status, a.Body, status, code)
		return
	}
	if len(a.JSON) != 2 || a.JSON["message"] == "" {
		w.s.t.Errorf("%s: error body is not {code, message}: %s", what, a.Body)
	}
}

// secretsOf lists what must never appear in an answer or a log line.
func (s *system) secretsOf() []string {
	privPEM, _ := wxpaysim.PrivateKeyPEM(s.merchant)
	// A distinctive line from the middle of the merchant key's PEM body.
	lines := strings.Split(strings.TrimSpace(privPEM), "\n")
	return []string{testSecret, testAdmin, testAppSecret, s.sim.APIv3Key(), "PRIVATE KEY", "-----BEGIN", lines[len(lines)/2]}
}

func (w *secSweep) scanErrors() {
	w.mu.Lock()
	defer w.mu.Unlock()
	markers := append([]string{"SELECT", "INSERT", "UPDATE ", "DELETE ", "goroutine", ".go:", "Error 1", "runtime."}, w.s.secretsOf()...)
	for _, e := range w.errors {
		for _, m := range markers {
			if strings.Contains(e, m) {
				w.s.t.Errorf("an error answer leaks %q: %s", m, e)
			}
		}
	}
	if len(w.errors) == 0 {
		w.s.t.Error("the sweep collected no error answers: the leak scan checked nothing")
	}
}

// secState is what a refused request must leave alone: bookings, seats, audit,
// and WeChat's books.
func (s *system) secState() string {
	s.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT CONCAT_WS('/', book_id, status, COALESCE(transaction_id, '-'), COALESCE(refund_status, '-'), updated_at) FROM t_booking ORDER BY book_id`,
		`SELECT CONCAT_WS('/', slot_id, capacity, booked, is_open) FROM t_slot ORDER BY slot_id`,
		`SELECT CONCAT_WS('/', audit_id, event) FROM t_audit ORDER BY audit_id`,
	} {
		rows, err := s.store.SQL().Query(q)
		if err != nil {
			s.t.Fatal(err)
		}
		for rows.Next() {
			var line string
			rows.Scan(&line)
			b.WriteString(line + "\n")
		}
		rows.Close()
	}
	for _, o := range s.sim.Orders() {
		fmt.Fprintf(&b, "order %s %s %s\n", o.OutTradeNo, o.TradeState, o.TransactionID)
	}
	for _, r := range s.sim.Refunds() {
		fmt.Fprintf(&b, "refund %s %s %d\n", r.OutRefundNo, r.Status, r.Amount)
	}
	return b.String()
}

func (s *system) secUnchanged(before, what string) {
	s.t.Helper()
	if after := s.secState(); after != before {
		s.t.Errorf("%s changed state:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// deliver posts a notification to the product and answers the HTTP status.
func (w *secSweep) deliver(path string, headers map[string]string, body []byte) int {
	w.s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.s.gw.URL+path, strings.NewReader(string(body)))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		w.mu.Lock()
		w.errors = append(w.errors, string(answer))
		w.mu.Unlock()
	}
	return resp.StatusCode
}

func (s *system) secAudits(event string) int {
	s.t.Helper()
	var n int
	if err := s.store.SQL().QueryRow(`SELECT COUNT(*) FROM t_audit WHERE event = ?`, event).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func TestSecurityForgedNotifications(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	slot := s.slot(26*time.Hour, 3, 5000)
	id, a := s.reserve("o-sec-forge", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	no := booking.OutTradeNo(id)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := []byte(strings.Repeat("k", 32))

	before := s.secState()
	for _, c := range []struct {
		name   string
		mutate func(*wxpaysim.NotificationParts)
	}{
		{"signed with another key", func(p *wxpaysim.NotificationParts) { p.SigningKey = other }},
		{"another key and its own serial", func(p *wxpaysim.NotificationParts) {
			p.SigningKey, p.Serial = other, "PUB_KEY_ID_0100000000000000000000000000000"
		}},
		{"probe signature", func(p *wxpaysim.NotificationParts) { p.Signature = "WECHATPAY/SIGNTEST/" + p.Nonce }},
		{"no signature", func(p *wxpaysim.NotificationParts) { p.Signature = " " }},
		{"stale timestamp", func(p *wxpaysim.NotificationParts) { p.Timestamp -= 3600 }},
		{"sealed with another APIv3 key", func(p *wxpaysim.NotificationParts) { p.APIv3Key = otherKey }},
		{"garbage ciphertext", func(p *wxpaysim.NotificationParts) {
			p.Ciphertext = base64.StdEncoding.EncodeToString([]byte("' OR 1=1 --"))
		}},
	} {
		h, body, err := s.sim.BuildPaymentNotification(no, c.mutate)
		if err != nil {
			t.Fatal(err)
		}
		if st := w.deliver("/pay/notify", h, body); st < 400 {
			t.Errorf("%s: answered %d, want a failure WeChat would retry", c.name, st)
		}
	}
	// A genuine notification whose body was changed after signing ("re-signed"
	// bodies need the platform key, which only WeChat has).
	h, body, err := s.sim.BuildPaymentNotification(no)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(body), `"TRANSACTION.SUCCESS"`, `"TRANSACTION.SUCCESS" `, 1)
	if st := w.deliver("/pay/notify", h, []byte(tampered)); st < 400 {
		t.Errorf("tampered body: answered %d", st)
	}
	s.secUnchanged(before, "forged payment notifications")

	// Verified, but for another merchant, another mini-program or another amount:
	// answered (a retry would not make it match), audited, and nothing else.
	for _, c := range []struct {
		name   string
		mutate func(*wxpaysim.TransactionResource)
	}{
		{"another merchant", func(r *wxpaysim.TransactionResource) { r.MchID = "1900000999" }},
		{"another appid", func(r *wxpaysim.TransactionResource) { r.AppID = "wx9999999999other" }},
		{"another amount", func(r *wxpaysim.TransactionResource) { r.Amount.Total, r.Amount.PayerTotal = 1, 1 }},
		{"unknown order", func(r *wxpaysim.TransactionResource) { r.OutTradeNo = "BK999999999999" }},
		{"hostile order number", func(r *wxpaysim.TransactionResource) { r.OutTradeNo = "BK1' OR '1'='1" }},
	} {
		rejected := s.secAudits(booking.EventRejected)
		h, body, err := s.sim.BuildPaymentNotification(no, func(p *wxpaysim.NotificationParts) {
			c.mutate(p.Resource.(*wxpaysim.TransactionResource))
		})
		if err != nil {
			t.Fatal(err)
		}
		if st := w.deliver("/pay/notify", h, body); st != http.StatusNoContent {
			t.Errorf("%s: answered %d, want 204", c.name, st)
		}
		if s.status(id) != "pending_payment" {
			t.Fatalf("%s: booking became %s", c.name, s.status(id))
		}
		if s.secAudits(booking.EventRejected) != rejected+1 {
			t.Errorf("%s: no rejection in the audit", c.name)
		}
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestSecurityReplayedNotification replays an old genuine notification after
// the booking was cancelled and refunded: no second refund, no confirmation.
func TestSecurityReplayedNotification(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	ctx := context.Background()
	slot := s.slot(26*time.Hour, 1, 5000)
	id, a := s.reserve("o-sec-replay", slot)
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	no := booking.OutTradeNo(id)
	if err := s.sim.Pay(ctx, no); err != nil {
		t.Fatal(err)
	}
	// The notification as WeChat sent it: same event, same transaction.
	oldH, oldBody, err := s.sim.BuildPaymentNotification(no)
	if err != nil {
		t.Fatal(err)
	}
	if s.status(id) != "confirmed" {
		t.Fatalf("after payment: %s", s.status(id))
	}
	a = w.call("POST", "/bookings/"+itoa64(id)+"/cancel", s.token("o-sec-replay"), nil)
	if a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	// Someone else takes the freed seat: a replay must not take it back.
	if id2, a := s.reserve("o-sec-other", slot); id2 == 0 {
		t.Fatalf("second reserve: %d %s", a.Status, a.Body)
	}
	before := s.secState()
	for i := range 3 {
		if st := w.deliver("/pay/notify", oldH, oldBody); st != http.StatusNoContent {
			t.Errorf("replay %d: answered %d", i, st)
		}
	}
	s.secUnchanged(before, "replayed payment notification while the refund is processing")
	if err := s.sim.CompleteRefund(ctx, booking.OutRefundNo(id), wxpaysim.RefundSuccess); err != nil {
		t.Fatal(err)
	}
	refundH, refundBody, err := s.sim.BuildRefundNotification(booking.OutRefundNo(id))
	if err != nil {
		t.Fatal(err)
	}
	before = s.secState()
	if st := w.deliver("/pay/notify", oldH, oldBody); st != http.StatusNoContent {
		t.Errorf("replay after refund: answered %d", st)
	}
	if st := w.deliver("/pay/refund-notify", refundH, refundBody); st != http.StatusNoContent {
		t.Errorf("replayed refund notification: answered %d", st)
	}
	// A payment notification sent to the refund route and the other way round.
	if st := w.deliver("/pay/refund-notify", oldH, oldBody); st < 400 {
		t.Errorf("payment notification on the refund route: answered %d", st)
	}
	if st := w.deliver("/pay/notify", refundH, refundBody); st < 400 {
		t.Errorf("refund notification on the payment route: answered %d", st)
	}
	s.secUnchanged(before, "replays after the refund")
	if n := len(s.sim.Refunds()); n != 1 {
		t.Errorf("%d refunds, want 1", n)
	}
	if s.status(id) != "cancelled" {
		t.Errorf("booking is %s after replays", s.status(id))
	}

	// Refund notifications forged or for another merchant change nothing.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	h, body, _ := s.sim.BuildRefundNotification(booking.OutRefundNo(id), func(p *wxpaysim.NotificationParts) { p.SigningKey = other })
	if st := w.deliver("/pay/refund-notify", h, body); st < 400 {
		t.Errorf("forged refund notification: answered %d", st)
	}
	h, body, _ = s.sim.BuildRefundNotification(booking.OutRefundNo(id), func(p *wxpaysim.NotificationParts) {
		r := p.Resource.(*wxpaysim.RefundResource)
		r.MchID, r.RefundStatus = "1900000999", "ABNORMAL"
	})
	w.deliver("/pay/refund-notify", h, body)
	b, _ := s.store.FindBooking(ctx, id)
	if b.Refund == nil || b.Refund.Status != booking.RefundSucceeded {
		t.Errorf("refund after a foreign merchant's notification: %+v", b.Refund)
	}
	mysqltest.CheckInvariant(t, s.store)
}

func b64url(v any) string {
	j, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(j)
}

func TestSecurityTokens(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	const openid = "o-sec-token"
	good := s.token(openid)
	if a := w.call("GET", "/bookings/mine", good, nil); a.Status != 200 {
		t.Fatalf("good token: %d %s", a.Status, a.Body)
	}
	parts := strings.Split(good, ".")
	if len(parts) != 3 {
		t.Fatalf("token shape %q", good)
	}
	now := time.Now()
	claims := map[string]any{"sub": openid, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	otherClaims := map[string]any{"sub": "o-someone-else", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	mac := func(key, msg string) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(msg))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	wrongKey := &session.Signer{Secret: []byte(strings.Repeat("w", 40))}
	wrong, _, _ := wrongKey.Issue(openid)
	expiredSigner := &session.Signer{Secret: []byte(testSecret), TTL: time.Hour, Now: func() time.Time { return now.Add(-2 * time.Hour) }}
	expired, _, _ := expiredSigner.Issue(openid)
	hsHeader := b64url(map[string]string{"alg": "HS256", "typ": "JWT"})
	noneHeader := b64url(map[string]string{"alg": "none", "typ": "JWT"})

	bad := map[string]string{
		"payload changed, old signature": "s1." + b64url(otherClaims) + "." + parts[2],
		"payload re-encoded":             "s1." + b64url(claims) + "." + parts[2],
		"wrong key":                      wrong,
		"expired":                        expired,
		"signature dropped":              "s1." + parts[1] + ".",
		"no signature segment":           "s1." + parts[1],
		"extra segment":                  good + ".x",
		"version changed":                "s2." + parts[1] + "." + parts[2],
		"alg none":                       noneHeader + "." + b64url(claims) + ".",
		"alg none, old signature":        noneHeader + "." + b64url(claims) + "." + parts[2],
		"HS256 with the session secret":  hsHeader + "." + b64url(claims) + "." + mac(testSecret, hsHeader+"."+b64url(claims)),
		"HS256 with another key":         hsHeader + "." + b64url(claims) + "." + mac("secret", hsHeader+"."+b64url(claims)),
		"s1 signed with the admin token": "s1." + b64url(claims) + "." + mac(testAdmin, "s1."+b64url(claims)),
		"admin token as session":         testAdmin,
		"padding added":                  good + "==",
		"whitespace inside":              "s1." + parts[1] + " ." + parts[2],
		"SQL":                            "s1.' OR '1'='1.x",
		"huge":                           "s1." + strings.Repeat("A", 100000) + "." + parts[2],
	}
	id, a := s.reserve(openid, s.slot(26*time.Hour, 2, 5000))
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	before := s.secState()
	for name, tok := range bad {
		for _, r := range []struct{ method, path string }{
			{"GET", "/bookings/mine"}, {"POST", "/bookings"}, {"POST", "/bookings/" + itoa64(id) + "/pay"}, {"POST", "/bookings/" + itoa64(id) + "/cancel"},
		} {
			var body any
			if r.path == "/bookings" {
				body = map[string]any{"slotId": 1}
			}
			w.want(w.call(r.method, r.path, tok, body), http.StatusUnauthorized, booking.EUNAUTHORIZED, name+" on "+r.method+" "+r.path)
		}
	}
	// No token, and tokens in other schemes.
	for _, hdr := range []string{"", "Basic " + good, "Bearer", "Bearer  ", "bearer"} {
		req, _ := http.NewRequest("GET", s.gw.URL+"/bookings/mine", nil)
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d", hdr, resp.StatusCode)
		}
	}
	s.secUnchanged(before, "bad tokens")
}

// TestSecurityOtherCustomersBooking: every customer endpoint that takes a
// booking id answers someone else's booking exactly as one that does not exist.
func TestSecurityOtherCustomersBooking(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	ctx := context.Background()
	pending, a := s.reserve("o-sec-owner-1", s.slot(26*time.Hour, 2, 5000))
	if pending == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	confirmed, a := s.reserve("o-sec-owner-2", s.slot(28*time.Hour, 2, 5000))
	if confirmed == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	if err := s.sim.Pay(ctx, booking.OutTradeNo(confirmed)); err != nil {
		t.Fatal(err)
	}
	intruder := s.token("o-sec-intruder")
	before := s.secState()
	missing := w.call("POST", "/bookings/999999/cancel", intruder, nil)
	for _, id := range []int64{pending, confirmed} {
		for _, verb := range []string{"pay", "cancel"} {
			a := w.call("POST", "/bookings/"+itoa64(id)+"/"+verb, intruder, nil)
			w.want(a, http.StatusNotFound, booking.ENOTFOUND, fmt.Sprintf("%s of another customer's booking %d", verb, id))
			if string(a.Body) != string(missing.Body) {
				t.Errorf("another customer's booking answers differently from a missing one:\n%s\n%s", a.Body, missing.Body)
			}
		}
	}
	if a := w.call("GET", "/bookings/mine", intruder, nil); a.Status != 200 || len(a.JSON["bookings"].([]any)) != 0 {
		t.Errorf("intruder's list: %d %s", a.Status, a.Body)
	}
	s.secUnchanged(before, "another customer's requests")
}

func TestSecurityAdminAuth(t *testing.T) {
	t.Parallel()
	routes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/admin/slots", map[string]any{"from": "2026-12-01", "to": "2026-12-01", "open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0}},
		{"PATCH", "/admin/slots/1", map[string]any{"capacity": 5}},
		{"GET", "/admin/bookings?date=2026-12-01", nil},
		{"POST", "/admin/bookings/1/cancel", nil},
		{"POST", "/admin/bookings/1/checkin", nil},
	}
	w := newSecSweep(t)
	s := w.s
	id, a := s.reserve("o-sec-admin", s.slot(26*time.Hour, 2, 0))
	if id == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	before := s.secState()
	for _, r := range routes {
		for name, tok := range map[string]string{
			"no token": "", "wrong token": "admin-token-wrong", "prefix of the token": testAdmin[:len(testAdmin)-1],
			"token plus a byte": testAdmin + "x", "customer's session": s.token("o-sec-admin"), "session secret": testSecret,
			"SQL": "' OR '1'='1",
		} {
			w.want(w.call(r.method, r.path, tok, r.body), http.StatusUnauthorized, booking.EUNAUTHORIZED, name+" on "+r.method+" "+r.path)
		}
	}
	s.secUnchanged(before, "admin calls without the right token")

	off := newSecSweep(t, func(env map[string]string) { delete(env, "ADMIN_TOKEN") })
	for _, r := range routes {
		for _, tok := range []string{"", testAdmin} {
			off.want(off.call(r.method, r.path, tok, r.body), http.StatusForbidden, booking.EFORBIDDEN, "ADMIN_TOKEN unset: "+r.method+" "+r.path)
		}
	}
}

// TestSecurityHostileInput sends SQL metacharacters, control characters and
// oversized values in every field and path parameter. Nothing may answer 500,
// nothing may change but what a valid request changes, and the tables survive.
func TestSecurityHostileInput(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	slot := s.slot(26*time.Hour, 3, 5000)
	tok := s.token("o-sec-hostile")
	hostile := []string{
		`' OR '1'='1`, `1; DROP TABLE t_booking; --`, `" OR ""="`, `\'; SELECT SLEEP(5); --`, "\x00", "%27%20OR%201=1",
		`1 UNION SELECT openid FROM t_booking`, "😀", strings.Repeat("x", 70000), "-1", "1e309", "0x10",
	}
	before := s.secState()
	for _, h := range hostile {
		// Body fields, as strings where numbers belong and as values where strings belong.
		w.call("POST", "/bookings", tok, map[string]any{"slotId": h})
		w.call("POST", "/bookings", tok, `{"slotId":`+h+`}`)
		w.call("POST", "/login", "", map[string]any{"code": h})
		w.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"capacity": h})
		w.call("PATCH", "/admin/slots/"+itoa64(slot), testAdmin, map[string]any{"open": h})
		sched := map[string]any{"from": "2026-12-01", "to": "2026-12-01", "open": "10:00", "close": "12:00", "slotMinutes": 60, "capacity": 1, "priceFen": 0}
		for _, field := range []string{"from", "to", "open", "close", "slotMinutes", "capacity", "priceFen"} {
			bad := map[string]any{}
			for k, v := range sched {
				bad[k] = v
			}
			bad[field] = h
			a := w.call("POST", "/admin/slots", testAdmin, bad)
			if a.Status < 400 {
				t.Errorf("schedule with %s=%.40q: %d %s", field, h, a.Status, a.Body)
			}
		}
		// Path and query parameters.
		esc := strings.NewReplacer(" ", "%20", "#", "%23", "?", "%3F", "/", "%2F", "\x00", "%00", "%", "%25").Replace(h)
		if len(esc) > 2000 {
			esc = esc[:2000]
		}
		for _, p := range []string{"/bookings/" + esc + "/pay", "/bookings/" + esc + "/cancel"} {
			a := w.call("POST", p, tok, nil)
			if a.Status != 400 && a.Status != 404 {
				t.Errorf("POST %.60s: %d %s", p, a.Status, a.Body)
			}
		}
		for _, p := range []string{"/admin/bookings/" + esc + "/cancel", "/admin/bookings/" + esc + "/checkin"} {
			a := w.call("POST", p, testAdmin, nil)
			if a.Status != 400 && a.Status != 404 {
				t.Errorf("POST %.60s: %d %s", p, a.Status, a.Body)
			}
		}
		w.call("PATCH", "/admin/slots/"+esc, testAdmin, map[string]any{"capacity": 2})
		for _, p := range []string{"/slots?date=" + esc, "/admin/bookings?date=" + esc} {
			if a := w.call("GET", p, testAdmin, nil); a.Status != 400 {
				t.Errorf("GET %.60s: %d %s", p, a.Status, a.Body)
			}
		}
	}
	s.secUnchanged(before, "hostile input")

	// An idempotency key with metacharacters is just a key: stored and matched
	// literally, never interpreted.
	key := `k' OR '1'='1`
	id, a := s.reserve("o-sec-hostile", slot, "Idempotency-Key", key)
	if id == 0 {
		t.Fatalf("reserve with a quoting key: %d %s", a.Status, a.Body)
	}
	if id2, _ := s.reserve("o-sec-hostile", slot, "Idempotency-Key", key); id2 != id {
		t.Errorf("same key answered booking %d, want %d", id2, id)
	}
	a = w.call("POST", "/bookings", tok, map[string]any{"slotId": slot}, "Idempotency-Key", `k' OR '1'='2`)
	w.want(a, http.StatusConflict, booking.EACTIVEBOOKINGEXISTS, "another key that differs only after a quote")
	a = w.call("POST", "/bookings", tok, map[string]any{"slotId": slot}, "Idempotency-Key", strings.Repeat("k", 65))
	w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "oversized idempotency key")
	// Bodies over 64 KiB, and ids that overflow.
	a = w.call("POST", "/bookings", tok, `{"slotId":1,"x":"`+strings.Repeat("a", 70000)+`"}`)
	w.want(a, http.StatusRequestEntityTooLarge, booking.EPAYLOADTOOLARGE, "oversized body")
	a = w.call("POST", "/bookings", tok, `{"slotId":99999999999999999999999}`)
	w.want(a, http.StatusBadRequest, booking.EBADREQUEST, "slotId overflow")
	a = w.call("POST", "/bookings/99999999999999999999999/cancel", tok, nil)
	if a.Status != 400 && a.Status != 404 {
		t.Errorf("id overflow: %d %s", a.Status, a.Body)
	}
	if n := s.countRows("t_booking"); n != 1 {
		t.Errorf("%d bookings after the sweep, want 1", n)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// TestSecurityLogsHoldNoSecrets runs a whole day of the product, bad requests
// included, and scans every log line and audit line it wrote for the secrets and
// for the bearer tokens issued during the run.
func TestSecurityLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	w := newSecSweep(t)
	s := w.s
	ctx := context.Background()
	var tokens []string
	login := func(code string) string {
		a := w.call("POST", "/login", "", map[string]string{"code": code})
		if a.Status != 200 {
			t.Fatalf("login: %d %s", a.Status, a.Body)
		}
		tok := a.JSON["token"].(string)
		tokens = append(tokens, tok)
		return tok
	}
	alice, bob := login("sec-code-alice"), login("sec-code-bob")
	w.call("POST", "/login", "", map[string]string{"code": "bad-code"})
	slot := s.slot(26*time.Hour, 2, 5000)

	a := w.call("POST", "/bookings", alice, map[string]any{"slotId": slot}, "Idempotency-Key", "sec-key-1")
	if a.Status != 201 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	aliceID := int64(a.JSON["booking"].(map[string]any)["bookingId"].(float64))
	if err := s.sim.Pay(ctx, booking.OutTradeNo(aliceID)); err != nil {
		t.Fatal(err)
	}
	a = w.call("POST", "/bookings", bob, map[string]any{"slotId": slot})
	bobID := int64(a.JSON["booking"].(map[string]any)["bookingId"].(float64))
	w.call("POST", "/bookings/"+itoa64(bobID)+"/pay", bob, nil)
	w.call("POST", "/bookings/"+itoa64(aliceID)+"/cancel", bob, nil)
	w.call("GET", "/bookings/mine", alice+"x", nil)
	w.call("GET", "/admin/bookings?date=2026-12-01", testAdmin+"x", nil)
	w.call("GET", "/admin/bookings?date="+time.Now().Add(26*time.Hour).In(shanghai(t)).Format("2006-01-02"), testAdmin, nil)
	w.call("POST", "/bookings/"+itoa64(aliceID)+"/cancel", alice, nil)
	s.sim.CompleteRefund(ctx, booking.OutRefundNo(aliceID), wxpaysim.RefundSuccess)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	h, body, _ := s.sim.BuildPaymentNotification(booking.OutTradeNo(bobID), func(p *wxpaysim.NotificationParts) { p.SigningKey = other })
	w.deliver("/pay/notify", h, body)
	s.sim.FailNext("/v3/", http.StatusInternalServerError, "SYSTEM_ERROR", 1)
	w.call("POST", "/admin/bookings/"+itoa64(bobID)+"/cancel", testAdmin, nil)
	mysqltest.ExpireHold(t, s.store, bobID)
	if _, err := Release(s.apiEnv)(ctx, nil); err != nil {
		t.Fatal(err)
	}

	logs := s.logs.String() + s.audit.String()
	if !strings.Contains(logs, `"status":401`) || !strings.Contains(logs, "notification rejected") {
		t.Fatalf("the run logged too little to be a meaningful scan:\n%s", logs)
	}
	for _, secret := range append(s.secretsOf(), tokens...) {
		if strings.Contains(logs, secret) {
			t.Errorf("a log line contains %.20q...", secret)
		}
	}
	// Parts of the tokens too: a log that shortened a token still leaks its MAC.
	for _, tok := range tokens {
		if mac := tok[strings.LastIndex(tok, ".")+1:]; strings.Contains(logs, mac[:16]) {
			t.Errorf("a log line contains the signature of a session token")
		}
	}
}

// FuzzHandlerBodies feeds arbitrary bodies, idempotency keys and path ids to the
// reserve and admin handlers through Router.Invoke, with valid credentials so the
// body is really decoded and acted on, against a real database. Whatever comes
// in, the answer is one functions/README.md documents, never a panic and never a 500.
// fuzzFunctions is what a fuzz target drives: the functions' environment on a
// fresh migrated database, their dependencies, and the test's own view of the
// database beside theirs (whose store only the service reaches).
func fuzzFunctions(f *testing.F) (*instance.Env, *service.Service, *mysql.DB) {
	f.Helper()
	dsn := mysqltest.NewDSN(f)
	env := map[string]string{"MYSQL_DSN": dsn, "SESSION_SECRET": testSecret, "ADMIN_TOKEN": testAdmin}
	e := &instance.Env{Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), AuditOut: io.Discard, PasswordCost: testPasswordCost}
	svc, err := e.Service()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { svc.Close() })
	store, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	if err := store.Migrate(context.Background()); err != nil {
		f.Fatal(err)
	}
	return e, svc, store
}

func FuzzHandlerBodies(f *testing.F) {
	e, _, store := fuzzFunctions(f)
	slot := mysqltest.AddSlot(f, store, 26*time.Hour, 3, 0)
	reserve, admin, cancel := ReserveRouter(e), AdminRouter(e), CancelRouter(e)
	signer := &session.Signer{Secret: []byte(testSecret)}
	token, _, err := signer.Issue("o-fuzz")
	if err != nil {
		f.Fatal(err)
	}

	for _, seed := range []struct {
		route uint8
		body  string
		key   string
		id    string
	}{
		{0, fmt.Sprintf(`{"slotId":%d}`, slot), "", ""},
		{0, fmt.Sprintf(`{"slotId":%d}`, slot), "key-1", ""},
		{0, `{"slotId":"1"}`, "", ""},
		{0, `{"slotId":1.5}`, "' OR 1=1", ""},
		{0, `{"slotId":1}{"slotId":2}`, "", ""},
		{0, `{"slotId":1,"slotId":2}`, "", ""},
		{0, `{"SLOTID":36}`, "", ""},
		{0, "{\"\u017flotId\":1}", "", ""},
		{1, `{"FROM":"2026-12-01","to":"2026-12-02","open":"10:00","close":"21:00","slotMinutes":90,"capacity":3,"priceFen":5000}`, "", ""},
		{2, `{"capacity":2,"capacity":3}`, "", fmt.Sprint(slot)},
		{3, `{"forfeitDeposit":true,"forfeitDeposit":true}`, "", fmt.Sprint(slot)},
		{0, `{"slotId":99999999999999999999}`, "", ""},
		{0, "\xef\xbb\xbf{\"slotId\":1}", "", ""},
		{0, `[]`, "", ""},
		{0, `null`, "", ""},
		{1, `{"from":"2026-12-01","to":"2026-12-02","open":"10:00","close":"21:00","slotMinutes":90,"capacity":3,"priceFen":5000}`, "", ""},
		{1, `{"from":"2026-02-30","to":"2026-12-02","open":"25:00","close":"21:00","slotMinutes":-1,"capacity":0,"priceFen":-5}`, "", ""},
		{1, `{"from":"2026-12-01","to":"2026-12-01","open":"00:00","close":"23:59","slotMinutes":1,"capacity":50,"priceFen":1000000}`, "", ""},
		{2, `{"capacity":2}`, "", fmt.Sprint(slot)},
		{2, `{"open":false}`, "", "1"},
		{2, `{"capacity":null,"open":null}`, "", "0"},
		{2, `{"capacity":1e3}`, "", "9223372036854775807"},
		{3, ``, "", fmt.Sprint(slot)},
	} {
		f.Add(seed.route, []byte(seed.body), seed.key, seed.id)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte, key, id string) {
		ev := map[string]any{
			"httpMethod": "POST", "path": "/bookings", "isBase64Encoded": true,
			"body":    base64.StdEncoding.EncodeToString(body),
			"headers": map[string]string{"authorization": "Bearer " + token, "content-type": "application/json", "idempotency-key": key},
		}
		rt := reserve
		switch route % 4 {
		case 1:
			ev["path"] = "/admin/slots"
		case 2:
			ev["httpMethod"], ev["path"] = "PATCH", "/admin/slots/"+id
		case 3:
			ev["path"] = "/bookings/" + id + "/cancel"
		}
		if route%4 == 3 {
			rt = cancel // the function that serves it, so that its body is decoded
		}
		if route%4 == 1 || route%4 == 2 {
			rt = admin
			ev["headers"].(map[string]string)["authorization"] = "Bearer " + testAdmin
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Skip()
		}
		resp, err := rt.Invoke(context.Background(), raw)
		if err != nil {
			t.Fatalf("Invoke returned an error: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s with %q: %d %s", ev["httpMethod"], ev["path"], body, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode >= 400 {
			var eb struct{ Code, Message string }
			if json.Unmarshal([]byte(resp.Body), &eb) != nil || eb.Code == "" || eb.Message == "" {
				t.Fatalf("error answer is not {code, message}: %d %s", resp.StatusCode, resp.Body)
			}
		}
		// A top-level key the route does not name exactly, or one given twice,
		// is 400 whatever else the body holds (checked here independently of
		// the decoder, on the top level only). Routes 2 and 3 read the body
		// only at a path the router matches: an id of digits.
		routed := route%4 < 2 || (id != "" && strings.Trim(id, "0123456789") == "")
		if bad, why := inexactKeys(body, routeFields[route%4]); routed && bad && resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s %s with %q (%s): %d %s, want 400", ev["httpMethod"], ev["path"], body, why, resp.StatusCode, resp.Body)
		}
		// Nothing a request does may break the seat counters.
		var bad int
		if err := store.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot s WHERE s.booked <> (SELECT COUNT(*) FROM t_booking b
			WHERE b.slot_id = s.slot_id AND b.status IN (0, 1, 2))`).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("invariant: %d slots off (%v)", bad, err)
		}
	})
}

// routeFields are the exact top-level names of each fuzzed route's body.
var routeFields = [4][]string{
	{"slotId"},
	{"from", "to", "open", "close", "slotMinutes", "capacity", "priceFen"},
	{"capacity", "open"},
	{"forfeitDeposit"},
}

// inexactKeys reports whether body is a well-formed JSON object with a key
// outside names or a key given twice; malformed bodies are someone else's case.
func inexactKeys(body []byte, names []string) (bool, string) {
	if !json.Valid(body) {
		return false, ""
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false, ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, ""
		}
		key := tok.(string)
		if seen[key] {
			return true, "repeated " + key
		}
		seen[key] = true
		if !slices.Contains(names, key) {
			return true, "unknown " + key
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false, ""
		}
	}
	return false, ""
}
