#!/bin/sh
# strobe_programs.sh - program lists (issue 21): `monitor programs "tqtest*"`
# makes only the matching processes entities of the live sources, so the CPU
# sampler samples exactly them, also one that starts after the run began
# (through a shell that execs it: its name changes at the exec) and exits
# before the run ends (a process that exits mid-sample).  A process of
# another name spinning beside them is never sampled, a pattern that
# matches nothing is reported, and --programs adds patterns from the
# command line.  The stats (--stats) show what was sampled; the processes
# spin for a bounded CPU time and are ended by pid.  Their names carry a tag
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
"$dir/tqtest${tag}e" 2500 &
early=$!
"$dir/other${tag}" 2500 &
other=$!
pids="$early $other"
# started a second after the run: a shell that execs it (named sh until the exec)
(sleep 1.2 && exec "$dir/tqtest${tag}l" 1000) &
late=$!
pids="$pids $late"
$T run --host sensors/host.tq "$dir/programs.tq" sensors/cpusample.tq "$dir/who.tq" --pm cpusample --snapshots 60 \
  --format csv --stats "$dir/run.json" >"$dir/run.csv" 2>"$dir/run.err"
rc=$?
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
for p in $early $late; do
  n=$(echo "$sampler" | tr '[,' '\n\n' | sed -n "s/^$p:\([0-9]*\).*/\1/p")
  [ "${n:-0}" -gt 0 ] || bad "pid $p has no samples: $sampler"
done
echo "$host" | grep -q " begun=2 " || bad "host_process made other than 2 entities: $host"
echo "$host" | grep -q " unwanted=[1-9]" || bad "host_process left out no process: $host"
# the processes each pattern matched
tr -d '\n' <"$dir/run.json" | grep -q "\"pattern\": \"tqtest${tag}\*\", \"processes\": 2" || bad "the stats do not give tqtest${tag}* 2 processes"
tr -d '\n' <"$dir/run.json" | grep -q "\"pattern\": \"nothing_like_this\*\", \"processes\": 0" || bad "the stats do not give nothing_like_this* 0 processes"
grep -q 'warning: program pattern "nothing_like_this\*" matched no process' "$dir/run.err" ||
  bad "no note for the pattern that matched nothing: $(cat "$dir/run.err")"
# the answer names them, and only them
awk -F, '/^# Who/ { on = 1; getline; next } /^# / { on = 0 } on { print $1 }' "$dir/run.csv" | sort -n | tr '\n' ' ' >"$dir/who"
[ "$(cat "$dir/who")" = "$want" ] || bad "Who names '$(cat "$dir/who")', expected '$want'"
# the late one exited mid-run: ended, not an error
wait $late 2>/dev/null
kill -0 "$late" 2>/dev/null && bad "tqtest${tag}l did not exit during the run"
grep -qi "error" "$dir/run.err" && bad "errors in the run: $(cat "$dir/run.err")"

# ---------------------------------------------------------------- the list on the command line
$T run --host sensors/host.tq "$dir/probe.tq" sensors/cpusample.tq "$dir/who.tq" --pm cpusample --snapshots 8 \
  --programs "other${tag%?}?" --format csv --stats "$dir/cli.json" >"$dir/cli.csv" 2>"$dir/cli.err" ||
  bad "the --programs run: exit $?: $(head -5 "$dir/cli.err")"
sampler=$(jpm "$dir/cli.json" cpusample)
echo "cpusample (--programs): $sampler"
if kill -0 "$other" 2>/dev/null; then
  echo "$sampler" | grep -q "^pids=1 \[$other:" || bad "--programs other${tag%?}? sampled other than other${tag} ($other): $sampler"
fi
# a bad pattern on the command line is refused before anything runs
$T run --host sensors/host.tq "$dir/probe.tq" --snapshots 1 --programs "/bin/sh" >"$dir/badpat.out" 2>&1
[ $? -eq 2 ] || bad "--programs /bin/sh: expected exit 2 (bad usage)"
grep -q "a program pattern matches a command name, which has no '/'" "$dir/badpat.out" ||
  bad "--programs /bin/sh: $(cat "$dir/badpat.out")"

[ $fails -eq 0 ]
