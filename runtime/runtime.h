/*
** runtime.h - the update network: push-based incremental operators over
** streams of deltas, the sensor hub that alpha operators enable, and the
** sinks at the roots (paper sections 8.5 and 9; docs/design.md sections 3
** and 4).
**
** Stream protocol.  Deltas arrive in non-decreasing stream time ("now").
** A tuple carries one span [from, to) per time component of its edge's
** schema and its explicit values.  Kinds:
**   RT_ADD    a complete tuple (every span closed; events are closed spans
**             [at, at+1));
**   RT_BEGIN  a new tuple with at least one open span (to == TQ_OPEN);
**   RT_END    the same tuple object again after one of its spans closed; it
**             is final when no span is open any more.
** The tuple object is the identity: BEGIN and its ENDs pass the same
** pointer.  A span's `from` may be earlier than now (an interval delivered
** whole when it ends), but never later than now.
**
** Time between deltas: before the deltas of instant t the network is
** flushed with now = t; operators then decide what waited for time to pass.
** Each operator reports an end mark: an open span it has emitted ends at
** that time or later.  For timely operators it is now (an interval still
** open at t ends at t or later); an aggregate whose input may still deliver
** intervals that began in the past, or a valid clause that shifts ends
** back, report less, and their parents bound unknown ends by that.  Every
** operator reports a low mark: no tuple it emits later has a span starting
** before it.  Sinks and the overlap product use low marks to forget what
** can no longer match, so memory is bounded by live state, not history.
** A tuple of several spans also has a latest-start mark (maxLow >= low):
** some span of every tuple emitted later starts at or after it.  A product
** pairs every new input tuple with stored ones, so its low mark stays at
** the oldest stored begin, but its latest-start mark follows its inputs;
** the valid clause `from begin of (V1 overlap ... Vk)` (the default over
** all the variables) begins at the latest begin, so its low mark is that.
** At the end of the run (rtNetFinish) nothing is delivered any more and
** what is still open never ends: the last flush reports so.  The test
** build (TQ_TESTING) checks the three promises on every delta (rtEmit)
** and aborts, naming the operator, when one is broken.
**
** Ownership: tuples are reference counted and come from per-size pools
** (no malloc per tuple on the hot path).  An operator that keeps a tuple
** takes a reference; the emitter keeps its own reference until the final
** END (or, for RT_ADD, until the push returns).
*/
#ifndef RUNTIME_H
#define RUNTIME_H

#include "../algebra/algebra.h"
#include "../base/tq.h"
#include "../compiler/compiler.h"

/* ================================================================ tuples */
enum { RT_ADD = 1, RT_BEGIN, RT_END };

typedef struct RtTup RtTup;
struct RtTup {
  uint32_t ref;     /* reference count */
  uint16_t nspan;   /* time components */
  uint16_t nval;    /* explicit values */
  uint16_t nopen;   /* spans still open */
  uint16_t flags;   /* RT_SETTLED */
  uint32_t cls;     /* size class (pool) */
  RtTup *link;      /* scratch: derived output of the first op that maps this tuple */
  int64_t d[];      /* spans: from0,to0,from1,to1,..., then values */
};
/* Set by the operator that decided a tuple for good (piT: its result is
** emitted complete, or dropped; sigma and sigmaT: dropped) when no
** operator between it and the
** tuple's producer keeps state for it (sigma and sigmaT pass the tuple
** itself): nobody needs its ENDs any more, and the producer may drop them
** and forget it (the overlap product keeps its open outputs until then). */
#define RT_SETTLED 1
#define RT_FROM(t, i) ((t)->d[2 * (i)])
#define RT_TO(t, i) ((t)->d[2 * (i) + 1])
#define RT_VAL(t) ((t)->d + 2 * (t)->nspan)

