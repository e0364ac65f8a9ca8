package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"salon/shared/booking"
)

// Cashier is the product's side of WeChat Pay: the payment and refund
// notifications (function paynotify), and the prepay, close-then-query and
// refund that reservations, cancels and the release run ask of it.
type Cashier struct {
	*Common
	store  CashierStore
	notify *Notifier
	// Pay is nil when WeChat Pay is not configured: free slots still work, a paid
	// reservation keeps its hold and answers UPSTREAM_UNAVAILABLE.
	Pay Payments
	// AppID and MchID are what every verified payment must name.
	AppID, MchID string
}

// CashierStore is what the Cashier asks of the store.
type CashierStore interface {
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
	StartRefund(ctx context.Context, id int64, from booking.Status, p booking.Payment, actor, reason string) (started bool, err error)
	DeferRefund(ctx context.Context, id int64, after time.Duration) error
	SetRefundState(ctx context.Context, id int64, to booking.RefundStatus, refundedAt *time.Time, refundID, actor, reason string) (changed bool, err error)
	RecordAudit(ctx context.Context, r booking.AuditRecord) error
}

// Payments is the part of WeChat Pay the product uses (implemented by
// *wechatpay.Client; tests use the same client against the local simulator).
// An order WeChat has never heard of is booking.ErrOrderNotExist; a refund it
// refuses for good booking.ErrRefundRefused, one waiting for the merchant's
// balance booking.ErrRefundWaitsForBalance (errors.Is).
type Payments interface {
	Prepay(ctx context.Context, o booking.PayOrder) (*booking.PaymentParams, error)
	CloseOrder(ctx context.Context, outTradeNo string) error
	QueryOrder(ctx context.Context, outTradeNo string) (*booking.OrderState, error)
	Refund(ctx context.Context, r booking.RefundRequest) (*booking.RefundResult, error)
	QueryRefund(ctx context.Context, outRefundNo string) (*booking.RefundResult, error)
}

// prepay creates (or, for a retry, re-creates with identical parameters) the
// booking's WeChat order. Everything in the order derives from stored data, so
// a retry names the same order and WeChat answers a fresh prepay id for it.
func (s *Cashier) prepay(ctx context.Context, b *booking.Booking) (*booking.PaymentParams, error) {
	if s.Pay == nil {
		return nil, booking.Errorf(booking.EUPSTREAM, "WeChat Pay is not configured")
	}
	p, err := s.Pay.Prepay(ctx, booking.PayOrder{
		OutTradeNo:  b.OutTradeNo,
		Description: "美甲预约定金 " + b.StartAt.In(s.Loc).Format("2006-01-02 15:04"),
		OpenID:      b.OpenID,
		AmountFen:   b.AmountFen,
		TimeExpire:  b.LockExpire.Truncate(time.Second),
	})
	if err != nil {
		s.logger(ctx).Error("prepay failed", "booking_id", b.ID, "err", err.Error())
		return nil, booking.Errorf(booking.EUPSTREAM, "prepay booking %d: %v", b.ID, err)
	}
	return p, nil
}

// orderFate is what closing a pending booking's WeChat order and querying it
// proved: the close-then-query every release of a hold and every cancel of a
// pending booking makes before it frees the seat.
type orderFate struct {
	// unpayable: WeChat's signed answer proves nobody can pay it any more:
	// closed, or it never existed (neverExisted: prepay never succeeded).
	unpayable, neverExisted bool
	// paid is the verified payment when the order turns out paid for this
	// booking; mismatch says why a paid order is not this booking's.
	paid     *booking.Payment
	mismatch string
	// state is the order's state when it is none of those: NOTPAY after a
	// close that is not effective yet, USERPAYING (paying right now), PAYERROR
	// or REVOKED.
	state booking.TradeState
}

