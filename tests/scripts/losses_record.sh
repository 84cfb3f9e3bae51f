#!/bin/sh
# losses_record.sh - a recording keeps the losses (docs/losses.md): a live
# run that loses packets (tests/shm/flood.c filling rings of 16 slots) and
# records what it collected (--record, text and binary) is replayed, and the
# replay's answers carry the marks of the live run's: the same rows, the
# same incomplete periods (CSV comments, --stats "incomplete"), the same
# warnings, the same losses counted per sensor.  A recording converted
# between the forms keeps them; `tqmon record` (every record) keeps them
# too.  Each live run is compared with its own recording: how much is lost
# differs from run to run, never between a run and its replay.  First, a
# third-party CONSUMER is told the losses of the golden recording loss_lines.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/losses_record
rm -rf "$dir" && mkdir -p "$dir"
F=build/shm/flood
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
[ -x $F ] && [ -f build/testpm/recs.so ] || { echo "skipped: $F or build/testpm/recs.so not built (make test builds them)"; exit 77; }

# a CONSUMER of the interface (version 11: tq_pm.lost, the test PM recs) is
# told each loss of a recording, once, in the order of its loss lines
$T run tests/golden/loss_lines.tq --replay tests/golden/loss_lines.trace --pm-path build/testpm \
  --pm recs=log="$dir/recs.log" --quiet 2>"$dir/recs.err" || bad "recs: exit $?: $(cat "$dir/recs.err")"
grep '^recs lost ' "$dir/recs.log" >"$dir/recs.lost"
cat >"$dir/recs.want" <<'EOF'
recs lost Send P1 20ns 25ns 3
recs lost Waiting M1 40ns 42ns 1 spans
recs lost * * 50ns 50ns 2
recs lost Mailbox M9 53ns 54ns 1
EOF
cmp -s "$dir/recs.want" "$dir/recs.lost" || bad "recs: the losses told: $(diff "$dir/recs.want" "$dir/recs.lost")"
cat >"$dir/q.tq" <<'TQ'
range of E is Enqueue
retrieve into Sent (E.Worker, E.Job)
retrieve into Total (E.Worker, N = count(E.Job by E.Worker for ever))
TQ
S=tests/shm/subject.tq

# same(LIVE REPLAY what): the replay's answers, marks, warnings and losses
# are the live run's (LIVE.csv, LIVE.err, LIVE.json against REPLAY's)
same() {
  cmp -s "$dir/$1.csv" "$dir/$2.csv" || bad "$3: the replay's answers differ: $(diff "$dir/$1.csv" "$dir/$2.csv" | head -5)"
  grep '^#.*incomplete' "$dir/$2.csv" >/dev/null || bad "$3: no incomplete period in the replay's answers"
  grep 'may be incomplete' "$dir/$1.err" >"$dir/$1.warn"
  grep 'may be incomplete' "$dir/$2.err" >"$dir/$2.warn"
  [ -s "$dir/$2.warn" ] && cmp -s "$dir/$1.warn" "$dir/$2.warn" ||
    bad "$3: the warnings differ: live '$(cat "$dir/$1.warn")', replay '$(cat "$dir/$2.warn")'"
  python3 - "$dir/$1.json" "$dir/$2.json" <<'PY' || bad "$3: --stats (see above)"
import json, sys
live, rep = (json.load(open(f)) for f in sys.argv[1:3])
ok = True
def check(c, what):
    global ok
    if not c:
        print("   ", what)
        ok = False
check(live["incomplete"] == rep["incomplete"], "incomplete: live %s, replay %s" % (live["incomplete"][:3], rep["incomplete"][:3]))
check(live["packets_lost"] == rep["packets_lost"] > 0, "packets_lost: live %d, replay %d" % (live["packets_lost"], rep["packets_lost"]))
lost = lambda st: {s["name"]: s["lost"] for s in st["sensors"]}
check(lost(live) == lost(rep), "lost per sensor: live %s, replay %s" % (lost(live), lost(rep)))
sys.exit(0 if ok else 1)
PY
}

