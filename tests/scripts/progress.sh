#!/bin/sh
# progress.sh - the progress line of a long replay (issue 14.13): on a
# terminal it shows how far through the recording the run is, as a
# percentage, rewritten in place; in a file or a pipe there is none (a log
# holds no carriage return).  The replay is made long by drawing its steps
# at 5 ms each (--display pace).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/progress
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
P=examples/paper
run() { $T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --quiet --display list=/dev/null --display pace=0.005; }

# into a file: no progress at all
run 2>"$dir/file.err" || bad "replay into a file: exit $?: $(cat "$dir/file.err")"
if grep -q "records" "$dir/file.err" || [ "$(tr -cd '\r' <"$dir/file.err" | wc -c)" -ne 0 ]; then
  bad "a progress line went to a file: $(od -c "$dir/file.err" | head -5)"
fi

# on a terminal (script(1) gives the run one): a percentage, up to 100%
if ! command -v script >/dev/null 2>&1; then
  echo "skipped (terminal part): script(1) is missing"
else
  T=$T P=$P script -qec "$T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --quiet --display list=/dev/null --display pace=0.005" /dev/null >"$dir/tty.out" 2>&1 ||
    bad "replay on a terminal: exit $?: $(cat "$dir/tty.out")"
  tr '\r' '\n' <"$dir/tty.out" | grep "tqmon: " >"$dir/tty.lines"
  grep -q "tqmon: *[0-9][0-9]*%, [0-9]* records, [0-9]* snapshots" "$dir/tty.lines" || bad "no percentage on a terminal: $(cat "$dir/tty.lines")"
  tail -1 "$dir/tty.lines" | grep -q "tqmon: 100%, " || bad "the last progress line is not at 100%: $(tail -1 "$dir/tty.lines")"
fi
[ $fails -eq 0 ] || exit 1
echo "ok: progress on a terminal only, with a percentage"
