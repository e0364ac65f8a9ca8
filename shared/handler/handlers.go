package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/service"
	"salon/shared/wire"
)

// maxMine is how many of a customer's bookings GET /bookings/mine answers.
const maxMine = 50

// SlotsRouter serves the public schedule and the health check (function slots).
func SlotsRouter(e *wire.Env) *apigw.Router {
	e = e.For(slotsFunction)
	rt := apigw.NewRouter("slots", e.Logger())
	rt.Handle(http.MethodGet, "/healthz", func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		d, err := e.Deps()
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err = d.Svc.Ping(pctx)
			cancel()
		}
		if err != nil {
			apigw.Logger(ctx).Error("health check failed", "err", err.Error())
			resp := apigw.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			resp.Headers["Retry-After"] = apigw.RetryAfterSeconds
			return resp, nil
		}
		return apigw.JSON(http.StatusOK, map[string]string{"status": "ok"}), nil
	})
	rt.Handle(http.MethodGet, "/slots", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		date, from, to, err := dayQuery(r, d.Cfg.ShopTZ)
		if err != nil {
			return nil, err
		}
		slots, err := d.Svc.Schedule(ctx, from, to)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusOK, map[string]any{"date": date, "slots": toSlotsJSON(slots, d.Cfg.ShopTZ)}), nil
	}))
	return rt
}

// dayQuery reads the required ?date=YYYY-MM-DD and returns it with the bounds of
// that shop day: a slot is listed under the day it starts.
func dayQuery(r *apigw.Request, loc *time.Location) (date string, from, to time.Time, err error) {
	if date, err = oneQuery(r, "date"); err != nil {
		return "", from, to, err
	}
	from, to, err = booking.DayBounds(date, loc)
	return date, from, to, err
}

// oneQuery returns the single value of a required query parameter; a repeated
// key is ambiguous and refused.
func oneQuery(r *apigw.Request, name string) (string, error) {
	vs := r.Query[name]
	if len(vs) != 1 || vs[0] == "" {
		return "", booking.Errorf(booking.EBADREQUEST, "query %s: want exactly one value, got %d", name, len(vs))
	}
	return vs[0], nil
}

// LoginRouter exchanges the mini-program's login code for a session token.
func LoginRouter(e *wire.Env) *apigw.Router {
	e = e.For(loginFunction)
	rt := apigw.NewRouter("login", e.Logger())
	rt.Handle(http.MethodPost, "/login", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		if err := d.Cfg.Require(loginFunction.Required...); err != nil {
			return nil, err
		}
		var body struct {
			Code string `json:"code"`
		}
		if err := apigw.DecodeJSON(r, &body); err != nil {
			return nil, err
		}
		if body.Code == "" || len(body.Code) > 128 {
			return nil, booking.Errorf(booking.EBADREQUEST, "code: want 1-128 characters")
		}
		wctx, cancel := context.WithTimeout(ctx, e.LoginTimeoutOrDefault())
		defer cancel()
		openid, err := d.Login.Code2Session(wctx, body.Code)
		if err != nil {
			return nil, err
		}
		token, exp, err := d.Sessions.Issue(openid)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusOK, map[string]string{"token": token, "expiresAt": shopTime(exp, d.Cfg.ShopTZ)}), nil
	}))
	return rt
}

