// Package service is what the functions do: it combines the store with WeChat Pay so
// that each function's main only parses its event, calls one method here, and
// shapes the answer. Every status change still goes through the store's one
// status-change path; this package decides which change to ask for.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"salon/shared/booking"
	"salon/shared/logctx"
)

// AuditWriter writes a shipped audit record where the function's own log
// collects it (cls.JSONLines on stdout).
type AuditWriter interface {
	WriteAudit(rec booking.AuditRecord) error
}

// AuditShipper delivers audit records to CLS (implemented by *cls.Shipper).
type AuditShipper interface {
	Ship(ctx context.Context, source string, recs []booking.AuditRecord) error
}

// Service holds the product's behaviour.
type Service struct {
	store Store
	// Pay is nil when WeChat Pay is not configured: free slots still work, a paid
	// reservation keeps its hold and answers UPSTREAM_UNAVAILABLE.
	Pay Payments
	// AppID and MchID are what every verified payment must name.
	AppID, MchID string
	Loc          *time.Location
	Log          *slog.Logger

	// Release run settings.
	Shipper   AuditShipper // nil: the audit stays in MySQL only
	AuditOut  AuditWriter  // one line per shipped record (stdout on SCF); nil: none
	BatchSize int
	Lease     time.Duration

	// Policy is the salon's rules in numbers (package config reads it from the
	// settings); the store is given the same value.
	Policy booking.Policy

	// Messages sends customer notifications; nil (WX_APPID unset) leaves them
	// waiting in the outbox.
	Messages Messenger

	// Phones exchanges the mini-program's phone codes; nil (WX_APPID or
	// WX_APPSECRET unset) answers UPSTREAM_UNAVAILABLE to a phone code.
	Phones Phones
}

// New returns the service over store, with the default policy; the caller
// sets the rest (WeChat Pay, the shop's time zone, the policy from the
// settings). The store is reachable only through the service: a handler has no
// way around its rules.
func New(store Store) *Service {
	return &Service{store: store, Policy: booking.DefaultPolicy, Loc: time.UTC}
}

// Close closes the store, at the end of a warm instance.
func (s *Service) Close() error { return s.store.Close() }

// logger returns the request's logger (request id, function, route) when ctx
// carries one, else the service's.
func (s *Service) logger(ctx context.Context) *slog.Logger {
	return logctx.From(ctx, s.Log)
}

// Reservation is a booking with the WeChat payment parameters for it, if a deposit
// is due.
type Reservation struct {
	Booking *booking.Booking
	Payment *booking.PaymentParams
	Created bool
}

// Reserve takes a seat (steps 1-3 of "The reservation, step by step" in
// shared/README.md) and then asks WeChat for the payment (step 4). If WeChat
// cannot be reached the booking stays pending and the error is
// UPSTREAM_UNAVAILABLE: the customer asks again with the same idempotency key or
// POST /bookings/{id}/pay, and the timer releases the hold if they never pay.
func (s *Service) Reserve(ctx context.Context, openid string, slotID int64, idemKey string) (*Reservation, error) {
	if err := s.checkNoShowLimit(ctx, openid); err != nil {
		return nil, err
	}
	b, created, err := s.store.Reserve(ctx, booking.ReserveRequest{OpenID: openid, SlotID: slotID, IdemKey: idemKey})
	if err != nil {
		return nil, err
	}
	r := &Reservation{Booking: b, Created: created}
	if b.Status != booking.StatusPending {
		return r, nil
	}
	r.Payment, err = s.prepay(ctx, b)
	return r, err
}

// checkNoShowLimit refuses a customer with NO_SHOW_LIMIT or more no-shows whose
// slots started in the last 90 days. Off (no query at all) when the limit is 0.
func (s *Service) checkNoShowLimit(ctx context.Context, openid string) error {
	if s.Policy.NoShowLimit <= 0 {
		return nil
	}
	n, err := s.store.CountNoShows(ctx, openid, booking.NoShowWindow)
	if err != nil {
		return err
	}
	if n >= s.Policy.NoShowLimit {
		return booking.Errorf(booking.ENOSHOWLIMIT, "customer has %d no-shows in 90 days, limit %d", n, s.Policy.NoShowLimit)
	}
	return nil
}

