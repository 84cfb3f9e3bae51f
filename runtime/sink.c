/*
** sink.c - the root of each query's network: turns the root's deltas into
** result rows for the consumers (store, text, display), as a set.
**
** Results are sets: value-equivalent tuples with the same valid time are
** emitted once.  An event's key is (values, at).  An interval's key is
** (values, from); several open tuples with one key share one open row, and
** when one of them ends while another is still open a separate closed row
** [from, to) is inserted, so the rows are exactly the distinct
** (values, from, to) of the result (a shared open row whose end turns out
** to duplicate an earlier closed row is deleted).  A key is forgotten once
** it is closed and the root's low mark has passed its start: no later tuple
** can have that start.
**
** Event results (most rows of a busy query) keep their keys in a flat
** open-addressing set instead: a slot whose time is before the low mark is
** forgotten as it stands (free for the next key that probes it), so
** nothing is deleted one by one; the set is rebuilt with the keys still
** needed when half its slots have been used.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

typedef struct Group {
  struct Group *next;  /* hash chain (or the spare list) */
  uint64_t h;          /* hash of the key */
  TqTime from;         /* key: start (or at) */
  uint64_t openRow;    /* row shared by the open tuples, 0 if none */
  int nopen;           /* open tuples with this key */
  int heaped;          /* in the prune heap */
  int nto, cto;        /* ends of the closed rows already emitted */
  TqTime *tos;
  int64_t vals[];      /* key: values */
} Group;

/* The keys (values, at) of an event result's rows. */
typedef struct EvSet {
  int64_t *slot;       /* cap slots of width words: hash (0: never used), at, values */
  uint32_t cap, used;  /* slots (a power of 2, or 0); slots filled since the last rebuild */
  uint32_t *filled;    /* which (used of them: at most half the slots) */
  uint32_t width;      /* 2 + values */
  TqTime before;       /* keys at earlier times are forgotten (the highest low mark) */
  struct Run {
    TqTime at;
    int64_t n;
  } *run;              /* keys kept, counted by time, ascending (for `stored`) */
  int r0, nrun, crun;  /* first live run, runs, allocated */
} EvSet;

typedef struct Sink {
  RtOp op;
  RtResult *res;
  int isEvent;
  int nval;
  EvSet ev;          /* event results */
  Group **bucket;    /* groups by hash, chained through next (intrusive:
                     ** one probe, no second hash of the hash) */
  uint32_t nbucket;  /* a power of 2, or 0 */
  uint32_t ngroup;   /* groups in the buckets */
  TqMap live;        /* input tuple -> Group* */
  Group **heap;      /* closed groups by from (min-heap) */
  int nheap, cheap;
  uint64_t nextRow;
  Group *spare;      /* deleted groups kept for reuse (all have nval values) */
  int nspare;
} Sink;

static inline uint64_t keyHash(const int64_t *v, int n, TqTime from) { return rtHashWords(v, n, (uint64_t)from); }

static Group *groupFind(Sink *s, const int64_t *v, TqTime from, uint64_t h) {
  if (!s->nbucket) return NULL;
  for (Group *g = s->bucket[h & (s->nbucket - 1)]; g; g = g->next)
    if (g->from == from && rtWordsEq(g->vals, v, s->nval)) return g;
  return NULL;
}

/* ---------------------------------------------------------------- event keys */

/* Counts a key kept at time at (times come mostly in order: the last run). */
static void evCount(Sink *s, TqTime at) {
  EvSet *x = &s->ev;
  rtStoredAdd(&s->op, 1);
  if (x->nrun > x->r0 && x->run[x->nrun - 1].at == at) {
    x->run[x->nrun - 1].n++;
    return;
  }
  if (x->nrun == x->crun) {
    if (x->r0 > x->nrun / 2) { /* reuse the forgotten front */
      memmove(x->run, x->run + x->r0, sizeof(struct Run) * (size_t)(x->nrun - x->r0));
      x->nrun -= x->r0;
      x->r0 = 0;
    } else {
      x->crun = x->crun ? 2 * x->crun : 64;
      x->run = tqRealloc(x->run, sizeof(struct Run) * (size_t)x->crun);
    }
  }
  int i = x->nrun++;
  while (i > x->r0 && x->run[i - 1].at > at) { /* a late key: in its place */
    x->run[i] = x->run[i - 1];
    i--;
  }
  if (i > x->r0 && x->run[i - 1].at == at) {
    x->run[i - 1].n++;
    memmove(x->run + i, x->run + i + 1, sizeof(struct Run) * (size_t)(x->nrun - 1 - i));
    x->nrun--;
    return;
  }
  x->run[i] = (struct Run){at, 1};
}

