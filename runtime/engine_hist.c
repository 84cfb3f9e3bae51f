/*
** engine_hist.c - a session's kept records, and the catch-up of a query
** added later over them (issue 20: "its answer covers time from t, except
** where persistent collection already holds the data"; Paradyn's Data
** Manager, its README in dyninst paradyn/src/DMthread/README: data
** that persists).
**
** While some persistent-collection query runs, the engine keeps what it
** gave the network of the relations those queries range over (their
** alphas' and entity sources' relations), whichever query's enabling
** brought it: the entity tuples that began and ended, the traced records
** delivered (an event, a begin, an end or a whole interval), each sample
** request of a sampled relation (which attribute, which entity, when:
** kept also when the answer was empty) with its answers, and the
** enablings of the traced sensors (on/off per entity).  When the
** recording of a relation begins it keeps its state then: the entity
** tuples alive, the traced intervals whose begin was delivered and the
** entities its sensor is enabled on.
**
** Memory.  The records go into chunks of 1 MiB; an instant is never split
** (a chunk with less than 64 KiB left ends where time moves on; it grows
** by 64 KiB for an instant that does not fit).  Past the bound (option
** session-history: 64M unless set, 1M at least) the oldest chunk is folded
** into the base state (what is open at the first kept record) and freed:
** the chunks hold at most the bound (one chunk at least), the base state
** what is open, as the engine's own recorded state does.  A catch-up
** takes two words per kept record while it runs.  (An entry is 40 bytes
** and 8 a value: a sample of ProcessState, five values, is 120 bytes with
** its request, so 64M hold some 550,000: one process sampled every 250 ms
** for a day and a half.)
**
** Catching up.  A query added later is built into a network of its own
** (rtNetNewEmpty) and run there over the kept records, from the latest
** point where all the relations it reads are kept, up to now, instant by
** instant as the engine ran them (an instant's entities, its ticks, then
** its records); then its operators move into the running network
** (rtPartMove) and go on live, state and all: its answer covers from that
** point, with no seam.  The run is exact only where the kept records hold
** everything it would have been given live:
**   - each of its sample requests (relation, attribute, entity, time) was
**     asked live too: its answers are the live answers, an empty one
**     included;
**   - while its alpha enables a traced sensor on an entity, the live
**     sensor was enabled on it too (so every record of it was delivered
**     and kept), checked as the enablings change, in the order they came.
** A run that meets a request or an enabling the records do not hold is
** thrown away and tried again from the next point that holds it (the next
** kept request of that entity at the start of its instant; just after the
** next live enabling of that entity), at most 4 times.  A dry run (its
** rows go nowhere) finds the point, then the run for real gives the rows.
** Not covered (the query starts at its addition, and tq_query_info says
** why): relations computed by the engine (delta relations), another
** sensor of a relation (SENSOR), disable-traced sensors (their flags are
** consumed as they fire), a traced relation filtered at its sensor (SF)
** in this run, a relation no persistent-collection query reads.  A
** current-phase query catches up within the current phase only, a query
** paused and watched again from after its pause (its rows until the pause
** are stored); one started again at a phase starts from then.
** A histogram (tq_query_histogram, set after the addition) counts the
** rows from then on.
*/
#include <stdlib.h>
#include <string.h>

#include "engineInt.h"

enum { H_BEGIN = 1, H_END, H_EVENT, H_ASK, H_SAMPLE, H_ON, H_OFF, H_OPEN, H_STOP };

/* One kept record. */
typedef struct HEnt {
  uint8_t kind;      /* H_* */
  uint8_t delivered; /* H_OPEN: its begin reached the network (a traced interval; entities: 1) */
  uint16_t nvals;    /* values that follow */
  int32_t rel;       /* relation id */
  TqTime t;          /* the instant it belongs to */
  TqTime from, to;   /* an interval's; H_ASK: `from` is the attribute asked */
  uint64_t id;       /* an interval's id; H_ASK, H_ON, H_OFF: the entity */
  int64_t vals[];
} HEnt;

typedef struct HChunk {
  struct HChunk *next;
  unsigned char *data;
  size_t used, cap;
  int64_t seq0;      /* number of its first entry */
  int64_t n;         /* its entries */
  int newInstant;    /* it began where time moved on (not mid-instant) */
} HChunk;

/* An interval open at the first kept record (the base state), or in a
** catch-up's copy of it. */
typedef struct HIv {
  int rel;
  int delivered;
  uint64_t id;
  TqTime from;
  int nvals;
  int64_t vals[];
} HIv;