RtTup *rtTupNew(int nspan, int nval);  /* ref = 1, zeroed */
void rtTupRef(RtTup *t);
void rtTupUnref(RtTup *t);             /* frees at 0; accepts NULL */
void rtTupCountOpen(RtTup *t);         /* recomputes nopen */
int rtTupCmp(const RtTup *a, const RtTup *b); /* by content: spans, then values */
int64_t rtTupLive(void);               /* tuples allocated and not freed (for tests) */

/* ================================================================ operators */
typedef struct RtOp RtOp;
typedef struct RtNet RtNet;

/* How an operator's ENDs follow its inputs' (RtOp.endsFollow): not known
** (its end mark stays that of the flush), a leaf that emits ENDs only as
** END records are delivered, or an operator that emits an END only on an
** input's END. */
enum { RT_ENDS_KEEP = 0, RT_ENDS_LEAF, RT_ENDS_KIDS };

typedef struct RtOpVt {
  const char *name;
  /* A delta from child `port`.  Returns 0, or -1 on a fatal error. */
  int (*push)(RtOp *op, int port, int kind, RtTup *t);
  /* Time advanced to now: decide what waited; then set op->low (and
  ** op->maxLow when it knows better than low, which is the default). */
  void (*flush)(RtOp *op, TqTime now);
  /* End of the run: final decisions (open intervals stay open). */
  void (*finish)(RtOp *op, TqTime now);
  /* Release state. */
  void (*free)(RtOp *op);
  /* Optional: a tuple with values vals (as child `port` emits them) is
  ** about to come; fetch what its push will read (a prefetch only: no
  ** state changes), in two stages: 0 what the values locate (an index's
  ** slot), 1 what that slot points to.  rtNetHintEvent. */
  void (*hint)(RtOp *op, int port, const int64_t *vals, int stage);
} RtOpVt;

struct RtOp {
  const RtOpVt *vt;     /* methods */
  RtNet *net;           /* the network */
  RtOp *parent;         /* where output goes (NULL at a root without sink) */
  int port;             /* our port at the parent */
  int nkid;             /* children */
  RtOp *kid[3];
  const AlgNode *node;  /* plan node (read-only) */
  int nspan, nval;      /* output shape */
  TqTime low;           /* low mark, valid after flush */
  TqTime maxLow;        /* latest-start mark (>= low), valid after flush */
  TqTime endLow;        /* no open span it has emitted ends before this (after flush) */
  int64_t nin, nout;    /* tuples in / out (statistics) */
  int64_t stored, peakStored; /* tuples held (statistics) */
  int endsFollow;       /* RT_ENDS_*: how its ENDs follow its inputs' (rtNetEndsDone) */
#ifdef TQ_TESTING
  TqMap openSpans;      /* test build: emitted tuple -> 1 + mask of its open spans (rtEmit's checks) */
#endif
};

/* Sends a delta to op's parent (counts it). */
int rtEmit(RtOp *op, int kind, RtTup *t);

/* ================================================================ sensors */
struct RtSensor;
/* How a producer of a primitive relation answers a sample request:
** it calls back rtSampleAnswer for each tuple valid at time t. */
typedef struct RtProducer {
  const char *name;
  void *self;
  /* Asks for the tuples of sensor s whose attribute `attr` is entity `who`
  ** valid at t; the producer answers with rtSampleAnswer(..., cookie). */
  void (*sample)(void *self, struct RtSensor *s, int attr, int64_t who, TqTime t, void *cookie);
  /* Lowest `from` of an interval of s that may still be delivered whole
  ** later: still open, and its begin reached no alpha (rtDeliverBegin was
  ** not called for it); TQ_FOREVER when none.  Each alpha adds itself the
  ** intervals whose begin went to other alphas only. */
  TqTime (*minPendingFrom)(void *self, struct RtSensor *s);
} RtProducer;

