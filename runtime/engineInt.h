/*
** engineInt.h - the state shared by the engine's files (engine.c,
** engine_pm.c, engine_loop.c, engine_deliver.c, engine_snap.c): the
** engine, its PMs, the recorded state per relation, the instant being
** gathered and the snapshots; small helpers of the hot path inline; the
** functions one file of the engine calls in another.  Private to them.
*/
#ifndef ENGINEINT_H
#define ENGINEINT_H

#include <signal.h>
#include <stdio.h>

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
  uint8_t *onceBits;   /* a relation declared once: bit v set when a tuple came on flag
                       ** entity v (one bit per entity id: ids may be reused, tests/o3) */
  int64_t onceCap;     /* bytes of onceBits */
  TqMap onceSeen;      /* the same for a flag value past what a symbol id can be (v + 2 -> the engine) */
  int replayFrom;      /* another sensor in a replay: answered from its relation's records (1, copies; for a
                       ** sampled one: some came) or, a traced one, from its own (2), never both (enProduce) */
  int64_t passedOver;  /* another sampled sensor in a replay: its samples in the recording (not read) */
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

/* A flag gone off that its producer has not been told yet (engine.c, onFlag). */
typedef struct EnOff {
  int rel;                /* relation */
  int64_t entity;         /* the entity */
  int64_t seq;            /* snapSeq when it went off */
} EnOff;

struct tq_engine {
  tq_pm_global g;         /* first: the global context handed to PMs */
  TqDiag diag;            /* messages of the current call */
  TqBuf errs;             /* tq_errors */
  EnPm **pm;              /* registered PMs */
  int npm, cpm;
  EnPm **order;           /* START order: dependencies first */
  char *pmPath;           /* the PM path: colon-separated directories */
  int pmPathEnv;          /* it came from TQMON_PM_PATH (relative entries refused) */
  RtOptions opt;
  CpProgram *prog;
  RtNet *net;
  int state;              /* 0 new, 1 prepared, 2 started, 3 ended */
  EnPm *extractor, *timer;
  EnPm **producerOf;      /* per relation id - 1 */
  RelState *rs;           /* per relation */
  int nrel;
  int *trimRel;           /* the tracked relations (their queues trimmed after each instant) */
  int ntrim;
  OpenIv **instIvs;       /* processInstant: the open interval each record begins or ends */
  int cinstIvs;
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
  TqTime startTime;       /* a live collection's first time, or that of a
                          ** recording whose range is known at its end (g->set_start) */
  int haveStart;
  int starting;           /* the START calls are going on */
  struct EnPm *startingPm; /* ... this PM's */
  int64_t snapSeq;
  EnOff *offs;            /* flags gone off, not yet told to their producer (onFlag) */
  int noffs, coffs;
  TqMap offMap;           /* offKey(rel, entity) -> index + 1 in offs */
  int snapDirty;          /* records delivered since the last snapshot */
  TqTime snapBoundary;    /* next base tick closing a snapshot */
  tq_snapshot cur, prev;
  tq_record_set *curSets, *prevSets;
  SnapStore *prevStore;   /* record storage of the previous snapshot */
  TqMap ivs;              /* (relation, id) -> open interval */
  int halted, fatal;
  volatile sig_atomic_t haltReq; /* tq_halt: why + 1 (a signal number + 1, or 1); 0: none */
  int haltedBy;           /* the halt request the loop obeyed (haltReq), 0 if none */
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
  int gathering;          /* enProduce holds records instead of processing them */
  Gathered *gat;
  int ngat, cgat;
  TqArena *gatArena;
  int announced;          /* the extractor announced its whole intervals (g->announce_whole) */
  const tq_pm *const *offered; /* PMs loadable by name (enOffer) */
  int noffered;
  int held;               /* the program and the network are the caller's (enBind) */
  int64_t maxTicks;       /* the most Clock and delta ticks a replay makes (0: no bound) */
  int notes;              /* record the compiler's and the network's notes (diag.notes) */
  RtPrograms programs;    /* the program list: `monitor programs` and the option "programs" */
  int64_t nticks;         /* a replay's ticks so far */
  /* a session: queries that come and go while the run goes (engine_session.c) */
  int threads;            /* option "threads" (0: the default, enThreads) */
  int session;            /* option "session": every relation keeps its recorded state,
                          ** so that a query added later finds what is open */
  char **baseFiles;       /* the program's files (an added query is compiled after them) */
  int nbase;
  TqVec squeries;         /* EnQuery*, in the order added */
  char *sstorePath;       /* option "session-db": where the session's results are stored */
  RtStore *sstore;        /* opened at the first query added */
  char *phase;            /* the current phase's name */
  int nphases;            /* phases started (the first is "phase0") */
  TqTime phaseFrom;       /* when the current phase began */
  int nextWatch;          /* the last watch id given */
  tq_query_info *qinfo;   /* tq_query_list's answer */
  TqVec pastPhases;       /* char*: names of the phases that ended */
  TqTime *pastFrom;       /* per past phase: when it began */
  /* the records kept for queries added later (engine_hist.c) */
  struct EnHist *hist;    /* NULL: none kept (no persistent-collection query) */
  uint8_t *histRec;       /* per relation: its records are kept */
  int64_t histMax;        /* option "session-history": the bound in bytes (0: the default) */
  RtNet *catchNet;        /* a query catching up runs in this network (its rows' time) */
};

