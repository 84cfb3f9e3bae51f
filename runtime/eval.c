/*
** eval.c - compiled expressions over tuples: explicit values (where, target
** lists) and temporal values with bounds (when, valid); see rtInt.h.
**
** Values live in 64-bit slots: integers, enum indexes, symbols (strings and
** entity names) as their ids, doubles as their bits.  Entities and strings
** compare by name for ordering and by symbol for equality.
*/
#include <string.h>

#include "rtInt.h"

/* ================================================================ compile */

/* The one-step shape of r (RX_*), its operands compiled already. */
static uint8_t fastShape(const RtExpr *r) {
  if ((r->kind == AX_OVERLAP || r->kind == AX_TOVERLAP) && r->a->kind == AX_TVAR && r->b->kind == AX_TVAR)
    return RX_OVERLAP2;
  if (r->ty == TY_FLOAT) return RX_NONE;
  if (r->kind == AX_COL || r->kind == AX_AGG) return RX_COL;
  if (r->kind == AX_CONST) return RX_CONST;
  int leaves = r->a && r->b && (r->a->fast == RX_COL || r->a->fast == RX_CONST) &&
               (r->b->fast == RX_COL || r->b->fast == RX_CONST);
  if (!leaves) return RX_NONE;
  /* names order by their text, not their symbol: only = and != compare ids */
  if (r->kind == AX_CMP && r->cmpTy != TY_FLOAT &&
      (r->op == OPB_EQ || r->op == OPB_NE || (r->cmpTy != TY_STRING && r->cmpTy != TY_ENTITY)))
    return RX_CMP;
  if (r->kind == AX_ARITH) return RX_ARITH;
  return RX_NONE;
}

/* A conjunction of one-step comparisons (RX_AND), its comparisons listed
** in evaluation order; else r's own shape. */
static uint8_t andShape(RtExpr *r) {
  if (r->kind != AX_AND || !r->a || !r->b) return fastShape(r);
  RtExpr *k[2] = {r->a, r->b};
  for (int i = 0; i < 2; i++)
    if (k[i]->fast != RX_CMP && k[i]->fast != RX_AND) return RX_NONE;
  for (int i = 0; i < 2; i++) {
    int n = k[i]->fast == RX_AND ? k[i]->nconj : 1;
    r->conj = tqRealloc(r->conj, sizeof(RtExpr *) * (size_t)(r->nconj + n));
    if (k[i]->fast == RX_AND) memcpy(r->conj + r->nconj, k[i]->conj, sizeof(RtExpr *) * (size_t)n);
    else r->conj[r->nconj] = k[i];
    r->nconj += n;
  }
  return RX_AND;
}

/* The values a of column li[0] for which "a cmask k" holds, as one range
** [lo, lo + span] or (inv) outside one.  The empty set is outside the
** whole range. */
static void cmpRange(RtCmpX *x) {
  int64_t k = x->k;
  uint64_t all = UINT64_MAX;
  x->lo = 0, x->span = all, x->inv = 0;
  switch (x->cmask) {
    case 2: x->lo = k, x->span = 0; break;              /* = */
    case 5: x->lo = k, x->span = 0, x->inv = 1; break;  /* != */
    case 3: x->lo = INT64_MIN, x->span = (uint64_t)k - (uint64_t)INT64_MIN; break;
    case 6: x->lo = k, x->span = (uint64_t)INT64_MAX - (uint64_t)k; break;
    case 1: /* < */
      if (k == INT64_MIN) x->inv = 1;
      else x->lo = INT64_MIN, x->span = (uint64_t)(k - 1) - (uint64_t)INT64_MIN;
      break;
    case 4: /* > */
      if (k == INT64_MAX) x->inv = 1;
      else x->lo = k + 1, x->span = (uint64_t)INT64_MAX - (uint64_t)(k + 1);
      break;
    case 7: break;              /* always */
    default: x->inv = 1; break; /* never */
  }
}

