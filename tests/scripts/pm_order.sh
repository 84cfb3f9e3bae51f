#!/bin/sh
# pm_order.sh - every capability and synchronisation point of the PM
# interface in one live collection of three snapshots, with the test PMs
# (tests/testpm/testpm.c) writing one line per call to a shared log.  The log
# must equal tests/testpm/order.log exactly:
#   START in dependency order (hosts before load before filter before rows;
#   disk before mon), which is not the order the PMs were loaded in; END in
#   the reverse order; PREBASELINE and COLLECTION_END only for mon, which
#   asked; SNAPSHOT for the producers and mon; SNAPSHOT_END (the snapshot's
#   number, time and record sets, and a producer's own set) for those that
#   asked; sup (SUPPORTER) and net (a producer no query needs) only at START
#   and END; enabling through the producers' enable (on when a host begins,
#   off a whole snapshot after it ended, here at the end of the run: an
#   entity's flag is never told off while its next tuple may still come,
#   docs/enabling.md); samples of Busy through busy's sample; filter sees the
#   records of load only and drops host B's; recs sees the records delivered;
#   rows the result rows.  The results (CSV) must equal order.csv.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
log=$OUT/pm_order.log
rm -f "$log"
$T run $D/sensors.tq $D/queries.tq --pm-path build/testpm --snapshots 3 --format csv \
  --pm rows=log=$log,dep=filter,sync=snapshot_end \
  --pm filter=log=$log,dep=load,drop=B \
  --pm recs=log=$log,sync=snapshot_end \
  --pm mon=log=$log,dep=disk,sync=prebaseline+snapshot+snapshot_end+collection_end \
  --pm sup=log=$log \
  --pm busy=log=$log \
  --pm net=log=$log \
  --pm disk=log=$log \
  --pm load=log=$log,dep=hosts,sync=snapshot_end \
  --pm hosts=log=$log,leave=3 \
  >"$OUT/pm_order.csv" 2>"$OUT/pm_order.err"
rc=$?
[ $rc -eq 0 ] || { echo "exit $rc"; cat "$OUT/pm_order.err"; exit 1; }
[ -s "$OUT/pm_order.err" ] && { echo "unexpected messages:"; cat "$OUT/pm_order.err"; exit 1; }
diff -u $D/order.log "$log" || exit 1
diff -u $D/order.csv "$OUT/pm_order.csv" || exit 1
echo ok
