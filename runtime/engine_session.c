/*
** engine_session.c - a session: queries that come and go while the
** operation runs (include/tqmon.h, "a session"), after Paradyn's Data
** Manager (its README, dyninst paradyn/src/DMthread/README: metric instances enabled and disabled as
** an investigation moves, persistence flags, phases).
**
** A query is a file compiled after the engine's own program files, so its
** catalog is the program's (the same relations by id; a file that
** declares a relation or a clock is refused).  Its retrieve statements are
** built into the running network as one part (rtNetAddPart): its alphas
** count their enables at the sensors like every alpha, so two queries
** sharing a sensor entity keep it enabled until both are gone, and removing
** one gives its units back (rtNetDropPart).  The entities alive when it is
** added are replayed into its entity sources from the engine's recorded
** state (the option "session" keeps it for every relation).
**
** Rows go to the query's own consumer (RtResult.only): into its table of
** the session's store, with the phase each row was decided in, and to its
** watchers as JSON lines.  Invariants: a query's part is NULL exactly when
** it is paused; its tables are open (tbl >= 0) while it exists; a table
** the store holds before the query is added (one that persisted after an
** earlier query, PERSIST_DATA, or a daemon's before it was restarted on
** its store) is never dropped: the query appends to it when its columns
** are the same, and is refused when they are not (rtStoreTableAppend).
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engineInt.h"

typedef struct EnWatch {
  int id;
  tq_watch_fn fn;
  void *ctx;
} EnWatch;

/* An open row of a stored result: its store row, until it closes. */
typedef struct OpenRow {
  int64_t rowid; /* the store's rowid */
} OpenRow;

typedef struct EnQuery {
  tq_engine *e;
  char *name, *file;     /* owned */
  unsigned flags;        /* TQ_QUERY_* */
  CpProgram *prog;       /* the engine's files, then the query's (owned) */
  int nres;
  RtResult *res;         /* one per retrieve of its file */
  char **tblName;        /* per result: its table's name (owned) */
  AlgAttr **sattr;       /* per result: its attributes, then `phase` (the table's columns) */
  int *tbl;              /* per result: store table, -1 without a store */
  int *cont;             /* per result: 1 when its table was in the store before it (its rows go
                         ** on after those, and the table is never dropped) */
  TqMap *open;           /* per result: sink row id + 2 -> store rowid of an open row */
  RtPart *part;          /* its operators in the network; NULL while paused */
  RtConsumer c;          /* its rows (res[i].only) */
  char *phase;           /* the phase its state began in (owned) */
  TqTime added;          /* when its state began */
  int64_t rows;          /* rows inserted */
  EnWatch *w;            /* watchers */
  int nw, cw;
  int paused;
  int64_t pending;       /* rows stored since the last commit */
  /* a folding histogram (tq_query_histogram) */
  int histAttr;          /* attribute of result 0 it counts; -1: no histogram */
  int histBuckets;
  RtHist *hist;          /* created at the first row */
  TqTime histWidth0;     /* its first width */
  TqTime samplePeriod;   /* the query's clock period now */
  int histSlow;          /* it folded: slow the clocks down (at the end of the instant) */
  uint8_t *reads;        /* per relation: one its queries range over (the records it needs) */
  TqTime pausedAt;       /* when it paused last (TQ_BEGINNING: never) */
  TqTime covers;         /* its answer covers from here (a catch-up over kept records: before added) */
  char *coverNote;       /* why not from earlier (owned; "" when it caught up) */
} EnQuery;

#define HIST_SAMPLES 4 /* samples a bucket */

static EnQuery *findQuery(tq_engine *e, const char *name) {
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    if (!strcmp(q->name, name)) return q;
  }
  return NULL;
}

/* Is s a name of 1..63 characters of letters, digits and `more`, not
** starting with a digit or one of more? */
static int goodName(const char *s, const char *more) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0 || n > 63 || (s[0] >= '0' && s[0] <= '9') || strchr(more, s[0])) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || strchr(more, c)))
      return 0;
  }
  return 1;
}

static const char *phaseName(tq_engine *e) {
  if (!e->phase) e->phase = tqStrdup("phase0");
  return e->phase;
}

/* The phase that held time t (a row decided while a query catches up). */
static const char *phaseAt(tq_engine *e, TqTime t) {
  if (!e->nphases || t >= e->phaseFrom) return phaseName(e);
  for (int i = e->pastPhases.n - 1; i > 0; i--)
    if (t >= e->pastFrom[i]) return e->pastPhases.v[i];
  return e->pastPhases.v[0];
}

/* The relations the queries of p from `first` on range over (alphas and
** entity sources), into mark. */
static void treeRels(const AlgNode *n, uint8_t *mark) {
  if (!n) return;
  if ((n->kind == ALG_ALPHA || n->kind == ALG_SOURCE) && n->rel) mark[n->rel->id - 1] = 1;
  for (int i = 0; i < n->nkid; i++) treeRels(n->kid[i], mark);
}

