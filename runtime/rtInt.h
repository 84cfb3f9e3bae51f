/*
** rtInt.h - private interface of runtime/: compiled expressions, temporal
** values with bounds, and the operator constructors.
**
** Temporal evaluation with partial knowledge.  An interval that is still
** open has an unknown end; at stream time `now` we only know it is in
** [max(now, from+1), forever].  Every temporal value is therefore computed
** as bounds on its endpoints, and every temporal predicate answers true,
** false or unknown.  Operators decide a tuple once the answer is known and
** keep it pending otherwise; knowledge only grows (an END, or time passing),
** so a decision never has to be taken back.
*/
#ifndef RTINT_H
#define RTINT_H

#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ---------------------------------------------------------------- values */
/* One comparison of an RX_AND as its loop reads it: a column against a
** constant (a constant against a column is turned round) or against a
** column. */
typedef struct RtCmpX {
  uint8_t cols;     /* 1: column li[0] against column li[1]; 0: column li[0] against k */
  uint8_t cmask;    /* RtExpr.cmask (turned round with the operands) */
  uint8_t inv;      /* against k: true outside [lo, lo + span], not inside */
  int32_t li[2];    /* the columns */
  int64_t k;        /* the constant */
  int64_t lo;       /* against k: the values for which it is true (or, inv, false) ... */
  uint64_t span;    /* ... are lo to lo + span: one subtraction and one comparison */
} RtCmpX;

typedef struct RtExpr RtExpr;
struct RtExpr {
  uint8_t kind;     /* AX_* */
  uint8_t op;       /* OPB_* */
  uint8_t ty;       /* result AlgTypeKind */
  uint8_t cmpTy;    /* operand type kind for comparisons */
  uint8_t isEvent;  /* AX_TVAR: the span is an event */
  uint8_t fast;     /* RX_*: a shape evaluated without recursion */
  uint8_t cmask;    /* RX_CMP: bit 0, 1, 2 set when true for a < b, a = b, a > b */
  int32_t idx;      /* column or span index */
  int64_t ival;     /* constant */
  double fval;      /* float constant */
  RtExpr *a, *b;
  RtExpr **conj;    /* RX_AND: the comparisons it is the conjunction of (in the tree) */
  int nconj;
  RtCmpX *cx;       /* RX_AND: conj flat, when no comparison is of two constants (else NULL) */
  /* RX_CMP, RX_ARITH: the two leaves copied in (no pointer to follow on the
  ** hot path): leaf i is the constant lk[i] when lc[i], else column li[i] */
  uint8_t lc[2];    /* leaf is a constant */
  int32_t li[2];    /* leaf's column */
  int64_t lk[2];    /* leaf's constant */
};

/* Shapes that most expressions are made of, recognized at compile time
** and evaluated in one step (eval.c): an integer-valued column or
** constant (not a float), a comparison or integer arithmetic of two of
** them, a conjunction of such comparisons, and the intersection (overlap)
** of two tuple variables' spans. */
enum { RX_NONE = 0, RX_COL, RX_CONST, RX_CMP, RX_ARITH, RX_AND, RX_OVERLAP2 };

