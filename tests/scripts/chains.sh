#!/bin/sh
# chains.sh - long chains and long lists in a program (issue 15.3, 15.4): every
# pass of the front end, the optimizer, the network and the SQL translation
# takes an expression as deep as the front end accepts (AST_MAX_DEPTH in
# grammar/ast.h: 1000 operators, `a and b and ...` included), in every
# clause, on an 8 MB stack, under the sanitizers; one deeper is refused with
# its place (tests/errors/chain_*.tq).  Long lists (a 1,000,000-value
# enumeration, 5,000 statements) are checked under a memory and a time
# bound with the release build.  No timing is asserted beyond the bounds,
# which only turn a runaway into a failure: the enumeration's is 30 s, for
# a check that takes about 1 s here and took more than 60 s when its
# duplicate test compared every pair of values (100,000 values took 20 s,
# under the 120 s the other lists get).
set -u
T=${T:-build/asan/tqmon}
R=build/tqmon
OUT=${OUT:-build/test-out}
dir=$OUT/chains
rm -rf "$dir" && mkdir -p "$dir"
P=examples/paper/paper.tq
TR=examples/paper/paper.trace
fails=0
bad() {
  echo "FAIL: $1"
  [ -f "${2:-}" ] && head -c 600 "$2" && echo
  fails=$((fails + 1))
}

# A program of query text $2 repeated with separator $3, $1 times, around $4...$5.
gen() { # n term sep head tail -> stdout
  awk -v n="$1" -v t="$2" -v s="$3" -v h="$4" -v e="$5" 'BEGIN {
    printf "range of S is SendMessage\nrange of W is Waiting\n%s", h
    for (i = 0; i < n; i++) printf "%s%s", (i ? s : ""), t
    printf "%s\n", e }'
}
N=990 # chains just under the limit (the clause adds a few levels)
gen $N "S.Process = P1" " and " "retrieve (S.Mailbox) where " "" >"$dir/and.tq"
gen $N "S.Process = P1" " or " "retrieve (S.Mailbox) where " "" >"$dir/or.tq"
gen $N "1" " + " "retrieve (S.Mailbox, X = " ")" >"$dir/sum.tq"
gen $N "7" " / " "retrieve (S.Mailbox, X = " ")" >"$dir/div.tq"
gen $N "0.5" " * " "retrieve (S.Mailbox, X = " ")" >"$dir/mul.tq"
gen $N "not" " " "retrieve (S.Mailbox) where " " S.Process = P1" >"$dir/not.tq"
gen $N "-" " " "retrieve (S.Mailbox, X = " " 1)" >"$dir/neg.tq"
gen $N "S overlap W" " and " "retrieve (S.Mailbox) valid at S when " "" >"$dir/when.tq"
gen $N "S precede W" " or " "retrieve (S.Mailbox) valid at S when " "" >"$dir/whenor.tq"
gen $N "W" " extend " "retrieve (S.Mailbox) valid at S when S overlap (" ")" >"$dir/extend.tq"
gen $N "W" " overlap " "retrieve (S.Mailbox) valid at S when S overlap (" ")" >"$dir/overlap.tq"
gen $N "1s" " + " "retrieve (S.Mailbox) valid at S + " "" >"$dir/shift.tq"
gen $N "S.Process = P1" " and " "retrieve (N = count(S.Mailbox where " "))" >"$dir/aggwhere.tq"
gen $N "S precede 3:00:00" " and " "retrieve (N = count(S.Mailbox by S.Process when " "))" >"$dir/aggwhen.tq"
gen 3000 "(" "" "retrieve (S.Mailbox, X = " "1" >"$dir/parens.tq"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf ")"; printf ")\n" }' >>"$dir/parens.tq"

