// Package cloudfake is a local stand-in for the parts of Tencent's cloud API 3.0
// that the frontdoor deploy step calls: SCF's triggers and custom domains
// (scf, 2018-04-16) and API Gateway's APIs and releases (apigateway, 2018-08-08).
// Like the real endpoints it refuses a request whose TC3-HMAC-SHA256 signature,
// timestamp, SecretId, service, version or region is wrong, and answers in the
// cloud API's JSON shape so the real SDK parses it. It keeps state and records
// every request, so tests can assert what a deploy changed and that a second run
// changes nothing.
package cloudfake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"salon/shared/cls/clstest"
)

// Call is one request the fake saw, accepted or not.
type Call struct {
	Service   string
	Action    string
	Params    map[string]any
	ErrorCode string // "" when accepted
}

// Trigger is a stored SCF trigger.
type Trigger struct {
	Type, TriggerName, TriggerDesc, Qualifier string
	Enable                                    int
}

// Server is the fake. Set it up with AddFunction / AddService / AddAPI, then
// Start it.
type Server struct {
	URL string // "http://127.0.0.1:PORT" once started

	ts         *httptest.Server
	appID      string
	region     string
	secretID   string
	secretKey  string
	now        func() time.Time
	mu         sync.Mutex
	functions  map[string]map[string]bool // namespace -> function -> exists
	triggers   map[string][]*Trigger      // namespace/function -> triggers
	domains    map[string]map[string]any
	services   map[string]*service
	calls      []Call
	failAction map[string]string // action -> error code to answer once
}

type service struct {
	id, domain, protocol string
	apis                 map[string]map[string]any // draft definitions
	published            map[string]map[string]any // what release serves
	releases             int
}

// New returns a fake that accepts requests signed with secretID/secretKey, for an
// account whose APPID is appID in region.
func New(secretID, secretKey, appID, region string) *Server {
	return &Server{
		appID: appID, region: region, secretID: secretID, secretKey: secretKey, now: time.Now,
		functions:  map[string]map[string]bool{},
		triggers:   map[string][]*Trigger{},
		domains:    map[string]map[string]any{},
		services:   map[string]*service{},
		failAction: map[string]string{},
	}
}

// Start serves on a local port over plain HTTP.
func (s *Server) Start() {
	s.ts = httptest.NewServer(s)
	s.URL = s.ts.URL
}

// Close stops the server.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// AddFunction makes a deployed function exist.
func (s *Server) AddFunction(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.functions[namespace] == nil {
		s.functions[namespace] = map[string]bool{}
	}
	s.functions[namespace][name] = true
}

// AddTrigger stores a trigger as if made in the console.
func (s *Server) AddTrigger(namespace, function string, t Trigger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triggers[namespace+"/"+function] = append(s.triggers[namespace+"/"+function], &t)
}

// Triggers returns a copy of a function's triggers.
func (s *Server) Triggers(namespace, function string) []Trigger {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Trigger
	for _, t := range s.triggers[namespace+"/"+function] {
		out = append(out, *t)
	}
	return out
}

// Domain returns a copy of a custom domain's stored configuration, or nil.
func (s *Server) Domain(name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.domains[name])
}

// AddService creates an API Gateway service with its default domain.
func (s *Server) AddService(id, outerSubDomain, protocol string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.services[id] = &service{id: id, domain: outerSubDomain, protocol: protocol,
		apis: map[string]map[string]any{}, published: map[string]map[string]any{}}
}

// AddAPI stores an API definition (DescribeApi's Result shape) in a service, as
// a deploy left it, and publishes it.
func (s *Server) AddAPI(serviceID string, info map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc := s.services[serviceID]
	info = clone(info)
	info["ServiceId"] = serviceID
	id := info["ApiId"].(string)
	svc.apis[id] = info
	svc.published[id] = clone(info)
}

// API returns a copy of an API's draft definition.
func (s *Server) API(serviceID, apiID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.services[serviceID].apis[apiID])
}

// PublishedAPI returns a copy of the definition the release environment serves.
func (s *Server) PublishedAPI(serviceID, apiID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clone(s.services[serviceID].published[apiID])
}

// Releases counts ReleaseService calls accepted for a service.
func (s *Server) Releases(serviceID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.services[serviceID].releases
}

// FailNext makes the next request for action fail with code.
func (s *Server) FailNext(action, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAction[action] = code
}

// Calls returns every request seen, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Writes returns the accepted requests whose action changes state.
func (s *Server) Writes() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.ErrorCode == "" && !isRead(c.Action) {
			out = append(out, c)
		}
	}
	return out
}

func isRead(action string) bool {
	return strings.HasPrefix(action, "List") || strings.HasPrefix(action, "Get") || strings.HasPrefix(action, "Describe")
}

