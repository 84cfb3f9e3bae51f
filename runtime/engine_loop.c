/*
** engine_loop.c - the operation loop: START, then one snapshot after
** another (an extraction's extractor, or a collection's timer and its
** producers), and END; records produced in time order, and the instants
** they make.
**
** Records produced by PMs arrive in time order.  The engine buffers the
** records of one instant and processes the instant as a whole when time
** moves on:
**   1. the network is flushed with now = t;
**   2. the recorded state is brought to t (open intervals, which entities
**      exist, samples taken at t), so samples at t see it;
**   3. entity relations (always enabled) deliver their begins and ends;
**   4. the clocks tick (sampled alphas ask for samples: answered from the
**      recorded state in an extraction, by the producer PM in a collection);
**   5. the other records are delivered (engine_deliver.c).
** Clock ticks with no record are instants of their own (tickTo); a
** collection's producers are called at each snapshot and their records
** merged in time order before they are processed.
*/
#include <stdlib.h>
#include <string.h>

#include "engineInt.h"

static void processInstant(tq_engine *e);
static void tickTo(tq_engine *e, TqTime t);
static TqMap *ivm(tq_engine *e);

/* ================================================================ records and instants */

/* Moves time to t: the gathered instant is processed, Clock ticks and
** snapshot boundaries in between are handled. */
int enAdvance(tq_pm_global *g, tq_time t) {
  tq_engine *e = enOf(g);
  if (e->gathering) return 0; /* a collection's snapshot: time is the snapshot's */
  if (e->haveInstant && t <= e->instant) return 0;
  if (e->haveInstant) processInstant(e);
  tickTo(e, t);
  return 0;
}

/* Holds a record made at a snapshot (see step). */
static int gather(tq_engine *e, const tq_record *r, TqTime t) {
  if (!e->gatArena) e->gatArena = tqArenaNew();
  InstRec *ir = tqArenaAlloc(e->gatArena, sizeof(InstRec) + sizeof(int64_t) * (size_t)(r->nvals ? r->nvals : 1));
  ir->r = *r;
  TQ_MEMCPY(ir->vals, r->vals, sizeof(int64_t) * (size_t)r->nvals);
  ir->r.vals = ir->vals;
  if (e->ngat == e->cgat) {
    e->cgat = e->cgat ? 2 * e->cgat : 256;
    e->gat = tqRealloc(e->gat, sizeof(Gathered) * (size_t)e->cgat);
  }
  e->gat[e->ngat] = (Gathered){t, e->ngat, ir};
  e->ngat++;
  return 0;
}

/* Does the record's kind fit its relation's? */
static int kindFits(const AlgRel *rel, int kind) {
  switch (kind) {
    case TQ_REC_EVENT:
    case TQ_REC_DELTA: return rel->isEvent;
    case TQ_REC_BEGIN:
    case TQ_REC_END:
    case TQ_REC_WHOLE: return !rel->isEvent;
    case TQ_REC_SAMPLE: return 1;
    default: return 0;
  }
}

static int usedOrDelta(tq_engine *e, const RtSensor *s);

/* Record r, as a record of relation rel, into the instant. */
static void instAdd(tq_engine *e, const tq_record *r, int rel) {
  int nv = r->nvals;
  InstRec *ir = tqArenaAllocRaw(e->instArena, sizeof(InstRec) + sizeof(int64_t) * (size_t)(nv ? nv : 1));
  ir->r = *r;
  ir->r.rel = rel;
  for (int k = 0; k < nv; k++) ir->vals[k] = r->vals[k]; /* a few: no call */
  ir->r.vals = ir->vals;
  if (e->ninst == e->cinst) {
    e->cinst = e->cinst ? 2 * e->cinst : 256;
    e->inst = tqRealloc(e->inst, sizeof(InstRec *) * (size_t)e->cinst);
  }
  e->inst[e->ninst++] = ir;
}

