#!/bin/sh
# deps_headers.sh - every system header the build includes, and every
# library it links, comes from a package that `tests/deps.sh build` installs
# (a fresh machine's CI failed at pmdatqmon: it includes <pcp/pmda.h>, and
# deps.sh did not install libpcp-pmda3-dev).  The headers are the
# #include <...> lines of the C sources, the grammar's lemon and flex files,
# the BPF program and the PCP agent (base grammar compiler algebra runtime
# sensors display app include); the libraries the -l flags of the
# Makefile's LIBS and PMDALIBS.  Each is found where the compiler finds it
# and its package asked of dpkg -S on this machine.  The C library's and the
# kernel's headers come with libc6-dev (linux-libc-dev is its dependency),
# and the compiler's own (x86intrin.h, stddef.h: under cc -print-file-name=include)
# with the compiler; deps.sh installs both.  DEPS=FILE checks another
# deps.sh (to see this test fail).  Exits 77 (skipped) without dpkg.
set -u
OUT=${OUT:-build/test-out}
DEPS=${DEPS:-tests/deps.sh}
dir=$OUT/deps_headers
rm -rf "$dir" && mkdir -p "$dir"
command -v dpkg > /dev/null 2>&1 || { echo "skipped: no dpkg (not a Debian system): the packages cannot be checked"; exit 77; }
CC=${CC:-cc}
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# the packages of deps.sh's build set: the words of its need="$need ..."
# lines before the test set
sed -n '1,/^if \[ "\$1" = test \]/p' "$DEPS" | grep -o 'need="\$need [^"]*"' | sed 's/^need="\$need //; s/"$//' |
  tr ' ' '\n' | sed '/^$/d' | sort -u > "$dir/packages"
grep -qx libc6-dev "$dir/packages" && echo linux-libc-dev >> "$dir/packages" # (libc6-dev's dependency)
[ -s "$dir/packages" ] || bad "no package found in $DEPS"
own=$($CC -print-file-name=include)

# the headers: "<NAME> PATH", where the compiler finds it
grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<[^>]+>' --include='*.c' --include='*.h' --include='*.y' \
  --include='*.l' base grammar compiler algebra runtime sensors display app include |
  sed -E 's/.*<([^>]+)>.*/\1/' | sort -u > "$dir/headers"
: > "$dir/found"
while read -r h; do
  path=$(printf '#include <%s>\n' "$h" | $CC -D_GNU_SOURCE -E -H -x c - 2>&1 > /dev/null | sed -n '1s/^\. //p')
  case $path in
    "$own"/*) echo "<$h> $path" >> "$dir/own" ;; # (the compiler's own)
    /*) echo "<$h> $(realpath -s "$path")" >> "$dir/found" ;;
    *) bad "<$h> is not found by $CC" ;;
  esac
done < "$dir/headers"
# the libraries: "-lNAME PATH"
grep -E '^(LIBS|PMDALIBS)[[:space:]]*[:+]?=' Makefile | grep -oE -- '-l[A-Za-z0-9_]+' | sed 's/^-l//' | sort -u > "$dir/libs"
while read -r l; do
  path=""
  for f in "lib$l.so" "lib$l.a"; do
    p=$($CC -print-file-name="$f")
    [ "$p" != "$f" ] && { path=$(realpath -s "$p"); break; }
  done
  if [ -n "$path" ]; then echo "-l$l $path" >> "$dir/found"; else bad "-l$l: $CC finds neither lib$l.so nor lib$l.a"; fi
done < "$dir/libs"

# their packages, asked of dpkg at once (a path under /usr/lib also as
# /lib: a merged /usr may have it installed there), "PATH PACKAGE" a line
cut -d' ' -f2 "$dir/found" | sed 'p; s#^/usr/lib/#/lib/#' | sort -u | xargs dpkg -S 2> /dev/null |
  awk -F': ' '{ n = split($1, p, ", "); for (i = 1; i <= n; i++) { sub(/:.*/, "", p[i]); print $2, p[i] } }' > "$dir/owners"
awk -v pk="$dir/packages" -v ow="$dir/owners" -v deps="$DEPS" '
  BEGIN { while ((getline l < pk) > 0) ok[l] = 1
          while ((getline l < ow) > 0) { split(l, a, " "); own[a[1]] = own[a[1]] " " a[2]; if (ok[a[2]]) good[a[1]] = 1 } }
  { alt = $2; sub(/^\/usr\/lib\//, "/lib/", alt)
    if (good[$2] || good[alt]) next
    who = own[$2] (alt != $2 ? own[alt] : "")
    if (who == "") print "FAIL: " $1 " (" $2 ") belongs to no Debian package"
    else print "FAIL: " $1 " (" $2 ") comes from" who ", which " deps " does not install" }' "$dir/found" > "$dir/fails"
cat "$dir/fails"
fails=$((fails + $(wc -l < "$dir/fails")))
n=$(($(wc -l < "$dir/found") + $(cat "$dir/own" 2> /dev/null | wc -l)))
[ $n -ge 40 ] || bad "only $n headers and libraries checked"
[ $fails -eq 0 ] || exit 1
echo "ok: $n headers and libraries, each from a package $DEPS installs"