typedef struct EnHist {
  HChunk *head, *tail;
  int64_t bytes;      /* the chunks' */
  int64_t max;        /* the bound */
  int64_t nextSeq;    /* number of the next entry */
  int64_t dropped;    /* entries folded into the base and freed */
  TqTime lastT;       /* time of the latest entry */
  int64_t *startSeq;  /* per relation: the entry its recording is complete from (INT64_MAX: not kept) */
  TqTime *startT;     /* per relation: when its recording began */
  uint8_t *startInst; /* per relation: it began before the instant startT (the run's start), not after it */
  TqMap base;         /* ivKey -> HIv*: open before the first kept entry */
  TqMap baseOn;       /* onKey -> its relation id: enabled then (traced relations) */
  int64_t catchups;   /* queries that caught up */
} EnHist;

#define CHUNK ((size_t)1 << 20)
#define GROW ((size_t)64 << 10) /* a chunk with less room left ends at the next instant */
#define HIST_DEFAULT ((int64_t)64 << 20)
#define ATTEMPTS 4

static size_t entSize(const HEnt *x) { return sizeof(HEnt) + sizeof(int64_t) * x->nvals; }
static uint64_t onKey(int rel, int64_t ent) { return tqHash64(((uint64_t)rel << 48) ^ (uint64_t)ent ^ 0x5bd1e995u) | 2; }

/* Is relation rel one a catch-up can answer (see the top)? */
static int coverable(const AlgRel *r) {
  if (r->deltaOf || r->sensorOf || r->altSensor) return 0;
  if (r->entity || r->mode == ALG_MODE_SAMPLED) return 1;
  return r->mode == ALG_MODE_TRACED;
}
static int isTraced(const AlgRel *r) { return !r->entity && r->mode == ALG_MODE_TRACED; }

/* ================================================================ keeping */

static HEnt *hAppend(tq_engine *e, int kind, int rel, TqTime t, int nvals) {
  EnHist *h = e->hist;
  size_t sz = sizeof(HEnt) + sizeof(int64_t) * (size_t)nvals;
  HChunk *c = h->tail;
  if (!c || (c->used + GROW > c->cap && t > h->lastT)) {
    c = tqCalloc(1, sizeof *c);
    c->cap = CHUNK;
    c->data = tqMalloc(c->cap);
    c->seq0 = h->nextSeq;
    c->newInstant = h->tail != NULL;
    if (h->tail) h->tail->next = c;
    else h->head = c;
    h->tail = c;
    h->bytes += (int64_t)c->cap;
  }
  if (c->used + sz > c->cap) { /* (an instant of more than GROW bytes at its end) */
    size_t nc = c->cap + (sz > GROW ? sz : GROW);
    h->bytes += (int64_t)(nc - c->cap);
    c->data = tqRealloc(c->data, nc);
    c->cap = nc;
  }
  HEnt *x = (HEnt *)(c->data + c->used);
  memset(x, 0, sizeof *x);
  x->kind = (uint8_t)kind;
  x->nvals = (uint16_t)nvals;
  x->rel = rel;
  x->t = t;
  c->used += sz;
  c->n++;
  h->nextSeq++;
  if (t > h->lastT) h->lastT = t;
  return x;
}

/* Applies x to a state: open intervals (ivKey -> HIv*) and enablings. */
static void applyState(TqMap *open, TqMap *on, const HEnt *x, const uint8_t *only) {
  if (only && !only[x->rel - 1]) return;
  switch (x->kind) {
    case H_BEGIN:
    case H_OPEN: {
      HIv *iv = tqMalloc(sizeof(HIv) + sizeof(int64_t) * (x->nvals ? x->nvals : 1));
      iv->rel = x->rel;
      iv->delivered = x->kind == H_BEGIN ? 1 : x->delivered;
      iv->id = x->id;
      iv->from = x->from;
      iv->nvals = x->nvals;
      TQ_MEMCPY(iv->vals, x->vals, sizeof(int64_t) * x->nvals);
      free(tqMapDel(open, ivKey(x->rel, x->id)));
      tqMapPut(open, ivKey(x->rel, x->id), iv);
      break;
    }
    case H_END: free(tqMapDel(open, ivKey(x->rel, x->id))); break;
    case H_ON: tqMapPut(on, onKey(x->rel, (int64_t)x->id), (void *)(intptr_t)x->rel); break;
    case H_OFF: tqMapDel(on, onKey(x->rel, (int64_t)x->id)); break;
    case H_STOP: /* its state and its enablings: known no more (deleting leaves tombstones: safe here) */
      for (uint32_t i = 0; i < open->cap; i++) {
        HIv *iv = open->slot[i].val;
        if (open->slot[i].key > 1 && iv->rel == x->rel) free(tqMapDel(open, open->slot[i].key));
      }
      for (uint32_t i = 0; i < on->cap; i++)
        if (on->slot[i].key > 1 && (intptr_t)on->slot[i].val == x->rel) tqMapDel(on, on->slot[i].key);
      break;
    default: break;
  }
}

