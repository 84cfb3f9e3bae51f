/*
** engine_deliver.c - delivery and enabling: which records reach the
** queries.  A record is delivered if its sensor is enabled on the flag
** entity and that entity exists: an interval whose begin was delivered has
** its end delivered; one that began while disabled is delivered whole at
** its end if the sensor is enabled then (and the entity existed at its
** begin or exists then).  Here too: the open intervals the engine keeps
** for that (and the begin-order queue whose front holds the relations' low
** marks back), the whole intervals an extractor announced, the answers to
** the network's sample requests, filters, and the records that go to the
** consumers of records.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engineInt.h"

/* ================================================================ whole intervals */

/* May the alphas of a whole interval's relation have gone past its begin
** when it comes?  Moving to its instant moves their low mark to that
** instant unless a pending begin (an announced whole interval, or an
** interval still open that began while disabled) holds it back; such
** begins only rise, so one at or below from now held the mark there all
** along.  A record that cannot reach an alpha (its sensor is disabled on
** its entity, and the flush of its instant cannot enable it) is no
** danger.  Cautious: an alpha that missed a begin other alphas got holds
** its own mark back too (op_alpha.c, missedLow), which the engine does not
** see. */
int enWholeTooLate(tq_engine *e, const tq_record *r) {
  RtNet *net = e->net;
  if (!net || !e->rs[r->rel - 1].tracked || r->from >= r->to) return 0;
  RtSensor *s = &net->sensor[r->rel - 1];
  if (!net->flushEnables && net->armDue > r->to && !rtSensorEnabled(s, r->vals[s->rel->flagAttr])) return 0;
  return r->from < enMinPending(e, s);
}

/* ================================================================ sample requests */

static void answer(AnswerCtx *a, const int64_t *vals) {
  if (a->sink) a->sink(a->sinkCtx, vals);
  else rtSampleAnswer(a->cookie, vals);
  if (a->record && !a->sink && enHistOn(a->e, a->rel->id)) enHistSample(a->e, a->rel->id, a->t, vals, a->rel->nattr);
  if (a->record) {
    tq_record r = {0};
    r.rel = a->rel->id;
    r.kind = TQ_REC_SAMPLE;
    r.t = a->t;
    r.nvals = a->rel->nattr;
    r.vals = vals;
    enToConsumers(a->e, &r, 0);
    if (!a->e->extractor) enToConsumers(a->e, &r, 1); /* a live sample is a record of its own */
    enSnapAdd(a->e, &r);
  }
}

int enSampleAnswer(tq_pm_global *g, void *cookie, const int64_t *vals) {
  answer(cookie, vals);
  return 0;
}

/* The tuples of rel whose attribute attr is who, at t, each to ac: from the
** recorded state in an extraction, from the producer in a collection. */
void enSampleRel(tq_engine *e, const AlgRel *rel, int attr, int64_t who, TqTime t, AnswerCtx *ac0) {
  AnswerCtx ac = *ac0;
  uint64_t key = tqHash64(((uint64_t)rel->id << 48) ^ (uint64_t)who ^ ((uint64_t)attr << 40)) | 2;
  if (!tqMapGet(&e->sampled, key)) {
    tqMapPut(&e->sampled, key, e);
    ac.record = 1;
    /* a request kept for a query added later: asked, with what it got,
    ** nothing when its entity does not exist (engine_hist.c) */
    if (!ac.sink && enHistOn(e, rel->id)) enHistAsk(e, rel->id, attr, who, t);
  }
  if (!alive(e, rel, attr, who)) return; /* a sensor lives in its entity */
  EnPm *p = e->producerOf[rel->id - 1];
  if (e->extractor || !p) {
    /* from the recorded state: open intervals valid at t, and samples taken
    ** at t (another sensor of a relation reads the relation's) */
    RelState *r = &e->rs[(rel->sensorOf ? rel->sensorOf : rel)->id - 1];
    for (int i = 0; i < r->nopen; i++) {
      OpenIv *iv = r->open[i];
      if (iv->vals[attr] != who || iv->from > t) continue;
      if (rel->flagAttr != attr && !alive(e, rel, rel->flagAttr, iv->vals[rel->flagAttr])) continue;
      answer(&ac, iv->vals);
    }
    for (int i = 0; i < e->ninst; i++) {
      const tq_record *rr = &e->inst[i]->r;
      if (rr->kind != TQ_REC_SAMPLE && !(rr->kind == TQ_REC_EVENT && rel->isEvent)) continue;
      if (rr->rel != (rel->sensorOf ? rel->sensorOf : rel)->id || rr->t != t || rr->vals[attr] != who) continue;
      answer(&ac, rr->vals);
    }
    return;
  }
  if (p->priv.disabled || !p->pm->sample) return;
  p->calls++;
  if (p->multi) p->priv.rel = rel->id;
  enPmStatus(e, p, p->pm->sample(&e->g, &p->priv, attr, who, t, &ac));
}

