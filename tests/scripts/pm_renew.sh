#!/bin/sh
# pm_renew.sh - a new state of an enabled entity tells its producer
# nothing (docs/enabling.md): host A's tuple ends and a new one begins at
# the second of four snapshots (the test PM hosts, renew=2), while the
# query keeps Load enabled on A.  The engine's count for A goes to 0 at
# the END and back at the BEGIN; the producer load must get "enable A on"
# once, at the first snapshot, and nothing at the second (it got a second
# "on" there, a call for nothing: through --pcp-sensors a store to the
# host's agent for every state change of an entity, which held that
# host's fetches behind them).  The log must equal tests/testpm/renew.log
# and the answers renew.csv (A's records at every snapshot: still enabled).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
D=tests/testpm
log=$OUT/pm_renew.log
rm -f "$log"
$T run $D/sensors.tq $D/queries.tq --pm-path build/testpm --snapshots 4 --format csv \
  --pm load=log=$log,dep=hosts --pm hosts=log=$log,renew=2 --pm busy= --pm disk= \
  >"$OUT/pm_renew.csv" 2>"$OUT/pm_renew.err"
rc=$?
[ $rc -eq 0 ] || { echo "exit $rc"; cat "$OUT/pm_renew.err"; exit 1; }
[ -s "$OUT/pm_renew.err" ] && { echo "unexpected messages:"; cat "$OUT/pm_renew.err"; exit 1; }
diff -u $D/renew.log "$log" || exit 1
diff -u $D/renew.csv "$OUT/pm_renew.csv" || exit 1
echo ok