/* The records kept from now on: those of the relations the
** persistent-collection queries range over (engine_hist.c).  `adding`
** counts as one of them when it has the flag; `leaving` does not. */
static void historyWant(tq_engine *e, const EnQuery *adding, const EnQuery *leaving, int atStart) {
  if (e->state != 2) return;
  uint8_t *want = tqCalloc((size_t)(e->nrel ? e->nrel : 1), 1);
  int any = 0;
  for (int i = 0; i <= e->squeries.n; i++) {
    const EnQuery *q = i < e->squeries.n ? e->squeries.v[i] : adding;
    if (!q || q == leaving || !(q->flags & TQ_QUERY_PERSIST_COLLECTION)) continue;
    for (int k = 0; k < e->nrel; k++) want[k] |= q->reads[k];
    any = 1;
  }
  enHistWant(e, any ? want : NULL, atStart);
  free(want);
}

/* ================================================================ rows */


static void jsonValue(TqBuf *b, const AlgType *t, int64_t v) {
  char buf[64];
  switch (t->kind) {
    case TY_INT: tqBufPrintf(b, "%lld", (long long)v); break;
    case TY_FLOAT: {
      double d;
      memcpy(&d, &v, sizeof d);
      tqFloatFormat(buf, sizeof buf, d);
      if (strspn(buf, "-0123456789.e+") == strlen(buf) && buf[0]) tqBufPuts(b, buf);
      else rtJsonStr(b, buf); /* inf, nan */
      break;
    }
    case TY_ENUM: rtJsonStr(b, v >= 0 && v < t->en->n ? t->en->names[v] : "?"); break;
    default: rtJsonStr(b, tqSymName((int32_t)v)); break;
  }
}

static void tell(EnQuery *q, const char *line) {
  for (int i = 0; i < q->nw; i++) q->w[i].fn(q->w[i].ctx, line);
}

/* The query's consumer: each row change into its table and to its
** watchers. */
static int queryRow(void *self, RtResult *res, const RtRow *r) {
  EnQuery *q = self;
  tq_engine *e = q->e;
  int k = (int)(res - q->res);
  /* the phase the row is decided in (catching up: the phase of its time) */
  const char *ph = e->catchNet ? phaseAt(e, e->catchNet->now) : phaseName(e);
  if (r->op == RT_ROW_INSERT) q->rows++;
  if (r->op == RT_ROW_INSERT && k == 0 && q->histAttr >= 0) {
    int64_t raw = r->vals[q->histAttr];
    double v = (double)raw;
    if (res->attr[q->histAttr].type.kind == TY_FLOAT) memcpy(&v, &raw, sizeof v);
    if (!q->hist) q->hist = rtHistNew(q->histBuckets, r->from - (r->from % q->histWidth0 + q->histWidth0) % q->histWidth0, q->histWidth0);
    if (q->hist && rtHistAdd(q->hist, r->from, v) > 0) q->histSlow = 1;
  }
  if (q->tbl[k] >= 0) {
    RtStore *st = e->sstore;
    q->pending++;
    if (r->op == RT_ROW_INSERT) {
      int64_t vals[res->nattr + 1], rowid;
      TQ_MEMCPY(vals, r->vals, sizeof(int64_t) * (size_t)res->nattr);
      vals[res->nattr] = tqSym(ph, strlen(ph));
      if (rtStoreInsert(st, q->tbl[k], vals, r->from, res->isEvent ? r->from : r->to, &rowid)) return -1;
      if (!res->isEvent && r->to == TQ_OPEN) tqMapPut(&q->open[k], r->rowid + 2, (void *)(intptr_t)rowid);
    } else {
      intptr_t rowid = (intptr_t)tqMapDel(&q->open[k], r->rowid + 2);
      if (rowid && (r->op == RT_ROW_CLOSE ? rtStoreCloseRow(st, q->tbl[k], rowid, r->to)
                                          : rtStoreDeleteRow(st, q->tbl[k], rowid)))
        return -1;
    }
  }
  if (!q->nw) return 0;
  TqBuf b = {0};
  tqBufPuts(&b, "{\"query\": ");
  rtJsonStr(&b, q->name);
  tqBufPuts(&b, ", \"result\": ");
  rtJsonStr(&b, q->tblName[k]);
  tqBufPrintf(&b, ", \"op\": \"%s\", \"row\": %llu, \"phase\": ",
              r->op == RT_ROW_INSERT ? "insert" : r->op == RT_ROW_CLOSE ? "close" : "delete", (unsigned long long)r->rowid);
  rtJsonStr(&b, ph);
  for (int i = 0; i < res->nattr; i++) {
    tqBufPuts(&b, ", ");
    rtJsonStr(&b, res->attr[i].name);
    tqBufPuts(&b, ": ");
    jsonValue(&b, &res->attr[i].type, r->vals[i]);
  }
  if (res->isEvent) tqBufPrintf(&b, ", \"at\": %lld}", (long long)r->from);
  else if (r->to == TQ_OPEN) tqBufPrintf(&b, ", \"from\": %lld, \"to\": null}", (long long)r->from);
  else tqBufPrintf(&b, ", \"from\": %lld, \"to\": %lld}", (long long)r->from, (long long)r->to);
  tell(q, b.s);
  tqBufFree(&b);
  return 0;
}