/* g->produce: a record, checked, goes into the instant being gathered
** (an earlier instant is processed first), or is held at a collection's
** snapshot. */
int enProduce(tq_pm_global *g, const tq_record *r) {
  tq_engine *e = enOf(g);
  if (e->halted) return -1;
  TqTime t = recTime(r);
  const AlgRel *rel = relOf(e, r->rel);
  if (!rel || r->nvals != rel->nattr) {
    enLog(g, NULL, TQ_LOG_ERROR, "record of relation %d with %d values rejected", r->rel, r->nvals);
    return -1;
  }
  if (!kindFits(rel, r->kind)) {
    enLog(g, NULL, TQ_LOG_ERROR, "record of kind %d for the %s relation %s rejected", r->kind,
         rel->isEvent ? "event" : "interval", rel->name);
    return -1;
  }
  if (e->gathering) return gather(e, r, t);
  /* never before the instant being gathered, nor before the network's time */
  TqTime floor = e->haveInstant ? e->instant : e->net ? e->net->now : t;
  if (t < floor) {
    enLog(g, NULL, TQ_LOG_ERROR, "record of %s at %lld is earlier than %lld: dropped", rel->name, (long long)t,
         (long long)floor);
    return -1;
  }
  if (!e->haveInstant || t > e->instant) {
    if (e->haveInstant) processInstant(e);
    tickTo(e, t);
    e->instant = t;
    e->haveInstant = 1;
  }
  if (r->kind == TQ_REC_WHOLE && enWholeTooLate(e, r)) {
    enLog(g, NULL, TQ_LOG_ERROR, "whole interval of %s from %lld comes after the queries went past its begin: dropped%s",
         rel->name, (long long)r->from,
         e->extractor ? " (an extractor announces its whole intervals at START: g->announce_whole)"
                      : " (a producer gives its begin when it begins)");
    return -1;
  }
  /* another traced sensor of the relation, which a query uses (SENSOR): in
  ** a replay it is answered from the relation's records, a copy of each
  ** (its own enabling, its own open intervals), or from its own records
  ** when the recording holds them (a live PM produced it); not from both:
  ** each tuple would come twice (a count would count it twice) */
  const AlgRel *alt = rel->altSensor;
  int copy = e->extractor && alt && alt->mode == ALG_MODE_TRACED && e->net && e->net->sensor[alt->id - 1].used;
  const AlgRel *other = copy ? alt : e->extractor && rel->sensorOf && rel->mode == ALG_MODE_TRACED ? rel : NULL;
  if (other) {
    int *from = &e->rs[other->id - 1].replayFrom, want = copy ? 1 : 2;
    if (*from && *from != want) {
      enFail(e,
             "the recording holds records of both %s and %s, another sensor of it: a replay answers %s from %s's records "
             "or from its own, not both (each tuple would come twice)",
             other->sensorOf->name, other->name, other->name, other->sensorOf->name);
      e->fatal = e->halted = 1;
      return -1;
    }
    *from = want;
  }
  /* a sampled other sensor is answered in a replay from its relation's
  ** records only: samples of it in the recording are passed over, said at
  ** the end when the recording holds none of the relation's records (a
  ** live run in which the sampled sensor answered) */
  if (e->extractor && e->net) {
    if (alt && alt->mode == ALG_MODE_SAMPLED) e->rs[alt->id - 1].replayFrom = 1;
    if (rel->sensorOf && rel->mode == ALG_MODE_SAMPLED && usedOrDelta(e, &e->net->sensor[rel->id - 1]))
      e->rs[rel->id - 1].passedOver++;
  }
  instAdd(e, r, r->rel);
  if (copy) instAdd(e, r, alt->id);
  e->packets++;
  if (t > e->lastSeen) e->lastSeen = t;
  return 0;
}

/* The ticks at t, part of instant t: the network's Clock ticks (sampled
** alphas ask for samples) and the delta relations'. */
static void ticksAt(tq_engine *e, TqTime t) {
  if (e->extractor && (e->nextTick == t || e->deltaNext == t) && e->maxTicks > 0 && ++e->nticks > e->maxTicks) {
    char tb[64];
    enFail(e, "the replay stops at %s: it has ticked its Clock %lld times, the bound (a recording that spans a long time "
            "ticks all of it; give a coarser clock, Clock[n], or --max-ticks N, 0 for no bound)",
         tqTimeFormat(tb, sizeof tb, t), (long long)e->maxTicks);
    e->fatal = e->halted = 1;
    return;
  }
  if (e->nextTick == t) {
    rtNetTick(e->net, t);
    e->nextTick = e->net->clockGcd ? tqTimeAdd(t, e->net->clockGcd) : TQ_FOREVER; /* (saturates) */
  }
  if (e->deltaNext == t) {
    enComputeDeltas(e, t);
    if (e->sampleAll) enSampleEverything(e, t);
    e->deltaNext = tqTimeAdd(t, e->prog->cat.tick);
  }
}

