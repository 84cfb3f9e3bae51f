/*
** engine_snap.c - snapshots and delta relations.  A snapshot closes at each
** base Clock tick after which records came: the record sets of the
** delivered records go to the PMs synchronised on SNAPSHOT_END (consumers,
** delta producers), and it becomes the previous one.  A delta relation's
** records are computed at each base tick from the samples of its sampled
** relation, matched with those of the previous tick; a live recording of
** everything samples every sampled relation on every entity at each tick.
*/
#include <stdlib.h>
#include <string.h>

#include "engineInt.h"

/* ================================================================ snapshots */

/* A record delivered to the queries goes into the forming snapshot's
** record set. */
void enSnapAdd(tq_engine *e, const tq_record *r) {
  SnapStore *st = &e->rs[r->rel - 1].cur;
  if (st->nrec == st->crec) {
    st->crec = st->crec ? 2 * st->crec : 64;
    st->rec = tqRealloc(st->rec, sizeof(tq_record) * (size_t)st->crec);
  }
  if (st->nvals + r->nvals > st->cvals) {
    st->cvals = st->cvals ? 2 * st->cvals : 256;
    while (st->nvals + r->nvals > st->cvals) st->cvals *= 2;
    st->vals = tqRealloc(st->vals, sizeof(int64_t) * (size_t)st->cvals);
  }
  tq_record *c = &st->rec[st->nrec++];
  *c = *r;
  TQ_MEMCPY(st->vals + st->nvals, r->vals, sizeof(int64_t) * (size_t)r->nvals);
  c->vals = (const int64_t *)(intptr_t)st->nvals; /* an offset until the snapshot closes */
  st->nvals += r->nvals;
  if (!e->snapDirty) {
    /* the base tick after this instant (a record instant, or a Clock tick
    ** whose samples are recorded) closes the snapshot */
    e->snapBoundary = tqTickAfter(e->net->now, e->prog->cat.tick);
    e->snapDirty = 1;
  }
}

/* Closes the forming snapshot at t: its record sets go to the PMs
** synchronised on SNAPSHOT_END, then it becomes the previous one. */
void enCloseSnapshot(tq_engine *e, TqTime t) {
  /* the previous snapshot's storage is released; the current one becomes it */
  for (int i = 0; i < e->nrel; i++) {
    SnapStore *ps = &e->prevStore[i];
    free(ps->rec);
    free(ps->vals);
    *ps = e->rs[i].cur;
    memset(&e->rs[i].cur, 0, sizeof(SnapStore));
    for (int k = 0; k < ps->nrec; k++) ps->rec[k].vals = ps->vals + (intptr_t)ps->rec[k].vals;
  }
  int n = 0;
  for (int i = 0; i < e->nrel; i++)
    if (e->prevStore[i].nrec) {
      e->curSets[n].rel = i + 1;
      e->curSets[n].name = ((AlgRel *)e->prog->cat.rels.v[i])->name;
      e->curSets[n].n = e->prevStore[i].nrec;
      e->curSets[n].rec = e->prevStore[i].rec;
      n++;
    }
  e->snapSeq++;
  tq_snapshot snap = {e->snapSeq, t, n, e->curSets};
  e->cur = snap;
  e->g.current = &e->cur;
  /* SNAPSHOT_END: consumers, derived producers */
  for (int i = 0; i < e->npm && !e->halted; i++) {
    EnPm *m = e->order[i];
    if (!(m->priv.sync & TQ_PM_SYNC_SNAPSHOT_END) || m->priv.disabled) continue;
    const tq_record_set *own = NULL;
    for (int k = 0; k < n; k++)
      if (m->priv.rel == e->curSets[k].rel) own = &e->curSets[k];
    enCallPm(e, m, TQ_PM_SNAPSHOT_END, own);
  }
  /* it becomes the previous snapshot */
  tq_record_set *tmp = e->prevSets;
  e->prevSets = e->curSets;
  e->curSets = tmp;
  e->prev = e->cur;
  e->prev.sets = e->prevSets;
  e->g.previous = &e->prev;
  e->g.current = NULL;
  e->snapDirty = 0;
}

/* ================================================================ delta relations */

static int numericKind(int k) { return k == TY_INT || k == TY_FLOAT; }

/* The hash of what matches a sample with the previous tick's: its key, or
** its non-numeric attributes (the flag entity among them). */
static uint64_t matchHash(const AlgRel *b, const int64_t *v) {
  uint64_t h = 0x51ed27;
  if (b->nkey) {
    for (int i = 0; i < b->nkey; i++) h = tqHash64(h ^ (uint64_t)v[b->key[i]]);
    h = tqHash64(h ^ (uint64_t)v[b->flagAttr]);
  } else {
    for (int i = 0; i < b->nattr; i++)
      if (!numericKind(b->attr[i].type.kind)) h = tqHash64(h ^ (uint64_t)v[i] ^ ((uint64_t)i << 56));
  }
  return h | 2;
}

static int sameMatch(const AlgRel *b, const int64_t *x, const int64_t *y) {
  if (b->nkey) {
    for (int i = 0; i < b->nkey; i++)
      if (x[b->key[i]] != y[b->key[i]]) return 0;
    return x[b->flagAttr] == y[b->flagAttr];
  }
  for (int i = 0; i < b->nattr; i++)
    if (!numericKind(b->attr[i].type.kind) && x[i] != y[i]) return 0;
  return 1;
}

typedef struct DeltaGather {
  const AlgRel *base;
  TqVec *out;
} DeltaGather;

