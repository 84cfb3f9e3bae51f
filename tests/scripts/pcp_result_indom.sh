#!/bin/sh
# pcp_result_indom.sh - the instances of tqmon.result.* that a client asks
# for after a fetch include those of the values it fetched (sensors/
# pmdatqmon.c, readResults): pmlogger logs a changed instance domain after
# the fetch that showed the change, and tqmon rewrites its results file
# every 100 ms, so the agent used to answer with the file of that moment:
# the values logged named instances the archive did not know ("inst [7 or
# ???]"), and pcp_logger.sh found a record of 7 tuples valid with none
# logged (CI, a loaded machine).  dbpmda drives the agent itself: a
# results file of a process of ours with tuple 5, a fetch, the file
# rewritten with tuple 6 instead, an instance request (both), a fetch
# (tuple 6 alone) and an instance request (tuple 6 alone: the domain
# follows the fetches, it does not grow).
set -u
AG=${AG:-build/asan/pmdatqmon}
OUT=${OUT:-build/test-out}
command -v dbpmda >/dev/null || { echo "SKIP: no dbpmda"; exit 77; }
[ -x "$AG" ] || { echo "no $AG: make first"; exit 1; }
d=$OUT/pcp_result_indom
rm -rf "$d" && mkdir -p "$d"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
sleep 30 &
sp=$!
f=/dev/shm/tqmon-results.$sp
trap 'kill $sp 2>/dev/null; rm -f "$f" /dev/shm/.tqmon-results.$sp' EXIT
# results FILE-CONTENT: the results file of process $sp, replaced whole
results() {
  (umask 077 && printf 'tqmon-results 1\nnow 1\nresult Q 1 %s a\nrow Q %s 100 v%s\n' "$1" "$1" "$1" >"/dev/shm/.tqmon-results.$sp")
  mv "/dev/shm/.tqmon-results.$sp" "$f"
}
results 5
indom=212.4
{
  echo "open pipe $PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c none -l $PWD/$d/agent.log"
  echo "fetch tqmon.result.tuple"
  sleep 1
  results 6
  echo "instance $indom"
  echo "fetch tqmon.result.tuple"
  echo "instance $indom"
  sleep 1
} | dbpmda -n build/pmdatqmon.pmns -e >"$d/dbpmda.out" 2>&1 || bad "dbpmda: exit $?: $(cat "$d/dbpmda.out")"
grep -q "Sanitizer\|runtime error" "$d/dbpmda.out" "$d/agent.log" && bad "sanitizer report: $(cat "$d/agent.log")"
# the instance lists, one line each: the names after each "instance" command
awk '/^pmInDom:/ { if (n) print l; n++; l = ""; next } /^\[ *[0-9]+\] inst:/ { sub(/.*name: /, ""); l = l " " $0 }
     /^fetch/ { if (n) print l; n = 0 } END { if (n) print l }' "$d/dbpmda.out" >"$d/lists"
first=$(sed -n 1p "$d/lists") second=$(sed -n 2p "$d/lists")
echo "instances after the first fetch:$first; after the second:$second"
case "$first" in *"\"$sp/Q/5\""*) ;; *) bad "the instance request after the first fetch does not name its tuple $sp/Q/5:$first" ;; esac
case "$first" in *"\"$sp/Q/6\""*) ;; *) bad "the instance request does not name the tuple valid now, $sp/Q/6:$first" ;; esac
[ "$second" = " \"$sp/Q/6\"" ] || bad "after the second fetch the instances are not its tuple alone:$second"
grep -q 'value "a=v6 from=100"' "$d/dbpmda.out" || bad "the second fetch does not answer tuple 6: $(cat "$d/dbpmda.out")"
[ $fails -eq 0 ] && echo ok
exit $((fails > 0))
