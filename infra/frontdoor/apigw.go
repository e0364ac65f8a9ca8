package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"salon/infra/localgw"
)

// ReleaseEnvironment is the API Gateway environment serverless.yml publishes to.
// URLs on the service's default domain carry it as their first path segment.
const ReleaseEnvironment = "release"

// modifyAPIFields are the ModifyApi parameters that DescribeApi returns under the
// same name. ModifyApi replaces an API's whole definition, so every one of them
// is copied from what the API has now; only ServiceScfIsIntegratedResponse is
// changed.
var modifyAPIFields = []string{
	"ServiceId", "ApiId", "ServiceType", "RequestConfig", "ApiName", "ApiDesc", "ApiType",
	"AuthType", "AuthRequired", "ServiceTimeout", "Protocol", "EnableCORS", "ConstantParameters",
	"RequestParameters", "ApiBusinessType", "ServiceMockReturnMessage", "ServiceConfig",
	"ServiceParameters", "ServiceScfFunctionName", "ServiceScfFunctionNamespace",
	"ServiceScfFunctionQualifier", "ServiceScfIsIntegratedResponse", "ResponseType",
	"ResponseSuccessExample", "ResponseFailExample", "ResponseErrorCodes", "AuthRelationApiId",
	"OauthConfig", "IsBase64Encoded", "IsBase64Trigger", "Base64EncodedTriggerRules",
	"TargetServicesLoadBalanceConf", "TargetServicesHealthCheckConf", "TargetServices",
	"ServiceTsfLoadBalanceConf", "ServiceTsfHealthCheckConf", "MicroServices",
}

// GatewayAPI is one API of the service, as published.
type GatewayAPI struct {
	ID       string
	Method   string
	Path     string
	Function string // the SCF function behind it
	URL      string // on the default domain, with the /release prefix
}

// GatewayResult is what EnsureIntegratedResponse found or did.
type GatewayResult struct {
	Domain    string // the service's default (outer) domain
	APIs      []GatewayAPI
	Switched  []string // ids of the APIs whose integrated response was switched on
	Published bool
	Missing   []string // routes of serverless.yml that the service has no API for
	Changes   []string
}

// EnsureIntegratedResponse switches integrated response ("集成响应") on for every
// SCF-backed API of the API Gateway service and publishes the service to release
// when it changed anything (or always, with forceRelease). Without integrated
// response the gateway answers 200 with the function's JSON as the body, so
// every error looks like a success; multi-scf turns it off on every deploy.
// spec, when given, is used to report routes the service lacks.
func EnsureIntegratedResponse(ctx context.Context, c *Cloud, serviceID string, spec *localgw.Spec, forceRelease bool) (*GatewayResult, error) {
	if serviceID == "" {
		return nil, errors.New("frontdoor: the API Gateway service id is required (service-xxxxxxxx)")
	}
	var svc struct {
		OuterSubDomain string `json:"OuterSubDomain"`
		Protocol       string `json:"Protocol"`
	}
	if err := c.call(ctx, ServiceAPIGateway, "DescribeService", map[string]any{"ServiceId": serviceID}, &svc); err != nil {
		return nil, err
	}
	res := &GatewayResult{Domain: svc.OuterSubDomain}
	scheme := "https"
	if p := strings.ToLower(svc.Protocol); p == "http" {
		scheme = "http"
	}

	var ids []string
	for offset := 0; ; {
		var page struct {
			Result struct {
				TotalCount     int `json:"TotalCount"`
				ApiIdStatusSet []struct {
					ApiID string `json:"ApiId"`
				} `json:"ApiIdStatusSet"`
			} `json:"Result"`
		}
		if err := c.call(ctx, ServiceAPIGateway, "DescribeApisStatus", map[string]any{
			"ServiceId": serviceID, "Offset": offset, "Limit": 100,
		}, &page); err != nil {
			return nil, err
		}
		for _, a := range page.Result.ApiIdStatusSet {
			ids = append(ids, a.ApiID)
		}
		offset += len(page.Result.ApiIdStatusSet)
		if len(page.Result.ApiIdStatusSet) == 0 || offset >= page.Result.TotalCount {
			break
		}
	}

	for _, id := range ids {
		var got struct {
			Result map[string]any `json:"Result"`
		}
		if err := c.call(ctx, ServiceAPIGateway, "DescribeApi", map[string]any{"ServiceId": serviceID, "ApiId": id}, &got); err != nil {
			return nil, err
		}
		info := got.Result
		api := GatewayAPI{ID: id, Function: str(info["ServiceScfFunctionName"])}
		if rc, ok := info["RequestConfig"].(map[string]any); ok {
			api.Method, api.Path = strings.ToUpper(str(rc["Method"])), str(rc["Path"])
		}
		api.URL = scheme + "://" + svc.OuterSubDomain + "/" + ReleaseEnvironment + api.Path
		res.APIs = append(res.APIs, api)

		if str(info["ServiceType"]) != "SCF" || info["ServiceScfIsIntegratedResponse"] == true {
			continue
		}
		params := map[string]any{}
		for _, f := range modifyAPIFields {
			if v, ok := info[f]; ok && v != nil {
				params[f] = v
			}
		}
		params["ServiceId"], params["ApiId"] = serviceID, id
		params["ServiceScfIsIntegratedResponse"] = true
		if err := c.call(ctx, ServiceAPIGateway, "ModifyApi", params, nil); err != nil {
			return nil, fmt.Errorf("API %s %s %s: %w", id, api.Method, api.Path, err)
		}
		res.Switched = append(res.Switched, id)
		res.Changes = append(res.Changes, fmt.Sprintf("ModifyApi %s %s %s: integrated response on", id, api.Method, api.Path))
	}

	if len(res.Switched) > 0 || forceRelease {
		if err := c.call(ctx, ServiceAPIGateway, "ReleaseService", map[string]any{
			"ServiceId": serviceID, "EnvironmentName": ReleaseEnvironment,
			"ReleaseDesc": "frontdoor: integrated response on for every API",
		}, nil); err != nil {
			return nil, fmt.Errorf("publish: %w (run again with -release once the cause is fixed)", err)
		}
		res.Published = true
		res.Changes = append(res.Changes, fmt.Sprintf("ReleaseService %s to %s", serviceID, ReleaseEnvironment))
	}

	if spec != nil {
		have := map[string]bool{}
		for _, a := range res.APIs {
			have[a.Method+" "+a.Path] = true
		}
		for _, r := range spec.Routes {
			if !have[r.Method+" "+r.Path] && !have["ANY "+r.Path] {
				res.Missing = append(res.Missing, r.Method+" "+r.Path)
			}
		}
	}
	sort.Slice(res.APIs, func(i, j int) bool {
		if res.APIs[i].Path != res.APIs[j].Path {
			return res.APIs[i].Path < res.APIs[j].Path
		}
		return res.APIs[i].Method < res.APIs[j].Method
	})
	return res, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
