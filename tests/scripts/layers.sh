#!/bin/sh
# layers.sh - the layer check.  docs/design.md names the order of the source
# folders on its line "layers: A < B < C, D < ...": a folder may include and
# call only the folders before it; folders named together (C, D) are
# siblings and use neither each other.  The check fails on
#   1. a #include of a file in a layer folder that names a file of a later
#      or sibling folder, or another folder's private header (xxxInt.h).
#      Quoted names are resolved as the compiler does: the including file's
#      folder, then the Makefile's -I folders in their order (build/gen
#      holds what lemon and flex make from grammar/);
#   2. an object of build/obj that uses a symbol an object of a later or
#      sibling folder defines (nm: U against a definition);
#   3. a cycle between folders in either graph, whatever the order says
#      (so that no reordering of the line can hide one);
#   4. a source file of a layer folder, or a page of docs/, that cites a
#      design document outside the repository (../shared/..., DESIGN.md):
#      docs/design.md is the design.
# Every violation is printed, with the file or the symbols.
#
# usage: layers.sh [ROOT [OBJDIR]]
#   ROOT    the tree to check (default .)
#   OBJDIR  the objects (default ROOT/build/obj); "-" checks the includes
#           only.  An object whose source is gone (a stale one) is skipped.
# Exit 0 when the layers hold, 1 when not, 2 on bad usage.
set -u
ROOT=${1:-.}
OBJ=${2:-$ROOT/build/obj}
W=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
export LC_ALL=C

# ---------------------------------------------------------------- the order
order=$(sed -n 's/^layers: *//p' "$ROOT/docs/design.md" 2>/dev/null | head -n 1)
if [ -z "$order" ]; then
  echo "layers: no line 'layers: A < B < ...' in $ROOT/docs/design.md"
  exit 2
fi
# "folder level" per line; siblings share a level
echo "$order" | awk -F'<' '{
  for (i = 1; i <= NF; i++) { n = split($i, f, /[ ,]+/); for (k = 1; k <= n; k++) if (f[k] != "") print f[k], i }
}' >"$W/levels"
folders=$(awk '{print $1}' "$W/levels")
for f in $folders; do
  [ -d "$ROOT/$f" ] || { echo "layers: docs/design.md names $f, which is not a folder of $ROOT"; exit 2; }
done

# the -I folders of the Makefile, in order ($(GEN) is build/gen)
incdirs=$(sed -n 's/^INC *:= *//p' "$ROOT/Makefile" | tr ' ' '\n' | sed -n 's/^-I//p')
[ -n "$incdirs" ] || { echo "layers: no INC line in $ROOT/Makefile"; exit 2; }

