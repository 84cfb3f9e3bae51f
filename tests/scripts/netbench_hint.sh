#!/bin/sh
# netbench_hint.sh - the overlap product fed an instant's events after they
# were announced (rtNetHintEvent: its stored matches prefetched) answers as
# when they are not: the same rows, the same tuples processed and stored,
# and the rows SQLite's join gives over the same stream (build/asan/netbench,
# the benchmark's driver, under the sanitizers).  Each runs twice in one
# process, as the bench's runs do: the second answers as the first.
set -u
N=${N:-build/asan/netbench}
OUT=${OUT:-build/test-out}
[ -x "$N" ] || { echo "no $N (make $N)"; exit 1; }
d=$OUT/netbench_hint
rm -rf "$d" && mkdir -p "$d"
"$N" overlap 120000 --reps 2 --db "$d/n.db" >"$d/hint.txt" 2>"$d/hint.err" || { echo "netbench failed"; cat "$d/hint.err"; exit 1; }
NETBENCH_NO_HINT=1 "$N" overlap 120000 --reps 2 --no-sqlite >"$d/nohint.txt" 2>"$d/nohint.err" ||
  { echo "netbench (no hints) failed"; cat "$d/nohint.err"; exit 1; }
v() { sed -n "s/^$2 //p" "$d/$1.txt" | head -n 1; }
fails=0
for k in overlap.tqmon.rows overlap.tqmon.processed overlap.tqmon.peak_stored overlap.tqmon.events; do
  a=$(v hint $k) b=$(v nohint $k)
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "FAIL: $k: $a with hints, $b without"
    fails=$((fails + 1))
  fi
done
for f in hint nohint; do
  runs=$(sed -n 's/^# overlap run: .* \([0-9]*\) rows$/\1/p' "$d/$f.txt" | sort -u | tr '\n' ' ')
  if [ "$(sed -n '/^# overlap run: /p' "$d/$f.txt" | wc -l)" != 2 ] || [ "$runs" != "$(v $f overlap.tqmon.rows) " ]; then
    echo "FAIL: $f: the runs' rows $runs, the first run's $(v $f overlap.tqmon.rows)"
    fails=$((fails + 1))
  fi
done
r=$(v hint overlap.tqmon.rows) s=$(v hint overlap.sqlite.rows)
if [ -z "$r" ] || [ "$r" = 0 ] || [ "$r" != "$s" ]; then
  echo "FAIL: $r rows with hints, SQLite $s"
  fails=$((fails + 1))
fi
[ $fails = 0 ] && echo "overlap product with hints: $r rows, as without them and as SQLite"
exit $((fails > 0))
