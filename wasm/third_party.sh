#!/bin/sh
# third_party.sh JANSSON_LICENSE YAML_LICENSE - the licences of what the WebAssembly
# build compiles in beside ggfit's own code, for the npm package and the
# page (THIRD_PARTY.md).
cat <<'HEAD'
# Third-party code in ggfit's WebAssembly build

- **jansson** (JSON), built from Debian's source package; MIT licence, below.
- **libyaml** (llama-swap's configs), built from Debian's source package; MIT
  licence, below.
- **Emscripten**'s runtime and C library (musl, compiler-rt), compiled in by
  emcc; Emscripten is under the MIT and University of Illinois/NCSA licences,
  musl under the MIT licence: https://github.com/emscripten-core/emscripten/blob/main/LICENSE
  and https://git.musl-libc.org/cgit/musl/tree/COPYRIGHT

## jansson

```
HEAD
cat "$1"
echo '```'
printf '\n## libyaml\n\n```\n'
cat "$2"
echo '```'
