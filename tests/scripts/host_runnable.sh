#!/bin/sh
# host_runnable.sh - "how many processes are runnable", live (issue 14.6):
# a count over the samples of ProcessState is a step function from the first
# snapshot on, without a false 0 at the first tick, between ticks or from
# beginning; --snapshots 4 is 4 Clock ticks, each with its samples; a
# replay of what the run recorded gives the same answer.  The independent
# observation: a busy loop started by the test is runnable at every
# snapshot, a sleep at none.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_runnable
rm -rf "$dir" && mkdir -p "$dir"
[ -r /proc/self/stat ] || { echo "no /proc here"; exit 77; }
sh -c 'while :; do :; done' &
busy=$!
sleep 60 &
slp=$!
waitcomm $slp sleep || bad "the sleep did not start"
cat >"$dir/q.tq" <<EOF
range of S is ProcessState
range of C is Clock
retrieve into Runnable (N = count(S.Process where S.State = Running))
retrieve into All (N = count(S.Process))
retrieve into Busy (N = count(S.Process where S.Process = "$busy" and S.State = Running))
retrieve into Asleep (N = count(S.Process where S.Process = "$slp" and S.State = Sleeping))
retrieve into Ticks (N = count(S.Process for each instant)) valid at C
EOF
$T run --host sensors/host.tq "$dir/q.tq" --snapshots 4 --format csv --record "$dir/run.trace" >"$dir/live.csv" 2>"$dir/live.err" ||
  bad "live run: $(cat "$dir/live.err")"
kill $busy $slp 2>/dev/null
# 4 snapshots: 4 sample times, 4 Clock ticks, each with samples (count > 0)
n=$(grep ' ProcessState@ ' "$dir/run.trace" | awk '{print $1}' | sort -u | wc -l)
[ "$n" -eq 4 ] || bad "samples at $n times, expected 4"
first=$(grep ' ProcessState@ ' "$dir/run.trace" | awk '{print $1}' | sort -u | head -1)
section "$dir/live.csv" Ticks >"$dir/ticks"
[ "$(wc -l <"$dir/ticks")" -eq 4 ] || bad "Clock ticks: $(tr '\n' ' ' <"$dir/ticks"), expected 4"
grep -q '^0,' "$dir/ticks" && bad "a tick counted no process: $(tr '\n' ' ' <"$dir/ticks")"
head -1 "$dir/ticks" | grep -q ",$first\$" || bad "the first tick is not the first snapshot ($first): $(head -1 "$dir/ticks")"
# step functions: from the first snapshot, contiguous, the last open, no 0
for r in Runnable All Busy Asleep; do
  section "$dir/live.csv" $r >"$dir/$r"
  awk -F, -v first="$first" -v r=$r '
    NR == 1 && $2 != first { print r ": begins at " $2 ", not at the first snapshot " first; bad = 1 }
    NR > 1 && $2 != prev { print r ": a gap or overlap at " prev " / " $2; bad = 1 }
    { prev = $3; last = $3 }
    r != "Runnable" && $1 == 0 { print r ": a false 0 from " $2; bad = 1 }
    END { if (NR == 0) { print r ": no rows"; bad = 1 } else if (last != "") { print r ": the last period is closed at " last; bad = 1 }
          exit bad }' "$dir/$r" || bad "$r: $(tr '\n' ' ' <"$dir/$r")"
done
# the busy loop is runnable and the sleep asleep all along: one row each, 1
[ "$(cut -d, -f1 "$dir/Busy" | tr '\n' ' ')" = "1 " ] || bad "Busy: $(tr '\n' ' ' <"$dir/Busy")"
[ "$(cut -d, -f1 "$dir/Asleep" | tr '\n' ' ')" = "1 " ] || bad "Asleep: $(tr '\n' ' ' <"$dir/Asleep")"
# the recording answers the same
$T run sensors/host.tq "$dir/q.tq" --replay "$dir/run.trace" --format csv >"$dir/replay.csv" 2>"$dir/replay.err" ||
  bad "replay: $(cat "$dir/replay.err")"
diff "$dir/live.csv" "$dir/replay.csv" >"$dir/diff" || bad "the replay differs: $(head -10 "$dir/diff")"
[ $fails -eq 0 ]
