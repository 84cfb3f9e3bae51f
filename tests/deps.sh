#!/bin/sh
# deps.sh - install the Debian packages tqmon needs, only when missing.
#   sh tests/deps.sh build    lemon, flex, libsqlite3-dev (and a C compiler)
#   sh tests/deps.sh test     the above plus what the tests use (sqlite3 CLI;
#                             ps, the reference of the host sensor tests)
# Uses apt-get directly as root, through sudo otherwise.
set -e
need=""
command -v lemon >/dev/null 2>&1 || need="$need lemon"
command -v flex >/dev/null 2>&1 || need="$need flex"
[ -f /usr/include/sqlite3.h ] || need="$need libsqlite3-dev"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
if [ "$1" = test ]; then
  command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
  command -v ps >/dev/null 2>&1 || need="$need procps"
fi
[ -z "$need" ] && exit 0
echo "deps: installing missing Debian packages:$need"
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends $need >/dev/null 2>&1 || {
  $SUDO apt-get update >/dev/null 2>&1 || true
  $SUDO apt-get install -y --no-install-recommends $need
}
