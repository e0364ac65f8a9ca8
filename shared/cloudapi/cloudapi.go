// Package cloudapi holds what every caller of Tencent Cloud's API (through
// tencentcloud-sdk-go's common client, TC3-HMAC-SHA256 signed) sets the same way:
// the client profile and how an endpoint setting is read. The CLS audit shipper
// and the deploy's front-door step use it.
package cloudapi

import (
	"strings"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"
)

// Profile is the client profile for endpoint ("host", "https://host" or, for a
// local fake, "http://127.0.0.1:PORT"): POST, TC3 signatures, and no SDK retries
// (they sleep) nor region breaker (it would switch hosts behind the caller's
// back). A call that fails says so at once; the callers run again safely.
func Profile(endpoint string) *profile.ClientProfile {
	cp := profile.NewClientProfile()
	cp.HttpProfile.Scheme, cp.HttpProfile.Endpoint = SplitEndpoint(endpoint)
	cp.HttpProfile.ReqMethod = "POST"
	cp.SignMethod = "TC3-HMAC-SHA256"
	cp.Language = "en-US"
	cp.DisableRegionBreaker = true
	cp.NetworkFailureMaxRetries = 0
	cp.RateLimitExceededMaxRetries = 0
	return cp
}

// SplitEndpoint reads an endpoint setting as the SDK wants it: the scheme in
// upper case (HTTPS unless it says http://) and the bare host, any path dropped.
func SplitEndpoint(endpoint string) (scheme, host string) {
	scheme, host = "HTTPS", strings.TrimSpace(endpoint)
	switch lower := strings.ToLower(host); {
	case strings.HasPrefix(lower, "https://"):
		host = host[len("https://"):]
	case strings.HasPrefix(lower, "http://"):
		scheme, host = "HTTP", host[len("http://"):]
	}
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	return scheme, host
}
