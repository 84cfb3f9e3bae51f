#!/bin/sh
# strobe_programs.sh - program lists (issue 21): `monitor programs "tqtest*"`
# makes only the matching processes entities of the live sources, so the CPU
# sampler samples exactly them, also one that starts after the run began
# (through a shell that execs it: its name changes at the exec) and exits
# is killed before the run ends (a process that exits mid-sample: its
# entity ends, its samples until then are answered, every sample read is
# accounted for).  A process of another name spinning beside them is never
# sampled, a pattern that matches nothing is reported, and --programs adds
# patterns from the command line (its process checked alive, not skipped).
# Without a list, a query that names one of two spinning processes samples
# only it.  The stats (--stats) show what was sampled; the processes spin
# for far longer than the test and are ended by pid.  Their names carry a tag
# of this run (tqtestTAG...): other tests beside this one may run tqtest
# programs of their own.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/strobe_programs
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cat >"$dir/probe.tq" <<'EOF'
clock 100ms;
EOF
# (20 ms ticks: a sample every 20 ms of a process's CPU, so that one that
# gets little of a busy machine's CPU is sampled all the same)
cat >"$dir/fast.tq" <<'EOF'
clock 20ms;
EOF
if ! perf stat -e task-clock -x, -o "$dir/perfcheck" true 2>/dev/null && [ "$(id -u)" != 0 ]; then
  echo "skipped: perf_event_open is refused here"
  exit 77
fi
tag=$(printf '%04x' $(($$ % 65536)))
cp build/strobe/tqtest_spin "$dir/tqtest${tag}e"
cp build/strobe/tqtest_spin "$dir/tqtest${tag}l"
cp build/strobe/tqtest_spin "$dir/other${tag}"
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
cat >"$dir/programs.tq" <<EOF
clock 100ms;
monitor programs "tqtest${tag}*", "nothing_like_this*";
EOF
cat >"$dir/who.tq" <<'EOF'
range of E is Executing
retrieve into Who (E.Process, N = count(E.Thread by E.Process for ever))
valid at now
when not (now precede E)
EOF
jpm() { grep "\"name\": \"$2\"" "$1" | sed 's/.*"message": "\([^"]*\)".*/\1/'; }

# ---------------------------------------------------------------- the list in the program
# (each spins for far more CPU than the test takes, and is ended by pid)
"$dir/tqtest${tag}e" 60000 &
early=$!
"$dir/other${tag}" 60000 &
other=$!
pids="$early $other"
# started a second after the run (a shell that execs it: named sh until the
# exec), killed 3 s later, in the middle of the run: a process that exits
# while it is sampled
(sleep 1.2 && exec "$dir/tqtest${tag}l" 60000) &
late=$!
pids="$pids $late"
(sleep 4.2 && kill "$late") &
killer=$!
$T run --host sensors/host.tq "$dir/programs.tq" sensors/cpusample.tq "$dir/who.tq" --pm cpusample --snapshots 60 \
  --format csv --stats "$dir/run.json" >"$dir/run.csv" 2>"$dir/run.err"