static void freeOpen(TqMap *open) {
  for (uint32_t i = 0; i < open->cap; i++)
    if (open->slot[i].key > 1) free(open->slot[i].val);
  tqMapFree(open);
}

/* Folds the oldest chunks into the base state while the bound is passed. */
static void hTrim(EnHist *h) {
  while (h->bytes > h->max && h->head && h->head != h->tail) {
    HChunk *c = h->head;
    for (size_t off = 0; off < c->used;) {
      const HEnt *x = (const HEnt *)(c->data + off);
      applyState(&h->base, &h->baseOn, x, NULL);
      off += entSize(x);
    }
    h->head = c->next;
    h->bytes -= (int64_t)c->cap;
    h->dropped += c->n;
    free(c->data);
    free(c);
  }
}

/* The entry a relation's recording is complete from, with the oldest kept. */
static int64_t relStart(const EnHist *h, int rel) {
  int64_t s = h->startSeq[rel - 1];
  return s == INT64_MAX || !h->head || s >= h->head->seq0 ? s : h->head->seq0;
}

void enHistWant(tq_engine *e, const uint8_t *want, int atStart) {
  int any = 0;
  for (int i = 0; want && i < e->nrel; i++) any |= want[i] && coverable(e->net->sensor[i].rel);
  if (!any) {
    enHistFree(e);
    return;
  }
  if (!e->hist) {
    EnHist *h = tqCalloc(1, sizeof *h);
    h->max = e->histMax > 0 ? e->histMax : HIST_DEFAULT;
    h->lastT = TQ_BEGINNING;
    h->startSeq = tqMalloc(sizeof(int64_t) * (size_t)(e->nrel ? e->nrel : 1));
    h->startT = tqMalloc(sizeof(TqTime) * (size_t)(e->nrel ? e->nrel : 1));
    h->startInst = tqCalloc((size_t)(e->nrel ? e->nrel : 1), 1);
    for (int i = 0; i < e->nrel; i++) h->startSeq[i] = INT64_MAX, h->startT[i] = TQ_FOREVER;
    e->hist = h;
    e->histRec = tqCalloc((size_t)(e->nrel ? e->nrel : 1), 1);
  }
  EnHist *h = e->hist;
  TqTime now = e->net->now;
  for (int i = 0; i < e->nrel; i++) {
    const AlgRel *r = e->net->sensor[i].rel;
    int w = want[i] && coverable(r);
    if (w == e->histRec[i]) continue;
    if (!w) {
      hAppend(e, H_STOP, i + 1, now, 0);
      e->histRec[i] = 0;
      h->startSeq[i] = INT64_MAX;
      h->startT[i] = TQ_FOREVER;
      continue;
    }
    /* its state now, then its records from here on */
    const RelState *rs = &e->rs[i];
    for (int k = 0; k < rs->nopen; k++) {
      const OpenIv *iv = rs->open[k];
      int delivered = r->entity || (iv->emitted & 1);
      if (!delivered || r->mode == ALG_MODE_SAMPLED) continue;
      HEnt *x = hAppend(e, H_OPEN, i + 1, now, r->nattr);
      x->delivered = 1;
      x->id = iv->id;
      x->from = iv->from;
      TQ_MEMCPY(x->vals, iv->vals, sizeof(int64_t) * (size_t)r->nattr);
    }
    if (isTraced(r)) {
      const RtSensor *s = &e->net->sensor[i];
      int n = rtSensorEnabledList(s, NULL, 0);
      int64_t *ents = tqMalloc(sizeof(int64_t) * (size_t)(n ? n : 1));
      rtSensorEnabledList(s, ents, n);
      for (int k = 0; k < n; k++) hAppend(e, H_ON, i + 1, now, 0)->id = (uint64_t)ents[k];
      free(ents);
    }
    e->histRec[i] = 1;
    h->startSeq[i] = h->nextSeq;
    h->startT[i] = now;
    h->startInst[i] = (uint8_t)atStart;
  }
  hTrim(h);
}