/* The low mark rose to low: the keys before it are forgotten. */
static void evForget(Sink *s, TqTime low) {
  EvSet *x = &s->ev;
  if (low <= x->before) return;
  x->before = low;
  while (x->r0 < x->nrun && x->run[x->r0].at < low) rtStoredAdd(&s->op, -x->run[x->r0++].n);
  if (x->r0 == x->nrun) {
    /* every key forgotten (a result that keeps up with time: each
    ** instant): the slots are emptied at once, not rebuilt */
    x->r0 = x->nrun = 0;
    for (uint32_t i = 0; i < x->used; i++) x->slot[(size_t)x->filled[i] * x->width] = 0;
    x->used = 0;
  }
}

/* Rebuilds the set with the keys still needed, in a table four times
** their number. */
static void evRebuild(Sink *s) {
  EvSet *x = &s->ev;
  uint32_t cap = 64;
  while (cap < 4 * (uint64_t)s->op.stored + 4) cap *= 2;
  int64_t *old = x->slot, *nw = tqCalloc((size_t)cap * x->width, sizeof(int64_t));
  free(x->filled);
  x->filled = tqMalloc(sizeof(uint32_t) * (cap / 2 + 1));
  x->used = 0;
  for (uint32_t i = 0; i < x->cap; i++) {
    const int64_t *o = old + (size_t)i * x->width;
    if (!o[0] || o[1] < x->before) continue;
    uint32_t k = (uint32_t)o[0] & (cap - 1);
    while (nw[(size_t)k * x->width]) k = (k + 1) & (cap - 1);
    memcpy(nw + (size_t)k * x->width, o, sizeof(int64_t) * x->width);
    x->filled[x->used++] = k;
  }
  free(old);
  x->slot = nw;
  x->cap = cap;
}

/* Adds the key (v, at): 1 when new, 0 when a row has it already. */
static int evAdd(Sink *s, const int64_t *v, TqTime at, uint64_t h) {
  EvSet *x = &s->ev;
  if (2 * (x->used + 1) > x->cap) evRebuild(s);
  uint32_t mask = x->cap - 1, i = (uint32_t)h & mask;
  int64_t *free1 = NULL; /* the first forgotten slot on the way */
  for (;; i = (i + 1) & mask) {
    int64_t *sl = x->slot + (size_t)i * x->width;
    if (!sl[0]) {
      if (!free1) {
        free1 = sl;
        x->filled[x->used++] = i;
      }
      break;
    }
    if (sl[1] < x->before) {
      if (!free1) free1 = sl;
      continue;
    }
    if ((uint64_t)sl[0] == h && sl[1] == at && rtWordsEq(sl + 2, v, s->nval)) return 0;
  }
  free1[0] = (int64_t)h;
  free1[1] = at;
  rtWordsCopy(free1 + 2, v, s->nval);
  evCount(s, at);
  return 1;
}

/* ---------------------------------------------------------------- interval keys */

/* Doubles the buckets (at least 64): a chain holds one group on average. */
static void bucketsGrow(Sink *s) {
  uint32_t n = s->nbucket ? 2 * s->nbucket : 64;
  Group **b = tqCalloc(n, sizeof(Group *));
  for (uint32_t i = 0; i < s->nbucket; i++) {
    for (Group *g = s->bucket[i], *next; g; g = next) {
      next = g->next;
      g->next = b[g->h & (n - 1)];
      b[g->h & (n - 1)] = g;
    }
  }
  free(s->bucket);
  s->bucket = b;
  s->nbucket = n;
}

