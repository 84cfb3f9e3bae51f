/*
** replay.c - the recording producer: replays a parsed recording through the
** network, honouring enabling exactly as live sensors would.
**
** At each instant t (a packet time or a clock tick, in time order):
**   1. the network is flushed with now = t;
**   2. the recorded state is brought to t (intervals begun at t are open,
**      those ended at t are closed) so samples at t see it;
**   3. entity relations (always enabled) deliver their begins and ends;
**   4. the clocks tick (sampled alphas ask for samples, answered from the
**      recorded state: the tuples valid at t, as events at t);
**   5. sensor packets are delivered in recorded order if their sensor is
**      enabled on the flag entity: an interval whose begin was delivered
**      has its end delivered; one that begins while disabled is delivered
**      whole at its end if the sensor is enabled then.
** A relation no operator uses is not looked at (only counted).
*/
#include <stdlib.h>
#include <string.h>

#include "sensorsInt.h"

typedef struct OpenList {
  int32_t *v;       /* open interval indexes */
  int n, cap;
  TqTime minPending;/* cached min from of open, undelivered intervals */
  int dirty;
} OpenList;

typedef struct Replay {
  SnsTrace *tr;
  RtNet *net;
  OpenList *open;   /* per relation */
  TqMap *alive;     /* per relation (entity relations): entity -> open tuples */
  RtProducer prod;
} Replay;

/* A sensor lives in its flag entity: it can fire (or answer a sample) only
** while that entity exists.  A recording that says otherwise describes the
** impossible; such packets are not delivered (as no live sensor would
** produce them), so that enabling on a named entity (O4) and enabling on
** the entity source give the same answers. */
static int alive(Replay *r, const AlgRel *rel, int attr, int64_t e) {
  const AlgEntity *ent = rel->attr[attr].type.ent;
  if (!ent) return 1;
  return tqMapGet(&r->alive[ent->rel->id - 1], (uint64_t)e + 2) != NULL;
}

static void aliveCount(Replay *r, int32_t rel, const int64_t *v, int delta) {
  TqMap *m = &r->alive[rel];
  uint64_t k = (uint64_t)v[0] + 2;
  intptr_t c = (intptr_t)tqMapGet(m, k) + delta;
  if (c > 0) tqMapPut(m, k, (void *)c);
  else tqMapDel(m, k);
}

static int firable(Replay *r, RtSensor *s, const int64_t *v) {
  const AlgRel *rel = s->rel;
  return rtSensorEnabled(s, v[rel->flagAttr]) && alive(r, rel, rel->flagAttr, v[rel->flagAttr]);
}

static void openAdd(Replay *r, int32_t ivi) {
  SnsIv *iv = &r->tr->iv[ivi];
  OpenList *o = &r->open[iv->rel];
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 16;
    o->v = tqRealloc(o->v, sizeof(int32_t) * (size_t)o->cap);
  }
  iv->pos = o->n;
  o->v[o->n++] = ivi;
  o->dirty = 1;
}

static void openDel(Replay *r, int32_t ivi) {
  SnsIv *iv = &r->tr->iv[ivi];
  OpenList *o = &r->open[iv->rel];
  if (iv->pos < 0) return;
  int32_t last = o->v[--o->n];
  o->v[iv->pos] = last;
  r->tr->iv[last].pos = iv->pos;
  iv->pos = -1;
  o->dirty = 1;
}

static void replaySample(void *self, RtSensor *s, int attr, int64_t who, TqTime t, void *cookie) {
  Replay *r = self;
  OpenList *o = &r->open[s->rel->id - 1];
  for (int i = 0; i < o->n; i++) {
    SnsIv *iv = &r->tr->iv[o->v[i]];
    const int64_t *v = r->tr->vals + iv->vals;
    if (v[attr] != who || iv->from > t) continue;
    if (!alive(r, s->rel, attr, who)) continue;
    if (s->rel->flagAttr != attr && !alive(r, s->rel, s->rel->flagAttr, v[s->rel->flagAttr])) continue;
    rtSampleAnswer(cookie, v);
  }
}

static TqTime replayMinPending(void *self, RtSensor *s) {
  Replay *r = self;
  OpenList *o = &r->open[s->rel->id - 1];
  if (o->dirty) {
    TqTime m = TQ_FOREVER;
    for (int i = 0; i < o->n; i++) {
      SnsIv *iv = &r->tr->iv[o->v[i]];
      if (!iv->emitted && iv->from < m) m = iv->from;
    }
    o->minPending = m;
    o->dirty = 0;
  }
  return o->minPending;
}

