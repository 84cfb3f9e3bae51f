/*
** query.c - range and retrieve statements: typing and translation into the
** initial algebra (paper sections 8.1-8.4).
**
** Translation of a retrieve with outer tuple variables V1..Vk (in order of
** first appearance in the statement):
**   pi[targets](piT[valid](sigmaT[when](sigma[c1](...sigma[cn](T1 x ... x Tk)))))
** where each Ti is the term of Vi's relation: the entity source itself for
** an entity relation, Clock[n] for Clock, the substituted algebra of a
** derived relation, or alpha^{mode}_Vi(default entity sources) for a
** primitive relation.  Omitted clauses get TQuel's defaults: when = all
** variables overlap, valid = their intersection (an event when any of them
** is an event).  An explicit clause replaces its default.
**
** Why one file of about 1,300 lines: typing and translation walk the same
** statement with the same context (QCtx: the variables, their ranges, the
** defaults), and every clause's translation needs the others' typing; a
** split would pass QCtx through a private header for no reader's gain.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compilerInt.h"

typedef struct VarUse {
  const char *var; /* as written first */
  CpRange *range;  /* its binding */
  TqLoc loc;       /* first appearance */
} VarUse;

typedef struct QCtx {
  CpSema *s;
  TqArena *a;
  TqDiag *d;
  int nvar;          /* outer tuple variables */
  VarUse var[64];
  int bad;           /* an error was reported */
  TqVec used;        /* all variable names in the product (for renaming) */
  int inAgg;         /* typing the inside of an aggregate */
  int nagg;          /* aggregates of the statement: extra product terms */
  struct {
    const char *var; /* the aggregate's tuple variable (agg1, ...) */
    AlgNode *node;   /* its ALG_AGG term */
    AlgExpr *link;   /* by-list link to the outer variables, or NULL */
    int nlocal;      /* its own tuple variables (a join when more than one) */
    CpRange *range[8]; /* their bindings */
    int *linkedBy;   /* per by-expression: linked to the outer variables */
    AlgExpr *when;   /* its inner when, or NULL */
  } agg[16];
} QCtx;

static AlgType tyOf(AlgTypeKind k) {
  AlgType t = {k, NULL, NULL};
  return t;
}

/* ================================================================ range */

void cpSemaRange(CpSema *s, AstNode *st) {
  CpRange *r = tqArenaAlloc(s->a, sizeof *r);
  r->var = st->s;
  r->loc = st->loc;
  r->bad = 1; /* until proven good: later uses of the variable stay quiet */
  tqVecPush(&s->ranges, r);
  if (!strcasecmp(st->s2, "Clock")) {
    if (st->op && st->i < 1) {
      tqError(s->diag, st->loc, "Clock[n] needs n >= 1");
      return;
    }
    /* its period, n base ticks, must be a time (the runtime and the SQL
    ** translation multiply them) */
    TqTime period;
    if (st->op && (st->i > 1000000000 || __builtin_mul_overflow(s->prog->cat.tick, st->i, &period) || period >= TQ_FOREVER)) {
      char tb[64];
      tqError(s->diag, st->loc,
              "Clock[%lld] is too slow: n base ticks of %s must be at most 1000000000 and fit in a time (at most about 2562047h)",
              (long long)st->i, tqTimeFormat(tb, sizeof tb, s->prog->cat.tick));
      return;
    }
    r->clockN = st->op ? (int)st->i : 1;
  } else {
    if (st->op) {
      tqError(s->diag, st->loc, "only Clock takes a divisor [n]; '%s' is not Clock", st->s2);
      return;
    }
    r->rel = algCatRel(&s->prog->cat, st->s2);
    if (!r->rel) r->derived = algCatDerived(&s->prog->cat, st->s2);
    if (!r->rel && !r->derived) {
      for (int i = 0; i < s->failedNames.n; i++)
        if (!strcasecmp(s->failedNames.v[i], st->s2)) return; /* its own query failed: reported there */
      for (int i = 0; i < s->laterNames.n; i++) {
        AstNode *x = s->laterNames.v[i];
        if (!strcasecmp(x->s, st->s2) && (x->loc.src != st->loc.src || x->loc.line > st->loc.line ||
                                           (x->loc.line == st->loc.line && x->loc.col > st->loc.col))) {
          r->later = x; /* reported by the next retrieve (self-reference?) or at the end */
          return;
        }
      }
      tqError(s->diag, st->loc, "unknown relation '%s'%s", st->s2, cpDidYouMeanRel(s, st->s2));
      return;
    }
  }
  r->bad = 0;
}

static int astUsesVar(const AstNode *n, const char *var) {
  for (; n; n = n->next) {
    if ((n->kind == AST_COL || n->kind == AST_NAME) && n->s && !strcasecmp(n->s, var)) return 1;
    for (int i = 0; i < 4; i++)
      if (astUsesVar(n->k[i], var)) return 1;
  }
  return 0;
}

static void laterError(CpSema *s, CpRange *r, AstNode *st) {
  AstNode *x = r->later;
  r->later = NULL;
  if (st == x && astUsesVar(st->k[0], r->var)) goto self;
  for (int i = 1; st == x && i < 4; i++)
    if (astUsesVar(st->k[i], r->var)) goto self;
  tqError(s->diag, r->loc, "relation '%s' is defined later (at %s:%d:%d); a query may only range over relations defined before it",
          x->s, x->loc.src ? x->loc.src->name : "?", x->loc.line, x->loc.col);
  return;
self:
  tqError(s->diag, r->loc,
          "relation '%s' is the result of the query that ranges over it (at %s:%d:%d); a derived relation cannot refer to itself",
          x->s, x->loc.src ? x->loc.src->name : "?", x->loc.line, x->loc.col);
}

void cpSemaLaterRanges(CpSema *s, AstNode *upTo) {
  for (int i = 0; i < s->ranges.n; i++) {
    CpRange *r = s->ranges.v[i];
    if (r->later && (!upTo || r->later == upTo)) laterError(s, r, upTo);
  }
}

/* ================================================================ variables */

static VarUse *useVar(QCtx *q, const char *var, TqLoc loc) {
  for (int i = 0; i < q->nvar; i++) {
    if (!strcasecmp(q->var[i].var, var)) {
      if (loc.line < q->var[i].loc.line || (loc.line == q->var[i].loc.line && loc.col < q->var[i].loc.col))
        q->var[i].loc = loc;
      return &q->var[i];
    }
  }
  CpRange *r = cpRangeLookup(q->s, var);
  if (!r) {
    tqError(q->d, loc, "tuple variable '%s' is not ranged (write: range of %s is <relation>)", var, var);
    q->bad = 1;
    return NULL;
  }
  if (r->bad) {
    q->bad = 1;
    return NULL;
  }
  if (q->nvar == (int)TQ_ARRAY_SIZE(q->var)) {
    tqError(q->d, loc, "too many tuple variables in one retrieve");
    q->bad = 1;
    return NULL;
  }
  VarUse *u = &q->var[q->nvar++];
  u->var = r->var;
  u->range = r;
  u->loc = loc;
  return u;
}

/* Collects the outer tuple variables of an expression (not inside aggregates). */
static void collectVars(QCtx *q, AstNode *e, int temporal) {
  if (!e) return;
  switch (e->kind) {
    case AST_COL: useVar(q, e->s, e->loc); return;
    case AST_NAME:
      if (temporal || cpRangeLookup(q->s, e->s)) {
        if (cpRangeLookup(q->s, e->s)) useVar(q, e->s, e->loc);
      }
      return;
    case AST_AGG: {
      /* by-lists link the aggregate to outer variables of the same name */
      return;
    }
    case AST_CALL:
      for (AstNode *x = e->k[0]; x; x = x->next) collectVars(q, x, temporal);
      return;
    default: break;
  }
  for (int i = 0; i < 4; i++) collectVars(q, e->k[i], temporal);
}