var actions = map[string]struct{ service, version string }{
	"ListTriggers":       {"scf", "2018-04-16"},
	"CreateTrigger":      {"scf", "2018-04-16"},
	"UpdateTrigger":      {"scf", "2018-04-16"},
	"GetCustomDomain":    {"scf", "2018-04-16"},
	"CreateCustomDomain": {"scf", "2018-04-16"},
	"UpdateCustomDomain": {"scf", "2018-04-16"},
	"DescribeService":    {"apigateway", "2018-08-08"},
	"DescribeApisStatus": {"apigateway", "2018-08-08"},
	"DescribeApi":        {"apigateway", "2018-08-08"},
	"ModifyApi":          {"apigateway", "2018-08-08"},
	"ReleaseService":     {"apigateway", "2018-08-08"},
}

type apiError struct{ code, msg string }

func fail(code, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP handles one cloud API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	action := r.Header.Get("X-TC-Action")
	call := Call{Action: action}
	result, aerr := s.handle(r, body, &call)
	if aerr != nil {
		call.ErrorCode = aerr.code
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	resp := map[string]any{"RequestId": newRequestID()}
	if aerr != nil {
		resp["Error"] = map[string]any{"Code": aerr.code, "Message": aerr.msg}
	} else {
		for k, v := range result {
			resp[k] = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"Response": resp})
}

func (s *Server) handle(r *http.Request, body []byte, call *Call) (map[string]any, *apiError) {
	want, known := actions[call.Action]
	if !known {
		return nil, fail("InvalidAction", "action %q is not supported by cloudfake", call.Action)
	}
	call.Service = want.service
	if r.Method != http.MethodPost {
		return nil, fail("UnsupportedProtocol", "POST only")
	}
	if _, err := clstest.VerifyTC3(r, body, want.service, s.secretID, s.secretKey, s.now()); err != nil {
		e := err.(*clstest.TC3Error)
		return nil, fail(e.Code, "%s", e.Message)
	}
	if v := r.Header.Get("X-TC-Version"); v != want.version {
		return nil, fail("NoSuchVersion", "version %q does not exist for %s", v, call.Action)
	}
	if reg := r.Header.Get("X-TC-Region"); reg != s.region {
		return nil, fail("InvalidParameterValue.Region", "region %q, this account's resources are in %s", reg, s.region)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, fail("InvalidParameter", "Content-Type must be application/json, got %q", ct)
	}
	var params map[string]any
	if err := json.Unmarshal(body, &params); err != nil {
		return nil, fail("InvalidParameter", "body is not a JSON object: %v", err)
	}
	call.Params = params

	s.mu.Lock()
	defer s.mu.Unlock()
	if code, ok := s.failAction[call.Action]; ok {
		delete(s.failAction, call.Action)
		return nil, fail(code, "cloudfake: FailNext")
	}
	switch want.service {
	case "scf":
		return s.scf(call.Action, params)
	default:
		return s.apigw(call.Action, params)
	}
}

func (s *Server) scf(action string, p map[string]any) (map[string]any, *apiError) {
	switch action {
	case "GetCustomDomain":
		d := s.domains[str(p["Domain"])]
		if d == nil {
			return nil, fail("ResourceNotFound.Domain", "domain %s does not exist", str(p["Domain"]))
		}
		return clone(d), nil
	case "CreateCustomDomain", "UpdateCustomDomain":
		return s.putDomain(action, p)
	}

	ns := str(p["Namespace"])
	if ns == "" {
		ns = "default"
	}
	fn := str(p["FunctionName"])
	if !s.functions[ns][fn] {
		return nil, fail("ResourceNotFound.Function", "function %s does not exist in namespace %s", fn, ns)
	}
	key := ns + "/" + fn
	switch action {
	case "ListTriggers":
		var list []map[string]any
		for _, t := range s.triggers[key] {
			list = append(list, map[string]any{"Type": t.Type, "TriggerName": t.TriggerName, "TriggerDesc": t.TriggerDesc,
				"Qualifier": t.Qualifier, "Enable": t.Enable, "AvailableStatus": "Available"})
		}
		offset, limit := intOf(p["Offset"], 0), intOf(p["Limit"], 20)
		total := len(list)
		if offset > total {
			offset = total
		}
		end := min(offset+limit, total)
		return map[string]any{"TotalCount": total, "Triggers": list[offset:end]}, nil
	case "CreateTrigger", "UpdateTrigger":
		if str(p["Type"]) != "http" {
			return nil, fail("InvalidParameterValue.Type", "cloudfake models http triggers (Function URLs) only")
		}
		desc, aerr := s.urlDesc(str(p["TriggerDesc"]), fn)
		if aerr != nil {
			return nil, aerr
		}
		qual := str(p["Qualifier"])
		if qual == "" {
			qual = "$LATEST"
		}
		enable := 0
		if str(p["Enable"]) == "OPEN" {
			enable = 1
		}
		var found *Trigger
		for _, t := range s.triggers[key] {
			if t.Type == "http" && t.Qualifier == qual {
				found = t
			}
		}
		if action == "CreateTrigger" {
			if found != nil {
				// One URL per version or alias (the Function URL doc).
				return nil, fail("ResourceInUse.Trigger", "%s already has a Function URL on %s", fn, qual)
			}
			t := &Trigger{Type: "http", TriggerName: str(p["TriggerName"]), TriggerDesc: desc, Qualifier: qual, Enable: enable}
			s.triggers[key] = append(s.triggers[key], t)
			return map[string]any{"TriggerInfo": map[string]any{"TriggerName": t.TriggerName, "TriggerDesc": desc, "Type": "http"}}, nil
		}
		if found == nil || found.TriggerName != str(p["TriggerName"]) {
			return nil, fail("ResourceNotFound.Trigger", "no http trigger %s on %s", str(p["TriggerName"]), qual)
		}
		found.TriggerDesc, found.Enable = desc, enable
		return map[string]any{}, nil
	}
	return nil, fail("InvalidAction", "%s", action)
}

// urlDesc validates a Function URL TriggerDesc and adds the URLs the platform
// assigns, https://<appid>-<id>.<region>.tencentscf.com.
func (s *Server) urlDesc(raw, fn string) (string, *apiError) {
	var d struct {
		AuthType  string `json:"AuthType"`
		NetConfig struct {
			EnableIntranet bool `json:"EnableIntranet"`
			EnableExtranet bool `json:"EnableExtranet"`
		} `json:"NetConfig"`
	}
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return "", fail("InvalidParameterValue.TriggerDesc", "TriggerDesc is not JSON: %v", err)
	}
	if d.AuthType != "NONE" && d.AuthType != "CAM" {
		return "", fail("InvalidParameterValue.TriggerDesc", "AuthType must be NONE or CAM")
	}
	if !d.NetConfig.EnableIntranet && !d.NetConfig.EnableExtranet {
		return "", fail("InvalidParameterValue.TriggerDesc", "enable the extranet or the intranet URL")
	}
	sum := sha256.Sum256([]byte(fn))
	id := hex.EncodeToString(sum[:4])
	out := map[string]any{"AuthType": d.AuthType, "NetConfig": map[string]any{
		"EnableIntranet": d.NetConfig.EnableIntranet, "EnableExtranet": d.NetConfig.EnableExtranet,
	}}
	nc := out["NetConfig"].(map[string]any)
	if d.NetConfig.EnableExtranet {
		nc["ExtranetUrl"] = fmt.Sprintf("https://%s-%s.%s.tencentscf.com", s.appID, id, s.region)
	}
	if d.NetConfig.EnableIntranet {
		nc["IntranetUrl"] = fmt.Sprintf("https://%s-%s.in.%s.tencentscf.com", s.appID, id, s.region)
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

func (s *Server) putDomain(action string, p map[string]any) (map[string]any, *apiError) {
	name := str(p["Domain"])
	if name == "" || strings.HasPrefix(name, "*") {
		return nil, fail("InvalidParameterValue.Domain", "a single domain is required; wildcard domains are not supported")
	}
	exists := s.domains[name] != nil
	if action == "CreateCustomDomain" && exists {
		return nil, fail("ResourceInUse.Domain", "domain %s exists", name)
	}
	if action == "UpdateCustomDomain" && !exists {
		return nil, fail("ResourceNotFound.Domain", "domain %s does not exist", name)
	}
	proto := str(p["Protocol"])
	if proto != "HTTP" && proto != "HTTPS" && proto != "HTTP&HTTPS" {
		return nil, fail("InvalidParameterValue.Protocol", "Protocol must be HTTP, HTTPS or HTTP&HTTPS")
	}
	if proto != "HTTP" {
		cert, _ := p["CertConfig"].(map[string]any)
		if str(cert["CertificateId"]) == "" {
			return nil, fail("InvalidParameterValue.CertConfig", "HTTPS needs CertConfig.CertificateId")
		}
	}
	eps, _ := p["EndpointsConfig"].([]any)
	if len(eps) == 0 {
		return nil, fail("InvalidParameterValue.EndpointsConfig", "at least one path rule is required")
	}
	seen := map[string]bool{}
	for _, e := range eps {
		ep, _ := e.(map[string]any)
		ns, fn, pm := str(ep["Namespace"]), str(ep["FunctionName"]), str(ep["PathMatch"])
		if !strings.HasPrefix(pm, "/") {
			return nil, fail("InvalidParameterValue.PathMatch", "PathMatch %q must start with /", pm)
		}
		if seen[pm] {
			return nil, fail("InvalidParameterValue.PathMatch", "PathMatch %s is given twice", pm)
		}
		seen[pm] = true
		if !s.functions[ns][fn] {
			return nil, fail("ResourceNotFound.Function", "function %s does not exist in namespace %s", fn, ns)
		}
		// The custom domain doc: a domain points at functions with the function URL enabled.
		hasURL := false
		for _, t := range s.triggers[ns+"/"+fn] {
			if t.Type == "http" && t.Qualifier == str(ep["Qualifier"]) {
				hasURL = true
			}
		}
		if !hasURL {
			return nil, fail("FailedOperation.FunctionURL", "function %s has no Function URL on %s", fn, str(ep["Qualifier"]))
		}
	}
	d := clone(s.domains[name])
	if d == nil {
		d = map[string]any{"Domain": name, "WafConfig": map[string]any{"WafOpen": "CLOSE", "WafInstanceId": ""}}
	}
	for _, f := range []string{"Protocol", "CertConfig", "EndpointsConfig", "WafConfig"} {
		if v, ok := p[f]; ok {
			d[f] = v
		}
	}
	s.domains[name] = d
	return map[string]any{}, nil
}

func (s *Server) apigw(action string, p map[string]any) (map[string]any, *apiError) {
	svc := s.services[str(p["ServiceId"])]
	if svc == nil {
		return nil, fail("ResourceNotFound.InvalidService", "service %s does not exist", str(p["ServiceId"]))
	}
	switch action {
	case "DescribeService":
		return map[string]any{"ServiceId": svc.id, "OuterSubDomain": svc.domain, "Protocol": svc.protocol,
			"AvailableEnvironments": []string{"release"}}, nil
	case "DescribeApisStatus":
		ids := make([]string, 0, len(svc.apis))
		for id := range svc.apis {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		offset, limit := intOf(p["Offset"], 0), intOf(p["Limit"], 20)
		if limit > 100 {
			return nil, fail("InvalidParameterValue.Limit", "Limit is at most 100")
		}
		if offset > len(ids) {
			offset = len(ids)
		}
		var set []map[string]any
		for _, id := range ids[offset:min(offset+limit, len(ids))] {
			a := svc.apis[id]
			rc, _ := a["RequestConfig"].(map[string]any)
			set = append(set, map[string]any{"ApiId": id, "ServiceId": svc.id, "Path": rc["Path"], "Method": rc["Method"]})
		}
		return map[string]any{"Result": map[string]any{"TotalCount": len(ids), "ApiIdStatusSet": set}}, nil
	case "DescribeApi":
		a := svc.apis[str(p["ApiId"])]
		if a == nil {
			return nil, fail("ResourceNotFound.InvalidApi", "API %s does not exist", str(p["ApiId"]))
		}
		return map[string]any{"Result": clone(a)}, nil
	case "ModifyApi":
		id := str(p["ApiId"])
		old := svc.apis[id]
		if old == nil {
			return nil, fail("ResourceNotFound.InvalidApi", "API %s does not exist", id)
		}
		for _, f := range []string{"ServiceType", "RequestConfig"} {
			if p[f] == nil {
				return nil, fail("MissingParameter", "%s is required", f)
			}
		}
		// ModifyApi replaces the definition: what is not sent is gone. Only the
		// fields the gateway owns survive.
		next := clone(p)
		for _, f := range []string{"ServiceId", "ApiId", "CreatedTime", "InternalDomain", "ServiceName", "ServiceDesc"} {
			if v, ok := old[f]; ok {
				next[f] = v
			}
		}
		svc.apis[id] = next
		return map[string]any{}, nil
	case "ReleaseService":
		if str(p["EnvironmentName"]) == "" || str(p["ReleaseDesc"]) == "" {
			return nil, fail("MissingParameter", "EnvironmentName and ReleaseDesc are required")
		}
		if env := str(p["EnvironmentName"]); env != "test" && env != "prepub" && env != "release" {
			return nil, fail("InvalidParameterValue.EnvironmentName", "environment %q", env)
		}
		svc.published = map[string]map[string]any{}
		for id, a := range svc.apis {
			svc.published[id] = clone(a)
		}
		svc.releases++
		return map[string]any{"Result": map[string]any{"ReleaseDesc": str(p["ReleaseDesc"]), "ReleaseVersion": newRequestID()}}, nil
	}
	return nil, fail("InvalidAction", "%s", action)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return def
}

// clone deep-copies a JSON-shaped map.
func clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