/* The session's consumer in the network: commits the store after each
** instant that stored rows. */
static void retick(tq_engine *e);

static int sessionBatch(void *self, TqTime now) {
  tq_engine *e = self;
  int64_t pending = 0;
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    if (q->histSlow && q->part) {
      /* the histogram folded: its samples follow the bucket width (here,
      ** after the instant's ticks, the next tick is found again) */
      q->histSlow = 0;
      q->samplePeriod = rtPartSlowClocks(e->net, q->part, q->hist->width / HIST_SAMPLES);
      retick(e);
    }
    pending += q->pending;
    q->pending = 0;
  }
  if (!pending || !e->sstore) return 0;
  return rtStoreCommit(e->sstore) || rtStoreBegin(e->sstore) ? -1 : 0;
}
static RtConsumer sessionConsumerProto = {"session", NULL, NULL, NULL, sessionBatch, NULL};

/* ================================================================ a query's network */

/* The next base tick after now of the clocks left, from scratch: a clock
** added ticks at its multiples, one removed no more. */
static void retick(tq_engine *e) {
  RtNet *net = e->net;
  if (e->state != 2) return; /* start() sets them */
  e->nextTick = net->clockGcd ? tqTickAtOrAfter(tqTimeAdd(net->now, 1), net->clockGcd) : TQ_FOREVER;
  int deltas = 0;
  for (int i = 0; i < net->nsensor; i++) deltas |= net->sensor[i].rel->deltaOf && net->sensor[i].used;
  if (deltas && e->deltaNext == TQ_FOREVER) e->deltaNext = tqTickAtOrAfter(tqTimeAdd(net->now, 1), e->prog->cat.tick);
}

/* Builds q's network into the running one from now (catchUp: first over
** the records kept, from as early as they hold what it reads).  0, or -1
** (said). */
static int queryStart(tq_engine *e, EnQuery *q, int catchUp) {
  TqBuf msg = {0};
  free(q->coverNote);
  q->coverNote = NULL;
  q->covers = e->state == 2 ? e->net->now : e->startTime;
  if (catchUp && e->state == 2) {
    /* within the current phase for a current-phase query; after its
    ** pause for a query watched again (its rows until then are stored) */
    TqTime after = (q->flags & TQ_QUERY_CURRENT_PHASE) && e->nphases ? e->phaseFrom : TQ_BEGINNING;
    if (q->pausedAt > after) after = q->pausedAt;
    q->part = enHistCatchUp(e, q->prog, q->res, q->nres, after, &q->covers, &msg);
    if (e->net->failed) {
      tqErrorAt(&e->diag, q->file, "query %s failed while it ran over the kept records", q->name);
      tqBufFree(&msg);
      return -1;
    }
    if (q->part) {
      q->coverNote = tqStrdup("");
      tqBufFree(&msg);
      q->added = e->net->now;
      q->paused = 0;
      if (q->histAttr >= 0) q->samplePeriod = q->histWidth0 / HIST_SAMPLES;
      retick(e);
      return 0;
    }
    q->coverNote = tqStrdup(msg.s ? msg.s : "");
    tqBufFree(&msg);
  }
  if (!q->coverNote) q->coverNote = tqStrdup(catchUp ? "" : "it started again from nothing");
  q->part = rtNetAddPart(e->net, q->res, q->nres, &msg);
  if (!q->part) {
    tqErrorAt(&e->diag, q->file, "cannot build the network of query %s: %s", q->name, msg.s ? msg.s : "?");
    tqBufFree(&msg);
    return -1;
  }
  tqBufFree(&msg);
  if (e->state == 2) {
    /* the entities alive now, with their true begins */
    const TqVec *src = rtPartSources(q->part);
    for (int i = 0; i < src->n; i++) {
      RtOp *op = src->v[i];
      const RelState *rs = &e->rs[op->node->rel->id - 1];
      for (int k = 0; k < rs->nopen; k++) rtPartReplay(op, rs->open[k]->id, rs->open[k]->from, rs->open[k]->vals);
    }
    /* the traced intervals whose begin went to the other queries: they
    ** may come to it whole when they end, with their true begins */
    for (int i = 0; i < e->nrel; i++) {
      const RelState *rs = &e->rs[i];
      if (!q->reads[i] || !rs->tracked) continue;
      for (int k = 0; k < rs->nopen; k++)
        if (rs->open[k]->emitted & 1) rtPartMissed(q->part, i + 1, rs->open[k]->id, rs->open[k]->from);
    }
  }
  rtPartStart(e->net, q->part);
  q->added = e->state == 2 ? e->net->now : e->startTime;
  q->paused = 0;
  if (q->hist && q->hist->folds) q->histSlow = 1; /* its clocks start at their own period again */
  else if (q->histAttr >= 0) q->samplePeriod = q->histWidth0 / HIST_SAMPLES;
  retick(e);
  return 0;
}

