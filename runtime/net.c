/*
** net.c - building and driving the update network, and the sensor hub
** that connects alpha operators to the producers of packets.
**
** Every query gets its own tree of operator states, built bottom-up from
** its (optimized) algebra, with a sink at the root.  All operators are also
** kept in one list with children before parents, so a flush visits a child
** before its parent and low marks flow upwards in one pass.
**
** The sensor hub keeps, per primitive relation, the enable counter of each
** entity (the sum of the enable units of all alpha operators of that
** relation) and demultiplexes delivered packets to every alpha that has the
** flag entity enabled.  The counters are in a map (every entity) and, for
** the enable check of every packet, mirrored in an array by entity value
** (symbol ids are small: rtDenseFits).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "rtInt.h"

/* ================================================================ operators */

/* The operator's own algebra node kind (a sink has its root's node: no
** kind of its own), or 0. */
static int opKind(const RtOp *op) { return op->node && strcmp(op->vt->name, "sink") ? (int)op->node->kind : 0; }


RtOp *rtOpNew(RtNet *net, const RtOpVt *vt, size_t size, const AlgNode *node) {
  RtOp *op = tqCalloc(1, size);
  op->vt = vt;
  op->net = net;
  op->node = node;
  op->nspan = node ? node->sch.ntv : 0;
  op->nval = node ? node->sch.ncol : 0;
  op->low = op->endLow = op->maxLow = TQ_BEGINNING;
  tqVecPush(&net->ops, op);
  return op;
}

#ifdef TQ_TESTING
static void markBroken(RtOp *op, const char *what, TqTime t, const char *mark, TqTime m) {
  fprintf(stderr, "tqmon: internal error: %s emits a tuple %s %lld, before its %s %lld, at now = %lld\n", op->vt->name,
          what, (long long)t, mark, (long long)m, (long long)op->net->now);
  abort();
}

/* The promises of the marks, checked on every delta in the test build: no
** span of a new tuple starts before the low mark the operator reported at
** its last flush, some span starts at or after its latest-start mark, and
** a span that was open ends at or after its end mark.  A broken promise
** lets a parent prune or decide too early, silently; here it stops the run
** with the operator's name. */
static void checkMarks(RtOp *op, int kind, const RtTup *t) {
  if (!op->net->started || t->nspan == 0 || t->nspan > 63) return;
  uint64_t key = (uint64_t)(uintptr_t)t, mask = 0;
  if (kind == RT_END) {
    uint64_t was = (uint64_t)(uintptr_t)tqMapGet(&op->openSpans, key);
    for (int i = 0; was && i < t->nspan; i++) {
      if (((was - 1) >> i & 1) && RT_TO(t, i) != TQ_OPEN && RT_TO(t, i) < op->endLow)
        markBroken(op, "whose open span ends at", RT_TO(t, i), "end mark", op->endLow);
    }
  } else {
    TqTime lo = TQ_FOREVER, hi = TQ_BEGINNING;
    for (int i = 0; i < t->nspan; i++) {
      if (RT_FROM(t, i) < lo) lo = RT_FROM(t, i);
      if (RT_FROM(t, i) > hi) hi = RT_FROM(t, i);
    }
    if (lo < op->low) markBroken(op, "beginning at", lo, "low mark", op->low);
    if (hi < op->maxLow) markBroken(op, "whose latest span begins at", hi, "latest-start mark", op->maxLow);
  }
  for (int i = 0; i < t->nspan; i++)
    if (RT_TO(t, i) == TQ_OPEN) mask |= (uint64_t)1 << i;
  if (mask) tqMapPut(&op->openSpans, key, (void *)(uintptr_t)(mask + 1));
  else if (kind != RT_ADD) tqMapDel(&op->openSpans, key);
}
#endif

int(rtEmit)(RtOp *op, int kind, RtTup *t) { /* (the name in parentheses: not rtInt.h's macro) */
#ifdef TQ_TESTING
  checkMarks(op, kind, t);
#endif
  op->nout++;
  RtOp *p = op->parent;
  if (!p) return 0;
  p->nin++;
  op->net->tuplesProcessed++;
  return p->vt->push(p, op->port, kind, t);
}

#ifdef TQ_TESTING
void rtCheckEventMarks(RtOp *op, TqTime t) {
  if (!op->net->started) return; /* (checkMarks of a tuple of one span [t, t + 1)) */
  if (t < op->low) markBroken(op, "beginning at", t, "low mark", op->low);
  if (t < op->maxLow) markBroken(op, "whose latest span begins at", t, "latest-start mark", op->maxLow);
}
#endif

/* The alpha under op when op is one, or a sigma or pi fused into one. */
static RtOp *fusedAlpha(RtOp *op) {
  while (opKind(op) == ALG_SIGMA || opKind(op) == ALG_PI) op = op->kid[0];
  return opKind(op) == ALG_ALPHA ? op : NULL;
}