# ---------------------------------------------------------------- 1. includes
# Edges "from-folder to-folder file included" into $W/inc.
: >"$W/inc"
: >"$W/unresolved"
# the folder of a generated file of build/gen, by the source it is made from
genFolder() {
  case $1 in
    tq.h | tq.c | lex.c) echo grammar ;; # lemon and flex, from grammar/tq.y and tq.l
    page.c) echo display ;;              # from display/page.html
    flame.c) echo app ;;                 # from app/flame.html (tqmon report's page)
    session.c) echo app ;;               # from app/session.html (tqmon daemon's live page)
    ks.skel.h | ks_syscalls.h | vmlinux.h) echo sensors ;; # the kernel sensors (sensors/kernel/, the kernel's BTF and headers)
    *) echo "" ;;
  esac
}
for f in $folders; do
  find "$ROOT/$f" -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.l' \) | sort >"$W/files"
  while read -r file; do
    rel=${file#"$ROOT"/}
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" >"$W/names"
    while read -r name; do
      to=""
      case $name in
        */*)
          # a path from the including file's folder: normalise it
          p=$(printf '%s/%s\n' "$(dirname "$rel")" "$name" | awk -F/ '{
            n = 0
            for (i = 1; i <= NF; i++) {
              if ($i == "" || $i == ".") continue
              if ($i == "..") { if (n > 0) n--; else { print ""; exit } continue }
              c[++n] = $i
            }
            s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? "/" : "") c[i]; print s
          }')
          [ -n "$p" ] && [ -f "$ROOT/$p" ] && to=${p%%/*}
          [ "$to" = "$p" ] && to="" # a file at the top of the tree: no folder
          ;;
        *)
          if [ -f "$(dirname "$file")/$name" ]; then
            to=${rel%%/*}
          else
            for d in $incdirs; do
              if [ "$d" = '$(GEN)' ]; then
                to=$(genFolder "$name")
              elif [ -f "$ROOT/$d/$name" ]; then
                to=${d%%/*}
              fi
              [ -n "$to" ] && break
            done
          fi
          ;;
      esac
      if [ -z "$to" ]; then
        echo "$rel includes \"$name\", which is in no folder of the tree" >>"$W/unresolved"
      else
        echo "${rel%%/*} $to $rel $name" >>"$W/inc"
      fi
    done <"$W/names"
  done <"$W/files"
done

if [ ! -s "$W/inc" ]; then
  echo "layers: no #include in the folders of $ROOT: not a tqmon tree?"
  exit 2
fi

# ---------------------------------------------------------------- 2. symbols
# Edges "from-folder to-folder object symbol" into $W/sym.
: >"$W/sym"
if [ "$OBJ" != "-" ]; then
  if [ ! -d "$OBJ" ]; then
    echo "layers: no objects in $OBJ (build first, or give - to check the includes only)"
    exit 2
  fi
  : >"$W/nm"
  (cd "$OBJ" && find . -name '*.o' | sed 's|^\./||' | sort) >"$W/objs"
  while read -r o; do
    top=${o%%/*}
    if [ "$top" = gen ]; then
      base=$(basename "$o" .o)
      folder=$(genFolder "$base.c")
      [ -n "$folder" ] || { echo "layers: $OBJ/$o is generated from a source layers.sh does not know: name its folder in genFolder"; exit 1; }
    else
      folder=$top
      [ -f "$ROOT/${o%.o}.c" ] || continue # stale: its source is gone
    fi
    nm -g --defined-only "$OBJ/$o" | awk -v f="$folder" -v o="$o" 'NF >= 3 {print "D", $3, f, o}' >>"$W/nm"
    nm -u "$OBJ/$o" | awk -v f="$folder" -v o="$o" '{print "U", $NF, f, o}' >>"$W/nm"
  done <"$W/objs"
  awk '$1 == "D" { def[$2] = $3 } $1 == "U" { u[++n] = $2; uf[n] = $3; uo[n] = $4 }
    END { for (i = 1; i <= n; i++) if ((u[i] in def) && def[u[i]] != uf[i]) print uf[i], def[u[i]], uo[i], u[i] }' \
    "$W/nm" | sort -u >"$W/sym"
  if [ ! -s "$W/nm" ]; then
    echo "layers: no object of the tree's sources in $OBJ (build first, or give - to check the includes only)"
    exit 2
  fi
fi

# ---------------------------------------------------------------- verdicts
bad=0
if [ -s "$W/unresolved" ]; then
  cat "$W/unresolved"
  bad=1
fi
# edges against the order: a later or sibling folder, a folder the order
# does not name, another folder's private header
check() { # edges-file kind
  awk -v kind="$2" 'FILENAME == ARGV[1] { lv[$1] = $2; next }
    $1 == $2 {
      next
    }
    {
      why = ""
      if (!($1 in lv)) why = $1 " is in no layer of docs/design.md"
      else if (!($2 in lv)) why = $2 " is in no layer of docs/design.md"
      else if (lv[$2] > lv[$1]) why = $2 " is above " $1
      else if (lv[$2] == lv[$1]) why = $2 " and " $1 " are siblings"
      if (why != "") print kind ": " $3 " -> " $2 " (" $4 "): " why
    }' "$W/levels" "$1"
}
check "$W/inc" include >"$W/up"
awk '$4 ~ /Int\.h$/ && $1 != $2 {print "include: " $3 " -> " $2 " (" $4 "): a private header of " $2}' "$W/inc" >>"$W/up"
check "$W/sym" symbol >>"$W/up"
if [ -s "$W/up" ]; then
  sort -u "$W/up"
  bad=1
fi
# cycles: an edge a -> b lies on a cycle when b reaches a (the closure of
# the folder graph, Floyd-Warshall: a dozen folders)
cycles() { # edges-file kind
  awk -v kind="$2" '$1 != $2 {
      k = $1 SUBSEP $2
      if (!((k, $4) in seen)) { seen[k, $4]; e[k] = e[k] (e[k] == "" ? "" : ", ") $4 }
      r[$1, $2] = 1; node[$1]; node[$2]
    }
    END {
      for (m in node) for (a in node) if ((a, m) in r) for (b in node) if ((m, b) in r) r[a, b] = 1
      for (k in e) { split(k, p, SUBSEP); if ((p[2], p[1]) in r) print kind " cycle: " p[1] " -> " p[2] " (" e[k] ")" }
    }' "$1" | sort
}
cycles "$W/inc" include >"$W/cyc"
cycles "$W/sym" symbol >>"$W/cyc"
if [ -s "$W/cyc" ]; then
  cat "$W/cyc"
  bad=1
fi
# design documents outside the repository
for f in $folders docs; do
  [ -d "$ROOT/$f" ] || continue
  grep -rIn -e '\.\./shared/' -e 'DESIGN\.md' "$ROOT/$f" 2>/dev/null | sed "s|^$ROOT/||"
done >"$W/cite"
if [ -s "$W/cite" ]; then
  sed 's/^/outside design document: /' "$W/cite"
  bad=1
fi
if [ $bad -ne 0 ]; then
  echo "layers: the order is $order (docs/design.md)"
  exit 1
fi
echo "layers hold: $order ($(wc -l <"$W/inc") includes, $(wc -l <"$W/sym") symbol uses across folders)"
exit 0
