package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

const (
	simAppID = "wx0000000000bench"
	simMchID = "1900000109"
)

// Payments is the release run and the payment notifications.
type Payments struct {
	Holds          int     `json:"holds"`
	Released       int     `json:"released"`
	ReleaseSeconds float64 `json:"release_seconds"`
	ReleasedPerS   float64 `json:"released_per_s"`
	Notifications  int     `json:"notifications"`
	Confirmed      int     `json:"confirmed"`
	NotifyErrors   int     `json:"notify_errors"`
	FirstErr       string  `json:"first_error,omitempty"`
	NotifySeconds  float64 `json:"notify_seconds"`
	ConfirmedPerS  float64 `json:"confirmed_per_s"`
	NotifyClients  int     `json:"notify_clients"`
}

// payments runs the release of n expired holds and the confirmation of n paid
// ones, with the WeChat Pay simulator in process over real HTTP: every close,
// query and notification is signed and verified as in production.
func payments(ctx context.Context, f *fixture, n, clients int) (Payments, error) {
	r := Payments{Holds: n, Notifications: n, NotifyClients: clients}
	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		return r, err
	}
	sim, err := wxpaysim.New(wxpaysim.Options{AppID: simAppID, MchID: simMchID, MerchantPublicKey: &priv.PublicKey, MerchantSerial: serial})
	if err != nil {
		return r, err
	}
	simSrv := httptest.NewServer(sim.Handler())
	defer simSrv.Close()

	var svc *service.Service
	var client *wechatpay.Client
	notifySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p, err := client.ParsePaymentNotification(req.Context(), req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if _, err := svc.HandlePayment(req.Context(), p); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer notifySrv.Close()

	env := sim.Env(priv, serial, simSrv.URL, notifySrv.URL+"/pay/notify", notifySrv.URL+"/pay/refund-notify")
	pcfg, err := wechatpay.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		return r, err
	}
	if client, err = wechatpay.New(pcfg); err != nil {
		return r, err
	}
	svc = instance.NewService(f.store)
	svc.Pay, svc.AppID, svc.MchID, svc.Loc = client, simAppID, simMchID, shopTZ()
	svc.Log, svc.Policy = slog.New(slog.NewJSONHandler(io.Discard, nil)), f.store.Policy

	// 2n pending holds on paid slots, each with its WeChat order.
	slots, err := productSlots(ctx, f.store, &f.next, f.base, 50, 1<<20, 5000)
	if err != nil {
		return r, err
	}
	holds := make([]*booking.Booking, 2*n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(holds) {
					return
				}
				res, err := svc.Reserve(ctx, customer(), slots[i%len(slots)], "")
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				holds[i] = res.Booking
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return r, fmt.Errorf("pending holds: %w", firstErr)
	}

	// The first n expire (as if their lock TTL had run out) and one release run
	// takes them all.
	for _, b := range holds[:n] {
		if _, err := f.store.SQL().ExecContext(ctx, `UPDATE t_booking SET lock_expire = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE book_id = ?`, b.ID); err != nil {
			return r, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	t0 := time.Now()
	sum, err := svc.Release(rctx)
	r.ReleaseSeconds = time.Since(t0).Seconds()
	cancel()
	if err != nil {
		return r, fmt.Errorf("release: %w", err)
	}
	r.Released = sum.Released
	r.ReleasedPerS = float64(sum.Released) / r.ReleaseSeconds

	// The other n are paid: WeChat (the sim) signs and encrypts each notification,
	// the handler verifies, decrypts and confirms.
	next.Store(0)
	var errs atomic.Int64
	t0 = time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := sim.Pay(ctx, holds[n+i].OutTradeNo); err != nil {
					errs.Add(1)
					mu.Lock()
					if r.FirstErr == "" {
						r.FirstErr = shortErr(err.Error())
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	r.NotifySeconds = time.Since(t0).Seconds()
	r.NotifyErrors = int(errs.Load())
	for _, b := range holds[n:] {
		got, err := f.store.FindBooking(ctx, b.ID)
		if err != nil {
			return r, err
		}
		if got.Status == booking.StatusConfirmed {
			r.Confirmed++
		}
	}
	r.ConfirmedPerS = float64(r.Confirmed) / r.NotifySeconds
	return r, nil
}

func shopTZ() *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		return time.FixedZone("CST", 8*3600)
	}
	return loc
}