/* A replay ticks its Clock over the recording's whole span, also where no
** record comes: a recording with a far time (5 lines, one at 2562047h)
** would tick for hours.  Ten million ticks (about 15 s) bounds it; a
** recording with a range is refused before it starts, one without stops
** there; --max-ticks changes the bound. */
#define EN_MAX_TICKS 10000000

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

/* ================================================================ small helpers */

/* The engine behind a PM's global context (its first member). */
static inline tq_engine *enOf(tq_pm_global *g) { return (tq_engine *)g; }

/* Relation rel of the program, or NULL. */
static inline const AlgRel *relOf(tq_engine *e, int rel) {
  if (!e->prog || rel < 1 || rel > e->prog->cat.rels.n) return NULL;
  return e->prog->cat.rels.v[rel - 1];
}

/* The time a record happens at. */
static inline TqTime recTime(const tq_record *r) {
  switch (r->kind) {
    case TQ_REC_BEGIN: return r->from;
    case TQ_REC_END:
    case TQ_REC_WHOLE: return r->to;
    default: return r->t;
  }
}

/* Does the entity v of attribute attr of rel exist now (an attribute that
** is not an entity: yes)? */
static inline int alive(tq_engine *e, const AlgRel *rel, int attr, int64_t v) {
  const AlgEntity *ent = rel->attr[attr].type.ent;
  if (!ent) return 1;
  const RelState *r = &e->rs[ent->rel->id - 1];
  return v >= 0 && v < r->aliveCap && r->aliveN[v] > 0;
}

/* A replay answers rel's other sensor, which a query uses, from rel's
** records (copies): what the run collects then holds all of rel's
** records, and none of the copies (a replay of it makes them again). */
static inline int enCopiedFrom(const tq_engine *e, const AlgRel *rel) {
  return e->extractor && rel->altSensor && e->net->sensor[rel->altSensor->id - 1].used;
}
static inline int enACopy(const tq_engine *e, const AlgRel *rel) {
  return e->extractor && rel->sensorOf && e->rs[rel->id - 1].replayFrom == 1;
}

/* The key of interval id of relation rel in the engine's open intervals. */
static inline uint64_t ivKey(int rel, uint64_t id) { return tqHash64((uint64_t)rel * 0x9e3779b97f4a7c15ULL ^ id) | 2; }

/* ================================================================ across the engine's files */

