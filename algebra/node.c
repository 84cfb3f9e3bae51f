/*
** node.c - catalog look-ups, algebra expressions and node constructors
** with their schema computation (see algebra.h).
**
** Schemas: an alpha or source over relation R with tuple variable V has the
** columns V.a for each attribute a of R and one time component V (an event
** for event relations and for sampled relations, whose samples are events).
** A product concatenates columns and time components; pi replaces the
** columns and keeps the time; piT replaces all time components by one.
*/
#include <string.h>
#include <strings.h>

#include "algebra.h"

/* ================================================================ types */

int algTypeEq(AlgType a, AlgType b) {
  if (a.kind != b.kind) return 0;
  if (a.kind == TY_ENUM) return a.en == b.en;
  if (a.kind == TY_ENTITY) return a.ent == b.ent;
  return 1;
}

const char *algTypeName(AlgType t, char *buf, size_t n) {
  switch (t.kind) {
    case TY_INT: snprintf(buf, n, "int"); break;
    case TY_FLOAT: snprintf(buf, n, "float"); break;
    case TY_STRING: snprintf(buf, n, "string"); break;
    case TY_ENUM: snprintf(buf, n, "enum"); break;
    case TY_ENTITY: snprintf(buf, n, "%s", t.ent ? t.ent->name : "entity"); break;
    case TY_BOOL: snprintf(buf, n, "predicate"); break;
    case TY_TIME: snprintf(buf, n, "time"); break;
    default: snprintf(buf, n, "none"); break;
  }
  return buf;
}

/* ================================================================ catalog */

/* The index key of a name: its case-folded hash. */
static uint64_t nameKey(const char *name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ (uint64_t)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p)) * 0x100000001b3ULL;
  return tqHash64(h) | 2;
}

/* The name of the kind's element i. */
static const char *nameOf(const AlgCatalog *c, int kind, int i) {
  switch (kind) {
    case 0: return ((AlgEntity *)c->entities.v[i])->name;
    case 1: return ((AlgRel *)c->rels.v[i])->name;
    default: return ((AlgDerived *)c->derived.v[i])->name;
  }
}

/* The first element of the kind called name (case-insensitive), or NULL.
** The index (a cache: the catalog is logically unchanged) first takes in
** what was appended since; a hash shared by two names falls back to the
** scan. */
static void *catFind(const AlgCatalog *cc, int kind, const char *name) {
  AlgCatalog *c = (AlgCatalog *)cc;
  const TqVec *v = kind == 0 ? &c->entities : kind == 1 ? &c->rels : &c->derived;
  TqMap *m = &c->byName[kind];
  for (; c->indexed[kind] < v->n; c->indexed[kind]++) { /* value: index + 1 */
    uint64_t k = nameKey(nameOf(c, kind, c->indexed[kind]));
    if (!tqMapGet(m, k)) tqMapPut(m, k, (void *)(intptr_t)(c->indexed[kind] + 1));
  }
  intptr_t at = (intptr_t)tqMapGet(m, nameKey(name));
  if (!at) return NULL;
  if (!strcasecmp(nameOf(c, kind, (int)at - 1), name)) return v->v[at - 1];
  for (int i = 0; i < v->n; i++) /* (two names, one hash) */
    if (!strcasecmp(nameOf(c, kind, i), name)) return v->v[i];
  return NULL;
}

AlgEntity *algCatEntity(const AlgCatalog *c, const char *name) { return catFind(c, 0, name); }
AlgRel *algCatRel(const AlgCatalog *c, const char *name) { return catFind(c, 1, name); }
AlgDerived *algCatDerived(const AlgCatalog *c, const char *name) { return catFind(c, 2, name); }

