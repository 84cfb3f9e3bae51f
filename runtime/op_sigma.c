/*
** op_sigma.c - the stateless operators: sigma (selection on explicit
** attributes) and pi (projection).
**
** sigma passes a tuple's BEGIN, ENDs or ADD when its predicate holds; the
** values never change, so the decision taken at BEGIN holds for the ENDs.
** pi maps each input tuple to one output tuple with the same spans; an
** open input keeps its output in t->link until its final END.
*/
#include "rtInt.h"

typedef struct Sigma {
  RtOp op;
  RtExpr *pred;
} Sigma;

static int sigmaPush(RtOp *op, int port, int kind, RtTup *t) {
  Sigma *s = (Sigma *)op;
  if (rtEvalBool(s->pred, RT_VAL(t))) return rtEmit(op, kind, t);
  t->flags |= RT_SETTLED; /* dropped for good: its ENDs change nothing */
  return 0;
}
static void sigmaFlush(RtOp *op, TqTime now) {
  op->low = op->kid[0]->low;
  op->maxLow = op->kid[0]->maxLow;
  op->endLow = op->kid[0]->endLow;
}
static void sigmaFinish(RtOp *op, TqTime now) {}
static void sigmaFree(RtOp *op) { rtExprFree(((Sigma *)op)->pred); }
static const RtOpVt sigmaVt = {"sigma", sigmaPush, sigmaFlush, sigmaFinish, sigmaFree};

RtOp *rtOpSigma(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr *p = rtExprCompile(n->pred, &n->kid[0]->sch, msg);
  if (!p) return NULL;
  Sigma *s = (Sigma *)rtOpNew(net, &sigmaVt, sizeof(Sigma), n);
  s->pred = p;
  return &s->op;
}

/* ================================================================ pi */
typedef struct Pi {
  RtOp op;
  int n;
  RtExpr **e;
} Pi;

static void piFill(Pi *p, RtTup *out, const RtTup *in) {
  for (int i = 0; i < in->nspan; i++) {
    RT_FROM(out, i) = RT_FROM(in, i);
    RT_TO(out, i) = RT_TO(in, i);
  }
  out->nopen = in->nopen;
}

static int piPush(RtOp *op, int port, int kind, RtTup *t) {
  Pi *p = (Pi *)op;
  RtTup *out;
  int rc;
  switch (kind) {
    case RT_ADD:
    case RT_BEGIN:
      out = rtTupAlloc(t->nspan, p->n);
      piFill(p, out, t);
      for (int i = 0; i < p->n; i++) RT_VAL(out)[i] = rtEvalSlotQ(p->e[i], RT_VAL(t));
      if (kind == RT_BEGIN) {
        t->link = out;
        rtTupRef(out);
      }
      rc = rtEmit(op, kind, out);
      rtTupDrop(out);
      return rc;
    default:
      out = t->link;
      if (!out) return 0;
      piFill(p, out, t);
      if (t->nopen == 0) t->link = NULL;
      rc = rtEmit(op, RT_END, out);
      if (t->nopen == 0) rtTupUnref(out);
      return rc;
  }
}

static void piFree(RtOp *op) {
  Pi *p = (Pi *)op;
  for (int i = 0; i < p->n; i++) rtExprFree(p->e[i]);
  free(p->e);
}
static const RtOpVt piVt = {"pi", piPush, sigmaFlush, sigmaFinish, piFree};

RtOp *rtOpPi(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr **e = tqCalloc((size_t)(n->npi ? n->npi : 1), sizeof(RtExpr *));
  for (int i = 0; i < n->npi; i++) {
    e[i] = rtExprCompile(n->pi[i], &n->kid[0]->sch, msg);
    if (!e[i]) {
      for (int j = 0; j < i; j++) rtExprFree(e[j]);
      free(e);
      return NULL;
    }
  }
  Pi *p = (Pi *)rtOpNew(net, &piVt, sizeof(Pi), n);
  p->n = n->npi;
  p->e = e;
  return &p->op;
}
