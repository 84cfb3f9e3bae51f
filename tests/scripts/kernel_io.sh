#!/bin/sh
# kernel_io.sh - BlockIo, Send and Receive on deterministic workloads: N
# direct (O_DIRECT) writes then N direct reads of 4 KiB blocks of a file in
# the build folder (one request each, issued by the workload's thread), and
# N messages of B bytes over a Unix socket pair.  Checked against bpftrace
# on the same tracepoints in the same run, and against the workload: the
# sockets are the pair's inodes, every request is 4 KiB.
set -u
. tests/kernel/lib.sh
kcheck
d=$OUT/kernel_io
rm -rf "$d" && mkdir -p "$d"
N=16 M=20 BYTES=100
kstart "$d" blockio "$d" $N || exit 1
kstart "$d" sockets $M $BYTES || exit 1
until="$io+$sockets"
sed -e "s/\"IO\"/\"$io\"/g" -e "s/\"SOCK\"/\"$sockets\"/g" tests/kernel/io.tq >"$d/q.tq"
sed -e "s/== IO\b/== $io/g" -e "s/== SOCK\b/== $sockets/g" tests/kernel/io.bt >"$d/q.bt"
koracle "$d" "$d/q.bt" || exit 1
ktqmon "$d" "$d/q.tq" || exit 1
kgo "$d"

if [ "$(obs "$d" all)" = 0 ]; then
  echo "note: the build folder's file system issued no block request from the workload's thread (not a block device here?)"
else
  same "write requests" "$(section "$d/out.csv" Requests | grep -c ',Write,')" "$(obs "$d" writes)" $N
  same "read requests" "$(section "$d/out.csv" Requests | grep -c ',Read,')" "$(obs "$d" reads)" $N
  same "requests" "$(section "$d/out.csv" Requests | wc -l)" "$(obs "$d" all)"
  same "bytes written" "$(section "$d/out.csv" Requests | awk -F, '$3 == "Write" {s += $5} END {print s + 0}')" "$(obs "$d" wbytes)" $((N * 4096))
  section "$d/out.csv" Requests | awk -F, '$7 == "" || $7 < $6' | grep -q . && bad "a request is still open, or ends before it began"
fi
same "sends" "$(section "$d/out.csv" Sends | wc -l)" "$(obs "$d" sends)" $M
same "receives" "$(section "$d/out.csv" Receives | wc -l)" "$(obs "$d" recvs)" $M
same "bytes sent" "$(section "$d/out.csv" Sends | awk -F, '{s += $4} END {print s + 0}')" "$(obs "$d" sbytes)" $((M * BYTES))
same "bytes received" "$(section "$d/out.csv" Receives | awk -F, '{s += $4} END {print s + 0}')" "$(obs "$d" rvbytes)" $((M * BYTES))
[ "$(section "$d/out.csv" Sends | cut -d, -f2,3 | sort -u)" = "$socket0,Unix" ] || bad "Send: not all on socket $socket0 (Unix)"
[ "$(section "$d/out.csv" Receives | cut -d, -f2,3 | sort -u)" = "$socket1,Unix" ] || bad "Receive: not all on socket $socket1 (Unix)"
[ $fails -eq 0 ] && echo ok
exit $fails
