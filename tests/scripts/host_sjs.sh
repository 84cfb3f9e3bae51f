#!/bin/sh
# host_sjs.sh - SJS and AGG-WHERE on the host sensors (docs/enabling.md):
# a copy of sleep under a name of its own is the one process the queries of
# tests/host/sjs.tq ask about.  With the rules, the ProcessState and Memory
# PMs read one file a tick, of that pid only; with the previous optimizer
# (--no-rule SJS --no-rule AGG-WHERE) they read every process's.  Both give
# the process's one sample a tick, as ps shows it.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_sjs.$$
rm -rf "$dir" && mkdir -p "$dir"
name=tqsjs$$
name=$(echo "$name" | cut -c1-15)
cp /bin/sleep "$dir/$name" || { echo "skipped: cannot copy /bin/sleep"; exit 77; }
"$dir/$name" 600 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
waitcomm $pid "$name" || { echo "FAIL: $name $pid did not start"; exit 1; }
sed -e "s/NAME/$name/" -e "s/PID/$pid/" tests/host/sjs.tq >"$dir/q.tq"
for mode in opt prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule SJS --no-rule AGG-WHERE"
  # shellcheck disable=SC2086
  $T run --host sensors/host.tq "$dir/q.tq" $opt --snapshots 3 --format csv --stats "$dir/$mode.json" \
    >"$dir/$mode.csv" 2>"$dir/$mode.err" || bad "$mode: exit $? $(cat "$dir/$mode.err")"
  rows=$(section "$dir/$mode.csv" Named | grep -c "^$pid,Sleeping,")
  [ "$rows" = 3 ] || bad "$mode: $rows samples of $pid in Named, expected 3: $(cat "$dir/$mode.csv")"
  [ "$(section "$dir/$mode.csv" Named | grep -vc "^$pid,")" = 0 ] || bad "$mode: Named holds other processes"
  rss=$(($(ps -o rss= -p $pid) * 1024))
  section "$dir/$mode.csv" MaxRss | grep -q "^$rss," || bad "$mode: MaxRss is not $rss: $(section "$dir/$mode.csv" MaxRss)"
  ps=$(pmmsg "$dir/$mode.json" host_processstate)
  mem=$(pmmsg "$dir/$mode.json" host_memory)
  echo "$mode: host_processstate $ps; host_memory $mem"
  if [ $mode = opt ]; then
    [ "$ps" = "reads=3 failed=0 pids=1 [$pid]" ] || bad "opt: ProcessState read more than $pid's file a tick: $ps"
    [ "$mem" = "reads=3 failed=0 pids=1 [$pid]" ] || bad "opt: Memory read more than $pid's file a tick: $mem"
  else
    [ "$(field "$ps" pids)" -gt 1 ] || bad "prev: ProcessState read only $ps"
    [ "$(field "$mem" pids)" -gt 1 ] || bad "prev: Memory read only $mem"
  fi
done
[ $fails -eq 0 ] && rm -rf "$dir"
exit $((fails > 0))