/* The run-time side of one primitive relation (one sensor). */
typedef struct RtSensor {
  const AlgRel *rel;      /* the relation */
  TqMap count;            /* entity -> enable units (all alphas) */
  int32_t *dense;         /* count mirrored by entity for 0..ndense-1 (entity
                          ** values are small symbol ids: no hashing on the
                          ** enable check) */
  uint32_t ndense;        /* entities the mirror covers */
  int nEnabled;           /* entities with count > 0 now */
  int maxEnabled;         /* most entities enabled at once */
  TqVec alphas;           /* RtOp* alpha operators of this relation */
  TqVec sources;          /* RtOp* entity sources (entity relations) */
  RtProducer *prod;       /* who produces its packets */
  /* called when an entity's enable count goes from 0 to more (on = 1) or
  ** back to 0 (on = 0): the producer is told (live sensors set flags) */
  void (*onFlag)(void *ctx, struct RtSensor *s, int64_t entity, int on);
  void *onFlagCtx;
  int64_t recorded;       /* packets the producer saw */
  int64_t delivered;      /* packets that passed the enable check */
  int64_t samples;        /* sample requests answered */
  int64_t skipped;        /* packets of a recording not read: no query needs them */
  int64_t lost;           /* packets its producer lost (rtNetLost) */
  int lostUnknown;        /* and some more, how many not known (RT_LOSS_UNKNOWN) */
  const AlgExpr *filter;  /* SF: the disjunction of its alphas' sensor predicates: a packet
                          ** failing it reaches no answer (NULL: every packet may) */
  int nconds;             /* filter in disjunctive normal form, for producers (0: too big) */
  struct tq_pm_cond *conds;
  int64_t suppressed;     /* packets its producer did not write: they failed the filter */
  int64_t filtered;       /* packets that came and failed the filter (dropped by the engine) */
  int64_t saturated;      /* times an entity's count went past what the counter's width holds */
  int64_t flagWrites;     /* times the sensor's counter of an entity was to be written (on, off, or
                          ** a disable-traced sensor's new count): the engine's work on the flags */
  int64_t twice;          /* declared once (O3-ONCE): tuples that came on a flag entity
                          ** that had one already, which break the declaration */
  int64_t onceBytes;      /* declared once: bytes the engine holds to check it */
  int64_t outside;        /* another sensor of a relation (SENSOR): the relation's tuples that
                          ** began while this sensor's flag entity did not exist, which break
                          ** the rule's condition (docs/enabling.md) */
  int used;               /* some operator needs it */
  /* a replay's semi-join (rtNetBound): the entities its alphas whose flag
  ** argument is not a constant can ever be given, read from the
  ** recording before the replay (sorted, distinct); hasBound 0: not known */
  int hasBound;
  int64_t *bound;
  int64_t nbound;
} RtSensor;

/* Does a packet with values vals pass the sensor's filter (SF; 1 when it
** has none)? */
int rtSensorPass(const RtSensor *s, const int64_t *vals);

/* Is the sensor enabled on entity e (some alpha asked for it)? */
int rtSensorEnabled(const RtSensor *s, int64_t e);
/* Packet delivery, called by producers after their own enable check.
** vals are the relation's attribute values in declared order. */
void rtDeliverEvent(RtNet *net, RtSensor *s, TqTime t, const int64_t *vals);
/* An event with values vals will be delivered soon (rtDeliverEvent):
** the operators its tuple meets first fetch what they will read for it
** (RtOpVt.hint), so that the memory of an instant's events is fetched
** together instead of one event's after another's: stage 0 for each of
** them, then stage 1 for each.  Changes nothing. */
void rtNetHintEvent(RtNet *net, RtSensor *s, const int64_t *vals, int stage);
void rtDeliverBegin(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, const int64_t *vals);
void rtDeliverEnd(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, TqTime to, const int64_t *vals);
/* Entity relations (always enabled): begin/end of an entity tuple. */
void rtEntityBegin(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, const int64_t *vals);
void rtEntityEnd(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, TqTime to, const int64_t *vals);
/* Answer to a sample request (cookie from RtProducer.sample). */
void rtSampleAnswer(void *cookie, const int64_t *vals);

