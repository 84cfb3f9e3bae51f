/*
** sqlgen.c - TQuel retrieve statements translated into SQL over the stored
** primitive relations: retrospective analysis of a store written by
** `tqmon load`, and the independent oracle the engine is tested against.
**
** It works from the statement's typed pieces (CpSem), not from the algebra,
** and computes TQuel's semantics directly in SQL:
**  - each tuple variable ranges over a view of its relation as the query
**    sees it through the default enabling: a traced event or interval only
**    where its flag entity was alive when the sensor fired (at the begin, or
**    at the end for an interval), a sampled relation as its samples at each
**    base Clock tick while the performer (and for S:T the target) was alive;
**  - temporal expressions become (begin, end, non-empty) triples whose kind
**    (instant or interval) is known statically; an event is the span
**    [t, t+1) in predicates and intersections;
**  - omitted when/valid clauses get TQuel's defaults; results are DISTINCT;
**  - an aggregate is a view of constant periods per group, computed from the
**    change points of its contributions (gaps-and-islands over LEAD/LAG).
** Open ends are the sentinel FOREVER inside and NULL in the result.  Enums
** are their declaration indexes inside (so they order as declared) and
** their names in the result.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compilerInt.h"

#define F_STR "9223372036854775806"  /* TQ_FOREVER */
/* The longest SQL text a query may translate into: the golden cases need
** at most some 25 KB; a chain of temporal operators at the front end's
** depth limit would grow to tens of MB, which SQLite parses for a minute
** and then refuses anyway. */
#define SQL_MAX_TEXT (1 << 20)
#define B_STR "-9223372036854775807" /* TQ_BEGINNING */

typedef struct Sg {
  const CpProgram *p;
  const CpSqlParams *par;
  TqBuf with;      /* CTE definitions */
  int ncte;        /* CTEs so far */
  int needTicks;   /* base clock ticks needed */
  TqBuf *err;
  int bad;
  TqArena *a;
  size_t made;     /* bytes of SQL text formatted so far (pieces included) */
} Sg;

/* A temporal value in SQL: its kind is static. */
enum { K_INSTANT = 1, K_INTERVAL };
typedef struct Tv {
  int kind;
  const char *b, *e, *ne; /* begin, end (= begin for an instant), non-empty condition */
} Tv;

/* The aliases visible to expressions: tuple variable -> kind of its time. */
typedef struct Scope {
  const char *var[80];
  int event[80];
  int n;
} Scope;

static void fail(Sg *g, const char *msg) {
  if (!g->bad) tqBufPuts(g->err, msg);
  g->bad = 1;
}

