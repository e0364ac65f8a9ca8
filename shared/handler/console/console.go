// Package console is the salon's web console, served by the admin function under
// /admin/: server-rendered pages (html/template, forms, redirect after post) for
// the day at the door, the week's schedule, one booking, the audit trail and the
// system's health. It changes nothing itself: every change is the same service
// call the JSON admin API makes, and every read a service read.
//
// Links and redirects are relative (every page is one segment below /admin/), so
// the console works wherever the front door mounts it: the local gateway, API
// Gateway's /release stage, a Function URL, a custom domain's path.
package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/service"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Console serves the pages. Now is the clock of "today"; nil means time.Now.
type Console struct {
	Now func() time.Time
}

func (c *Console) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Access is what a console route asks of the admin function's authentication
// (package handler) before the page runs.
type Access int

const (
	// Asset needs nothing: the redirect to the console and its script and stylesheet.
	Asset Access = iota
	// SignedIn needs a console session; without one the browser is sent to sign in.
	SignedIn
	// Change needs a session and the session's CSRF token in the posted form.
	Change
)

// Route is one of the console's routes. Sign-in and sign-out are not among
// them: they are authentication, served by package handler.
type Route struct {
	Pattern string // an http.ServeMux pattern
	Access  Access
	// Needs, when set, is the action the whole page is for: a role that may
	// not take it is refused the page (FORBIDDEN) before it runs.
	Needs booking.AdminAction
	Asset http.HandlerFunc                        // Access Asset
	Page  func(w http.ResponseWriter, q *Request) // otherwise
}

// Routes lists the console's routes for the admin function's router.
func (c *Console) Routes() []Route {
	return []Route{
		{Pattern: "GET /admin", Access: Asset, Asset: func(w http.ResponseWriter, r *http.Request) { Redirect(w, "admin/") }},
		{Pattern: "GET /admin/static/{file}", Access: Asset, Asset: c.static},
		{Pattern: "GET /admin/{$}", Access: SignedIn, Page: c.page(c.today)},
		{Pattern: "GET /admin/week", Access: SignedIn, Page: c.page(c.week)},
		{Pattern: "POST /admin/week", Access: Change, Page: c.page(c.weekChange)},
		{Pattern: "GET /admin/door", Access: SignedIn, Page: c.page(c.door)},
		{Pattern: "POST /admin/door", Access: Change, Page: c.page(c.doorChange)},
		{Pattern: "POST /admin/walkin", Access: Change, Page: c.page(c.walkIn)},
		{Pattern: "POST /admin/move", Access: Change, Page: c.page(c.move)},
		{Pattern: "GET /admin/customer", Access: SignedIn, Page: c.page(c.customerPage)},
		{Pattern: "POST /admin/customer", Access: Change, Page: c.page(c.customerNote)},
		{Pattern: "GET /admin/booking", Access: SignedIn, Page: c.page(c.bookingPage)},
		{Pattern: "POST /admin/booking", Access: Change, Page: c.page(c.bookingChange)},
		{Pattern: "POST /admin/checkout", Access: Change, Needs: booking.ActionCheckout, Page: c.page(c.checkoutChange)},
		{Pattern: "GET /admin/audit", Access: SignedIn, Page: c.page(c.audit)},
		{Pattern: "GET /admin/health", Access: SignedIn, Page: c.page(c.health)},
		{Pattern: "GET /admin/team", Access: SignedIn, Needs: booking.ActionStaff, Page: c.page(c.team)},
		{Pattern: "POST /admin/team", Access: Change, Needs: booking.ActionStaff, Page: c.page(c.teamChange)},
		{Pattern: "GET /admin/password", Access: SignedIn, Page: c.page(c.password)},
		{Pattern: "GET /admin/menu", Access: SignedIn, Page: c.page(c.services)},
		{Pattern: "POST /admin/menu", Access: Change, Needs: booking.ActionMenu, Page: c.page(c.servicesChange)},
		{Pattern: "GET /admin/techs", Access: SignedIn, Page: c.page(c.technicians)},
		{Pattern: "POST /admin/techs", Access: Change, Needs: booking.ActionMenu, Page: c.page(c.techniciansChange)},
		{Pattern: "GET /admin/report", Access: SignedIn, Needs: booking.ActionReports, Page: c.page(c.reports)},
	}
}

// Services are what the pages use, as the admin function's router hands them
// over: the use cases they call, and the shop's name they show. The shop's time
// zone and rules are the use cases' own (Reads.Loc, Reads.Policy).
type Services struct {
	Reads     *service.ConsoleReads
	Door      *service.Door
	Cancels   *service.Cancels
	Moves     *service.Moves
	Timetable *service.Timetable
	Team      *service.Team
	Menu      *service.Menu
	Reports   *service.Reports
	// Bills is the reconciliation with WeChat Pay's bills, shown to the owner
	// on the health page; nil: not shown.
	Bills    *service.Reconciliation
	ShopName string
}

