#!/bin/sh
# mailbox_live.sh - the paper's system as a live program under the monitor
# (tqmon run --exec): the live answers against the program's own log, the
# selectivity of enabling, a program list beside --exec (counted when it
# names the program, said when it does not), and a run whose subject is
# killed mid-way.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/mailbox
rm -rf "$dir" && mkdir -p "$dir"
MB=build/mailbox/mailbox
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
jsensor() { grep "\"name\": \"$2\"" "$1" | sed "s/.*\"$3\": \([0-9]*\).*/\1/"; }

# ---------------------------------------------------------------- a whole run
$T run examples/mailbox/monitor.tq --db "$dir/run.db" --quiet --stats "$dir/run.json" \
  --exec $MB -n 150 -u 3000 -w -l "$dir/run.log" 2>"$dir/run.err"
rc=$?
[ $rc -eq 0 ] || bad "live run: exit $rc: $(cat "$dir/run.err")"
grep -q " EXIT$" "$dir/run.log" || bad "live run: the program did not finish"
awk -f tests/mailbox/resumed.awk "$dir/run.log" | sort >"$dir/resumed.expected"
sqlite3 "$dir/run.db" "SELECT Process FROM ResumedbyP1" | sort >"$dir/resumed.got"
[ -s "$dir/resumed.expected" ] || bad "live run: the log has no process resumed by P1"
diff "$dir/resumed.expected" "$dir/resumed.got" >"$dir/resumed.diff" || bad "ResumedbyP1 differs from the log: $(cat "$dir/resumed.diff")"
# every sample the monitor kept is an answer the program logged
awk '$2 == "SAMPLE" && $4 != "-" { print $4 "," $3 }' "$dir/run.log" | sort -u >"$dir/samples.log"
sqlite3 -csv "$dir/run.db" "SELECT DISTINCT Process, Processor FROM RunningOnEvery10Ticks" | sort >"$dir/samples.got"
[ -s "$dir/samples.got" ] || bad "RunningOnEvery10Ticks is empty"
extra=$(comm -13 "$dir/samples.log" "$dir/samples.got")
[ -z "$extra" ] || bad "RunningOnEvery10Ticks rows the program never answered: $extra"
# selective enabling: SendMessage only in P1, every P1 send delivered;
# Waiting on at most the mailboxes P1 sent to
sends=$(awk '$2 == "SEND" && $3 == "P1"' "$dir/run.log" | wc -l | tr -d ' ')
boxes=$(awk '$2 == "SEND" && $3 == "P1" { print $4 }' "$dir/run.log" | sort -u | wc -l | tr -d ' ')
[ "$(jsensor "$dir/run.json" SendMessage max_enabled)" = 1 ] || bad "SendMessage enabled on more than P1"
[ "$(jsensor "$dir/run.json" SendMessage delivered)" = "$sends" ] || bad "SendMessage delivered $(jsensor "$dir/run.json" SendMessage delivered), P1 sent $sends"
allsends=$(awk '$2 == "SEND"' "$dir/run.log" | wc -l | tr -d ' ')
[ "$(jsensor "$dir/run.json" SendMessage recorded)" -lt "$allsends" ] || bad "the subject reported sends of other processes"
w=$(jsensor "$dir/run.json" Waiting max_enabled)
[ "$w" -ge 1 ] && [ "$w" -le "$boxes" ] || bad "Waiting enabled on $w mailboxes, P1 sent to $boxes"
# nothing lost; but for a sample request the subject did not answer within
# its bound (200 ms: a heavily loaded machine), counted and said of the
# answer that samples RunningOn
if grep -q "lost" "$dir/run.err"; then
  grep -q "packets lost: 0 ring full, 0 no ring or entity slot, 0 late .* 0 invalid, [0-9]* sample requests unanswered" "$dir/run.err" &&
    grep -q "RunningOnEvery10Ticks may be incomplete" "$dir/run.err" || bad "packets lost: $(cat "$dir/run.err")"
fi

# ---------------------------------------------------------------- recorded live, answered later
# tqmon record: every sensor enabled on every entity, samples at every
# tick; the queries answered over the recording agree with the program's log
$T record examples/mailbox/monitor.tq -o "$dir/all.col" --exec $MB -n 40 -u 2000 -l "$dir/all.log" 2>"$dir/all.err" ||
  bad "record --exec: $(cat "$dir/all.err")"
$T convert examples/mailbox/monitor.tq "$dir/all.col" "$dir/all.trace" 2>>"$dir/all.err" || bad "convert the live recording"
[ "$(grep -c ' SendMessage ' "$dir/all.trace")" = "$(grep -c ' SEND ' "$dir/all.log")" ] ||
  bad "record --exec: $(grep -c ' SendMessage ' "$dir/all.trace") sends recorded, the program made $(grep -c ' SEND ' "$dir/all.log")"
grep -q "RunningOn@" "$dir/all.trace" || bad "record --exec: no samples recorded"
$T run examples/mailbox/monitor.tq --replay "$dir/all.col" --db "$dir/all.db" --quiet 2>>"$dir/all.err" || bad "replay of the live recording"
awk -f tests/mailbox/resumed.awk "$dir/all.log" | sort >"$dir/all.expected"
sqlite3 "$dir/all.db" "SELECT Process FROM ResumedbyP1" | sort >"$dir/all.got"
diff "$dir/all.expected" "$dir/all.got" >/dev/null || bad "ResumedbyP1 over the live recording differs from the log"

