/*
** op_product.c - the Cartesian product x and its overlap variant x1
** (paper sections 8.1 and 8.6), optionally with equality join keys.
**
** Both store the tuples of each side and combine every new tuple with the
** stored tuples of the other side (only those with equal keys when the
** node has join keys).  An output tuple concatenates the spans and values
** of its two inputs (left first); while either input is open, the output is
** kept in that input's list and an END of the input updates and re-emits it,
** unless the parents settled it (RT_SETTLED: nobody needs its ENDs).  The
** parents settle most outputs at the next flush or so: at the flush after
** that, the product drops the settled ones from their lists while they are
** still in cache (`recent`); the others stay until the list is full.
**
** Stored tuples are found by key: a one-value key whose value is small (an
** entity's symbol id, see rtDenseFits) by value in an array of chain heads,
** other keys by hash; a key's chain keeps its entries in order of arrival.
** Entries come from a free list, never longer than the most entries stored at once.
**
** x keeps everything (its memory grows with the history: that is what the
** optimizer avoids).  x1 is only used under an overlap condition on one
** time component of each side: it does not form pairs that certainly do not
** overlap, and it forgets a closed tuple as soon as no future tuple of the
** other side can overlap it (its end is at or before the other side's low
** mark), so its memory is bounded by the live intervals.  Most complete
** tuples of x1 (the events of an overlap join) are forgotten at the flush
** after they came: until then they wait in their side's `fresh` list, in
** order of arrival after the stored ones, and are stored only if the flush
** keeps them.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

enum { NIN = 4 }; /* open outputs an entry holds without an allocation */

/* The fields a new tuple of the other side reads fill the entry's first
** cache line (entries are allocated on 64-byte boundaries). */
typedef struct Entry {
  struct Entry *knext; /* next entry with the same key hash, in order of arrival */
  RtTup *t;          /* stored tuple (one reference) */
  RtTup **outs;      /* open outputs that involve t, while t is open (in, or allocated) */
  int nout, cout;
  RtTup *in[NIN];    /* the first outputs */
  struct Entry *kprev; /* previous one (the first one's kprev is the last) */
  int side;          /* 0 left, 1 right */
  int byTup;         /* in the side's byTup map (arrived open) */
  int idx;           /* position in its side's vector */
  int hpos[2];       /* positions in the side's heaps (-1 = absent) */
  uint64_t gen;      /* which storing this is (entries are reused) */
  uint64_t khash;    /* hash of the key values */
  int64_t kval[];    /* key values (nkey) */
} Entry;

/* Indexed min-heap of entries by a time key. */
typedef struct Heap {
  Entry **v;
  TqTime *k;
  int n, cap;
  int which; /* which hpos slot */
} Heap;

/* A complete tuple of x1 that came since the last flush, not stored. */
typedef struct Fresh {
  RtTup *t;        /* (one reference) */
  uint64_t khash;  /* hash of its key values (nkey > 1, or a value not dense) */
  int64_t k0;      /* its first key value */
} Fresh;
enum { NFRESH = 64 }; /* more in one instant: stored at once (a linear scan each) */

typedef struct Side {
  Entry **v;       /* all stored entries */
  int n, cap;
  Fresh fresh[NFRESH]; /* x1: complete tuples since the last flush, in order of arrival */
  int nfresh;
  TqMap byTup;     /* tuple pointer -> Entry*, for tuples that came open */
  TqMap byKey;     /* key hash -> first Entry* with it */
  struct Head {
    Entry *e;      /* first entry with the key */
    RtTup *t;      /* its tuple (read before e is: fetched at once) */
  } *head;         /* one key (nkey == 1) whose value is below nhead (an
                   ** entity's symbol id): its chain, by value; such keys
                   ** are never in byKey */
  uint32_t nhead;  /* values the dense heads cover */
  RtExpr **key;    /* key expressions over this side's tuples */
  int ov;          /* x1: span index that must overlap, -1 for x */
  Heap closed;     /* x1: closed entries by end of the ov span */
  Heap froms;      /* entries by their earliest from */
} Side;