// Request is one console request as the admin function's authentication hands
// it over: what the pages use, who signed in (nil on the sign-in page), the
// session's CSRF token ("" on the sign-in page) and, for a change, its form
// (whose CSRF token was checked).
type Request struct {
	ctx  context.Context
	s    *Services
	r    *http.Request
	who  *booking.Staff
	csrf string
	form url.Values
	// names are the staff accounts' names by id, read on first use.
	names map[int64]string
	// now is the database's time, read once per page for the rules that
	// decide which buttons a booking shows; moves the slots it can move to.
	now   time.Time
	moves *[]moveChoice
}

// NewRequest is the console request of r, served with s, authenticated as
// who, csrf and form say.
func NewRequest(r *http.Request, s *Services, who *booking.Staff, csrf string, form url.Values) *Request {
	return &Request{ctx: r.Context(), s: s, r: r, who: who, csrf: csrf, form: form}
}

// HTTP is the request itself.
func (q *Request) HTTP() *http.Request { return q.r }

// Form is a change's posted form (its CSRF token checked).
func (q *Request) Form() url.Values { return q.form }

// may reports whether the signed-in person's role may take action: the pages
// draw only the buttons she may use (the service refuses the others anyway).
func (q *Request) may(a booking.AdminAction) bool { return q.who != nil && q.who.Role.May(a) }

// actorName is how the console names an audit record's actor: a staff
// member by her name, the built-in owner as 店主, the others in words.
func (q *Request) actorName(actor string) string {
	if id, ok := booking.StaffIDOfActor(actor); ok {
		if q.names == nil {
			names, err := q.s.Team.StaffNames(q.ctx)
			if err != nil {
				apigw.Logger(q.ctx).Warn("console: staff names", "err", err.Error())
				names = map[int64]string{}
			}
			q.names = names
		}
		if n, ok := q.names[id]; ok {
			return n
		}
		return fmt.Sprintf("员工 #%d", id)
	}
	return actorWord(actor)
}

// dbNow returns the database's time, reading it on first use.
func (q *Request) dbNow() (time.Time, error) {
	if q.now.IsZero() {
		now, err := q.s.Reads.Now(q.ctx)
		if err != nil {
			return time.Time{}, err
		}
		q.now = now
	}
	return q.now, nil
}

func (q *Request) loc() *time.Location { return q.s.Reads.Loc }

// policy is the salon's rules in numbers.
func (q *Request) policy() booking.Policy { return q.s.Reads.Policy }

type pageHandler func(w http.ResponseWriter, q *Request) error

// page runs h and turns an error into the error page.
func (c *Console) page(h pageHandler) func(w http.ResponseWriter, q *Request) {
	return func(w http.ResponseWriter, q *Request) {
		if err := h(w, q); err != nil {
			FailPage(w, q, err)
		}
	}
}

// Fail answers an error as a page: the status of its code, the salon's words for
// it; the detail goes to the log only. shop is the shop's name, "" when the
// dependencies could not be built.
func Fail(w http.ResponseWriter, r *http.Request, shop string, err error) {
	code, status := logFailure(r, err)
	var msg string
	switch code {
	case booking.EUNAUTHORIZED:
		msg = "请先登录。"
	case booking.EFORBIDDEN:
		msg = "这个操作被拒绝了。请回到上一页，刷新后再试。"
	default:
		msg = errorWord(code)
	}
	render(w, status, "error", &page{Title: "出错了", Shop: shop, Body: msg})
}

