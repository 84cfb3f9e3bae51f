#!/bin/sh
# cli.sh - the tool a user expects (issue 14.11, 14.13): --version; help for
# each command (tqmon help CMD and tqmon CMD --help give the same text, with
# that command's options); serve's help names every source run takes; an
# unknown command's help is bad usage (2); the bash completion loads and
# completes commands and options; NO_COLOR takes the bold out of the
# terminal view (script(1) gives it a terminal).
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/cli
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
v=$($T --version) || bad "--version: exit $?"
echo "$v" | grep -q '^tqmon [0-9][0-9.]* ' || bad "--version: '$v'"
for c in check explain run serve display record convert load sql show report pms; do
  $T help $c >"$dir/help.$c" 2>"$dir/help.$c.err" || bad "help $c: exit $?: $(cat "$dir/help.$c.err")"
  $T $c --help >"$dir/opt.$c" 2>&1 || bad "$c --help: exit $?"
  cmp -s "$dir/help.$c" "$dir/opt.$c" || bad "help $c and $c --help differ"
  head -1 "$dir/help.$c" | grep -q "^usage: tqmon $c" || bad "help $c: $(head -1 "$dir/help.$c")"
done
grep -q -- "--format table|csv|jsonl" "$dir/help.run" || bad "help run has no --format"
grep -q -- "--exec-output" "$dir/help.run" || bad "help run has no --exec-output"
grep -q -- "--pm NAME" "$dir/help.run" || bad "help run has not the PM options"
grep -q -- "--format" "$dir/help.check" && bad "help check shows run's options"
for src in --replay --exec --attach --host --kernel --pcp --pcp-archive --pm; do
  grep -q -- "$src" "$dir/help.serve" || bad "help serve does not name $src"
done
$T help nosuch >/dev/null 2>&1
[ $? -eq 2 ] || bad "help of an unknown command: not exit 2"

# bash completion
if command -v bash >/dev/null 2>&1; then
  out=$(bash -c '. app/tqmon.bash; COMP_WORDS=(tqmon ru); COMP_CWORD=1; _tqmon; echo "${COMPREPLY[*]}"
    COMP_WORDS=(tqmon run --for); COMP_CWORD=2; _tqmon; echo "${COMPREPLY[*]}"
    COMP_WORDS=(tqmon run --format j); COMP_CWORD=3; _tqmon; echo "${COMPREPLY[*]}"' 2>&1)
  [ "$out" = "run
--format
jsonl" ] || bad "bash completion: $out"
fi

# --threads out of range or not a number: said, exit 2, nothing stored
for v in 0 65 2x -1; do
  rm -f "$dir/threads.db"
  $T run examples/paper/paper.tq examples/paper/queries.tq --replay examples/paper/paper.trace --threads "$v" \
    --db "$dir/threads.db" >"$dir/threads.out" 2>"$dir/threads.err"
  rc=$?
  [ $rc -eq 2 ] || bad "--threads $v: exit $rc (expected 2)"
  grep -q "threads (tqmon run --threads) is a number from 1 to 64, not '$v'" "$dir/threads.err" ||
    bad "--threads $v: $(cat "$dir/threads.err")"
  [ -e "$dir/threads.db" ] && bad "--threads $v: the store was written"
done

# NO_COLOR: the terminal view without bold
if command -v script >/dev/null 2>&1; then
  P=examples/paper
  cmd="$T run $P/paper.tq $P/queries.tq $P/display.tq --replay $P/paper.trace --quiet --display tty"
  script -qec "$cmd" /dev/null >"$dir/color.out" 2>&1 || bad "tty view: exit $?"
  grep -q "$(printf '\033\\[1m')" "$dir/color.out" || bad "the terminal view has no bold title (the check sees nothing)"
  NO_COLOR=1 script -qec "$cmd" /dev/null >"$dir/nocolor.out" 2>&1 || bad "tty view, NO_COLOR: exit $?"
  grep -q "$(printf '\033\\[1m')" "$dir/nocolor.out" && bad "NO_COLOR: the terminal view is still bold"
  grep -q "tqmon" "$dir/nocolor.out" || bad "NO_COLOR: no view: $(head -3 "$dir/nocolor.out")"
fi
[ $fails -eq 0 ] || exit 1
echo "ok: --version, help per command, serve's sources, completion, --threads, NO_COLOR"
