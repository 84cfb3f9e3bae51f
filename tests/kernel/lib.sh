# lib.sh - helpers of the kernel sensor tests (tests/scripts/kernel_*.sh)
# and of the examples' test.  Sourced, never run on its own.
#
# A test starts a workload (build/kwork) that writes its ids and waits; then
# tqmon with the queries and, at the same time, bpftrace with a script
# counting the same events (the independent observation); once both trace,
# it lets the workload go.  The workload ends by itself, and so do both
# observers: tqmon at the snapshot after the workload's process exits
# (--pm kernel=until=PID), bpftrace at its exit (the script calls exit()).
# Nothing waits for a fixed time: every wait is for a state, with a
# generous limit.

T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
K=build/kwork
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# kcheck: skips (exit 77, with the reason) where the kernel sensors cannot
# run: no BTF, no BPF, not privileged; mounts tracefs for bpftrace if it is
# not mounted.
kcheck() {
  [ -r /sys/kernel/btf/vmlinux ] || { echo "skipped: this kernel has no BTF (/sys/kernel/btf/vmlinux)"; exit 77; }
  [ "$(id -u)" = 0 ] || { echo "skipped: not root (the kernel sensors need CAP_BPF and CAP_PERFMON)"; exit 77; }
  if [ -n "${KORACLE-1}" ]; then # (KORACLE= : this test needs no bpftrace)
    command -v bpftrace >/dev/null 2>&1 || { echo "skipped: bpftrace (the independent observation) is not installed"; exit 77; }
    [ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
    [ -d /sys/kernel/tracing/events ] || { echo "skipped: tracefs cannot be mounted (bpftrace needs it)"; exit 77; }
  fi
  ulimit -l unlimited 2>/dev/null || true
  trap kcleanup EXIT
}

# kcleanup: what a failing test left running (its own processes only).
kcleanup() {
  for p in ${kpids:-} ${kpid:-} ${tqpid:-} ${btpid:-}; do kill "$p" 2>/dev/null; done
}

# waitfor FILE PATTERN [SECONDS]: waits until FILE holds PATTERN (grep -E);
# returns 1 after SECONDS (default 120).
waitfor() {
  _w=0
  _lim=$((${3:-120} * 20))
  while ! grep -qE "$2" "$1" 2>/dev/null; do
    _w=$((_w + 1))
    [ $_w -gt $_lim ] && return 1
    sleep 0.05
  done
  return 0
}

# waitpid PID [SECONDS]: waits until process PID (not a child) is gone.
waitgone() {
  _w=0
  _lim=$((${2:-300} * 20))
  while kill -0 "$1" 2>/dev/null; do
    _w=$((_w + 1))
    [ $_w -gt $_lim ] && return 1
    sleep 0.05
  done
  return 0
}

# kstart DIR WORKLOAD ARGS...: starts the workload; its ids become shell
# variables (writer=..., reader=...).  Sets kpid (a workload started before
# goes to kpids).  All wait for the same go file.
kstart() {
  kd=$1
  shift
  [ -n "${kpid:-}" ] && kpids="${kpids:-} $kpid"
  nk=$((${nk:-0} + 1))
  rm -f "$kd/ids$nk" "$kd/go"
  $K -o "$kd/ids$nk" -g "$kd/go" "$@" >"$kd/kwork$nk.out" 2>&1 &
  kpid=$!
  waitfor "$kd/ids$nk" . 60 || { bad "the workload $* did not start"; return 1; }
  eval "$(cat "$kd/ids$nk")"
}

# ktqmon DIR QUERY.tq [OPTIONS...]: starts tqmon on the kernel sensors until
# the workload's processes exit (kpid, or the +-separated list in
# $until); waits until it traces.  Sets tqpid.
ktqmon() {
  kd=$1
  q=$2
  shift 2
  # emptied first: a log left by an earlier run in DIR must not pass for this one's
  : >"$kd/err"
  $T run sensors/kernel.tq "$q" --pm clock=realtime --pm kernel=until=${until:-$kpid}${kargs:-} --format csv --trace-level 2 \
    --stats "$kd/stats.json" "$@" >"$kd/out.csv" 2>"$kd/err" &
  tqpid=$!
  waitfor "$kd/err" "tracing since|error|fatal" 120 || { bad "tqmon did not start tracing"; cat "$kd/err"; return 1; }
  grep -qE "error|fatal" "$kd/err" && { bad "tqmon: $(cat "$kd/err")"; return 1; }
  return 0
}

# koracle DIR SCRIPT.bt: starts bpftrace on SCRIPT (its own exit() ends it);
# waits until its probes are attached.  Sets btpid.
koracle() {
  kd=$1
  : >"$kd/oracle.out"
  bpftrace "$2" >"$kd/oracle.out" 2>"$kd/oracle.err" &
  btpid=$!
  waitfor "$kd/oracle.out" "^Attaching" 120 || { bad "bpftrace did not attach: $(cat "$kd/oracle.err")"; return 1; }
  return 0
}

# kgo DIR: lets the workload go, then waits for it (and those in $kpids),
# tqmon and bpftrace.
kgo() {
  kd=$1
  touch "$kd/go"
  for p in ${kpids:-} $kpid; do wait $p || bad "a workload failed: $(cat "$kd"/kwork*.out)"; done
  if [ -n "${btpid:-}" ]; then
    wait $btpid || bad "bpftrace: exit $? $(cat "$kd/oracle.err")"
  fi
  wait $tqpid || bad "tqmon: exit $? $(cat "$kd/err")"
  grep -q "Sanitizer\|runtime error" "$kd/err" && bad "sanitizer report: $(cat "$kd/err")"
  return 0
}

# obs DIR NAME: a count from the bpftrace script's output (@NAME: N; 0 when
# it never fired).
obs() {
  v=$(sed -n "s/^@$2: //p" "$1/oracle.out")
  echo "${v:-0}"
}

# section OUT.csv NAME: the rows of result NAME (no header) of --format csv.
section() {
  awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"
}

# pmmsg STATS.json PM: the last message of a processor module (--stats).
pmmsg() {
  grep "{\"name\": \"$2\", \"calls\"" "$1" | sed 's/.*"message": "\([^"]*\)".*/\1/'
}

# field MESSAGE KEY: the number after KEY= in a message.
field() {
  echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# same WHAT TQMON ORACLE [EXPECTED]: the counts agree (and are EXPECTED).
same() {
  if [ "$2" != "$3" ]; then
    bad "$1: tqmon says $2, bpftrace $3"
  elif [ -n "${4:-}" ] && [ "$2" != "$4" ]; then
    bad "$1: $2, expected $4"
  else
    echo "ok: $1: $2 (bpftrace $3)"
  fi
}
