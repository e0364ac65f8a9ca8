# shellcheck shell=bash
# check_openapi_types regenerates the TypeScript types of the API's shapes
# from functions/openapi/openapi.yaml with the pinned openapi-typescript
# (installed by npm ci from functions/openapi/package-lock.json) and fails when
# the committed functions/openapi/openapi.d.ts differs: the types a mini-program
# team copies must be the document's.
check_openapi_types() {
  local dir=functions/openapi out
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  out="$(mktemp --suffix=.d.ts)"
  (cd "$dir" && ./node_modules/.bin/openapi-typescript openapi.yaml --output "$out" >/dev/null 2>&1) || {
    echo "openapi-typescript failed on $dir/openapi.yaml" >&2
    rm -f "$out"
    return 1
  }
  if ! cmp -s "$out" "$dir/openapi.d.ts"; then
    diff -u "$dir/openapi.d.ts" "$out" | head -40 >&2 || true
    echo "$dir/openapi.d.ts is not what openapi.yaml generates: run (cd $dir && npm ci && npm run types) and commit it" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
}
