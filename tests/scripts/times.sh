#!/bin/sh
# times.sh - times people can read (issue 14.12).  A live run's tables show
# ISO 8601 dates in the zone of TZ with its offset, or in UTC with --utc,
# or from the run's first time with --relative; JSON lines give every
# wall-clock time also as NAME_iso, exact to the ns (a JavaScript number is
# not beyond 2^53); a recording's times stay h:mm:ss from time 0 (the
# golden outputs and the README's example), and --relative counts from
# the recording's first time (1:00:00 in the paper's).
# Python's datetime is the oracle of the ISO dates.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
dir=$OUT/times
rm -rf "$dir" && mkdir -p "$dir"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is missing"; exit 77; }
printf 'clock 250ms;\nrange of C is Clock\nretrieve into Ticks (N = 1) valid at begin of C\n' >"$dir/q.tq"
run() { $T run --host sensors/host.tq "$dir/q.tq" --snapshots 3 "$@"; }
# a zone given as a POSIX TZ string (no tzdata needed): UTC+5:30
TZ=IST-5:30 run >"$dir/local.txt" 2>"$dir/local.err" || bad "table: exit $?: $(cat "$dir/local.err")"
n=$(grep -c '^1 *| 20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\(\.[0-9]*\)\?+05:30$' "$dir/local.txt")
[ "$n" -eq 3 ] || bad "TZ: $n of 3 ticks as ISO dates at +05:30: $(cat "$dir/local.txt")"
TZ=IST-5:30 run --utc >"$dir/utc.txt" 2>"$dir/utc.err" || bad "--utc: exit $?: $(cat "$dir/utc.err")"
n=$(grep -c '^1 *| 20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\(\.[0-9]*\)\?Z$' "$dir/utc.txt")
[ "$n" -eq 3 ] || bad "--utc: $n of 3 ticks as ISO dates in UTC: $(cat "$dir/utc.txt")"
run --relative >"$dir/rel.txt" 2>"$dir/rel.err" || bad "--relative: exit $?: $(cat "$dir/rel.err")"
[ "$(grep '^1 ' "$dir/rel.txt" | sed 's/.*| //' | tr '\n' ' ')" = "+0:00:00 +0:00:00.25 +0:00:00.5 " ] ||
  bad "--relative: $(cat "$dir/rel.txt")"
# JSON lines: the ns and the ISO date agree exactly; and the table's dates
# are those times in the zone
TZ=IST-5:30 run --format jsonl >"$dir/j.jsonl" 2>"$dir/j.err" || bad "jsonl: exit $?: $(cat "$dir/j.err")"
python3 - "$dir/j.jsonl" <<'PY' || bad "JSON lines: the ISO dates and the ns differ"
import json, sys, datetime
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    iso = o["valid_at_iso"]
    assert iso.endswith("Z") and len(iso.split(".")[1]) == 10, iso
    d = datetime.datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    ns = int(d.timestamp()) * 10**9 + int(iso[20:29])
    assert ns == o["valid_at"], (ns, o["valid_at"])
    n += 1
assert n == 3, n
PY
# a recording: h:mm:ss as before; --relative from its first time
P=examples/paper
$T run $P/paper.tq $P/queries.tq --replay $P/paper.trace >"$dir/paper.txt" 2>&1 || bad "paper: exit $?"
grep -q '^P2 *| 2:54:20$' "$dir/paper.txt" || bad "paper: ResumedbyP1 not at 2:54:20: $(head -5 "$dir/paper.txt")"
$T run $P/paper.tq $P/queries.tq --replay $P/paper.trace --relative >"$dir/paper.rel" 2>&1 || bad "paper --relative: exit $?"
grep -q '^P2 *| +1:54:20$' "$dir/paper.rel" || bad "paper --relative: $(head -5 "$dir/paper.rel")"
[ $fails -eq 0 ] || exit 1
echo "ok: ISO dates with the zone, --utc, --relative, exact ISO times in JSON lines"
