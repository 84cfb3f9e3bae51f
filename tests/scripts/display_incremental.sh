#!/bin/sh
# display_incremental.sh - the display engine redraws only what a tuple
# changes: in tests/display/second_tuple, J2's second tuple (0:00:20)
# changes exactly J2's icon, the line attached to it and the clock; in the
# paper's example, ResumedbyP1 (2:54:20) adds one flash around P2 and the
# end of the wait removes one pointer, and nothing else is drawn anew.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/incremental
rm -rf "$dir" && mkdir -p "$dir"
step() { # FILE TIME: the change lines of that step
  awk -v t="@ $2" '/^@ / { on = ($0 == t) } /^timeline$/ { on = 0 } on && !/^@ / { print }' "$1"
}
$T run tests/display/second_tuple.tq --replay tests/display/second_tuple.trace --quiet --display list > "$dir/second.list"
step "$dir/second.list" 0:00:20 | cut -c1-20 > "$dir/second.step"
printf '%s\n' "~ clock clock x=901 " "~ Job[J2] circle x=9" "~ Runs[J2,H2] segmen" > "$dir/second.expected"
diff -u "$dir/second.expected" "$dir/second.step"
# the second tuple changed the load (scale), and only that: same place
at0=$(step "$dir/second.list" 0:00:00 | sed -n 's/^+ Job\[J2\] circle \(x=[0-9.]* y=[0-9.]*\) .*/\1/p')
at20=$(step "$dir/second.list" 0:00:20 | sed -n 's/^~ Job\[J2\] circle \(x=[0-9.]* y=[0-9.]*\) w=74 h=74 .*/\1/p')
[ -n "$at0" ] && [ "$at0" = "$at20" ]
# the first tuples drew everything: every object of the picture is added at 0:00:00
[ "$(step "$dir/second.list" 0:00:00 | grep -c '^+ ')" = 8 ]

E=examples/paper
$T run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --display list > "$dir/paper.list"
step "$dir/paper.list" 2:54:20 > "$dir/paper.step"
# added: the flash and the wait's ghost; changed: P2 (now ready), the clock
# and ghosts fading; removed: the wait
grep '^+ ' "$dir/paper.step" | cut -d' ' -f2 | sort > "$dir/added"
printf '%s\n' "ResumedbyP1[P2]" "Waiting[P2,M7]~646" | sort > "$dir/added.expected"
diff -u "$dir/added.expected" "$dir/added"
[ "$(grep -c '^- ' "$dir/paper.step")" = 1 ] && grep -q '^- Waiting\[P2,M7\]$' "$dir/paper.step"
grep '^~ ' "$dir/paper.step" | cut -d' ' -f2 | sort > "$dir/changed"
printf '%s\n' "Process[P1]~645" "Process[P2]" "clock" > "$dir/changed.expected"
diff -u "$dir/changed.expected" "$dir/changed"
echo ok
