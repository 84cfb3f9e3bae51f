#!/bin/sh
# mkseeds.sh - writes the seed inputs of fuzz_frontend into DIR (default
# tests/fuzz/corpus) from the repository's programs and recordings:
# examples/paper, tests/golden (program + recording), tests/errors (bad
# programs and bad recordings) and tests/explain.  A "%%" line separates
# program files and, last, the recording (see fuzz_frontend.c).
set -eu
cd "$(dirname "$0")/../.."
DIR=${1:-tests/fuzz/corpus}
mkdir -p "$DIR"
sep() { printf '%%%%\n'; }
# examples/paper: config + queries + recording, and each part alone
{ cat examples/paper/paper.tq; sep; cat examples/paper/queries.tq; sep; cat examples/paper/paper.trace; } >"$DIR/seed-paper-full"
{ cat examples/paper/paper.tq examples/paper/queries.tq; } >"$DIR/seed-paper-program"
for kind in golden errors explain; do
  for tq in tests/$kind/*.tq; do
    [ -e "$tq" ] || continue
    n=${tq%.tq}
    {
      cat "$tq"
      if [ -f "$n.args" ]; then
        for f in $(cat "$n.args"); do case $f in *.tq) sep; cat "$f" ;; esac; done
      fi
      if [ -f "$n.trace" ]; then sep; cat "$n.trace"; fi
    } >"$DIR/seed-$kind-$(basename "$n")"
  done
done