# ---------------------------------------------------------------- attached to a running program
# it made its own segment (/tqmon.PID); what its rings held before is cut,
# the entities that exist are read from the segment
$MB -n 1000000 -u 500 -l "$dir/attach.log" &
sub=$!
i=0
while [ $i -lt 100 ] && [ ! -e /dev/shm/tqmon.$sub ]; do
  sleep 0.05
  i=$((i + 1))
done
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 60 --quiet --stats "$dir/attach.json" 2>"$dir/attach.err"
rc=$?
kill $sub 2>/dev/null
wait $sub 2>/dev/null
[ $rc -eq 0 ] || bad "attach: exit $rc: $(cat "$dir/attach.err")"
[ "$(jsensor "$dir/attach.json" SendMessage delivered)" -gt 0 ] || bad "attach: no SendMessage delivered"
[ "$(jsensor "$dir/attach.json" SendMessage max_enabled)" = 1 ] || bad "attach: SendMessage enabled on more than P1"
grep -q "invalid" "$dir/attach.err" && bad "attach: invalid packets: $(cat "$dir/attach.err")"
# killed by a signal, the subject could not remove its segment: an attach
# to the dead process says so and removes it
$T run examples/mailbox/monitor.tq --attach $sub --snapshots 5 --quiet 2>"$dir/attach2.err"
[ $? -eq 1 ] || bad "attach to a dead process: exit status"
grep -q "no process $sub to attach to" "$dir/attach2.err" || bad "attach to a dead process: $(cat "$dir/attach2.err")"
[ -e /dev/shm/tqmon.$sub ] && bad "attach: the dead subject's segment was left behind"

# ---------------------------------------------------------------- a program list and --exec
# --exec names the one program it measures (docs/language.md): a list that
# names it counts it; one that does not says so, and it is measured all the same
$T run examples/mailbox/monitor.tq --programs "mailbox" --quiet --stats "$dir/named.json" \
  --exec $MB -n 40 -u 1000 -w -l "$dir/named.log" 2>"$dir/named.err" || bad "--programs mailbox --exec: exit $?: $(cat "$dir/named.err")"
grep -q "matched no process\|does not name" "$dir/named.err" && bad "--programs mailbox --exec: $(cat "$dir/named.err")"
tr -d '\n' <"$dir/named.json" | grep -q '"pattern": "mailbox", "processes": 1' || bad "--programs mailbox --exec: the stats do not count the program"
$T run examples/mailbox/monitor.tq --programs "nothing_like_this*" --quiet --stats "$dir/other.json" \
  --exec $MB -n 40 -u 1000 -w -l "$dir/other.log" 2>"$dir/other.err" || bad "--programs nothing_like_this* --exec: exit $?: $(cat "$dir/other.err")"
grep -q "the program list does not name the program of --exec, mailbox (pid [0-9]*): measured all the same" "$dir/other.err" ||
  bad "--programs nothing_like_this* --exec does not say the list leaves the program out: $(cat "$dir/other.err")"
grep -q 'program pattern "nothing_like_this\*" matched no process' "$dir/other.err" || bad "the pattern that matched nothing is not said"
[ "$(jsensor "$dir/other.json" SendMessage delivered)" -gt 0 ] || bad "--programs nothing_like_this* --exec: the program was not measured"

# ---------------------------------------------------------------- killed mid-way
$T run examples/mailbox/monitor.tq tests/mailbox/waits.tq --db "$dir/kill.db" --quiet \
  --exec $MB -n 1000000 -u 500 -w -l "$dir/kill.log" 2>"$dir/kill.err" &
mon=$!
# wait until the program has really started, then kill it
i=0
while [ $i -lt 200 ] && ! grep -q SEND "$dir/kill.log" 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
sleep 1
# (the monitor's own child only: other runs of the program may be beside this one)
pkill -KILL -P $mon -f "$MB" 2>/dev/null || bad "killed run: no program under the monitor $mon"
wait $mon
rc=$?
[ $rc -eq 0 ] || bad "killed run: the monitor exited with $rc: $(cat "$dir/kill.err")"
n=$(sqlite3 "$dir/kill.db" "SELECT count(*) FROM Waits")
[ "${n:-0}" -gt 0 ] || bad "killed run: no waits stored"
open=$(sqlite3 "$dir/kill.db" "SELECT count(*) FROM Waits WHERE valid_to IS NULL")
[ "$open" = 0 ] || bad "killed run: $open waits left open"
last=$(sqlite3 "$dir/kill.db" "SELECT max(valid_to) FROM Waits")
later=$(sqlite3 "$dir/kill.db" "SELECT count(*) FROM Waits WHERE valid_from > $last")
[ "$later" = 0 ] || bad "killed run: waits after the subject's last time"
# the stored answers are those of the log, but for what was in flight when
# the program died (a sensor fired, its log line not yet written): at most 2
awk -f tests/mailbox/resumed.awk "$dir/kill.log" | sort >"$dir/kill.expected"
sqlite3 "$dir/kill.db" "SELECT Process FROM ResumedbyP1" | sort >"$dir/kill.got"
d=$(diff "$dir/kill.expected" "$dir/kill.got" | grep -c '^[<>]')
[ -s "$dir/kill.got" ] || bad "killed run: ResumedbyP1 empty"
[ "$d" -le 2 ] || bad "killed run: ResumedbyP1 differs from the log by $d rows"
[ $fails -eq 0 ]
