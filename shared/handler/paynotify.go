package handler

import (
	"bytes"
	"errors"
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/instance"
	"salon/shared/service"
	"salon/shared/wechatpay"
)

// failBody is WeChat Pay's failure answer; WeChat retries on it.
type failBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func fail(w http.ResponseWriter, status int, message string) {
	apigw.WriteJSON(w, status, failBody{Code: "FAIL", Message: message})
}

// notifyRequest rebuilds the HTTP request WeChat sent, byte for byte: the
// signature covers the exact body, and the SDK reads canonical header names.
// The path is only informational, so one net/http refuses must not lose (or
// crash on) the notification.
func notifyRequest(r *http.Request) (*http.Request, error) {
	body, err := apigw.ReadBody(r)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, r.URL.Path, bytes.NewReader(body))
	if err != nil {
		req, _ = http.NewRequestWithContext(r.Context(), http.MethodPost, "/", bytes.NewReader(body))
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	return req, nil
}

// PayNotifyRouter serves WeChat Pay's payment and refund notifications. Nothing is
// read from a notification before its signature and its encryption are verified;
// a forged one answers FAIL and changes nothing.
func PayNotifyRouter(e *instance.Env) *apigw.Router {
	e = e.For(payNotifyFunction)
	s := &payNotifyRoutes{cashier: e.Cashier, notices: e.PayNotifications}
	rt := apigw.NewRouter(payNotifyFunction.Name, e.Logger())
	rt.Handle("POST /pay/notify", serve(s.cashier, s.paymentNotification))
	rt.Handle("POST /pay/refund-notify", serve(s.cashier, s.refundNotification))
	return rt
}

// payNotifyRoutes are what function paynotify uses: the verification of
// WeChat Pay's notifications, and the cashier, which applies them.
type payNotifyRoutes struct {
	cashier lazy[*service.Cashier]
	notices lazy[instance.PayNotifications]
}

func (s *payNotifyRoutes) paymentNotification(w http.ResponseWriter, r *http.Request, cashier *service.Cashier) error {
	ctx := r.Context()
	notices, err := s.notices()
	if err != nil {
		return err
	}
	if notices == nil {
		apigw.Logger(ctx).Error("payment notification: WeChat Pay is not configured (WECHATPAY_MCHID)")
		fail(w, http.StatusInternalServerError, "not configured")
		return nil
	}
	req, err := notifyRequest(r)
	if err != nil {
		return err
	}
	p, err := notices.ParsePaymentNotification(ctx, req)
	if err != nil {
		rejectNotification(w, r, err)
		return nil
	}
	if id, ok := booking.ParseOutTradeNo(p.OutTradeNo); ok {
		apigw.SetBookingID(ctx, id)
	}
	outcome, err := cashier.HandlePayment(ctx, p)
	if err != nil {
		notHandled(w, r, cashier, "payment", err)
		return nil
	}
	apigw.Logger(ctx).Info("payment notification", "outcome", string(outcome), "event_id", p.EventID)
	apigw.WriteNoContent(w)
	return nil
}

func (s *payNotifyRoutes) refundNotification(w http.ResponseWriter, r *http.Request, cashier *service.Cashier) error {
	ctx := r.Context()
	notices, err := s.notices()
	if err != nil {
		return err
	}
	if notices == nil {
		apigw.Logger(ctx).Error("refund notification: WeChat Pay is not configured (WECHATPAY_MCHID)")
		fail(w, http.StatusInternalServerError, "not configured")
		return nil
	}
	req, err := notifyRequest(r)
	if err != nil {
		return err
	}
	n, err := notices.ParseRefundNotification(ctx, req)
	if err != nil {
		rejectNotification(w, r, err)
		return nil
	}
	if id, ok := booking.ParseOutTradeNo(n.OutTradeNo); ok {
		apigw.SetBookingID(ctx, id)
	}
	if err := cashier.HandleRefund(ctx, n); err != nil {
		notHandled(w, r, cashier, "refund", err)
		return nil
	}
	apigw.WriteNoContent(w)
	return nil
}

// notHandled answers a verified notification the service could not apply.
// WeChat delivers it again on any failure; a database that is down or out of
// connections says so with 503 and Retry-After, like every other route.
func notHandled(w http.ResponseWriter, r *http.Request, cashier *service.Cashier, kind string, err error) {
	err = cashier.Classify(err)
	apigw.Logger(r.Context()).Error(kind+" notification not handled; WeChat will retry",
		"code", booking.ErrorCode(err), "err", err.Error())
	if booking.IsCode(err, booking.EUNAVAILABLE) {
		w.Header().Set("Retry-After", apigw.RetryAfterSeconds)
		fail(w, http.StatusServiceUnavailable, "retry later")
		return
	}
	fail(w, http.StatusInternalServerError, "retry later")
}

func rejectNotification(w http.ResponseWriter, r *http.Request, err error) {
	// The SDK's own error text dumps the whole request; the wechatpay package keeps
	// only a short cause, which is all that is logged here.
	apigw.Logger(r.Context()).Warn("notification rejected", "err", err.Error())
	if errors.Is(err, wechatpay.ErrInvalidNotification) {
		fail(w, http.StatusUnauthorized, "invalid signature or ciphertext")
		return
	}
	fail(w, http.StatusBadRequest, "bad notification")
}
