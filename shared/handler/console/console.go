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
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/wire"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Console serves the pages. Now is the clock of sessions and of "today"; nil
// means time.Now.
type Console struct {
	Env *wire.Env
	Now func() time.Time
}

func (c *Console) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Register adds the console's routes to the admin function's router.
func Register(rt *apigw.Router, e *wire.Env) {
	c := &Console{Env: e}
	rt.Handle(http.MethodGet, "/admin", func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		return redirect("admin/"), nil
	})
	rt.Handle(http.MethodGet, "/admin/static/{file}", c.static)
	rt.Handle(http.MethodGet, "/admin/login", c.public(c.loginPage))
	rt.Handle(http.MethodPost, "/admin/login", c.public(c.login))
	rt.Handle(http.MethodPost, "/admin/logout", c.change(c.logout))
	rt.Handle(http.MethodGet, "/admin/", c.view(c.today))
	rt.Handle(http.MethodGet, "/admin/week", c.view(c.week))
	rt.Handle(http.MethodPost, "/admin/week", c.change(c.weekChange))
	rt.Handle(http.MethodGet, "/admin/booking", c.view(c.bookingPage))
	rt.Handle(http.MethodPost, "/admin/booking", c.change(c.bookingChange))
	rt.Handle(http.MethodGet, "/admin/audit", c.view(c.audit))
	rt.Handle(http.MethodGet, "/admin/health", c.view(c.health))
}

// req is one console request: the dependencies, the request, the session (nil on
// the public pages) and, for a change, its form.
type req struct {
	ctx  context.Context
	d    *wire.Deps
	r    *apigw.Request
	sess *Session
	keys *keys
	form url.Values
	// now is the database's time, read once per page for the rules that
	// decide which buttons a booking shows.
	now time.Time
}

// dbNow returns the database's time, reading it on first use.
func (q *req) dbNow() (time.Time, error) {
	if q.now.IsZero() {
		now, err := q.d.Svc.Now(q.ctx)
		if err != nil {
			return time.Time{}, err
		}
		q.now = now
	}
	return q.now, nil
}

func (q *req) loc() *time.Location { return q.d.Cfg.ShopTZ }

type pageHandler func(q *req) (*apigw.Response, error)

// setup builds the request's dependencies and keys. The console needs
// ADMIN_TOKEN (without it the admin function is switched off) and SESSION_SECRET
// (its sessions are signed with it).
func (c *Console) setup(ctx context.Context, r *apigw.Request) (*req, *apigw.Response) {
	d, err := c.Env.Deps()
	if err != nil {
		return nil, c.fail(ctx, nil, err)
	}
	if d.Cfg.AdminToken == "" {
		return nil, c.fail(ctx, d, booking.Errorf(booking.EFORBIDDEN, "ADMIN_TOKEN is not set: console disabled"))
	}
	k, err := keysOf(d, c.Now)
	if err != nil {
		return nil, c.fail(ctx, d, err)
	}
	return &req{ctx: ctx, d: d, r: r, keys: k}, nil
}

// public serves the sign-in page and its form.
func (c *Console) public(h pageHandler) apigw.HandlerFunc {
	return func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		q, resp := c.setup(ctx, r)
		if resp != nil {
			return resp, nil
		}
		return c.answer(q, h)
	}
}

// view serves a page that needs a session; without one it sends the browser to
// sign in.
func (c *Console) view(h pageHandler) apigw.HandlerFunc {
	return func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		q, resp := c.setup(ctx, r)
		if resp != nil {
			return resp, nil
		}
		if q.sess = c.session(q); q.sess == nil {
			return redirect("login"), nil
		}
		return c.answer(q, h)
	}
}

// change serves a form post: it needs a session and the session's CSRF token.
// Neither failure says more than that the change was refused.
func (c *Console) change(h pageHandler) apigw.HandlerFunc {
	return func(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
		q, resp := c.setup(ctx, r)
		if resp != nil {
			return resp, nil
		}
		if q.sess = c.session(q); q.sess == nil {
			return c.fail(ctx, q.d, booking.Errorf(booking.EUNAUTHORIZED, "console change without a session")), nil
		}
		form, err := parseForm(r)
		if err != nil {
			return c.fail(ctx, q.d, err), nil
		}
		q.form = form
		if err := q.sess.checkCSRF(form.Get(csrfField)); err != nil {
			return c.fail(ctx, q.d, err), nil
		}
		return c.answer(q, h)
	}
}

