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
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

typedef struct Group {
  struct Group *next;  /* hash chain */
  uint64_t h;          /* hash of the key */
  TqTime from;         /* key: start (or at) */
  uint64_t openRow;    /* row shared by the open tuples, 0 if none */
  int nopen;           /* open tuples with this key */
  int heaped;          /* in the prune heap */
  int nto, cto;        /* ends of the closed rows already emitted */
  TqTime *tos;
  int64_t vals[];      /* key: values */
} Group;

typedef struct Sink {
  RtOp op;
  RtResult *res;
  int isEvent;
  int nval;
  TqMap groups;      /* hash -> Group* (chained) */
  TqMap live;        /* input tuple -> Group* */
  Group **heap;      /* closed groups by from (min-heap) */
  int nheap, cheap;
  uint64_t nextRow;
  Group *spare;      /* deleted groups kept for reuse (all have nval values) */
  int nspare;
} Sink;

static uint64_t keyHash(const int64_t *v, int n, TqTime from) {
  return tqHashBytes(v, sizeof(int64_t) * (size_t)n, (uint64_t)from) | 2;
}

static Group *groupFind(Sink *s, const int64_t *v, TqTime from, uint64_t h) {
  for (Group *g = tqMapGet(&s->groups, h); g; g = g->next)
    if (g->from == from && !memcmp(g->vals, v, sizeof(int64_t) * (size_t)s->nval)) return g;
  return NULL;
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
  memcpy(g->vals, v, sizeof(int64_t) * (size_t)s->nval);
  g->next = tqMapGet(&s->groups, h);
  tqMapPut(&s->groups, h, g);
  rtStoredAdd(&s->op, 1);
  *created = 1;
  return g;
}

static void groupDelete(Sink *s, Group *g) {
  Group *head = tqMapGet(&s->groups, g->h);
  if (head == g) {
    if (g->next) tqMapPut(&s->groups, g->h, g->next);
    else tqMapDel(&s->groups, g->h);
  } else {
    for (Group *p = head; p; p = p->next) {
      if (p->next == g) {
        p->next = g->next;
        break;
      }
    }
  }
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

static int rowOut(Sink *s, int op, uint64_t rowid, TqTime from, TqTime to, const int64_t *vals) {
  RtRow r = {op, rowid, from, to, vals};
  RtNet *net = s->op.net;
  int rc = 0;
  if (op == RT_ROW_INSERT) s->res->rows++;
  for (int i = 0; i < net->consumers.n; i++) {
    RtConsumer *c = net->consumers.v[i];
    if (c->row && c->row(c->self, s->res, &r)) rc = -1;
  }
  if (rc) net->failed = 1;
  return rc;
}

static int sinkPush(RtOp *op, int port, int kind, RtTup *t) {
  Sink *s = (Sink *)op;
  TqTime from = RT_FROM(t, 0), to = RT_TO(t, 0);
  const int64_t *v = RT_VAL(t);
  int created;
  if (s->isEvent) {
    Group *g = groupGet(s, v, from, &created);
    if (!created) {
      s->res->dups++;
      return 0;
    }
    heapPush(s, g);
    return rowOut(s, RT_ROW_INSERT, ++s->nextRow, from, from + 1, v);
  }
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
  for (uint32_t i = 0; i < s->groups.cap; i++) {
    if (s->groups.slot[i].key <= 1) continue;
    Group *g = s->groups.slot[i].val;
    while (g) {
      Group *n = g->next;
      free(g->tos);
      free(g);
      g = n;
    }
  }
  tqMapFree(&s->groups);
  tqMapFree(&s->live);
  free(s->heap);
  while (s->spare) {
    Group *n = s->spare->next;
    free(s->spare->tos);
    free(s->spare);
    s->spare = n;
  }
}

static const RtOpVt sinkVt = {"sink", sinkPush, sinkFlush, sinkFinish, sinkFree};

RtOp *rtOpSink(RtNet *net, RtResult *res) {
  Sink *s = (Sink *)rtOpNew(net, &sinkVt, sizeof(Sink), res->root->node);
  s->res = res;
  s->isEvent = res->isEvent;
  s->nval = res->nattr;
  s->op.nkid = 1;
  s->op.kid[0] = res->root;
  res->root->parent = &s->op;
  res->root->port = 0;
  res->sink = s;
  return &s->op;
}
