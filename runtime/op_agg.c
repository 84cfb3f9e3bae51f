/*
** op_agg.c - aggregates: the value of count, countU, sum, sumU, avg, avgU,
** min, max, any, first, last over time, per group of by-values.
**
** Each input tuple u contributes over a span: [from, to) for `for each
** instant`, [from, to + w - 1) for a window of w (`for each w`), [from,
** forever) for `for ever` (an event at t is the span [t, t+1)).  The
** contributions' begins and ends are change points kept in a heap; a change
** point is applied once the input's low mark has passed it (no later input
** can start before it), so every emitted value is final; at the end of the
** run every pending one is applied, also those after the end of the
** recording.  After the changes of an instant, each touched group compares
** its new value with the one it shows: when it differs, the open output
** tuple [p, t) is closed and a new one [t, ...) begun, so the output has one
** tuple per constant period.
**
** Over a sampled interval relation (spec.sample), `for each instant`
** counts a sample for the sampling period, [t, t + sample), and the scalar
** group exists from the first sample request on (the run's first base tick).
**
** A group exists while some tuple of it is in effect (before the inner
** where and when, which only decide what counts: Quel's partitions survive
** them, with count 0); a scalar aggregate (no by-list) always exists, from
** beginning.  The inner when of a by-list aggregate may be unknown when a
** tuple comes (it needs the end of an open interval, or `now`): the
** contribution is then undecided, and no change point at or after its
** begin is applied until its END or the passing of time decides it (at the
** end of the run, one still unknown does not count, as sigmaT drops it).
** count, countU, any, sum and sumU of nothing are 0; avg, avgU, min, max,
** first and last of nothing have no value and give no tuple.
** Memory: the contributions in effect, the groups that exist, and the
** pending change points.
**
** Sets.  A derived relation is a set: over one, count, sum and avg count
** value-equivalent tuples (same values, same span) once (spec.set).  Input
** tuples with the same values and begin form a key.  Its first member counts
** at once; a later one is held until every member's end is known (they are
** one tuple if they end together), and counts then if its end is new.
** While a key holds members, no change point at or after its begin is
** applied (its low mark stays there), so nothing shown is taken back.  At
** the end of the run, members still open end together (after the end).
** A key is forgotten once the input's low mark passed its begin and its
** members are closed.
*/
#include <math.h>

#include "rtInt.h"

typedef struct Group Group;
typedef struct SetKey SetKey;
typedef struct Contrib {
  Group *g;         /* its group */
  int64_t val;      /* the aggregated value (slot) */
  TqTime from;      /* the input tuple's begin (first/last order by it) */
  TqTime effTo;     /* end of its effect, TQ_OPEN until known */
  int qual;         /* passes the inner where and when */
  RtTup *undecided; /* the input tuple while its inner when is unknown (a reference), else NULL */
  int pos;          /* index in the group's live array, -1 when not in effect */
  int refs;         /* change points that still name it */
} Contrib;

/* Set mode: the input tuples with the same values and begin. */
struct SetKey {
  SetKey *next;     /* hash chain */
  uint64_t h;
  TqTime from;      /* the members' begin */
  int nmem;         /* members so far */
  int ropen;        /* counted members still open */
  int nopen;        /* members still open (counted or held) */
  int expired;      /* out of the key heap (no member can come): freed when done */
  int holding;      /* in the hold heap */
  TqTime *tos;      /* ends of the counted members that closed */
  int nto, cto;
  RtTup **held;     /* members that wait for every end (one reference each) */
  int nheld, cheld;
  int64_t vals[];   /* the members' values */
};

struct Group {
  Group *next;      /* hash chain */
  uint64_t h;
  Contrib **live;   /* contributions in effect */
  int nlive, clive;
  RtTup *out;       /* the open output tuple, or NULL */
  int touched;      /* in the touched list of this instant */
  int refs;         /* contributions that name it (in effect or pending) */
  int64_t by[];     /* the by-values */
};

typedef struct Change {
  TqTime t;
  Contrib *c;
  int delta; /* +1 begins to count, -1 stops */
} Change;