/* ================================================================ results */
/* One result row change, as sinks see it. */
enum { RT_ROW_INSERT = 1, RT_ROW_CLOSE, RT_ROW_DELETE };
typedef struct RtRow {
  int op;            /* RT_ROW_* */
  uint64_t rowid;    /* stable id of the row within its result */
  TqTime from, to;   /* valid time (to == TQ_OPEN while open); at = from for events */
  const int64_t *vals;
} RtRow;

typedef struct RtResult RtResult;
/* A consumer of result rows (store, text, display). */
typedef struct RtConsumer {
  const char *name;
  void *self;
  int (*begin)(void *self, RtNet *net);                  /* before the run */
  int (*row)(void *self, RtResult *res, const RtRow *r);   /* each change */
  int (*batch)(void *self, TqTime now);                  /* after each instant */
  int (*end)(void *self, RtNet *net, int ok);            /* after the run */
} RtConsumer;

struct RtResult {
  const CpQuery *q;     /* the query */
  const char *name;     /* result name ("query N" when unnamed) */
  int isEvent;
  int nattr;
  const AlgAttr *attr;
  RtOp *root;           /* network root */
  int64_t rows;         /* rows inserted */
  int64_t dups;         /* duplicates suppressed */
  void *sink;           /* dedup state (sink.c) */
  RtConsumer *only;     /* a query added to a running network (rtNetAddPart): its
                        ** rows go to this consumer only, not to net->consumers */
};

/* ================================================================ network */
typedef struct RtOptions {
  int noOpt;          /* run the initial algebra */
  TqTime nowValue;    /* value of `now` when known (replay end), else TQ_OPEN */
  double timeLimit;   /* stop a replay after this many seconds (0 = none) */
} RtOptions;

/* A recording read selectively (collection files): its blocks and bytes,
** in the file and read (all zero: not such a reader). */
typedef struct RtReadStats {
  int64_t blocks, blocksRead;   /* data blocks */
  int64_t bytes, bytesRead;     /* the whole file; what was read of it */
  int64_t records, recordsRead; /* records in the blocks; decoded */
  int64_t streams;              /* recordings read from a stream (a pipe): every byte comes through */
  int64_t spooled;              /* bytes of streams copied into a temporary file to be read ahead */
  int64_t threads;              /* recordings decoded by a thread of their own (sensors/replay.c) */
  int64_t boundBlocks, boundBytes; /* read first for the semi-joins (rtNetBound): blocks, bytes */
} RtReadStats;

struct RtNet {
  CpProgram *prog;
  RtOptions opt;
  TqTime now;          /* current stream time */
  TqTime origin;       /* first time seen */
  int originKnown;     /* origin is the run's first time (a recording's range, a
                       ** live start), not a stand-in 0 (a range known only at
                       ** the end: a file read from a pipe, not closed) */
  int started;
  int failed;          /* a fatal error happened */
  TqDiag *diag;        /* runtime errors */
  int nsensor;
  RtSensor *sensor;    /* by relation id - 1 */
  TqVec ops;           /* all RtOp*, children before parents */
  TqVec clocks;        /* RtOp* clock sources */
  TqVec consts;        /* RtOp* constants */
  TqTime armDue;       /* earliest time an alpha's pending arming or timer
                       ** changes its enabling (at the flush of that time) */
  int flushEnables;    /* an alpha is enabled by an operator that emits at
                       ** flush: every flush may change the enabling */
  int nresult;
  RtResult *result;    /* one per query */
  TqVec consumers;     /* RtConsumer* */
  TqTime clockGcd;     /* tick period needed by the clocks (0 = no clock) */
  int64_t tuplesProcessed; /* sum of op inputs */
  double startWall;    /* wall clock at start (seconds) */
  int64_t packetsSeen; /* packets the producer went through */
  int64_t packetsTotal;/* packets in the recording, when known */
  int stopped;         /* the run stopped early (time limit) */
  int ending;          /* rtNetFinish: no delivery comes any more */
  RtReadStats read;    /* what a selective reader of the recording read */
  int64_t packetsLost; /* packets the producers lost (rtNetLost) */
  int64_t lossesTold;  /* losses told (rtNetLost accepted): a streamed output's news */
  int lostUnknown;     /* a loss of a count not known was told: packetsLost is a lower bound */
  struct RtLoss *loss; /* the losses, merged (loss.c) */
  int nloss, closs;
};