void enHistRecord(tq_engine *e, const tq_record *r, TqTime t) {
  int kind = r->kind == TQ_REC_BEGIN ? H_BEGIN : r->kind == TQ_REC_EVENT ? H_EVENT : H_END;
  HEnt *x = hAppend(e, kind, r->rel, t, r->nvals);
  x->id = r->id;
  x->from = r->kind == TQ_REC_EVENT ? r->t : r->from;
  x->to = r->kind == TQ_REC_EVENT ? r->t + 1 : r->to;
  TQ_MEMCPY(x->vals, r->vals, sizeof(int64_t) * (size_t)r->nvals);
  hTrim(e->hist);
}

void enHistAsk(tq_engine *e, int rel, int attr, int64_t who, TqTime t) {
  HEnt *x = hAppend(e, H_ASK, rel, t, 0);
  x->from = attr;
  x->id = (uint64_t)who;
  hTrim(e->hist);
}

void enHistSample(tq_engine *e, int rel, TqTime t, const int64_t *vals, int nvals) {
  HEnt *x = hAppend(e, H_SAMPLE, rel, t, nvals);
  TQ_MEMCPY(x->vals, vals, sizeof(int64_t) * (size_t)nvals);
  hTrim(e->hist);
}

void enHistFlag(tq_engine *e, const RtSensor *s, int64_t entity, int on) {
  if (!isTraced(s->rel)) return;
  hAppend(e, on > 0 ? H_ON : H_OFF, s->rel->id, e->net->now, 0)->id = (uint64_t)entity;
  hTrim(e->hist);
}

void enHistFree(tq_engine *e) {
  EnHist *h = e->hist;
  if (!h) return;
  for (HChunk *c = h->head, *n; c; c = n) {
    n = c->next;
    free(c->data);
    free(c);
  }
  freeOpen(&h->base);
  tqMapFree(&h->baseOn);
  free(h->startSeq);
  free(h->startT);
  free(h->startInst);
  free(h);
  free(e->histRec);
  e->hist = NULL;
  e->histRec = NULL;
}

void enHistStats(tq_engine *e, TqBuf *b) {
  EnHist *h = e->hist;
  if (!h) {
    tqBufPuts(b, "null");
    return;
  }
  int64_t kept = h->nextSeq - (h->head ? h->head->seq0 : h->nextSeq);
  tqBufPrintf(b, "{\"bytes\": %lld, \"bound\": %lld, \"entries\": %lld, \"dropped\": %lld, \"from\": %lld, \"caught_up\": %lld, \"relations\": [",
              (long long)h->bytes, (long long)h->max, (long long)kept, (long long)h->dropped,
              (long long)(h->head && h->head->n ? ((const HEnt *)h->head->data)->t : e->net->now), (long long)h->catchups);
  int first = 1;
  for (int i = 0; i < e->nrel; i++) {
    if (!e->histRec[i]) continue;
    int64_t s = relStart(h, i + 1);
    TqTime t = h->startT[i];
    if (h->head && s == h->head->seq0 && h->head->n && ((const HEnt *)h->head->data)->t > t) t = ((const HEnt *)h->head->data)->t;
    tqBufPuts(b, first ? "{\"relation\": " : ", {\"relation\": ");
    first = 0;
    rtJsonStr(b, e->net->sensor[i].rel->name);
    tqBufPrintf(b, ", \"from\": %lld}", (long long)t);
  }
  tqBufPuts(b, "]}");
}

/* ================================================================ catching up */

typedef struct Catch {
  tq_engine *e;
  EnHist *h;
  RtNet *hn;          /* the network the part runs in */
  RtPart *part;
  RtProducer prod;    /* the sensors of hn: answered from the kept records */
  HEnt **all;         /* every kept entry, in order */
  int64_t n;
  int64_t pos;        /* next entry to go through */
  int64_t g0, g1;     /* the instant being gone through: all[g0..g1) */
  TqTime *endMin;     /* per entry: the earliest begin of a kept end at or after it (traced relations read) */
  TqTime livePending; /* the live engine's earliest pending begin of those relations */
  uint8_t *reads;     /* per relation: the part reads it */
  TqMap liveOn;       /* onKey -> relation id: the live sensor enabled (traced relations read) */
  TqMap partOn;       /* onKey -> 1: the part enabled */
  int failed;
  int64_t failSeq;    /* index in all of where it failed */
  int failKind;       /* H_ASK: a request not kept; H_ON: an enabling */
  int failRel, failAttr;
  int64_t failWho;
  TqBuf why;
  int closing;        /* the part is being dropped: enablings no longer count */
} Catch;

