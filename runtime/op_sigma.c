/*
** op_sigma.c - the stateless operators: sigma (selection on explicit
** attributes) and pi (projection).
**
** sigma passes a tuple's BEGIN, ENDs or ADD when its predicate holds; the
** values never change, so the decision taken at BEGIN holds for the ENDs.
** pi maps each input tuple to one output tuple with the same spans; an
** open input keeps its output in t->link until its final END.
**
** Over an alpha, both are fused into it (net.c's build): the alpha tests
** rtSigmaPred's predicate and calls rtPiMap as it makes a tuple and emits
** as the last of them, whose push then sees nothing; their flush still
** passes the marks.
*/
#include "rtInt.h"

typedef struct Sigma {
  RtOp op;
  RtExpr *pred;
} Sigma;

static int sigmaPush(RtOp *op, int port, int kind, RtTup *t) {
  Sigma *s = (Sigma *)op;
  if (rtEvalBoolQ(s->pred, RT_VAL(t))) return rtEmit(op, kind, t);
  t->flags |= RT_SETTLED; /* dropped for good: its ENDs change nothing */
  return 0;
}
const RtExpr *rtSigmaPred(const RtOp *op) { return ((const Sigma *)op)->pred; }

static void sigmaFlush(RtOp *op, TqTime now) {
  op->low = op->kid[0]->low;
  op->maxLow = op->kid[0]->maxLow;
  op->endLow = op->kid[0]->endLow;
}
static void sigmaFinish(RtOp *op, TqTime now) {}
static void sigmaFree(RtOp *op) { rtExprFree(((Sigma *)op)->pred); }
static const RtOpVt sigmaVt = {"sigma", sigmaPush, sigmaFlush, sigmaFinish, sigmaFree, NULL};

RtOp *rtOpSigma(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr *p = rtExprCompile(n->pred, &n->kid[0]->sch, msg);
  if (!p) return NULL;
  Sigma *s = (Sigma *)rtOpNew(net, &sigmaVt, sizeof(Sigma), n);
  s->pred = p;
  return &s->op;
}

/* ================================================================ pi */
/* A target list entry as the hot loop reads it: the one-step shapes with
** their leaves copied in and the arithmetic's operator in the kind (one
** switch, no pointer to follow); any other expression through rtEvalSlot. */
enum { PX_COL, PX_CONST, PX_ADD, PX_SUB, PX_MUL, PX_ARITH, PX_ADDK, PX_SUBK, PX_MULK, PX_GEN };
typedef struct PiX {
  uint8_t kind;      /* PX_* */
  uint8_t op;        /* PX_ARITH: OPB_* */
  uint8_t lc[2];     /* leaf is a constant (rtInt.h's RtExpr.lc) */
  int32_t li[2];     /* leaf's column (PX_COL: the column) */
  int64_t lk[2];     /* leaf's constant (PX_CONST: the constant) */
  const RtExpr *e;   /* PX_GEN: the expression */
} PiX;

typedef struct Pi {
  RtOp op;
  int n;
  RtExpr **e;
  PiX *x;            /* e as the hot loop reads it */
  int64_t *row;      /* an event result's row, made here (piEvent: n values) */
} Pi;

static inline int64_t pxLeaf(const PiX *x, int i, const int64_t *v) { return x->lc[i] ? x->lk[i] : v[x->li[i]]; }
__attribute__((always_inline)) static inline int64_t pxEval(const PiX *x, const int64_t *v) {
  switch (x->kind) {
    case PX_COL: return v[x->li[0]];
    case PX_CONST: return x->lk[0];
    case PX_ADD: return rtArith(OPB_ADD, pxLeaf(x, 0, v), pxLeaf(x, 1, v));
    case PX_SUB: return rtArith(OPB_SUB, pxLeaf(x, 0, v), pxLeaf(x, 1, v));
    case PX_MUL: return rtArith(OPB_MUL, pxLeaf(x, 0, v), pxLeaf(x, 1, v));
    case PX_ARITH: return rtArith(x->op, pxLeaf(x, 0, v), pxLeaf(x, 1, v));
    /* a column and a constant (most arithmetic in a target list) */
    case PX_ADDK: return rtArith(OPB_ADD, v[x->li[0]], x->lk[1]);
    case PX_SUBK: return rtArith(OPB_SUB, v[x->li[0]], x->lk[1]);
    case PX_MULK: return rtArith(OPB_MUL, v[x->li[0]], x->lk[1]);
    default: return rtEvalSlot(x->e, v);
  }
}