// PayAgain answers the payment parameters again for the customer's own pending
// booking, for the same WeChat order. A pending booking with nothing to pay (a
// waitlist offer of a free slot) is the customer accepting it: it is confirmed,
// and the answer has no payment.
func (s *Service) PayAgain(ctx context.Context, openid string, bookingID int64) (*Reservation, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	if b.Status != booking.StatusPending {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s, nothing to pay", b.ID, b.Status)
	}
	if b.AmountFen == 0 {
		b, err := s.store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
			Event: booking.EventConfirm, Actor: booking.ActorCustomer, Reason: "顾客接受了免费时段的座位"})
		if err != nil {
			return nil, err
		}
		s.notifyNow(ctx) // a reminder may be due at once
		return &Reservation{Booking: b}, nil
	}
	p, err := s.prepay(ctx, b)
	return &Reservation{Booking: b, Payment: p}, err
}

// prepay creates (or, for a retry, re-creates with identical parameters) the
// booking's WeChat order. Everything in the order derives from stored data, so
// a retry names the same order and WeChat answers a fresh prepay id for it.
func (s *Service) prepay(ctx context.Context, b *booking.Booking) (*booking.PaymentParams, error) {
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

// CancelByCustomer cancels the customer's own booking, until its slot starts.
// A paid booking is refunded in full until its cancelFreeUntil; after that the
// customer must say forfeitDeposit to cancel, and the deposit is kept
// (LATE_CANCEL otherwise, nothing changed). A pending booking is free to cancel.
func (s *Service) CancelByCustomer(ctx context.Context, openid string, bookingID int64, forfeitDeposit bool) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	if !b.StartAt.After(now) {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d: slot has started", b.ID)
	}
	out, err := s.cancel(ctx, b, cancelRequest{actor: booking.ActorCustomer, now: now, forfeit: forfeitDeposit})
	if err == nil {
		s.notifyNow(ctx) // the freed seat may have gone to the waitlist
	}
	return out, err
}

// CancelBySalon cancels any booking before check-in, always with a full refund
// of what was paid. A booking paid through WeChat is refunded, which is the
// owner's (booking.CancelAction): a staff member may cancel only one that has
// nothing to refund, and FORBIDDEN otherwise, before anything changes. If
// WeChat reports her unpaid booking paid while she cancels it (closing its
// order finds it paid), the payment is settled, the booking stays confirmed
// and her cancel is FORBIDDEN: its refund is the owner's to decide.
func (s *Service) CancelBySalon(ctx context.Context, bookingID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionCancelUnpaid)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	if err := who.Role.Allow(booking.CancelAction(b)); err != nil {
		return nil, booking.Errorf(booking.EFORBIDDEN, "booking %d is paid: its cancel refunds it (%v)", b.ID, err)
	}
	out, err := s.cancel(ctx, b, cancelRequest{actor: booking.ActorSalon, by: who.Actor(),
		nothingToRefund: !who.Role.May(booking.ActionCancel)})
	if err == nil {
		s.notifyNow(ctx)
	}
	return out, err
}

// cancelRequest says who cancels and, for a customer, when (the database's
// clock) and whether they accept losing the deposit of a late cancel.
type cancelRequest struct {
	actor string
	// by is who at the salon cancels (Staff.Actor), for the audit trail.
	by      string
	now     time.Time
	forfeit bool
	// paidWhileCancelling: the customer asked to cancel a pending booking, and
	// WeChat's answer showed it paid meanwhile (its notification had not
	// arrived). She cancelled what she saw as unpaid, so it is a free cancel.
	paidWhileCancelling bool
	// nothingToRefund: the asker may cancel only what has nothing to refund
	// (a staff member): a booking found paid is FORBIDDEN, and stays confirmed.
	nothingToRefund bool
}

// late reports whether the policy keeps the deposit of this cancel: a customer
// cancelling a paid booking after its cancelFreeUntil. The salon's cancel is
// never late, nor is the cancel of a booking the customer saw as unpaid.
func (s *Service) late(b *booking.Booking, r cancelRequest) bool {
	return r.actor == booking.ActorCustomer && !r.paidWhileCancelling && b.Paid() && r.now.After(b.CancelFreeUntil(s.Policy.CancelFreeHours))
}