void algCatFree(AlgCatalog *c) {
  tqVecFree(&c->entities);
  tqVecFree(&c->rels);
  tqVecFree(&c->derived);
  for (int k = 0; k < 3; k++) tqMapFree(&c->byName[k]);
  c->indexed[0] = c->indexed[1] = c->indexed[2] = 0;
}
int algRelAttr(const AlgRel *r, const char *name) {
  for (int i = 0; i < r->nattr; i++)
    if (!strcasecmp(r->attr[i].name, name)) return i;
  return -1;
}
const char *algRoleName(int role) {
  switch (role) {
    case ROLE_PERFORMER: return "performer";
    case ROLE_INITIATOR: return "initiator";
    case ROLE_TARGET: return "target";
    default: return "none";
  }
}
const char *algModeName(int mode) {
  switch (mode) {
    case ALG_MODE_TRACED: return "traced";
    case ALG_MODE_SAMPLED: return "sampled";
    case ALG_MODE_DISABLE: return "disable traced";
    default: return "always";
  }
}

const char *algVariantName(AlgVariant v) {
  static const char *n[] = {"?", "T:P", "T:I", "T:T", "S:P", "S:T", "D:P", "D:I", "D:T"};
  return (int)v >= 1 && (int)v <= 8 ? n[v] : "?";
}

AlgVariant algVariantOf(const AlgRel *r) {
  int base = r->mode == ALG_MODE_SAMPLED ? 0 : r->mode == ALG_MODE_DISABLE ? 2 : 1;
  switch (base) {
    case 0: return r->flagRole == ROLE_TARGET ? AV_ST : AV_SP;
    case 1: return r->flagRole == ROLE_PERFORMER ? AV_TP : r->flagRole == ROLE_INITIATOR ? AV_TI : AV_TT;
    default: return r->flagRole == ROLE_PERFORMER ? AV_DP : r->flagRole == ROLE_INITIATOR ? AV_DI : AV_DT;
  }
}

/* ================================================================ expressions */

AlgExpr *algExprNew(TqArena *a, AlgExprKind k, AlgType t) {
  AlgExpr *e = tqArenaAlloc(a, sizeof *e);
  e->kind = k;
  e->type = t;
  return e;
}
AlgExpr *algExprCol(TqArena *a, const char *var, const char *name, AlgType t) {
  AlgExpr *e = algExprNew(a, AX_COL, t);
  e->var = var;
  e->name = name;
  return e;
}
AlgExpr *algExprBin(TqArena *a, AlgExprKind k, int op, AlgType t, AlgExpr *l, AlgExpr *r) {
  AlgExpr *e = algExprNew(a, k, t);
  e->op = op;
  e->a = l;
  e->b = r;
  return e;
}
AlgExpr *algExprCopy(TqArena *a, const AlgExpr *e) {
  if (!e) return NULL;
  AlgExpr *c = tqArenaAlloc(a, sizeof *c);
  *c = *e;
  c->a = algExprCopy(a, e->a);
  c->b = algExprCopy(a, e->b);
  return c;
}
static int strEqN(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return !strcasecmp(a, b);
}
int algExprEq(const AlgExpr *x, const AlgExpr *y) {
  if (!x || !y) return x == y;
  if (x->kind != y->kind || x->op != y->op || x->ival != y->ival || x->fval != y->fval) return 0;
  if (!strEqN(x->var, y->var) || !strEqN(x->name, y->name)) return 0;
  return algExprEq(x->a, y->a) && algExprEq(x->b, y->b);
}
void algExprVars(const AlgExpr *e, void (*f)(void *ctx, const char *var, int isTime), void *ctx) {
  if (!e) return;
  if (e->kind == AX_COL || e->kind == AX_AGG) f(ctx, e->var, 0);
  if (e->kind == AX_TVAR) f(ctx, e->var, 1);
  algExprVars(e->a, f, ctx);
  algExprVars(e->b, f, ctx);
}
void algExprRenameVar(AlgExpr *e, const char *from, const char *to) {
  if (!e) return;
  if ((e->kind == AX_COL || e->kind == AX_TVAR || e->kind == AX_AGG) && strEqN(e->var, from)) e->var = to;
  algExprRenameVar(e->a, from, to);
  algExprRenameVar(e->b, from, to);
}

/* ================================================================ schemas */

int algSchemaCol(const AlgSchema *s, const char *var, const char *name) {
  for (int i = 0; i < s->ncol; i++)
    if (strEqN(s->col[i].var, var) && !strcasecmp(s->col[i].name, name)) return i;
  return -1;
}
int algSchemaTvar(const AlgSchema *s, const char *var) {
  for (int i = 0; i < s->ntv; i++)
    if (strEqN(s->tv[i].var, var)) return i;
  return -1;
}

