#!/bin/sh
# pcp_kernel_remote.sh - a central tqmon asks a remote host's kernel through
# pmdatqmon -k (sensors/pmdatqmon.md, "The kernel's relations"): the
# scheduling and the threads of a pipe ping-pong (tests/kernel/pingpong.tq,
# the workload of tests/scripts/kernel_sched.sh: the writer writes N
# messages, each once the reader sleeps in its read, so it wakes the reader
# exactly N times) are answered three ways in one run of the workload:
#   - remote: tqmon run sensors/kernel.tq --pcp-sensors HOST#kernel, through
#     a pmcd of the test's own (named k1) and its agent, the entities
#     "k1:TID";
#   - local: tqmon run --kernel on this host, the same questions;
#   - bpftrace counting the same tracepoints for the same threads.
# Checked:
#   - the remote answers are the local ones, row for row (k1: taken off the
#     entities), in the same order, each interval's duration within 2 ms of
#     the local one's (both are stamped in the kernel at the same
#     tracepoints; the figure measured is printed; one in twenty, at least
#     two, may differ more: a CPU interrupted, or the VM's processor
#     descheduled by its host, between the two monitors' programs on one
#     tracepoint, whose stamp ends one interval and begins the next), and
#     their counts are
#     bpftrace's: N wakeups of the reader by the writer, its RunningOn,
#     Ready and Blocked intervals; the Thread tuples of both processes and
#     the Processor tuples of the online CPUs;
#   - selective and remote: the central monitor enabled the reader alone
#     (through pmStore), so the agent wrote packets of the reader only
#     (tqmon.entity.written: every instance is kernel/REL/READER), and none
#     of the writer, whose switches bpftrace counted; the relations no query
#     reads (Syscall, Send, ...) have no program attached (the agent's own
#     descriptors: only the lifecycle and the scheduler's);
#   - released: once the central monitor has ended, the agent counts the
#     reader nowhere (tqmon.entity.enabled 0) and, a second on, has
#     detached the scheduler's programs again.
# Every wait is for a state, with a generous limit.
set -u
AG=${AG:-build/asan/pmdatqmon}
. tests/kernel/lib.sh
kcheck
. tests/pcp/lib.sh
pcpKernelSetup
rpid=""
trap 'kcleanup; [ -n "$rpid" ] && kill $rpid 2>/dev/null; pcpStopAll' EXIT
pcpKernelStart || exit 1
# (after pcpStart, which sets d to the pmcd's directory)
d=$OUT/pcp_kernel_remote
rm -rf "$d" && mkdir -p "$d"
agent=$(pminfo -h "$H" -f tqmon.agent.pid | sed -n 's/^ *value //p')

# the BPF programs the agent has attached now: its own links, read from its
# file descriptors (/proc/PID/fdinfo: a link's prog_id; bpftool names it),
# not from the machine's list, which other monitors share
links() {
  for f in /proc/$agent/fdinfo/*; do
    grep -q '^link_type:' "$f" 2>/dev/null || continue
    sed -n 's/^prog_id:[[:space:]]*//p' "$f"
  done | sort -u | while read -r id; do
    bpftool prog show id "$id" 2>/dev/null | sed -n 's/.* name \([^ ]*\) .*/\1/p'
  done | sort -u | tr '\n' ' '
}
command -v bpftool >/dev/null 2>&1 || { echo "skipped: bpftool (the BPF programs' names) is not installed"; exit 77; }

N=50
kstart "$d" pingpong $N || exit 1
sed -e "s/READER/$reader/g" -e "s/WRITER/$writer/g" tests/kernel/pingpong.tq >"$d/q.tq"
sed -e "s/\"READER\"/\"k1:$reader\"/g" -e "s/READER/$reader/g" -e "s/WRITER/$writer/g" tests/kernel/pingpong.tq >"$d/r.tq"
{
  sed -e "s/READER/$reader/g" -e "s/WRITER/$writer/g" tests/kernel/pingpong.bt
  echo "tracepoint:sched:sched_switch /args->next_pid == $writer/ { @wruns = count(); }"
} >"$d/q.bt"
echo "before: the agent's programs on: $(links)"

# the central monitor, on the agent
$T run sensors/kernel.tq "$d/r.tq" --pcp-sensors "$H#kernel" --format csv --trace-level 3 --stats "$d/rstats.json" \
  >"$d/remote.csv" 2>"$d/remote.err" &