/* The network asks for the tuples of s whose attribute attr is who, at t. */
void enSample(void *self, RtSensor *s, int attr, int64_t who, TqTime t, void *cookie) {
  tq_engine *e = self;
  AnswerCtx ac = {e, cookie, s->rel, t, 0, NULL, NULL};
  enSampleRel(e, s->rel, attr, who, t, &ac);
}

/* ================================================================ the begin-order queue, announced begins */

/* Drops the closed and the delivered intervals from the front of the
** begin-order queue (a closed one is freed once the queue lets it go). */
void enFifoTrim(RelState *r) {
  while (r->fn > 0) {
    OpenIv *iv = r->fifo[r->fhead];
    if (iv->pos >= 0 && !(iv->emitted & 1)) return;
    r->fhead = (r->fhead + 1) % r->fcap;
    r->fn--;
    if (iv->pos < 0) {
      iv->nextFree = r->freeIv;
      r->freeIv = iv;
    } else {
      iv->emitted |= 2; /* no longer in the queue */
    }
  }
}

/* Min-heaps of times. */
static void heapPush(TqTime **h, int *n, int *cap, TqTime v) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    *h = tqRealloc(*h, sizeof(TqTime) * (size_t)*cap);
  }
  int i = (*n)++;
  while (i > 0 && (*h)[(i - 1) / 2] > v) {
    (*h)[i] = (*h)[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  (*h)[i] = v;
}

static void heapPop(TqTime *h, int *n) {
  TqTime v = h[--*n];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = v;
}

/* Times as map keys (above 1: times lie above the beginning). */
static uint64_t annKey(TqTime t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

/* An extractor that reads ahead announces each whole interval (reported
** only at its end) at the start: its begin holds the relation's low mark
** back until it comes, like a begin made while the sensor was disabled. */
static void announceWhole(tq_engine *e, int rel, TqTime from) {
  if (!e->net || rel < 1 || rel > e->nrel || !e->rs[rel - 1].tracked) return;
  RelState *r = &e->rs[rel - 1];
  e->announced = 1;
  heapPush(&r->ann, &r->nann, &r->cann, from);
  uint64_t k = annKey(from);
  tqMapPut(&r->annLeft, k, (void *)((intptr_t)tqMapGet(&r->annLeft, k) + 1));
}

/* g->announce_whole (version 3): announceWhole for any extractor, at
** START only (before its first record), with a time a record can have. */
int enAnnounce(tq_pm_global *g, int rel, tq_time from) {
  tq_engine *e = enOf(g);
  const AlgRel *r = relOf(e, rel);
  if (!e->extractor || e->packets || e->haveInstant || !r || from <= TQ_BEGINNING || from >= TQ_FOREVER) {
    enLog(g, NULL, TQ_LOG_WARNING,
         "announce_whole ignored: only an extraction, before its first record, for a relation of the program, "
         "with beginning < from < forever");
    return -1;
  }
  announceWhole(e, rel, from);
  if (r->altSensor && r->altSensor->mode == ALG_MODE_TRACED) announceWhole(e, r->altSensor->id, from); /* its copies (enProduce) */
  return 0;
}

/* A whole interval came: if announced, its begin no longer holds the mark
** (enMinPending drops it).  One that was not announced changes nothing. */
void enAnnCame(RelState *r, TqTime from) {
  uint64_t k = annKey(from);
  intptr_t n = (intptr_t)tqMapGet(&r->annLeft, k);
  if (n <= 0) return;
  if (n > 1) tqMapPut(&r->annLeft, k, (void *)(n - 1));
  else tqMapDel(&r->annLeft, k);
  heapPush(&r->annDone, &r->ndone, &r->cdone, from);
}

/* Earliest begin of an interval of s that may still be delivered (began
** while disabled, still open): the front of the relation's begin-order
** queue, or an announced whole interval still to come. */
TqTime enMinPending(void *self, RtSensor *s) {
  tq_engine *e = self;
  RelState *r = &e->rs[s->rel->id - 1];
  if (!r->tracked) return TQ_FOREVER;
  enFifoTrim(r);
  TqTime m = r->fn ? r->fifo[r->fhead]->from : TQ_FOREVER;
  while (r->nann && r->ndone && r->ann[0] == r->annDone[0]) { /* came: no longer pending */
    heapPop(r->ann, &r->nann);
    heapPop(r->annDone, &r->ndone);
  }
  if (r->nann && r->ann[0] < m) m = r->ann[0];
  return m;
}

/* ================================================================ open intervals */

static void fifoPush(RelState *r, OpenIv *iv) {
  if (r->fn == r->fcap) {
    int nc = r->fcap ? 2 * r->fcap : 64;
    OpenIv **nf = tqMalloc(sizeof(OpenIv *) * (size_t)nc);
    for (int i = 0; i < r->fn; i++) nf[i] = r->fifo[(r->fhead + i) % r->fcap];
    free(r->fifo);
    r->fifo = nf;
    r->fhead = 0;
    r->fcap = nc;
  }
  r->fifo[(r->fhead + r->fn) % r->fcap] = iv;
  r->fn++;
}

OpenIv *enOpenBegin(tq_engine *e, TqMap *m, const tq_record *r) {
  RelState *rs = &e->rs[r->rel - 1];
  OpenIv *iv = rs->freeIv;
  if (iv) rs->freeIv = iv->nextFree;
  else iv = tqMalloc(sizeof(OpenIv) + sizeof(int64_t) * (size_t)(r->nvals ? r->nvals : 1));
  iv->rel = r->rel;
  iv->id = r->id;
  iv->from = r->from;
  iv->emitted = 0;
  TQ_MEMCPY(iv->vals, r->vals, sizeof(int64_t) * (size_t)r->nvals);
  if (rs->nopen == rs->copen) {
    rs->copen = rs->copen ? 2 * rs->copen : 16;
    rs->open = tqRealloc(rs->open, sizeof(OpenIv *) * (size_t)rs->copen);
  }
  iv->pos = rs->nopen;
  rs->open[rs->nopen++] = iv;
  if (rs->tracked) fifoPush(rs, iv);
  else iv->emitted |= 2; /* never queued */
  tqMapPut(m, ivKey(r->rel, r->id), iv);
  return iv;
}

/* Removes the interval from the open set; returns it (still allocated: the
** caller frees it when the queue no longer holds it). */
OpenIv *enOpenEnd(tq_engine *e, TqMap *m, const tq_record *r) {
  OpenIv *iv = tqMapDel(m, ivKey(r->rel, r->id));
  if (!iv) return NULL;
  RelState *rs = &e->rs[r->rel - 1];
  OpenIv *last = rs->open[--rs->nopen];
  rs->open[iv->pos] = last;
  last->pos = iv->pos;
  iv->pos = -1;
  return iv;
}

void enReleaseIv(RelState *rs, OpenIv *iv) {
  /* the begin-order queue still holds it unless it was dropped from it */
  if (iv->emitted & 2) {
    iv->nextFree = rs->freeIv;
    rs->freeIv = iv;
  }
}

/* ================================================================ delivery */

/* A record goes to the CONSUMERs of records: all, those that want every
** record (TQ_PM_SYNC_ALL_RECORDS), or the others, what the run collected. */
void enToConsumers(tq_engine *e, const tq_record *r, int all) {
  if (!(all ? e->allRecords : e->collectors)) return;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!(m->priv.caps & TQ_PM_CONSUMER) || m->priv.disabled || !m->pm->record) continue;
    if (!(m->priv.sync & TQ_PM_SYNC_ALL_RECORDS) != !all) continue;
    m->calls++;
    enPmStatus(e, m, m->pm->record(&e->g, &m->priv, r));
  }
}

