/*
** op_alpha.c - the alpha operator: enables a sensor per entity as its
** argument's tuples come and go, and emits what the sensor produced while
** enabled (paper section 8.3; docs/design.md section 2).
**
** Arguments (ports): port 0 names the flag entities (performers for S:P,
** targets for S:T); for sampled alphas port 1 says when to sample and, for
** S:T, port 2 who performs the sampling.
**
** Enabling rules.  An interval input keeps the entity enabled for the
** interval (a disable-traced sensor is re-armed after each firing).  An
** event input at t arms the entity for firings after t: persistently
** (ARM_PERSIST, the exact form) or for one firing (ARM_ONCE, the consuming
** form of a disable-traced sensor).  Arming takes effect when time passes t,
** so a firing at the same instant as the enabling event is not delivered
** (TQuel: S precede end of W needs S before the end).  A complete interval
** input whose end lies in the future is disabled by a timer.
**
** Per entity the alpha counts its enable units; every unit is also counted
** at the sensor (rtSensorCount), whose total is the flag counter.
**
** Low mark.  A traced interval that began while this alpha was disabled may
** still come whole, with its true begin, when it ends.  The producer knows
** the open intervals whose begin reached no alpha (minPendingFrom); the
** alpha itself keeps those whose begin went to other alphas of its sensor
** but not to it (`missed`: their END comes to every alpha).  Its low mark
** is the earliest begin of both, or now; at the end of the run nothing can
** come any more and it is now.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

typedef struct EntState {
  int ival;    /* interval enablings */
  int persist; /* armed persistently by an event */
  int once;    /* one-shot armings (consuming D form) */
  int listed;  /* in the entities' map (a state in the dense array) */
} EntState;

/* The states of the entities: by value in an array for small entity values
** (symbol ids, rtDenseFits), else behind pointers.  The map lists every
** entity that has a state, in the order it got one (the order samples are
** asked in): its value is the state, or DENSE for one in the array.
** Growing the array moves the states it covers there. */
typedef struct Ents {
  EntState *dense;    /* states of entities 0..ndense-1 */
  uint32_t ndense;    /* entities the array covers */
  TqMap map;          /* entity -> EntState*, or DENSE (every listed entity) */
} Ents;
#define DENSE ((void *)1)

typedef struct Arm {
  TqTime t;     /* takes effect after t */
  int64_t ent;  /* entity */
  int delta;    /* +1 (arm) or -1 (timer: end of an interval) */
  int kind;     /* 0 = event arming, 1 = interval timer */
} Arm;

typedef struct Alpha {
  RtOp op;
  RtSensor *sens;
  const AlgRel *rel;
  int isD;            /* disable-traced sensor */
  int sampled;        /* S:P or S:T */
  int flagAttr;       /* attribute holding the flag entity */
  int perfAttr;       /* performer attribute (S:T) */
  int arm;            /* ARM_PERSIST / ARM_ONCE */
  int inEvent;        /* port 0 carries events */
  Ents ents;          /* flag entity -> EntState */
  Ents perf;          /* S:T: performer -> EntState (port 2) */
  TqMap held;         /* ivid -> RtTup* intervals delivered by BEGIN */
  TqMap missed;       /* ivid -> missKey(begin): open intervals whose BEGIN went to other alphas only */
  struct Miss {
    TqTime from;      /* begin */
    uint64_t ivid;    /* still missed when in `missed` with this begin */
  } *miss;            /* min-heap by begin, entries removed lazily */
  int nmiss, cmiss;
  Arm *arms;          /* pending armings and timers */
  int narm, carm;
  TqTime sampleT;     /* time of the sample being answered */
  RtOp *out;          /* emits as this op: itself, or the last op fused into it */
  RtOp **fuse;        /* sigmas and pis fused into it, bottom up (rtAlphaFuse) */
  const RtExpr **pred; /* fuse[k]'s predicate when a sigma, else NULL */
  int nfuse;
  int outVal;         /* values of the tuples it makes (out's) */
  int64_t *scratch;   /* three rows of the widest fused output (a pi's below another; an event row) */
  int scratchW;
} Alpha;

