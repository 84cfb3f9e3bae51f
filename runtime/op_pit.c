/*
** op_pit.c - piT, the temporal projection (the valid clause): computes each
** result tuple's single span from the input's spans.
**
** `valid at X` yields an event at begin of X once X is known and non-empty.
** `valid from X to Y` yields [begin of X, end of Y) once the begin is known
** and the span is certainly non-empty; it is emitted open (BEGIN) while its
** end is unknown and closed (END) when it becomes known.  An input whose
** result cannot be decided yet stays pending (see rtInt.h); an output whose
** end is still unknown is remembered through the input's link.
** A result that ends at forever is emitted open and never closed.  A
** result that ends at an unknown `now` (a live run, or a recording whose
** last time is not known in advance) waits for the end of the run.
*/
#include <stdlib.h>

#include "rtInt.h"

typedef struct PiT {
  RtOp op;
  int at;               /* valid at */
  RtExpr *from, *to;    /* the clause's expressions */
  RtExpr *clip;         /* the result is intersected with this span, or NULL */
  TqMap pending;        /* input -> input (one reference) */
  int latest;           /* the result begins at the input's latest begin */
  int toNow;            /* the clause's end mentions now */
  TqVec nowWait;        /* inputs whose open output may end at now, unknown
                        ** until the end of the run (one reference each) */
  /* open outputs whose end is bounded by a known time: they may become
  ** known when the input's end mark passes that time (min-heap) */
  struct Wait {
    TqTime key;         /* the bound */
    RtTup *t;           /* the input (one reference) */
  } *wait;
  int nwait, cwait;
} PiT;

static void waitPush(PiT *p, TqTime key, RtTup *t) {
  if (p->nwait == p->cwait) {
    p->cwait = p->cwait ? 2 * p->cwait : 16;
    p->wait = tqRealloc(p->wait, sizeof(struct Wait) * (size_t)p->cwait);
  }
  int i = p->nwait++;
  p->wait[i].key = key;
  p->wait[i].t = t;
  rtTupRef(t);
  while (i > 0 && p->wait[(i - 1) / 2].key > p->wait[i].key) {
    struct Wait x = p->wait[i];
    p->wait[i] = p->wait[(i - 1) / 2];
    p->wait[(i - 1) / 2] = x;
    i = (i - 1) / 2;
  }
}

static struct Wait waitPop(PiT *p) {
  struct Wait top = p->wait[0];
  p->wait[0] = p->wait[--p->nwait];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < p->nwait && p->wait[l].key < p->wait[m].key) m = l;
    if (r < p->nwait && p->wait[r].key < p->wait[m].key) m = r;
    if (m == i) break;
    struct Wait x = p->wait[i];
    p->wait[i] = p->wait[m];
    p->wait[m] = x;
    i = m;
  }
  return top;
}

enum { R_WAIT = 0, R_DROP, R_EMIT };

/* Decides the result of input t: R_EMIT with *from and *to (*to may be
** TQ_OPEN), R_DROP, or R_WAIT. */
static int compute(PiT *p, RtTup *t, TqTime *from, TqTime *to, TqTime *fromLow) {
  RtTCtx c = {t->d, p->op.net->now, p->op.net->opt.nowValue, p->op.kid[0]->endLow};
  RtTVal x, y;
  rtTEval(p->from, &c, &x);
  *fromLow = x.b.lo;
  if (x.kind == TV_EMPTY) return R_DROP;
  RtTVal k = {0};
  if (p->clip) {
    rtTEval(p->clip, &c, &k);
    if (k.kind == TV_EMPTY) return R_DROP;
    if (k.kind == TV_INSTANT) k.e = (RtBound){tqTimeAdd(k.b.lo, 1), tqTimeAdd(k.b.hi, 1)};
  }
  if (p->at) {
    if (p->clip) {
      /* the instant must lie within the clip span */
      if (x.b.hi < k.b.lo || x.b.lo >= k.e.hi) return R_DROP;
      if (k.maybeEmpty || x.b.lo < k.b.hi || x.b.hi >= k.e.lo) return R_WAIT;
    }
    if (x.b.lo >= TQ_FOREVER) return R_DROP; /* forever is not an instant anything happens at */
    if (x.maybeEmpty || x.b.lo != x.b.hi) return R_WAIT;
    *from = x.b.lo;
    *to = x.b.lo + 1;
    return R_EMIT;
  }
  rtTEval(p->to, &c, &y);
  if (y.kind == TV_EMPTY) return R_DROP;
  RtBound b = x.b, e = y.e;
  if (p->clip) {
    b = (RtBound){b.lo > k.b.lo ? b.lo : k.b.lo, b.hi > k.b.hi ? b.hi : k.b.hi};
    e = (RtBound){e.lo < k.e.lo ? e.lo : k.e.lo, e.hi < k.e.hi ? e.hi : k.e.hi};
    if (k.maybeEmpty) x.maybeEmpty = 1;
  }
  *fromLow = b.lo;
  if (b.lo >= TQ_FOREVER) return R_DROP;
  if (e.hi <= b.lo) return R_DROP; /* certainly from >= to */
  if (x.maybeEmpty || y.maybeEmpty || b.lo != b.hi || e.lo <= b.lo) return R_WAIT;
  /* a complete input's end can only be unknown through now: wait for it
  ** (the end of the run) rather than emit an output nothing would close */
  if (e.lo != e.hi && t->nopen == 0) return R_WAIT;
  *from = b.lo;
  *to = e.lo == e.hi ? e.lo : TQ_OPEN;
  return R_EMIT;
}