/* Builds the networks of every query of prog (optimized tree when set and
** !opt->noOpt).  Returns NULL with an error in d on failure. */
RtNet *rtNetNew(CpProgram *prog, const RtOptions *opt, TqDiag *d);
void rtNetFree(RtNet *net);
/* A network of prog's sensors and no query: parts come later
** (rtNetAddPart).  prog must outlive it. */
RtNet *rtNetNewEmpty(CpProgram *prog, const RtOptions *opt, TqDiag *d);
void rtNetAddConsumer(RtNet *net, RtConsumer *c);
RtSensor *rtNetSensor(RtNet *net, const char *relName);
/* Starts the run at time t0 (primes constants, calls consumers' begin). */
int rtNetStart(RtNet *net, TqTime t0);
/* Advances stream time to t (flushes every operator). */
void rtNetAdvance(RtNet *net, TqTime t);
/* Every END of instant now has been delivered (interval ends and whole
** intervals of every relation): what is still open ends after now.  The
** operators whose ENDs only ever answer their inputs' ENDs raise their end
** mark to now + 1 for the rest of the instant (the others keep theirs), so
** that a decision that waits for an end (an event overlapping an interval
** still open at now) is taken when its tuple comes, not at the next flush.
** Optional: a producer that cannot tell keeps the marks of the flush. */
void rtNetEndsDone(RtNet *net);
/* Emits the clock ticks due at t (call after entity deltas of t). */
void rtNetTick(RtNet *net, TqTime t);
/* Ends the instant (consumer batch). */
void rtNetEndInstant(RtNet *net);
/* Ends the run at time tEnd: final flush, finish, consumers' end. */
int rtNetFinish(RtNet *net, TqTime tEnd, int ok);
/* Statistics as JSON (per sensor: recorded, delivered, max enabled). */
void rtNetStatsJson(RtNet *net, TqBuf *out);

