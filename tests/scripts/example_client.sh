#!/bin/sh
# example_client.sh - the example client (examples/client/client.c) embeds the
# engine: it compiles against include/tqmon.h alone, replays the paper's
# recording one snapshot at a time through its own CONSUMER PM, and prints
# exactly examples/client/expected.out; a program with a mistake makes it
# print tq_errors (examples/client/expected.err) and exit 1.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
C=$(dirname "$T")/client
D=examples/client
[ -x "$C" ] || { echo "$C is not built (make test builds it)"; exit 1; }
# the one header a client needs
inc=$(grep '^#include "' $D/client.c | tr -d '\n')
[ "$inc" = '#include "tqmon.h"' ] || { echo "client.c includes: $inc"; exit 1; }
${CC:-cc} -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -fsyntax-only -Iinclude $D/client.c
# the run, exactly
$C examples/paper/paper.trace examples/paper/paper.tq $D/queries.tq >"$OUT/client.out" 2>"$OUT/client.err" ||
  { echo "client: exit $?"; cat "$OUT/client.err"; exit 1; }
[ ! -s "$OUT/client.err" ] || { echo "client wrote to stderr:"; cat "$OUT/client.err"; exit 1; }
diff -u $D/expected.out "$OUT/client.out"
# errors come from tq_errors, with the position of the mistake
rc=0
$C examples/paper/paper.trace examples/paper/paper.tq $D/bad.tq >"$OUT/client-bad.out" 2>"$OUT/client-bad.err" || rc=$?
[ $rc -eq 1 ] || { echo "bad program: exit $rc (expected 1)"; cat "$OUT/client-bad.err"; exit 1; }
[ ! -s "$OUT/client-bad.out" ] || { echo "bad program: output on stdout"; exit 1; }
diff -u $D/expected.err "$OUT/client-bad.err"
echo ok