typedef struct Agg {
  RtOp op;
  AlgAggSpec spec;
  RtExpr *arg, *where;
  RtExpr *when;       /* inner when (by-list aggregates), or NULL */
  TqMap undecided;    /* input tuple -> Contrib* whose inner when is unknown */
  RtExpr **by;
  int nby;
  int scalar;         /* no by-list: one group, always there */
  int primed;         /* the scalar group's first output is out */
  AlgTypeKind vty;    /* value type */
  AlgTypeKind aty;    /* argument type */
  TqTime stretch;     /* added to a contribution's end (window - 1) */
  TqMap groups;       /* hash -> Group* */
  TqMap open;         /* input tuple -> Contrib* (end not known yet) */
  Change *heap;
  int nheap, cheap;
  Group **touched;
  int ntouched, ctouched;
  int set;            /* set mode (spec.set, one time component) */
  int inEvent;        /* the input is an event relation */
  TqMap keys;         /* set mode: hash -> SetKey* (chained) */
  TqMap member;       /* set mode: open input tuple -> its SetKey* */
  SetKey **kheap;     /* keys by begin (min-heap): forgotten once the input's low passes */
  int nk, ck;
  SetKey **hold;      /* keys holding members, by begin (min-heap, lazily cleaned) */
  int nhold, chold;
} Agg;

/* ---------------------------------------------------------------- heap */
static int chLess(const Change *a, const Change *b) { return a->t < b->t; }
static void hpush(Agg *g, TqTime t, Contrib *c, int delta) {
  if (g->nheap == g->cheap) {
    g->cheap = g->cheap ? 2 * g->cheap : 64;
    g->heap = tqRealloc(g->heap, sizeof(Change) * (size_t)g->cheap);
  }
  int i = g->nheap++;
  g->heap[i] = (Change){t, c, delta};
  c->refs++;
  while (i > 0 && chLess(&g->heap[i], &g->heap[(i - 1) / 2])) {
    Change x = g->heap[i];
    g->heap[i] = g->heap[(i - 1) / 2];
    g->heap[(i - 1) / 2] = x;
    i = (i - 1) / 2;
  }
}
static Change hpop(Agg *g) {
  Change top = g->heap[0];
  g->heap[0] = g->heap[--g->nheap];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < g->nheap && chLess(&g->heap[l], &g->heap[m])) m = l;
    if (r < g->nheap && chLess(&g->heap[r], &g->heap[m])) m = r;
    if (m == i) break;
    Change x = g->heap[i];
    g->heap[i] = g->heap[m];
    g->heap[m] = x;
    i = m;
  }
  return top;
}

/* ---------------------------------------------------------------- values */
static double asF(int64_t s) {
  double d;
  memcpy(&d, &s, sizeof d);
  return d;
}
static int64_t fromF(double d) {
  int64_t s;
  memcpy(&s, &d, sizeof s);
  return s;
}

/* Orders two values of the argument's type (names for entities and strings). */
static int valCmp(AlgTypeKind k, int64_t a, int64_t b) {
  if (k == TY_FLOAT) {
    double x = asF(a), y = asF(b);
    return x < y ? -1 : x > y;
  }
  if (k == TY_STRING || k == TY_ENTITY) {
    if (a == b) return 0;
    return strcmp(tqSymName((int32_t)a), tqSymName((int32_t)b));
  }
  return a < b ? -1 : a > b;
}

static AlgTypeKind cmpKind;
static int slotCmp(const void *x, const void *y) { return valCmp(cmpKind, *(const int64_t *)x, *(const int64_t *)y); }

