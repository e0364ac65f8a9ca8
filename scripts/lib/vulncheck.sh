# shellcheck shell=bash
# vulncheck runs govulncheck (pinned) over the product and the benchmark module
# against a vulnerability database built on this machine from the pinned
# golang.org/x/vulndb module, which the Go module proxy serves like any module:
# the check needs no vuln.go.dev and gives the same answer on every machine
# until the pin moves. It fails on a vulnerability the code can reach (a call
# path from the product into the vulnerable function, the standard library's
# included: the Go that builds is the Go that is checked); in the product, one
# the code imports but never calls is listed by `-show verbose`, not failed on.
#
# The benchmark module is held to more: it also fails on any module it builds
# with whose version a report names, called or not (`-scan module`). A
# vulnerable requirement there (github.com/klauspost/compress v1.20.0, whose
# GO-2026-6865 panic sits in fse and huff0, packages the tool never imports:
# NATS uses only its flate) passes the call-path check and fails this one.
# `-scan module` takes no package pattern: it reads the modules of the package
# in the current directory, which is the benchmark's only package (package
# main), and of everything it imports, the standard library included; a
# package added under infra/bench that main does not import would need a run
# of its own.
#
# The database (about 4,800 entries, built in a second by infra/cmd/vulndb) is
# kept in the user's cache, one directory per vulndb version. Newer reports:
# move VULNDB_VERSION to what `go list -m golang.org/x/vulndb@latest` names (the
# module has no tagged versions; its newest commit is a pseudo-version).
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION=v1.9.0

vulncheck() {
  local cache db module
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/salon"
  db="$cache/vulndb-$VULNDB_VERSION"
  if [ ! -f "$db/index/modules.json" ]; then
    mkdir -p "$cache"
    # Outside the repository, so that the product's go.mod and go.sum stay as
    # they are: the database is data for the check, no dependency.
    module="$(cd "$cache" && go mod download golang.org/x/vulndb@"$VULNDB_VERSION" &&
      go list -m -f '{{.Dir}} {{.Time.Format "2006-01-02T15:04:05Z07:00"}}' golang.org/x/vulndb@"$VULNDB_VERSION")"
    go run ./infra/cmd/vulndb -module "${module% *}" -modified "${module#* }" -out "$db"
  fi
  go run golang.org/x/vuln/cmd/govulncheck@"$GOVULNCHECK_VERSION" -db "file://$db" ./...
  (cd infra/bench &&
    go run golang.org/x/vuln/cmd/govulncheck@"$GOVULNCHECK_VERSION" -db "file://$db" ./... &&
    go run golang.org/x/vuln/cmd/govulncheck@"$GOVULNCHECK_VERSION" -db "file://$db" -scan module)
}
