package wxpaysim

import (
	"errors"
	"net/http"
)

// The /sim/ endpoints drive the simulator by hand during local development (the
// README's curl "try it"): they stand in for the customer paying and for WeChat
// finishing a refund. They need no signature; never expose the sim publicly.

// simPay: POST /sim/pay?out_trade_no=...[&late=1]
func (s *Sim) simPay(w http.ResponseWriter, r *http.Request) {
	no := r.URL.Query().Get("out_trade_no")
	var err error
	if r.URL.Query().Get("late") == "1" {
		err = s.PayLate(r.Context(), no)
	} else {
		err = s.Pay(r.Context(), no)
	}
	s.controlAnswer(w, err, func() any { o, _ := s.Order(no); return o })
}

// simNotify: POST /sim/notify?out_trade_no=... redelivers a payment notification.
func (s *Sim) simNotify(w http.ResponseWriter, r *http.Request) {
	no := r.URL.Query().Get("out_trade_no")
	err := s.Notify(r.Context(), no)
	s.controlAnswer(w, err, func() any { o, _ := s.Order(no); return o })
}

// simRefund: POST /sim/refund?out_refund_no=...&status=SUCCESS|ABNORMAL|CLOSED[&drop=1]
// drop=1 loses the refund's notification: the release run's query settles it.
func (s *Sim) simRefund(w http.ResponseWriter, r *http.Request) {
	no := r.URL.Query().Get("out_refund_no")
	status := r.URL.Query().Get("status")
	if status == "" {
		status = RefundSuccess
	}
	err := s.completeRefund(r.Context(), no, status, r.URL.Query().Get("drop") != "1")
	s.controlAnswer(w, err, func() any {
		for _, rf := range s.Refunds() {
			if rf.OutRefundNo == no {
				return rf
			}
		}
		return nil
	})
}

// simOrders: GET /sim/orders
func (s *Sim) simOrders(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Orders())
}

// simRefunds: GET /sim/refunds
func (s *Sim) simRefunds(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Refunds())
}

// controlAnswer maps a driving error to a status: unknown 404, not payable 409,
// a receiver that did not accept the notification 502 (the state change stays).
func (s *Sim) controlAnswer(w http.ResponseWriter, err error, state func() any) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, state())
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"code": "NOT_FOUND", "message": err.Error()})
	case errors.Is(err, ErrNotPayable):
		writeJSON(w, http.StatusConflict, map[string]string{"code": "NOT_PAYABLE", "message": err.Error()})
	default:
		writeJSON(w, http.StatusBadGateway, map[string]string{"code": "NOTIFY_FAILED", "message": err.Error()})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonBytes(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
