/*
** load.c - tqmon load of a text recording: every packet, all sensors
** enabled, as tables of the primitive relations in an SQLite file (the
** traditional way, and the store that tqmon sql and the property test's
** SQL oracle query).  The recording is read by sensors/ (snsTraceRecord)
** and written through runtime's store; neither knows the other.  A binary
** collection file is loaded through the engine by the store PM
** (runtime/store.c), which writes the same tables.
*/
#include <stdio.h>
#include <stdlib.h>

#include "../runtime/runtime.h"
#include "../sensors/sensors.h"
#include "app.h"

int appLoadTrace(const SnsTrace *t, const CpProgram *prog, const char *path, TqDiag *d) {
  RtStore *st = rtStoreOpen(path, d);
  if (!st) return -1;
  int n = prog->cat.rels.n, rc = 0;
  int *tbl = tqCalloc((size_t)(n ? n : 1), sizeof(int));
  if (rtStoreBegin(st) || rtStoreLossReset(st)) rc = -1;
  for (int i = 0; i < n && !rc; i++) {
    const AlgRel *r = prog->cat.rels.v[i];
    tbl[i] = rtStoreTable(st, r->name, r->nattr, r->attr, r->isEvent);
    if (tbl[i] < 0) rc = -1;
  }
  int64_t k = 0, npk = snsTracePackets(t);
  for (int64_t i = 0; i < npk && !rc; i++) {
    tq_record r;
    snsTraceRecord(t, i, &r);
    const AlgRel *rel = prog->cat.rels.v[r.rel - 1];
    if (r.kind == TQ_REC_EVENT || r.kind == TQ_REC_SAMPLE) {
      /* a sample of an interval relation: valid at t, [t, t+1) */
      rc = rtStoreInsert(st, tbl[r.rel - 1], r.vals, r.t, rel->isEvent ? r.t : r.t + 1, NULL);
    } else if (r.kind == TQ_REC_BEGIN || r.kind == TQ_REC_WHOLE) {
      rc = rtStoreInsert(st, tbl[r.rel - 1], r.vals, r.from, r.to, NULL); /* (an END adds nothing) */
    } else {
      continue;
    }
    if (++k % 100000 == 0 && !rc) rc = rtStoreCommit(st) || rtStoreBegin(st) ? -1 : 0;
  }
  /* the recording's losses: the tables miss those records (docs/losses.md) */
  int64_t lost = 0, nl = snsTraceLosses(t);
  int unknown = 0;
  for (int64_t i = 0; i < nl && !rc; i++) {
    int rel, spans;
    int64_t ent, count;
    TqTime from, to;
    snsTraceLoss(t, i, &rel, &ent, &from, &to, &count, &spans);
    const AlgRel *r = rel > 0 && rel <= n ? prog->cat.rels.v[rel - 1] : NULL;
    rc = rtStoreLoss(st, r ? r->name : NULL, ent, from, to, count, spans);
    if (count == RT_LOSS_UNKNOWN) unknown = 1;
    else lost += count;
  }
  char c[64];
  if (!rc && nl)
    fprintf(stderr,
            "tqmon load: warning: the recording says %s were lost (%lld loss%s): the tables miss them; their "
            "periods are in _tqmon_lost (docs/losses.md)\n",
            rtLossCount(c, sizeof c, lost, unknown), (long long)nl, nl == 1 ? "" : "es");
  if (!rc) rc = rtStoreMeta(st, "first", snsTraceFirst(t)) || rtStoreMeta(st, "last", snsTraceLast(t)) ||
                 rtStoreMeta(st, "tick", prog->cat.tick) ? -1 : 0;
  if (!rc) rc = rtStoreCommit(st);
  rtStoreFree(st);
  free(tbl);
  return rc;
}