/* The group's value now: returns 0 when it has none. */
static int groupValue(Agg *a, Group *g, int64_t *out) {
  int fn = a->spec.fn;
  int n = 0;
  int64_t *v = tqMalloc(sizeof(int64_t) * (size_t)(g->nlive + 1));
  const Contrib *first = NULL, *last = NULL;
  for (int i = 0; i < g->nlive; i++) {
    const Contrib *c = g->live[i];
    if (!c->qual) continue;
    v[n++] = c->val;
    if (!first || c->from < first->from || (c->from == first->from && valCmp(a->aty, c->val, first->val) < 0)) first = c;
    if (!last || c->from > last->from || (c->from == last->from && valCmp(a->aty, c->val, last->val) > 0)) last = c;
  }
  if (fn == AGG_COUNTU || fn == AGG_SUMU || fn == AGG_AVGU) {
    cmpKind = a->aty;
    if (n > 1) qsort(v, (size_t)n, sizeof(int64_t), slotCmp);
    int k = 0;
    for (int i = 0; i < n; i++)
      if (k == 0 || valCmp(a->aty, v[k - 1], v[i]) != 0) v[k++] = v[i];
    n = k;
  }
  int has = 1;
  switch (fn) {
    case AGG_COUNT:
    case AGG_COUNTU: *out = n; break;
    case AGG_ANY: *out = n > 0; break;
    case AGG_SUM:
    case AGG_SUMU:
    case AGG_AVG:
    case AGG_AVGU: {
      if (a->aty == TY_FLOAT || fn == AGG_AVG || fn == AGG_AVGU) {
        double s = 0;
        for (int i = 0; i < n; i++) s += a->aty == TY_FLOAT ? asF(v[i]) : (double)v[i];
        if (fn == AGG_AVG || fn == AGG_AVGU) {
          if (n == 0) has = 0;
          else s /= n;
        }
        *out = a->vty == TY_FLOAT ? fromF(s) : (int64_t)s;
      } else {
        int64_t s = 0;
        for (int i = 0; i < n; i++)
          if (__builtin_add_overflow(s, v[i], &s)) s = v[i] > 0 ? INT64_MAX : INT64_MIN;
        *out = s;
      }
      break;
    }
    case AGG_MIN:
    case AGG_MAX: {
      if (n == 0) {
        has = 0;
        break;
      }
      int64_t m = v[0];
      for (int i = 1; i < n; i++) {
        int c = valCmp(a->aty, v[i], m);
        if ((fn == AGG_MIN && c < 0) || (fn == AGG_MAX && c > 0)) m = v[i];
      }
      *out = m;
      break;
    }
    case AGG_FIRST:
    case AGG_LAST:
      if (!first) has = 0;
      else *out = fn == AGG_FIRST ? first->val : last->val;
      break;
    default: has = 0; break;
  }
  free(v);
  return has;
}

/* ---------------------------------------------------------------- groups */
static uint64_t byHash(const int64_t *v, int n) { return tqHashBytes(v, sizeof(int64_t) * (size_t)n, 11) | 2; }

static Group *groupGet(Agg *a, const int64_t *by) {
  uint64_t h = byHash(by, a->nby);
  for (Group *g = tqMapGet(&a->groups, h); g; g = g->next)
    if (!memcmp(g->by, by, sizeof(int64_t) * (size_t)a->nby)) return g;
  Group *g = tqCalloc(1, sizeof(Group) + sizeof(int64_t) * (size_t)(a->nby ? a->nby : 1));
  g->h = h;
  TQ_MEMCPY(g->by, by, sizeof(int64_t) * (size_t)a->nby);
  g->next = tqMapGet(&a->groups, h);
  tqMapPut(&a->groups, h, g);
  rtStoredAdd(&a->op, 1);
  return g;
}

static void groupFree(Agg *a, Group *g) {
  Group *head = tqMapGet(&a->groups, g->h);
  if (head == g) {
    if (g->next) tqMapPut(&a->groups, g->h, g->next);
    else tqMapDel(&a->groups, g->h);
  } else {
    for (Group *p = head; p; p = p->next)
      if (p->next == g) {
        p->next = g->next;
        break;
      }
  }
  free(g->live);
  free(g);
  rtStoredAdd(&a->op, -1);
}

static void touch(Agg *a, Group *g) {
  if (g->touched) return;
  g->touched = 1;
  if (a->ntouched == a->ctouched) {
    a->ctouched = a->ctouched ? 2 * a->ctouched : 16;
    a->touched = tqRealloc(a->touched, sizeof(Group *) * (size_t)a->ctouched);
  }
  a->touched[a->ntouched++] = g;
}

