#!/usr/bin/env bash
# The long profile of the model-based fault test (infra/stress): many customers and
# the salon acting at once through the real handlers while database connections
# are killed, the database drops away, WeChat Pay fails, hangs and answers twice,
# notifications arrive late and out of order, and CLS is down; then a quiet phase
# and the checks of seats, money and the audit trail. Each seed is one schedule.
#
#   scripts/stress.sh                         # STRESS_SEEDS=5 seeds x STRESS_OPS=2000 ops, 60 customers
#   STRESS_SEED=1234 STRESS_SEEDS=1 scripts/stress.sh   # replay one seed
#   STRESS_RACE=0 scripts/stress.sh           # without the race detector (about 3x faster)
#
# Every run appends one summary line per seed to ${STRESS_REPORT:-${TMPDIR:-/tmp}/salon-stress-report.txt}.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh
ensure_mysql
export STRESS_LONG=1
export STRESS_SEEDS="${STRESS_SEEDS:-5}"
export STRESS_OPS="${STRESS_OPS:-2000}"
export STRESS_CUSTOMERS="${STRESS_CUSTOMERS:-60}"
export STRESS_REPORT="${STRESS_REPORT:-${TMPDIR:-/tmp}/salon-stress-report.txt}"
race=(-race)
if [[ "${STRESS_RACE:-1}" == "0" ]]; then race=(); fi
echo "stress: ${STRESS_SEEDS} seeds x ${STRESS_OPS} ops, ${STRESS_CUSTOMERS} customers; report in ${STRESS_REPORT}" >&2
go test "${race[@]}" -count=1 -timeout "${STRESS_TIMEOUT:-90m}" -run '^TestStress$' -v "$@" ./infra/stress
