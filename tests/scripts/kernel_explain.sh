#!/bin/sh
# kernel_explain.sh - tqmon explain --kernel on the questions of
# examples/kernel/ (the process named 1234): each query's algebra, SJ
# enabling the sensors on that process's threads only, and under it the
# kernel tracepoints each sensor attaches (tests/kernel/explain/examples.out);
# and which selections the BPF programs check (rule SF), which only the
# engine, and which the PM (tests/kernel/explain/filters.out).
# Explaining needs no privilege: it also runs as an unprivileged user.
# sensors/host.tq and sensors/kernel.tq compile together (both declare
# Processor the same way); a Processor declared otherwise in another file is
# refused with its place.  Syscall's hook is the tracepoints here
# (--pm kernel=syscalls=tracepoint): which hook auto takes depends on the
# kernel (tests/scripts/kernel_hook.sh checks it).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
d=$OUT/kernel_explain
rm -rf "$d" && mkdir -p "$d"
fail=0
files="sensors/kernel.tq tests/kernel/explain/woke.tq tests/kernel/explain/slowcalls.tq tests/kernel/explain/blocked.tq"
# shellcheck disable=SC2086
$T explain --kernel --pm kernel=syscalls=tracepoint $files >"$d/examples.out" 2>"$d/err" || { echo "FAIL: explain --kernel: exit $? $(cat "$d/err")"; fail=1; }
diff -u tests/kernel/explain/examples.out "$d/examples.out" || fail=1
$T explain --kernel --pm kernel=syscalls=tracepoint sensors/kernel.tq tests/kernel/explain/filters.tq >"$d/filters.out" 2>&1 ||
  { echo "FAIL: explain --kernel filters.tq: exit $? $(cat "$d/filters.out")"; fail=1; }
diff -u tests/kernel/explain/filters.out "$d/filters.out" || fail=1
. tests/other_user.sh
unreachable=""
AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
# shellcheck disable=SC2086
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && reachable "$AS" "$T" -r $files; then
  chmod 777 "$d"
  # shellcheck disable=SC2086
  $AS $T explain --kernel --pm kernel=syscalls=tracepoint $files >"$d/user.out" 2>"$d/user.err" ||
    { echo "FAIL: explain --kernel as an unprivileged user: exit $? $(cat "$d/user.err")"; fail=1; }
  cmp -s "$d/examples.out" "$d/user.out" || { echo "FAIL: explain --kernel differs as an unprivileged user"; fail=1; }
fi
$T check sensors/host.tq sensors/kernel.tq >"$d/both.out" 2>&1 || { echo "FAIL: host.tq and kernel.tq together: $(cat "$d/both.out")"; fail=1; }
$T check sensors/host.tq tests/kernel/processor_other.tq >"$d/other.out" 2>&1
rc=$?
cat >"$d/other.want" <<'EOT'
tests/kernel/processor_other.tq:3:8: error: entity type 'Processor' declared again otherwise (first declared at sensors/host.tq:18:8): a declaration given again must be the same
  entity Processor (Speed: int);
         ^
EOT
[ $rc -eq 1 ] || { echo "FAIL: Processor declared otherwise: exit $rc, not 1"; fail=1; }
diff -u "$d/other.want" "$d/other.out" || fail=1
[ $fail -eq 0 ] && [ -n "$unreachable" ] && { echo "skipped in part: $unreachable"; exit 77; }
[ $fail -eq 0 ] && echo ok
exit $fail