typedef struct Product {
  RtOp op;
  int overlap;     /* x1 */
  int nkey;
  int nspanL, nvalL;
  Side s[2];
  Entry *spare;    /* unstored entries kept for reuse (chained by knext);
                   ** never freed before the operator (recent may name them) */
  uint64_t gens;   /* storings so far */
  /* open outputs added to an entry's list since the flush before last: at
  ** a flush, those of the instant before are settled or not by then, and
  ** still in cache; the settled ones leave their list there and then,
  ** rather than cold when the list is full */
  struct Recent {
    Entry *e;      /* the entry (stored as gen then) */
    uint64_t gen;  /* e's storing when c was added (e may be reused since) */
    RtTup *c;      /* the output (one reference) */
  } *recent;
  int nrecent, crecent; /* used, allocated */
  int older;       /* recent[0..older) were made before the last flush */
} Product;

/* ---------------------------------------------------------------- heap */
static void hswap(Heap *h, int i, int j) {
  Entry *e = h->v[i];
  TqTime k = h->k[i];
  h->v[i] = h->v[j];
  h->k[i] = h->k[j];
  h->v[j] = e;
  h->k[j] = k;
  h->v[i]->hpos[h->which] = i;
  h->v[j]->hpos[h->which] = j;
}
static void hup(Heap *h, int i) {
  while (i > 0 && h->k[(i - 1) / 2] > h->k[i]) {
    hswap(h, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}
static void hdown(Heap *h, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->k[l] < h->k[m]) m = l;
    if (r < h->n && h->k[r] < h->k[m]) m = r;
    if (m == i) return;
    hswap(h, i, m);
    i = m;
  }
}
static void hpush(Heap *h, Entry *e, TqTime k) {
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 64;
    h->v = tqRealloc(h->v, sizeof(Entry *) * (size_t)h->cap);
    h->k = tqRealloc(h->k, sizeof(TqTime) * (size_t)h->cap);
  }
  h->v[h->n] = e;
  h->k[h->n] = k;
  e->hpos[h->which] = h->n;
  h->n++;
  hup(h, h->n - 1);
}
static void hdel(Heap *h, Entry *e) {
  int i = e->hpos[h->which];
  if (i < 0) return;
  e->hpos[h->which] = -1;
  h->n--;
  if (i == h->n) return;
  h->v[i] = h->v[h->n];
  h->k[i] = h->k[h->n];
  h->v[i]->hpos[h->which] = i;
  if (i > 0 && h->k[(i - 1) / 2] > h->k[i]) hup(h, i);
  else hdown(h, i);
}

/* ---------------------------------------------------------------- keys */
static inline uint64_t keyHash(const int64_t *k, int n) { return rtHashWords(k, n, 7); }

/* Where the chain of key kv starts: a slot of the dense heads, or NULL
** when it is in byKey. */
static inline struct Head *headSlot(const Product *p, Side *s, const int64_t *kv) {
  return p->nkey == 1 && (uint64_t)kv[0] < s->nhead ? &s->head[kv[0]] : NULL;
}

static void keyLink(Product *p, Side *s, Entry *e);

/* Grows the dense heads to cover value v: the chains of byKey are linked
** again, in their order (so each key's entries keep their arrival order). */
static void headsGrow(Product *p, Side *s, int64_t v) {
  rtDenseGrow((void **)&s->head, &s->nhead, sizeof(struct Head), v);
  if (!s->byKey.n) return;
  TqVec all = {0};
  for (uint32_t i = 0; i < s->byKey.cap; i++)
    if (s->byKey.slot[i].key > 1)
      for (Entry *x = s->byKey.slot[i].val; x; x = x->knext) tqVecPush(&all, x);
  tqMapFree(&s->byKey);
  for (int i = 0; i < all.n; i++) {
    Entry *x = all.v[i];
    x->knext = x->kprev = NULL;
    keyLink(p, s, x);
  }
  tqVecFree(&all);
}

static void keyLink(Product *p, Side *s, Entry *e) {
  struct Head *h = headSlot(p, s, e->kval);
  Entry *first = h ? h->e : tqMapGet(&s->byKey, e->khash);
  if (!first) {
    e->kprev = e;
    if (h) *h = (struct Head){e, e->t};
    else tqMapPut(&s->byKey, e->khash, e);
    return;
  }
  Entry *last = first->kprev;
  last->knext = e;
  e->kprev = last;
  first->kprev = e;
}

static void keyUnlink(Product *p, Side *s, Entry *e) {
  struct Head *h = headSlot(p, s, e->kval);
  Entry *first = h ? h->e : tqMapGet(&s->byKey, e->khash);
  if (e == first) {
    if (e->knext) {
      e->knext->kprev = e->kprev;
      if (h) *h = (struct Head){e->knext, e->knext->t};
      else tqMapPut(&s->byKey, e->khash, e->knext);
    } else if (h) {
      *h = (struct Head){NULL, NULL};
    } else {
      tqMapDel(&s->byKey, e->khash);
    }
    return;
  }
  e->kprev->knext = e->knext;
  if (e->knext) e->knext->kprev = e->kprev;
  else first->kprev = e->kprev;
}