/* held's value for an interval the fused selection dropped at its begin:
** its END ends nothing (as the sigma settled it before). */
static char droppedMark;
#define DROPPED ((void *)&droppedMark)

/* The state of e, or NULL when it has none and !create.  The pointer is
** valid until the next entGet with create. */
static EntState *entGet(Ents *m, int64_t e, int create) {
  EntState *s;
  if (TQ_LIKELY((uint64_t)e < m->ndense)) {
    s = &m->dense[e];
  } else if (create && rtDenseFits(e, (int64_t)m->map.n)) {
    uint32_t old = rtDenseGrow((void **)&m->dense, &m->ndense, sizeof(EntState), e);
    for (uint32_t i = 0; i < m->map.cap; i++) {
      uint64_t k = m->map.slot[i].key - 2;
      if (m->map.slot[i].key <= 1 || k < old || k >= m->ndense) continue;
      EntState *x = m->map.slot[i].val;
      m->dense[k] = *x;
      m->dense[k].listed = 1;
      free(x);
      m->map.slot[i].val = DENSE; /* same key, same place in the map */
    }
    s = &m->dense[e];
  } else {
    s = tqMapGet(&m->map, (uint64_t)e + 2);
    if (!s && create) {
      s = tqCalloc(1, sizeof *s);
      s->listed = 1;
      tqMapPut(&m->map, (uint64_t)e + 2, s);
    }
    return s;
  }
  if (!s->listed) {
    if (!create) return NULL;
    s->listed = 1;
    tqMapPut(&m->map, (uint64_t)e + 2, DENSE);
  }
  return s;
}

static int entOn(const EntState *s) { return s && (s->ival > 0 || s->persist > 0 || s->once > 0); }

int rtAlphaEnabled(RtOp *op, int64_t e) { return entOn(entGet(&((Alpha *)op)->ents, e, 0)); }

/* Changes one enable unit of entity e (on the alpha and at the sensor). */
static void unit(Alpha *a, Ents *m, int64_t e, int which, int delta) {
  EntState *s = entGet(m, e, 1);
  if (which == 0) s->ival += delta;
  else if (which == 1) s->persist += delta;
  else s->once += delta;
  if (m == &a->ents) rtSensorCount(a->op.net, a->sens, e, delta);
}

/* Tells the network when an arming takes effect: the flush after its
** event's instant, or a timer's at its time (see alphaFlush). */
static void armDue(Alpha *a, const Arm *r) {
  TqTime due = r->kind == 0 ? r->t + 1 : r->t;
  if (due < a->op.net->armDue) a->op.net->armDue = due;
}

static void armPush(Alpha *a, TqTime t, int64_t e, int delta, int kind) {
  if (a->narm == a->carm) {
    a->carm = a->carm ? a->carm * 2 : 16;
    a->arms = tqRealloc(a->arms, sizeof(Arm) * (size_t)a->carm);
  }
  a->arms[a->narm++] = (Arm){t, e, delta, kind};
  armDue(a, &a->arms[a->narm - 1]);
}

/* An input tuple on an enabling port (0, or 2 for S:T performers). */
static void enableInput(Alpha *a, int port, int kind, RtTup *t) {
  Ents *m = port == 2 ? &a->perf : &a->ents;
  int64_t e = RT_VAL(t)[0];
  TqTime now = a->op.net->now;
  int isEvent = a->op.kid[port]->node->sch.tv[0].isEvent;
  if (kind == RT_BEGIN) {
    unit(a, m, e, 0, +1);
  } else if (kind == RT_END) {
    if (t->nopen == 0) unit(a, m, e, 0, -1);
  } else if (isEvent) {
    /* event: arm for firings after its instant */
    armPush(a, RT_FROM(t, 0), e, +1, 0);
    (void)m;
  } else {
    TqTime to = RT_TO(t, 0);
    if (to > now && RT_FROM(t, 0) <= now) {
      unit(a, m, e, 0, +1);
      if (to < TQ_FOREVER) armPush(a, to, e, -1, port == 2 ? 3 : 1);
    }
  }
}

