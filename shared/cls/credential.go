package cls

import (
	"fmt"
	"os"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
)

// The variables SCF sets from the function's run role. They hold temporary keys that
// SCF rotates, so they are read on every request, never cached.
const (
	EnvSecretID     = "TENCENTCLOUD_SECRETID"
	EnvSecretKey    = "TENCENTCLOUD_SECRETKEY"
	EnvSessionToken = "TENCENTCLOUD_SESSIONTOKEN"
)

func osGetenv(k string) string { return os.Getenv(k) }

// EnvCredential is a common.CredentialIface that reads SCF's credential variables
// through getenv on every call. The SDK's own providers do not fit: DefaultEnvProvider
// reads other names and no token, and DefaultProviderChain ends in a metadata call
// without a timeout.
type EnvCredential struct {
	getenv func(string) string
}

var _ common.CredentialIface = (*EnvCredential)(nil)

// NewEnvCredential returns a credential that reads through getenv (os.Getenv when nil).
func NewEnvCredential(getenv func(string) string) *EnvCredential {
	if getenv == nil {
		getenv = osGetenv
	}
	return &EnvCredential{getenv: getenv}
}

func (c *EnvCredential) GetSecretId() string  { return c.getenv(EnvSecretID) }
func (c *EnvCredential) GetSecretKey() string { return c.getenv(EnvSecretKey) }
func (c *EnvCredential) GetToken() string     { return c.getenv(EnvSessionToken) }

// GetCredential returns id, key and token read together; the SDK calls it once per
// request while signing.
func (c *EnvCredential) GetCredential() (string, string, string) {
	return c.GetSecretId(), c.GetSecretKey(), c.GetToken()
}

// Check reports a missing secret id or key by the variable's name. The SDK cannot
// report it (CredentialIface has no error), so callers check before sending. The token
// is optional: permanent keys used locally have none.
func (c *EnvCredential) Check() error {
	if c.GetSecretId() == "" {
		return fmt.Errorf("cls: %s is not set (configure a run role for the function)", EnvSecretID)
	}
	if c.GetSecretKey() == "" {
		return fmt.Errorf("cls: %s is not set (configure a run role for the function)", EnvSecretKey)
	}
	return nil
}
