#!/bin/sh
# deps.sh - install the Debian packages tqmon needs, only when missing.
#   sh tests/deps.sh build    lemon, flex, libsqlite3-dev (and a C compiler)
#   sh tests/deps.sh test     the above plus what the tests use (sqlite3 CLI,
#                             clang for the libFuzzer target)
#   sh tests/deps.sh bench    the build set plus LTTng-UST (the sensor
#                             benchmark's peer) and lttng-tools
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
  command -v clang >/dev/null 2>&1 || need="$need clang"
  command -v pkill >/dev/null 2>&1 || need="$need procps"
fi
if [ "$1" = bench ]; then
  command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
  pkg-config --exists lttng-ust 2>/dev/null || need="$need liblttng-ust-dev pkg-config"
  command -v lttng >/dev/null 2>&1 || need="$need lttng-tools"
fi
[ -z "$need" ] && exit 0
echo "deps: installing missing Debian packages:$need"
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends $need >/dev/null 2>&1 || {
  $SUDO apt-get update >/dev/null 2>&1 || true
  $SUDO apt-get install -y --no-install-recommends $need
}