static Group *groupGet(Sink *s, const int64_t *v, TqTime from, int *created) {
  uint64_t h = keyHash(v, s->nval, from);
  Group *g = groupFind(s, v, from, h);
  *created = 0;
  if (g) return g;
  if (s->spare) {
    /* reuse a deleted group: no allocation per result row */
    g = s->spare;
    s->spare = g->next;
    s->nspare--;
    int cto = g->cto;
    TqTime *tos = g->tos;
    memset(g, 0, sizeof(Group));
    g->cto = cto;
    g->tos = tos;
  } else {
    g = tqCalloc(1, sizeof(Group) + sizeof(int64_t) * (size_t)s->nval);
  }
  g->h = h;
  g->from = from;
  rtWordsCopy(g->vals, v, s->nval);
  if (s->ngroup >= s->nbucket) bucketsGrow(s);
  Group **b = &s->bucket[h & (s->nbucket - 1)];
  g->next = *b;
  *b = g;
  s->ngroup++;
  rtStoredAdd(&s->op, 1);
  *created = 1;
  return g;
}

static void groupDelete(Sink *s, Group *g) {
  Group **p = &s->bucket[g->h & (s->nbucket - 1)];
  while (*p != g) p = &(*p)->next;
  *p = g->next;
  s->ngroup--;
  rtStoredAdd(&s->op, -1);
  if (s->nspare < 4096) {
    g->next = s->spare;
    s->spare = g;
    s->nspare++;
    return;
  }
  free(g->tos);
  free(g);
}

static void heapPush(Sink *s, Group *g) {
  if (g->heaped) return;
  g->heaped = 1;
  if (s->nheap == s->cheap) {
    s->cheap = s->cheap ? 2 * s->cheap : 64;
    s->heap = tqRealloc(s->heap, sizeof(Group *) * (size_t)s->cheap);
  }
  int i = s->nheap++;
  s->heap[i] = g;
  while (i > 0 && s->heap[(i - 1) / 2]->from > s->heap[i]->from) {
    Group *t = s->heap[i];
    s->heap[i] = s->heap[(i - 1) / 2];
    s->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static Group *heapPop(Sink *s) {
  Group *top = s->heap[0];
  s->heap[0] = s->heap[--s->nheap];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < s->nheap && s->heap[l]->from < s->heap[m]->from) m = l;
    if (r < s->nheap && s->heap[r]->from < s->heap[m]->from) m = r;
    if (m == i) break;
    Group *t = s->heap[i];
    s->heap[i] = s->heap[m];
    s->heap[m] = t;
    i = m;
  }
  top->heaped = 0;
  return top;
}

static int hasTo(const Group *g, TqTime to) {
  for (int i = 0; i < g->nto; i++)
    if (g->tos[i] == to) return 1;
  return 0;
}
static void addTo(Group *g, TqTime to) {
  if (g->nto == g->cto) {
    g->cto = g->cto ? 2 * g->cto : 2;
    g->tos = tqRealloc(g->tos, sizeof(TqTime) * (size_t)g->cto);
  }
  g->tos[g->nto++] = to;
}

__attribute__((always_inline)) static inline int rowOut(Sink *s, int op, uint64_t rowid, TqTime from, TqTime to, const int64_t *vals) {
  RtRow r = {op, rowid, from, to, vals};
  RtNet *net = s->op.net;
  int rc = 0;
  if (op == RT_ROW_INSERT) s->res->rows++;
  if (s->res->only) { /* a query added to a running network */
    rc = s->res->only->row ? s->res->only->row(s->res->only->self, s->res, &r) : 0;
    if (rc) net->failed = 1;
    return rc;
  }
  for (int i = 0; i < net->consumers.n; i++) {
    RtConsumer *c = net->consumers.v[i];
    if (c->row && c->row(c->self, s->res, &r)) rc = -1;
  }
  if (rc) net->failed = 1;
  return rc;
}

int rtSinkEvent(RtOp *op, TqTime at, const int64_t *v) {
  Sink *s = (Sink *)op;
  if (!evAdd(s, v, at, keyHash(v, s->nval, at))) {
    s->res->dups++;
    return 0;
  }
  return rowOut(s, RT_ROW_INSERT, ++s->nextRow, at, at + 1, v);
}

