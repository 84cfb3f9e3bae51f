/*
** engine.c - the engine: processor modules (registry, loading, calls in
** dependency order, errors), the operation loop (extraction of a recording
** or timed collection), the delivery of records to the update network, and
** snapshots of record sets.  Implements include/tqmon.h.
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
**   5. the other records are delivered if their sensor is enabled on the
**      flag entity and that entity exists: an interval whose begin was
**      delivered has its end delivered; one that began while disabled is
**      delivered whole at its end if the sensor is enabled then (and the
**      entity existed at its begin or exists then).
** A snapshot closes at each base Clock tick after which records came: the
** record sets of the delivered records go to the PMs synchronised on
** snapshot-end (consumers, delta producers); it becomes the previous one.
*/
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine.h"
#include "rtInt.h"

/* ================================================================ state */

typedef struct EnPm {
  const tq_pm *pm;
  tq_pm_private priv;
  void *dl;            /* dlopen handle of its library (NULL: offered / client) */
  int64_t calls;
  int visit;           /* topological sort */
  int started;         /* it was called at START (and so is called at END) */
  int multi;           /* PRODUCER of "*": every primitive relation no other PM produces */
  int member;          /* loaded by a grouper, not named by the user */
  int unbound;         /* a member producing a relation the program does not declare: left out */
  RtConsumer *rc;      /* built-in CONSUMER: its result consumer */
  char *argsCopy;
  char *detail;        /* its figures as one JSON value (g->set_detail), or NULL */
} EnPm;

typedef struct OpenIv {
  int rel;
  uint64_t id;
  TqTime from;
  int emitted;         /* bits: 1 begin delivered, 2 out of the queue, 4 flag entity existed at the begin */
  int pos;             /* index in its relation's open list, -1 when closed */
  struct OpenIv *nextFree; /* in its relation's free list */
  int64_t vals[];
} OpenIv;

/* The records of one relation in one snapshot. */
typedef struct SnapStore {
  tq_record *rec;      /* records; vals hold offsets into vals until closed */
  int nrec, crec;
  int64_t *vals;
  int64_t nvals, cvals;
} SnapStore;

typedef struct RelState {
  OpenIv **open;       /* open intervals (any order) */
  int nopen, copen;
  int tracked;         /* keep the begin-order queue (traced interval relation in use) */
  OpenIv **fifo;       /* open intervals in begin order, lazily trimmed */
  int fhead, fn, fcap;
  int32_t *aliveN;     /* entity relations: open tuples per entity (symbols are dense) */
  int64_t aliveCap;
  uint8_t *ever;       /* entity relations: 1 for each entity that existed at some time */
  int64_t everCap;
  int64_t nbegun;      /* entity relations: begins seen */
  int state;           /* keeps its open intervals (a query traces or samples it) */
  OpenIv *freeIv;      /* closed ones, for reuse (all of one relation have its size) */
  TqTime *ann, *annDone; /* min-heaps: begins of whole intervals announced, and of those that came */
  int nann, cann, ndone, cdone;
  TqMap annLeft;       /* announced begin (annKey) -> how many have not come yet */
  SnapStore cur;       /* the forming snapshot's record set */
  TqVec dprev;         /* delta relation: the samples of the previous tick (DeltaTup*) */
  TqTime dprevT;       /* delta relation: that tick */
  TqMap dmap;          /* their match hash -> first DeltaTup* of the chain */
} RelState;

/* A sample kept for the next delta. */
typedef struct DeltaTup {
  struct DeltaTup *next; /* same match hash */
  uint64_t h;
  int64_t vals[];
} DeltaTup;

typedef struct InstRec {
  tq_record r;
  int64_t vals[]; /* copied */
} InstRec;

/* A record a producer made at a collection's snapshot, held until every
** producer was called (they are merged in time order). */
typedef struct Gathered {
  TqTime t;     /* its time */
  int seq;      /* order of production: equal times keep it */
  InstRec *ir;  /* the copy (in gatArena) */
} Gathered;

struct tq_engine {
  tq_pm_global g;         /* first: the global context handed to PMs */
  TqDiag diag;            /* messages of the current call */
  TqBuf errs;             /* tq_errors */
  EnPm **pm;              /* registered PMs */
  int npm, cpm;
  EnPm **order;           /* START order: dependencies first */
  char *pmPath;
  RtOptions opt;
  CpProgram *prog;
  RtNet *net;
  int state;              /* 0 new, 1 prepared, 2 started, 3 ended */
  EnPm *extractor, *timer;
  EnPm **producerOf;      /* per relation id - 1 */
  RelState *rs;           /* per relation */
  int nrel;
  /* the instant being gathered */
  TqTime instant;
  int haveInstant;
  InstRec **inst;
  int ninst, cinst;
  TqArena *instArena;
  /* clock ticks and snapshots */
  TqTime nextTick;        /* next Clock tick the network needs (TQ_FOREVER: none) */
  TqTime deltaNext;       /* next base tick of the engine's own work: delta relations,
                          ** samples of a recording of everything (TQ_FOREVER: none) */
  int sampleAll;          /* a live recording of everything: every sampled relation is
                          ** sampled on every entity at each base tick */
  TqTime first, last;     /* range of the recording */
  TqTime lastSeen;        /* time of the latest record produced (an extraction
                          ** whose extractor gave no range ends there) */
  int rangeSet;
  TqTime startTime;       /* a live collection's first time (g->set_start) */
  int haveStart;
  int starting;           /* the START calls are going on */
  int64_t snapSeq;
  int snapDirty;          /* records delivered since the last snapshot */
  TqTime snapBoundary;    /* next base tick closing a snapshot */
  tq_snapshot cur, prev;
  tq_record_set *curSets, *prevSets;
  SnapStore *prevStore;   /* record storage of the previous snapshot */
  TqMap ivs;              /* (relation, id) -> open interval */
  int halted, fatal;
  int64_t packets, packetsTotal;
  int allRecords;         /* some CONSUMER wants every record */
  int collectors;         /* some CONSUMER wants what the run collected */
  int filters;            /* some FILTER is loaded */
  TqMap sampled;          /* (relation, who) sampled at this instant (recorded once) */
  RtProducer prod;        /* the network's view of the producers */
  RtConsumer rowc;        /* forwards result rows to CONSUMER PMs */
  TqBuf explain, stats;
  double startWall;
  tq_pm_info *pinfo;
  tq_sensor_info *sinfo;
  const char *sampleRelName;
  /* collection: the records of the producers called at one snapshot */
  int gathering;          /* gProduce holds records instead of processing them */
  Gathered *gat;
  int ngat, cgat;
  TqArena *gatArena;
  int announced;          /* the extractor announced its whole intervals (g->announce_whole) */
  const tq_pm *const *offered; /* PMs loadable by name (enOffer) */
  int noffered;
  int held;               /* the program and the network are the caller's (enBind) */
  int64_t maxTicks;       /* the most Clock and delta ticks a replay makes (0: no bound) */
  RtPrograms programs;    /* the program list: `monitor programs` and the option "programs" */
  int64_t nticks;         /* a replay's ticks so far */
};

/* A replay ticks its Clock over the recording's whole span, also where no
** record comes: a recording with a far time (5 lines, one at 2562047h)
** would tick for hours.  Ten million ticks (about 15 s) bounds it; a
** recording with a range is refused before it starts, one without stops
** there; --max-ticks changes the bound. */
#define EN_MAX_TICKS 10000000