RtExpr *rtExprCompile(const AlgExpr *e, const AlgSchema *s, TqBuf *msg) {
  if (!e) return NULL;
  RtExpr *r = tqCalloc(1, sizeof *r);
  r->kind = (uint8_t)e->kind;
  r->op = (uint8_t)e->op;
  r->ty = (uint8_t)e->type.kind;
  r->ival = e->ival;
  r->fval = e->fval;
  if (e->kind == AX_COL || e->kind == AX_AGG) {
    r->idx = algSchemaCol(s, e->var, e->name);
    if (r->idx < 0) {
      tqBufPrintf(msg, "column %s%s%s not found", e->var ? e->var : "", e->var ? "." : "", e->name);
      free(r);
      return NULL;
    }
  } else if (e->kind == AX_TVAR) {
    r->idx = algSchemaTvar(s, e->var);
    if (r->idx < 0) {
      tqBufPrintf(msg, "time of %s not found", e->var ? e->var : "?");
      free(r);
      return NULL;
    }
    r->isEvent = (uint8_t)s->tv[r->idx].isEvent;
  }
  if (e->a) {
    r->a = rtExprCompile(e->a, s, msg);
    if (!r->a) {
      rtExprFree(r);
      return NULL;
    }
  }
  if (e->b) {
    r->b = rtExprCompile(e->b, s, msg);
    if (!r->b) {
      rtExprFree(r);
      return NULL;
    }
  }
  if (e->kind == AX_CMP) {
    AlgTypeKind ka = e->a->type.kind, kb = e->b->type.kind;
    r->cmpTy = (uint8_t)(ka == TY_FLOAT || kb == TY_FLOAT ? TY_FLOAT : ka);
  }
  r->fast = andShape(r);
  if (r->fast == RX_CMP) {
    static const uint8_t masks[] = {[OPB_EQ] = 2, [OPB_NE] = 5, [OPB_LT] = 1, [OPB_LE] = 3, [OPB_GT] = 4, [OPB_GE] = 6};
    r->cmask = r->op < (int)TQ_ARRAY_SIZE(masks) ? masks[r->op] : 0;
  }
  if (r->fast == RX_CMP || r->fast == RX_ARITH) {
    const RtExpr *k[2] = {r->a, r->b};
    for (int i = 0; i < 2; i++) {
      r->lc[i] = k[i]->fast == RX_CONST;
      r->li[i] = k[i]->idx;
      r->lk[i] = k[i]->ival;
    }
  }
  if (r->fast == RX_AND) {
    r->cx = tqCalloc((size_t)r->nconj, sizeof(RtCmpX));
    for (int i = 0; i < r->nconj; i++) {
      const RtExpr *c = r->conj[i];
      RtCmpX *x = &r->cx[i];
      if (c->lc[0] && c->lc[1]) { /* (two constants: the tree's loop) */
        free(r->cx);
        r->cx = NULL;
        break;
      }
      x->cmask = c->cmask;
      if (c->lc[0]) { /* k op col: col op' k, the bits for < and > swapped */
        x->li[0] = c->li[1];
        x->k = c->lk[0];
        x->cmask = (uint8_t)((c->cmask & 2) | (c->cmask >> 2 & 1) | (c->cmask << 2 & 4));
      } else {
        x->li[0] = c->li[0];
        x->cols = !c->lc[1];
        x->li[1] = c->li[1];
        x->k = c->lk[1];
      }
      if (!x->cols) cmpRange(x);
    }
  }
  return r;
}

void rtExprFree(RtExpr *e) {
  if (!e) return;
  rtExprFree(e->a);
  rtExprFree(e->b);
  free(e->conj);
  free(e->cx);
  free(e);
}

/* ================================================================ values */

static double asF(int64_t slot) {
  double d;
  memcpy(&d, &slot, sizeof d);
  return d;
}
static int64_t fromF(double d) {
  int64_t s;
  memcpy(&s, &d, sizeof s);
  return s;
}

