/*
** op_source.c - the leaves of the network: entity sources (always enabled
** entity relations), constants and Clock[n].
**
** An entity source turns the begin and end of each entity tuple into
** BEGIN/END deltas; a constant emits one tuple valid from beginning to
** forever when the run starts; Clock[n] emits one event every n base ticks
** (at multiples of n * tick).  All three are timely: their low mark is now.
*/
#include "rtInt.h"

/* ================================================================ entity source */
typedef struct Source {
  RtOp op;
  TqMap live; /* ivid -> RtTup* of entities alive now */
} Source;

static int sourcePush(RtOp *op, int port, int kind, RtTup *t) { return 0; }
/* At the end of the run what is still open never ends (ends at forever). */
static void sourceFlush(RtOp *op, TqTime now) {
  op->low = now;
  op->endLow = op->net->ending ? TQ_FOREVER : now;
}
static void sourceFinish(RtOp *op, TqTime now) {}
static void sourceFree(RtOp *op) {
  Source *s = (Source *)op;
  for (uint32_t i = 0; i < s->live.cap; i++)
    if (s->live.slot[i].key > 1) rtTupUnref(s->live.slot[i].val);
  tqMapFree(&s->live);
}
static const RtOpVt sourceVt = {"source", sourcePush, sourceFlush, sourceFinish, sourceFree, NULL};

RtOp *rtOpSource(RtNet *net, const AlgNode *n) {
  Source *s = (Source *)rtOpNew(net, &sourceVt, sizeof(Source), n);
  return &s->op;
}

void rtSourceBegin(RtOp *op, uint64_t ivid, TqTime from, const int64_t *vals) {
  Source *s = (Source *)op;
  RtTup *t = rtTupNew(1, op->nval);
  RT_FROM(t, 0) = from;
  RT_TO(t, 0) = TQ_OPEN;
  t->nopen = 1;
  for (int i = 0; i < op->nval; i++) RT_VAL(t)[i] = vals[i];
  tqMapPut(&s->live, ivid + 2, t);
  rtStoredAdd(op, 1);
  rtEmit(op, RT_BEGIN, t);
}

void rtSourceEnd(RtOp *op, uint64_t ivid, TqTime from, TqTime to) {
  Source *s = (Source *)op;
  RtTup *t = tqMapDel(&s->live, ivid + 2);
  if (!t) return;
  RT_TO(t, 0) = to;
  t->nopen = 0;
  rtStoredAdd(op, -1);
  rtEmit(op, RT_END, t);
  rtTupUnref(t);
}

/* ================================================================ constant */
static void constFlush(RtOp *op, TqTime now) {
  /* its one tuple comes when the run starts, after the first flush */
  op->low = op->nout ? TQ_FOREVER : TQ_BEGINNING;
  op->endLow = now;
}
static const RtOpVt constVt = {"const", sourcePush, constFlush, sourceFinish, NULL, NULL};

RtOp *rtOpConst(RtNet *net, const AlgNode *n) {
  RtOp *op = rtOpNew(net, &constVt, sizeof(RtOp), n);
  op->low = TQ_BEGINNING;
  return op;
}

void rtConstPrime(RtOp *op, TqTime t0) {
  RtTup *t = rtTupNew(1, 1);
  RT_FROM(t, 0) = TQ_BEGINNING;
  RT_TO(t, 0) = TQ_FOREVER;
  RT_VAL(t)[0] = op->node->kval;
  rtEmit(op, RT_ADD, t);
  rtTupUnref(t);
}

/* ================================================================ clock */
typedef struct Clock {
  RtOp op;
  TqTime period; /* n * tick, or a multiple of it (rtClockSlow) */
  TqTime base;   /* n * tick */
} Clock;

static const RtOpVt clockVt = {"clock", sourcePush, sourceFlush, sourceFinish, NULL, NULL};

RtOp *rtOpClock(RtNet *net, const AlgNode *n) {
  Clock *c = (Clock *)rtOpNew(net, &clockVt, sizeof(Clock), n);
  c->period = c->base = net->prog->cat.tick * (TqTime)n->clockN;
  return &c->op;
}

TqTime rtClockSlow(RtOp *op, TqTime p) {
  Clock *c = (Clock *)op;
  if (c->base > 0) c->period = p > c->base ? p / c->base * c->base : c->base;
  return c->period;
}

TqTime rtClockPeriod(RtOp *op) { return ((Clock *)op)->period; }

int rtClockDue(RtOp *op, TqTime t) {
  TqTime p = ((Clock *)op)->period;
  return p > 0 && t % p == 0;
}

void rtClockTick(RtOp *op, TqTime t) {
  RtTup *tp = rtTupNew(1, 0);
  RT_FROM(tp, 0) = t;
  RT_TO(tp, 0) = t + 1;
  rtEmit(op, RT_ADD, tp);
  rtTupUnref(tp);
}
