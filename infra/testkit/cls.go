package testkit

import (
	"testing"

	"salon/shared/cls/clstest"
)

// CLSAccount is what a local CLS accepts and the functions ship the audit trail
// with: the run role's credentials (Token "" accepts any session token), the
// topic, and the region ("" leaves it unset).
type CLSAccount struct {
	SecretID, SecretKey, Token, Topic, Region string
}

// StartCLS starts a local CLS that accepts only acct, stopped when the test
// ends, and returns it with the Options.Env hook that points the functions at it.
func StartCLS(t testing.TB, acct CLSAccount) (*clstest.Server, func(map[string]string)) {
	srv := clstest.NewServer(acct.SecretID, acct.SecretKey)
	srv.SetToken(acct.Token)
	srv.SetTopicID(acct.Topic)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, func(env map[string]string) {
		env["CLS_ENDPOINT"] = srv.URL
		env["CLS_TOPIC_ID"] = acct.Topic
		env["TENCENTCLOUD_SECRETID"] = acct.SecretID
		env["TENCENTCLOUD_SECRETKEY"] = acct.SecretKey
		if acct.Token != "" {
			env["TENCENTCLOUD_SESSIONTOKEN"] = acct.Token
		}
		if acct.Region != "" {
			env["TENCENTCLOUD_REGION"] = acct.Region
		}
	}
}