static int sinkPush(RtOp *op, int port, int kind, RtTup *t) {
  Sink *s = (Sink *)op;
  TqTime from = RT_FROM(t, 0), to = RT_TO(t, 0);
  const int64_t *v = RT_VAL(t);
  int created;
  if (s->isEvent) return rtSinkEvent(op, from, v);
  if (kind == RT_BEGIN) {
    Group *g = groupGet(s, v, from, &created);
    tqMapPut(&s->live, (uint64_t)(uintptr_t)t, g);
    g->nopen++;
    if (g->openRow) {
      s->res->dups++;
      return 0;
    }
    g->openRow = ++s->nextRow;
    return rowOut(s, RT_ROW_INSERT, g->openRow, from, TQ_OPEN, v);
  }
  Group *g;
  if (kind == RT_END) {
    g = tqMapDel(&s->live, (uint64_t)(uintptr_t)t);
    if (!g) return 0;
    g->nopen--;
    int rc = 0;
    if (hasTo(g, to)) {
      s->res->dups++;
      if (g->nopen == 0) {
        rc = rowOut(s, RT_ROW_DELETE, g->openRow, from, to, v);
        g->openRow = 0;
      }
    } else if (g->nopen == 0) {
      rc = rowOut(s, RT_ROW_CLOSE, g->openRow, from, to, v);
      g->openRow = 0;
      addTo(g, to);
    } else {
      rc = rowOut(s, RT_ROW_INSERT, ++s->nextRow, from, to, v);
      addTo(g, to);
    }
    if (g->nopen == 0) heapPush(s, g);
    return rc;
  }
  /* RT_ADD: a complete interval */
  g = groupGet(s, v, from, &created);
  if (hasTo(g, to)) {
    s->res->dups++;
    return 0;
  }
  addTo(g, to);
  if (g->nopen == 0) heapPush(s, g);
  return rowOut(s, RT_ROW_INSERT, ++s->nextRow, from, to, v);
}

static void sinkFlush(RtOp *op, TqTime now) {
  Sink *s = (Sink *)op;
  TqTime low = op->kid[0]->low;
  if (s->isEvent) evForget(s, low);
  while (s->nheap && s->heap[0]->from < low) {
    Group *g = heapPop(s);
    if (g->nopen == 0) groupDelete(s, g);
  }
  op->low = low;
  op->endLow = op->kid[0]->endLow;
}

static void sinkFinish(RtOp *op, TqTime now) {}

static void sinkFree(RtOp *op) {
  Sink *s = (Sink *)op;
  for (uint32_t i = 0; i < s->nbucket; i++) {
    Group *g = s->bucket[i];
    while (g) {
      Group *n = g->next;
      free(g->tos);
      free(g);
      g = n;
    }
  }
  free(s->bucket);
  free(s->ev.slot);
  free(s->ev.filled);
  free(s->ev.run);
  tqMapFree(&s->live);
  free(s->heap);
  while (s->spare) {
    Group *n = s->spare->next;
    free(s->spare->tos);
    free(s->spare);
    s->spare = n;
  }
}

static const RtOpVt sinkVt = {"sink", sinkPush, sinkFlush, sinkFinish, sinkFree, NULL};
const RtOpVt rtSinkEventVt = {"sink", sinkPush, sinkFlush, sinkFinish, sinkFree, NULL};

RtOp *rtOpSink(RtNet *net, RtResult *res) {
  /* (--no-opt: every step makes its tuple, the oracle of the optimized one) */
  Sink *s = (Sink *)rtOpNew(net, res->isEvent && !net->opt.noOpt ? &rtSinkEventVt : &sinkVt, sizeof(Sink), res->root->node);
  s->res = res;
  s->isEvent = res->isEvent;
  s->nval = res->nattr;
  s->ev.width = 2 + (uint32_t)s->nval;
  s->ev.before = TQ_BEGINNING;
  s->op.nkid = 1;
  s->op.kid[0] = res->root;
  res->root->parent = &s->op;
  res->root->port = 0;
  res->sink = s;
  return &s->op;
}
