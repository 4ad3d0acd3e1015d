#!/bin/sh
# tests/web/run.sh WASM_DIR MODELS ARTIFACTS [GGFIT] - ggfit's web page
# (WASM_DIR/web, make wasm) in headless chromium (/usr/bin/chromium, or
# $CHROMIUM) through playwright-core (tests/web/node_modules: `npm ci
# --prefix tests/web` installs it; this script installs nothing), against
# the native CLI GGFIT (default build/ggfit): tests/web/web.test.js.
# The hub is tests/http_server.sh's nginx (MODELS laid out as a fake
# Hugging Face, its GGUF files padded to 1 GiB past their headers, sparse,
# so that reading more than the headers shows), the page is served from a
# second port (another origin) and opened from file:// too. Screenshots
# (desktop 1280 px, phone 390 px) and the hub's access log go to ARTIFACTS.
# Exit 0 all passed, 1 a test failed, 77 skipped (no chromium, node,
# node_modules or nginx), 2 usage or no build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 3 ] || { echo "usage: tests/web/run.sh WASM_DIR MODELS ARTIFACTS [GGFIT]" >&2; exit 2; }
wasm=$1
models=$2
artifacts=$3
ggfit=${4:-$root/build/ggfit}
chromium=${CHROMIUM:-/usr/bin/chromium}
skip() { echo "web: skipped: $*"; exit 77; }
[ -x "$chromium" ] || skip "no chromium at $chromium (Debian: apt-get install chromium; or set CHROMIUM)"
command -v node >/dev/null || skip "node is not installed"
[ -d "$here/node_modules/playwright-core" ] ||
    skip "tests/web/node_modules is missing (npm ci --prefix tests/web)"
[ -f "$wasm/web/index.html" ] && [ -f "$wasm/ggfit.js" ] ||
    { echo "web: no page in $wasm/web (make wasm)" >&2; exit 2; }
[ -x "$ggfit" ] || { echo "web: no native CLI at $ggfit (make)" >&2; exit 2; }
mkdir -p "$artifacts" || exit 2
dir=$(mktemp -d /tmp/ggfit-web-XXXXXX) || exit 2
cleanup() {
    sh "$root/tests/http_server.sh" stop "$dir"
    cp "$dir/access.log" "$artifacts/hub-access.log" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sh "$root/tests/http_server.sh" start "$dir" "$models" "$wasm/web" >/dev/null
rc=$?
[ $rc -ne 77 ] || skip "nginx is not installed (scripts/deps.sh test installs it)"
[ $rc -eq 0 ] || { echo "web: the test server did not start" >&2; exit 1; }
for f in "$dir"/www/cdn/*/*/*.gguf; do
    truncate -s +1G "$f" || exit 1
done
node "$here/web.test.js" "$wasm" "$models" "$artifacts" "$ggfit" "$dir"