/* ---------------------------------------------------------------- entries */
static TqTime minFrom(const RtTup *t) {
  TqTime m = TQ_FOREVER;
  for (int i = 0; i < t->nspan; i++)
    if (RT_FROM(t, i) < m) m = RT_FROM(t, i);
  return m;
}

static Entry *store(Product *p, int side, RtTup *t, const int64_t *kv, uint64_t kh) {
  Side *s = &p->s[side];
  Entry *e = p->spare;
  if (e) {
    p->spare = e->knext;
    memset(e, 0, sizeof *e);
  } else {
    size_t n = (sizeof *e + sizeof(int64_t) * (size_t)p->nkey + 63) & ~(size_t)63;
    e = aligned_alloc(64, n);
    if (!e) e = tqMalloc(n); /* (tqMalloc aborts when memory is out) */
    memset(e, 0, sizeof *e);
  }
  e->t = t;
  e->gen = ++p->gens;
  e->outs = e->in;
  e->cout = NIN;
  rtTupRef(t);
  e->side = side;
  e->hpos[0] = e->hpos[1] = -1;
  e->khash = kh;
  if (p->nkey) memcpy(e->kval, kv, sizeof(int64_t) * (size_t)p->nkey);
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->v = tqRealloc(s->v, sizeof(Entry *) * (size_t)s->cap);
  }
  e->idx = s->n;
  s->v[s->n++] = e;
  if (t->nopen) { /* only an open tuple gets ENDs */
    tqMapPut(&s->byTup, (uint64_t)(uintptr_t)t, e);
    e->byTup = 1;
  }
  /* (by what both sides hold: a side that keeps few tuples for long, the
  ** events of an overlap join, is matched against the other's keys) */
  if (p->nkey == 1 && (uint64_t)e->kval[0] >= s->nhead && rtDenseFits(e->kval[0], p->s[0].n + p->s[1].n))
    headsGrow(p, s, e->kval[0]);
  if (p->nkey) keyLink(p, s, e);
  s->froms.which = 1;
  hpush(&s->froms, e, minFrom(t));
  rtStoredAdd(&p->op, 1);
  return e;
}

static void unstore(Product *p, Entry *e) {
  Side *s = &p->s[e->side];
  s->v[e->idx] = s->v[--s->n];
  s->v[e->idx]->idx = e->idx;
  if (e->byTup) tqMapDel(&s->byTup, (uint64_t)(uintptr_t)e->t);
  if (p->nkey) keyUnlink(p, s, e);
  hdel(&s->closed, e);
  hdel(&s->froms, e);
  for (int i = 0; i < e->nout; i++) rtTupUnref(e->outs[i]);
  if (e->outs != e->in) free(e->outs);
  e->outs = e->in;
  e->nout = 0;
  e->gen = 0; /* what recent remembers of it is gone */
  rtTupDrop(e->t);
  rtStoredAdd(&p->op, -1);
  /* no allocation per stored tuple: a few are reused over and over (the
  ** free list is at most the most entries stored at once) */
  e->knext = p->spare;
  p->spare = e;
}

/* Keeps c among e's open outputs.  Outputs that the parents settled (an
** event result already emitted from them) need no END: they are forgotten
** when the list is full, so it holds what the parents still wait for. */
static void addOut(Product *p, Entry *e, RtTup *c) {
  if (e->nout == e->cout) {
    int k = 0;
    for (int i = 0; i < e->nout; i++) {
      if (e->outs[i]->flags & RT_SETTLED) rtTupUnref(e->outs[i]);
      else e->outs[k++] = e->outs[i];
    }
    e->nout = k;
  }
  if (e->nout == e->cout) {
    e->cout *= 2;
    if (e->outs == e->in) {
      e->outs = tqMalloc(sizeof(RtTup *) * (size_t)e->cout);
      memcpy(e->outs, e->in, sizeof e->in);
    } else {
      e->outs = tqRealloc(e->outs, sizeof(RtTup *) * (size_t)e->cout);
    }
  }
  e->outs[e->nout++] = c;
  rtTupRef(c);
  if (p->nrecent == p->crecent) {
    p->crecent = p->crecent ? 2 * p->crecent : 64;
    p->recent = tqRealloc(p->recent, sizeof(struct Recent) * (size_t)p->crecent);
  }
  p->recent[p->nrecent++] = (struct Recent){e, e->gen, c};
  rtTupRef(c);
}

