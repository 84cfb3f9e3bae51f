# lib.sh - helpers of the host sensor tests (tests/scripts/host_*.sh).
# Sourced, never run on its own.

fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# waitcomm PID NAME: waits until the process runs NAME (after its exec);
# gives up after 20 s (returns 1).
waitcomm() {
  n=0
  while [ "$(cat /proc/"$1"/comm 2>/dev/null)" != "$2" ]; do
    n=$((n + 1))
    [ $n -gt 400 ] && return 1
    sleep 0.05
  done
  return 0
}

# pmmsg STATS.json PM: the last message of a processor module (--stats).
pmmsg() {
  grep "{\"name\": \"$2\", \"calls\"" "$1" | sed 's/.*"message": "\(.*\)"}.*/\1/'
}

# field MESSAGE KEY: the number after KEY= in a message.
field() {
  echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# section OUT.csv NAME: the rows of result NAME (no header) of --format csv.
section() {
  awk -v n="# $2" '$0 == n { on = 1; getline; next } /^# / { on = 0 } on && NF' "$1"
}

# statename LETTER: the ProcessState enum value of a ps/proc state letter.
statename() {
  case "$1" in
    R) echo Running ;;
    S) echo Sleeping ;;
    D) echo DiskSleep ;;
    T) echo Stopped ;;
    t) echo TracingStop ;;
    Z) echo Zombie ;;
    X | x) echo Dead ;;
    I) echo Idle ;;
    P) echo Parked ;;
    *) echo Other ;;
  esac
}

# ncpus: the cpuN lines of /proc/stat.
ncpus() {
  grep -c '^cpu[0-9]' /proc/stat
}
