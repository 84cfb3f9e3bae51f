#!/bin/sh
# strobe_profile.sh - where the CPU goes (issue 21): the CPU sampler
# (sensors/cpusample.c) on a program with a known split of its CPU time,
# tests/strobe/tqtest_profile.c: 70% in tqtest_hot and 30% in tqtest_cold,
# inside two kinds of traced transactions (Query: hot 50, cold 10; Update:
# hot 20, cold 20, in percent of all).  In one run:
#   - the attribution queries (tests/strobe/profile.tq) give those shares
#     within 5 points, per function and per transaction and function, of the
#     samples in the program's own code (the kernel's interrupts and
#     scheduling take some percent of its CPU time: more on a loaded machine);
#   - perf record runs the same program (tqmon --exec starts perf, perf
#     starts the program) as the independent observation: perf report's
#     shares per function, and its samples joined with the transactions the
#     run stored (perf script times, CLOCK_REALTIME), agree within 5 points,
#     of all samples and of the program's;
#   - the pseudo-sections add up to the whole;
#   - only the program's pid was sampled (--stats).
# Then the stripped program: addresses come as module+0xOFFSET, and those
# offsets fall in the two functions as nm sees them in the unstripped one.
# CPU time, not wall time, is the measure: the split holds on a loaded
# machine.  Skipped (77) without perf or when perf_event_open is refused.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/strobe_profile
rm -rf "$dir" && mkdir -p "$dir"
P=build/strobe/tqtest_profile
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
command -v perf >/dev/null 2>&1 || { echo "skipped: no perf (Debian linux-perf; tests/deps.sh test installs it)"; exit 77; }
if ! perf stat -e task-clock -x, -o "$dir/perfcheck" true 2>"$dir/perfcheck.err"; then
  echo "skipped: perf_event_open is refused here: $(head -1 "$dir/perfcheck.err")"
  exit 77
fi

# share FILE SECTION KEY1 [KEY2]: "Share,OfProgram" of the row of that result
# whose first fields are the keys
share() {
  awk -F, -v sec="# $2" -v k1="$3" -v k2="${4:-}" '
    /^# / { on = ($0 == sec); next }
    on && $1 == k1 && (k2 == "" || $2 == k2) { print (k2 == "" ? $3 "," $4 : $4 "," $5) }' "$1"
}
ofp() { echo "$1" | cut -d, -f2; } # OfProgram of "Share,OfProgram"
# within A B D : |A - B| <= D
within() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

cat >"$dir/txns.tq" <<'EOF'
range of T is Transaction
retrieve into Txns (T.Kind)
EOF
# ---------------------------------------------------------------- one run, two observers
$T run tests/strobe/tqtest.tq sensors/cpusample.tq tests/strobe/profile.tq "$dir/txns.tq" --pm cpusample \
  --format csv --stats "$dir/run.json" \
  --exec perf record -q -e task-clock -c 1000000 -k CLOCK_REALTIME -o "$dir/perf.data" -- $P 20 \
  >"$dir/run.csv" 2>"$dir/run.err"
rc=$?
[ $rc -eq 0 ] || bad "the run: exit $rc: $(head -5 "$dir/run.err")"
grep -q "Sanitizer\|runtime error" "$dir/run.err" && bad "sanitizer report: $(head -20 "$dir/run.err")"
# the attribution queries are the example users copy (sensors/cpusample.md): no trap noted
grep -q "note:" "$dir/run.err" && bad "the attribution queries set off a compiler note: $(grep -A2 "note:" "$dir/run.err")"
msg=$(grep '"name": "cpusample"' "$dir/run.json" | sed 's/.*"message": "\([^"]*\)".*/\1/')
echo "cpusample: $msg"
pid=$(echo "$msg" | sed -n 's/^pids=1 \[\([0-9]*\):.*/\1/p')
[ -n "$pid" ] || bad "the stats do not show exactly one pid sampled: $msg"
answered=$(echo "$msg" | sed -n 's/.* answered=\([0-9]*\).*/\1/p')
[ "${answered:-0}" -ge 100 ] || bad "only ${answered:-0} samples answered"
echo "$msg" | grep -q " lost=0 dropped=0 " || bad "samples lost or dropped: $msg"

