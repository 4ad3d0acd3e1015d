#!/bin/sh
# wasm-deps.sh OUT - jansson (and nothing else: -ot patterns use the
# JavaScript engine's own RegExp, the ECMAScript dialect llama.cpp's
# std::regex speaks) built for WebAssembly with Debian's emscripten, from
# Debian's own source package of the version the native build links.
#
# The source comes through apt with a private list of deb-src lines (the
# machine's apt configuration is left alone; apt checks the files against
# the archive's signed index), is unpacked with Debian's patches applied,
# and is built with emcmake into OUT/jansson/{include,lib}. Run by make
# wasm; does nothing when OUT/jansson/lib/libjansson.a is there.
set -e
out=$(mkdir -p "$1" && cd "$1" && pwd)
[ -f "$out/jansson/lib/libjansson.a" ] && exit 0
work=$out/src
rm -rf "$work" && mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
# the suite the installed jansson came from (bookworm here)
. /etc/os-release
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" \
    > "$work/sources.list"
apt_o="-o Dir::Etc::SourceList=$work/sources.list -o Dir::Etc::SourceParts=/nonexistent
       -o Dir::State::Lists=$work/lists -o Dir::Cache=$work/cache -o Debug::NoLocking=1
       -o APT::Sandbox::User=$(id -un)"
apt-get -q $apt_o update >/dev/null
version=$(dpkg-query -W -f='${source:Version}' libjansson-dev 2>/dev/null || true)
(cd "$work" && apt-get -q $apt_o source --download-only "jansson${version:+=$version}" >/dev/null)
(cd "$work" && dpkg-source --no-check -x jansson_*.dsc jansson >/dev/null)
cd "$work/jansson"
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out/jansson" \
    -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON \
    -DJANSSON_BUILD_SHARED_LIBS=OFF -DCMAKE_C_FLAGS="-Oz" >/dev/null
cmake --build build-wasm -j2 >/dev/null
cmake --install build-wasm >/dev/null
cp LICENSE "$out/jansson/LICENSE"
echo "wasm-deps: jansson $version for wasm in $out/jansson"
