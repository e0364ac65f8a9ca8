package frontdoor_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"salon/infra/frontdoor"
	"salon/infra/frontdoor/cloudfake"
	"salon/infra/localgw"
)

const (
	testID     = "AKIDdeployer"
	testKey    = "deployer-secret"
	testAppID  = "1250000000"
	testRegion = "ap-guangzhou"
	testStage  = "prod"
)

func loadSpec(t *testing.T) *localgw.Spec {
	t.Helper()
	spec, err := localgw.LoadServerless("../../serverless.yml")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// newFake starts a fake account in which multi-scf has deployed every function of
// serverless.yml, and a client signed with the account's keys.
func newFake(t *testing.T, spec *localgw.Spec) (*cloudfake.Server, *frontdoor.Cloud) {
	t.Helper()
	srv := cloudfake.New(testID, testKey, testAppID, testRegion)
	for _, f := range spec.Functions {
		srv.AddFunction("default", frontdoor.DeployedName(spec, testStage, f.Name))
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, frontdoor.NewCloud(frontdoor.Credentials{SecretID: testID, SecretKey: testKey}, testRegion, srv.URL)
}

func actions(calls []cloudfake.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Action)
	}
	return out
}

func TestFunctionURLsCreatedOnceForEveryHTTPFunction(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	ctx := context.Background()

	res, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, frontdoor.URLConfig{Stage: testStage})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"slots", "login", "reserve", "cancel", "paynotify", "admin"}
	var gotKeys []string
	hosts := map[string]bool{}
	for _, u := range res.URLs {
		gotKeys = append(gotKeys, u.Key)
		if !strings.HasPrefix(u.URL, "https://"+testAppID+"-") || !strings.HasSuffix(u.URL, "."+testRegion+".tencentscf.com") {
			t.Errorf("%s: URL %q", u.Key, u.URL)
		}
		hosts[u.URL] = true
	}
	if !reflect.DeepEqual(gotKeys, wantKeys) {
		t.Fatalf("functions with URLs %v, want %v (release has no HTTP route)", gotKeys, wantKeys)
	}
	if len(hosts) != len(wantKeys) {
		t.Errorf("URLs are not one host per function: %v", hosts)
	}
	if res.CNAME != testAppID+"."+testRegion+".tencentscf.com" {
		t.Errorf("CNAME target %q", res.CNAME)
	}
	if len(res.Changes) != len(wantKeys) {
		t.Errorf("changes %v", res.Changes)
	}
	for _, key := range wantKeys {
		tr := srv.Triggers("default", frontdoor.DeployedName(spec, testStage, key))
		if len(tr) != 1 || tr[0].Type != "http" || tr[0].Qualifier != "$DEFAULT" || tr[0].Enable != 1 ||
			!strings.Contains(tr[0].TriggerDesc, `"AuthType":"NONE"`) || !strings.Contains(tr[0].TriggerDesc, `"EnableExtranet":true`) {
			t.Errorf("%s triggers %+v", key, tr)
		}
	}
	if tr := srv.Triggers("default", frontdoor.DeployedName(spec, testStage, "release")); len(tr) != 0 {
		t.Errorf("the timer function got a URL: %+v", tr)
	}

	// Idempotent: the second run reads and changes nothing, and prints the same URLs.
	before := len(srv.Writes())
	res2, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, frontdoor.URLConfig{Stage: testStage})
	if err != nil {
		t.Fatal(err)
	}
	if w := srv.Writes()[before:]; len(w) != 0 || len(res2.Changes) != 0 {
		t.Fatalf("second run wrote %v (changes %v)", actions(w), res2.Changes)
	}
	if !reflect.DeepEqual(res.URLs, res2.URLs) {
		t.Errorf("URLs changed: %v vs %v", res.URLs, res2.URLs)
	}
}

func TestFunctionURLMadeInConsoleWithCAMAuthIsOpened(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	name := frontdoor.DeployedName(spec, testStage, "paynotify")
	srv.AddTrigger("default", name, cloudfake.Trigger{Type: "http", TriggerName: "console-url", Qualifier: "$DEFAULT", Enable: 1,
		TriggerDesc: `{"AuthType":"CAM","NetConfig":{"EnableIntranet":true,"EnableExtranet":false}}`})

	res, err := frontdoor.EnsureFunctionURLs(context.Background(), cloud, spec, frontdoor.URLConfig{Stage: testStage})
	if err != nil {
		t.Fatal(err)
	}
	tr := srv.Triggers("default", name)
	if len(tr) != 1 || tr[0].TriggerName != "console-url" {
		t.Fatalf("triggers %+v: the existing URL must be updated, not doubled", tr)
	}
	var d struct {
		AuthType  string
		NetConfig struct{ EnableIntranet, EnableExtranet bool }
	}
	if err := json.Unmarshal([]byte(tr[0].TriggerDesc), &d); err != nil || d.AuthType != "NONE" || !d.NetConfig.EnableExtranet || !d.NetConfig.EnableIntranet {
		t.Fatalf("desc %s", tr[0].TriggerDesc)
	}
	var updates int
	for _, w := range srv.Writes() {
		if w.Action == "UpdateTrigger" {
			updates++
		}
	}
	if updates != 1 || len(res.Changes) != 6 {
		t.Errorf("updates %d, changes %v", updates, res.Changes)
	}
}

