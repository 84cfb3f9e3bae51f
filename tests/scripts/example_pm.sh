#!/bin/sh
# example_pm.sh - the example third-party PM library examples/pm/logpm.so:
# it is built from include/tqmon_pm.h alone and needs nothing of libtqmon; tqmon
# loads it from the PM path (--pm-path, TQMON_PM_PATH) and runs a live
# collection over examples/pm/access.log whose results are exactly
# examples/pm/expected.csv, and replaying what that run recorded gives the
# same; with only alice's query the PM reports fewer requests (selective
# enabling); bad lines are skipped with warnings; a missing log disables
# both PMs; a PM that is not on the path is an error.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
PMDIR=$(dirname "$T")/pm
REL=$(dirname "$(dirname "$T")")/pm/logpm.so # the release build (-z defs)
D=examples/pm
fail() { echo "$*"; exit 1; }
[ -f "$PMDIR/logpm.so" ] && [ -f "$REL" ] || fail "logpm.so is not built (make test builds it)"

# ---- built from tqmon_pm.h alone; exports tqmon_pm_list only; needs only libc
inc=$(grep '^#include "' $D/logpm.c | tr -d '\n')
[ "$inc" = '#include "../../include/tqmon_pm.h"' ] || fail "logpm.c includes: $inc"
und=$(nm -D --undefined-only "$REL" | awk '$1 != "w" && $2 !~ /@GLIBC/')
[ -z "$und" ] || fail "logpm.so needs: $und"
def=$(nm -D --defined-only "$REL" | awk '{print $3}')
[ "$def" = tqmon_pm_list ] || fail "logpm.so exports: $def"
$T pms --pm-path "$PMDIR" | grep -qx '  logpm' || fail "tqmon pms does not list logpm"

# ---- the live collection: exact results, nothing on stderr, replayable
$T run $D/weblog.tq $D/queries.tq --pm-path "$PMDIR" --pm logpm=$D/access.log --snapshots 20 --format csv \
  --record "$OUT/weblog.trace" --stats "$OUT/weblog.json" >"$OUT/weblog.csv" 2>"$OUT/weblog.err" ||
  { rc=$?; cat "$OUT/weblog.err"; fail "live run: exit $rc"; }
[ ! -s "$OUT/weblog.err" ] || { cat "$OUT/weblog.err"; fail "live run: messages on stderr"; }
diff -u $D/expected.csv "$OUT/weblog.csv"
grep -q '"name": "Client".*"recorded": 5, "delivered": 5,' "$OUT/weblog.json" || fail "Client: $(grep Client "$OUT/weblog.json")"
grep -q '"name": "Request".*"recorded": 32, "delivered": 32,' "$OUT/weblog.json" || fail "Request: $(grep Request "$OUT/weblog.json")"
$T run $D/weblog.tq $D/queries.tq --replay "$OUT/weblog.trace" --format csv >"$OUT/weblog.replay.csv"
diff -u $D/expected.csv "$OUT/weblog.replay.csv"

# ---- selective enabling: only alice (TQMON_PM_PATH this time)
TQMON_PM_PATH="$(pwd)/$PMDIR" $T run $D/weblog.tq $D/alice.tq --pm logpm=$D/access.log --snapshots 20 --format csv \
  --stats "$OUT/alice.json" >"$OUT/alice.csv"
sed -n '/^# Alice$/,/^# Bytes$/p' $D/expected.csv | sed '$d' >"$OUT/alice.expected"
diff -u "$OUT/alice.expected" "$OUT/alice.csv"
# 9 of alice's + the first request of bob, carol, dave and eve (new in their
# snapshot: the PM cannot know yet whether they are enabled); 19 not reported
grep -q '"name": "Request".*"recorded": 13, "delivered": 9,' "$OUT/alice.json" || fail "alice: $(grep Request "$OUT/alice.json")"

# ---- bad lines: skipped with a warning each (by weblog_requests)
printf '0.5 alice GET /a 200 10\n0.7 alice GET /b\n0.4 bob GET /c 200 10\n0.8 bob BREW /coffee 418 0\n\n# a comment\n1.5 bob GET /d 200 10\n' >"$OUT/bad.log"
printf 'range of R is Request\nretrieve (R.Client, R.Path)\n' >"$OUT/all.tq"
$T run $D/weblog.tq "$OUT/all.tq" --pm-path "$PMDIR" --pm logpm="$OUT/bad.log" --snapshots 3 --format csv \
  >"$OUT/bad.csv" 2>"$OUT/bad.err"
printf '# query1\nClient,Path,valid_at\nalice,/a,500000000\nbob,/d,1500000000\n' | diff -u - "$OUT/bad.csv"
cat >"$OUT/bad.expected" <<MSG
tqmon: weblog_requests: warning: $OUT/bad.log:2: not TIME CLIENT METHOD PATH STATUS BYTES: skipped
tqmon: weblog_requests: warning: $OUT/bad.log:3: time goes back: skipped
tqmon: weblog_requests: warning: $OUT/bad.log:4: unknown method BREW: skipped
MSG
diff -u "$OUT/bad.expected" "$OUT/bad.err"

# ---- a missing log: both PMs disabled (ERROR), the operation goes on
$T run $D/weblog.tq "$OUT/all.tq" --pm-path "$PMDIR" --pm logpm="$OUT/none.log" --snapshots 3 --format csv \
  >"$OUT/none.csv" 2>"$OUT/none.err" || fail "missing log: exit $? (an ERROR is not fatal)"
printf '# query1\nClient,Path,valid_at\n' | diff -u - "$OUT/none.csv"
grep -q "weblog_clients: warning: disabled after an error: cannot read $OUT/none.log" "$OUT/none.err" || { cat "$OUT/none.err"; fail "missing log: message"; }

# ---- not on the PM path
rc=0
$T run $D/weblog.tq "$OUT/all.tq" --pm-path "$OUT" --pm logpm=$D/access.log --snapshots 3 >/dev/null 2>"$OUT/nopath.err" || rc=$?
[ $rc -eq 1 ] || fail "not on the path: exit $rc"
echo "error: no processor module 'logpm' in the PM path $OUT" | diff -u - "$OUT/nopath.err"
grep -q "Sanitizer\|runtime error" "$OUT"/weblog.err "$OUT"/bad.err "$OUT"/none.err && fail "sanitizer report"
echo ok