/* Shows value (has, v) from time t on: closes the old period, begins a new one. */
static void show(Agg *a, Group *g, TqTime t, int exists, int has, int64_t v) {
  RtTup *o = g->out;
  if (o && exists && has && RT_VAL(o)[a->nby] == v) return; /* unchanged */
  if (o) {
    RT_TO(o, 0) = t;
    o->nopen = 0;
    g->out = NULL;
    rtEmit(&a->op, RT_END, o);
    rtTupUnref(o);
  }
  if (!exists || !has) return;
  o = rtTupNew(1, a->nby + 1);
  RT_FROM(o, 0) = t;
  RT_TO(o, 0) = TQ_OPEN;
  o->nopen = 1;
  TQ_MEMCPY(RT_VAL(o), g->by, sizeof(int64_t) * (size_t)a->nby);
  RT_VAL(o)[a->nby] = v;
  g->out = o;
  rtEmit(&a->op, RT_BEGIN, o);
}

/* A contribution is freed when no change point names it and it is not in
** effect; its group is freed by the flush loop (it is touched then). */
static void contribRelease(Agg *a, Contrib *c) {
  (void)a;
  if (--c->refs == 0 && c->pos < 0) {
    c->g->refs--;
    free(c);
  }
}

static void apply(Agg *a, const Change *ch) {
  Contrib *c = ch->c;
  Group *g = c->g;
  if (ch->delta > 0) {
    if (g->nlive == g->clive) {
      g->clive = g->clive ? 2 * g->clive : 4;
      g->live = tqRealloc(g->live, sizeof(Contrib *) * (size_t)g->clive);
    }
    c->pos = g->nlive;
    g->live[g->nlive++] = c;
  } else if (c->pos >= 0) {
    Contrib *last = g->live[--g->nlive];
    g->live[c->pos] = last;
    last->pos = c->pos;
    c->pos = -1;
  }
  touch(a, g);
  contribRelease(a, c);
}

/* ---------------------------------------------------------------- contributions */

static TqTime effEnd(Agg *a, TqTime to) {
  if (a->spec.window == WIN_EVER) return TQ_FOREVER;
  return tqTimeAdd(to, a->stretch);
}

/* The inner when on input tuple t: TRI_T, TRI_F or TRI_U. */
static int whenHolds(Agg *a, const RtTup *t) {
  if (!a->when) return TRI_T;
  RtTCtx c = {t->d, a->op.net->now, a->op.net->opt.nowValue, a->op.kid[0]->endLow};
  return rtTPred(a->when, &c);
}

/* Decides an undecided contribution when its inner when is known now (or,
** `final`, at the end of the run: still unknown counts as false).  Returns
** 1 when decided (c may be freed then), 0 when still unknown. */
static int decide(Agg *a, Contrib *c, int final) {
  int r = whenHolds(a, c->undecided);
  if (r == TRI_U && !final) return 0;
  c->qual = c->qual && r == TRI_T;
  tqMapDel(&a->undecided, (uint64_t)(uintptr_t)c->undecided);
  rtTupUnref(c->undecided);
  c->undecided = NULL;
  rtStoredAdd(&a->op, -1);
  contribRelease(a, c);
  return 1;
}

/* Earliest begin of an undecided contribution (deciding those that can be
** decided now), or forever. */
static TqTime undecidedLow(Agg *a, int final) {
  if (!a->undecided.n) return TQ_FOREVER;
  TqVec all = {0};
  for (uint32_t i = 0; i < a->undecided.cap; i++)
    if (a->undecided.slot[i].key > 1) tqVecPush(&all, a->undecided.slot[i].val);
  TqTime low = TQ_FOREVER;
  for (int i = 0; i < all.n; i++) {
    Contrib *c = all.v[i];
    TqTime f = c->from;
    if (!decide(a, c, final) && f < low) low = f;
  }
  tqVecFree(&all);
  return low;
}