static RtOp *build(RtNet *net, const AlgNode *n, TqBuf *msg) {
  RtOp *kids[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n->nkid; i++) {
    kids[i] = build(net, n->kid[i], msg);
    if (!kids[i]) return NULL;
  }
  RtOp *op = NULL;
  switch (n->kind) {
    case ALG_SOURCE: {
      op = rtOpSource(net, n);
      RtSensor *s = &net->sensor[n->rel->id - 1];
      s->used = 1;
      tqVecPush(&s->sources, op);
      break;
    }
    case ALG_CONST:
      op = rtOpConst(net, n);
      tqVecPush(&net->consts, op);
      break;
    case ALG_CLOCK:
      op = rtOpClock(net, n);
      tqVecPush(&net->clocks, op);
      break;
    case ALG_ALPHA: op = rtOpAlpha(net, n); break;
    case ALG_SIGMA: op = rtOpSigma(net, n, msg); break;
    case ALG_SIGMAT: op = rtOpSigmaT(net, n, msg); break;
    case ALG_PI: op = rtOpPi(net, n, msg); break;
    case ALG_PIT: op = rtOpPiT(net, n, msg); break;
    case ALG_PRODUCT:
    case ALG_OPRODUCT: op = rtOpProduct(net, n, msg); break;
    case ALG_INTERSECT: op = rtOpIntersect(net, n); break;
    case ALG_AGG: op = rtOpAgg(net, n, msg); break;
  }
  if (!op) return NULL;
  switch (n->kind) {
    case ALG_SOURCE:
    case ALG_CONST:
    case ALG_CLOCK:
    case ALG_ALPHA: op->endsFollow = RT_ENDS_LEAF; break;
    case ALG_SIGMA:
    case ALG_SIGMAT:
    case ALG_PI:
    case ALG_PRODUCT:
    case ALG_OPRODUCT: op->endsFollow = RT_ENDS_KIDS; break;
    default: break; /* piT, aggregates, intersections may end an output as a tuple comes */
  }
  op->nkid = n->nkid;
  for (int i = 0; i < n->nkid; i++) {
    op->kid[i] = kids[i];
    kids[i]->parent = op;
    kids[i]->port = i;
  }
  /* A selection or projection over an alpha is applied by the alpha as it
  ** makes the tuple (operator fusion: no tuple for a dropped one, no copy
  ** for the projection, two calls fewer per tuple).  The unoptimized
  ** network keeps them apart: the oracle of the optimized one. */
  RtOp *a;
  if ((n->kind == ALG_SIGMA || n->kind == ALG_PI) && !net->opt.noOpt && (a = fusedAlpha(kids[0])))
    rtAlphaFuse(a, op);
  return op;
}