/* ---------------------------------------------------------------- engine.c: the API and the context */
void enCollectErrors(tq_engine *e);
/* Tells the producers the flags that went off before the current snapshot
** (all: every one) and are still off (engine.c, onFlag). */
void enFlushOffs(tq_engine *e, int all);
int enFail(tq_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void enLog(tq_pm_global *g, tq_pm_private *p, int level, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------- engine_pm.c: the PM registry */
int64_t enCallPm(tq_engine *e, EnPm *m, int what, const tq_record_set *rs);
int enHasPrivilege(const char *p);
int enPmStatus(tq_engine *e, EnPm *m, int st);
int enTopo(tq_engine *e, EnPm *m, int *k);

/* ---------------------------------------------------------------- engine_loop.c: the operation loop */
int enAdvance(tq_pm_global *g, tq_time t);
int enNeeded(tq_engine *e, int rel);
int enProduce(tq_pm_global *g, const tq_record *r);

/* ---------------------------------------------------------------- engine_deliver.c: delivery and enabling */
void enAliveAdd(RelState *r, int64_t v, int d);
void enAnnCame(RelState *r, TqTime from);
int enAnnounce(tq_pm_global *g, int rel, tq_time from);
void enDeliver(tq_engine *e, const tq_record *r, OpenIv *iv, int active);
int enSensorFiltering(const tq_engine *e); /* engine.c: sensor filters apply (SF) */
void enFifoTrim(RelState *r);
TqTime enMinPending(void *self, RtSensor *s);
OpenIv *enOpenBegin(tq_engine *e, TqMap *m, const tq_record *r);
OpenIv *enOpenEnd(tq_engine *e, TqMap *m, const tq_record *r);
void enReleaseIv(RelState *rs, OpenIv *iv);
void enSample(void *self, RtSensor *s, int attr, int64_t who, TqTime t, void *cookie);
int enSampleAnswer(tq_pm_global *g, void *cookie, const int64_t *vals);
void enSampleRel(tq_engine *e, const AlgRel *rel, int attr, int64_t who, TqTime t, AnswerCtx *ac0);
void enToConsumers(tq_engine *e, const tq_record *r, int all);
int enWholeTooLate(tq_engine *e, const tq_record *r);

/* ---------------------------------------------------------------- engine_session.c: queries that come and go */
void enSessionStart(tq_engine *e); /* the run started: records kept for the queries added before */
void enSessionEnd(tq_engine *e);
/* engine_hist.c: the records kept for queries added later */
static inline int enHistOn(const tq_engine *e, int rel) { return e->histRec && e->histRec[rel - 1]; }
/* Keeps the records of the relations marked in want (per relation) from
** now on, and no longer those not marked (NULL: none; then all is freed).
** atStart: the run starts (its first instant is still to come). */
void enHistWant(tq_engine *e, const uint8_t *want, int atStart);
void enHistRecord(tq_engine *e, const tq_record *r, TqTime t); /* an entity's or a delivered record */
void enHistAsk(tq_engine *e, int rel, int attr, int64_t who, TqTime t); /* a sample request */
void enHistSample(tq_engine *e, int rel, TqTime t, const int64_t *vals, int nvals); /* its answer */
void enHistFlag(tq_engine *e, const RtSensor *s, int64_t entity, int on); /* an enabling changed */
void enHistFree(tq_engine *e);
void enHistStats(tq_engine *e, TqBuf *b);
/* Runs res[0..nres) (compiled in prog) over the kept records from the
** earliest point that holds all it reads, after time `after`, up to now,
** and moves it into the running network.  Returns its part (running live
** from here on) with *covers set to where its answer begins, or NULL with
** the reason in why (nothing is left behind; *covers is now). */
RtPart *enHistCatchUp(tq_engine *e, CpProgram *prog, RtResult *res, int nres, TqTime after, TqTime *covers, TqBuf *why);
void enSessionFree(tq_engine *e);
void enSessionStats(tq_engine *e, TqBuf *b);

/* ---------------------------------------------------------------- engine_snap.c: snapshots and deltas */
void enCloseSnapshot(tq_engine *e, TqTime t);
void enComputeDeltas(tq_engine *e, TqTime t);
void enSampleEverything(tq_engine *e, TqTime t);
void enSnapAdd(tq_engine *e, const tq_record *r);

#endif
