package handler

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/service"
	"salon/shared/wechatpay"
	"salon/shared/wire"
)

// failBody is WeChat Pay's failure answer; WeChat retries on it.
type failBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func fail(status int, message string) *apigw.Response {
	return apigw.JSON(status, failBody{Code: "FAIL", Message: message})
}

// notifyRequest rebuilds the HTTP request WeChat sent, byte for byte: the
// signature covers the exact body, and the SDK reads canonical header names.
// The path is only informational, so one net/http refuses must not lose (or
// crash on) the notification.
func notifyRequest(ctx context.Context, r *apigw.Request) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Path, bytes.NewReader(r.Body))
	if err != nil {
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(r.Body))
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	return req
}

// PayNotifyRouter serves WeChat Pay's payment and refund notifications. Nothing is
// read from a notification before its signature and its encryption are verified;
// a forged one answers FAIL and changes nothing.
func PayNotifyRouter(e *wire.Env) *apigw.Router {
	e = e.For(payNotifyFunction)
	rt := apigw.NewRouter("paynotify", e.Logger())
	rt.Handle(http.MethodPost, "/pay/notify", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		if d.Pay == nil {
			apigw.Logger(ctx).Error("payment notification: WeChat Pay is not configured (WECHATPAY_MCHID)")
			return fail(http.StatusInternalServerError, "not configured"), nil
		}
		p, err := d.Pay.ParsePaymentNotification(ctx, notifyRequest(ctx, r))
		if err != nil {
			return rejectNotification(ctx, err), nil
		}
		if id, ok := bookingIDOf(p.OutTradeNo); ok {
			apigw.SetBookingID(ctx, id)
		}
		outcome, err := d.Svc.HandlePayment(ctx, p)
		if err != nil {
			return notHandled(ctx, d.Svc, "payment", err), nil
		}
		apigw.Logger(ctx).Info("payment notification", "outcome", string(outcome), "event_id", p.EventID)
		return apigw.NoContent(), nil
	}))
	rt.Handle(http.MethodPost, "/pay/refund-notify", withDeps(e, func(ctx context.Context, d *wire.Deps, r *apigw.Request) (*apigw.Response, error) {
		if d.Pay == nil {
			apigw.Logger(ctx).Error("refund notification: WeChat Pay is not configured (WECHATPAY_MCHID)")
			return fail(http.StatusInternalServerError, "not configured"), nil
		}
		n, err := d.Pay.ParseRefundNotification(ctx, notifyRequest(ctx, r))
		if err != nil {
			return rejectNotification(ctx, err), nil
		}
		if id, ok := bookingIDOf(n.OutTradeNo); ok {
			apigw.SetBookingID(ctx, id)
		}
		if err := d.Svc.HandleRefund(ctx, n); err != nil {
			return notHandled(ctx, d.Svc, "refund", err), nil
		}
		return apigw.NoContent(), nil
	}))
	return rt
}

// notHandled answers a verified notification the service could not apply.
// WeChat delivers it again on any failure; a database that is down or out of
// connections says so with 503 and Retry-After, like every other route.
func notHandled(ctx context.Context, svc *service.Service, kind string, err error) *apigw.Response {
	err = svc.Classify(err)
	apigw.Logger(ctx).Error(kind+" notification not handled; WeChat will retry",
		"code", booking.ErrorCode(err), "err", err.Error())
	if booking.IsCode(err, booking.EUNAVAILABLE) {
		resp := fail(http.StatusServiceUnavailable, "retry later")
		resp.Headers["Retry-After"] = apigw.RetryAfterSeconds
		return resp
	}
	return fail(http.StatusInternalServerError, "retry later")
}

func rejectNotification(ctx context.Context, err error) *apigw.Response {
	// The SDK's own error text dumps the whole request; the wechatpay package keeps
	// only a short cause, which is all that is logged here.
	apigw.Logger(ctx).Warn("notification rejected", "err", err.Error())
	if errors.Is(err, wechatpay.ErrInvalidNotification) {
		return fail(http.StatusUnauthorized, "invalid signature or ciphertext")
	}
	return fail(http.StatusBadRequest, "bad notification")
}
