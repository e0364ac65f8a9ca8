# shellcheck shell=bash
# check_openapi_lint lints shared/openapi/openapi.yaml with the pinned Redocly
# CLI (its recommended rules, functions/openapi/redocly.yaml; the problems passed
# over on purpose are in functions/openapi/.redocly.lint-ignore.yaml) and fails
# on any error; warnings are shown. Then it type-checks the mini-program's
# wx.request adapter (functions/openapi/wxrequest.ts, the guide's snippet) and
# its checks against the committed openapi.d.ts and the official mini-program
# typings (miniprogram-api-typings, whose wx.request has no PATCH) with the
# pinned TypeScript 5. The tools and the typings come from
# functions/openapi/package-lock.json (openapi_npm_ci, in
# scripts/lib/openapi-types.sh, which test.sh sources first).
check_openapi_lint() {
  local dir=functions/openapi doc=shared/openapi/openapi.yaml out
  openapi_npm_ci || return 1
  local rc=0
  out="$(cd "$dir" && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
    ./node_modules/.bin/redocly lint "../../$doc" --format=stylish 2>&1)" || rc=$?
  # Drop the box Redocly draws about Node's support, keep the problems.
  out="$(printf '%s\n' "$out" | grep -v '[║╔╚]')"
  if [ "$rc" -ne 0 ]; then
    printf '%s\n' "$out" >&2
    echo "$doc: Redocly's recommended rules report errors (run: cd $dir && npm ci && npm run lint)" >&2
    return 1
  fi
  if printf '%s\n' "$out" | grep -qi 'warning'; then
    printf '%s\n' "$out" >&2
  fi
  if ! (cd "$dir" && ./node_modules/.bin/tsc --noEmit -p tsconfig.json >&2); then
    echo "$dir/wxrequest.ts and its checks do not type-check against $dir/openapi.d.ts and the official mini-program typings (run: cd $dir && npm ci && npm run typecheck)" >&2
    return 1
  fi
}