// cancel cancels a pending or confirmed booking. A pending booking's WeChat order
// is closed first and the close is proven by a signed query: if the customer paid
// meanwhile, the cancel goes on as the cancel of a paid booking.
func (s *Service) cancel(ctx context.Context, b *booking.Booking, r cancelRequest) (*booking.Booking, error) {
	// Every change below is this booking's cancel by this asker, in the slot the
	// policy was decided on (a booking moved meanwhile makes it INVALID_STATE).
	cancelTo := func(from booking.Status, event, reason string) booking.Change {
		return booking.Change{BookingID: b.ID, From: from, To: booking.StatusCancelled, Event: event,
			Actor: r.actor, By: r.by, Reason: reason, SlotID: b.SlotID}
	}
	switch b.Status {
	case booking.StatusPending:
		if b.AmountFen > 0 {
			paid, err := s.closeOrder(ctx, b, cancelTo(b.Status, booking.EventCancel, "").AuditActor())
			if err != nil {
				return nil, err
			}
			if paid != nil {
				if _, err := s.settle(ctx, b, *paid); err != nil {
					return nil, err
				}
				if b, err = s.store.FindBooking(ctx, b.ID); err != nil {
					return nil, err
				}
				r.paidWhileCancelling = true
				return s.cancel(ctx, b, r)
			}
		}
		return s.store.ChangeStatus(ctx, cancelTo(booking.StatusPending, booking.EventCancel, "付款前取消"))
	case booking.StatusConfirmed:
		if r.nothingToRefund && b.Paid() {
			// Found paid (by the close of a pending booking's order, above,
			// too): settled and confirmed, and its refund is the owner's.
			return nil, booking.Errorf(booking.EFORBIDDEN, "booking %d is paid: the refund is the owner's", b.ID)
		}
		if s.late(b, r) {
			if !r.forfeit {
				return nil, booking.Errorf(booking.ELATECANCEL, "booking %d: free cancel ended %s", b.ID, b.CancelFreeUntil(s.Policy.CancelFreeHours).Format(time.RFC3339))
			}
			// The seat goes back; the deposit is kept, as the customer accepted.
			return s.store.ChangeStatus(ctx, cancelTo(booking.StatusConfirmed, booking.EventLateCancel, "临近开始取消，定金不退"))
		}
		reason := "取消，未付款无需退款"
		if b.Paid() {
			reason = "付款后取消，全额退款"
		}
		// The state machine refunds a paid booking's cancel in full, recorded in
		// the change itself; WeChat is asked right after the commit.
		out, err := s.store.ChangeStatus(ctx, cancelTo(booking.StatusConfirmed, booking.EventCancel, reason))
		if err != nil || out.Refund == nil {
			return out, err
		}
		return s.requestRefund(ctx, out)
	default:
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s", b.ID, b.Status)
	}
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
func (s *Service) closeThenQuery(ctx context.Context, b *booking.Booking) (orderFate, error) {
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
func (s *Service) closeOrder(ctx context.Context, b *booking.Booking, actor string) (*booking.Payment, error) {
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
func (s *Service) mismatch(b *booking.Booking, st *booking.OrderState) string {
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

// CheckIn marks a booking completed when the customer arrives: a confirmed one,
// or a no-show the staff forgot to check in (late check-in). Against a no-show
// marked at the same moment exactly one of the two wins; the other is
// INVALID_STATE.
func (s *Service) CheckIn(ctx context.Context, bookingID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionCheckIn)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	reason := "已签到"
	switch b.Status {
	case booking.StatusConfirmed:
	case booking.StatusNoShow:
		reason = "补签到（原为未到店）"
	default:
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s", b.ID, b.Status)
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	if !b.CanCheckIn(now, s.Policy.CheckinOpensBefore) {
		return nil, booking.Errorf(booking.ETOOEARLY, "booking %d: check-in opens %s", b.ID,
			b.CheckInOpens(s.Policy.CheckinOpensBefore).Format(time.RFC3339))
	}
	return s.store.ChangeStatus(ctx, booking.Change{BookingID: bookingID, From: b.Status, To: booking.StatusCompleted,
		Event: booking.EventCheckIn, Actor: booking.ActorSalon, By: who.Actor(), Reason: reason, SlotID: b.SlotID})
}

// MarkNoShow records that the customer of a confirmed booking did not come. The
// salon can do it once the slot has started; the seat stays sold and the deposit
// is kept, and the booking is finished, so the customer can book again.
func (s *Service) MarkNoShow(ctx context.Context, bookingID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionNoShow)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	if b.Status == booking.StatusConfirmed && !b.CanMarkNoShow(now) {
		return nil, booking.Errorf(booking.ETOOEARLY, "booking %d: slot has not started", b.ID)
	}
	return s.store.ChangeStatus(ctx, booking.Change{BookingID: bookingID, From: booking.StatusConfirmed, To: booking.StatusNoShow,
		Event: booking.EventNoShow, Actor: booking.ActorSalon, By: who.Actor(), Reason: "门店标记未到店", SlotID: b.SlotID})
}

// RescheduleByCustomer moves the customer's own confirmed booking to slotID
// (shared/README.md, "A reschedule: one transaction"): someone else's booking
// is NOT_FOUND; the rules (cancelFreeUntil, RESCHEDULE_LIMIT, the same price,
// a slot she could reserve, a free seat) are decided by package booking on
// the facts the store reads in the move's transaction. A booking the salon
// moved since she looked is INVALID_STATE.
func (s *Service) RescheduleByCustomer(ctx context.Context, openid string, bookingID, slotID int64) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	out, err := s.store.Reschedule(ctx, booking.Change{BookingID: b.ID, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: booking.ActorCustomer, Reason: "顾客改约", SlotID: b.SlotID, ToSlotID: slotID})
	if err == nil {
		s.notifyNow(ctx) // the freed seat may have gone to the waitlist; a reminder may be due
	}
	return out, err
}

// RescheduleBySalon moves a confirmed booking to any slot that has not ended,
// at any price (the deposit stays as paid), not counted against the
// customer's limit; the customer gets the rescheduled notification. The move
// is decided on the slot the salon saw the booking in: fromSlotID (the slot
// the page showed), or, 0, the slot of the read here; a booking found in
// another slot in the move's transaction (moved meanwhile, by a concurrent
// move too) is INVALID_STATE and nothing changes, so of two moves of one
// booking from the same slot exactly one is made.
func (s *Service) RescheduleBySalon(ctx context.Context, bookingID, slotID, fromSlotID int64) (*booking.Booking, error) {
	who, err := allow(ctx, booking.ActionReschedule)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindBooking(ctx, bookingID)
	if err != nil {
		return nil, err
	}
	if fromSlotID == 0 {
		fromSlotID = b.SlotID
	}
	out, err := s.store.Reschedule(ctx, booking.Change{BookingID: bookingID, From: booking.StatusConfirmed, To: booking.StatusConfirmed,
		Event: booking.EventReschedule, Actor: booking.ActorSalon, By: who.Actor(), Reason: "门店改约", SlotID: fromSlotID, ToSlotID: slotID})
	if err == nil {
		s.notifyNow(ctx)
	}
	return out, err
}

// CreateSchedule opens the schedule's slots; existing starts are skipped.
func (s *Service) CreateSchedule(ctx context.Context, sched booking.Schedule) (created, skipped int, err error) {
	if _, err := allow(ctx, booking.ActionSchedule); err != nil {
		return 0, 0, err
	}
	slots, err := sched.Slots(s.Loc)
	if err != nil {
		return 0, 0, err
	}
	return s.store.CreateSlots(ctx, slots)
}

// UpdateSlot applies the salon's change to a slot: a larger or smaller capacity
// (never below what is booked), or closing it to new bookings.
func (s *Service) UpdateSlot(ctx context.Context, slotID int64, u booking.SlotUpdate) (*booking.SlotView, error) {
	who, err := allow(ctx, booking.ActionSlotChange)
	if err != nil {
		return nil, err
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	v, err := s.store.UpdateSlot(ctx, slotID, u, who.Actor())
	if err == nil {
		s.notifyNow(ctx) // new seats may have gone to the waitlist
	}
	return v, err
}

// Classify gives an error from the service the code its answer needs: a
// database that did not answer, refused the connection or dropped it is
// UNAVAILABLE (the store knows which of its errors those are); any other error
// is returned as it is. The handlers apply it to every error they answer.
func (s *Service) Classify(err error) error { return s.store.Classify(err) }

// Now is the database's clock, the one every rule about time is decided by.
func (s *Service) Now(ctx context.Context) (time.Time, error) { return s.store.Now(ctx) }

// Ping checks that the database answers (GET /healthz).
func (s *Service) Ping(ctx context.Context) error { return s.store.Ping(ctx) }

// Schedule returns the slots starting in [from, to), each with whether it can be
// booked now.
func (s *Service) Schedule(ctx context.Context, from, to time.Time) ([]booking.SlotView, error) {
	return s.store.ListSlots(ctx, from, to)
}

// ScheduleWithWaitlists is Schedule with each slot's waitlist length, for the
// salon's week (the public schedule does not show it, so it does not pay for it).
func (s *Service) ScheduleWithWaitlists(ctx context.Context, from, to time.Time) ([]booking.SlotView, error) {
	vs, err := s.store.ListSlots(ctx, from, to)
	if err != nil || len(vs) == 0 {
		return vs, err
	}
	ids := make([]int64, len(vs))
	for i := range vs {
		ids[i] = vs[i].ID
	}
	waiting, err := s.store.WaitlistLengths(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		vs[i].Waiting = waiting[vs[i].ID]
	}
	return vs, nil
}

// CustomerBookings returns the customer's bookings, finished ones too, newest
// first, at most limit, each of today's with its check-in code.
func (s *Service) CustomerBookings(ctx context.Context, openid string, limit int) ([]*booking.Booking, error) {
	bs, err := s.store.ListCustomerBookings(ctx, openid, limit)
	if err != nil {
		return nil, err
	}
	return bs, s.withCheckinCodes(ctx, bs...)
}

// CustomerBooking returns the customer's own booking, with its check-in code
// on the appointment day; someone else's is NOT_FOUND, like one that does not
// exist.
func (s *Service) CustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, id)
	if err != nil {
		return nil, err
	}
	return b, s.withCheckinCodes(ctx, b)
}

// withCheckinCodes fills in the check-in code of each booking that shows one
// now (booking.HasCheckinCode, by the database's clock), giving it one the
// first time.
func (s *Service) withCheckinCodes(ctx context.Context, bs ...*booking.Booking) error {
	var now time.Time
	for _, b := range bs {
		if !b.SoldSeat() {
			continue // no code whatever the day: no need for the clock
		}
		if now.IsZero() {
			var err error
			if now, err = s.store.Now(ctx); err != nil {
				return err
			}
		}
		if !b.HasCheckinCode(now, s.Loc) {
			continue
		}
		// "" when the booking moved or changed since it was read: no code
		// of the day it was read for on a booking that is no longer there.
		code, err := s.store.CheckinCode(ctx, b, booking.ShopDay(now, s.Loc))
		if err != nil {
			return err
		}
		b.CheckinCode = code
	}
	return nil
}

// CheckInByCode checks in the booking of today (shop time) that carries the
// check-in code the customer shows at the door: the same rules as CheckIn (a
// confirmed booking from CHECKIN_OPENS_BEFORE, a no-show any time, one already
// checked in INVALID_STATE). A code of the wrong shape is BAD_REQUEST; one no
// booking of today has, NOT_FOUND.
func (s *Service) CheckInByCode(ctx context.Context, code string) (*booking.Booking, error) {
	if _, err := allow(ctx, booking.ActionCheckIn); err != nil {
		return nil, err
	}
	if !booking.ValidCheckinCode(code) {
		return nil, booking.Errorf(booking.EBADREQUEST, "code: want %d digits", booking.CheckinCodeLen)
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.store.FindByCheckinCode(ctx, booking.ShopDay(now, s.Loc), code)
	if err != nil {
		return nil, err
	}
	out, err := s.CheckIn(ctx, b.ID)
	if err == nil {
		out.CheckinCode = code
	}
	return out, err
}

// DoorBooking returns the booking of today (shop time) with the check-in code,
// as it is now, for the door to say why a check-in by that code was refused;
// NOT_FOUND when no booking of today has it.
func (s *Service) DoorBooking(ctx context.Context, code string) (*booking.Booking, error) {
	if !booking.ValidCheckinCode(code) {
		return nil, booking.Errorf(booking.EBADREQUEST, "code: want %d digits", booking.CheckinCodeLen)
	}
	now, err := s.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.FindByCheckinCode(ctx, booking.ShopDay(now, s.Loc), code)
}

// DayBookings returns the bookings of the slots starting in [from, to), for the
// salon's day view.
func (s *Service) DayBookings(ctx context.Context, from, to time.Time) ([]*booking.Booking, error) {
	return s.store.ListSlotBookings(ctx, from, to)
}
