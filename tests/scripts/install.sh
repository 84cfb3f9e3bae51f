#!/bin/sh
# install.sh - make install (issue 14.11): into a staging directory
# (DESTDIR) with PREFIX=/usr, then, as a user of the installed files would:
# pkg-config gives the flags and cc builds the example client against the
# installed header and library (tqmon.pc), and a program with generated
# sensors against libtqsensor (tqsensor.pc); the installed tqmon runs; man
# shows tqmon(1), libtqmon(3) (every function tqmon.h declares) and
# tqmon-language(7); the completion loads;
# the PCP agent pmdatqmon is in /usr/libexec/pcp/pmdas/tqmon with its
# Install and Remove scripts (pmdaproc.sh's), namespace and help, and
# served by a pmcd of the test's own, with its help (never the machine's
# pmcd: Install is not run).
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
# the PCP agent, installed the PCP way: its directory holds the program,
# Install and Remove (pmdaproc.sh's), domain.h, pmns, root and help
pd="$root/usr/libexec/pcp/pmdas/tqmon"
for f in pmdatqmon Install Remove; do [ -x "$pd/$f" ] || bad "not installed, or not executable: /usr/libexec/pcp/pmdas/tqmon/$f"; done
for f in domain.h pmns root help; do [ -s "$pd/$f" ] || bad "not installed: /usr/libexec/pcp/pmdas/tqmon/$f"; done
for f in Install Remove; do
  sh -n "$pd/$f" 2>"$dir/sh.err" || bad "$f: $(cat "$dir/sh.err")"
  grep -q '^\. \$PCP_SHARE_DIR/lib/pmdaproc.sh$' "$pd/$f" && grep -q '^iam=tqmon$' "$pd/$f" || bad "$f is not a pmdaproc.sh script for tqmon"
done
grep -q '^pmdaInstall$' "$pd/Install" && grep -q '^pmdaRemove$' "$pd/Remove" || bad "Install or Remove does not install or remove"
if [ -r /etc/pcp.conf ] && [ -x "$(. /etc/pcp.conf; echo "$PCP_BINADM_DIR")/newhelp" ]; then
  # what Install does with them (never run here: it changes this machine's
  # pmcd), done by hand in a copy: the namespace checked against its root,
  # the help compiled with the domain's number; then the installed agent
  # under a pmcd of this test's own serves every metric with its help
  . tests/pcp/lib.sh
  binadm=$(. /etc/pcp.conf; echo "$PCP_BINADM_DIR")
  cp -r "$pd" "$dir/pmda"
  dom=$(sed -n 's/^#define TQMON //p' "$dir/pmda/domain.h")
  [ "$dom" = 212 ] || bad "domain.h: TQMON is '$dom', not 212"
  (cd "$dir/pmda" && pminfo -n root tqmon) >"$dir/pmns.out" 2>&1 || bad "the installed namespace: $(cat "$dir/pmns.out")"
  [ "$(grep -c '^tqmon\.' "$dir/pmns.out")" -eq 24 ] || bad "the installed namespace has not the 24 metrics: $(cat "$dir/pmns.out")"
  (cd "$dir/pmda" && sed -e "/^@ TQMON\./s/TQMON\./$dom./" <help | "$binadm/newhelp" -n root -o help) >"$dir/newhelp.out" 2>&1 ||
    bad "newhelp on the installed help: $(cat "$dir/newhelp.out")"
  { printf 'root {\n    tqmon\n}\n'; sed "s/TQMON:/$dom:/" "$dir/pmda/pmns"; } >"$dir/tqmon.pmns"
  PCP_EXTRA_PMNS="$dir/tqmon.pmns"
  PCP_EXTRA_AGENTS="tqmon	$dom	pipe	binary	$dir/pmda/pmdatqmon -d $dom -c none -l $dir/tqmon.log"
  trap 'pcpStopAll' EXIT
  pcpSetup
  if pcpStart i1; then
    pminfo -h "127.0.0.1:$PORT_i1" -tT tqmon >"$dir/help.out" 2>&1 || bad "pminfo at the installed agent: $(head -3 "$dir/help.out")"
    [ "$(grep -c '^tqmon\.' "$dir/help.out")" -eq 24 ] || bad "the installed agent: not 24 metrics: $(head -5 "$dir/help.out")"
    grep -q '^tqmon.records \[the event records of a relation queued for the calling client\]' "$dir/help.out" ||
      bad "the installed agent gives no help text (help beside its program): $(head -5 "$dir/help.out")"
    grep -q 'No help text file' "$dir/tqmon.log" && bad "the installed agent found no help: $(cat "$dir/tqmon.log")"
  else
    bad "a pmcd with the installed agent did not start"
  fi
fi
[ $fails -eq 0 ] || exit 1
echo "ok: make install; pkg-config and cc build the client and a sensor program; man pages; completion; the PCP agent"