static TqTime gcd64(TqTime a, TqTime b) {
  while (b) {
    TqTime t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Can op's tree emit at a flush (a decision that waited for time to pass),
** not only when a tuple comes in?  An alpha's own armings are not counted:
** armDue tells when they take effect. */
static int emitsAtFlush(const RtOp *op) {
  switch (op->node ? op->node->kind : ALG_CONST) {
    case ALG_SIGMAT:
    case ALG_PIT:
    case ALG_AGG:
    case ALG_INTERSECT:
    case ALG_CLOCK: return 1;
    default: break;
  }
  for (int i = 0; i < op->nkid; i++)
    if (emitsAtFlush(op->kid[i])) return 1;
  return 0;
}

/* A network of prog's sensors and no operator yet. */
static RtNet *netAlloc(CpProgram *prog, const RtOptions *opt, TqDiag *d) {
  RtNet *net = tqCalloc(1, sizeof *net);
  net->prog = prog;
  net->opt = *opt;
  net->diag = d;
  net->now = TQ_BEGINNING;
  net->nsensor = prog->cat.rels.n;
  net->sensor = tqCalloc((size_t)(net->nsensor ? net->nsensor : 1), sizeof(RtSensor));
  for (int i = 0; i < net->nsensor; i++) net->sensor[i].rel = prog->cat.rels.v[i];
  return net;
}

RtNet *rtNetNew(CpProgram *prog, const RtOptions *opt, TqDiag *d) {
  RtNet *net = netAlloc(prog, opt, d);
  net->nresult = prog->queries.n;
  net->result = tqCalloc((size_t)(net->nresult ? net->nresult : 1), sizeof(RtResult));
  for (int i = 0; i < net->nresult; i++) {
    CpQuery *q = prog->queries.v[i];
    RtResult *r = &net->result[i];
    r->q = q;
    r->name = q->name ? q->name : tqArenaPrintf(prog->arena, "query%d", i + 1);
    r->isEvent = q->isEvent;
    r->nattr = q->nattr;
    r->attr = q->attr;
    TqBuf msg = {0};
    const AlgNode *tree = (q->opt && !opt->noOpt) ? q->opt : q->tree;
    r->root = build(net, tree, &msg);
    if (!r->root) {
      tqError(d, q->loc, "cannot build the network of this query: %s", msg.s ? msg.s : "?");
      tqBufFree(&msg);
      rtNetFree(net);
      return NULL;
    }
    tqBufFree(&msg);
    rtOpSink(net, r);
  }
  net->armDue = TQ_FOREVER;
  for (int i = 0; i < net->ops.n; i++) {
    const RtOp *op = net->ops.v[i];
    if (opKind(op) == ALG_ALPHA)
      for (int k = 0; k < op->nkid; k++)
        if (k != 1 && emitsAtFlush(op->kid[k])) net->flushEnables = 1;
  }
  rtSensorFiltersBuild(net);
  for (int i = 0; i < net->clocks.n; i++) {
    TqTime p = rtClockPeriod(net->clocks.v[i]);
    net->clockGcd = net->clockGcd ? gcd64(net->clockGcd, p) : p;
  }
  return net;
}

RtNet *rtNetNewEmpty(CpProgram *prog, const RtOptions *opt, TqDiag *d) {
  RtNet *net = netAlloc(prog, opt, d);
  net->result = tqCalloc(1, sizeof(RtResult));
  net->armDue = TQ_FOREVER;
  return net;
}

void rtNetFree(RtNet *net) {
  if (!net) return;
  for (int i = net->ops.n - 1; i >= 0; i--) {
    RtOp *op = net->ops.v[i];
    if (op->vt && op->vt->free) op->vt->free(op);
#ifdef TQ_TESTING
    tqMapFree(&op->openSpans);
#endif
    free(op);
  }
  tqVecFree(&net->ops);
  tqVecFree(&net->clocks);
  tqVecFree(&net->consts);
  for (int i = 0; i < net->nsensor; i++) {
    tqMapFree(&net->sensor[i].count);
    free(net->sensor[i].dense);
    tqVecFree(&net->sensor[i].alphas);
    tqVecFree(&net->sensor[i].sources);
    free(net->sensor[i].bound);
    free(net->sensor[i].conds);
  }
  free(net->sensor);
  free(net->result);
  tqVecFree(&net->consumers);
  free(net->loss);
  free(net);
}

void rtNetAddConsumer(RtNet *net, RtConsumer *c) { tqVecPush(&net->consumers, c); }

RtSensor *rtNetSensor(RtNet *net, const char *name) {
  for (int i = 0; i < net->nsensor; i++)
    if (!strcasecmp(net->sensor[i].rel->name, name)) return &net->sensor[i];
  return NULL;
}

/* ================================================================ driving */

int rtNetStart(RtNet *net, TqTime t0) {
  net->startWall = tqWallSeconds();
  net->started = 1;
  net->origin = t0;
  for (int i = 0; i < net->consumers.n; i++) {
    RtConsumer *c = net->consumers.v[i];
    if (c->begin && c->begin(c->self, net)) return -1;
  }
  rtNetAdvance(net, t0);
  for (int i = 0; i < net->consts.n; i++) rtConstPrime(net->consts.v[i], t0);
  return net->failed ? -1 : 0;
}

/* Flushes one operator; its latest-start mark is its low mark unless it
** set a later one. */
static void flushOp(RtOp *op, TqTime now) {
  op->maxLow = TQ_BEGINNING;
  op->vt->flush(op, now);
  if (op->maxLow < op->low) op->maxLow = op->low;
}

void rtNetAdvance(RtNet *net, TqTime t) {
  if (t <= net->now && net->started > 1) return;
  net->started = 2;
  net->now = t;
  net->armDue = TQ_FOREVER; /* the alphas' flushes say what is still pending */
  for (int i = 0; i < net->ops.n; i++) flushOp(net->ops.v[i], t);
}

void rtNetEndsDone(RtNet *net) {
  if (net->ending || net->now >= TQ_FOREVER - 1) return;
  TqTime after = net->now + 1;
  for (int i = 0; i < net->ops.n; i++) {
    RtOp *op = net->ops.v[i];
    TqTime e = op->endLow;
    if (op->endsFollow == RT_ENDS_LEAF) {
      e = after;
    } else if (op->endsFollow == RT_ENDS_KIDS) {
      e = TQ_FOREVER;
      for (int k = 0; k < op->nkid; k++)
        if (op->kid[k]->endLow < e) e = op->kid[k]->endLow;
    }
    if (e > op->endLow) op->endLow = e; /* (marks only rise) */
  }
}

void rtNetTick(RtNet *net, TqTime t) {
  for (int i = 0; i < net->clocks.n; i++) {
    RtOp *c = net->clocks.v[i];
    if (rtClockDue(c, t)) rtClockTick(c, t);
  }
}

void rtNetEndInstant(RtNet *net) {
  for (int i = 0; i < net->consumers.n; i++) {
    RtConsumer *c = net->consumers.v[i];
    if (c->batch && c->batch(c->self, net->now)) net->failed = 1;
  }
}

int rtNetFinish(RtNet *net, TqTime tEnd, int ok) {
  if (ok) {
    /* now is tEnd (known from here on, also while time passes it), and
    ** everything still open ends after tEnd; nothing is delivered any
    ** more (an interval that began while disabled and is still open never
    ** comes): the last flush knows every input */
    int nowKnown = net->opt.nowValue != TQ_OPEN;
    if (!nowKnown) net->opt.nowValue = tEnd;
    net->ending = 1;
    rtNetAdvance(net, tEnd + 1);
    if (!nowKnown)
      for (int i = 0; i < net->ops.n; i++) flushOp(net->ops.v[i], net->now);
    /* children first: each operator's inputs have finished, so one more
    ** flush gives it their final marks (an aggregate whose last change
    ** points were applied at its finish knows its open periods end after
    ** the end) before it decides what is left */
    for (int i = 0; i < net->ops.n; i++) {
      RtOp *op = net->ops.v[i];
      flushOp(op, net->now);
      op->vt->finish(op, net->now);
      /* a finished operator emits nothing more, and what it left open
      ** ends after tEnd: its parents (finished after it) decide with that,
      ** not with marks held back by what it kept (x keeps everything) */
      if (op->low < net->now) op->low = net->now;
      if (op->maxLow < net->now) op->maxLow = net->now;
      if (op->endLow < net->now) op->endLow = net->now;
    }
    rtNetEndInstant(net);
    /* an empty answer of a query that may have fallen into a trap says so */
    for (int i = 0; i < net->nresult; i++) {
      const RtResult *res = &net->result[i];
      if (res->q && res->q->emptyNote && !res->q->display && res->rows == 0 && net->diag)
        tqNote(net->diag, res->q->emptyNoteLoc, "%s has no rows: %s", res->name, res->q->emptyNote);
    }
  }
  int rc = 0;
  for (int i = 0; i < net->consumers.n; i++) {
    RtConsumer *c = net->consumers.v[i];
    if (c->end && c->end(c->self, net, ok && !net->failed)) rc = -1;
  }
  return rc || net->failed ? -1 : 0;
}

/* ================================================================ queries that come and go */

struct RtPart {
  TqVec ops;     /* RtOp* of its queries, children before parents */
  TqVec sources; /* RtOp* its entity sources */
  TqVec consts;  /* RtOp* its constants */
};

/* The network-wide facts that follow from the operators: which sensors are
** used, the clocks' tick, whether an alpha's enabling input emits at flush. */
static void netDerive(RtNet *net) {
  for (int i = 0; i < net->nsensor; i++) {
    RtSensor *s = &net->sensor[i];
    s->used = s->alphas.n > 0 || s->sources.n > 0;
  }
  net->flushEnables = 0;
  for (int i = 0; i < net->ops.n; i++) {
    const RtOp *op = net->ops.v[i];
    if (opKind(op) == ALG_ALPHA)
      for (int k = 0; k < op->nkid; k++)
        if (k != 1 && emitsAtFlush(op->kid[k])) net->flushEnables = 1;
  }
  net->clockGcd = 0;
  for (int i = 0; i < net->clocks.n; i++) {
    TqTime p = rtClockPeriod(net->clocks.v[i]);
    net->clockGcd = net->clockGcd ? gcd64(net->clockGcd, p) : p;
  }
}

/* Removes every element of v that is in set (a map of pointers). */
static void vecRemove(TqVec *v, const TqMap *set) {
  int k = 0;
  for (int i = 0; i < v->n; i++)
    if (!tqMapGet(set, (uint64_t)(uintptr_t)v->v[i])) v->v[k++] = v->v[i];
  v->n = k;
}

RtPart *rtNetAddPart(RtNet *net, RtResult *res, int n, TqBuf *msg) {
  RtPart *p = tqCalloc(1, sizeof *p);
  int ops0 = net->ops.n, clocks0 = net->clocks.n, consts0 = net->consts.n;
  int *src0 = tqCalloc((size_t)(net->nsensor ? net->nsensor : 1), sizeof(int));
  int *alpha0 = tqCalloc((size_t)(net->nsensor ? net->nsensor : 1), sizeof(int));
  for (int i = 0; i < net->nsensor; i++) {
    src0[i] = net->sensor[i].sources.n;
    alpha0[i] = net->sensor[i].alphas.n;
  }
  int ok = 1;
  for (int i = 0; i < n && ok; i++) {
    RtResult *r = &res[i];
    const AlgNode *tree = (r->q->opt && !net->opt.noOpt) ? r->q->opt : r->q->tree;
    r->root = build(net, tree, msg);
    if (!r->root) ok = 0;
    else rtOpSink(net, r);
  }
  for (int i = ops0; i < net->ops.n; i++) tqVecPush(&p->ops, net->ops.v[i]);
  for (int i = consts0; i < net->consts.n; i++) tqVecPush(&p->consts, net->consts.v[i]);
  for (int i = 0; i < net->nsensor; i++)
    for (int k = src0[i]; k < net->sensor[i].sources.n; k++) tqVecPush(&p->sources, net->sensor[i].sources.v[k]);
  free(src0);
  free(alpha0);
  (void)clocks0;
  if (!ok) {
    rtNetDropPart(net, p);
    return NULL;
  }
  netDerive(net);
  return p;
}

const TqVec *rtPartSources(RtPart *p) { return &p->sources; }

void rtPartReplay(void *op, uint64_t ivid, TqTime from, const int64_t *vals) { rtSourceBegin(op, ivid, from, vals); }

void rtPartMissed(RtPart *p, int rel, uint64_t ivid, TqTime from) {
  for (int i = 0; i < p->ops.n; i++) {
    RtOp *op = p->ops.v[i];
    if (opKind(op) == ALG_ALPHA && op->node->rel->id == rel) rtAlphaMissed(op, ivid, from);
  }
}

void rtPartStart(RtNet *net, RtPart *p) {
  if (!net->started) return; /* rtNetStart flushes and primes everything */
  for (int i = 0; i < p->ops.n; i++) flushOp(p->ops.v[i], net->now);
  for (int i = 0; i < p->consts.n; i++) rtConstPrime(p->consts.v[i], net->now);
}

void rtNetDropPart(RtNet *net, RtPart *p) {
  if (!p) return;
  TqMap set = {0};
  for (int i = 0; i < p->ops.n; i++) tqMapPut(&set, (uint64_t)(uintptr_t)p->ops.v[i], (void *)1);
  /* its enables first: the sensors hear of entities no other alpha wants */
  for (int i = 0; i < p->ops.n; i++) {
    RtOp *op = p->ops.v[i];
    if (opKind(op) == ALG_ALPHA) rtAlphaRelease(op); /* (not the sink of a query that is an alpha) */
  }
  vecRemove(&net->ops, &set);
  vecRemove(&net->clocks, &set);
  vecRemove(&net->consts, &set);
  for (int i = 0; i < net->nsensor; i++) {
    vecRemove(&net->sensor[i].alphas, &set);
    vecRemove(&net->sensor[i].sources, &set);
  }
  for (int i = p->ops.n - 1; i >= 0; i--) {
    RtOp *op = p->ops.v[i];
    if (op->vt && op->vt->free) op->vt->free(op);
#ifdef TQ_TESTING
    tqMapFree(&op->openSpans);
#endif
    free(op);
  }
  tqMapFree(&set);
  tqVecFree(&p->ops);
  tqVecFree(&p->sources);
  tqVecFree(&p->consts);
  free(p);
  netDerive(net);
}

TqTime rtPartSlowClocks(RtNet *net, RtPart *p, TqTime period) {
  TqTime most = 0;
  for (int i = 0; i < p->ops.n; i++) {
    RtOp *op = p->ops.v[i];
    if (opKind(op) == ALG_CLOCK) {
      TqTime q = rtClockSlow(op, period);
      if (q > most) most = q;
    }
  }
  netDerive(net);
  return most;
}

void rtPartMove(RtNet *from, RtPart *p, RtNet *to) {
  TqMap set = {0};
  for (int i = 0; i < p->ops.n; i++) tqMapPut(&set, (uint64_t)(uintptr_t)p->ops.v[i], (void *)1);
  vecRemove(&from->ops, &set);
  vecRemove(&from->clocks, &set);
  vecRemove(&from->consts, &set);
  for (int i = 0; i < from->nsensor; i++) {
    vecRemove(&from->sensor[i].alphas, &set);
    vecRemove(&from->sensor[i].sources, &set);
  }
  tqMapFree(&set);
  for (int i = 0; i < p->ops.n; i++) {
    RtOp *op = p->ops.v[i];
    op->net = to;
    tqVecPush(&to->ops, op); /* (after every operator there: children before parents still holds) */
    switch (opKind(op)) {
      case ALG_CLOCK: tqVecPush(&to->clocks, op); break;
      case ALG_CONST: tqVecPush(&to->consts, op); break;
      case ALG_SOURCE: tqVecPush(&to->sensor[op->node->rel->id - 1].sources, op); break;
      case ALG_ALPHA: rtAlphaMove(op, from, to); break; /* its enable units go with it */
      default: break;
    }
  }
  netDerive(from);
  netDerive(to);
  /* its marks, with the producers of `to` (no constant is primed again) */
  for (int i = 0; i < p->ops.n; i++) flushOp(p->ops.v[i], to->now);
}

void rtPartFree(RtPart *p) {
  if (!p) return;
  tqVecFree(&p->ops);
  tqVecFree(&p->sources);
  tqVecFree(&p->consts);
  free(p);
}

int rtSensorEnabledList(const RtSensor *s, int64_t *out, int max) {
  int n = 0;
  for (uint32_t i = 0; i < s->count.cap; i++) {
    if (s->count.slot[i].key <= 1 || (intptr_t)s->count.slot[i].val <= 0) continue;
    if (n < max) out[n] = (int64_t)(s->count.slot[i].key - 2);
    n++;
  }
  return n;
}

/* ================================================================ sensor hub */

uint32_t rtDenseGrow(void **v, uint32_t *n, size_t sz, int64_t e) {
  uint32_t old = *n, m = old ? old : 64;
  while ((int64_t)m <= e) m *= 2;
  *v = tqRealloc(*v, sz * m);
  memset((char *)*v + sz * old, 0, sz * (m - old));
  *n = m;
  return old;
}

int rtSensorEnabled(const RtSensor *s, int64_t e) {
  if ((uint64_t)e < s->ndense) return s->dense[e] > 0;
  return (intptr_t)tqMapGet(&s->count, (uint64_t)e + 2) > 0;
}

/* The count of e in the dense mirror, grown to cover it when it fits. */
static void denseCount(RtSensor *s, int64_t e, intptr_t n) {
  if ((uint64_t)e >= s->ndense) {
    if (!rtDenseFits(e, (int64_t)s->count.n)) return;
    uint32_t old = rtDenseGrow((void **)&s->dense, &s->ndense, sizeof(int32_t), e);
    for (uint32_t i = 0; i < s->count.cap; i++) {
      uint64_t k = s->count.slot[i].key - 2;
      if (s->count.slot[i].key > 1 && k >= old && k < s->ndense) s->dense[k] = (int32_t)(intptr_t)s->count.slot[i].val;
    }
  }
  s->dense[e] = (int32_t)n;
}

void rtSensorCount(RtNet *net, RtSensor *s, int64_t e, int delta) {
  uint64_t k = (uint64_t)e + 2;
  intptr_t c = (intptr_t)tqMapGet(&s->count, k);
  intptr_t n = c + delta;
  if (n < 0) n = 0;
  if (n) tqMapPut(&s->count, k, (void *)n);
  else tqMapDel(&s->count, k);
  if (c != n) denseCount(s, e, n);
  /* the sensor's counter is counterBits wide: it holds the count up to
  ** its largest value and stays there (saturates); the engine keeps the
  ** exact count, delivers by it, and writes the counter again as the
  ** count changes (docs/enabling.md, counter widths) */
  intptr_t top = s->rel->counterBits >= 31 ? INT32_MAX : ((intptr_t)1 << s->rel->counterBits) - 1;
  intptr_t shown = n < top ? n : top;
  if (c <= top && n > top) s->saturated++;
  if ((c == 0) != (n == 0) || (c != n && s->rel->mode == ALG_MODE_DISABLE)) s->flagWrites++;
  if (c == 0 && n > 0) {
    s->nEnabled++;
    if (s->nEnabled > s->maxEnabled) s->maxEnabled = s->nEnabled;
    if (s->onFlag) s->onFlag(s->onFlagCtx, s, e, (int)shown);
  } else if (c > 0 && n == 0) {
    s->nEnabled--;
    if (s->onFlag) s->onFlag(s->onFlagCtx, s, e, 0);
  } else if (c != n && s->rel->mode == ALG_MODE_DISABLE && s->onFlag) {
    /* a disable-traced sensor's counter follows the units: the sensor
    ** decrements it as it fires (a saturated one is topped up again) */
    s->onFlag(s->onFlagCtx, s, e, (int)shown);
  }
}

void rtDeliverEvent(RtNet *net, RtSensor *s, TqTime t, const int64_t *vals) {
  s->delivered++;
  int64_t f = vals[s->rel->flagAttr];
  for (int i = 0; i < s->alphas.n; i++) rtAlphaEvent(s->alphas.v[i], t, f, vals);
}

void rtNetHintEvent(RtNet *net, RtSensor *s, const int64_t *vals, int stage) {
  int64_t f = vals[s->rel->flagAttr];
  for (int i = 0; i < s->alphas.n; i++) rtAlphaHint(s->alphas.v[i], f, vals, stage);
}

void rtDeliverBegin(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, const int64_t *vals) {
  s->delivered++;
  int64_t f = vals[s->rel->flagAttr];
  int took = 0;
  for (int i = 0; i < s->alphas.n; i++) took += rtAlphaBegin(s->alphas.v[i], ivid, from, f, vals);
  /* the producer counts it as delivered: the alphas that did not take it
  ** remember it, it may come to them whole */
  if (took && took < s->alphas.n)
    for (int i = 0; i < s->alphas.n; i++) rtAlphaMissed(s->alphas.v[i], ivid, from);
}

void rtDeliverEnd(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, TqTime to, const int64_t *vals) {
  s->delivered++;
  int64_t f = vals[s->rel->flagAttr];
  for (int i = 0; i < s->alphas.n; i++) rtAlphaEnd(s->alphas.v[i], ivid, from, to, f, vals);
}

void rtEntityBegin(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, const int64_t *vals) {
  if (!s->sources.n) return;
  s->delivered++;
  for (int i = 0; i < s->sources.n; i++) rtSourceBegin(s->sources.v[i], ivid, from, vals);
}

void rtEntityEnd(RtNet *net, RtSensor *s, uint64_t ivid, TqTime from, TqTime to, const int64_t *vals) {
  if (!s->sources.n) return;
  s->delivered++;
  for (int i = 0; i < s->sources.n; i++) rtSourceEnd(s->sources.v[i], ivid, from, to);
}

/* ================================================================ statistics */

void rtJsonStr(TqBuf *b, const char *s) {
  if (!s) {
    tqBufPuts(b, "null");
    return;
  }
  tqBufJsonStr(b, s, 0);
}

/* ================================================================ what a replay needs */

/* Is e among the entities s's semi-join read (s->bound)? */
static int inBound(const RtSensor *s, int64_t e) {
  int64_t lo = 0, hi = s->nbound;
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (s->bound[m] < e) lo = m + 1;
    else hi = m;
  }
  return lo < s->nbound && s->bound[lo] == e;
}

/* May an alpha of used sensor s ever enable it on entity e?  Only alphas
** whose flag argument is a constant are known in advance. */
static int mayEnable(const RtSensor *s, int64_t e) {
  if (!s->alphas.n) return 1; /* used otherwise: every record */
  for (int i = 0; i < s->alphas.n; i++) {
    const RtOp *a = s->alphas.v[i];
    const AlgNode *k = a->nkid ? a->kid[0]->node : NULL;
    if (!k) return 1;
    if (k->kind != ALG_CONST) {
      if (!s->hasBound || e == RT_NEED_ANY || inBound(s, e)) return 1;
      continue;
    }
    if (e == RT_NEED_ANY || k->kval == e) return 1;
  }
  return 0;
}
/* Does mayEnable know the entities of s in advance (a traced sensor whose
** alphas all take constants, or whose semi-join a replay read)? */
static int constEnabled(const RtSensor *s) {
  if (s->rel->mode == ALG_MODE_SAMPLED || !s->alphas.n || s->sources.n) return 0;
  for (int i = 0; i < s->alphas.n; i++) {
    const RtOp *a = s->alphas.v[i];
    if (!a->nkid) return 0;
    if (a->kid[0]->node->kind != ALG_CONST && !s->hasBound) return 0;
  }
  return 1;
}

/* The relation and attribute column i of n's tuples takes its values
** from: an alpha's tuples, through selections, projections of a column,
** products and intersections (the left's columns).  1, or 0 when not so. */
static int colOrigin(const AlgNode *n, int i, const AlgRel **rel, int *attr) {
  for (;;) {
    if (i < 0 || i >= n->sch.ncol) return 0;
    switch (n->kind) {
      case ALG_ALPHA:
        *rel = n->rel;
        *attr = i; /* (its columns are the relation's attributes) */
        return 1;
      case ALG_SIGMA:
      case ALG_SIGMAT:
      case ALG_PIT:
      case ALG_INTERSECT: n = n->kid[0]; break;
      case ALG_PI: {
        const AlgExpr *e = n->pi[i];
        if (e->kind != AX_COL) return 0;
        n = n->kid[0];
        i = algSchemaCol(&n->sch, e->var, e->name);
        break;
      }
      case ALG_PRODUCT:
      case ALG_OPRODUCT:
        if (i >= n->kid[0]->sch.ncol) {
          i -= n->kid[0]->sch.ncol;
          n = n->kid[1];
        } else {
          n = n->kid[0];
        }
        break;
      default: return 0;
    }
  }
}

int rtNetBoundFrom(const RtNet *net, int rel, int *from, int *attr, int max) {
  if (rel < 1 || rel > net->nsensor) return 0;
  const RtSensor *s = &net->sensor[rel - 1];
  const AlgRel *r = s->rel;
  if (r->entity || r->deltaOf || r->sensorOf || !s->used || (r->delta && net->sensor[r->delta->id - 1].used) ||
      (r->altSensor && net->sensor[r->altSensor->id - 1].used) || r->mode == ALG_MODE_SAMPLED || !s->alphas.n ||
      s->sources.n || r->flagAttr < 0)
    return 0;
  int n = 0;
  for (int i = 0; i < s->alphas.n; i++) {
    const RtOp *a = s->alphas.v[i];
    if (!a->nkid) return 0;
    const AlgNode *k = a->kid[0]->node;
    if (k->kind == ALG_CONST) continue;
    const AlgRel *o;
    int at;
    /* the other relation's own records, as a replay reads them: not
    ** computed (a delta), not another sensor's (answered from its
    ** relation's state), not an entity relation, not rel itself */
    if (!colOrigin(k, 0, &o, &at) || o == r || o->entity || o->deltaOf || o->sensorOf || at >= o->nattr ||
        o->attr[at].type.kind != TY_ENTITY || o->attr[at].type.ent != r->attr[r->flagAttr].type.ent)
      return 0;
    int j = 0;
    while (j < n && !(from[j] == o->id && attr[j] == at)) j++;
    if (j < n) continue;
    if (n == max) return 0;
    from[n] = o->id;
    attr[n++] = at;
  }
  return n;
}

static int cmpI64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void rtNetBound(RtNet *net, int rel, const int64_t *vals, int64_t n) {
  if (rel < 1 || rel > net->nsensor) return;
  RtSensor *s = &net->sensor[rel - 1];
  free(s->bound);
  s->bound = tqMalloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (n) TQ_MEMCPY(s->bound, vals, sizeof(int64_t) * (size_t)n);
  qsort(s->bound, (size_t)n, sizeof(int64_t), cmpI64);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (!m || s->bound[m - 1] != s->bound[i]) s->bound[m++] = s->bound[i];
  s->nbound = m;
  s->hasBound = 1;
}

static int usedOrDelta(const RtNet *net, const RtSensor *s) {
  return s->used || (s->rel->delta && net->sensor[s->rel->delta->id - 1].used);
}

int rtNetNeed(const RtNet *net, int rel, int64_t entity) {
  if (rel < 1 || rel > net->nsensor) return 0;
  const RtSensor *s = &net->sensor[rel - 1];
  const AlgRel *r = s->rel;
  int any = entity == RT_NEED_ANY;
  if (r->deltaOf) return 0; /* computed by the engine, never recorded as such */
  if (!r->entity) {
    /* its other sensor (a sampled one) is answered from its records, on
    ** any entity it samples: every record may be asked about */
    if (r->altSensor && net->sensor[r->altSensor->id - 1].used) return any ? RT_NEED_ALL : 1;
    if (!usedOrDelta(net, s)) return RT_NEED_NONE;
    if (!constEnabled(s)) return any ? RT_NEED_ALL : 1;
    return any ? RT_NEED_SOME : mayEnable(s, entity);
  }
  /* an entity relation: read by a query, or kept for the sensors that
  ** live in its entities (alive: flag and performer attributes) */
  if (s->sources.n) return any ? RT_NEED_ALL : 1;
  int some = 0;
  for (int i = 0; i < net->nsensor; i++) {
    const RtSensor *u = &net->sensor[i];
    const AlgRel *ur = u->rel;
    if (ur->entity || ur->deltaOf || !usedOrDelta(net, u)) continue;
    int flag = ur->flagAttr >= 0 && ur->attr[ur->flagAttr].type.ent == r->entity;
    int perf = ur->performerAttr >= 0 && ur->attr[ur->performerAttr].type.ent == r->entity;
    if (!flag && !perf) continue;
    if (perf && ur->performerAttr != ur->flagAttr) return any ? RT_NEED_ALL : 1;
    if (!constEnabled(u)) return any ? RT_NEED_ALL : 1;
    if (any || mayEnable(u, entity)) some = 1;
  }
  if (any) return some ? RT_NEED_SOME : RT_NEED_NONE;
  return some;
}

TqTime rtNetSamplePeriod(const RtNet *net, int rel) {
  if (rel < 1 || rel > net->nsensor) return 0;
  const RtSensor *s = &net->sensor[rel - 1];
  if (s->rel->mode != ALG_MODE_SAMPLED || s->rel->entity || s->sources.n) return 0;
  TqTime p = 0;
  for (int i = 0; i < s->alphas.n; i++) {
    RtOp *a = s->alphas.v[i];
    if (a->nkid < 2 || !a->kid[1]->node || a->kid[1]->node->kind != ALG_CLOCK) return 0;
    TqTime q = rtClockPeriod(a->kid[1]);
    if (q <= 0) return 0;
    p = p ? gcd64(p, q) : q;
  }
  /* a used delta relation pairs each sample with the last tick's in the
  ** order of the open intervals (enComputeDeltas), which leaving out the
  ** intervals no tick sees would change (two open with the same entities):
  ** every interval is delivered (tests/golden/delta_unseen) */
  if (s->rel->delta && net->sensor[s->rel->delta->id - 1].used) return 0;
  return p;
}

void rtNetStatsJson(RtNet *net, TqBuf *b) {
  int64_t peak = 0;
  for (int i = 0; i < net->ops.n; i++) peak += ((RtOp *)net->ops.v[i])->peakStored;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  tqBufPrintf(b,
              "{\n  \"optimized\": %s,\n  \"tuples_processed\": %lld,\n  \"peak_stored_tuples\": %lld,\n"
              "  \"wall_seconds\": %.3f,\n  \"cpu_seconds\": %.3f,\n  \"peak_rss_kb\": %ld,\n  \"packets_seen\": %lld,\n"
              "  \"packets_total\": %lld,\n  \"packets_lost\": %lld,\n"
              "  \"stopped_early\": %s,\n",
              net->opt.noOpt ? "false" : "true", (long long)net->tuplesProcessed, (long long)peak,
              tqWallSeconds() - net->startWall,
              (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6,
              (long)ru.ru_maxrss, (long long)net->packetsSeen,
              (long long)(net->packetsTotal + net->packetsLost), (long long)net->packetsLost, net->stopped ? "true" : "false");
  /* (packets_lost is then a lower bound: some losses were not counted) */
  if (net->lostUnknown) tqBufPuts(b, "  \"packets_lost_unknown\": true,\n");
  tqBufPuts(b, "  \"sensors\": [");
  int first = 1;
  for (int i = 0; i < net->nsensor; i++) {
    RtSensor *s = &net->sensor[i];
    tqBufPrintf(b, "%s\n    {\"name\": ", first ? "" : ",");
    first = 0;
    rtJsonStr(b, s->rel->name);
    tqBufPrintf(b,
                ", \"kind\": \"%s\", \"mode\": \"%s\", \"used\": %s, \"recorded\": %lld, \"delivered\": %lld, "
                "\"samples\": %lld, \"max_enabled\": %d, \"skipped\": %lld, \"lost\": %lld",
                s->rel->entity ? "entity" : s->rel->isEvent ? "event" : "interval", algModeName(s->rel->mode),
                s->used ? "true" : "false", (long long)s->recorded, (long long)s->delivered, (long long)s->samples,
                s->maxEnabled, (long long)s->skipped, (long long)s->lost);
    if (s->lostUnknown) tqBufPuts(b, ", \"lost_unknown\": true");
    if (s->hasBound) tqBufPrintf(b, ", \"semijoin_entities\": %lld", (long long)s->nbound);
    if (s->saturated || (s->rel->mode == ALG_MODE_DISABLE && !s->rel->entity))
      tqBufPrintf(b, ", \"counter_bits\": %d, \"saturated\": %lld, \"flag_writes\": %lld, \"enabled_end\": %d",
                  s->rel->counterBits, (long long)s->saturated, (long long)s->flagWrites, s->nEnabled);
    if (s->rel->once)
      tqBufPrintf(b, ", \"once\": true, \"twice\": %lld, \"once_bytes\": %lld", (long long)s->twice,
                  (long long)s->onceBytes);
    if (s->rel->sensorOf || s->rel->altSensor) {
      /* SENSOR: the relation's sensors and their declared costs */
      tqBufPuts(b, ", \"sensor_of\": ");
      rtJsonStr(b, (s->rel->sensorOf ? s->rel->sensorOf : s->rel)->name);
      tqBufPrintf(b, ", \"cost_ns\": %lld", (long long)s->rel->cost);
      if (s->rel->rate) tqBufPrintf(b, ", \"rate\": %lld", (long long)s->rel->rate);
      if (s->rel->sensorOf) tqBufPrintf(b, ", \"outside\": %lld", (long long)s->outside);
    }
    if (s->filter) {
      /* SF: packets not written at the sensor, and those that came anyway */
      tqBufPuts(b, ", \"filter\": ");
      TqBuf f = {0};
      algExprPrint(s->filter, &f);
      rtJsonStr(b, f.s ? f.s : "");
      tqBufFree(&f);
      tqBufPrintf(b, ", \"filter_conditions\": %d, \"suppressed\": %lld, \"filtered\": %lld", s->nconds,
                  (long long)s->suppressed, (long long)s->filtered);
    }
    tqBufPuts(b, "}");
  }
  const RtReadStats *rd = &net->read;
  if (rd->blocks)
    tqBufPrintf(b,
                "\n  ],\n  \"read\": {\"blocks\": %lld, \"blocks_read\": %lld, \"bytes\": %lld, \"bytes_read\": %lld, "
                "\"records\": %lld, \"records_read\": %lld, \"streams\": %lld, \"spooled\": %lld, \"threads\": %lld, "
                "\"semijoin_blocks_read\": %lld, \"semijoin_bytes_read\": %lld",
                (long long)rd->blocks, (long long)rd->blocksRead, (long long)rd->bytes, (long long)rd->bytesRead,
                (long long)rd->records, (long long)rd->recordsRead, (long long)rd->streams, (long long)rd->spooled,
                (long long)rd->threads, (long long)rd->boundBlocks, (long long)rd->boundBytes);
  tqBufPuts(b, rd->blocks ? "}," : "\n  ],");
  tqBufPuts(b, "\n");
  rtLossJson(net, b);
  tqBufPuts(b, "  \"results\": [");
  for (int i = 0; i < net->nresult; i++) {
    RtResult *r = &net->result[i];
    tqBufPrintf(b, "%s\n    {\"name\": ", i ? "," : "");
    rtJsonStr(b, r->name);
    tqBufPrintf(b, ", \"rows\": %lld, \"duplicates\": %lld}", (long long)r->rows, (long long)r->dups);
  }
  tqBufPuts(b, "\n  ]\n}\n");
}