// ReserveRouter serves reservations: create, pay again, and the customer's list.
func ReserveRouter(e *wire.Env) *apigw.Router {
	e = e.For(reserveFunction)
	rt := apigw.NewRouter("reserve", e.Logger())
	rt.Handle(http.MethodPost, "/bookings", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, err := customerOf(d, r)
		if err != nil {
			return nil, err
		}
		var body struct {
			SlotID int64 `json:"slotId"`
		}
		if err := apigw.DecodeJSON(r, &body); err != nil {
			return nil, err
		}
		if body.SlotID <= 0 {
			return nil, booking.Errorf(booking.EBADREQUEST, "slotId: want a positive integer")
		}
		key := r.Header.Get("Idempotency-Key")
		if !validIdemKey(key) {
			return nil, booking.Errorf(booking.EBADREQUEST, "Idempotency-Key: at most 64 printable characters")
		}
		res, err := d.Svc.Reserve(ctx, openid, body.SlotID, key)
		return reservationResponse(ctx, d, res, err, http.StatusCreated)
	}))
	rt.Handle(http.MethodPost, "/bookings/{id}/pay", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, id, err := customerAndID(d, r)
		if err != nil {
			return nil, err
		}
		res, err := d.Svc.PayAgain(ctx, openid, id)
		return reservationResponse(ctx, d, res, err, http.StatusOK)
	}))
	rt.Handle(http.MethodPost, "/slots/{id}/waitlist", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, slotID, err := customerAndID(d, r)
		if err != nil {
			return nil, err
		}
		w, err := d.Svc.JoinWaitlist(ctx, openid, slotID)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusCreated, map[string]any{"waitlist": toWaitlistJSON(w, d.Cfg.ShopTZ, false)}), nil
	}))
	rt.Handle(http.MethodDelete, "/slots/{id}/waitlist", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, slotID, err := customerAndID(d, r)
		if err != nil {
			return nil, err
		}
		if err := d.Svc.LeaveWaitlist(ctx, openid, slotID); err != nil {
			return nil, err
		}
		return apigw.NoContent(), nil
	}))
	rt.Handle(http.MethodGet, "/waitlist/mine", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, err := customerOf(d, r)
		if err != nil {
			return nil, err
		}
		ws, err := d.Svc.CustomerWaitlist(ctx, openid)
		if err != nil {
			return nil, err
		}
		out := make([]waitlistJSON, 0, len(ws))
		for i := range ws {
			out = append(out, toWaitlistJSON(&ws[i], d.Cfg.ShopTZ, true))
		}
		return apigw.JSON(http.StatusOK, map[string]any{"waitlist": out}), nil
	}))
	rt.Handle(http.MethodGet, "/bookings/mine", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, err := customerOf(d, r)
		if err != nil {
			return nil, err
		}
		bs, err := d.Svc.CustomerBookings(ctx, openid, maxMine)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusOK, map[string]any{"bookings": toBookingsJSON(bs, d.Cfg, false)}), nil
	}))
	return rt
}

// validIdemKey reports whether an Idempotency-Key header can be stored exactly as
// sent: at most 64 bytes (within the column, so the database never truncates two
// keys into one), valid UTF-8, no control characters. Empty means no key.
func validIdemKey(key string) bool {
	if len(key) > 64 || !utf8.ValidString(key) {
		return false
	}
	return !strings.ContainsFunc(key, unicode.IsControl)
}

func reservationResponse(ctx context.Context, d *wire.Deps, res *service.Reservation, err error, status int) (*apigw.Response, error) {
	if res != nil && res.Booking != nil {
		apigw.SetBookingID(ctx, res.Booking.ID)
	}
	if err != nil {
		return nil, err
	}
	return apigw.JSON(status, reservationJSON{Booking: toBookingJSON(res.Booking, d.Cfg, false), Payment: res.Payment}), nil
}

func customerAndID(d *wire.Deps, r *apigw.Request) (string, int64, error) {
	openid, err := customerOf(d, r)
	if err != nil {
		return "", 0, err
	}
	id, err := r.PathInt64("id")
	return openid, id, err
}

// CancelRouter serves the customer's cancel.
func CancelRouter(e *wire.Env) *apigw.Router {
	e = e.For(cancelFunction)
	rt := apigw.NewRouter("cancel", e.Logger())
	rt.Handle(http.MethodPost, "/bookings/{id}/cancel", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		openid, id, err := customerAndID(d, r)
		if err != nil {
			return nil, err
		}
		apigw.SetBookingID(ctx, id)
		// The body is optional; when present it is checked strictly like any other.
		var body struct {
			ForfeitDeposit bool `json:"forfeitDeposit"`
		}
		if len(bytes.TrimSpace(r.Body)) > 0 {
			if err := apigw.DecodeJSON(r, &body); err != nil {
				return nil, err
			}
		}
		b, err := d.Svc.CancelByCustomer(ctx, openid, id, body.ForfeitDeposit)
		return bookingResponse(d, b, err, false)
	}))
	return rt
}