static void failAt(Catch *c, int kind, int rel, int attr, int64_t who, const char *what) {
  if (c->failed) return;
  c->failed = 1;
  c->failSeq = c->pos > 0 ? c->pos - 1 : 0;
  if (c->g1 > c->g0 && kind == H_ASK) c->failSeq = c->g0;
  c->failKind = kind;
  c->failRel = rel;
  c->failAttr = attr;
  c->failWho = who;
  char tb[64];
  const AlgRel *r = c->e->net->sensor[rel - 1].rel;
  const AlgAttr *a = &r->attr[kind == H_ASK ? attr : r->flagAttr];
  const char *name = a->type.kind == TY_INT ? NULL : tqSymName((int32_t)who);
  tqBufFree(&c->why);
  if (name) tqBufPrintf(&c->why, "%s %s on %s at %s", what, r->name, name, tqTimeFormat(tb, sizeof tb, c->hn->now));
  else tqBufPrintf(&c->why, "%s %s on %lld at %s", what, r->name, (long long)who, tqTimeFormat(tb, sizeof tb, c->hn->now));
}

/* A sample request of the part: the answers kept with the live request of
** the same relation, attribute and entity at this instant. */
static void catchSample(void *self, RtSensor *s, int attr, int64_t who, TqTime t, void *cookie) {
  Catch *c = self;
  int rel = s->rel->id;
  for (int64_t i = c->g0; i < c->g1; i++) {
    const HEnt *x = c->all[i];
    if (x->kind != H_ASK || x->rel != rel || x->from != attr || (int64_t)x->id != who || x->t != t) continue;
    for (int64_t k = i + 1; k < c->g1 && c->all[k]->kind == H_SAMPLE && c->all[k]->rel == rel; k++)
      rtSampleAnswer(cookie, c->all[k]->vals);
    return;
  }
  failAt(c, H_ASK, rel, attr, who, "the kept records hold no sample of");
}

static TqTime catchPending(void *self, RtSensor *s) {
  Catch *c = self;
  TqTime m = c->pos < c->n ? c->endMin[c->pos] : TQ_FOREVER;
  return c->livePending < m ? c->livePending : m;
}

/* The part's alphas enable or disable a sensor entity: while it is
** enabled there, the live sensor must have been enabled on it too. */
static void catchFlag(void *ctx, RtSensor *s, int64_t entity, int on) {
  Catch *c = ctx;
  if (c->closing || !isTraced(s->rel)) return;
  uint64_t k = onKey(s->rel->id, entity);
  if (on > 0) {
    tqMapPut(&c->partOn, k, (void *)1);
    if (!tqMapGet(&c->liveOn, k)) failAt(c, H_ON, s->rel->id, 0, entity, "the kept records do not cover");
  } else {
    tqMapDel(&c->partOn, k);
  }
}

static void liveFlag(Catch *c, const HEnt *x) {
  if (!c->reads[x->rel - 1] || !isTraced(c->hn->sensor[x->rel - 1].rel)) return;
  uint64_t k = onKey(x->rel, (int64_t)x->id);
  if (x->kind == H_ON) {
    tqMapPut(&c->liveOn, k, (void *)(intptr_t)x->rel);
  } else {
    tqMapDel(&c->liveOn, k);
    if (tqMapGet(&c->partOn, k)) failAt(c, H_ON, x->rel, 0, (int64_t)x->id, "the kept records do not cover");
  }
}

static void tickIf(Catch *c, TqTime t, TqTime *next, TqTime gcd) {
  if (*next != t) return;
  rtNetTick(c->hn, t);
  *next = tqTimeAdd(t, gcd);
}

/* One kept entry, into the part's network. */
static void catchEntry(Catch *c, const HEnt *x) {
  RtNet *hn = c->hn;
  if (x->kind == H_ON || x->kind == H_OFF) {
    liveFlag(c, x);
    return;
  }
  if (!c->reads[x->rel - 1]) return;
  RtSensor *s = &hn->sensor[x->rel - 1];
  int f = s->rel->flagAttr;
  switch (x->kind) {
    case H_BEGIN:
      if (s->rel->entity) {
        rtEntityBegin(hn, s, x->id, x->from, x->vals);
        break;
      }
      s->delivered++;
      for (int i = 0; i < s->alphas.n; i++)
        if (!rtAlphaBegin(s->alphas.v[i], x->id, x->from, x->vals[f], x->vals)) rtAlphaMissed(s->alphas.v[i], x->id, x->from);
      break;
    case H_END:
      if (s->rel->entity) rtEntityEnd(hn, s, x->id, x->from, x->to, x->vals);
      else rtDeliverEnd(hn, s, x->id, x->from, x->to, x->vals);
      break;
    case H_EVENT: rtDeliverEvent(hn, s, x->from, x->vals); break;
    default: break; /* (requests and samples: at the tick; state: before the start) */
  }
}