/* ---------------------------------------------------------------- queries that come and go
** A running network takes queries and gives them back (a session,
** docs/design.md section 4).  A part is the operators of some queries,
** built into the network at its time: they join the flush order after
** every operator there (children before parents still holds), their
** alphas count their enables at the sensors as every alpha does, and their
** rows go to each result's `only` consumer.  The queries come from a
** program compiled over the same sensor declarations as net's (relations
** by id); that program must outlive the part.  Dropping the part releases
** every enable unit its alphas hold (a sensor entity no other alpha
** enables is switched off: onFlag) and frees its operators. */
typedef struct RtPart RtPart;
/* Builds the networks of res[0..n) (each res[i].q set, `only` set) into
** net.  Before the run it is as if they were there from the start; during
** it they start at net->now: the constants are primed and the caller
** replays the entities alive now into rtPartSources.  Returns the part, or
** NULL with the reason in msg (nothing is left in net). */
RtPart *rtNetAddPart(RtNet *net, RtResult *res, int n, TqBuf *msg);
/* The entity sources of part p (RtOp*), for the caller to replay the
** entities alive when it was added (rtPartReplay), then rtPartStart. */
const TqVec *rtPartSources(RtPart *p);
/* Entity tuple ivid of relation rel, alive since from, into source op of
** a part being started (before rtPartStart). */
void rtPartReplay(void *op, uint64_t ivid, TqTime from, const int64_t *vals);
/* Interval ivid of relation rel (its id), open since from, whose begin
** went to other queries' alphas before part p was added: it may come to
** p's alphas whole when it ends (they hold their low mark at from until
** then; rtAlphaMissed).  Before rtPartStart. */
void rtPartMissed(RtPart *p, int rel, uint64_t ivid, TqTime from);
/* Flushes the part's operators at net->now and primes its constants. */
void rtPartStart(RtNet *net, RtPart *p);
/* Removes part p from net (see above) and frees it; accepts NULL. */
void rtNetDropPart(RtNet *net, RtPart *p);
/* Sets every Clock of part p to tick at the multiple of its own period
** nearest below `period` (at least its own): what it samples is sampled
** less often.  Returns the longest period set. */
TqTime rtPartSlowClocks(RtNet *net, RtPart *p, TqTime period);
/* Moves part p, built into `from` and run there up to to->now (a
** session's catch-up over kept records, engine_hist.c), into `to`: its
** operators join the flush order of `to` after every operator there, its
** alphas' enable units go from the sensors of `from` to those of `to` (the
** producers of `to` hear of entities no alpha there had enabled: onFlag),
** its constants are not primed again.  `from` keeps no operator of it. */
void rtPartMove(RtNet *from, RtPart *p, RtNet *to);
/* Frees the part's own bookkeeping only: its operators stay in the network
** and go with it (rtNetFree), after the operation ended. */
void rtPartFree(RtPart *p);
/* How many entities of sensor s are enabled now, and the first max of
** them into out (entity values).  Returns the count. */
int rtSensorEnabledList(const RtSensor *s, int64_t *out, int max);

/* Which records of relation rel (its id) a replay must deliver for the
** queries to answer exactly as from every record: with entity
** RT_NEED_ANY, RT_NEED_NONE (no query reads the relation or an entity of
** it), RT_NEED_ALL or RT_NEED_SOME (those of some flag entities); with an
** entity (the value of rel's flag attribute, of its entity attribute for
** an entity relation) 1 if its records are needed, 0 if not.  A record is
** not needed when no alpha can ever enable its sensor on its flag entity
** (every alpha of the sensor takes a constant: paper O2), or it is of a
** relation no query traces or samples, or of an entity relation whose
** entity no used sensor lives in (and no query ranges over).  Records
** that no query can reach cannot change an answer: they are never
** delivered, and no sensor lives in an entity they keep alive. */
#define RT_NEED_ANY INT64_MIN /* (the values of g->needed: TQ_PM_NEED_*) */
enum { RT_NEED_NONE = 0, RT_NEED_ALL = 1, RT_NEED_SOME = 2 };
int rtNetNeed(const RtNet *net, int rel, int64_t entity);
/* When the queries sample relation rel (a sampled relation): P > 0 when
** they sample it only at multiples of P (its alphas sample on Clock[n],
** its delta relation at every base tick), so that an interval [from, to)
** holding no multiple of P is never answered; 0 when not known so. */
TqTime rtNetSamplePeriod(const RtNet *net, int rel);
/* A replay's semi-join: may the needs of relation rel be narrowed by
** reading other relations first?  Its sensor is traced, and each alpha of
** it whose flag argument is not a constant takes its entities from one
** attribute of one other traced relation's tuples (through selections,
** projections and products only: paper O2's constant set, found in the
** recording).  Returns how many (relation id, attribute index) pairs it
** put into from and attr (at most max; 0: it may not): every entity an
** alpha of rel can be given is a value of one of them in a record of that
** relation its own needs keep.  rtNetBound then installs those values:
** rtNetNeed answers RT_NEED_SOME for rel, and needs only their records.
** A recording read in full first is needed; queries that change (a
** session) cannot use it. */
int rtNetBoundFrom(const RtNet *net, int rel, int *from, int *attr, int max);
void rtNetBound(RtNet *net, int rel, const int64_t *vals, int64_t n);

