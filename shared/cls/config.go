package cls

import (
	"strings"
)

// DefaultRegion is used when TENCENTCLOUD_REGION is unset (it is always set inside SCF).
const DefaultRegion = "ap-guangzhou"

// Config says where audit records go.
type Config struct {
	// Endpoint is the cloud API host, e.g. "cls.tencentcloudapi.com". A bare host or an
	// "https://" prefix means HTTPS with normal certificate checks; "http://" means plain
	// HTTP and is meant for tests and local runs only.
	Endpoint string
	TopicID  string
	Region   string
}

// ConfigFromEnv reads CLS_ENDPOINT, CLS_TOPIC_ID and TENCENTCLOUD_REGION through
// getenv (os.Getenv when nil). ok is false when the endpoint or the topic is unset:
// the caller then keeps the records in MySQL and says so once in its log.
func ConfigFromEnv(getenv func(string) string) (cfg Config, ok bool) {
	if getenv == nil {
		getenv = osGetenv
	}
	cfg = Config{
		Endpoint: strings.TrimSpace(getenv("CLS_ENDPOINT")),
		TopicID:  strings.TrimSpace(getenv("CLS_TOPIC_ID")),
		Region:   strings.TrimSpace(getenv("TENCENTCLOUD_REGION")),
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	return cfg, cfg.Endpoint != "" && cfg.TopicID != ""
}