static tq_engine *enOf(tq_pm_global *g) { return (tq_engine *)g; }
static int fail(tq_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
CpProgram *enProgram(tq_pm_global *g) { return enOf(g)->prog; }
RtNet *enNet(tq_pm_global *g) { return enOf(g)->net; }
TqDiag *enDiag(tq_pm_global *g) { return &enOf(g)->diag; }
static void enSetTotal(tq_pm_global *g, int64_t n) { enOf(g)->packetsTotal = n; }
/* The time range of the recording being extracted (for Clock ticks and
** `now`): an extractor's g->set_range. */
static void enSetRange(tq_pm_global *g, TqTime first, TqTime last) {
  tq_engine *e = enOf(g);
  e->first = first;
  e->last = last;
  e->rangeSet = 1;
  if (e->net) e->net->opt.nowValue = e->opt.nowValue = last;
}

static EnPm *pmOfPriv(tq_engine *e, tq_pm_private *p) {
  for (int i = 0; i < e->npm; i++)
    if (&e->pm[i]->priv == p) return e->pm[i];
  return NULL;
}

void enAttachConsumer(tq_pm_global *g, tq_pm_private *p, RtConsumer *c) {
  EnPm *m = pmOfPriv(enOf(g), p);
  if (m) m->rc = c;
}

/* ================================================================ global context services */

static void gLog(tq_pm_global *g, tq_pm_private *p, int level, const char *fmt, ...) {
  tq_engine *e = enOf(g);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  EnPm *m = p ? pmOfPriv(e, p) : NULL;
  if (p && p->message != msg) {
    size_t n = strlen(msg);
    if (n >= sizeof p->message) n = sizeof p->message - 1;
    memmove(p->message, msg, n);
    p->message[n] = 0;
  }
  if (level > g->trace_level) return;
  static const char *lv[] = {"error", "warning", "info", "debug"};
  fprintf(stderr, "tqmon: %s%s%s: %s\n", m ? m->pm->name : "", m ? ": " : "", lv[level < 0 ? 0 : level > 3 ? 3 : level], msg);
}

static int gRelation(tq_pm_global *g, const char *name) {
  tq_engine *e = enOf(g);
  if (!e->prog) return -1;
  AlgRel *r = algCatRel(&e->prog->cat, name);
  return r ? r->id : -1;
}
static const AlgRel *relOf(tq_engine *e, int rel) {
  if (!e->prog || rel < 1 || rel > e->prog->cat.rels.n) return NULL;
  return e->prog->cat.rels.v[rel - 1];
}
static int gAttribute(tq_pm_global *g, int rel, const char *name) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? algRelAttr(r, name) : -1;
}
static int gNattributes(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->nattr : -1;
}
static int gIsEvent(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->isEvent : -1;
}
static int64_t gSymbol(tq_pm_global *g, const char *text, int len) {
  return tqSym(text, len < 0 ? strlen(text) : (size_t)len);
}
static const char *gSymbolName(tq_pm_global *g, int64_t sym) { return tqSymName((int32_t)sym); }
static int64_t gEnumValue(tq_pm_global *g, int rel, int attr, const char *name) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r || attr < 0 || attr >= r->nattr || r->attr[attr].type.kind != TY_ENUM) return -1;
  const AlgEnum *en = r->attr[attr].type.en;
  for (int i = 0; i < en->n; i++)
    if (!strcasecmp(en->names[i], name)) return i;
  return -1;
}
static int gAttributeType(tq_pm_global *g, int rel, int attr, const char **entity) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r || attr < 0 || attr >= r->nattr) return 0;
  static const int codes[] = {0, TQ_TY_INT, TQ_TY_FLOAT, TQ_TY_STRING, TQ_TY_ENUM, TQ_TY_ENTITY, 0, 0};
  const AlgType *t = &r->attr[attr].type;
  if (entity && t->kind == TY_ENTITY) *entity = t->ent->name;
  return (int)t->kind < (int)TQ_ARRAY_SIZE(codes) ? codes[t->kind] : 0;
}
static int gRelationMode(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r) return 0;
  if (r->entity) return TQ_MODE_ENTITY;
  if (r->deltaOf) return TQ_MODE_DELTA;
  return r->mode == ALG_MODE_SAMPLED ? TQ_MODE_SAMPLED : r->mode == ALG_MODE_DISABLE ? TQ_MODE_DISABLE : TQ_MODE_TRACED;
}
static int gProgramWanted(tq_pm_global *g, int64_t pid, const char *command) {
  tq_engine *e = enOf(g);
  if (!command) return e->programs.n == 0;
  return rtProgramsWanted(&e->programs, pid, command);
}
static int needed(tq_engine *e, int rel);
static int gNeeded(tq_pm_global *g, int rel) {
  tq_engine *e = enOf(g);
  if (!e->net || rel < 1 || rel > e->net->nsensor) return 0;
  return needed(e, rel);
}
static int gEnabled(tq_pm_global *g, int rel, int64_t entity) {
  tq_engine *e = enOf(g);
  if (!e->net || rel < 1 || rel > e->net->nsensor) return 0;
  RtSensor *s = &e->net->sensor[rel - 1];
  if (s->rel->entity) return 1;
  return rtSensorEnabled(s, entity);
}

static void processInstant(tq_engine *e);
static void tickTo(tq_engine *e, TqTime t);
static int pmStatus(tq_engine *e, EnPm *m, int st);

static TqTime recTime(const tq_record *r) {
  switch (r->kind) {
    case TQ_REC_BEGIN: return r->from;
    case TQ_REC_END:
    case TQ_REC_WHOLE: return r->to;
    default: return r->t;
  }
}