/* ================================================================ losses (loss.c) */
/* Packets a producer lost: count of relation rel (0: not known which)
** between from and to, on flag entity `entity` (a symbol; RT_LOSS_ANY:
** not known, or several); spans: begins or ends of intervals among them.
** Losses of one relation and entity less than a second apart are one
** period; at most 4,096 periods are kept (then they grow). */
#define RT_LOSS_ANY INT64_MIN
#define RT_LOSS_MAX ((int64_t)1 << 62) /* packets lost in all, at most (TQ_PM_LOST_MAX) */
#define RT_LOSS_UNKNOWN ((int64_t)-1)  /* a count not known (TQ_PM_LOST_UNKNOWN) */
typedef struct RtLoss {
  int rel;                /* its relation (0: not known) */
  int spans;              /* begins or ends of intervals among them */
  int64_t entity;         /* flag entity, RT_LOSS_ANY */
  TqTime from, to;        /* the period */
  int64_t count;          /* packets lost, as far as counted */
  int unknown;            /* some were lost that nobody counted: count is a lower bound */
} RtLoss;
/* Counts a loss (per sensor and in packetsLost) and keeps its period;
** count RT_LOSS_UNKNOWN: packets were lost, how many is not known (the
** period is kept, marked unknown, and nothing is added to the counts).
** 0, or -1 (ignored) for an unknown rel, another count <= 0, to < from,
** or a count that takes packetsLost past RT_LOSS_MAX (the sums stay in
** range). */
int rtNetLost(RtNet *net, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans);
/* The periods during which result res may be incomplete: the losses of
** the sensors its network reads, each to TQ_FOREVER when it may tell
** after the loss too (begins or ends lost; an aggregate).  *out is
** malloc'd (NULL when none); returns their number. */
int rtResultLosses(const RtNet *net, const RtResult *res, RtLoss **out);
/* Does a row valid over [from, to) (an event: to <= from) overlap one of them? */
int rtLossCovers(const RtLoss *v, int n, TqTime from, TqTime to);
/* "N packet(s)", "at least N packets" (unknown: some were not counted) or
** "an unknown number of packets" into buf (n bytes); returns buf. */
char *rtLossCount(char *buf, size_t n, int64_t count, int unknown);
/* A loss's entity's name and relation's name (NULL: not known). */
const char *rtLossEntity(const RtLoss *l);
const char *rtLossRelation(const RtNet *net, const RtLoss *l);
/* The "incomplete" member of the statistics (JSON), and a JSON string (NULL: null). */
void rtLossJson(const RtNet *net, TqBuf *b);
void rtJsonStr(TqBuf *b, const char *s);

/* ================================================================ internals shared by op files */
RtOp *rtOpNew(RtNet *net, const RtOpVt *vt, size_t size, const AlgNode *node);
/* Counts tuples an operator holds (statistics; inline: the hot paths
** count every tuple they keep). */
static inline void rtStoredAdd(RtOp *op, int64_t delta) {
  op->stored += delta;
  if (op->stored > op->peakStored) op->peakStored = op->stored;
}

/* ================================================================ folding histograms (hist.c) */
/* nb time buckets from `start`, each `width` wide; a value at a time past
** the last bucket folds it (adjacent buckets merge: counts and sums add;
** the width doubles) until the time fits.  Memory is fixed at creation. */
typedef struct RtHist {
  int nb;              /* buckets (even) */
  TqTime start;        /* time of bucket 0 */
  TqTime width;        /* of every bucket */
  int folds;           /* times the width doubled */
  int64_t *count;      /* per bucket: values added */
  double *sum;         /* per bucket: their sum (average: sum / count) */
  int64_t added;       /* values given */
  int64_t early;       /* of those, before start: not counted */
} RtHist;
/* A histogram, or NULL when nb is odd or below 2, or width <= 0. */
RtHist *rtHistNew(int nb, TqTime start, TqTime width);
void rtHistFree(RtHist *h); /* accepts NULL */
/* The bytes its blocks hold now, as the allocator says (0 for NULL). */
int64_t rtHistBytes(const RtHist *h);
/* Adds value v at time t.  Returns the folds it caused (0: none). */
int rtHistAdd(RtHist *h, TqTime t, double v);

