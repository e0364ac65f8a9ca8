// Command wxloginsim runs the WeChat login simulator (code2session) for local
// development: any code logs in (the same code is always the same customer),
// codes starting "bad" are rejected like an expired code, "risky" like a
// high-risk user.
//
// It writes to -env-out the variables the functions need to use it (WX_APPID,
// WX_APPSECRET, WX_API_BASE), one shell-sourceable KEY='VALUE' line each, once
// its port is bound, so a script can wait for the file.
//
//	go run ./infra/cmd/wxloginsim -env-out .local/wxlogin.env
//	curl 'http://127.0.0.1:8092/sns/jscode2session?appid=wx0123456789abcdef&secret=...&js_code=alice&grant_type=authorization_code'
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
	"salon/shared/wxlogin/wxloginsim"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("wxloginsim: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8092", "listen address")
	appID := flag.String("appid", "wx0123456789abcdef", "the mini-program's AppID the simulator accepts (WX_APPID)")
	secret := flag.String("secret", "dev-appsecret-local-only", "the AppSecret it accepts (WX_APPSECRET)")
	envOut := flag.String("env-out", "", "file to write WX_APPID, WX_APPSECRET and WX_API_BASE to (- for stdout); empty: do not write")
	flag.Parse()

	sim := wxloginsim.New(*appID, *secret)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	env := map[string]string{"WX_APPID": *appID, "WX_APPSECRET": *secret, "WX_API_BASE": base}
	if err := envfile.Write(*envOut, "wxloginsim", env); err != nil {
		return err
	}
	log.Printf("wxloginsim: listening on %s (appid %s)", base, *appID)

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

// writeEnv writes KEY='VALUE' lines, replacing the file atomically so a reader
// never sees half of it.
