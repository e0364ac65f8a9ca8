package cloudapi

import "testing"

func TestSplitEndpoint(t *testing.T) {
	for in, want := range map[string][2]string{
		"cls.tencentcloudapi.com":          {"HTTPS", "cls.tencentcloudapi.com"},
		"https://cls.tencentcloudapi.com/": {"HTTPS", "cls.tencentcloudapi.com"},
		"HTTP://127.0.0.1:9000/x":          {"HTTP", "127.0.0.1:9000"},
		" http://127.0.0.1:9000 ":          {"HTTP", "127.0.0.1:9000"},
	} {
		if scheme, host := SplitEndpoint(in); scheme != want[0] || host != want[1] {
			t.Errorf("%q: %s %s, want %s %s", in, scheme, host, want[0], want[1])
		}
	}
	cp := Profile("http://127.0.0.1:9000")
	if cp.HttpProfile.Scheme != "HTTP" || cp.HttpProfile.Endpoint != "127.0.0.1:9000" || cp.SignMethod != "TC3-HMAC-SHA256" ||
		cp.NetworkFailureMaxRetries != 0 || !cp.DisableRegionBreaker {
		t.Fatalf("profile %+v", cp)
	}
}
