package console

// 技师: who does what, her staff account, her hours and her time off. Everyone
// signed in sees the list; creating and editing a technician, her hours and
// her time off are the owner's (booking.ActionMenu: the route refuses staff
// before the page runs, and the page draws the forms for the owner only).

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"salon/shared/booking"
)

type techniciansBody struct {
	Rows     []technicianRow
	Services []booking.Service // every service, for the choice of who does what
	Staff    []staffChoice     // the accounts a technician can sign in with
	Edit     bool
	// Today and Tomorrow prefill the date fields; InTheWay lists the
	// bookings that refused time off just asked for, with Off the technician.
	Today, NextWeek string
	InTheWay        []bookingRow
	Off             int64
}

type technicianRow struct {
	T        booking.Technician
	Services string // the names of what she does
	Account  string // her staff account's name, "" for none
	State    string
}

type staffChoice struct {
	ID   int64
	Name string
}

func (c *Console) technicians(w http.ResponseWriter, q *Request) error {
	p, err := c.techniciansPage(q)
	if err != nil {
		return err
	}
	render(w, http.StatusOK, "technicians", p)
	return nil
}

func (c *Console) techniciansPage(q *Request) (*page, error) {
	techs, err := q.s.Menu.Technicians(q.ctx)
	if err != nil {
		return nil, err
	}
	svcs, err := q.s.Menu.AdminServices(q.ctx)
	if err != nil {
		return nil, err
	}
	names, err := q.s.Team.StaffNames(q.ctx)
	if err != nil {
		return nil, err
	}
	today := c.shopDay(q)
	body := &techniciansBody{Services: svcs, Edit: q.may(booking.ActionMenu),
		Today: today.Format(time.DateOnly), NextWeek: today.AddDate(0, 0, 6).Format(time.DateOnly)}
	for id, n := range names {
		body.Staff = append(body.Staff, staffChoice{ID: id, Name: n})
	}
	slices.SortFunc(body.Staff, func(a, b staffChoice) int { return int(a.ID - b.ID) })
	for _, t := range techs {
		row := technicianRow{T: t, Account: names[t.StaffID], State: activeWord(t.Active)}
		for _, s := range svcs {
			if slices.Contains(t.ServiceIDs, s.ID) {
				if row.Services != "" {
					row.Services += "、"
				}
				row.Services += s.Name
			}
		}
		body.Rows = append(body.Rows, row)
	}
	p := q.page("技师", "technicians", body)
	p.Flash = menuFlash(q, techniciansDone)
	if v := q.r.URL.Query(); p.Flash != nil && v.Get("ok") == "hours" {
		created, _ := strconv.Atoi(v.Get("created"))
		skipped, _ := strconv.Atoi(v.Get("skipped"))
		p.Flash.Text += fmt.Sprintf("：新开 %d 个时段，%d 个原来就有", created, skipped)
	}
	return p, nil
}

// techniciansDone says what a change of the technicians did, after a redirect.
var techniciansDone = map[string]string{"create": "已新建技师", "edit": "技师已保存",
	"hours": "已排好工作时间", "off": "已安排休息"}

// techniciansChange creates a technician (do=create), saves one (do=edit),
// lays her hours (do=hours) or closes her time off (do=off), each as the JSON
// admin API would (service.Menu), and sends the browser back to her row. Time
// off refused because bookings hold those cells draws the page at once, with
// those bookings listed, for the salon to move or cancel them first.
func (c *Console) techniciansChange(w http.ResponseWriter, q *Request) error {
	f := q.form
	do := f.Get("do")
	var id int64
	var err error
	done := do
	switch do {
	case "create":
		var t *booking.Technician
		if t, err = q.s.Menu.CreateTechnician(q.ctx, technicianForm(q)); err == nil {
			id = t.ID
		}
	case "edit":
		if id, err = formID(f.Get("id")); err == nil {
			u := technicianForm(q)
			u.Active = new(f.Get("active") == "on")
			_, err = q.s.Menu.UpdateTechnician(q.ctx, id, u)
		}
	case "hours":
		if id, err = formID(f.Get("id")); err == nil {
			var created, skipped int
			created, skipped, err = q.s.Menu.OpenHours(q.ctx, id, booking.Hours{From: f.Get("from"), To: f.Get("to"), Open: f.Get("open"), Close: f.Get("close")})
			if err == nil {
				Redirect(w, fmt.Sprintf("techs?ok=hours&created=%d&skipped=%d#tech-%d", created, skipped, id))
				return nil
			}
		}
	case "off":
		if id, err = formID(f.Get("id")); err == nil {
			_, err = q.s.Menu.TimeOff(q.ctx, id, booking.TimeOff{Date: f.Get("date"), From: f.Get("from"), To: f.Get("to")})
		}
	default:
		err = booking.Errorf(booking.EBADREQUEST, "console: technicians do %q", do)
	}
	var way *booking.InTheWay
	if errors.As(err, &way) {
		return c.timeOffRefused(w, q, id, way)
	}
	if err != nil {
		return menuRefused(w, q, "techs", err)
	}
	Redirect(w, fmt.Sprintf("techs?ok=%s#tech-%d", done, id))
	return nil
}

// timeOffRefused draws the technicians' page with the bookings that stand in
// the way of the time off asked for, each linked.
func (c *Console) timeOffRefused(w http.ResponseWriter, q *Request, id int64, way *booking.InTheWay) error {
	if err := q.s.Reads.WithCustomers(q.ctx, way.Bookings...); err != nil {
		return err
	}
	if _, err := q.dbNow(); err != nil {
		return err
	}
	p, err := c.techniciansPage(q)
	if err != nil {
		return err
	}
	body := p.Body.(*techniciansBody)
	body.Off = id
	for _, b := range way.Bookings {
		body.InTheWay = append(body.InTheWay, q.row(b))
	}
	p.Flash = &flash{Text: fmt.Sprintf("没有安排休息：这段时间有 %d 个预约，请先改约或取消它们。", len(way.Bookings))}
	render(w, http.StatusConflict, "technicians", p)
	return nil
}

// technicianForm reads the technician form: her name, the services she does
// (one checkbox each) and her staff account ("" for none).
func technicianForm(q *Request) booking.TechnicianUpdate {
	name := q.form.Get("name")
	ids := []int64{}
	for _, v := range q.form["service"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	staff, _ := strconv.ParseInt(q.form.Get("staff"), 10, 64)
	return booking.TechnicianUpdate{Name: &name, ServiceIDs: &ids, SetStaff: true, StaffID: staff}
}