static void gatherSample(void *ctx, const int64_t *vals) {
  DeltaGather *g = ctx;
  DeltaTup *d = tqMalloc(sizeof(DeltaTup) + sizeof(int64_t) * (size_t)(g->base->nattr ? g->base->nattr : 1));
  d->next = NULL;
  d->h = matchHash(g->base, vals);
  TQ_MEMCPY(d->vals, vals, sizeof(int64_t) * (size_t)g->base->nattr);
  tqVecPush(g->out, d);
}

static int cmpI64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Numeric attributes subtracted (current - previous), the others copied. */
static void subtract(const AlgRel *b, const int64_t *cur, const int64_t *prev, int64_t *out) {
  for (int i = 0; i < b->nattr; i++) {
    if (b->attr[i].type.kind == TY_INT) {
      out[i] = (int64_t)((uint64_t)cur[i] - (uint64_t)prev[i]);
    } else if (b->attr[i].type.kind == TY_FLOAT) {
      double x, y;
      memcpy(&x, &cur[i], sizeof x);
      memcpy(&y, &prev[i], sizeof y);
      x -= y;
      memcpy(&out[i], &x, sizeof x);
    } else {
      out[i] = cur[i];
    }
  }
}

/* At base tick t: for every delta relation a query uses, the samples of its
** sampled relation on each entity it is enabled on, matched with those of
** the previous tick; each match is a DELTA record delivered as an event. */
void enComputeDeltas(tq_engine *e, TqTime t) {
  for (int i = 0; i < e->nrel; i++) {
    RtSensor *s = &e->net->sensor[i];
    const AlgRel *d = s->rel, *b = d->deltaOf;
    if (!b || !s->used) continue;
    RelState *rs = &e->rs[i];
    TqVec cur = {0};
    TqMap cmap = {0};
    if (s->nEnabled) {
      int64_t *who = tqMalloc(sizeof(int64_t) * (size_t)s->nEnabled);
      int n = 0;
      for (uint32_t k = 0; k < s->count.cap && n < s->nEnabled; k++)
        if (s->count.slot[k].key > 1 && (intptr_t)s->count.slot[k].val > 0) who[n++] = (int64_t)(s->count.slot[k].key - 2);
      qsort(who, (size_t)n, sizeof(int64_t), cmpI64);
      DeltaGather dg = {b, &cur};
      for (int k = 0; k < n; k++) {
        AnswerCtx ac = {e, NULL, b, t, 0, gatherSample, &dg};
        enSampleRel(e, b, b->flagAttr, who[k], t, &ac);
      }
      free(who);
    }
    EnPm *p = e->producerOf[b->id - 1];
    int usePm = p && !p->priv.disabled && p->pm->delta; /* also in a replay, when the producer is loaded */
    int64_t out[TQ_MAX_ATTRS];
    for (int k = 0; k < cur.n; k++) {
      DeltaTup *c = cur.v[k];
      c->next = tqMapGet(&cmap, c->h);
      tqMapPut(&cmap, c->h, c);
      DeltaTup *prev = tqMapGet(&rs->dmap, c->h);
      while (prev && !sameMatch(b, prev->vals, c->vals)) prev = prev->next;
      if (!prev) continue;
      if (usePm) {
        /* the PM's function sees both samples at their ticks; out starts
        ** as the plain difference */
        tq_record rc = {b->id, TQ_REC_SAMPLE, t, 0, 0, 0, b->nattr, c->vals};
        tq_record rp = {b->id, TQ_REC_SAMPLE, rs->dprevT, 0, 0, 0, b->nattr, prev->vals};
        subtract(b, c->vals, prev->vals, out);
        p->calls++;
        if (p->multi) p->priv.rel = b->id;
        int st = p->pm->delta(&e->g, &p->priv, &rc, &rp, out);
        if (st == TQ_PM_ERROR || st == TQ_PM_FATAL) {
          p->priv.disabled = 1;
          if (st == TQ_PM_FATAL) e->fatal = e->halted = 1;
          continue;
        }
      } else {
        subtract(b, c->vals, prev->vals, out);
      }
      tq_record r = {d->id, TQ_REC_DELTA, t, 0, 0, 0, d->nattr, out};
      enDeliver(e, &r, NULL, 1); /* at a tick: the network advanced */
    }
    /* the current samples become the previous ones */
    for (int k = 0; k < rs->dprev.n; k++) free(rs->dprev.v[k]);
    tqVecFree(&rs->dprev);
    tqMapFree(&rs->dmap);
    rs->dprev = cur;
    rs->dmap = cmap;
    rs->dprevT = t;
  }
}

/* ================================================================ recording everything */

static void discardSample(void *ctx, const int64_t *vals) {}

/* A live recording of every sensor (tqmon record): at base tick t, every
** sampled relation is sampled on every entity that exists; the answers are
** recorded (answer() sends them to the consumers of every record). */
void enSampleEverything(tq_engine *e, TqTime t) {
  for (int i = 0; i < e->nrel; i++) {
    const AlgRel *r = e->prog->cat.rels.v[i];
    if (r->mode != ALG_MODE_SAMPLED || !e->producerOf[i] || r->flagAttr < 0) continue;
    const AlgEntity *ent = r->attr[r->flagAttr].type.ent;
    if (!ent) continue;
    const RelState *es = &e->rs[ent->rel->id - 1];
    for (int64_t v = 0; v < es->aliveCap; v++) {
      if (es->aliveN[v] <= 0) continue;
      AnswerCtx ac = {e, NULL, r, t, 0, discardSample, NULL};
      enSampleRel(e, r, r->flagAttr, v, t, &ac);
    }
  }
}
