#!/bin/sh
# text_mapped.sh - a text recording of 1 MiB or more is mapped, not read
# into memory (base/tq.c, sourceMap), with a zero byte after its last one
# (a page of zeros when it fills its last page):
#   - one whose size is a whole number of pages and whose last line, with
#     no newline, ends in a float, answers as the same bytes read through a
#     pipe (not mapped), its last value included;
#   - an error on its last line (a relation the query does not need, whose
#     records are checked and not kept) is reported with file:line:col,
#     exit 1 and nothing stored, as through the pipe.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/text_mapped
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
cat >"$dir/q.tq" <<'EOF'
entity E;
event R (X: E initiator, V: float) traced on initiator;
interval U (P: E performer, N: int) traced on performer;
range of A is R
retrieve into Rs (A.X, A.V)
EOF
# body N: N instants of an R each and a U ended (U is not needed)
body() {
  awk -v n="$1" 'BEGIN { print "1000 E+ A"; print "1000 E+ B"
    for (i = 1; i <= n; i++) { t = 1000 + 10 * i
      printf "%d R A %d.5\n%d U+ B %d\n%d U- B %d\n", t, i, t, i, t + 5, i } }'
}
# page FILE LAST: FILE padded with a comment line so that, LAST appended
# without a newline, its size is a whole number of pages
page() {
  size=$(wc -c <"$1")
  pad=$(((4096 - (size + ${#2} + 2) % 4096) % 4096)) # (with "#" and the newline)
  { printf '#'; head -c "$pad" /dev/zero | tr '\0' ' '; printf '\n%s' "$2"; } >>"$1"
  [ $(($(wc -c <"$1") % 4096)) = 0 ] || bad "$1: $(wc -c <"$1") bytes, not a whole number of pages"
  [ "$(wc -c <"$1")" -ge 1048576 ] || bad "$1: smaller than 1 MiB: not mapped"
}
n=24000
body $n >"$dir/ok.trace"
page "$dir/ok.trace" "999999999 R A 2.25"
$T run "$dir/q.tq" --replay "$dir/ok.trace" --format csv >"$dir/ok.csv" 2>"$dir/ok.err" || bad "mapped: exit $?: $(cat "$dir/ok.err")"
cat "$dir/ok.trace" | $T run "$dir/q.tq" --replay - --format csv >"$dir/pipe.csv" 2>"$dir/pipe.err" ||
  bad "through a pipe: exit $?: $(cat "$dir/pipe.err")"
cmp -s "$dir/ok.csv" "$dir/pipe.csv" || bad "mapped and piped answers differ: $(diff "$dir/ok.csv" "$dir/pipe.csv" | head -5)"
rows=$(grep -c '^A,' "$dir/ok.csv")
[ "$rows" = $((n + 1)) ] || bad "mapped: $rows rows of R, not $((n + 1))"
tail -1 "$dir/ok.csv" | grep -q '^A,2.25,999999999$' || bad "mapped: the last line's value is not 2.25: $(tail -1 "$dir/ok.csv")"
grep -q "Sanitizer\|runtime error" "$dir/ok.err" && bad "sanitizer: $(cat "$dir/ok.err")"

body $n >"$dir/bad.trace"
page "$dir/bad.trace" "999999999 U- B 7"
lines=$(($(wc -l <"$dir/bad.trace") + 1))
$T run "$dir/q.tq" --replay "$dir/bad.trace" --db "$dir/bad.db" >/dev/null 2>"$dir/bad.err"
rc=$?
[ $rc = 1 ] || bad "an error on the last line: exit $rc"
[ -e "$dir/bad.db" ] && bad "an error on the last line: the store was written"
printf '%s:%d:11: error: U- ends no open U interval with these values\n  999999999 U- B 7\n            ^\n' \
  "$dir/bad.trace" "$lines" | diff -u - "$dir/bad.err" >"$dir/bad.diff" || bad "the error's message: $(cat "$dir/bad.diff")"
[ $fails = 0 ] && echo "ok: a mapped recording of $(wc -c <"$dir/ok.trace") bytes answers as through a pipe; its last line's error is said"
exit $((fails > 0))
