#!/bin/sh
# triage.sh - groups crash inputs by their report: for each FILE (default
# build/fuzz/artifacts/*), reruns it and prints "KIND at FRAME  FILE",
# sorted so that the same bug lines up.  Stack frames: first in tqmon code.
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- build/fuzz/artifacts/*
for f in "$@"; do
  [ -f "$f" ] || continue
  r=$(UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 build/fuzz/fuzz_frontend -timeout=5 "$f" 2>&1)
  kind=$(printf '%s\n' "$r" | grep -m1 -o 'runtime error: [a-z -]*\|ERROR: [A-Za-z]*Sanitizer: [A-Za-z-]*\|ERROR: libFuzzer: [a-z-]*' | sed 's/ERROR: //')
  frame=$(printf '%s\n' "$r" | grep -m1 -o ' in [A-Za-z_][A-Za-z0-9_]* /[^ ]*\(base\|grammar\|gen\|compiler\|algebra\|sensors\|runtime\|display\)/[^ ]*' | sed 's|/.*/\([a-z]*/[^/]*\)$|\1|')
  echo "${kind:-no crash} at${frame:- ?}  $f"
done | sort
