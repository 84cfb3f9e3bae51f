#!/bin/sh
# pcp_agent_options.sh - the agent's own options out of range (-P programs
# known at once, -q records queued per client) are refused before it serves
# anything: a message naming the option and its range, exit 1.
set -u
AG=${AG:-build/asan/pmdatqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/pcp_agent_options
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
check() { # ARGS EXPECTED
  $AG $1 -l "$dir/log" >"$dir/out" 2>&1
  rc=$?
  [ $rc -eq 1 ] || bad "$1: exit $rc"
  grep -q "^pmdatqmon: $2" "$dir/out" || bad "$1: $(head -3 "$dir/out")"
}
check "-P 0" "-P 0: give 1 to 256 programs"
check "-P 257" "-P 257: give 1 to 256 programs"
check "-P 2x" "-P 2x: give 1 to 256 programs"
check "-q 15" "-q 15: give 16 to 4194304 records"
check "-q 4194305" "-q 4194305: give 16 to 4194304 records"
[ $fails -eq 0 ]