db=$dir/paper.db
if ! $T load $P --replay $TR --db "$db" >"$dir/load.log" 2>&1; then bad "load" "$dir/load.log"; fi
for q in "$dir"/*.tq; do
  name=$(basename "$q" .tq)
  for cmd in check explain run sql; do
    case $cmd in
      run) set -- --replay $TR --format csv ;;
      sql) set -- --db "$db" ;;
      *) set -- ;;
    esac
    (ulimit -s 8192 && timeout 600 $T $cmd $P "$q" "$@") >"$dir/$name.$cmd" 2>&1
    rc=$?
    if grep -q "Sanitizer\|runtime error" "$dir/$name.$cmd"; then
      bad "$name: $cmd: sanitizer report" "$dir/$name.$cmd"
    elif [ $cmd = sql ] && [ $rc -eq 1 ]; then
      # SQLite's own limits (expression depth 1000, its parser's stack) or the
      # translation's 1 MB bound: refused with a message, never a crash
      grep -q "error: " "$dir/$name.$cmd" || bad "$name: sql: exit 1 without a message" "$dir/$name.$cmd"
    elif [ $rc -ne 0 ]; then
      bad "$name: $cmd: exit $rc" "$dir/$name.$cmd"
    fi
  done
done

# the same chains one operator deeper are refused with their place (exit 1)
gen 1001 "S.Process = P1" " and " "retrieve (S.Mailbox) where " "" >"$dir/deep.tq"
(ulimit -s 8192 && timeout 600 $T check $P "$dir/deep.tq") >"$dir/deep.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "deep.tq:3:[0-9]*: error: expression nested too deeply" "$dir/deep.out" ||
  bad "1001 conjuncts: exit $rc, expected the depth error" "$dir/deep.out"

# long lists, with the release build under a memory and a time bound (the
# sanitizers reserve more address space than any sensible bound)
bounded() { # name seconds cmd... : exit status of cmd under 1 GB and that time
  b=$1
  secs=$2
  shift 2
  (ulimit -v 1048576 && timeout "$secs" "$@") >"$dir/$b.bounded" 2>&1
}
awk 'BEGIN { printf "entity Process (State: enum("
  for (i = 0; i < 1000000; i++) printf "%sV%d", (i ? ", " : ""), i
  printf "));\nrange of P is Process\nretrieve (P.all) where P.State = V999999\n" }' >"$dir/enum.tq"
bounded enum 30 $R check "$dir/enum.tq" || bad "1,000,000 enumeration values: exit $? (124: more than 30 s)" "$dir/enum.bounded"
sed 's/V999999));/V999999, v5));/' "$dir/enum.tq" >"$dir/enumdup.tq"
bounded enumdup 30 $R check "$dir/enumdup.tq"
rc=$?
[ $rc -eq 1 ] && grep -q "enumdup.tq:1:[0-9]*: error: duplicate enumeration value 'v5'" "$dir/enumdup.bounded" ||
  bad "a duplicate among 1,000,000 enumeration values: exit $rc (124: more than 30 s)" "$dir/enumdup.bounded"
awk 'BEGIN { print "range of S is SendMessage"
  for (i = 0; i < 5000; i++) print "retrieve (S.Mailbox) where S.Process = P1" }' >"$dir/many.tq"
bounded many 120 $R run $P "$dir/many.tq" --replay $TR --format csv || bad "5,000 statements: exit $?" "$dir/many.bounded"
awk 'BEGIN { printf "range of S is SendMessage\nretrieve ("
  for (i = 0; i < 20000; i++) printf "%sX%d = 1", (i ? ", " : ""), i
  print ")" }' >"$dir/wide.tq"
bounded wide 120 $R check $P "$dir/wide.tq"
rc=$?
[ $rc -eq 1 ] && grep -q "error: the target list has more than 64 attributes" "$dir/wide.bounded" ||
  bad "20,000 targets: exit $rc" "$dir/wide.bounded"

# a five-line recording with a time of 2562047h: its Clock would tick every
# second up to it, for hours; refused before the run starts, nothing stored
cat >"$dir/far.tq" <<'EOF'
entity Process;
event Ping (Process: Process initiator) traced on initiator;
range of C is Clock
range of P is Ping
retrieve (N = count(P.Process for each 1s)) valid at C
EOF
printf '0s Process+ P1\n1s Ping P1\n2562047h Ping P1\n2562047h Process- P1\n' >"$dir/far.trace"
bounded far 120 $R run "$dir/far.tq" --replay "$dir/far.trace" --db "$dir/far.db"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$dir/far.db" ] &&
  grep -q "far.trace: error: the recording spans 0:00:00 to .*: ticking every 0:00:01 over it is 9223369201 ticks, more than the 10000000" "$dir/far.bounded" ||
  bad "a recording with a far time: exit $rc" "$dir/far.bounded"
# with a bound the recording fits, it runs (a day of 1 s ticks)
printf '0s Process+ P1\n1s Ping P1\n24h Ping P1\n24h Process- P1\n' >"$dir/day.trace"
bounded day 120 $R run "$dir/far.tq" --replay "$dir/day.trace" --format csv --max-ticks 86401 &&
  [ "$(grep -c '^[0-9]' "$dir/day.bounded")" -eq 86401 ] || bad "a day of ticks under --max-ticks 86401" "$dir/day.bounded"
bounded day2 120 $R run "$dir/far.tq" --replay "$dir/day.trace" --format csv --max-ticks 86400
[ $? -eq 1 ] || bad "a day of ticks over --max-ticks 86400" "$dir/day2.bounded"

# an error on a 1 MB line shows a window of it around the caret
awk 'BEGIN { printf "range of S is SendMessage\nretrieve (S.Mailbox) where S.Process = \""
  for (i = 0; i < 50000; i++) printf "0123456789"
  printf "\" or S.Nothing = \""
  for (i = 0; i < 50000; i++) printf "0123456789"
  print "\"" }' >"$dir/longline.tq"
bounded longline 120 $R check $P "$dir/longline.tq"
rc=$?
size=$(wc -c <"$dir/longline.bounded")
[ $rc -eq 1 ] && [ "$size" -lt 1000 ] && grep -q "longline.tq:2:[0-9]*: error: .*Nothing" "$dir/longline.bounded" ||
  bad "an error on a 1 MB line: exit $rc, $size bytes of messages" "$dir/longline.bounded"

[ $fails -eq 0 ]
