# lib.sh - start and stop pmcd processes of the PCP tests' own (sourced by
# tests/scripts/pcp_*.sh and bench/pcp.sh).  Never touches a system pmcd:
# every pmcd gets a free loopback port, its own host name (pmcd -H), and
# its own configuration, namespace, run and log directories under $PCPDIR
# (a mktemp directory).  The linux PMDA runs inside pmcd (a DSO), the proc
# PMDA as a pipe agent with -A (no access checks: the tests read the
# processes of a non-root pmcd user too).
#
# PCP_EXTRA_PMNS (namespace files), PCP_EXTRA_AGENTS (pmcd.conf lines; $d is
# the pmcd's directory) and PCP_ACCESS (default fetch) add an agent.
#   pcpSetup            find PCP (exit 77 when it is not installed), make $PCPDIR
#   pcpStart NAME [PORT] start a pmcd called NAME (on PORT, or a free port);
#                       sets PORT_NAME and PID_NAME
#   pcpStop NAME        stop it (SIGTERM, then SIGKILL)
#   pcpStopAll          stop every pmcd started (trap it on EXIT)
#   pcpTest NAME        a test's beginning: pcpSetup, bad(), $pids killed
#                       and the pmcds stopped at exit, $dir = $OUT/NAME, inst()
#   pcpProxyStart NAME PMCD  a pmproxy called NAME on a free loopback port,
#                       ready when PMCD (a started pmcd) answers through it;
#                       sets PORT_NAME and PID_NAME (pcpStop stops it too).
#                       In its backward-compatible mode (-d): the PCP
#                       protocol only, no REST API, never this machine's
#                       Redis
# For pmdatqmon (sensors/pmdatqmon.md; $AG is the agent's binary; the
# namespace build/pmdatqmon.pmns in PCP_EXTRA_PMNS, the help
# build/pmdatqmon.help: both made from sensors/pmdatqmon/ by the Makefile):
#   tqAgentStart NAME COMMAND  a pmcd NAME whose agent watches the programs
#                       named COMMAND only (-c: the tests share /dev/shm)
#   pcpVal HOST METRIC INST    the value of one instance (pminfo -f)
#   tqAgentWaitRunning HOST PID  wait (30 s at most) until the agent at HOST
#                       watches the program PID; a failure says so and exits
PCP_STARTED=""

pcpSetup() {
  [ -r /etc/pcp.conf ] || { echo "SKIP: PCP is not installed (/etc/pcp.conf; sh tests/deps.sh test)"; exit 77; }
  PCP_BINADM=$(. /etc/pcp.conf; echo "$PCP_BINADM_DIR")
  PCP_PMDAS=$(. /etc/pcp.conf; echo "$PCP_PMDAS_DIR")
  PCP_PMNSSRC=$(. /etc/pcp.conf; echo "$PCP_VAR_DIR")/pmns
  [ -x "$PCP_BINADM/pmcd" ] || { echo "SKIP: no pmcd in $PCP_BINADM"; exit 77; }
  for f in "$PCP_PMDAS/linux/pmda_linux.so" "$PCP_PMDAS/pmcd/pmda_pmcd.so" "$PCP_PMDAS/proc/pmdaproc"; do
    [ -e "$f" ] || { echo "SKIP: no $f"; exit 77; }
  done
  command -v pminfo >/dev/null || { echo "SKIP: no pminfo"; exit 77; }
  for f in ${PCP_EXTRA_PMNS:-}; do
    # (a file of the build missing is a failure, not a skip: make TEST_DEPS)
    [ -r "$f" ] || { echo "FAIL: no $f (make build/pmdatqmon.pmns build/pmdatqmon.help.dir)"; exit 1; }
  done
  PCPDIR=$(mktemp -d "${TMPDIR:-/tmp}/tqmon-pcp.XXXXXX")
  chmod 755 "$PCPDIR"
  # the namespace pmcd serves: the root, pmcd, linux and proc subtrees
  src=/usr/lib/pcp/pmns
  [ -f "$src/root_linux" ] || src=$PCP_PMNSSRC
  # shellcheck disable=SC2086 # (PCP_EXTRA_PMNS: more namespace files, such as pmdatqmon's)
  "$PCP_BINADM/pmnsmerge" "$src/root_root" "$src/root_pmcd" "$src/root_linux" "$src/root_proc" ${PCP_EXTRA_PMNS:-} "$PCPDIR/root" \
    >"$PCPDIR/pmnsmerge.log" 2>&1 || { echo "SKIP: pmnsmerge failed: $(cat "$PCPDIR/pmnsmerge.log")"; exit 77; }
}

