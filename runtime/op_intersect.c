/*
** op_intersect.c - intersection of two relations of the same schema (one
** time component each): a tuple is in the result at an instant when it is
** in both inputs then.  Results of O3 and O5/O7 rewrites such as
** alpha(M3 intersect pi[S.Mailbox](...)) use it.
**
** Each side's tuples are stored by the hash of their values; a new tuple
** meets the stored tuples of the other side with equal values, and each
** pair whose spans may overlap gives one output spanning the intersection
** (an event when either input is an event).  An output whose end is not
** known yet is re-examined at the ENDs of its inputs and when time passes.
** A closed tuple is forgotten once the other side cannot start a tuple
** before its end (low mark), so memory follows the live tuples.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

typedef struct Pair {
  RtTup *l, *r; /* inputs (references) */
  RtTup *out;   /* open output (reference) */
} Pair;

typedef struct Inter {
  RtOp op;
  int event[2];  /* side carries events */
  TqVec store[2];/* RtTup* stored per side */
  TqVec open;    /* Pair* with an open output */
} Inter;

static int sameVals(const RtTup *a, const RtTup *b) {
  return a->nval == b->nval && !memcmp(RT_VAL(a), RT_VAL(b), sizeof(int64_t) * a->nval);
}

/* End of the intersection of l and r if known now, else TQ_OPEN. */
static TqTime interEnd(const RtTup *l, const RtTup *r, TqTime now) {
  TqTime a = RT_TO(l, 0), b = RT_TO(r, 0);
  if (a != TQ_OPEN && b != TQ_OPEN) return a < b ? a : b;
  if (a != TQ_OPEN && a <= now) return a;
  if (b != TQ_OPEN && b <= now) return b;
  return TQ_OPEN;
}

static int meet(Inter *x, RtTup *l, RtTup *r) {
  TqTime from = RT_FROM(l, 0) > RT_FROM(r, 0) ? RT_FROM(l, 0) : RT_FROM(r, 0);
  TqTime lt = RT_TO(l, 0), rt = RT_TO(r, 0);
  if ((lt != TQ_OPEN && lt <= from) || (rt != TQ_OPEN && rt <= from)) return 0;
  RtTup *o = rtTupNew(1, l->nval);
  memcpy(RT_VAL(o), RT_VAL(l), sizeof(int64_t) * l->nval);
  RT_FROM(o, 0) = from;
  int rc;
  if (x->event[0] || x->event[1]) {
    RT_TO(o, 0) = from + 1;
    rc = rtEmit(&x->op, RT_ADD, o);
  } else {
    TqTime to = interEnd(l, r, x->op.net->now);
    RT_TO(o, 0) = to;
    o->nopen = to == TQ_OPEN;
    if (o->nopen) {
      Pair *p = tqMalloc(sizeof *p);
      p->l = l;
      p->r = r;
      p->out = o;
      rtTupRef(l);
      rtTupRef(r);
      rtTupRef(o);
      tqVecPush(&x->open, p);
    }
    rc = rtEmit(&x->op, o->nopen ? RT_BEGIN : RT_ADD, o);
  }
  rtTupUnref(o);
  return rc;
}

static void recheck(Inter *x) {
  int k = 0;
  for (int i = 0; i < x->open.n; i++) {
    Pair *p = x->open.v[i];
    TqTime to = interEnd(p->l, p->r, x->op.net->now);
    if (to == TQ_OPEN) {
      x->open.v[k++] = p;
      continue;
    }
    RT_TO(p->out, 0) = to;
    p->out->nopen = 0;
    rtEmit(&x->op, RT_END, p->out);
    rtTupUnref(p->out);
    rtTupUnref(p->l);
    rtTupUnref(p->r);
    free(p);
  }
  x->open.n = k;
}

static int interPush(RtOp *op, int port, int kind, RtTup *t) {
  Inter *x = (Inter *)op;
  if (kind == RT_END) {
    recheck(x);
    return 0;
  }
  rtTupRef(t);
  tqVecPush(&x->store[port], t);
  rtStoredAdd(op, 1);
  TqVec *o = &x->store[1 - port];
  int rc = 0;
  for (int i = 0; i < o->n; i++) {
    RtTup *u = o->v[i];
    if (!sameVals(t, u)) continue;
    if (meet(x, port == 0 ? t : u, port == 0 ? u : t)) rc = -1;
  }
  return rc;
}

static void interFlush(RtOp *op, TqTime now) {
  Inter *x = (Inter *)op;
  recheck(x);
  TqTime low = op->kid[0]->low < op->kid[1]->low ? op->kid[0]->low : op->kid[1]->low;
  for (int s = 0; s < 2; s++) {
    TqVec *v = &x->store[s];
    TqTime other = op->kid[1 - s]->low;
    int k = 0;
    for (int i = 0; i < v->n; i++) {
      RtTup *t = v->v[i];
      if (t->nopen == 0 && RT_TO(t, 0) <= other) {
        rtTupUnref(t);
        rtStoredAdd(op, -1);
        continue;
      }
      if (RT_FROM(t, 0) < low) low = RT_FROM(t, 0);
      v->v[k++] = t;
    }
    v->n = k;
  }
  op->low = low;
  op->endLow = op->kid[0]->endLow < op->kid[1]->endLow ? op->kid[0]->endLow : op->kid[1]->endLow;
}

static void interFinish(RtOp *op, TqTime now) { recheck((Inter *)op); }

static void interFree(RtOp *op) {
  Inter *x = (Inter *)op;
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < x->store[s].n; i++) rtTupUnref(x->store[s].v[i]);
    tqVecFree(&x->store[s]);
  }
  for (int i = 0; i < x->open.n; i++) {
    Pair *p = x->open.v[i];
    rtTupUnref(p->out);
    rtTupUnref(p->l);
    rtTupUnref(p->r);
    free(p);
  }
  tqVecFree(&x->open);
}

static const RtOpVt interVt = {"intersect", interPush, interFlush, interFinish, interFree, NULL};

RtOp *rtOpIntersect(RtNet *net, const AlgNode *n) {
  Inter *x = (Inter *)rtOpNew(net, &interVt, sizeof(Inter), n);
  x->event[0] = n->kid[0]->sch.tv[0].isEvent;
  x->event[1] = n->kid[1]->sch.tv[0].isEvent;
  return &x->op;
}
