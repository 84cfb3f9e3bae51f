#!/bin/sh
# merge.sh - adds to tests/fuzz/corpus the inputs of DIR (default
# build/fuzz/corpus, where make fuzz writes) that reach coverage the corpus
# does not have (libFuzzer -merge=1; nothing is removed).  Only new edges
# count (-use_counters=0), not new hit counts, to keep the corpus small.
set -eu
cd "$(dirname "$0")/../.."
DIR=${1:-build/fuzz/corpus}
make -s build/fuzz/fuzz_frontend
mkdir -p build/fuzz/artifacts
build/fuzz/fuzz_frontend -merge=1 -use_counters=0 -max_len=4096 -timeout=5 -artifact_prefix=build/fuzz/artifacts/ -dict=tests/fuzz/tq.dict tests/fuzz/corpus "$DIR" 2>&1 |
  grep -E '^MERGE-OUTER: [0-9]+ new files|^MERGE-OUTER: [0-9]+ files' || true
echo "corpus: $(ls tests/fuzz/corpus | wc -l) files, $(cat tests/fuzz/corpus/* | wc -c) bytes"
