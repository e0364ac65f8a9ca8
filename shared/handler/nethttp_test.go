package handler

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/infra/testkit"
	"salon/shared/booking"
	"salon/shared/instance"
)

// TestRoutersServeHTTP: a function's router is a plain http.Handler. Behind
// httptest.NewServer, without the event adapter or the local gateway, the slots
// and reserve functions answer as they do on SCF; a bad setting on the
// function's list answers INTERNAL, and the same router picks the fixed setting
// up at the next request, because the dependencies it was built with are built
// on first use and a failure is not kept.
func TestRoutersServeHTTP(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	slot := s.slot(26*time.Hour, 2, 0)
	shop, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Now().Add(26 * time.Hour).In(shop).Format(time.DateOnly)

	var mu sync.Mutex
	env := map[string]string{}
	for k, v := range s.env {
		env[k] = v
	}
	env["SHOP_TZ"] = "Asia/Shanghia" // a typo: slots lists SHOP_TZ, so it stops slots
	logs := &syncBuffer{}
	e := &instance.Env{
		Getenv: func(k string) string { mu.Lock(); defer mu.Unlock(); return env[k] },
		Log:    slog.New(slog.NewJSONHandler(logs, nil)),
	}
	t.Cleanup(func() { e.Close() })
	contract, err := testkit.TheContract()
	if err != nil {
		t.Fatal(err)
	}
	slots := httptest.NewServer(contract.HTTP("slots", SlotsRouter(e), t.Errorf))
	defer slots.Close()
	reserve := httptest.NewServer(contract.HTTP("reserve", ReserveRouter(e), t.Errorf))
	defer reserve.Close()

	get := func(srv *httptest.Server, path string) answer {
		t.Helper()
		a, err := testkit.Client{URL: srv.URL}.Call("GET", path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return answer(a)
	}
	s.wantError(get(slots, "/slots?date="+day), 500, booking.EINTERNAL)
	if !strings.Contains(logs.String(), "SHOP_TZ") {
		t.Errorf("the log does not name SHOP_TZ:\n%s", logs)
	}

	mu.Lock()
	env["SHOP_TZ"] = "Asia/Shanghai"
	mu.Unlock()
	if a := get(slots, "/slots?date="+day); a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"slotId"`) {
		t.Fatalf("slots after the fix: %d %s", a.Status, a.Body)
	}
	s.wantError(get(slots, "/slots?date="+day+"&date="+day), 400, booking.EBADREQUEST)
	s.wantError(get(slots, "/bookings/mine"), 404, booking.ENOTFOUND)
	if a := get(slots, "/healthz"); a.Status != http.StatusOK {
		t.Errorf("healthz: %d %s", a.Status, a.Body)
	}

	a, err := testkit.Client{URL: reserve.URL}.Call("POST", "/bookings", s.token("o-nethttp"), map[string]any{"slotId": slot})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != http.StatusCreated {
		t.Fatalf("reserve over plain HTTP: %d %s", a.Status, a.Body)
	}
	if a, _ := (testkit.Client{URL: reserve.URL}).Call("PUT", "/bookings", s.token("o-nethttp"), nil); a.Status != http.StatusMethodNotAllowed || a.Header.Get("Allow") != "POST" {
		t.Errorf("PUT /bookings: %d Allow %q", a.Status, a.Header.Get("Allow"))
	}
}
