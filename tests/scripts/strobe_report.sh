#!/bin/sh
# strobe_report.sh - tqmon report (issue 21): the Strobe-like profile of a
# live run of tests/strobe/tqtest_profile (70% tqtest_hot, 30% tqtest_cold of
# the program's code, in Query and Update transactions), written again from
# the recording that run stored (the same text), and from that recording
# loaded into a store (tqmon load: the same text and page through the SQL
# translation, the store unchanged; a store of answers refused with the
# reason), its flame graph page in a
# real browser (tests/browser/flame.mjs: widths are shares, zooming works),
# and bad inputs: no Executing, a bad --transactions, a recording without
# samples.  Skipped (77) when perf_event_open is refused; the browser part
# is skipped, with the reason, without chromium and playwright-core.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/strobe_report
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
if ! perf stat -e task-clock -x, -o "$dir/perfcheck" true 2>/dev/null && [ "$(id -u)" != 0 ]; then
  echo "skipped: perf_event_open is refused here"
  exit 77
fi
S="tests/strobe/tqtest.tq sensors/cpusample.tq"

# ---------------------------------------------------------------- live, and from the recording
$T report $S --pm cpusample --transactions Transaction.Kind --top 5 -o "$dir/flame.html" --record "$dir/run.trace" \
  --exec build/strobe/tqtest_profile 10 >"$dir/live.txt" 2>"$dir/live.err"
rc=$?
[ $rc -eq 0 ] || bad "report of a live run: exit $rc: $(head -5 "$dir/live.err")"
cat "$dir/live.txt"
for h in "MODULE USAGE" "FUNCTION USAGE (top" "TRANSACTION USAGE" "TRANSACTION USAGE BY FUNCTION"; do
  grep -q "^$h" "$dir/live.txt" || bad "no $h in the report"
done
all=$(awk '$1 == "samples" { print $2 }' "$dir/live.txt")
[ "${all:-0}" -ge 50 ] || bad "only ${all:-0} samples"
row() { awk -v m="$1" -v f="$2" '$1 == m && $2 == f && !done { print $3, $4; done = 1 }' "$dir/live.txt"; }
hot=$(row tqtest_profile tqtest_hot)
cold=$(row tqtest_profile tqtest_cold)
prog=$(awk '/^MODULE USAGE/ { on = 1; next } /^$/ { on = 0 } on && $1 == "tqtest_profile" { print $2 }' "$dir/live.txt")
set -- $hot
hs=${1:-0} hp=${2:-0%}
set -- $cold
cs=${1:-0} cp=${2:-0%}
awk -v h="$hs" -v c="$cs" -v p="${prog:-0}" 'BEGIN { exit !(p > 0 && (100 * h / p - 70) ^ 2 <= 25 && (100 * c / p - 30) ^ 2 <= 25) }' ||
  bad "tqtest_hot $hs and tqtest_cold $cs of the program's ${prog:-0} samples are not 70/30 within 5 points"
# the shares printed are the samples over all
awk -v n="$hs" -v a="$all" -v s="$hp" 'BEGIN { sub("%", "", s); x = 100 * n / a - s; exit !(x * x < 0.0001) }' ||
  bad "tqtest_hot: $hs of $all samples printed as $hp"
# every transaction's functions add up to the transaction
awk '/^TRANSACTION USAGE$/ { u = 1; next } /^TRANSACTION USAGE BY FUNCTION/ { u = 0; b = 1; next }
     u && NF == 3 && $1 != "transaction" { tot[$1] = $2 }
     b && NF == 1 { k = $1; next }
     b && NF == 5 { sum[k] += $3 }
     END { for (k in tot) if (sum[k] != tot[k]) { print k, sum[k], tot[k]; bad = 1 } exit bad }' "$dir/live.txt" ||
  bad "a transaction's functions do not add up to it (top 5 shows every function here)"
grep -q "^  Query " "$dir/live.txt" && grep -q "^  Update " "$dir/live.txt" || bad "no Query or Update transaction"
# the same profile from what the run stored
$T report $S --transactions Transaction.Kind --top 5 --replay "$dir/run.trace" >"$dir/replay.txt" 2>"$dir/replay.err" ||
  bad "report of the recording: exit $?: $(head -5 "$dir/replay.err")"
sed '/^flame graph/d' "$dir/live.txt" | sed '${/^$/d}' | diff - "$dir/replay.txt" >"$dir/replay.diff" ||
  bad "the report of the recording differs from the live one: $(head -20 "$dir/replay.diff")"

