#!/bin/sh
# layers_fail.sh - the layer check (layers.sh) can fail: on a copy of the
# tree's sources it passes as it is, and fails, naming the culprit, after
#   - one deliberate upward include (algebra including display.h),
#   - one sideways include between siblings (display including sensors.h),
#   - an include of another folder's private header (display: rtInt.h),
#   - an include that resolves nowhere;
#   - a source file citing a design document outside the repository;
# and on objects it passes with calls down the layers, and fails on a call
# up that makes a cycle (algebra calling display, which calls algebra).
set -u
OUT=${OUT:-build/test-out}
L=tests/scripts/layers.sh
W=$(mktemp -d "${TMPDIR:-/tmp}/layers-fail.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
folders=$(sed -n 's/^layers: *//p' docs/design.md | tr '<,' '  ')
[ -n "$folders" ] || { echo "no layers line in docs/design.md"; exit 1; }

# fresh COPY of the sources (the layer folders, the order, the Makefile)
fresh() {
  rm -rf "$W/tree" && mkdir -p "$W/tree/docs"
  cp docs/design.md "$W/tree/docs/" && cp Makefile "$W/tree/"
  for f in $folders; do
    mkdir -p "$W/tree/$f"
    (cd "$f" && find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.l' \) \
      -exec cp --parents {} "$W/tree/$f/" \;) || exit 1
  done
}
# expect VERDICT WHAT PATTERN [OBJDIR]: layers.sh on the copy exits 0 (pass)
# or 1 (fail) and, when failing, prints a line matching PATTERN
expect() {
  sh "$L" "$W/tree" "${4:--}" >"$W/out" 2>&1
  rc=$?
  if [ "$1" = pass ]; then
    [ $rc -eq 0 ] || { bad "$2: exit $rc"; sed 's/^/    /' "$W/out"; }
  else
    [ $rc -eq 1 ] || bad "$2: exit $rc, expected 1"
    grep -q "$3" "$W/out" || { bad "$2: no line matching '$3'"; sed 's/^/    /' "$W/out"; }
  fi
}
addInclude() { # FILE LINE: puts the #include line first in FILE
  { echo "$2"; cat "$W/tree/$1"; } >"$W/x" && mv "$W/x" "$W/tree/$1"
}

fresh
expect pass "the tree as it is" ""

fresh
addInclude algebra/node.c '#include "../display/display.h"'
expect fail "algebra includes display.h" "^include: algebra/node.c -> display (../display/display.h): display is above algebra"

fresh
addInclude display/out.c '#include "sensors.h"'
expect fail "display includes sensors.h" "^include: display/out.c -> sensors (sensors.h): sensors and display are siblings"

fresh
addInclude display/out.c '#include "../runtime/rtInt.h"'
expect fail "display includes rtInt.h" "^include: display/out.c -> runtime (../runtime/rtInt.h): a private header of runtime"

fresh
addInclude base/tq.c '#include "nosuch.h"'
expect fail "an include found nowhere" "^base/tq.c includes \"nosuch.h\", which is in no folder of the tree"

fresh
addInclude runtime/hist.c '/* after ../shared/seeds/002 */'
expect fail "a citation of a design outside the repository" "^outside design document: runtime/hist.c:1:"

# objects: display calls algebra (down), then algebra calls display (up)
fresh
mkdir -p "$W/obj/algebra" "$W/obj/display"
printf 'int dspProbe(void);\nint algProbe(void) { return 1; }\n' >"$W/tree/algebra/probe.c"
printf 'int algProbe(void);\nint dspProbe(void) { return algProbe(); }\n' >"$W/tree/display/probe.c"
cc -c "$W/tree/algebra/probe.c" -o "$W/obj/algebra/probe.o" && cc -c "$W/tree/display/probe.c" -o "$W/obj/display/probe.o" ||
  { echo "cannot compile the probes"; exit 1; }
expect pass "display calls algebra" "" "$W/obj"
printf 'int dspProbe(void);\nint algProbe(void) { return dspProbe(); }\n' >"$W/tree/algebra/probe.c"
cc -c "$W/tree/algebra/probe.c" -o "$W/obj/algebra/probe.o" || exit 1
expect fail "algebra calls display" "^symbol: algebra/probe.o -> display (dspProbe): display is above algebra" "$W/obj"
grep -q "^symbol cycle: algebra -> display (dspProbe)" "$W/out" || bad "the cycle algebra -> display is not named"

[ $fails -eq 0 ] && echo "layers.sh passes the tree and fails each violation"
[ $fails -eq 0 ]
