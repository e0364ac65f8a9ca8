package cls_test

import (
	"strings"
	"testing"

	"salon/shared/cls"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	cfg, ok := cls.ConfigFromEnv(envOf(map[string]string{
		"CLS_ENDPOINT": "cls.tencentcloudapi.com", "CLS_TOPIC_ID": "topic-1", "TENCENTCLOUD_REGION": "ap-shanghai",
	}))
	if !ok || cfg != (cls.Config{Endpoint: "cls.tencentcloudapi.com", TopicID: "topic-1", Region: "ap-shanghai"}) {
		t.Errorf("got %+v %v", cfg, ok)
	}
	cfg, ok = cls.ConfigFromEnv(envOf(map[string]string{"CLS_ENDPOINT": "http://127.0.0.1:9", "CLS_TOPIC_ID": "t"}))
	if !ok || cfg.Region != "ap-guangzhou" {
		t.Errorf("default region: got %+v %v", cfg, ok)
	}
	for _, env := range []map[string]string{
		{"CLS_TOPIC_ID": "t"},
		{"CLS_ENDPOINT": "cls.tencentcloudapi.com"},
		{"CLS_ENDPOINT": " ", "CLS_TOPIC_ID": "t"},
		{},
	} {
		if _, ok := cls.ConfigFromEnv(envOf(env)); ok {
			t.Errorf("%v: ok, want not configured", env)
		}
	}
}

func TestEnvCredentialNamesMissingVariable(t *testing.T) {
	env := map[string]string{}
	c := cls.NewEnvCredential(envOf(env))
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "TENCENTCLOUD_SECRETID") {
		t.Errorf("no id: %v", err)
	}
	env["TENCENTCLOUD_SECRETID"] = "AKID1"
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "TENCENTCLOUD_SECRETKEY") {
		t.Errorf("no key: %v", err)
	}
	env["TENCENTCLOUD_SECRETKEY"] = "k1"
	if err := c.Check(); err != nil {
		t.Errorf("id and key set, no token: %v", err)
	}
	env["TENCENTCLOUD_SESSIONTOKEN"] = "tok1"
	if id, key, tok := c.GetCredential(); id != "AKID1" || key != "k1" || tok != "tok1" {
		t.Errorf("GetCredential = %q %q %q", id, key, tok)
	}
	env["TENCENTCLOUD_SESSIONTOKEN"] = "tok2"
	if c.GetToken() != "tok2" {
		t.Errorf("token not re-read: %q", c.GetToken())
	}
}
