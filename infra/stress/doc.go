// Package stress holds the model-based fault test of the whole product: many
// simulated customers and the salon act at once through the real function
// handlers, against a real database behind a fault-injecting proxy and the WeChat
// Pay and CLS simulators, while connections are killed and dependencies fail. A
// reference model of what must be true about seats, money and the audit trail is
// checked at random points and after a final quiet phase; money is also counted
// from the ledger alone (checkLedger: per booking, deposits = refunds + kept +
// the deposit still held by a sold seat or a refund not yet succeeded). The package has no
// product code; see stress_test.go and scripts/stress.sh.
package stress