/* Moves time to t: the gathered instant is processed, Clock ticks and
** snapshot boundaries in between are handled. */
static int gAdvance(tq_pm_global *g, tq_time t) {
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

static TqTime enMinPending(void *self, RtSensor *s);

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
static int wholeTooLate(tq_engine *e, const tq_record *r) {
  RtNet *net = e->net;
  if (!net || !e->rs[r->rel - 1].tracked || r->from >= r->to) return 0;
  RtSensor *s = &net->sensor[r->rel - 1];
  if (!net->flushEnables && net->armDue > r->to && !rtSensorEnabled(s, r->vals[s->rel->flagAttr])) return 0;
  return r->from < enMinPending(e, s);
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

static int gProduce(tq_pm_global *g, const tq_record *r) {
  tq_engine *e = enOf(g);
  if (e->halted) return -1;
  TqTime t = recTime(r);
  const AlgRel *rel = relOf(e, r->rel);
  if (!rel || r->nvals != rel->nattr) {
    gLog(g, NULL, TQ_LOG_ERROR, "record of relation %d with %d values rejected", r->rel, r->nvals);
    return -1;
  }
  if (!kindFits(rel, r->kind)) {
    gLog(g, NULL, TQ_LOG_ERROR, "record of kind %d for the %s relation %s rejected", r->kind,
         rel->isEvent ? "event" : "interval", rel->name);
    return -1;
  }
  if (e->gathering) return gather(e, r, t);
  /* never before the instant being gathered, nor before the network's time */
  TqTime floor = e->haveInstant ? e->instant : e->net ? e->net->now : t;
  if (t < floor) {
    gLog(g, NULL, TQ_LOG_ERROR, "record of %s at %lld is earlier than %lld: dropped", rel->name, (long long)t,
         (long long)floor);
    return -1;
  }
  if (!e->haveInstant || t > e->instant) {
    if (e->haveInstant) processInstant(e);
    tickTo(e, t);
    e->instant = t;
    e->haveInstant = 1;
  }
  if (r->kind == TQ_REC_WHOLE && wholeTooLate(e, r)) {
    gLog(g, NULL, TQ_LOG_ERROR, "whole interval of %s from %lld comes after the queries went past its begin: dropped%s",
         rel->name, (long long)r->from,
         e->extractor ? " (an extractor announces its whole intervals at START: g->announce_whole)"
                      : " (a producer gives its begin when it begins)");
    return -1;
  }
  int nv = r->nvals;
  InstRec *ir = tqArenaAllocRaw(e->instArena, sizeof(InstRec) + sizeof(int64_t) * (size_t)(nv ? nv : 1));
  ir->r = *r;
  for (int k = 0; k < nv; k++) ir->vals[k] = r->vals[k]; /* a few: no call */
  ir->r.vals = ir->vals;
  if (e->ninst == e->cinst) {
    e->cinst = e->cinst ? 2 * e->cinst : 256;
    e->inst = tqRealloc(e->inst, sizeof(InstRec *) * (size_t)e->cinst);
  }
  e->inst[e->ninst++] = ir;
  e->packets++;
  if (t > e->lastSeen) e->lastSeen = t;
  return 0;
}

static void gHalt(tq_pm_global *g) { enOf(g)->halted = 1; }

static int gSetRange(tq_pm_global *g, tq_time first, tq_time last, int64_t records) {
  tq_engine *e = enOf(g);
  if (!e->extractor || e->packets || e->haveInstant || first > last || first <= TQ_BEGINNING || last >= TQ_FOREVER) {
    gLog(g, NULL, TQ_LOG_WARNING,
         "set_range ignored: only an extraction, before its first record, with beginning < first <= last < forever");
    return -1;
  }
  enSetRange(g, first, last);
  if (records >= 0) enSetTotal(g, records);
  /* the ticks of the whole recording, known before its first record (and
  ** before the consumers start: nothing is stored) */
  if (e->maxTicks > 0 && e->net) {
    TqTime tick = e->prog->cat.tick, gcd = e->net->clockGcd;
    int deltas = 0;
    for (int i = 0; i < e->net->nsensor; i++) deltas |= e->net->sensor[i].rel->deltaOf && e->net->sensor[i].used;
    uint64_t n = 0;
    if (gcd) n += ((uint64_t)last - (uint64_t)tqTickAtOrAfter(first, gcd)) / (uint64_t)gcd + 1;
    if (deltas) n += ((uint64_t)last - (uint64_t)tqTickAtOrAfter(first, tick)) / (uint64_t)tick + 1;
    if (n > (uint64_t)e->maxTicks) {
      char t1[64], t2[64], t3[64];
      tqErrorAt(&e->diag, e->extractor->priv.args,
                "the recording spans %s to %s: ticking every %s over it is %llu ticks, more than the %lld a replay makes "
                "(give a coarser clock, Clock[n], or --max-ticks N, 0 for no bound)",
                tqTimeFormat(t1, sizeof t1, first), tqTimeFormat(t2, sizeof t2, last), tqTimeFormat(t3, sizeof t3, gcd ? gcd : tick),
                (unsigned long long)n, (long long)e->maxTicks);
      e->fatal = e->halted = 1;
      return -1;
    }
  }
  return 0;
}

/* ================================================================ sample requests */

static int alive(tq_engine *e, const AlgRel *rel, int attr, int64_t v);
static void snapAdd(tq_engine *e, const tq_record *r);
static void toConsumers(tq_engine *e, const tq_record *r, int all);

/* The answers to a sample request go to the network and, once per
** (relation, asked entity, time), to the consumers as SAMPLE records. */
typedef struct AnswerCtx {
  tq_engine *e;
  void *cookie;        /* the network's request (rtSampleAnswer) */
  const AlgRel *rel;
  TqTime t;
  int record;
  void (*sink)(void *ctx, const int64_t *vals); /* the engine's own request (deltas) */
  void *sinkCtx;
} AnswerCtx;

static void answer(AnswerCtx *a, const int64_t *vals) {
  if (a->sink) a->sink(a->sinkCtx, vals);
  else rtSampleAnswer(a->cookie, vals);
  if (a->record) {
    tq_record r = {0};
    r.rel = a->rel->id;
    r.kind = TQ_REC_SAMPLE;
    r.t = a->t;
    r.nvals = a->rel->nattr;
    r.vals = vals;
    toConsumers(a->e, &r, 0);
    if (!a->e->extractor) toConsumers(a->e, &r, 1); /* a live sample is a record of its own */
    snapAdd(a->e, &r);
  }
}

static int gSampleAnswer(tq_pm_global *g, void *cookie, const int64_t *vals) {
  answer(cookie, vals);
  return 0;
}

static int alive(tq_engine *e, const AlgRel *rel, int attr, int64_t v) {
  const AlgEntity *ent = rel->attr[attr].type.ent;
  if (!ent) return 1;
  const RelState *r = &e->rs[ent->rel->id - 1];
  return v >= 0 && v < r->aliveCap && r->aliveN[v] > 0;
}

/* The tuples of rel whose attribute attr is who, at t, each to ac: from the
** recorded state in an extraction, from the producer in a collection. */
static void sampleRel(tq_engine *e, const AlgRel *rel, int attr, int64_t who, TqTime t, AnswerCtx *ac0) {
  if (!alive(e, rel, attr, who)) return; /* a sensor lives in its entity */
  EnPm *p = e->producerOf[rel->id - 1];
  AnswerCtx ac = *ac0;
  uint64_t key = tqHash64(((uint64_t)rel->id << 48) ^ (uint64_t)who ^ ((uint64_t)attr << 40)) | 2;
  if (!tqMapGet(&e->sampled, key)) {
    tqMapPut(&e->sampled, key, e);
    ac.record = 1;
  }
  if (e->extractor || !p) {
    /* from the recorded state: open intervals valid at t, and samples taken at t */
    RelState *r = &e->rs[rel->id - 1];
    for (int i = 0; i < r->nopen; i++) {
      OpenIv *iv = r->open[i];
      if (iv->vals[attr] != who || iv->from > t) continue;
      if (rel->flagAttr != attr && !alive(e, rel, rel->flagAttr, iv->vals[rel->flagAttr])) continue;
      answer(&ac, iv->vals);
    }
    for (int i = 0; i < e->ninst; i++) {
      const tq_record *rr = &e->inst[i]->r;
      if (rr->kind != TQ_REC_SAMPLE && !(rr->kind == TQ_REC_EVENT && rel->isEvent)) continue;
      if (rr->rel != rel->id || rr->t != t || rr->vals[attr] != who) continue;
      answer(&ac, rr->vals);
    }
    return;
  }
  if (p->priv.disabled || !p->pm->sample) return;
  p->calls++;
  if (p->multi) p->priv.rel = rel->id;
  pmStatus(e, p, p->pm->sample(&e->g, &p->priv, attr, who, t, &ac));
}

/* The network asks for the tuples of s whose attribute attr is who, at t. */
static void enSample(void *self, RtSensor *s, int attr, int64_t who, TqTime t, void *cookie) {
  tq_engine *e = self;
  AnswerCtx ac = {e, cookie, s->rel, t, 0, NULL, NULL};
  sampleRel(e, s->rel, attr, who, t, &ac);
}

/* Drops the closed and the delivered intervals from the front of the
** begin-order queue (a closed one is freed once the queue lets it go). */
static void fifoTrim(RelState *r) {
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

/* g->needed_records (version 8): which records of relation rel the
** operation needs (rtNetNeed), from an extractor's START on.  Every record
** while a CONSUMER takes records or a FILTER is loaded. */
static int gNeededRecords(tq_pm_global *g, int rel, int64_t entity) {
  tq_engine *e = enOf(g);
  int any = entity == TQ_PM_NEED_ANY;
  if (!e->net || e->allRecords || e->collectors || e->filters) return any ? TQ_PM_NEED_ALL : 1;
  return rtNetNeed(e->net, rel, entity); /* (RT_NEED_* are TQ_PM_NEED_*) */
}

/* g->sample_period (version 8): rtNetSamplePeriod, under the same
** conditions. */
static tq_time gSamplePeriod(tq_pm_global *g, int rel) {
  tq_engine *e = enOf(g);
  if (!e->net || e->allRecords || e->collectors || e->filters) return 0;
  return rtNetSamplePeriod(e->net, rel);
}

/* g->announce_whole (version 3): announceWhole for any extractor, at
** START only (before its first record), with a time a record can have. */
static int gAnnounceWhole(tq_pm_global *g, int rel, tq_time from) {
  tq_engine *e = enOf(g);
  const AlgRel *r = relOf(e, rel);
  if (!e->extractor || e->packets || e->haveInstant || !r || from <= TQ_BEGINNING || from >= TQ_FOREVER) {
    gLog(g, NULL, TQ_LOG_WARNING,
         "announce_whole ignored: only an extraction, before its first record, for a relation of the program, "
         "with beginning < from < forever");
    return -1;
  }
  announceWhole(e, rel, from);
  return 0;
}

/* g->set_start (version 4): a collection's first time, from its
** timer's START (the realtime clock: CLOCK_REALTIME ns; pcp: an archive's). */
static int gSetStart(tq_pm_global *g, tq_time t) {
  tq_engine *e = enOf(g);
  if (!e->starting || e->extractor || t <= TQ_BEGINNING || t >= TQ_FOREVER) {
    gLog(g, NULL, TQ_LOG_WARNING,
         "set_start ignored: only a collection, at START, with beginning < t < forever");
    return -1;
  }
  e->startTime = t;
  e->haveStart = 1;
  e->g.now = t;
  return 0;
}

/* g->counts (version 4): how far the operation is, for MONITORs. */
static void gCounts(tq_pm_global *g, int64_t *records, int64_t *snapshots) {
  tq_engine *e = enOf(g);
  if (records) *records = e->packets;
  if (snapshots) *snapshots = e->snapSeq;
}

/* ---------------------------------------------------------------- version 6 */

static const char *gRelationName(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->name : NULL;
}

static const char *jsonBlank(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  return s;
}
/* Skips one JSON value at s (after blanks).  Returns the text after it, or
** NULL when s does not start with one (depth bounds the nesting). */
static const char *jsonSkip(const char *s, int depth) {
  s = jsonBlank(s);
  if (depth > 64) return NULL;
  if (*s == '{' || *s == '[') {
    char close = *s == '{' ? '}' : ']';
    int obj = *s == '{';
    s++;
    s = jsonBlank(s);
    if (*s == close) return s + 1;
    for (;;) {
      if (obj) {
        s = jsonBlank(s);
        if (*s != '"' || !(s = jsonSkip(s, depth + 1))) return NULL;
        s = jsonBlank(s);
        if (*s++ != ':') return NULL;
      }
      if (!(s = jsonSkip(s, depth + 1))) return NULL;
      s = jsonBlank(s);
      if (*s == close) return s + 1;
      if (*s++ != ',') return NULL;
    }
  }
  if (*s == '"') {
    for (s++; *s && *s != '"'; s++) {
      if ((unsigned char)*s < 0x20) return NULL;
      if (*s == '\\' && !*++s) return NULL;
    }
    return *s ? s + 1 : NULL;
  }
  if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4)) return s + 4;
  if (!strncmp(s, "false", 5)) return s + 5;
  char *end;
  if (*s != '-' && (*s < '0' || *s > '9')) return NULL;
  strtod(s, &end);
  return end > s ? end : NULL;
}

static int gSetDetail(tq_pm_global *g, tq_pm_private *p, const char *json) {
  EnPm *m = pmOfPriv(enOf(g), p);
  if (!m) return -1;
  if (json) {
    const char *end = jsonSkip(json, 0);
    if (end) end = jsonBlank(end);
    if (!end || *end) {
      gLog(g, p, TQ_LOG_WARNING, "set_detail ignored: not one JSON value");
      return -1;
    }
  }
  free(m->detail);
  m->detail = json ? tqStrdup(json) : NULL;
  return 0;
}

/* A whole interval came: if announced, its begin no longer holds the mark
** (enMinPending drops it).  One that was not announced changes nothing. */
static void annCame(RelState *r, TqTime from) {
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
static TqTime enMinPending(void *self, RtSensor *s) {
  tq_engine *e = self;
  RelState *r = &e->rs[s->rel->id - 1];
  if (!r->tracked) return TQ_FOREVER;
  fifoTrim(r);
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

static uint64_t ivKey(int rel, uint64_t id) { return tqHash64((uint64_t)rel * 0x9e3779b97f4a7c15ULL ^ id) | 2; }

static OpenIv *openBegin(tq_engine *e, TqMap *m, const tq_record *r) {
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
static OpenIv *openEnd(tq_engine *e, TqMap *m, const tq_record *r) {
  OpenIv *iv = tqMapDel(m, ivKey(r->rel, r->id));
  if (!iv) return NULL;
  RelState *rs = &e->rs[r->rel - 1];
  OpenIv *last = rs->open[--rs->nopen];
  rs->open[iv->pos] = last;
  last->pos = iv->pos;
  iv->pos = -1;
  return iv;
}

static void releaseIv(RelState *rs, OpenIv *iv) {
  /* the begin-order queue still holds it unless it was dropped from it */
  if (iv->emitted & 2) {
    iv->nextFree = rs->freeIv;
    rs->freeIv = iv;
  }
}

/* ================================================================ delivery */

static void toConsumers(tq_engine *e, const tq_record *r, int all) {
  if (!(all ? e->allRecords : e->collectors)) return;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!(m->priv.caps & TQ_PM_CONSUMER) || m->priv.disabled || !m->pm->record) continue;
    if (!(m->priv.sync & TQ_PM_SYNC_ALL_RECORDS) != !all) continue;
    m->calls++;
    pmStatus(e, m, m->pm->record(&e->g, &m->priv, r));
  }
}

/* A record delivered to the queries goes into the forming snapshot's
** record set. */
static void snapAdd(tq_engine *e, const tq_record *r) {
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
static void deliver(tq_engine *e, const tq_record *r, OpenIv *iv, int active) {
  RtNet *net = e->net;
  RtSensor *s = &net->sensor[r->rel - 1];
  const AlgRel *rel = s->rel;
  if (rel->entity || rel->mode == ALG_MODE_SAMPLED || !s->used) return;
  int f = rel->flagAttr;
  if (!active) {
    /* a begin while its flag entity exists: remembered for its end */
    if (r->kind == TQ_REC_BEGIN && iv && alive(e, rel, f, r->vals[f])) iv->emitted |= 4;
    return;
  }
  if (r->kind == TQ_REC_EVENT || r->kind == TQ_REC_DELTA) {
    if (rtSensorEnabled(s, r->vals[f]) && alive(e, rel, f, r->vals[f]) && !filtered(e, r)) {
      rtDeliverEvent(net, s, r->t, r->vals);
      if (!rel->deltaOf) toConsumers(e, r, 0); /* deltas are computed again from the samples */
      snapAdd(e, r);
    }
    return;
  }
  if (r->kind == TQ_REC_BEGIN) {
    int live = alive(e, rel, f, r->vals[f]);
    if (iv && live) iv->emitted |= 4;
    if (iv && rtSensorEnabled(s, r->vals[f]) && live && !filtered(e, r)) {
      iv->emitted |= 1;
      rtDeliverBegin(net, s, r->id, r->from, r->vals);
      snapAdd(e, r);
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
    if (emitted || (rtSensorEnabled(s, r->vals[f]) && seen && !filtered(e, r))) {
      rtDeliverEnd(net, s, r->id, r->from, r->to, r->vals);
      tq_record c = *r;
      if (!emitted) c.kind = TQ_REC_WHOLE; /* delivered whole: its begin was not */
      snapAdd(e, &c);
    }
  }
}

static TqMap *ivm(tq_engine *e);

static void computeDeltas(tq_engine *e, TqTime t);
static void sampleEverything(tq_engine *e, TqTime t);

/* The ticks at t, part of instant t: the network's Clock ticks (sampled
** alphas ask for samples) and the delta relations'. */
static void ticksAt(tq_engine *e, TqTime t) {
  if (e->extractor && (e->nextTick == t || e->deltaNext == t) && e->maxTicks > 0 && ++e->nticks > e->maxTicks) {
    char tb[64];
    fail(e, "the replay stops at %s: it has ticked its Clock %lld times, the bound (a recording that spans a long time "
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
    computeDeltas(e, t);
    if (e->sampleAll) sampleEverything(e, t);
    e->deltaNext = tqTimeAdd(t, e->prog->cat.tick);
  }
}

/* An entity begins (+1) or ends (-1) one of its tuples. */
static void aliveAdd(RelState *r, int64_t v, int d) {
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

/* Warns once per (query, entity) when a query names an entity (a constant
** in an alpha's argument or compared with an entity attribute) that never
** existed during the run although its entity relation was collected: the
** query's condition on it selected nothing (a pid or a CPU that is not
** there, a misspelt name).  Never silent about an answer empty for that. */
static void warnAbsentExpr(tq_engine *e, const char *qname, const AlgExpr *x, TqMap *said);
static void warnAbsentOne(tq_engine *e, const char *qname, const AlgEntity *ent, int64_t v, TqMap *said) {
  if (!ent || !ent->rel || v < 0) return;
  RelState *r = &e->rs[ent->rel->id - 1];
  if (!r->nbegun || (v < r->everCap && r->ever[v])) return; /* not collected, or it existed */
  uint64_t key = tqHash64((uint64_t)v * 31 + (uint64_t)ent->rel->id) | 2;
  if (tqMapGet(said, key)) return;
  tqMapPut(said, key, (void *)1);
  gLog(&e->g, NULL, TQ_LOG_WARNING, "%s names the %s %s, which did not exist during the run: nothing came of it", qname,
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
  OpenIv **ivs = tqArenaAllocRaw(e->instArena, sizeof(OpenIv *) * (size_t)(e->ninst ? e->ninst : 1));
  int consumers = e->allRecords || e->collectors;
  for (int i = 0; i < e->ninst; i++) {
    tq_record *r = &e->inst[i]->r;
    RtSensor *s = &net->sensor[r->rel - 1];
    s->recorded++;
    RelState *rs = &e->rs[r->rel - 1];
    ivs[i] = NULL;
    if (r->kind == TQ_REC_WHOLE && e->announced && rs->tracked) annCame(rs, r->from);
    if (r->kind == TQ_REC_BEGIN) {
      if (rs->state) ivs[i] = openBegin(e, m, r);
      if (s->rel->entity) aliveAdd(rs, r->vals[0], 1);
    } else if (r->kind == TQ_REC_END) {
      if (rs->state) ivs[i] = openEnd(e, m, r);
      if (s->rel->entity) aliveAdd(rs, r->vals[0], -1);
    }
    /* every record, to the consumers that want them all; what the run
    ** collected, to the others: the entities (a sensor lives in its
    ** entity), the begins and ends of the traced relations a query uses
    ** (the engine holds them to deliver an interval whole), delivered
    ** events and samples (below).  Replaying what was collected gives the
    ** same results. */
    if (consumers) {
      if (e->allRecords) toConsumers(e, r, 1);
      if (e->collectors && r->kind != TQ_REC_EVENT && r->kind != TQ_REC_SAMPLE && (s->rel->entity || rs->tracked))
        toConsumers(e, r, 0);
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
    if (s->sources.n) snapAdd(e, r);
  }
  /* 4. clock ticks, deltas */
  ticksAt(e, t);
  /* 5. sensor records */
  for (int i = 0; i < e->ninst; i++) {
    tq_record *r = &e->inst[i]->r;
    if (r->kind == TQ_REC_SAMPLE) continue;
    deliver(e, r, ivs[i], active);
    if (r->kind == TQ_REC_END && ivs[i]) releaseIv(&e->rs[r->rel - 1], ivs[i]);
  }
  for (int i = 0; i < e->nrel; i++)
    if (e->rs[i].tracked && e->rs[i].fn) fifoTrim(&e->rs[i]);
  if (active) rtNetEndInstant(net);
  if (e->sampled.n) tqMapFree(&e->sampled);
  e->ninst = 0;
  tqArenaReset(e->instArena);
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
static void computeDeltas(tq_engine *e, TqTime t) {
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
        sampleRel(e, b, b->flagAttr, who[k], t, &ac);
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
      deliver(e, &r, NULL, 1); /* at a tick: the network advanced */
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
static void sampleEverything(tq_engine *e, TqTime t) {
  for (int i = 0; i < e->nrel; i++) {
    const AlgRel *r = e->prog->cat.rels.v[i];
    if (r->mode != ALG_MODE_SAMPLED || !e->producerOf[i] || r->flagAttr < 0) continue;
    const AlgEntity *ent = r->attr[r->flagAttr].type.ent;
    if (!ent) continue;
    const RelState *es = &e->rs[ent->rel->id - 1];
    for (int64_t v = 0; v < es->aliveCap; v++) {
      if (es->aliveN[v] <= 0) continue;
      AnswerCtx ac = {e, NULL, r, t, 0, discardSample, NULL};
      sampleRel(e, r, r->flagAttr, v, t, &ac);
    }
  }
}

/* ================================================================ snapshots */

static int64_t callPm(tq_engine *e, EnPm *m, int what, const tq_record_set *rs);

static void closeSnapshot(tq_engine *e, TqTime t) {
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
    callPm(e, m, TQ_PM_SNAPSHOT_END, own);
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
      closeSnapshot(e, nb);
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

/* ================================================================ PM calls */

/* Acts on the status a PM returned from any of its functions: a warning is
** logged; an error disables the PM and tells the PMs that depend on it; a
** fatal status stops the operation.  Returns st. */
static int pmStatus(tq_engine *e, EnPm *m, int st) {
  m->priv.status = st;
  int reported = e->diag.nerr > 0; /* a built-in PM reported with file:line:col */
  if (st == TQ_PM_WARNING) {
    if (!reported) gLog(&e->g, &m->priv, TQ_LOG_WARNING, "%s", m->priv.message[0] ? m->priv.message : "a warning");
  } else if (st == TQ_PM_ERROR) {
    if (!reported)
      gLog(&e->g, &m->priv, TQ_LOG_WARNING, "disabled after an error%s%s", m->priv.message[0] ? ": " : "", m->priv.message);
    m->priv.disabled = 1;
    /* tell the PMs that depend on it; one that disables itself in turn
    ** tells its own dependents, one that is fatal stops the operation */
    for (int i = 0; i < e->npm; i++) {
      EnPm *d = e->pm[i];
      for (int k = 0; k < d->priv.ndepends; k++)
        if (!strcasecmp(d->priv.depends[k], m->pm->name)) {
          if (!d->priv.disabled) callPm(e, d, TQ_PM_DEP_DISABLED, NULL);
          break;
        }
    }
  } else if (st == TQ_PM_FATAL) {
    if (!reported)
      gLog(&e->g, &m->priv, TQ_LOG_ERROR, "fatal error%s%s: stopping", m->priv.message[0] ? ": " : "", m->priv.message);
    e->fatal = e->halted = 1;
  }
  return st;
}

static int64_t callPm(tq_engine *e, EnPm *m, int what, const tq_record_set *rs) {
  if (!m->pm->call) return TQ_PM_OK;
  m->calls++;
  return pmStatus(e, m, m->pm->call(&e->g, &m->priv, what, rs));
}

/* ================================================================ registry */

tq_engine *enNew(void) {
  tq_engine *e = tqCalloc(1, sizeof *e);
  e->g.version = TQ_PM_VERSION;
  e->g.engine = e;
  e->g.trace_level = TQ_LOG_WARNING;
  e->g.log = gLog;
  e->g.relation = gRelation;
  e->g.attribute = gAttribute;
  e->g.nattributes = gNattributes;
  e->g.is_event = gIsEvent;
  e->g.symbol = gSymbol;
  e->g.symbol_name = gSymbolName;
  e->g.enum_value = gEnumValue;
  e->g.enabled = gEnabled;
  e->g.produce = gProduce;
  e->g.sample_answer = gSampleAnswer;
  e->g.advance = gAdvance;
  e->g.halt = gHalt;
  e->g.set_range = gSetRange;
  e->g.announce_whole = gAnnounceWhole;
  e->g.set_start = gSetStart;
  e->g.counts = gCounts;
  e->g.needed = gNeeded;
  e->g.attribute_type = gAttributeType;
  e->g.relation_mode = gRelationMode;
  e->g.relation_name = gRelationName;
  e->g.set_detail = gSetDetail;
  e->g.program_wanted = gProgramWanted;
  e->g.needed_records = gNeededRecords;
  e->g.sample_period = gSamplePeriod;
  e->opt.nowValue = TQ_OPEN;
  e->maxTicks = EN_MAX_TICKS;
  e->instArena = tqArenaNew();
  const char *env = getenv("TQMON_PM_PATH");
  if (env) e->pmPath = tqStrdup(env);
  return e;
}

static int fail(tq_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tq_engine *e, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tqErrorAt(&e->diag, NULL, "%s", msg);
  return -1;
}

static void collectErrors(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->diag.out.s) tqBufPuts(&e->errs, e->diag.out.s);
  int cap = e->diag.maxerr ? e->diag.maxerr : 50;
  if (e->diag.nerr > cap) tqBufPrintf(&e->errs, "(%d more errors not shown)\n", e->diag.nerr - cap);
  tqDiagFree(&e->diag);
  memset(&e->diag, 0, sizeof e->diag);
}

const char *tq_errors(tq_engine *e) { return e->errs.s ? e->errs.s : ""; }

int tq_set_option(tq_engine *e, const char *name, const char *value) {
  tqBufFree(&e->errs);
  if (!strcmp(name, "pm-path")) {
    free(e->pmPath);
    e->pmPath = tqStrdup(value);
  } else if (!strcmp(name, "no-opt")) {
    e->opt.noOpt = atoi(value) != 0;
  } else if (!strcmp(name, "programs")) {
    /* comma-separated patterns, added to the program's own */
    char *all = tqStrdup(value), *save = NULL;
    TqBuf why = {0};
    for (char *w = strtok_r(all, ",", &save); w; w = strtok_r(NULL, ",", &save))
      if (rtProgramsAdd(&e->programs, w, &why)) break;
    if (!*value) rtProgramsAdd(&e->programs, value, &why);
    free(all);
    if (why.n) {
      fail(e, "--programs: %s", why.s);
      tqBufFree(&why);
      collectErrors(e);
      return -1;
    }
  } else if (!strcmp(name, "trace-level")) {
    e->g.trace_level = atoi(value);
  } else if (!strcmp(name, "time-limit")) {
    e->opt.timeLimit = atof(value);
  } else if (!strcmp(name, "max-ticks")) {
    char *end;
    long long v = strtoll(value, &end, 10);
    if (*value < '0' || *value > '9' || *end || v < 0) {
      fail(e, "max-ticks needs a count of ticks (0: no bound), not '%s'", value);
      collectErrors(e);
      return -1;
    }
    e->maxTicks = v;
  } else {
    fail(e, "unknown option '%s'", name);
    collectErrors(e);
    return -1;
  }
  return 0;
}

static EnPm *findPm(tq_engine *e, const char *name) {
  for (int i = 0; i < e->npm; i++)
    if (!strcasecmp(e->pm[i]->pm->name, name)) return e->pm[i];
  return NULL;
}

static int registerName(tq_engine *e, const char *name, const char *args, int depth);

/* Loads pm: init with a fresh private context (data set to data first),
** a GROUPER's members after it.  Returns 0 or -1. */
static int addPm(tq_engine *e, const tq_pm *pm, const char *args, void *dl, void *data) {
  if (!pm || pm->version < TQ_PM_VERSION_MIN || pm->version > TQ_PM_VERSION)
    return fail(e, "processor module %s: interface version %d, this engine speaks %d to %d",
                pm && pm->name ? pm->name : "?", pm ? pm->version : 0, TQ_PM_VERSION_MIN, TQ_PM_VERSION);
  if (!pm->name || !pm->init) return fail(e, "processor module without a name or init function");
  EnPm *old = findPm(e, pm->name);
  if (old) {
    /* registered already (a grouper member, say): arguments given now win;
    ** the same PM with other arguments is a second instance */
    if (!args || (old->priv.args && !strcmp(old->priv.args, args))) return 0;
    if (!old->priv.args) {
      old->argsCopy = tqStrdup(args);
      old->priv.args = old->argsCopy;
      tq_pm_private fresh = {0};
      fresh.rel = -1;
      fresh.args = old->priv.args;
      old->priv = fresh;
      return pm->init(&e->g, &old->priv) == TQ_PM_OK ? 0 : fail(e, "processor module %s failed to initialize", pm->name);
    }
  }
  EnPm *m = tqCalloc(1, sizeof *m);
  m->pm = pm;
  m->dl = dl;
  m->priv.rel = -1;
  m->priv.data = data;
  if (args) {
    m->argsCopy = tqStrdup(args);
    m->priv.args = m->argsCopy;
  }
  int st = pm->init(&e->g, &m->priv);
  if (st != TQ_PM_OK && st != TQ_PM_WARNING) {
    fail(e, "processor module %s failed to initialize%s%s", pm->name, m->priv.message[0] ? ": " : "", m->priv.message);
    free(m->argsCopy);
    free(m);
    return -1;
  }
  if (e->npm == e->cpm) {
    e->cpm = e->cpm ? 2 * e->cpm : 16;
    e->pm = tqRealloc(e->pm, sizeof(EnPm *) * (size_t)e->cpm);
  }
  e->pm[e->npm++] = m;
  if (m->priv.caps & TQ_PM_GROUPER) {
    for (int i = 0; i < m->priv.nmembers; i++) {
      int before = e->npm;
      if (registerName(e, m->priv.members[i], NULL, 1)) return -1;
      for (int k = before; k < e->npm; k++) e->pm[k]->member = 1;
    }
  }
  return 0;
}

int tq_register_pm(tq_engine *e, const tq_pm *pm, const char *args) {
  tqBufFree(&e->errs);
  if (e->state) {
    fail(e, "processor modules are registered before tq_prepare");
    collectErrors(e);
    return -1;
  }
  int rc = addPm(e, pm, args, NULL, NULL);
  collectErrors(e);
  return rc;
}

int enRegisterData(tq_engine *e, const tq_pm *pm, const char *args, void *data) {
  tqBufFree(&e->errs);
  int rc = e->state ? fail(e, "processor modules are registered before tq_prepare") : addPm(e, pm, args, NULL, data);
  collectErrors(e);
  return rc;
}

void enOffer(tq_engine *e, const tq_pm *const *pms, int n) {
  e->offered = pms;
  e->noffered = n;
}

/* Loads NAME.so from the PM path (only directories the user named). */
static int loadShared(tq_engine *e, const char *name, const char *args) {
  if (!e->pmPath || !*e->pmPath)
    return fail(e, "no processor module '%s': not built in, and no PM path is set (--pm-path or TQMON_PM_PATH)", name);
  if (strchr(name, '/')) return fail(e, "processor module name '%s' may not contain '/'", name);
  char *path = tqStrdup(e->pmPath);
  int rc = -1;
  int found = 0;
  for (char *dir = strtok(path, ":"); dir; dir = strtok(NULL, ":")) {
    if (!*dir) continue;
    char *file = tqMprintf("%s/%s.so", dir, name);
    if (access(file, F_OK) != 0) {
      free(file);
      continue;
    }
    found = 1;
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
      fail(e, "cannot load %s: %s", file, dlerror());
      free(file);
      break;
    }
    tq_pm_list_fn list = (tq_pm_list_fn)(uintptr_t)dlsym(dl, TQ_PM_LIST_SYMBOL);
    if (!list) {
      fail(e, "%s does not export %s: not a tqmon processor module library", file, TQ_PM_LIST_SYMBOL);
      dlclose(dl);
      free(file);
      break;
    }
    int n = 0;
    const tq_pm *const *pms = list(&n);
    int ok = 1, named = 0, before = e->npm;
    for (int i = 0; i < n; i++)
      if (pms[i] && pms[i]->name && !strcasecmp(pms[i]->name, name)) named = 1;
    for (int i = 0; i < n && ok; i++) {
      const char *a = (!named || (pms[i] && pms[i]->name && !strcasecmp(pms[i]->name, name))) ? args : NULL;
      if (addPm(e, pms[i], a, NULL, NULL)) ok = 0;
    }
    /* the first PM it added holds the handle; a library loaded before
    ** (through another of its names) adds none: this handle is released */
    if (e->npm > before) e->pm[before]->dl = dl;
    else dlclose(dl);
    free(file);
    rc = ok ? 0 : -1;
    break;
  }
  free(path);
  if (!found) return fail(e, "no processor module '%s' in the PM path %s", name, e->pmPath);
  return rc;
}

static int registerName(tq_engine *e, const char *name, const char *args, int depth) {
  if (depth > 8) return fail(e, "groupers nested too deeply at %s", name);
  for (int i = 0; i < e->noffered; i++)
    if (!strcasecmp(e->offered[i]->name, name)) return addPm(e, e->offered[i], args, NULL, NULL);
  return loadShared(e, name, args);
}

int tq_register(tq_engine *e, const char *name, const char *args) {
  tqBufFree(&e->errs);
  if (e->state) {
    fail(e, "processor modules are registered before tq_prepare");
    collectErrors(e);
    return -1;
  }
  int rc = registerName(e, name, args, 0);
  collectErrors(e);
  return rc;
}

/* ================================================================ prepare */

static int topo(tq_engine *e, EnPm *m, int *k) {
  if (m->visit == 2) return 0;
  if (m->visit == 1) return fail(e, "processor modules depend on each other in a cycle through %s", m->pm->name);
  m->visit = 1;
  for (int i = 0; i < m->priv.ndepends; i++) {
    EnPm *d = findPm(e, m->priv.depends[i]);
    if (!d) return fail(e, "processor module %s depends on %s, which is not loaded", m->pm->name, m->priv.depends[i]);
    if (topo(e, d, k)) return -1;
  }
  m->visit = 2;
  e->order[(*k)++] = m;
  return 0;
}

static void onFlag(void *ctx, RtSensor *s, int64_t entity, int on) {
  tq_engine *e = ctx;
  EnPm *p = e->producerOf[s->rel->id - 1];
  if (!p || p->priv.disabled || !p->pm->enable) return;
  p->calls++;
  if (p->multi) p->priv.rel = s->rel->id;
  pmStatus(e, p, p->pm->enable(&e->g, &p->priv, entity, on));
}

static int rowToPms(void *self, RtResult *res, const RtRow *row) {
  tq_engine *e = self;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!(m->priv.caps & TQ_PM_CONSUMER) || m->priv.disabled) continue;
    int st = TQ_PM_OK;
    if (m->rc) {
      if (m->rc->row && m->rc->row(m->rc->self, res, row)) st = TQ_PM_ERROR;
    } else if (m->pm->result) {
      static const int codes[] = {0, TQ_TY_INT, TQ_TY_FLOAT, TQ_TY_STRING, TQ_TY_ENUM, TQ_TY_ENTITY, 0, 0};
      const char *names[64];
      int types[64];
      for (int k = 0; k < res->nattr && k < 64; k++) {
        names[k] = res->attr[k].name;
        types[k] = codes[res->attr[k].type.kind];
      }
      tq_result_row r = {res->name, row->op, row->rowid, res->isEvent, row->from, row->to, res->nattr, row->vals, names, types};
      st = m->pm->result(&e->g, &m->priv, &r);
    } else {
      continue;
    }
    m->calls++;
    pmStatus(e, m, st);
  }
  return 0;
}
static int batchToPms(void *self, TqTime now) {
  tq_engine *e = self;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (m->rc && !m->priv.disabled && m->rc->batch && m->rc->batch(m->rc->self, now)) {
      m->priv.disabled = 1;
      gLog(&e->g, &m->priv, TQ_LOG_ERROR, "disabled after an error while storing results");
    }
  }
  return 0;
}

static int bindNet(tq_engine *e);

/* Does a loaded PM draw the program's displays (TQ_PM_SYNC_DISPLAYS)? */
static int wantsDisplays(tq_engine *e) {
  for (int i = 0; i < e->npm; i++)
    if (e->pm[i]->pm->version >= 4 && (e->pm[i]->priv.sync & TQ_PM_SYNC_DISPLAYS)) return 1;
  return 0;
}

int tq_prepare(tq_engine *e, int nfiles, const char *const *files) {
  tqBufFree(&e->errs);
  if (e->state) {
    fail(e, "tq_prepare is called once");
    collectErrors(e);
    return -1;
  }
  if (nfiles <= 0) {
    fail(e, "no program file given (FILE.tq)");
    collectErrors(e);
    return -1;
  }
  e->prog = cpCompileFiles(nfiles, files, &e->diag);
  if (!e->prog) {
    collectErrors(e);
    return -1;
  }
  for (int i = 0; i < e->prog->programs.n; i++) {
    TqBuf why = {0};
    rtProgramsAdd(&e->programs, e->prog->programs.v[i], &why); /* checked by the compiler already */
    tqBufFree(&why);
  }
  if (wantsDisplays(e) && cpDisplayQueries(e->prog, &e->diag)) {
    collectErrors(e);
    return -1;
  }
  if (!e->opt.noOpt) cpOptimize(e->prog, NULL);
  /* explain text */
  for (int i = 0; i < e->prog->queries.n; i++) {
    CpQuery *q = e->prog->queries.v[i];
    tqBufPrintf(&e->explain, "%s: ", q->name ? q->name : tqArenaPrintf(e->prog->arena, "query%d", i + 1));
    algPrint(!e->opt.noOpt && q->opt ? q->opt : q->tree, &e->explain);
    tqBufPuts(&e->explain, "\n");
  }
  e->net = rtNetNew(e->prog, &e->opt, &e->diag);
  if (!e->net) {
    collectErrors(e);
    return -1;
  }
  int rc = bindNet(e);
  collectErrors(e);
  return rc;
}

/* Binds the PMs to the program and the network: producers to relations,
** the extractor or the timer, the call order, the network's hooks. */
static int bindNet(tq_engine *e) {
  e->nrel = e->prog->cat.rels.n;
  e->rs = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(RelState));
  e->prevStore = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(SnapStore));
  e->curSets = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(tq_record_set));
  e->prevSets = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(tq_record_set));
  e->producerOf = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(EnPm *));
  e->g.tick = e->prog->cat.tick;
  /* bind PMs */
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (m->priv.caps & TQ_PM_EXTRACTOR) {
      if (e->extractor) return fail(e, "two extractors: %s and %s", e->extractor->pm->name, m->pm->name);
      e->extractor = m;
    }
    if ((m->priv.caps & TQ_PM_TIMER) && !e->timer) e->timer = m;
    if ((m->priv.caps & TQ_PM_PRODUCER) && m->priv.produces && !strcmp(m->priv.produces, "*")) {
      m->multi = 1; /* bound below to what no other PM produces */
    } else if (m->priv.caps & TQ_PM_PRODUCER) {
      AlgRel *r = m->priv.produces ? algCatRel(&e->prog->cat, m->priv.produces) : NULL;
      if (!r && m->member && m->priv.produces) {
        /* a grouper offers it, the program does not want it: never called */
        m->unbound = m->priv.disabled = 1;
        snprintf(m->priv.message, sizeof m->priv.message, "left out: the program does not declare %s", m->priv.produces);
        continue;
      }
      if (!r) {
        fail(e, "processor module %s produces '%s', which the program does not declare", m->pm->name,
             m->priv.produces ? m->priv.produces : "(nothing)");
        return -1;
      }
      if (e->producerOf[r->id - 1] && m->member && e->producerOf[r->id - 1]->member) {
        /* two groupers offer it (--host and --kernel both make Processor):
        ** the first registered produces it */
        m->unbound = m->priv.disabled = 1;
        snprintf(m->priv.message, sizeof m->priv.message, "left out: %s produces %s",
                 e->producerOf[r->id - 1]->pm->name, r->name);
        continue;
      }
      if (e->producerOf[r->id - 1]) {
        fail(e, "relation %s has two producers: %s and %s", r->name, e->producerOf[r->id - 1]->pm->name, m->pm->name);
        return -1;
      }
      e->producerOf[r->id - 1] = m;
      m->priv.rel = r->id;
    }
  }
  /* a multi-relation producer (a live source such as a shared-memory
  ** segment) produces every primitive relation no other PM produces */
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!m->multi) continue;
    for (int k = 0; k < e->nrel; k++) {
      const AlgRel *r = e->prog->cat.rels.v[k];
      if (!e->producerOf[k] && !r->deltaOf) e->producerOf[k] = m;
    }
  }
  e->g.operation = e->extractor ? TQ_OP_EXTRACT : TQ_OP_COLLECT;
  for (int i = 0; i < e->npm; i++) {
    if ((e->pm[i]->priv.caps & TQ_PM_FILTER) && e->pm[i]->pm->filter) e->filters = 1;
    if ((e->pm[i]->priv.caps & TQ_PM_CONSUMER) && e->pm[i]->pm->record) {
      if (e->pm[i]->priv.sync & TQ_PM_SYNC_ALL_RECORDS) e->allRecords = 1;
      else e->collectors = 1;
    }
  }
  if (!e->extractor) {
    if (!e->timer) {
      fail(e, "a collection needs a TIMER processor module (for instance clock), or an EXTRACTOR to replay a recording");
      return -1;
    }
    for (int i = 0; i < e->nrel; i++) {
      RtSensor *s = &e->net->sensor[i];
      if (needed(e, i + 1) && !e->producerOf[i]) {
        fail(e, "no processor module produces relation %s, which a query needs", s->rel->name);
        return -1;
      }
    }
  }
  /* dependency order */
  e->order = tqCalloc((size_t)(e->npm ? e->npm : 1), sizeof(EnPm *));
  int k = 0;
  for (int i = 0; i < e->npm; i++)
    if (topo(e, e->pm[i], &k)) {
      return -1;
    }
  /* the network's view */
  e->prod.name = "engine";
  e->prod.self = e;
  e->prod.sample = enSample;
  e->prod.minPendingFrom = enMinPending;
  for (int i = 0; i < e->net->nsensor; i++) {
    const AlgRel *r = e->net->sensor[i].rel;
    e->rs[i].tracked = e->net->sensor[i].used && !r->entity && !r->isEvent && r->mode != ALG_MODE_SAMPLED;
    e->rs[i].state = e->rs[i].tracked ||
                     (r->mode == ALG_MODE_SAMPLED && (e->net->sensor[i].used || (r->delta && e->net->sensor[r->delta->id - 1].used)));
    e->net->sensor[i].prod = &e->prod;
    e->net->sensor[i].onFlag = onFlag;
    e->net->sensor[i].onFlagCtx = e;
  }
  e->rowc.name = "pms";
  e->rowc.self = e;
  e->rowc.row = rowToPms;
  e->rowc.batch = batchToPms;
  rtNetAddConsumer(e->net, &e->rowc);
  e->state = 1;
  return 0;
}