static const char *pf(Sg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *pf(Sg *g, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n >= 0) g->made += (size_t)n;
  if (n < 0 || n > SQL_MAX_TEXT || g->made > 16 * (size_t)SQL_MAX_TEXT) { /* the translation says so instead */
    va_end(aq);
    fail(g, "the SQL text of this query would be longer than 1 MB (a shorter chain of operators translates)");
    return "0";
  }
  char *s = tqArenaAlloc(g->a, (size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return s;
}

static const char *qid(Sg *g, const char *s) {
  TqBuf b = {0};
  tqBufPuts(&b, "\"");
  for (; *s; s++) tqBufAdd(&b, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
  tqBufPuts(&b, "\"");
  const char *r = tqArenaStrdup(g->a, b.s);
  tqBufFree(&b);
  return r;
}

static const char *qstr(Sg *g, const char *s) {
  TqBuf b = {0};
  tqBufPuts(&b, "'");
  for (; *s; s++) tqBufAdd(&b, *s == '\'' ? "''" : s, *s == '\'' ? 2 : 1);
  tqBufPuts(&b, "'");
  const char *r = tqArenaStrdup(g->a, b.s);
  tqBufFree(&b);
  return r;
}

/* x + d, saturating like the engine: beginning and forever stay where they
** are, and nothing crosses them.  x is named three times; a long x (a
** shift of a shift...) is named once, through a subquery, so that the SQL
** text grows with the query, not exponentially. */
static const char *addT(Sg *g, const char *x, TqTime d) {
  if (d == 0) return x;
  const char *v = strlen(x) > 64 ? "v" : x;
  const char *r;
  if (d > 0)
    r = pf(g, "(CASE WHEN (%s) <= " B_STR " THEN " B_STR " WHEN (%s) >= " F_STR " - %lld THEN " F_STR " ELSE (%s) + %lld END)", v, v,
           (long long)d, v, (long long)d);
  else
    r = pf(g, "(CASE WHEN (%s) >= " F_STR " THEN " F_STR " WHEN (%s) <= " B_STR " + %lld THEN " B_STR " ELSE (%s) - %lld END)", v, v,
           (long long)-d, v, (long long)-d);
  return v == x ? r : pf(g, "(SELECT %s FROM (SELECT %s AS v))", r, x);
}

/* enum column (an index inside) shown by name */
static const char *enumName(Sg *g, const AlgEnum *en, const char *x) {
  TqBuf b = {0};
  tqBufPrintf(&b, "(CASE %s", x);
  for (int i = 0; i < en->n; i++) tqBufPrintf(&b, " WHEN %d THEN %s", i, qstr(g, en->names[i]));
  tqBufPuts(&b, " END)");
  const char *r = tqArenaStrdup(g->a, b.s);
  tqBufFree(&b);
  return r;
}
static const char *enumIndex(Sg *g, const AlgEnum *en, const char *x) {
  TqBuf b = {0};
  tqBufPrintf(&b, "(CASE %s", x);
  for (int i = 0; i < en->n; i++) tqBufPrintf(&b, " WHEN %s THEN %d", qstr(g, en->names[i]), i);
  tqBufPuts(&b, " END)");
  const char *r = tqArenaStrdup(g->a, b.s);
  tqBufFree(&b);
  return r;
}

/* ================================================================ views */

static const char *newCte(Sg *g, const char *prefix, const char *body) {
  const char *name = pf(g, "%s%d", prefix, ++g->ncte);
  tqBufPrintf(&g->with, "%s%s AS (%s)", g->with.n ? ",\n " : "", name, body);
  return name;
}

static const char *ticks(Sg *g, TqTime period) {
  TqTime first = g->par->first, last = g->par->last;
  TqTime q = first / period;
  if (q * period < first) q++;
  TqTime t0 = q * period;
  const char *body = pf(g, "SELECT %lld AS t WHERE %lld <= %lld UNION ALL SELECT t + %lld FROM %s WHERE t + %lld <= %lld",
                        (long long)t0, (long long)t0, (long long)last, (long long)period, "%SELF%", (long long)period,
                        (long long)last);
  /* recursive CTE: refer to itself by name */
  const char *name = pf(g, "tick%d", ++g->ncte);
  char *b = tqArenaStrdup(g->a, body);
  char *self = strstr(b, "%SELF%");
  TqBuf bb = {0};
  tqBufAdd(&bb, b, (size_t)(self - b));
  tqBufPuts(&bb, name);
  tqBufPuts(&bb, self + 6);
  tqBufPrintf(&g->with, "%s%s(t) AS (%s)", g->with.n ? ",\n " : "", name, bb.s);
  tqBufFree(&bb);
  return name;
}

/* "the entity e of relation E is alive at t" */
static const char *alive(Sg *g, const AlgEntity *ent, const char *e, const char *t) {
  return pf(g, "EXISTS (SELECT 1 FROM %s z WHERE z.%s = %s AND z.valid_from <= %s AND %s < COALESCE(z.valid_to, " F_STR "))",
            qid(g, ent->rel->name), qid(g, ent->rel->attr[0].name), e, t, t);
}

/* The attribute list of relation r read from alias x, enums as indexes. */
static const char *attrList(Sg *g, const AlgAttr *at, int n, const char *x) {
  TqBuf b = {0};
  for (int i = 0; i < n; i++) {
    const char *c = pf(g, "%s.%s", x, qid(g, at[i].name));
    if (at[i].type.kind == TY_ENUM) c = enumIndex(g, at[i].type.en, c);
    tqBufPrintf(&b, "%s AS %s, ", c, qid(g, at[i].name));
  }
  const char *r = tqArenaStrdup(g->a, b.s ? b.s : "");
  tqBufFree(&b);
  return r;
}

static const char *querySql(Sg *g, const CpQuery *q, int internal);

/* The view of a tuple variable's relation: a CTE name. */
static const char *viewOf(Sg *g, const CpVarInfo *v) {
  if (v->clockN) {
    const char *tk = ticks(g, g->p->cat.tick * (TqTime)v->clockN);
    return newCte(g, "clock", pf(g, "SELECT t AS valid_at FROM %s", tk));
  }
  if (v->derived) {
    const CpQuery *dq = g->p->queries.v[v->derived->query];
    return newCte(g, "derived", querySql(g, dq, 1));
  }
  const AlgRel *r = v->rel;
  if (r->deltaOf) {
    fail(g, pf(g, "%s is a delta relation, computed while the run samples %s; a store holds no deltas", r->name,
               r->deltaOf->name));
    return "x";
  }
  const char *cols = attrList(g, r->attr, r->nattr, "x");
  const char *tab = qid(g, r->name);
  if (r->entity)
    return newCte(g, "entity", pf(g, "SELECT %sx.valid_from AS valid_from, COALESCE(x.valid_to, " F_STR ") AS valid_to FROM %s x", cols, tab));
  const AlgEntity *flagEnt = r->attr[r->flagAttr].type.ent;
  const char *flag = pf(g, "x.%s", qid(g, r->attr[r->flagAttr].name));
  if (r->mode == ALG_MODE_SAMPLED) {
    const char *tk = ticks(g, g->p->cat.tick);
    const char *cond;
    const char *who = r->isEvent ? "x.valid_at = k.t" : "x.valid_from <= k.t AND k.t < COALESCE(x.valid_to, " F_STR ")";
    cond = pf(g, "%s AND %s", who, alive(g, flagEnt, flag, "k.t"));
    if (r->flagRole == ROLE_TARGET) {
      const AlgEntity *pe = r->attr[r->performerAttr].type.ent;
      cond = pf(g, "%s AND %s", cond, alive(g, pe, pf(g, "x.%s", qid(g, r->attr[r->performerAttr].name)), "k.t"));
    }
    return newCte(g, "sampled", pf(g, "SELECT %sk.t AS valid_at FROM %s k, %s x WHERE %s", cols, tk, tab, cond));
  }
  if (r->isEvent)
    return newCte(g, "traced", pf(g, "SELECT %sx.valid_at AS valid_at FROM %s x WHERE %s", cols, tab, alive(g, flagEnt, flag, "x.valid_at")));
  return newCte(g, "traced",
                pf(g, "SELECT %sx.valid_from AS valid_from, COALESCE(x.valid_to, " F_STR ") AS valid_to FROM %s x WHERE %s OR "
                      "(x.valid_to IS NOT NULL AND %s)",
                   cols, tab, alive(g, flagEnt, flag, "x.valid_from"), alive(g, flagEnt, flag, "x.valid_to")));
}

/* ================================================================ expressions */

static const char *valueSql(Sg *g, const AlgExpr *e);

static const char *cmpOp(int op) {
  switch (op) {
    case OPB_EQ: return "=";
    case OPB_NE: return "<>";
    case OPB_LT: return "<";
    case OPB_LE: return "<=";
    case OPB_GT: return ">";
    default: return ">=";
  }
}

/* A chain of one associative operator (`a and b and c`, `a + b - c`,
** `a * b * c`: left-deep, as long as the query's condition) as one flat
** SQL expression: no nesting of parentheses per term, which SQLite's
** parser would have to stack.  Walks the left spine in a loop. */
static int chainOf(const AlgExpr *e, const AlgExpr *x) {
  if (x->kind != e->kind) return 0;
  if (x->kind != AX_ARITH) return 1;
  int add = e->op == OPB_ADD || e->op == OPB_SUB;
  return add ? x->op == OPB_ADD || x->op == OPB_SUB : x->op == OPB_MUL && e->op == OPB_MUL;
}
static const char *predSql(Sg *g, const Scope *s, const AlgExpr *e);
/* (terms are values, or temporal predicates in scope s when s is given) */
static const char *flatSql(Sg *g, const Scope *s, const AlgExpr *e) {
  int n = 0;
  const AlgExpr *x = e;
  for (; chainOf(e, x); x = x->a) n++;
  const AlgExpr **spine = tqMalloc(sizeof(AlgExpr *) * (size_t)n);
  x = e;
  for (int i = n - 1; i >= 0; i--, x = x->a) spine[i] = x;
  TqBuf b = {0};
  tqBufPrintf(&b, "(%s", s ? predSql(g, s, x) : valueSql(g, x)); /* the leftmost term */
  for (int i = 0; i < n; i++) {
    const AlgExpr *y = spine[i];
    const char *op = y->kind == AX_AND ? "AND" : y->kind == AX_OR ? "OR" : y->op == OPB_ADD ? "+" : y->op == OPB_SUB ? "-" : "*";
    tqBufPrintf(&b, " %s %s", op, s ? predSql(g, s, y->b) : valueSql(g, y->b));
  }
  tqBufPuts(&b, ")");
  free(spine);
  const char *r = tqArenaStrdup(g->a, b.s);
  tqBufFree(&b);
  return r;
}

/* The pattern of `like` (% and _, case-sensitive) as a GLOB pattern
** (case-sensitive, unlike SQL's LIKE): % is *, _ is ?, and the characters
** special to GLOB match themselves through a class ([*], [?], [[]). */
static const char *likeGlob(Sg *g, const AlgExpr *p) {
  if (p->kind == AX_CONST) {
    TqBuf b = {0};
    for (const char *c = tqSymName((int32_t)p->ival); *c; c++) {
      switch (*c) {
        case '%': tqBufPuts(&b, "*"); break;
        case '_': tqBufPuts(&b, "?"); break;
        case '*': tqBufPuts(&b, "[*]"); break;
        case '?': tqBufPuts(&b, "[?]"); break;
        case '[': tqBufPuts(&b, "[[]"); break;
        default: tqBufAdd(&b, c, 1); break;
      }
    }
    const char *r = qstr(g, b.s ? b.s : "");
    tqBufFree(&b);
    return r;
  }
  return pf(g, "replace(replace(replace(replace(replace(%s, '[', '[[]'), '*', '[*]'), '?', '[?]'), '%%', '*'), '_', '?')",
            valueSql(g, p));
}

static const char *valueSql(Sg *g, const AlgExpr *e) {
  switch (e->kind) {
    case AX_COL:
    case AX_AGG: return pf(g, "%s.%s", qid(g, e->var ? e->var : ""), qid(g, e->name));
    case AX_CONST:
      switch (e->type.kind) {
        case TY_ENTITY:
        case TY_STRING: return qstr(g, tqSymName((int32_t)e->ival));
        case TY_FLOAT: {
          char num[32];
          return pf(g, "%s", tqFloatFormat(num, sizeof num, e->fval));
        }
        default: return pf(g, "%lld", (long long)e->ival);
      }
    case AX_NEG: return pf(g, "(-%s)", valueSql(g, e->a));
    case AX_ARITH: {
      if (e->op != OPB_DIV) return flatSql(g, NULL, e);
      /* by zero: 0 (NULLIF names the divisor once) */
      const char *a = valueSql(g, e->a), *b = valueSql(g, e->b);
      if (e->type.kind == TY_FLOAT) return pf(g, "COALESCE(CAST(%s AS REAL) / NULLIF(%s, 0), 0.0)", a, b);
      return pf(g, "COALESCE((%s) / NULLIF(%s, 0), 0)", a, b);
    }
    case AX_CMP: return pf(g, "(%s %s %s)", valueSql(g, e->a), cmpOp(e->op), valueSql(g, e->b));
    case AX_AND:
    case AX_OR: return flatSql(g, NULL, e);
    case AX_NOT: {
      int odd = 1; /* not not x is x: no nesting for SQLite's parser */
      for (; e->a->kind == AX_NOT; e = e->a) odd = !odd;
      return odd ? pf(g, "(NOT %s)", valueSql(g, e->a)) : pf(g, "(%s <> 0)", valueSql(g, e->a));
    }
    case AX_LIKE: return pf(g, "(%s GLOB %s)", valueSql(g, e->a), likeGlob(g, e->b));
    case AX_CONCAT: return pf(g, "(%s || %s)", valueSql(g, e->a), valueSql(g, e->b));
    case AX_PREFIX: {
      const char *a = valueSql(g, e->a), *b = valueSql(g, e->b);
      if (e->op == 0) return pf(g, "substr(%s, 1, %s)", a, b);
      return pf(g, "(CASE WHEN instr(%s, %s) > 0 THEN substr(%s, 1, instr(%s, %s) - 1) ELSE %s END)", a, b, a, a, b, a);
    }
    default: fail(g, "unexpected expression in a value"); return "NULL";
  }
}

static int scopeEvent(const Scope *s, const char *var) {
  for (int i = 0; i < s->n; i++)
    if (!strcasecmp(s->var[i], var)) return s->event[i];
  return -1;
}

static const char *spanEnd(Sg *g, Tv x) { return x.kind == K_INSTANT ? addT(g, x.b, 1) : x.e; }

static Tv tvSql(Sg *g, const Scope *s, const AlgExpr *e) {
  Tv r = {K_INSTANT, "0", "0", "1"}, x, y;
  switch (e->kind) {
    case AX_TVAR: {
      const char *v = qid(g, e->var);
      int ev = scopeEvent(s, e->var);
      if (ev < 0) {
        fail(g, "temporal variable out of scope");
        return r;
      }
      if (ev) {
        r.b = r.e = pf(g, "%s.valid_at", v);
      } else {
        r.kind = K_INTERVAL;
        r.b = pf(g, "%s.valid_from", v);
        r.e = pf(g, "%s.valid_to", v);
      }
      return r;
    }
    case AX_TCONST: r.b = r.e = pf(g, "%lld", (long long)e->ival); return r;
    case AX_NOW: r.b = r.e = pf(g, "%lld", (long long)g->par->last); return r;
    case AX_BEGINOF:
    case AX_ENDOF:
      x = tvSql(g, s, e->a);
      r.b = r.e = e->kind == AX_BEGINOF ? x.b : x.e;
      r.ne = x.ne;
      return r;
    case AX_TSHIFT:
      x = tvSql(g, s, e->a);
      x.b = addT(g, x.b, e->ival);
      x.e = x.kind == K_INSTANT ? x.b : addT(g, x.e, e->ival);
      return x;
    case AX_OVERLAP:
    case AX_TOVERLAP: {
      x = tvSql(g, s, e->a);
      y = tvSql(g, s, e->b);
      const char *l = pf(g, "MAX(%s, %s)", x.b, y.b), *h = pf(g, "MIN(%s, %s)", spanEnd(g, x), spanEnd(g, y));
      r.ne = pf(g, "(%s AND %s AND %s < %s)", x.ne, y.ne, l, h);
      if (x.kind == K_INSTANT || y.kind == K_INSTANT) {
        r.kind = K_INSTANT;
        r.b = r.e = l;
      } else {
        r.kind = K_INTERVAL;
        r.b = l;
        r.e = h;
      }
      return r;
    }
    case AX_EXTEND: {
      x = tvSql(g, s, e->a);
      y = tvSql(g, s, e->b);
      r.kind = K_INTERVAL;
      /* from the earlier begin to the later end; empty when a side is, or
      ** when both are the same instant (with an interval side it is not:
      ** min begin < that side's end <= max end, so the SQL text need not
      ** name the ends again and grows linearly with a chain of extends) */
      r.b = pf(g, "MIN(%s, %s)", x.b, y.b);
      r.e = pf(g, "MAX(%s, %s)", x.e, y.e);
      if (x.kind == K_INSTANT && y.kind == K_INSTANT) r.ne = pf(g, "(%s AND %s AND %s < %s)", x.ne, y.ne, r.b, r.e);
      else r.ne = pf(g, "(%s AND %s)", x.ne, y.ne);
      return r;
    }
    default: fail(g, "unexpected temporal expression"); return r;
  }
}

/* A temporal predicate as an SQL condition. */
static const char *predSql(Sg *g, const Scope *s, const AlgExpr *e) {
  switch (e->kind) {
    case AX_AND:
    case AX_OR: return flatSql(g, s, e);
    case AX_NOT: {
      int odd = 1;
      for (; e->a->kind == AX_NOT; e = e->a) odd = !odd;
      return odd ? pf(g, "(NOT %s)", predSql(g, s, e->a)) : predSql(g, s, e->a);
    }
    case AX_CONST: return e->ival ? "1" : "0";
    case AX_TOVERLAP: return tvSql(g, s, e).ne;
    case AX_PRECEDE: {
      Tv x = tvSql(g, s, e->a), y = tvSql(g, s, e->b);
      return pf(g, "(%s AND %s AND %s <= %s)", x.ne, y.ne, spanEnd(g, x), y.b);
    }
    case AX_TEQUAL: {
      Tv x = tvSql(g, s, e->a), y = tvSql(g, s, e->b);
      if (x.kind != y.kind) return "0";
      return pf(g, "(%s AND %s AND %s = %s AND %s = %s)", x.ne, y.ne, x.b, y.b, x.e, y.e);
    }
    default: fail(g, "unexpected temporal predicate"); return "0";
  }
}

/* ================================================================ aggregates */

static const char *aggView(Sg *g, const CpAggInfo *ai) {
  const AlgAggSpec *sp = ai->spec;
  Scope s = {0};
  TqBuf b = {0}, from = {0};
  /* its own variables: one, or a join whose tuples are the combinations
  ** that overlap, valid over the intersection */
  AlgExpr *all = NULL;
  int ev = 0;
  for (int i = 0; i < ai->nlocal; i++) {
    const CpVarInfo *lv = &ai->locals[i];
    const char *v = viewOf(g, lv);
    const AlgRel *lr = lv->rel;
    int e1 = lv->clockN || (lr && (lr->isEvent || lr->mode == ALG_MODE_SAMPLED)) || (lv->derived && lv->derived->isEvent);
    s.var[s.n] = lv->var;
    s.event[s.n++] = e1;
    ev |= e1;
    tqBufPrintf(&from, "%s%s %s", i ? ", " : "", v, qid(g, lv->var));
    AlgExpr *tv = algExprNew(g->a, AX_TVAR, (AlgType){TY_TIME, NULL, NULL});
    tv->var = lv->var;
    all = all ? algExprBin(g->a, AX_OVERLAP, 0, (AlgType){TY_TIME, NULL, NULL}, all, tv) : tv;
  }
  Tv span = tvSql(g, &s, all);
  /* contributions */
  tqBufPuts(&b, "SELECT ");
  for (int i = 0; i < sp->nby; i++) tqBufPrintf(&b, "%s AS b%d, ", valueSql(g, sp->by[i]), i);
  const char *cfrom = span.b;
  const char *end = ev ? addT(g, cfrom, 1) : span.e;
  const char *to;
  /* over a sampled relation, `for each instant` counts a sample until the
  ** next request: a window of one sampling period */
  TqTime width = sp->window == WIN_EACH ? sp->width : sp->window == WIN_INSTANT && sp->sample ? sp->sample : 1;
  if (sp->window == WIN_EVER) to = F_STR;
  else if (sp->window == WIN_INSTANT && width > 1) /* the last samples hold past the end: open */
    to = pf(g, "(CASE WHEN %s >= " F_STR " OR %s > %lld THEN " F_STR " ELSE %s END)", end, addT(g, end, width - 1),
            (long long)g->par->last, addT(g, end, width - 1));
  else if (width > 1) to = pf(g, "(CASE WHEN %s >= " F_STR " THEN " F_STR " ELSE %s END)", end, addT(g, end, width - 1));
  else to = end;
  /* the inner where and when decide what counts (q), not which groups
  ** exist: a group whose tuples all fail them counts 0; over a join, the
  ** inner when (with the overlap) says which combinations are tuples */
  const char *q = sp->where ? valueSql(g, sp->where) : "1";
  const char *cond = "1";
  if (ai->nlocal > 1) {
    cond = span.ne;
    if (ai->when) cond = pf(g, "(%s AND %s)", cond, predSql(g, &s, ai->when));
  } else if (ai->when) {
    q = pf(g, "(%s AND %s)", q, predSql(g, &s, ai->when));
  }
  tqBufPrintf(&b, "%s AS val, %s AS q, %s AS cf, %s AS ct FROM %s WHERE %s", valueSql(g, sp->arg), q, cfrom, to, from.s, cond);
  tqBufFree(&from);
  const char *contrib = newCte(g, "contrib", tqArenaStrdup(g->a, b.s));
  tqBufFree(&b);
  /* group columns */
  TqBuf bys = {0}, eq = {0}, part = {0};
  for (int i = 0; i < sp->nby; i++) {
    tqBufPrintf(&bys, "b%d, ", i);
    tqBufPrintf(&eq, " AND c.b%d = p.b%d", i, i);
    tqBufPrintf(&part, "%sb%d", i ? ", " : "PARTITION BY ", i);
  }
  const char *BY = bys.s ? tqArenaStrdup(g->a, bys.s) : "";
  const char *EQ = eq.s ? tqArenaStrdup(g->a, eq.s) : "";
  const char *PART = part.s ? tqArenaStrdup(g->a, part.s) : "";
  tqBufFree(&bys);
  tqBufFree(&eq);
  tqBufFree(&part);
  int scalar = sp->nby == 0;
  /* a scalar aggregate has a value from beginning on; over samples, from
  ** the first request (the first base tick of the recording) if there is one */
  const char *scalarFrom = " UNION SELECT " B_STR;
  if (scalar && sp->sample) {
    TqTime q0 = g->par->first / sp->sample;
    if (q0 * sp->sample < g->par->first) q0++;
    TqTime t0 = q0 * sp->sample;
    scalarFrom = t0 <= g->par->last ? pf(g, " UNION SELECT %lld", (long long)t0) : "";
  }
  /* change points: every known one, also after the end of the recording (a
  ** window that stretches a closed contribution past it); an open end is
  ** FOREVER and changes nothing */
  const char *pts = newCte(g, "points",
                           pf(g, "SELECT DISTINCT %st FROM (SELECT %scf AS t FROM %s UNION SELECT %sct FROM %s%s) WHERE t < " F_STR,
                              BY, BY, contrib, BY, contrib, scalar ? scalarFrom : ""));
  const char *per = newCte(g, "periods", pf(g, "SELECT %st AS pf, COALESCE(LEAD(t) OVER (%s ORDER BY t), " F_STR ") AS pt FROM %s",
                                            BY, PART, pts));
  const char *inEffect = pf(g, "c.cf <= p.pf AND p.pf < c.ct%s", EQ);
  const char *val;
  switch (sp->fn) {
    case AGG_COUNT: val = pf(g, "(SELECT count(*) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_COUNTU: val = pf(g, "(SELECT count(DISTINCT c.val) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_ANY: val = pf(g, "(SELECT count(*) > 0 FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_SUM: val = pf(g, "(SELECT COALESCE(sum(c.val), 0) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_SUMU: val = pf(g, "(SELECT COALESCE(sum(DISTINCT c.val), 0) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_AVG: val = pf(g, "(SELECT avg(c.val) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_AVGU: val = pf(g, "(SELECT avg(DISTINCT c.val) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_MIN: val = pf(g, "(SELECT min(c.val) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_MAX: val = pf(g, "(SELECT max(c.val) FROM %s c WHERE %s AND c.q)", contrib, inEffect); break;
    case AGG_FIRST:
      val = pf(g, "(SELECT c.val FROM %s c WHERE %s AND c.q ORDER BY c.cf, c.val LIMIT 1)", contrib, inEffect);
      break;
    default: val = pf(g, "(SELECT c.val FROM %s c WHERE %s AND c.q ORDER BY c.cf DESC, c.val DESC LIMIT 1)", contrib, inEffect); break;
  }
  if (sp->type.kind == TY_FLOAT && (sp->fn == AGG_SUM || sp->fn == AGG_SUMU)) val = pf(g, "CAST(%s AS REAL)", val);
  const char *exists = scalar ? "1" : pf(g, "(SELECT count(*) > 0 FROM %s c WHERE %s)", contrib, inEffect);
  const char *vals = newCte(g, "values", pf(g, "SELECT * FROM (SELECT %spf, pt, %s AS v, %s AS ex FROM %s p) WHERE ex AND v IS NOT NULL",
                                            BY, val, exists, per));
  /* islands of equal adjacent values */
  const char *marks = newCte(g, "marks",
                             pf(g, "SELECT %spf, pt, v, CASE WHEN LAG(pt) OVER w = pf AND LAG(v) OVER w IS v THEN 0 ELSE 1 END AS brk "
                                   "FROM %s WINDOW w AS (%s ORDER BY pf)",
                                BY, vals, PART));
  const char *isl = newCte(g, "islands", pf(g, "SELECT %spf, pt, v, SUM(brk) OVER (%s ORDER BY pf) AS isl FROM %s", BY, PART, marks));
  TqBuf out = {0};
  tqBufPuts(&out, "SELECT ");
  for (int i = 0; i < sp->nby; i++) tqBufPrintf(&out, "b%d AS %s, ", i, qid(g, sp->byName[i]));
  tqBufPrintf(&out, "v AS \"value\", MIN(pf) AS valid_from, MAX(pt) AS valid_to FROM %s GROUP BY %sisl", isl, BY);
  const char *r = newCte(g, "aggregate", tqArenaStrdup(g->a, out.s));
  tqBufFree(&out);
  return r;
}

/* ================================================================ the query */

static const char *querySql(Sg *g, const CpQuery *q, int internal) {
  const CpSem *sem = q->sem;
  Scope s = {0};
  TqBuf from = {0}, where = {0}, sel = {0};
  int anyEvent = 0;
  for (int i = 0; i < sem->nvar; i++) {
    const CpVarInfo *v = &sem->vars[i];
    const char *view = viewOf(g, v);
    tqBufPrintf(&from, "%s%s %s", i ? ", " : "", view, qid(g, v->var));
    int ev = v->clockN || (v->rel && (v->rel->isEvent || v->rel->mode == ALG_MODE_SAMPLED)) || (v->derived && v->derived->isEvent);
    s.var[s.n] = v->var;
    s.event[s.n++] = ev;
    anyEvent |= ev;
  }
  for (int i = 0; i < sem->nagg; i++) {
    const CpAggInfo *ai = &sem->aggs[i];
    const char *view = aggView(g, ai);
    tqBufPrintf(&from, "%s%s %s", from.n ? ", " : "", view, qid(g, ai->var));
    s.var[s.n] = ai->var;
    s.event[s.n++] = 0;
    for (int j = 0; j < ai->spec->nby; j++)
      if (ai->linkedBy[j])
        tqBufPrintf(&where, " AND %s = %s.%s", valueSql(g, ai->spec->by[j]), qid(g, ai->var), qid(g, ai->spec->byName[j]));
  }
  if (sem->where) tqBufPrintf(&where, " AND %s", valueSql(g, sem->where));
  /* the intersection of all variables (defaults) */
  AlgExpr *all = NULL;
  for (int i = 0; i < s.n; i++) {
    AlgExpr *v = algExprNew(g->a, AX_TVAR, (AlgType){TY_TIME, NULL, NULL});
    v->var = s.var[i];
    all = all ? algExprBin(g->a, AX_OVERLAP, 0, (AlgType){TY_TIME, NULL, NULL}, all, v) : v;
  }
  if (sem->when) tqBufPrintf(&where, " AND %s", predSql(g, &s, sem->when));
  else if (s.n >= 2) tqBufPrintf(&where, " AND %s", tvSql(g, &s, all).ne);
  const char *vf, *vt = NULL;
  int isEvent;
  if (sem->valid) {
    isEvent = sem->valid == VALID_AT;
    Tv x = tvSql(g, &s, sem->vfrom);
    vf = x.b;
    tqBufPrintf(&where, " AND %s", x.ne);
    if (!isEvent) {
      Tv y = tvSql(g, &s, sem->vto);
      vt = y.e;
      tqBufPrintf(&where, " AND %s", y.ne);
    }
    for (int i = 0; i < sem->nagg; i++) { /* the aggregates' values at the result's time */
      const char *av = qid(g, sem->aggs[i].var);
      if (isEvent) {
        tqBufPrintf(&where, " AND %s.valid_from <= %s AND %s < %s.valid_to", av, vf, vf, av);
      } else {
        vf = pf(g, "MAX(%s, %s.valid_from)", vf, av);
        vt = pf(g, "MIN(%s, %s.valid_to)", vt, av);
      }
    }
    if (!isEvent) tqBufPrintf(&where, " AND %s < %s", vf, vt);
  } else {
    isEvent = anyEvent;
    Tv x = tvSql(g, &s, all);
    vf = x.b;
    vt = spanEnd(g, x);
    tqBufPrintf(&where, " AND %s", x.ne);
  }
  /* a time computed from an end that is not known yet is not known either */
  tqBufPrintf(&where, " AND %s < " F_STR, vf);
  for (int i = 0; i < sem->ntarget; i++) {
    const char *c = valueSql(g, sem->targets[i]);
    if (!internal && sem->targets[i]->type.kind == TY_ENUM) c = enumName(g, sem->targets[i]->type.en, c);
    tqBufPrintf(&sel, "%s AS %s, ", c, qid(g, sem->names[i]));
  }
  if (isEvent) tqBufPrintf(&sel, "%s AS valid_at", vf);
  else if (internal) tqBufPrintf(&sel, "%s AS valid_from, %s AS valid_to", vf, vt);
  else tqBufPrintf(&sel, "%s AS valid_from, CASE WHEN %s >= " F_STR " THEN NULL ELSE %s END AS valid_to", vf, vt, vt);
  const char *r = pf(g, "SELECT DISTINCT %s FROM %s WHERE 1%s", sel.s, from.s, where.s ? where.s : "");
  tqBufFree(&from);
  tqBufFree(&where);
  tqBufFree(&sel);
  return r;
}

int cpQuerySql(const CpProgram *p, const CpQuery *q, const CpSqlParams *par, TqBuf *out, TqBuf *err) {
  Sg g = {0};
  g.p = p;
  g.par = par;
  g.err = err;
  g.a = tqArenaNew();
  if (!q->sem) {
    tqBufPuts(err, "query has no typed form");
    tqArenaDelete(g.a);
    return -1;
  }
  const char *body = querySql(&g, q, 0);
  if (!g.bad && g.with.n + strlen(body) > SQL_MAX_TEXT) fail(&g, "the SQL text of this query would be longer than 1 MB (a shorter chain of operators translates)");
  if (!g.bad) {
    if (g.with.n) tqBufPrintf(out, "WITH RECURSIVE\n %s\n", g.with.s);
    tqBufPuts(out, body);
  }
  tqBufFree(&g.with);
  tqArenaDelete(g.a);
  return g.bad ? -1 : 0;
}

/* The non-temporal query over the snapshot at instant t: the tuples of every
** variable's view valid at t (events: at t), the where clause, the target
** list, DISTINCT.  Only for queries whose when and valid clauses are the
** defaults and without aggregates (snapshot reducibility). */
int cpQuerySnapshotSql(const CpProgram *p, const CpQuery *q, const CpSqlParams *par, TqTime t, TqBuf *out, TqBuf *err) {
  const CpSem *sem = q->sem;
  if (!sem || sem->when || sem->valid || sem->nagg) {
    tqBufPuts(err, "snapshot form needs default when and valid and no aggregate");
    return -1;
  }
  Sg g = {0};
  g.p = p;
  g.par = par;
  g.err = err;
  g.a = tqArenaNew();
  TqBuf from = {0}, where = {0}, sel = {0};
  for (int i = 0; i < sem->nvar; i++) {
    const CpVarInfo *v = &sem->vars[i];
    const char *view = viewOf(&g, v);
    const char *a = qid(&g, v->var);
    tqBufPrintf(&from, "%s%s %s", i ? ", " : "", view, a);
    int ev = v->clockN || (v->rel && (v->rel->isEvent || v->rel->mode == ALG_MODE_SAMPLED)) || (v->derived && v->derived->isEvent);
    if (ev) tqBufPrintf(&where, " AND %s.valid_at = %lld", a, (long long)t);
    else tqBufPrintf(&where, " AND %s.valid_from <= %lld AND %lld < %s.valid_to", a, (long long)t, (long long)t, a);
  }
  if (sem->where) tqBufPrintf(&where, " AND %s", valueSql(&g, sem->where));
  for (int i = 0; i < sem->ntarget; i++) {
    const char *c = valueSql(&g, sem->targets[i]);
    if (sem->targets[i]->type.kind == TY_ENUM) c = enumName(&g, sem->targets[i]->type.en, c);
    tqBufPrintf(&sel, "%s%s AS %s", i ? ", " : "", c, qid(&g, sem->names[i]));
  }
  if (!g.bad) {
    if (g.with.n) tqBufPrintf(out, "WITH RECURSIVE\n %s\n", g.with.s);
    tqBufPrintf(out, "SELECT DISTINCT %s FROM %s WHERE 1%s", sel.s ? sel.s : "1", from.s, where.s ? where.s : "");
  }
  tqBufFree(&from);
  tqBufFree(&where);
  tqBufFree(&sel);
  tqBufFree(&g.with);
  tqArenaDelete(g.a);
  return g.bad ? -1 : 0;
}
