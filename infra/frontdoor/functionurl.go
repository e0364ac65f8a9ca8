package frontdoor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"salon/infra/localgw"
)

// URLConfig says where the functions live and what front door they get.
type URLConfig struct {
	Stage     string // the STAGE serverless.yml was deployed with
	Namespace string // SCF namespace; "" means "default"
	// Qualifier is the version or alias the URL (and the domain's rules) point
	// at. "" means "$DEFAULT", the alias multi-scf deploys and the timer uses.
	Qualifier string

	// Domain, when set, is the ICP-filed custom domain put in front of the Function
	// URLs, with one path rule per route of serverless.yml. CertificateID is the SSL
	// certificate of that domain in Tencent's SSL certificate service: the
	// mini-program and WeChat Pay both require HTTPS.
	Domain        string
	CertificateID string
}

// TriggerName is the name the deploy gives the Function URL trigger it creates.
const TriggerName = "url"

// FunctionURL is the Function URL of one function of serverless.yml.
type FunctionURL struct {
	Key      string // the key under inputs.functions
	Function string // the deployed SCF function name
	URL      string // https://<appid>-<id>.<region>.tencentscf.com
}

// PathRule sends requests whose path matches PathMatch to a function.
type PathRule struct {
	PathMatch string
	Key       string // function key in serverless.yml
}

// URLResult is what EnsureFunctionURLs found or made.
type URLResult struct {
	URLs    []FunctionURL
	Rules   []PathRule // the custom domain's rules; nil without a domain
	CNAME   string     // the target the domain's CNAME record must name; "" when unknown
	Changes []string   // every write made, in order; empty when nothing changed
}

// DeployedName is the SCF function name multi-scf gives a function that sets no
// name of its own: ${name}-${stage}-${app}-${key}.
func DeployedName(spec *localgw.Spec, stage, key string) string {
	return spec.Name + "-" + stage + "-" + spec.App + "-" + key
}

// HTTPFunctions returns the keys of the functions that serve HTTP routes, in
// the order their first route appears in serverless.yml.
func HTTPFunctions(spec *localgw.Spec) []string {
	var keys []string
	seen := map[string]bool{}
	for _, r := range spec.Routes {
		if !seen[r.Function] {
			seen[r.Function] = true
			keys = append(keys, r.Function)
		}
	}
	return keys
}

// triggerDesc is the TriggerDesc JSON of an "http" trigger (a Function URL). The
// deploy wants it public and unauthenticated: the mini-program and WeChat Pay call
// it anonymously, and the functions authenticate requests themselves.
type triggerDesc struct {
	AuthType  string `json:"AuthType"`
	NetConfig struct {
		EnableIntranet bool   `json:"EnableIntranet"`
		EnableExtranet bool   `json:"EnableExtranet"`
		ExtranetURL    string `json:"ExtranetUrl,omitempty"`
		IntranetURL    string `json:"IntranetUrl,omitempty"`
	} `json:"NetConfig"`
}

func (d triggerDesc) public() bool { return d.AuthType == "NONE" && d.NetConfig.EnableExtranet }

type trigger struct {
	Type        string `json:"Type"`
	TriggerName string `json:"TriggerName"`
	TriggerDesc string `json:"TriggerDesc"`
	Qualifier   string `json:"Qualifier"`
}

func (c *Cloud) httpTrigger(ctx context.Context, namespace, function, qualifier string) (*trigger, error) {
	for offset := 0; ; {
		var page struct {
			TotalCount int       `json:"TotalCount"`
			Triggers   []trigger `json:"Triggers"`
		}
		if err := c.call(ctx, ServiceSCF, "ListTriggers", map[string]any{
			"FunctionName": function, "Namespace": namespace, "Offset": offset, "Limit": 100,
		}, &page); err != nil {
			return nil, err
		}
		for i, t := range page.Triggers {
			if t.Type == "http" && (t.Qualifier == qualifier || t.Qualifier == "") {
				return &page.Triggers[i], nil
			}
		}
		offset += len(page.Triggers)
		if len(page.Triggers) == 0 || offset >= page.TotalCount {
			return nil, nil
		}
	}
}

