// Command wxpaysim runs the WeChat Pay v3 simulator for local development.
//
// It generates a merchant key pair and the simulator's own platform key and APIv3
// key, listens on -addr, and writes to -env-out every variable a function needs
// to talk to it (WX_APPID and WECHATPAY_*), one shell-sourceable KEY='VALUE' line
// each, PEM newlines written as literal \n. The keys live only as long as the
// process: restart it and the functions must read the new file.
//
//	go run ./infra/cmd/wxpaysim -env-out .local/wxpay.env
//	curl -X POST 'http://127.0.0.1:8091/sim/pay?out_trade_no=BK000000000001'
//	curl http://127.0.0.1:8091/sim/orders
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"salon/infra/envfile"
	"salon/shared/wechatpay"
	"salon/shared/wechatpay/wxpaysim"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("wxpaysim: %v", err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address")
	appID := flag.String("appid", "wx0123456789abcdef", "mini-program AppID the simulated merchant is bound to")
	mchID := flag.String("mchid", "1900000109", "simulated merchant id")
	notifyURL := flag.String("notify-url", "http://127.0.0.1:8080/pay/notify", "WECHATPAY_NOTIFY_URL")
	refundNotifyURL := flag.String("refund-notify-url", "http://127.0.0.1:8080/pay/refund-notify", "WECHATPAY_REFUND_NOTIFY_URL")
	envOut := flag.String("env-out", "", "file to write the environment to (- for stdout); empty: do not write")
	mode := flag.String("mode", "public-key", "how WeChat signs and what the written environment verifies with: public-key, platform-certificate, platform-certificate-download (WECHATPAY_PLATFORM_CERTS=download), or combined (both, the switch-over)")
	flag.Parse()

	signing := wxpaysim.ModePlatformCert
	switch *mode {
	case "public-key":
		signing = wxpaysim.ModePublicKey
	case "platform-certificate", "platform-certificate-download", "combined":
	default:
		return fmt.Errorf("wxpaysim: unknown -mode %q", *mode)
	}

	merchantKey, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		return err
	}
	sim, err := wxpaysim.New(wxpaysim.Options{
		AppID:             *appID,
		MchID:             *mchID,
		MerchantPublicKey: &merchantKey.PublicKey,
		MerchantSerial:    serial,
		Mode:              signing,
	})
	if err != nil {
		return err
	}
	base, shutdown, err := sim.Start(*addr)
	if err != nil {
		return err
	}
	// The env file is written only once the port is bound, so a script that
	// waits for the file can start functions right away.
	env := sim.Env(merchantKey, serial, base, *notifyURL, *refundNotifyURL)
	switch *mode {
	case "platform-certificate", "platform-certificate-download":
		delete(env, "WECHATPAY_PUBLIC_KEY_ID")
		delete(env, "WECHATPAY_PUBLIC_KEY")
		env["WECHATPAY_PLATFORM_CERTS"] = sim.PlatformCertificatePEM()
		if *mode == "platform-certificate-download" {
			env["WECHATPAY_PLATFORM_CERTS"] = wechatpay.PlatformCertsDownload
		}
	case "combined":
		env["WECHATPAY_PLATFORM_CERTS"] = sim.PlatformCertificatePEM()
	}
	if err := envfile.Write(*envOut, "wxpaysim", env); err != nil {
		return err
	}
	log.Printf("wxpaysim: listening on %s (appid %s, mchid %s, public key id %s, platform certificate %s, signing with the %s)", base, *appID, *mchID, sim.PublicKeyID(), sim.PlatformCertSerial(), sim.Mode())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return shutdown(sctx)
}

// writeEnv writes KEY='VALUE' lines. Newlines become the two characters \n so each
// variable stays on one line (ConfigFromEnv turns them back); single quotes keep
// the shell from interpreting anything. The file holds a private key, so it is
// created 0600 and replaced atomically.
