# Strata — build, test, benchmark and fuzz the C core; the Swift package builds with SwiftPM.
#
#   make deps        install the Debian packages the build, tests and benchmarks need (if missing)
#   make build       the library and every test program
#   make test        everything a change must pass (the README's test command)
#   make lib         build/libstrata.so, build/libstrata.a, build/strata.pc
#   make install     PREFIX=/usr/local (the `strata` tool, header, libraries, pkg-config file)
#   make docs        the DocC documentation into build/docs, and its coverage check
#   make cli         the `strata` command-line tool (Sources/StrataCLI/.build/release/strata)
#   make test-cli    the tool's tests (Tests/cli, pytest, against the debug build)
#   make demo        the demo program
#   make crashtest   RUNS=N  kill a writer at random moments, check every reported commit
#   make powerloss   RUNS=N  drop, reorder and tear unsynced writes, check every durable commit
#   make faults      fail the k-th write, sync or grow, for every k of a workload
#   make stress      SECONDS=N  writer and reader processes on one file, killed at random and in
#                    storms: money adds up in every snapshot, no durable commit lost
#   make fuzz        SECONDS=N  libFuzzer targets (toolchain clang)
#   make bench-swift the Swift API beside Strata's C API and GRDB
#   make python      pip install ./python (the `strata` Python package); make test-python its tests
#   make bench-python PY_N=N  the Python package beside sqlite3 and the lmdb package
#   make asan / tsan the C tests under AddressSanitizer+UBSan (and the free-list map self-check,
#                    ST_CHECK_REUSE) / ThreadSanitizer

SHELL := /bin/bash
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= $(shell command -v clang 2>/dev/null || echo /opt/swift/usr/bin/clang)
SAN_LD := -fuse-ld=lld
# The toolchain's TSan runtime also intercepts libdispatch: link the toolchain's copy.
SWIFT_LIBDIR := $(dir $(CLANG))../lib/swift/linux
TSAN_LIBS := -L$(SWIFT_LIBDIR) -Wl,-rpath,$(SWIFT_LIBDIR) -ldispatch -lBlocksRuntime
PREFIX ?= /usr/local
B := build
RUNS ?= 200
PL_RUNS ?= 300
SECONDS ?= 60
N ?= 1000000
# ENCRYPTED=1: crashtest, powerloss, faults and stress on encrypted files
ENCRYPTED ?= 0

DEB_PACKAGES := liblz4-dev libxxhash-dev libutf8proc-dev libssl-dev liburing-dev libsqlite3-dev libsqlcipher-dev liblmdb-dev pkg-config

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE $(WARN) -ICCore/include -ICCore/src -g
CFLAGS ?= -O2
LIBS := -lxxhash -llz4 -lutf8proc -lcrypto -luring -lpthread -lm