rc=$?
wait $killer
[ $rc -eq 0 ] || bad "the run: exit $rc: $(head -5 "$dir/run.err")"
grep -q "Sanitizer\|runtime error" "$dir/run.err" && bad "sanitizer report: $(head -20 "$dir/run.err")"
sampler=$(jpm "$dir/run.json" cpusample)
host=$(jpm "$dir/run.json" host_process)
echo "cpusample: $sampler"
echo "host_process: $host"
# exactly the two tqtest processes sampled (the stats list pid:samples)
got=$(echo "$sampler" | sed -n 's/^pids=\([0-9]*\) \[\([^]]*\)\].*/\2/p' | tr ',' '\n' | cut -d: -f1 | sort -n | tr '\n' ' ')
want=$(printf '%s\n%s\n' "$early" "$late" | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || bad "sampled pids '$got', expected exactly the tqtest${tag} ones '$want' (other${tag} is $other)"
# answered samples of a pid (the stats), and its count in the answer Who
nsam() { echo "$2" | tr '[,' '\n\n' | sed -n "s/^$1:\([0-9]*\).*/\1/p"; }
nwho() { awk -F, -v p="$1" '/^# Who/ { on = 1; getline; next } /^# / { on = 0 } on && $1 == p { print $2 }' "$dir/run.csv"; }
for p in $early $late; do
  [ "$(nsam $p "$sampler")" -gt 0 ] 2>/dev/null || bad "pid $p has no samples: $sampler"
done
echo "$host" | grep -q " begun=2 " || bad "host_process made other than 2 entities: $host"
echo "$host" | grep -q " unwanted=[1-9]" || bad "host_process left out no process: $host"
# the late one was killed mid-run: its entity ended then, its samples until
# then are in the answer (identical samples at one tick are one tuple: at
# most as many), every sample read is answered or counted as not
echo "$host" | grep -q " ended=1 " || bad "the killed tqtest${tag}l did not end during the run: $host"
nl=$(nsam $late "$sampler")
wl=$(nwho $late)
echo "tqtest${tag}l, killed mid-run: $nl samples answered, $wl in the answer"
[ "${wl:-0}" -ge 1 ] 2>/dev/null && [ "$wl" -le "${nl:-0}" ] || bad "the killed process counts $wl in the answer, of $nl samples answered"
f() { echo "$sampler" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
[ "$(f samples)" = $(($(f answered) + $(f unanswered) + $(f dropped) + $(f children))) ] ||
  bad "samples read are not answered + unanswered + dropped + children: $sampler"
# the processes each pattern matched
tr -d '\n' <"$dir/run.json" | grep -q "\"pattern\": \"tqtest${tag}\*\", \"processes\": 2" || bad "the stats do not give tqtest${tag}* 2 processes"
tr -d '\n' <"$dir/run.json" | grep -q "\"pattern\": \"nothing_like_this\*\", \"processes\": 0" || bad "the stats do not give nothing_like_this* 0 processes"
grep -q 'warning: program pattern "nothing_like_this\*" matched no process' "$dir/run.err" ||
  bad "no note for the pattern that matched nothing: $(cat "$dir/run.err")"
# the answer names them, and only them
awk -F, '/^# Who/ { on = 1; getline; next } /^# / { on = 0 } on { print $1 }' "$dir/run.csv" | sort -n | tr '\n' ' ' >"$dir/who"
[ "$(cat "$dir/who")" = "$want" ] || bad "Who names '$(cat "$dir/who")', expected '$want'"
grep -qi "error" "$dir/run.err" && bad "errors in the run: $(cat "$dir/run.err")"

# ---------------------------------------------------------------- the list on the command line
# (other${tag} spins all along: gone, the check could not be made)
kill -0 "$other" 2>/dev/null || bad "other${tag} ($other) is gone before the --programs run"
$T run --host sensors/host.tq "$dir/fast.tq" sensors/cpusample.tq "$dir/who.tq" --pm cpusample --snapshots 100 \
  --programs "other${tag%?}?" --format csv --stats "$dir/cli.json" >"$dir/cli.csv" 2>"$dir/cli.err" ||
  bad "the --programs run: exit $?: $(head -5 "$dir/cli.err")"
kill -0 "$other" 2>/dev/null || bad "other${tag} ($other) ended during the --programs run"
sampler=$(jpm "$dir/cli.json" cpusample)
echo "cpusample (--programs): $sampler"
echo "$sampler" | grep -q "^pids=1 \[$other:[1-9]" || bad "--programs other${tag%?}? sampled other than other${tag} ($other): $sampler"
grep -q "matched no process" "$dir/cli.err" && bad "--programs: $(cat "$dir/cli.err")"

# ---------------------------------------------------------------- no list: what a query enables
# tqtest${tag}e and other${tag} both spin; the query names one: only it is
# sampled (a process no query enables has no event)
printf 'range of E is Executing\nretrieve into One (E.Process, E.Function) where E.Process = "%s"\n' "$early" >"$dir/one.tq"
$T run --host sensors/host.tq "$dir/fast.tq" sensors/cpusample.tq "$dir/one.tq" --pm cpusample --snapshots 100 \
  --format csv --stats "$dir/one.json" >"$dir/one.csv" 2>"$dir/one.err" || bad "the run naming one: exit $?: $(head -5 "$dir/one.err")"
kill -0 "$other" 2>/dev/null && kill -0 "$early" 2>/dev/null || bad "tqtest${tag}e or other${tag} ended during the run naming one"
sampler=$(jpm "$dir/one.json" cpusample)
echo "cpusample (a query naming $early): $sampler"
echo "$sampler" | grep -q "^pids=1 \[$early:[1-9]" || bad "a query naming $early sampled other pids: $sampler"

# a bad pattern on the command line is refused before anything runs
$T run --host sensors/host.tq "$dir/probe.tq" --snapshots 1 --programs "/bin/sh" >"$dir/badpat.out" 2>&1
[ $? -eq 2 ] || bad "--programs /bin/sh: expected exit 2 (bad usage)"
grep -q "a program pattern matches a command name, which has no '/'" "$dir/badpat.out" ||
  bad "--programs /bin/sh: $(cat "$dir/badpat.out")"

[ $fails -eq 0 ]
