// Command wxloginsim runs the WeChat server API simulator for local development:
// login (code2session: any code logs in, the same code is always the same
// customer, codes starting "bad" are rejected like an expired code, "risky" like a
// high-risk user), access tokens (stable_token) and subscribe messages, which it
// lists at GET /sim/messages.
//
// It writes to -env-out the variables the functions need to use it (WX_APPID,
// WX_APPSECRET, WX_API_BASE, and a WX_TMPL_* template of every kind), one
// shell-sourceable KEY='VALUE' line each, once its port is bound, so a script can
// wait for the file. A WX_TMPL_* already set in its environment is kept; an unset
// one gets an example template. It accepts messages for exactly those templates'
// ids.
//
//	go run ./infra/cmd/wxloginsim -env-out .local/wxlogin.env
//	curl 'http://127.0.0.1:8092/sns/jscode2session?appid=wx0123456789abcdef&secret=...&js_code=alice&grant_type=authorization_code'
//	curl http://127.0.0.1:8092/sim/messages
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"salon/infra/envfile"
	"salon/shared/booking"
	"salon/shared/wxlogin/wxloginsim"
	"salon/shared/wxmsg"
)

// exampleTemplates are made-up templates in the shape of real ones, so the
// messages can be watched locally. A real template's id and keywords come from the
// mini-program's console.
var exampleTemplates = map[booking.NotificationKind]string{
	booking.NotifyConfirmed:   `{"id":"dev-tmpl-confirmed","page":"pages/booking/detail?id={bookingId}","data":{"thing1":"{shopName}","time2":"{startAt}","amount3":"{amountYuan}元","character_string4":"{bookingId}"}}`,
	booking.NotifyReminder:    `{"id":"dev-tmpl-reminder","page":"pages/booking/detail?id={bookingId}","data":{"thing1":"{shopName}","time2":"{startAt}~{endAt}","thing3":"预约即将开始，请准时到店"}}`,
	booking.NotifyWaitlist:    `{"id":"dev-tmpl-waitlist","page":"pages/booking/detail?id={bookingId}","data":{"thing1":"{shopName}","time2":"{startAt}","thing3":"候补有空位了，请尽快支付定金"}}`,
	booking.NotifyCancelled:   `{"id":"dev-tmpl-cancelled","page":"pages/booking/detail?id={bookingId}","data":{"thing1":"{shopName}","time2":"{startAt}","thing3":"店家取消了预约，定金原路退回"}}`,
	booking.NotifyRescheduled: `{"id":"dev-tmpl-rescheduled","page":"pages/booking/detail?id={bookingId}","data":{"thing1":"{shopName}","time2":"{startAt}","thing3":"店家为您改约到新的时间"}}`,
}

func main() {
	if err := run(); err != nil {
		log.Fatalf("wxloginsim: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8092", "listen address")
	appID := flag.String("appid", "wx0123456789abcdef", "the mini-program's AppID the simulator accepts (WX_APPID)")
	secret := flag.String("secret", "dev-appsecret-local-only", "the AppSecret it accepts (WX_APPSECRET)")
	envOut := flag.String("env-out", "", "file to write WX_APPID, WX_APPSECRET, WX_API_BASE and WX_TMPL_* to (- for stdout); empty: do not write")
	flag.Parse()

	sim := wxloginsim.New(*appID, *secret)
	env := map[string]string{}
	var ids []string
	for _, kind := range booking.NotificationKinds {
		name := wxmsg.SettingFor(kind)
		raw := os.Getenv(name)
		if raw == "" {
			raw = exampleTemplates[kind]
		}
		env[name] = raw
		if t, err := wxmsg.ParseTemplate(raw); err == nil {
			ids = append(ids, t.ID)
		} else {
			log.Printf("wxloginsim: %s: %v (the functions will report it too)", name, err)
		}
	}
	sim.AcceptTemplates(ids...)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	env["WX_APPID"], env["WX_APPSECRET"], env["WX_API_BASE"] = *appID, *secret, base
	if err := envfile.Write(*envOut, "wxloginsim", env); err != nil {
		return err
	}
	log.Printf("wxloginsim: listening on %s (appid %s); messages sent: curl %s/sim/messages", base, *appID, base)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sim.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