/* Never silent: an answer that may be incomplete (its producers lost
** packets it reads) says so, with the packets and the period. */
static void warnIncomplete(tq_engine *e) {
  RtNet *net = e->net;
  for (int q = 0; q < net->nresult; q++) {
    const RtResult *res = &net->result[q];
    if (res->q->display) continue;
    RtLoss *v;
    int n = rtResultLosses(net, res, &v);
    if (!n) continue;
    int64_t lost = 0;
    int unknown = 0;
    TqTime from = TQ_FOREVER, to = TQ_BEGINNING;
    const char *rel = rtLossRelation(net, &v[0]);
    for (int i = 0; i < n; i++) {
      lost += v[i].count;
      unknown |= v[i].unknown;
      if (v[i].from < from) from = v[i].from;
      if (v[i].to > to) to = v[i].to;
      if (rel && (!rtLossRelation(net, &v[i]) || strcmp(rel, rtLossRelation(net, &v[i])))) rel = NULL;
    }
    char a[64], b[64], c[64];
    rtLossCount(c, sizeof c, lost, unknown);
    enLog(&e->g, NULL, TQ_LOG_WARNING, "%s may be incomplete from %s to %s: %s of %s lost (%d period%s; docs/losses.md)",
          res->name, tqTimeFormat(a, sizeof a, from), to >= TQ_FOREVER ? "the end" : tqTimeFormat(b, sizeof b, to), c,
          rel ? rel : "the relations it reads", n, n == 1 ? "" : "s");
    free(v);
  }
}

static void warnAbsentOne(tq_engine *e, const char *qname, const AlgEntity *ent, int64_t v, TqMap *said) {
  if (!ent || !ent->rel || v < 0) return;
  RelState *r = &e->rs[ent->rel->id - 1];
  if (!r->nbegun || (v < r->everCap && r->ever[v])) return; /* not collected, or it existed */
  uint64_t key = tqHash64((uint64_t)v * 31 + (uint64_t)ent->rel->id) | 2;
  if (tqMapGet(said, key)) return;
  tqMapPut(said, key, (void *)1);
  enLog(&e->g, NULL, TQ_LOG_WARNING, "%s names the %s %s, which did not exist during the run: nothing came of it", qname,
       ent->name, tqSymName((int32_t)v));
}

static void warnAbsentExpr(tq_engine *e, const char *qname, const AlgExpr *x, TqMap *said) {
  if (!x) return;
  if (x->kind == AX_CMP && x->op == OPB_EQ) {
    const AlgExpr *k = x->a->kind == AX_CONST ? x->a : x->b->kind == AX_CONST ? x->b : NULL;
    if (k && k->type.kind == TY_ENTITY) warnAbsentOne(e, qname, k->type.ent, k->ival, said);
  }
  warnAbsentExpr(e, qname, x->a, said);
  warnAbsentExpr(e, qname, x->b, said);
}

static void warnAbsentTree(tq_engine *e, const char *qname, const AlgNode *n, TqMap *said) {
  if (n->kind == ALG_CONST && n->ktype.kind == TY_ENTITY) warnAbsentOne(e, qname, n->ktype.ent, n->kval, said);
  warnAbsentExpr(e, qname, n->pred, said);
  for (int i = 0; i < n->nkid; i++) warnAbsentTree(e, qname, n->kid[i], said);
}

static void warnAbsent(tq_engine *e) {
  TqMap said = {0};
  for (int i = 0; i < e->prog->queries.n; i++) {
    CpQuery *q = e->prog->queries.v[i];
    const AlgNode *t = !e->opt.noOpt && q->opt ? q->opt : q->tree;
    warnAbsentTree(e, q->name ? q->name : tqArenaPrintf(e->prog->arena, "query%d", i + 1), t, &said);
  }
  tqMapFree(&said);
}

/* Can anything of instant t reach the network: a tick, an arming that
** takes effect, an entity tuple a query reads, or a record that passes its
** alpha's enable check (or ends an interval whose begin was delivered)?
** The enable check is exact only when the flush at t cannot change the
** enabling (flushEnables, armDue); otherwise any record of a used sensor
** counts. */
static int instantActive(tq_engine *e, TqTime t, TqMap *m) {
  RtNet *net = e->net;
  if (e->nextTick == t || e->deltaNext == t || net->armDue <= t) return 1;
  for (int i = 0; i < e->ninst; i++) {
    const tq_record *r = &e->inst[i]->r;
    const RtSensor *s = &net->sensor[r->rel - 1];
    const AlgRel *rel = s->rel;
    if (rel->entity) {
      if (s->sources.n && (r->kind == TQ_REC_BEGIN || r->kind == TQ_REC_END)) return 1;
      continue;
    }
    if (s->sources.n) return 1;
    if (!s->used || rel->mode == ALG_MODE_SAMPLED || r->kind == TQ_REC_SAMPLE) continue;
    if (net->flushEnables || rtSensorEnabled(s, r->vals[rel->flagAttr])) return 1;
    if (r->kind == TQ_REC_END) {
      const OpenIv *iv = tqMapGet(m, ivKey(r->rel, r->id));
      if (iv && (iv->emitted & 1)) return 1;
    }
  }
  return 0;
}

