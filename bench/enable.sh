#!/bin/sh
# enable.sh - make bench section 8: what the rules of docs/enabling.md save,
# each against the previous optimizer (tqmon run --no-rule RULE) in the same
# run, with the answers compared.  Prints "KEY VALUE" lines.
#   sf.shm.*     the mailbox program under --exec, ToM7 (tests/mailbox/sf.tq):
#                packets written at the sensor and suppressed there
#   sf.kernel.*  a process making N getppid calls, each among 3 other calls,
#                and one sending N messages of 100 bytes; getppid calls and
#                sends of more than 1000 bytes: Syscall and Send packets the
#                kernel wrote, two monitors at once (with and without SF) on
#                the same processes, their answers compared row by row
#                (times within 1 ms: each BPF program reads the clock) (as
#                root with BTF; "sf.kernel.skipped REASON" otherwise)
#   o3.*         O3's consuming form (O3-ONCE) against the persistent one
#                (O3): 2000 mailboxes, each sent to once and deleted once, a
#                recording; the Deleted sensor's packets delivered, flag
#                writes, entities enabled at most and at the end
#   sjs.*, agg.* a copy of sleep under a name of its own, tests/host/sjs.tq on
#                the host sensors: /proc files read by ProcessState (SJS) and
#                Memory (AGG-WHERE, then O2) in TQ_BENCH_HOST_TICKS ticks (10),
#                the answers' rows compared (their values: the two runs tick
#                at other times)
#   sf.pcp.*     a pmcd of its own, tests/pcp/sf.tq: the values pmcd sent
#                and the instances the profiles left out, with and without
#                SF ("sf.pcp.skipped REASON" without PCP)
#   sensor.*     RunningOn with a traced and a sampled sensor, a paper-gen
#                recording, a query at Clock[10]'s ticks: traced packets
#                against samples (SENSOR), and their declared work
# Environment: TQ (tqmon), OUT (a directory), TQ_BENCH_MAILBOX (steps of
# each mailbox process, default 20000).
set -u
TQ=${TQ:-build/tqmon}
OUT=${OUT:-build/bench}
d=$OUT/enable
rm -rf "$d" && mkdir -p "$d"
STEPS=${TQ_BENCH_MAILBOX:-20000}
num() { grep "\"name\": \"$2\"" "$1" | head -n 1 | sed -n "s/.*\"$3\": \([0-9]*\).*/\1/p"; }

# ---------------------------------------------------------------- generated sensors
for mode in sf prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule SF"
  # shellcheck disable=SC2086
  $TQ run tests/mailbox/sf.tq $opt --db "$d/$mode.db" --quiet --stats "$d/$mode.json" \
    --exec build/mailbox/mailbox -m 8 -n "$STEPS" -u 20 -w -l "$d/$mode.log" 2>"$d/$mode.err"
  echo "sf.shm.$mode.exit $?"
  echo "sf.shm.$mode.sends $(awk '$2 == "SEND"' "$d/$mode.log" | wc -l | tr -d ' ')"
  echo "sf.shm.$mode.written $(num "$d/$mode.json" SendMessage recorded)"
  echo "sf.shm.$mode.suppressed $(num "$d/$mode.json" SendMessage suppressed)"
  echo "sf.shm.$mode.rows $(sqlite3 "$d/$mode.db" 'SELECT count(*) FROM ToM7')"
  # the answer as the log says it should be
  awk '$2 == "SEND" && $4 == "M7" { print $3 }' "$d/$mode.log" | sort | uniq -c >"$d/$mode.expected"
  sqlite3 "$d/$mode.db" "SELECT Process FROM ToM7" | sort | uniq -c >"$d/$mode.got"
  cmp -s "$d/$mode.expected" "$d/$mode.got" && echo "sf.shm.$mode.right yes" || echo "sf.shm.$mode.right NO"
done

