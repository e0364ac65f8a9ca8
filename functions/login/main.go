// Command login is the SCF function behind API Gateway for its routes in
// serverless.yml. Everything it does is in package api; this only starts it.
package main

import (
	"github.com/tencentyun/scf-go-lib/cloudfunction"

	"salon/shared/handler"
	"salon/shared/wire"
)

func main() {
	cloudfunction.Start(handler.LoginRouter(&wire.Env{}).Invoke)
}