static int filtered(tq_engine *e, const tq_record *r) {
  if (!e->filters) return 0;
  EnPm *p = e->producerOf[r->rel - 1];
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!(m->priv.caps & TQ_PM_FILTER) || m->priv.disabled || !m->pm->filter) continue;
    int dep = 0;
    for (int k = 0; p && k < m->priv.ndepends; k++)
      if (!strcasecmp(m->priv.depends[k], p->pm->name)) dep = 1;
    if (p && !dep) continue;
    m->calls++;
    if (!m->pm->filter(&e->g, &m->priv, r)) return 1;
  }
  return 0;
}

/* Delivers record r to the alphas that enabled its sensor.  iv is the
** engine's open interval of a BEGIN (NULL when not tracked) or the one an
** END closed.  When the instant is not active (nothing can reach the
** network) only the engine's bookkeeping is done. */
void enDeliver(tq_engine *e, const tq_record *r, OpenIv *iv, int active) {
  RtNet *net = e->net;
  RtSensor *s = &net->sensor[r->rel - 1];
  const AlgRel *rel = s->rel;
  if (rel->altSensor && rel->altSensor->mode == ALG_MODE_SAMPLED && r->kind == TQ_REC_BEGIN) {
    /* SENSOR's condition: a tuple lies within its flag entity's lifetime
    ** for the sampled sensor that answers it */
    RtSensor *m = &net->sensor[rel->altSensor->id - 1];
    int mf = rel->altSensor->flagAttr;
    if (m->used && !alive(e, rel, mf, r->vals[mf])) m->outside++;
  }
  if (rel->entity || rel->mode == ALG_MODE_SAMPLED || !s->used) return;
  int f = rel->flagAttr;
  if (!active) {
    /* a begin while its flag entity exists: remembered for its end */
    if (r->kind == TQ_REC_BEGIN && iv && alive(e, rel, f, r->vals[f])) iv->emitted |= 4;
    return;
  }
  /* the sensor filter (SF): a record no alpha's selection keeps, which a
  ** producer that cannot filter (a recording) gave anyway; an END whose
  ** begin was delivered is always delivered */
  int pass = !s->filter || !enSensorFiltering(e) || rtSensorPass(s, r->vals);
  if (r->kind == TQ_REC_EVENT || r->kind == TQ_REC_DELTA) {
    if (!pass && rtSensorEnabled(s, r->vals[f])) s->filtered++;
    if (pass && rtSensorEnabled(s, r->vals[f]) && alive(e, rel, f, r->vals[f]) && !filtered(e, r)) {
      if (enHistOn(e, r->rel)) enHistRecord(e, r, r->t);
      rtDeliverEvent(net, s, r->t, r->vals);
      /* (deltas are computed again from the samples; a relation a replay
      ** copies from, and its copies, were collected whole: processInstant) */
      if (!rel->deltaOf && !enCopiedFrom(e, rel) && !enACopy(e, rel)) enToConsumers(e, r, 0);
      enSnapAdd(e, r);
    }
    return;
  }
  if (r->kind == TQ_REC_BEGIN) {
    int live = alive(e, rel, f, r->vals[f]);
    if (iv && live) iv->emitted |= 4;
    if (!pass && rtSensorEnabled(s, r->vals[f])) s->filtered++;
    if (iv && pass && rtSensorEnabled(s, r->vals[f]) && live && !filtered(e, r)) {
      iv->emitted |= 1;
      if (enHistOn(e, r->rel)) enHistRecord(e, r, r->from);
      rtDeliverBegin(net, s, r->id, r->from, r->vals);
      enSnapAdd(e, r);
    }
    return;
  }
  if (r->kind == TQ_REC_END || r->kind == TQ_REC_WHOLE) {
    OpenIv *ended = r->kind == TQ_REC_END ? iv : NULL;
    int emitted = ended ? ended->emitted & 1 : 0;
    /* whole, if enabled now and its flag entity existed at its begin (the
    ** engine knows it since) or exists now: what a sensor enabled all along
    ** would have delivered, whatever the enabling the optimizer chose */
    int seen = (ended && (ended->emitted & 4)) || alive(e, rel, f, r->vals[f]);
    if (emitted || (pass && rtSensorEnabled(s, r->vals[f]) && seen && !filtered(e, r))) {
      if (enHistOn(e, r->rel)) enHistRecord(e, r, r->to);
      rtDeliverEnd(net, s, r->id, r->from, r->to, r->vals);
      tq_record c = *r;
      if (!emitted) c.kind = TQ_REC_WHOLE; /* delivered whole: its begin was not */
      enSnapAdd(e, &c);
    }
  }
}

/* An entity begins (+1) or ends (-1) one of its tuples. */
void enAliveAdd(RelState *r, int64_t v, int d) {
  if (v < 0) return;
  if (v >= r->aliveCap) {
    int64_t nc = r->aliveCap ? 2 * r->aliveCap : 1024;
    while (nc <= v) nc *= 2;
    r->aliveN = tqRealloc(r->aliveN, sizeof(int32_t) * (size_t)nc);
    memset(r->aliveN + r->aliveCap, 0, sizeof(int32_t) * (size_t)(nc - r->aliveCap));
    r->aliveCap = nc;
  }
  r->aliveN[v] += d;
  if (r->aliveN[v] < 0) r->aliveN[v] = 0;
  if (d > 0) {
    if (v >= r->everCap) {
      int64_t nc = r->aliveCap;
      r->ever = tqRealloc(r->ever, (size_t)nc);
      memset(r->ever + r->everCap, 0, (size_t)(nc - r->everCap));
      r->everCap = nc;
    }
    r->ever[v] = 1;
    r->nbegun++;
  }
}