/* The rows of q still open in its tables when it stops knowing them (why:
** "paused", "phase", "removed", "stopped"): closed at now and listed in
** _tqmon_cut with why (rtStoreCutOpen), so that neither a reader nor the
** query when it goes on (a daemon restarted on its store appends to the
** table) takes them for tuples that still hold.  0, or -1 (said). */
static int cutOpen(tq_engine *e, EnQuery *q, const char *why) {
  int rc = 0;
  for (int k = 0; k < q->nres; k++) {
    if (q->open[k].n && q->tbl[k] >= 0 && e->sstore && rtStoreCutOpen(e->sstore, q->tbl[k], e->net->now, why) < 0)
      rc = -1;
    tqMapFree(&q->open[k]);
  }
  return rc;
}

static void queryStop(tq_engine *e, EnQuery *q, const char *why) {
  rtNetDropPart(e->net, q->part);
  q->part = NULL;
  cutOpen(e, q, why);
  retick(e);
}

static void queryFree(tq_engine *e, EnQuery *q, int dropped) {
  for (int i = 0; i < q->nw; i++) q->w[i].fn(q->w[i].ctx, NULL);
  for (int k = 0; k < q->nres; k++) {
    if (q->tbl[k] >= 0 && e->sstore) {
      /* (a table it continued holds rows of before: kept) */
      int keep = (q->flags & TQ_QUERY_PERSIST_DATA) || !dropped || q->cont[k] > 0;
      /* removed: the rows it keeps are known no more (cutOpen) */
      if (keep && dropped && q->part && q->open[k].n) rtStoreCutOpen(e->sstore, q->tbl[k], e->net->now, "removed");
      rtStoreTableEnd(e->sstore, q->tbl[k], !keep);
    }
    tqMapFree(&q->open[k]);
    free(q->tblName[k]);
    free(q->sattr[k]);
  }
  if (dropped) rtNetDropPart(e->net, q->part);
  else rtPartFree(q->part);
  cpProgramFree(q->prog);
  rtHistFree(q->hist);
  free(q->res);
  free(q->tblName);
  free(q->sattr);
  free(q->tbl);
  free(q->cont);
  free(q->open);
  free(q->w);
  free(q->name);
  free(q->file);
  free(q->phase);
  free(q->reads);
  free(q->coverNote);
  free(q);
}

/* ================================================================ the API */

static int sessionFail(tq_engine *e) {
  enCollectErrors(e);
  return -1;
}

/* Does p declare exactly the engine's relations and clock?  0, or -1 (said). */
static int sameCatalog(tq_engine *e, const CpProgram *p, const char *file) {
  const AlgCatalog *a = &e->prog->cat, *b = &p->cat;
  for (int i = 0; i < b->rels.n; i++) {
    const AlgRel *r = b->rels.v[i];
    if (i >= a->rels.n || strcasecmp(r->name, ((const AlgRel *)a->rels.v[i])->name)) {
      tqErrorAt(&e->diag, file, "declares the relation %s: a query added to a running monitor uses the relations of its program (give their declarations to the monitor when it starts)", r->name);
      return -1;
    }
  }
  if (b->rels.n != a->rels.n || b->entities.n != a->entities.n) {
    tqErrorAt(&e->diag, file, "the monitor's program files changed since it started: query not added");
    return -1;
  }
  if (b->tick != a->tick) {
    tqErrorAt(&e->diag, file, "sets the clock: a query added to a running monitor ticks with its program's clock");
    return -1;
  }
  if (p->displays.n != e->prog->displays.n) {
    tqErrorAt(&e->diag, file, "has display statements: a running monitor takes queries only");
    return -1;
  }
  return 0;
}