/* D sensor fired on entity e for this alpha: consume a one-shot arming when
** nothing else keeps the entity enabled. */
static void consume(Alpha *a, int64_t e) {
  if (!a->isD) return;
  EntState *s = entGet(&a->ents, e, 0);
  if (s && s->ival == 0 && s->persist == 0 && s->once > 0) unit(a, &a->ents, e, 2, -1);
}

/* The fused selections and projections applied to vals, all but a last
** projection, which is left in *last (NULL: none) to write where its
** caller wants the values: what that projection reads, or the values
** themselves; NULL when a selection drops the tuple. */
static const int64_t *mkIn(Alpha *a, const int64_t *vals, const RtOp **last) {
  const int64_t *v = vals;
  int npi = 0;
  *last = NULL;
  for (int k = 0; k < a->nfuse; k++) {
    const RtOp *f = a->fuse[k];
    if (a->pred[k]) {
      if (!rtEvalBoolQ(a->pred[k], v)) return NULL;
      continue;
    }
    if (k == a->nfuse - 1) { /* the last pi writes into the caller's row */
      *last = f;
      break;
    }
    int64_t *o = a->scratch + (npi++ & 1) * a->scratchW; /* (not the half v is in) */
    rtPiMap(f, v, o);
    v = o;
  }
  return v;
}

/* The tuple of the sensor's values vals over [from, to), through the
** sigmas and pis fused into the alpha: NULL when a selection drops it. */
static RtTup *mkTup(Alpha *a, TqTime from, TqTime to, const int64_t *vals) {
  const RtOp *last;
  const int64_t *v = mkIn(a, vals, &last);
  if (!v) return NULL;
  RtTup *t = rtTupAlloc(1, a->outVal);
  RT_FROM(t, 0) = from;
  RT_TO(t, 0) = to;
  t->nopen = to == TQ_OPEN;
  if (last) rtPiMap(last, v, RT_VAL(t));
  else rtWordsCopy(RT_VAL(t), v, a->outVal);
  return t;
}

void rtAlphaFuse(RtOp *alpha, RtOp *op) {
  Alpha *a = (Alpha *)alpha;
  a->fuse = tqRealloc(a->fuse, sizeof(RtOp *) * (size_t)(a->nfuse + 1));
  a->pred = tqRealloc(a->pred, sizeof(RtExpr *) * (size_t)(a->nfuse + 1));
  a->pred[a->nfuse] = op->node->kind == ALG_SIGMA ? rtSigmaPred(op) : NULL;
  a->fuse[a->nfuse++] = op;
  a->out = op;
  a->outVal = op->nval;
  if (op->node->kind == ALG_PI && op->nval > a->scratchW) {
    a->scratchW = op->nval;
    free(a->scratch);
    a->scratch = tqMalloc(sizeof(int64_t) * 3 * (size_t)a->scratchW); /* (the third: an event's row, rtAlphaEvent) */
  }
}

void rtAlphaEvent(RtOp *op, TqTime t, int64_t flagEnt, const int64_t *vals) {
  Alpha *a = (Alpha *)op;
  if (TQ_LIKELY((uint64_t)flagEnt < a->ents.ndense)) { /* entGet's dense case, inline */
    const EntState *s = &a->ents.dense[flagEnt];
    if (!s->listed || !entOn(s)) return;
  } else if (!rtAlphaEnabled(op, flagEnt)) {
    return;
  }
  consume(a, flagEnt);
  RtOp *p = a->out->parent;
  if (p && rtSinkTakesEvents(p)) {
    /* straight into an event result's sink: its row is made of the
    ** values, so no tuple is made (the sink keeps none of an event's) */
    const RtOp *last;
    const int64_t *v = mkIn(a, vals, &last);
    if (!v) return;
    if (last) { /* (the scratch's third row: scratchW >= outVal) */
      int64_t *o = a->scratch + 2 * a->scratchW;
      rtPiMap(last, v, o);
      v = o;
    }
    rtEmitEvent(a->out, t, v);
    return;
  }
  RtTup *tp = mkTup(a, t, t + 1, vals);
  if (!tp) return;
  rtEmit(a->out, RT_ADD, tp);
  rtTupDrop(tp);
}

