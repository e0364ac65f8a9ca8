package handler

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/wechatpay/wxpaysim"
)

// fuzzState is what no input may change: every watched booking's status and
// refund state, its slot's counter, and the number of audit records.
type fuzzState struct {
	Bookings string
	Audits   int
}

func readFuzzState(tb testing.TB, db *mysql.DB, ids []int64) fuzzState {
	var st fuzzState
	for _, id := range ids {
		b, err := db.FindBooking(context.Background(), id)
		if err != nil {
			tb.Fatal(err)
		}
		sl, err := db.FindSlot(context.Background(), b.SlotID)
		if err != nil {
			tb.Fatal(err)
		}
		refund := ""
		if b.Refund != nil {
			refund = string(b.Refund.Status)
		}
		st.Bookings += strconv.FormatInt(id, 10) + ":" + b.Status.String() + "/" + refund + "/booked=" + strconv.Itoa(sl.Booked) + " "
	}
	if err := db.SQL().QueryRow("SELECT COUNT(*) FROM t_audit").Scan(&st.Audits); err != nil {
		tb.Fatal(err)
	}
	return st
}

// FuzzPayNotify feeds arbitrary bodies and Wechatpay-* header values, plain or
// base64-encoded, as raw gateway events to the paynotify function. No input may
// panic it, be answered as handled, or change a booking.
//
// It is set up once per fuzz process (newSystem needs a *testing.T, so the
// pieces are wired here): its own database, the WeChat Pay simulator, a pending
// booking, and a paid, cancelled booking whose refund is processing. The seeds
// are genuine notifications for those bookings, each broken in one way. A fuzz
// worker builds its own simulator with fresh keys, so while fuzzing the seeds
// are foreign to it; in the normal test run they are tested against the keys
// they were made with.
//
//	go test ./shared/handler -run '^$' -fuzz FuzzPayNotify -fuzztime 60s
func FuzzPayNotify(f *testing.F) {
	ctx := context.Background()
	dsn := mysqltest.NewDSN(f)
	store, err := mysql.Open(dsn, mysql.Options{MaxOpenConns: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	if err := store.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		f.Fatal(err)
	}
	sim, err := wxpaysim.New(wxpaysim.Options{AppID: testAppID, MchID: testMchID, MerchantPublicKey: &priv.PublicKey, MerchantSerial: serial,
		HTTPClient: &http.Client{Timeout: time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	simSrv := httptest.NewServer(sim.Handler())
	f.Cleanup(simSrv.Close)
	// Nothing listens at the notify URLs: the sim's own deliveries fail at once,
	// and every notification this target sees is one it sends itself.
	env := sim.Env(priv, serial, simSrv.URL, "http://127.0.0.1:1/pay/notify", "http://127.0.0.1:1/pay/refund-notify")
	env["MYSQL_DSN"] = dsn
	env["SESSION_SECRET"] = testSecret
	env["WX_APPSECRET"] = testAppSecret
	env["WX_API_BASE"] = "http://127.0.0.1:1"
	e := &instance.Env{
		Getenv:   func(k string) string { return env[k] },
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
		AuditOut: io.Discard,
	}
	svc, err := e.Service()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { svc.Close() })
	router := PayNotifyRouter(e)

	slot := mysqltest.AddSlot(f, store, 26*time.Hour, 2, 5000)
	pending, err := svc.Reserve(ctx, "o-fuzz-pending", slot, "")
	if err != nil {
		f.Fatal(err)
	}
	refunding, err := svc.Reserve(ctx, "o-fuzz-refund", slot, "")
	if err != nil {
		f.Fatal(err)
	}
	_ = sim.Pay(ctx, refunding.Booking.OutTradeNo) // paid; the delivery fails by design
	if b, err := svc.CancelBySalon(service.WithStaff(ctx, booking.BuiltInOwner), refunding.Booking.ID); err != nil || b.Refund == nil || b.Refund.Status != booking.RefundProcessing {
		f.Fatalf("set up a processing refund: %+v %v", b, err)
	}
	watched := []int64{pending.Booking.ID, refunding.Booking.ID}
	want := readFuzzState(f, store, watched)

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	type build func(mutate ...func(*wxpaysim.NotificationParts)) (map[string]string, []byte, error)
	payment := func(m ...func(*wxpaysim.NotificationParts)) (map[string]string, []byte, error) {
		return sim.BuildPaymentNotification(pending.Booking.OutTradeNo, m...)
	}
	refund := func(m ...func(*wxpaysim.NotificationParts)) (map[string]string, []byte, error) {
		return sim.BuildRefundNotification(booking.OutRefundNo(refunding.Booking.ID), m...)
	}
	add := func(route uint8, b build, b64 bool, m func(*wxpaysim.NotificationParts), post func(h map[string]string, body []byte) []byte) {
		var ms []func(*wxpaysim.NotificationParts)
		if m != nil {
			ms = append(ms, m)
		}
		h, body, err := b(ms...)
		if err != nil {
			f.Fatal(err)
		}
		if post != nil {
			body = post(h, body)
		}
		f.Add(route, body, h["Wechatpay-Timestamp"], h["Wechatpay-Nonce"], h["Wechatpay-Serial"], h["Wechatpay-Signature"], h["Wechatpay-Signature-Type"], b64)
	}
	// Three bytes far apart: no single mutation turns the seed genuine again.
	tamper := func(_ map[string]string, body []byte) []byte {
		for _, i := range []int{len(body) / 4, len(body) / 2, 3 * len(body) / 4} {
			body[i] ^= 0x20
		}
		return body
	}
	for route, b := range []build{payment, refund} {
		r := uint8(route)
		add(r, b, false, nil, tamper)
		add(r, b, true, nil, tamper)
		add(r, b, false, func(p *wxpaysim.NotificationParts) { p.SigningKey = otherKey }, nil)
		add(r, b, true, func(p *wxpaysim.NotificationParts) { p.APIv3Key = []byte("0123456789abcdef0123456789abcdef") }, nil)
		add(r, b, false, func(p *wxpaysim.NotificationParts) { p.Serial = "PUB_KEY_ID_FUZZ_UNKNOWN" }, nil)
		add(r, b, false, func(p *wxpaysim.NotificationParts) { p.Timestamp = time.Now().Add(-time.Hour).Unix() }, nil)
		add(r, b, false, func(p *wxpaysim.NotificationParts) {
			p.Signature = "WECHATPAY/SIGNTEST/" + base64.StdEncoding.EncodeToString([]byte("probe"))
		}, nil)
		add(r, b, false, func(p *wxpaysim.NotificationParts) { p.GCMNonce = "abcdefghijk"; p.SigningKey = otherKey }, nil)
		add(r, b, false, func(p *wxpaysim.NotificationParts) {
			p.SignatureType = "WECHATPAY2-SM2-WITH-SM3"
			p.SigningKey = otherKey
		}, nil)
	}
	f.Add(uint8(0), []byte{}, "", "", "", "", "", false)
	f.Add(uint8(1), []byte("{}"), "0", "n", "s", "c2ln", "", true)

	paths := []string{"/pay/notify", "/pay/refund-notify"}
	f.Fuzz(func(t *testing.T, route uint8, body []byte, ts, nonce, serial, signature, sigType string, b64 bool) {
		headers := map[string]string{
			"content-type":             "application/json",
			"wechatpay-timestamp":      ts,
			"wechatpay-nonce":          nonce,
			"wechatpay-serial":         serial,
			"wechatpay-signature":      signature,
			"wechatpay-signature-type": sigType,
		}
		text := string(body)
		if b64 {
			text = base64.StdEncoding.EncodeToString(body)
		}
		raw, err := json.Marshal(map[string]any{
			"httpMethod": "POST", "path": paths[int(route)%len(paths)], "headers": headers,
			"body": text, "isBase64Encoded": b64,
			"requestContext": map[string]string{"requestId": "fuzz", "sourceIp": "203.0.113.9"},
		})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := router.Invoke(ctx, raw)
		if err != nil {
			t.Fatalf("Invoke returned an error: %v", err)
		}
		var answer failBody
		json.Unmarshal([]byte(resp.Body), &answer)
		switch {
		case len(body) > apigw.MaxBodyBytes:
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d-byte body answered %d %s", len(body), resp.StatusCode, resp.Body)
			}
		case resp.StatusCode < 400 || answer.Code != "FAIL" || answer.Message == "":
			// A recovered panic answers 500 INTERNAL, not WeChat's FAIL body.
			t.Fatalf("answered %d %s, want 4xx/5xx with the FAIL body", resp.StatusCode, resp.Body)
		}
		if got := readFuzzState(t, store, watched); got != want {
			t.Fatalf("input changed %+v into %+v", want, got)
		}
	})
}

// TestPayNotifyRawBase64Event is the fuzz target's premise: the raw gateway event
// it builds (lower-case headers, base64 body) carries a genuine notification
// intact, so its seeds fail only for the one change each makes.
func TestPayNotifyRawBase64Event(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	id := s.mustReservePaid("o-seed", s.slot(26*time.Hour, 1, 5000))
	h, body, err := s.sim.BuildPaymentNotification(booking.OutTradeNo(id))
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{}
	for k, v := range h {
		headers[strings.ToLower(k)] = v
	}
	raw, _ := json.Marshal(map[string]any{
		"httpMethod": "POST", "path": "/pay/notify", "isBase64Encoded": true,
		"body": base64.StdEncoding.EncodeToString(body), "headers": headers,
	})
	resp, err := s.checked("paynotify", PayNotifyRouter(s.apiEnv).Invoke)(context.Background(), raw)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("genuine base64 event: %d %s %v", resp.StatusCode, resp.Body, err)
	}
	if st := s.status(id); st != "confirmed" {
		t.Fatalf("status %s", st)
	}
	mysqltest.CheckInvariant(t, s.store)
}