rpid=$!
for rel in Woke RunningOn Ready Blocked; do
  i=0
  until [ "$(pcpVal "$H" tqmon.entity.enabled "kernel/$rel/$reader")" = 1 ]; do
    i=$((i + 1))
    [ $i -gt 600 ] && { bad "the central monitor did not enable $rel on the reader: $(cat "$d/remote.err")"; exit 1; }
    kill -0 $rpid 2>/dev/null || { bad "the central monitor ended: $(cat "$d/remote.err")"; exit 1; }
    sleep 0.1
  done
done
during=$(links)
echo "during: the agent's programs on: $during"
# the local monitor and bpftrace, on the same run
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"
# the remote answers: wait for a snapshot of the central monitor past the
# reader's last events (the workload has ended: its Exit is in the past)
end=$(date +%s%N)
waitfor "$d/remote.err" "snapshot (1[0-9]{18}) taken" 60 || bad "the central monitor takes no snapshot"
i=0
while :; do
  last=$(sed -n 's/.*snapshot \([0-9]*\) taken.*/\1/p' "$d/remote.err" | tail -1)
  [ -n "$last" ] && [ "$last" -gt "$end" ] && break
  i=$((i + 1))
  [ $i -gt 1200 ] && { bad "the central monitor took no snapshot after the workload's end"; break; }
  sleep 0.05
done
kill -TERM $rpid
wait $rpid || bad "the central monitor: exit $? $(cat "$d/remote.err")"
rpid=""
grep -q "Sanitizer\|runtime error" "$d/remote.err" && bad "sanitizer report: $(cat "$d/remote.err")"
pminfo -h "$H" -f tqmon.entity.written tqmon.entity.enabled >"$d/counters" 2>&1

# ---------------------------------------------------------------- the answers
sec() { section "$1" "$2"; }
for r in Woken Ran Readied Slept Threads Cpus; do
  sec "$d/remote.csv" $r | sed 's/k1://g' >"$d/remote.$r"
  sec "$d/out.csv" $r >"$d/local.$r"
done
same "wakeups of the reader by the writer (remote)" "$(grep -c "^$writer,$reader," "$d/remote.Woken")" "$(obs "$d" woke)" $N
same "wakeups of the reader (remote)" "$(grep -c . "$d/remote.Woken")" "$(obs "$d" wokeall)"
same "RunningOn intervals of the reader (remote)" "$(grep -c . "$d/remote.Ran")" "$(obs "$d" runs)"
same "Ready intervals of the reader (remote)" "$(grep -c . "$d/remote.Readied")" "$(obs "$d" runs)"
same "Blocked intervals of the reader, Sleeping (remote)" "$(grep -c ',Sleeping,' "$d/remote.Slept")" "$(obs "$d" sleeps)"
# row for row: the values in the same order, the durations within 2 ms
python3 - "$d" >"$d/compare" 2>&1 <<'EOF' || bad "remote and local answers differ: $(cat "$d/compare")"
import sys
d = sys.argv[1]
worst = 0
bad = 0
compared = 0
far = []
for r in ["Woken", "Ran", "Readied", "Slept", "Threads", "Cpus"]:
    rows = {}
    for side in ["remote", "local"]:
        rows[side] = [l.rstrip("\n").split(",") for l in open("%s/%s.%s" % (d, side, r)) if l.strip()]
    R, L = rows["remote"], rows["local"]
    if r in ("Threads", "Cpus"):  # (tuples of entities: the same set; their times are each run's start)
        key = lambda x: x[:-2]
        if sorted(map(key, R)) != sorted(map(key, L)):
            print("%s: remote %s, local %s" % (r, sorted(map(key, R)), sorted(map(key, L))))
            bad += 1
        continue
    if len(R) != len(L):
        print("%s: %d rows remote, %d local" % (r, len(R), len(L)))
        bad += 1
        continue
    n = 1 if r == "Woken" else 2
    for a, b in zip(R, L):
        if a[:-n] != b[:-n]:
            print("%s: remote %s, local %s" % (r, a, b))
            bad += 1
        elif n == 2 and a[-1] and b[-1]:
            diff = abs((int(a[-1]) - int(a[-2])) - (int(b[-1]) - int(b[-2])))
            compared += 1
            if diff > 2000000:
                far.append("%s: remote %s lasted %d ns, local %s %d ns" % (r, a, int(a[-1]) - int(a[-2]), b, int(b[-1]) - int(b[-2])))
            else:
                worst = max(worst, diff)
        elif n == 2 and bool(a[-1]) != bool(b[-1]):
            print("%s: one open, the other not: remote %s, local %s" % (r, a, b))
            bad += 1