// EnsureFunctionURLs makes sure every function of spec with HTTP routes has a
// public Function URL, and, when cfg.Domain is set, that the custom domain exists
// with exactly the path rules of serverless.yml's routes. It changes only what
// differs, so a second run makes no write.
func EnsureFunctionURLs(ctx context.Context, c *Cloud, spec *localgw.Spec, cfg URLConfig) (*URLResult, error) {
	if cfg.Stage == "" {
		return nil, errors.New("frontdoor: the stage is required (the STAGE serverless.yml was deployed with)")
	}
	if cfg.Domain != "" && cfg.CertificateID == "" {
		return nil, errors.New("frontdoor: a custom domain needs the id of its SSL certificate: mini-programs and WeChat Pay call HTTPS only")
	}
	ns, qual := cfg.Namespace, cfg.Qualifier
	if ns == "" {
		ns = "default"
	}
	if qual == "" {
		qual = "$DEFAULT"
	}
	res := &URLResult{}
	for _, key := range HTTPFunctions(spec) {
		name := DeployedName(spec, cfg.Stage, key)
		u, changes, err := c.ensureURL(ctx, ns, name, qual)
		if err != nil {
			return nil, fmt.Errorf("function %s (%s): %w", key, name, err)
		}
		res.Changes = append(res.Changes, changes...)
		res.URLs = append(res.URLs, FunctionURL{Key: key, Function: name, URL: u})
	}
	if len(res.URLs) > 0 {
		res.CNAME = cnameTarget(res.URLs[0].URL)
	}
	if cfg.Domain == "" {
		return res, nil
	}
	rules, err := PathRules(spec.Routes)
	if err != nil {
		return nil, err
	}
	res.Rules = rules
	changes, err := c.ensureDomain(ctx, spec, cfg, ns, qual, rules)
	if err != nil {
		return nil, fmt.Errorf("custom domain %s: %w", cfg.Domain, err)
	}
	res.Changes = append(res.Changes, changes...)
	return res, nil
}

func (c *Cloud) ensureURL(ctx context.Context, ns, function, qual string) (string, []string, error) {
	want := triggerDesc{AuthType: "NONE"}
	want.NetConfig.EnableExtranet = true
	var changes []string

	t, err := c.httpTrigger(ctx, ns, function, qual)
	if err != nil {
		return "", nil, err
	}
	switch {
	case t == nil:
		desc, _ := json.Marshal(want)
		if err := c.call(ctx, ServiceSCF, "CreateTrigger", map[string]any{
			"FunctionName": function, "Namespace": ns, "Qualifier": qual,
			"Type": "http", "TriggerName": TriggerName, "TriggerDesc": string(desc), "Enable": "OPEN",
		}, nil); err != nil {
			return "", nil, err
		}
		changes = append(changes, fmt.Sprintf("CreateTrigger %s: Function URL (public, no auth) on %s", function, qual))
	default:
		var have triggerDesc
		if err := json.Unmarshal([]byte(t.TriggerDesc), &have); err != nil {
			return "", nil, fmt.Errorf("trigger %s: TriggerDesc is not JSON: %w", t.TriggerName, err)
		}
		if have.public() {
			break
		}
		// Keep the intranet switch as it is; only the public, anonymous door matters.
		want.NetConfig.EnableIntranet = have.NetConfig.EnableIntranet
		desc, _ := json.Marshal(want)
		if err := c.call(ctx, ServiceSCF, "UpdateTrigger", map[string]any{
			"FunctionName": function, "Namespace": ns, "Qualifier": qual,
			"Type": "http", "TriggerName": t.TriggerName, "TriggerDesc": string(desc), "Enable": "OPEN",
		}, nil); err != nil {
			return "", nil, err
		}
		changes = append(changes, fmt.Sprintf("UpdateTrigger %s: Function URL %s made public without auth (was AuthType %s, extranet %v)",
			function, t.TriggerName, have.AuthType, have.NetConfig.EnableExtranet))
	}
	if len(changes) > 0 {
		if t, err = c.httpTrigger(ctx, ns, function, qual); err != nil {
			return "", nil, err
		}
		if t == nil {
			return "", nil, errors.New("the Function URL trigger is not listed after it was written")
		}
	}
	var have triggerDesc
	if err := json.Unmarshal([]byte(t.TriggerDesc), &have); err != nil {
		return "", nil, fmt.Errorf("trigger %s: TriggerDesc is not JSON: %w", t.TriggerName, err)
	}
	if have.NetConfig.ExtranetURL == "" {
		return "", nil, fmt.Errorf("trigger %s lists no ExtranetUrl; read the URL in the console (function > 函数 URL)", t.TriggerName)
	}
	return strings.TrimRight(have.NetConfig.ExtranetURL, "/"), changes, nil
}

// cnameTarget derives the CNAME Tencent documents for custom domains,
// <appid>.<region>.tencentscf.com, from a Function URL
// https://<appid>-<id>.<region>.tencentscf.com.
func cnameTarget(functionURL string) string {
	u, err := url.Parse(functionURL)
	if err != nil {
		return ""
	}
	first, rest, ok := strings.Cut(u.Hostname(), ".")
	if !ok || !strings.HasSuffix(rest, ".tencentscf.com") {
		return ""
	}
	appID, _, ok := strings.Cut(first, "-")
	if !ok || appID == "" {
		return ""
	}
	return appID + "." + rest
}

