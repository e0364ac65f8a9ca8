package handler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"salon/infra/localgw"
	"salon/infra/scfhost"
	"salon/infra/testkit"
	"salon/shared/booking"
	"salon/shared/config"
	"salon/shared/handler/consoleauth"
	"salon/shared/instance"
	"salon/shared/mysql/mysqltest"
	"salon/shared/session"
)

// hostileKey breaks out of its string on a gbk connection (see the store's
// TestCharsetProof); the handler accepts it as a key.
const hostileKey = "中';UPDATE t_slot SET price_fen=1;#"

// TestHostileIdempotencyKey: through the gateway, the hostile key is stored as
// sent and changes nothing; a MYSQL_DSN asking for gbk makes the function refuse
// to serve, with the reason in the log and nothing changed.
func TestHostileIdempotencyKey(t *testing.T) {
	t.Parallel()
	t.Run("utf8mb4", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t)
		slot, other := s.freshSlot(3, 5000), s.freshSlot(3, 8000)
		prices := func() string {
			var p string
			if err := s.store.SQL().QueryRow(`SELECT GROUP_CONCAT(price_fen ORDER BY slot_id) FROM t_slot WHERE slot_id IN (?, ?)`, slot, other).Scan(&p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		id, a := s.reserve("o-hostile", slot, "Idempotency-Key", hostileKey)
		if id == 0 {
			t.Fatalf("reserve with the hostile key: %d %s", a.Status, a.Body)
		}
		var stored string
		if err := s.store.SQL().QueryRow(`SELECT idem_key FROM t_booking WHERE book_id = ?`, id).Scan(&stored); err != nil || stored != hostileKey {
			t.Errorf("stored key %q (%v), want %q", stored, err, hostileKey)
		}
		if again, a := s.reserve("o-hostile", slot, "Idempotency-Key", hostileKey); again != id {
			t.Errorf("the same key again: booking %d (%d %s), want %d", again, a.Status, a.Body, id)
		}
		// A lone 0xBF is not UTF-8: refused, or (if the way in replaced it) data.
		if a := s.call("POST", "/bookings", s.token("o-bf"), map[string]any{"slotId": other}, "Idempotency-Key", "\xbf';UPDATE t_slot SET price_fen=1;#"); a.Status != 400 && a.Status != 201 {
			t.Errorf("0xBF key: %d %s", a.Status, a.Body)
		}
		if p := prices(); p != "5000,8000" {
			t.Errorf("prices after the hostile keys: %s, want 5000,8000", p)
		}
	})
	t.Run("gbk refused", func(t *testing.T) {
		t.Parallel()
		s := newSystem(t, func(env map[string]string) {
			sep := "?"
			if strings.Contains(env["MYSQL_DSN"], "?") {
				sep = "&"
			}
			env["MYSQL_DSN"] += sep + "charset=gbk"
		})
		slot := s.freshSlot(3, 5000)
		before := s.dbState()
		s.wantError(s.call("POST", "/bookings", s.token("o-hostile"), map[string]any{"slotId": slot}, "Idempotency-Key", hostileKey), 500, booking.EINTERNAL)
		s.wantError(s.call("GET", "/slots?date=2026-12-01", "", nil), 500, booking.EINTERNAL)
		s.unchanged(before, "functions given a gbk MYSQL_DSN")
		if logs := s.logs.String(); !strings.Contains(logs, "MYSQL_DSN") || !strings.Contains(logs, "charset=gbk") {
			t.Errorf("the log does not say why:\n%s", logs)
		}
	})
}