# The core's layers are the folders of CCore/src (base, os, storage, btree, objects, query, api).
SRC := $(wildcard CCore/src/*/*.c)
HDR := $(wildcard CCore/src/*/*.h) CCore/include/strata.h
# The core is compiled once per kind of build, and every program of that kind links the objects:
#   obj   release (the libraries, bench, examples)     dbg    release + ST_DEBUG (ST_ASSERT on): tests
#   pic   release, position independent (libstrata.so) port   dbg + ST_PORTABLE_SCAN (plain-C scan)
#   asan  AddressSanitizer+UBSan, ST_CHECK_REUSE       tsan   ThreadSanitizer
#   fuzzo libFuzzer's coverage + ASan/UBSan
objs = $(SRC:CCore/src/%.c=$(B)/$(1)/%.o)
OBJ := $(call objs,obj)
PIC_OBJ := $(call objs,pic)
DBG_OBJ := $(call objs,dbg)
PORT_OBJ := $(call objs,port)
ASAN_OBJ := $(call objs,asan-obj)
TSAN_OBJ := $(call objs,tsan-obj)
FUZZ_OBJ := $(call objs,fuzzo)
DEBUG := -DST_DEBUG
ASAN_FLAGS := -O1 $(DEBUG) -DST_CHECK_REUSE -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=undefined
TSAN_FLAGS := -O1 $(DEBUG) -fsanitize=thread
FUZZ_FLAGS := -O1 $(DEBUG) -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
# Objects that only pattern rules name would be deleted as intermediate files after each build.
.SECONDARY: $(DBG_OBJ) $(PORT_OBJ) $(ASAN_OBJ) $(TSAN_OBJ) $(FUZZ_OBJ)
TESTS := test_engine test_objects test_query test_query_portable test_clusters test_readshare test_verify_objects test_index_scan test_fulltext test_encryption test_btree_batch test_commitlog_io test_freelist_delta test_hostile test_damage test_badargs test_disk_full test_compact test_changes crashtest powerloss faults stress
TEST_BIN := $(TESTS:%=$(B)/%)
EXAMPLES := $(patsubst CCore/examples/%.c,$(B)/examples/%,$(wildcard CCore/examples/*.c))

.PHONY: all deps build lib install cli test-cli docs demo test test-c crashtest powerloss faults stress fuzz asan tsan \
        swift-test bench bench-swift python test-python bench-python clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: lib $(TEST_BIN) $(EXAMPLES) $(B)/bench $(B)/crypt_bench $(B)/engine_bench $(B)/space_bench $(B)/search_bench

# ---------------------------------------------------------------- the library

$(B)/obj/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(B)/pic/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(B)/dbg/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $(DEBUG) -c $< -o $@

$(B)/port/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $(DEBUG) -DST_PORTABLE_SCAN -c $< -o $@

$(B)/asan-obj/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CFLAGS_BASE) $(ASAN_FLAGS) -c $< -o $@

$(B)/tsan-obj/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CFLAGS_BASE) $(TSAN_FLAGS) -c $< -o $@

$(B)/fuzzo/%.o: CCore/src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CLANG) $(CFLAGS_BASE) $(FUZZ_FLAGS) -c $< -o $@

$(B)/examples $(B)/fuzz:
	mkdir -p $@

# One relocatable object whose internal symbols are made local: only strata_* stay global.
$(B)/libstrata.a: $(OBJ)
	ld -r -o $(B)/strata-all.o $(OBJ)
	objcopy --localize-hidden $(B)/strata-all.o
	rm -f $@ && ar rcs $@ $(B)/strata-all.o

$(B)/libstrata.so: $(PIC_OBJ)
	$(CC) -shared -Wl,-soname,libstrata.so.0 -o $@ $(PIC_OBJ) $(LIBS)

# strata.pc for PREFIX (install writes it again for the PREFIX it is given).
PC_TEXT = 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: strata\nDescription: Strata embedded object database (C core)\nVersion: 0.14.0\nLibs: -L$${libdir} -lstrata\nLibs.private: %s\nCflags: -I$${includedir}\n'

$(B)/strata.pc: Makefile
	@mkdir -p $(B)
	@printf $(PC_TEXT) '$(PREFIX)' '$(LIBS)' > $@

lib: $(B)/libstrata.a $(B)/libstrata.so $(B)/strata.pc
	@bad=$$(nm -D --defined-only $(B)/libstrata.so | awk '$$2 ~ /[TDBR]/ {print $$3}' | grep -v '^strata_' || true); \
	if [ -n "$$bad" ]; then echo "libstrata.so exports non-strata symbols: $$bad"; exit 1; fi
	@bad=$$(nm --defined-only -g $(B)/libstrata.a | awk 'NF==3 {print $$3}' | grep -v '^strata_' || true); \
	if [ -n "$$bad" ]; then echo "libstrata.a exports non-strata symbols: $$bad"; exit 1; fi

# The `strata` tool (Swift, a package of its own in Sources/StrataCLI): release build for
# `make install`; CLI_CONFIG=debug for the test run's install check (the build its tests use).
CLI_CONFIG ?= release
CLI_PKG := --package-path Sources/StrataCLI
cli:
	swift build $(CLI_PKG) -c $(CLI_CONFIG)

install: lib cli
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $$(swift build $(CLI_PKG) -c $(CLI_CONFIG) --show-bin-path)/strata $(DESTDIR)$(PREFIX)/bin/strata
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 CCore/include/strata.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/libstrata.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libstrata.so $(DESTDIR)$(PREFIX)/lib/libstrata.so.0
	ln -sf libstrata.so.0 $(DESTDIR)$(PREFIX)/lib/libstrata.so
	printf $(PC_TEXT) '$(PREFIX)' '$(LIBS)' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/strata.pc

# ---------------------------------------------------------------- tests and examples

# Test programs link the core's debug objects (ST_ASSERT on); white-box tests (those that
# include a layer's door) call internal functions, which the objects keep visible.
$(B)/%: Tests/c/%.c Tests/c/testlib.h Tests/c/workload.h Tests/c/sampledb.h $(HDR) $(DBG_OBJ)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $(DEBUG) -ITests/c $< -o $@ $(DBG_OBJ) $(LIBS)

# The query tests on the scan's plain-C code (rowmask.h), which the SSE2 build does not run.
$(B)/test_query_portable: Tests/c/test_query_portable.c Tests/c/test_query.c Tests/c/testlib.h $(HDR) $(PORT_OBJ)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $(DEBUG) -DST_PORTABLE_SCAN -ITests/c $< -o $@ $(PORT_OBJ) $(LIBS)
$(B)/asan/test_query_portable: SAN_EXTRA := -DST_PORTABLE_SCAN
$(B)/asan/test_query_portable: Tests/c/test_query.c

$(B)/examples/%: CCore/examples/%.c $(B)/libstrata.a | $(B)/examples
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS)

demo: deps lib $(EXAMPLES)
	@echo "== the Swift demo (import Strata)"
	@swift run -q StrataDemo
	@for e in $(EXAMPLES); do echo "== $$e"; $$e || exit 1; done

test: deps build
	@bash Tests/run-tests.sh

# The documentation: the module's symbol graph (from the debug build) and the DocC catalog,
# rendered by the toolchain's docc into build/docs (static hosting; no network, no plugin), then
# the coverage check: every public declaration documented, every article linked.
SWIFT_TRIPLE = $(shell swiftc -print-target-info 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['target']['triple'])")
docs:
	swift build --target Strata
	rm -rf $(B)/symbol-graphs $(B)/docs && mkdir -p $(B)/symbol-graphs
	swift-symbolgraph-extract -module-name Strata -target $(SWIFT_TRIPLE) -minimum-access-level public \
	  -I $$(swift build --show-bin-path)/Modules -I CCore/include \
	  -Xcc -fmodule-map-file=$$(swift build --show-bin-path)/CCore.build/module.modulemap \
	  -output-dir $(B)/symbol-graphs
	docc convert Sources/Strata/Strata.docc --additional-symbol-graph-dir $(B)/symbol-graphs \
	  --fallback-display-name Strata --fallback-bundle-identifier dev.strata.Strata \
	  --transform-for-static-hosting --output-path $(B)/docs
	python3 Tests/check-docs.py $(B)/symbol-graphs Sources/Strata/Strata.docc
	@echo "docs: build/docs/index.html (serve the folder: python3 -m http.server -d build/docs, then /documentation/strata)"

test-cli:
	swift build $(CLI_PKG)
	python3 -m pip install -q ./python
	STRATA_CLI=$$(swift build $(CLI_PKG) --show-bin-path)/strata python3 -m pytest -q -p no:cacheprovider Tests/cli

test-c: build
	$(B)/test_engine
	$(B)/test_objects
	$(B)/test_query
	$(B)/test_query_portable
	$(B)/test_clusters
	$(B)/test_readshare
	$(B)/test_verify_objects
	$(B)/test_index_scan
	$(B)/test_fulltext
	$(B)/test_encryption
	$(B)/test_btree_batch
	$(B)/test_commitlog_io
	$(B)/test_freelist_delta
	$(B)/test_hostile
	$(B)/test_damage
	$(B)/test_badargs
	$(B)/test_disk_full
	$(B)/test_compact
	$(B)/test_changes

crashtest: $(B)/crashtest
	STRATA_TEST_ENCRYPTED=$(ENCRYPTED) $(B)/crashtest $(RUNS)

powerloss: $(B)/powerloss
	STRATA_TEST_ENCRYPTED=$(ENCRYPTED) $(B)/powerloss $(PL_RUNS)

faults: $(B)/faults
	STRATA_TEST_ENCRYPTED=$(ENCRYPTED) $(B)/faults

stress: $(B)/stress
	STRATA_TEST_ENCRYPTED=$(ENCRYPTED) $(B)/stress $(SECONDS)

$(B)/engine_bench: Benchmarks/engine_bench.c $(B)/libstrata.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS)

$(B)/space_bench: Benchmarks/space_bench.c Benchmarks/benchlib.h $(B)/libstrata.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS) -lsqlite3

$(B)/search_bench: Benchmarks/search_bench.c Benchmarks/benchlib.h $(B)/libstrata.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS) -lsqlite3

$(B)/bench: Benchmarks/bench.c $(B)/libstrata.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS) -lsqlite3 -llmdb

# bench.c again, on encrypted Strata beside plain Strata and SQLCipher (which replaces SQLite's
# symbols: a program of its own).
$(B)/crypt_bench: Benchmarks/bench.c $(B)/libstrata.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -DBENCH_CRYPT $< -o $@ $(B)/libstrata.a $(LIBS) -lsqlcipher

# The side-by-side run (N objects, REPS repetitions), then the engine's own numbers.
REPS ?= 3
SEARCH_N ?= 200000
bench: deps $(B)/bench $(B)/crypt_bench $(B)/engine_bench $(B)/space_bench $(B)/search_bench
	@mkdir -p $(B)/bench-data
	$(B)/bench -n $(N) -r $(REPS) -d $(B)/bench-data
	$(B)/crypt_bench -n $(N) -r $(REPS) -d $(B)/bench-data
	$(B)/engine_bench $(B)/bench-data
	$(B)/space_bench -n $(N) -d $(B)/bench-data
	$(B)/search_bench -n $(SEARCH_N) -d $(B)/bench-data

# The Swift API beside Strata's C API and GRDB (Benchmarks/SwiftBench, its own package).
bench-swift: deps
	cd Benchmarks/SwiftBench && swift run -c release bench-swift

swift-test:
	swift test 2>&1 | tail -n 30

# ---------------------------------------------------------------- Python (python/: cffi over strata.h)

python:
	python3 -m pip install -q ./python

test-python: python
	python3 -m pytest -q python/tests

# Strata's package beside sqlite3 (WAL, FULL) and the lmdb package (installed from PyPI if missing).
PY_N ?= 100000
bench-python: python
	@python3 -c "import lmdb" 2>/dev/null || python3 -m pip install -q lmdb
	python3 python/bench.py $(PY_N) $(REPS)

# ---------------------------------------------------------------- sanitizers

# The sanitizer builds of the portable scan compile the core with it (a few files differ).
$(B)/asan/%: Tests/c/%.c Tests/c/testlib.h Tests/c/workload.h Tests/c/sampledb.h $(HDR) $(ASAN_OBJ)
	@mkdir -p $(B)/asan
	$(CLANG) $(CFLAGS_BASE) $(ASAN_FLAGS) $(SAN_EXTRA) $(SAN_LD) -ITests/c $< \
	  $(if $(SAN_EXTRA),$(SRC),$(ASAN_OBJ)) -o $@ $(LIBS)

$(B)/tsan/%: Tests/c/%.c Tests/c/testlib.h Tests/c/workload.h Tests/c/sampledb.h $(HDR) $(TSAN_OBJ)
	@mkdir -p $(B)/tsan
	$(CLANG) $(CFLAGS_BASE) $(TSAN_FLAGS) $(SAN_LD) -ITests/c $< $(TSAN_OBJ) -o $@ $(LIBS) $(TSAN_LIBS)

asan: $(TESTS:%=$(B)/asan/%)
	$(B)/asan/test_engine
	$(B)/asan/test_objects
	$(B)/asan/test_query
	$(B)/asan/test_query_portable
	$(B)/asan/test_clusters
	$(B)/asan/test_readshare
	$(B)/asan/test_verify_objects
	$(B)/asan/test_index_scan
	$(B)/asan/test_fulltext
	$(B)/asan/test_encryption
	$(B)/asan/test_btree_batch
	$(B)/asan/test_commitlog_io
	$(B)/asan/test_freelist_delta
	$(B)/asan/test_hostile
	$(B)/asan/test_damage
	$(B)/asan/test_badargs
	$(B)/asan/test_disk_full
	$(B)/asan/test_compact
	$(B)/asan/test_changes
	$(B)/asan/crashtest 20
	$(B)/asan/powerloss 40
	$(B)/asan/faults

tsan: $(B)/tsan/test_engine $(B)/tsan/test_compact $(B)/tsan/test_encryption $(B)/tsan/test_readshare
	TSAN_OPTIONS="halt_on_error=1" $(B)/tsan/test_engine
	TSAN_OPTIONS="halt_on_error=1" $(B)/tsan/test_compact
	TSAN_OPTIONS="halt_on_error=1" $(B)/tsan/test_encryption
	TSAN_OPTIONS="halt_on_error=1" $(B)/tsan/test_readshare

# ---------------------------------------------------------------- fuzzing

FUZZ_TARGETS := $(patsubst Tests/fuzz/%.c,%,$(wildcard Tests/fuzz/fuzz_*.c))

$(B)/fuzz/%: Tests/fuzz/%.c Tests/fuzz/objops.h $(HDR) $(FUZZ_OBJ) | $(B)/fuzz
	$(CLANG) $(CFLAGS_BASE) $(FUZZ_FLAGS) -fsanitize=fuzzer $(SAN_LD) $< $(FUZZ_OBJ) -o $@ $(LIBS)

$(B)/fuzz/make_seeds: Tests/fuzz/make_seeds.c Tests/fuzz/objops.h Tests/c/workload.h $(B)/libstrata.a | $(B)/fuzz
	$(CC) $(CFLAGS_BASE) $(CFLAGS) $< -o $@ $(B)/libstrata.a $(LIBS)

fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/%) $(B)/fuzz/make_seeds
	@bash Tests/fuzz/run-fuzz.sh $(SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(B)
