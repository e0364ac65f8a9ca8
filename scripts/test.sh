#!/usr/bin/env bash
# The test command: every test of the product, against a real MySQL/MariaDB (each
# test makes its own fresh database there), with the race detector, and the
# console's browser tests in a headless Chromium (installed when missing and this
# shell may). Extra arguments go to `go test` (e.g. -run TestReserve).
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh
# shellcheck source=scripts/lib/chromium.sh
. scripts/lib/chromium.sh
# shellcheck source=scripts/lib/openapi-types.sh
. scripts/lib/openapi-types.sh
# shellcheck source=scripts/lib/openapi-lint.sh
. scripts/lib/openapi-lint.sh
# shellcheck source=scripts/lib/vulncheck.sh
. scripts/lib/vulncheck.sh
ensure_mysql
# The browser tests run, never skip: without a Chromium they fail and say why.
ensure_chromium || echo "chromium: the console's browser tests will fail" >&2
export CONSOLE_BROWSER=required
go vet ./...
# staticcheck (pinned; every check of its default set): no finding in the product or the
# benchmark module.
STATICCHECK_VERSION=v0.8.2
go run honnef.co/go/tools/cmd/staticcheck@"$STATICCHECK_VERSION" ./...
# The TypeScript types committed beside the OpenAPI document are the document's,
# the document passes Redocly's recommended rules, and the mini-program's
# wx.request adapter type-checks against those types.
check_openapi_types
check_openapi_lint
# The benchmark tool is its own module (so the product requires none of its
# dependencies); build, vet and test it here so it cannot rot unnoticed: its
# tests hold the forms to what the product writes, the latency proxy to its
# delay, and the targets to what they read.
(cd infra/bench && go build ./... && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@"$STATICCHECK_VERSION" ./... && go test -race -count=1 ./...)
# No vulnerability the code can reach, by a database built from the module proxy alone.
vulncheck
go test -race -count=1 -timeout 20m "$@" ./...
