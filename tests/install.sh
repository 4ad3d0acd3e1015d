#!/bin/sh
# install.sh BUILD_DIR MODELS - make install into a DESTDIR of its own (the
# default PREFIX, /usr/local), then uses what it put there as a user would:
# examples/plan.c built with pkg-config against the shared library (and,
# where the toolchain links static programs, against libggfit.a) answers
# what BUILD_DIR/plan answers, the installed ggfit runs with ggfit-dynamic
# beside it, man reads the page; make uninstall then leaves folders alone.
# Prints what failed, or one "install: ok" line; exit status 1 on a failure.
# tests/run.sh runs it under make test, whose MAKEFLAGS bring make's
# variables (B, PGO=0, CC...) to the make install here: by hand, give them
# the same way (MAKEFLAGS=PGO=0 sh tests/install.sh build data/models).
b=$1
models=$2
cc=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
d=$tmp/root
prefix=/usr/local
bin=$d$prefix/bin
lib=$d$prefix/lib
# The defaults are what is tested: none of the folders from the environment.
unset PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR PKGCONFIGDIR
failed=0
fail() {
    echo "install: $*"
    failed=1
}
version=$(awk '/^.define GGFIT_VERSION / { gsub(/"/, "", $3); print $3 }' include/ggfit.h)
abi=$(awk '/^.define GGFIT_ABI_VERSION / { print $3 }' include/ggfit.h)
if ! ${MAKE:-make} -s --no-print-directory install B="$b" DESTDIR="$d" >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log"
    fail "make install DESTDIR=$d failed"
    exit 1
fi

# exactly these files, and the library's link and soname
(cd "$d" && find . ! -type d | sort) >"$tmp/files"
cat >"$tmp/expected" <<EOF
.$prefix/bin/ggfit
.$prefix/bin/ggfit-dynamic
.$prefix/include/ggfit.h
.$prefix/include/ggfit_app.h
.$prefix/include/ggfit_llama.h
.$prefix/lib/libggfit.a
.$prefix/lib/libggfit.so
.$prefix/lib/libggfit.so.$abi
.$prefix/lib/pkgconfig/ggfit.pc
.$prefix/share/man/man1/ggfit.1
EOF
diff "$tmp/expected" "$tmp/files" >/dev/null ||
    fail "installed files differ from the list: $(diff "$tmp/expected" "$tmp/files" | grep '^[<>]' | tr '\n' ' ')"
[ "$(readlink "$lib/libggfit.so")" = "libggfit.so.$abi" ] ||
    fail "libggfit.so does not link to libggfit.so.$abi"
readelf -d "$lib/libggfit.so.$abi" | grep -q "SONAME.*\[libggfit.so.$abi\]" ||
    fail "libggfit.so.$abi has another soname"

# pkg-config, the DESTDIR's paths through its sysroot
if ! command -v pkg-config >/dev/null; then
    fail "pkg-config is missing (scripts/deps.sh installs it)"
    exit 1
fi
PKG_CONFIG_PATH=$lib/pkgconfig
PKG_CONFIG_SYSROOT_DIR=$d
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
[ "$(pkg-config --modversion ggfit)" = "$version" ] ||
    fail "pkg-config --modversion ggfit is not $version"

# run_cmp OUT_FILE CMD...: CMD's stdout to OUT_FILE, its exit status
# after it ("exit N"), stderr apart; the reference goes first.
run_cmp() {
    out=$1
    shift
    "$@" >"$out" 2>"$tmp/stderr"
    echo "exit $?" >>"$out"
}
# Two answers of examples/plan.c: a fit, and a machine it cannot fit.
plan1="-m $models/qwen3-14b-f16.gguf --gpu cuda:24576MiB/24077MiB -c 8192 --host-mem 64GiB/60GiB"
plan2="-m $models/qwen3-14b-f16.gguf --gpu none --host-mem 8GiB"
# check_plan PROGRAM [ENV...]: PROGRAM answers as $b/plan does.
check_plan() {
    p=$1
    shift
    for args in "$plan1" "$plan2"; do
        # shellcheck disable=SC2086
        run_cmp "$tmp/want" "$b/plan" $args
        # shellcheck disable=SC2086
        run_cmp "$tmp/got" env "$@" "$p" $args
        cmp -s "$tmp/want" "$tmp/got" ||
            fail "$(basename "$p") $args: not what $b/plan answers: $(head -c 300 "$tmp/got" "$tmp/stderr")"
    done
}