/* Counts input tuple t: a new contribution, in effect from its begin. */
static Contrib *contribute(Agg *a, RtTup *t) {
  int64_t by[64];
  for (int i = 0; i < a->nby && i < 64; i++) by[i] = rtEvalSlotQ(a->by[i], RT_VAL(t));
  Group *g = groupGet(a, by);
  Contrib *c = tqCalloc(1, sizeof *c);
  c->g = g;
  g->refs++;
  c->val = rtEvalSlotQ(a->arg, RT_VAL(t));
  c->from = RT_FROM(t, 0);
  c->qual = a->where ? rtEvalBool(a->where, RT_VAL(t)) : 1;
  c->pos = -1;
  int w = whenHolds(a, t);
  if (w == TRI_U) {
    /* held in the undecided map (a reference) until known */
    rtTupRef(t);
    c->undecided = t;
    c->refs++;
    tqMapPut(&a->undecided, (uint64_t)(uintptr_t)t, c);
    rtStoredAdd(&a->op, 1);
  } else if (w == TRI_F) {
    c->qual = 0;
  }
  hpush(a, c->from, c, +1);
  if (RT_TO(t, 0) == TQ_OPEN) {
    c->refs++; /* held by the open map until its END */
    tqMapPut(&a->open, (uint64_t)(uintptr_t)t, c);
  } else {
    TqTime e = effEnd(a, RT_TO(t, 0));
    if (e < TQ_FOREVER) hpush(a, e, c, -1);
  }
  return c;
}

/* ---------------------------------------------------------------- set mode */

/* Min-heaps of keys by begin. */
static void heapPushKey(SetKey ***hp, int *n, int *cap, SetKey *k) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    *hp = tqRealloc(*hp, sizeof(SetKey *) * (size_t)*cap);
  }
  SetKey **h = *hp;
  int i = (*n)++;
  h[i] = k;
  while (i > 0 && h[i]->from < h[(i - 1) / 2]->from) {
    SetKey *x = h[i];
    h[i] = h[(i - 1) / 2];
    h[(i - 1) / 2] = x;
    i = (i - 1) / 2;
  }
}
static SetKey *heapPopKey(SetKey **h, int *n) {
  SetKey *top = h[0];
  h[0] = h[--*n];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < *n && h[l]->from < h[m]->from) m = l;
    if (r < *n && h[r]->from < h[m]->from) m = r;
    if (m == i) break;
    SetKey *x = h[i];
    h[i] = h[m];
    h[m] = x;
    i = m;
  }
  return top;
}

static uint64_t keyHash(const int64_t *v, int n, TqTime from) {
  return tqHashBytes(v, sizeof(int64_t) * (size_t)n, (uint64_t)from ^ 0x5e7) | 2;
}

static SetKey *keyGet(Agg *a, RtTup *t) {
  int n = a->op.kid[0]->nval;
  TqTime from = RT_FROM(t, 0);
  uint64_t h = keyHash(RT_VAL(t), n, from);
  for (SetKey *k = tqMapGet(&a->keys, h); k; k = k->next)
    if (k->from == from && !memcmp(k->vals, RT_VAL(t), sizeof(int64_t) * (size_t)n)) return k;
  SetKey *k = tqCalloc(1, sizeof(SetKey) + sizeof(int64_t) * (size_t)(n ? n : 1));
  k->h = h;
  k->from = from;
  TQ_MEMCPY(k->vals, RT_VAL(t), sizeof(int64_t) * (size_t)n);
  k->next = tqMapGet(&a->keys, h);
  tqMapPut(&a->keys, h, k);
  heapPushKey(&a->kheap, &a->nk, &a->ck, k);
  rtStoredAdd(&a->op, 1);
  return k;
}

static void keyFree(Agg *a, SetKey *k) {
  SetKey *head = tqMapGet(&a->keys, k->h);
  if (head == k) {
    if (k->next) tqMapPut(&a->keys, k->h, k->next);
    else tqMapDel(&a->keys, k->h);
  } else {
    for (SetKey *p = head; p; p = p->next)
      if (p->next == k) {
        p->next = k->next;
        break;
      }
  }
  for (int i = 0; i < k->nheld; i++) rtTupUnref(k->held[i]);
  free(k->held);
  free(k->tos);
  free(k);
  rtStoredAdd(&a->op, -1);
}

/* A key out of the key heap is freed once nothing names it any more. */
static void keyDone(Agg *a, SetKey *k) {
  if (k->expired && !k->nopen && !k->nheld && !k->holding) keyFree(a, k);
}

static int keyHasTo(const SetKey *k, TqTime to) {
  for (int i = 0; i < k->nto; i++)
    if (k->tos[i] == to) return 1;
  return 0;
}
static void keyAddTo(SetKey *k, TqTime to) {
  if (k->nto == k->cto) {
    k->cto = k->cto ? 2 * k->cto : 2;
    k->tos = tqRealloc(k->tos, sizeof(TqTime) * (size_t)k->cto);
  }
  k->tos[k->nto++] = to;
}