/* The outputs added before the last flush: settled ones leave their
** entry's list (looked for among its last few, where they were added; the
** others wait for the list to fill up).  The list keeps its order. */
static void dropSettled(Product *p) {
  for (int i = 0; i < p->older; i++) {
    struct Recent *r = &p->recent[i];
    Entry *e = r->e;
    if ((r->c->flags & RT_SETTLED) && e->gen == r->gen) {
      int lo = e->nout > 16 ? e->nout - 16 : 0;
      for (int k = e->nout - 1; k >= lo; k--) {
        if (e->outs[k] != r->c) continue;
        memmove(e->outs + k, e->outs + k + 1, sizeof(RtTup *) * (size_t)(e->nout - k - 1));
        e->nout--;
        rtTupUnref(r->c);
        break;
      }
    }
    rtTupUnref(r->c);
  }
  p->nrecent -= p->older;
  if (p->older && p->nrecent) memmove(p->recent, p->recent + p->older, sizeof(struct Recent) * (size_t)p->nrecent);
  p->older = p->nrecent;
}

/* Could spans a of l and b of r still overlap? */
static int mayOverlap(const RtTup *l, int a, const RtTup *r, int b) {
  TqTime lf = RT_FROM(l, a), lt = RT_TO(l, a), rf = RT_FROM(r, b), rt = RT_TO(r, b);
  if (lt != TQ_OPEN && lt <= rf) return 0;
  if (rt != TQ_OPEN && rt <= lf) return 0;
  return 1;
}

static void fillSpans(Product *p, RtTup *c, const RtTup *t, int side) {
  int off = side ? p->nspanL : 0;
  for (int i = 0; i < t->nspan; i++) {
    RT_FROM(c, off + i) = RT_FROM(t, i);
    RT_TO(c, off + i) = RT_TO(t, i);
  }
}

static int combine(Product *p, Entry *le, Entry *re) {
  const RtTup *l = le->t, *r = re->t;
  if (p->overlap && !mayOverlap(l, p->s[0].ov, r, p->s[1].ov)) return 0;
  RtTup *c = rtTupAlloc(l->nspan + r->nspan, l->nval + r->nval);
  fillSpans(p, c, l, 0);
  fillSpans(p, c, r, 1);
  rtWordsCopy(RT_VAL(c), RT_VAL(l), l->nval);
  rtWordsCopy(RT_VAL(c) + l->nval, RT_VAL(r), r->nval);
  c->nopen = l->nopen + r->nopen;
  int rc;
  if (c->nopen) {
    rc = rtEmit(&p->op, RT_BEGIN, c);
    /* a parent that decided it at once (sigmaT false) settled it: it gets
    ** no END, and is not kept */
    if (!(c->flags & RT_SETTLED)) {
      if (l->nopen) addOut(p, le, c);
      if (r->nopen) addOut(p, re, c);
    }
  } else {
    rc = rtEmit(&p->op, RT_ADD, c);
  }
  rtTupDrop(c);
  return rc;
}

static void closedPush(Product *p, Entry *e) {
  Side *s = &p->s[e->side];
  if (!p->overlap) return;
  s->closed.which = 0;
  hpush(&s->closed, e, RT_TO(e->t, s->ov));
}

/* Stores side's fresh tuples (in order of arrival), or drops those no
** future tuple of the other side can overlap (all = 0: at a flush, by the
** other side's low mark). */
static void freshStore(Product *p, int side, int all) {
  Side *s = &p->s[side];
  TqTime otherLow = p->op.kid[1 - side]->low;
  for (int i = 0; i < s->nfresh; i++) {
    Fresh *f = &s->fresh[i];
    rtStoredAdd(&p->op, -1);
    if (all || RT_TO(f->t, s->ov) > otherLow) closedPush(p, store(p, side, f->t, &f->k0, f->khash ? f->khash : keyHash(&f->k0, 1)));
    rtTupUnref(f->t);
  }
  s->nfresh = 0;
}