int tq_query_add(tq_engine *e, const char *name, const char *file, const char *text, unsigned flags) {
  tqBufFree(&e->errs);
  if (!e->session || (e->state != 1 && e->state != 2)) {
    enFail(e, "queries are added to a prepared or running operation whose option session is set");
    return sessionFail(e);
  }
  if (!goodName(name, "")) {
    enFail(e, "a query's name is 1 to 63 letters, digits and _, not starting with a digit: '%s'", name ? name : "");
    return sessionFail(e);
  }
  if (findQuery(e, name)) {
    enFail(e, "a query named %s runs already (remove it first)", name);
    return sessionFail(e);
  }
  if (flags & ~(TQ_QUERY_PERSIST_DATA | TQ_QUERY_PERSIST_COLLECTION | TQ_QUERY_CURRENT_PHASE)) {
    enFail(e, "unknown query flags 0x%x", flags);
    return sessionFail(e);
  }
  if (!file || !*file) {
    enFail(e, "no query file given");
    return sessionFail(e);
  }
  /* the program's files, then the query's */
  TqSource **srcs = tqCalloc((size_t)e->nbase + 1, sizeof *srcs);
  int n = 0, bad = 0;
  for (; n < e->nbase && !bad; n++)
    if (!(srcs[n] = tqSourceRead(e->baseFiles[n], &e->diag))) bad = 1;
  if (!bad && !(srcs[n++] = text ? tqSourceFromString(file, text) : tqSourceRead(file, &e->diag))) bad = 1;
  if (bad) {
    for (int i = 0; i < n; i++) tqSourceFree(srcs[i]);
    free(srcs);
    return sessionFail(e);
  }
  CpProgram *p = cpCompileSources(n, srcs, &e->diag);
  free(srcs);
  if (!p) return sessionFail(e);
  if (sameCatalog(e, p, file)) {
    cpProgramFree(p);
    return sessionFail(e);
  }
  int first = e->prog->queries.n, nres = p->queries.n - first;
  if (nres <= 0) {
    tqErrorAt(&e->diag, file, "has no retrieve statement: nothing to add");
    cpProgramFree(p);
    return sessionFail(e);
  }
  enSensorsAsked(e, p); /* as at prepare: SENSOR chooses among the sensors the operation can ask */
  if (!e->opt.noOpt) cpOptimize(p, NULL);
  EnQuery *q = tqCalloc(1, sizeof *q);
  q->e = e;
  q->name = tqStrdup(name);
  q->file = tqStrdup(file);
  q->flags = flags;
  q->prog = p;
  q->nres = nres;
  q->res = tqCalloc((size_t)nres, sizeof(RtResult));
  q->tblName = tqCalloc((size_t)nres, sizeof(char *));
  q->sattr = tqCalloc((size_t)nres, sizeof(AlgAttr *));
  q->tbl = tqCalloc((size_t)nres, sizeof(int));
  q->cont = tqCalloc((size_t)nres, sizeof(int));
  q->open = tqCalloc((size_t)nres, sizeof(TqMap));
  q->phase = tqStrdup(phaseName(e));
  q->c = (RtConsumer){"query", q, NULL, queryRow, NULL, NULL};
  q->histAttr = -1;
  q->reads = tqCalloc((size_t)(e->nrel ? e->nrel : 1), 1);
  q->pausedAt = TQ_BEGINNING;
  int rc = 0;
  for (int k = 0; k < nres; k++) {
    CpQuery *cq = p->queries.v[first + k];
    RtResult *r = &q->res[k];
    q->tblName[k] = nres == 1 ? tqStrdup(name) : tqMprintf("%s_%s", name, cq->name ? cq->name : tqArenaPrintf(p->arena, "%d", k + 1));
    r->q = cq;
    r->name = q->tblName[k];
    r->isEvent = cq->isEvent;
    r->nattr = cq->nattr;
    r->attr = cq->attr;
    r->only = &q->c;
    q->tbl[k] = -1;
    q->sattr[k] = tqCalloc((size_t)cq->nattr + 1, sizeof(AlgAttr));
    TQ_MEMCPY(q->sattr[k], cq->attr, sizeof(AlgAttr) * (size_t)cq->nattr);
    q->sattr[k][cq->nattr].name = "phase";
    q->sattr[k][cq->nattr].type.kind = TY_STRING;
    for (int i = 0; i < cq->nattr && !rc; i++)
      if (!strcasecmp(cq->attr[i].name, "phase"))
        rc = -1, tqError(&e->diag, cq->loc, "an attribute named phase: the session's store keeps each row's phase under that name");
  }
  /* a table is one query's: SQLite's names ignore case, and query x's
  ** result b is table x_b (shared, two queries' rows would mix, and the
  ** removal of one would drop the table under the other) */
  for (int k = 0; k < nres && !rc && e->sstorePath; k++) {
    const char *other = NULL;
    for (int j = 0; j < k && !other; j++)
      if (!strcasecmp(q->tblName[j], q->tblName[k])) other = name;
    for (int i = 0; i < e->squeries.n && !other; i++) {
      const EnQuery *o = e->squeries.v[i];
      for (int j = 0; j < o->nres && !other; j++)
        if (!strcasecmp(o->tblName[j], q->tblName[k])) other = o->name;
    }
    if (other)
      rc = -1, tqErrorAt(&e->diag, file, "the store's table %s is query %s's already (table names ignore case): choose another name",
                         q->tblName[k], other);
  }
  if (!rc && e->sstorePath && !e->sstore) {
    e->sstore = rtStoreOpen(e->sstorePath, &e->diag);
    if (!e->sstore || rtStoreBegin(e->sstore)) rc = -1;
  }
  /* a table the store holds already (an earlier query's persistent data, a
  ** daemon restarted on its store) is never dropped: the query's rows go on
  ** after its rows when the columns are the same, else it is refused */
  for (int k = 0; k < nres && !rc && e->sstore; k++) {
    q->cont[k] = rtStoreHasTable(e->sstore, q->tblName[k]);
    q->tbl[k] = q->cont[k] < 0 ? -1
                               : rtStoreTableAppend(e->sstore, q->tblName[k], q->res[k].nattr + 1, q->sattr[k], q->res[k].isEvent);
    if (q->tbl[k] < 0) rc = -1;
    /* rows a monitor left open without stopping (killed): it knew them
    ** until the last time it stored a row there */
    else if (q->cont[k] > 0 && rtStoreCutOpen(e->sstore, q->tbl[k], TQ_OPEN, "not stopped") < 0) rc = -1;
  }
  if (!rc) {
    int have = 0;
    for (int i = 0; i < e->net->consumers.n; i++) have |= ((RtConsumer *)e->net->consumers.v[i])->batch == sessionBatch;
    if (!have) {
      RtConsumer *c = tqMalloc(sizeof *c);
      *c = sessionConsumerProto;
      c->self = e;
      rtNetAddConsumer(e->net, c);
    }
    /* the relations it ranges over: kept from now on when it collects
    ** persistently (before its enables, which are kept too) */
    for (int k = 0; k < nres; k++) treeRels(q->res[k].q->opt && !e->opt.noOpt ? q->res[k].q->opt : q->res[k].q->tree, q->reads);
    historyWant(e, q, NULL, 0);
    rc = queryStart(e, q, 1);
  }
  if (rc) {
    q->flags &= ~TQ_QUERY_PERSIST_DATA; /* not added: nothing of it persists */
    queryFree(e, q, 1);
    historyWant(e, NULL, NULL, 0);
    return sessionFail(e);
  }
  if (e->sstore && (rtStoreCommit(e->sstore) || rtStoreBegin(e->sstore))) return sessionFail(e);
  tqVecPush(&e->squeries, q);
  return 0;
}