/* Once every member's end is known (or at the end of the run, `final`:
** those still open end together), each held member counts if no member
** counted so far has its end. */
static void keyResolve(Agg *a, SetKey *k, int final) {
  if (!k->nheld || (k->nopen && !final)) return;
  for (int i = 0; i < k->nheld; i++) {
    RtTup *h = k->held[i];
    TqTime to = RT_TO(h, 0);
    int dup = to == TQ_OPEN ? k->ropen > 0 : keyHasTo(k, to);
    if (!dup) {
      contribute(a, h);
      if (to == TQ_OPEN) k->ropen++;
      else keyAddTo(k, to);
    }
    if (to == TQ_OPEN) {
      tqMapDel(&a->member, (uint64_t)(uintptr_t)h);
      k->nopen--;
    }
    rtTupUnref(h);
  }
  k->nheld = 0;
}

static void setPush(Agg *a, int kind, RtTup *t) {
  uint64_t tk = (uint64_t)(uintptr_t)t;
  if (kind == RT_END) {
    SetKey *k = tqMapDel(&a->member, tk);
    Contrib *c = tqMapDel(&a->open, tk);
    if (c) {
      TqTime e = effEnd(a, RT_TO(t, 0));
      if (e < TQ_FOREVER) hpush(a, e, c, -1);
      contribRelease(a, c);
    }
    if (!k) return;
    k->nopen--;
    if (c) {
      k->ropen--;
      keyAddTo(k, RT_TO(t, 0));
    }
    keyResolve(a, k, 0);
    keyDone(a, k);
    return;
  }
  SetKey *k = keyGet(a, t);
  int open = RT_TO(t, 0) == TQ_OPEN;
  if (k->nmem++ == 0) {
    /* the first member counts at once */
    contribute(a, t);
    if (open) k->ropen++;
    else keyAddTo(k, RT_TO(t, 0));
  } else {
    if (k->nheld == k->cheld) {
      k->cheld = k->cheld ? 2 * k->cheld : 2;
      k->held = tqRealloc(k->held, sizeof(RtTup *) * (size_t)k->cheld);
    }
    rtTupRef(t);
    k->held[k->nheld++] = t;
    if (!k->holding) {
      k->holding = 1;
      heapPushKey(&a->hold, &a->nhold, &a->chold, k);
    }
  }
  if (open) {
    tqMapPut(&a->member, tk, k);
    k->nopen++;
  }
  keyResolve(a, k, 0);
}

/* Earliest begin of a key that holds members (drops those that hold none). */
static TqTime holdLow(Agg *a) {
  while (a->nhold && !a->hold[0]->nheld) {
    SetKey *k = heapPopKey(a->hold, &a->nhold);
    k->holding = 0;
    keyDone(a, k);
  }
  return a->nhold ? a->hold[0]->from : TQ_FOREVER;
}

/* Keys that no member can join any more (begin before the input's low). */
static void keysForget(Agg *a, TqTime low) {
  while (a->nk && a->kheap[0]->from < low) {
    SetKey *k = heapPopKey(a->kheap, &a->nk);
    k->expired = 1;
    keyDone(a, k);
  }
}

/* ---------------------------------------------------------------- methods */

static int aggPush(RtOp *op, int port, int kind, RtTup *t) {
  Agg *a = (Agg *)op;
  /* an event at beginning spans [beginning, beginning + 1) = nothing
  ** (time arithmetic saturates there, as in predicates); only `for ever`
  ** counts it, from its begin on */
  TqTime f = RT_FROM(t, 0);
  if (kind == RT_ADD && a->inEvent && a->spec.window != WIN_EVER && tqTimeAdd(f, 1) <= f) return 0;
  if (kind == RT_END && a->undecided.n) {
    Contrib *u = tqMapGet(&a->undecided, (uint64_t)(uintptr_t)t);
    if (u) decide(a, u, 0); /* its end is known now */
  }
  if (a->set) {
    setPush(a, kind, t);
    return 0;
  }
  if (kind == RT_END) {
    Contrib *c = tqMapDel(&a->open, (uint64_t)(uintptr_t)t);
    if (!c) return 0;
    TqTime e = effEnd(a, RT_TO(t, 0));
    if (e < TQ_FOREVER) hpush(a, e, c, -1);
    contribRelease(a, c); /* the reference of the open map */
    return 0;
  }
  contribute(a, t);
  return 0;
}

