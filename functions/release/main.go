// Command release is the SCF function on the every-minute timer: it releases
// expired unpaid holds, retries pending refunds, checks the slots for drift and
// ships the audit trail to CLS, and answers the timer with its summary.
package main

import (
	"salon/shared/apigw"
	"salon/shared/handler"
	"salon/shared/instance"
)

func main() {
	apigw.Start(handler.Release(&instance.Env{}))
}
