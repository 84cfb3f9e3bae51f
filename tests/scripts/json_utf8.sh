#!/bin/sh
# json_utf8.sh - a recording's strings are bytes: JSON lines (and --stats)
# stay valid UTF-8 JSON when they are not UTF-8 (issue 15.11).  Each byte
# that is not part of a valid UTF-8 sequence (a stray continuation byte, a
# cut sequence, an overlong form, a surrogate) becomes U+FFFD; valid
# multibyte characters pass unchanged.  Python's strict decoder and json
# module are the oracle.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/json_utf8
rm -rf "$dir" && mkdir -p "$dir"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is missing"; exit 77; }
# a\xffb  \xc3( (cut)  \xe2\x82 (cut at the quote)  \xc0\xaf (overlong)
# \xed\xa0\x80 (a surrogate); then valid: e-acute, an emoji
printf '0 Proc+ P1\n1 Phase+ P1 "a\377b\303(c\342\202"\n2 Phase+ P1 "x\300\257y\355\240\200z"\n3 Phase+ P1 "ok \303\251 \360\237\230\200"\n' >"$dir/u.trace"
$T run tests/golden/keyed_interval.tq --replay "$dir/u.trace" --format jsonl >"$dir/u.jsonl" 2>"$dir/u.err" ||
  { echo "FAIL: exit $?: $(cat "$dir/u.err")"; exit 1; }
python3 - "$dir/u.jsonl" <<'PY' || exit 1
import json, sys
raw = open(sys.argv[1], 'rb').read()
try:
    text = raw.decode('utf-8')  # strict: fails on any invalid byte
except UnicodeDecodeError as e:
    print("FAIL: the JSON lines are not UTF-8:", e); sys.exit(1)
names = [json.loads(l)["Name"] for l in text.splitlines() if json.loads(l)["relation"] == "Phases"]
want = ["a\ufffdb\ufffd(c\ufffd\ufffd", "x\ufffd\ufffdy\ufffd\ufffd\ufffdz", "ok \u00e9 \U0001F600"]
if names != want:
    print("FAIL: names", [n.encode('unicode_escape') for n in names], "expected", [n.encode('unicode_escape') for n in want]); sys.exit(1)
PY
echo "ok: invalid UTF-8 in a recording becomes U+FFFD in JSON lines"