double rtEvalFloat(const RtExpr *e, const int64_t *v) {
  if (e->ty == TY_FLOAT) {
    switch (e->kind) {
      case AX_COL:
      case AX_AGG: return asF(v[e->idx]);
      case AX_CONST: return e->fval;
      case AX_NEG: return -rtEvalFloat(e->a, v);
      case AX_ARITH: {
        double a = rtEvalFloat(e->a, v), b = rtEvalFloat(e->b, v);
        switch (e->op) {
          case OPB_ADD: return a + b;
          case OPB_SUB: return a - b;
          case OPB_MUL: return a * b;
          default: return b == 0 ? 0 : a / b; /* by zero: 0, like integers (documented) */
        }
      }
      default: return 0;
    }
  }
  return (double)rtEvalInt(e, v);
}

/* ---------------------------------------------------------------- strings
** Strings and entity names are symbols; a computed string is interned (a
** symbol lives as long as the process, like every name the run saw).
** Lengths count UTF-8 characters, as SQL's substr and LIKE do. */

/* The length in bytes of the UTF-8 character at s (1 for a stray byte). */
static size_t utf8Len(const char *s) {
  size_t n = 1;
  while (s[n] && ((unsigned char)s[n] & 0xC0) == 0x80) n++;
  return n;
}

/* Does s match pattern p (% any string, _ any one character, the rest
** itself, case-sensitive)?  Iterative, with one backtrack point: linear in
** practice, quadratic at worst. */
int rtLikeMatch(const char *s, const char *p) {
  const char *star = NULL, *resume = NULL;
  while (*s) {
    if (*p == '%') {
      while (*p == '%') p++;
      if (!*p) return 1;
      star = p;
      resume = s;
    } else if (*p == '_') {
      p++;
      s += utf8Len(s);
    } else if (*p && *p == *s) {
      p++;
      s++;
    } else if (star) {
      p = star;
      resume += utf8Len(resume);
      s = resume;
    } else {
      return 0;
    }
  }
  while (*p == '%') p++;
  return !*p;
}

static int64_t concatSym(const RtExpr *e, const int64_t *v) {
  const char *a = tqSymName((int32_t)rtEvalInt(e->a, v)), *b = tqSymName((int32_t)rtEvalInt(e->b, v));
  size_t na = strlen(a), nb = strlen(b);
  char small[256], *buf = na + nb <= sizeof small ? small : tqMalloc(na + nb);
  memcpy(buf, a, na);
  memcpy(buf + na, b, nb);
  int32_t id = tqSym(buf, na + nb);
  if (buf != small) free(buf);
  return id;
}

static int64_t prefixSym(const RtExpr *e, const int64_t *v) {
  int64_t sym = rtEvalInt(e->a, v);
  const char *s = tqSymName((int32_t)sym);
  size_t n = 0;
  if (e->op == 1) { /* up to the first separator */
    const char *at = strstr(s, tqSymName((int32_t)rtEvalInt(e->b, v)));
    if (!at) return sym;
    n = (size_t)(at - s);
  } else {
    int64_t k = rtEvalInt(e->b, v);
    for (int64_t i = 0; i < k && s[n]; i++) n += utf8Len(s + n);
    if (!s[n]) return sym;
  }
  return tqSym(s, n);
}


static inline int cmpOp(int op, int c) {
  switch (op) {
    case OPB_EQ: return c == 0;
    case OPB_NE: return c != 0;
    case OPB_LT: return c < 0;
    case OPB_LE: return c <= 0;
    case OPB_GT: return c > 0;
    default: return c >= 0;
  }
}

#define fastCmp rtFastCmp