# ours: per function and per transaction
sh_=$(share "$dir/run.csv" ByFunction tqtest_hot)
sc_=$(share "$dir/run.csv" ByFunction tqtest_cold)
oh=$(echo "$sh_" | cut -d, -f1)
oc=$(echo "$sc_" | cut -d, -f1)
ohp=$(ofp "$sh_")
ocp=$(ofp "$sc_")
[ -n "$oh" ] && [ -n "$oc" ] || bad "ByFunction has no tqtest_hot or tqtest_cold: $(cat "$dir/run.csv" | head -20)"

# perf: per function (perf report) ...
perf report -i "$dir/perf.data" --stdio --sort dso,sym --percent-limit 0 >"$dir/perf.report" 2>"$dir/perf.report.err"
ph=$(awk '$NF == "tqtest_hot" { sub("%", "", $1); print $1 }' "$dir/perf.report")
pc=$(awk '$NF == "tqtest_cold" { sub("%", "", $1); print $1 }' "$dir/perf.report")
prog=$(awk '$2 == "tqtest_profile" { sub("%", "", $1); s += $1 } END { print s + 0 }' "$dir/perf.report")
php=$(awk -v a="${ph:-0}" -v p="$prog" 'BEGIN { if (p > 0) printf "%.3f", 100 * a / p }')
pcp=$(awk -v a="${pc:-0}" -v p="$prog" 'BEGIN { if (p > 0) printf "%.3f", 100 * a / p }')
[ -n "$ph" ] && [ -n "$pc" ] || bad "perf report has no tqtest_hot or tqtest_cold"
# ... and per transaction: perf's samples of the program joined with the
# transactions the run stored (times in ns; perf script gives s.us)
perf script -i "$dir/perf.data" -F pid,time,ip,sym,dso 2>/dev/null | awk -v pid="$pid" '
  $1 == pid { t = $2; sub(":", "", t); split(t, a, "."); printf "%s%s000 %s %s\n", a[1], a[2], (NF >= 5 ? $4 : "[unknown]"), $NF }' >"$dir/perf.samples"
awk -F, '/^# Txns/ { on = 1; getline; next } /^# / { on = 0 } on { print $1, $2, $3 }' "$dir/run.csv" >"$dir/txns"
[ -s "$dir/txns" ] || bad "the run stored no transactions"
awk 'NR == FNR { k[NR] = $1; f[NR] = $2; e[NR] = $3; n = NR; next }
     { total++; if ($3 ~ /tqtest_profile/) prog++
       for (i = 1; i <= n; i++) if ($1 >= f[i] && $1 < e[i]) { c[k[i] "," $2]++; break } }
     END { for (x in c) printf "%s,%.3f,%.3f\n", x, 100 * c[x] / total, 100 * c[x] / prog }' "$dir/txns" "$dir/perf.samples" >"$dir/perf.bytxn"