static void relSchema(TqArena *a, AlgSchema *s, const AlgRel *rel, const char *var, int isEvent) {
  s->ncol = rel->nattr;
  s->col = tqArenaAlloc(a, sizeof(AlgCol) * (size_t)(rel->nattr ? rel->nattr : 1));
  for (int i = 0; i < rel->nattr; i++) {
    s->col[i].var = var;
    s->col[i].name = rel->attr[i].name;
    s->col[i].type = rel->attr[i].type;
  }
  s->ntv = 1;
  s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
  s->tv[0].var = var;
  s->tv[0].isEvent = isEvent;
}

void algSchemaCompute(TqArena *a, AlgNode *n) {
  AlgSchema *s = &n->sch;
  const AlgSchema *k0 = n->nkid > 0 ? &n->kid[0]->sch : NULL;
  switch (n->kind) {
    case ALG_SOURCE: relSchema(a, s, n->rel, n->var, n->rel->isEvent); break;
    case ALG_ALPHA: relSchema(a, s, n->rel, n->var, n->rel->isEvent || n->rel->mode == ALG_MODE_SAMPLED); break;
    case ALG_CONST:
      s->ncol = 1;
      s->col = tqArenaAlloc(a, sizeof(AlgCol));
      s->col[0].name = n->ktype.kind == TY_ENTITY ? n->ktype.ent->name : "value";
      s->col[0].type = n->ktype;
      s->ntv = 1;
      s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
      break;
    case ALG_CLOCK:
      s->ncol = 0;
      s->col = NULL;
      s->ntv = 1;
      s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
      s->tv[0].var = n->var;
      s->tv[0].isEvent = 1;
      break;
    case ALG_SIGMA:
    case ALG_SIGMAT: *s = *k0; break;
    case ALG_INTERSECT:
      /* the left's columns; an event when either side is one */
      *s = *k0;
      if (k0->ntv == 1 && !k0->tv[0].isEvent && n->kid[1]->sch.ntv == 1 && n->kid[1]->sch.tv[0].isEvent) {
        s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
        s->tv[0] = k0->tv[0];
        s->tv[0].isEvent = 1;
      }
      break;
    case ALG_PI:
      s->ncol = n->npi;
      s->col = tqArenaAlloc(a, sizeof(AlgCol) * (size_t)(n->npi ? n->npi : 1));
      for (int i = 0; i < n->npi; i++) {
        s->col[i].var = n->piVars ? n->piVars[i] : n->piVar;
        s->col[i].name = n->piName[i];
        s->col[i].type = n->pi[i]->type;
      }
      s->ntv = k0->ntv;
      s->tv = k0->tv;
      break;
    case ALG_PIT:
      s->ncol = k0->ncol;
      s->col = k0->col;
      s->ntv = 1;
      s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
      s->tv[0].var = n->tvOut;
      s->tv[0].isEvent = n->validAt;
      break;
    case ALG_PRODUCT:
    case ALG_OPRODUCT: {
      const AlgSchema *l = &n->kid[0]->sch, *r = &n->kid[1]->sch;
      s->ncol = l->ncol + r->ncol;
      s->col = tqArenaAlloc(a, sizeof(AlgCol) * (size_t)(s->ncol ? s->ncol : 1));
      TQ_MEMCPY(s->col, l->col, sizeof(AlgCol) * (size_t)l->ncol);
      TQ_MEMCPY(s->col + l->ncol, r->col, sizeof(AlgCol) * (size_t)r->ncol);
      s->ntv = l->ntv + r->ntv;
      s->tv = tqArenaAlloc(a, sizeof(AlgTvar) * (size_t)(s->ntv ? s->ntv : 1));
      TQ_MEMCPY(s->tv, l->tv, sizeof(AlgTvar) * (size_t)l->ntv);
      TQ_MEMCPY(s->tv + l->ntv, r->tv, sizeof(AlgTvar) * (size_t)r->ntv);
      break;
    }
    case ALG_AGG: {
      const AlgAggSpec *g = &n->agg[0];
      s->ncol = g->nby + 1;
      s->col = tqArenaAlloc(a, sizeof(AlgCol) * (size_t)s->ncol);
      for (int i = 0; i < g->nby; i++) {
        s->col[i].var = n->var;
        s->col[i].name = g->byName[i];
        s->col[i].type = g->by[i]->type;
      }
      s->col[g->nby].var = n->var;
      s->col[g->nby].name = "value";
      s->col[g->nby].type = g->type;
      s->ntv = 1;
      s->tv = tqArenaAlloc(a, sizeof(AlgTvar));
      s->tv[0].var = n->var;
      s->tv[0].isEvent = 0;
      break;
    }
  }
}

