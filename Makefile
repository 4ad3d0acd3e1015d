# ggfit - build, test, sanitize, fuzz.
#   make            libggfit.a, libggfit.so(.N) and the ggfit CLI in build/
#   make test       unit tests, malformed-file catalogue, reference figures
#   make asan       the test suite built with ASan + UBSan
#   make tsan       the test suite built with ThreadSanitizer (clang)
#   make valgrind   the test suite under valgrind (memcheck)
#   make fuzz       libFuzzer on the GGUF reader for FUZZ_SECONDS, and on the
#                   configs' readers for FUZZ_CONFIG_SECONDS (clang)
#   make bench      timing of header reading and description
#   make bench-cache what each cached piece buys the commands (GGFIT_CACHE)
#   make wasm       the WebAssembly build: the page (build-wasm/web) and node's
#   make npm        the npm package, build-wasm/ggfit-VERSION.tgz
#   make wasm-test  WebAssembly against native, the npm package, the page in chromium
#   make python     the built library copied beside the Python module, for
#                   pip install . (pyproject.toml, python/ggfit)
#   make llama-example LLAMA_SRC=DIR LLAMA_BUILD=DIR
#                   examples/llama_load.c against that llama.cpp (ggfit_llama.h;
#                   docs/llama.md); a message and nothing built without them
#   make install    the CLI, the library, its headers, ggfit.pc and the man page
#                   under PREFIX (/usr/local), staged under DESTDIR if given;
#                   make uninstall removes them

CC      ?= cc
PKGS     = jansson libpcre2-8 libcurl yaml-0.1
CSTD     = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CWARNS   = -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Wwrite-strings -Wformat=2 -Wvla -Wundef \
           -Wno-format-nonliteral
OPT     ?= -O2 -g
CFLAGS  += $(CSTD) $(CWARNS) $(OPT) -fPIC -Iinclude -Isrc $(shell pkg-config --cflags $(PKGS))
# libcurl is loaded with dlopen when a URL is read (src/remote/http.c):
# only its header is needed to build.
LDLIBS  += $(shell pkg-config --libs $(filter-out libcurl,$(PKGS))) -ldl -pthread -lm
# The CLI links jansson, PCRE2 and libyaml statically (all ship their
# archives in the -dev packages; MIT, BSD and MIT licences; libyaml reads
# llama-swap's configs, src/common/swap.c): fewer libraries for the
# dynamic loader on every run, about a tenth of a short run's time.
CLI_LDLIBS = -Wl,-Bstatic $(shell pkg-config --libs jansson libpcre2-8 yaml-0.1) -Wl,-Bdynamic \
             -ldl -pthread -lm
# The CLI is linked statically where the toolchain can (STATIC_CLI=1: a
# static PIE, its addresses still random): a run then starts without the
# dynamic loader and the shared C library, about half a millisecond of a
# 5 ms fit. Such a program cannot load shared libraries (libcurl, NVML, the
# resolver's NSS modules: src/base/linking.c), hence glibc's link-time
# warnings about dlopen and getaddrinfo; a request that needs one is run by
# ggfit-dynamic, the CLI linked as a dynamic program, which make builds
# beside it. STATIC_CLI=0 links ggfit dynamically too (the sanitizer builds
# do).
STATIC_CLI ?= $(shell printf 'int main(void){return 0;}\n' | \
                $(CC) -x c - -static-pie -o /dev/null >/dev/null 2>&1 && echo 1 || echo 0)
STATIC_LDLIBS = $(shell pkg-config --libs jansson libpcre2-8 yaml-0.1) -ldl -pthread -lm
# The library exports what ggfit.h marks GGFIT_API and nothing else.
LIB_CFLAGS = -fvisibility=hidden

