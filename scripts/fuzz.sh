#!/usr/bin/env bash
# Runs every fuzz target of the repository for longer than the normal test run
# (which only replays their seeds): gateway events, JSON bodies through the
# handlers, session tokens, and WeChat Pay notifications. `go test -fuzz` takes
# one target per package invocation, so they run one at a time.
#
#   scripts/fuzz.sh                     # every target, FUZZTIME=30s each
#   FUZZTIME=5m scripts/fuzz.sh FuzzVerify FuzzParseEvent   # only these targets
#
# A failing input is saved under the package's testdata/fuzz/<Target>/ and
# replayed by every later `go test`; commit it with the fix.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh
ensure_mysql   # some targets drive the handlers against a real database
FUZZTIME="${FUZZTIME:-30s}"

# "package-dir target" for every func FuzzXxx(f *testing.F) in a _test.go file.
mapfile -t targets < <(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' . |
  sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort -u)
if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi

failed=()
ran=0
for t in "${targets[@]}"; do
  dir=${t% *}
  name=${t#* }
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  ran=$((ran + 1))
  echo "== $name in ./$dir for $FUZZTIME" >&2
  if ! go test -run XXX_NO_TESTS -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "./$dir"; then
    failed+=("$name (./$dir)")
  fi
done
if [ "$ran" -eq 0 ]; then
  echo "fuzz: none of the named targets exist: $*" >&2
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: $ran targets passed, $FUZZTIME each" >&2