/* Has a tuple of a relation declared once come on flag entity v before
** (and from now on it has)?  The check is over the whole run, across the
** entity's lifetimes: an entity id may be created again (tests/o3: M1),
** and the arming of the consuming form, like TQuel's answer, goes by the
** id.  So it cannot forget an entity when it ends; it keeps one bit per
** entity id (symbol ids are dense), not a map entry per entity: 16 KiB
** for 100,000 entities, where the map took 4 MiB
** (tests/scripts/once_bounded.sh).  A value past the symbols (a PM that
** gives raw numbers) goes to the map: a bit array up to it would be as
** large as the value (256 MiB for 2,000,000,000). */
static int onceSeen(RelState *rs, int64_t v) {
  /* (a value in the map stays there: the bits may later cover it) */
  if (rs->onceSeen.n && tqMapGet(&rs->onceSeen, (uint64_t)v + 2)) return 1;
  if (v > INT32_MAX || ((v >> 3) >= rs->onceCap && v >= (int64_t)tqSymCount() + 1024)) {
    tqMapPut(&rs->onceSeen, (uint64_t)v + 2, rs);
    return 0;
  }
  int64_t byte = v >> 3;
  if (byte >= rs->onceCap) {
    int64_t nc = rs->onceCap ? 2 * rs->onceCap : 128;
    while (nc <= byte) nc *= 2;
    rs->onceBits = tqRealloc(rs->onceBits, (size_t)nc);
    memset(rs->onceBits + rs->onceCap, 0, (size_t)(nc - rs->onceCap));
    rs->onceCap = nc;
  }
  uint8_t bit = (uint8_t)(1u << (v & 7));
  int had = (rs->onceBits[byte] & bit) != 0;
  rs->onceBits[byte] |= bit;
  return had;
}