void rtAlphaHint(RtOp *op, int64_t flagEnt, const int64_t *vals, int stage) {
  Alpha *a = (Alpha *)op;
  if (a->nfuse || (uint64_t)flagEnt >= a->ents.ndense) return; /* (values of another shape; a map's entity) */
  const EntState *s = &a->ents.dense[flagEnt];
  RtOp *p = a->out->parent;
  if (!p || !p->vt->hint) return;
  if (stage == 0) {
    __builtin_prefetch(s);
    p->vt->hint(p, a->out->port, vals, 0);
  } else if (s->listed && entOn(s)) {
    p->vt->hint(p, a->out->port, vals, 1);
  }
}

int rtAlphaBegin(RtOp *op, uint64_t ivid, TqTime from, int64_t flagEnt, const int64_t *vals) {
  Alpha *a = (Alpha *)op;
  if (!rtAlphaEnabled(op, flagEnt)) return 0;
  consume(a, flagEnt);
  RtTup *tp = mkTup(a, from, TQ_OPEN, vals);
  tqMapPut(&a->held, ivid + 2, tp ? (void *)tp : DROPPED);
  rtStoredAdd(op, 1);
  if (tp) rtEmit(a->out, RT_BEGIN, tp);
  return 1;
}

/* ---------------------------------------------------------------- missed intervals */

/* A begin as a map value (never NULL: no time is INT64_MIN). */
static void *missKey(TqTime from) { return (void *)(uintptr_t)((uint64_t)from ^ ((uint64_t)1 << 63)); }
/* Is heap entry m still a missed interval (not ended since)? */
static int missLive(const Alpha *a, const struct Miss *m) {
  return tqMapGet(&a->missed, m->ivid + 2) == missKey(m->from);
}

static void missUp(Alpha *a, int i) {
  while (i > 0 && a->miss[i].from < a->miss[(i - 1) / 2].from) {
    struct Miss x = a->miss[i];
    a->miss[i] = a->miss[(i - 1) / 2];
    a->miss[(i - 1) / 2] = x;
    i = (i - 1) / 2;
  }
}

static void missPop(Alpha *a) {
  a->miss[0] = a->miss[--a->nmiss];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < a->nmiss && a->miss[l].from < a->miss[m].from) m = l;
    if (r < a->nmiss && a->miss[r].from < a->miss[m].from) m = r;
    if (m == i) break;
    struct Miss x = a->miss[i];
    a->miss[i] = a->miss[m];
    a->miss[m] = x;
    i = m;
  }
}

void rtAlphaMissed(RtOp *op, uint64_t ivid, TqTime from) {
  Alpha *a = (Alpha *)op;
  if (tqMapGet(&a->held, ivid + 2)) return; /* it took this one */
  if (a->nmiss > 2 * (int)a->missed.n + 64) {
    /* the heap drops ended entries only from its top: keep it bounded by
    ** the live ones (an old interval open for long holds the top) */
    int k = 0;
    for (int i = 0; i < a->nmiss; i++)
      if (missLive(a, &a->miss[i])) a->miss[k++] = a->miss[i];
    a->nmiss = 0;
    for (int i = 0; i < k; i++) missUp(a, a->nmiss++);
  }
  tqMapPut(&a->missed, ivid + 2, missKey(from));
  if (a->nmiss == a->cmiss) {
    a->cmiss = a->cmiss ? 2 * a->cmiss : 16;
    a->miss = tqRealloc(a->miss, sizeof(struct Miss) * (size_t)a->cmiss);
  }
  a->miss[a->nmiss] = (struct Miss){from, ivid};
  missUp(a, a->nmiss++);
  rtStoredAdd(op, 1);
}

/* Earliest begin of a missed interval still open (drops ended ones on top). */
static TqTime missedLow(Alpha *a) {
  while (a->nmiss && !missLive(a, &a->miss[0])) missPop(a);
  return a->nmiss ? a->miss[0].from : TQ_FOREVER;
}

