#!/usr/bin/env bash
# The whole product on this machine, as SCF runs it, in the foreground until Ctrl-C:
#
#   MySQL        the one at MYSQL_DSN; if that is TCP on this machine and down, a
#                private MariaDB under .local/mariadb (scripts/lib/mysql.sh). Never
#                started for a socket DSN or another host.
#   migrations   infra/cmd/migrate, and a demo schedule (the next 7 days,
#                10:00-21:00) and a demo menu (three services, three
#                technicians working those days and hours) unless DEMO_SCHEDULE=0
#   functions    every functions/<name> built like package.sh builds it for SCF
#                (CGO_ENABLED=0 GOOS=linux GOARCH=amd64, binary `main`) into
#                .local/bin/functions/<name>/main
#   simulators   WeChat's server API (login, access tokens, subscribe messages, with
#                example WX_TMPL_* templates where unset) where WX_API_BASE is unset,
#                WeChat Pay where WECHATPAY_API_BASE is unset; keys generated at each start
#   gateway      infra/cmd/scflocal: API Gateway on 127.0.0.1:${PORT:-8080} with the
#                routes of serverless.yml, and the release timer every RELEASE_EVERY
#
# Every setting of the configuration table in functions/README.md is read from the environment and
# passed to the functions (each gets only the names serverless.yml declares for it),
# with SALON_DEV=1. Also: PORT (8080), RELEASE_EVERY (1m), DEMO_SCHEDULE (1),
# WXPAYSIM_ADDR (127.0.0.1:8091), WXLOGINSIM_ADDR (127.0.0.1:8092).
#
# Ctrl-C stops everything this script started. A private MariaDB it started (or
# found) keeps running, so the next start is quick; the script prints how to stop it.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'dev.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# --- Go -------------------------------------------------------------------------
command -v go >/dev/null 2>&1 ||
  die "Go is not installed. Install Go $(sed -n 's/^go //p' go.mod) or newer (https://go.dev/dl/) and run again."
say "$(go version)"

PORT="${PORT:-8080}"
RELEASE_EVERY="${RELEASE_EVERY:-1m}"
WXPAYSIM_ADDR="${WXPAYSIM_ADDR:-127.0.0.1:8091}"
WXLOGINSIM_ADDR="${WXLOGINSIM_ADDR:-127.0.0.1:8092}"
export RELEASE_EVERY
# Everything dev.sh starts listens on 127.0.0.1 only: the gateway, the
# simulators, the private MariaDB, and the function processes (scfhost sets
# apigw.ListenHostEnv for them). Published dev secrets must not be reachable
# from the network.
for addr in "$WXPAYSIM_ADDR" "$WXLOGINSIM_ADDR"; do
  [[ "${addr%:*}" == 127.0.0.1 ]] || die "$addr: dev.sh listens on 127.0.0.1 only; give 127.0.0.1:<port>"
done
# Local development: the functions accept the DEV-ONLY secrets below (and a short
# ADMIN_TOKEN), which they refuse anywhere SALON_DEV is not 1. serverless.yml
# never passes it, so a deployed function is never in this mode.
export SALON_DEV=1

state="$root/.local/dev"
bin="$root/.local/bin"
mkdir -p "$state" "$bin"