/* ================================================================ privileges */

static int hasPrivilege(const char *p) {
  if (!strcmp(p, "root")) return geteuid() == 0;
  if (!strncmp(p, "read:", 5)) return access(p + 5, R_OK) == 0;
  if (!strncmp(p, "write:", 6)) return access(p + 6, W_OK) == 0;
  if (!strncmp(p, "cap:", 4)) {
    static const char *caps[] = {"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
                                 "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
                                 "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
                                 "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
                                 "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
                                 "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
                                 "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
                                 "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
                                 "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"};
    int bit = -1;
    for (int i = 0; i < (int)TQ_ARRAY_SIZE(caps); i++)
      if (!strcasecmp(caps[i], p + 4)) bit = i;
    if (bit < 0) return 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long eff = 0;
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "CapEff:", 7)) eff = strtoull(line + 7, NULL, 16);
    fclose(f);
    return (eff >> bit) & 1;
  }
  return 0;
}

/* ================================================================ running */

static int start(tq_engine *e) {
  if (e->state != 1) return fail(e, "the operation is not prepared (tq_prepare)");
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    for (int k = 0; k < m->priv.nprivileges && !m->unbound; k++)
      if (!hasPrivilege(m->priv.privileges[k]))
        return fail(e, "processor module %s needs the privilege %s, which this process does not have: not started",
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
    callPm(e, m, TQ_PM_START, NULL);
  }
  e->starting = 0;
  if (e->fatal) {
    /* the PMs a fatal START left unstarted get no call but END (no records,
    ** no result rows while the results so far are flushed) */
    for (int i = started; i < e->npm; i++) e->order[i]->priv.disabled = 1;
    return -1;
  }
  TqTime t0 = e->rangeSet ? e->first : e->haveStart ? e->startTime : 0;
  if (rtNetStart(e->net, t0)) return fail(e, "the result consumers could not start");
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
        callPm(e, m, TQ_PM_PREBASELINE, NULL);
    }
  }
  return e->fatal ? -1 : 0;
}

