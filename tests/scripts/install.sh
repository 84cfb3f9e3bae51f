#!/bin/sh
# install.sh - make install (issue 14.11): into a staging directory
# (DESTDIR) with PREFIX=/usr, then, as a user of the installed files would:
# pkg-config gives the flags and cc builds the example client against the
# installed header and library (tqmon.pc), and a program with generated
# sensors against libtqsensor (tqsensor.pc); the installed tqmon runs; man
# shows tqmon(1), libtqmon(3) (every function tqmon.h declares) and
# tqmon-language(7); the completion loads.
set -u
OUT=${OUT:-build/test-out}
dir=$(pwd)/$OUT/install
rm -rf "$dir" && mkdir -p "$dir"
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
command -v pkg-config >/dev/null 2>&1 || { echo "skipped: pkg-config is missing (tests/deps.sh test installs it)"; exit 77; }
root=$dir/root
make -s install DESTDIR="$root" PREFIX=/usr >"$dir/make.log" 2>&1 || { echo "FAIL: make install: $(tail -5 "$dir/make.log")"; exit 1; }
for f in bin/tqmon lib/libtqmon.a lib/libtqsensor.a include/tqmon.h include/tqmon_pm.h include/tqsensor.h \
  lib/pkgconfig/tqmon.pc lib/pkgconfig/tqsensor.pc share/man/man1/tqmon.1 share/man/man3/libtqmon.3 \
  share/man/man7/tqmon-language.7 share/tqmon/sensors/host.tq share/bash-completion/completions/tqmon; do
  [ -s "$root/usr/$f" ] || bad "not installed: /usr/$f"
done
"$root/usr/bin/tqmon" --version | grep -q '^tqmon ' || bad "the installed tqmon does not run"
# pkg-config as for a package built in a staging root
export PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs tqmon) || bad "pkg-config tqmon: $flags"
[ "$(pkg-config --modversion tqmon)" = "$("$root/usr/bin/tqmon" --version | cut -d' ' -f2)" ] || bad "tqmon.pc's version is not tqmon's"
# shellcheck disable=SC2086
cc -o "$dir/client" examples/client/client.c $flags 2>"$dir/cc.err" || bad "cc client: $(head -5 "$dir/cc.err")"
if [ -x "$dir/client" ]; then
  "$dir/client" examples/paper/paper.trace examples/paper/paper.tq examples/client/queries.tq >"$dir/client.out" 2>"$dir/client.err" ||
    bad "the client: exit $?: $(head -3 "$dir/client.err")"
  diff -q "$dir/client.out" examples/client/expected.out >/dev/null || bad "the client built against the installed library: $(diff examples/client/expected.out "$dir/client.out" | head -5)"
fi
# a program with generated sensors
"$root/usr/bin/tqmon" sensors gen examples/mailbox/monitor.tq -o "$dir/sensors.h" 2>"$dir/gen.err" || bad "sensors gen: $(cat "$dir/gen.err")"
# shellcheck disable=SC2046
cc -o "$dir/mailbox" -I"$dir" examples/mailbox/mailbox.c $(pkg-config --cflags --libs tqsensor) 2>"$dir/mb.err" ||
  bad "cc a program with generated sensors: $(head -5 "$dir/mb.err")"
# man pages
if command -v man >/dev/null 2>&1; then
  for p in man1/tqmon.1 man3/libtqmon.3 man7/tqmon-language.7; do
    MANWIDTH=80 man -l "$root/usr/share/man/$p" >"$dir/$(basename $p).txt" 2>"$dir/man.err" || bad "man $p: $(cat "$dir/man.err")"
  done
  grep -q -- "--exec-output" "$dir/tqmon.1.txt" || bad "tqmon(1) lacks the options"
  # every function the installed header declares is in libtqmon(3)
  fns=$(grep -o '^[a-z][a-z_ *]*\btq_[a-z_]*(' "$root/usr/include/tqmon.h" | sed 's/.*\(tq_[a-z_]*\)($/\1/' | sort -u)
  [ "$(echo "$fns" | wc -l)" -ge 20 ] || bad "found only $(echo "$fns" | wc -l) functions in tqmon.h: $fns"
  for fn in $fns; do
    grep -q "\b$fn(" "$dir/libtqmon.3.txt" || bad "libtqmon(3) lacks $fn, which tqmon.h declares"
  done
  grep -q "retrieve" "$dir/tqmon-language.7.txt" || bad "tqmon-language(7) lacks the language"
fi
bash -c ". '$root/usr/share/bash-completion/completions/tqmon' && complete -p tqmon" >/dev/null 2>&1 || bad "the completion does not load"
[ $fails -eq 0 ] || exit 1
echo "ok: make install; pkg-config and cc build the client and a sensor program; man pages; completion"
