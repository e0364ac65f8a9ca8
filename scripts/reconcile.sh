#!/usr/bin/env bash
# Checks the database at MYSQL_DSN (default root@tcp(127.0.0.1:3306)/salon) for
# slots whose booked counter disagrees with the seats their bookings hold (the
# t_booking_slot rows of bookings in status 0, 1, 2 or 5), and for cells of one
# technician that overlap in time, with the same check the release run makes
# every minute. It prints each drift and changes nothing.
#
#   MYSQL_DSN='user:pw@tcp(10.0.0.5:3306)/salon' scripts/reconcile.sh
#
# Exit status: 0 no drift, 1 drift found, 2 the check could not run (bad setting,
# database unreachable). Against TencentDB, run it from inside the VPC.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."

tmp="$(mktemp -d "${TMPDIR:-/tmp}/salon-reconcile.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Built, not `go run`: go run turns every failure into status 1, and 1 and 2 mean
# different things here.
if ! go build -o "$tmp/reconcile" ./infra/cmd/reconcile; then
  echo "reconcile.sh: build failed" >&2
  exit 2
fi
status=0
"$tmp/reconcile" || status=$?
exit "$status"