static TqTime floorDiv(TqTime a, TqTime b) {
  TqTime q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static void deliver(Replay *r, const SnsPacket *p) {
  SnsTrace *tr = r->tr;
  RtSensor *s = &r->net->sensor[p->rel];
  const AlgRel *rel = s->rel;
  if (rel->entity || rel->mode == ALG_MODE_SAMPLED || !s->used) return;
  if (p->kind == PK_EVENT) {
    const int64_t *v = tr->vals + p->vals;
    if (firable(r, s, v)) rtDeliverEvent(r->net, s, p->t, v);
    return;
  }
  SnsIv *iv = &tr->iv[p->iv];
  const int64_t *v = tr->vals + iv->vals;
  if (p->kind == PK_BEGIN) {
    if (firable(r, s, v)) {
      iv->emitted = 1;
      r->open[p->rel].dirty = 1;
      rtDeliverBegin(r->net, s, (uint64_t)p->iv, iv->from, v);
    }
  } else if (iv->emitted || firable(r, s, v)) {
    rtDeliverEnd(r->net, s, (uint64_t)p->iv, iv->from, iv->to, v);
  }
}

int snsReplay(SnsTrace *tr, RtNet *net, FILE *progress) {
  Replay r = {0};
  r.tr = tr;
  r.net = net;
  r.open = tqCalloc((size_t)(net->nsensor ? net->nsensor : 1), sizeof(OpenList));
  r.alive = tqCalloc((size_t)(net->nsensor ? net->nsensor : 1), sizeof(TqMap));
  r.prod.name = "replay";
  r.prod.self = &r;
  r.prod.sample = replaySample;
  r.prod.minPendingFrom = replayMinPending;
  for (int i = 0; i < net->nsensor; i++) net->sensor[i].prod = &r.prod;
  for (int64_t i = 0; i < tr->niv; i++) {
    tr->iv[i].pos = -1;
    tr->iv[i].emitted = 0;
  }

  TqTime gcd = net->clockGcd;
  TqTime tick = TQ_FOREVER;
  if (gcd > 0 && tr->npk) tick = floorDiv(tr->first + gcd - 1, gcd) * gcd;
  int rc = rtNetStart(net, tr->npk ? tr->first : 0);
  int64_t i = 0, nextProgress = 1000000, nextCheck = 4096;
  net->packetsTotal = tr->npk;
  while (rc == 0 && (i < tr->npk || tick <= tr->last)) {
    if (net->opt.timeLimit > 0 && i >= nextCheck) {
      nextCheck = i + 4096;
      if (rtWallSeconds() - net->startWall > net->opt.timeLimit) {
        net->stopped = 1;
        break;
      }
    }
    TqTime t = i < tr->npk ? tr->pk[i].t : TQ_FOREVER;
    if (tick < t) t = tick;
    rtNetAdvance(net, t);
    int64_t j = i;
    while (j < tr->npk && tr->pk[j].t == t) j++;
    /* 2. recorded state at t */
    for (int64_t k = i; k < j; k++) {
      const SnsPacket *p = &tr->pk[k];
      net->sensor[p->rel].recorded++;
      if (p->kind == PK_BEGIN) openAdd(&r, p->iv);
      else if (p->kind == PK_END) openDel(&r, p->iv);
      if (p->kind != PK_EVENT && net->sensor[p->rel].rel->entity)
        aliveCount(&r, p->rel, tr->vals + tr->iv[p->iv].vals, p->kind == PK_BEGIN ? 1 : -1);
    }
    /* 3. entity relations */
    for (int64_t k = i; k < j; k++) {
      const SnsPacket *p = &tr->pk[k];
      RtSensor *s = &net->sensor[p->rel];
      if (!s->rel->entity) continue;
      SnsIv *iv = &tr->iv[p->iv];
      if (p->kind == PK_BEGIN) rtEntityBegin(net, s, (uint64_t)p->iv, iv->from, tr->vals + iv->vals);
      else rtEntityEnd(net, s, (uint64_t)p->iv, iv->from, iv->to, tr->vals + iv->vals);
    }
    /* 4. clock ticks */
    if (tick == t) {
      rtNetTick(net, t);
      tick += gcd;
    }
    /* 5. sensor packets */
    for (int64_t k = i; k < j; k++) deliver(&r, &tr->pk[k]);
    rtNetEndInstant(net);
    if (net->failed) rc = -1;
    i = j;
    net->packetsSeen = i;
    if (progress && i >= nextProgress) {
      fprintf(progress, "\rreplay: %lld of %lld packets", (long long)i, (long long)tr->npk);
      fflush(progress);
      nextProgress += 1000000;
    }
  }
  if (progress && tr->npk >= 1000000) fprintf(progress, "\rreplay: %lld of %lld packets\n", (long long)i, (long long)tr->npk);
  if (rtNetFinish(net, net->stopped ? net->now : tr->npk ? tr->last : 0, rc == 0)) rc = -1;
  for (int k = 0; k < net->nsensor; k++) {
    free(r.open[k].v);
    tqMapFree(&r.alive[k]);
    net->sensor[k].prod = NULL;
  }
  free(r.open);
  free(r.alive);
  return rc;
}
