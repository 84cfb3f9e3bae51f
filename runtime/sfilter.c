/*
** sfilter.c - the filter of a sensor (rule SF, algebra/optimize.c): what a
** packet of a relation must satisfy to be of use to any query, built once
** the network is, from the sensor predicates of the relation's alphas.
**
** The filter is the disjunction of the alphas' predicates, and there is
** none as soon as one used alpha has no predicate (it wants every packet).
** It is also given to producers as conditions in disjunctive normal form
** (include/tqmon_pm.h, g->sensor_filter): at most TQ_PM_MAX_CONDS of them,
** else none (a producer that writes every packet is never wrong: the
** engine and the selections above the alphas check again).  Invariant: a
** packet that fails the filter is dropped by a selection directly above
** every alpha of its relation, so not writing it changes no answer.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"
#include "../include/tqmon_pm.h"

/* ================================================================ evaluation */

static int64_t fBits(double d) {
  int64_t v;
  memcpy(&v, &d, sizeof v);
  return v;
}
static double fOf(int64_t v, int kind) {
  if (kind != TY_FLOAT) return (double)v;
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* The value of a column or constant of a sensor predicate. */
static int64_t val(const AlgRel *r, const AlgExpr *e, const int64_t *vals) {
  if (e->kind == AX_CONST) return e->type.kind == TY_FLOAT ? fBits(e->fval) : e->ival;
  int a = algRelAttr(r, e->name);
  return a >= 0 ? vals[a] : 0;
}

static int holds(const AlgRel *r, const AlgExpr *e, const int64_t *vals) {
  switch (e->kind) {
    case AX_AND: return holds(r, e->a, vals) && holds(r, e->b, vals);
    case AX_OR: return holds(r, e->a, vals) || holds(r, e->b, vals);
    case AX_NOT: return !holds(r, e->a, vals);
    case AX_CMP: {
      int64_t a = val(r, e->a, vals), b = val(r, e->b, vals);
      int c;
      if (e->a->type.kind == TY_FLOAT || e->b->type.kind == TY_FLOAT) {
        double x = fOf(a, e->a->type.kind), y = fOf(b, e->b->type.kind);
        c = x < y ? -1 : x > y ? 1 : 0;
      } else {
        c = a < b ? -1 : a > b ? 1 : 0;
      }
      switch (e->op) {
        case OPB_EQ: return c == 0;
        case OPB_NE: return c != 0;
        case OPB_LT: return c < 0;
        case OPB_LE: return c <= 0;
        case OPB_GT: return c > 0;
        default: return c >= 0;
      }
    }
    default: return 1; /* not a sensor predicate: never drops */
  }
}

int rtSensorPass(const RtSensor *s, const int64_t *vals) { return !s->filter || holds(s->rel, s->filter, vals); }

/* ================================================================ normal form */

typedef struct Dnf {
  tq_pm_cond c[TQ_PM_MAX_CONDS];
  int n;       /* conditions */
  int ngroup;  /* groups */
  int over;    /* did not fit */
} Dnf;

static int flipOp(int op) { /* a op b  ==  b flip(op) a */
  switch (op) {
    case OPB_LT: return OPB_GT;
    case OPB_LE: return OPB_GE;
    case OPB_GT: return OPB_LT;
    case OPB_GE: return OPB_LE;
    default: return op;
  }
}
static int negOp(int op) {
  switch (op) {
    case OPB_EQ: return OPB_NE;
    case OPB_NE: return OPB_EQ;
    case OPB_LT: return OPB_GE;
    case OPB_LE: return OPB_GT;
    case OPB_GT: return OPB_LE;
    default: return OPB_LT;
  }
}
static int pmOp(int op) {
  switch (op) {
    case OPB_EQ: return TQ_PM_EQ;
    case OPB_NE: return TQ_PM_NE;
    case OPB_LT: return TQ_PM_LT;
    case OPB_LE: return TQ_PM_LE;
    case OPB_GT: return TQ_PM_GT;
    default: return TQ_PM_GE;
  }
}
static int pmType(int kind) {
  switch (kind) {
    case TY_INT: return TQ_TY_INT;
    case TY_FLOAT: return TQ_TY_FLOAT;
    case TY_STRING: return TQ_TY_STRING;
    case TY_ENUM: return TQ_TY_ENUM;
    default: return TQ_TY_ENTITY;
  }
}

/* The condition of comparison e (negated when neg). */
static tq_pm_cond cond(const AlgRel *r, const AlgExpr *e, int neg) {
  const AlgExpr *col = e->a, *k = e->b;
  int op = e->op;
  if (col->kind != AX_COL) {
    col = e->b;
    k = e->a;
    op = flipOp(op);
  }
  if (neg) op = negOp(op);
  tq_pm_cond c = {0};
  c.attr = algRelAttr(r, col->name);
  c.op = pmOp(op);
  c.type = pmType(col->type.kind);
  c.fcmp = col->type.kind == TY_FLOAT || k->type.kind == TY_FLOAT;
  c.val = k->ival;
  c.fval = k->type.kind == TY_FLOAT ? k->fval : (double)k->ival;
  if (k->type.kind == TY_ENTITY || k->type.kind == TY_STRING) c.text = tqSymName((int32_t)k->ival);
  return c;
}

/* Sets of conjunctions: d's groups [g0, ngroup) are the normal form of e
** (negated when neg).  Appends; marks over when it does not fit. */
static void dnf(const AlgRel *r, const AlgExpr *e, int neg, Dnf *d);

/* The product of the groups [a0, a1) and [b0, b1) of d, appended. */
static void cross(Dnf *d, int a0, int a1, int b0, int b1) {
  int first = d->n;
  int g = d->ngroup;
  for (int i = a0; i < a1; i++) {
    for (int j = b0; j < b1; j++) {
      for (int k = 0; k < first; k++) {
        if (d->c[k].group != i && d->c[k].group != j) continue;
        if (d->n >= TQ_PM_MAX_CONDS) {
          d->over = 1;
          return;
        }
        d->c[d->n] = d->c[k];
        d->c[d->n++].group = g;
      }
      g++;
    }
  }
  d->ngroup = g;
}

/* Drops the groups [g0, g1) of d and renumbers the ones after them. */
static void dropGroups(Dnf *d, int g0, int g1) {
  int w = 0;
  for (int k = 0; k < d->n; k++) {
    if (d->c[k].group >= g0 && d->c[k].group < g1) continue;
    d->c[w] = d->c[k];
    if (d->c[w].group >= g1) d->c[w].group -= g1 - g0;
    w++;
  }
  d->n = w;
  d->ngroup -= g1 - g0;
}

static void dnf(const AlgRel *r, const AlgExpr *e, int neg, Dnf *d) {
  if (d->over) return;
  int isOr = e->kind == AX_OR, isAnd = e->kind == AX_AND;
  if (e->kind == AX_NOT) {
    dnf(r, e->a, !neg, d);
    return;
  }
  if (e->kind == AX_CMP) {
    if (d->n >= TQ_PM_MAX_CONDS) {
      d->over = 1;
      return;
    }
    d->c[d->n] = cond(r, e, neg);
    d->c[d->n++].group = d->ngroup++;
    return;
  }
  if (neg) { /* De Morgan */
    isOr = e->kind == AX_AND;
    isAnd = e->kind == AX_OR;
  }
  if (isOr) {
    dnf(r, e->a, neg, d);
    dnf(r, e->b, neg, d);
    return;
  }
  if (!isAnd) {
    d->over = 1;
    return;
  }
  int a0 = d->ngroup;
  dnf(r, e->a, neg, d);
  int b0 = d->ngroup;
  dnf(r, e->b, neg, d);
  int b1 = d->ngroup;
  if (d->over) return;
  cross(d, a0, b0, b0, b1);
  if (d->over) return;
  dropGroups(d, a0, b1);
}

/* ================================================================ building */

void rtSensorFiltersBuild(RtNet *net) {
  for (int i = 0; i < net->nsensor; i++) {
    RtSensor *s = &net->sensor[i];
    const AlgRel *r = s->rel;
    if (!s->used || !s->alphas.n || r->entity || r->deltaOf || r->delta ||
        (r->mode != ALG_MODE_TRACED && r->mode != ALG_MODE_DISABLE))
      continue;
    AlgExpr *f = NULL;
    int all = 1;
    for (int k = 0; k < s->alphas.n && all; k++) {
      const RtOp *op = s->alphas.v[k];
      const AlgExpr *p = op->node ? op->node->spred : NULL;
      if (!p) {
        all = 0;
        break;
      }
      f = f ? algExprBin(net->prog->arena, AX_OR, 0, p->type, f, (AlgExpr *)p) : (AlgExpr *)p;
    }
    if (!all || !f) continue;
    s->filter = f;
    Dnf d;
    memset(&d, 0, sizeof d);
    dnf(r, f, 0, &d);
    if (d.over || !d.n) continue;
    /* sorted by group (tq_pm_conds_hold walks groups in order) */
    s->conds = tqCalloc((size_t)d.n, sizeof(tq_pm_cond));
    int w = 0;
    for (int g = 0; g < d.ngroup; g++)
      for (int k = 0; k < d.n; k++)
        if (d.c[k].group == g) s->conds[w++] = d.c[k];
    s->nconds = w;
  }
}
