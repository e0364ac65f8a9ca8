package app

import (
	"context"
	"errors"
	"strconv"
	"time"

	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/mysql"
	"salon/shared/wechatpay"
)

// Summary is the release run's answer to the timer.
type Summary struct {
	Released  int `json:"released"`
	Confirmed int `json:"confirmed"`
	Refunded  int `json:"refunded"`
	Audited   int `json:"audited"`
}

// budgetMargin is kept free before the invocation's deadline so the run can ship
// the audit and answer before SCF kills it.
const budgetMargin = 5 * time.Second

// Release is one run of the timer: it releases expired holds, retries refunds
// WeChat has not accepted yet, checks every future slot for drift, and ships the
// audit trail. Runs may overlap and repeat; each booking is leased to one run.
func (s *Service) Release(ctx context.Context) (Summary, error) {
	var sum Summary
	log := s.logger(ctx)
	stopAt := time.Now().Add(50 * time.Second)
	if dl, ok := ctx.Deadline(); ok {
		stopAt = dl.Add(-budgetMargin)
	}
	batch, lease := s.BatchSize, s.Lease
	if batch <= 0 {
		batch = 20
	}
	if lease <= 0 {
		lease = 50 * time.Second
	}

	for time.Now().Before(stopAt) {
		claimed, err := s.Store.ClaimExpired(ctx, batch, lease)
		if err != nil {
			return sum, err
		}
		if len(claimed) == 0 {
			break
		}
		for _, b := range claimed {
			if !time.Now().Before(stopAt) {
				break
			}
			switch outcome, err := s.releaseOne(ctx, b); {
			case err != nil:
				log.Warn("release left for the next run", "booking_id", b.ID, "err", err.Error())
			case outcome == "released":
				sum.Released++
			case outcome == OutcomeConfirmed:
				sum.Confirmed++
			}
		}
		if len(claimed) < batch {
			break
		}
	}

	refunds, err := s.Store.PendingRefunds(ctx, batch)
	if err != nil {
		return sum, err
	}
	for _, b := range refunds {
		if !time.Now().Before(stopAt) {
			break
		}
		if after, err := s.requestRefund(ctx, b); err == nil && after.Refund != nil && after.Refund.Status != booking.RefundPending {
			sum.Refunded++
		}
	}

	if err := s.Reconcile(ctx); err != nil {
		log.Error("reconciliation failed", "err", err.Error())
	}
	sum.Audited, err = s.ShipAudit(ctx)
	if err != nil {
		log.Warn("audit shipping failed; records wait in MySQL for the next run", "err", err.Error())
	}
	return sum, nil
}

// releaseOne follows the close-then-query sequence for one expired hold: the seat
// is freed only when WeChat's signed answer proves the order can no longer be
// paid; a paid order is confirmed instead; anything unknown waits for the next run.
func (s *Service) releaseOne(ctx context.Context, b *booking.Booking) (any, error) {
	release := func(reason string) (any, error) {
		_, err := s.Store.ChangeStatus(ctx, mysql.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusExpired,
			Event: booking.EventRelease, Actor: ActorTimer, Reason: reason})
		if booking.IsCode(err, booking.EINVALIDSTATE) {
			return "lost race", nil // a payment or a cancel got there first
		}
		if err != nil {
			return nil, err
		}
		return "released", nil
	}
	if s.Pay == nil {
		return nil, errors.New("WeChat Pay is not configured; holds cannot be proven unpaid")
	}
	if err := s.Pay.CloseOrder(ctx, b.OutTradeNo); err != nil {
		s.logger(ctx).Warn("close order", "booking_id", b.ID, "err", err.Error())
	}
	st, err := s.Pay.QueryOrder(ctx, b.OutTradeNo)
	if errors.Is(err, wechatpay.ErrOrderNotExist) {
		return release("expired; no WeChat order")
	}
	if err != nil {
		return nil, err
	}
	switch st.TradeState {
	case "CLOSED":
		return release("expired; WeChat order closed")
	case "SUCCESS", "REFUND":
		if why := s.mismatch(b, st.AppID, st.MchID, st.AmountTotal); why != "" {
			s.Store.RecordAudit(ctx, booking.AuditRecord{BookingID: b.ID, SlotID: b.SlotID, Event: booking.EventRejected,
				FromStatus: -1, ToStatus: -1, Actor: ActorTimer, Reason: "paid order does not match: " + why})
			return nil, errors.New("paid order does not match: " + why)
		}
		return s.settle(ctx, b, mysql.Payment{TransactionID: st.TransactionID, AmountFen: st.AmountTotal, PaidAt: paidAt(st.SuccessTime)})
	default:
		return nil, errors.New("order is " + st.TradeState + "; kept for the next run")
	}
}

// Reconcile compares every future slot's counter with its bookings and reports
// each drift as an audit record and an error log line. It never repairs: a drift
// is a bug to find, and "fixing" it could give a paid seat away.
func (s *Service) Reconcile(ctx context.Context) error {
	drifts, err := s.Store.FindDrift(ctx)
	if err != nil {
		return err
	}
	for _, d := range drifts {
		s.logger(ctx).Error("slot drift", "slot_id", d.SlotID, "booked", d.Booked, "holding", d.Holding, "capacity", d.Capacity)
		if err := s.Store.RecordAudit(ctx, booking.AuditRecord{SlotID: d.SlotID, Event: booking.EventDrift, FromStatus: -1, ToStatus: -1,
			Actor: "system", Reason: driftReason(d)}); err != nil {
			return err
		}
	}
	return nil
}

func driftReason(d mysql.SlotDrift) string {
	return "booked=" + itoa(d.Booked) + " holding=" + itoa(d.Holding) + " capacity=" + itoa(d.Capacity)
}

func itoa(n int) string { return strconv.Itoa(n) }

// ShipAudit sends unshipped audit records to CLS, oldest first, and marks them
// shipped once CLS accepted them. When CLS is down the records wait in MySQL; a
// crash between the upload and the mark sends them again with the same ids.
func (s *Service) ShipAudit(ctx context.Context) (int, error) {
	if s.Shipper == nil {
		var n int
		if recs, err := s.Store.UnshippedAudit(ctx, 1000); err == nil {
			n = len(recs)
		}
		s.logger(ctx).Info("CLS is not configured (CLS_ENDPOINT, CLS_TOPIC_ID); the audit trail stays in MySQL", "unshipped", n)
		return 0, nil
	}
	shipped := 0
	for {
		recs, err := s.Store.UnshippedAudit(ctx, 500)
		if err != nil || len(recs) == 0 {
			return shipped, err
		}
		if s.AuditOut != nil {
			for _, r := range recs {
				cls.WriteJSONLine(s.AuditOut, r)
			}
		}
		if err := s.Shipper.Ship(ctx, "salon-release", recs); err != nil {
			return shipped, err
		}
		ids := make([]int64, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		if err := s.Store.MarkShipped(ctx, ids); err != nil {
			return shipped, err
		}
		shipped += len(recs)
		if len(recs) < 500 {
			return shipped, nil
		}
	}
}