func TestPathRulesSendEveryRouteToItsFunction(t *testing.T) {
	spec := loadSpec(t)
	rules, err := frontdoor.PathRules(spec.Routes)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rules {
		got[r.PathMatch] = r.Key
	}
	want := map[string]string{
		"/healthz": "slots", "/slots": "slots", "/config": "slots", "/openapi.json": "slots", "/slots/*": "reserve", "/waitlist/mine": "reserve", "/login": "login",
		"/bookings": "reserve", "/bookings/mine": "reserve", "/bookings/*": "reserve", "/bookings/*/pay": "reserve", "/bookings/*/cancel": "cancel", "/me": "reserve",
		"/bookings/*/reschedule": "cancel",
		"/pay/notify":            "paynotify", "/pay/refund-notify": "paynotify",
		"/admin/slots": "admin", "/admin/slots/*": "admin", "/admin/bookings": "admin", "/admin/bookings/*": "admin", "/admin/checkin": "admin", "/admin/checkout": "admin", "/admin/customers/*": "admin", "/admin/reconciliation": "admin", "/admin/report": "admin", "/admin/reports": "admin", "/admin/reports.csv": "admin",
		"/admin/staff": "admin", "/admin/staff/*": "admin",
		"/services": "slots", "/availability": "slots",
		"/admin/services": "admin", "/admin/services/*": "admin", "/admin/technicians": "admin", "/admin/technicians/*": "admin",
		// The salon console.
		"/admin": "admin", "/admin/": "admin", "/admin/static/*": "admin", "/admin/login": "admin", "/admin/logout": "admin",
		"/admin/week": "admin", "/admin/door": "admin", "/admin/customer": "admin", "/admin/walkin": "admin", "/admin/move": "admin", "/admin/booking": "admin", "/admin/audit": "admin", "/admin/health": "admin",
		"/admin/team": "admin", "/admin/password": "admin",
		"/admin/menu": "admin", "/admin/techs": "admin",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rules\n got %v\nwant %v", got, want)
	}
	// Every route of serverless.yml is matched by a rule of its own function.
	for _, r := range spec.Routes {
		example := strings.NewReplacer("{id}", "42").Replace(r.Path)
		if k := matchRule(rules, example); k != r.Function {
			t.Errorf("%s %s reaches %q, want %s", r.Method, example, k, r.Function)
		}
	}
}

// matchRule picks the most specific rule: an exact match, else the wildcard rule
// with the longest literal text.
func matchRule(rules []frontdoor.PathRule, path string) string {
	best, bestLen := "", -1
	for _, r := range rules {
		if r.PathMatch == path {
			return r.Key
		}
		if globMatch(r.PathMatch, path) && len(strings.ReplaceAll(r.PathMatch, "*", "")) > bestLen {
			best, bestLen = r.Key, len(strings.ReplaceAll(r.PathMatch, "*", ""))
		}
	}
	return best
}

func globMatch(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	for i, p := range ps {
		if p == "*" && i == len(ps)-1 {
			return len(xs) >= len(ps)
		}
		if i >= len(xs) || (p != "*" && p != xs[i]) {
			return false
		}
	}
	return len(xs) == len(ps)
}

func TestPathRulesRefuseARouteClaimedByTwoFunctions(t *testing.T) {
	_, err := frontdoor.PathRules([]localgw.Route{
		{Method: "GET", Path: "/a", Function: "one"},
		{Method: "POST", Path: "/a", Function: "two"},
	})
	if err == nil || !strings.Contains(err.Error(), "/a") {
		t.Fatalf("err = %v", err)
	}
}