static int productPush(RtOp *op, int port, int kind, RtTup *t) {
  Product *p = (Product *)op;
  Side *s = &p->s[port], *o = &p->s[1 - port];
  if (kind == RT_END) {
    Entry *e = tqMapGet(&s->byTup, (uint64_t)(uintptr_t)t);
    if (!e) return 0;
    int rc = 0, k = 0;
    for (int i = 0; i < e->nout; i++) {
      RtTup *c = e->outs[i];
      if (c->flags & RT_SETTLED) {
        rtTupUnref(c);
        continue;
      }
      fillSpans(p, c, t, port);
      rtTupCountOpen(c);
      if (rtEmit(op, RT_END, c)) rc = -1;
      if (c->nopen == 0 || t->nopen == 0) rtTupUnref(c);
      else e->outs[k++] = c;
    }
    e->nout = k;
    if (t->nopen == 0) closedPush(p, e);
    return rc;
  }
  /* a new tuple */
  int64_t kbuf[8], *kv = kbuf;
  uint64_t kh = 0;
  if (p->nkey) {
    if (p->nkey > 8) kv = tqMalloc(sizeof(int64_t) * (size_t)p->nkey);
    for (int i = 0; i < p->nkey; i++) kv[i] = rtEvalSlotQ(s->key[i], RT_VAL(t));
    /* the hash is for byKey: not needed when both sides index the value (a
    ** fresh tuple's is found when it is stored) */
    if (p->nkey != 1 || (uint64_t)kv[0] >= o->nhead ||
        ((uint64_t)kv[0] >= s->nhead && !(p->overlap && t->nopen == 0)))
      kh = keyHash(kv, p->nkey);
    struct Head *h = headSlot(p, o, kv);
    if (h && h->e) {
      /* the first match and its tuple arrive while this one is stored */
      __builtin_prefetch(h->e);
      __builtin_prefetch(h->t);
    }
  }
  int keep = 1;
  if (p->overlap && t->nopen == 0 && RT_TO(t, s->ov) <= op->kid[1 - port]->low) keep = 0;
  /* a complete tuple of x1 on one key waits in the fresh list (its order
  ** of arrival after the stored ones: stored ones are never added after it) */
  int fresh = keep && p->overlap && p->nkey == 1 && t->nopen == 0;
  if (fresh && s->nfresh == NFRESH) freshStore(p, port, 1);
  if (keep && !fresh && s->nfresh) freshStore(p, port, 1);
  Entry tmp; /* (what combine reads of a tuple not stored) */
  Entry *e;
  if (keep && !fresh) {
    e = store(p, port, t, kv, kh);
  } else {
    tmp.t = t;
    tmp.side = port;
    tmp.outs = tmp.in;
    tmp.nout = 0;
    tmp.cout = NIN;
    e = &tmp;
  }
  int rc = 0;
  if (p->nkey) {
    struct Head *h = headSlot(p, o, kv); /* a dense chain holds one key */
    for (Entry *x = h ? h->e : tqMapGet(&o->byKey, kh); x; x = x->knext) {
      int k = 0;
      while (!h && k < p->nkey && x->kval[k] == kv[k]) k++;
      if (!h && k < p->nkey) continue; /* another key with the same hash */
      if (combine(p, port == 0 ? e : x, port == 0 ? x : e)) rc = -1;
    }
    /* then the other side's fresh tuples on the key, which came after */
    for (int i = 0; i < o->nfresh; i++) {
      Fresh *f = &o->fresh[i];
      if (f->k0 != kv[0]) continue;
      Entry x; /* (complete: combine reads its tuple only) */
      x.t = f->t;
      x.side = 1 - port;
      x.outs = x.in;
      x.nout = 0;
      x.cout = NIN;
      if (combine(p, port == 0 ? e : &x, port == 0 ? &x : e)) rc = -1;
    }
  } else {
    for (int i = 0; i < o->n; i++)
      if (combine(p, port == 0 ? e : o->v[i], port == 0 ? o->v[i] : e)) rc = -1;
  }
  if (fresh) {
    rtTupRef(t);
    s->fresh[s->nfresh++] = (Fresh){t, kh, kv[0]};
    rtStoredAdd(op, 1);
  } else if (keep && t->nopen == 0) {
    closedPush(p, e);
  }
  if (kv != kbuf) free(kv);
  return rc;
}

static void prune(Product *p, int side, TqTime otherLow) {
  Heap *h = &p->s[side].closed;
  while (h->n && h->k[0] <= otherLow) unstore(p, h->v[0]);
}