static void processInstant(tq_engine *e) {
  TqTime t = e->instant;
  RtNet *net = e->net;
  TqMap *m = ivm(e);
  e->haveInstant = 0;
  if (e->extractor) e->g.now = t; /* an extraction's time is its recording's */
  /* 1. the network hears of this instant only if something may reach it
  ** (results do not depend on how often time advances; skipping idle
  ** instants saves the flushes) */
  int active = instantActive(e, t, m);
  if (active) rtNetAdvance(net, t);
  /* 2. recorded state at t; ivs[i]: the open interval record i begins
  ** or ends */
  if (e->ninst > e->cinstIvs) {
    e->cinstIvs = e->ninst > 2 * e->cinstIvs ? e->ninst : 2 * e->cinstIvs;
    free(e->instIvs);
    e->instIvs = tqMalloc(sizeof(OpenIv *) * (size_t)e->cinstIvs);
  }
  OpenIv **ivs = e->instIvs;
  int consumers = e->allRecords || e->collectors;
  for (int i = 0; i < e->ninst; i++) {
    tq_record *r = &e->inst[i]->r;
    RtSensor *s = &net->sensor[r->rel - 1];
    s->recorded++;
    RelState *rs = &e->rs[r->rel - 1];
    ivs[i] = NULL;
    if (s->rel->once && (r->kind == TQ_REC_EVENT || r->kind == TQ_REC_BEGIN || r->kind == TQ_REC_WHOLE) &&
        r->vals[s->rel->flagAttr] >= 0) {
      /* the declaration O3-ONCE relies on: one tuple per flag entity */
      if (onceSeen(rs, r->vals[s->rel->flagAttr])) s->twice++;
      s->onceBytes = rs->onceCap + (int64_t)rs->onceSeen.cap * (int64_t)sizeof(TqMapSlot);
    }
    if (r->kind == TQ_REC_WHOLE && e->announced && rs->tracked) enAnnCame(rs, r->from);
    if (r->kind == TQ_REC_BEGIN) {
      if (rs->state) ivs[i] = enOpenBegin(e, m, r);
      if (s->rel->entity) enAliveAdd(rs, r->vals[0], 1);
    } else if (r->kind == TQ_REC_END) {
      if (rs->state) ivs[i] = enOpenEnd(e, m, r);
      if (s->rel->entity) enAliveAdd(rs, r->vals[0], -1);
    }
    if (s->rel->entity && (r->kind == TQ_REC_BEGIN || r->kind == TQ_REC_END) && enHistOn(e, r->rel)) enHistRecord(e, r, t);
    /* every record, to the consumers that want them all; what the run
    ** collected, to the others: the entities (a sensor lives in its
    ** entity), the begins and ends of the traced relations a query uses
    ** (the engine holds them to deliver an interval whole), delivered
    ** events and samples (below).  Replaying what was collected gives the
    ** same results. */
    /* (not the copies a replay makes for another sensor; its own records,
    ** which a recording may hold, are records.  A replay answers a used
    ** other sensor from the relation's records, which are then all
    ** collected, although no query may read the relation: a replay of what
    ** was collected makes the same copies, enCopiedFrom) */
    if (consumers && !(e->extractor && s->rel->sensorOf && rs->replayFrom != 2)) {
      if (e->allRecords) enToConsumers(e, r, 1);
      if (e->collectors && r->kind != TQ_REC_SAMPLE &&
          ((r->kind != TQ_REC_EVENT && (s->rel->entity || rs->tracked)) || enCopiedFrom(e, s->rel)))
        enToConsumers(e, r, 0);
    }
  }
  /* 3. entity relations */
  for (int i = 0; i < e->ninst && active; i++) {
    tq_record *r = &e->inst[i]->r;
    RtSensor *s = &net->sensor[r->rel - 1];
    if (!s->rel->entity) continue;
    if (r->kind == TQ_REC_BEGIN) rtEntityBegin(net, s, r->id, r->from, r->vals);
    else if (r->kind == TQ_REC_END) rtEntityEnd(net, s, r->id, r->from, r->to, r->vals);
    else continue;
    if (s->sources.n) enSnapAdd(e, r);
  }
  /* 4. clock ticks, deltas */
  ticksAt(e, t);
  /* 5. sensor records; after the last end of the instant the network
  ** hears that no end at t comes any more (in a recording that gives an
  ** instant's ends before its other records, every overlap with what is
  ** still open is decided as its tuple comes) */
  /* the memory the instant's events will read (a product's stored
  ** matches) is fetched for all of them before the first is delivered */
  for (int stage = 0; stage < 2 && active && e->ninst > 1; stage++)
    for (int i = 0; i < e->ninst; i++) {
      const tq_record *r = &e->inst[i]->r;
      const RtSensor *s = &net->sensor[r->rel - 1];
      if (r->kind == TQ_REC_EVENT && s->used && !s->rel->entity && s->rel->mode != ALG_MODE_SAMPLED)
        rtNetHintEvent(net, &net->sensor[r->rel - 1], r->vals, stage);
    }
  int lastEnd = -1;
  for (int i = 0; i < e->ninst && active; i++)
    if (e->inst[i]->r.kind == TQ_REC_END || e->inst[i]->r.kind == TQ_REC_WHOLE) lastEnd = i;
  if (active && lastEnd < 0) rtNetEndsDone(net);
  for (int i = 0; i < e->ninst; i++) {
    tq_record *r = &e->inst[i]->r;
    if (r->kind != TQ_REC_SAMPLE) enDeliver(e, r, ivs[i], active);
    if (r->kind == TQ_REC_END && ivs[i]) enReleaseIv(&e->rs[r->rel - 1], ivs[i]);
    if (i == lastEnd) rtNetEndsDone(net);
  }
  for (int k = 0; k < e->ntrim; k++)
    if (e->rs[e->trimRel[k]].fn) enFifoTrim(&e->rs[e->trimRel[k]]);
  if (active) rtNetEndInstant(net);
  if (e->sampled.n) tqMapFree(&e->sampled);
  e->ninst = 0;
  tqArenaReset(e->instArena);
}

/* Before instant t: closes the snapshot whose boundary is at or before t,
** and runs the Clock ticks the network needs before t, each an instant of
** its own (a tick at t itself is part of instant t). */
static void tickTo(tq_engine *e, TqTime t) {
  for (;;) {
    if (e->halted) return;
    TqTime nt = e->nextTick < e->deltaNext ? e->nextTick : e->deltaNext;
    /* an extraction's snapshot closes at the base tick after its first
    ** record; a collection's only at its timer's ticks (step) */
    TqTime nb = e->snapDirty && e->extractor ? e->snapBoundary : TQ_FOREVER;
    if (nb < TQ_FOREVER && nb <= t && nb <= nt) { /* (t is forever after a record at forever - 1) */
      enCloseSnapshot(e, nb);
      continue;
    }
    if (nt >= t || nt >= TQ_FOREVER) return;
    if (e->rangeSet && nt > e->last) {
      if (e->nextTick > e->last) e->nextTick = TQ_FOREVER;
      if (e->deltaNext > e->last) e->deltaNext = TQ_FOREVER;
      continue;
    }
    if (e->extractor) e->g.now = nt;
    rtNetAdvance(e->net, nt);
    ticksAt(e, nt);
    rtNetEndInstant(e->net);
    if (e->sampled.n) tqMapFree(&e->sampled);
  }
}

