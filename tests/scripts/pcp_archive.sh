#!/bin/sh
# pcp_archive.sh - pmlogger archives replay to the answers of the live run
# of the same time (--pcp-archive, sensors/pcp.md).  Two pmcd processes of
# the test's own (h1, h2) are logged by two pmlogger processes while a live
# run answers tests/pcp/archive.tq about a sleep process on each; the
# replay of the two archives must give the live run's rows at every tick
# of the live run (the values asked are ones a sleeping process keeps).
# A counter: kernel.all.pswitch (context switches) as its delta relation
# HostRate.  pmlogger's records are not at the run's ticks, and the replay
# reads the archive by PCP's interpolation, which for a counter is linear
# between the two records around the time: each replay delta must be the
# increase of that line over its tick (computed here from the archive's
# raw records, pmdumplog), and the replay's total over the live ticks the
# live total, to within the counter's increase around the two ends (from
# the record before the tick to the first after the live fetch; sensors/pcp.md,
# Archives).
# Then the bad inputs: a truncated archive, an unknown metric, an
# unreachable host, a host whose metadata differs from the configuration;
# each a message, exit status 1, and nothing stored.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/pcp/lib.sh
pcpTest pcp_archive
for n in h1 h2; do pcpStart $n || exit 1; done
sleep 600 & p1=$!
sleep 600 & p2=$!
pids="$p1 $p2"
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid hinv.ncpu \
  kernel.all.pswitch 2>"$dir/describe.err" || bad "describe: $(cat "$dir/describe.err")"
sed "s/P1/$(inst $p1)/g; s/P2/$(inst $p2)/g" tests/pcp/archive.tq >"$dir/q.tq"

# ---------------------------------------------------------------- pmlogger beside a live run
printf 'log mandatory on 1 sec {\n  proc.psinfo.cmd\n  proc.psinfo.ppid\n  hinv.ncpu\n  kernel.all.pswitch\n}\n' >"$dir/logger.conf"
pcpLoggers "$dir/logger.conf" h1 h2
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1,127.0.0.1:$PORT_h2" --snapshots 4 --format csv \
  >"$dir/live.csv" 2>"$dir/live.err" || bad "live run: exit $? $(cat "$dir/live.err")"
# the archives cover the live run's last tick and a second more (their
# last record's time: a record after the live run's last fetch)
lastTick=$(awk -F, '$NF ~ /^[0-9]+$/ { print $NF }' "$dir/live.csv" | sort -n | tail -n 1)
cover=$((${lastTick:-0} + 1000000000))
n=0
until [ "$(archEnd "$dir/arch-h1")" -ge $cover ] && [ "$(archEnd "$dir/arch-h2")" -ge $cover ]; do
  n=$((n + 1))
  [ $n -gt 600 ] && { bad "pmlogger wrote nothing after the live run's last tick $lastTick"; break; }
  sleep 0.1
done
kill -INT $logger_h1 $logger_h2
wait $logger_h1 $logger_h2
cat "$dir/live.csv"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/arch-h1,$dir/arch-h2" --format csv --stats "$dir/replay.json" \
  >"$dir/replay.csv" 2>"$dir/replay.err" || bad "replay: exit $? $(cat "$dir/replay.err")"
# every live row is a replay row (the replay covers more ticks)
rows=0
for sec in Two Cpus; do
  awk -v n="# $sec" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$dir/live.csv" >"$dir/live.$sec"
  awk -v n="# $sec" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$dir/replay.csv" >"$dir/replay.$sec"
  while IFS= read -r row; do
    rows=$((rows + 1))
    grep -qxF "$row" "$dir/replay.$sec" || bad "$sec: the live row $row is not in the replay"
  done <"$dir/live.$sec"
  # and at the live run's ticks the replay has nothing more
  for t in $(cut -d, -f3- "$dir/live.$sec" | awk -F, '{print $NF}' | sort -u); do
    [ "$(grep -c ",$t\$" "$dir/live.$sec")" -eq "$(grep -c ",$t\$" "$dir/replay.$sec")" ] ||
      bad "$sec: at $t the replay has other rows than the live run"
  done
