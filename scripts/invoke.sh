#!/usr/bin/env bash
# Invokes one function once, like `scf local invoke`: builds it for this machine,
# runs it under the local SCF Go runtime (infra/cmd/scflocal) with the timeout,
# memory and environment names serverless.yml gives it, and prints its response.
#
#   scripts/invoke.sh FUNCTION EVENT.json [scflocal invoke flags, e.g. -timeout 30s]
#
# EVENT.json may be - for stdin. The function's environment is this shell's. The
# exit status is 1 when the function failed (the error is printed as JSON).
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3

if [[ $# -lt 2 ]]; then
  echo "usage: $0 FUNCTION EVENT.json [scflocal invoke flags]" >&2
  exit 2
fi
fn="$1"
event="$2"
shift 2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f "$root/functions/$fn/main.go" ]]; then
  known=()
  for dir in "$root"/functions/*/; do
    [[ -f "$dir/main.go" ]] && known+=("$(basename "$dir")")
  done
  echo "invoke.sh: no function $fn; there are: ${known[*]:-none}" >&2
  exit 2
fi
if [[ "$event" != "-" ]]; then
  if [[ ! -f "$event" ]]; then
    echo "invoke.sh: no event file $event" >&2
    exit 2
  fi
  # Resolve against the caller's directory before leaving it.
  event="$(cd "$(dirname "$event")" && pwd)/$(basename "$event")"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/salon-invoke.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -o "$tmp/scflocal" ./infra/cmd/scflocal
go build -o "$tmp/$fn/main" "./functions/$fn"
"$tmp/scflocal" invoke -bin "$tmp/$fn/main" -name "$fn" -event "$event" -serverless "$root/serverless.yml" "$@"