# a live run recorded as text, replayed
TQMON_RING_BITS=4 $T run $S "$dir/q.tq" --format csv --stats "$dir/lt.json" --record "$dir/lt.trace" \
  --exec $F 0.5 1000000000000 "$dir/sent1" >"$dir/lt.csv" 2>"$dir/lt.err" || bad "live (text): exit $?: $(cat "$dir/lt.err")"
grep -q '^[0-9]* Enqueue! [0-9]* [0-9]* [0-9]* W[12]$' "$dir/lt.trace" || bad "live (text): no loss line in the recording"
$T run $S "$dir/q.tq" --format csv --stats "$dir/rt.json" --replay "$dir/lt.trace" >"$dir/rt.csv" 2>"$dir/rt.err" ||
  bad "replay (text): exit $?: $(cat "$dir/rt.err")"
same lt rt "text"

# a live run recorded as a collection file, replayed; converted to text
TQMON_RING_BITS=4 $T run $S "$dir/q.tq" --format csv --stats "$dir/lb.json" --record "$dir/lb.col" \
  --exec $F 0.5 1000000000000 "$dir/sent2" >"$dir/lb.csv" 2>"$dir/lb.err" || bad "live (binary): exit $?: $(cat "$dir/lb.err")"
$T run $S "$dir/q.tq" --format csv --stats "$dir/rb.json" --replay "$dir/lb.col" >"$dir/rb.csv" 2>"$dir/rb.err" ||
  bad "replay (binary): exit $?: $(cat "$dir/rb.err")"
same lb rb "binary"
$T convert $S "$dir/lb.col" "$dir/lb.trace" 2>"$dir/conv.err" || bad "convert: exit $?: $(cat "$dir/conv.err")"
$T run $S "$dir/q.tq" --format csv --stats "$dir/rc.json" --replay "$dir/lb.trace" >"$dir/rc.csv" 2>"$dir/rc.err" ||
  bad "replay (converted): exit $?: $(cat "$dir/rc.err")"
same lb rc "binary converted to text"
# a stream (a pipe) of the collection file
$T run $S "$dir/q.tq" --format csv --stats "$dir/rp.json" --replay - <"$dir/lb.col" >"$dir/rp.csv" 2>"$dir/rp.err" ||
  bad "replay (a stream): exit $?: $(cat "$dir/rp.err")"
same lb rp "binary from a stream"

# tqmon record (every record, no query): the replay counts what it lost
TQMON_RING_BITS=4 $T record $S -o "$dir/all.col" --stats "$dir/all.json" --exec $F 0.5 1000000000000 "$dir/sent3" \
  2>"$dir/all.err" || bad "record: exit $?: $(cat "$dir/all.err")"
$T run $S "$dir/q.tq" --format csv --stats "$dir/ra.json" --replay "$dir/all.col" >"$dir/ra.csv" 2>"$dir/ra.err" ||
  bad "replay (record): exit $?: $(cat "$dir/ra.err")"
python3 - "$dir/all.json" "$dir/ra.json" <<'PY' || bad "record: --stats (see above)"
import json, sys
rec, rep = (json.load(open(f)) for f in sys.argv[1:3])
lost = lambda st: {s["name"]: s["lost"] for s in st["sensors"]}
inc = sum(x["lost"] for x in rep["incomplete"] if x["result"] == "Sent" and x["relation"] == "Enqueue")
ok = lost(rec) == lost(rep) and rec["packets_lost"] == rep["packets_lost"] and inc == lost(rec)["Enqueue"] > 0
if not ok:
    print("    recorded: lost %s (%d); replayed: lost %s (%d), Sent's periods hold %d" % (lost(rec), rec["packets_lost"], lost(rep), rep["packets_lost"], inc))
sys.exit(0 if ok else 1)
PY
grep -q 'Sent may be incomplete' "$dir/ra.err" || bad "replay (record): no warning: $(cat "$dir/ra.err")"

[ $fails -eq 0 ]