/* Does the operation need relation rel's records?  A query uses it, or it
** is the entity relation a used sensor lives in (its flag or performer
** entity): nothing of that sensor is delivered while the entity does not
** exist. */
/* Is the relation used, or the sampled relation of a used delta relation? */
static int usedOrDelta(tq_engine *e, const RtSensor *s) {
  return s->used || (s->rel->delta && e->net->sensor[s->rel->delta->id - 1].used);
}

static int needed(tq_engine *e, int rel) {
  const RtSensor *s = &e->net->sensor[rel - 1];
  if (s->rel->deltaOf) return 0; /* computed by the engine */
  if (usedOrDelta(e, s)) return 1;
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
  for (int i = 0; i < e->ngat; i++) gProduce(&e->g, &e->gat[i].ir->r);
  e->ngat = 0;
  tqArenaDelete(e->gatArena);
  e->gatArena = NULL;
}

/* One snapshot's worth: returns 1 more, 0 done, -1 fatal. */
static int step(tq_engine *e) {
  if (e->halted) return e->fatal ? -1 : 0;
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
      if (!e->diag.nerr) fail(e, "%s: %s", x->pm->name, x->priv.message[0] ? x->priv.message : "extraction failed");
      return 0;
    }
    if (st == TQ_PM_FATAL) e->fatal = e->halted = 1;
    /* snapshot-synchronised PMs see the snapshot that is forming */
    for (int i = 0; i < e->npm && !e->halted; i++) {
      EnPm *m = e->order[i];
      if (m != x && (m->priv.sync & TQ_PM_SYNC_SNAPSHOT) && !m->priv.disabled && !(m->priv.caps & TQ_PM_PRODUCER))
        callPm(e, m, TQ_PM_SNAPSHOT, NULL);
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
    fail(e, "processor module %s (the timer) gave the snapshot time %lld, not after %lld: the collection ends",
         tm->pm->name, (long long)next, (long long)e->g.now);
    tm->priv.disabled = 1;
    return 0;
  }
  e->g.now = next;
  gAdvance(&e->g, next);
  /* producers produce at the snapshot (those no query needs are not
  ** called); each makes its records since the last snapshot, so they are
  ** held and merged in time order (equal times in call order) */
  e->gathering = 1;
  for (int i = 0; i < e->npm && !e->halted; i++) {
    EnPm *m = e->order[i];
    if (!(m->priv.sync & TQ_PM_SYNC_SNAPSHOT) || m->priv.disabled || m == tm) continue;
    /* (recording everything, every producer is needed) */
    if ((m->priv.caps & TQ_PM_PRODUCER) && !m->multi && !e->allRecords && !needed(e, m->priv.rel)) continue;
    callPm(e, m, TQ_PM_SNAPSHOT, NULL);
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
  closeSnapshot(e, next);
  return e->fatal ? -1 : 1;
}

