# shellcheck shell=bash
# openapi_npm_ci installs functions/openapi's pinned tools (openapi-typescript,
# Redocly CLI, TypeScript, and the official mini-program typings
# miniprogram-api-typings that the wx.request adapter is checked against)
# exactly as package-lock.json names them, once per shell: on a fresh machine
# too, from the npm registry.
openapi_npm_ci() {
  [ -n "${OPENAPI_NPM_CI_DONE:-}" ] && return 0
  (cd functions/openapi && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || {
    echo "npm ci failed in functions/openapi" >&2
    return 1
  }
  OPENAPI_NPM_CI_DONE=1
}

# check_openapi_types regenerates the TypeScript types of the API's shapes
# from shared/openapi/openapi.yaml with the pinned openapi-typescript
# (installed by npm ci from functions/openapi/package-lock.json) and fails when
# the committed functions/openapi/openapi.d.ts differs: the types a mini-program
# team copies must be the document's.
check_openapi_types() {
  local dir=functions/openapi doc=shared/openapi/openapi.yaml out
  openapi_npm_ci || return 1
  out="$(mktemp --suffix=.d.ts)"
  (cd "$dir" && ./node_modules/.bin/openapi-typescript "../../$doc" --output "$out" >/dev/null 2>&1) || {
    echo "openapi-typescript failed on $doc" >&2
    rm -f "$out"
    return 1
  }
  if ! cmp -s "$out" "$dir/openapi.d.ts"; then
    diff -u "$dir/openapi.d.ts" "$out" | head -40 >&2 || true
    echo "$dir/openapi.d.ts is not what $doc generates: run (cd $dir && npm ci && npm run types) and commit it" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
}
