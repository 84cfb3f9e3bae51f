#!/bin/sh
# opt_equiv.sh - the optimizer never changes an answer: on generated
# recordings of the paper's system (200 processes, 50 mailboxes, 8
# processors) the optimized and unoptimized networks give the same tuples,
# the optimized one never delivers more packets of any sensor, and for
# ResumedbyP1 it delivers at least 10 times fewer (fixed seed).
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
G=build/paper-gen
Q="examples/paper/paper.tq examples/paper/queries.tq"
delivered() { # file sensor -> delivered count
  grep "\"name\": \"$2\"" "$1" | sed 's/.*"delivered": \([0-9]*\).*/\1/'
}
for seed in 7 11 23; do
  tr=$OUT/gen$seed.trace
  $G -n 200 -m 50 -k 8 -p 6000 -s $seed -o "$tr"
  # shellcheck disable=SC2086
  $T run $Q --replay "$tr" --format csv --stats "$OUT/gen$seed.opt.json" >"$OUT/gen$seed.opt.csv"
  # shellcheck disable=SC2086
  $T run $Q --replay "$tr" --format csv --no-opt --stats "$OUT/gen$seed.noopt.json" >"$OUT/gen$seed.noopt.csv"
  cmp "$OUT/gen$seed.opt.csv" "$OUT/gen$seed.noopt.csv" || { echo "seed $seed: answers differ"; exit 1; }
  for s in Processor Process Mailbox SendMessage RunningOn Waiting; do
    o=$(delivered "$OUT/gen$seed.opt.json" $s)
    u=$(delivered "$OUT/gen$seed.noopt.json" $s)
    [ "$o" -le "$u" ] || { echo "seed $seed: $s delivered $o optimized > $u unoptimized"; exit 1; }
  done
  echo "seed $seed: same answers ($(wc -l <"$OUT/gen$seed.opt.csv") lines)"
done
# ResumedbyP1 alone: packets delivered, optimized vs unoptimized
printf 'range of S is SendMessage\nrange of W is Waiting\nretrieve into ResumedbyP1 (Process = W.Process)\nvalid at end of W\nwhere S.Mailbox = W.Mailbox and S.Process = P1\nwhen S precede end of W\n' >"$OUT/resumed.tq"
tr=$OUT/gen7.trace
$T run examples/paper/paper.tq "$OUT/resumed.tq" --replay "$tr" --quiet --stats "$OUT/r.opt.json"
$T run examples/paper/paper.tq "$OUT/resumed.tq" --replay "$tr" --quiet --no-opt --stats "$OUT/r.noopt.json"
o=$(( $(delivered "$OUT/r.opt.json" SendMessage) + $(delivered "$OUT/r.opt.json" Waiting) ))
u=$(( $(delivered "$OUT/r.noopt.json" SendMessage) + $(delivered "$OUT/r.noopt.json" Waiting) ))
sends=$(grep -c 'SendMessage P1 ' "$tr")
echo "ResumedbyP1: delivered $o optimized, $u unoptimized (P1 sent $sends)"
[ $((o * 10)) -le "$u" ] || { echo "ratio below 10"; exit 1; }