/* ================================================================ store (SQLite) */
/* All SQLite access of tqmon goes through these (runtime/store.c).  Times
** are stored as integer ns; entity and enum values as their names. */
typedef struct RtStore RtStore;
RtStore *rtStoreOpen(const char *path, TqDiag *d);     /* NULL on error (in d) */
/* An existing store, read only: its journal mode and its file are left as
** they are (tqmon show).  NULL on error (in d). */
RtStore *rtStoreOpenReadOnly(const char *path, TqDiag *d);
void rtStoreFree(RtStore *st);                          /* rolls back what is not committed */
/* (Re)creates table `name`: attributes, then valid_from/valid_to or
** valid_at.  Returns a table handle >= 0, or -1. */
int rtStoreTable(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent);
/* Table `name` as rtStoreTable makes it, but a table of that name the file
** holds already is kept and appended to when it has exactly those columns
** (a daemon restarted on its store, a query added again); of other
** columns, it is kept and -1 is returned with the reason in the store's
** diagnostics.  Returns a table handle >= 0, or -1. */
int rtStoreTableAppend(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent);
/* Does the file hold a table named name (in any case)?  1, 0, or -1 on an
** SQLite error (in the store's diagnostics). */
int rtStoreHasTable(RtStore *st, const char *name);
/* Inserts a row; to == TQ_OPEN stores NULL.  *rowid gets the SQLite rowid. */
/* Forgets table tbl (the handle is not reused; its attributes are no longer
** referred to) and, when drop, drops it from the file.  Returns 0 or -1. */
int rtStoreTableEnd(RtStore *st, int tbl, int drop);
int rtStoreInsert(RtStore *st, int tbl, const int64_t *vals, TqTime from, TqTime to, int64_t *rowid);
int rtStoreCloseRow(RtStore *st, int tbl, int64_t rowid, TqTime to);
int rtStoreDeleteRow(RtStore *st, int tbl, int64_t rowid);
/* Closes every open row of interval table tbl at `at` (TQ_OPEN: at the
** last time a row of it was stored) because the monitor stopped knowing
** them (why: "stopped", "paused", "removed", "not stopped"), and lists
** each in the table _tqmon_cut (result, row, valid_to, why): its end is
** where the monitor stopped, not where the tuple ended (docs/design.md,
** "A session").  Returns how many it closed, or -1. */
int rtStoreCutOpen(RtStore *st, int tbl, TqTime at, const char *why);
int rtStoreBegin(RtStore *st);
/* Recording parameters kept with a loaded store (first, last, tick). */
int rtStoreMeta(RtStore *st, const char *key, int64_t value);
int rtStoreGetMeta(RtStore *st, const char *key, int64_t *value);
/* A recording's loss (tq_pm.lost) into the table _tqmon_lost of a loaded
** store (relation, entity: NULL when not known; valid_from, valid_to, lost,
** spans), made on the first: the tables of the primitive relations miss
** those records (docs/losses.md).  rel: NULL when not known; count
** RT_LOSS_UNKNOWN: lost NULL. */
int rtStoreLoss(RtStore *st, const char *rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans);
/* A load begins: the losses of a recording loaded before into this store
** go (the tables of the relations are made again too).  0 or -1. */
int rtStoreLossReset(RtStore *st);
int rtStoreCommit(RtStore *st);
/* Runs a query and writes its rows as CSV to out (for `tqmon show`). */
int rtStoreQueryCsv(RtStore *st, const char *sql, FILE *out);

/* The result consumer that stores every named result in an SQLite file. */
RtConsumer *rtStoreConsumer(const char *path, TqDiag *d); /* NULL on error */
void rtStoreConsumerFree(RtConsumer *c);

#endif
