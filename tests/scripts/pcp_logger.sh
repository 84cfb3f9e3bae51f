#!/bin/sh
# pcp_logger.sh - a running tqmon's results in a pmlogger archive (issue 19,
# item 3: tqmon.result.* served by pmdatqmon, sensors/pmdatqmon.md).  The
# mailbox program runs under tqmon --pcp-export with the query of the
# processes ready to run now (tests/pcp/results.tq); a pmlogger of the
# test's own logs tqmon.result.{valid,rows,tuple} from a pmcd of the test's
# own on its own port while the query runs.  Read back from the archive
# after the run:
#   - pmrep -a: a sample of the tuples valid now and of the rows so far at
#     every record, the rows never going back, more than none, and never
#     more than the run stored in its SQLite file;
#   - pmdumplog: at each record the number of tuples logged is the
#     number valid now of the same fetch, and every tuple logged is a row
#     the run stored (its process, from the same nanosecond).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
AG=${AG:-build/asan/pmdatqmon}
. tests/pcp/lib.sh
PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c none -l \$d/log/tqmon.log"
pcpTest pcp_logger
command -v pmrep >/dev/null || { echo "SKIP: no pmrep"; exit 77; }
command -v pmdumplog >/dev/null || { echo "SKIP: no pmdumplog"; exit 77; }
[ -x "$PCP_BINADM/pmlogger" ] || { echo "SKIP: no pmlogger in $PCP_BINADM"; exit 77; }
pcpStart l1 || exit 1
H=127.0.0.1:$PORT_l1
sed -n '/^-- "Which/q;p' examples/mailbox/monitor.tq >"$dir/decl.tq"
$T run "$dir/decl.tq" tests/pcp/results.tq --pcp-export --db "$dir/run.db" --quiet 2>"$dir/run.err" \
  --exec build/mailbox/mailbox -n 2500 -u 3000 -l "$dir/mb.log" &
tq=$!
pids=$tq
i=0
while [ $i -lt 300 ] && ! pminfo -h "$H" -f tqmon.result.valid 2>/dev/null | grep -q "\"$tq/ReadyNow\""; do
  sleep 0.1
  i=$((i + 1))
done
pminfo -h "$H" -f tqmon.result.valid 2>/dev/null | grep -q "\"$tq/ReadyNow\"" ||
  { bad "the agent serves no result of tqmon $tq: $(cat "$dir/run.err")"; exit 1; }

# pmlogger, while the query runs (its first record holds the rows so far)
printf 'log mandatory on 250 msec {\n  tqmon.result.valid\n  tqmon.result.rows\n  tqmon.result.tuple\n}\n' >"$dir/logger.conf"
PCP_LOGGER_METRIC=tqmon.result.rows pcpLoggers "$dir/logger.conf" l1
kill -0 $tq 2>/dev/null || bad "the run ended before pmlogger logged it: make the program run longer"
wait $tq || bad "the run: exit $?: $(cat "$dir/run.err")"
pids=$logger_l1
kill -INT $logger_l1
wait $logger_l1
pids=""
stored=$(sqlite3 "$dir/run.db" "SELECT count(*) FROM ReadyNow")
[ "${stored:-0}" -gt 0 ] || bad "the run stored no row of ReadyNow"

# ---------------------------------------------------------------- pmrep -a
PATH=/usr/bin:$PATH pmrep -a "$dir/arch-l1" -r -o csv -i "$tq/ReadyNow" tqmon.result.valid tqmon.result.rows \
  >"$dir/pmrep.csv" 2>"$dir/pmrep.err" || bad "pmrep -a: $(cat "$dir/pmrep.err")"
head -4 "$dir/pmrep.csv"
# (a record after the run ended has no instance: empty fields, left out)
awk -F, 'NR > 1 && $2 != "" && $3 != ""' "$dir/pmrep.csv" >"$dir/samples"
n=$(grep -c . "$dir/samples")
[ "$n" -ge 4 ] || bad "the archive has $n samples of the result while the query ran: $(cat "$dir/pmrep.csv")"
awk -F, '$2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/ { n++ } END { exit n > 0 }' "$dir/samples" || bad "pmrep -a: a sample that is not a count"
awk -F, '$3 + 0 < last { n++ } { last = $3 + 0 } END { exit !(n == 0 && last > 0) }' "$dir/samples" ||
  bad "pmrep -a: the rows so far go back, or stay at zero"
last=$(tail -n 1 "$dir/samples" | cut -d, -f3)
[ "${last:-0}" -le "${stored:-0}" ] || bad "the archive logged $last rows, the run stored $stored"
echo "pmrep -a: $n samples, the rows growing to $last of the $stored the run stored"

# ---------------------------------------------------------------- pmdumplog: the tuples
TZ=UTC pmdumplog "$dir/arch-l1" tqmon.result.valid tqmon.result.tuple >"$dir/dump" 2>"$dir/dump.err" ||
  bad "pmdumplog: $(cat "$dir/dump.err")"
# per record: the valid count of our result and the tuples logged with it
awk -v r="$tq/ReadyNow" '
  /^[0-9][0-9]:[0-9][0-9]:/ { if (rec) print v, t; rec++; v = "-"; t = 0; next }
  index($0, "\"" r "\"") && /inst \[/ { sub(/.* value /, ""); v = $0; next }
  index($0, "\"" r "/") && /inst \[/ { t++ }
  END { if (rec) print v, t }' "$dir/dump" >"$dir/counts"
awk '$1 != "-" && $1 != $2 { n++ } END { exit n > 0 }' "$dir/counts" ||
  bad "a record whose tuples are not as many as its valid count: $(awk '$1 != "-" && $1 != $2' "$dir/counts" | head -3)"
sed -n "s|^.*inst \[[0-9]* or \"$tq/ReadyNow/[0-9]*\"\] value \"\(.*\)\"$|\1|p" "$dir/dump" | sort -u >"$dir/tuples"
nt=$(grep -c . "$dir/tuples")
[ "$nt" -gt 0 ] || bad "no tuple of ReadyNow in the archive: $(head -20 "$dir/dump")"
grep -v '^Process=P[0-9]* State=Ready from=[0-9]*$' "$dir/tuples" | head -3 | grep . && bad "tuples that are not a process ready to run"
# (SQL quoting: a process name is P and digits, checked above)
missing=0
while IFS= read -r t; do
  p=$(echo "$t" | sed 's/^Process=\([^ ]*\) .*$/\1/')
  from=$(echo "$t" | sed 's/^.*from=//')
  [ "$(sqlite3 "$dir/run.db" "SELECT count(*) FROM ReadyNow WHERE Process = '$p' AND valid_from = $from")" = 1 ] ||
    missing=$((missing + 1))
done <"$dir/tuples"
[ $missing -eq 0 ] || bad "$missing of the $nt tuples logged are not rows the run stored"
echo "pmdumplog: $nt tuples logged, each a row the run stored"
exit $fails