int64_t rtEvalInt(const RtExpr *e, const int64_t *v) {
  switch (e->fast) {
    case RX_COL: return v[e->idx];
    case RX_CONST: return e->ival;
    case RX_CMP: return fastCmp(e, v);
    case RX_ARITH: return rtArith(e->op, rtLeafInt(e, 0, v), rtLeafInt(e, 1, v));
    default: break;
  }
  switch (e->kind) {
    case AX_CONCAT: return concatSym(e, v);
    case AX_PREFIX: return prefixSym(e, v);
    case AX_LIKE: return rtEvalBool(e, v);
    case AX_COL:
    case AX_AGG:
      if (e->ty == TY_FLOAT) return (int64_t)asF(v[e->idx]);
      return v[e->idx];
    case AX_CONST: return e->ty == TY_FLOAT ? (int64_t)e->fval : e->ival;
    case AX_NEG: { /* saturates like 0 - x: -INT64_MIN is INT64_MAX */
      int64_t a = rtEvalInt(e->a, v);
      return a == INT64_MIN ? INT64_MAX : -a;
    }
    case AX_ARITH: {
      if (e->ty == TY_FLOAT) return (int64_t)rtEvalFloat(e, v);
      return rtArith(e->op, rtEvalInt(e->a, v), rtEvalInt(e->b, v));
    }
    case AX_CMP:
    case AX_AND:
    case AX_OR:
    case AX_NOT: return rtEvalBool(e, v);
    default: return 0;
  }
}

int64_t rtEvalSlot(const RtExpr *e, const int64_t *v) {
  if (e->fast == RX_COL) return v[e->idx];
  if (e->ty == TY_FLOAT) return fromF(rtEvalFloat(e, v));
  return rtEvalInt(e, v);
}

static int cmp3(const RtExpr *e, const int64_t *v) {
  switch (e->cmpTy) {
    case TY_FLOAT: {
      double a = rtEvalFloat(e->a, v), b = rtEvalFloat(e->b, v);
      return a < b ? -1 : a > b ? 1 : 0;
    }
    case TY_STRING:
    case TY_ENTITY: {
      int64_t a = rtEvalInt(e->a, v), b = rtEvalInt(e->b, v);
      if (a == b) return 0;
      if (e->op == OPB_EQ || e->op == OPB_NE) return 1;
      int c = strcmp(tqSymName((int32_t)a), tqSymName((int32_t)b));
      return c < 0 ? -1 : c > 0;
    }
    default: {
      int64_t a = rtEvalInt(e->a, v), b = rtEvalInt(e->b, v);
      return a < b ? -1 : a > b ? 1 : 0;
    }
  }
}

int rtEvalBool(const RtExpr *e, const int64_t *v) {
  if (e->fast == RX_CMP) return fastCmp(e, v);
  if (e->fast == RX_AND) {
    for (int i = 0; i < e->nconj; i++)
      if (!fastCmp(e->conj[i], v)) return 0;
    return 1;
  }
  switch (e->kind) {
    case AX_AND: return rtEvalBool(e->a, v) && rtEvalBool(e->b, v);
    case AX_OR: return rtEvalBool(e->a, v) || rtEvalBool(e->b, v);
    case AX_NOT: return !rtEvalBool(e->a, v);
    case AX_CONST: return e->ival != 0;
    case AX_LIKE:
      return rtLikeMatch(tqSymName((int32_t)rtEvalInt(e->a, v)), tqSymName((int32_t)rtEvalInt(e->b, v)));
    case AX_CMP: return cmpOp(e->op, cmp3(e, v));
    default: return rtEvalInt(e, v) != 0;
  }
}

/* ================================================================ time */

static TqTime tmax(TqTime a, TqTime b) { return a > b ? a : b; }
static TqTime tmin(TqTime a, TqTime b) { return a < b ? a : b; }
static RtBound exact(TqTime t) { return (RtBound){t, t}; }
static RtBound bmax(RtBound a, RtBound b) { return (RtBound){tmax(a.lo, b.lo), tmax(a.hi, b.hi)}; }
static RtBound bmin(RtBound a, RtBound b) { return (RtBound){tmin(a.lo, b.lo), tmin(a.hi, b.hi)}; }
static RtBound badd(RtBound a, TqTime d) { return (RtBound){tqTimeAdd(a.lo, d), tqTimeAdd(a.hi, d)}; }

/* End of the span used by predicates: an instant t covers [t, t+1). */
static RtBound spanEnd(const RtTVal *x) { return x->kind == TV_INSTANT ? badd(x->b, 1) : x->e; }

/* The value is written through r (not returned): a returned struct is
** copied with wide loads right after the narrow stores that built it, a
** store-forwarding stall that perf showed as most of this function's time
** in an overlap join. */
static void tvEmpty(RtTVal *r) {
  memset(r, 0, sizeof *r);
  r->kind = TV_EMPTY;
}

