#!/bin/sh
# pcp_slow.sh - slow hosts hold no other host (sensors/pcp.md, "Hosts are
# fetched concurrently").  Five pmcds of the test's own: h0 reached
# directly, s1 to s4 through slow links (tests/pcp/slowlink.py: 100 ms
# each way, so a fetch takes 200 ms more, a tick's listing and fetch 400
# ms of the 800 a host has).  New processes begin all the time (a sleep
# every 0.3 s), and the query asks about every sleep, so at every tick
# the processes begun in it are fetched again on every host while the
# engine samples them.  Those fetches used to be made one host after the
# other, each with a fresh 0.8 of a tick: four slow hosts took 800 ms more
# each tick, and the monitor fell behind its ticks for every host.  Now
# they are made at once, within the tick's deadline.  The run must:
#   - catch up with its ticks after its start (connecting through the slow
#     links takes a second or two) and never fall behind again ("behind"
#     in --stats: snapshots taken more than half a tick after their tick,
#     once caught up);
#   - have h0 never late, and no sample of h0 missed;
#   - answer every slow host too (their rows at most ticks).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_slow
for n in h0 s1 s2 s3 s4; do pcpStart $n || exit 1; done
links=""
H="127.0.0.1:$PORT_h0"
for n in s1 s2 s3 s4; do
  lp=$(pcpFreePort)
  links="$links $lp:$(eval echo "\$PORT_$n")"
  H="$H,127.0.0.1:$lp"
done
: >"$dir/slowlink.out"
python3 tests/pcp/slowlink.py 100 $links >"$dir/slowlink.out" 2>&1 &
pids="$!"
i=0
until grep -q ready "$dir/slowlink.out"; do
  i=$((i + 1))
  [ $i -gt 100 ] && { bad "the slow links did not start: $(cat "$dir/slowlink.out")"; exit 1; }
  sleep 0.1
done
$T pcp describe -h "127.0.0.1:$PORT_h0" -o "$dir/pcp.tq" proc.psinfo.cmd 2>"$dir/describe.err" ||
  bad "describe: $(cat "$dir/describe.err")"
cat >"$dir/q.tq" <<'EOF'
range of S is ProcSample
retrieve into Sleeps (S.Proc, S.Host) where S.PsinfoCmd = "sleep"
EOF
# a new sleep every 0.3 s, each for 2 s
sh -c 'while :; do sleep 2 & sleep 0.3; done' &
pids="$pids $!"
N=10
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "$H" --snapshots $N --db "$dir/run.db" --quiet --stats "$dir/run.json" \
  2>"$dir/run.err" || bad "run: exit $? $(cat "$dir/run.err")"
cat "$dir/run.err"
python3 - "$dir/run.json" "$dir/run.db" $N <<'PY' || bad "slow hosts held the others (see above)"
import json, sqlite3, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
db = sqlite3.connect(sys.argv[2])
n = int(sys.argv[3])
# (connecting through the slow links takes a second or two: the first
# snapshots are late, and the run catches up; then it must keep up)
ok = d["behind"] == 0 and d["behind_at_start"] < n
print("behind %d of %d ticks, at the start %d" % (d["behind"], d["ticks"], d["behind_at_start"]))
for h in d["hosts"]:
    ticks = db.execute("SELECT count(DISTINCT valid_at) FROM Sleeps WHERE Host = ?", (h["host"],)).fetchone()[0]
    print("%s: late %d, samples missed %d, fetches %d, rows at %d ticks" % (h["host"], h["late"], h["samples_missed"],
                                                                            h["fetches"], ticks))
    if h["host"] == "h0":
        ok &= h["late"] == 0 and h["samples_missed"] == 0 and ticks == n
    else:
        ok &= ticks >= n // 2
sys.exit(0 if ok else 1)
PY
exit $fails