B       ?= build
# Sources: every .c in a folder of src/ (one folder a stage of the pipeline);
# tests: every tests/test_*.c. Object files mirror the folders.
# A transport per platform (src/remote/xfer.h): libcurl natively, the
# JavaScript engine's fetch in WebAssembly (make wasm).
WASM_ONLY   = src/remote/http_fetch.c
NATIVE_ONLY = src/remote/http_curl.c
LIB_SRC  = $(filter-out $(WASM_ONLY),$(sort $(wildcard src/*/*.c)))
LIB_OBJ  = $(LIB_SRC:src/%.c=$(B)/obj/%.o)
TESTS    = $(sort $(patsubst tests/%.c,%,$(wildcard tests/test_*.c)))
TEST_BIN = $(TESTS:%=$(B)/tests/%)
# ar keeps members by file name: two sources with one name would collide.
DUP_SRC := $(shell for f in $(LIB_SRC); do basename $$f; done | sort | uniq -d)
ifneq ($(DUP_SRC),)
$(error two sources share a file name: $(DUP_SRC))
endif
MODELS   = data/models
FUZZ_SECONDS ?= 60
CI_FUZZ_SECONDS ?= 60

.PHONY: python wasm npm wasm-test llama-example all test check asan tsan valgrind fuzz fuzz-build bench bench-cache clean malformed speedcheck speedcheck-local \
        man install uninstall FORCE

all: $(B)/libggfit.a $(B)/libggfit.so $(B)/ggfit $(B)/ggfit-dynamic

# Header dependencies come from the compiler (-MMD -MP).
$(B)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) $(PGO_USE) -MMD -MP -c $< -o $@
-include $(LIB_OBJ:.o=.d)

# The catalog of GPUs and Macs: data/gpus.tsv made into C at build time
# (not committed; the TSV stays the one source).
%/catalog_data.h: data/gpus.tsv scripts/gen_catalog.awk
	mkdir -p $(@D)
	awk -f scripts/gen_catalog.awk data/gpus.tsv >$@.tmp && mv $@.tmp $@
$(B)/obj/devices/catalog.o: $(B)/catalog_data.h
$(B)/obj/devices/catalog.o: CFLAGS += -I$(B)

# The table of every flag: llama.cpp's (data/llama_args.tsv, from
# tools/llama_args.py) joined with what ggfit does with each and ggfit's own
# (data/flags.tsv); not committed, the two TSVs stay the one source.
%/llama_args_data.h: data/flags.tsv data/llama_args.tsv scripts/gen_llama_args.awk
	mkdir -p $(@D)
	awk -f scripts/gen_llama_args.awk data/flags.tsv data/llama_args.tsv >$@.tmp && mv $@.tmp $@
$(B)/obj/common/llama_args.o: $(B)/llama_args_data.h
$(B)/obj/common/llama_args.o: CFLAGS += -I$(B)

# Each command's synopsis and words, for its -h (cli/ggfit.c) and the man
# page's SYNOPSIS and COMMANDS (tools/gen_man.py); not committed.
%/commands_data.h: data/commands.txt scripts/gen_commands.awk
	mkdir -p $(@D)
	awk -f scripts/gen_commands.awk data/commands.txt >$@.tmp && mv $@.tmp $@

# Profile-guided optimisation (gcc; PGO=0 turns it off, clang builds go
# without): the library and the CLI are first built with -fprofile-generate
# in $(B)/pgo-gen, which runs scripts/pgo_train.sh on the shipped layouts;
# the objects of $(B) are then built with what those runs counted (about a
# tenth fewer instructions for a fit, and branches laid out as they go).
# A change to any source trains again and rebuilds every object: while
# editing, `make PGO=0` builds as before.
PGO     ?= $(if $(shell $(CC) -v 2>&1 | grep '^gcc version'),1,0)
ifeq ($(PGO),1)
PGO_DIR  = $(abspath $(B))/pgo
GEN_OBJ  = $(LIB_SRC:src/%.c=$(B)/pgo-gen/obj/%.o)
PGO_GEN  = -fprofile-generate=$(PGO_DIR) -fprofile-prefix-path=$(abspath $(B))/pgo-gen \
           -fprofile-update=single
PGO_USE  = -fprofile-use=$(PGO_DIR) -fprofile-prefix-path=$(abspath $(B)) \
           -fprofile-partial-training -fprofile-correction -Wno-missing-profile
$(B)/pgo-gen/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) $(PGO_GEN) -MMD -MP -c $< -o $@
-include $(GEN_OBJ:.o=.d)
$(B)/pgo-gen/obj/devices/catalog.o: $(B)/catalog_data.h
$(B)/pgo-gen/obj/devices/catalog.o: CFLAGS += -I$(B)
$(B)/pgo-gen/obj/common/llama_args.o: $(B)/llama_args_data.h
$(B)/pgo-gen/obj/common/llama_args.o: CFLAGS += -I$(B)
$(B)/pgo-gen/ggfit: cli/ggfit.c $(B)/commands_data.h $(GEN_OBJ)
	$(CC) $(CFLAGS) -I$(B) $(PGO_GEN) $(LDFLAGS) -o $@ $< $(GEN_OBJ) $(CLI_LDLIBS)
$(B)/pgo/trained: $(B)/pgo-gen/ggfit scripts/pgo_train.sh
	rm -rf $(PGO_DIR) && mkdir -p $(PGO_DIR)
	sh scripts/pgo_train.sh $(B)/pgo-gen/ggfit $(MODELS) $(B)
	touch $@
$(LIB_OBJ): $(B)/pgo/trained
endif

$(B)/libggfit.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

# The shared library is named for ggfit.h's ABI version (libggfit.so.N, its
# soname: a program runs with any library of its N); libggfit.so links to it,
# for -lggfit.
ABI     := $(shell awk '/^.define GGFIT_ABI_VERSION / { print $$3 }' include/ggfit.h)
$(B)/libggfit.so.$(ABI): $(LIB_OBJ)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libggfit.so.$(ABI) -o $@ $^ $(LDLIBS)

$(B)/libggfit.so: $(B)/libggfit.so.$(ABI)
	ln -sf libggfit.so.$(ABI) $@

$(B)/ggfit-dynamic: cli/ggfit.c $(B)/commands_data.h $(B)/libggfit.a
	$(CC) $(CFLAGS) -I$(B) $(PGO_USE) $(LDFLAGS) -o $@ $< $(B)/libggfit.a $(CLI_LDLIBS)

ifeq ($(STATIC_CLI),1)
$(B)/ggfit: cli/ggfit.c $(B)/commands_data.h $(B)/libggfit.a
	$(CC) $(CFLAGS) -I$(B) $(PGO_USE) $(LDFLAGS) -static-pie -o $@ $< $(B)/libggfit.a $(STATIC_LDLIBS)
else
$(B)/ggfit: $(B)/ggfit-dynamic
	cp $< $@
endif

# The README's C program, linked with the shared library as a program outside
# the tree would be (the exports of ggfit.h and ggfit_app.h only);
# tests/cli.sh runs it.
$(B)/plan: examples/plan.c include/ggfit.h include/ggfit_app.h $(B)/libggfit.so
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(B) -lggfit -Wl,-rpath,$(abspath $(B))

# examples/llama_load.c against a llama.cpp (include/ggfit_llama.h; ggfit
# itself never links it): LLAMA_SRC its source tree (include/llama.h, and
# src/llama-ext.h for the C++ breakdown), LLAMA_BUILD its build (bin/ or
# lib/ holding libllama.so). Without them there is nothing to build against:
# a message, and success. tests/llamaload.sh runs it on a real model.
LLAMA_SRC ?=
LLAMA_BUILD ?=
LLAMA_LIB = $(firstword $(dir $(wildcard $(LLAMA_BUILD)/bin/libllama.so $(LLAMA_BUILD)/lib/libllama.so \
                                         $(LLAMA_BUILD)/libllama.so)))
LLAMA_INC = -I$(LLAMA_SRC)/include -I$(LLAMA_SRC)/ggml/include
ifneq ($(and $(wildcard $(LLAMA_SRC)/include/llama.h),$(wildcard $(LLAMA_SRC)/src/llama-ext.h),$(LLAMA_LIB)),)
llama-example: $(B)/llama_load
else
llama-example:
	@echo "llama-example: skipped: no llama.cpp at LLAMA_SRC='$(LLAMA_SRC)' LLAMA_BUILD='$(LLAMA_BUILD)'" \
	    "(give its source tree, with include/llama.h and src/llama-ext.h, and its build, with" \
	    "bin/libllama.so)"
endif
$(B)/llama_breakdown.o: examples/llama_breakdown.cpp examples/llama_breakdown.h | $(B)/libggfit.so
	$(CXX) -std=c++17 $(OPT) -fPIC -Iexamples -I$(LLAMA_SRC)/src $(LLAMA_INC) -c -o $@ $<
$(B)/llama_load: examples/llama_load.c examples/llama_breakdown.h include/ggfit_llama.h include/ggfit.h \
                 $(B)/llama_breakdown.o $(B)/libggfit.so
	$(CC) $(CSTD) $(CWARNS) $(OPT) -Iinclude -Iexamples $(LLAMA_INC) -c -o $(B)/llama_load.o $<
	$(CXX) $(LDFLAGS) -o $@ $(B)/llama_load.o $(B)/llama_breakdown.o -L$(B) -lggfit \
	    -L$(LLAMA_LIB) -lllama -lggml -lggml-base \
	    -Wl,-rpath,$(abspath $(B)) -Wl,-rpath,$(abspath $(LLAMA_LIB))

# The man page: docs/ggfit.1.in with the options of the table of flags and
# the synopses and words of data/commands.txt (tools/gen_man.py), as -h says
# them; not committed. make test renders it (no groff warning, every flag of
# the table named, every command's -h words in it: tests/cli.sh).
$(B)/ggfit.1: docs/ggfit.1.in data/flags.tsv data/llama_args.tsv data/commands.txt tools/gen_man.py \
              include/ggfit.h
	@mkdir -p $(@D)
	python3 tools/gen_man.py docs/ggfit.1.in data/flags.tsv data/llama_args.tsv data/commands.txt \
	    include/ggfit.h \
	    >$@.tmp && mv $@.tmp $@
man: $(B)/ggfit.1

# Installation, in the usual folders (each can be set on the command line:
# make install PREFIX=$$HOME/.local, LIBDIR=/usr/lib/x86_64-linux-gnu...);
# DESTDIR stages the whole tree under another root, for a package. ggfit
# and ggfit-dynamic go to one folder: a request that needs a shared library
# runs the ggfit-dynamic found beside /proc/self/exe (cli/ggfit.c). Neither
# needs libggfit.so; the shared library gets its soname's file and the
# libggfit.so link (for -lggfit), and ggfit.pc gives the flags to build
# against it (pkg-config --static: against libggfit.a).
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install
VERSION      := $(shell awk '/^.define GGFIT_VERSION / { gsub(/"/, "", $$3); print $$3 }' include/ggfit.h)
# What install puts in place, and so what uninstall removes.
INSTALLED    = $(BINDIR)/ggfit $(BINDIR)/ggfit-dynamic \
               $(LIBDIR)/libggfit.so.$(ABI) $(LIBDIR)/libggfit.so $(LIBDIR)/libggfit.a \
               $(INCLUDEDIR)/ggfit.h $(INCLUDEDIR)/ggfit_app.h $(INCLUDEDIR)/ggfit_llama.h \
               $(MANDIR)/man1/ggfit.1 $(PKGCONFIGDIR)/ggfit.pc

# ggfit.pc names the folders it was made for: it is made again when
# PREFIX, LIBDIR or INCLUDEDIR change ($(B)/install-dirs keeps the last,
# rewritten only when they differ). A folder under PREFIX is written
# ${prefix}/..., so that pkg-config --define-prefix can move the tree.
PC_DIRS = $(PREFIX):$(LIBDIR):$(INCLUDEDIR)
$(B)/install-dirs: FORCE
	@mkdir -p $(@D)
	@echo '$(PC_DIRS)' | cmp -s - $@ || echo '$(PC_DIRS)' >$@
$(B)/ggfit.pc: scripts/ggfit.pc.in include/ggfit.h $(B)/install-dirs
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' scripts/ggfit.pc.in >$@.tmp && mv $@.tmp $@

# The Python module carries the library it was tested with: pip install .
# after this installs both (python/ggfit/__init__.py finds it beside itself).
python: $(B)/libggfit.so.$(ABI)
	cp $(B)/libggfit.so.$(ABI) python/ggfit/libggfit.so.$(ABI)

install: all $(B)/ggfit.1 $(B)/ggfit.pc
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(INCLUDEDIR)" \
	    "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(PKGCONFIGDIR)"
	$(INSTALL) -m 755 $(B)/ggfit-dynamic $(B)/ggfit "$(DESTDIR)$(BINDIR)"
	$(INSTALL) -m 755 $(B)/libggfit.so.$(ABI) "$(DESTDIR)$(LIBDIR)"
	ln -sf libggfit.so.$(ABI) "$(DESTDIR)$(LIBDIR)/libggfit.so"
	$(INSTALL) -m 644 $(B)/libggfit.a "$(DESTDIR)$(LIBDIR)"
	$(INSTALL) -m 644 include/ggfit.h include/ggfit_app.h include/ggfit_llama.h "$(DESTDIR)$(INCLUDEDIR)"
	$(INSTALL) -m 644 $(B)/ggfit.1 "$(DESTDIR)$(MANDIR)/man1"
	$(INSTALL) -m 644 $(B)/ggfit.pc "$(DESTDIR)$(PKGCONFIGDIR)"

# The files alone: the folders stay, as they may hold others'.
uninstall:
	rm -f $(foreach f,$(INSTALLED),"$(DESTDIR)$(f)")

$(B)/tests:
	mkdir -p $@

# Tests link the static library plus the in-tree GGUF writer.
$(B)/tests/%: tests/%.c tests/gguf_writer.c tests/gguf_writer.h tests/recorded.c tests/recorded.h \
              tests/arch_spec.c tests/arch_spec.h \
              tests/test_util.h $(B)/libggfit.a | $(B)/tests
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/gguf_writer.c tests/recorded.c tests/arch_spec.c $(B)/libggfit.a \
	    $(LDLIBS) $(shell pkg-config --libs cmocka) -lz

# NVML as the device tests see it: a library with NVML's real interface.
$(B)/tests/libfake-nvml.so: tests/fake_nvml.c | $(B)/tests
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ $<
$(B)/tests/test_devices: $(B)/tests/libfake-nvml.so

test: all $(TEST_BIN) $(B)/plan $(B)/ggfit.1
	@sh tests/run.sh $(B) $(MODELS) $(TESTS)

# Everything CI runs: sanitizers, valgrind, a short fuzz, then the suite,
# whose last line is the "tests: N passed, N failed" summary.
check:
	$(MAKE) asan
	$(MAKE) tsan
	$(MAKE) valgrind
	$(MAKE) fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
	$(MAKE) wasm-test
	$(MAKE) test

# The sanitizer run also checks every resumed split against one from
# scratch (CONTRIBUTING.md).
asan:
	GGFIT_SCHED_VERIFY=1 \
	$(MAKE) B=build-asan STATIC_CLI=0 CC=clang OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" test

# Any data race report fails the run (exit status 66 from the test binary).
tsan:
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 $(TSAN_OPTIONS)" \
	$(MAKE) B=build-tsan STATIC_CLI=0 CC=clang OPT="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=thread" test

valgrind: all $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== valgrind $$t"; \
	    GGFIT_MODELS=$(MODELS) GGFIT_MALFORMED=tests/malformed \
	    valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=all \
	    --num-callers=30 --child-silent-after-fork=yes --suppressions=tests/valgrind.supp $$t; done
	valgrind -q --error-exitcode=1 --leak-check=full $(B)/ggfit-dynamic inspect -m $(MODELS)/gpt-oss-120b-mxfp4.gguf --json --tensors >/dev/null

FUZZ_CFLAGS = $(CSTD) -O1 -g -DGGFIT_FUZZ -Iinclude -Isrc -fsanitize=fuzzer,address,undefined $(shell pkg-config --cflags $(PKGS))
FUZZ_CONFIG_SECONDS ?= 20
fuzz-build: build-fuzz/fuzz_gguf build-fuzz/fuzz_config
build-fuzz/fuzz_config: fuzz/fuzz_config.c $(LIB_SRC) $(wildcard src/*/*.h) include/ggfit.h include/ggfit_app.h build-fuzz/catalog_data.h build-fuzz/llama_args_data.h
	mkdir -p build-fuzz
	clang $(FUZZ_CFLAGS) -Ibuild-fuzz -o $@ fuzz/fuzz_config.c $(LIB_SRC) $(LDLIBS)
build-fuzz/fuzz_gguf: fuzz/fuzz_gguf.c $(LIB_SRC) $(wildcard src/*/*.h) include/ggfit.h include/ggfit_app.h build-fuzz/catalog_data.h build-fuzz/llama_args_data.h
	mkdir -p build-fuzz
	clang $(FUZZ_CFLAGS) -Ibuild-fuzz -o $@ fuzz/fuzz_gguf.c $(LIB_SRC) $(LDLIBS)

# Seeds: the malformed catalogue, the shipped layouts, and the small headers
# of every architecture and projector type (data/tiny, data/real), whose
# mutations reach each builder's arithmetic.
# The configs' reader: llama-swap's and the router's files as seeds.
fuzz: build-fuzz/fuzz_gguf build-fuzz/fuzz_config
	mkdir -p build-fuzz/corpus build-fuzz/corpus-config
	build-fuzz/fuzz_gguf -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	    -artifact_prefix=build-fuzz/ \
	    -timeout=10 build-fuzz/corpus tests/malformed fuzz/seeds $(MODELS) data/tiny data/real
	build-fuzz/fuzz_config -max_total_time=$(FUZZ_CONFIG_SECONDS) -max_len=16384 \
	    -rss_limit_mb=2048 -artifact_prefix=build-fuzz/config- -timeout=10 \
	    build-fuzz/corpus-config tests/swap tests/router

# Regenerates the committed catalogue of malformed files.
malformed: $(B)/mkmalformed
	$(B)/mkmalformed tests/malformed

$(B)/mkmalformed: tests/mkmalformed.c tests/gguf_writer.c tests/gguf_writer.h | $(B)/tests
	$(CC) $(CFLAGS) -o $@ tests/mkmalformed.c tests/gguf_writer.c

# The speed model against published llama-bench figures (not part of test).
speedcheck: all
	python3 tools/speedcheck.py --ggfit $(B)/ggfit

# ggfit's CPU predictions against llama-bench run on this machine, on
# random-weight models (data/speed/README.md): LLAMA_BENCH=its path.
speedcheck-local: all
	LLAMA_BENCH="$(LLAMA_BENCH)" python3 tools/speedcheck_local.py --measure --ggfit $(B)/ggfit

bench: all $(B)/bench $(B)/vocab.gguf
	$(B)/bench $(MODELS) $(B)/ggfit $(B)/vocab.gguf

# What each piece of the incremental machinery buys the commands a user
# runs (GGFIT_CACHE; part of bench too).
bench-cache: all $(B)/bench
	$(B)/bench --pieces $(MODELS) $(B)/ggfit

# gpt-oss-120b's header with a tokenizer of its real size (12.9 MB).
$(B)/vocab.gguf: tools/mkvocab.py $(MODELS)/gpt-oss-120b-mxfp4.gguf
	python3 tools/mkvocab.py $(MODELS)/gpt-oss-120b-mxfp4.gguf $@

$(B)/bench: tests/bench.c $(B)/libggfit.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libggfit.a $(LDLIBS)

# ---- WebAssembly: the same sources, built with Debian's emscripten -------------
#   make wasm       build-wasm/ggfit-wasm.js (node, the npm package's) and
#                   build-wasm/web/ (the page: static files, one script each)
# jansson and libyaml come from Debian's source packages (scripts/wasm-deps.sh); -ot
# patterns use the JavaScript engine's RegExp (src/project/regex.c).
EMCC    ?= emcc
W        = build-wasm
# Debian's emcc runs its JavaScript optimizer with Debian's node modules,
# and builds its C library once into its cache: the system's where it may
# write there, else one under build-wasm
export NODE_PATH := $(NODE_PATH):/usr/share/nodejs
ifeq ($(shell test -w /usr/share/emscripten/cache && echo w),)
export EM_CACHE := $(abspath $(W))/emcache
endif
WASM_SRC = $(filter-out $(NATIVE_ONLY),$(sort $(wildcard src/*/*.c)))
WASM_OBJ = $(WASM_SRC:src/%.c=$(W)/obj/%.o)
WASM_OPT ?= -O2
WASM_CFLAGS = $(CSTD) $(CWARNS) -Wno-missing-field-initializers $(WASM_OPT) -Iinclude -Isrc \
              -I$(W) -I$(W)/deps/jansson/include -I$(W)/deps/yaml/include
