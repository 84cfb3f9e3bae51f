#!/bin/sh
# pcp_lost.sh - never silent: a PCP sample the run could not take is a
# loss the answer says it may be incomplete for (docs/losses.md).  The
# test's own pmcd is stopped (SIGSTOP) for a few ticks of a live run that
# samples one process there every tick: the host's fetches are late, the
# samples of those ticks have no tuple, and the PM tells the engine
# (g->lost): the answer's rows are fewer, and the run says so (the warning,
# _tqmon_incomplete in the store, "samples_missed" in --stats); rows +
# samples missed = the ticks the process was asked about.  A process that
# simply goes away is no loss (tests/scripts/pcp_hosts.sh).
# A second pmcd, h2, is healthy all along: the stopped one must not hold
# it, so h2 has a row at every tick, is never late, loses nothing, and the
# run never falls behind its ticks ("behind" in --stats).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_lost
pcpStart h1 || exit 1
pcpStart h2 || exit 1
H="127.0.0.1:$PORT_h1,127.0.0.1:$PORT_h2"
sleep 600 &
p1=$!
pids="$p1"
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd 2>"$dir/describe.err" || bad "describe: $(cat "$dir/describe.err")"
cat >"$dir/q.tq" <<EOF
range of S is ProcSample
retrieve into Cmd (S.Proc, S.PsinfoCmd) where S.Proc = "h1:$(inst $p1)"

range of S2 is ProcSample
retrieve into Cmd2 (S2.Proc, S2.PsinfoCmd) where S2.Proc = "h2:$(inst $p1)"
EOF
N=12
: >"$dir/run.err"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots $N --db "$dir/run.db" --quiet --trace-level 2 \
  --stats "$dir/run.json" 2>"$dir/run.err" &
run=$!
pids="$pids $run"
# waitLog PATTERN COUNT: until the run's log has COUNT lines matching, or it ended
waitLog() {
  while [ "$(grep -c "$1" "$dir/run.err")" -lt "$2" ] && kill -0 $run 2>/dev/null; do sleep 0.1; done
  [ "$(grep -c "$1" "$dir/run.err")" -ge "$2" ]
}
waitLog 'tick [0-9]*: 2 of 2 hosts up' 3 || bad "the run did not reach its third tick"
kill -STOP "$PID_h1"
waitLog 'tick [0-9]*: 2 of 2 hosts up' 6 || bad "the run did not tick while pmcd was stopped"
kill -CONT "$PID_h1"
wait $run
rc=$?
pids="$p1"
[ $rc -eq 0 ] || bad "run: exit $rc: $(grep -v 'info: tick' "$dir/run.err")"
grep -v 'info: tick' "$dir/run.err"
rows=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM Cmd")
periods=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM _tqmon_incomplete WHERE result = 'Cmd' AND relation = 'ProcSample'")
lost=$(sqlite3 "$dir/run.db" "SELECT coalesce(sum(lost), 0) FROM _tqmon_incomplete WHERE result = 'Cmd'")
missed=$(python3 -c 'import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
print(d["samples_missed"], d["late"])' "$dir/run.json")
h2=$(python3 -c 'import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
h = [h for h in d["hosts"] if h["host"] == "h2"][0]
print(h["late"], h["samples_missed"], d["behind"])' "$dir/run.json")
rows2=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM Cmd2")
echo "h2: rows $rows2; late, samples missed, and the run behind its ticks: $h2"
[ "$rows2" = $N ] && [ "$h2" = "0 0 0" ] || bad "h1 stopped held h2: $rows2 rows of $N; late, missed, behind: $h2"
late=${missed#* }
missed=${missed% *}
echo "ticks $N; Cmd rows $rows; samples missed $missed; late ticks $late; periods $periods ($lost lost)"
[ "${late:-0}" -gt 0 ] || bad "pmcd was stopped for three ticks and no tick was late"
[ "${missed:-0}" -gt 0 ] || bad "no sample counted missed (samples_missed in --stats)"
[ "${periods:-0}" -gt 0 ] || bad "Cmd lost samples and says nothing in _tqmon_incomplete"
[ "${lost:-0}" = "${missed:-0}" ] || bad "_tqmon_incomplete counts $lost lost, the PM $missed"
[ "${rows:-0}" -gt 0 ] || bad "Cmd is empty"
[ $((rows + missed)) -le $N ] && [ $((rows + missed)) -ge $((N - 1)) ] ||
  bad "Cmd has $rows rows and $missed samples missed: not one per tick ($N ticks)"
grep -q "tqmon: warning: Cmd may be incomplete from .*: $missed packets\? of ProcSample lost" "$dir/run.err" ||
  bad "no warning that Cmd may be incomplete: $(grep -v 'info: tick' "$dir/run.err")"
exit $fails