/* ================================================================ running */

static int start(tq_engine *e) {
  if (e->state != 1) return enFail(e, "the operation is not prepared (tq_prepare)");
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    for (int k = 0; k < m->priv.nprivileges && !m->unbound; k++)
      if (!enHasPrivilege(m->priv.privileges[k]))
        return enFail(e, "processor module %s needs the privilege %s, which this process does not have: not started",
                    m->pm->name, m->priv.privileges[k]);
  }
  e->state = 2;
  e->startWall = tqWallSeconds();
  int started = 0;
  e->starting = 1;
  for (; started < e->npm && !e->fatal; started++) {
    EnPm *m = e->order[started];
    if (m->unbound) continue; /* left out: never called */
    m->started = 1;
    e->startingPm = m;
    enCallPm(e, m, TQ_PM_START, NULL);
  }
  e->starting = 0;
  e->startingPm = NULL;
  if (e->fatal) {
    /* the PMs a fatal START left unstarted get no call but END (no records,
    ** no result rows while the results so far are flushed) */
    for (int i = started; i < e->npm; i++) e->order[i]->priv.disabled = 1;
    return -1;
  }
  TqTime t0 = e->rangeSet ? e->first : e->haveStart ? e->startTime : 0;
  e->net->originKnown = e->rangeSet || e->haveStart;
  if (rtNetStart(e->net, t0)) return enFail(e, "the result consumers could not start");
  if (e->session) enSessionStart(e);
  if (e->net->clockGcd) {
    e->nextTick = tqTickAtOrAfter(t0, e->net->clockGcd);
  } else {
    e->nextTick = TQ_FOREVER;
  }
  e->deltaNext = TQ_FOREVER;
  e->lastSeen = TQ_BEGINNING;
  e->sampleAll = !e->extractor && e->allRecords;
  for (int i = 0; i < e->nrel; i++)
    if ((e->net->sensor[i].rel->deltaOf && e->net->sensor[i].used) ||
        (e->sampleAll && e->net->sensor[i].rel->mode == ALG_MODE_SAMPLED && e->producerOf[i])) {
      e->deltaNext = tqTickAtOrAfter(t0, e->prog->cat.tick);
    }
  e->snapBoundary = TQ_FOREVER;
  if (!e->extractor) {
    for (int i = 0; i < e->npm; i++) {
      EnPm *m = e->order[i];
      if ((m->priv.caps & (TQ_PM_TIMER | TQ_PM_MONITOR)) && (m->priv.sync & TQ_PM_SYNC_PREBASELINE) && !m->priv.disabled)
        enCallPm(e, m, TQ_PM_PREBASELINE, NULL);
    }
  }
  return e->fatal ? -1 : 0;
}

/* Is the relation used, or the sampled relation of a used delta relation? */
static int usedOrDelta(tq_engine *e, const RtSensor *s) {
  return s->used || (s->rel->delta && e->net->sensor[s->rel->delta->id - 1].used);
}

/* Does the operation need relation rel's records?  A query uses it, or it
** is the entity relation a used sensor lives in (its flag or performer
** entity): nothing of that sensor is delivered while the entity does not
** exist. */
int enNeeded(tq_engine *e, int rel) {
  const RtSensor *s = &e->net->sensor[rel - 1];
  if (s->rel->deltaOf) return 0; /* computed by the engine */
  /* another sensor of a relation: sampled live by the PM that produces
  ** it, answered from its relation's records in a replay */
  if (s->rel->sensorOf) return !e->extractor && e->producerOf[rel - 1] && usedOrDelta(e, s);
  if (usedOrDelta(e, s)) return 1;
  const AlgRel *alt = s->rel->altSensor;
  if (alt && e->net->sensor[alt->id - 1].used && (e->extractor || !e->producerOf[alt->id - 1])) return 1;
  if (!s->rel->entity) return 0;
  for (int i = 0; i < e->net->nsensor; i++) {
    const AlgRel *u = e->net->sensor[i].rel;
    if (!usedOrDelta(e, &e->net->sensor[i]) || u->entity) continue;
    if (u->flagAttr >= 0 && u->attr[u->flagAttr].type.ent == s->rel->entity) return 1;
    if (u->performerAttr >= 0 && u->attr[u->performerAttr].type.ent == s->rel->entity) return 1;
  }
  return 0;
}

