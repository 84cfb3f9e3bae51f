#!/bin/sh
# pcp_programs.sh - program lists (issue 21.4) on PCP: with `monitor
# programs`, the processes of a live host (the proc PMDA's instance domain
# 3.9) whose command the list does not name are no entities, those it names
# are, also one started after the run began.  A pmcd of the test's own;
# processes are copies of sleep under names of this run's tag.  The same
# query over every process without the list sees the process left out (the
# list is what left it out).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_programs
pcpStart h1 || exit 1
tag=$(printf '%04x' $(($$ % 65536)))
SLEEP=$(command -v sleep)
cp "$SLEEP" "$dir/tqpcp${tag}a"
cp "$SLEEP" "$dir/other${tag}"
"$dir/tqpcp${tag}a" 600 &
a1=$!
"$dir/other${tag}" 600 &
o=$!
pids="$a1 $o"
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid 2>"$dir/describe.err" ||
  bad "describe: $(cat "$dir/describe.err")"
cat >"$dir/list.tq" <<TQ
monitor programs "tqpcp${tag}*", "nothing_like_this*";
TQ
# every process's command, at each tick (the entities decide which)
cat >"$dir/q.tq" <<'TQ'
range of S is ProcSample
retrieve into Cmds (S.Proc, S.PsinfoCmd)
TQ
# a second one of the list's, started after the run began
(sleep 1.5 && exec "$dir/tqpcp${tag}a" 600) &
a2=$!
pids="$pids $a2"
$T run "$dir/pcp.tq" "$dir/list.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1" --snapshots 6 --format csv \
  --stats "$dir/list.json" >"$dir/list.csv" 2>"$dir/list.err" || bad "the run with the list: exit $? $(cat "$dir/list.err")"
for p in $a1 $a2 $o; do kill -0 "$p" 2>/dev/null || bad "process $p ended during the run"; done
procs=$(awk -F, '/^# Cmds/ { on = 1; getline; next } /^# / { on = 0 } on { print $1 }' "$dir/list.csv" | sort -u | tr '\n' ' ')
want=$(printf 'h1:%s\nh1:%s\n' "$(inst $a1)" "$(inst $a2)" | sort | tr '\n' ' ')
echo "with the list: $procs"
[ "$procs" = "$want" ] || bad "with the list the processes are '$procs', not the two tqpcp${tag}a '$want'"
grep -q ",tqpcp${tag}a," "$dir/list.csv" || bad "no row names the command tqpcp${tag}a"
grep -q "warning: program pattern \"nothing_like_this\*\" matched no process" "$dir/list.err" ||
  bad "the pattern that matched nothing is not said: $(cat "$dir/list.err")"
tr -d '\n' <"$dir/list.json" | grep -q "\"pattern\": \"tqpcp${tag}\*\", \"processes\": 2" || bad "the stats do not give tqpcp${tag}* 2 processes"
out=$(tr -d '\n' <"$dir/list.json" | sed -n 's/.*"programs_left_out": \([0-9]*\).*/\1/p')
[ "${out:-0}" -ge 10 ] || bad "the pcp detail does not count the processes left out: '$out'"
# without the list: the same query sees the other one too
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1" --snapshots 2 --format csv \
  --stats "$dir/all.json" >"$dir/all.csv" 2>"$dir/all.err" || bad "the run without the list: exit $? $(cat "$dir/all.err")"
grep -q "^h1:$(inst $o),other${tag}," "$dir/all.csv" || bad "without the list other${tag} ($o) is not seen: the check above shows nothing"
[ $fails -eq 0 ] || exit 1
echo "pcp_programs: ok"
