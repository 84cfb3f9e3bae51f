#!/bin/sh
# daemon.sh - a running monitor whose queries come and go (issue 20):
# tqmon daemon --host with queries added, watched and removed through its
# socket, against three `sleep` processes started here.
#   - two queries sharing a sensor: the stats show the sensor enabled on
#     the union of their processes; removing the first (the second is
#     watched all along) leaves exactly the second's, at once; removing the
#     second leaves 0 enabled entities;
#   - the watched rows are what ps says of the same processes, and no row
#     is earlier than the query's addition;
#   - a persistent-data query's table survives its removal in the store, a
#     plain one's is dropped;
#   - a new phase restarts a current-phase cumulative count, not a global
#     one, and the stored rows record their phase; it restarts a
#     current-phase query's histogram, not a global one's;
#   - a folding histogram of a live query: its width doubles at each fold,
#     its sampling interval follows (a quarter of the width: its watched
#     rows come that far apart, 250 ms before), the bytes its blocks hold
#     (the allocator's) do not change;
#   - a watcher that disconnects mid-watch: the daemon goes on, a query
#     without persistent collection pauses (its rows stop, its enables are
#     given back), one with it goes on collecting (its rows grow, its
#     enables stay);
#   - a query added later answers from where persistent collection kept
#     what it reads (its rows before its addition are the collector's,
#     row for row), one whose records were not kept from its addition, and
#     says why; no persistent-collection query left, nothing is kept;
#   - bad input: a query that does not compile is refused with the
#     compiler's exact message (tests/daemon/bad.err) while the others run;
#     one that declares a sensor is refused; removing an unknown query; a
#     second daemon on the same socket; a socket directory others may enter.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
. tests/host/lib.sh
[ -r /proc/self/stat ] || { echo "no /proc here"; exit 77; }
log=$OUT/daemon
rm -rf "$log" && mkdir -p "$log"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-daemon.XXXXXX") || exit 1
sock=$dir/sock
pids=""
cleanup() {
  [ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
  for p in $pids; do kill "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
for i in 1 2 3; do
  sleep 600 &
  pids="$pids $!"
done
set -- $pids
p1=$1 p2=$2 p3=$3
for p in $pids; do waitcomm "$p" sleep || { echo "FAIL: sleep $p did not start"; exit 1; }; done

q() { $T query "$@" --socket "$sock"; }
# stats: the daemon's statistics into $log/stats.json
stats() { q stats >"$log/stats.json" 2>"$log/stats.err" || bad "query stats: $(cat "$log/stats.err")"; }
# enabled SENSOR: the entities it is enabled on now, sorted, one line
enabled() {
  grep "{\"sensor\": \"$1\"" "$log/stats.json" | sed 's/.*"entities": \[\([^]]*\)\].*/\1/' | tr -d '" ' | tr ',' '\n' | sort -n | tr '\n' ' '
}
# rows NAME: the rows column of query NAME in `query list`
rows() { q list | awk -v n="$1" '$1 == n { print $5 }'; }
# waitrows NAME N: until query NAME has at least N rows (60 s at most)
waitrows() {
  k=0
  while [ "$(rows "$1")" -lt "$2" ] 2>/dev/null || [ -z "$(rows "$1")" ]; do
    k=$((k + 1))
    [ $k -gt 240 ] && { bad "query $1 has fewer than $2 rows after 60 s"; return 1; }
    sleep 0.25
  done
  return 0
}

# ---------------------------------------------------------------- start, and a second one refused
$T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$sock" --db "$dir/s.db" \
  --stats "$log/end.json" 2>"$log/daemon.err" &
dpid=$!
k=0
until grep -q "serving" "$log/daemon.err" 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 600 ] && { bad "the daemon did not start: $(cat "$log/daemon.err")"; exit 1; }
  sleep 0.1
done
mode=$(stat -c %a "$sock")
[ "$mode" = 600 ] || bad "the socket has mode $mode, not 600"
[ "$(stat -c %a "$dir")" = 700 ] || bad "the socket's directory is not 700"
$T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$sock" 2>"$log/second.err"
rc=$?
[ $rc -eq 1 ] || bad "a second daemon on the same socket: exit $rc, not 1"
grep -q "another tqmon daemon serves $sock" "$log/second.err" || bad "the second daemon did not say why: $(cat "$log/second.err")"
$T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$dir/kept.sock" --kept 10 2>"$log/kept.err"
rc=$?
[ $rc -eq 1 ] && grep -q "(session-history, tqmon daemon --kept) needs a size of at least 1M" "$log/kept.err" ||
  bad "--kept 10: exit $rc $(cat "$log/kept.err")"
open=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-open.XXXXXX")
chmod 755 "$open"
$T daemon tests/daemon/base.tq sensors/host.tq --host --socket "$open/sock" 2>"$log/open.err"
rc=$?
rmdir "$open"
[ $rc -eq 1 ] && grep -q "no one else may enter" "$log/open.err" || bad "a socket directory of mode 755 was taken: exit $rc $(cat "$log/open.err")"

# ---------------------------------------------------------------- two queries sharing a sensor
sed -e "s/PID1/$p1/" -e "s/PID2/$p2/" tests/daemon/pair.tq >"$dir/a.tq"
sed -e "s/PID1/$p2/" -e "s/PID2/$p3/" tests/daemon/pair.tq >"$dir/b.tq"
q add "$dir/a.tq" --name A >"$log/addA.out" 2>&1 || bad "add A: $(cat "$log/addA.out")"
q add "$dir/b.tq" --name B --persistent-data >"$log/addB.out" 2>&1 || bad "add B: $(cat "$log/addB.out")"
# bad input while they run
q add tests/daemon/bad.tq --name Bad >"$log/bad.out" 2>"$log/bad.err"
rc=$?
[ $rc -eq 1 ] || bad "a query that does not compile: exit $rc, not 1"
diff -u tests/daemon/bad.err "$log/bad.err" >"$log/bad.diff" || bad "its message: $(cat "$log/bad.diff")"
q add tests/daemon/declares.tq --name Decl >/dev/null 2>"$log/decl.err" && bad "a query declaring a sensor was added"
grep -q "declares the relation Extra" "$log/decl.err" || bad "declares.tq refused without the reason: $(cat "$log/decl.err")"
q add "$dir/a.tq" --name A >/dev/null 2>"$log/dup.err" && bad "a second query named A was added"
q rm Nosuch 2>"$log/rm.err"
rc=$?
[ $rc -eq 1 ] && grep -q "no query named Nosuch" "$log/rm.err" || bad "removing an unknown query: exit $rc $(cat "$log/rm.err")"
waitrows A 4
waitrows B 4
stats
addedB=$(grep '"name": "B"' "$log/stats.json" | sed 's/.*"added": \([0-9]*\).*/\1/')
got=$(enabled ProcessState)
want=$(printf '%s\n' $p1 $p2 $p3 | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || bad "A and B: ProcessState enabled on '$got', not '$want'"

# the watched rows against ps (an independent look at the same processes)
timeout 3 $T query watch B --socket "$sock" >"$log/watchB.jsonl" 2>"$log/watchB.err"
[ -s "$log/watchB.jsonl" ] || bad "watching B gave no row: $(cat "$log/watchB.err")"
for p in $p2 $p3; do
  st=$(statename "$(ps -o state= -p "$p" | tr -d ' ')")
  grep "\"Process\": \"$p\"" "$log/watchB.jsonl" | grep -v "\"State\": \"$st\", \"Command\": \"sleep\"" >>"$log/watch.bad"
done
[ -s "$log/watch.bad" ] && bad "watched rows that ps contradicts: $(head -3 "$log/watch.bad")"
grep -q "\"Process\": \"$p1\"" "$log/watchB.jsonl" && bad "B's rows name $p1, which only A asks about"
# B has persistent data but not collection: its watcher left, it pauses
q list >"$log/list1.txt"
grep -q "^B.*paused" "$log/list1.txt" || bad "B did not pause when its watcher left: $(cat "$log/list1.txt")"
kill -0 "$dpid" 2>/dev/null || bad "the daemon died after a watcher disconnected"
stats
got=$(enabled ProcessState)
want=$(printf '%s\n' $p1 $p2 | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || bad "B paused: ProcessState enabled on '$got', not A's '$want'"
# a second watch starts it again, and stays while A is removed
$T query watch B --socket "$sock" >"$log/watchB2.jsonl" 2>&1 &
w=$!
waitrows B "$(($(rows B) + 4))"
q list >"$log/list1b.txt"
grep -q "^B.*collecting" "$log/list1b.txt" || bad "B watched again is not collecting: $(cat "$log/list1b.txt")"

# remove the first: the sensor stays enabled on the second's entities only
# (B is watched all along: what is left right after the removal is B's)
q rm A || bad "rm A"
stats
got=$(enabled ProcessState)
want=$(printf '%s\n' $p2 $p3 | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || bad "A removed: ProcessState enabled on '$got', not B's '$want'"
grep -q "\"ProcessState\", \"count\": 2," "$log/stats.json" || bad "A removed: not 2 ProcessState entities enabled: $(grep ProcessState "$log/stats.json")"
kill -0 $w 2>/dev/null || bad "B's watcher ended when A was removed: $(cat "$log/watchB2.jsonl" | tail -2)"
q rm B || bad "rm B"
# (its watch ends with the query: the client exits)
k=0
while kill -0 $w 2>/dev/null; do
  k=$((k + 1))
  [ $k -gt 100 ] && { bad "B's watch did not end when B was removed"; kill $w; break; }
  sleep 0.1
done
wait $w 2>/dev/null
stats
grep -q '"enabled_entities": 0,' "$log/stats.json" || bad "A and B removed: enabled entities left: $(grep -A3 '"enabled"' "$log/stats.json")"
[ -z "$(enabled ProcessState)" ] || bad "ProcessState still enabled: $(enabled ProcessState)"
# persistent data: B's table is in the store, A's is not
nb=$(sqlite3 "$dir/s.db" "select count(*) from B where phase = 'phase0'" 2>&1)
[ "$nb" -ge 4 ] 2>/dev/null || bad "B's persistent rows: '$nb'"
sqlite3 "$dir/s.db" "select count(*) from A" >/dev/null 2>&1 && bad "A's table is still in the store (no persistent data)"
first=$(sqlite3 "$dir/s.db" "select min(valid_at) from B")
[ "$first" -ge "$addedB" ] 2>/dev/null || bad "B's first row at '$first', before it was added at '$addedB'"
bad0=$(sqlite3 "$dir/s.db" "select count(*) from B where Process not in ('$p2', '$p3') or Command <> 'sleep'")
[ "$bad0" = 0 ] || bad "B's stored rows name other processes: $bad0"

# ---------------------------------------------------------------- phases
sed -e "s/PID1/$p1/" tests/daemon/count.tq >"$dir/c.tq"
q add "$dir/c.tq" --name G --persistent-data --persistent-collection || bad "add G"
q add "$dir/c.tq" --name C --persistent-data --persistent-collection --phase current || bad "add C"
waitrows G 4
waitrows C 4
ph() { $T phase start "$1" --socket "$sock"; }
ph p1 || bad "phase start p1"
ph p1 2>"$log/phase.err" && bad "phase p1 started twice"
grep -q "phase p1 was started before" "$log/phase.err" || bad "phase p1 twice: $(cat "$log/phase.err")"
ph 'bad name' 2>/dev/null && bad "a phase named 'bad name' was started"
waitrows G "$(($(rows G) + 4))"
waitrows C "$(($(rows C) + 4))"
q list >"$log/list2.txt"
grep -q "^C	current-phase	data,collection	p1	" "$log/list2.txt" || bad "C is not a current-phase query of p1: $(cat "$log/list2.txt")"
q rm G || bad "rm G"
q rm C || bad "rm C"
sq() { sqlite3 "$dir/s.db" "$1" 2>&1; }
g0=$(sq "select max(N) from G_Count where phase = 'phase0'")
g1=$(sq "select min(N) from G_Count where phase = 'p1'")
c0=$(sq "select max(N) from C_Count where phase = 'phase0'")
c1=$(sq "select min(N) from C_Count where phase = 'p1'")
echo "global count: up to $g0 in phase0, from $g1 in p1; current-phase count: up to $c0 in phase0, from $c1 in p1"
[ "$g0" -ge 3 ] 2>/dev/null && [ "$g1" -gt "$g0" ] 2>/dev/null || bad "the global count restarted at the phase: phase0 up to '$g0', p1 from '$g1'"
[ "$c0" -ge 3 ] 2>/dev/null && [ "$c1" -le 1 ] 2>/dev/null || bad "the current-phase count did not restart: phase0 up to '$c0', p1 from '$c1'"

# ---------------------------------------------------------------- persistent collection
# P (persistent collection) and N (none) watched, then their watchers
# killed: P goes on collecting (its rows grow, its enables stay), N pauses
# (its rows stop, its enables are given back)
sed -e "s/PID1/$p1/" -e "s/PID2/$p1/" tests/daemon/pair.tq >"$dir/p.tq"
sed -e "s/PID1/$p3/" -e "s/PID2/$p3/" tests/daemon/pair.tq >"$dir/n.tq"
q add "$dir/p.tq" --name P --persistent-collection >/dev/null || bad "add P"
q add "$dir/n.tq" --name N >/dev/null || bad "add N"
$T query watch P --socket "$sock" >"$log/watchP.jsonl" 2>&1 &
wp=$!
$T query watch N --socket "$sock" >"$log/watchN.jsonl" 2>&1 &
wn=$!
waitrows P 4
waitrows N 4
stats
got=$(enabled ProcessState)
want=$(printf '%s\n' $p1 $p3 | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || bad "P and N watched: ProcessState enabled on '$got', not '$want'"
kill $wp $wn 2>/dev/null
wait $wp $wn 2>/dev/null
k=0
until q list | grep -q "^N	.*	0	paused	"; do
  k=$((k + 1))
  [ $k -gt 100 ] && { bad "N did not pause when its watcher was killed: $(q list)"; break; }
  sleep 0.1
done
q list >"$log/list3.txt"
grep -q "^P	.*	0	collecting	" "$log/list3.txt" || bad "P (persistent collection) is not collecting without a watcher: $(cat "$log/list3.txt")"
stats
got=$(enabled ProcessState)
[ "$got" = "$p1 " ] || bad "P unwatched, N paused: ProcessState enabled on '$got', not P's '$p1 '"
rp=$(rows P)
rn=$(rows N)
waitrows P $((rp + 8))
[ "$(rows N)" = "$rn" ] || bad "N is paused, yet its rows went from $rn to $(rows N)"
stats
got=$(enabled ProcessState)
[ "$got" = "$p1 " ] || bad "P unwatched for a while: ProcessState enabled on '$got', not '$p1 '"
q rm P >/dev/null || bad "rm P"
q rm N >/dev/null || bad "rm N"

# ---------------------------------------------------------------- kept records: a query added later
# K collects persistently (a cumulative count of p1's samples): the
# records of ProcessState are kept from then on.  Y, the same query added
# seconds later, answers from where K began: its rows before its addition
# are K's, row for row.  Z, about p3, whose samples no query asked for,
# answers from its addition and says why; Z2, the same added later,
# answers from Z's first sample (kept: ProcessState's records are), row
# for row as Z.
sed -e "s/PID1/$p3/" tests/daemon/count.tq >"$dir/c3.tq"
q add "$dir/c.tq" --name K --persistent-data --persistent-collection >/dev/null || bad "add K"
waitrows K 12
q add "$dir/c.tq" --name Y --persistent-data >"$log/addY.out" 2>&1 || bad "add Y: $(cat "$log/addY.out")"
q add "$dir/c3.tq" --name Z --persistent-data >"$log/addZ.out" 2>&1 || bad "add Z: $(cat "$log/addZ.out")"
grep -q "before its addition: records kept by persistent collection" "$log/addY.out" || bad "Y's addition does not say it covers from before: $(cat "$log/addY.out")"
grep -q "covers from its addition.*no sample of ProcessState on $p3" "$log/addZ.out" || bad "Z's addition does not say why it covers from then: $(cat "$log/addZ.out")"
waitrows Z 8
q add "$dir/c3.tq" --name Z2 --persistent-data >"$log/addZ2.out" 2>&1 || bad "add Z2: $(cat "$log/addZ2.out")"
q list >"$log/list4.txt"
cov() { awk -v n="$1" '$1 == n { print $NF }' "$log/list4.txt"; } # covers_from, the last column
stats
added() { grep "\"name\": \"$1\"" "$log/stats.json" | sed 's/.*"added": \([0-9]*\).*/\1/'; }
grep -q '"kept": {"bytes": [1-9][0-9]*, "bound": 67108864, ' "$log/stats.json" || bad "the stats do not say what is kept: $(grep kept "$log/stats.json")"
echo "K covers from $(cov K), Y added at $(added Y) covers from $(cov Y); Z added at $(added Z) covers from $(cov Z), Z2 added at $(added Z2) covers from $(cov Z2)"
[ "$(cov Y)" = "$(cov K)" ] && [ "$(cov Y)" -lt "$(added Y)" ] 2>/dev/null || bad "Y covers from '$(cov Y)', not from K's '$(cov K)' before its addition '$(added Y)'"
[ "$(cov Z)" = "$(added Z)" ] || bad "Z, of nothing kept, covers from '$(cov Z)', not its addition '$(added Z)'"
[ "$(cov Z2)" -gt "$(cov Z)" ] && [ "$(cov Z2)" -lt "$(added Z2)" ] 2>/dev/null || bad "Z2 covers from '$(cov Z2)', not from Z's first sample (after '$(cov Z)')"
waitrows Y "$(($(rows Y) + 4))"
for n in Y Z Z2 K; do q rm $n >/dev/null || bad "rm $n"; done
# differ A B: the rows of B's count that are not A's (not the last: each
# query's last row was cut at its own removal)
differ() {
  sq "select count(*) from (select N, valid_from, valid_to, phase from $2_Count where valid_to < (select max(valid_to) from $2_Count)
      except select N, valid_from, valid_to, phase from $1_Count)"
}
early() { sq "select count(*) from $1_Count where valid_from < $(added $1) and valid_from > 0"; }
# missing A B: A's rows that ended before B was added and are not B's
missing() {
  sq "select count(*) from (select N, valid_from, valid_to, phase from $1_Count where valid_to <= $(added $2)
      except select N, valid_from, valid_to, phase from $2_Count)"
}
echo "Y: $(early Y) rows from before its addition, $(differ K Y) not K's, $(missing K Y) of K's missing; Z2: $(early Z2) early, $(differ Z Z2) not Z's, $(missing Z Z2) of Z's missing"
[ "$(early Y)" -ge 8 ] 2>/dev/null || bad "Y has '$(early Y)' rows from before its addition"
[ "$(differ K Y)" = 0 ] && [ "$(missing K Y)" = 0 ] || bad "Y's rows are not K's: $(differ K Y) of Y's not K's, $(missing K Y) of K's missing"
[ "$(early Z2)" -ge 4 ] 2>/dev/null && [ "$(differ Z Z2)" = 0 ] && [ "$(missing Z Z2)" = 0 ] || bad "Z2's rows are not Z's: $(early Z2) early, $(differ Z Z2) not Z's, $(missing Z Z2) missing"
zFirst=$(sq "select min(valid_from) from Z_Count where N = 1")
[ "$zFirst" -ge "$(added Z)" ] 2>/dev/null || bad "Z counted a sample at '$zFirst', before its addition (nothing was kept)"
stats
grep -q '"kept": null' "$log/stats.json" || bad "no persistent-collection query left, yet records are kept: $(grep kept "$log/stats.json")"

# ---------------------------------------------------------------- a folding histogram, live
# 4 buckets of 4 samples (the clock is 250 ms): it folds every few seconds,
# the width doubles and the sampling slows down to a quarter of it: the
# watched rows (one a sample) come 250 ms apart at first, width/4 apart
# after the folds; the bytes its blocks hold (as the allocator says) stay
printf 'range of S is ProcessState\nretrieve (S.Threads) where S.Process = "%s"\n' "$p1" >"$dir/h.tq"
q add "$dir/h.tq" --name H --histogram Nope:4 2>"$log/hnope.err" && bad "a histogram of no attribute was taken"
grep -q "no number attribute 'Nope'" "$log/hnope.err" || bad "histogram Nope: $(cat "$log/hnope.err")"
q add "$dir/h.tq" --name H --histogram Threads:4 >/dev/null || bad "add H with a histogram"
$T query watch H --socket "$sock" >"$log/watchH.jsonl" 2>&1 &
wh=$!
hfield() { echo "$hl" | sed "s/.*\"$1\": \([0-9]*\).*/\1/"; }
k=0
bytes0=""
while :; do
  stats
  hl=$(grep '"name": "H"' "$log/stats.json")
  folds=$(hfield folds)
  [ -z "$bytes0" ] && [ "$(hfield bytes)" -gt 0 ] 2>/dev/null && bytes0=$(hfield bytes) folds0=$folds
  [ "${folds:-0}" -ge 2 ] 2>/dev/null && break
  k=$((k + 1))
  [ $k -gt 120 ] && { bad "the histogram did not fold twice in 60 s: $hl"; break; }
  sleep 0.5
done
width=$(hfield width)
period=$(hfield sample_period)
bytes=$(hfield bytes)
[ "$width" = $((1000000000 << folds)) ] || bad "histogram width $width after $folds folds, not 1 s doubled each time"
[ "$period" = $((width / 4)) ] || bad "histogram sampled every $period ns, not a quarter of the width $width"
[ "$bytes" = "$bytes0" ] && [ "$bytes" -ge 64 ] && [ "$folds" -gt "${folds0:-0}" ] ||
  bad "the histogram's blocks held $bytes0 bytes after ${folds0:-?} folds, $bytes after $folds"
# the rows as sampled: the first ones 250 ms apart, the last ones a period
# apart (the period now, or the next one's if it folded again meanwhile)
n0=$(grep -c '"op": "insert"' "$log/watchH.jsonl")
k=0
while [ "$(grep -c '"op": "insert"' "$log/watchH.jsonl")" -lt $((n0 + 3)) ]; do
  k=$((k + 1))
  [ $k -gt 300 ] && { bad "H's watcher got no 3 rows more in 30 s"; break; }
  sleep 0.1
done
stats
hl=$(grep '"name": "H"' "$log/stats.json")
period2=$(hfield sample_period)
kill $wh 2>/dev/null
wait $wh 2>/dev/null
grep '"op": "insert"' "$log/watchH.jsonl" | sed 's/.*"at": \([0-9]*\).*/\1/' >"$log/hat.txt"
gaps=$(prev=""; while read -r at; do [ -n "$prev" ] && echo $((at - prev)); prev=$at; done <"$log/hat.txt") # (64-bit: not awk)
first=$(echo "$gaps" | head -3 | sort -u | tr '\n' ' ')
last=$(echo "$gaps" | tail -2 | sort -u | tr '\n' ' ')
echo "H's rows: the first 250 ms apart ($first), the last ($last) after $folds folds (a period of $period, then $period2)"
[ "$first" = "250000000 " ] || bad "H's first rows are not 250 ms apart: $first"
for g in $last; do
  [ "$g" = "$period" ] || [ "$g" = "$period2" ] || bad "H's last rows are $g ns apart, not its sampling period $period ($period2)"
done
[ "$period" -ge 1000000000 ] || bad "the sampling period after $folds folds is $period"
q rm H >/dev/null || bad "rm H"

# ---------------------------------------------------------------- histograms at a new phase
# HC (current-phase) and HG (global), the same histogram of p1's samples:
# at phase p2 HC's histogram starts again (no value, then a later start),
# HG's goes on
q add "$dir/h.tq" --name HC --phase current --histogram Threads:1000 >/dev/null || bad "add HC"
q add "$dir/h.tq" --name HG --histogram Threads:1000 >/dev/null || bad "add HG"
hget() { grep "\"name\": \"$1\"" "$log/stats.json" | sed "s/.*\"histogram\": {[^}]*\"$2\": \([0-9]*\).*/\1/"; }
waithist() { # waithist NAME N: until NAME's histogram holds N values (60 s at most)
  k=0
  while :; do
    stats
    [ "$(hget "$1" values)" -ge "$2" ] 2>/dev/null && return 0
    k=$((k + 1))
    [ $k -gt 240 ] && { bad "$1's histogram holds fewer than $2 values after 60 s: $(grep "\"name\": \"$1\"" "$log/stats.json")"; return 1; }
    sleep 0.25
  done
}
waithist HC 6
waithist HG 6
c0=$(hget HC values) s0=$(hget HC start)
ph p2 || bad "phase start p2"
stats
c1=$(hget HC values) g1=$(hget HG values)
waithist HC 2
s2=$(hget HC start) g2=$(hget HG values)
echo "HC: $c0 values from $s0; at phase p2 $c1; then from $s2. HG: $g1, then $g2 values"
[ "$c1" -lt "$c0" ] 2>/dev/null || bad "HC's histogram did not start again at phase p2: $c0 values, then $c1"
[ "$s2" -gt "$s0" ] 2>/dev/null || bad "HC's histogram starts at $s2 after phase p2, not after its first start $s0"
[ "$g1" -ge 6 ] 2>/dev/null && [ "$g2" -ge "$g1" ] || bad "HG's histogram (global) started again at phase p2: $g1, then $g2 values"
q rm HC >/dev/null || bad "rm HC"
q rm HG >/dev/null || bad "rm HG"

# ---------------------------------------------------------------- the end: a signal ends it cleanly
kill -TERM "$dpid"
wait "$dpid"
rc=$?
dpid=""
[ $rc -eq 0 ] || bad "the daemon ended with $rc: $(cat "$log/daemon.err")"
[ -e "$sock" ] && bad "the socket was left behind"
grep -q '"session"' "$log/end.json" || bad "--stats has no session"
[ $fails -eq 0 ] || exit 1
echo "ok"