WASM_LDFLAGS = $(WASM_OPT) -sMODULARIZE=1 -sEXPORT_NAME=ggfitWasm -sALLOW_MEMORY_GROWTH=1 \
               -sINITIAL_MEMORY=33554432 -sTOTAL_STACK=8388608 -sINVOKE_RUN=0 \
               -sEXIT_RUNTIME=0 -sEXPORTED_RUNTIME_METHODS=callMain,FS,ENV,ccall,UTF8ToString \
               -sEXPORTED_FUNCTIONS=_main,_getenv,_setenv,_unsetenv --js-library wasm/library.js
WASM_JANSSON = $(W)/deps/jansson/lib/libjansson.a
WASM_YAML    = $(W)/deps/yaml/lib/libyaml.a

# one run of wasm-deps.sh builds both (each skipped when already built)
$(WASM_JANSSON) $(WASM_YAML) &: scripts/wasm-deps.sh
	sh scripts/wasm-deps.sh $(W)/deps

$(W)/obj/%.o: src/%.c | $(WASM_JANSSON) $(WASM_YAML)
	@mkdir -p $(@D)
	$(EMCC) $(WASM_CFLAGS) -MMD -MP -c $< -o $@
-include $(WASM_OBJ:.o=.d)
$(W)/obj/devices/catalog.o: $(W)/catalog_data.h
$(W)/obj/common/llama_args.o: $(W)/llama_args_data.h