r() { printf '%.2f' "$1"; }
printf '%-22s %8s %8s %8s %10s %10s\n' "share (%)" expected tqmon perf "tqmon all" "perf all"
line() { printf '%-22s %8s %8s %8s %10s %10s\n' "$1" "$2" "$(r "$3")" "$(r "$4")" "$(r "$5")" "$(r "$6")"; }
line "tqtest_hot" 70 "$ohp" "$php" "$oh" "$ph"
line "tqtest_cold" 30 "$ocp" "$pcp" "$oc" "$pc"
within "$ohp" 70 5 || bad "tqtest_hot: $ohp% of the program, expected 70 +- 5"
within "$ocp" 30 5 || bad "tqtest_cold: $ocp% of the program, expected 30 +- 5"
within "$php" 70 5 || bad "perf: tqtest_hot $php% of the program, expected 70 +- 5"
within "$pcp" 30 5 || bad "perf: tqtest_cold $pcp% of the program, expected 30 +- 5"
within "$ohp" "$php" 5 || bad "tqtest_hot of the program: tqmon $ohp%, perf $php%"
within "$ocp" "$pcp" 5 || bad "tqtest_cold of the program: tqmon $ocp%, perf $pcp%"
within "$oh" "$ph" 5 || bad "tqtest_hot of all: tqmon $oh%, perf $ph%"
within "$oc" "$pc" 5 || bad "tqtest_cold of all: tqmon $oc%, perf $pc%"
for kf in "Query tqtest_hot 50" "Query tqtest_cold 10" "Update tqtest_hot 20" "Update tqtest_cold 20"; do
  set -- $kf
  o=$(share "$dir/run.csv" ByTransaction "$1" "$2")
  p=$(awk -F, -v k="$1" -v f="$2" '$1 == k && $2 == f { print $3 "," $4 }' "$dir/perf.bytxn")
  [ -n "$o" ] && [ -n "$p" ] || { bad "$1 $2: no share (tqmon '${o:-}', perf '${p:-}')"; continue; }
  oa=${o%,*} op=${o#*,} pa=${p%,*} pp=${p#*,}
  line "$1 $2" "$3" "$op" "$pp" "$oa" "$pa"
  within "$op" "$3" 5 || bad "$1 $2: $op% of the program, expected $3 +- 5"
  within "$op" "$pp" 5 || bad "$1 $2 of the program: tqmon $op%, perf $pp%"
  within "$oa" "$pa" 5 || bad "$1 $2 of all: tqmon $oa%, perf $pa%"
done

# the pseudo-sections add up to the whole
awk -F, '/^# Sections/ { on = 1; getline; next } /^# / { on = 0 } on { s += $2; p += $3 }
         END { printf "%d %.6f\n", s, p }' "$dir/run.csv" >"$dir/sections"
read -r ssum psum <"$dir/sections"
[ "$ssum" = "$answered" ] || bad "the sections hold $ssum samples, the sampler answered $answered"
within "$psum" 100 0.000001 || bad "the sections' shares add up to $psum"
grep -q '^\.tqtest,' "$dir/run.csv" || bad "no section .tqtest"

# ---------------------------------------------------------------- stripped: module+offset
cat >"$dir/strip.tq" <<'EOF'
range of E is Executing
retrieve into Hot (E.Module, E.Function, N = count(E.Thread by E.Module, E.Function for ever))
valid at now
when not (now precede E)
EOF
$T run tests/strobe/tqtest.tq sensors/cpusample.tq "$dir/strip.tq" --pm cpusample --format csv \
  --exec build/strobe/tqtest_profile_stripped 8 >"$dir/strip.csv" 2>"$dir/strip.err" ||
  bad "the stripped run: exit $?: $(head -5 "$dir/strip.err")"
grep -q "tqtest_hot\|tqtest_cold" "$dir/strip.csv" && bad "the stripped program still gave names: $(grep tqtest_ "$dir/strip.csv")"
# the offsets in the unstripped program's symbols (same code): nm -S, in decimal
nm -S $P | while read -r addr size type name; do
  case $type in T | t) [ -n "$name" ] && echo "$(printf %d "0x$addr") $(($(printf %d "0x$addr") + $(printf %d "0x$size"))) $name" ;; esac
done >"$dir/nm"
awk -F, '/^tqtest_profile_stripped,/ { split($2, a, "+0x"); print a[2], $3 }' "$dir/strip.csv" | while read -r off n; do
  echo "$(printf %d "0x$off") $n"
done >"$dir/offsets"
awk 'NR == FNR { lo[NR] = $1; hi[NR] = $2; nm[NR] = $3; k = NR; next }
     { f = "other"; for (i = 1; i <= k; i++) if ($1 >= lo[i] && $1 < hi[i]) f = nm[i]; n[f] += $2; t += $2 }
     END { for (f in n) print f, n[f], t }' "$dir/nm" "$dir/offsets" >"$dir/strip.map"
hot=$(awk '$1 == "tqtest_hot" { print $2 }' "$dir/strip.map")
cold=$(awk '$1 == "tqtest_cold" { print $2 }' "$dir/strip.map")
total=$(awk '{ print $3; exit }' "$dir/strip.map")
echo "stripped: $(tr '\n' ';' <"$dir/strip.map")"
[ -n "$total" ] && [ "${total:-0}" -gt 0 ] || bad "no module+offset samples of the stripped program: $(head "$dir/strip.csv")"
if [ -n "$total" ] && [ "$total" -gt 0 ]; then
  awk -v h="${hot:-0}" -v c="${cold:-0}" -v t="$total" 'BEGIN { exit !((h + c) * 100 >= 85 * t && h > c) }' ||
    bad "the stripped program's offsets are not mostly in tqtest_hot and tqtest_cold (hot ${hot:-0}, cold ${cold:-0} of $total)"
fi

[ $fails -eq 0 ]
