#!/usr/bin/env bash
# run-tests.sh — every suite `make test` runs, in order, then one closing line:
#   tests: P passed, F failed
# Unit suites count their own tests; the crash, power-loss and fault runs, the demo and the
# installed-library check count as one test each.
set -uo pipefail
B=${B:-build}
RUNS=${RUNS:-200}
PL_RUNS=${PL_RUNS:-300}
passed=0
failed=0
log=$(mktemp)

count_line() { # add "NAME: X passed, Y failed" from the log
  local line
  line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  passed=$((passed + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
  failed=$((failed + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
}

one() { # one() NAME CMD...: the command is one test
  echo "== $1"
  shift
  if "$@" > "$log" 2>&1; then
    passed=$((passed + 1)); tail -n 3 "$log"
  else
    failed=$((failed + 1)); tail -n 40 "$log"; echo "FAILED"
  fi
}

echo "== engine tests"
"$B/test_engine" > "$log" 2>&1; tail -n 1 "$log"; count_line engine
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== object tests"
"$B/test_objects" > "$log" 2>&1; tail -n 1 "$log"; count_line objects
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== query tests"
"$B/test_query" > "$log" 2>&1; tail -n 1 "$log"; count_line query
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== query tests on the portable (plain C) scan"
"$B/test_query_portable" > "$log" 2>&1; tail -n 1 "$log"; count_line query-portable
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== the shape of clusters"
"$B/test_clusters" > "$log" 2>&1; tail -n 1 "$log"; count_line clusters
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== index ranges and prefixes"
"$B/test_index_scan" > "$log" 2>&1; tail -n 1 "$log"; count_line index-scan
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== full-text indexes and TEXT, against a brute force"
"$B/test_fulltext" > "$log" 2>&1; tail -n 1 "$log"; count_line fulltext
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== encryption at rest: nothing readable on disk, only the key opens, damage named"
"$B/test_encryption" > "$log" 2>&1; tail -n 1 "$log"; count_line encryption
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== sorted tree batches through a finger"
"$B/test_btree_batch" > "$log" 2>&1; tail -n 1 "$log"; count_line btree-batch
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== the commit log and the file system"
"$B/test_commitlog_io" > "$log" 2>&1; tail -n 1 "$log"; count_line commitlog-io
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== the free-list delta in the meta page"
"$B/test_freelist_delta" > "$log" 2>&1; grep -E "small commits:" "$log"; tail -n 1 "$log"
count_line freelist-delta
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== hostile input: a clear error, never a crash"
"$B/test_hostile" > "$log" 2>&1; tail -n 1 "$log"; count_line hostile
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== bad arguments to every public call"
"$B/test_badargs" > "$log" 2>&1; grep -E "cases:|CRASH|returned|without" "$log"; tail -n 1 "$log"; count_line badargs

echo "== damaged files: every page, the file's length, the commit log"
"$B/test_damage" > "$log" 2>&1; grep -E "^  [a-z].*variants" "$log"; tail -n 1 "$log"; count_line damage
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== objects, queries, full-text search and changes again, on encrypted files"
for t in objects query fulltext changes freelist_delta; do
  env STRATA_TEST_ENCRYPTED=1 "$B/test_$t" > "$log" 2>&1; tail -n 1 "$log"; count_line "${t//_/-}"
  grep -q "FAIL" "$log" && grep "FAIL" "$log"
done

echo "== the damage sweep on an encrypted file"
env STRATA_TEST_ENCRYPTED=1 "$B/test_damage" > "$log" 2>&1; grep -E "^  [a-z].*variants" "$log"; tail -n 1 "$log"; count_line damage
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== full disks, big values, opens racing a recovery"
"$B/test_disk_full" > "$log" 2>&1; grep -E "^  [A-Z_]+: |rounds|no tmpfs" "$log"; tail -n 1 "$log"; count_line disk-full
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== copies and compaction: every value kept, space given back, failures leave the file whole"
"$B/test_compact" > "$log" 2>&1; grep -E "^  [a-z].*:" "$log"; tail -n 1 "$log"; count_line compact
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== changes between two versions: against a full diff, the cost follows the change"
"$B/test_changes" > "$log" 2>&1; grep -E "^  [a-z0-9].*:" "$log"; tail -n 1 "$log"; count_line changes
grep -q "FAIL" "$log" && grep "FAIL" "$log"

echo "== verify catches broken object invariants"
"$B/test_verify_objects" > "$log" 2>&1; tail -n 1 "$log"; count_line verify-objects
grep -q "FAIL" "$log" && grep "FAIL" "$log"

one "layers (nothing calls or includes up)" Tests/check-layers.sh "$B/dbg"
one "crashtest ($RUNS runs)" "$B/crashtest" "$RUNS"
one "powerloss ($PL_RUNS runs)" "$B/powerloss" "$PL_RUNS"
one "faults" "$B/faults"
one "stress (10 s: 4 writer and 4 reader processes, kills and restart storms)" "$B/stress" 10
one "crashtest on encrypted files (100 runs)" env STRATA_TEST_ENCRYPTED=1 "$B/crashtest" 100
one "powerloss on encrypted files (150 runs)" env STRATA_TEST_ENCRYPTED=1 "$B/powerloss" 150
one "faults on encrypted files" env STRATA_TEST_ENCRYPTED=1 "$B/faults"
one "stress on encrypted files (5 s)" env STRATA_TEST_ENCRYPTED=1 "$B/stress" 5
one "demo (objects)" "$B/examples/demo" "$B/demo.db"
one "demo (key-value trees)" "$B/examples/kv_demo" "$B/kv_demo.db"
one "bench (tiny N, builds and runs)" "$B/bench" -n 2000 -r 1 -c 50 -d "$B/bench-data"
one "encryption bench (tiny N: encrypted Strata, plain Strata, SQLCipher)" "$B/crypt_bench" -n 2000 -r 1 -c 50 -d "$B/bench-data"
one "space bench (tiny N: plain, compacted, packed, SQLite after VACUUM)" "$B/space_bench" -n 3000 -d "$B/bench-data"

install_check() {
  local prefix
  prefix=$(mktemp -d)
  make -s install PREFIX="$prefix" CLI_CONFIG=debug >/dev/null || return 1
  "$prefix/bin/strata" --version | grep -q "^strata " || return 1
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  # shellcheck disable=SC2046
  cc -o "$prefix/demo-shared" CCore/examples/demo.c $(pkg-config --cflags --libs strata) || return 1
  LD_LIBRARY_PATH="$prefix/lib" "$prefix/demo-shared" "$prefix/d.db" >/dev/null || return 1
  # shellcheck disable=SC2046
  cc -o "$prefix/demo-static" CCore/examples/demo.c $(pkg-config --cflags strata) \
     "$prefix/lib/libstrata.a" $(pkg-config --static --libs-only-l strata | sed 's/-lstrata//') || return 1
  "$prefix/demo-static" "$prefix/s.db" >/dev/null || return 1
  echo "installed library, header and strata.pc link and run (shared and static); bin/strata runs"
  rm -rf "$prefix"
}
one "install + pkg-config" install_check

echo "== python: pip install ./python, then its pytest suite"
if python3 -m pip install -q ./python > "$log" 2>&1 && python3 -m pytest -q -p no:cacheprovider python/tests > "$log" 2>&1; then
  tail -n 1 "$log"
  passed=$((passed + $(tail -n 1 "$log" | grep -Eo "[0-9]+ passed" | awk '{print $1}')))
else
  tail -n 40 "$log"; echo "FAILED"
  f=$(tail -n 1 "$log" | grep -Eo "[0-9]+ failed" | awk '{print $1}')
  failed=$((failed + ${f:-1}))
fi
one "python bench (tiny N, runs)" python3 python/bench.py 2000 1

echo "== swift test"
if command -v swift >/dev/null; then
  swift test > "$log" 2>&1
  rc=$?
  # XCTest: "Executed N tests, with F failures"; Swift Testing: "Test run with N tests ... passed"
  # or "... with F issues".
  grep -E "Executed [0-9]+ tests|Test run with [0-9]+ test" "$log" | tail -2
  x=$(grep -Eo "Executed [0-9]+ tests, with [0-9]+ failures" "$log" | tail -1)
  t=$(grep -E "Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)" "$log" | tail -1)
  if [ -n "$x" ] && [ -n "$t" ] && [ $rc -eq 0 ]; then
    passed=$((passed + $(echo "$x" | awk '{print $2}')))
    failed=$((failed + $(echo "$x" | awk '{print $5}')))
    passed=$((passed + $(echo "$t" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/')))
  else
    failed=$((failed + 1)); grep -E "✘|error|Fatal|fatal" "$log" | head -40; tail -n 20 "$log"
  fi
  one "demo (Swift)" swift run -q StrataDemo
  one "docs (DocC site; every public declaration documented, every article linked)" make -s docs
  echo "== the strata tool (Tests/cli: pytest against the built tool)"
  if swift build --package-path Sources/StrataCLI > "$log" 2>&1 && \
     STRATA_CLI="$(swift build --package-path Sources/StrataCLI --show-bin-path)/strata" python3 -m pytest -q -p no:cacheprovider Tests/cli > "$log" 2>&1; then
    tail -n 1 "$log"
    passed=$((passed + $(tail -n 1 "$log" | grep -Eo "[0-9]+ passed" | awk '{print $1}')))
  else
    tail -n 40 "$log"; echo "FAILED"
    f=$(tail -n 1 "$log" | grep -Eo "[0-9]+ failed" | awk '{print $1}')
    failed=$((failed + ${f:-1}))
  fi
else
  echo "swift not found"; failed=$((failed + 1))
fi
rm -f "$log"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