int tq_start(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->state == 1 && start(e)) {
    collectErrors(e);
    return -1;
  }
  int rc;
  while ((rc = step(e)) > 0) {
  }
  int bad = e->diag.nerr > 0;
  collectErrors(e);
  return rc < 0 || e->fatal || bad ? -1 : 0;
}

static int oneSnapshot(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->state == 1 && start(e)) {
    collectErrors(e);
    return -1;
  }
  if (e->state != 2) {
    fail(e, "the operation is not running");
    collectErrors(e);
    return -1;
  }
  int rc = step(e);
  collectErrors(e);
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
    if (e->snapDirty) closeSnapshot(e, e->snapBoundary < TQ_FOREVER ? e->snapBoundary : endT);
    e->net->packetsSeen = e->packets;
    e->net->packetsTotal = e->packetsTotal ? e->packetsTotal : e->packets;
    if (rtNetFinish(e->net, endT, 1)) ok = 0;
    if (!e->fatal && !e->diag.nerr && !(e->extractor && e->extractor->priv.disabled)) warnAbsent(e); /* (a run cut short: no) */
    for (int i = 0; i < e->npm; i++) {
      EnPm *m = e->order[i];
      if ((m->priv.sync & TQ_PM_SYNC_COLLECTION_END) && !m->priv.disabled && m->started)
        callPm(e, m, TQ_PM_COLLECTION_END, NULL);
    }
  }
  /* END goes to the PMs that were started (not when a privilege was
  ** missing, nor to those after a fatal START) */
  for (int i = e->npm - 1; i >= 0; i--) {
    EnPm *m = e->order ? e->order[i] : e->pm[i];
    if (m->started) callPm(e, m, TQ_PM_END, NULL);
  }
  /* never silent: a program pattern no process matched says so */
  for (int i = 0; e->state == 2 && !e->extractor && i < e->programs.n; i++)
    if (!e->programs.pat[i].pids.n)
      gLog(&e->g, NULL, TQ_LOG_WARNING, "program pattern \"%s\" matched no process", e->programs.pat[i].text);
  e->state = 3;
  collectErrors(e);
  return ok && !e->fatal ? 0 : -1;
}