# Each monitor's program takes its own time of the same tracepoint, one
# after the other: a CPU interrupted, or the VM's processor descheduled by
# its host, between the two gives a stamp ms apart, and the two intervals
# it ends and begins two durations ms apart.  That may happen to a few; an
# agent whose times were wrong would differ on most.
allowed = max(2, compared // 20)
if len(far) > allowed:
    print("%d of %d durations differ by more than 2 ms: %s" % (len(far), compared, "; ".join(far)))
    bad += 1
print("rows compared; the durations differ by %d ns at most%s" % (worst,
      "".join("; allowed, held between the monitors' programs: " + f for f in far) if len(far) <= allowed else ""))
sys.exit(1 if bad else 0)
EOF
cat "$d/compare"
echo "threads (remote): $(tr '\n' ' ' <"$d/remote.Threads")"
grep -q "^$writer,$writer,pp-writer," "$d/remote.Threads" || bad "remote Thread: no tuple of the writer named pp-writer"
grep -q "^$reader,$reader,pp-reader," "$d/remote.Threads" || bad "remote Thread: no tuple of the reader named pp-reader"
want=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) printf "cpu%d\n", c } }' \
  /sys/devices/system/cpu/online | sort | tr '\n' ' ')
got=$(cut -d, -f1 "$d/remote.Cpus" | sort -u | tr '\n' ' ')
[ "$got" = "$want" ] || bad "remote Processor: $got, the online CPUs are $want"

# ---------------------------------------------------------------- selective, remote
cat "$d/counters"
for rel in Woke RunningOn Ready Blocked; do
  w=$(sed -n "/^tqmon.entity.written/,/^$/s|^ *inst \[[0-9]* or \"kernel/$rel/$reader\"\] value \(.*\)$|\1|p" "$d/counters")
  [ "${w:-0}" -gt 0 ] || bad "no packets of $rel of the reader written"
done
others=$(sed -n '/^tqmon.entity.written/,/^$/p' "$d/counters" | grep 'inst \[' | grep -v "\"kernel/[A-Za-z]*/$reader\"")
[ -z "$others" ] || bad "packets of other threads written: $others"
echo "$during" | grep -q ks_switch || bad "the scheduler's programs are not attached while the query runs: $during"
echo "$during" | grep -q "ks_sys\|ks_fe_\|ks_fx_\|ks_send\|ks_recv\|ks_rq_" && bad "programs of relations no query reads attached: $during"
[ "$(obs "$d" wruns)" -gt 0 ] || bad "bpftrace saw the writer run on no CPU"
echo "bpftrace saw the writer go onto a CPU $(obs "$d" wruns) times: the agent wrote none of it"
# what the central monitor lost: nothing
det=$(grep -o '"source": "pmdatqmon"[^]]*' "$d/rstats.json")
echo "central: $det"
for k in late missed invalid unmatched_ends; do
  echo "$det" | grep -q "\"$k\": 0[,}]" || bad "the central monitor counts $k: $det"
done
# released: the central monitor is gone
for rel in Woke RunningOn Ready Blocked; do
  v=$(pcpVal "$H" tqmon.entity.enabled "kernel/$rel/$reader")
  [ "$v" = 0 ] || bad "$rel still enabled on the reader after the central monitor ended: '$v'"
done
i=0
until ! links | grep -q ks_switch; do
  i=$((i + 1))
  [ $i -gt 300 ] && { bad "the scheduler's programs are still attached with no client: $(links)"; break; }
  sleep 0.1
done
echo "after: the agent's programs on: $(links)"
grep -q "ERROR: AddressSanitizer\|runtime error" "$log" && bad "sanitizer: $(cat "$log")"
[ $fails -eq 0 ] && echo ok || { echo "agent log:"; cat "$log"; echo "central:"; cat "$d/remote.err"; }
exit $fails