static int isEntityRec(const Catch *c, const HEnt *x) {
  return (x->kind == H_BEGIN || x->kind == H_END) && c->hn->sensor[x->rel - 1].rel->entity;
}

/* Builds res[0..nres) into a network of their own, from entry p of the
** kept records (its state: the base and every entry before p), at time t0,
** and runs it up to now.  startsInst: p is the first entry of instant t0
** (a tick at t0 is the part's); else instant t0 was complete before p.
** On success c->part runs in c->hn at the live network's time. */
static int catchRun(Catch *c, CpProgram *prog, RtResult *res, int nres, int64_t p, TqTime t0, int startsInst) {
  tq_engine *e = c->e;
  TqBuf msg = {0};
  c->hn = rtNetNewEmpty(prog, &e->net->opt, &e->diag);
  c->part = rtNetAddPart(c->hn, res, nres, &msg);
  tqBufFree(&msg);
  if (!c->part) return -1;
  RtNet *hn = c->hn;
  c->prod = (RtProducer){"kept records", c, catchSample, catchPending};
  for (int i = 0; i < hn->nsensor; i++) {
    hn->sensor[i].prod = &c->prod;
    hn->sensor[i].onFlag = catchFlag;
    hn->sensor[i].onFlagCtx = c;
  }
  /* the state before p: the base, then the entries before p */
  TqMap open = {0};
  tqMapFree(&c->liveOn);
  tqMapFree(&c->partOn);
  EnHist *h = c->h;
  for (uint32_t i = 0; i < h->base.cap; i++) {
    if (h->base.slot[i].key <= 1) continue;
    const HIv *b = h->base.slot[i].val;
    if (!c->reads[b->rel - 1]) continue;
    HIv *iv = tqMalloc(sizeof(HIv) + sizeof(int64_t) * (size_t)(b->nvals ? b->nvals : 1));
    memcpy(iv, b, sizeof(HIv) + sizeof(int64_t) * (size_t)b->nvals);
    tqMapPut(&open, h->base.slot[i].key, iv);
  }
  for (uint32_t i = 0; i < h->baseOn.cap; i++)
    if (h->baseOn.slot[i].key > 1) tqMapPut(&c->liveOn, h->baseOn.slot[i].key, h->baseOn.slot[i].val);
  for (int64_t i = 0; i < p; i++) applyState(&open, &c->liveOn, c->all[i], c->reads);
  /* (the enablings of the flush of its first instant came before it) */
  while (startsInst && p < c->n && c->all[p]->t == t0 && (c->all[p]->kind == H_ON || c->all[p]->kind == H_OFF))
    applyState(&open, &c->liveOn, c->all[p++], c->reads);
  /* the entities alive then, with their true begins; the traced intervals
  ** whose begin was delivered (to the live queries) may come to it whole */
  for (uint32_t i = 0; i < open.cap; i++) {
    if (open.slot[i].key <= 1) continue;
    const HIv *iv = open.slot[i].val;
    RtSensor *s = &hn->sensor[iv->rel - 1];
    if (s->rel->entity) {
      for (int k = 0; k < s->sources.n; k++) rtPartReplay(s->sources.v[k], iv->id, iv->from, iv->vals);
    } else if (iv->delivered) {
      for (int k = 0; k < s->alphas.n; k++) rtAlphaMissed(s->alphas.v[k], iv->id, iv->from);
    }
  }
  freeOpen(&open);
  TqTime T = e->net->now;
  c->pos = p;
  c->g0 = c->g1 = p;
  if (rtNetStart(hn, t0)) return -1;
  hn->origin = e->net->origin; /* (an aggregate over samples counts from the run's first request) */
  TqTime gcd = hn->clockGcd;
  TqTime next = !gcd ? TQ_FOREVER : startsInst ? tqTickAtOrAfter(t0, gcd) : tqTickAfter(t0, gcd);
  e->catchNet = hn;
  while (!c->failed && !hn->failed) {
    TqTime t = c->pos < c->n ? c->all[c->pos]->t : TQ_FOREVER;
    c->g0 = c->g1 = c->pos;
    while (next < t && next <= T && !c->failed) { /* ticks with no kept record: instants of their own */
      rtNetAdvance(hn, next);
      tickIf(c, next, &next, gcd);
      rtNetEndInstant(hn);
    }
    if (c->pos >= c->n || c->failed) break;
    int64_t j = c->pos;
    while (j < c->n && c->all[j]->t == t) j++;
    c->g1 = j;
    /* the live enablings of this instant's flush came first */
    while (c->pos < j && (c->all[c->pos]->kind == H_ON || c->all[c->pos]->kind == H_OFF)) liveFlag(c, c->all[c->pos++]);
    rtNetAdvance(hn, t);
    int64_t lastEnd = -1;
    for (int64_t k = c->pos; k < j; k++)
      if (c->all[k]->kind == H_END && c->reads[c->all[k]->rel - 1] && !hn->sensor[c->all[k]->rel - 1].rel->entity) lastEnd = k;
    int ticked = 0;
    for (; c->pos < j && !c->failed;) {
      const HEnt *x = c->all[c->pos];
      if (!ticked && !isEntityRec(c, x) && x->kind != H_ON && x->kind != H_OFF) {
        /* the entities of the instant, then its ticks, then its records */
        tickIf(c, t, &next, gcd);
        ticked = 1;
        if (lastEnd < 0) rtNetEndsDone(hn);
      }
      c->pos++;
      catchEntry(c, x);
      if (c->pos - 1 == lastEnd) rtNetEndsDone(hn);
    }
    if (!ticked && !c->failed) {
      tickIf(c, t, &next, gcd);
      if (lastEnd < 0) rtNetEndsDone(hn);
    }
    rtNetEndInstant(hn);
  }
  while (!c->failed && next <= T) {
    rtNetAdvance(hn, next);
    tickIf(c, next, &next, gcd);
    rtNetEndInstant(hn);
  }
  if (!c->failed && hn->now < T) rtNetAdvance(hn, T);
  e->catchNet = NULL;
  return hn->failed ? -1 : 0;
}