static int gatheredCmp(const void *a, const void *b) {
  const Gathered *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Delivers the records held at a snapshot in time order. */
static void mergeGathered(tq_engine *e) {
  e->gathering = 0;
  if (e->ngat) qsort(e->gat, (size_t)e->ngat, sizeof(Gathered), gatheredCmp);
  for (int i = 0; i < e->ngat; i++) enProduce(&e->g, &e->gat[i].ir->r);
  e->ngat = 0;
  tqArenaDelete(e->gatArena);
  e->gatArena = NULL;
}

/* One snapshot's worth: returns 1 more, 0 done, -1 fatal. */
static int step(tq_engine *e) {
  if (e->halted) return e->fatal ? -1 : 0;
  if (e->haltReq) {
    /* tq_halt: the snapshot before was completed; the run ends here, as
    ** at the end of its source (a replay does not tick on to the end of
    ** its recording) */
    e->haltedBy = e->haltReq;
    e->net->stopped = 1;
    return 0;
  }
  if (e->opt.timeLimit > 0 && tqWallSeconds() - e->startWall > e->opt.timeLimit) {
    e->net->stopped = 1;
    return 0;
  }
  int st;
  if (e->extractor) {
    EnPm *x = e->extractor;
    if (x->priv.disabled) return 0;
    x->calls++;
    st = x->pm->extract(&e->g, &x->priv);
    if (st == TQ_PM_ERROR) {
      /* a damaged recording: what came before was used; the operation
      ** ends there and reports the error */
      x->priv.disabled = 1;
      if (!e->diag.nerr) enFail(e, "%s: %s", x->pm->name, x->priv.message[0] ? x->priv.message : "extraction failed");
      return 0;
    }
    if (st == TQ_PM_FATAL) e->fatal = e->halted = 1;
    /* snapshot-synchronised PMs see the snapshot that is forming */
    for (int i = 0; i < e->npm && !e->halted; i++) {
      EnPm *m = e->order[i];
      if (m != x && (m->priv.sync & TQ_PM_SYNC_SNAPSHOT) && !m->priv.disabled && !(m->priv.caps & TQ_PM_PRODUCER))
        enCallPm(e, m, TQ_PM_SNAPSHOT, NULL);
    }
    if (e->fatal) return -1;
    return st == TQ_PM_DONE ? 0 : 1;
  }
  /* collection: the timer says when the next snapshot is */
  EnPm *tm = e->timer;
  if (tm->priv.disabled) return 0;
  TqTime next = e->g.now;
  tm->calls++;
  st = tm->pm->timer(&e->g, &tm->priv, &next);
  if (st == TQ_PM_DONE) return 0;
  if (st == TQ_PM_FATAL) {
    e->fatal = e->halted = 1;
    return -1;
  }
  if (st == TQ_PM_ERROR) {
    tm->priv.disabled = 1;
    return 0;
  }
  if (next < e->g.now || (next == e->g.now && e->snapSeq > 0)) {
    /* time never goes back: the producers' records would be dropped */
    enFail(e, "processor module %s (the timer) gave the snapshot time %lld, not after %lld: the collection ends",
         tm->pm->name, (long long)next, (long long)e->g.now);
    tm->priv.disabled = 1;
    return 0;
  }
  e->g.now = next;
  enAdvance(&e->g, next);
  /* producers produce at the snapshot (those no query needs are not
  ** called); each makes its records since the last snapshot, so they are
  ** held and merged in time order (equal times in call order) */
  e->gathering = 1;
  for (int i = 0; i < e->npm && !e->halted; i++) {
    EnPm *m = e->order[i];
    if (!(m->priv.sync & TQ_PM_SYNC_SNAPSHOT) || m->priv.disabled || m == tm) continue;
    /* (recording everything, every producer is enNeeded) */
    if ((m->priv.caps & TQ_PM_PRODUCER) && !m->multi && !e->allRecords && !enNeeded(e, m->priv.rel)) continue;
    enCallPm(e, m, TQ_PM_SNAPSHOT, NULL);
  }
  mergeGathered(e);
  /* the records at the snapshot time are an instant: process it */
  if (e->haveInstant) processInstant(e);
  /* time passed in the world: the network hears of it at every snapshot,
  ** also when no record reached it, so that what waits for time to pass
  ** (an interval's end, a `now`) comes out live */
  if (e->net->now < next || e->nextTick == next || e->deltaNext == next) {
    rtNetAdvance(e->net, next);
    ticksAt(e, next);
    rtNetEndInstant(e->net);
    if (e->sampled.n) tqMapFree(&e->sampled);
  }
  e->snapDirty = 1;
  enFlushOffs(e, 0); /* those that went off in the snapshot before, and stayed off */
  enCloseSnapshot(e, next);
  return e->fatal ? -1 : 1;
}

int tq_start(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->state == 1 && start(e)) {
    enCollectErrors(e);
    return -1;
  }
  int rc;
  while ((rc = step(e)) > 0) {
  }
  int bad = e->diag.nerr > 0;
  enCollectErrors(e);
  return rc < 0 || e->fatal || bad ? -1 : 0;
}