// Off answers a console that is switched off: ADMIN_TOKEN is not set.
func Off(w http.ResponseWriter, r *http.Request, shop string) {
	_, status := logFailure(r, booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: console disabled"))
	render(w, status, "error", &page{Title: "出错了", Shop: shop, Body: "控制台没有启用（未设置 ADMIN_TOKEN）。"})
}

// FailPage is Fail for a signed-in person (q names her session): the same
// status on a normal page with the menu, so that she goes on from there; a
// change her role may not make says to ask the owner.
func FailPage(w http.ResponseWriter, q *Request, err error) {
	if q.who == nil || q.csrf == "" {
		Fail(w, q.r, q.s.ShopName, err)
		return
	}
	code, status := logFailure(q.r, err)
	msg := errorWord(code) + "。"
	if code == booking.EFORBIDDEN {
		msg = "只有店主可以做这个操作，请店主操作。"
	}
	render(w, status, "error", q.page("出错了", "", msg))
}

// logFailure logs why a console request failed and answers its code and
// status.
func logFailure(r *http.Request, err error) (string, int) {
	code := booking.ErrorCode(err)
	status := apigw.HTTPStatus(code)
	log := apigw.Logger(r.Context())
	if status >= 500 {
		log.Error("console", "code", code, "err", err.Error())
	} else {
		log.Info("console refused", "code", code, "err", err.Error())
	}
	return code, status
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string // the active tab
	Shop  string
	CSRF  string // "" on the public pages
	// Who is the signed-in person's name and Owner whether she has the
	// owner's role (the staff tab is the owner's).
	Who   string
	Owner bool
	// Secret is a password shown once, after the flash (a new account's or a
	// reset one); the page is never stored (Cache-Control: no-store).
	Secret string
	Flash  *flash
	Body   any
}

type flash struct {
	OK   bool
	Text string
	// Href and Link: a link after the text (the booking a walk-in ran into).
	Href, Link string
}

func (q *Request) page(title, nav string, body any) *page {
	p := &page{Title: title, Nav: nav, Shop: q.s.ShopName, CSRF: q.csrf, Body: body}
	if q.who != nil {
		p.Who, p.Owner = q.who.Name, q.who.Role == booking.RoleOwner
		if q.who.ID == 0 {
			p.Who = "店主"
		}
	}
	return p
}

var pages = map[string]*template.Template{}

var funcs = template.FuncMap{
	"static": staticURL,
	"has":    slices.Contains[[]int64],
	"act": func(row bookingRow, csrf, back, date string) actionForms {
		return actionForms{Row: row, CSRF: csrf, Back: back, Date: date}
	},
}

// actionForms is what the "actions" template draws: a booking's buttons, each a
// form that carries the CSRF token and where to come back to.
type actionForms struct {
	Row              bookingRow
	CSRF, Back, Date string
}

func init() {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n))
	}
}

// render executes a page's template. html/template escapes every value for its
// context (text, attribute, URL), so nothing a customer or WeChat sent can become
// markup.
func render(w http.ResponseWriter, status int, name string, p *page) {
	var buf bytes.Buffer
	t, ok := pages[name]
	if !ok {
		plain(w, http.StatusInternalServerError, "console: no page "+name)
		return
	}
	if err := t.Execute(&buf, p); err != nil {
		plain(w, http.StatusInternalServerError, "console: the page could not be drawn")
		return
	}
	securityHeaders(w, "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // the pages carry customers' bookings
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// RenderLogin draws the sign-in page with the name tried (kept in the form).
// A status of 401 says the sign-in failed, whatever was wrong; 429 that the
// name is locked for retryAfter seconds.
func RenderLogin(w http.ResponseWriter, q *Request, status int, name string, retryAfter int) {
	p := q.page("登录", "", loginBody{Name: name})
	switch status {
	case http.StatusUnauthorized:
		p.Flash = &flash{Text: "登录失败：名字或密码不对，或账号已停用。"}
	case http.StatusTooManyRequests:
		p.Flash = &flash{Text: fmt.Sprintf("这个名字登录失败次数太多，已暂时锁定，请 %d 分钟后再试。", (retryAfter+59)/60)}
	}
	render(w, status, "login", p)
}

type loginBody struct{ Name string }

// PasswordOutcome sends the browser back to the change-my-password page with
// the outcome of its form: ok, mismatch (the new password typed twice
// differently) or refused (the current password is wrong, or the new one
// breaks the rules).
func PasswordOutcome(w http.ResponseWriter, outcome string) {
	Redirect(w, "password?done="+url.QueryEscape(outcome))
}

// securityHeaders: scripts and styles only from the console itself (no inline
// script, so an injected one could not run even if escaping failed), no framing,
// forms only to the console, no referrer leaving with an order number in it.
func securityHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

func plain(w http.ResponseWriter, status int, text string) {
	securityHeaders(w, "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, text)
}

// Redirect answers 303 See Other to a location relative to the current page.
func Redirect(w http.ResponseWriter, location string) {
	securityHeaders(w, "text/plain; charset=utf-8")
	w.Header().Set("Location", location)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
}

// ParseForm reads an application/x-www-form-urlencoded body (the gateway may
// have delivered it base64-encoded; apigw decoded it already).
func ParseForm(r *http.Request) (url.Values, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, booking.Errorf(booking.EBADREQUEST, "console: form content type %q", r.Header.Get("Content-Type"))
	}
	body, err := apigw.ReadBody(r)
	if err != nil {
		return nil, err
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, booking.Errorf(booking.EBADREQUEST, "console: unparseable form")
	}
	return v, nil
}

// staticVersion is a digest of the embedded assets: their URLs carry it, so a
// browser never keeps an old stylesheet after a deploy.
var staticVersion = func() string {
	h := sha256.New()
	fs.WalkDir(staticFiles, "static", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := staticFiles.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

func staticURL(name string) string { return "static/" + name + "?v=" + staticVersion }

// static serves the embedded stylesheet and script. They hold nothing secret,
// so the sign-in page can use them before anyone signed in.
func (c *Console) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := staticFiles.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		plain(w, http.StatusNotFound, "not found")
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	securityHeaders(w, ct)
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