static void catchEnd(Catch *c) {
  if (c->part) {
    c->closing = 1;
    rtNetDropPart(c->hn, c->part);
    c->part = NULL;
  }
  rtNetFree(c->hn);
  c->hn = NULL;
  c->closing = 0;
  c->failed = 0;
}

/* The first entry of the instant of entry i. */
static int64_t instStart(const Catch *c, int64_t i) {
  while (i > 0 && c->all[i - 1]->t == c->all[i]->t) i--;
  return i;
}

/* Where a run that failed can start again: after the failure, where the
** kept records hold what it missed (the next kept request of that entity;
** the live enabling of that entity, just after it).  -1: nowhere. */
static int64_t nextStart(const Catch *c, TqTime *t0, int *startsInst) {
  for (int64_t i = c->failSeq + 1; i < c->n; i++) {
    const HEnt *x = c->all[i];
    if (x->rel != c->failRel || (int64_t)x->id != c->failWho) continue;
    if (c->failKind == H_ASK && x->kind == H_ASK && x->from == c->failAttr && x->t > c->all[c->failSeq]->t) {
      *startsInst = 1;
      *t0 = x->t;
      return instStart(c, i);
    }
    if (c->failKind == H_ON && x->kind == H_ON) {
      /* after the enablings that came with it (a query added enables
      ** all its sensor entities at once) */
      while (i + 1 < c->n && c->all[i + 1]->t == x->t && (c->all[i + 1]->kind == H_ON || c->all[i + 1]->kind == H_OFF)) i++;
      *startsInst = 0;
      *t0 = x->t;
      return i + 1;
    }
  }
  return -1;
}

