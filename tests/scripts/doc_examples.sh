#!/bin/sh
# doc_examples.sh - every example of docs/language.md is a test: each ```tq
# block is run with the paper's sensors over the paper's recording, and its
# output must be the plain ``` block that follows it.  A block whose first
# line is "-- run with: OPTIONS" is run with those options too.
set -eu
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/doc
rm -rf "$dir" && mkdir -p "$dir"
awk -v dir="$dir" '
  /^```tq$/ { n++; mode = "q"; next }
  /^```$/ && mode == "" && n > 0 && !done[n] { mode = "e"; next }
  /^```/ { if (mode == "e") done[n] = 1; mode = ""; next }
  mode == "q" { print > (dir "/ex" n ".tq") }
  mode == "e" { print > (dir "/ex" n ".expected") }
' docs/language.md
count=0
fails=0
for q in "$dir"/ex*.tq; do
  e=${q%.tq}.expected
  count=$((count + 1))
  if [ ! -f "$e" ]; then echo "no expected output after $(basename "$q")"; fails=$((fails + 1)); continue; fi
  # a first line "-- run with: OPTIONS" adds options (the display examples)
  opts=$(sed -n '1s/^-- run with: //p' "$q")
  # shellcheck disable=SC2086
  $T run examples/paper/paper.tq "$q" --replay examples/paper/paper.trace $opts >"${q%.tq}.out" 2>&1 || true
  # the table output ends with a blank line
  sed -e '${/^$/d}' "${q%.tq}.out" >"${q%.tq}.got"
  if ! diff -u "$e" "${q%.tq}.got" >"${q%.tq}.diff"; then
    echo "docs example $(basename "$q"):"
    cat "$q"
    cat "${q%.tq}.diff"
    fails=$((fails + 1))
  fi
done
echo "$count examples, $fails failed"
[ $count -gt 0 ] && [ $fails -eq 0 ]