// closeThenQuery closes a pending booking's WeChat order and proves the outcome
// with a signed query (shared/wechatpay/README.md, "Releasing a hold: close,
// then query"). The close's own answer proves nothing (204 also for unknown or
// already closed orders; errors are unsigned), so its error is only logged and
// the query decides. An error means WeChat's answer is unknown: nothing may be
// freed.
func (s *Cashier) closeThenQuery(ctx context.Context, b *booking.Booking) (orderFate, error) {
	if s.Pay == nil {
		return orderFate{}, booking.Errorf(booking.EUPSTREAM, "WeChat Pay is not configured")
	}
	if err := s.Pay.CloseOrder(ctx, b.OutTradeNo); err != nil {
		s.logger(ctx).Info("close order", "booking_id", b.ID, "err", err.Error())
	}
	st, err := s.Pay.QueryOrder(ctx, b.OutTradeNo)
	switch {
	case errors.Is(err, booking.ErrOrderNotExist):
		return orderFate{unpayable: true, neverExisted: true}, nil
	case err != nil:
		return orderFate{}, booking.Errorf(booking.EUPSTREAM, "query order of booking %d: %v", b.ID, err)
	case st.TradeState == booking.TradeClosed:
		return orderFate{unpayable: true}, nil
	case st.TradeState.Paid():
		if why := s.mismatch(b, st); why != "" {
			return orderFate{mismatch: why, state: st.TradeState}, nil
		}
		p := paymentOf(st)
		return orderFate{paid: &p}, nil
	}
	return orderFate{state: st.TradeState}, nil
}

// closeOrder is the cancel's close-then-query: the verified payment when the
// order turns out paid, nil when nobody can pay it any more, and an error when
// the outcome is unknown or the customer may be paying right now.
func (s *Cashier) closeOrder(ctx context.Context, b *booking.Booking, actor string) (*booking.Payment, error) {
	fate, err := s.closeThenQuery(ctx, b)
	switch {
	case err != nil:
		return nil, err
	case fate.unpayable:
		return nil, nil
	case fate.paid != nil:
		return fate.paid, nil
	case fate.mismatch != "":
		if err := s.rejectPayment(ctx, b, actor, "微信查单", "", fate.mismatch); err != nil {
			return nil, err
		}
		s.logger(ctx).Error("paid order does not match its booking; cancel refused", "booking_id", b.ID, "reason", fate.mismatch)
		return nil, booking.Errorf(booking.EINTERNAL, "booking %d: paid order does not match: %s", b.ID, fate.mismatch)
	}
	return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d: payment in progress (%s)", b.ID, fate.state)
}

// paymentOf is the payment a verified order state (a notification's or a signed
// query's) records on its booking.
func paymentOf(st *booking.OrderState) booking.Payment {
	p := booking.Payment{TransactionID: st.TransactionID, AmountFen: st.AmountTotal, PaidAt: time.Now()}
	if st.SuccessTime != nil {
		p.PaidAt = *st.SuccessTime
	}
	return p
}

// mismatch says why a verified payment cannot be for booking b, or "".
func (s *Cashier) mismatch(b *booking.Booking, st *booking.OrderState) string {
	switch {
	case st.AppID != s.AppID:
		return fmt.Sprintf("appid %q", st.AppID)
	case st.MchID != s.MchID:
		return fmt.Sprintf("mchid %q", st.MchID)
	case st.AmountTotal != b.AmountFen:
		return fmt.Sprintf("amount %d, booking %d", st.AmountTotal, b.AmountFen)
	}
	return ""
}

// Outcome says what a verified payment did.
type Outcome string

const (
	OutcomeConfirmed Outcome = "confirmed" // 0 -> 1, or 4 -> 1 for a late payment with a free seat
	OutcomeDuplicate Outcome = "duplicate" // already confirmed by an earlier copy
	OutcomeRefunded  Outcome = "refunded"  // no seat for the money: full refund started
	OutcomeRejected  Outcome = "rejected"  // verified but not for any booking of ours as it stands
)

