#!/bin/sh
# replay_input.sh - a recording read from a pipe, from "-" (standard input)
# or from a process substitution gives the same answers as from its file,
# in both formats (issue 14.4: the format used to be told by opening the
# path, reading ahead and opening it again, which ate the start of a pipe);
# a collection file that holds whole intervals is copied from the stream
# into a temporary file to be read ahead, and --stats says so.  An input
# that holds no record is an error.  An endless input (/dev/zero, a line
# that never ends) is refused at its first NUL byte or over-long line,
# with its place, under a memory and a time bound (issue 15.4).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/replay_input
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
P="examples/paper/paper.tq examples/paper/queries.tq"
PT=examples/paper/paper.trace
# shellcheck disable=SC2086
$T run $P --replay $PT --format csv >"$dir/ref" 2>"$dir/ref.err" || bad "the paper from its file: $(cat "$dir/ref.err")"
grep -q '^P2,' "$dir/ref" || bad "the paper's answer is empty: $(cat "$dir/ref")"
$T record examples/paper/paper.tq --replay $PT -o "$dir/paper.col" 2>"$dir/rec.err" || bad "record the paper"

# ---------------------------------------------------------------- pipes, both formats
same() { # NAME OUTPUT ERRORS: OUTPUT is the file's answer
  cmp -s "$dir/ref" "$2" || bad "$1: $(diff "$dir/ref" "$2" | head -10) $(head -5 "$3")"
}
for src in "$PT" "$dir/paper.col"; do
  k=$(basename "$src")
  # shellcheck disable=SC2086
  cat "$src" | $T run $P --replay /dev/stdin --format csv >"$dir/$k.stdin" 2>"$dir/$k.stdin.err"
  same "$k through /dev/stdin" "$dir/$k.stdin" "$dir/$k.stdin.err"
  # shellcheck disable=SC2086
  cat "$src" | $T run $P --replay - --format csv --stats "$dir/$k.json" >"$dir/$k.dash" 2>"$dir/$k.dash.err"
  same "$k through -" "$dir/$k.dash" "$dir/$k.dash.err"
  # (a process substitution: a pipe under /dev/fd)
  # (bounded in time: the reader used to open it twice, and wait for a
  # writer that was gone)
  mkfifo "$dir/$k.fifo"
  timeout 120 sh -c 'cat "$1" >"$2"' sh "$src" "$dir/$k.fifo" &
  # shellcheck disable=SC2086
  timeout 120 $T run $P --replay "$dir/$k.fifo" --format csv >"$dir/$k.fifo.out" 2>"$dir/$k.fifo.err"
  wait
  same "$k through a named pipe" "$dir/$k.fifo.out" "$dir/$k.fifo.err"
done
# a text of many 256 KiB parts through a pipe (no size known ahead: the
# record arrays grow as it comes): the answer of its file
./build/paper-gen -n 20 -m 6 -k 2 -s 3 -p 40000 -o "$dir/big.trace" 2>"$dir/big.err" || bad "paper-gen: $(cat "$dir/big.err")"
[ "$(wc -c <"$dir/big.trace")" -gt 1000000 ] || bad "the big text is not big: $(wc -c <"$dir/big.trace") bytes"
# shellcheck disable=SC2086
$T run $P --replay "$dir/big.trace" --format csv >"$dir/big.ref" 2>>"$dir/big.err" || bad "big text from its file"
# shellcheck disable=SC2086
cat "$dir/big.trace" | $T run $P --replay - --format csv >"$dir/big.pipe" 2>>"$dir/big.err"
[ -s "$dir/big.ref" ] && cmp -s "$dir/big.ref" "$dir/big.pipe" || bad "big text through a pipe: $(diff "$dir/big.ref" "$dir/big.pipe" | head -5) $(head -5 "$dir/big.err")"
grep -q '"streams": 1, "spooled": 0' "$dir/paper.col.json" ||
  bad "--stats does not say the collection file came as a stream: $(grep '"read"' "$dir/paper.col.json")"
# tqmon load from a pipe, both formats: the rows of the file's load
$T load examples/paper/paper.tq --replay $PT --db "$dir/ref.db" 2>"$dir/load.err" || bad "load the paper"
for src in "$PT" "$dir/paper.col"; do
  k=$(basename "$src")
  cat "$src" | $T load examples/paper/paper.tq --replay - --db "$dir/$k.db" 2>>"$dir/load.err" || bad "load $k from a pipe: $(cat "$dir/load.err")"
  a=$(sqlite3 "$dir/ref.db" "select count(*) from RunningOn; select count(*) from Process")
  b=$(sqlite3 "$dir/$k.db" "select count(*) from RunningOn; select count(*) from Process")
  [ "$a" = "$b" ] && [ "$(echo "$a" | head -1)" -gt 0 ] || bad "load $k from a pipe: $b rows, from the file $a"
done