# ---------------------------------------------------------------- /proc (SJS, AGG-WHERE)
name=tqbsj$$
name=$(echo "$name" | cut -c1-15)
cp /bin/sleep "$d/$name"
"$d/$name" 600 &
sp=$!
i=0
while [ "$(cat /proc/$sp/comm 2>/dev/null)" != "$name" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
sed -e "s/NAME/$name/" -e "s/PID/$sp/" tests/host/sjs.tq >"$d/h.tq"
TICKS=${TQ_BENCH_HOST_TICKS:-10}
msg() { grep "{\"name\": \"$2\", \"calls\"" "$1" | sed 's/.*"message": "\(.*\)"}.*/\1/'; }
for mode in opt prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule SJS --no-rule AGG-WHERE"
  # shellcheck disable=SC2086
  $TQ run --host sensors/host.tq "$d/h.tq" $opt --snapshots "$TICKS" --format csv --stats "$d/h$mode.json" \
    >"$d/h$mode.csv" 2>"$d/h$mode.err"
  echo "sjs.$mode.exit $?"
  m=$(msg "$d/h$mode.json" host_processstate)
  echo "sjs.$mode.reads $(echo "$m" | tr ' ' '\n' | sed -n 's/^reads=//p')"
  echo "sjs.$mode.pids $(echo "$m" | tr ' ' '\n' | sed -n 's/^pids=//p')"
  m=$(msg "$d/h$mode.json" host_memory)
  echo "agg.$mode.reads $(echo "$m" | tr ' ' '\n' | sed -n 's/^reads=//p')"
  echo "sjs.$mode.rows $(awk '/^# Named/ { on = 1; getline; next } /^# / { on = 0 } on && NF' "$d/h$mode.csv" | grep -c "^$sp,")"
  awk '/^# MaxRss/ { on = 1; getline; next } /^# / { on = 0 } on && NF' "$d/h$mode.csv" | cut -d, -f1 | sort -u >"$d/h$mode.rss"
  # Named's rows without their times (pid, state), in order
  awk '/^# Named/ { on = 1; getline; next } /^# / { on = 0 } on && NF' "$d/h$mode.csv" | cut -d, -f1,2 >"$d/h$mode.named"
done
kill $sp 2>/dev/null
echo "sjs.ticks $TICKS"
cmp -s "$d/hopt.named" "$d/hprev.named" && echo "sjs.same yes" || echo "sjs.same NO"
cmp -s "$d/hopt.rss" "$d/hprev.rss" && echo "agg.same yes" || echo "agg.same NO"

# ---------------------------------------------------------------- several sensors (SENSOR)
# RunningOn traced and sampled on its processors (tests/golden/sensor_sampled's
# configuration), a paper-gen recording of 8 processors, Every10 reads it at
# Clock[10]'s ticks: packets of the traced sensor against samples
build/paper-gen -n 40 -m 5 -k 8 -p "${TQ_BENCH_SENSOR_PACKETS:-20000}" -s 3 -o "$d/ro.trace"
sed -e 's/Clock\[60\]/Clock[10]/' -e 's/Every60/Every10/g' -e '/^retrieve into Ran/d' -e '/^retrieve into OnB/,+3d' \
  tests/golden/sensor_sampled.tq >"$d/ro.tq"
for mode in opt prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule SENSOR"
  # shellcheck disable=SC2086
  $TQ run "$d/ro.tq" --replay "$d/ro.trace" $opt --format csv --stats "$d/ro$mode.json" >"$d/ro$mode.csv" 2>"$d/ro$mode.err"
  echo "sensor.$mode.exit $?"
  echo "sensor.$mode.traced $(num "$d/ro$mode.json" RunningOn delivered)"
  echo "sensor.$mode.requests $(num "$d/ro$mode.json" RunningOn_sampled samples)"
  echo "sensor.$mode.samples $(num "$d/ro$mode.json" RunningOn_sampled delivered)"
  # the declared work of the sensors: 2us a traced packet, 300ns a sample
  echo "sensor.$mode.work_us $((($(num "$d/ro$mode.json" RunningOn delivered) * 2000 + $(num "$d/ro$mode.json" RunningOn_sampled delivered) * 300) / 1000))"
done
echo "sensor.rows $(grep -vc '^#\|^Process' "$d/roopt.csv")"
cmp -s "$d/roopt.csv" "$d/roprev.csv" && echo "sensor.same yes" || echo "sensor.same NO"

# ---------------------------------------------------------------- PCP (SF's sampled form)
# a pmcd of its own (tests/pcp/lib.sh), tests/pcp/sf.tq (process P1 if its
# command is sleep, or P2 if its parent is not 0) at TQ_BENCH_PCP_TICKS
# ticks (5): the values pmcd sent, and the instances left out of the
# profiles, with and without SF; the answers compared
(
  pd=$d # (pcpStart sets d)
  . tests/pcp/lib.sh
  [ -r /etc/pcp.conf ] || { echo "sf.pcp.skipped PCP is not installed"; exit 0; }
  pcpSetup >"$pd/pcp.skip" # (exits 77 when it cannot run: below)
  sleep 600 &
  s1=$!
  sleep 600 &
  s2=$!
  trap 'kill $s1 $s2 2>/dev/null; pcpStopAll' EXIT
  pcpStart h1 >"$pd/pcp.start" 2>&1 || { echo "sf.pcp.skipped pmcd did not start"; exit 0; }
  H=127.0.0.1:$PORT_h1
  $TQ pcp describe -h "$H" -o "$pd/pcp.tq" proc.psinfo.cmd proc.psinfo.ppid 2>"$pd/pcp.describe.err"
  sed "s/P1/$(printf %06d $s1)/g; s/P2/$(printf %06d $s2)/g; s/CMD/sleep/" tests/pcp/sf.tq >"$pd/pcpq.tq"
  val() { python3 -c 'import json, sys
d = [p for p in json.load(open(sys.argv[1]))["pms"] if p["name"] == "pcp"][0]["detail"]
h = d["hosts"][0]
print(h["relations"]["ProcSample"][sys.argv[2]] if sys.argv[2] != "bytes" else h["bytes_received"])' "$@"; }
  for mode in sf prev; do
    opt=""
    [ $mode = prev ] && opt="--no-rule SF"
    echo "sf.pcp.$mode.processes $(pminfo -h "$H" -f proc.psinfo.cmd 2>/dev/null | grep -c 'inst \[')"
    # shellcheck disable=SC2086
    $TQ run "$pd/pcp.tq" "$pd/pcpq.tq" --pcp "$H" --snapshots "${TQ_BENCH_PCP_TICKS:-5}" --format csv $opt \
      --stats "$pd/pcp$mode.json" >"$pd/pcp$mode.csv" 2>"$pd/pcp$mode.err"
    echo "sf.pcp.$mode.exit $?"
    echo "sf.pcp.$mode.values $(val "$pd/pcp$mode.json" values)"
    echo "sf.pcp.$mode.excluded $(val "$pd/pcp$mode.json" excluded)"
    echo "sf.pcp.$mode.bytes $(val "$pd/pcp$mode.json" bytes)"
    echo "sf.pcp.$mode.rows $(grep -c ',sleep,' "$pd/pcp$mode.csv")"
    sed 's/,[0-9]*$//' "$pd/pcp$mode.csv" | sort >"$pd/pcp$mode.rows"
  done
  echo "sf.pcp.ticks ${TQ_BENCH_PCP_TICKS:-5}"
  cmp -s "$pd/pcpsf.rows" "$pd/pcpprev.rows" && echo "sf.pcp.same yes" || echo "sf.pcp.same NO"
)
[ $? = 77 ] && echo "sf.pcp.skipped $(cat "$d/pcp.skip")"

# ---------------------------------------------------------------- O3's consuming form (O3-ONCE)
# tests/golden/o3_once's configuration and query (Deleted declared once),
# a recording of 2000 mailboxes: each created, sent to once (by P1 every
# other one), deleted once; the persistent form (--no-rule O3-ONCE) keeps
# every mailbox P1 sent to enabled until the run ends, the consuming one
# until its deletion consumes the arming (docs/enabling.md, O3-ONCE)
sed -n '/^entity/,$p' tests/golden/o3_once.tq >"$d/o3.tq"
awk -v k="${TQ_BENCH_O3_MAILBOXES:-2000}" 'BEGIN { print "1 Process+ P1"; print "1 Process+ P2"
  for (i = 1; i <= k; i++) {
    t = 10 * i
    printf "%d Mailbox+ M%d\n%d SendMessage %s M%d\n%d Deleted M%d P2\n%d Mailbox- M%d\n", t, i, t + 2, (i % 2 ? "P1" : "P2"), i, t + 5, i, t + 6, i
  }
  printf "%d Process- P1\n%d Process- P2\n", 10 * k + 20, 10 * k + 20 }' >"$d/o3.trace"
echo "o3.mailboxes ${TQ_BENCH_O3_MAILBOXES:-2000}"
for mode in once prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule O3-ONCE"
  # shellcheck disable=SC2086
  $TQ run "$d/o3.tq" --replay "$d/o3.trace" $opt --format csv --stats "$d/o3$mode.json" >"$d/o3$mode.csv" 2>"$d/o3$mode.err"
  echo "o3.$mode.exit $?"
  for f in delivered flag_writes max_enabled enabled_end; do echo "o3.$mode.$f $(num "$d/o3$mode.json" Deleted $f)"; done
  echo "o3.$mode.rows $(grep -c ',P2,' "$d/o3$mode.csv")"
done
cmp -s "$d/o3once.csv" "$d/o3prev.csv" && echo "o3.same yes" || echo "o3.same NO"

# ---------------------------------------------------------------- kernel sensors
if [ ! -r /sys/kernel/btf/vmlinux ] || [ "$(id -u)" != 0 ]; then
  echo "sf.kernel.skipped not root or no BTF"
  exit 0
fi
N=${TQ_BENCH_SYSCALLS:-20000}
rm -f "$d/ids" "$d/ids2" "$d/go"
build/kwork -o "$d/ids" -g "$d/go" syscalls "$N" 3 >"$d/kwork.out" 2>&1 &
kp=$!
build/kwork -o "$d/ids2" -g "$d/go" sockets "$N" 100 >"$d/kwork2.out" 2>&1 &
kp2=$!
i=0
while { [ ! -s "$d/ids" ] || [ ! -s "$d/ids2" ]; } && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
eval "$(cat "$d/ids" "$d/ids2")"
cat >"$d/k.tq" <<EOT
range of S is Syscall
range of T is Thread
retrieve into Ppid (S.Thread, S.Call) where S.Thread = T.Thread and T.Process = $caller and S.Call = "getppid"
range of N is Send
range of U is Thread
retrieve into BigSends (N.Thread, N.Socket, N.Bytes) where N.Thread = U.Thread and U.Process = $sockets and N.Bytes > 1000
EOT
tps=""
for mode in sf prev; do
  opt=""
  [ $mode = prev ] && opt="--no-rule SF"
  # shellcheck disable=SC2086
  $TQ run sensors/kernel.tq "$d/k.tq" $opt --pm clock=realtime --pm kernel=until=$kp+$kp2 --format csv --trace-level 2 \
    --stats "$d/k$mode.json" >"$d/k$mode.csv" 2>"$d/k$mode.err" &
  tps="$tps $!"
  i=0
  while ! grep -qE "tracing since|error|fatal" "$d/k$mode.err" 2>/dev/null && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
done
touch "$d/go"
wait $kp
wait $kp2
for p in $tps; do wait $p; done
# krows MODE NAME NTIMES: the rows of result NAME (its last NTIMES columns
# times), by their first time
krows() {
  awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$d/k$1.csv" |
    awk -F, -v nt="$3" '{ print $(NF - nt + 1) "|" $0 }' | sort -t'|' -k1,1n | cut -d'|' -f2-
}
for mode in sf prev; do
  echo "sf.kernel.$mode.errors $(grep -c 'error\|fatal' "$d/k$mode.err")"
  det=$(grep '"relation": "Syscall"' "$d/k$mode.json")
  echo "sf.kernel.$mode.written $(echo "$det" | sed -n 's/.*"written": \([0-9]*\).*/\1/p')"
  echo "sf.kernel.$mode.suppressed $(echo "$det" | sed -n 's/.*"suppressed": \([0-9]*\).*/\1/p')"
  krows $mode Ppid 2 >"$d/k$mode.ppid"
  echo "sf.kernel.$mode.rows $(wc -l <"$d/k$mode.ppid" | tr -d ' ')"
  det=$(grep '"relation": "Send"' "$d/k$mode.json")
  echo "sf.kernel.$mode.sends.written $(echo "$det" | sed -n 's/.*"written": \([0-9]*\).*/\1/p')"
  echo "sf.kernel.$mode.sends.suppressed $(echo "$det" | sed -n 's/.*"suppressed": \([0-9]*\).*/\1/p')"
  krows $mode BigSends 1 >"$d/k$mode.sends"
  echo "sf.kernel.$mode.sends.rows $(wc -l <"$d/k$mode.sends" | tr -d ' ')"
done
# the same rows: values equal, times within 1 ms (the event columns: an
# interval's two, an event's one)
same() {
  [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ] || { echo NO; return; }
  paste -d'|' "$1" "$2" | awk -F'|' -v nt="$3" '{
    na = split($1, x, ","); split($2, y, ",")
    for (i = 1; i <= na; i++) {
      if (i <= na - nt) { if (x[i] != y[i]) bad = 1 }
      else { dt = x[i] - y[i]; if (dt < 0) dt = -dt; if (dt > 1000000) bad = 1 }
    } } END { print bad ? "NO" : "yes" }'
}
echo "sf.kernel.same $(same "$d/ksf.ppid" "$d/kprev.ppid" 2)"
echo "sf.kernel.sends.same $(same "$d/ksf.sends" "$d/kprev.sends" 1)"
echo "sf.kernel.calls $N"
echo "sf.kernel.others 3"
