#!/usr/bin/env bash
# Builds every function under functions/ the way SCF's Go1 runtime runs it and
# packages it for deployment:
#   dist/<name>/main   static linux/amd64 binary (multi-scf deploys dist/, see serverless.yml)
#   dist/<name>.zip    the same binary at the zip root, for a console upload
# Static (CGO_ENABLED=0): a dynamically linked binary can fail on SCF's older glibc.
# Works from any directory. Set PACKAGE_NO_ZIP=1 to use the built-in Go zipper
# even where the zip command exists.
set -euo pipefail
# go.mod names Go 1.27.3; the go command fetches it from the module proxy when the
# machine has an older one (a machine starts on its own Go and ignores go.mod).
export GOTOOLCHAIN=go1.27.3

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

names=()
for dir in functions/*/; do
  name="$(basename "$dir")"
  if [[ -f "functions/$name/main.go" ]]; then # functions/openapi holds the API document's TypeScript tools, not a function
    names+=("$name")
  fi
done
if [[ ${#names[@]} -eq 0 ]]; then
  echo "package.sh: no function packages under $root/functions" >&2
  exit 1
fi

rm -rf dist
mkdir -p dist
for name in "${names[@]}"; do
  echo "package.sh: building $name" >&2
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o "dist/$name/main" "./functions/$name"
done

if [[ "${PACKAGE_NO_ZIP:-}" != 1 ]] && command -v zip >/dev/null 2>&1; then
  for name in "${names[@]}"; do
    # -X: no extra file attributes; the unix mode (executable) is kept.
    (cd "dist/$name" && zip -q -X "../$name.zip" main)
  done
else
  # No zip here: a few lines of Go (only the standard library) do the same.
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/salon-package.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  cat >"$tmp/zipmain.go" <<'GO'
// zipmain DIR...: writes DIR.zip holding DIR/main as "main", executable.
package main

import (
	"archive/zip"
	"io"
	"log"
	"os"
	"path/filepath"
)

func main() {
	for _, dir := range os.Args[1:] {
		if err := pack(dir); err != nil {
			log.Fatal(err)
		}
	}
}

func pack(dir string) error {
	src, err := os.Open(filepath.Join(dir, "main"))
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(filepath.Clean(dir) + ".zip")
	if err != nil {
		return err
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	h, err := zip.FileInfoHeader(fi)
	if err != nil {
		return err
	}
	h.Name = "main"
	h.Method = zip.Deflate
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, src); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Close()
}
GO
  dirs=()
  for name in "${names[@]}"; do
    dirs+=("$root/dist/$name")
  done
  # Outside the module, so go run needs no go.mod.
  (cd "$tmp" && go run zipmain.go "${dirs[@]}")
fi

for name in "${names[@]}"; do
  echo "dist/$name.zip"
done