# ---------------------------------------------------------------- whole intervals from a pipe
# (read ahead for their begins: the stream is copied into a temporary file)
W=tests/golden/whole_late
$T record $W.tq --replay $W.trace -o "$dir/wl.col" 2>"$dir/wl.err" || bad "record whole_late"
cat "$dir/wl.col" | $T run $W.tq --replay - --format csv --stats "$dir/wl.json" >"$dir/wl.out" 2>>"$dir/wl.err" ||
  bad "whole intervals through a pipe: $(cat "$dir/wl.err")"
cmp -s $W.csv "$dir/wl.out" || bad "whole intervals through a pipe: $(diff $W.csv "$dir/wl.out" | head)"
grep -q "\"streams\": 1, \"spooled\": $(wc -c <"$dir/wl.col" | tr -d ' ')," "$dir/wl.json" ||
  bad "--stats does not say the stream was copied whole: $(grep '"read"' "$dir/wl.json")"

# ---------------------------------------------------------------- no record at all
empty() { # NAME EXPECTED-MESSAGE OUTPUT-PREFIX
  rc=$(cat "$3.rc")
  [ "$rc" -eq 1 ] || bad "$1: exit $rc (expected 1)"
  [ -s "$3.out" ] && bad "$1: results printed: $(head -3 "$3.out")"
  grep -qx "$2" "$3.err" || bad "$1: $(cat "$3.err")"
}
# shellcheck disable=SC2086
: | $T run $P --replay - --format csv >"$dir/e1.out" 2>"$dir/e1.err"; echo $? >"$dir/e1.rc"
empty "an empty pipe" "<stdin>: error: the recording holds no record (an empty stream)" "$dir/e1"
printf '# written by a recorder that saw nothing\n\n' >"$dir/none.trace"
# shellcheck disable=SC2086
$T run $P --replay "$dir/none.trace" --format csv >"$dir/e2.out" 2>"$dir/e2.err"; echo $? >"$dir/e2.rc"
empty "a text recording of comments" "$dir/none.trace: error: the recording holds no record" "$dir/e2"
# a collection file of a header and no group, not closed (its recorder
# died): from a pipe its range is known at its end, and it has none
hlen=$(od -An -tu4 -j44 -N4 "$dir/paper.col" | tr -d ' ')
head -c $((48 + hlen + 4)) "$dir/paper.col" >"$dir/hdr.col"
printf '\000' | dd of="$dir/hdr.col" bs=1 seek=12 conv=notrunc 2>/dev/null
# shellcheck disable=SC2086
cat "$dir/hdr.col" | $T run $P --replay - --format csv >"$dir/e3.out" 2>"$dir/e3.err"; echo $? >"$dir/e3.rc"
empty "a collection file without records" "<stdin>: error: the recording holds no record (an empty stream)" "$dir/e3"
# shellcheck disable=SC2086
: | $T load examples/paper/paper.tq --replay - --db "$dir/e4.db" >"$dir/e4.out" 2>"$dir/e4.err"; echo $? >"$dir/e4.rc"
empty "load of an empty pipe" "<stdin>: error: the recording holds no record (an empty stream)" "$dir/e4"
[ -e "$dir/e4.db" ] && bad "load of an empty pipe: the store was written"

# ---------------------------------------------------------------- endless inputs
# Under a memory bound (the plain build: AddressSanitizer reserves more
# address space than any bound) and a generous time bound: refused at once
# with the place, never grown until memory ends.
N=build/tqmon
bounded() { # NAME EXPECTED-MESSAGE COMMAND...
  name=$1 want=$2
  shift 2
  (ulimit -v 1000000 && timeout 120 "$@") >"$dir/b.out" 2>"$dir/b.err"
  rc=$?
  [ $rc -eq 1 ] || bad "$name: exit $rc (expected 1): $(head -c 300 "$dir/b.err")"
  grep -qx "$want" "$dir/b.err" || bad "$name: $(head -c 300 "$dir/b.err")"
}
# shellcheck disable=SC2086
bounded "--replay /dev/zero" "/dev/zero:1:1: error: binary file (contains a NUL byte)" $N run $P --replay /dev/zero
bounded "tqmon check /dev/zero" "/dev/zero:1:1: error: binary file (contains a NUL byte)" $N check /dev/zero
# shellcheck disable=SC2086
bounded "a line that never ends" "<stdin>:3:1: error: line longer than 1048576 bytes" \
  sh -c "{ printf '# a\n# b\n'; yes | tr -d '\n'; } | $N run $P --replay -"
# a binary file that is no collection file: the place of its first NUL,
# and that one message, not those of the lines before it (bad ones too:
# the text is read a part at a time, and its lines parsed as they come)
printf 'x Foo\n0s Process+ P1\n1s Pro\000cess- P1\n' >"$dir/nul.trace"
# shellcheck disable=SC2086
$T run $P --replay "$dir/nul.trace" >"$dir/nul.out" 2>"$dir/nul.err"
[ "$(cat "$dir/nul.err")" = "$dir/nul.trace:3:7: error: binary file (contains a NUL byte)" ] ||
  bad "a NUL byte: $(cat "$dir/nul.err")"
[ $fails -eq 0 ] && echo "replay_input: ok"
exit $((fails > 0))