// session returns the request's valid session, or nil. Why a cookie was
// refused goes to the log only.
func (c *Console) session(q *req) *Session {
	token := cookieToken(q.r)
	if token == "" {
		return nil
	}
	s, err := q.keys.verify(q.ctx, q.d, token)
	if err != nil {
		apigw.Logger(q.ctx).Info("console session refused", "err", err.Error())
		return nil
	}
	return s
}

// answer runs h and turns an error into the error page.
func (c *Console) answer(q *req, h pageHandler) (*apigw.Response, error) {
	resp, err := h(q)
	if err != nil {
		return c.fail(q.ctx, q.d, err), nil
	}
	return resp, nil
}

// fail answers an error as a page: the status of its code, the salon's words for
// it; the detail goes to the log only.
func (c *Console) fail(ctx context.Context, d *wire.Deps, err error) *apigw.Response {
	code := booking.ErrorCode(err)
	status := apigw.HTTPStatus(code)
	log := apigw.Logger(ctx)
	if status >= 500 {
		log.Error("console", "code", code, "err", err.Error())
	} else {
		log.Info("console refused", "code", code, "err", err.Error())
	}
	shop := ""
	if d != nil {
		shop = d.Cfg.ShopName
	}
	var msg string
	switch code {
	case booking.EUNAUTHORIZED:
		msg = "请先登录。"
	case booking.EFORBIDDEN:
		msg = "这个操作被拒绝了。请回到上一页，刷新后再试。"
		if d != nil && d.Cfg.AdminToken == "" {
			msg = "控制台没有启用（未设置 ADMIN_TOKEN）。"
		}
	default:
		msg = errorWord(code)
	}
	return render(status, "error", &page{Title: "出错了", Shop: shop, Body: msg})
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string // the active tab
	Shop  string
	CSRF  string // "" on the public pages
	Flash *flash
	Body  any
}

type flash struct {
	OK   bool
	Text string
}

func (q *req) page(title, nav string, body any) *page {
	p := &page{Title: title, Nav: nav, Shop: q.d.Cfg.ShopName, Body: body}
	if q.sess != nil {
		p.CSRF = q.sess.CSRF()
	}
	return p
}

var pages = map[string]*template.Template{}

var funcs = template.FuncMap{
	"static": staticURL,
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
func render(status int, name string, p *page) *apigw.Response {
	var buf bytes.Buffer
	t, ok := pages[name]
	if !ok {
		return plain(http.StatusInternalServerError, "console: no page "+name)
	}
	if err := t.Execute(&buf, p); err != nil {
		return plain(http.StatusInternalServerError, "console: the page could not be drawn")
	}
	h := securityHeaders("text/html; charset=utf-8")
	h["Cache-Control"] = "no-store" // the pages carry customers' bookings
	return &apigw.Response{StatusCode: status, Headers: h, Body: buf.String()}
}

// securityHeaders: scripts and styles only from the console itself (no inline
// script, so an injected one could not run even if escaping failed), no framing,
// forms only to the console, no referrer leaving with an order number in it.
func securityHeaders(contentType string) map[string]string {
	return map[string]string{
		"Content-Type": contentType,
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
			"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "no-referrer",
	}
}

func plain(status int, text string) *apigw.Response {
	h := securityHeaders("text/plain; charset=utf-8")
	h["Cache-Control"] = "no-store"
	return &apigw.Response{StatusCode: status, Headers: h, Body: text}
}

// redirect answers 303 See Other to a location relative to the current page.
func redirect(location string) *apigw.Response {
	h := securityHeaders("text/plain; charset=utf-8")
	h["Location"] = location
	h["Cache-Control"] = "no-store"
	return &apigw.Response{StatusCode: http.StatusSeeOther, Headers: h}
}

// parseForm reads an application/x-www-form-urlencoded body (the gateway may
// have delivered it base64-encoded; apigw decoded it already).
func parseForm(r *apigw.Request) (url.Values, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, booking.Errorf(booking.EBADREQUEST, "console: form content type %q", r.Header.Get("Content-Type"))
	}
	v, err := url.ParseQuery(string(r.Body))
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
func (c *Console) static(ctx context.Context, r *apigw.Request) (*apigw.Response, error) {
	name := r.PathParams["file"]
	b, err := staticFiles.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		return plain(http.StatusNotFound, "not found"), nil
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	h := securityHeaders(ct)
	h["Cache-Control"] = "public, max-age=86400"
	return &apigw.Response{StatusCode: http.StatusOK, Headers: h, Body: string(b)}, nil
}