/* Applies the change points before `limit`, instant by instant, and shows
** each touched group's new value from that instant on. */
static void applyBefore(Agg *a, TqTime limit) {
  /* the scalar group shows its value from beginning on (over samples,
  ** from the first request t0, if the run got there): the empty one,
  ** unless contributions begin at t0 (then their batch shows it; until no
  ** more can come, it waits) */
  TqTime t0 = a->spec.sample ? tqTickAtOrAfter(a->op.net->origin, a->spec.sample) : TQ_BEGINNING;
  if (a->scalar && !a->primed && limit > t0 && !(a->nheap && a->heap[0].t <= t0) && t0 <= a->op.net->now) {
    int64_t v = 0;
    Group *g = groupGet(a, NULL);
    int has = groupValue(a, g, &v);
    show(a, g, t0, 1, has, v);
    a->primed = 1;
  }
  while (a->nheap && a->heap[0].t < limit) {
    TqTime t = a->heap[0].t;
    while (a->nheap && a->heap[0].t == t) {
      Change ch = hpop(a);
      apply(a, &ch);
    }
    for (int i = 0; i < a->ntouched; i++) {
      Group *g = a->touched[i];
      g->touched = 0;
      int64_t v = 0;
      int exists = a->scalar || g->nlive > 0;
      int has = groupValue(a, g, &v);
      show(a, g, t, exists, has, v);
      if (a->scalar) a->primed = 1;
      if (!a->scalar && g->nlive == 0 && !g->out && g->refs == 0) groupFree(a, g);
    }
    a->ntouched = 0;
  }
}

static void aggFlush(RtOp *op, TqTime now) {
  Agg *a = (Agg *)op;
  TqTime low = op->kid[0]->low;
  if (a->set) {
    keysForget(a, low);
    TqTime h = holdLow(a);
    if (h < low) low = h; /* its held members may still count from their begin */
  }
  TqTime u = undecidedLow(a, 0);
  if (u < low) low = u; /* an undecided contribution counts or not from its begin */
  applyBefore(a, low);
  op->low = a->nheap && a->heap[0].t < low ? a->heap[0].t : low;
  /* an open period ends at a change point not applied yet: at the input's
  ** low mark or later, which may lag behind now */
  op->endLow = op->low < now ? op->low : now;
}

/* At the end of the run no input can come any more, so every pending change
** point is final, also those after the end of the recording: a window (or a
** valid clause below) that ends a contribution there is known now.  Applying
** them closes the periods at those times; what is still in effect with an
** unknown end (an open input, `for ever`) stays open. */
static void aggFinish(RtOp *op, TqTime now) {
  Agg *a = (Agg *)op;
  /* members still open end together, after the end */
  for (int i = 0; i < a->nhold; i++) keyResolve(a, a->hold[i], 1);
  undecidedLow(a, 1);
  /* the last samples hold as far as anyone knows: their periods past the
  ** end of the run stay open (a window's end is known, and is applied) */
  applyBefore(a, a->spec.sample && a->spec.window == WIN_INSTANT ? tqTimeAdd(now, 1) : TQ_FOREVER);
  /* nothing comes any more; what is still open never ends */
  op->low = op->maxLow = now;
  op->endLow = TQ_FOREVER;
}

