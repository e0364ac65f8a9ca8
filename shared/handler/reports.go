package handler

import (
	"net/http"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/handler/console"
	"salon/shared/service"
)

// The owner's figures: GET /admin/reports (JSON) and GET /admin/reports.csv
// (the bookings' export). The service allows them to the owner only, before
// it reads the range: a staff member is refused (403) whatever she asks.

type reportDayJSON struct {
	Date        string `json:"date"`
	Bookings    int    `json:"bookings"`
	Completed   int    `json:"completed"`
	NoShows     int    `json:"noShows"`
	Cancelled   int    `json:"cancelled"`
	LateCancels int    `json:"lateCancels"`
	OnlineFen   int64  `json:"onlineFen"`
	ShopFen     int64  `json:"shopFen"`
	RefundedFen int64  `json:"refundedFen"`
	KeptFen     int64  `json:"keptFen"`
	NetFen      int64  `json:"netFen"`
}

type reportTechnicianJSON struct {
	TechnicianID int64  `json:"technicianId"`
	Name         string `json:"name"`
	Completed    int    `json:"completed"`
	Minutes      int    `json:"minutes"`
	TakingsFen   int64  `json:"takingsFen"`
}

type reportServiceJSON struct {
	ServiceID  int64  `json:"serviceId"`
	Name       string `json:"name"`
	Completed  int    `json:"completed"`
	TakingsFen int64  `json:"takingsFen"`
}

type reportJSON struct {
	From        string                 `json:"from"`
	To          string                 `json:"to"`
	Days        []reportDayJSON        `json:"days"`
	Technicians []reportTechnicianJSON `json:"technicians"`
	Services    []reportServiceJSON    `json:"services"`
	NoShowRate  *float64               `json:"noShowRate"`
}

func toReportJSON(rep *booking.Report) reportJSON {
	out := reportJSON{From: rep.From, To: rep.To, NoShowRate: rep.NoShowRate,
		Days:        make([]reportDayJSON, len(rep.Days)),
		Technicians: make([]reportTechnicianJSON, len(rep.Technicians)),
		Services:    make([]reportServiceJSON, len(rep.Services))}
	for i, d := range rep.Days {
		out.Days[i] = reportDayJSON{Date: d.Date, Bookings: d.Bookings, Completed: d.Completed, NoShows: d.NoShows,
			Cancelled: d.Cancelled, LateCancels: d.LateCancels, OnlineFen: d.OnlineFen, ShopFen: d.ShopFen,
			RefundedFen: d.RefundedFen, KeptFen: d.KeptFen, NetFen: d.NetFen}
	}
	for i, t := range rep.Technicians {
		out.Technicians[i] = reportTechnicianJSON{TechnicianID: t.ID, Name: t.Name, Completed: t.Completed,
			Minutes: t.Minutes, TakingsFen: t.TakingsFen}
	}
	for i, sv := range rep.Services {
		out.Services[i] = reportServiceJSON{ServiceID: sv.ID, Name: sv.Name, Completed: sv.Completed, TakingsFen: sv.TakingsFen}
	}
	return out
}

// rangeQuery is a report's from and to as the query gives them; a missing or
// repeated one is "", which the service refuses (BAD_REQUEST) after it has
// allowed the owner, so that a staff member learns nothing from the answer.
func rangeQuery(r *http.Request) (from, to string) {
	one := func(name string) string {
		if vs := r.URL.Query()[name]; len(vs) == 1 {
			return vs[0]
		}
		return ""
	}
	return one("from"), one("to")
}

func (s *adminRoutes) report(w http.ResponseWriter, r *http.Request, reports *service.Reports) error {
	from, to := rangeQuery(r)
	rep, err := reports.Report(r.Context(), from, to)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, toReportJSON(rep))
	return nil
}

func (s *adminRoutes) reportCSV(w http.ResponseWriter, r *http.Request, reports *service.Reports) error {
	from, to := rangeQuery(r)
	rng, lines, err := reports.Lines(r.Context(), from, to)
	if err != nil {
		return err
	}
	body := console.ReportCSV(lines, reports.Loc)
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="bookings-`+rng.From+`-`+rng.To+`.csv"`)
	h.Set("Cache-Control", "no-store") // customers' names and phones
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}
