package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Cancels are the cancels of a booking: by the customer (function cancel) and
// by the salon (function admin), with the close of a pending booking's WeChat
// order and the refund of a paid one.
type Cancels struct {
	*Common
	store   CancelsStore
	cashier *Cashier
	notify  *Notifier
}

// CancelsStore is what Cancels asks of the store.
type CancelsStore interface {
	FindCustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error)
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
}

// CancelByCustomer cancels the customer's own booking, until its slot starts.
// A paid booking is refunded in full until its cancelFreeUntil; after that the
// customer must say forfeitDeposit to cancel, and the deposit is kept
// (LATE_CANCEL otherwise, nothing changed). A pending booking is free to cancel.
func (s *Cancels) CancelByCustomer(ctx context.Context, openid string, bookingID int64, forfeitDeposit bool) (*booking.Booking, error) {
	b, err := s.store.FindCustomerBooking(ctx, openid, bookingID)
	if err != nil {
		return nil, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	if !b.StartAt.After(now) {
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d: slot has started", b.ID)
	}
	out, err := s.cancel(ctx, b, cancelRequest{actor: booking.ActorCustomer, now: now, forfeit: forfeitDeposit})
	if err == nil {
		s.notify.notifyNow(ctx) // the freed seat may have gone to the waitlist
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
func (s *Cancels) CancelBySalon(ctx context.Context, bookingID int64) (*booking.Booking, error) {
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
		s.notify.notifyNow(ctx)
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
func (s *Cancels) late(b *booking.Booking, r cancelRequest) bool {
	return r.actor == booking.ActorCustomer && !r.paidWhileCancelling && b.Paid() && r.now.After(b.CancelFreeUntil(s.Policy.CancelFreeHours))
}

// cancel cancels a pending or confirmed booking. A pending booking's WeChat order
// is closed first and the close is proven by a signed query: if the customer paid
// meanwhile, the cancel goes on as the cancel of a paid booking.
func (s *Cancels) cancel(ctx context.Context, b *booking.Booking, r cancelRequest) (*booking.Booking, error) {
	// Every change below is this booking's cancel by this asker, in the slot the
	// policy was decided on (a booking moved meanwhile makes it INVALID_STATE).
	cancelTo := func(from booking.Status, event, reason string) booking.Change {
		return booking.Change{BookingID: b.ID, From: from, To: booking.StatusCancelled, Event: event,
			Actor: r.actor, By: r.by, Reason: reason, SlotID: b.SlotID}
	}
	switch b.Status {
	case booking.StatusPending:
		if b.AmountFen > 0 {
			paid, err := s.cashier.closeOrder(ctx, b, cancelTo(b.Status, booking.EventCancel, "").AuditActor())
			if err != nil {
				return nil, err
			}
			if paid != nil {
				if _, err := s.cashier.settle(ctx, b, *paid); err != nil {
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
		return s.cashier.requestRefund(ctx, out)
	default:
		return nil, booking.Errorf(booking.EINVALIDSTATE, "booking %d is %s", b.ID, b.Status)
	}
}