# ---------------------------------------------------------------- from a store (tqmon load)
# the recording loaded into a store of primitive relations: the report
# reads it through the SQL translation of its queries (read only: the
# store is not changed), the same text and the same flame graph
$T load $S --replay "$dir/run.trace" --db "$dir/run.db" 2>"$dir/load.err" || bad "load: $(cat "$dir/load.err")"
sum0=$(sha256sum "$dir/run.db" | cut -d' ' -f1)
$T report $S --transactions Transaction.Kind --top 5 --db "$dir/run.db" -o "$dir/store.html" >"$dir/store.txt" 2>"$dir/store.err" ||
  bad "report of the store: exit $?: $(head -5 "$dir/store.err")"
sed '/^flame graph/d' "$dir/store.txt" | sed '${/^$/d}' | diff "$dir/replay.txt" - >"$dir/store.diff" ||
  bad "the report of the store differs from the recording's: $(head -20 "$dir/store.diff")"
cmp -s "$dir/flame.html" "$dir/store.html" || bad "the store's flame graph page differs from the live run's"
[ "$(sha256sum "$dir/run.db" | cut -d' ' -f1)" = "$sum0" ] || bad "the report changed the store"
# a store of a run's answers (run --db) holds no samples: said
printf 'range of E is Executing\nretrieve into Fns (E.Function)\n' >"$dir/fns.tq"
$T run $S "$dir/fns.tq" --replay "$dir/run.trace" --db "$dir/answers.db" --quiet 2>"$dir/answers.err" || bad "run --db: $(cat "$dir/answers.err")"
$T report $S --db "$dir/answers.db" >"$dir/answers.out" 2>&1
[ $? -eq 1 ] || bad "report of a store of answers: expected exit 1"
grep -q "is no store of primitive relations (tqmon load writes one" "$dir/answers.out" || bad "report of a store of answers: $(cat "$dir/answers.out")"
$T report $S --db "$dir/run.db" --replay "$dir/run.trace" >"$dir/both.out" 2>&1
[ $? -eq 2 ] && grep -q "a store (--db) or a source" "$dir/both.out" || bad "--db with --replay: $(cat "$dir/both.out")"

# ---------------------------------------------------------------- bad input
$T report tests/strobe/tqtest.tq --replay "$dir/run.trace" >"$dir/noexec.out" 2>&1
[ $? -eq 1 ] || bad "report without Executing: expected exit 1"
grep -q "the program declares no relation Executing: give sensors/cpusample.tq" "$dir/noexec.out" || bad "report without Executing: $(cat "$dir/noexec.out")"
$T report $S --transactions Transaction --replay "$dir/run.trace" >"$dir/badtxn.out" 2>&1
[ $? -eq 1 ] || bad "--transactions Transaction: expected exit 1"
grep -q "takes RELATION.ATTRIBUTE" "$dir/badtxn.out" || bad "--transactions Transaction: $(cat "$dir/badtxn.out")"
$T report $S --transactions Transaction.Colour --replay "$dir/run.trace" >"$dir/badattr.out" 2>&1
[ $? -eq 1 ] || bad "--transactions Transaction.Colour: expected exit 1"
grep -q "needs the attribute Colour" "$dir/badattr.out" || bad "--transactions Transaction.Colour: $(cat "$dir/badattr.out")"
grep -v "Executing@" "$dir/run.trace" >"$dir/nosamples.trace"
$T report $S --replay "$dir/nosamples.trace" >"$dir/nosamples.out" 2>&1
[ $? -eq 1 ] || bad "report of a recording without samples: expected exit 1"
grep -q "no sample was taken: nothing to report" "$dir/nosamples.out" || bad "no samples: $(cat "$dir/nosamples.out")"

# ---------------------------------------------------------------- the flame graph in a browser
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null 2>&1 || [ ! -d tests/browser/node_modules/playwright-core ]; then
  echo "browser part skipped: no chromium, node or playwright-core (sh tests/deps.sh test installs them)"
else
  kernel=$(awk '$1 == "[kernel]" && !done { sub("%", "", $3); print $3; done = 1 }' "$dir/live.txt")
  node tests/browser/flame.mjs "$dir/flame.html" "$dir" "$CHROMIUM" "${kernel:-0}" "tqtest_hot=${hp%\%}" "tqtest_cold=${cp%\%}" \
    >"$dir/browser.out" 2>&1 || bad "the flame graph in the browser: $(cat "$dir/browser.out")"
  cat "$dir/browser.out"
fi

[ $fails -eq 0 ]
