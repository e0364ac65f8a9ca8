package stress

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"salon/shared/booking"
	"salon/shared/cls"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
	"salon/shared/wechatpay/wxpaysim"
)

type dbBooking struct {
	id, slot     int64
	openid       string
	status       int
	amount       int64
	tx           string
	refundStatus sql.NullString
	refundFen    sql.NullInt64
	refundNo     sql.NullString
}

type dbAudit struct {
	id, book int64
	event    string
	from, to int
	reason   string
	shipped  bool
}

func (s *system) loadState() (map[int64]*dbBooking, []dbAudit, error) {
	db := s.store.SQL()
	rows, err := db.Query(`SELECT book_id, slot_id, COALESCE(openid, ''), status, amount_fen, COALESCE(transaction_id, ''),
		refund_status, refund_fen, refund_no FROM t_booking`)
	if err != nil {
		return nil, nil, err
	}
	bs := map[int64]*dbBooking{}
	for rows.Next() {
		var b dbBooking
		if err := rows.Scan(&b.id, &b.slot, &b.openid, &b.status, &b.amount, &b.tx, &b.refundStatus, &b.refundFen, &b.refundNo); err != nil {
			rows.Close()
			return nil, nil, err
		}
		bs[b.id] = &b
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = db.Query(`SELECT audit_id, COALESCE(book_id, 0), event, COALESCE(from_status, -1), COALESCE(to_status, -1),
		reason, shipped_at IS NOT NULL FROM t_audit ORDER BY audit_id`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var as []dbAudit
	for rows.Next() {
		var a dbAudit
		if err := rows.Scan(&a.id, &a.book, &a.event, &a.from, &a.to, &a.reason, &a.shipped); err != nil {
			return nil, nil, err
		}
		as = append(as, a)
	}
	return bs, as, rows.Err()
}

// transitions are the status changes of the state table in shared/README.md
// ("States"), by audit event.
var transitions = map[string][][2]int{
	booking.EventReserve:       {{-1, 0}, {-1, 1}},
	booking.EventWaitlistOffer: {{-1, 0}}, // never confirmed unasked, also when free
	booking.EventWalkIn:        {{-1, 1}},
	booking.EventConfirm:       {{0, 1}},
	booking.EventLatePayment:   {{4, 1}},
	booking.EventCheckIn:       {{1, 2}, {5, 2}},
	booking.EventCancel:        {{0, 3}, {1, 3}},
	booking.EventLateCancel:    {{1, 3}},
	booking.EventRelease:       {{0, 4}},
	booking.EventNoShow:        {{1, 5}},
	booking.EventReschedule:    {{1, 1}},
}

// check compares the database, WeChat Pay's books and the audit trail with the
// model. final adds what must hold once everything has settled: every payment
// ended as a seat or as a full refund, and the whole audit trail is in CLS.
func (m *model) check(final bool) {
	s := m.s
	s.dropIdleConnections()
	mysqltest.CheckInvariant(s.t, s.store)
	bs, audits, err := s.loadState()
	if err != nil {
		s.violate("checker could not read the database: %v", err)
		return
	}
	orders := map[string]wxpaysim.Order{}
	for _, o := range s.sim.Orders() {
		orders[o.OutTradeNo] = o
	}
	refunds := map[string][]wxpaysim.Refund{}
	for _, rf := range s.sim.Refunds() {
		refunds[rf.OutTradeNo] = append(refunds[rf.OutTradeNo], rf)
	}

	// No refund without a payment, none twice, each for the full amount.
	for no, rfs := range refunds {
		o, ok := orders[no]
		if !ok || o.State != wxpaysim.StateSuccess {
			s.violate("refund of %s, an order that was never paid (%s)", no, o.State)
			continue
		}
		if len(rfs) > 1 {
			s.violate("order %s refunded %d times", no, len(rfs))
		}
		for _, rf := range rfs {
			if rf.Amount != o.Total || rf.Total != o.Total || rf.TransactionID != o.TransactionID {
				s.violate("refund %s of %s: %d of %d fen (paid %d, tx %s/%s)", rf.OutRefundNo, no, rf.Amount, rf.Total, o.Total, rf.TransactionID, o.TransactionID)
			}
		}
	}

	// A customer's late cancel keeps the deposit, by the policy: the only paid
	// booking without a seat that is not refunded.
	lateCancel := map[int64]bool{}
	for _, a := range audits {
		if a.event == booking.EventLateCancel {
			lateCancel[a.book] = true
		}
	}
	for _, b := range bs {
		no := booking.OutTradeNo(b.id)
		o, hasOrder := orders[no]
		paid := hasOrder && o.State == wxpaysim.StateSuccess
		if hasOrder && (o.Total != b.amount || o.OpenID != b.openid) {
			s.violate("booking %d: WeChat order for %d fen by %s, booking %d fen by %s", b.id, o.Total, o.OpenID, b.amount, b.openid)
		}
		if b.amount == 0 && (hasOrder || b.refundStatus.Valid) {
			s.violate("free booking %d has a WeChat order or a refund", b.id)
		}
		// Paid seats: confirmed, completed, and no-shows (the seat was sold).
		seat := b.status == int(booking.StatusConfirmed) || b.status == int(booking.StatusCompleted) || b.status == int(booking.StatusNoShow)
		if b.amount > 0 && seat && !paid {
			s.violate("booking %d is %s without a payment at WeChat", b.id, booking.Status(b.status))
		}
		if b.tx != "" && (!paid || o.TransactionID != b.tx) {
			s.violate("booking %d records transaction %s, WeChat has %q (%s)", b.id, b.tx, o.TransactionID, o.State)
		}
		if b.refundStatus.Valid {
			if b.tx == "" || !paid {
				s.violate("booking %d has a refund but no verified payment", b.id)
			}
			if b.refundFen.Int64 != b.amount || b.refundNo.String != booking.OutRefundNo(b.id) {
				s.violate("booking %d: refund %s of %d fen, paid %d", b.id, b.refundNo.String, b.refundFen.Int64, b.amount)
			}
			if seat {
				s.violate("booking %d keeps its seat and has a refund (%s)", b.id, b.refundStatus.String)
			}
			if lateCancel[b.id] {
				s.violate("booking %d was cancelled late, its deposit kept, and has a refund (%s)", b.id, b.refundStatus.String)
			}
		}
		if !b.refundStatus.Valid && len(refunds[no]) > 0 {
			s.violate("WeChat refunded booking %d, which records no refund", b.id)
		}
		if final && paid && b.tx != o.TransactionID {
			s.violate("booking %d was paid at WeChat (%s) and does not record it", b.id, o.TransactionID)
		}
		if final && paid {
			switch {
			case seat && !b.refundStatus.Valid:
			case lateCancel[b.id] && b.status == int(booking.StatusCancelled) && !b.refundStatus.Valid:
			case !seat && b.refundStatus.String == string(booking.RefundSucceeded) && len(refunds[no]) == 1 && refunds[no][0].Status == wxpaysim.RefundSuccess:
			default:
				s.violate("payment %s of booking %d (%s, refund %q) is neither a seat nor a full refund", no, b.id, booking.Status(b.status), b.refundStatus.String)
			}
		}
	}

	m.checkLedger(bs, orders, refunds, final)
	m.checkTechnicians()
	m.checkMessages(bs)
	m.checkAudit(bs, audits)
	if final {
		m.checkCLS(audits)
	}
}

// ledgerSums are one booking's rows of the money ledger, added up by kind.
type ledgerSums struct {
	deposit, refund, kept, balance int64
	deposits, refunds              int // rows
}

// loadLedger reads the money ledger, per booking.
func (s *system) loadLedger() (map[int64]*ledgerSums, error) {
	rows, err := s.store.SQL().Query(`SELECT book_id, kind, amount_fen FROM t_money`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]*ledgerSums{}
	for rows.Next() {
		var id, fen int64
		var kind string
		if err := rows.Scan(&id, &kind, &fen); err != nil {
			return nil, err
		}
		l := out[id]
		if l == nil {
			l = &ledgerSums{}
			out[id] = l
		}
		switch booking.MoneyKind(kind) {
		case booking.MoneyDeposit:
			l.deposit += fen
			l.deposits++
		case booking.MoneyRefund:
			l.refund += fen
			l.refunds++
		case booking.MoneyKept:
			l.kept += fen
		case booking.MoneyBalance:
			l.balance += fen
		}
	}
	return out, rows.Err()
}

// checkLedger checks that money is conserved, counted from the ledger alone,
// for every booking:
//
//	deposits = refunds + kept + held
//
// where held is the deposit of a paid booking that still holds its seat as a
// sale (confirmed or completed; a no-show's is kept, a no-show checked in late
// has its kept rows cancel out) or whose refund has not succeeded yet
// (pending, processing, or failed and left to the salon), and 0 otherwise.
// Besides: the ledger's deposit is the payment the booking records, its
// refund the refund that succeeded, kept is 0 or the whole deposit, and no
// booking has a ledger row it should not (a deposit without a recorded
// payment, two deposits or refunds). Across all bookings, the ledger's online
// money is never more than WeChat took and gave back, and once everything has
// settled, exactly that.
func (m *model) checkLedger(bs map[int64]*dbBooking, orders map[string]wxpaysim.Order, refunds map[string][]wxpaysim.Refund, final bool) {
	s := m.s
	ledger, err := s.loadLedger()
	if err != nil {
		s.violate("checker could not read the ledger: %v", err)
		return
	}
	var deposits, refunded int64
	for id, l := range ledger {
		b := bs[id]
		if b == nil {
			s.violate("ledger rows of booking %d, which does not exist", id)
			continue
		}
		deposits += l.deposit
		refunded += l.refund
	}
	for _, b := range bs {
		l := ledger[b.id]
		if l == nil {
			l = &ledgerSums{}
		}
		var paid int64
		if b.tx != "" {
			paid = b.amount
		}
		var held int64
		switch {
		case b.refundStatus.Valid && b.refundStatus.String != string(booking.RefundSucceeded):
			held = l.deposit
		case b.status == int(booking.StatusConfirmed) || b.status == int(booking.StatusCompleted):
			held = l.deposit
		}
		var succeeded int64
		if b.refundStatus.String == string(booking.RefundSucceeded) {
			succeeded = b.refundFen.Int64
		}
		switch {
		case l.deposits > 1 || l.refunds > 1:
			s.violate("ledger of booking %d: %d deposits, %d refunds", b.id, l.deposits, l.refunds)
		case l.deposit != paid:
			s.violate("ledger of booking %d: deposits %d fen, the booking records a payment of %d", b.id, l.deposit, paid)
		case l.refund != succeeded:
			s.violate("ledger of booking %d: refunds %d fen, the booking's refund that succeeded %d", b.id, l.refund, succeeded)
		case l.kept != 0 && l.kept != l.deposit:
			s.violate("ledger of booking %d: kept %d fen of a deposit of %d", b.id, l.kept, l.deposit)
		case l.deposit != l.refund+l.kept+held:
			s.violate("money not conserved for booking %d (%s, refund %q): deposits %d != refunds %d + kept %d + held %d",
				b.id, booking.Status(b.status), b.refundStatus.String, l.deposit, l.refund, l.kept, held)
		}
	}
	var took, gave int64
	for _, o := range orders {
		if o.State == wxpaysim.StateSuccess {
			took += o.Total
		}
	}
	for _, rfs := range refunds {
		for _, rf := range rfs {
			if rf.Status == wxpaysim.RefundSuccess {
				gave += rf.Amount
			}
		}
	}
	if deposits > took || refunded > gave || (final && (deposits != took || refunded != gave)) {
		s.violate("ledger: deposits %d, refunds %d fen; WeChat took %d, gave back %d", deposits, refunded, took, gave)
	}
}

// checkAudit replays each booking's audit trail: one record per status change,
// each starting where the previous ended, the last ending at the status the
// booking has, every one a change the design allows.
func (m *model) checkAudit(bs map[int64]*dbBooking, audits []dbAudit) {
	s := m.s
	trail := map[int64][]dbAudit{}
	for _, a := range audits {
		switch a.event {
		case booking.EventRejected, booking.EventDrift:
			// Every notification here is genuine and every counter must agree.
			s.violate("audit %d: %s: %s", a.id, a.event, a.reason)
			continue
		case booking.EventSlotChange:
			// The salon's change of a slot, recorded for the slot alone.
			if a.book != 0 {
				s.violate("audit %d: slot change names booking %d", a.id, a.book)
			}
			continue
		}
		if _, ok := bs[a.book]; !ok {
			s.violate("audit %d (%s) names booking %d, which does not exist", a.id, a.event, a.book)
			continue
		}
		trail[a.book] = append(trail[a.book], a)
	}
	for id, b := range bs {
		status := -1
		refundEvents := map[string]bool{}
		paidCancel := false
		for _, a := range trail[id] {
			if a.event == booking.EventRefund {
				if a.from != a.to || a.from != status {
					s.violate("booking %d: refund audit %d says %d->%d while the booking was %d", id, a.id, a.from, a.to, status)
				}
				refundEvents[a.reason] = true
				continue
			}
			allowed := transitions[a.event]
			legal := false
			for _, t := range allowed {
				legal = legal || (t[0] == a.from && t[1] == a.to)
			}
			if !legal {
				s.violate("booking %d: audit %d: %s %d->%d is not a change the design has", id, a.id, a.event, a.from, a.to)
			}
			if a.from != status {
				s.violate("booking %d: audit %d: %s from %d, but the trail stands at %d", id, a.id, a.event, a.from, status)
			}
			if a.event == booking.EventCancel && a.from == int(booking.StatusConfirmed) {
				paidCancel = true
			}
			status = a.to
		}
		if status != b.status {
			s.violate("booking %d is %s, its audit trail ends at %d", id, booking.Status(b.status), status)
		}
		if b.refundStatus.Valid {
			if len(refundEvents) == 0 && !paidCancel {
				s.violate("booking %d has a refund (%s) the audit never recorded", id, b.refundStatus.String)
			}
			if st := b.refundStatus.String; st != string(booking.RefundPending) {
				found := false
				for reason := range refundEvents {
					found = found || strings.HasPrefix(reason, service.RefundReason(booking.RefundStatus(st), ""))
				}
				if !found {
					s.violate("booking %d: refund is %s, the audit never says so", id, st)
				}
			}
		} else if len(refundEvents) > 0 {
			s.violate("booking %d: the audit records a refund the booking does not have", id)
		}
	}
}

// checkCLS: once settled, every audit record is marked shipped, and CLS holds
// each one (perhaps twice, with the same id) exactly as MySQL does.
func (m *model) checkCLS(audits []dbAudit) {
	s := m.s
	byID := map[string]dbAudit{}
	for _, a := range audits {
		byID[strconv.FormatInt(a.id, 10)] = a
		if !a.shipped {
			s.violate("audit %d was never shipped to CLS", a.id)
		}
	}
	seen := map[string]bool{}
	for _, l := range s.cls.Logs() {
		id := l.Get(cls.KeyAuditID)
		a, ok := byID[id]
		if !ok {
			s.violate("CLS holds audit %s, which MySQL does not", id)
			continue
		}
		seen[id] = true
		if l.Get(cls.KeyEvent) != a.event || l.Get(cls.KeyBookingID) != strconv.FormatInt(a.book, 10) ||
			l.Get(cls.KeyFromStatus) != strconv.Itoa(a.from) || l.Get(cls.KeyToStatus) != strconv.Itoa(a.to) {
			s.violate("CLS audit %s disagrees with MySQL: %v vs %+v", id, l.Contents, a)
		}
	}
	for id, a := range byID {
		if a.shipped && !seen[id] {
			s.violate("audit %s is marked shipped but CLS never received it", id)
		}
	}
}

// quiet switches every fault off and lets the system settle the way production
// does: WeChat delivers what it still owes and finishes refunds, every hold runs
// out, and the timer runs until nothing is left to do.
func (m *model) quiet() {
	s := m.s
	ctx := context.Background()
	s.proxy.SetDown(false)
	s.cls.SetDown(false)
	s.sim.SetLatency(0)
	s.hang.Store(0)
	s.notifyDrop.Store(0)
	m.mu.Lock()
	m.lifts = map[int][]func(){}
	m.mu.Unlock()
	s.gw.Wait()
	const maxRounds = 40
	for round := 0; round < maxRounds; round++ {
		m.redeliver(ctx, nil, true)
		for _, rf := range s.sim.Refunds() {
			if rf.Status == wxpaysim.RefundProcessing {
				if err := s.sim.CompleteRefund(ctx, rf.OutRefundNo, wxpaysim.RefundSuccess); err != nil {
					m.queueRefund(rf.OutRefundNo)
				}
			}
		}
		db := s.store.SQL()
		db.Exec(`UPDATE t_booking SET lock_expire = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE status = 0`)
		db.Exec(`UPDATE t_booking SET claim_until = '1970-01-01' WHERE claim_until > '1970-01-01'`)
		s.login.FailNextSends(0)
		db.Exec(`UPDATE t_notification SET next_at = UTC_TIMESTAMP(6) WHERE status = 'pending'`)
		// Refund backoffs and REFUND_QUERY_AFTER pass too: a refund whose
		// notification was lost is settled by the run's query.
		db.Exec(`UPDATE t_booking SET refund_next_at = UTC_TIMESTAMP(6), refund_requested_at = refund_requested_at - INTERVAL 1 HOUR
			WHERE refund_status IN ('pending', 'processing')`)
		sum, err := s.runRelease()
		left := m.unsettled()
		if err == nil && sum == (service.Summary{}) && left == "" {
			m.mu.Lock()
			m.ops["quiet-rounds"] = round + 1
			m.mu.Unlock()
			return
		}
		if round == maxRounds-1 {
			s.violate("the system did not settle in %d quiet rounds: %s (last run %+v, %v)", maxRounds, left, sum, err)
		}
	}
}

// unsettled says what is still in flight, or "".
func (m *model) unsettled() string {
	s := m.s
	var out []string
	m.mu.Lock()
	if n := len(m.payQueue) + len(m.refundQueue); n > 0 {
		out = append(out, fmt.Sprintf("%d notifications undelivered", n))
	}
	m.mu.Unlock()
	for _, rf := range s.sim.Refunds() {
		if rf.Status == wxpaysim.RefundProcessing {
			out = append(out, "refund "+rf.OutRefundNo+" processing at WeChat")
		}
	}
	var pending, refunding, unshipped int
	db := s.store.SQL()
	if err := db.QueryRow(`SELECT
		(SELECT COUNT(*) FROM t_booking WHERE status = 0),
		(SELECT COUNT(*) FROM t_booking WHERE refund_status IN ('pending', 'processing')),
		(SELECT COUNT(*) FROM t_audit WHERE shipped_at IS NULL)`).Scan(&pending, &refunding, &unshipped); err != nil {
		return "checker: " + err.Error()
	}
	var notifying int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t_notification WHERE status = 'pending'`).Scan(&notifying); err != nil {
		return "checker: " + err.Error()
	}
	if pending+refunding+unshipped+notifying > 0 {
		out = append(out, fmt.Sprintf("%d holds, %d refunds in flight, %d audit records unshipped, %d notifications unsent",
			pending, refunding, unshipped, notifying))
	}
	return strings.Join(out, "; ")
}

// checkMessages compares the outbox with what WeChat received: every message
// went to the booking's customer with the template of its kind; every
// notification recorded sent was received; none refused, off or still pending
// was received. A message received twice is counted, not a violation: when the
// database fails between WeChat's acceptance and the record of it, the lease ends
// and the message is sent again (at least once rather than lost). Nor is one
// received for a booking moved since: the move armed the row again.
func (m *model) checkMessages(bs map[int64]*dbBooking) {
	s := m.s
	received := map[string]int{}
	for _, msg := range s.login.Messages() {
		id, err := strconv.ParseInt(msg.Data["character_string1"], 10, 64)
		b, ok := bs[id]
		if err != nil || !ok {
			s.violate("message %+v names no booking", msg)
			continue
		}
		if msg.ToUser != b.openid {
			s.violate("message %s for booking %d went to %s, the booking is %s's", msg.TemplateID, id, msg.ToUser, b.openid)
		}
		received[strconv.FormatInt(id, 10)+"/"+strings.TrimPrefix(msg.TemplateID, "tmpl-")]++
	}
	rows, err := s.store.SQL().Query(`SELECT book_id, kind, status, COALESCE(last_error, '') FROM t_notification`)
	if err != nil {
		s.violate("checker could not read the outbox: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var kind, status, lastError string
		if err := rows.Scan(&id, &kind, &status, &lastError); err != nil {
			s.violate("checker: %v", err)
			return
		}
		key := strconv.FormatInt(id, 10) + "/" + kind
		n := received[key]
		delete(received, key)
		switch {
		case status == string(booking.NotificationSent) && n == 0:
			s.violate("notification %s recorded sent, WeChat never received it", key)
		case status == string(booking.NotificationOff) && strings.HasPrefix(lastError, service.StaleNotification) && n == 1:
			// Sent once, its record lost with a killed connection; the next attempt
			// found the booking moved on and did not send it again.
			m.count("messages-dropped-after-a-lost-record")
		case (status == string(booking.NotificationRefused) || status == string(booking.NotificationOff)) && n > 0 && m.wasMoved(id):
			// A move arms the booking's row of this kind again (one row per
			// booking and kind): what WeChat received before it was about the
			// old time, and the row's status now is the new time's.
			m.count("messages-before-a-move")
		case (status == string(booking.NotificationRefused) || status == string(booking.NotificationOff)) && n > 0:
			s.violate("notification %s is %s, yet WeChat received it %d times", key, status, n)
		case n > 1:
			m.count("messages-sent-again")
		}
	}
	for key := range received {
		s.violate("WeChat received %s, which the outbox does not hold", key)
	}
}

// dropIdleConnections closes the checker's pooled connections that sat idle
// through the wave. A KILL of the wave's fault returns before the server has
// closed its victim, so a pooled connection picked up right after it can still
// be killed under the checker's read ("invalid connection"): the checker reads
// on connections opened after every kill instead.
func (s *system) dropIdleConnections() {
	db := s.store.SQL()
	keep := db.Stats().MaxOpenConnections
	if keep == 0 {
		keep = 2 // database/sql's default
	}
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(keep)
}