// HandlePayment applies a verified payment notification. It answers an error only
// for transient failures (WeChat then retries); a notification that can never
// match is audited, logged as an error and answered as handled.
func (s *Cashier) HandlePayment(ctx context.Context, p *booking.PaymentNotice) (Outcome, error) {
	b, err := s.bookingOfOrder(ctx, p.OutTradeNo)
	if err != nil {
		return "", err
	}
	why := ""
	switch {
	case b == nil:
		why = fmt.Sprintf("unknown out_trade_no %q", p.OutTradeNo)
	case p.TradeState != booking.TradeSuccess:
		why = fmt.Sprintf("trade_state %q", p.TradeState)
	case p.OutTradeNo != b.OutTradeNo:
		// ParseOutTradeNo accepts only the canonical form, so this cannot differ
		// today; the check keeps "out_trade_no must match" true if the numbering
		// ever changes.
		why = fmt.Sprintf("out_trade_no %q, booking %q", p.OutTradeNo, b.OutTradeNo)
	default:
		why = s.mismatch(b, &p.OrderState)
	}
	if why != "" {
		if err := s.rejectNotification(ctx, b, "payment notification", p.EventID, why, "transaction_id", p.TransactionID); err != nil {
			return "", err
		}
		return OutcomeRejected, nil
	}
	out, err := s.settle(ctx, b, paymentOf(&p.OrderState))
	if err == nil {
		s.notify.notifyNow(ctx)
	}
	return out, err
}

// settle gives a verified payment its seat, or its money back. It is shared by
// the notification, the release run's query and the cancel's query, so a payment
// is treated the same however it is discovered. Concurrent copies race on the
// store's conditional status change; a loser re-reads and sees the winner's work.
func (s *Cashier) settle(ctx context.Context, b *booking.Booking, p booking.Payment) (Outcome, error) {
	for attempt := 0; attempt < 4; attempt++ {
		var err error
		switch b.Status {
		case booking.StatusPending:
			_, err = s.store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
				Event: booking.EventConfirm, Actor: booking.ActorWeChat, Reason: "已付款 " + p.TransactionID, Payment: &p})
			if err == nil {
				return OutcomeConfirmed, nil
			}
		case booking.StatusConfirmed, booking.StatusCompleted, booking.StatusNoShow:
			return OutcomeDuplicate, nil
		case booking.StatusExpired:
			if b.Refund != nil {
				// An earlier copy found no seat and refunded this payment: a copy
				// that arrives after a seat came free must not seat it as well.
				return s.refundPayment(ctx, b, p, "过期后付款，已退过款")
			}
			// Paid in the last second of the hold: re-seat if the slot is still
			// bookable with a free seat and the customer holds no other unfinished
			// booking (the store checks all of it in the change itself; a
			// technician's booking takes every cell of its span again, or none),
			// else refund in full: never into a slot that has started or was
			// closed, nor into a technician's time someone took or she is off.
			_, err = s.store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusExpired, To: booking.StatusConfirmed,
				Event: booking.EventLatePayment, Actor: booking.ActorWeChat, Reason: "过期后付款，重新占座 " + p.TransactionID, Payment: &p})
			if err == nil {
				return OutcomeConfirmed, nil
			}
			if booking.IsCode(err, booking.ESOLDOUT) || booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) || booking.IsCode(err, booking.ESLOTNOTBOOKABLE) {
				return s.refundPayment(ctx, b, p, "过期后付款，没有座位："+booking.ErrorCode(err))
			}
		case booking.StatusCancelled:
			if b.Refund == nil && b.Paid() && b.TransactionID == p.TransactionID {
				// This very payment was recorded and then kept by a late cancel:
				// a copy of its notification must not refund the deposit.
				return OutcomeDuplicate, nil
			}
			return s.refundPayment(ctx, b, p, "预约已取消后付款")
		}
		if !booking.IsCode(err, booking.EINVALIDSTATE) {
			return "", err
		}
		if b, err = s.store.FindBooking(ctx, b.ID); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("settle booking %d: status kept changing", b.ID)
}

// refundPayment records and requests the full refund of a payment that has no
// seat. A booking whose refund was already recorded (a paid booking cancelled, or
// an earlier copy of this notification) gets its refund requested again with the
// same refund number, which WeChat executes at most once.
func (s *Cashier) refundPayment(ctx context.Context, b *booking.Booking, p booking.Payment, reason string) (Outcome, error) {
	started := false
	if b.Refund == nil {
		var err error
		if started, err = s.store.StartRefund(ctx, b.ID, b.Status, p, booking.ActorWeChat, reason); err != nil {
			return "", err
		}
	}
	fresh, err := s.store.FindBooking(ctx, b.ID)
	if err != nil {
		return "", err
	}
	if fresh.Refund == nil {
		// The status moved under us (e.g. 4 -> 1 by a concurrent copy).
		return s.settle(ctx, fresh, p)
	}
	if _, err := s.requestRefund(ctx, fresh); err != nil {
		return "", err
	}
	if !started {
		// A replay, or a copy that lost the race to record the refund: the refund
		// is the earlier decision's, asked again at most with the same number.
		return OutcomeDuplicate, nil
	}
	s.logger(ctx).Warn("payment refunded", "booking_id", b.ID, "reason", reason)
	return OutcomeRefunded, nil
}