/* Compiles e against schema s; returns NULL and records a message in msg
** when a column or time component is missing. */
RtExpr *rtExprCompile(const AlgExpr *e, const AlgSchema *s, TqBuf *msg);
void rtExprFree(RtExpr *e);
int64_t rtEvalInt(const RtExpr *e, const int64_t *vals);
double rtEvalFloat(const RtExpr *e, const int64_t *vals);
/* Value of e stored into a 64-bit slot (doubles as their bits). */
int64_t rtEvalSlot(const RtExpr *e, const int64_t *vals);
/* The value of leaf i (0: a, 1: b) of an RX_CMP or RX_ARITH expression. */
static inline int64_t rtLeafInt(const RtExpr *e, int i, const int64_t *v) { return e->lc[i] ? e->lk[i] : v[e->li[i]]; }
/* Integer arithmetic as the language defines it: saturating, and a
** division by zero yields 0 (documented). */
static inline int64_t rtArith(int op, int64_t a, int64_t b) {
  int64_t r;
  switch (op) {
    case OPB_ADD: return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
    case OPB_SUB: return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
    case OPB_MUL: return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
    default:
      if (b == 0) return 0;
      if (a == INT64_MIN && b == -1) return INT64_MAX;
      return a / b;
  }
}
/* rtEvalSlot, the one-step shapes inline (most target list entries). */
static inline int64_t rtEvalSlotQ(const RtExpr *e, const int64_t *vals) {
  switch (e->fast) {
    case RX_COL: return vals[e->idx];
    case RX_CONST: return e->ival;
    case RX_ARITH: return rtArith(e->op, rtLeafInt(e, 0, vals), rtLeafInt(e, 1, vals));
    default: return rtEvalSlot(e, vals);
  }
}
int rtEvalBool(const RtExpr *e, const int64_t *vals);
/* An RX_CMP comparison: cmask's bit for a < b, a = b or a > b (no branch
** on the operator). */
static inline int rtFastCmp(const RtExpr *e, const int64_t *v) {
  int64_t a = rtLeafInt(e, 0, v), b = rtLeafInt(e, 1, v);
  return (e->cmask >> ((a > b) - (a < b) + 1)) & 1;
}
/* rtEvalBool, the one-step shapes inline (most where clauses). */
static inline int rtEvalBoolQ(const RtExpr *e, const int64_t *v) {
  if (TQ_LIKELY(e->fast == RX_AND)) {
    if (TQ_LIKELY(e->cx != NULL)) {
      for (int i = 0; i < e->nconj; i++) {
        const RtCmpX *x = &e->cx[i];
        int64_t a = v[x->li[0]];
        if (TQ_LIKELY(!x->cols)) {
          if (((uint64_t)a - (uint64_t)x->lo <= x->span) == x->inv) return 0;
          continue;
        }
        int64_t b = v[x->li[1]];
        if (!((x->cmask >> ((a > b) - (a < b) + 1)) & 1)) return 0;
      }
      return 1;
    }
    for (int i = 0; i < e->nconj; i++)
      if (!rtFastCmp(e->conj[i], v)) return 0;
    return 1;
  }
  if (e->fast == RX_CMP) return rtFastCmp(e, v);
  return rtEvalBool(e, v);
}
/* Does string s match the pattern p of `like` (% any string, _ any one
** UTF-8 character, any other character itself, case-sensitive)? */
int rtLikeMatch(const char *s, const char *p);

/* ---------------------------------------------------------------- time */
typedef struct RtBound {
  TqTime lo, hi; /* the value lies in [lo, hi] */
} RtBound;
enum { TV_EMPTY = 0, TV_INSTANT, TV_INTERVAL };
typedef struct RtTVal {
  int kind;       /* TV_* (TV_EMPTY: certainly empty) */
  int maybeEmpty; /* may turn out empty */
  RtBound b, e;   /* begin and end (for an instant b == e) */
} RtTVal;
enum { TRI_F = 0, TRI_T = 1, TRI_U = 2 };

typedef struct RtTCtx {
  const int64_t *span; /* the tuple's spans */
  TqTime now;          /* current stream time (the constant now's lower bound) */
  TqTime nowValue;     /* value of `now` when known, else TQ_OPEN */
  TqTime endLow;       /* open ends are at least this (the input's end mark) */
} RtTCtx;

void rtTEval(const RtExpr *e, const RtTCtx *c, RtTVal *out);
int rtTPred(const RtExpr *e, const RtTCtx *c);
/* Lower bounds of the begin and the end of e's value (for low and end
** marks), when each span of the tuple begins at or after spanB (and so
** ends after it), an open span ends at or after spanE, and `now` is at
** least nowLow (its value when nowKnown): e's constants and shifts count,
** an intersection begins at the later begin and ends at the earlier end,
** an extend the other way round.  ob and oe bound the begin and the end
** when they are not known yet (a result still open): forever when they
** are always known. */
typedef struct RtLow {
  TqTime b, e;   /* begin, end */
  TqTime ob, oe; /* begin, end while unknown (TQ_FOREVER: never unknown) */
} RtLow;
RtLow rtTExprLow(const RtExpr *e, TqTime spanB, TqTime spanE, TqTime nowLow, int nowKnown);