// PathRules turns the routes of serverless.yml into the custom domain's path
// rules. A route without parameters becomes an exact rule. A route with
// parameters becomes "<literal prefix>/*" when every route under that prefix
// belongs to the same function, and otherwise its own pattern with each
// parameter as "*" (/bookings/*/pay and /bookings/*/cancel go to different
// functions). The functions route on the path themselves, so a rule only has to
// reach the right function.
func PathRules(routes []localgw.Route) ([]PathRule, error) {
	owner := func(prefix string) (string, bool) {
		fn := ""
		for _, r := range routes {
			if strings.HasPrefix(r.Path, prefix+"/") {
				if fn != "" && fn != r.Function {
					return "", false
				}
				fn = r.Function
			}
		}
		return fn, true
	}
	byPath := map[string]string{}
	add := func(match, key string) error {
		if prev, ok := byPath[match]; ok && prev != key {
			return fmt.Errorf("frontdoor: path rule %s would go to both %s and %s", match, prev, key)
		}
		byPath[match] = key
		return nil
	}
	for _, r := range routes {
		segs := strings.Split(strings.Trim(r.Path, "/"), "/")
		first := -1
		for i, s := range segs {
			if strings.HasPrefix(s, "{") {
				first = i
				break
			}
		}
		var match string
		switch {
		case first < 0:
			match = r.Path
		default:
			prefix := "/" + strings.Join(segs[:first], "/")
			if prefix == "/" {
				prefix = ""
			}
			if _, single := owner(prefix); single {
				match = prefix + "/*"
				break
			}
			wild := make([]string, len(segs))
			for i, s := range segs {
				if strings.HasPrefix(s, "{") {
					s = "*"
				}
				wild[i] = s
			}
			match = "/" + strings.Join(wild, "/")
		}
		if err := add(match, r.Function); err != nil {
			return nil, err
		}
	}
	rules := make([]PathRule, 0, len(byPath))
	for m, k := range byPath {
		rules = append(rules, PathRule{PathMatch: m, Key: k})
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].PathMatch < rules[j].PathMatch })
	return rules, nil
}

// endpoint is one EndpointsConf of the custom domain APIs.
type endpoint struct {
	Namespace    string            `json:"Namespace"`
	FunctionName string            `json:"FunctionName"`
	Qualifier    string            `json:"Qualifier"`
	PathMatch    string            `json:"PathMatch"`
	PathRewrite  []json.RawMessage `json:"PathRewrite,omitempty"`
}

type customDomain struct {
	Domain          string     `json:"Domain"`
	Protocol        string     `json:"Protocol"`
	EndpointsConfig []endpoint `json:"EndpointsConfig"`
	CertConfig      *struct {
		CertificateID string `json:"CertificateId"`
	} `json:"CertConfig"`
}

func (c *Cloud) ensureDomain(ctx context.Context, spec *localgw.Spec, cfg URLConfig, ns, qual string, rules []PathRule) ([]string, error) {
	want := make([]endpoint, len(rules))
	for i, r := range rules {
		want[i] = endpoint{Namespace: ns, FunctionName: DeployedName(spec, cfg.Stage, r.Key), Qualifier: qual, PathMatch: r.PathMatch}
	}
	params := map[string]any{
		"Domain":          cfg.Domain,
		"Protocol":        "HTTPS",
		"CertConfig":      map[string]any{"CertificateId": cfg.CertificateID},
		"EndpointsConfig": want,
	}
	var have customDomain
	err := c.call(ctx, ServiceSCF, "GetCustomDomain", map[string]any{"Domain": cfg.Domain}, &have)
	switch {
	case IsNotFound(err):
		if err := c.call(ctx, ServiceSCF, "CreateCustomDomain", params, nil); err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("CreateCustomDomain %s: HTTPS, %d path rules", cfg.Domain, len(want))}, nil
	case err != nil:
		return nil, err
	}
	cert := ""
	if have.CertConfig != nil {
		cert = have.CertConfig.CertificateID
	}
	if have.Protocol == "HTTPS" && cert == cfg.CertificateID && sameEndpoints(have.EndpointsConfig, want) {
		return nil, nil
	}
	if err := c.call(ctx, ServiceSCF, "UpdateCustomDomain", params, nil); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("UpdateCustomDomain %s: HTTPS, %d path rules (was %s, %d rules)", cfg.Domain, len(want), have.Protocol, len(have.EndpointsConfig))}, nil
}

func sameEndpoints(a, b []endpoint) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(e endpoint) string {
		return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", e.Namespace, e.FunctionName, e.Qualifier, e.PathMatch, len(e.PathRewrite))
	}
	set := map[string]int{}
	for _, e := range a {
		set[key(e)]++
	}
	for _, e := range b {
		if set[key(e)] == 0 {
			return false
		}
		set[key(e)]--
	}
	return true
}
