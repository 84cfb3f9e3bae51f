#!/bin/sh
# display_tty.sh - the terminal view (--display tty) of the paper's example:
# to a file it prints, per step, the lines of the current state that appeared
# (+) and went away (-); on a terminal (script(1) gives it one) it redraws
# the state in place and ends with the final state.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/tty
rm -rf "$dir" && mkdir -p "$dir"
E=examples/paper
$T run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --display tty > "$dir/plain.txt"
for line in "1:00:00 + Processor A []" \
            "2:00:00 + RunningOn P1 in A" "2:00:00 + Processor A [P1]" "2:00:00 + Process P1 State=Running" \
            "2:00:05 + SendMessage P1 -> M3" "2:00:06 - SendMessage P1 -> M3" \
            "2:45:29 + Waiting M7 -> P2" "2:45:30 + Process P2 State=Blocked" \
            "2:51:13 + SendMessage P1 -> M7" "2:54:20 + ResumedbyP1 P2 (flashing)" "2:54:20 - Waiting M7 -> P2" \
            "2:54:21 - ResumedbyP1 P2 (flashing)" "4:00:00 - Processor B []"; do
  grep -qxF "$line" "$dir/plain.txt" || { echo "missing: $line"; exit 1; }
done
# a live run's steps carry wall-clock times as the tables give them: ISO
# 8601 in the local zone (TZ honoured)
printf 'range of P is Process\nretrieve into Me (P.Process) where P.Process = "1"\n' >"$dir/live.tq"
TZ=Asia/Tokyo $T run --host sensors/host.tq "$dir/live.tq" --snapshots 2 --quiet --display tty >"$dir/live.txt"
grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?\+09:00 \+ Me 1$' "$dir/live.txt" ||
  { echo "live step time not ISO 8601 in TZ: $(cat "$dir/live.txt")"; exit 1; }
# no escape sequences when the output is not a terminal
! grep -q "$(printf '\033')" "$dir/plain.txt"

if command -v script > /dev/null 2>&1; then
  script -qec "$T run $E/paper.tq $E/queries.tq $E/display.tq --replay $E/paper.trace --quiet --display tty" /dev/null > "$dir/tty.txt"
  grep -q "$(printf '\033')\[H" "$dir/tty.txt"   # redrawn in place
  # the last screen: at 4:00:00 nothing is left
  tail -c 200 "$dir/tty.txt" | grep -q "4:00:00"
else
  echo "(no script(1): the in-place view was not checked)"
fi
echo ok
