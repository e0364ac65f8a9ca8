// Command cancel is the SCF function behind API Gateway (or a Function URL) for
// its routes in serverless.yml, listed in functions/README.md. Everything it does
// is in package handler (shared/handler); this only starts it.
package main

import (
	"salon/shared/apigw"
	"salon/shared/handler"
	"salon/shared/instance"
)

func main() {
	apigw.Start(handler.CancelRouter(&instance.Env{}).Invoke)
}