int tq_query_remove(tq_engine *e, const char *name) {
  tqBufFree(&e->errs);
  EnQuery *q = name ? findQuery(e, name) : NULL;
  if (!q) {
    enFail(e, "no query named %s (tqmon query list shows them)", name ? name : "(none)");
    return sessionFail(e);
  }
  int k = 0;
  for (int i = 0; i < e->squeries.n; i++)
    if (e->squeries.v[i] != q) e->squeries.v[k++] = e->squeries.v[i];
  e->squeries.n = k;
  if (q->flags & TQ_QUERY_PERSIST_COLLECTION) historyWant(e, NULL, q, 0);
  queryFree(e, q, 1);
  if (e->sstore && (rtStoreCommit(e->sstore) || rtStoreBegin(e->sstore))) return sessionFail(e);
  return 0;
}

int tq_query_list(tq_engine *e, const tq_query_info **out) {
  free(e->qinfo);
  e->qinfo = tqCalloc((size_t)e->squeries.n + 1, sizeof(tq_query_info));
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    e->qinfo[i] = (tq_query_info){q->name, q->file, q->flags, q->phase, q->added, q->rows, q->nw, q->paused, q->nres,
                                  q->covers, q->coverNote ? q->coverNote : ""};
  }
  *out = e->qinfo;
  return e->squeries.n;
}

int tq_query_watch(tq_engine *e, const char *name, tq_watch_fn fn, void *ctx) {
  tqBufFree(&e->errs);
  EnQuery *q = name ? findQuery(e, name) : NULL;
  if (!q || !fn) {
    enFail(e, "no query named %s (tqmon query list shows them)", name ? name : "(none)");
    return sessionFail(e);
  }
  if (q->paused && e->state == 2) {
    free(q->phase);
    q->phase = tqStrdup(phaseName(e));
    if (queryStart(e, q, 1)) return sessionFail(e); /* (from after its pause where records were kept) */
  }
  if (q->nw == q->cw) {
    q->cw = q->cw ? 2 * q->cw : 4;
    q->w = tqRealloc(q->w, sizeof(EnWatch) * (size_t)q->cw);
  }
  q->w[q->nw++] = (EnWatch){++e->nextWatch, fn, ctx};
  return e->nextWatch;
}

int tq_query_unwatch(tq_engine *e, int id) {
  tqBufFree(&e->errs);
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    for (int k = 0; k < q->nw; k++) {
      if (q->w[k].id != id) continue;
      q->w[k] = q->w[--q->nw];
      /* the last watcher left: without persistent collection it pauses */
      if (!q->nw && !(q->flags & TQ_QUERY_PERSIST_COLLECTION) && q->part && e->state == 2) {
        queryStop(e, q, "paused");
        q->paused = 1;
        q->pausedAt = e->net->now;
      }
      return 0;
    }
  }
  enFail(e, "no watch %d", id);
  return sessionFail(e);
}

