package console

// 项目: the salon's menu, active and inactive. Everyone signed in sees it;
// creating and editing a service is the owner's (booking.ActionMenu: the
// route refuses staff before the page runs, and the page draws the forms for
// the owner only).

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"salon/shared/apigw"
	"salon/shared/booking"
)

type servicesBody struct {
	Rows []serviceRow
	// Edit says whether the signed-in person may change the menu: the forms
	// are drawn for her only.
	Edit bool
	Grid int // GRID_MINUTES: a service's minutes are a multiple of it
}

type serviceRow struct {
	S                  booking.Service
	Price, Deposit     string // in yuan, as the list shows them
	PriceIn, DepositIn string // in yuan, as the edit form holds them
	State              string
}

func (c *Console) services(w http.ResponseWriter, q *Request) error {
	list, err := q.s.Menu.AdminServices(q.ctx)
	if err != nil {
		return err
	}
	body := &servicesBody{Edit: q.may(booking.ActionMenu), Grid: q.policy().GridMinutes}
	for _, s := range list {
		body.Rows = append(body.Rows, serviceRow{S: s, Price: yuan(s.PriceFen), Deposit: yuan(s.DepositFen),
			PriceIn: yuanField(s.PriceFen), DepositIn: yuanField(s.DepositFen), State: activeWord(s.Active)})
	}
	p := q.page("项目", "services", body)
	p.Flash = menuFlash(q, servicesDone)
	render(w, http.StatusOK, "services", p)
	return nil
}

// servicesDone says what a change of the menu did, after a redirect.
var servicesDone = map[string]string{"create": "已新建项目", "edit": "项目已保存"}

// servicesChange creates a service (do=create) or saves one's fields
// (do=edit, id), each as the JSON admin API would (service.Menu), and sends
// the browser back to the list at the row.
func (c *Console) servicesChange(w http.ResponseWriter, q *Request) error {
	u, err := serviceForm(q.form)
	var s *booking.Service
	if err == nil {
		switch q.form.Get("do") {
		case "create":
			s, err = q.s.Menu.CreateService(q.ctx, u)
		case "edit":
			var id int64
			if id, err = formID(q.form.Get("id")); err == nil {
				u.Active = new(q.form.Get("active") == "on")
				s, err = q.s.Menu.UpdateService(q.ctx, id, u)
			}
		default:
			err = booking.Errorf(booking.EBADREQUEST, "console: services do %q", q.form.Get("do"))
		}
	}
	if err != nil {
		return menuRefused(w, q, "menu", err)
	}
	Redirect(w, fmt.Sprintf("menu?ok=%s#svc-%d", q.form.Get("do"), s.ID))
	return nil
}

// serviceForm reads the service form: a name, minutes, and the price and
// deposit in yuan.
func serviceForm(f map[string][]string) (booking.ServiceUpdate, error) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	name := get("name")
	minutes, err1 := strconv.Atoi(strings.TrimSpace(get("minutes")))
	price, err2 := fenOf(get("priceYuan"))
	deposit, err3 := fenOf(get("depositYuan"))
	if err1 != nil || err2 != nil || err3 != nil {
		return booking.ServiceUpdate{}, booking.Errorf(booking.EBADREQUEST, "console: service minutes or amounts")
	}
	return booking.ServiceUpdate{Name: &name, Minutes: &minutes, PriceFen: &price, DepositFen: &deposit}, nil
}

// menuRefused sends the browser back to page with why a change of the menu
// was refused (a code from the console's table, never free text); a failure
// of the system is the error page.
func menuRefused(w http.ResponseWriter, q *Request, page string, err error) error {
	if booking.ErrorCode(err) == booking.EINTERNAL {
		return err
	}
	apigw.Logger(q.ctx).Info("console menu change refused", "err", err.Error())
	Redirect(w, page+"?fail="+booking.ErrorCode(err))
	return nil
}

// menuFlash turns ?ok= or ?fail= of the 项目 and 技师 pages back into words.
func menuFlash(q *Request, done map[string]string) *flash {
	v := q.r.URL.Query()
	if text, ok := done[v.Get("ok")]; ok {
		return &flash{OK: true, Text: text}
	}
	if code := v.Get("fail"); code != "" {
		return &flash{Text: "没有改动：" + refusalWord(onMenu, code)}
	}
	return nil
}

func formID(v string) (int64, error) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, booking.Errorf(booking.EBADREQUEST, "console: id %q", v)
	}
	return id, nil
}

// yuanField is an amount in fen as the salon types it in yuan: 50, 50.5.
func yuanField(fen int64) string {
	s := fmt.Sprintf("%d.%02d", fen/100, fen%100)
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "0"), "0"), ".")
}

func activeWord(active bool) string {
	if active {
		return "在用"
	}
	return "已停用"
}
