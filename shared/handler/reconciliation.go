package handler

// The owner's view of the reconciliation with WeChat Pay's daily trade bill:
// GET /admin/reconciliation?date= what is recorded of a day, POST runs it now.

import (
	"net/http"

	"salon/shared/apigw"
	"salon/shared/service"
	"salon/shared/wechatbill"
)

// reconciliationRoutes registers the routes of this file on the admin router.
// The console's health page shows the last days' results (s.bills).
func (s *adminRoutes) reconciliationRoutes(rt *apigw.Router) {
	rt.Handle("GET /admin/reconciliation", admin(s.salon, s.bills, s.reconciliationDay))
	rt.Handle("POST /admin/reconciliation", admin(s.salon, s.bills, s.runReconciliation))
}

// reconciliationJSON is a bill date's result, as the API answers it.
type reconciliationJSON struct {
	Date        string               `json:"date"`
	Status      string               `json:"status"`
	BillRows    int                  `json:"billRows"`
	Matched     int                  `json:"matched"`
	FeesFen     int64                `json:"feesFen"`
	Differences []billDifferenceJSON `json:"differences"`
}

type billDifferenceJSON struct {
	OutTradeNo  string  `json:"outTradeNo"`
	OutRefundNo *string `json:"outRefundNo"`
	Kind        string  `json:"kind"`
	OursFen     *int64  `json:"oursFen"`
	TheirsFen   *int64  `json:"theirsFen"`
}

func toReconciliationJSON(d *wechatbill.DayResult) reconciliationJSON {
	out := reconciliationJSON{Date: d.Date, Status: d.Status, BillRows: d.BillRows, Matched: d.Matched,
		FeesFen: d.FeesFen, Differences: make([]billDifferenceJSON, 0, len(d.Differences))}
	for _, x := range d.Differences {
		j := billDifferenceJSON{OutTradeNo: x.OutTradeNo, Kind: x.Kind, OursFen: x.OursFen, TheirsFen: x.TheirsFen}
		if x.OutRefundNo != "" {
			refundNo := x.OutRefundNo
			j.OutRefundNo = &refundNo
		}
		out.Differences = append(out.Differences, j)
	}
	return out
}

// reconciliationDay answers what is recorded of ?date= (not_yet: never run).
func (s *adminRoutes) reconciliationDay(w http.ResponseWriter, r *http.Request, rec *service.Reconciliation) error {
	date, err := oneQuery(r, "date")
	if err != nil {
		return err
	}
	d, err := rec.Day(r.Context(), date)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, toReconciliationJSON(d))
	return nil
}

// runReconciliation runs {"date"} now and answers its result: a date after
// today is 400, today not_yet (its bill does not exist yet).
func (s *adminRoutes) runReconciliation(w http.ResponseWriter, r *http.Request, rec *service.Reconciliation) error {
	var body struct {
		Date string `json:"date"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	d, err := rec.RunDay(r.Context(), body.Date)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, toReconciliationJSON(d))
	return nil
}