/* ================================================================ constructors */

static AlgNode *nodeNew(TqArena *a, AlgKind k, int nkid, AlgNode *k0, AlgNode *k1, AlgNode *k2) {
  AlgNode *n = tqArenaAlloc(a, sizeof *n);
  n->kind = k;
  n->nkid = nkid;
  n->kid[0] = k0;
  n->kid[1] = k1;
  n->kid[2] = k2;
  return n;
}

AlgNode *algSource(TqArena *a, const AlgRel *rel, const char *var) {
  AlgNode *n = nodeNew(a, ALG_SOURCE, 0, NULL, NULL, NULL);
  n->rel = rel;
  n->var = var;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algConst(TqArena *a, AlgType t, int64_t val) {
  AlgNode *n = nodeNew(a, ALG_CONST, 0, NULL, NULL, NULL);
  n->ktype = t;
  n->kval = val;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algClock(TqArena *a, int cn, const char *var) {
  AlgNode *n = nodeNew(a, ALG_CLOCK, 0, NULL, NULL, NULL);
  n->clockN = cn;
  n->var = var;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algAlpha(TqArena *a, const AlgRel *rel, AlgVariant v, const char *var, int nkid, AlgNode **kids) {
  AlgNode *n = nodeNew(a, ALG_ALPHA, nkid, nkid > 0 ? kids[0] : NULL, nkid > 1 ? kids[1] : NULL,
                       nkid > 2 ? kids[2] : NULL);
  n->rel = rel;
  n->variant = v;
  n->var = var;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algSigma(TqArena *a, AlgExpr *pred, AlgNode *k) {
  AlgNode *n = nodeNew(a, ALG_SIGMA, 1, k, NULL, NULL);
  n->pred = pred;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algSigmaT(TqArena *a, AlgExpr *pred, AlgNode *k) {
  AlgNode *n = nodeNew(a, ALG_SIGMAT, 1, k, NULL, NULL);
  n->pred = pred;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algPi(TqArena *a, int np, AlgExpr **e, const char **names, const char *var, AlgNode *k) {
  AlgNode *n = nodeNew(a, ALG_PI, 1, k, NULL, NULL);
  n->npi = np;
  n->pi = e;
  n->piName = names;
  n->piVar = var;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algPiT(TqArena *a, int at, AlgExpr *from, AlgExpr *to, const char *tvOut, AlgNode *k) {
  AlgNode *n = nodeNew(a, ALG_PIT, 1, k, NULL, NULL);
  n->validAt = at;
  n->vfrom = from;
  n->vto = to;
  n->tvOut = tvOut;
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algProduct(TqArena *a, AlgKind kind, AlgNode *l, AlgNode *r) {
  AlgNode *n = nodeNew(a, kind, 2, l, r, NULL);
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algIntersect(TqArena *a, AlgNode *l, AlgNode *r) {
  AlgNode *n = nodeNew(a, ALG_INTERSECT, 2, l, r, NULL);
  algSchemaCompute(a, n);
  return n;
}
AlgNode *algAgg(TqArena *a, AlgAggSpec *spec, const char *var, AlgNode *inner) {
  AlgNode *n = nodeNew(a, ALG_AGG, 1, inner, NULL, NULL);
  n->nagg = 1;
  n->agg = spec;
  n->var = var;
  algSchemaCompute(a, n);
  return n;
}

AlgNode *algNodeCopy(TqArena *a, const AlgNode *n) {
  if (!n) return NULL;
  AlgNode *c = tqArenaAlloc(a, sizeof *c);
  *c = *n;
  for (int i = 0; i < n->nkid; i++) c->kid[i] = algNodeCopy(a, n->kid[i]);
  c->pred = algExprCopy(a, n->pred);
  c->vfrom = algExprCopy(a, n->vfrom);
  c->vto = algExprCopy(a, n->vto);
  if (n->npi) {
    c->pi = tqArenaAlloc(a, sizeof(AlgExpr *) * (size_t)n->npi);
    c->piName = tqArenaAlloc(a, sizeof(char *) * (size_t)n->npi);
    if (n->piVars) c->piVars = tqArenaAlloc(a, sizeof(char *) * (size_t)n->npi);
    for (int i = 0; i < n->npi; i++) {
      c->pi[i] = algExprCopy(a, n->pi[i]);
      c->piName[i] = n->piName[i];
      if (n->piVars) c->piVars[i] = n->piVars[i];
    }
  }
  if (n->nkey) {
    c->keyL = tqArenaAlloc(a, sizeof(AlgExpr *) * (size_t)n->nkey);
    c->keyR = tqArenaAlloc(a, sizeof(AlgExpr *) * (size_t)n->nkey);
    for (int i = 0; i < n->nkey; i++) {
      c->keyL[i] = algExprCopy(a, n->keyL[i]);
      c->keyR[i] = algExprCopy(a, n->keyR[i]);
    }
  }
  c->vclip = algExprCopy(a, n->vclip);
  c->spred = algExprCopy(a, n->spred);
  c->apred = algExprCopy(a, n->apred);
  if (n->nagg) {
    c->agg = tqArenaAlloc(a, sizeof(AlgAggSpec));
    AlgAggSpec *d = c->agg;
    const AlgAggSpec *g = n->agg;
    *d = *g;
    d->arg = algExprCopy(a, g->arg);
    d->where = algExprCopy(a, g->where);
    d->when = algExprCopy(a, g->when);
    if (g->nby) {
      d->by = tqArenaAlloc(a, sizeof(AlgExpr *) * (size_t)g->nby);
      for (int j = 0; j < g->nby; j++) d->by[j] = algExprCopy(a, g->by[j]);
    }
  }
  /* schema arrays are shared until recomputed */
  return c;
}

/* Renames in node fields; schemas are recomputed bottom-up afterwards. */
static void renameRec(TqArena *a, AlgNode *n, const char *from, const char *to) {
  for (int i = 0; i < n->nkid; i++) renameRec(a, n->kid[i], from, to);
  if (strEqN(n->var, from)) n->var = to;
  if (strEqN(n->piVar, from)) n->piVar = to;
  for (int i = 0; n->piVars && i < n->npi; i++)
    if (strEqN(n->piVars[i], from)) n->piVars[i] = to;
  if (strEqN(n->tvOut, from)) n->tvOut = to;
  algExprRenameVar(n->pred, from, to);
  algExprRenameVar(n->vfrom, from, to);
  algExprRenameVar(n->vto, from, to);
  for (int i = 0; i < n->npi; i++) algExprRenameVar(n->pi[i], from, to);
  for (int i = 0; i < n->nkey; i++) {
    algExprRenameVar(n->keyL[i], from, to);
    algExprRenameVar(n->keyR[i], from, to);
  }
  if (strEqN(n->ovL, from)) n->ovL = to;
  if (strEqN(n->ovR, from)) n->ovR = to;
  algExprRenameVar(n->vclip, from, to);
  algExprRenameVar(n->spred, from, to);
  algExprRenameVar(n->apred, from, to);
  for (int i = 0; i < n->nagg; i++) {
    algExprRenameVar(n->agg[i].arg, from, to);
    algExprRenameVar(n->agg[i].where, from, to);
    algExprRenameVar(n->agg[i].when, from, to);
    for (int j = 0; j < n->agg[i].nby; j++) algExprRenameVar(n->agg[i].by[j], from, to);
  }
  algSchemaCompute(a, n);
}
void algRenameVar(TqArena *a, AlgNode *n, const char *from, const char *to) { renameRec(a, n, from, to); }
