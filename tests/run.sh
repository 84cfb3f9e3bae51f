#!/bin/sh
# run.sh - the test runner (make test).  Every case is data:
#   tests/golden/NAME.tq + NAME.trace -> NAME.csv   results (CSV), run both
#                                                   optimized and with --no-opt
#   tests/errors/NAME.tq [+ NAME.trace] -> NAME.err exact message, exit 1,
#                                                   nothing stored
#   tests/notes/NAME.tq [+ NAME.trace] -> NAME.note  the exact notes on stderr of
#                       [-> NAME.runnote]           `check` (and of `run` over the
#                                                   trace: NAME.runnote when they
#                                                   differ), exit 0
#   tests/display/NAME.tq + NAME.trace -> NAME.list  drawn objects per step
#                                                   (run --display list)
#   tests/explain/NAME.tq -> NAME.out                `tqmon explain` output
#                         [-> NAME.noopt]            `tqmon explain --no-opt`
#                         [-> NAME.rules]            rules that must fire, and
#                         [-> NAME.norules]          rules that must not, in
#                                                    `tqmon explain --trace`
#                         [+ NAME.args]              more arguments of every
#                                                    `tqmon explain` of NAME (a
#                                                    source: --pm, --kernel ...)
#   tests/unit                                       C unit tests (build/asan/unit)
#   tests/prop.c                                     property tests: 200 pairs (build/asan/prop),
#                                                    then up to PROP_PAIRS (5000) more with the
#                                                    release build within PROP_SECONDS (300)
#   tests/scripts/*.sh                               scenario scripts (exit 0 = pass,
#                                                   77 = skipped: the reason is printed)
#   tests/fuzz/                                      FUZZ_SECONDS (default 25) of libFuzzer
#                                                    on the front end and the recording
#                                                    parser, FUZZ_COLFIL_SECONDS (10) on
#                                                    the collection-file reader (skipped
#                                                    without clang/libFuzzer)
# Runs under AddressSanitizer and UBSan (build/asan).  Prints failures with a
# diff and ends with the line "N passed, N failed".
set -u
export LC_ALL=C
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$(dirname "$0")/.." || exit 2
T=build/asan/tqmon
OUT=build/test-out
rm -rf "$OUT" && mkdir -p "$OUT"
pass=0
fail=0
skip=0
ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $1"
  [ -n "${2:-}" ] && [ -f "$2" ] && head -40 "$2" | sed 's/^/    /'
}

