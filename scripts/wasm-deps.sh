#!/bin/sh
# wasm-deps.sh OUT - jansson and libyaml (llama-swap's configs,
# src/common/swap.c), and nothing else (-ot patterns use the JavaScript
# engine's own RegExp, the ECMAScript dialect llama.cpp's std::regex
# speaks), built for WebAssembly with Debian's emscripten, from Debian's own
# source packages of the versions the native build links.
#
# The sources come through apt with a private list of deb-src lines (the
# machine's apt configuration is left alone; apt checks the files against
# the archive's signed index), are unpacked with Debian's patches applied,
# and are built into OUT/jansson/{include,lib} (emcmake) and
# OUT/yaml/{include,lib} (emcc on its eight sources: no configure step to
# trust). Run by make wasm; builds only the ones whose library is missing.
set -e
out=$(mkdir -p "$1" && cd "$1" && pwd)
have_jansson=; have_yaml=
[ -f "$out/jansson/lib/libjansson.a" ] && have_jansson=1
[ -f "$out/yaml/lib/libyaml.a" ] && have_yaml=1
if [ -n "$have_jansson" ] && [ -n "$have_yaml" ]; then
    touch "$out/jansson/lib/libjansson.a" "$out/yaml/lib/libyaml.a"
    exit 0
fi
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
# get_source SRC DEV: Debian's source package SRC, of the version of the
# installed DEV package (the newest when DEV is not installed), unpacked
# into $work/SRC; its version in $version
get_source() {
    version=$(dpkg-query -W -f='${source:Version}' "$2" 2>/dev/null || true)
    (cd "$work" && apt-get -q $apt_o source --download-only "$1${version:+=$version}" >/dev/null)
    (cd "$work" && dpkg-source --no-check -x "$1"_*.dsc "$1" >/dev/null)
}
if [ -z "$have_jansson" ]; then
    get_source jansson libjansson-dev
    cd "$work/jansson"
    emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$out/jansson" \
        -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON \
        -DJANSSON_BUILD_SHARED_LIBS=OFF -DCMAKE_C_FLAGS="-Oz" >/dev/null
    cmake --build build-wasm -j2 >/dev/null
    cmake --install build-wasm >/dev/null
    cp LICENSE "$out/jansson/LICENSE"
    echo "wasm-deps: jansson $version for wasm in $out/jansson"
fi
if [ -z "$have_yaml" ]; then
    get_source libyaml libyaml-dev
    cd "$work/libyaml"
    # the upstream version (0.2.5 of 0.2.5-1) for yaml_get_version, which
    # configure would write into config.h
    v=$(ls "$work" | sed -n 's/^libyaml_\([0-9.]*\)[-.].*orig.*/\1/p' | head -n 1)
    v=${v:-${version%%-*}}
    major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}; patch=${rest#*.}
    mkdir -p build-wasm "$out/yaml/include" "$out/yaml/lib"
    for f in api dumper emitter loader parser reader scanner writer; do
        emcc -Oz -Iinclude -DYAML_VERSION_MAJOR="$major" -DYAML_VERSION_MINOR="$minor" \
            -DYAML_VERSION_PATCH="$patch" -DYAML_VERSION_STRING="\"$v\"" \
            -c "src/$f.c" -o "build-wasm/$f.o"
    done
    rm -f "$out/yaml/lib/libyaml.a"
    emar rcs "$out/yaml/lib/libyaml.a" build-wasm/*.o
    cp include/yaml.h "$out/yaml/include/yaml.h"
    for l in License LICENSE COPYING; do
        [ -f "$l" ] && cp "$l" "$out/yaml/LICENSE" && break
    done
    echo "wasm-deps: libyaml $version for wasm in $out/yaml"
fi
touch "$out/jansson/lib/libjansson.a" "$out/yaml/lib/libyaml.a"