/* The value of a tuple variable (a span of the tuple). */
static inline void tvarEval(const RtExpr *e, const RtTCtx *c, RtTVal *r) {
  TqTime from = c->span[2 * e->idx], to = c->span[2 * e->idx + 1];
  r->maybeEmpty = 0;
  if (e->isEvent) {
    r->kind = TV_INSTANT;
    r->b = r->e = exact(from);
  } else {
    r->kind = TV_INTERVAL;
    r->b = exact(from);
    if (to == TQ_OPEN) r->e = (RtBound){tmax(c->endLow, from + 1), TQ_FOREVER};
    else r->e = exact(to);
  }
}

/* The bounds of the end of span i of the tuple (an instant's: at + 1). */
static inline void spanEndAt(const RtTCtx *c, const RtExpr *v, TqTime *lo, TqTime *hi) {
  TqTime from = c->span[2 * v->idx], to = c->span[2 * v->idx + 1];
  if (v->isEvent) *lo = *hi = tqTimeAdd(from, 1);
  else if (to != TQ_OPEN) *lo = *hi = to;
  else *lo = tmax(c->endLow, from + 1), *hi = TQ_FOREVER;
}

/* RX_OVERLAP2: the intersection of two tuple variables' spans, as the
** general case below computes it (begins are known; the end is the earlier
** end, bounded while open), in one step. */
static void overlap2(const RtExpr *e, const RtTCtx *c, RtTVal *r) {
  TqTime l = tmax(c->span[2 * e->a->idx], c->span[2 * e->b->idx]);
  TqTime alo, ahi, blo, bhi;
  spanEndAt(c, e->a, &alo, &ahi);
  spanEndAt(c, e->b, &blo, &bhi);
  TqTime hlo = tmin(alo, blo), hhi = tmin(ahi, bhi);
  if (l >= hhi) {
    tvEmpty(r);
    return;
  }
  r->maybeEmpty = !(l < hlo);
  r->b = exact(l);
  if (e->a->isEvent || e->b->isEvent) {
    r->kind = TV_INSTANT;
    r->e = r->b;
  } else {
    r->kind = TV_INTERVAL;
    r->e = (RtBound){hlo, hhi};
  }
}

/* rtTEval, with the leaves (tuple variables: most operands) inline. */
static inline void operandEval(const RtExpr *e, const RtTCtx *c, RtTVal *r) {
  if (e->kind == AX_TVAR) tvarEval(e, c, r);
  else rtTEval(e, c, r);
}