int tq_query_histogram(tq_engine *e, const char *name, const char *attr, int buckets) {
  tqBufFree(&e->errs);
  EnQuery *q = name ? findQuery(e, name) : NULL;
  if (!q) {
    enFail(e, "no query named %s (tqmon query list shows them)", name ? name : "(none)");
    return sessionFail(e);
  }
  if (q->histAttr >= 0) {
    enFail(e, "query %s has a histogram already", name);
    return sessionFail(e);
  }
  if (buckets < 2 || buckets > 1000000 || buckets % 2) {
    enFail(e, "a histogram has an even number of buckets from 2 to 1000000, not %d", buckets);
    return sessionFail(e);
  }
  const RtResult *r = &q->res[0];
  int a = -1;
  for (int i = 0; attr && i < r->nattr; i++)
    if (!strcasecmp(r->attr[i].name, attr)) a = i;
  if (a < 0 || (r->attr[a].type.kind != TY_INT && r->attr[a].type.kind != TY_FLOAT)) {
    TqBuf names = {0};
    for (int i = 0; i < r->nattr; i++)
      if (r->attr[i].type.kind == TY_INT || r->attr[i].type.kind == TY_FLOAT)
        tqBufPrintf(&names, "%s%s", names.n ? ", " : "", r->attr[i].name);
    enFail(e, "%s has no number attribute '%s' for a histogram (its numbers: %s)", r->name, attr ? attr : "",
           names.s ? names.s : "none");
    tqBufFree(&names);
    return sessionFail(e);
  }
  q->histAttr = a;
  q->histBuckets = buckets;
  TqTime clock = e->prog->cat.tick;
  if (q->part) {
    TqTime p = rtPartSlowClocks(e->net, q->part, 0); /* (their own periods: the longest) */
    if (p > 0) clock = p;
  }
  q->samplePeriod = clock;
  q->histWidth0 = clock * HIST_SAMPLES;
  return 0;
}

int tq_query_histogram_get(tq_engine *e, const char *name, tq_histogram *out) {
  EnQuery *q = name ? findQuery(e, name) : NULL;
  memset(out, 0, sizeof *out);
  if (!q || q->histAttr < 0) return -1;
  out->buckets = q->histBuckets;
  out->width = q->hist ? q->hist->width : q->histWidth0;
  out->sample_period = q->samplePeriod;
  if (!q->hist) return 0;
  out->start = q->hist->start;
  out->folds = q->hist->folds;
  out->count = q->hist->count;
  out->sum = q->hist->sum;
  out->added = q->hist->added - q->hist->early;
  out->bytes = rtHistBytes(q->hist);
  return 0;
}

int tq_phase_start(tq_engine *e, const char *name) {
  tqBufFree(&e->errs);
  if (!e->session || (e->state != 1 && e->state != 2)) {
    enFail(e, "phases belong to a prepared or running operation whose option session is set");
    return sessionFail(e);
  }
  if (!goodName(name, ".-")) {
    enFail(e, "a phase's name is 1 to 63 letters, digits, _ . and -, not starting with a digit, . or -: '%s'", name ? name : "");
    return sessionFail(e);
  }
  int used = !strcmp(name, phaseName(e));
  for (int i = 0; i < e->pastPhases.n && !used; i++) used = !strcmp(e->pastPhases.v[i], name);
  if (used) {
    enFail(e, "phase %s was started before: a phase's name is used once", name);
    return sessionFail(e);
  }
  e->pastFrom = tqRealloc(e->pastFrom, sizeof(TqTime) * (size_t)(e->pastPhases.n + 1));
  e->pastFrom[e->pastPhases.n] = e->nphases ? e->phaseFrom : TQ_BEGINNING;
  tqVecPush(&e->pastPhases, tqStrdup(phaseName(e)));
  free(e->phase);
  e->phase = tqStrdup(name);
  e->nphases++;
  e->phaseFrom = e->state == 2 ? e->net->now : e->startTime;
  /* the current-phase queries start again from nothing */
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    if (!(q->flags & TQ_QUERY_CURRENT_PHASE)) continue;
    free(q->phase);
    q->phase = tqStrdup(name);
    rtHistFree(q->hist); /* its histogram starts again too */
    q->hist = NULL;
    if (!q->part) continue;
    queryStop(e, q, "phase");
    if (queryStart(e, q, 0)) return sessionFail(e);
  }
  if (e->sstore && (rtStoreCommit(e->sstore) || rtStoreBegin(e->sstore))) return sessionFail(e);
  return 0;
}

/* ================================================================ the engine's side */

void enSessionStart(tq_engine *e) { historyWant(e, NULL, NULL, 1); }

void enSessionEnd(tq_engine *e) {
  for (int i = 0; i < e->squeries.n; i++) cutOpen(e, e->squeries.v[i], "stopped");
  if (e->sstore) rtStoreCommit(e->sstore);
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    tell(q, NULL);
    q->nw = 0;
  }
}

void enSessionFree(tq_engine *e) {
  for (int i = 0; i < e->squeries.n; i++) queryFree(e, e->squeries.v[i], 0);
  enHistFree(e);
  free(e->pastFrom);
  e->pastFrom = NULL;
  tqVecFree(&e->squeries);
  if (e->sstore) rtStoreCommit(e->sstore);
  rtStoreFree(e->sstore);
  e->sstore = NULL;
  for (int i = 0; e->net && i < e->net->consumers.n; i++) {
    RtConsumer *c = e->net->consumers.v[i];
    if (c->batch == sessionBatch) {
      e->net->consumers.v[i] = e->net->consumers.v[--e->net->consumers.n];
      free(c);
      break;
    }
  }
  for (int i = 0; i < e->nbase; i++) free(e->baseFiles[i]);
  free(e->baseFiles);
  e->baseFiles = NULL;
  e->nbase = 0;
  free(e->sstorePath);
  free(e->phase);
  free(e->qinfo);
  e->sstorePath = e->phase = NULL;
  e->qinfo = NULL;
  for (int i = 0; i < e->pastPhases.n; i++) free(e->pastPhases.v[i]);
  tqVecFree(&e->pastPhases);
}