# --- everything started from here on is stopped on exit ----------------------------
pids=()
cleanup() {
  local code=$?
  trap - EXIT INT TERM
  if [[ ${#pids[@]} -gt 0 ]]; then
    say "stopping (${pids[*]})"
    for pid in "${pids[@]}"; do
      kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
      wait "$pid" 2>/dev/null || true
    done
  fi
  rm -f "$state/wxpay.env" "$state/wxlogin.env"
  if [[ -n "${private_mysql:-}" ]]; then
    say "the private MariaDB keeps running for the next start; stop it with: kill \$(cat $root/.local/mariadb/mysqld.pid)"
  fi
  say "stopped"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- MySQL ----------------------------------------------------------------------
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh # defaults MYSQL_DSN to root@tcp(127.0.0.1:3306)/salon
# Only a TCP DSN on this machine may be started here; a socket DSN or another host
# is used as it is, and the migration step below says clearly if it does not answer.
hp="$(dsn_host_port "$MYSQL_DSN")"
mysql_local=""
case "${hp% *}" in
127.0.0.1 | localhost | ::1 | "[::1]") mysql_local=1 ;;
esac
if [[ -n "$mysql_local" ]]; then
  orig_dsn="$MYSQL_DSN"
  ensure_mysql ||
    die "no MySQL. Install MariaDB 10.11 or MySQL 8.0 (Debian/Ubuntu: sudo apt-get install mariadb-server), or set MYSQL_DSN to one that runs."
  if [[ "$MYSQL_DSN" != "$orig_dsn" ]]; then private_mysql=1; fi
else
  say "MYSQL_DSN is ${hp:+not on this machine}${hp:-a socket}: using it as it is (dev.sh starts MySQL only for TCP on this machine)"
fi
export MYSQL_DSN

# --- build ----------------------------------------------------------------------
say "building the tools"
go build -o "$bin/tools/" ./infra/cmd/scflocal ./infra/cmd/migrate ./infra/cmd/wxpaysim ./infra/cmd/wxloginsim

names=()
for dir in functions/*/; do
  name="$(basename "$dir")"
  if [[ -f "functions/$name/main.go" ]]; then names+=("$name"); fi # functions/openapi holds the API document's TypeScript tools, not a function
done
[[ ${#names[@]} -gt 0 ]] || die "no functions under functions/"
# SCF runs linux/amd64; elsewhere (a Mac) the same build could not run here, so
# build for this machine instead.
fgoos=linux fgoarch=amd64
if [[ "$(go env GOOS)/$(go env GOARCH)" != linux/amd64 ]]; then
  fgoos="$(go env GOOS)" fgoarch="$(go env GOARCH)"
  say "this machine is $fgoos/$fgoarch: building the functions for it (scripts/package.sh builds linux/amd64 for SCF)"
fi
say "building ${names[*]} (CGO_ENABLED=0 GOOS=$fgoos GOARCH=$fgoarch)"
rm -rf "$bin/functions" "$bin/.functions"
mkdir -p "$bin/.functions"
pkgs=()
for name in "${names[@]}"; do pkgs+=("./functions/$name"); done
CGO_ENABLED=0 GOOS="$fgoos" GOARCH="$fgoarch" go build -trimpath -o "$bin/.functions/" "${pkgs[@]}"
for name in "${names[@]}"; do
  mkdir -p "$bin/functions/$name"
  mv "$bin/.functions/$name" "$bin/functions/$name/main"
done
rmdir "$bin/.functions"

# --- migrations, the demo schedule and menu ----------------------------------------
demo=""
if [[ "${DEMO_SCHEDULE:-1}" != 0 ]]; then demo=-demo; fi
"$bin/tools/migrate" $demo >&2 ||
  die "migrations failed against MYSQL_DSN=$MYSQL_DSN (is that server up, and may this user create the database?)"

# --- ports ----------------------------------------------------------------------
port_free() { # host:port
  ! tcp_answers "${1%:*}" "${1##*:}"
}
port_free "127.0.0.1:$PORT" || die "127.0.0.1:$PORT is in use (another dev.sh?); set PORT to another port"

# wait_file FILE PID: the simulators write their env file once their port is bound.
wait_file() {
  for _ in $(seq 1 200); do
    [[ -s "$1" ]] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# --- WeChat login simulator --------------------------------------------------------
login_sim=""
if [[ -z "${WX_API_BASE:-}" ]]; then
  port_free "$WXLOGINSIM_ADDR" || die "$WXLOGINSIM_ADDR is in use; set WXLOGINSIM_ADDR to another address"
  : "${WX_APPID:=wx0123456789abcdef}"
  : "${WX_APPSECRET:=dev-appsecret-local-only}"
  rm -f "$state/wxlogin.env"
  # The simulator keeps any WX_TMPL_* set here and fills the unset ones with example
  # templates whose ids it accepts; its env file hands them to the functions.
  "$bin/tools/wxloginsim" -addr "$WXLOGINSIM_ADDR" -appid "$WX_APPID" -secret "$WX_APPSECRET" -env-out "$state/wxlogin.env" &
  pids+=($!)
  wait_file "$state/wxlogin.env" "$!" || die "the WeChat login simulator did not start"
  set -a
  # shellcheck source=/dev/null
  . "$state/wxlogin.env"
  set +a
  login_sim="http://$WXLOGINSIM_ADDR"
else
  say "WX_API_BASE=$WX_API_BASE: login goes there (no login simulator)"
fi

# --- WeChat Pay simulator ----------------------------------------------------------
pay_sim=""
if [[ -z "${WECHATPAY_API_BASE:-}" ]]; then
  port_free "$WXPAYSIM_ADDR" || die "$WXPAYSIM_ADDR is in use; set WXPAYSIM_ADDR to another address"
  rm -f "$state/wxpay.env"
  # The sim makes the merchant and platform keys: the WECHATPAY_* it writes replace
  # any in this shell, since only the sim's keys verify against the sim.
  "$bin/tools/wxpaysim" -addr "$WXPAYSIM_ADDR" -appid "${WX_APPID:-wx0123456789abcdef}" \
    -mchid "${WECHATPAY_MCHID:-1900000109}" \
    -notify-url "${WECHATPAY_NOTIFY_URL:-http://127.0.0.1:$PORT/pay/notify}" \
    -refund-notify-url "${WECHATPAY_REFUND_NOTIFY_URL:-http://127.0.0.1:$PORT/pay/refund-notify}" \
    -env-out "$state/wxpay.env" &
  pids+=($!)
  wait_file "$state/wxpay.env" "$!" || die "the WeChat Pay simulator did not start"
  set -a
  # shellcheck source=/dev/null
  . "$state/wxpay.env"
  set +a
  pay_sim="http://$WXPAYSIM_ADDR"
else
  say "WECHATPAY_API_BASE=$WECHATPAY_API_BASE: payments go there (no WeChat Pay simulator)"
fi

# --- development secrets -------------------------------------------------------------
if [[ -z "${SESSION_SECRET:-}" ]]; then
  export SESSION_SECRET="dev-only-session-secret-never-use-in-production"
  say "SESSION_SECRET is unset: using a DEV-ONLY value ($SESSION_SECRET)"
fi
if [[ -z "${ADMIN_TOKEN:-}" ]]; then
  export ADMIN_TOKEN="dev-admin-token"
  say "ADMIN_TOKEN is unset: using a DEV-ONLY value ($ADMIN_TOKEN)"
fi

# --- the gateway and the timer ------------------------------------------------------
"$bin/tools/scflocal" serve -serverless "$root/serverless.yml" -bin-dir "$bin/functions" -addr "127.0.0.1:$PORT" &
gw_pid=$!
pids+=("$gw_pid")
base="http://127.0.0.1:$PORT"
up=""
for _ in $(seq 1 300); do
  kill -0 "$gw_pid" 2>/dev/null || die "the local gateway exited (see above)"
  if curl -fsS -o /dev/null --max-time 5 "$base/healthz" 2>/dev/null; then
    up=1
    break
  fi
  sleep 0.1
done
[[ -n "$up" ]] || die "$base/healthz did not answer 200 within 30s (see the function logs above)"

login_at="${login_sim:+simulator $login_sim (any code logs in; the same code is the same customer)}"
messages_at="${login_sim:+simulator: curl -s $login_sim/sim/messages}"
pay_at="${pay_sim:+simulator $pay_sim (POST /sim/pay, /sim/refund; GET /sim/orders)}"
tz="${SHOP_TZ:-Asia/Shanghai}"
tomorrow="$(TZ="$tz" date -d '+1 day' +%F 2>/dev/null || TZ="$tz" date -v+1d +%F)"
week_end="$(TZ="$tz" date -d '+7 day' +%F 2>/dev/null || TZ="$tz" date -v+7d +%F)"

cat >&2 <<EOF

dev.sh: ready: $base (API Gateway, routes of serverless.yml; release timer every $RELEASE_EVERY)
  MySQL             $MYSQL_DSN
  login             ${login_at:-$WX_API_BASE}
  messages          ${messages_at:-WeChat at $WX_API_BASE (templates from WX_TMPL_*)}
  WeChat Pay        ${pay_at:-$WECHATPAY_API_BASE}
  admin token       $ADMIN_TOKEN
  salon console     $base/admin/ (sign in as admin, the admin token as the password)
  Ctrl-C stops it all.

Try it (copy and paste, in another shell):

  # health, then tomorrow's slots
  curl -s $base/healthz; echo
  curl -s '$base/slots?date=$tomorrow'; echo
EOF
if [[ -n "$login_sim" ]]; then
  cat >&2 <<EOF
  # log in as a customer (the code is any string you like)
  TOKEN=\$(curl -s -X POST $base/login -d '{"code":"alice"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'); echo \$TOKEN
EOF
else
  cat >&2 <<EOF
  # log in: needs a real wx.login() code from the mini-program
  TOKEN=\$(curl -s -X POST $base/login -d '{"code":"<code from wx.login>"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'); echo \$TOKEN
EOF
fi
cat >&2 <<EOF
  # reserve tomorrow's first slot: 201, the booking pending_payment and the wx.requestPayment parameters
  SLOT=\$(curl -s '$base/slots?date=$tomorrow' | grep -o '"slotId":[0-9]*' | head -1 | cut -d: -f2); echo \$SLOT
  R=\$(curl -s -X POST $base/bookings -H "Authorization: Bearer \$TOKEN" -d "{\"slotId\":\$SLOT}"); echo "\$R"
  BOOKING=\$(echo "\$R" | grep -o '"bookingId":[0-9]*' | cut -d: -f2); echo \$BOOKING
EOF
if [[ -n "$pay_sim" ]]; then
  cat >&2 <<EOF
  # pay through the simulator: it sends the signed, encrypted notification to $base/pay/notify
  curl -s -X POST "$pay_sim/sim/pay?out_trade_no=\$(printf BK%012d \$BOOKING)"; echo
  # the booking is confirmed
  curl -s $base/bookings/mine -H "Authorization: Bearer \$TOKEN"; echo
  # cancel it: a full refund starts (refund "processing")
  curl -s -X POST $base/bookings/\$BOOKING/cancel -H "Authorization: Bearer \$TOKEN"; echo
  # WeChat finishes the refund: the refund notification arrives, refund "succeeded"
  curl -s -X POST "$pay_sim/sim/refund?out_refund_no=\$(printf RF%012d \$BOOKING)&status=SUCCESS"; echo
  curl -s $base/bookings/mine -H "Authorization: Bearer \$TOKEN"; echo
EOF
else
  cat >&2 <<EOF
  # pay in the mini-program, then see it confirmed, and cancel (refund)
  curl -s $base/bookings/mine -H "Authorization: Bearer \$TOKEN"; echo
  curl -s -X POST $base/bookings/\$BOOKING/cancel -H "Authorization: Bearer \$TOKEN"; echo
EOF
fi
if [[ -n "$login_sim" ]]; then
  cat >&2 <<EOF
  # the subscribe messages the customers were sent (confirmed, reminder, waitlist, cancelled)
  curl -s $login_sim/sim/messages
EOF
fi
cat >&2 <<EOF
  # the salon: open a schedule (twice is harmless), see tomorrow's bookings
  curl -s -X POST $base/admin/slots -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"from":"$tomorrow","to":"$week_end","open":"10:00","close":"21:00","slotMinutes":90,"capacity":3,"priceFen":5000}'; echo
  curl -s '$base/admin/bookings?date=$tomorrow' -H "Authorization: Bearer $ADMIN_TOKEN"; echo

EOF

# --- foreground until Ctrl-C or until a process dies ----------------------------------
while :; do
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || die "process $pid exited (see above); stopping the rest"
  done
  sleep 1
done
