#!/usr/bin/env bash
# The benchmarks: the product's reserve against the designs it rejected, direct
# and through a latency proxy at the distance of SCF to TencentDB, the launch
# burst, the connection budget under scale-out, the gateway end to end, cold
# starts and memory, the release run (infra/bench/README.md).
# Writes infra/bench/results/BENCHMARKS.md, results.json and SVG charts.
#
#   scripts/bench.sh          # the full profile (about 30-40 minutes on 2 cores)
#   scripts/bench.sh -quick   # a few minutes
#   scripts/bench.sh -private # on a mariadbd of the tool's own, not MYSQL_DSN's
#
# Needs MariaDB/MySQL at MYSQL_DSN (started like scripts/test.sh does when it is
# local), Redis at REDIS_ADDR (127.0.0.1:6379), NATS at NATS_URL
# (nats://127.0.0.1:4222), the etcd binary (Debian: etcd-server) and mariadbd
# with mariadb-install-db (the connection-budget scenario runs a private server
# of its own); the tool starts its own etcd on loopback ports 23790/23800 and its
# latency proxy on free loopback ports. Extra arguments go to the tool.
#
# The tool is a Go module of its own (infra/bench/go.mod), so its Redis, NATS,
# etcd and chart libraries never become requirements of the product. It is built
# there and run from the repository root, where it builds the function binaries
# and writes infra/bench/results.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mysql.sh
. scripts/lib/mysql.sh
ensure_mysql
if ! command -v etcd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bench: installing Debian's etcd-server for the etcd contender" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >&2 ||
      echo "bench: could not install etcd-server; the etcd contender will be missing from this run" >&2
  else
    echo "bench: no etcd binary (apt-get install etcd-server); the etcd contender will be missing from this run" >&2
  fi
fi
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
go build -C infra/bench -o "$bin_dir/bench" .
"$bin_dir/bench" "$@"