static RtTup *mkOut(PiT *p, RtTup *in, TqTime from, TqTime to) {
  RtTup *o = rtTupAlloc(1, in->nval);
  RT_FROM(o, 0) = from;
  RT_TO(o, 0) = to >= TQ_FOREVER ? TQ_OPEN : to;
  o->nopen = RT_TO(o, 0) == TQ_OPEN;
  for (int i = 0; i < in->nval; i++) RT_VAL(o)[i] = RT_VAL(in)[i];
  return o;
}

/* Emits the result of t (decided R_EMIT); remembers an open output whose
** end may still become known. */
static int emitFor(PiT *p, RtTup *t, TqTime from, TqTime to) {
  if (p->at && p->op.parent) {
    /* an event: to an event result's sink, or a projection under one, as
    ** its values and time (no tuple made) */
    if (rtSinkTakesEvents(p->op.parent)) return rtEmitEvent(&p->op, from, RT_VAL(t));
    if (rtPiTakesEvents(p->op.parent)) return rtPiEvent(&p->op, from, RT_VAL(t));
  }
  RtTup *o = mkOut(p, t, from, to);
  int rc;
  if (o->nopen && to == TQ_OPEN && t->nopen) {
    t->link = o;
    rtTupRef(o);
    if (p->toNow && p->op.net->opt.nowValue == TQ_OPEN) {
      rtTupRef(t);
      tqVecPush(&p->nowWait, t); /* closed at the end of the run if its end is now's */
    }
    rc = rtEmit(&p->op, RT_BEGIN, o);
  } else {
    rc = rtEmit(&p->op, o->nopen ? RT_BEGIN : RT_ADD, o);
  }
  rtTupDrop(o);
  return rc;
}

static int handle(PiT *p, RtTup *t, int inPending) {
  TqTime from, to, lo;
  int r = compute(p, t, &from, &to, &lo);
  uint64_t key = (uint64_t)(uintptr_t)t;
  if (r == R_WAIT) {
    if (!inPending) {
      rtTupRef(t);
      tqMapPut(&p->pending, key, t);
      rtStoredAdd(&p->op, 1);
    }
    return 0;
  }
  if (inPending) {
    tqMapDel(&p->pending, key);
    rtStoredAdd(&p->op, -1);
  }
  int rc = r == R_EMIT ? emitFor(p, t, from, to) : 0;
  if (!t->link) t->flags |= RT_SETTLED; /* its ENDs change nothing here */
  if (inPending) rtTupUnref(t);
  return rc;
}

