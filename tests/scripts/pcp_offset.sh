#!/bin/sh
# pcp_offset.sh - a host whose clock is off: the offset is estimated from
# pmcd's timestamps, reported, and applied to its archives.  h2's pmcd runs
# with its clock 5 s ahead (libfaketime, FAKETIME=+5s: every timestamp it
# gives, pmlogger's archive of it included, is 5 s ahead), h1's is right.
#   - a live run says h2's clock_offset_ms is about 5000 and h1's about 0
#     (its samples are stamped with the monitor's ticks either way);
#   - pmlogger's archives of the two hosts, replayed without the offset,
#     miss h2 at the live run's first ticks (its archive starts 5 s late);
#   - with --pcp-offset h2=MS (the live run's estimate) every live row is
#     in the replay, at the live run's ticks.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_offset
FT=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
[ -n "$FT" ] || { echo "SKIP: no libfaketime (sh tests/deps.sh test installs it)"; exit 77; }
# libfaketime makes /dev/shm/faketime_shm_PID and sem.faketime_sem_PID in
# every process it is loaded in and removes them only at a normal exit: the
# pmcd (and its agents) stopped by a signal leave theirs, removed here once
# their process is gone
ftClean() {
  for f in /dev/shm/faketime_shm_* /dev/shm/sem.faketime_sem_*; do
    [ -e "$f" ] || continue
    p=${f##*_}
    [ -d "/proc/$p" ] || rm -f "$f"
  done
}
trap 'progsStop $pids; pcpStopAll; ftClean' EXIT
pcpStart h1 || exit 1
LD_PRELOAD=$FT FAKETIME="+5s" FAKETIME_DONT_RESET=1 pcpStart h2 || exit 1
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" hinv.ncpu 2>"$dir/describe.err" || bad "describe: $(cat "$dir/describe.err")"
printf 'range of H is HostSample\nretrieve into Cpus (H.Host, H.HinvNcpu)\n' >"$dir/q.tq"
printf 'log mandatory on 1 sec {\n  hinv.ncpu\n}\n' >"$dir/logger.conf"
pcpLoggers "$dir/logger.conf" h1 h2
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1,127.0.0.1:$PORT_h2" --snapshots 4 --format csv \
  --stats "$dir/live.json" >"$dir/live.csv" 2>"$dir/live.err" || bad "live run: exit $? $(cat "$dir/live.err")"
cat "$dir/live.csv"
off=$(python3 - "$dir/live.json" <<'PY'
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
o = {h["host"]: h["clock_offset_ms"] for h in d["hosts"]}
print("h2=%.3f" % o["h2"])
sys.stderr.write("clock offsets estimated: h1 %.3f ms, h2 %.3f ms\n" % (o["h1"], o["h2"]))
sys.exit(0 if abs(o["h1"]) < 500 and abs(o["h2"] - 5000) < 500 else 1)
PY
) || bad "the estimated offsets are not about 0 and 5000 ms"
# the archives cover the live run's last tick, in each host's time
lastTick=$(awk -F, '$NF ~ /^[0-9]+$/ { print $NF }' "$dir/live.csv" | sort -n | tail -n 1)
n=0
until [ "$(archEnd "$dir/arch-h1")" -ge "${lastTick:-0}" ] && [ "$(archEnd "$dir/arch-h2")" -ge $((${lastTick:-0} + 5000000000)) ]; do
  n=$((n + 1))
  [ $n -gt 600 ] && { bad "pmlogger wrote nothing after the live run's last tick"; break; }
  sleep 0.1
done
kill -INT $logger_h1 $logger_h2
wait $logger_h1 $logger_h2
section() { awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"; }
section "$dir/live.csv" Cpus >"$dir/live.rows"
# covered FILE: every live row is in the replay FILE
covered() {
  section "$1" Cpus >"$1.rows"
  while IFS= read -r row; do grep -qxF "$row" "$1.rows" || return 1; done <"$dir/live.rows"
}
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/arch-h1,$dir/arch-h2" --format csv >"$dir/raw.csv" 2>"$dir/raw.err" ||
  bad "replay without the offset: exit $? $(cat "$dir/raw.err")"
covered "$dir/raw.csv" && bad "without the offset, h2's archive should miss the live run's first ticks"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/arch-h1,$dir/arch-h2" --pcp-offset "$off" --format csv \
  --stats "$dir/replay.json" >"$dir/replay.csv" 2>"$dir/replay.err" || bad "replay with $off: exit $? $(cat "$dir/replay.err")"
cat "$dir/replay.csv"
covered "$dir/replay.csv" || bad "with --pcp-offset $off, the replay should have every live row"
# the detail shows the offset given (an estimate near 5000 ms, below or above it)
python3 - "$dir/replay.json" "${off#h2=}" <<'PY' || bad "the detail does not show the offset applied ($off)"
import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
a = {h["host"]: h.get("clock_offset_ms_applied") for h in d["hosts"]}
sys.exit(0 if a.get("h2") is not None and abs(a["h2"] - float(sys.argv[2])) < 0.001 else 1)
PY
# a host named in the offsets without archives is an error
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/arch-h1" --pcp-offset "h9=10" --format csv >/dev/null 2>"$dir/h9.err" &&
  bad "an offset for a host without archives was accepted"
grep -q "clock offset for host h9, of which no archive is given" "$dir/h9.err" || bad "no message for h9: $(cat "$dir/h9.err")"
[ $fails -eq 0 ] || exit 1
echo "pcp_offset: ok"