void rtAlphaEnd(RtOp *op, uint64_t ivid, TqTime from, TqTime to, int64_t flagEnt, const int64_t *vals) {
  Alpha *a = (Alpha *)op;
  if (tqMapDel(&a->missed, ivid + 2)) rtStoredAdd(op, -1);
  RtTup *tp = tqMapDel(&a->held, ivid + 2);
  if (tp == DROPPED) {
    rtStoredAdd(op, -1);
    return;
  }
  if (tp) {
    RT_TO(tp, 0) = to;
    tp->nopen = 0;
    rtStoredAdd(op, -1);
    rtEmit(a->out, RT_END, tp);
    rtTupUnref(tp);
    return;
  }
  if (!rtAlphaEnabled(op, flagEnt)) return;
  /* enabled only after it began: delivered whole, with its true begin */
  consume(a, flagEnt);
  tp = mkTup(a, from, to, vals);
  if (!tp) return;
  rtEmit(a->out, RT_ADD, tp);
  rtTupUnref(tp);
}

/* ---------------------------------------------------------------- sampling */
typedef struct SampleCookie {
  Alpha *a;
  TqTime t;
} SampleCookie;

void rtSampleAnswer(void *cookie, const int64_t *vals) {
  SampleCookie *c = cookie;
  Alpha *a = c->a;
  if (a->op.node->variant == AV_ST) {
    /* only the targets asked for */
    if (!entOn(entGet(&a->ents, vals[a->flagAttr], 0))) return;
  }
  a->sens->delivered++;
  RtTup *tp = mkTup(a, c->t, c->t + 1, vals);
  if (!tp) return;
  rtEmit(a->out, RT_ADD, tp);
  rtTupUnref(tp);
}

static void sampleAll(Alpha *a, TqTime t) {
  RtProducer *p = a->sens->prod;
  if (!p || !p->sample) return;
  Ents *who = a->op.node->variant == AV_ST ? &a->perf : &a->ents;
  int attr = a->op.node->variant == AV_ST ? a->perfAttr : a->flagAttr;
  /* collect first: answers may not change the states, but keep order stable */
  int n = 0;
  int64_t *ents = tqMalloc(sizeof(int64_t) * (who->map.n + 1));
  for (uint32_t i = 0; i < who->map.cap; i++) {
    if (who->map.slot[i].key <= 1) continue;
    int64_t e = (int64_t)(who->map.slot[i].key - 2);
    if (entOn(who->map.slot[i].val == DENSE ? &who->dense[e] : who->map.slot[i].val)) ents[n++] = e;
  }
  for (int i = 0; i < n; i++) {
    SampleCookie c = {a, t};
    a->sens->samples++;
    p->sample(p->self, a->sens, attr, ents[i], t, &c);
  }
  free(ents);
}

/* ---------------------------------------------------------------- methods */

static int alphaPush(RtOp *op, int port, int kind, RtTup *t) {
  Alpha *a = (Alpha *)op;
  if (a->sampled && port == 1) {
    if (kind != RT_END) sampleAll(a, op->net->now);
    return 0;
  }
  enableInput(a, port, kind, t);
  return 0;
}

static int armCmp(const void *x, const void *y) {
  const Arm *a = x, *b = y;
  return a->t < b->t ? -1 : a->t > b->t;
}

static void alphaFlush(RtOp *op, TqTime now) {
  Alpha *a = (Alpha *)op;
  if (a->narm) {
    qsort(a->arms, (size_t)a->narm, sizeof(Arm), armCmp);
    int k = 0;
    for (int i = 0; i < a->narm; i++) {
      Arm *r = &a->arms[i];
      int due = r->kind == 0 ? r->t < now : r->t <= now;
      if (!due) {
        armDue(a, r);
        a->arms[k++] = *r;
        continue;
      }
      if (r->kind == 0) {
        EntState *s = entGet(&a->ents, r->ent, 1);
        if (a->isD && a->arm == ARM_ONCE) unit(a, &a->ents, r->ent, 2, +1);
        else if (s->persist == 0) unit(a, &a->ents, r->ent, 1, +1);
      } else {
        unit(a, r->kind == 3 ? &a->perf : &a->ents, r->ent, 0, -1);
      }
    }
    a->narm = k;
  }
  TqTime low = now;
  /* an interval that began while disabled may still come whole, with its
  ** true begin; at the end of the run nothing comes any more */
  if (!a->rel->isEvent && !a->sampled && !op->net->ending) {
    TqTime m = missedLow(a);
    if (m < low) low = m;
    if (a->sens->prod && a->sens->prod->minPendingFrom) {
      m = a->sens->prod->minPendingFrom(a->sens->prod->self, a->sens);
      if (m < low) low = m;
    }
  }
  op->low = low;
  /* held intervals end when their END comes, at now or later; at the end
  ** of the run, never (at forever: they stay open) */
  op->endLow = op->net->ending ? TQ_FOREVER : now;
}

