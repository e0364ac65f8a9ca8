package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"salon/infra/frontdoor"
	"salon/infra/frontdoor/cloudfake"
	"salon/infra/localgw"
)

func TestRunPrintsURLsAndSettings(t *testing.T) {
	spec, err := localgw.LoadServerless("../../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	srv := cloudfake.New("AKIDx", "key", "1250000000", spec.Region)
	for _, f := range spec.Functions {
		srv.AddFunction("default", frontdoor.DeployedName(spec, "prod", f.Name))
	}
	srv.Start()
	defer srv.Close()
	env := map[string]string{"TENCENT_SECRET_ID": "AKIDx", "TENCENT_SECRET_KEY": "key", "STAGE": "prod"}
	getenv := func(k string) string { return env[k] }

	var out bytes.Buffer
	args := []string{"urls", "-serverless", "../../../serverless.yml", "-endpoint", srv.URL, "-domain", "api.salon.example.cn", "-cert-id", "c1"}
	if err := run(context.Background(), args, getenv, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"7 change(s)",
		"POST   https://api.salon.example.cn/bookings/{id}/cancel",
		"WECHATPAY_NOTIFY_URL=https://api.salon.example.cn/pay/notify",
		"DNS: api.salon.example.cn CNAME 1250000000.ap-guangzhou.tencentscf.com",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), args, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no change") {
		t.Errorf("second run:\n%s", out.String())
	}
	if err := run(context.Background(), []string{"nope"}, getenv, &out); err == nil {
		t.Error("unknown subcommand accepted")
	}
}