$(W)/libggfit.a: $(WASM_OBJ)
	emar rcs $@ $^

# node: files through node's own fs (NODERAWFS), the .wasm beside the script
$(W)/ggfit-wasm.js: cli/ggfit.c $(W)/commands_data.h $(W)/libggfit.a wasm/library.js
	$(EMCC) $(WASM_CFLAGS) $(WASM_LDFLAGS) -sENVIRONMENT=node -sNODERAWFS=1 -o $@ \
	    cli/ggfit.c $(W)/libggfit.a $(WASM_JANSSON) $(WASM_YAML)

# the page: the module's loader and its .wasm, and the .wasm again as a
# script (base64) for a page opened from file://, which may load a script
# but not fetch a file; local files through WORKERFS as the page reads them
$(W)/web/ggfit-wasm.js: cli/ggfit.c $(W)/commands_data.h $(W)/libggfit.a wasm/library.js
	@mkdir -p $(@D)
	$(EMCC) $(WASM_CFLAGS) $(WASM_LDFLAGS) -sENVIRONMENT=web,worker \
	    -lworkerfs.js -sFORCE_FILESYSTEM=1 -o $@ cli/ggfit.c $(W)/libggfit.a $(WASM_JANSSON) $(WASM_YAML)
$(W)/web/ggfit-wasm-file.js: $(W)/web/ggfit-wasm.js
	{ printf 'var GGFIT_WASM_BASE64 = "'; base64 -w0 $(W)/web/ggfit-wasm.wasm; printf '";\n'; } \
	    >$@.tmp && mv $@.tmp $@