static int isEventVar(const VarUse *u) {
  CpRange *r = u->range;
  if (r->clockN) return 1;
  if (r->rel) return r->rel->isEvent || r->rel->mode == ALG_MODE_SAMPLED;
  return r->derived->isEvent;
}

static const AlgAttr *varAttrs(const VarUse *u, int *n) {
  CpRange *r = u->range;
  if (r->clockN) {
    *n = 0;
    return NULL;
  }
  if (r->rel) {
    *n = r->rel->nattr;
    return r->rel->attr;
  }
  *n = r->derived->nattr;
  return r->derived->attr;
}

static const char *relNameOf(const VarUse *u) {
  CpRange *r = u->range;
  return r->clockN ? "Clock" : r->rel ? r->rel->name : r->derived->name;
}

static VarUse *findVar(QCtx *q, const char *var) {
  for (int i = 0; i < q->nvar; i++)
    if (!strcasecmp(q->var[i].var, var)) return &q->var[i];
  return NULL;
}

/* ================================================================ value expressions */

static AlgExpr *err(QCtx *q, TqLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static AlgExpr *err(QCtx *q, TqLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tqErrorV(q->d, loc, fmt, ap);
  va_end(ap);
  q->bad = 1;
  return NULL;
}

static int isNum(AlgType t) { return t.kind == TY_INT || t.kind == TY_FLOAT; }

/* A bare name or a string constant may stand for an entity or enum value. */
static int isSymbolic(const AlgExpr *e) {
  return e->kind == AX_CONST && (e->type.kind == TY_NONE || (e->type.kind == TY_STRING && e->op == 1));
}

static AlgExpr *coerceTo(QCtx *q, AlgExpr *c, AlgType want) {
  const char *name = c->name;
  if (want.kind == TY_ENTITY) {
    c->type = want;
    c->ival = tqSymZ(name);
    return c;
  }
  if (want.kind == TY_ENUM) {
    for (int i = 0; i < want.en->n; i++) {
      if (!strcasecmp(want.en->names[i], name)) {
        c->type = want;
        c->ival = i;
        return c;
      }
    }
    TqBuf b = {0};
    for (int i = 0; i < want.en->n && b.n < 400; i++) tqBufPrintf(&b, "%s%s", i ? ", " : "", want.en->names[i]);
    if (b.n >= 400) tqBufPuts(&b, ", ..."); /* a long list is cut: the suggestion stays visible */
    const char *m = cpDidYouMean(name, (const char *const *)want.en->names, want.en->n);
    err(q, c->loc, "'%s' is not a value of enum(%s)%s%s%s", name, b.s ? b.s : "", m ? ": did you mean '" : "", m ? m : "",
        m ? "'?" : "");
    tqBufFree(&b);
    return NULL;
  }
  if (want.kind == TY_STRING && c->type.kind == TY_STRING) {
    c->op = 0;
    return c;
  }
  if (c->type.kind == TY_NONE) return err(q, c->loc, "unknown name '%s'", name);
  return c;
}

/* Finishes an expression: an unresolved bare name left over is an error. */
static AlgExpr *resolved(QCtx *q, AlgExpr *e) {
  if (!e) return NULL;
  if (e->kind == AX_CONST && e->type.kind == TY_NONE) return err(q, e->loc, "unknown name '%s'", e->name);
  if (e->kind == AX_CONST && e->type.kind == TY_STRING) e->op = 0;
  return e;
}

static AlgExpr *tyValue(QCtx *q, AstNode *x);
static AlgExpr *tyTime(QCtx *q, AstNode *x);
static AlgExpr *tyAggregate(QCtx *q, AstNode *x);
static AlgExpr *tyString(QCtx *q, AstNode *x);
static AlgExpr *tyCall(QCtx *q, AstNode *x);
static int aggFn(QCtx *q, const AstNode *x);
static AlgExpr *toPred(QCtx *q, AlgExpr *e, TqLoc loc);
static AlgNode *termFor(QCtx *q, VarUse *u);

static AlgExpr *tyCompare(QCtx *q, AstNode *x) {
  AlgExpr *l = tyValue(q, x->k[0]), *r = tyValue(q, x->k[1]);
  if (!l || !r) return NULL;
  if (isSymbolic(l) && !isSymbolic(r)) l = coerceTo(q, l, r->type);
  else if (isSymbolic(r) && !isSymbolic(l)) r = coerceTo(q, r, l->type);
  if (!l || !r) return NULL;
  if (!(l = resolved(q, l)) || !(r = resolved(q, r))) return NULL;
  char b1[64], b2[64];
  if (l->type.kind == TY_BOOL || r->type.kind == TY_BOOL)
    return err(q, x->loc, "cannot compare predicates with '%s'; use and/or/not", x->op == OPB_EQ ? "=" : "an operator");
  if (!(isNum(l->type) && isNum(r->type)) && !algTypeEq(l->type, r->type)) {
    /* a number where a name belongs: an entity (a pid) or a string is
    ** named by a string: "4242" */
    const AlgExpr *named = l->type.kind == TY_ENTITY || l->type.kind == TY_STRING ? l : r;
    const AlgExpr *num = named == l ? r : l;
    if ((named->type.kind == TY_ENTITY || named->type.kind == TY_STRING) && num->kind == AX_CONST && num->type.kind == TY_INT)
      return err(q, x->loc, "cannot compare %s with the number %lld%s\"%lld\"%s", algTypeName(named->type, b1, sizeof b1),
                 (long long)num->ival, named->type.kind == TY_ENTITY ? ": entities are named by strings (write " : " (write ",
                 (long long)num->ival, named->type.kind == TY_ENTITY ? ")" : " to compare with the text)");
    return err(q, x->loc, "cannot compare %s with %s", algTypeName(l->type, b1, sizeof b1),
               algTypeName(r->type, b2, sizeof b2));
  }
  AlgExpr *e = algExprBin(q->a, AX_CMP, x->op, tyOf(TY_BOOL), l, r);
  e->loc = x->loc;
  return e;
}

static AlgExpr *tyValue(QCtx *q, AstNode *x) {
  AlgExpr *e = NULL;
  char b1[64];
  switch (x->kind) {
    case AST_COL: {
      VarUse *u = findVar(q, x->s);
      if (!u) return NULL; /* reported when collecting */
      int n;
      const AlgAttr *at = varAttrs(u, &n);
      for (int i = 0; i < n; i++) {
        if (!strcasecmp(at[i].name, x->s2)) {
          if (at[i].type.kind == TY_NONE) { /* its declaration failed (reported there) */
            q->bad = 1;
            return NULL;
          }
          e = algExprCol(q->a, u->var, at[i].name, at[i].type);
          e->loc = x->loc;
          return e;
        }
      }
      if (q->inAgg && n && !strcasecmp(x->s2, "all")) /* Quel's V.all is for target lists only */
        return err(q, x->loc, "'%s.all' (every attribute) belongs in a target list; an aggregate takes one value (count(%s.%s) counts %s's tuples)",
                   x->s, x->s, at[0].name, x->s);
      TqBuf b = {0};
      const char **names = tqArenaAlloc(q->a, sizeof(char *) * (size_t)(n ? n : 1));
      for (int i = 0; i < n; i++) {
        tqBufPrintf(&b, "%s%s", i ? ", " : "", at[i].name);
        names[i] = at[i].name;
      }
      const char *m = cpDidYouMean(x->s2, names, n);
      err(q, x->loc, "%s (relation %s) has no attribute '%s'%s%s%s%s%s%s", u->var, relNameOf(u), x->s2,
          m ? ": did you mean '" : "", m ? m : "", m ? "'?" : "", n ? " (attributes: " : "", n ? b.s : "", n ? ")" : "");
      tqBufFree(&b);
      return NULL;
    }
    case AST_NAME:
      if (cpRangeLookup(q->s, x->s))
        return err(q, x->loc, "'%s' is a tuple variable: name one of its attributes (%s.attribute)", x->s, x->s);
      e = algExprNew(q->a, AX_CONST, tyOf(TY_NONE));
      e->name = x->s;
      break;
    case AST_STR:
      e = algExprNew(q->a, AX_CONST, tyOf(TY_STRING));
      e->name = x->s;
      e->ival = tqSymZ(x->s);
      e->op = 1; /* may still become an entity or enum value */
      break;
    case AST_INT:
      e = algExprNew(q->a, AX_CONST, tyOf(TY_INT));
      e->ival = x->i;
      break;
    case AST_FLOAT:
      e = algExprNew(q->a, AX_CONST, tyOf(TY_FLOAT));
      e->fval = x->f;
      break;
    case AST_DUR:
    case AST_TIME:
      e = algExprNew(q->a, AX_CONST, tyOf(TY_INT));
      e->ival = x->i;
      break;
    case AST_BIN:
      switch (x->op) {
        case OPB_AND:
        case OPB_OR: {
          AlgExpr *l = tyValue(q, x->k[0]), *r = tyValue(q, x->k[1]);
          if (!l || !r) return NULL;
          if (l->type.kind != TY_BOOL || r->type.kind != TY_BOOL)
            return err(q, x->loc, "'%s' needs conditions on both sides", x->op == OPB_AND ? "and" : "or");
          e = algExprBin(q->a, x->op == OPB_AND ? AX_AND : AX_OR, 0, tyOf(TY_BOOL), l, r);
          break;
        }
        case OPB_EQ:
        case OPB_NE:
        case OPB_LT:
        case OPB_LE:
        case OPB_GT:
        case OPB_GE: return tyCompare(q, x);
        default: {
          AlgExpr *l = resolved(q, tyValue(q, x->k[0])), *r = resolved(q, tyValue(q, x->k[1]));
          if (!l || !r) return NULL;
          if (!isNum(l->type) || !isNum(r->type))
            return err(q, x->loc, "arithmetic needs numbers, not %s",
                       algTypeName(isNum(l->type) ? r->type : l->type, b1, sizeof b1));
          AlgTypeKind k = l->type.kind == TY_FLOAT || r->type.kind == TY_FLOAT ? TY_FLOAT : TY_INT;
          e = algExprBin(q->a, AX_ARITH, x->op, tyOf(k), l, r);
          break;
        }
      }
      break;
    case AST_NOT: {
      AlgExpr *l = tyValue(q, x->k[0]);
      if (!l) return NULL;
      if (l->type.kind != TY_BOOL) return err(q, x->loc, "'not' needs a condition");
      e = algExprNew(q->a, AX_NOT, tyOf(TY_BOOL));
      e->a = l;
      break;
    }
    case AST_NEG: {
      AlgExpr *l = resolved(q, tyValue(q, x->k[0]));
      if (!l) return NULL;
      if (!isNum(l->type)) return err(q, x->loc, "'-' needs a number");
      if (l->kind == AX_CONST) {
        l->ival = -l->ival;
        l->fval = -l->fval;
        return l;
      }
      e = algExprNew(q->a, AX_NEG, l->type);
      e->a = l;
      break;
    }
    case AST_PRECEDE:
    case AST_EQUAL:
    case AST_OVERLAP:
    case AST_EXTEND:
    case AST_BEGINOF:
    case AST_ENDOF:
    case AST_NOW:
    case AST_BEGINNING:
    case AST_FOREVER:
      return err(q, x->loc, "temporal expression outside a when or valid clause (where and target lists take explicit attributes)");
    case AST_AGG: return tyAggregate(q, x);
    case AST_LIKE:
    case AST_CONCAT: return tyString(q, x);
    case AST_CALL: return tyCall(q, x);
    default: return err(q, x->loc, "unexpected expression");
  }
  e->loc = x->loc;
  return e;
}

/* ================================================================ strings */

/* An operand of a string operation: a string, or an entity (its name).
** what names the operation for messages. */
static AlgExpr *strOperand(QCtx *q, AstNode *x, const char *what) {
  AlgExpr *e = resolved(q, tyValue(q, x));
  if (!e) return NULL;
  char b1[64];
  if (e->type.kind != TY_STRING && e->type.kind != TY_ENTITY)
    return err(q, x->loc, "%s needs a string or an entity name, not %s", what,
               e->type.kind == TY_BOOL ? "a condition" : algTypeName(e->type, b1, sizeof b1));
  return e;
}

/* s like "pattern" (a condition) and s1 || s2 (a string). */
static AlgExpr *tyString(QCtx *q, AstNode *x) {
  int like = x->kind == AST_LIKE;
  const char *what = like ? "'like'" : "'||'";
  AlgExpr *l = strOperand(q, x->k[0], what), *r = strOperand(q, x->k[1], what);
  if (!l || !r) return NULL;
  AlgExpr *e = algExprBin(q->a, like ? AX_LIKE : AX_CONCAT, 0, tyOf(like ? TY_BOOL : TY_STRING), l, r);
  e->loc = x->loc;
  return e;
}

/* The functions (a call with two or more arguments; one with a single
** argument parses as an aggregate and is reported by aggFn). */
static AlgExpr *tyCall(QCtx *q, AstNode *x) {
  if (strcasecmp(x->s, "prefix"))
    return err(q, x->loc, "unknown function '%s' (functions: prefix(STRING, LENGTH), prefix(STRING, SEPARATOR))", x->s);
  int n = astLen(x->k[0]);
  if (n != 2)
    return err(q, x->loc, "prefix takes two arguments: prefix(STRING, LENGTH) or prefix(STRING, SEPARATOR), not %d", n);
  AlgExpr *s = strOperand(q, x->k[0], "prefix");
  AlgExpr *k = resolved(q, tyValue(q, x->k[0]->next));
  if (!s || !k) return NULL;
  char b1[64];
  if (k->type.kind != TY_INT && k->type.kind != TY_STRING)
    return err(q, x->k[0]->next->loc, "prefix takes a length (int) or a separator (string), not %s",
               k->type.kind == TY_BOOL ? "a condition" : algTypeName(k->type, b1, sizeof b1));
  AlgExpr *e = algExprBin(q->a, AX_PREFIX, k->type.kind == TY_STRING, tyOf(TY_STRING), s, k);
  e->loc = x->loc;
  return e;
}

/* ================================================================ temporal expressions */

static AlgExpr *toPred(QCtx *q, AlgExpr *e, TqLoc loc) {
  if (!e) return NULL;
  if (e->type.kind == TY_BOOL) return e;
  if (e->kind == AX_OVERLAP) {
    e->kind = AX_TOVERLAP;
    e->type = tyOf(TY_BOOL);
    return e;
  }
  return err(q, loc, "expected a temporal predicate (precede, overlap or equal), found a temporal value");
}

static AlgExpr *needTime(QCtx *q, AlgExpr *e, TqLoc loc, const char *what) {
  if (!e) return NULL;
  if (e->type.kind != TY_TIME) return err(q, loc, "%s needs a temporal value, not a predicate", what);
  return e;
}

static AlgExpr *tyTime(QCtx *q, AstNode *x) {
  AlgExpr *e = NULL, *l, *r;
  switch (x->kind) {
    case AST_NAME: {
      VarUse *u = findVar(q, x->s);
      if (!u) {
        if (cpRangeLookup(q->s, x->s)) return NULL;
        return err(q, x->loc, "'%s' is not a tuple variable (temporal expressions take tuple variables, begin of, end of, time constants)", x->s);
      }
      e = algExprNew(q->a, AX_TVAR, tyOf(TY_TIME));
      e->var = u->var;
      break;
    }
    case AST_COL:
      return err(q, x->loc, "'%s.%s' is an explicit attribute, not a temporal value (use %s, begin of %s or end of %s)", x->s,
                 x->s2, x->s, x->s, x->s);
    case AST_TIME:
    case AST_DUR:
    case AST_INT:
      e = algExprNew(q->a, AX_TCONST, tyOf(TY_TIME));
      e->ival = x->i;
      break;
    case AST_NOW: e = algExprNew(q->a, AX_NOW, tyOf(TY_TIME)); break;
    case AST_BEGINNING:
      e = algExprNew(q->a, AX_TCONST, tyOf(TY_TIME));
      e->ival = TQ_BEGINNING;
      break;
    case AST_FOREVER:
      e = algExprNew(q->a, AX_TCONST, tyOf(TY_TIME));
      e->ival = TQ_FOREVER;
      break;
    case AST_BEGINOF:
    case AST_ENDOF:
      l = needTime(q, tyTime(q, x->k[0]), x->k[0]->loc, x->kind == AST_BEGINOF ? "'begin of'" : "'end of'");
      if (!l) return NULL;
      e = algExprNew(q->a, x->kind == AST_BEGINOF ? AX_BEGINOF : AX_ENDOF, tyOf(TY_TIME));
      e->a = l;
      break;
    case AST_OVERLAP:
    case AST_EXTEND:
      l = tyTime(q, x->k[0]);
      r = tyTime(q, x->k[1]);
      if (!l || !r) return NULL;
      if (x->kind == AST_OVERLAP && (l->type.kind == TY_BOOL || r->type.kind == TY_BOOL)) {
        /* "a overlap b overlap c" used as a predicate chain */
        if (!(l = toPred(q, l, x->loc)) || !(r = toPred(q, r, x->loc))) return NULL;
        return err(q, x->loc, "'overlap' between predicates; use 'and'");
      }
      if (!needTime(q, l, x->k[0]->loc, x->kind == AST_OVERLAP ? "'overlap'" : "'extend'") ||
          !needTime(q, r, x->k[1]->loc, x->kind == AST_OVERLAP ? "'overlap'" : "'extend'"))
        return NULL;
      e = algExprBin(q->a, x->kind == AST_OVERLAP ? AX_OVERLAP : AX_EXTEND, 0, tyOf(TY_TIME), l, r);
      break;
    case AST_PRECEDE:
    case AST_EQUAL:
      l = tyTime(q, x->k[0]);
      r = tyTime(q, x->k[1]);
      if (!l || !r) return NULL;
      if (!needTime(q, l, x->k[0]->loc, x->kind == AST_PRECEDE ? "'precede'" : "'equal'") ||
          !needTime(q, r, x->k[1]->loc, x->kind == AST_PRECEDE ? "'precede'" : "'equal'"))
        return NULL;
      e = algExprBin(q->a, x->kind == AST_PRECEDE ? AX_PRECEDE : AX_TEQUAL, 0, tyOf(TY_BOOL), l, r);
      break;
    case AST_BIN:
      if (x->op == OPB_AND || x->op == OPB_OR) {
        l = toPred(q, tyTime(q, x->k[0]), x->k[0]->loc);
        r = toPred(q, tyTime(q, x->k[1]), x->k[1]->loc);
        if (!l || !r) return NULL;
        e = algExprBin(q->a, x->op == OPB_AND ? AX_AND : AX_OR, 0, tyOf(TY_BOOL), l, r);
        break;
      }
      if (x->op == OPB_ADD || x->op == OPB_SUB) {
        l = needTime(q, tyTime(q, x->k[0]), x->k[0]->loc, "a time shift");
        if (!l) return NULL;
        AstNode *d = x->k[1];
        if (d->kind != AST_DUR && d->kind != AST_INT)
          return err(q, d->loc, "a time can only be shifted by a duration constant such as 10s");
        e = algExprNew(q->a, AX_TSHIFT, tyOf(TY_TIME));
        e->a = l;
        e->ival = x->op == OPB_ADD ? d->i : -d->i;
        break;
      }
      return err(q, x->loc, "comparison of explicit attributes in a temporal clause; use a where clause");
    case AST_NOT:
      l = toPred(q, tyTime(q, x->k[0]), x->k[0]->loc);
      if (!l) return NULL;
      e = algExprNew(q->a, AX_NOT, tyOf(TY_BOOL));
      e->a = l;
      break;
    case AST_LIKE: return err(q, x->loc, "'like' in a temporal clause (it matches explicit attributes: use a where clause)");
    case AST_CONCAT:
    case AST_CALL:
      return err(q, x->loc, "string operation in a temporal clause (it takes explicit attributes: use it in where or the target list)");
    case AST_AGG:
      if (!aggFn(q, x)) return NULL;
      return err(q, x->loc, "aggregate in a temporal clause (aggregates give values: use them in the target list or where)");
    default: return err(q, x->loc, "not a temporal expression (expected a tuple variable, begin of, end of, a time constant or now)");
  }
  e->loc = x->loc;
  return e;
}

/* ================================================================ terms */

static int nameUsed(QCtx *q, const char *n) {
  for (int i = 0; i < q->used.n; i++)
    if (!strcasecmp(q->used.v[i], n)) return 1;
  return 0;
}

static void collectTreeVars(const AlgNode *n, TqVec *out) {
  if (!n) return;
  if ((n->kind == ALG_ALPHA || n->kind == ALG_SOURCE || n->kind == ALG_CLOCK || n->kind == ALG_AGG) && n->var)
    tqVecPush(out, (void *)n->var);
  for (int i = 0; i < n->nkid; i++) collectTreeVars(n->kid[i], out);
}

/* Default entity source for attribute `ai` of relation r: E or pi[E](E). */
static AlgNode *entitySource(QCtx *q, const AlgRel *r, int ai) {
  const AlgEntity *ent = r->attr[ai].type.ent;
  AlgNode *src = algSource(q->a, ent->rel, NULL);
  if (ent->rel->nattr == 1) return src;
  AlgExpr **e = tqArenaAlloc(q->a, sizeof(AlgExpr *));
  const char **nm = tqArenaAlloc(q->a, sizeof(char *));
  e[0] = algExprCol(q->a, NULL, ent->rel->attr[0].name, ent->rel->attr[0].type);
  nm[0] = ent->rel->attr[0].name;
  return algPi(q->a, 1, e, nm, NULL, src);
}

static AlgNode *termFor(QCtx *q, VarUse *u) {
  CpRange *r = u->range;
  if (r->clockN) return algClock(q->a, r->clockN, u->var);
  if (r->rel && r->rel->entity) return algSource(q->a, r->rel, u->var);
  if (r->rel) {
    const AlgRel *rel = r->rel;
    AlgNode *args[3];
    int n = 1;
    args[0] = entitySource(q, rel, rel->flagAttr);
    if (rel->mode == ALG_MODE_SAMPLED) {
      args[1] = algClock(q->a, 1, NULL);
      n = 2;
      if (rel->flagRole == ROLE_TARGET) {
        args[2] = entitySource(q, rel, rel->performerAttr);
        n = 3;
      }
    }
    return algAlpha(q->a, rel, algVariantOf(rel), u->var, n, args);
  }
  /* derived relation: substitute its algebra, renaming clashing inner variables */
  AlgNode *t = algNodeCopy(q->a, r->derived->tree);
  TqVec inner = {0};
  collectTreeVars(t, &inner);
  for (int i = 0; i < inner.n; i++) {
    const char *v = inner.v[i];
    if (!nameUsed(q, v)) {
      tqVecPush(&q->used, (void *)v);
      continue;
    }
    const char *nv = v;
    do nv = tqArenaPrintf(q->a, "%s'", nv);
    while (nameUsed(q, nv));
    algRenameVar(q->a, t, v, nv);
    tqVecPush(&q->used, (void *)nv);
  }
  tqVecFree(&inner);
  /* the root is pi over piT: its columns and time become the variable's */
  t->piVar = u->var;
  if (t->kid[0]->kind == ALG_PIT) t->kid[0]->tvOut = u->var;
  algSchemaCompute(q->a, t->kid[0]);
  algSchemaCompute(q->a, t);
  return t;
}

/* ================================================================ aggregates */

/* Collects the distinct tuple variables named inside an aggregate, with
** where each first appears: those of its columns (V.attr), and with q
** (an inner when) the bare names that are ranged (`T overlap E`). */
static void aggVars(QCtx *q, AstNode *e, const char **names, TqLoc *locs, int *n, int max) {
  for (; e; e = e->next) {
    if (q ? e->kind == AST_NAME && cpRangeLookup(q->s, e->s) : e->kind == AST_COL) {
      int found = 0;
      for (int i = 0; i < *n; i++)
        if (!strcasecmp(names[i], e->s)) found = 1;
      if (!found && *n < max) {
        locs[*n] = e->loc;
        names[(*n)++] = e->s;
      }
    }
    for (int i = 0; i < 4; i++) aggVars(q, e->k[i], names, locs, n, max);
  }
}

/* Are the tuple variables of an expression all outer ones (and is there one)? */
typedef struct OuterCheck {
  QCtx *q;
  int any, all;
} OuterCheck;
static void outerVar(void *ctx, const char *var, int isTime) {
  OuterCheck *c = ctx;
  c->any = 1;
  if (!findVar(c->q, var)) c->all = 0;
}

static const struct {
  const char *name;
  int fn;
} aggFns[] = {{"count", AGG_COUNT}, {"countu", AGG_COUNTU}, {"sum", AGG_SUM}, {"sumu", AGG_SUMU},
              {"avg", AGG_AVG},     {"avgu", AGG_AVGU},     {"min", AGG_MIN}, {"max", AGG_MAX},
              {"any", AGG_ANY},     {"first", AGG_FIRST},   {"last", AGG_LAST}};

/* The AGG_* code of an aggregate's name, or 0 after reporting an unknown
** one (the parser takes any name before a parenthesis as an aggregate). */
static int aggFn(QCtx *q, const AstNode *x) {
  for (size_t i = 0; i < TQ_ARRAY_SIZE(aggFns); i++)
    if (!strcasecmp(aggFns[i].name, x->s)) return aggFns[i].fn;
  if (!strcasecmp(x->s, "prefix")) {
    err(q, x->loc, "prefix takes two arguments: prefix(STRING, LENGTH) or prefix(STRING, SEPARATOR)");
    return 0;
  }
  TqBuf b = {0};
  for (size_t i = 0; i < TQ_ARRAY_SIZE(aggFns); i++) tqBufPrintf(&b, "%s%s", i ? ", " : "", algAggName(aggFns[i].fn));
  err(q, x->loc, "unknown aggregate '%s' (aggregates: %s)", x->s, b.s);
  tqBufFree(&b);
  return 0;
}

/* An aggregate in a target list or where: types its inside in a scope of
** its own (its tuple variable is local, a fresh instance of the range),
** builds an ALG_AGG term over the algebra of that variable, links it to the
** outer variable of the same name through the by-list, and stands for the
** aggregate's value (column agg<n>.value) in the outer expression. */
static AlgExpr *tyAggregate(QCtx *q, AstNode *x) {
  int fn = aggFn(q, x);
  if (!fn) return NULL;
  if (q->inAgg) return err(q, x->loc, "aggregates cannot be nested");
  if (q->nagg == (int)TQ_ARRAY_SIZE(q->agg)) return err(q, x->loc, "too many aggregates in one retrieve");
  /* the clauses */
  AstNode *by = NULL, *where = NULL, *when = NULL, *win = NULL;
  for (AstNode *o = x->k[1]; o; o = o->next) {
    AstNode **slot = o->op == OPT_BY ? &by : o->op == OPT_WHERE ? &where : o->op == OPT_WHEN ? &when : &win;
    if (*slot) return err(q, o->loc, "this clause is given twice in the aggregate");
    *slot = o;
  }
  /* count(W): a tuple variable where a value of it belongs */
  AstNode *arg0 = x->k[0];
  CpRange *bare = arg0->kind == AST_NAME ? cpRangeLookup(q->s, arg0->s) : NULL;
  if (bare) {
    const AlgAttr *at = bare->rel ? bare->rel->attr : bare->derived ? bare->derived->attr : NULL;
    int nat = bare->rel ? bare->rel->nattr : bare->derived ? bare->derived->nattr : 0;
    if (!at || nat == 0) return err(q, arg0->loc, "an aggregate takes a value, not the tuple variable '%s' itself", arg0->s);
    return err(q, arg0->loc, "an aggregate takes a value, not the tuple variable '%s' itself (for example %s(%s.%s))", arg0->s,
               x->s, arg0->s, at[0].name);
  }
  /* its tuple variables: one, or several joined (their tuples overlap) */
  const char *names[9];
  TqLoc locs[9];
  int nn = 0;
  aggVars(NULL, x->k[0], names, locs, &nn, 9);
  if (by) aggVars(NULL, by->k[0], names, locs, &nn, 9);
  if (where) aggVars(NULL, where->k[0], names, locs, &nn, 9);
  if (when) aggVars(q, when->k[0], names, locs, &nn, 9);
  if (nn == 0) return err(q, x->loc, "an aggregate needs a tuple variable (for example count(W.Process))");
  for (int i = 0; i < nn; i++)
    if (!cpRangeLookup(q->s, names[i]))
      return err(q, locs[i], "tuple variable '%s' is not ranged (write: range of %s is <relation>)", names[i], names[i]);
  if (nn > 8) return err(q, locs[8], "an aggregate may range over at most 8 tuple variables");
  CpRange *rs[8];
  for (int i = 0; i < nn; i++) {
    rs[i] = cpRangeLookup(q->s, names[i]);
    if (rs[i]->bad) {
      q->bad = 1;
      return NULL;
    }
  }
  /* type the inside with only the local variables in scope */
  int saveN = q->nvar;
  VarUse saveV[8], local[8];
  for (int i = 0; i < nn; i++) {
    saveV[i] = q->var[i];
    local[i] = (VarUse){rs[i]->var, rs[i], x->loc};
    q->var[i] = local[i];
  }
  q->nvar = nn;
  q->inAgg = 1;
  AlgExpr *arg = resolved(q, tyValue(q, x->k[0]));
  int nby = astLen(by ? by->k[0] : NULL);
  AlgExpr **byE = tqArenaAlloc(q->a, sizeof(AlgExpr *) * (size_t)(nby ? nby : 1));
  const char **byN = tqArenaAlloc(q->a, sizeof(char *) * (size_t)(nby ? nby : 1));
  int i = 0, ok = arg != NULL;
  for (AstNode *b = by ? by->k[0] : NULL; b; b = b->next, i++) {
    byE[i] = resolved(q, tyValue(q, b));
    if (!byE[i]) ok = 0;
    else if (byE[i]->type.kind == TY_BOOL) {
      err(q, b->loc, "a by-list takes values, not conditions");
      ok = 0;
    }
    byN[i] = byE[i] && byE[i]->kind == AX_COL ? byE[i]->name : tqArenaPrintf(q->a, "by%d", i + 1);
  }
  for (int j = 0; j < nby && ok; j++) /* two by-values named alike (T.Kind, E.Kind) get distinct columns */
    for (int k2 = 0; k2 < j; k2++)
      if (!strcasecmp(byN[j], byN[k2])) byN[j] = tqArenaPrintf(q->a, "by%d", j + 1);
  AlgExpr *wh = NULL, *wn = NULL;
  if (where) {
    wh = resolved(q, tyValue(q, where->k[0]));
    if (wh && wh->type.kind != TY_BOOL) wh = err(q, where->k[0]->loc, "the aggregate's where clause needs a condition");
    if (!wh) ok = 0;
  }
  if (when) {
    wn = toPred(q, tyTime(q, when->k[0]), when->k[0]->loc);
    if (!wn) ok = 0;
  }
  q->inAgg = 0;
  for (int j = 0; j < nn; j++) q->var[j] = saveV[j];
  q->nvar = saveN;
  if (!ok) return NULL;
  char b1[64];
  AlgType vt = arg->type;
  switch (fn) {
    case AGG_COUNT:
    case AGG_COUNTU:
    case AGG_ANY: vt = tyOf(TY_INT); break;
    case AGG_SUM:
    case AGG_SUMU:
    case AGG_AVG:
    case AGG_AVGU:
      if (!isNum(arg->type))
        return err(q, x->k[0]->loc, "%s needs a numeric argument, not %s", x->s, algTypeName(arg->type, b1, sizeof b1));
      if (fn == AGG_AVG || fn == AGG_AVGU) vt = tyOf(TY_FLOAT);
      break;
    default: break;
  }
  if (arg->type.kind == TY_BOOL) return err(q, x->k[0]->loc, "an aggregate takes a value, not a condition");
  /* the term */
  AlgAggSpec *g = tqArenaAlloc(q->a, sizeof *g);
  g->fn = fn;
  g->arg = arg;
  g->nby = nby;
  g->by = byE;
  g->byName = byN;
  g->where = wh;
  g->type = vt;
  int anyDerived = 0;
  for (int j = 0; j < nn; j++) anyDerived |= rs[j]->derived != NULL;
  g->set = anyDerived && (fn == AGG_COUNT || fn == AGG_SUM || fn == AGG_AVG);
  /* a sampled interval relation is known only at its samples: each stands
  ** for the state until the next request (a step function, not a spike
  ** per sample with a false 0 between them), and nothing is known before
  ** the first request (one variable; a join is over what its spans share) */
  if (nn == 1 && rs[0]->rel && rs[0]->rel->mode == ALG_MODE_SAMPLED && !rs[0]->rel->isEvent) g->sample = q->s->prog->cat.tick;
  if (win) {
    g->window = win->op2;
    g->width = win->i;
    if (win->op2 == WIN_EACH && win->i <= 0) return err(q, win->loc2, "a window must be longer than zero");
  }
  const char *av;
  int k = q->nagg + 1;
  do av = tqArenaPrintf(q->a, "agg%d", k++);
  while (cpRangeLookup(q->s, av) || findVar(q, av));
  AlgNode *inner = NULL;
  if (nn == 1) {
    /* The inner when is a filter like the inner where: it decides what
    ** counts, not which groups exist (a group whose tuples all fail it
    ** counts 0).  With a by-list the operator evaluates it; a scalar
    ** aggregate has one group whatever comes, so a sigmaT below it is the
    ** same and lets the optimizer narrow what its sensors collect. */
    inner = termFor(q, &local[0]);
    if (wn && nby) g->when = wn;
    else if (wn) inner = algSigmaT(q->a, wn, inner);
  } else {
    /* A join: a tuple of the aggregate is a combination of its variables'
    ** tuples that overlap (and pass the inner when), valid over their
    ** intersection: an event when one of them is an event. */
    int anyEvent = 0;
    AlgExpr *ov = NULL;
    for (int j = 0; j < nn; j++) {
      AlgNode *term = termFor(q, &local[j]);
      inner = j ? algProduct(q->a, ALG_PRODUCT, inner, term) : term;
      anyEvent |= isEventVar(&local[j]);
      AlgExpr *tv = algExprNew(q->a, AX_TVAR, tyOf(TY_TIME));
      tv->var = local[j].var;
      ov = ov ? algExprBin(q->a, AX_OVERLAP, 0, tyOf(TY_TIME), ov, tv) : tv;
    }
    AlgExpr *pred = algExprCopy(q->a, ov);
    pred->kind = AX_TOVERLAP;
    pred->type = tyOf(TY_BOOL);
    if (wn) pred = algExprBin(q->a, AX_AND, 0, tyOf(TY_BOOL), pred, wn);
    inner = algSigmaT(q->a, pred, inner);
    AlgExpr *b = algExprNew(q->a, AX_BEGINOF, tyOf(TY_TIME)), *e = NULL;
    b->a = ov;
    if (!anyEvent) {
      e = algExprNew(q->a, AX_ENDOF, tyOf(TY_TIME));
      e->a = algExprCopy(q->a, ov);
    }
    inner = algPiT(q->a, anyEvent, b, e, av, inner);
  }
  AlgNode *node = algAgg(q->a, g, av, inner);
  /* link through the by-list to the outer variables of the same names:
  ** each by-value whose tuple variables are all outer variables */
  AlgExpr *link = NULL;
  int *linkedBy = tqArenaAlloc(q->a, sizeof(int) * (size_t)(nby ? nby : 1));
  for (int j = 0; j < nby; j++) {
    OuterCheck oc = {q, 0, 1};
    algExprVars(byE[j], outerVar, &oc);
    if (!oc.any || !oc.all) continue;
    linkedBy[j] = 1;
    AlgExpr *e = algExprBin(q->a, AX_CMP, OPB_EQ, tyOf(TY_BOOL), algExprCopy(q->a, byE[j]),
                            algExprCol(q->a, av, byN[j], byE[j]->type));
    link = link ? algExprBin(q->a, AX_AND, 0, tyOf(TY_BOOL), link, e) : e;
  }
  q->agg[q->nagg].nlocal = nn;
  for (int j = 0; j < nn; j++) q->agg[q->nagg].range[j] = rs[j];
  q->agg[q->nagg].linkedBy = linkedBy;
  q->agg[q->nagg].when = wn;
  q->agg[q->nagg].var = av;
  q->agg[q->nagg].node = node;
  q->agg[q->nagg].link = link;
  q->nagg++;
  AlgExpr *v = algExprCol(q->a, av, "value", vt);
  v->loc = x->loc;
  return v;
}

/* ================================================================ notes */

static void splitAnd(AlgExpr *e, TqVec *out);

/* The columns of e (bounded by the front end's depth limit). */
static void colsIn(AlgExpr *e, TqVec *out) {
  if (!e) return;
  if (e->kind == AX_COL) tqVecPush(out, e);
  colsIn(e->a, out);
  colsIn(e->b, out);
}

static int isAggVar(const QCtx *q, const char *var) {
  for (int i = 0; i < q->nagg; i++)
    if (var && !strcasecmp(q->agg[i].var, var)) return 1;
  return 0;
}

/* The two TQuel traps a new user falls into, as notes (not errors) with
** the fix (issue 14.10):
**  - an outer where condition on the variable of an aggregate filters the
**    outer tuples, not what the aggregate counts: its variable is its own;
**    a condition on a by-attribute is the same either way, one that
**    involves an aggregate's value compares with it, and an aggregate with
**    an inner where or when shows its writer knows where conditions go, so
**    none of these is noted;
**  - with no when clause, a traced event joined (in the where) to a traced
**    interval must happen during it (the default when is overlap): empty
**    when the event always comes first. */
static void trapNotes(QCtx *q, AlgExpr *wherePred, const AstNode *when, CpQuery *cq) {
  if (!wherePred) return;
  TqVec conj = {0};
  splitAnd(wherePred, &conj);
  int noted[16] = {0}, joinNoted = when != NULL;
  for (int c = 0; c < conj.n; c++) {
    TqVec cols = {0};
    colsIn(conj.v[c], &cols);
    int withAgg = 0;
    for (int k = 0; k < cols.n; k++) withAgg |= isAggVar(q, ((AlgExpr *)cols.v[k])->var);
    for (int i = 0; i < q->nagg && !withAgg; i++) {
      if (noted[i] || q->agg[i].nlocal != 1) continue;
      const char *v = q->agg[i].range[0]->var;
      const AlgAggSpec *g = q->agg[i].node->agg;
      if (g->where || q->agg[i].when) continue;
      for (int k = 0; k < cols.n; k++) {
        const AlgExpr *col = cols.v[k];
        if (!col->var || strcasecmp(col->var, v)) continue;
        int byAttr = 0;
        for (int j = 0; j < g->nby; j++)
          byAttr |= g->by[j]->kind == AX_COL && g->by[j]->var && !strcasecmp(g->by[j]->var, v) && !strcasecmp(g->by[j]->name, col->name);
        if (byAttr) continue;
        TqBuf fix = {0};
        tqBufPrintf(&fix, "%s(", algAggName(g->fn));
        algExprPrint(g->arg, &fix);
        for (int j = 0; j < g->nby; j++) {
          tqBufPuts(&fix, j ? ", " : " by ");
          algExprPrint(g->by[j], &fix);
        }
        tqBufPuts(&fix, " where ");
        algExprPrint(conj.v[c], &fix);
        if (g->window == WIN_EVER) tqBufPuts(&fix, " for ever");
        else if (g->window == WIN_EACH) tqBufPrintf(&fix, " for each %lldns", (long long)g->width);
        tqBufPuts(&fix, ")");
        tqNote(q->d, col->loc,
               "this condition on %s does not filter what %s(...) counts: the aggregate's %s is a variable of its own, over "
               "all of %s; to count only what it selects, put the condition inside: %s",
               v, algAggName(g->fn), v, q->agg[i].range[0]->rel ? q->agg[i].range[0]->rel->name
                                       : q->agg[i].range[0]->derived ? q->agg[i].range[0]->derived->name : "Clock",
               fix.s);
        tqBufFree(&fix);
        noted[i] = 1;
        break;
      }
    }
    /* an event joined to an interval under the default when */
    for (int k = 0; k < cols.n && !joinNoted; k++) {
      const AlgExpr *ce = cols.v[k];
      VarUse *e = findVar(q, ce->var);
      CpRange *er = e ? e->range : NULL;
      int isEv = er && ((er->rel && er->rel->isEvent && er->rel->mode != ALG_MODE_SAMPLED) || (er->derived && er->derived->isEvent));
      if (!isEv) continue;
      for (int m = 0; m < cols.n; m++) {
        const AlgExpr *ch = cols.v[m];
        VarUse *h = findVar(q, ch->var);
        CpRange *hr = h ? h->range : NULL;
        if (!hr || !hr->rel || hr->rel->entity || hr->rel->isEvent || hr->rel->mode == ALG_MODE_SAMPLED) continue;
        const AlgExpr *cc = conj.v[c];
        /* a note for check, and for run when the answer is empty */
        cq->emptyNoteLoc = cc->loc.src ? cc->loc : ce->loc;
        cq->emptyNote = tqArenaPrintf(q->a,
                                      "no when clause: %s and %s must overlap (TQuel's default), so the event %s counts only "
                                      "when it happens during %s; if it comes before (a request before its handling), the "
                                      "answer is empty: write `when %s precede %s`",
                                      e->var, h->var, e->var, h->var, e->var, h->var);
        joinNoted = 1; /* one note per statement */
        break;
      }
    }
    tqVecFree(&cols);
  }
  tqVecFree(&conj);
}

/* ================================================================ retrieve */

static void splitAnd(AlgExpr *e, TqVec *out) {
  if (e->kind == AX_AND) {
    splitAnd(e->a, out);
    splitAnd(e->b, out);
  } else {
    tqVecPush(out, e);
  }
}

static AlgExpr *tvar(QCtx *q, const char *v) {
  AlgExpr *e = algExprNew(q->a, AX_TVAR, tyOf(TY_TIME));
  e->var = v;
  return e;
}

/* V1 overlap V2 overlap ... Vk as a temporal value, over the outer
** variables and then the aggregates' variables (from index `first`). */
static AlgExpr *overlapAll(QCtx *q, int first) {
  int n = q->nvar + q->nagg;
  AlgExpr *e = NULL;
  for (int i = first; i < n; i++) {
    AlgExpr *v = tvar(q, i < q->nvar ? q->var[i].var : q->agg[i - q->nvar].var);
    e = e ? algExprBin(q->a, AX_OVERLAP, 0, tyOf(TY_TIME), e, v) : v;
  }
  return e;
}

static int cmpLoc(const void *x, const void *y) {
  const VarUse *a = x, *b = y;
  if (a->loc.src != b->loc.src) return 0;
  if (a->loc.line != b->loc.line) return a->loc.line - b->loc.line;
  return a->loc.col - b->loc.col;
}

static void retrieveInner(CpSema *s, AstNode *st) {
  QCtx q = {0};
  int nerr0 = s->diag->nerr;
  q.s = s;
  q.a = s->a;
  q.d = s->diag;
  AstNode *valid = st->k[1], *where = st->k[2], *when = st->k[3];
  if (valid && valid->next) {
    tqError(s->diag, valid->loc, "more than one valid clause");
    return;
  }
  if (where && where->next) {
    tqError(s->diag, where->loc, "more than one where clause");
    return;
  }
  if (when && when->next) {
    tqError(s->diag, when->loc, "more than one when clause");
    return;
  }
  if (st->s) {
    int n0 = s->diag->nerr;
    AlgCatalog *c = &s->prog->cat;
    AlgRel *r = algCatRel(c, st->s);
    AlgDerived *dv = algCatDerived(c, st->s);
    if (!strcasecmp(st->s, "Clock")) tqError(s->diag, st->loc2, "'Clock' is predefined");
    else if (r || dv)
      tqError(s->diag, st->loc2, "duplicate name '%s': a relation of that name is already defined at %s:%d:%d", st->s,
              (r ? r->loc : dv->loc).src ? (r ? r->loc : dv->loc).src->name : "?", (r ? r->loc : dv->loc).line,
              (r ? r->loc : dv->loc).col);
    if (s->diag->nerr > n0) return;
  }

  /* outer tuple variables, in order of first appearance */
  for (AstNode *t = st->k[0]; t; t = t->next) {
    if (t->op == 1) useVar(&q, t->k[0]->s, t->k[0]->loc);
    else collectVars(&q, t->k[0], 0);
  }
  if (valid) {
    collectVars(&q, valid->k[0], 1);
    collectVars(&q, valid->k[1], 1);
  }
  if (where) collectVars(&q, where->k[0], 0);
  if (when) collectVars(&q, when->k[0], 1);
  if (q.bad) return;
  qsort(q.var, (size_t)q.nvar, sizeof(VarUse), cmpLoc);

  /* target list */
  int ntarget = 0;
  for (AstNode *t = st->k[0]; t; t = t->next) {
    if (t->op == 1) {
      int n;
      varAttrs(findVar(&q, t->k[0]->s), &n);
      ntarget += n;
    } else {
      ntarget++;
    }
  }
  AlgExpr **pe = tqArenaAlloc(q.a, sizeof(AlgExpr *) * (size_t)(ntarget + 16));
  const char **pn = tqArenaAlloc(q.a, sizeof(char *) * (size_t)(ntarget ? ntarget : 1));
  TqLoc *pl = tqCalloc((size_t)(ntarget ? ntarget : 1), sizeof(TqLoc));
  int np = 0;
  for (AstNode *t = st->k[0]; t; t = t->next) {
    if (t->op == 1) {
      VarUse *u = findVar(&q, t->k[0]->s);
      int n;
      const AlgAttr *at = varAttrs(u, &n);
      if (n == 0) tqError(s->diag, t->loc, "%s (Clock) has no attributes", u->var);
      for (int i = 0; i < n; i++) {
        pe[np] = algExprCol(q.a, u->var, at[i].name, at[i].type);
        pl[np] = t->loc;
        pn[np++] = at[i].name;
      }
      continue;
    }
    AlgExpr *e = resolved(&q, tyValue(&q, t->k[0]));
    if (!e) continue;
    if (e->type.kind == TY_BOOL) {
      err(&q, t->k[0]->loc, "a target must be a value, not a condition");
      continue;
    }
    pl[np] = t->loc;
    pe[np] = e;
    pn[np++] = t->s ? t->s : e->name;
  }
  if (np > TQ_MAX_ATTRS) err(&q, pl[TQ_MAX_ATTRS], "the target list has more than %d attributes", TQ_MAX_ATTRS);
  for (int i = 0; i < np && i <= TQ_MAX_ATTRS; i++) /* (quadratic: within the bound) */
    for (int j = 0; j < i; j++)
      if (!strcasecmp(pn[i], pn[j])) err(&q, pl[i], "duplicate attribute name '%s' in the target list", pn[i]);
  free(pl);

  AlgExpr *wherePred = NULL, *whenPred = NULL, *vfrom = NULL, *vto = NULL;
  if (where) {
    wherePred = resolved(&q, tyValue(&q, where->k[0]));
    if (wherePred && wherePred->type.kind != TY_BOOL) {
      err(&q, where->k[0]->loc, "where clause needs a condition");
      wherePred = NULL;
    }
  }
  if (when) whenPred = toPred(&q, tyTime(&q, when->k[0]), when->k[0]->loc);
  if (valid) {
    vfrom = needTime(&q, tyTime(&q, valid->k[0]), valid->k[0]->loc, "valid");
    if (valid->op == VALID_FROMTO) vto = needTime(&q, tyTime(&q, valid->k[1]), valid->k[1]->loc, "valid");
  }
  if (q.bad || s->diag->nerr > nerr0) return;
  int nterm = q.nvar + q.nagg;
  if (nterm == 0) {
    tqError(s->diag, st->loc, "retrieve names no tuple variable (range over a relation and use it in the target list)");
    return;
  }

  /* ---- translation: product of the terms (outer variables, then aggregates) */
  AlgNode *t = NULL;
  for (int i = 0; i < q.nvar; i++) tqVecPush(&q.used, (void *)q.var[i].var);
  for (int i = 0; i < q.nvar; i++) {
    AlgNode *term = termFor(&q, &q.var[i]);
    t = t ? algProduct(q.a, ALG_PRODUCT, t, term) : term;
  }
  for (int i = 0; i < q.nagg; i++) t = t ? algProduct(q.a, ALG_PRODUCT, t, q.agg[i].node) : q.agg[i].node;
  tqVecFree(&q.used);
  if (wherePred) {
    TqVec conj = {0};
    splitAnd(wherePred, &conj);
    for (int i = conj.n - 1; i >= 0; i--) t = algSigma(q.a, conj.v[i], t);
    tqVecFree(&conj);
  }
  for (int i = q.nagg - 1; i >= 0; i--) /* by-list links */
    if (q.agg[i].link) t = algSigma(q.a, q.agg[i].link, t);
  int anyEvent = 0;
  for (int i = 0; i < q.nvar; i++) anyEvent |= isEventVar(&q.var[i]);
  if (whenPred) {
    t = algSigmaT(q.a, whenPred, t);
  } else if (nterm >= 2) {
    AlgExpr *o = overlapAll(&q, 0);
    o->kind = AX_TOVERLAP;
    o->type = tyOf(TY_BOOL);
    t = algSigmaT(q.a, o, t);
  }
  int isEvent;
  if (valid) {
    isEvent = valid->op == VALID_AT;
    t = algPiT(q.a, isEvent, vfrom, vto, NULL, t);
    if (q.nagg) t->vclip = overlapAll(&q, q.nvar); /* the aggregates' values at the result's time */
  } else if (nterm == 1 && q.nvar == 1) {
    isEvent = anyEvent;
    AlgExpr *v = tvar(&q, q.var[0].var);
    if (isEvent) {
      t = algPiT(q.a, 1, v, NULL, NULL, t);
    } else {
      AlgExpr *b = algExprNew(q.a, AX_BEGINOF, tyOf(TY_TIME)), *e = algExprNew(q.a, AX_ENDOF, tyOf(TY_TIME));
      b->a = v;
      e->a = tvar(&q, q.var[0].var);
      t = algPiT(q.a, 0, b, e, NULL, t);
    }
  } else {
    isEvent = anyEvent;
    AlgExpr *b = algExprNew(q.a, AX_BEGINOF, tyOf(TY_TIME));
    b->a = overlapAll(&q, 0);
    if (isEvent) {
      t = algPiT(q.a, 1, b, NULL, NULL, t);
    } else {
      AlgExpr *e = algExprNew(q.a, AX_ENDOF, tyOf(TY_TIME));
      e->a = overlapAll(&q, 0);
      t = algPiT(q.a, 0, b, e, NULL, t);
    }
  }
  t = algPi(q.a, np, pe, pn, NULL, t);

  CpQuery *cq = tqArenaAlloc(q.a, sizeof *cq);
  trapNotes(&q, wherePred, when, cq);
  cq->name = st->s;
  cq->tree = t;
  cq->isEvent = isEvent;
  cq->nattr = np;
  cq->attr = tqArenaAlloc(q.a, sizeof(AlgAttr) * (size_t)(np ? np : 1));
  for (int i = 0; i < np; i++) {
    cq->attr[i].name = pn[i];
    cq->attr[i].type = pe[i]->type;
  }
  cq->loc = st->loc;
  cq->index = s->prog->queries.n;
  /* the typed pieces, for the SQL translation */
  CpSem *sem = tqArenaAlloc(q.a, sizeof *sem);
  sem->nvar = q.nvar;
  sem->vars = tqArenaAlloc(q.a, sizeof(CpVarInfo) * (size_t)(q.nvar ? q.nvar : 1));
  for (int i = 0; i < q.nvar; i++) {
    CpRange *r = q.var[i].range;
    sem->vars[i] = (CpVarInfo){q.var[i].var, r->rel, r->derived, r->clockN};
  }
  sem->nagg = q.nagg;
  sem->aggs = tqArenaAlloc(q.a, sizeof(CpAggInfo) * (size_t)(q.nagg ? q.nagg : 1));
  for (int i = 0; i < q.nagg; i++) {
    AlgNode *an = q.agg[i].node;
    int nl = q.agg[i].nlocal;
    CpVarInfo *loc = tqArenaAlloc(q.a, sizeof(CpVarInfo) * (size_t)nl);
    for (int j = 0; j < nl; j++) {
      CpRange *r = q.agg[i].range[j];
      loc[j] = (CpVarInfo){r->var, r->rel, r->derived, r->clockN};
    }
    sem->aggs[i] = (CpAggInfo){q.agg[i].var, an->agg, loc[0], q.agg[i].when, q.agg[i].link != NULL, nl, loc,
                               q.agg[i].linkedBy};
  }
  sem->ntarget = np;
  sem->targets = (const AlgExpr **)pe;
  sem->names = pn;
  sem->where = wherePred;
  sem->when = whenPred;
  sem->valid = valid ? valid->op : 0;
  sem->vfrom = vfrom;
  sem->vto = vto;
  cq->sem = sem;
  tqVecPush(&s->prog->queries, cq);
  if (st->s) {
    AlgDerived *dv = tqArenaAlloc(q.a, sizeof *dv);
    dv->name = st->s;
    dv->tree = t;
    dv->isEvent = isEvent;
    dv->nattr = np;
    dv->attr = cq->attr;
    dv->loc = st->loc2;
    dv->query = cq->index;
    tqVecPush(&s->prog->cat.derived, dv);
  }
}

void cpSemaRetrieve(CpSema *s, AstNode *st) {
  cpSemaLaterRanges(s, st);
  int n0 = s->prog->queries.n;
  retrieveInner(s, st);
  if (s->prog->queries.n == n0 && st->s && !algCatDerived(&s->prog->cat, st->s) && !algCatRel(&s->prog->cat, st->s))
    tqVecPush(&s->failedNames, (void *)st->s); /* uses of it later stay quiet */
}