/* ================================================================ information */

int tq_get_info(tq_engine *e, tq_info *info) {
  memset(info, 0, sizeof *info);
  free(e->pinfo);
  free(e->sinfo);
  e->pinfo = tqCalloc((size_t)(e->npm ? e->npm : 1), sizeof(tq_pm_info));
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    e->pinfo[i] = (tq_pm_info){m->pm->name, m->priv.caps, m->priv.sync, m->priv.disabled, m->calls, m->priv.message};
  }
  info->npms = e->npm;
  info->pms = e->pinfo;
  if (e->net) {
    e->sinfo = tqCalloc((size_t)(e->net->nsensor ? e->net->nsensor : 1), sizeof(tq_sensor_info));
    for (int i = 0; i < e->net->nsensor; i++) {
      RtSensor *s = &e->net->sensor[i];
      e->sinfo[i] = (tq_sensor_info){s->rel->name, s->used, s->recorded, s->delivered, s->nEnabled, s->maxEnabled};
    }
    info->nsensors = e->net->nsensor;
    info->sensors = e->sinfo;
    info->tuples = e->net->tuplesProcessed;
    info->now = e->net->now;
  }
  info->snapshots = e->snapSeq;
  info->packets = e->packets;
  return 0;
}

const char *tq_explain(tq_engine *e) { return e->explain.s ? e->explain.s : ""; }