/* ---------------------------------------------------------------- operators */
RtOp *rtOpSource(RtNet *net, const AlgNode *n);
RtOp *rtOpConst(RtNet *net, const AlgNode *n);
RtOp *rtOpClock(RtNet *net, const AlgNode *n);
RtOp *rtOpAlpha(RtNet *net, const AlgNode *n);
RtOp *rtOpSigma(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpSigmaT(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpPi(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpPiT(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpProduct(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpIntersect(RtNet *net, const AlgNode *n);
RtOp *rtOpAgg(RtNet *net, const AlgNode *n, TqBuf *msg);
RtOp *rtOpSink(RtNet *net, RtResult *res);
/* The sink of an event result has a vtable of its own: an op whose
** parent has it may give it an event's values and time without a tuple
** (rtEmitEvent; its rows are made of them, it keeps none of an event's
** tuples). */
extern const RtOpVt rtSinkEventVt;
static inline int rtSinkTakesEvents(const RtOp *op) { return op->vt == &rtSinkEventVt; }
/* An event (values v at time at) into the sink of an event result, as its
** push of a tuple of one span [at, at + 1) would take it. */
int rtSinkEvent(RtOp *sink, TqTime at, const int64_t *v);

/* alpha entry points used by the sensor hub (op_alpha.c) */
void rtAlphaEvent(RtOp *op, TqTime t, int64_t flagEnt, const int64_t *vals);
/* rtNetHintEvent at one alpha that passes the values on as they are: its
** state of flagEnt (stage 0), then its parent's hint when it is enabled
** on flagEnt (stage 1; stage 0 goes to the parent too). */
void rtAlphaHint(RtOp *op, int64_t flagEnt, const int64_t *vals, int stage);
/* Returns 1 when the alpha took the begin (it was enabled), else 0. */
int rtAlphaBegin(RtOp *op, uint64_t ivid, TqTime from, int64_t flagEnt, const int64_t *vals);
/* The begin of interval ivid went to other alphas of the sensor: unless
** this one took it, it may still come whole (its END comes to every alpha). */
void rtAlphaMissed(RtOp *op, uint64_t ivid, TqTime from);
void rtAlphaEnd(RtOp *op, uint64_t ivid, TqTime from, TqTime to, int64_t flagEnt, const int64_t *vals);
int rtAlphaEnabled(RtOp *op, int64_t e);
/* Gives back every enable unit the alpha holds at its sensor (its query
** is being removed from a running network); it enables nothing after. */
void rtAlphaRelease(RtOp *op);
/* Moves alpha op from network `from` to `to` (rtPartMove): its enable
** units leave the sensor of `from` and count at the sensor of `to`, its
** pending armings tell `to` when they are due. */
void rtAlphaMove(RtOp *op, RtNet *from, RtNet *to);
/* Fuses the sigma or pi op, built over alpha (directly, or over sigmas and
** pis fused into it already), into the alpha: the alpha applies it as it
** makes a tuple and emits to op's parent, so a tuple the selection drops
** is never made and the projection's is the one made (net.c's build).  op
** stays in the tree, where it passes the marks up and sees no tuple. */
void rtAlphaFuse(RtOp *alpha, RtOp *op);
/* A fused sigma's predicate (the alpha tests it inline: rtEvalBoolQ); a
** fused pi maps v to out (its values; op_sigma.c). */
const RtExpr *rtSigmaPred(const RtOp *op);
/* Is op a pi whose parent is an event result's sink?  Then an event may
** come to it as its values and time (rtPiEvent: from op's kid, as rtEmit
** counts, to the sink as rtEmitEvent; no tuple either side). */
int rtPiTakesEvents(const RtOp *op);
int rtPiEvent(RtOp *kid, TqTime at, const int64_t *v);
void rtPiMap(const RtOp *op, const int64_t *v, int64_t *out);
void rtSourceBegin(RtOp *op, uint64_t ivid, TqTime from, const int64_t *vals);
void rtSourceEnd(RtOp *op, uint64_t ivid, TqTime from, TqTime to);
void rtClockTick(RtOp *op, TqTime t);
int rtClockDue(RtOp *op, TqTime t);
TqTime rtClockPeriod(RtOp *op);
/* Sets the clock's period to the multiple of its declared one (Clock[n])
** nearest below p, at least the declared one; returns it. */
TqTime rtClockSlow(RtOp *op, TqTime p);
void rtConstPrime(RtOp *op, TqTime t0);
void rtSensorCount(RtNet *net, RtSensor *s, int64_t e, int delta);
/* Sets each sensor's filter from its alphas' sensor predicates (sfilter.c). */
void rtSensorFiltersBuild(RtNet *net);

/* helpers */
/* Dense per-entity arrays.  Entity values are symbol ids, small integers:
** the hot paths index arrays by them instead of hashing.  An array covers
** 0..n-1 and grows only to cover a value below the symbols interned so far
** and below four times the entries its structure holds (`live`, plus a
** margin each), so its size follows what the operator keeps, not the
** symbol table (a recording may intern millions of strings); other values
** stay in the caller's map.  rtDenseGrow grows *v (n elements of sz bytes,
** new ones zeroed) to cover e and returns the old n; the caller checked
** rtDenseFits(e, live) and e >= n. */
static inline int rtDenseFits(int64_t e, int64_t live) {
  return e >= 0 && e < (int64_t)tqSymCount() + 1024 && e < 4 * live + 1024;
}
uint32_t rtDenseGrow(void **v, uint32_t *n, size_t sz, int64_t e);
/* rtEmit inline in the optimized build (each operator of a chain emits
** every tuple); the test build calls net.c's, which checks the marks. */
#ifndef TQ_TESTING
static inline int rtEmitInline(RtOp *op, int kind, RtTup *t) {
  op->nout++;
  RtOp *p = op->parent;
  if (!p) return 0;
  p->nin++;
  op->net->tuplesProcessed++;
  return p->vt->push(p, op->port, kind, t);
}
#define rtEmit(op, kind, t) rtEmitInline(op, kind, t)
#endif
/* rtEmit of an event at time t with values v to op's parent, an event
** result's sink (rtSinkTakesEvents), with no tuple made: counted as rtEmit
** counts, and checked against op's marks in the test build
** (rtCheckEventMarks). */
#ifdef TQ_TESTING
void rtCheckEventMarks(RtOp *op, TqTime t);
#else
#define rtCheckEventMarks(op, t) ((void)0)
#endif
static inline void rtEmitCount(RtOp *op) {
  op->nout++;
  op->parent->nin++;
  op->net->tuplesProcessed++;
}
static inline int rtEmitEvent(RtOp *op, TqTime t, const int64_t *v) {
  rtCheckEventMarks(op, t);
  rtEmitCount(op);
  return rtSinkEvent(op->parent, t, v);
}

/* Copies and compares n value words inline (a tuple holds a few: the
** library's calls cost more than the words). */
static inline void rtWordsCopy(int64_t *d, const int64_t *v, int n) {
  int i = 0;
  for (; i + 1 < n; i += 2) { /* (two a step: half the loop's own instructions) */
    d[i] = v[i];
    d[i + 1] = v[i + 1];
  }
  if (i < n) d[i] = v[i];
}
static inline int rtWordsEq(const int64_t *a, const int64_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}
/* A hash of n 64-bit words and a seed (a tuple's key values, an event
** row's values and time), never 0 or 1 (TqMap's free and deleted keys):
** two words per 128-bit multiply, its halves folded (the multiplies of a
** key of four words overlap; tqHashBytes takes one dependent multiply per
** word). */
static inline uint64_t rtMum(uint64_t a, uint64_t b) {
  __extension__ unsigned __int128 r = (unsigned __int128)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}
static inline uint64_t rtHashWords(const int64_t *v, int n, uint64_t seed) {
  const uint64_t p0 = 0xa0761d6478bd642fULL, p1 = 0xe7037ed1a0b428dbULL, p2 = 0x8ebc6af09c88c6e3ULL;
  uint64_t h = seed ^ p0 ^ ((uint64_t)n << 56);
  int i = 0;
  for (; i + 1 < n; i += 2) h = rtMum((uint64_t)v[i] ^ p1 ^ h, (uint64_t)v[i + 1] ^ p2);
  if (i < n) h = rtMum((uint64_t)v[i] ^ p1 ^ h, p2);
  return rtMum(h ^ p0, p1) | 2;
}
static inline int rtTupClosed(const RtTup *t) { return t->nopen == 0; }
RtTup *rtTupCopyShape(const RtTup *src); /* new tuple with the same spans and values */
/* Tuples of up to RT_MAXCLASS slots (2 per span, 1 per value) come from
** free lists by size (tuple.c); the hot paths take and give them back
** inline. */
#define RT_MAXCLASS 64
extern RtTup *rtTupPool[RT_MAXCLASS + 1]; /* free lists, chained through link */
extern int64_t rtTupCount;                /* tuples allocated and not freed */
RtTup *rtTupAllocSlow(int nspan, int nval);
void rtTupFree(RtTup *t);                 /* its last reference went */
static inline void rtTupInit(RtTup *t, int nspan, int nval) {
  t->ref = 1;
  t->nspan = (uint16_t)nspan;
  t->nval = (uint16_t)nval;
  t->nopen = 0;
  t->flags = 0;
  t->cls = (uint32_t)(2 * nspan + nval);
  t->link = NULL;
  rtTupCount++;
}
/* rtTupNew without zeroing: for callers that set every span and value. */
static inline RtTup *rtTupAlloc(int nspan, int nval) {
  int slots = 2 * nspan + nval;
  RtTup *t;
  if (TQ_LIKELY(slots <= RT_MAXCLASS && (t = rtTupPool[slots]))) {
    rtTupPool[slots] = t->link;
    rtTupInit(t, nspan, nval);
    return t;
  }
  return rtTupAllocSlow(nspan, nval);
}
/* rtTupUnref of a tuple (not NULL), inline; the optimized build gives a
** pooled tuple without a link back to its pool here (rtTupFree's common
** case; the test build's rtTupFree also poisons it). */
static inline void rtTupDrop(RtTup *t) {
  if (--t->ref) return;
#ifndef TQ_TESTING
  if (TQ_LIKELY(!t->link && t->cls <= RT_MAXCLASS)) {
    rtTupCount--;
    t->link = rtTupPool[t->cls];
    rtTupPool[t->cls] = t;
    return;
  }
#endif
  rtTupFree(t);
}

/* ---------------------------------------------------------------- program lists (programs.c) */
#define RT_PROGRAMS_MAX 64    /* patterns */
#define RT_PROGRAMS_PIDS 4096 /* distinct processes counted per pattern */
typedef struct RtPattern {
  char *text;   /* the shell wildcard (fnmatch) */
  TqMap pids;   /* pid + 2 -> matched (up to RT_PROGRAMS_PIDS) */
  int more;     /* it matched more processes than counted */
} RtPattern;
typedef struct RtPrograms {
  int n;        /* patterns; none: every process is wanted */
  RtPattern pat[RT_PROGRAMS_MAX];
} RtPrograms;
/* Adds a pattern (a second copy of one is ignored).  Returns 0, or -1 with
** the reason in err: empty, with a '/', or too many. */
int rtProgramsAdd(RtPrograms *p, const char *pattern, TqBuf *err);
/* Is a process whose command is `command` wanted: no pattern, or one
** matches (each matching pattern counts pid)?  A NULL command is not. */
int rtProgramsWanted(RtPrograms *p, int64_t pid, const char *command);
void rtProgramsFree(RtPrograms *p); /* the patterns (p itself is the caller's) */

#endif
