# Sourced by scripts/test.sh. ensure_chromium makes sure a Chromium is there for
# the console's browser tests (shared/handler/console_browser_test.go): the one on
# PATH, or else Debian's chromium, which it installs when it runs as root with
# apt-get (with a CJK font, so the console's screenshots show Chinese). It exports
# SALON_CHROMIUM, the browser the tests start. It never changes a browser that is
# already installed.

find_chromium() {
  local name
  for name in chromium chromium-browser google-chrome chrome; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

ensure_chromium() {
  local path
  if path=$(find_chromium); then
    export SALON_CHROMIUM="$path"
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "chromium: not installed; installing Debian's chromium for the console's browser tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-wqy-microhei >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-wqy-microhei >&2; } ||
      { echo "chromium: apt-get could not install it" >&2; return 1; }
    path=$(find_chromium) || { echo "chromium: installed, but not on PATH" >&2; return 1; }
    export SALON_CHROMIUM="$path"
    return 0
  fi
  echo "chromium: not installed, and this shell cannot install it (needs root and apt-get)." >&2
  echo "chromium: install it (sudo apt-get install chromium) to run the console's browser tests." >&2
  return 1
}