/* The end of the open output of t: closes it when known (returns 1); when
** it is bounded by a known time, waits for the input's end mark to pass it. */
static int closeIfKnown(PiT *p, RtTup *t, int *rc) {
  RtTup *o = t->link;
  if (!o) return 1;
  RtTCtx c = {t->d, p->op.net->now, p->op.net->opt.nowValue, p->op.kid[0]->endLow};
  RtTVal y;
  rtTEval(p->to, &c, &y);
  if (p->clip && y.kind != TV_EMPTY) {
    RtTVal k;
    rtTEval(p->clip, &c, &k);
    if (k.kind == TV_EMPTY) y.kind = TV_EMPTY;
    else if (k.kind == TV_INTERVAL) y.e = (RtBound){y.e.lo < k.e.lo ? y.e.lo : k.e.lo, y.e.hi < k.e.hi ? y.e.hi : k.e.hi};
  }
  if (y.kind == TV_EMPTY || y.e.lo != y.e.hi) {
    if (y.kind != TV_EMPTY && y.e.hi < TQ_FOREVER) {
      /* known once nothing can end before y.e.hi; later when the clause
      ** shifts an end back: then it waits for the end mark to move on */
      TqTime key = y.e.hi, el = c.endLow;
      if (key <= el) {
        if (el >= TQ_FOREVER) return 0; /* cannot happen: every end is known then */
        key = el + 1;
      }
      waitPush(p, key, t);
      return 0;
    }
    if (t->nopen == 0 && y.kind == TV_EMPTY) t->link = NULL, rtTupUnref(o);
    return 0;
  }
  t->link = NULL;
  t->flags |= RT_SETTLED;
  TqTime to = y.e.lo;
  if (to <= RT_FROM(o, 0)) to = RT_FROM(o, 0) + 1; /* cannot happen: decided non-empty */
  RT_TO(o, 0) = to >= TQ_FOREVER ? TQ_OPEN : to;
  o->nopen = RT_TO(o, 0) == TQ_OPEN;
  if (!o->nopen && rtEmit(&p->op, RT_END, o)) *rc = -1;
  rtTupUnref(o);
  return 1;
}

static int piTPush(RtOp *op, int port, int kind, RtTup *t) {
  PiT *p = (PiT *)op;
  if (kind != RT_END) {
    int rc = handle(p, t, 0);
    if (t->link) closeIfKnown(p, t, &rc); /* begun open: bounded by a known end? */
    return rc;
  }
  uint64_t key = (uint64_t)(uintptr_t)t;
  if (tqMapGet(&p->pending, key)) {
    int rc = handle(p, t, 1);
    if (t->link) closeIfKnown(p, t, &rc);
    return rc;
  }
  int rc = 0;
  closeIfKnown(p, t, &rc);
  return rc;
}

/* Lower bound of the end of an output still open (or to come): the end
** of the `to` clause (and of the clip) while unknown, from the input's
** marks; forever when it is always known (no output is ever open). */
static TqTime outEndLow(PiT *p, TqTime nowLow) {
  if (p->at) return TQ_FOREVER;
  int nowKnown = p->op.net->opt.nowValue != TQ_OPEN;
  TqTime b = p->op.kid[0]->low, e = p->op.kid[0]->endLow;
  TqTime r = rtTExprLow(p->to, b, e, nowLow, nowKnown).oe;
  if (p->clip) {
    TqTime k = rtTExprLow(p->clip, b, e, nowLow, nowKnown).oe;
    if (k < r) r = k;
  }
  /* outputs begun open while now was unknown close at now at the finish */
  if (p->nowWait.n && nowLow < r) r = nowLow;
  return r;
}

static int tupPtrCmp(const void *x, const void *y) { return rtTupCmp(*(RtTup *const *)x, *(RtTup *const *)y); }

static void piTFlush(RtOp *op, TqTime now) {
  PiT *p = (PiT *)op;
  /* a later input's spans begin at the input's low mark or later: the
  ** result begins no earlier than the clause's value from there (its
  ** constants and shifts included) */
  TqTime nowLow = op->net->opt.nowValue != TQ_OPEN ? op->net->opt.nowValue : now;
  TqTime kl = op->kid[0]->low;
  TqTime low = p->latest ? op->kid[0]->maxLow : rtTExprLow(p->from, kl, kl, nowLow, 1).b;
  if (p->pending.n) {
    TqVec all = {0};
    for (uint32_t i = 0; i < p->pending.cap; i++)
      if (p->pending.slot[i].key > 1) tqVecPush(&all, p->pending.slot[i].val);
    /* in content order, not the map's (addresses) */
    if (all.n > 1) qsort(all.v, (size_t)all.n, sizeof(void *), tupPtrCmp);
    for (int i = 0; i < all.n; i++) {
      RtTup *t = all.v[i];
      TqTime from, to, lo;
      rtTupRef(t);
      int rc = handle(p, t, 1);
      if (tqMapGet(&p->pending, (uint64_t)(uintptr_t)t)) {
        compute(p, t, &from, &to, &lo);
        if (lo < low) low = lo;
      } else if (t->link) {
        closeIfKnown(p, t, &rc); /* begun open: bounded by a known end? */
      }
      rtTupUnref(t);
    }
    tqVecFree(&all);
  }
  /* after the pending ones, whose open outputs may wait too */
  while (p->nwait && p->wait[0].key <= op->kid[0]->endLow) {
    struct Wait w = waitPop(p);
    int rc = 0;
    if (w.t->link) closeIfKnown(p, w.t, &rc);
    rtTupUnref(w.t);
  }
  op->low = low;
  /* an open output ends where the clause's end does, from open spans that
  ** end at the input's end mark or later */
  op->endLow = outEndLow(p, nowLow);
}

