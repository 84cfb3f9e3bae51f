#!/usr/bin/env python3
# cross.py - the independent oracle of the cross-host query CrossHost
# (tests/pcp/sensors.tq) from the two mailbox programs' own logs, written
# with -t: each SEND, WAIT and WAKE line ends with the CLOCK_REALTIME times
# (ns) read just before and just after its sensor call, so the sensor's
# stamp lies between them.  Used by tests/scripts/pcp_sensors.sh.
#
#   cross.py A.LOG B.LOG TOL_NS ANSWER.csv
#
# CrossHost: the waits of P2 on host a2 that ended at or after a send of
# P1 on host a1 and at most 10 ms after it, a row (Sender, Box, Waiter,
# valid_at = the end of the wait).  The monitor's times are the agents'
# conversions of the programs' TSC stamps less its estimate of each host's
# clock offset, so a time is known to within TOL_NS of the log's bracket
# (the caller gives the offsets applied plus the conversion's error).
# A pair is certain when every time the brackets allow satisfies the
# query, impossible when none does, uncertain otherwise.  The answer
# (ANSWER.csv: Sender,Box,Waiter,valid_at, any order) must
#   - hold every certain pair and no impossible one (each answer row is
#     matched, by its time, to the end of P2's wait whose bracket holds it,
#     the rows' times in order to the ends in order);
#   - stamp each row within TOL_NS of its wake's bracket.
# Prints one line of figures; exits 1 (with the reasons) on a mismatch.
import sys

WINDOW = 10_000_000  # the query's 10 ms


def read(path):
    sends, ends, opened, last, exit_t = [], [], {}, None, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[1] == "EXIT":
                exit_t = int(w[2])
                continue
            if len(w) != 6:
                continue
            op, proc, box, t0, t1 = w[1], w[2], w[3], int(w[4]), int(w[5])
            last = t0
            if op == "SEND" and proc == "P1":
                sends.append((t0, t1, box))
            elif op == "WAIT":
                opened[proc] = box
            elif op == "WAKE":
                opened.pop(proc, None)
                if proc == "P2":
                    ends.append((t0, t1, box, "wake"))
    if exit_t is None:
        sys.exit("%s: no EXIT line (was the program run with -t to its end?)" % path)
    # a wait open at the exit ends at the agent's last time for the program:
    # after the last logged call began, no later than EXIT was logged
    if "P2" in opened:
        ends.append((last, exit_t, opened["P2"], "exit"))
    return sends, ends


def main():
    a_log, b_log, tol, answer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    sends, _ = read(a_log)
    _, ends = read(b_log)
    rows = []
    with open(answer) as f:
        for line in f:
            s, box, w, t = line.strip().split(",")
            rows.append((int(t), s, box, w))
    rows.sort()
    bad = []
    # each answer row's wake: the rows' times, in order, go to ends of P2's
    # waits in order, each time to the first end after the previous time's
    # whose bracket (widened by tol) holds it (two ends can be closer than
    # tol: a wake, and the exit with P2 waiting again)
    got = set()
    at = {}
    k = -1
    for t in sorted({r[0] for r in rows}):
        j = k + 1
        while j < len(ends) and not (ends[j][0] - tol <= t <= ends[j][1] + tol):
            j += 1
        if j == len(ends):
            bad.append("row at %d: no end of a wait of P2 on a2 within %d ns after #%d (in time order)" % (t, tol, k))
            continue
        at[t] = k = j
    for t, s_, box, w in rows:
        if s_ != "a1:P1" or w != "a2:P2" or not box.startswith("a1:"):
            bad.append("a row not from a1:P1 to a2:P2: %s,%s,%s,%d" % (s_, box, w, t))
        elif t in at:
            got.add((at[t], box[3:]))
    certain, possible = set(), set()
    for k, (e0, e1, _, how) in enumerate(ends):
        for s0, s1, box in sends:
            lo, hi = e0 - s1 - tol, e1 - s0 + tol  # the end less the send, as the brackets allow
            if lo >= 0 and hi <= WINDOW and how == "wake":
                certain.add((k, box))
            if hi >= 0 and lo <= WINDOW:
                possible.add((k, box))
    for k, box in sorted(certain - got):
        bad.append("missing: P1's send to %s before P2's wake #%d at %d" % (box, k, ends[k][0]))
    for k, box in sorted(got - possible):
        bad.append("extra: no send of P1 to %s within 10 ms before P2's wake #%d at %d" % (box, k, ends[k][0]))
    print("cross oracle: %d sends of a1:P1, %d ends of a2:P2's waits; %d rows; pairs certain %d, uncertain %d (tolerance %.3f ms)"
          % (len(sends), len(ends), len(rows), len(certain), len(possible - certain), tol / 1e6))
    for b in bad[:10]:
        print("  " + b)
    sys.exit(1 if bad else 0)


main()