# examples/plan.c against the shared library
# shellcheck disable=SC2046,SC2086
if $cc $LDFLAGS -o "$tmp/plan" examples/plan.c $(pkg-config --cflags --libs ggfit) \
    >"$tmp/cc.log" 2>&1; then
    LD_LIBRARY_PATH=$lib ldd "$tmp/plan" | grep -q "libggfit.so.$abi => $lib/libggfit.so.$abi" ||
        fail "plan does not load $lib/libggfit.so.$abi"
    check_plan "$tmp/plan" LD_LIBRARY_PATH="$lib"
else
    cat "$tmp/cc.log"
    fail "examples/plan.c does not build with pkg-config --cflags --libs ggfit"
fi

# and statically (pkg-config --static: libggfit.a and what it needs), where
# this toolchain links a static program that runs (not with the sanitizers:
# ASan refuses the link, a static ThreadSanitizer program crashes at start)
# shellcheck disable=SC2086
if printf 'int main(void){return 0;}\n' |
    $cc $LDFLAGS -x c - -static -o "$tmp/probe" >/dev/null 2>&1 &&
    "$tmp/probe" >/dev/null 2>&1; then
    # shellcheck disable=SC2046,SC2086
    if $cc $LDFLAGS -static -o "$tmp/plan-static" examples/plan.c \
        $(pkg-config --static --cflags --libs ggfit) >"$tmp/cc.log" 2>&1; then
        check_plan "$tmp/plan-static"
    else
        cat "$tmp/cc.log"
        fail "examples/plan.c does not link with -static and pkg-config --static --cflags --libs ggfit"
    fi
else
    echo "install: no static link here (the toolchain links no static program that runs)"
fi

# the installed command line: its version, a plan as the build's CLI gives
# it, and a request for a shared library (a URL: libcurl), which a static
# ggfit hands to the ggfit-dynamic beside it
v=$("$bin/ggfit" --version 2>&1 | head -1)
[ "$v" = "ggfit $version" ] || fail "ggfit --version: '$v', not 'ggfit $version'"
# shellcheck disable=SC2086
run_cmp "$tmp/want" "$b/ggfit" $plan1
# shellcheck disable=SC2086
run_cmp "$tmp/got" "$bin/ggfit" $plan1
cmp -s "$tmp/want" "$tmp/got" || fail "the installed ggfit $plan1: not what $b/ggfit answers"
"$bin/ggfit" -m http://127.0.0.1:1/model.gguf --gpu none >/dev/null 2>"$tmp/stderr"
if grep -q -e 'could not run ggfit-dynamic' -e 'statically linked program' "$tmp/stderr"; then
    fail "the installed ggfit does not run the ggfit-dynamic beside it: $(cat "$tmp/stderr")"
fi

# the man page, as man reads it (groff where man-db is not installed)
page=$d$prefix/share/man/man1/ggfit.1
if command -v man >/dev/null; then
    MANPAGER=cat MANWIDTH=80 man -l "$page" >"$tmp/man" 2>"$tmp/stderr"
else
    groff -man -Tascii "$page" >"$tmp/man" 2>"$tmp/stderr"
fi
if ! grep -q 'ggfit - what llama' "$tmp/man" || [ -s "$tmp/stderr" ]; then
    fail "the installed man page does not read: $(head -c 300 "$tmp/stderr")"
fi

# make uninstall: only the folders are left
if ${MAKE:-make} -s --no-print-directory uninstall B="$b" DESTDIR="$d" >"$tmp/make.log" 2>&1; then
    left=$(cd "$d" && find . ! -type d)
    [ -z "$left" ] || fail "make uninstall left $(echo "$left" | tr '\n' ' ')"
else
    cat "$tmp/make.log"
    fail "make uninstall DESTDIR=$d failed"
fi

[ "$failed" -eq 0 ] && echo "install: ok"
exit "$failed"
