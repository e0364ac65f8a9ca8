package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"salon/shared/apigw"
	"salon/shared/booking"
)

// The owner's staff accounts (员工) and everyone's own password (改密码). The
// service allows the accounts to the owner only; the route refuses the page to
// staff before it runs (Route.Needs).

type teamBody struct {
	Rows []teamRow
	// Roles are the roles a new account can have, in the salon's words.
	Roles []roleChoice
}

type teamRow struct {
	S       booking.Staff
	Role    string
	State   string
	Changed string
}

type roleChoice struct {
	Role  booking.Role
	Label string
}

var roleWords = map[booking.Role]string{booking.RoleOwner: "店主", booking.RoleStaff: "员工"}

func (c *Console) team(w http.ResponseWriter, q *Request) error {
	p, err := q.teamPage()
	if err != nil {
		return err
	}
	switch v := q.r.URL.Query(); {
	case v.Get("ok") != "":
		p.Flash = &flash{OK: true, Text: teamDone[v.Get("ok")]}
	case v.Get("fail") != "":
		p.Flash = &flash{Text: "没有改动：" + errorWord(v.Get("fail"))}
	}
	render(w, http.StatusOK, "team", p)
	return nil
}

func (q *Request) teamPage() (*page, error) {
	list, err := q.s.Team.ListStaff(q.ctx)
	if err != nil {
		return nil, err
	}
	body := &teamBody{Roles: []roleChoice{{booking.RoleStaff, roleWords[booking.RoleStaff]}, {booking.RoleOwner, roleWords[booking.RoleOwner]}}}
	for _, st := range list {
		state := "在用"
		if st.Disabled {
			state = "已停用"
		}
		body.Rows = append(body.Rows, teamRow{S: st, Role: roleWords[st.Role], State: state, Changed: clock(st.PasswordChangedAt, q.loc())})
	}
	return q.page("员工", "team", body), nil
}

// teamDone says what a change of the accounts did, after a redirect.
var teamDone = map[string]string{"disable": "账号已停用，它的登录已全部失效", "enable": "账号已恢复，请用原密码重新登录"}

// teamChange creates an account or resets a password, and answers the new
// password once, on this page (never in a URL, a log or a second page); or it
// disables or enables an account and sends the browser back to the list.
func (c *Console) teamChange(w http.ResponseWriter, q *Request) error {
	refused := func(err error) error {
		if booking.ErrorCode(err) == booking.EINTERNAL {
			return err
		}
		apigw.Logger(q.ctx).Info("console staff change refused", "err", err.Error())
		Redirect(w, "team?fail="+booking.ErrorCode(err))
		return nil
	}
	id, _ := strconv.ParseInt(q.form.Get("id"), 10, 64)
	switch do := q.form.Get("do"); do {
	case "create", "reset":
		password, err := booking.NewPassword()
		if err != nil {
			return err
		}
		var st *booking.Staff
		if do == "create" {
			st, err = q.s.Team.CreateStaff(q.ctx, strings.TrimSpace(q.form.Get("name")), booking.Role(q.form.Get("role")), password)
		} else {
			st, err = q.s.Team.UpdateStaff(q.ctx, id, nil, &password)
		}
		if err != nil {
			return refused(err)
		}
		p, err := q.teamPage()
		if err != nil {
			return err
		}
		what := "新账号已建好"
		if do == "reset" {
			what = "密码已重置，她原来的登录已全部失效"
		}
		p.Flash = &flash{OK: true, Text: fmt.Sprintf("%s。%s 的密码：", what, st.Name)}
		p.Secret = password
		render(w, http.StatusOK, "team", p)
		return nil
	case "disable", "enable":
		disabled := do == "disable"
		if _, err := q.s.Team.UpdateStaff(q.ctx, id, &disabled, nil); err != nil {
			return refused(err)
		}
		Redirect(w, "team?ok="+do)
		return nil
	}
	return booking.Errorf(booking.EBADREQUEST, "console: unknown staff action")
}

type passwordBody struct {
	// Account: she signed in with an account (the built-in owner's password is
	// ADMIN_TOKEN and is changed where the functions are configured).
	Account bool
	MinLen  int
}

var passwordDone = map[string]*flash{
	"ok":       {OK: true, Text: "密码已修改。其他设备上的登录已失效，这里继续有效。"},
	"mismatch": {Text: "两次输入的新密码不一样，没有修改。"},
	"refused":  {Text: "没有修改：当前密码不对，或新密码太短（至少 10 个字符）。"},
}

func (c *Console) password(w http.ResponseWriter, q *Request) error {
	p := q.page("改密码", "password", &passwordBody{Account: q.who != nil && q.who.ID != 0, MinLen: booking.PasswordMinRunes})
	p.Flash = passwordDone[q.r.URL.Query().Get("done")]
	render(w, http.StatusOK, "password", p)
	return nil
}