# ---------------------------------------------------------------- golden results
for tq in tests/golden/*.tq; do
  [ -e "$tq" ] || continue
  n=${tq%.tq}
  name=$(basename "$n")
  trace=$n.trace
  extra=""
  [ -f "$n.args" ] && extra=$(cat "$n.args")
  for mode in opt noopt; do
    flag=""
    [ $mode = noopt ] && flag=--no-opt
    # shellcheck disable=SC2086
    if $T run "$tq" --replay "$trace" --format csv $flag $extra >"$OUT/$name.$mode.csv" 2>"$OUT/$name.$mode.stderr"; then
      if diff -u "$n.csv" "$OUT/$name.$mode.csv" >"$OUT/$name.$mode.diff" 2>&1; then ok; else bad "golden $name ($mode)" "$OUT/$name.$mode.diff"; fi
    else
      bad "golden $name ($mode): exit $?" "$OUT/$name.$mode.stderr"
    fi
  done
done

# ---------------------------------------------------------------- bad input
for tq in tests/errors/*.tq; do
  [ -e "$tq" ] || continue
  n=${tq%.tq}
  name=$(basename "$n")
  db="$OUT/$name.db"
  rm -f "$db"
  if [ -f "$n.trace" ]; then
    $T run "$tq" --replay "$n.trace" --db "$db" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
  else
    $T check "$tq" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
  fi
  rc=$?
  if [ $rc -ne 1 ]; then
    bad "error case $name: exit $rc (expected 1)" "$OUT/$name.stderr"
  elif [ -e "$db" ]; then
    bad "error case $name: the store was written"
  elif grep -q "Sanitizer\|runtime error" "$OUT/$name.stderr"; then
    bad "error case $name: sanitizer report" "$OUT/$name.stderr"
  elif ! diff -u "$n.err" "$OUT/$name.stderr" >"$OUT/$name.diff" 2>&1; then
    bad "error case $name: message differs" "$OUT/$name.diff"
  else
    ok
  fi
done

# ---------------------------------------------------------------- notes
for tq in tests/notes/*.tq; do
  [ -e "$tq" ] || continue
  n=${tq%.tq}
  name=$(basename "$n")
  for cmd in check run; do
    if [ $cmd = check ]; then
      $T check "$tq" >"$OUT/$name.note.stdout" 2>"$OUT/$name.note.$cmd"
    elif [ -f "$n.trace" ]; then
      $T run "$tq" --replay "$n.trace" --quiet >"$OUT/$name.note.stdout" 2>"$OUT/$name.note.$cmd"
    else
      continue
    fi
    rc=$?
    want=$n.note
    [ $cmd = run ] && [ -f "$n.runnote" ] && want=$n.runnote
    if [ $rc -ne 0 ]; then
      bad "notes $name ($cmd): exit $rc (expected 0)" "$OUT/$name.note.$cmd"
    elif ! diff -u "$want" "$OUT/$name.note.$cmd" >"$OUT/$name.note.$cmd.diff" 2>&1; then
      bad "notes $name ($cmd): notes differ" "$OUT/$name.note.$cmd.diff"
    else
      ok
    fi
  done
done

# ---------------------------------------------------------------- display engine
for tq in tests/display/*.tq; do
  [ -e "$tq" ] || continue
  n=${tq%.tq}
  name=$(basename "$n")
  if $T run "$tq" --replay "$n.trace" --quiet --display list >"$OUT/$name.list" 2>"$OUT/$name.list.stderr"; then
    if diff -u "$n.list" "$OUT/$name.list" >"$OUT/$name.list.diff" 2>&1; then ok; else bad "display $name" "$OUT/$name.list.diff"; fi
  else
    bad "display $name: exit $?" "$OUT/$name.list.stderr"
  fi
done

# ---------------------------------------------------------------- explain
# NAME.rules and NAME.norules hold rule names as algebra/optimize.c spells
# them, one a line ('#' starts a comment).  In NAME.rules, "RULE" must fire
# at least once and "RULE N" exactly N times; a rule in NAME.norules must
# not fire.  A rule fires once per trace line "RULE: tree" (the trace
# follows the queries' lines and starts at the first "-- QUERY" line).  An
# unknown name is an error, so a misspelt rule cannot pass unnoticed.
firedRules() { # explain --trace output -> one fired rule name a line
  sed -n '/^-- /,$ s/^\([A-Z][A-Z0-9-]*\): .*/\1/p' "$1"
}
checkRules() { # NAME-path fired-file -> the reasons it fails, on stdout
  for kind in rules norules; do
    [ -f "$1.$kind" ] || continue
    sed 's/#.*//' "$1.$kind" | while read -r rule count extra; do
      [ -n "$rule" ] || continue
      where="$(basename "$1").$kind: '$rule${count:+ $count}${extra:+ $extra}'"
      case $rule in *[!A-Z0-9-]*) echo "$where: not a rule name"; continue ;; esac
      case $kind/$count/$extra in
        rules//|rules/[0-9]/|rules/[0-9][0-9]/|norules//) ;;
        *) echo "$where: expected RULE [N] in .rules, RULE in .norules"; continue ;;
      esac
      grep -qE "\"$rule(\"|: )" algebra/optimize.c || { echo "$where: no such rule in algebra/optimize.c"; continue; }
      got=$(grep -cx -- "$rule" "$2")
      if [ $kind = norules ]; then
        [ "$got" -eq 0 ] || echo "$rule fired $got times, must not fire"
      elif [ -n "$count" ]; then
        [ "$got" -eq "$count" ] || echo "$rule fired $got times, expected $count"
      else
        [ "$got" -ge 1 ] || echo "$rule did not fire"
      fi
    done
  done
}
for tq in tests/explain/*.tq; do
  [ -e "$tq" ] || continue
  n=${tq%.tq}
  name=$(basename "$n")
  if [ ! -f "$n.out" ] && [ ! -f "$n.noopt" ] && [ ! -f "$n.rules" ] && [ ! -f "$n.norules" ]; then
    bad "explain $name: no $name.out, .noopt, .rules or .norules"
  fi
  args=""
  [ -f "$n.args" ] && args=$(cat "$n.args")
  if [ -f "$n.out" ]; then
    # shellcheck disable=SC2086
    $T explain "$tq" $args >"$OUT/$name.explain" 2>&1
    if diff -u "$n.out" "$OUT/$name.explain" >"$OUT/$name.explain.diff"; then ok; else bad "explain $name" "$OUT/$name.explain.diff"; fi
  fi
  if [ -f "$n.noopt" ]; then
    # shellcheck disable=SC2086
    $T explain --no-opt "$tq" $args >"$OUT/$name.noopt" 2>&1
    if diff -u "$n.noopt" "$OUT/$name.noopt" >"$OUT/$name.noopt.diff"; then ok; else bad "explain --no-opt $name" "$OUT/$name.noopt.diff"; fi
  fi
  if [ -f "$n.rules" ] || [ -f "$n.norules" ]; then
    # shellcheck disable=SC2086
    if $T explain --trace "$tq" $args >"$OUT/$name.trace" 2>&1; then
      firedRules "$OUT/$name.trace" >"$OUT/$name.fired"
      checkRules "$n" "$OUT/$name.fired" >"$OUT/$name.rules.log"
      if [ -s "$OUT/$name.rules.log" ]; then
        echo "fired: $(tr '\n' ' ' <"$OUT/$name.fired")" >>"$OUT/$name.rules.log"
        bad "explain --trace $name: rules" "$OUT/$name.rules.log"
      else
        ok
      fi
    else
      bad "explain --trace $name: exit $?" "$OUT/$name.trace"
    fi
  fi
done

# ---------------------------------------------------------------- unit tests
if build/asan/unit >"$OUT/unit.log" 2>&1; then
  u=$(grep -c '^ok ' "$OUT/unit.log")
  pass=$((pass + u))
else
  u=$(grep -c '^ok ' "$OUT/unit.log")
  pass=$((pass + u))
  bad "unit tests" "$OUT/unit.log"
  grep '^not ok' "$OUT/unit.log" | sed 's/^/    /'
fi

# ---------------------------------------------------------------- property tests
# 200 random (query, recording) pairs against the SQL oracle, the unoptimized
# network and snapshot reducibility; a failing pair is left as a golden case.
if build/asan/prop -n 200 -s 1 -o "$OUT" >"$OUT/prop.log" 2>&1; then
  pass=$((pass + $(grep -c '^ok ' "$OUT/prop.log")))
else
  pass=$((pass + $(grep -c '^ok ' "$OUT/prop.log")))
  bad "property tests" "$OUT/prop.log"
fi
# Thousands of pairs more: the release build (build/prop), on the seeds
# after those, for at most PROP_SECONDS (default 300; a slow machine only
# checks fewer pairs, and the line below says how many).
pn=${PROP_PAIRS:-5000}
ps=${PROP_SECONDS:-300}
if build/prop -n "$pn" -s 201 -t "$ps" -o "$OUT/prop-long" >"$OUT/prop-long.log" 2>&1; then
  ok
else
  bad "property tests (release build, seeds from 201)" "$OUT/prop-long.log"
fi
echo "property tests: $(grep -h '^[0-9]* pairs, ' "$OUT/prop.log" | cut -d';' -f1) (test build);" \
  "$(grep -h '^[0-9]* pairs, ' "$OUT/prop-long.log" | cut -d';' -f1) (release build, $(sed -n 's/^time budget \([0-9]*\) s: .* in \([0-9]*\) s.*/\2 s of a budget of \1 s/p' "$OUT/prop-long.log"))"