static void dropPending(PiT *p) {
  for (uint32_t i = 0; i < p->pending.cap; i++)
    if (p->pending.slot[i].key > 1) rtTupUnref(p->pending.slot[i].val);
  tqMapFree(&p->pending);
}

static void piTFinish(RtOp *op, TqTime now) {
  PiT *p = (PiT *)op;
  piTFlush(op, now);
  /* now is known: the outputs that were waiting for it close */
  for (int i = 0; i < p->nowWait.n; i++) {
    RtTup *t = p->nowWait.v[i];
    int rc = 0;
    if (t->link) closeIfKnown(p, t, &rc);
    rtTupUnref(t);
  }
  tqVecFree(&p->nowWait);
  rtStoredAdd(op, -(int64_t)p->pending.n);
  dropPending(p);
}

static void piTFree(RtOp *op) {
  PiT *p = (PiT *)op;
  dropPending(p);
  for (int i = 0; i < p->nwait; i++) rtTupUnref(p->wait[i].t);
  free(p->wait);
  for (int i = 0; i < p->nowWait.n; i++) rtTupUnref(p->nowWait.v[i]);
  tqVecFree(&p->nowWait);
  rtExprFree(p->from);
  rtExprFree(p->to);
  rtExprFree(p->clip);
}

static const RtOpVt piTVt = {"piT", piTPush, piTFlush, piTFinish, piTFree, NULL};

static int mentionsNow(const RtExpr *e) {
  return e && (e->kind == AX_NOW || mentionsNow(e->a) || mentionsNow(e->b));
}

/* Adds to *mask the spans whose intersection e is; returns 0 when e is not
** an intersection of tuple variables' spans. */
static int overlapSpans(const RtExpr *e, uint64_t *mask) {
  if (e->kind == AX_TVAR) {
    if (e->idx >= 64) return 0;
    *mask |= (uint64_t)1 << e->idx;
    return 1;
  }
  return e->kind == AX_OVERLAP && overlapSpans(e->a, mask) && overlapSpans(e->b, mask);
}

/* Does `from` begin at the latest begin of all nspan spans?  True for
** `begin of (V1 overlap ... Vk)` naming every span (a non-empty
** intersection begins at the latest begin; an empty one gives nothing). */
static int beginsAtLatest(const RtExpr *from, int nspan) {
  while (from->kind == AX_BEGINOF) from = from->a;
  uint64_t mask = 0;
  if (nspan < 1 || nspan > 64 || !overlapSpans(from, &mask)) return 0;
  return mask == (nspan == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nspan) - 1);
}

RtOp *rtOpPiT(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr *f = rtExprCompile(n->vfrom, &n->kid[0]->sch, msg), *t = NULL;
  if (!f) return NULL;
  if (!n->validAt) {
    t = rtExprCompile(n->vto, &n->kid[0]->sch, msg);
    if (!t) {
      rtExprFree(f);
      return NULL;
    }
  }
  RtExpr *clip = NULL;
  if (n->vclip && !(clip = rtExprCompile(n->vclip, &n->kid[0]->sch, msg))) {
    rtExprFree(f);
    rtExprFree(t);
    return NULL;
  }
  PiT *p = (PiT *)rtOpNew(net, &piTVt, sizeof(PiT), n);
  p->clip = clip;
  p->at = n->validAt;
  p->from = f;
  p->to = t;
  p->latest = beginsAtLatest(f, n->kid[0]->sch.ntv);
  p->toNow = mentionsNow(t) || mentionsNow(clip);
  return &p->op;
}
