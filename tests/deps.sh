#!/bin/sh
# deps.sh - install the Debian packages tqmon needs, only when missing.
#   sh tests/deps.sh build    lemon, flex, libsqlite3-dev, libpcp3-dev and
#                             libpcp-import1-dev (the PCP client and archive
#                             writing libraries: sensors/pcp.c),
#                             libpcp-pmda3-dev (the agent pmdatqmon) and a C
#                             compiler;
#                             for the kernel sensors clang, bpftool and
#                             libbpf-dev (with libelf-dev and zlib1g-dev);
#                             for the CPU sampler's symbols libdw-dev (elfutils)
#   sh tests/deps.sh test     the above plus what the tests use: the sqlite3
#                             CLI, ps (procps: the host sensor tests), pcp
#                             (pmcd, pminfo, pmlogger, PMDAs: the PCP tests
#                             start pmcd processes of their own), perf
#                             (linux-perf: the independent check of the CPU
#                             sampler) and strip/nm (binutils), bpftrace
#                             and setpriv (util-linux: the kernel sensor
#                             tests' independent observation, and their
#                             run without privilege), clang
#                             for the libFuzzer target, and for the
#                             browser test of the display page Debian's
#                             chromium and playwright-core from the npm
#                             registry (into tests/browser/node_modules); those
#                             two are best effort: without them that test is
#                             skipped with the reason
#   sh tests/deps.sh man      go-md2man and pkg-config (make install: the
#                             man pages from the docs; in the test set too)
#   sh tests/deps.sh bench    the build set plus LTTng-UST (the sensor
#                             benchmark's peer) and lttng-tools, bpftrace
#                             (the kernel sensors' peer), and
#                             DuckDB (the column-store peer of the queries:
#                             @duckdb/node-api from the npm registry into
#                             bench/duckdb/node_modules, with Debian's
#                             nodejs and npm); without DuckDB make bench
#                             says it was not measured
# Uses apt-get directly as root, through sudo otherwise.
set -e
need=""
command -v lemon >/dev/null 2>&1 || need="$need lemon"
command -v flex >/dev/null 2>&1 || need="$need flex"
[ -f /usr/include/sqlite3.h ] || need="$need libsqlite3-dev"
[ -f /usr/include/pcp/pmapi.h ] || need="$need libpcp3-dev"
[ -f /usr/include/pcp/import.h ] || need="$need libpcp-import1-dev"
# the tqmon PCP agent (sensors/pmdatqmon.c) is a PMDA: libpcp_pmda
[ -f /usr/include/pcp/pmda.h ] || need="$need libpcp-pmda3-dev"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
# the kernel sensors: BPF objects built with clang, skeletons with bpftool
command -v clang >/dev/null 2>&1 || need="$need clang"
command -v bpftool >/dev/null 2>&1 || need="$need bpftool"
[ -f /usr/include/bpf/libbpf.h ] || need="$need libbpf-dev"
[ -f /usr/include/libelf.h ] || need="$need libelf-dev"
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
[ -f /usr/include/elfutils/libdwfl.h ] || need="$need libdw-dev"
if [ "$1" = test ]; then
  command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
  command -v clang >/dev/null 2>&1 || need="$need clang"
  # libFuzzer's runtime is only recommended by clang (installs run without recommends)
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need="$need libclang-rt-dev"
  { command -v pkill && command -v ps; } >/dev/null 2>&1 || need="$need procps"
  { [ -r /etc/pcp.conf ] && command -v pminfo && command -v pmlogger; } >/dev/null 2>&1 || need="$need pcp"
  # pmrep (pcp_record.sh reads a recording with it) is python: its pcp module
  /usr/bin/python3 -c "import pcp.pmapi" >/dev/null 2>&1 || need="$need python3-pcp"
  # a pmcd with its clock off (pcp_offset.sh)
  ls /usr/lib/*/faketime/libfaketimeMT.so.1 >/dev/null 2>&1 || need="$need libfaketime"
  command -v perf >/dev/null 2>&1 || need="$need linux-perf"
  { command -v strip && command -v nm; } >/dev/null 2>&1 || need="$need binutils"
  # the kernel sensor tests: bpftrace is the independent observation
  command -v bpftrace >/dev/null 2>&1 || need="$need bpftrace"
  command -v setpriv >/dev/null 2>&1 || need="$need util-linux"
fi
# make install's man pages (go-md2man); the install test also uses pkg-config
if [ "$1" = test ] || [ "$1" = man ]; then
  command -v go-md2man >/dev/null 2>&1 || need="$need go-md2man"
  command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
fi
if [ "$1" = bench ]; then
  command -v sqlite3 >/dev/null 2>&1 || need="$need sqlite3"
  pkg-config --exists lttng-ust 2>/dev/null || need="$need liblttng-ust-dev pkg-config"
  command -v lttng >/dev/null 2>&1 || need="$need lttng-tools"
  command -v bpftrace >/dev/null 2>&1 || need="$need bpftrace" # the kernel sensors' peer
fi
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# pcp's post-install script needs systemd and fails without it (a container,
# CI): its files are unpacked and work, but dpkg keeps it unconfigured and
# every later apt-get run ends in an error.  So an install is judged by
# what it installed (missing() below), not by apt-get's exit status.
missing() {
  m=""
  for p in "$@"; do
    case $p in
      lemon|flex|sqlite3|clang|make) command -v $p >/dev/null 2>&1 || m="$m $p" ;;
      libsqlite3-dev) [ -f /usr/include/sqlite3.h ] || m="$m $p" ;;
      libpcp3-dev) [ -f /usr/include/pcp/pmapi.h ] || m="$m $p" ;;
      libpcp-import1-dev) [ -f /usr/include/pcp/import.h ] || m="$m $p" ;;
      python3-pcp) /usr/bin/python3 -c "import pcp.pmapi" >/dev/null 2>&1 || m="$m $p" ;;
      libfaketime) ls /usr/lib/*/faketime/libfaketimeMT.so.1 >/dev/null 2>&1 || m="$m $p" ;;
      pcp) { [ -r /etc/pcp.conf ] && command -v pminfo && command -v pmlogger; } >/dev/null 2>&1 || m="$m $p" ;;
      procps) command -v ps >/dev/null 2>&1 || m="$m $p" ;;
      gcc) command -v cc >/dev/null 2>&1 || m="$m $p" ;;
      *) dpkg -s "$p" 2>/dev/null | grep -q '^Status: .* \(installed\|unpacked\|half-configured\)' || m="$m $p" ;;
    esac
  done
  echo "$m"
}
aptInstall() {
  $SUDO apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 && return 0
  [ -z "$(missing "$@")" ] && return 0
  $SUDO apt-get update >/dev/null 2>&1 || true
  $SUDO apt-get install -y --no-install-recommends "$@" || true
  left=$(missing "$@")
  [ -z "$left" ] || { echo "deps: could not install:$left"; return 1; }
}
if [ -n "$need" ]; then
  echo "deps: installing missing Debian packages:$need"
  aptInstall $need
