#!/bin/sh
# shm_start.sh - a subject busy from its first line under --exec
# (tests/shm/early.c: 1,000 events and 1,000 intervals per worker, as fast
# as it can): the start handshake (the subject waits until the monitor is
# ready) and entities the monitor has not seen yet reporting until it has,
# so that every one is recorded, whether a query names the worker (a
# constant) or not, and by tqmon record; a subject that does not wait says
# so, and so does the monitor: what the subject's traced sensors saw before
# the monitor was ready is a loss of a count not known (docs/losses.md),
# marked on the answers, in the store, in --stats and in a recording.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/shm_start
rm -rf "$dir" && mkdir -p "$dir"
E=build/shm/early
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
q() { sqlite3 "$dir/$1.db" "$2"; }

$T run tests/shm/subject.tq tests/shm/early.tq --db "$dir/all.db" --quiet --exec $E 1000 2>"$dir/all.err" ||
  bad "run: exit $?: $(cat "$dir/all.err")"
for w in W1 W2; do
  for r in Enqueued Handled; do
    n=$(q all "SELECT count(DISTINCT Job) FROM $r WHERE Worker = '$w'")
    [ "$n" = 1000 ] || bad "$r: $n of the 1000 jobs of $w recorded"
  done
done
grep -q "lost" "$dir/all.err" && bad "packets lost: $(cat "$dir/all.err")"

# a query that names the worker (enabled by a constant before it exists)
$T run tests/shm/subject.tq tests/shm/early_w1.tq --db "$dir/w1.db" --quiet --exec $E 1000 2>"$dir/w1.err" ||
  bad "run W1: exit $?: $(cat "$dir/w1.err")"
n=$(q w1 "SELECT count(DISTINCT Job) FROM EnqueuedW1")
[ "$n" = 1000 ] || bad "EnqueuedW1: $n of the 1000 jobs of W1 recorded"

# everything recorded (every sensor on every entity)
$T record tests/shm/subject.tq -o "$dir/rec.trace" --exec $E 1000 2>"$dir/rec.err" || bad "record: exit $?: $(cat "$dir/rec.err")"
n=$(grep -c ' Enqueue ' "$dir/rec.trace")
[ "$n" = 2000 ] || bad "record: $n of the 2000 Enqueue events recorded"

# a subject that does not wait (TQMON_START_TIMEOUT=0: it gives up at its
# first look, before the monitor can be ready) runs with its sensors off
# until the monitor is: the subject says so, and the monitor tells that
# time as lost, how much not known.  (Should the subject have written that
# it gave up only once the monitor was ready, a moment it cannot bring
# about, nothing was lost and every job is recorded.)
TQMON_START_TIMEOUT=0 $T run tests/shm/subject.tq tests/shm/early.tq --db "$dir/gap.db" --quiet --stats "$dir/gap.json" \
  --record "$dir/gap.trace" --exec $E 1000 2>"$dir/gap.err" || bad "gap: exit $?: $(cat "$dir/gap.err")"
grep -q "^tqsensor: the monitor was not ready within 0 ms" "$dir/gap.err" || bad "gap: the subject did not say it ran on: $(cat "$dir/gap.err")"
n=$(q gap "SELECT count(*) FROM Enqueued")
if [ "$n" = 2000 ]; then
  echo "note: gap: the subject gave up after the monitor was ready: nothing lost, every job recorded"
else
  grep -q "^tqmon: shm: warning: the subject (pid [0-9]*) gave up waiting for the monitor .* with its sensors off: what they saw then is lost, on 3 relations, how much is not known" "$dir/gap.err" ||
    bad "gap: $n of 2000 jobs recorded, and the monitor did not say why: $(cat "$dir/gap.err")"
  grep -q "^tqmon: warning: Enqueued may be incomplete from .* to .*: an unknown number of packets of Enqueue lost" "$dir/gap.err" ||
    bad "gap: no warning that Enqueued may be incomplete: $(cat "$dir/gap.err")"
  # the store: Enqueued (events) over the time the sensors were off,
  # Handled (intervals: begins lost) from then to the end; lost NULL
  inc() { q "$1" "SELECT result || ' ' || relation || ' ' || ifnull(lost, 'NULL') || ' ' || (valid_to IS NULL) FROM _tqmon_incomplete ORDER BY 1"; }
  [ "$(inc gap | tr '\n' ,)" = "Enqueued Enqueue NULL 0,Handled Handling NULL 1," ] ||
    bad "gap: _tqmon_incomplete holds '$(inc gap | tr '\n' ,)'"
  # the jobs recorded (if any) came after the time the sensors were off
  [ "$(q gap "SELECT count(*) FROM Enqueued, _tqmon_incomplete i WHERE i.result = 'Enqueued' AND valid_at < i.valid_from")" = 0 ] ||
    bad "gap: jobs recorded before the time the sensors were off began"
  python3 - "$dir/gap.json" <<'PY' || bad "gap: --stats (see above)"
import json, sys
st = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in st["sensors"]}
shm = [p for p in st["pms"] if p["name"] == "shm"][0]
ok = (st.get("packets_lost_unknown") is True and s["Enqueue"].get("lost_unknown") is True and
      s["Handling"].get("lost_unknown") is True and "lost_unknown" not in s["Worker"] and
      shm["detail"]["sensors_off_ns"] > 0 and all(x["lost"] is None for x in st["incomplete"]))
if not ok:
    print("    packets_lost_unknown %s, sensors %s, shm %s, incomplete %s" % (st.get("packets_lost_unknown"), st["sensors"], shm, st["incomplete"]))
sys.exit(0 if ok else 1)
PY
  # the recording keeps the loss (COUNT ?), and its replay (as text, and as
  # a collection file) answers with the same marks
  grep -q '^[0-9]* Enqueue! ? [0-9]* [0-9]* \*$' "$dir/gap.trace" || bad "gap: no loss line 'Enqueue! ?' in the recording"
  grep -q '^[0-9]* Handling! ? [0-9]* [0-9]* \* spans$' "$dir/gap.trace" || bad "gap: no loss line 'Handling! ? ... spans' in the recording"
  $T convert tests/shm/subject.tq "$dir/gap.trace" "$dir/gap.col" 2>"$dir/conv.err" || bad "gap: convert: exit $?: $(cat "$dir/conv.err")"
  for r in gap.trace gap.col; do
    rm -f "$dir/re.db"
    $T run tests/shm/subject.tq tests/shm/early.tq --replay "$dir/$r" --db "$dir/re.db" --quiet 2>"$dir/re.err" ||
      bad "gap: replay of $r: exit $?: $(cat "$dir/re.err")"
    for x in "SELECT * FROM _tqmon_incomplete ORDER BY 1" "SELECT * FROM Enqueued ORDER BY 1, 2"; do
      [ "$(q re "$x")" = "$(q gap "$x")" ] || bad "gap: replay of $r: '$x' differs from the live run's"
    done
  done
fi

[ $fails -eq 0 ]
