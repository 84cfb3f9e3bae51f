#!/bin/sh
# show_readonly.sh - `tqmon show` only reads a store (issue 15.11): a store
# in SQLite's default rollback journal stays in it (no switch to WAL for
# good), a store the user may only read (mode 0444, in a directory it may
# not write) is shown, and the file is not modified.
set -u
T=${T:-build/asan/tqmon}
OUT=${OUT:-build/test-out}
dir=$OUT/show_readonly
rm -rf "$dir" && mkdir -p "$dir/ro"
db=$dir/ro/s.db
sqlite3 "$db" "CREATE TABLE R (X TEXT, valid_at INTEGER); INSERT INTO R VALUES ('a', 5);" || exit 1
sum=$(cksum <"$db")
printf '# R\nX,valid_at\na,5\n' >"$dir/want"
$T show --db "$db" R >"$dir/got" 2>"$dir/err" || { echo "FAIL: show: exit $?: $(cat "$dir/err")"; exit 1; }
diff -u "$dir/want" "$dir/got" || exit 1
m=$(sqlite3 "$db" 'pragma journal_mode')
[ "$m" = delete ] || { echo "FAIL: show switched the store's journal to $m"; exit 1; }
[ "$(cksum <"$db")" = "$sum" ] || { echo "FAIL: show modified the store"; exit 1; }
# read-only file in a read-only directory (root may write anyway: then the
# check of the mode says nothing, but show must still only read)
chmod 0444 "$db" && chmod 0555 "$dir/ro"
$T show --db "$db" R >"$dir/got2" 2>"$dir/err2"
rc=$?
chmod 0755 "$dir/ro"
[ $rc -eq 0 ] || { echo "FAIL: show of a read-only store: exit $rc: $(cat "$dir/err2")"; exit 1; }
diff -u "$dir/want" "$dir/got2" || exit 1
[ -e "$db-wal" ] && { echo "FAIL: show left a WAL file"; exit 1; }
echo "ok: show reads a store without changing it"
