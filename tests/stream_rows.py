#!/usr/bin/env python3
# stream_rows.py OUT.csv - the rows a CSV output of tqmon run stands for,
# per result (sorted by name), sorted and distinct.  Sorted output holds
# them as they are; a streamed one (tests/scripts/stream.sh) may hold a
# result's block several times, and an interval first without an end (it
# began) and then again: a line without an end stands until a later line
# with the same values and valid_from follows.  The "# incomplete" lines
# (docs/losses.md) are not rows: left out.
import sys

secs, hdr, cur = {}, {}, None
lines = open(sys.argv[1]).read().split('\n')
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
for name in sorted(secs):
    rows, interval = secs[name], hdr[name].endswith('valid_from,valid_to')
    keep = set()
    for k, r in enumerate(rows):
        if interval and r.endswith(','):
            if any(x.startswith(r) and x != r for x in rows[k + 1:]) or r in rows[k + 1:]:
                continue
        keep.add(r)
    print('# ' + name)
    print('\n'.join(sorted(keep)))