int tq_describe(tq_engine *e, const char *relation, char *out, int n) {
  if (!out || n < 1) return -1;
  out[0] = 0;
  const AlgRel *r = e->prog ? algCatRel(&e->prog->cat, relation) : NULL;
  EnPm *m = r && e->producerOf ? e->producerOf[r->id - 1] : NULL;
  if (!m) return -1;
  char how[512] = "";
  if (m->pm->version >= 5 && m->pm->describe && !m->priv.disabled) {
    if (m->multi) m->priv.rel = r->id;
    m->pm->describe(&e->g, &m->priv, r->id, how, (int)sizeof how);
    how[sizeof how - 1] = 0;
  }
  snprintf(out, (size_t)n, "%s by %s: %s", r->name, m->pm->name, how[0] ? how : m->pm->description);
  return 0;
}

static void jsonString(TqBuf *b, const char *s) {
  tqBufPuts(b, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') tqBufPrintf(b, "\\%c", *s);
    else if ((unsigned char)*s < 32) tqBufPrintf(b, "\\u%04x", *s);
    else tqBufAdd(b, s, 1);
  }
  tqBufPuts(b, "\"");
}

/* The network's statistics, then per PM its calls, whether it is disabled
** and its last message (the host PMs count their reads there). */
const char *tq_stats_json(tq_engine *e) {
  tqBufFree(&e->stats);
  if (!e->net) return "{}";
  rtNetStatsJson(e->net, &e->stats);
  if (e->stats.n < 3 || strcmp(e->stats.s + e->stats.n - 3, "\n}\n")) return e->stats.s;
  e->stats.n -= 3; /* reopen the object */
  e->stats.s[e->stats.n] = 0;
  tqBufPuts(&e->stats, ",\n  \"pms\": [");
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    tqBufPrintf(&e->stats, "%s\n    {\"name\": ", i ? "," : "");
    jsonString(&e->stats, m->pm->name);
    tqBufPrintf(&e->stats, ", \"calls\": %lld, \"disabled\": %s, \"message\": ", (long long)m->calls,
                m->priv.disabled ? "true" : "false");
    jsonString(&e->stats, m->priv.message);
    if (m->detail) tqBufPrintf(&e->stats, ", \"detail\": %s", m->detail);
    tqBufPuts(&e->stats, "}");
  }
  tqBufPuts(&e->stats, "\n  ]");
  if (e->programs.n) { /* the program list: the processes each pattern matched */
    tqBufPuts(&e->stats, ",\n  \"programs\": [");
    for (int i = 0; i < e->programs.n; i++) {
      const RtPattern *x = &e->programs.pat[i];
      tqBufPrintf(&e->stats, "%s\n    {\"pattern\": ", i ? "," : "");
      jsonString(&e->stats, x->text);
      tqBufPrintf(&e->stats, ", \"processes\": %u%s, \"pids\": [", x->pids.n, x->more ? ", \"more\": true" : "");
      int k = 0;
      for (uint32_t j = 0; j < x->pids.cap; j++)
        if (x->pids.slot[j].key > 1) tqBufPrintf(&e->stats, "%s%lld", k++ ? ", " : "", (long long)x->pids.slot[j].key - 2);
      tqBufPuts(&e->stats, "]}");
    }
    tqBufPuts(&e->stats, "\n  ]");
  }
  tqBufPuts(&e->stats, "\n}\n");
  return e->stats.s;
}

void tq_finish(tq_engine *e) {
  if (!e) return;
  if (e->state == 1 || e->state == 2) tq_end(e);
  if (e->held) {
    /* the caller keeps the program and the network (enBind) */
    for (int i = 0; e->net && i < e->net->consumers.n; i++)
      if (e->net->consumers.v[i] == &e->rowc) {
        e->net->consumers.v[i] = e->net->consumers.v[--e->net->consumers.n];
        break;
      }
    e->prog = NULL;
    e->net = NULL;
  }
  rtNetFree(e->net);
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    free(m->argsCopy);
    free(m->detail);
  }
  for (int i = 0; i < e->npm; i++)
    if (e->pm[i]->dl) dlclose(e->pm[i]->dl);
  for (int i = 0; i < e->npm; i++) free(e->pm[i]);
  free(e->pm);
  free(e->order);
  TqMap seen = {0};
  for (int i = 0; i < e->nrel; i++) {
    RelState *r = &e->rs[i];
    /* open intervals and queued ones: each freed once */
    for (int k = 0; k < r->nopen; k++) tqMapPut(&seen, (uint64_t)(uintptr_t)r->open[k], r->open[k]);
    for (int k = 0; k < r->fn; k++) {
      OpenIv *iv = r->fifo[(r->fhead + k) % r->fcap];
      tqMapPut(&seen, (uint64_t)(uintptr_t)iv, iv);
    }
    free(r->open);
    free(r->fifo);
    while (r->freeIv) {
      OpenIv *x = r->freeIv;
      r->freeIv = x->nextFree;
      free(x);
    }
    free(r->ann);
    free(r->annDone);
    tqMapFree(&r->annLeft);
    for (int k = 0; k < r->dprev.n; k++) free(r->dprev.v[k]);
    tqVecFree(&r->dprev);
    tqMapFree(&r->dmap);
    free(r->aliveN);
    free(r->ever);
    free(r->cur.rec);
    free(r->cur.vals);
    free(e->prevStore[i].rec);
    free(e->prevStore[i].vals);
  }
  for (uint32_t k = 0; k < seen.cap; k++)
    if (seen.slot[k].key > 1) free(seen.slot[k].val);
  tqMapFree(&seen);
  tqMapFree(&e->ivs);
  tqMapFree(&e->sampled);
  free(e->rs);
  free(e->prevStore);
  free(e->curSets);
  free(e->prevSets);
  free(e->producerOf);
  free(e->inst);
  tqArenaDelete(e->instArena);
  free(e->gat);
  tqArenaDelete(e->gatArena);
  cpProgramFree(e->prog);
  rtProgramsFree(&e->programs);
  free(e->pmPath);
  tqBufFree(&e->explain);
  tqBufFree(&e->stats);
  tqBufFree(&e->errs);
  tqDiagFree(&e->diag);
  free(e->pinfo);
  free(e->sinfo);
  free(e);
}

/* ================================================================ a program and a network held by the caller */

int enBind(tq_engine *e, CpProgram *p, RtNet *net) {
  tqBufFree(&e->errs);
  if (e->state) {
    fail(e, "enBind instead of tq_prepare, once");
    collectErrors(e);
    return -1;
  }
  e->prog = p;
  e->net = net;
  e->opt = net->opt;
  e->held = 1;
  int rc = bindNet(e);
  collectErrors(e);
  return rc;
}