done
[ $rows -eq 16 ] || bad "the live run should have 16 rows (2 processes and 2 hosts at 4 ticks), not $rows"
# the counter: each replay delta against PCP's line between raw records
for n in h1 h2; do
  TZ=UTC pmdumplog -xxx "$dir/arch-$n" kernel.all.pswitch >"$dir/raw-$n" 2>&1 || bad "pmdumplog arch-$n: $(cat "$dir/raw-$n")"
done
python3 - "$dir/live.csv" "$dir/replay.csv" "$dir/raw-h1" "$dir/raw-h2" <<'PY' || bad "the counter's replay (see above)"
import re, sys
def section(path, name):
    rows, on = [], False
    for line in open(path):
        line = line.strip()
        if line.startswith("# "):
            on = line == "# " + name
            hdr = True
            continue
        if on and line:
            if hdr:
                hdr = False
                continue
            rows.append(line.split(","))
    return rows
def raw(path):
    # a record's line (-xxx): "Sun Nov 29 02:43:19.155399 2026 (0.025494) 1795920199 1 metric",
    # the fraction of its second in the date, the Epoch's seconds after the offset
    out, t = [], None
    for line in open(path):
        m = re.search(r"\d\d:\d\d:\d\d\.(\d+) \d+ \([0-9.]+\) (\d+) \d+ metrics?$", line.strip())
        if m:
            t = int(m.group(2)) * 10**9 + int(m.group(1).ljust(9, "0")[:9])
        m = re.search(r"\(kernel\.all\.pswitch\): value (\d+)", line)
        if m and t is not None:
            out.append((t, int(m.group(1))))
    return out
def at(recs, t):
    for (a, va), (b, vb) in zip(recs, recs[1:]):
        if a <= t <= b:
            return va + (vb - va) * (t - a) / (b - a)
    return None