static void aggFree(RtOp *op) {
  Agg *a = (Agg *)op;
  /* contributions: in groups, in the open map, in the heap */
  TqVec all = {0};
  for (uint32_t i = 0; i < a->undecided.cap; i++)
    if (a->undecided.slot[i].key > 1) {
      Contrib *c = a->undecided.slot[i].val;
      rtTupUnref(c->undecided);
      tqVecPush(&all, c);
    }
  tqMapFree(&a->undecided);
  for (int i = 0; i < a->nheap; i++) tqVecPush(&all, a->heap[i].c);
  for (uint32_t i = 0; i < a->open.cap; i++)
    if (a->open.slot[i].key > 1) tqVecPush(&all, a->open.slot[i].val);
  for (uint32_t i = 0; i < a->groups.cap; i++) {
    if (a->groups.slot[i].key <= 1) continue;
    for (Group *g = a->groups.slot[i].val; g; g = g->next)
      for (int k = 0; k < g->nlive; k++) tqVecPush(&all, g->live[k]);
  }
  /* free each contribution once */
  TqMap seen = {0};
  for (int i = 0; i < all.n; i++) {
    Contrib *c = all.v[i];
    if (tqMapGet(&seen, (uint64_t)(uintptr_t)c)) continue;
    tqMapPut(&seen, (uint64_t)(uintptr_t)c, c);
    free(c);
  }
  tqMapFree(&seen);
  tqVecFree(&all);
  for (uint32_t i = 0; i < a->groups.cap; i++) {
    if (a->groups.slot[i].key <= 1) continue;
    Group *g = a->groups.slot[i].val;
    while (g) {
      Group *n = g->next;
      rtTupUnref(g->out);
      free(g->live);
      free(g);
      g = n;
    }
  }
  tqMapFree(&a->groups);
  tqMapFree(&a->open);
  for (uint32_t i = 0; i < a->keys.cap; i++) {
    if (a->keys.slot[i].key <= 1) continue;
    SetKey *k = a->keys.slot[i].val;
    while (k) {
      SetKey *n = k->next;
      for (int j = 0; j < k->nheld; j++) rtTupUnref(k->held[j]);
      free(k->held);
      free(k->tos);
      free(k);
      k = n;
    }
  }
  tqMapFree(&a->keys);
  tqMapFree(&a->member);
  free(a->kheap);
  free(a->hold);
  free(a->heap);
  free(a->touched);
  rtExprFree(a->arg);
  rtExprFree(a->where);
  rtExprFree(a->when);
  for (int i = 0; i < a->nby; i++) rtExprFree(a->by[i]);
  free(a->by);
}

static const RtOpVt aggVt = {"agg", aggPush, aggFlush, aggFinish, aggFree, NULL};

RtOp *rtOpAgg(RtNet *net, const AlgNode *n, TqBuf *msg) {
  const AlgAggSpec *g = &n->agg[0];
  const AlgSchema *in = &n->kid[0]->sch;
  if (g->nby > 64) {
    tqBufPuts(msg, "too many by-values");
    return NULL;
  }
  RtExpr *arg = rtExprCompile(g->arg, in, msg);
  if (!arg) return NULL;
  RtExpr *where = NULL;
  if (g->where && !(where = rtExprCompile(g->where, in, msg))) {
    rtExprFree(arg);
    return NULL;
  }
  RtExpr *when = NULL;
  if (g->when && !(when = rtExprCompile(g->when, in, msg))) {
    rtExprFree(arg);
    rtExprFree(where);
    return NULL;
  }
  RtExpr **by = tqCalloc((size_t)(g->nby ? g->nby : 1), sizeof(RtExpr *));
  for (int i = 0; i < g->nby; i++) {
    by[i] = rtExprCompile(g->by[i], in, msg);
    if (!by[i]) {
      for (int j = 0; j < i; j++) rtExprFree(by[j]);
      free(by);
      rtExprFree(arg);
      rtExprFree(where);
      rtExprFree(when);
      return NULL;
    }
  }
  Agg *a = (Agg *)rtOpNew(net, &aggVt, sizeof(Agg), n);
  a->spec = *g;
  a->arg = arg;
  a->where = where;
  a->when = when;
  a->by = by;
  a->nby = g->nby;
  a->scalar = g->nby == 0;
  a->vty = g->type.kind;
  a->aty = g->arg->type.kind;
  a->stretch = g->window == WIN_EACH ? g->width - 1 : g->window == WIN_INSTANT && g->sample ? g->sample - 1 : 0;
  a->set = g->set && n->kid[0]->sch.ntv == 1;
  a->inEvent = n->kid[0]->sch.ntv == 1 && n->kid[0]->sch.tv[0].isEvent;
  return &a->op;
}