# A free loopback TCP port (bind to port 0 and ask).
# (python3 binds port 0; without it a random high port, and pcpStart tries
# another when pmcd cannot bind it.)
pcpFreePort() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' \
    2>/dev/null || shuf -i 20000-60999 -n 1
}

pcpStart() {
  name=$1
  want=${2:-}
  d="$PCPDIR/$name"
  mkdir -p "$d/run" "$d/log"
  chmod 777 "$d/run" "$d/log" # pmcd drops to the pcp user
  cat >"$d/pmcd.conf" <<CONF
pmcd	2	dso	pmcd_init	$PCP_PMDAS/pmcd/pmda_pmcd.so
linux	60	dso	linux_init	$PCP_PMDAS/linux/pmda_linux.so
proc	3	pipe	binary	$PCP_PMDAS/proc/pmdaproc -d 3 -A -l $d/log/proc.log
$(eval "echo \"${PCP_EXTRA_AGENTS:-}\"")

[access]
allow 127.0.0.1 : ${PCP_ACCESS:-fetch};
disallow * : all;
CONF
  for try in 1 2 3 4 5; do
    port=${want:-$(pcpFreePort)}
    PCP_RUN_DIR="$d/run" PCP_LOG_DIR="$d/log" "$PCP_BINADM/pmcd" -f -A -H "$name" -p "$port" -i 127.0.0.1 \
      -c "$d/pmcd.conf" -n "$PCPDIR/root" -l "$d/log/pmcd.log" -s "$d/run/pmcd.socket" >"$d/out" 2>&1 &
    pid=$!
    # ready when pminfo answers (at most 30 s)
    for i in $(seq 1 300); do
      if pminfo -h "127.0.0.1:$port" -f pmcd.hostname >/dev/null 2>&1; then break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null && pminfo -h "127.0.0.1:$port" -f pmcd.hostname >/dev/null 2>&1; then
      eval "PORT_$name=$port PID_$name=$pid"
      PCP_STARTED="$PCP_STARTED $name"
      return 0
    fi
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  done
  echo "pmcd $name did not start:"; cat "$d/log/pmcd.log" "$d/out" 2>/dev/null
  return 1
}

pcpProxyStart() {
  name=$1
  d="$PCPDIR/$name"
  mkdir -p "$d/run" "$d/log"
  pmcdPort=$(eval echo "\$PORT_$2")
  [ -x "$PCP_BINADM/pmproxy" ] || { echo "SKIP: no pmproxy in $PCP_BINADM"; exit 77; }
  for try in 1 2 3 4 5; do
    port=$(pcpFreePort)
    PCP_RUN_DIR="$d/run" PCP_LOG_DIR="$d/log" "$PCP_BINADM/pmproxy" -f -A -d -p "$port" -i 127.0.0.1 \
      -s "$d/run/pmproxy.socket" -l "$d/log/pmproxy.log" >"$d/out" 2>&1 &
    pid=$!
    for i in $(seq 1 300); do
      if pminfo -h "127.0.0.1:$pmcdPort@127.0.0.1:$port" -f pmcd.hostname >/dev/null 2>&1; then break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null && pminfo -h "127.0.0.1:$pmcdPort@127.0.0.1:$port" -f pmcd.hostname >/dev/null 2>&1; then
      eval "PORT_$name=$port PID_$name=$pid"
      PCP_STARTED="$PCP_STARTED $name"
      return 0
    fi
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  done
  echo "pmproxy $name did not start:"; cat "$d/log/pmproxy.log" "$d/out" 2>/dev/null
  return 1
}

pcpStop() {
  eval "pid=\${PID_$1:-}"
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  eval "PID_$1="
}

pcpStopAll() {
  for n in $PCP_STARTED; do pcpStop "$n"; done
  [ -n "${PCPDIR:-}" ] && [ -z "${KEEP:-}" ] && rm -rf "$PCPDIR"
  return 0
}