RtPart *enHistCatchUp(tq_engine *e, CpProgram *prog, RtResult *res, int nres, TqTime after, TqTime *covers, TqBuf *why) {
  EnHist *h = e->hist;
  *covers = e->net->now;
  if (!h || !h->head) {
    tqBufPuts(why, "no persistent-collection query keeps records");
    return NULL;
  }
  Catch c = {.e = e, .h = h};
  c.reads = tqCalloc((size_t)(e->nrel ? e->nrel : 1), 1);
  /* which relations it reads, and from where all of them are kept */
  RtNet *probe = rtNetNewEmpty(prog, &e->net->opt, &e->diag);
  TqBuf msg = {0};
  RtPart *pp = rtNetAddPart(probe, res, nres, &msg);
  tqBufFree(&msg);
  /* the start: where the latest of their recordings began (its instant
  ** was complete), or the oldest kept entry (an instant begins there
  ** unless it is the first ever) */
  int64_t p = h->head->seq0;
  TqTime t0 = h->head->n ? ((const HEnt *)h->head->data)->t : e->net->now;
  int startsInst = h->head->newInstant;
  for (int i = 0; pp && i < e->nrel; i++) {
    const RtSensor *s = &probe->sensor[i];
    if (!s->alphas.n && !s->sources.n) continue;
    c.reads[i] = 1;
    int64_t st = relStart(h, i + 1);
    const AlgRel *r = e->net->sensor[i].rel;
    if (!why->n && !coverable(r))
      tqBufPrintf(why, "the records of %s are not kept (%s)", r->name,
                  r->deltaOf ? "a delta relation, computed by the engine" : r->mode == ALG_MODE_DISABLE ? "a disable-traced sensor" : "another sensor of a relation");
    else if (!why->n && isTraced(r) && e->net->sensor[i].filter && enSensorFiltering(e))
      tqBufPrintf(why, "the records of %s are filtered at its sensor in this run (SF): not all are kept", r->name);
    else if (!why->n && st == INT64_MAX)
      tqBufPrintf(why, "no persistent-collection query reads %s", r->name);
    /* (a recording that began in the oldest kept chunk or later: at its
    ** start, after its instant; one whose start was folded: at the chunk) */
    int64_t sr = h->startSeq[i];
    if (sr != INT64_MAX && sr >= p) {
      p = sr;
      t0 = h->startT[i];
      startsInst = h->startInst[i];
    }
  }
  if (pp) rtNetDropPart(probe, pp);
  rtNetFree(probe);
  if (!pp || why->n) {
    if (!why->n) tqBufPuts(why, "its network could not be built");
    free(c.reads);
    return NULL;
  }
  /* every kept entry, in order; the earliest begin of an end still to come */
  c.n = h->nextSeq - h->head->seq0;
  c.all = tqMalloc(sizeof(HEnt *) * (size_t)(c.n ? c.n : 1));
  int64_t k = 0;
  for (HChunk *ch = h->head; ch; ch = ch->next)
    for (size_t off = 0; off < ch->used; off += entSize((const HEnt *)(ch->data + off))) c.all[k++] = (HEnt *)(ch->data + off);
  c.endMin = tqMalloc(sizeof(TqTime) * (size_t)(c.n + 1));
  c.endMin[c.n] = TQ_FOREVER;
  for (int64_t i = c.n - 1; i >= 0; i--) {
    const HEnt *x = c.all[i];
    TqTime m = c.endMin[i + 1];
    if (x->kind == H_END && c.reads[x->rel - 1] && isTraced(e->net->sensor[x->rel - 1].rel) && x->from < m) m = x->from;
    c.endMin[i] = m;
  }
  c.livePending = TQ_FOREVER;
  for (int i = 0; i < e->nrel; i++)
    if (c.reads[i] && isTraced(e->net->sensor[i].rel)) {
      TqTime m = enMinPending(e, &e->net->sensor[i]);
      if (m < c.livePending) c.livePending = m;
    }
  /* not before the first instant after `after` */
  p -= h->head->seq0;
  if (t0 <= after) {
    while (p < c.n && c.all[p]->t <= after) p++;
    t0 = p < c.n ? c.all[p]->t : e->net->now;
    startsInst = 1;
  }
  if (t0 >= e->net->now) tqBufPuts(why, "the records it reads are kept from now only");
  RtPart *part = NULL;
  for (int attempt = 0; attempt < ATTEMPTS && t0 < e->net->now && !part; attempt++) {
    /* a dry run (its rows go nowhere) says whether the records hold it */
    RtResult *dry = tqCalloc((size_t)nres, sizeof(RtResult));
    RtConsumer none = {"none", NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < nres; i++) {
      dry[i] = res[i];
      dry[i].only = &none;
      dry[i].rows = dry[i].dups = 0;
    }
    int rc = catchRun(&c, prog, dry, nres, p, t0, startsInst);
    int failed = c.failed || rc;
    catchEnd(&c);
    free(dry);
    if (rc) break;
    if (!failed) {
      /* for real: the rows go to the query */
      if (catchRun(&c, prog, res, nres, p, t0, startsInst) || c.failed) {
        catchEnd(&c); /* (cannot happen: the same records, the same run) */
        tqBufPuts(why, "the run over the kept records failed");
        break;
      }
      *covers = t0;
      part = c.part;
      rtPartMove(c.hn, part, e->net);
      c.part = NULL;
      catchEnd(&c);
      h->catchups++;
      break;
    }
    tqBufFree(why);
    tqBufAdd(why, c.why.s, c.why.n);
    int64_t np = nextStart(&c, &t0, &startsInst);
    c.failed = 0;
    if (np < 0) break;
    p = np;
    c.failed = 0;
  }
  if (!part && !why->n) tqBufPuts(why, "the run over the kept records failed");
  tqBufFree(&c.why);
  tqMapFree(&c.liveOn);
  tqMapFree(&c.partOn);
  free(c.all);
  free(c.endMin);
  free(c.reads);
  return part;
}