/* The session as one JSON object: the phase, the queries (with their
** histograms' buckets when buckets), and every sensor entity enabled now
** (the sum of all queries' enables). */
static void sessionJson(tq_engine *e, TqBuf *b, int buckets) {
  tqBufPuts(b, "{\"phase\": ");
  rtJsonStr(b, phaseName(e));
  tqBufPrintf(b, ", \"phases_started\": %d, \"queries\": [", e->nphases);
  for (int i = 0; i < e->squeries.n; i++) {
    EnQuery *q = e->squeries.v[i];
    tqBufPrintf(b, "%s\n      {\"name\": ", i ? "," : "");
    rtJsonStr(b, q->name);
    tqBufPuts(b, ", \"file\": ");
    rtJsonStr(b, q->file);
    tqBufPrintf(b, ", \"persistent_data\": %s, \"persistent_collection\": %s, \"scope\": \"%s\", \"phase\": ",
                q->flags & TQ_QUERY_PERSIST_DATA ? "true" : "false", q->flags & TQ_QUERY_PERSIST_COLLECTION ? "true" : "false",
                q->flags & TQ_QUERY_CURRENT_PHASE ? "current" : "global");
    rtJsonStr(b, q->phase);
    tqBufPrintf(b, ", \"added\": %lld, \"covers_from\": %lld, \"covers_note\": ", (long long)q->added, (long long)q->covers);
    rtJsonStr(b, q->coverNote ? q->coverNote : "");
    tqBufPrintf(b, ", \"rows\": %lld, \"watchers\": %d, \"paused\": %s", (long long)q->rows, q->nw, q->paused ? "true" : "false");
    if (q->histAttr >= 0) {
      const RtHist *h = q->hist;
      tqBufPuts(b, ", \"histogram\": {\"attribute\": ");
      rtJsonStr(b, q->res[0].attr[q->histAttr].name);
      tqBufPrintf(b, ", \"buckets\": %d, \"start\": %lld, \"width\": %lld, \"folds\": %d, \"values\": %lld, \"bytes\": %lld, "
                  "\"sample_period\": %lld}",
                  q->histBuckets, (long long)(h ? h->start : 0), (long long)(h ? h->width : q->histWidth0), h ? h->folds : 0,
                  (long long)(h ? h->added - h->early : 0), (long long)rtHistBytes(h), (long long)q->samplePeriod);
      if (buckets && h) {
        b->n--; /* reopen the histogram */
        tqBufPuts(b, ", \"count\": [");
        for (int k = 0; k < h->nb; k++) tqBufPrintf(b, "%s%lld", k ? "," : "", (long long)h->count[k]);
        tqBufPuts(b, "], \"sum\": [");
        char num[64];
        for (int k = 0; k < h->nb; k++) {
          tqFloatFormat(num, sizeof num, h->sum[k]);
          tqBufPrintf(b, "%s%s", k ? "," : "", num);
        }
        tqBufPuts(b, "]}");
      }
    }
    tqBufPuts(b, "}");
  }
  tqBufPuts(b, "],\n    \"enabled\": [");
  int total = 0, first = 1;
  for (int i = 0; e->net && i < e->net->nsensor; i++) {
    const RtSensor *s = &e->net->sensor[i];
    if (s->rel->entity || !s->nEnabled) continue;
    int64_t ents[256];
    int n = rtSensorEnabledList(s, ents, 256);
    total += n;
    tqBufPrintf(b, "%s\n      {\"sensor\": ", first ? "" : ",");
    first = 0;
    rtJsonStr(b, s->rel->name);
    tqBufPrintf(b, ", \"count\": %d, \"entities\": [", n);
    const AlgType *ft = s->rel->flagAttr >= 0 ? &s->rel->attr[s->rel->flagAttr].type : NULL;
    for (int k = 0; k < n && k < 256; k++) {
      if (k) tqBufPuts(b, ", ");
      if (ft && ft->kind == TY_INT) tqBufPrintf(b, "%lld", (long long)ents[k]);
      else rtJsonStr(b, tqSymName((int32_t)ents[k]));
    }
    tqBufPuts(b, n > 256 ? "], \"more\": true}" : "]}");
  }
  tqBufPrintf(b, "],\n    \"enabled_entities\": %d,\n    \"kept\": ", total);
  enHistStats(e, b);
  tqBufPuts(b, "}");
}

void enSessionStats(tq_engine *e, TqBuf *b) {
  tqBufPuts(b, ",\n  \"session\": ");
  sessionJson(e, b, 0);
}

const char *tq_session_json(tq_engine *e) {
  tqBufFree(&e->stats);
  sessionJson(e, &e->stats, 1);
  return e->stats.s;
}