// deferRefund pushes a refund's next attempt back after a failure, so that it
// moves behind the refunds that are due before it.
func (s *Cashier) deferRefund(ctx context.Context, b *booking.Booking) {
	if err := s.store.DeferRefund(ctx, b.ID, retryBackoff(b.Refund.Attempts+1)); err != nil {
		s.logger(ctx).Warn("deferring a refund failed; the next run takes it again", "booking_id", b.ID, "err", err.Error())
	}
}

// requestRefund asks WeChat to refund a booking whose refund is recorded but not
// yet accepted. A transient failure leaves it pending, with its next attempt
// backed off, for the release run to ask again; WeChat's definite refusal marks
// it failed for the salon to handle.
func (s *Cashier) requestRefund(ctx context.Context, b *booking.Booking) (*booking.Booking, error) {
	if b.Refund == nil || b.Refund.Status != booking.RefundPending {
		return b, nil
	}
	log := s.logger(ctx)
	if s.Pay == nil {
		log.Error("refund pending: WeChat Pay is not configured", "booking_id", b.ID)
		return b, nil
	}
	res, err := s.Pay.Refund(ctx, booking.RefundRequest{
		OutTradeNo: b.OutTradeNo, OutRefundNo: b.Refund.OutRefundNo, Reason: "预约取消退款",
		RefundFen: b.Refund.AmountFen, TotalFen: b.Refund.AmountFen,
	})
	if err != nil {
		switch {
		case errors.Is(err, booking.ErrRefundRefused):
			log.Error("refund refused by WeChat", "booking_id", b.ID, "err", err.Error())
			if _, err := s.store.SetRefundState(ctx, b.ID, booking.RefundFailed, nil, "", booking.ActorWeChat, RefundReason(booking.RefundFailed, "微信拒绝："+err.Error())); err != nil {
				return nil, err
			}
		case errors.Is(err, booking.ErrRefundWaitsForBalance):
			// The same request succeeds once the salon tops the balance up, so it
			// stays pending (and loud) rather than being given up.
			log.Error("refund waits: merchant balance too low; the release run retries it", "booking_id", b.ID)
			s.deferRefund(ctx, b)
		default:
			log.Warn("refund request failed; the release run retries it", "booking_id", b.ID, "err", err.Error())
			s.deferRefund(ctx, b)
		}
		return s.store.FindBooking(ctx, b.ID)
	}
	to := res.Status.Outcome()
	if _, err := s.store.SetRefundState(ctx, b.ID, to, res.SuccessTime, res.RefundID, booking.ActorWeChat, RefundReason(to, res.RefundID)); err != nil {
		return nil, err
	}
	return s.store.FindBooking(ctx, b.ID)
}

// queryRefund settles a refund WeChat accepted but has not reported on for
// REFUND_QUERY_AFTER (its notification was lost, or never came): the signed
// query's answer is applied as the notification would have been. A refund still
// processing, or a query that fails, is asked again later, backed off.
func (s *Cashier) queryRefund(ctx context.Context, b *booking.Booking) (settled bool, err error) {
	res, err := s.Pay.QueryRefund(ctx, b.Refund.OutRefundNo)
	if err != nil {
		s.logger(ctx).Warn("refund query failed; asked again later", "booking_id", b.ID, "err", err.Error())
		s.deferRefund(ctx, b)
		return false, nil
	}
	to := res.Status.Outcome()
	if to == booking.RefundProcessing {
		s.deferRefund(ctx, b)
		return false, nil
	}
	if to == booking.RefundFailed {
		s.logger(ctx).Error("refund failed at WeChat; the salon must refund by hand", "booking_id", b.ID, "status", string(res.Status))
	}
	return s.store.SetRefundState(ctx, b.ID, to, res.SuccessTime, res.RefundID, booking.ActorTimer, RefundReason(to, "查询结果 "+string(res.Status)+" "+res.RefundID))
}

