#!/bin/sh
# host_config.sh - host relations declared by the program itself.  A smaller
# configuration (tests/host/small.tq: Process without attributes, Memory
# with Rss only, in another order) runs with --host: the modules of the
# relations it does not declare are left out, and processes are found
# without reading any of their files.  Attributes the host cannot fill
# (tests/host/wrong.tq) disable their module with a message naming them.
# --host with --replay is a usage error.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/host_config
rm -rf "$dir" && mkdir -p "$dir"

sleep 600 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
waitcomm $pid sleep || { echo "FAIL: sleep $pid did not start"; exit 1; }
sed "s/PID/$pid/g" tests/host/small.tq >"$dir/small.tq"
$T run --host "$dir/small.tq" --snapshots 2 --format csv --stats "$dir/small.json" >"$dir/small.csv" 2>"$dir/err" ||
  bad "small: exit $? $(cat "$dir/err")"
cat "$dir/small.csv"
rss=$(($(ps -o rss= -p $pid) * 1024))
[ "$(section "$dir/small.csv" Mem | cut -d, -f1,2 | sort -u)" = "$pid,$rss" ] || bad "small: Memory is not ps's rss ($rss)"
m=$(pmmsg "$dir/small.json" host_process)
echo "host_process: $m"
[ "$(field "$m" listings)" -eq 2 ] && [ "$(field "$m" reads)" -eq 0 ] && [ "$(field "$m" begun)" -gt 0 ] ||
  bad "small: processes without attributes are found by listing /proc alone: $m"
for pm in host_cputime host_io host_processstate host_lastprocessor host_processor; do
  m=$(pmmsg "$dir/small.json" $pm)
  echo "$pm: $m"
  case "$m" in "left out: the program does not declare "*) ;; *) bad "small: $pm not left out: $m" ;; esac
done

$T run --host tests/host/wrong.tq --snapshots 1 --format csv --stats "$dir/wrong.json" >"$dir/wrong.csv" 2>"$dir/wrong.err" ||
  bad "wrong: exit $?"
cat "$dir/wrong.err"
grep -q "host_memory: warning: disabled after an error: Memory.Rss must be of type int" "$dir/wrong.err" ||
  bad "wrong: no message for Memory.Rss"
grep -q "host_lastprocessor: warning: disabled after an error: LastProcessor.Processor must be of type Processor" "$dir/wrong.err" ||
  bad "wrong: no message for LastProcessor.Processor"
grep -q "host_io: warning: disabled after an error: Io.Reads: the host has no such attribute" "$dir/wrong.err" ||
  bad "wrong: no message for Io.Reads"
[ "$(grep -vc '^#\|valid_' "$dir/wrong.csv")" -eq 0 ] || bad "wrong: answers from a disabled sensor"

$T run --host sensors/host.tq tests/host/cpus.tq --replay "$dir/x.trace" >"$dir/usage.out" 2>&1
rc=$?
cat "$dir/usage.out"
[ $rc -eq 2 ] || bad "--host --replay: exit $rc (expected 2)"

grep -q "Sanitizer\|runtime error" "$dir/err" "$dir/wrong.err" && bad "sanitizer"
[ $fails -eq 0 ] || exit 1
echo ok