fi
if [ "$1" = bench ]; then
  # DuckDB: best effort (make bench reports it as not measured without it)
  set +e
  node=""
  command -v node >/dev/null 2>&1 || node="$node nodejs"
  command -v npm >/dev/null 2>&1 || node="$node npm"
  if [ -n "$node" ]; then
    echo "deps: installing Debian packages for the DuckDB peer:$node"
    aptInstall $node || echo "deps: could not install$node: DuckDB will not be measured"
  fi
  dir=$(dirname "$0")/../bench/duckdb
  if command -v npm >/dev/null 2>&1 && [ ! -d "$dir/node_modules/@duckdb/node-api" ]; then
    echo "deps: installing @duckdb/node-api (npm registry) into $dir/node_modules"
    (cd "$dir" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
      echo "deps: could not install @duckdb/node-api: DuckDB will not be measured"
  fi
  exit 0
fi
[ "$1" = test ] || exit 0

# the browser test (tests/scripts/browser.sh): best effort
set +e
browser=""
command -v chromium >/dev/null 2>&1 || browser="$browser chromium"
command -v node >/dev/null 2>&1 || browser="$browser nodejs"
command -v npm >/dev/null 2>&1 || browser="$browser npm"
if [ -n "$browser" ]; then
  echo "deps: installing Debian packages for the browser test:$browser"
  aptInstall $browser || echo "deps: could not install$browser: the browser test will be skipped"
fi
dir=$(dirname "$0")/browser
if command -v npm >/dev/null 2>&1 && [ ! -d "$dir/node_modules/playwright-core" ]; then
  echo "deps: installing playwright-core (npm registry) into $dir/node_modules"
  (cd "$dir" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    echo "deps: could not install playwright-core: the browser test will be skipped"
fi
exit 0