static void productFlush(RtOp *op, TqTime now) {
  Product *p = (Product *)op;
  dropSettled(p);
  TqTime l0 = op->kid[0]->low, l1 = op->kid[1]->low;
  if (p->overlap) {
    prune(p, 0, l1);
    prune(p, 1, l0);
    freshStore(p, 0, 0);
    freshStore(p, 1, 0);
  }
  TqTime low = l0 < l1 ? l0 : l1;
  for (int i = 0; i < 2; i++)
    if (p->s[i].froms.n && p->s[i].froms.k[0] < low) low = p->s[i].froms.k[0];
  op->low = low;
  /* an output pairs a new input tuple (its latest span starts at or after
  ** that input's latest-start mark) with stored ones */
  op->maxLow = op->kid[0]->maxLow < op->kid[1]->maxLow ? op->kid[0]->maxLow : op->kid[1]->maxLow;
  op->endLow = op->kid[0]->endLow < op->kid[1]->endLow ? op->kid[0]->endLow : op->kid[1]->endLow;
}

static void productFinish(RtOp *op, TqTime now) {}

static void productFree(RtOp *op) {
  Product *p = (Product *)op;
  for (int i = 0; i < 2; i++) {
    Side *s = &p->s[i];
    for (int k = 0; k < s->nfresh; k++) rtTupUnref(s->fresh[k].t);
    while (s->n) unstore(p, s->v[s->n - 1]);
    free(s->v);
    tqMapFree(&s->byTup);
    tqMapFree(&s->byKey);
    free(s->head);
    free(s->closed.v);
    free(s->closed.k);
    free(s->froms.v);
    free(s->froms.k);
    for (int k = 0; k < p->nkey; k++) rtExprFree(s->key[k]);
    free(s->key);
  }
  for (int i = 0; i < p->nrecent; i++) rtTupUnref(p->recent[i].c);
  free(p->recent);
  while (p->spare) {
    Entry *e = p->spare;
    p->spare = e->knext;
    free(e);
  }
}

/* A tuple of port with values vals comes next: its key's head on the
** other side (stage 0), then its first match there (its entry, and its
** tuple's first two lines, whose values combine copies; stage 1) are
** fetched now.  An instant's events then wait on memory together, not one
** after another: with 10,000 stored intervals their entries and tuples
** are not in the cache. */
static void productHint(RtOp *op, int port, const int64_t *vals, int stage) {
  Product *p = (Product *)op;
  if (p->nkey != 1) return;
  Side *o = &p->s[1 - port];
  int64_t k = rtEvalSlotQ(p->s[port].key[0], vals);
  if ((uint64_t)k >= o->nhead) return;
  const struct Head *h = &o->head[k];
  if (stage == 0) {
    __builtin_prefetch(h);
    return;
  }
  if (!h->e) return;
  __builtin_prefetch(h->e);
  __builtin_prefetch(h->t);
  __builtin_prefetch((const char *)h->t + 64);
}

static const RtOpVt productVt = {"product", productPush, productFlush, productFinish, productFree, productHint};

RtOp *rtOpProduct(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtExpr **keys[2] = {NULL, NULL};
  int ov[2] = {-1, -1};
  if (n->kind == ALG_OPRODUCT) {
    ov[0] = algSchemaTvar(&n->kid[0]->sch, n->ovL);
    ov[1] = algSchemaTvar(&n->kid[1]->sch, n->ovR);
    if (ov[0] < 0 || ov[1] < 0) {
      tqBufPrintf(msg, "x1: overlap components %s/%s not found", n->ovL ? n->ovL : "?", n->ovR ? n->ovR : "?");
      return NULL;
    }
  }
  for (int i = 0; i < 2 && n->nkey; i++) {
    keys[i] = tqCalloc((size_t)n->nkey, sizeof(RtExpr *));
    for (int k = 0; k < n->nkey; k++) {
      keys[i][k] = rtExprCompile(i ? n->keyR[k] : n->keyL[k], &n->kid[i]->sch, msg);
      if (!keys[i][k]) {
        for (int j = 0; j <= i; j++) {
          for (int m = 0; keys[j] && m < n->nkey; m++) rtExprFree(keys[j][m]);
          free(keys[j]);
        }
        return NULL;
      }
    }
  }
  Product *p = (Product *)rtOpNew(net, &productVt, sizeof(Product), n);
  p->overlap = n->kind == ALG_OPRODUCT;
  p->nkey = n->nkey;
  p->nspanL = n->kid[0]->sch.ntv;
  p->nvalL = n->kid[0]->sch.ncol;
  for (int i = 0; i < 2; i++) {
    Side *s = &p->s[i];
    s->ov = ov[i];
    s->key = keys[i];
    s->closed.which = 0;
    s->froms.which = 1;
  }
  return &p->op;
}
