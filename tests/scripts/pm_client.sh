#!/bin/sh
# pm_client.sh - the engine client of the test PMs (tests/testpm/client.c,
# built as build/asan/testpm-client): its checks must all pass and print
# exactly tests/testpm/client.out.
set -u
OUT=${OUT:-build/test-out}
build/asan/testpm-client >"$OUT/client.out" 2>"$OUT/client.err"
rc=$?
diff -u tests/testpm/client.out "$OUT/client.out" || exit 1
[ $rc -eq 0 ] || { cat "$OUT/client.err"; exit 1; }
echo ok