func bookingResponse(d *wire.Deps, b *booking.Booking, err error, withOpenID bool) (*apigw.Response, error) {
	if err != nil {
		return nil, err
	}
	return apigw.JSON(http.StatusOK, map[string]any{"booking": toBookingJSON(b, d.Cfg, withOpenID)}), nil
}

// AdminRouter serves the salon: schedule, slot changes, the day's bookings,
// cancel and check-in, and the console (HTML) under /admin/.
func AdminRouter(e *wire.Env) *apigw.Router {
	e = e.For(adminFunction)
	rt := apigw.NewRouter("admin", e.Logger())
	console.Register(rt, e)
	admin := func(h func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error)) apigw.HandlerFunc {
		return withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
			if err := checkAdmin(ctx, d, r); err != nil {
				return nil, err
			}
			return h(ctx, d, r)
		})
	}
	rt.Handle(http.MethodPost, "/admin/slots", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		var sched booking.Schedule
		if err := apigw.DecodeJSON(r, &sched); err != nil {
			return nil, err
		}
		created, skipped, err := d.Svc.CreateSchedule(ctx, sched)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusCreated, map[string]int{"created": created, "skipped": skipped}), nil
	}))
	rt.Handle(http.MethodPatch, "/admin/slots/{id}", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		id, err := r.PathInt64("id")
		if err != nil {
			return nil, err
		}
		var u booking.SlotUpdate
		if err := apigw.DecodeJSON(r, &u); err != nil {
			return nil, err
		}
		s, err := d.Svc.UpdateSlot(ctx, id, u)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusOK, toSlotJSON(&s.Slot, s.Bookable, d.Cfg.ShopTZ, true)), nil
	}))
	rt.Handle(http.MethodGet, "/admin/bookings", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		date, from, to, err := dayQuery(r, d.Cfg.ShopTZ)
		if err != nil {
			return nil, err
		}
		bs, err := d.Svc.DayBookings(ctx, from, to)
		if err != nil {
			return nil, err
		}
		return apigw.JSON(http.StatusOK, map[string]any{"date": date, "bookings": toBookingsJSON(bs, d.Cfg, true)}), nil
	}))
	rt.Handle(http.MethodPost, "/admin/bookings/{id}/cancel", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		id, err := r.PathInt64("id")
		if err != nil {
			return nil, err
		}
		apigw.SetBookingID(ctx, id)
		b, err := d.Svc.CancelBySalon(ctx, id)
		return bookingResponse(d, b, err, true)
	}))
	rt.Handle(http.MethodPost, "/admin/bookings/{id}/checkin", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		id, err := r.PathInt64("id")
		if err != nil {
			return nil, err
		}
		apigw.SetBookingID(ctx, id)
		b, err := d.Svc.CheckIn(ctx, id)
		return bookingResponse(d, b, err, true)
	}))
	rt.Handle(http.MethodPost, "/admin/bookings/{id}/noshow", admin(func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		id, err := r.PathInt64("id")
		if err != nil {
			return nil, err
		}
		apigw.SetBookingID(ctx, id)
		b, err := d.Svc.MarkNoShow(ctx, id)
		return bookingResponse(d, b, err, true)
	}))
	return rt
}

// Release is the timer function: one release run, answered with its summary. An
// error makes SCF retry the run, which is safe: every step is idempotent.
func Release(e *wire.Env) func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
	e = e.For(releaseFunction)
	return func(ctx context.Context, _ json.RawMessage) (service.Summary, error) {
		start := time.Now()
		d, err := e.Deps()
		if err != nil {
			e.Logger().Error("release: configuration", "err", err.Error())
			return service.Summary{}, errors.New(booking.ErrorMessage(err) + ": " + err.Error())
		}
		sum, err := d.Svc.Release(ctx)
		err = d.Svc.Classify(err)
		attrs := []any{"function", "release", "released", sum.Released, "confirmed", sum.Confirmed,
			"refunded", sum.Refunded, "audited", sum.Audited, "duration_ms", time.Since(start).Milliseconds()}
		if err != nil {
			e.Logger().Error("release run failed", append(attrs, "code", booking.ErrorCode(err), "err", err.Error())...)
			return sum, err
		}
		e.Logger().Info("release run", attrs...)
		return sum, nil
	}
}
