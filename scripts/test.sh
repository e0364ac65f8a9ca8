#!/usr/bin/env bash
# The test command: every test of the product, against a real MySQL/MariaDB (each
# test makes its own fresh database there), with the race detector. Extra arguments
# go to `go test` (e.g. -run TestReserve).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh
ensure_mysql
go vet ./...
go test -race -count=1 -timeout 20m "$@" ./...