void rtTEval(const RtExpr *e, const RtTCtx *c, RtTVal *r) {
  RtTVal x, y;
  if (e->kind == AX_TVAR) {
    tvarEval(e, c, r);
    return;
  }
  if (e->fast == RX_OVERLAP2) {
    overlap2(e, c, r);
    return;
  }
  if (e->kind == AX_BEGINOF || e->kind == AX_ENDOF) { /* (every field set: no memset) */
    if (e->a->fast == RX_OVERLAP2) overlap2(e->a, c, &x); /* (valid at begin of (A overlap B)) */
    else rtTEval(e->a, c, &x);
    if (x.kind == TV_EMPTY) {
      *r = x;
      return;
    }
    r->kind = TV_INSTANT;
    r->maybeEmpty = x.maybeEmpty;
    r->b = r->e = e->kind == AX_BEGINOF ? x.b : x.e;
    return;
  }
  memset(r, 0, sizeof *r);
  switch (e->kind) {
    case AX_TCONST:
      r->kind = TV_INSTANT;
      r->b = r->e = exact(e->ival);
      return;
    case AX_NOW:
      r->kind = TV_INSTANT;
      if (c->nowValue != TQ_OPEN) r->b = exact(c->nowValue);
      else r->b = (RtBound){c->now, TQ_FOREVER};
      r->e = r->b;
      return;
    case AX_TSHIFT:
      rtTEval(e->a, c, r);
      if (r->kind == TV_EMPTY) return;
      r->b = badd(r->b, e->ival);
      r->e = badd(r->e, e->ival);
      return;
    case AX_OVERLAP:
    case AX_TOVERLAP: {
      operandEval(e->a, c, &x);
      operandEval(e->b, c, &y);
      if (x.kind == TV_EMPTY || y.kind == TV_EMPTY) {
        tvEmpty(r);
        return;
      }
      RtBound l = bmax(x.b, y.b), h = bmin(spanEnd(&x), spanEnd(&y));
      if (l.lo >= h.hi) {
        tvEmpty(r);
        return;
      }
      r->maybeEmpty = x.maybeEmpty || y.maybeEmpty || !(l.hi < h.lo);
      if (x.kind == TV_INSTANT || y.kind == TV_INSTANT) {
        r->kind = TV_INSTANT;
        r->b = r->e = l;
      } else {
        r->kind = TV_INTERVAL;
        r->b = l;
        r->e = h;
      }
      return;
    }
    case AX_EXTEND: {
      rtTEval(e->a, c, &x);
      rtTEval(e->b, c, &y);
      if (x.kind == TV_EMPTY || y.kind == TV_EMPTY) { /* nothing spans from an empty value */
        tvEmpty(r);
        return;
      }
      r->kind = TV_INTERVAL;
      r->b = bmin(x.b, y.b);
      r->e = bmax(x.e, y.e);
      if (r->b.lo >= r->e.hi) {
        tvEmpty(r);
        return;
      }
      r->maybeEmpty = x.maybeEmpty || y.maybeEmpty || !(r->b.hi < r->e.lo);
      return;
    }
    default: tvEmpty(r); return;
  }
}

static int triAnd(int a, int b) {
  if (a == TRI_F || b == TRI_F) return TRI_F;
  if (a == TRI_T && b == TRI_T) return TRI_T;
  return TRI_U;
}
static int triOr(int a, int b) {
  if (a == TRI_T || b == TRI_T) return TRI_T;
  if (a == TRI_F && b == TRI_F) return TRI_F;
  return TRI_U;
}

int rtTPred(const RtExpr *e, const RtTCtx *c) {
  switch (e->kind) {
    case AX_AND: {
      int a = rtTPred(e->a, c);
      if (a == TRI_F) return TRI_F;
      return triAnd(a, rtTPred(e->b, c));
    }
    case AX_OR: {
      int a = rtTPred(e->a, c);
      if (a == TRI_T) return TRI_T;
      return triOr(a, rtTPred(e->b, c));
    }
    case AX_NOT: {
      int a = rtTPred(e->a, c);
      return a == TRI_U ? TRI_U : !a;
    }
    case AX_CONST: return e->ival ? TRI_T : TRI_F;
    case AX_TOVERLAP: {
      if (e->fast == RX_OVERLAP2) { /* (overlap2, without its value) */
        TqTime l = tmax(c->span[2 * e->a->idx], c->span[2 * e->b->idx]), alo, ahi, blo, bhi;
        spanEndAt(c, e->a, &alo, &ahi);
        spanEndAt(c, e->b, &blo, &bhi);
        if (l >= tmin(ahi, bhi)) return TRI_F;
        return l < tmin(alo, blo) ? TRI_T : TRI_U;
      }
      RtTVal v;
      rtTEval(e, c, &v);
      if (v.kind == TV_EMPTY) return TRI_F;
      return v.maybeEmpty ? TRI_U : TRI_T;
    }
    case AX_PRECEDE: {
      RtTVal x, y;
      rtTEval(e->a, c, &x);
      rtTEval(e->b, c, &y);
      if (x.kind == TV_EMPTY || y.kind == TV_EMPTY) return TRI_F;
      RtBound xe = spanEnd(&x);
      int r;
      if (xe.hi <= y.b.lo) r = TRI_T;
      else if (xe.lo > y.b.hi) r = TRI_F;
      else r = TRI_U;
      if (r == TRI_T && (x.maybeEmpty || y.maybeEmpty)) r = TRI_U;
      return r;
    }
    case AX_TEQUAL: {
      RtTVal x, y;
      rtTEval(e->a, c, &x);
      rtTEval(e->b, c, &y);
      if (x.kind == TV_EMPTY || y.kind == TV_EMPTY) return TRI_F;
      if (x.kind != y.kind) return TRI_F;
      if (x.b.hi < y.b.lo || y.b.hi < x.b.lo || x.e.hi < y.e.lo || y.e.hi < x.e.lo) return TRI_F;
      if (x.b.lo == x.b.hi && y.b.lo == y.b.hi && x.e.lo == x.e.hi && y.e.lo == y.e.hi && !x.maybeEmpty &&
          !y.maybeEmpty)
        return TRI_T;
      return TRI_U;
    }
    default: return TRI_U;
  }
}

