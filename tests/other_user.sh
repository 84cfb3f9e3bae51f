# other_user.sh - sourced by the scenario scripts that run a part as another
# user (uid 65534, or users they create): can that user reach what the part
# needs?  A checkout, or OUT, under a directory only its owner may enter
# (mode 0700, as mktemp -d makes them) is not reachable by another user;
# the part is then skipped with the reason (the script ends with exit 77
# and the reason on its last line), never failed nor waited for.
#
# reachable AS [-x] EXE... [-r FILE...] [-w DIR...]: 0 when the command
# prefix AS ("setpriv --reuid=..."; "" is this user) may execute each EXE
# (search each directory), read each FILE and create a file in each DIR.
# Else 1, with the first one it may not in $unreachable ("uid N cannot read
# FILE: ..."), also printed.
reachable() {
  _as=$1
  shift
  _mode=-x
  for _f; do
    case $_f in -r | -w | -x) _mode=$_f && continue ;; esac
    case $_mode in
    -x) $_as test -x "$_f" 2>/dev/null && _how=0 || _how="execute (or search)" ;;
    -r) $_as cat "$_f" >/dev/null 2>&1 && _how=0 || _how="read" ;;
    -w) $_as sh -c ': >"$1/.reachable.$$" && rm -f "$1/.reachable.$$"' sh "$_f" 2>/dev/null && _how=0 || _how="write in" ;;
    esac
    [ "$_how" = 0 ] && continue
    unreachable="uid $($_as id -u) cannot $_how $_f (a directory above it is closed to other users, as a 0700 one is): the part run as that user is skipped"
    echo "skipped: $unreachable"
    return 1
  done
  return 0
}