# ---------------------------------------------------------------- scenario scripts
for s in tests/scripts/*.sh; do
  [ -e "$s" ] || continue
  name=$(basename "$s" .sh)
  OUT="$OUT" T="$T" sh "$s" >"$OUT/script.$name.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    ok
  elif [ $rc -eq 77 ]; then
    skip=$((skip + 1))
    echo "SKIP: script $name: $(tail -n 1 "$OUT/script.$name.log")"
  else
    bad "script $name" "$OUT/script.$name.log"
  fi
done

# ---------------------------------------------------------------- fuzzing
# A time-bounded libFuzzer run of each target: the front end
# (tests/fuzz/fuzz_frontend.c, FUZZ_SECONDS, default 25) and the
# collection-file reader (tests/fuzz/fuzz_colfil.c, FUZZ_COLFIL_SECONDS,
# default 10).  Each starts from its committed corpus and its saved crash
# inputs (tests/fuzz/crashes, tests/fuzz/colfil-crashes: each must no longer
# crash) and explores; new inputs go to a scratch directory, never into the
# committed corpus.  An input that crashes, hangs or leaks is kept: copied
# into the target's crash directory as new-NAME (git status shows it; every
# later run replays it until it is fixed), and the test fails naming it.
# One test each; skipped (counted nowhere) when clang cannot build a
# libFuzzer binary.  Time-bounded, so a slow machine only explores less.
#
# keepcrashes KIND DIR: the inputs the fuzzer saved under $OUT/KIND-artifacts
# copied into DIR as new-NAME; prints their paths
keepcrashes() {
  for a in "$OUT/$1-artifacts"/*; do
    [ -f "$a" ] || continue
    cp "$a" "$2/new-$(basename "$a")" && echo "$2/new-$(basename "$a")"
  done
}
FZ=build/fuzz/fuzz_frontend
fzs=${FUZZ_SECONDS:-25}
mkdir -p build/fuzz
if ! command -v "${FUZZCC:-clang}" >/dev/null 2>&1 ||
   ! printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' |
     "${FUZZCC:-clang}" -fsanitize=fuzzer,address,undefined -x c - -o build/fuzz/probe >/dev/null 2>&1; then
  echo "skipped: fuzz_frontend (${FUZZCC:-clang} with libFuzzer not available)"
elif ! make -s "$FZ" >"$OUT/fuzz.build.log" 2>&1; then
  bad "fuzz: building $FZ" "$OUT/fuzz.build.log"
else
  mkdir -p "$OUT/fuzz-corpus" "$OUT/fuzz-artifacts" tests/fuzz/crashes
  if "$FZ" -max_total_time="$fzs" -max_len=65536 -timeout=5 -dict=tests/fuzz/tq.dict -print_final_stats=1 \
       -artifact_prefix="$OUT/fuzz-artifacts/" "$OUT/fuzz-corpus" tests/fuzz/corpus tests/fuzz/crashes \
       >"$OUT/fuzz.log" 2>&1; then
    ok
  else
    sed -n '/runtime error\|==[0-9]*==ERROR\|ERROR: libFuzzer\|^Running: /,$p' "$OUT/fuzz.log" >"$OUT/fuzz.report"
    [ -s "$OUT/fuzz.report" ] || tail -40 "$OUT/fuzz.log" >"$OUT/fuzz.report"
    kept=$(keepcrashes fuzz tests/fuzz/crashes | tr '\n' ' ')
    bad "fuzz: crash, hang or leak; input kept as ${kept:-(none saved)} (log $OUT/fuzz.log)" "$OUT/fuzz.report"
  fi
fi

FZC=build/fuzz/fuzz_colfil
fzcs=${FUZZ_COLFIL_SECONDS:-10}
if [ ! -x build/fuzz/probe ]; then
  echo "skipped: fuzz_colfil (${FUZZCC:-clang} with libFuzzer not available)"
elif ! make -s "$FZC" >"$OUT/fuzzc.build.log" 2>&1; then
  bad "fuzz: building $FZC" "$OUT/fuzzc.build.log"
else
  mkdir -p "$OUT/fuzzc-corpus" "$OUT/fuzzc-artifacts" tests/fuzz/colfil-crashes
  if "$FZC" -max_total_time="$fzcs" -max_len=4096 -timeout=5 -print_final_stats=1 \
       -artifact_prefix="$OUT/fuzzc-artifacts/" "$OUT/fuzzc-corpus" tests/fuzz/colfil-corpus tests/fuzz/colfil-crashes \
       >"$OUT/fuzzc.log" 2>&1; then
    ok
  else
    sed -n '/runtime error\|==[0-9]*==ERROR\|ERROR: libFuzzer\|^Running: /,$p' "$OUT/fuzzc.log" >"$OUT/fuzzc.report"
    [ -s "$OUT/fuzzc.report" ] || tail -40 "$OUT/fuzzc.log" >"$OUT/fuzzc.report"
    kept=$(keepcrashes fuzzc tests/fuzz/colfil-crashes | tr '\n' ' ')
    bad "fuzz: collection files: crash, hang or leak; input kept as ${kept:-(none saved)} (log $OUT/fuzzc.log)" "$OUT/fuzzc.report"
  fi
fi

# the last line is always the plain count; skipped tests are said before it
[ $skip -gt 0 ] && echo "$skip skipped (the reasons are above)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
