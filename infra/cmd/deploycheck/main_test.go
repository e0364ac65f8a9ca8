package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"salon/shared/wechatpay/wxpaysim"
)

const serverlessYML = "../../../serverless.yml"

// completeEnv is a deploying shell with every name serverless.yml reads: the
// deploy's own, real-looking values for what the product requires, keys
// generated here (the WeChat Pay simulator's, never a real merchant's), and
// the optional settings exported empty, as infra/README.md says to.
func completeEnv(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(serverlessYML)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := envRefs(b)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, r := range refs {
		env[r.name] = ""
	}
	priv, serial, err := wxpaysim.NewMerchantKeys()
	if err != nil {
		t.Fatal(err)
	}
	sim, err := wxpaysim.New(wxpaysim.Options{AppID: "wx0123456789abcdef", MchID: "1900000109", MerchantPublicKey: &priv.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sim.Env(priv, serial, "", "https://api.example.cn/pay/notify", "https://api.example.cn/pay/refund-notify") {
		if _, ok := env[k]; !ok {
			t.Fatalf("the simulator's %s is not a name serverless.yml passes", k)
		}
		env[k] = v
	}
	for k, v := range map[string]string{
		"STAGE": "test", "SCF_ROLE": "salon-run-role", "VPC_ID": "vpc-12345678", "SUBNET_ID": "subnet-12345678",
		"MYSQL_DSN":      "salon:secret@tcp(10.0.0.12:3306)/salon",
		"SESSION_SECRET": randomHex(t), "ADMIN_TOKEN": randomHex(t),
		"WX_APPSECRET": randomHex(t),
		"CLS_ENDPOINT": "cls.tencentcloudapi.com", "CLS_TOPIC_ID": "0f9b2e1c-3a4d-4e5f-8a9b-1c2d3e4f5a6b",
	} {
		if _, ok := env[k]; !ok {
			t.Fatalf("%s is not a name serverless.yml reads", k)
		}
		env[k] = v
	}
	// The deploying shell's own mode must not reach a deployed function.
	env["SALON_DEV"] = "1"
	return env
}

func randomHex(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func runCheck(t *testing.T, env map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = run([]string{"-serverless", serverlessYML}, lookup, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPreflightPassesCompleteEnvironment(t *testing.T) {
	env := completeEnv(t)
	code, out, errOut := runCheck(t, env)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, fn := range []string{"slots", "login", "reserve", "cancel", "paynotify", "admin", "release"} {
		if !strings.Contains(out, "function "+fn+": settings accepted") {
			t.Errorf("no verdict for %s:\n%s", fn, out)
		}
	}
	for _, secret := range []string{env["SESSION_SECRET"], env["ADMIN_TOKEN"], env["WX_APPSECRET"], "secret@tcp"} {
		if strings.Contains(out+errOut, secret) {
			t.Errorf("the output shows a secret value")
		}
	}
}

func TestPreflightRefusesUnsetSettingsByName(t *testing.T) {
	env := completeEnv(t)
	delete(env, "STAGE")
	delete(env, "SHOP_NAME")
	delete(env, "LOCK_TTL")
	code, out, errOut := runCheck(t, env)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	// In the order serverless.yml uses them, and no other.
	if !strings.Contains(errOut, "unset: STAGE, LOCK_TTL, SHOP_NAME (") {
		t.Errorf("the refusal does not name exactly the unset ones:\n%s", errOut)
	}
	if strings.Contains(out, "settings accepted") {
		t.Errorf("functions were checked with unset settings:\n%s", out)
	}
}

func TestPreflightRefusesWhatTheProductRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             []string // each a line of the refusal
		accepted         []string // functions that still pass
	}{
		// LOCK_TTL configures the store: every function with a database refuses it.
		{"bad LOCK_TTL", "LOCK_TTL", "abc", []string{"function slots: ", "function release: ", "LOCK_TTL"}, []string{"login"}},
		{"empty SESSION_SECRET", "SESSION_SECRET", "", []string{"function login: ", "function reserve: ", "function cancel: ", "function admin: ", "SESSION_SECRET"},
			[]string{"slots", "paynotify", "release"}},
		{"short SESSION_SECRET", "SESSION_SECRET", "too-short", []string{"function login: ", "SESSION_SECRET"}, []string{"paynotify"}},
		// Published for local development: refused although the deploying
		// shell has SALON_DEV=1, since serverless.yml never passes it.
		{"development admin token", "ADMIN_TOKEN", "dev-admin-token", []string{"function admin: ", "ADMIN_TOKEN"}, []string{"reserve"}},
		{"bad time zone", "SHOP_TZ", "Asia/Shanghia", []string{"function slots: ", "SHOP_TZ"}, []string{"paynotify"}},
		{"WeChat Pay key unreadable", "WECHATPAY_MCH_PRIVATE_KEY", "not a key", []string{"function reserve: ", "function paynotify: ", "WECHATPAY_MCH_PRIVATE_KEY"}, []string{"slots", "login"}},
		{"bad template", "WX_TMPL_CONFIRMED", "{not json", []string{"function slots: ", "WX_TMPL_CONFIRMED"}, nil},
		{"empty VPC", "VPC_ID", "", []string{"VPC_ID is empty: the deploy itself needs it"}, []string{"slots"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := completeEnv(t)
			env[tc.key] = tc.value
			code, out, errOut := runCheck(t, env)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("refusal without %q:\n%s", w, errOut)
				}
			}
			for _, fn := range tc.accepted {
				if !strings.Contains(out, "function "+fn+": settings accepted") {
					t.Errorf("function %s, which does not use %s, was refused:\n%s%s", fn, tc.key, out, errOut)
				}
			}
		})
	}
}

// TestDeployScript runs scripts/deploy.sh itself, with a stand-in for the scf
// command that records being called: refused, it never reaches it; with a
// complete environment and DEPLOY_DRY_RUN=1 it stops where it would call
// `scf deploy`. The real deploy (network, an account) is not run here.
func TestDeployScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the preflight with go run")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	called := filepath.Join(dir, "called")
	fake := filepath.Join(dir, "scf")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" > '"+called+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(env map[string]string) (int, string) {
		cmd := exec.Command("bash", filepath.Join(root, "scripts/deploy.sh"))
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k == "DEPLOY_DRY_RUN" || k == "SCF_CLI" {
				continue
			} else if _, ours := completeEnv(t)[k]; ours {
				continue // the test decides every setting
			}
			cmd.Env = append(cmd.Env, kv)
		}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, "SCF_CLI="+fake)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}

	env := completeEnv(t)
	delete(env, "REMIND_BEFORE")
	code, out := script(env)
	if code == 0 || !strings.Contains(out, "unset: REMIND_BEFORE") {
		t.Errorf("unset REMIND_BEFORE: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(called); err == nil {
		t.Fatal("scf deploy was called after a refused preflight")
	}

	env = completeEnv(t)
	env["DEPLOY_DRY_RUN"] = "1"
	code, out = script(env)
	if code != 0 || !strings.Contains(out, "dry run: would run scripts/package.sh, then: "+fake+" deploy") {
		t.Errorf("complete, dry run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(called); err == nil {
		t.Fatal("scf deploy was called in a dry run")
	}
}
