// Package frontdoor is the deploy step that gives the functions of serverless.yml
// a front door on Tencent Cloud as it is today, through the cloud API 3.0 and
// tencentcloud-sdk-go's common client (TC3-HMAC-SHA256 signatures):
//
//   - Function URLs (SCF's "http" trigger), one per function with HTTP routes, and
//     optionally one custom domain whose path rules send each route of
//     serverless.yml to its function (EnsureFunctionURLs). API Gateway triggers
//     are retired for new users; this is their replacement.
//   - For salons still on API Gateway: integrated response switched on for every
//     API of the service, then the service published to release
//     (EnsureIntegratedResponse). multi-scf switches it off on every deploy.
//
// Every step reads before it writes, so running it again changes nothing.
package frontdoor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"salon/shared/cloudapi"
	"strings"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tcerr "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/errors"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"
)

// The cloud API services and versions this package calls.
const (
	ServiceSCF        = "scf"
	VersionSCF        = "2018-04-16"
	ServiceAPIGateway = "apigateway"
	VersionAPIGateway = "2018-08-08"
)

// Credentials are the deployer's API keys. The deploy runs on a workstation or in
// CI, not inside SCF, so these are the account's (or a sub-account's) keys.
type Credentials struct {
	SecretID, SecretKey, Token string
}

// CredentialsFromEnv reads TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY /
// TENCENTCLOUD_SESSION_TOKEN (the SDK's names), falling back to the
// TENCENT_SECRET_ID / TENCENT_SECRET_KEY / TENCENT_TOKEN that the Serverless
// Framework's .env uses, so one .env serves both deploy steps.
func CredentialsFromEnv(getenv func(string) string) (Credentials, error) {
	first := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return v
			}
		}
		return ""
	}
	c := Credentials{
		SecretID:  first("TENCENTCLOUD_SECRET_ID", "TENCENT_SECRET_ID"),
		SecretKey: first("TENCENTCLOUD_SECRET_KEY", "TENCENT_SECRET_KEY"),
		Token:     first("TENCENTCLOUD_SESSION_TOKEN", "TENCENT_TOKEN"),
	}
	if c.SecretID == "" || c.SecretKey == "" {
		return Credentials{}, errors.New("set TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY (or TENCENT_SECRET_ID and TENCENT_SECRET_KEY) to the deployer's API keys")
	}
	return c, nil
}

// Cloud calls the SCF and API Gateway cloud APIs of one region.
type Cloud struct {
	scf, apigw *common.Client
	// Timeout bounds each call.
	Timeout time.Duration
}

// NewCloud returns a client for region. endpoint is empty for Tencent's hosts
// (scf.tencentcloudapi.com, apigateway.tencentcloudapi.com); tests pass a local
// "http://127.0.0.1:PORT" that serves both.
func NewCloud(cred Credentials, region, endpoint string) *Cloud {
	mk := func(service string) *common.Client {
		host := endpoint
		if host == "" {
			host = service + ".tencentcloudapi.com"
		}
		cp := cloudapi.Profile(host)
		return common.NewCommonClient(common.NewTokenCredential(cred.SecretID, cred.SecretKey, cred.Token), region, cp)
	}
	return &Cloud{scf: mk(ServiceSCF), apigw: mk(ServiceAPIGateway), Timeout: 30 * time.Second}
}

// APIError is an error answer of the cloud API.
type APIError = tcerr.TencentCloudSDKError

// IsNotFound reports whether err is the cloud API saying the resource does not
// exist (codes ResourceNotFound and ResourceNotFound.*).
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && (e.Code == "ResourceNotFound" || strings.HasPrefix(e.Code, "ResourceNotFound."))
}

func (c *Cloud) call(ctx context.Context, service, action string, params map[string]any, out any) error {
	client, version := c.scf, VersionSCF
	if service == ServiceAPIGateway {
		client, version = c.apigw, VersionAPIGateway
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req := tchttp.NewCommonRequest(service, version, action)
	req.SetContext(ctx)
	if params == nil {
		params = map[string]any{}
	}
	if err := req.SetActionParameters(params); err != nil {
		return err
	}
	resp := tchttp.NewCommonResponse()
	if err := client.Send(req, resp); err != nil {
		return fmt.Errorf("%s %s: %w", service, action, err)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Response json.RawMessage `json:"Response"`
	}
	if err := json.Unmarshal(resp.GetBody(), &env); err != nil {
		return fmt.Errorf("%s %s: answer: %w", service, action, err)
	}
	if err := json.Unmarshal(env.Response, out); err != nil {
		return fmt.Errorf("%s %s: answer: %w", service, action, err)
	}
	return nil
}