// HandleRefund records a verified refund notification's final state.
func (s *Cashier) HandleRefund(ctx context.Context, n *booking.RefundNotice) error {
	b, err := s.bookingOfOrder(ctx, n.OutTradeNo)
	if err != nil {
		return err
	}
	why := ""
	switch {
	case b == nil:
		why = fmt.Sprintf("unknown out_trade_no %q", n.OutTradeNo)
	case n.MchID != s.MchID:
		why = fmt.Sprintf("mchid %q", n.MchID)
	case b.Refund == nil || b.Refund.OutRefundNo != n.OutRefundNo:
		why = fmt.Sprintf("no refund %q on booking", n.OutRefundNo)
	case n.RefundFen != b.Refund.AmountFen:
		why = fmt.Sprintf("refund amount %d, recorded %d", n.RefundFen, b.Refund.AmountFen)
	}
	if why != "" {
		return s.rejectNotification(ctx, b, "refund notification", n.EventID, why)
	}
	// A notification comes only for a final state: anything but SUCCESS failed.
	to := booking.RefundFailed
	if n.RefundStatus == booking.WeChatRefundSuccess {
		to = booking.RefundSucceeded
	}
	_, err = s.store.SetRefundState(ctx, b.ID, to, n.SuccessTime, n.RefundID, booking.ActorWeChat, RefundReason(to, "退款通知 "+string(n.RefundStatus)+" "+n.RefundID))
	return err
}

// bookingOfOrder finds the booking a WeChat order number names; nil when it names
// none of ours (the caller audits that as a rejected notification).
func (s *Cashier) bookingOfOrder(ctx context.Context, outTradeNo string) (*booking.Booking, error) {
	id, ok := booking.ParseOutTradeNo(outTradeNo)
	if !ok {
		return nil, nil
	}
	b, err := s.store.FindBooking(ctx, id)
	if booking.IsCode(err, booking.ENOTFOUND) {
		return nil, nil
	}
	return b, err
}

// rejectNotification audits a verified notification that does not match its
// booking (b may be nil): it changes nothing, and a retry would not match either.
// It is logged as an error (with logAttrs) for whoever watches the logs.
func (s *Cashier) rejectNotification(ctx context.Context, b *booking.Booking, kind, eventID, why string, logAttrs ...any) error {
	var id int64
	if b != nil {
		id = b.ID
	}
	s.logger(ctx).Error(kind+" rejected", append([]any{"booking_id", id, "reason", why}, logAttrs...)...)
	return s.rejectPayment(ctx, b, booking.ActorWeChat, notificationWords[kind], eventID, why)
}

// notificationWords name WeChat Pay's notifications in the audit trail.
var notificationWords = map[string]string{"payment notification": "付款通知", "refund notification": "退款通知"}

// rejectPayment records, for the salon, a verified answer of WeChat Pay (a
// notification, or a signed query) that does not match its booking (b may be
// nil): the audit record `notification_rejected`. It changes nothing else: the
// seat is kept, and no money is moved on an answer that is not this booking's.
func (s *Cashier) rejectPayment(ctx context.Context, b *booking.Booking, actor, source, eventID, why string) error {
	rec := booking.AuditRecord{Event: booking.EventRejected, FromStatus: -1, ToStatus: -1, Actor: actor,
		Reason: strings.TrimSpace(source+" "+eventID) + " 与预约不符：" + why}
	if b != nil {
		rec.BookingID, rec.SlotID = b.ID, b.SlotID
	}
	return s.store.RecordAudit(ctx, rec)
}

// refundWords name a refund's state in the audit trail, which the salon reads.
var refundWords = map[booking.RefundStatus]string{
	booking.RefundPending:    "待发起",
	booking.RefundProcessing: "处理中",
	booking.RefundSucceeded:  "成功",
	booking.RefundFailed:     "失败",
}

// RefundReason is the audit reason of a refund reaching state to: the state in
// the salon's words, then detail (WeChat's refund id, or why).
func RefundReason(to booking.RefundStatus, detail string) string {
	w, ok := refundWords[to]
	if !ok {
		w = string(to)
	}
	return "退款" + w + "：" + detail
}
