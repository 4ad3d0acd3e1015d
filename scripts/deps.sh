#!/bin/sh
# deps.sh [build|test] - installs the Debian packages ggfit needs.
#   build: compiler, make, pkg-config and the libraries libggfit links
#          (jansson, PCRE2, libcurl, libyaml: llama-swap's configs; its
#          runtime libyaml-0-2 for libggfit.so); make test builds a program with
#          pkg-config against what make install puts in place
#   test:  build, plus cmocka, clang with its sanitizer and fuzzer
#          runtimes, valgrind, python3 (the reference checker),
#          python3-jsonschema (every --json the tests make is validated
#          against docs/schema/: tools/jsonschema_check.py), nginx
#          (the HTTP server the remote-model tests start on 127.0.0.1) and
#          groff-base (the man page's renderer: make test checks it, and
#          reads the installed page with man where man-db is installed);
#          and for the WebAssembly build and its tests (make wasm-test):
#          emscripten, dpkg-dev (unpacks jansson's and libyaml's Debian sources for it:
#          scripts/wasm-deps.sh), chromium (the page's browser), and from
#          npm, playwright-core (drives chromium; tests/web/package.json,
#          installed in tests/web/node_modules: no browser is downloaded)
set -e
what=${1:-test}
pkgs="gcc make pkg-config libc6-dev libjansson-dev libpcre2-dev libcurl4-openssl-dev"
pkgs="$pkgs libyaml-dev libyaml-0-2"
if [ "$what" = test ]; then
    pkgs="$pkgs libcmocka-dev zlib1g-dev clang libclang-rt-dev valgrind python3 nginx groff-base"
    pkgs="$pkgs emscripten dpkg-dev chromium"
    pkgs="$pkgs python3-jsonschema"   # tools/jsonschema_check.py
    # the Python module's test: pip install . in a venv, then pytest
    pkgs="$pkgs python3-venv python3-pip python3-setuptools python3-wheel python3-pytest"
    command -v npm >/dev/null || pkgs="$pkgs nodejs npm"
fi
npm_deps() {
    [ "$what" = test ] || return 0
    command -v npm >/dev/null || { echo "deps.sh: npm is not installed (nodejs)" >&2; return 1; }
    dir=$(dirname "$0")/../tests/web
    [ -d "$dir/node_modules/playwright-core" ] ||
        npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
}
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
if [ -z "$missing" ]; then
    npm_deps
    exit
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends $missing
npm_deps
