#!/usr/bin/env bash
# run-fuzz.sh SECONDS TARGET... — run each libFuzzer target for SECONDS, seeded with real files,
# after the inputs that once crashed it (Tests/fuzz/regressions/<target>/, kept as files), and
# print one closing line: fuzz: T targets, E execs, X crashes
set -uo pipefail
seconds=$1; shift
B=${B:-build}
corpus_root=$B/fuzz/corpus
mkdir -p "$corpus_root/seeds"
"$B/fuzz/make_seeds" "$corpus_root/seeds" || { echo "fuzz: cannot make seeds"; exit 1; }
targets=0 execs=0 crashes=0
for t in "$@"; do
  targets=$((targets + 1))
  mkdir -p "$corpus_root/$t" "$B/fuzz/artifacts/$t"
  log=$B/fuzz/$t.log
  # inputs that once crashed the target (Tests/fuzz/regressions/<target>/) must run clean first
  regress="Tests/fuzz/regressions/$t"
  if [ -d "$regress" ] && [ -n "$(ls "$regress")" ]; then
    if ! "$B/fuzz/$t" "$regress"/* >"$log.regressions" 2>&1; then
      crashes=$((crashes + 1))
      echo "$t: a regression input fails again; log $log.regressions" >&2
      tail -30 "$log.regressions" >&2
    fi
  fi
  seeds="$corpus_root/seeds"                      # real database files
  [ -d "Tests/fuzz/${t#fuzz_}-seeds" ] && seeds="Tests/fuzz/${t#fuzz_}-seeds"  # e.g. queries
  "$B/fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
     -artifact_prefix="$B/fuzz/artifacts/$t/" "$corpus_root/$t" "$seeds" >"$log" 2>&1
  rc=$?
  n=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
  [ -z "$n" ] && n=$(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#' || echo 0)
  execs=$((execs + ${n:-0}))
  found=$(ls "$B/fuzz/artifacts/$t" 2>/dev/null | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    crashes=$((crashes + (found > 0 ? found : 1)))
    echo "$t: exit $rc, artifacts in $B/fuzz/artifacts/$t; log $log" >&2
    tail -30 "$log" >&2
  fi
done
echo "fuzz: $targets targets, $execs execs, $crashes crashes"
[ "$crashes" -eq 0 ]
