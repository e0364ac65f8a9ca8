// Command cancel is the SCF function behind API Gateway (or a Function URL) for
// its routes in serverless.yml, listed in functions/README.md. Everything it does
// is in package handler (shared/handler); package instance (shared/instance)
// builds its router, and this only starts it.
package main

import (
	"salon/shared/apigw"
	"salon/shared/instance"
)

func main() {
	apigw.Start(instance.CancelRouter(&instance.Env{}).Invoke)
}