pcpTest() {
  fails=0
  pids=""
  trap 'progsStop $pids; pcpStopAll' EXIT
  pcpSetup
  dir=$OUT/$1
  rm -rf "$dir" && mkdir -p "$dir"
}
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# pcpLoggers CONF NAME...: a pmlogger per started pmcd NAME, logging CONF
# into $dir/arch-NAME (log $dir/logger-NAME.log; pid in logger_NAME, also
# in $pids), and waits until each archive holds a record of METRIC
# (PCP_LOGGER_METRIC, default hinv.ncpu)
pcpLoggers() {
  conf=$1
  shift
  for n in "$@"; do
    mkdir -p "$PCPDIR/lt-$n"
    PCP_TMP_DIR="$PCPDIR/lt-$n" PCP_RUN_DIR="$PCPDIR/$n/run" "$PCP_BINADM/pmlogger" -h "127.0.0.1:$(eval echo "\$PORT_$n")" \
      -c "$conf" -l "$dir/logger-$n.log" "$dir/arch-$n" &
    pids="$pids $!"
    eval "logger_$n=$!"
  done
  for n in "$@"; do
    i=0
    until pminfo -a "$dir/arch-$n" -f "${PCP_LOGGER_METRIC:-hinv.ncpu}" >/dev/null 2>&1; do
      i=$((i + 1))
      [ $i -gt 300 ] && { bad "pmlogger of $n wrote no record: $(cat "$dir/logger-$n.log")"; return 1; }
      sleep 0.1
    done
  done
}
# archEnd ARCHIVE: the time of its last record (ns since the epoch)
archEnd() { TZ=UTC pmdumplog -L "$1" 2>/dev/null | sed -n 's/^ *ending *//p' | { read -r e && date -u -d "$e" +%s%N; }; }
# Stops this test's own processes (SIGTERM), and removes the segments
# /dev/shm/tqmon.PID of those that were instrumented programs: killed, they
# could not remove theirs (91 MB each, until someone does).
progsStop() {
  for p in "$@"; do kill "$p" 2>/dev/null; done
  for p in "$@"; do
    i=0
    # (until it is gone, or a zombie the wait below takes)
    while [ $i -lt 100 ] && kill -0 "$p" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)" != Z ]; do
      sleep 0.1
      i=$((i + 1))
    done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    [ -d "/proc/$p" ] || rm -f "/dev/shm/tqmon.$p"
  done
}
# the instance name of a process in the proc instance domain (its first word)
inst() { printf '%06d' "$1"; }

tqAgentStart() {
  PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -c $2 -l \$d/log/tqmon.log"
  pcpStart "$1"
}
# pcpKernelSetup: pcpSetup for a pmcd whose pmdatqmon serves the kernel's
# relations (-k), stores allowed.  pcpKernelStart: starts it as k1, sets H
# (its host:port) and log (the agent's log); a failure says so and returns 1
# when the agent does not serve them.
pcpKernelSetup() {
  PCP_EXTRA_PMNS="$PWD/build/pmdatqmon.pmns"
  PCP_ACCESS="fetch, store"
  PCP_EXTRA_AGENTS="tqmon	212	pipe	binary	$PWD/$AG -d 212 -h $PWD/build/pmdatqmon.help -k -c none -l \$d/log/tqmon.log"
  pcpSetup
}
pcpKernelStart() {
  pcpStart k1 || return 1
  H=127.0.0.1:$PORT_k1
  log=$PCPDIR/k1/log/tqmon.log
  _v=$(pcpVal "$H" tqmon.program.state kernel)
  [ "$_v" = '"running"' ] || { bad "the agent does not serve the kernel's relations: '$_v': $(cat "$log")"; return 1; }
}
pcpVal() { pminfo -h "$1" -f "$2" 2>/dev/null | sed -n "s|^ *inst \[[0-9]* or \"$3\"\] value \(.*\)$|\1|p"; }
tqAgentWaitRunning() {
  i=0
  _v=$(pcpVal "$1" tqmon.program.state "$2")
  while [ $i -lt 300 ] && [ "$_v" != '"running"' ]; do sleep 0.1; _v=$(pcpVal "$1" tqmon.program.state "$2"); i=$((i + 1)); done
  [ "$_v" = '"running"' ] || { bad "agent $1 does not watch $2 (state: '$_v'): $(cat "$PCPDIR"/*/log/tqmon.log)"; exit 1; }
}