/* Is e's value an instant (statically, as rtTEval decides)? */
static int tInstant(const RtExpr *e) {
  switch (e->kind) {
    case AX_TVAR: return e->isEvent;
    case AX_TSHIFT: return tInstant(e->a);
    case AX_OVERLAP:
    case AX_TOVERLAP: return tInstant(e->a) || tInstant(e->b);
    case AX_EXTEND: return 0;
    default: return 1;
  }
}

RtLow rtTExprLow(const RtExpr *e, TqTime spanB, TqTime spanE, TqTime nowLow, int nowKnown) {
  RtLow r = {TQ_BEGINNING, TQ_BEGINNING, TQ_FOREVER, TQ_FOREVER}, x, y;
  switch (e->kind) {
    case AX_TVAR:
      /* a span begins at spanB or later, and so ends; an open one ends at
      ** spanE or later; begins are known, an event's end too */
      r.b = r.e = spanB;
      if (!e->isEvent) r.oe = spanE;
      return r;
    case AX_TCONST: r.b = r.e = e->ival; return r;
    case AX_NOW:
      r.b = r.e = nowLow;
      if (!nowKnown) r.ob = r.oe = nowLow;
      return r;
    case AX_BEGINOF:
    case AX_ENDOF:
      x = rtTExprLow(e->a, spanB, spanE, nowLow, nowKnown);
      if (e->kind == AX_BEGINOF) r.b = r.e = x.b, r.ob = r.oe = x.ob;
      else r.b = r.e = x.e, r.ob = r.oe = x.oe;
      return r;
    case AX_TSHIFT:
      x = rtTExprLow(e->a, spanB, spanE, nowLow, nowKnown);
      r.b = tqTimeAdd(x.b, e->ival);
      r.e = tqTimeAdd(x.e, e->ival);
      r.ob = tqTimeAdd(x.ob, e->ival);
      r.oe = tqTimeAdd(x.oe, e->ival);
      return r;
    case AX_OVERLAP:
    case AX_TOVERLAP:
      /* from the later begin (unknown: one side is, the other is at its
      ** bound or later); to the earlier end (unknown: a known earlier end
      ** would decide it, so it is the unknown side's), or an instant */
      x = rtTExprLow(e->a, spanB, spanE, nowLow, nowKnown);
      y = rtTExprLow(e->b, spanB, spanE, nowLow, nowKnown);
      r.b = tmax(x.b, y.b);
      r.ob = tmin(tmax(x.ob, y.b), tmax(x.b, y.ob));
      if (tInstant(e)) {
        r.e = r.b;
        r.oe = r.ob;
      } else {
        r.e = tmin(x.e, y.e);
        r.oe = tmin(x.oe, y.oe);
      }
      return r;
    case AX_EXTEND:
      /* from the earlier begin to the later end (the other way round) */
      x = rtTExprLow(e->a, spanB, spanE, nowLow, nowKnown);
      y = rtTExprLow(e->b, spanB, spanE, nowLow, nowKnown);
      r.b = tmin(x.b, y.b);
      r.ob = tmin(x.ob, y.ob);
      r.e = tmax(x.e, y.e);
      r.oe = tmin(tmax(x.oe, y.e), tmax(x.e, y.oe));
      return r;
    default:
      r.ob = r.oe = TQ_BEGINNING;
      return r;
  }
}