func TestCustomDomainCreatedThenLeftAlone(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	ctx := context.Background()
	cfg := frontdoor.URLConfig{Stage: testStage, Domain: "api.salon.example.cn", CertificateID: "cert-abc"}

	res, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := srv.Domain(cfg.Domain)
	if d == nil || d["Protocol"] != "HTTPS" || d["CertConfig"].(map[string]any)["CertificateId"] != "cert-abc" {
		t.Fatalf("domain %v", d)
	}
	eps := d["EndpointsConfig"].([]any)
	if len(eps) != len(res.Rules) || len(eps) != 52 {
		t.Fatalf("%d endpoints, %d rules", len(eps), len(res.Rules))
	}
	for _, e := range eps {
		ep := e.(map[string]any)
		if ep["Qualifier"] != "$DEFAULT" || ep["Namespace"] != "default" || !strings.HasPrefix(ep["FunctionName"].(string), "salon-prod-salon-") {
			t.Errorf("endpoint %v", ep)
		}
	}
	if got := actions(srv.Writes()); got[len(got)-1] != "CreateCustomDomain" {
		t.Errorf("writes %v", got)
	}

	before := len(srv.Writes())
	res2, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := srv.Writes()[before:]; len(w) != 0 || len(res2.Changes) != 0 {
		t.Fatalf("second run wrote %v", actions(w))
	}

	// A rule changed by hand (or a new certificate) is put back by one update.
	cfg.CertificateID = "cert-renewed"
	res3, err := frontdoor.EnsureFunctionURLs(ctx, cloud, spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := srv.Writes()[before:]; len(w) != 1 || w[0].Action != "UpdateCustomDomain" || len(res3.Changes) != 1 {
		t.Fatalf("writes %v", actions(w))
	}
}

func TestCustomDomainNeedsCertificateAndStage(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	for _, cfg := range []frontdoor.URLConfig{
		{Stage: testStage, Domain: "api.salon.example.cn"},
		{Domain: "api.salon.example.cn", CertificateID: "c"},
	} {
		if _, err := frontdoor.EnsureFunctionURLs(context.Background(), cloud, spec, cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls made for a refused configuration", n)
	}
}

func TestWrongKeysAreRefusedByTheFake(t *testing.T) {
	spec := loadSpec(t)
	srv, _ := newFake(t, spec)
	bad := frontdoor.NewCloud(frontdoor.Credentials{SecretID: testID, SecretKey: "not-the-key"}, testRegion, srv.URL)
	_, err := frontdoor.EnsureFunctionURLs(context.Background(), bad, spec, frontdoor.URLConfig{Stage: testStage})
	var apiErr *frontdoor.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "AuthFailure.SignatureFailure" {
		t.Fatalf("err = %v", err)
	}
	if w := srv.Writes(); len(w) != 0 {
		t.Errorf("writes %v", actions(w))
	}
}

func TestUnknownStageNamesNoFunction(t *testing.T) {
	spec := loadSpec(t)
	_, cloud := newFake(t, spec)
	_, err := frontdoor.EnsureFunctionURLs(context.Background(), cloud, spec, frontdoor.URLConfig{Stage: "staging"})
	if !frontdoor.IsNotFound(err) || !strings.Contains(err.Error(), "salon-staging-salon-slots") {
		t.Fatalf("err = %v", err)
	}
}

// gatewayAsDeployed builds the API Gateway service multi-scf leaves behind: every
// route of serverless.yml as an SCF API with integrated response OFF.
func gatewayAsDeployed(t *testing.T, srv *cloudfake.Server, spec *localgw.Spec) []string {
	t.Helper()
	srv.AddService("service-abc123", "service-abc123-"+testAppID+".gz.apigw.tencentcs.com", "https")
	var ids []string
	for i, r := range spec.Routes {
		id := "api-" + string(rune('a'+i))
		ids = append(ids, id)
		params := []any{}
		for _, p := range r.Params {
			params = append(params, map[string]any{"Name": p.Name, "Position": p.Position, "Type": p.Type, "Required": p.Required, "DefaultValue": "", "Desc": ""})
		}
		srv.AddAPI("service-abc123", map[string]any{
			"ApiId": id, "ApiName": "api" + id, "ApiType": "NORMAL", "AuthType": "NONE", "Protocol": "HTTP",
			"ServiceType": "SCF", "ServiceTimeout": r.ServiceTimeout.Seconds(), "EnableCORS": false,
			"RequestConfig":          map[string]any{"Path": r.Path, "Method": r.Method},
			"RequestParameters":      params,
			"ServiceScfFunctionName": frontdoor.DeployedName(spec, testStage, r.Function), "ServiceScfFunctionNamespace": "default",
			"ServiceScfFunctionQualifier": "$DEFAULT", "ServiceScfIsIntegratedResponse": false,
			"IsBase64Encoded": false, "ResponseType": "HTML", "CreatedTime": "2026-11-30T00:00:00Z",
			"InternalDomain": "",
		})
	}
	return ids
}

func TestGatewayIntegratedResponseOnAndPublished(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	ids := gatewayAsDeployed(t, srv, spec)
	before := map[string]map[string]any{}
	for _, id := range ids {
		before[id] = srv.API("service-abc123", id)
	}
	ctx := context.Background()

	res, err := frontdoor.EnsureIntegratedResponse(ctx, cloud, "service-abc123", spec, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Switched) != len(ids) || !res.Published || srv.Releases("service-abc123") != 1 || len(res.Missing) != 0 {
		t.Fatalf("switched %d of %d, published %v (%d releases), missing %v", len(res.Switched), len(ids), res.Published, srv.Releases("service-abc123"), res.Missing)
	}
	for _, id := range ids {
		pub := srv.PublishedAPI("service-abc123", id)
		if pub["ServiceScfIsIntegratedResponse"] != true {
			t.Errorf("%s not switched on in release", id)
		}
		// ModifyApi replaces the whole definition: everything else must survive.
		want := before[id]
		want["ServiceScfIsIntegratedResponse"] = true
		if !reflect.DeepEqual(pub, want) {
			t.Errorf("%s changed beyond integrated response:\n got %v\nwant %v", id, pub, want)
		}
	}
	// URLs on the default domain carry the /release stage prefix.
	var sawPay bool
	for _, a := range res.APIs {
		if !strings.HasPrefix(a.URL, "https://service-abc123-"+testAppID+".gz.apigw.tencentcs.com/release/") {
			t.Errorf("URL %s", a.URL)
		}
		if a.Path == "/bookings/{id}/pay" {
			sawPay = a.URL == "https://service-abc123-"+testAppID+".gz.apigw.tencentcs.com/release/bookings/{id}/pay" && a.Method == "POST"
		}
	}
	if !sawPay {
		t.Errorf("no correct URL for POST /bookings/{id}/pay in %v", res.APIs)
	}

	// Second run: nothing to switch, nothing published.
	n := len(srv.Writes())
	res2, err := frontdoor.EnsureIntegratedResponse(ctx, cloud, "service-abc123", spec, false)
	if err != nil {
		t.Fatal(err)
	}
	if w := srv.Writes()[n:]; len(w) != 0 || res2.Published || len(res2.Changes) != 0 {
		t.Fatalf("second run wrote %v", actions(w))
	}

	// A run interrupted before publishing is finished with -release.
	res3, err := frontdoor.EnsureIntegratedResponse(ctx, cloud, "service-abc123", spec, true)
	if err != nil || !res3.Published || srv.Releases("service-abc123") != 2 {
		t.Fatalf("forced release: %v %+v", err, res3)
	}
}

func TestGatewayFailedPublishIsReported(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	gatewayAsDeployed(t, srv, spec)
	srv.FailNext("ReleaseService", "InternalError")
	_, err := frontdoor.EnsureIntegratedResponse(context.Background(), cloud, "service-abc123", spec, false)
	if err == nil || !strings.Contains(err.Error(), "-release") {
		t.Fatalf("err = %v", err)
	}
}

func TestGatewayReportsRoutesTheServiceLacks(t *testing.T) {
	spec := loadSpec(t)
	srv, cloud := newFake(t, spec)
	srv.AddService("service-empty", "service-empty-1.gz.apigw.tencentcs.com", "https")
	res, err := frontdoor.EnsureIntegratedResponse(context.Background(), cloud, "service-empty", spec, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != len(spec.Routes) || res.Published {
		t.Fatalf("missing %v published %v", res.Missing, res.Published)
	}
}

func TestCredentialsFromEnv(t *testing.T) {
	env := map[string]string{"TENCENT_SECRET_ID": "id", "TENCENT_SECRET_KEY": "key"}
	c, err := frontdoor.CredentialsFromEnv(func(k string) string { return env[k] })
	if err != nil || c.SecretID != "id" || c.SecretKey != "key" {
		t.Fatalf("%+v %v", c, err)
	}
	env["TENCENTCLOUD_SECRET_ID"], env["TENCENTCLOUD_SECRET_KEY"] = "id2", "key2"
	if c, _ := frontdoor.CredentialsFromEnv(func(k string) string { return env[k] }); c.SecretID != "id2" || c.SecretKey != "key2" {
		t.Fatalf("%+v", c)
	}
	if _, err := frontdoor.CredentialsFromEnv(func(string) string { return "" }); err == nil {
		t.Fatal("no keys accepted")
	}
}