# the page's own files beside it (web/), and the JavaScript API
WEB_FILES = $(patsubst web/%,$(W)/web/%,$(wildcard web/*.html web/*.js web/*.css web/*.svg))
$(W)/web/%: web/%
	@mkdir -p $(@D)
	cp $< $@
$(W)/web/ggfit.js $(W)/ggfit.js: wasm/ggfit.js
	@mkdir -p $(@D)
	cp $< $@

# the page's example (and warm-up): a shipped layout's header, gzip in base64
EXAMPLE = $(MODELS)/qwen3-30b-a3b-Q4_K_M.gguf
$(W)/web/example.js: $(EXAMPLE)
	@mkdir -p $(@D)
	{ printf 'var GGFIT_EXAMPLE = { name: "%s", gz: "' $(notdir $<); \
	  gzip -9n <$< | base64 -w0; printf '" };\n'; } >$@.tmp && mv $@.tmp $@

wasm: $(W)/ggfit-wasm.js $(W)/ggfit.js $(W)/web/ggfit-wasm.js $(W)/web/ggfit-wasm-file.js \
      $(W)/web/ggfit.js $(WEB_FILES) \
      $(W)/web/example.js

# The npm package (make npm): the node build, the JavaScript API, the node
# CLI (npm/bin/ggfit.js) and the licences of what is compiled in, packed
# by npm pack into build-wasm/ggfit-VERSION.tgz.
VERSION := $(shell awk -F'"' '/^.define GGFIT_VERSION / { print $$2 }' include/ggfit.h)
NPM_FILES = $(W)/npm/package.json $(W)/npm/bin/ggfit.js $(W)/npm/README.md \
            $(W)/npm/THIRD_PARTY.md $(W)/npm/ggfit.js $(W)/npm/ggfit-wasm.js
$(W)/npm/package.json: npm/package.json.in include/ggfit.h
	@mkdir -p $(@D)
	sed 's/@VERSION@/$(VERSION)/' $< >$@
$(W)/npm/bin/ggfit.js: npm/bin/ggfit.js
	@mkdir -p $(@D)
	cp $< $@
$(W)/npm/README.md: npm/README.md
	cp $< $@
$(W)/npm/THIRD_PARTY.md: $(WASM_JANSSON) $(WASM_YAML) wasm/third_party.sh
	sh wasm/third_party.sh $(W)/deps/jansson/LICENSE $(W)/deps/yaml/LICENSE >$@
$(W)/npm/ggfit.js: wasm/ggfit.js
	cp $< $@
$(W)/npm/ggfit-wasm.js: $(W)/ggfit-wasm.js
	cp $< $@
	cp $(W)/ggfit-wasm.wasm $(W)/npm/ggfit-wasm.wasm
$(W)/ggfit-$(VERSION).tgz: $(NPM_FILES)
	cd $(W)/npm && npm pack --silent --pack-destination .. >/dev/null
npm: $(W)/ggfit-$(VERSION).tgz

# The WebAssembly build against the native one: every reference case's
# JSON equal (tests/wasm/agree.js), every malformed file and every
# architecture's small header answered alike (tests/wasm/files.js), the
# JavaScript API's commands and one module's runs in sequence
# (tests/wasm/api.js), the npm package's CLI equal to the native CLI (tests/npm/run.sh), and the
# page in Debian's chromium (tests/web/run.sh: screenshots in
# build-wasm/artifacts).
wasm-test: all wasm npm
	node tests/wasm/agree.js $(B)/ggfit $(W) data/reference/cases.jsonl $(MODELS)
	node tests/wasm/files.js $(B)/ggfit $(W) tests/malformed data/tiny data/real
	node tests/wasm/api.js $(B)/ggfit $(W) $(MODELS)
	sh tests/npm/run.sh $(W)/ggfit-$(VERSION).tgz $(B)/ggfit $(MODELS)
	sh tests/web/run.sh $(W) $(MODELS) $(W)/artifacts $(B)/ggfit || [ $$? -eq 77 ]

clean:
	rm -rf build build-asan build-tsan build-fuzz build-wasm