ok = True
live, replay = section(sys.argv[1], "Switches"), section(sys.argv[2], "Switches")
for host, path in (("h1", sys.argv[3]), ("h2", sys.argv[4])):
    recs = raw(path)
    tick = 10**9
    worst, n = 0.0, 0
    rep = {int(r[2]): int(r[1]) for r in replay if r[0] == host}
    for t, d in sorted(rep.items()):
        a, b = at(recs, t - tick), at(recs, t)
        if a is None or b is None:
            continue
        n += 1
        worst = max(worst, abs(d - (b - a)))
    lv = {int(r[2]): int(r[1]) for r in live if r[0] == host}
    ticks = sorted(lv)
    lsum, rsum = sum(lv.values()), sum(rep.get(t, 0) for t in ticks)
    # the live run fetched each tick's value within 0.8 of a tick after
    # it; the line passes through the records around: at each end the two
    # differ by the counter's increase from the record before the tick to
    # the first one after the fetch, at most
    def span(t):
        a = max((v for r, v in recs if r <= t), default=None)
        b = min((v for r, v in recs if r >= t + tick * 8 // 10), default=None)
        return None if a is None or b is None else b - a
    ends = [span(ticks[0] - tick), span(ticks[-1])] if ticks else [None]
    bound = sum(ends) if None not in ends else -1
    print("%s: %d raw records, %d replay deltas checked against the line, worst %.1f; live total %d, replay %d over the %d live ticks (bound %d)"
          % (host, len(recs), n, worst, lsum, rsum, len(ticks), bound))
    ok &= len(recs) >= 4 and n >= 3 and worst <= 1.0 and len(ticks) == 3 and all(t in rep for t in ticks)
    ok &= abs(lsum - rsum) <= bound and lsum > 0
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- bad inputs
# a truncated archive: refused before the run, nothing stored
mkdir -p "$dir/trunc"
cp "$dir/arch-h1.meta" "$dir/arch-h1.index" "$dir/trunc/"
mv "$dir/trunc/arch-h1.meta" "$dir/trunc/a.meta" && mv "$dir/trunc/arch-h1.index" "$dir/trunc/a.index"
size=$(stat -c %s "$dir/arch-h1.0")
head -c $((size / 2)) "$dir/arch-h1.0" >"$dir/trunc/a.0"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp-archive "$dir/trunc/a" --db "$dir/trunc.db" --format csv >"$dir/trunc.out" 2>"$dir/trunc.err"
rc=$?
cat "$dir/trunc.err"
[ $rc -eq 1 ] || bad "truncated archive: exit $rc, not 1"
grep -q "archive .*trunc/a is truncated or corrupt after [0-9]* records" "$dir/trunc.err" || bad "truncated archive: no message"
[ ! -s "$dir/trunc.out" ] || ! grep -q ',' "$dir/trunc.out" || bad "truncated archive: rows came out"
[ ! -e "$dir/trunc.db" ] || [ -z "$(sqlite3 "$dir/trunc.db" 'select name from sqlite_master where name in ("Two","Cpus")' 2>/dev/null)" ] ||
  [ "$(sqlite3 "$dir/trunc.db" 'select count(*) from Two' 2>/dev/null)" = 0 ] || bad "truncated archive: rows stored"
# an unknown metric: describe writes nothing
$T pcp describe -h "127.0.0.1:$PORT_h1" -o "$dir/unknown.tq" proc.psinfo.cmd proc.psinfo.bogus 2>"$dir/unknown.err"
rc=$?
cat "$dir/unknown.err"
[ $rc -eq 1 ] || bad "unknown metric: exit $rc"
grep -q "unknown metric proc.psinfo.bogus" "$dir/unknown.err" || bad "unknown metric: no message"
[ ! -e "$dir/unknown.tq" ] || bad "unknown metric: a configuration was written"
# an unreachable host: describe and run say so; a run with no host left stores nothing
port=$(pcpFreePort)
$T pcp describe -h "127.0.0.1:$port" hinv.ncpu >/dev/null 2>"$dir/unreach.err" && bad "unreachable host: describe succeeded"
grep -q "cannot reach pmcd on 127.0.0.1:$port" "$dir/unreach.err" || bad "unreachable host: no describe message"
$T run "$dir/pcp.tq" "$dir/q.tq" --pcp "127.0.0.1:$port" --snapshots 2 --db "$dir/unreach.db" >"$dir/unreach.out" 2>"$dir/unreach2.err"
rc=$?
cat "$dir/unreach2.err"
[ $rc -eq 1 ] || bad "unreachable host alone: exit $rc, not 1"
grep -q "host 127.0.0.1:$port left out: cannot reach pmcd" "$dir/unreach2.err" || bad "unreachable host: no run message"
# metadata differing from the configuration: that host is left out, the other goes on
sed 's/^-- pcp: metric HostSample.HinvNcpu hinv.ncpu null u32 discrete$/-- pcp: metric HostSample.HinvNcpu hinv.ncpu null u64 discrete/' \
  "$dir/pcp.tq" >"$dir/differ.tq"
grep -q 'hinv.ncpu null u64' "$dir/differ.tq" || bad "differ: the edit did not apply"
$T run "$dir/differ.tq" "$dir/q.tq" --pcp "127.0.0.1:$PORT_h1" --snapshots 2 --db "$dir/differ.db" \
  >"$dir/differ.out" 2>"$dir/differ.err"
rc=$?
cat "$dir/differ.err"
[ $rc -eq 1 ] || bad "differing metadata: exit $rc, not 1"
grep -q "differ.tq:[0-9]*: on h1, hinv.ncpu is u32 discrete over instance domain null; the configuration says u64 discrete over null" \
  "$dir/differ.err" || bad "differing metadata: no message naming the line"
for db in unreach differ; do
  [ ! -e "$dir/$db.db" ] || [ "$(sqlite3 "$dir/$db.db" 'select count(*) from Cpus' 2>/dev/null || echo 0)" = 0 ] ||
    bad "$db: rows stored"
done

if [ $fails -ne 0 ]; then
  for n in h1 h2; do echo "== pmcd $n"; tail -n 8 "$PCPDIR/$n/log/pmcd.log"; done
  exit 1
fi
echo "pcp_archive: ok"