// TestBadSettingStopsOnlyItsFunctions: with a SESSION_SECRET too short (and a
// typo in SHOP_TZ), payment notifications and the release run still work, login
// and the customer routes refuse clearly, and what was refused changed nothing.
func TestBadSettingStopsOnlyItsFunctions(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.freshSlot(3, 5000)
	paid, a := s.reserve("o-pays", slot)
	if paid == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	expired := s.relExpiredHold("o-expires", slot)

	// The salon breaks two settings and deploys; every function starts afresh.
	s.env["SESSION_SECRET"] = "too-short-session-secret"
	s.env["SHOP_TZ"] = "Asia/Shanghia"
	s.apiEnv.Close()

	before := s.dbState()
	s.wantError(s.call("POST", "/login", "", map[string]string{"code": "c"}), 500, booking.EINTERNAL)
	s.wantError(s.call("POST", "/bookings", s.token("o-new"), map[string]any{"slotId": slot}), 500, booking.EINTERNAL)
	s.unchanged(before, "functions refusing a short SESSION_SECRET")

	if err := s.sim.Pay(context.Background(), booking.OutTradeNo(paid)); err != nil {
		t.Fatalf("payment notification with a short SESSION_SECRET: %v", err)
	}
	if st := s.status(paid); st != "confirmed" {
		t.Errorf("paid booking is %s, want confirmed", st)
	}
	sum, err := relRunEnv(context.Background(), s.apiEnv)
	if err != nil || sum.Released != 1 {
		t.Errorf("release run with a short SESSION_SECRET: %+v %v", sum, err)
	}
	if st := s.status(expired); st != "expired" {
		t.Errorf("expired hold is %s, want expired", st)
	}
	mysqltest.CheckInvariant(t, s.store)

	logs := s.logs.String()
	if !strings.Contains(logs, "invalid setting SESSION_SECRET: must be at least 32 bytes") {
		t.Errorf("login's refusal does not say why:\n%s", logs)
	}
	var warned int
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"setting ignored"`) && strings.Contains(line, "SESSION_SECRET") &&
			(strings.Contains(line, `"function":"paynotify"`) || strings.Contains(line, `"function":"release"`)) {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("paynotify and release should each warn once about SESSION_SECRET, got %d:\n%s", warned, logs)
	}
	if strings.Contains(logs, "too-short-session-secret") {
		t.Error("the log quotes the secret")
	}
}

// TestDevelopmentSecretsRefused: outside SALON_DEV=1 the admin function refuses
// to serve with the published development token or a short one, and says why;
// with SALON_DEV=1 (scripts/dev.sh) it serves.
func TestDevelopmentSecretsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, token, dev, why string
		status                int
	}{
		{"published token", "dev-admin-token", "", "published development value", 500},
		{"short token", "0123456789abcdef0123456789abcde", "", "at least 32 bytes", 500},
		{"published token, SALON_DEV=0", "dev-admin-token", "0", "published development value", 500},
		{"published token in local development", "dev-admin-token", "1", "", 200},
		{"short token in local development", "0123456789abcdef0123456789abcde", "1", "", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSystem(t, func(env map[string]string) {
				env["ADMIN_TOKEN"] = tt.token
				env["SALON_DEV"] = tt.dev
			})
			before := s.dbState()
			a := s.call("POST", "/admin/slots", tt.token, map[string]any{"from": "2026-12-01", "to": "2026-12-01",
				"open": "10:00", "close": "11:30", "slotMinutes": 90, "capacity": 1, "priceFen": 0})
			if tt.status != 200 {
				s.wantError(a, tt.status, booking.EINTERNAL)
				s.unchanged(before, "the admin function with "+tt.name)
				if logs := s.logs.String(); !strings.Contains(logs, "invalid setting ADMIN_TOKEN: ") || !strings.Contains(logs, tt.why) {
					t.Errorf("the log does not say why:\n%s", logs)
				} else if strings.Contains(logs, tt.token) {
					t.Error("the log quotes the token")
				}
				// Functions that do not use ADMIN_TOKEN serve on.
				if a := s.call("GET", "/slots?date=2026-12-01", "", nil); a.Status != 200 {
					t.Errorf("slots: %d %s", a.Status, a.Body)
				}
				return
			}
			if a.Status != 201 {
				t.Errorf("SALON_DEV=1: %d %s", a.Status, a.Body)
			}
		})
	}
}

// TestFunctionSettingsDeclared: every setting a function uses is passed to it by
// serverless.yml (the local runtime passes nothing else, so a missing one fails
// here and locally before it fails on SCF), every function there has its list
// here, and no function is ever given SALON_DEV.
func TestFunctionSettingsDeclared(t *testing.T) {
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, fn := range Functions {
		listed[fn.Name] = true
		declared, ok := spec.Function(fn.Name)
		if !ok {
			t.Errorf("function %s is not in serverless.yml", fn.Name)
			continue
		}
		for _, name := range fn.Settings {
			if _, ok := declared.Env[name]; !ok {
				t.Errorf("function %s uses %s but serverless.yml does not pass it", fn.Name, name)
			}
		}
		if _, err := config.LoadFor(func(string) string { return "" }, fn.Settings); err != nil {
			t.Errorf("function %s: %v", fn.Name, err)
		}
	}
	for _, f := range spec.Functions {
		if !listed[f.Name] {
			t.Errorf("serverless.yml function %s has no settings list in handler.Functions", f.Name)
		}
		if _, ok := f.Env["SALON_DEV"]; ok {
			t.Errorf("serverless.yml gives function %s SALON_DEV: a deployed function must never be in local development mode", f.Name)
		}
	}
}

// burstAnswers tallies answers by "status code" and fails the test for any
// answer outside allowed.
type burstAnswers struct {
	mu     sync.Mutex
	counts map[string]int
	bad    []string
}

func (b *burstAnswers) add(what string, status int, code string, body []byte, allowed ...string) {
	k := strconv.Itoa(status)
	if code != "" {
		k += " " + code
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts == nil {
		b.counts = map[string]int{}
	}
	b.counts[k]++
	if !slices.Contains(allowed, k) && len(b.bad) < 20 {
		b.bad = append(b.bad, fmt.Sprintf("%s: %s %s", what, k, body))
	}
}

func (b *burstAnswers) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := slices.Sorted(maps.Keys(b.counts))
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%d ", k, b.counts[k])
	}
	return strings.TrimSpace(sb.String())
}

// TestDatabaseRestartMidBurst restarts a private MariaDB in the middle of a
// burst of 300 requests through the gateway and the handlers, once as a
// service manager does (SIGTERM) and once as a crash (SIGKILL): every answer is
// a success, a 409 SOLD_OUT / ACTIVE_BOOKING_EXISTS, or 503 UNAVAILABLE with
// Retry-After, never 500; a payment notification WeChat delivers while the
// database is down answers 503 and goes through when delivered again; no
// answered booking is lost and the invariant holds.
func TestDatabaseRestartMidBurst(t *testing.T) {
	t.Parallel()
	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		restartMidBurst(t, (*mysqltest.Server).Stop)
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		restartMidBurst(t, (*mysqltest.Server).Kill)
	})
}

func restartMidBurst(t *testing.T, stop func(*mysqltest.Server)) {
	srv := mysqltest.StartServer(t, mysqltest.ServerOptions{MaxConnections: 40})
	s := newSystem(t)
	var dsn string
	s.store, dsn = srv.Open(t, 4) // the checker's view and the slots: on the private server
	s.env["MYSQL_DSN"] = dsn

	const customers, requests, workers = 120, 300, 20
	slots := []int64{s.freshSlot(15, 5000), s.freshSlot(15, 5000), s.freshSlot(15, 5000)}
	date := s.slotStart(slots[0]).In(shanghai(t)).Format("2006-01-02")
	tokens := make([]string, customers)
	for i := range tokens {
		tokens[i] = s.token(fmt.Sprintf("o-burst-%d", i))
	}
	// A booking made before the restart, to be paid while the database is down.
	payLater, a := s.reserve("o-pays-during-restart", slots[0])
	if payLater == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}

	var (
		answers   burstAnswers
		mu        sync.Mutex
		created   = map[int64]int{} // booking id -> customer, from every 201
		afterUp   int               // 2xx answered after the restart
		answered  atomic.Int32
		restarted = make(chan struct{})
		stopAt    = make(chan struct{})
		stopOnce  sync.Once
	)
	work := make(chan int, requests)
	for i := range requests {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				c := i % customers
				var a answer
				var allowed []string
				switch i % 5 {
				case 0, 1, 2:
					a = s.call("POST", "/bookings", tokens[c], map[string]any{"slotId": slots[c%len(slots)]},
						"Idempotency-Key", fmt.Sprintf("burst-%d", c))
					allowed = []string{"201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "503 UNAVAILABLE"}
				case 3:
					a = s.call("GET", "/slots?date="+date, "", nil)
					allowed = []string{"200", "503 UNAVAILABLE"}
				default:
					a = s.call("GET", "/bookings/mine", tokens[c], nil)
					allowed = []string{"200", "503 UNAVAILABLE"}
				}
				code := ""
				if a.Status >= 400 {
					code = a.code()
				}
				answers.add(fmt.Sprintf("request %d", i), a.Status, code, a.Body, allowed...)
				if a.Status == http.StatusServiceUnavailable && a.Header.Get("Retry-After") == "" {
					answers.add("request "+strconv.Itoa(i), 0, "503 without Retry-After", a.Body)
				}
				if a.Status == http.StatusCreated {
					mu.Lock()
					created[int64(a.JSON["booking"].(map[string]any)["bookingId"].(float64))] = c
					mu.Unlock()
				}
				select {
				case <-restarted:
					if a.Status < 300 {
						mu.Lock()
						afterUp++
						mu.Unlock()
					}
				default:
				}
				if answered.Add(1) == requests/3 {
					stopOnce.Do(func() { close(stopAt) })
				}
				if a.Status == http.StatusServiceUnavailable {
					<-restarted // the client backs off until the database is back
				}
			}
		})
	}

	// The restart, a third of the way in, with requests in flight.
	<-stopAt
	stop(srv)
	err := s.sim.Pay(context.Background(), booking.OutTradeNo(payLater))
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("payment notification while the database is down: %v, want WeChat to see 503", err)
	}
	srv.Start()
	close(restarted)
	wg.Wait()

	if err := s.sim.Notify(context.Background(), booking.OutTradeNo(payLater)); err != nil {
		t.Errorf("payment notification delivered again after the restart: %v", err)
	}
	if st := s.status(payLater); st != "confirmed" {
		t.Errorf("the booking paid during the restart is %s, want confirmed", st)
	}

	t.Logf("answers: %s; 2xx after the restart: %d", answers.String(), afterUp)

	for _, b := range answers.bad {
		t.Errorf("answer outside the contract: %s", b)
	}
	if answers.counts["503 UNAVAILABLE"] == 0 || afterUp == 0 {
		t.Errorf("the burst did not span the restart (503: %d, 2xx after: %d)", answers.counts["503 UNAVAILABLE"], afterUp)
	}
	for id, c := range created {
		b, err := s.store.FindBooking(context.Background(), id)
		if err != nil || b.OpenID != fmt.Sprintf("o-burst-%d", c) {
			t.Errorf("booking %d answered 201 to customer %d is lost: %+v %v", id, c, b, err)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, `"status":500`) {
		t.Errorf("a function answered 500:\n%s", logs)
	}
	mysqltest.CheckInvariant(t, s.store)
}

// instances runs each function as SCF does under load: a fixed number of warm
// instances, each its own instance.Env (so its own pool of up to two connections),
// each serving one request at a time with the function's timeout as deadline.
type instances struct {
	timeout time.Duration
	free    map[string]chan testkit.Handler
}

func (p *instances) Invoke(ctx context.Context, fn string, payload []byte, _ string) ([]byte, *scfhost.InvokeError, error) {
	ch, ok := p.free[fn]
	if !ok {
		return nil, nil, fmt.Errorf("no function %q", fn)
	}
	h := <-ch
	defer func() { ch <- h }()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return testkit.Invoke(ctx, h, payload)
}

// TestMoreInstancesThanConnections runs many more function instances than the
// database accepts connections (24 reserve and 4 slots instances, up to 56
// connections, against max_connections 10): every answer is a success, a 409
// or 503 UNAVAILABLE, never 500, and what was answered is exactly what the
// database holds.
func TestMoreInstancesThanConnections(t *testing.T) {
	t.Parallel()
	srv := mysqltest.StartServer(t, mysqltest.ServerOptions{MaxConnections: 10})
	store, dsn := srv.Open(t, 1)
	slots := []int64{mysqltest.AddSlot(t, store, 30*time.Hour, 40, 0), mysqltest.AddSlot(t, store, 33*time.Hour, 40, 0)}
	date := func() string {
		sl, err := store.FindSlot(context.Background(), slots[0])
		if err != nil {
			t.Fatal(err)
		}
		return sl.StartAt.In(shanghai(t)).Format("2006-01-02")
	}()

	env := map[string]string{"MYSQL_DSN": dsn, "SESSION_SECRET": testSecret}
	logs := &syncBuffer{}
	inv := &instances{timeout: 10 * time.Second, free: map[string]chan testkit.Handler{}}
	for fn, n := range map[string]int{"reserve": 24, "slots": 4} {
		inv.free[fn] = make(chan testkit.Handler, n)
		for range n {
			e := &instance.Env{Getenv: func(k string) string { return env[k] }, Log: slog.New(slog.NewJSONHandler(logs, nil)), AuditOut: io.Discard}
			t.Cleanup(func() { e.Close() })
			if fn == "reserve" {
				inv.free[fn] <- ReserveRouter(e).Invoke
			} else {
				inv.free[fn] <- SlotsRouter(e).Invoke
			}
		}
	}
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	gw := localgw.NewGateway(spec.Routes, inv, nil)
	front := httptest.NewServer(gw)
	t.Cleanup(func() { front.Close(); gw.Wait() })
	s := &system{t: t, gw: front, sessions: &session.Signer{Secret: []byte(testSecret)}}

	const customers, clients = 240, 48
	var (
		answers burstAnswers
		mu      sync.Mutex
		created = map[int64]string{}
	)
	work := make(chan int, customers)
	for i := range customers {
		work <- i
	}
	close(work)
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range work {
				openid := fmt.Sprintf("o-many-%d", i)
				a := s.call("POST", "/bookings", s.token(openid), map[string]any{"slotId": slots[i%2]}, "Idempotency-Key", "k-"+openid)
				code := ""
				if a.Status >= 400 {
					code = a.code()
				}
				answers.add("reserve "+openid, a.Status, code, a.Body, "201", "409 SOLD_OUT", "409 ACTIVE_BOOKING_EXISTS", "503 UNAVAILABLE")
				if a.Status == http.StatusCreated {
					mu.Lock()
					created[int64(a.JSON["booking"].(map[string]any)["bookingId"].(float64))] = openid
					mu.Unlock()
				}
				if i%4 == 0 {
					a := s.call("GET", "/slots?date="+date, "", nil)
					code := ""
					if a.Status >= 400 {
						code = a.code()
					}
					answers.add("slots", a.Status, code, a.Body, "200", "503 UNAVAILABLE")
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d requests through 28 instances against max_connections 10 in %s: %s",
		customers+customers/4, time.Since(start).Round(time.Millisecond), answers.String())
	for _, b := range answers.bad {
		t.Errorf("answer outside the contract: %s", b)
	}
	if answers.counts["503 UNAVAILABLE"] == 0 || answers.counts["201"] == 0 {
		t.Errorf("want both successes and 503s (the limit was reached): %s", answers.String())
	}
	if strings.Contains(logs.String(), `"status":500`) {
		t.Errorf("a function answered 500:\n%s", logs.String())
	}

	// Nothing lost, nothing extra: the database holds exactly the answered bookings.
	rows, err := store.SQL().Query(`SELECT book_id, openid FROM t_booking`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	held := 0
	for rows.Next() {
		var id int64
		var openid string
		if err := rows.Scan(&id, &openid); err != nil {
			t.Fatal(err)
		}
		held++
		if created[id] != openid {
			t.Errorf("booking %d of %s is in the database but was never answered 201", id, openid)
		}
	}
	if held != len(created) {
		t.Errorf("the database holds %d bookings, %d were answered 201", held, len(created))
	}
	mysqltest.CheckInvariant(t, store)
}

// TestStrictJSONNamesAndKeys sends, to every route that reads a JSON body, a
// field name that matches only case-insensitively and a key given twice.
// encoding/json accepts both (it folds case and keeps the last key); the
// contract answers 400 BAD_REQUEST, and nothing changes: no booking, no
// cancel, no slot, no schedule, no login.
func TestStrictJSONNamesAndKeys(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot, other := s.freshSlot(3, 5000), s.freshSlot(3, 5000)
	pending, a := s.reserve("o-strict-pending", other)
	if pending == 0 {
		t.Fatalf("reserve: %d %s", a.Status, a.Body)
	}
	tok, owner := s.token("o-strict"), s.token("o-strict-pending")
	cookie, csrf := s.consoleSignIn()
	sched := `"to":"2026-12-01","open":"10:00","close":"12:00","slotMinutes":60,"capacity":1,"priceFen":0`
	before := s.dbState()
	cases := []struct {
		method, path, bearer, body string
		headers                    []string
	}{
		{"POST", "/login", "", `{"CODE":"alice"}`, nil},
		{"POST", "/login", "", `{"code":"alice","code":"bob"}`, nil},
		{"POST", "/bookings", tok, fmt.Sprintf(`{"SLOTID":%d}`, slot), nil},
		{"POST", "/bookings", tok, fmt.Sprintf(`{"slotid":%d}`, slot), nil},
		{"POST", "/bookings", tok, fmt.Sprintf("{\"\u017flotId\":%d}", slot), nil}, // ſ folds to s
		{"POST", "/bookings", tok, fmt.Sprintf(`{"slotId":%d,"slotId":%d}`, other, slot), nil},
		{"POST", "/bookings", tok, fmt.Sprintf(`{"slotId":%d,"slotId":%d}`, slot, slot), nil},
		{"POST", "/bookings/" + itoa64(pending) + "/cancel", owner, `{"ForfeitDeposit":true}`, nil},
		{"POST", "/bookings/" + itoa64(pending) + "/cancel", owner, `{"forfeitDeposit":false,"forfeitDeposit":true}`, nil},
		{"POST", "/admin/slots", testAdmin, `{"FROM":"2026-12-01",` + sched + `}`, nil},
		{"POST", "/admin/slots", testAdmin, `{"from":"2026-12-01","from":"2026-12-01",` + sched + `}`, nil},
		{"PATCH", "/admin/slots/" + itoa64(slot), testAdmin, `{"Capacity":5}`, nil},
		{"PATCH", "/admin/slots/" + itoa64(slot), testAdmin, `{"open":true,"open":false}`, nil},
		// The console's session on the JSON API reads bodies the same way.
		{"PATCH", "/admin/slots/" + itoa64(slot), "", `{"CAPACITY":5}`, []string{"Cookie", cookie, consoleauth.CSRFHeader, csrf}},
		{"PATCH", "/admin/slots/" + itoa64(slot), "", `{"capacity":4,"capacity":5}`, []string{"Cookie", cookie, consoleauth.CSRFHeader, csrf}},
	}
	for _, c := range cases {
		a := s.call(c.method, c.path, c.bearer, c.body, c.headers...)
		if a.Status != http.StatusBadRequest || a.code() != booking.EBADREQUEST {
			t.Errorf("%s %s %s: %d %s, want 400 BAD_REQUEST", c.method, c.path, c.body, a.Status, a.Body)
		}
	}
	s.unchanged(before, "bodies with folded names or repeated keys")
	if got := s.status(pending); got != "pending_payment" {
		t.Errorf("the pending booking is %s after refused cancels", got)
	}
	// The same bodies with exact names, each key once, do what they say.
	if a := s.call("PATCH", "/admin/slots/"+itoa64(slot), "", `{"capacity":5}`, "Cookie", cookie, consoleauth.CSRFHeader, csrf); a.Status != http.StatusOK {
		t.Errorf("PATCH with the exact name: %d %s", a.Status, a.Body)
	}
	if a := s.call("POST", "/bookings", tok, fmt.Sprintf(`{"slotId":%d}`, slot)); a.Status != http.StatusCreated {
		t.Errorf("reserve with the exact name: %d %s", a.Status, a.Body)
	}
}