static void alphaFinish(RtOp *op, TqTime now) {}

void rtAlphaRelease(RtOp *op) {
  Alpha *a = (Alpha *)op;
  for (uint32_t i = 0; i < a->ents.map.cap; i++) {
    if (a->ents.map.slot[i].key <= 1) continue;
    int64_t e = (int64_t)(a->ents.map.slot[i].key - 2);
    EntState *s = a->ents.map.slot[i].val == DENSE ? &a->ents.dense[e] : a->ents.map.slot[i].val;
    int n = s->ival + s->persist + s->once;
    s->ival = s->persist = s->once = 0;
    if (n > 0) rtSensorCount(op->net, a->sens, e, -n);
  }
  a->narm = 0; /* pending armings and timers: never */
}

void rtAlphaMove(RtOp *op, RtNet *from, RtNet *to) {
  Alpha *a = (Alpha *)op;
  RtSensor *fs = a->sens, *ts = &to->sensor[a->rel->id - 1];
  for (uint32_t i = 0; i < a->ents.map.cap; i++) {
    if (a->ents.map.slot[i].key <= 1) continue;
    int64_t e = (int64_t)(a->ents.map.slot[i].key - 2);
    const EntState *s = a->ents.map.slot[i].val == DENSE ? &a->ents.dense[e] : a->ents.map.slot[i].val;
    int n = s->ival + s->persist + s->once;
    if (n <= 0) continue;
    rtSensorCount(from, fs, e, -n);
    rtSensorCount(to, ts, e, +n);
  }
  a->sens = ts;
  ts->used = 1;
  tqVecPush(&ts->alphas, a);
  for (int i = 0; i < a->narm; i++) armDue(a, &a->arms[i]);
}

static void freeStates(Ents *m) {
  for (uint32_t i = 0; i < m->map.cap; i++)
    if (m->map.slot[i].key > 1 && m->map.slot[i].val != DENSE) free(m->map.slot[i].val);
  tqMapFree(&m->map);
  free(m->dense);
}

static void alphaFree(RtOp *op) {
  Alpha *a = (Alpha *)op;
  freeStates(&a->ents);
  freeStates(&a->perf);
  for (uint32_t i = 0; i < a->held.cap; i++)
    if (a->held.slot[i].key > 1 && a->held.slot[i].val != DROPPED) rtTupUnref(a->held.slot[i].val);
  tqMapFree(&a->held);
  free(a->fuse);
  free(a->pred);
  free(a->scratch);
  tqMapFree(&a->missed);
  free(a->miss);
  free(a->arms);
}

static const RtOpVt alphaVt = {"alpha", alphaPush, alphaFlush, alphaFinish, alphaFree, NULL};

RtOp *rtOpAlpha(RtNet *net, const AlgNode *n) {
  Alpha *a = (Alpha *)rtOpNew(net, &alphaVt, sizeof(Alpha), n);
  a->rel = n->rel;
  a->sens = &net->sensor[n->rel->id - 1];
  a->sens->used = 1;
  tqVecPush(&a->sens->alphas, a);
  a->isD = n->rel->mode == ALG_MODE_DISABLE;
  a->sampled = n->rel->mode == ALG_MODE_SAMPLED;
  a->flagAttr = n->rel->flagAttr;
  a->perfAttr = n->rel->performerAttr;
  a->arm = n->arm;
  a->out = &a->op;
  a->outVal = a->op.nval;
  return &a->op;
}
