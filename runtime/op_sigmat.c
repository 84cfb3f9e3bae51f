/*
** op_sigmat.c - sigmaT, the selection on implicit time attributes (the
** when clause).
**
** The predicate is evaluated with bounds on the ends of open intervals
** (rtInt.h): true passes the tuple on, false drops it, unknown keeps it
** pending until an END of the tuple or the passing of time decides it.
** A pending tuple that is decided true is passed as BEGIN (or ADD when it
** is complete by then).  Later ENDs of a passed tuple are passed on; a
** tuple is passed iff the predicate holds, so re-evaluating at END gives
** the same answer and no per-tuple state is kept for passed tuples.
** Memory: the pending tuples only.
*/
#include <stdlib.h>

#include "rtInt.h"

typedef struct SigmaT {
  RtOp op;
  RtExpr *pred;
  TqMap pending; /* tuple pointer -> tuple (one reference each) */
} SigmaT;

static int decide(SigmaT *s, RtTup *t) {
  RtTCtx c = {t->d, s->op.net->now, s->op.net->opt.nowValue, s->op.kid[0]->endLow};
  return rtTPred(s->pred, &c);
}

static int sigmaTPush(RtOp *op, int port, int kind, RtTup *t) {
  SigmaT *s = (SigmaT *)op;
  uint64_t key = (uint64_t)(uintptr_t)t;
  if (kind == RT_END) {
    RtTup *p = tqMapGet(&s->pending, key);
    int r = decide(s, t);
    if (p) {
      if (r == TRI_U) return 0;
      tqMapDel(&s->pending, key);
      rtStoredAdd(op, -1);
      int rc = r == TRI_T ? rtEmit(op, t->nopen ? RT_BEGIN : RT_ADD, t) : 0;
      if (r == TRI_F) t->flags |= RT_SETTLED;
      rtTupUnref(t);
      return rc;
    }
    return r == TRI_T ? rtEmit(op, RT_END, t) : 0;
  }
  int r = decide(s, t);
  if (r == TRI_T) return rtEmit(op, kind, t);
  if (r == TRI_F) {
    t->flags |= RT_SETTLED; /* dropped for good: its ENDs change nothing */
    return 0;
  }
  /* unknown: wait (an ADD is complete; only `now` can still be unknown) */
  rtTupRef(t);
  tqMapPut(&s->pending, key, t);
  rtStoredAdd(op, 1);
  return 0;
}

static int taggedCmp(const void *x, const void *y) {
  const RtTup *a = (const RtTup *)(*(const uintptr_t *)x & ~(uintptr_t)1);
  const RtTup *b = (const RtTup *)(*(const uintptr_t *)y & ~(uintptr_t)1);
  return rtTupCmp(a, b);
}

static void sigmaTFlush(RtOp *op, TqTime now) {
  SigmaT *s = (SigmaT *)op;
  TqTime low = op->kid[0]->low, maxLow = op->kid[0]->maxLow;
  /* first: the parent deciding what passes now bounds open ends by it */
  op->endLow = op->kid[0]->endLow;
  if (s->pending.n) {
    TqVec done = {0};
    for (uint32_t i = 0; i < s->pending.cap; i++) {
      if (s->pending.slot[i].key <= 1) continue;
      RtTup *t = s->pending.slot[i].val;
      int r = decide(s, t);
      if (r != TRI_U) {
        /* decided: the answer rides in the low bit (tuples are aligned) */
        tqVecPush(&done, (void *)((uintptr_t)t | (r == TRI_T)));
        continue;
      }
      TqTime latest = TQ_BEGINNING;
      for (int k = 0; k < t->nspan; k++) {
        if (RT_FROM(t, k) < low) low = RT_FROM(t, k);
        if (RT_FROM(t, k) > latest) latest = RT_FROM(t, k);
      }
      if (latest < maxLow) maxLow = latest;
    }
    /* in content order, not the map's (addresses): the same rows in the
    ** same order at every run */
    if (done.n > 1) qsort(done.v, (size_t)done.n, sizeof(void *), taggedCmp);
    for (int i = 0; i < done.n; i++) {
      int pass = (int)((uintptr_t)done.v[i] & 1);
      RtTup *t = (RtTup *)((uintptr_t)done.v[i] & ~(uintptr_t)1);
      tqMapDel(&s->pending, (uint64_t)(uintptr_t)t);
      rtStoredAdd(op, -1);
      if (pass) rtEmit(op, t->nopen ? RT_BEGIN : RT_ADD, t);
      else t->flags |= RT_SETTLED;
      rtTupUnref(t);
    }
    tqVecFree(&done);
  }
  op->low = low;
  op->maxLow = maxLow;
}

static void dropPending(SigmaT *s) {
  for (uint32_t i = 0; i < s->pending.cap; i++)
    if (s->pending.slot[i].key > 1) rtTupUnref(s->pending.slot[i].val);
  tqMapFree(&s->pending);
}

static void sigmaTFinish(RtOp *op, TqTime now) {
  sigmaTFlush(op, now);
  /* still unknown at the end: the answer needs an end that never came */
  SigmaT *s = (SigmaT *)op;
  rtStoredAdd(op, -(int64_t)s->pending.n);
  dropPending(s);
}

static void sigmaTFree(RtOp *op) {
  SigmaT *s = (SigmaT *)op;
  dropPending(s);
  rtExprFree(s->pred);
}

static const RtOpVt sigmaTVt = {"sigmaT", sigmaTPush, sigmaTFlush, sigmaTFinish, sigmaTFree, NULL};

RtOp *rtOpSigmaT(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr *p = rtExprCompile(n->pred, &n->kid[0]->sch, msg);
  if (!p) return NULL;
  SigmaT *s = (SigmaT *)rtOpNew(net, &sigmaTVt, sizeof(SigmaT), n);
  s->pred = p;
  return &s->op;
}