static PiX pxOf(const RtExpr *e) {
  PiX x = {.kind = PX_GEN, .e = e};
  if (e->fast == RX_COL) {
    x.kind = PX_COL;
    x.li[0] = e->idx;
  } else if (e->fast == RX_CONST) {
    x.kind = PX_CONST;
    x.lk[0] = e->ival;
  } else if (e->fast == RX_ARITH) {
    x.kind = e->op == OPB_ADD ? PX_ADD : e->op == OPB_SUB ? PX_SUB : e->op == OPB_MUL ? PX_MUL : PX_ARITH;
    x.op = e->op;
    for (int i = 0; i < 2; i++) {
      x.lc[i] = e->lc[i];
      x.li[i] = e->li[i];
      x.lk[i] = e->lk[i];
    }
    if (!x.lc[0] && x.lc[1] && x.kind != PX_ARITH) x.kind = x.kind == PX_ADD ? PX_ADDK : x.kind == PX_SUB ? PX_SUBK : PX_MULK;
  }
  return x;
}

static void piFill(Pi *p, RtTup *out, const RtTup *in) {
  rtWordsCopy(out->d, in->d, 2 * in->nspan);
  out->nopen = in->nopen;
}

void rtPiMap(const RtOp *op, const int64_t *v, int64_t *out) {
  const Pi *p = (const Pi *)op;
  const PiX *x = p->x; /* (locals: the stores to out may not alias them) */
  for (int i = 0, n = p->n; i < n; i++) out[i] = pxEval(&x[i], v);
}

/* An event result's row: the values v at mapped, to the sink, no tuple. */
static int piEvent(Pi *p, TqTime at, const int64_t *v) {
  rtPiMap(&p->op, v, p->row);
  return rtEmitEvent(&p->op, at, p->row);
}

static int piPush(RtOp *op, int port, int kind, RtTup *t) {
  Pi *p = (Pi *)op;
  RtTup *out;
  int rc;
  switch (kind) {
    case RT_ADD:
      if (t->nspan == 1 && op->parent && rtSinkTakesEvents(op->parent)) return piEvent(p, RT_FROM(t, 0), RT_VAL(t));
      /* fall through */
    case RT_BEGIN:
      out = rtTupAlloc(t->nspan, p->n);
      piFill(p, out, t);
      {
        int64_t *o = RT_VAL(out);
        const int64_t *v = RT_VAL(t);
        for (int i = 0; i < p->n; i++) o[i] = pxEval(&p->x[i], v);
      }
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
  free(p->x);
  free(p->row);
}
static const RtOpVt piVt = {"pi", piPush, sigmaFlush, sigmaFinish, piFree, NULL};

int rtPiTakesEvents(const RtOp *op) { return op->vt == &piVt && op->parent && rtSinkTakesEvents(op->parent); }

int rtPiEvent(RtOp *kid, TqTime at, const int64_t *v) {
  rtCheckEventMarks(kid, at);
  rtEmitCount(kid);
  return piEvent((Pi *)kid->parent, at, v);
}

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
  p->x = tqCalloc((size_t)(n->npi ? n->npi : 1), sizeof(PiX));
  for (int i = 0; i < n->npi; i++) p->x[i] = pxOf(e[i]);
  p->row = tqMalloc(sizeof(int64_t) * (size_t)(n->npi ? n->npi : 1));
  return &p->op;
}
