#!/usr/bin/env python3
# stream_rows.py OUT.csv - the rows a CSV output of tqmon run stands for,
# per result (sorted by name), sorted and distinct.  Sorted output holds
# them as they are; a streamed one (tests/scripts/stream.sh) may hold a
# result's block several times, and an interval first without an end (it
# began) and then again: a line without an end stands until a later line
# with the same values and valid_from follows.  The "# incomplete" lines
# (docs/losses.md) are not rows: left out.
# stream_rows.py --same A B [A B ...]: for each pair, whether both stand
# for the same rows; the pairs that do not are printed, and the exit is 1.
import sys


def rows(path):
    secs, hdr, cur = {}, {}, None
    lines = open(path).read().split('\n')
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith('# incomplete '):  # a period of the answer's losses, not a row
            i += 1
            continue
        if l.startswith('# '):
            cur = l[2:]
            hdr[cur] = lines[i + 1]
            secs.setdefault(cur, [])
            i += 2
            continue
        if l and cur is not None:
            secs[cur].append(l)
        i += 1
    out = []
    for name in sorted(secs):
        rs, interval = secs[name], hdr[name].endswith('valid_from,valid_to')
        keep = set()
        for k, r in enumerate(rs):
            if interval and r.endswith(','):
                if any(x.startswith(r) and x != r for x in rs[k + 1:]) or r in rs[k + 1:]:
                    continue
            keep.add(r)
        out.append('# ' + name)
        out.append('\n'.join(sorted(keep)))
    return '\n'.join(out) + '\n' if out else ''


if len(sys.argv) > 1 and sys.argv[1] == '--same':
    args, differ = sys.argv[2:], 0
    for a, b in zip(args[0::2], args[1::2]):
        if rows(a) != rows(b):
            print('%s %s' % (a, b))
            differ += 1
    sys.exit(1 if differ or len(args) % 2 else 0)
sys.stdout.write(rows(sys.argv[1]))