static int oneSnapshot(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->state == 1 && start(e)) {
    enCollectErrors(e);
    return -1;
  }
  if (e->state != 2) {
    enFail(e, "the operation is not running");
    enCollectErrors(e);
    return -1;
  }
  int rc = step(e);
  enCollectErrors(e);
  return rc;
}

int tq_read_snapshot(tq_engine *e) { return oneSnapshot(e); }

int tq_collect_snapshot(tq_engine *e) { return oneSnapshot(e); }

int tq_continue(tq_engine *e) { return tq_start(e); }

static TqMap *ivm(tq_engine *e) { return &e->ivs; }

int tq_end(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->state != 2 && e->state != 1) return 0;
  int ok = !e->fatal;
  if (e->state == 2) {
    if (e->haveInstant) processInstant(e);
    /* the end of the run (the value of now): the recording's last time, or
    ** a collection's last snapshot, even when nothing came then */
    TqTime endT = e->net->now;
    if (e->extractor && !e->net->stopped) {
      TqTime last = e->rangeSet ? e->last : e->lastSeen > endT ? e->lastSeen : endT;
      tickTo(e, last + 1);
      endT = last;
    } else if (!e->extractor && e->g.now > endT) {
      endT = e->g.now;
    }
    if (e->snapDirty) enCloseSnapshot(e, e->snapBoundary < TQ_FOREVER ? e->snapBoundary : endT);
    e->net->packetsSeen = e->packets;
    e->net->packetsTotal = e->packetsTotal ? e->packetsTotal : e->packets;
    e->diag.notes = e->notes;
    if (rtNetFinish(e->net, endT, 1)) ok = 0;
    enSessionEnd(e);
    enFlushOffs(e, 1);
    warnIncomplete(e);
    for (int i = 0; i < e->net->nsensor; i++) {
      const RtSensor *s = &e->net->sensor[i];
      if (s->twice)
        enLog(&e->g, NULL, TQ_LOG_WARNING,
              "%lld tuples of %s came on a flag entity that had one already: %s is declared once, and the consuming form "
              "of O3 (rule O3-ONCE) may miss some of the answer (docs/enabling.md); --no-rule O3-ONCE answers exactly",
              (long long)s->twice, s->rel->name, s->rel->name);
      if (s->outside)
        enLog(&e->g, NULL, TQ_LOG_WARNING,
              "%lld tuples of %s began while the flag entity of %s did not exist: that sampled sensor, which the optimizer "
              "chose (rule SENSOR), may answer otherwise than the traced one (docs/enabling.md); --no-rule SENSOR answers by "
              "the traced one",
              (long long)s->outside, s->rel->sensorOf->name, s->rel->name);
      if (e->rs[i].passedOver && !e->rs[i].replayFrom)
        enLog(&e->g, NULL, TQ_LOG_WARNING,
              "the recording holds %lld samples of %s and no record of %s: a replay answers %s from %s's records only, "
              "so the answers that read it have none of them (a recording of a live run in which %s answered)",
              (long long)e->rs[i].passedOver, s->rel->name, s->rel->sensorOf->name, s->rel->name, s->rel->sensorOf->name,
              s->rel->name);
    }
    if (!e->fatal && !e->diag.nerr && !(e->extractor && e->extractor->priv.disabled)) warnAbsent(e); /* (a run cut short: no) */
    for (int i = 0; i < e->npm; i++) {
      EnPm *m = e->order[i];
      if ((m->priv.sync & TQ_PM_SYNC_COLLECTION_END) && !m->priv.disabled && m->started)
        enCallPm(e, m, TQ_PM_COLLECTION_END, NULL);
    }
  }
  /* END goes to the PMs that were started (not when a privilege was
  ** missing, nor to those after a fatal START) */
  for (int i = e->npm - 1; i >= 0; i--) {
    EnPm *m = e->order ? e->order[i] : e->pm[i];
    if (m->started) enCallPm(e, m, TQ_PM_END, NULL);
  }
  /* never silent: a program pattern no process matched says so */
  for (int i = 0; e->state == 2 && !e->extractor && i < e->programs.n; i++)
    if (!e->programs.pat[i].pids.n)
      enLog(&e->g, NULL, TQ_LOG_WARNING, "program pattern \"%s\" matched no process", e->programs.pat[i].text);
  e->state = 3;
  enCollectErrors(e);
  return ok && !e->fatal ? 0 : -1;
}
