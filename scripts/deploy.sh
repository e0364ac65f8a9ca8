#!/usr/bin/env bash
# Deploys serverless.yml to Tencent Cloud, after a preflight, in this order:
#
#   1. infra/cmd/deploycheck: every ${env:NAME} serverless.yml reads is set in
#      this shell (an unset one would be deployed as the string "undefined"),
#      and every function accepts the settings serverless.yml would give it (the
#      product's own checks). Refused: the names, a non-zero exit, nothing built
#      and nothing sent.
#   2. scripts/package.sh: dist/<name>/main for multi-scf.
#   3. scf deploy: Tencent's serverless-cloud-framework CLI
#      (npm i -g serverless-cloud-framework). Serverless Framework v3 (`sls`)
#      no longer deploys Tencent components.
#
# DEPLOY_DRY_RUN=1 stops after the preflight and prints what it would run.
# SCF_CLI names the deploy command (default: scf). Extra arguments go to it
# (e.g. --debug). The settings: infra/README.md, "Deploying to Tencent Cloud".
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'deploy.sh: %s\n' "$*" >&2; }

command -v go >/dev/null 2>&1 || { say "Go is needed for the preflight and the build"; exit 1; }

say "preflight: checking the settings serverless.yml needs"
go run ./infra/cmd/deploycheck -serverless serverless.yml || { say "refused: fix the settings above; nothing was built or deployed"; exit 1; }

scf_cli="${SCF_CLI:-scf}"
if [[ "${DEPLOY_DRY_RUN:-}" == 1 ]]; then
  say "dry run: would run scripts/package.sh, then: $scf_cli deploy $*"
  exit 0
fi

command -v "$scf_cli" >/dev/null 2>&1 || {
  say "$scf_cli not found: install Tencent's serverless-cloud-framework (npm i -g serverless-cloud-framework), which provides scf"
  exit 1
}

scripts/package.sh
say "running: $scf_cli deploy $*"
exec "$scf_cli" deploy "$@"
