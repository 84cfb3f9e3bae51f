/*
** netbench.c - throughput of the update network fed directly (no text
** recording), side by side with SQLite doing the same work the traditional
** way in the same run (insert the same tuples, then one SELECT).
**
**   netbench [chain N] [overlap N] [--reps R] [--no-sqlite] [--db FILE]
**
** chain N    a chain of selections and projections over an event relation
**            whose sensor is enabled on every entity: N events delivered
**            with rtDeliverEvent, rtNetAdvance per instant; R runs (3),
**            the median is reported.
** overlap N  the overlap product x1 with an equality join key: 10,000
**            intervals kept open (one per key, replaced from time to time)
**            against a stream of events with random keys; N input tuples
**            (interval begins and ends plus events), each instant's ends
**            first, then rtNetEndsDone, as the engine does; R runs, the
**            median is reported.  VmRSS is sampled at every tenth of the
**            first run (a fresh process).
**
** Output: "key value" lines (read by bench/run.sh) and "# ..." comments.
** Consumers only count result rows.  Nothing here asserts: it measures.
*/
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "rtInt.h"

/* ---------------------------------------------------------------- helpers */
static uint64_t rng;
static inline uint64_t rnd(void) {
  /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ULL;
}

static long vmKb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') kb = atol(line + n + 1);
  fclose(f);
  return kb;
}

typedef struct Count {
  int64_t inserts, closes, deletes;
} Count;
static int countRow(void *self, RtResult *res, const RtRow *r) {
  Count *c = self;
  if (r->op == RT_ROW_INSERT) c->inserts++;
  else if (r->op == RT_ROW_CLOSE) c->closes++;
  else c->deletes++;
  return 0;
}

static CpProgram *compileOpt(const char *name, const char *text, const char *key) {
  TqDiag d = {0};
  TqSource *s = tqSourceFromString(name, text);
  CpProgram *p = cpCompileSources(1, &s, &d);
  if (!p) {
    fprintf(stderr, "netbench: %s", d.out.s ? d.out.s : "compile error\n");
    tqDiagFree(&d);
    return NULL;
  }
  tqDiagFree(&d);
  cpOptimize(p, NULL);
  TqBuf b = {0};
  CpQuery *q = p->queries.v[0];
  algPrint(q->opt ? q->opt : q->tree, &b);
  if (key) {
    printf("# %s optimized: %s\n", name, b.s);
    printf("%s.algebra %s\n", key, b.s);
  }
  tqBufFree(&b);
  return p;
}

static RtNet *netFor(CpProgram *p, Count *cnt, RtConsumer *c) {
  TqDiag d = {0};
  RtOptions o = {0, TQ_OPEN, 0};
  RtNet *net = rtNetNew(p, &o, &d);
  if (!net) {
    fprintf(stderr, "netbench: %s", d.out.s ? d.out.s : "cannot build the network\n");
    tqDiagFree(&d);
    return NULL;
  }
  tqDiagFree(&d);
  memset(cnt, 0, sizeof *cnt);
  *c = (RtConsumer){"count", cnt, NULL, countRow, NULL, NULL};
  rtNetAddConsumer(net, c);
  return net;
}

/* ---------------------------------------------------------------- SQLite */
static const char *dbPath = "build/bench/netbench.db";
static int useSqlite = 1;

static sqlite3 *dbOpen(void) {
  remove(dbPath);
  sqlite3 *db = NULL;
  if (sqlite3_open(dbPath, &db) != SQLITE_OK) {
    fprintf(stderr, "netbench: sqlite: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return NULL;
  }
  /* the fastest durable-less settings: favour the peer */
  sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;", 0, 0, 0);
  return db;
}

static int dbExec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, 0, 0, &err) != SQLITE_OK) {
    fprintf(stderr, "netbench: sqlite: %s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    return -1;
  }
  return 0;
}

/* Runs sql, steps through every row reading every column; returns rows or -1. */
static int64_t dbCountRows(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "netbench: sqlite: %s\n", sqlite3_errmsg(db));
    return -1;
  }
  int64_t n = 0, sink = 0;
  int nc = sqlite3_column_count(st), rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < nc; i++) sink += sqlite3_column_int64(st, i);
    n++;
  }
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "netbench: sqlite: %s\n", sqlite3_errmsg(db));
    n = -1;
  }
  sqlite3_finalize(st);
  if (sink == 42) fputc(' ', stderr); /* keep the reads */
  return n;
}

static void printPlan(sqlite3 *db, const char *key, const char *sql) {
  char *q = tqMprintf("EXPLAIN QUERY PLAN %s", sql);
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) printf("# %s plan: %s\n", key, (const char *)sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
  }
  free(q);
}

/* ================================================================ chain */
static const char *CHAIN_TQ =
    "clock 1s;\n"
    "entity Node;\n"
    "event E (N: Node performer, A: int, B: int, C: int) traced on performer;\n"
    "range of E is E\n"
    "retrieve (X = E.A + 1, Y = E.B * 2, Z = E.C - E.A, E.N)\n"
    "where E.A > 0 and E.B != 3 and E.C >= 10\n";
static const char *CHAIN_SQL =
    "SELECT DISTINCT A + 1, B * 2, C - A, N, valid_at FROM E WHERE A > 0 AND B != 3 AND C >= 10";

enum { NODES = 1024, PER_INSTANT = 10 };
#define CHAIN_SEED 0x9e3779b97f4a7c15ULL

/* The i-th event of the stream (same for tqmon and SQLite). */
static inline void chainEvent(int64_t *v, const int64_t *nodeSym) {
  uint64_t r = rnd();
  v[0] = nodeSym[r & (NODES - 1)];
  v[1] = (int64_t)((r >> 10) & 1023) - 8; /* A > 0: 99% */
  v[2] = (int64_t)((r >> 20) & 15);       /* B != 3: 94% */
  v[3] = (int64_t)((r >> 24) & 1023);     /* C >= 10: 99% */
}

/* One tqmon run of the chain; returns its wall seconds (-1 on error). */
static double chainTq(int64_t n, const int64_t *nodeSym, int last) {
  CpProgram *p = compileOpt("chain.tq", CHAIN_TQ, last ? "chain" : NULL);
  if (!p) return -1;
  Count cnt;
  RtConsumer c;
  RtNet *net = netFor(p, &cnt, &c);
  if (!net) return -1;
  RtSensor *node = rtNetSensor(net, "Node"), *ev = rtNetSensor(net, "E");
  TqTime t = 0;
  rtNetStart(net, t);
  for (int i = 0; i < NODES; i++) rtEntityBegin(net, node, (uint64_t)i + 1, t, &nodeSym[i]);
  rtNetEndInstant(net);
  int enabledAll = 1;
  for (int i = 0; i < NODES; i++) enabledAll &= rtSensorEnabled(ev, nodeSym[i]);
  int64_t procBefore = net->tuplesProcessed;

  rng = CHAIN_SEED;
  int64_t v[4], delivered = 0;
  double t0 = tqWallSeconds();
  while (delivered < n) {
    t += 1000;
    rtNetAdvance(net, t);
    for (int k = 0; k < PER_INSTANT && delivered < n; k++, delivered++) {
      chainEvent(v, nodeSym);
      if (rtSensorEnabled(ev, v[0])) rtDeliverEvent(net, ev, t, v);
    }
    rtNetEndInstant(net);
  }
  rtNetFinish(net, t, 1);
  double secs = tqWallSeconds() - t0;
  if (last) {
    printf("chain.enabled_all %s\n", enabledAll ? "yes" : "no");
    printf("chain.tqmon.tuples %lld\n", (long long)delivered);
    printf("chain.tqmon.delivered %lld\n", (long long)ev->delivered);
    printf("chain.tqmon.processed %lld\n", (long long)(net->tuplesProcessed - procBefore));
    printf("chain.tqmon.rows %lld\n", (long long)cnt.inserts);
    printf("chain.tqmon.rss_kb %ld\n", vmKb("VmHWM"));
  }
  rtNetFree(net);
  cpProgramFree(p);
  return secs;
}

static int dblCmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int chainReps = 3;

/* The runs of each tqmon side (--reps R, 1 to 16). */
static int repsOf(void) { return chainReps < 1 ? 1 : chainReps > 16 ? 16 : chainReps; }

/* The median of the reps runs' wall seconds (sorted here), its rate for
** n items, and the spread, as WHAT.tqmon.* lines. */
static void printReps(const char *what, double *secs, int reps, int64_t n) {
  qsort(secs, (size_t)reps, sizeof(double), dblCmp);
  double med = secs[reps / 2];
  printf("%s.tqmon.reps %d\n", what, reps);
  printf("%s.tqmon.seconds %.3f\n", what, med);
  printf("%s.tqmon.rate %.0f\n", what, (double)n / med);
  printf("%s.tqmon.rate_min %.0f\n", what, (double)n / secs[reps - 1]);
  printf("%s.tqmon.rate_max %.0f\n", what, (double)n / secs[0]);
  fflush(stdout);
}

static void chain(int64_t n) {
  int64_t nodeSym[NODES];
  char name[32];
  for (int i = 0; i < NODES; i++) {
    snprintf(name, sizeof name, "N%d", i + 1);
    nodeSym[i] = tqSymZ(name);
  }
  /* the same run several times: the median resists a noisy machine */
  double secs[16];
  int reps = repsOf();
  for (int r = 0; r < reps; r++) {
    secs[r] = chainTq(n, nodeSym, r == reps - 1);
    if (secs[r] < 0) return;
    printf("# chain run %d: %.3f s, %.0f tuples/s\n", r + 1, secs[r], (double)n / secs[r]);
  }
  printReps("chain", secs, reps, n);
  int64_t v[4];
  TqTime t;
  if (!useSqlite) return;
  sqlite3 *db = dbOpen();
  if (!db) return;
  double s0 = tqWallSeconds();
  dbExec(db, "CREATE TABLE E (N INTEGER, A INTEGER, B INTEGER, C INTEGER, valid_at INTEGER NOT NULL)");
  dbExec(db, "BEGIN");
  sqlite3_stmt *ins;
  sqlite3_prepare_v2(db, "INSERT INTO E VALUES (?, ?, ?, ?, ?)", -1, &ins, NULL);
  rng = CHAIN_SEED;
  t = 0;
  int64_t m = 0;
  while (m < n) {
    t += 1000;
    for (int k = 0; k < PER_INSTANT && m < n; k++, m++) {
      chainEvent(v, nodeSym);
      for (int j = 0; j < 4; j++) sqlite3_bind_int64(ins, j + 1, v[j]);
      sqlite3_bind_int64(ins, 5, t);
      if (sqlite3_step(ins) != SQLITE_DONE) {
        fprintf(stderr, "netbench: sqlite insert: %s\n", sqlite3_errmsg(db));
        m = n;
      }
      sqlite3_reset(ins);
    }
  }
  sqlite3_finalize(ins);
  dbExec(db, "COMMIT");
  double s1 = tqWallSeconds();
  printPlan(db, "chain.sqlite", CHAIN_SQL);
  int64_t rows = dbCountRows(db, CHAIN_SQL);
  double s2 = tqWallSeconds();
  sqlite3_close(db);
  remove(dbPath);
  printf("chain.sqlite.insert_seconds %.3f\n", s1 - s0);
  printf("chain.sqlite.select_seconds %.3f\n", s2 - s1);
  printf("chain.sqlite.seconds %.3f\n", s2 - s0);
  printf("chain.sqlite.rows %lld\n", (long long)rows);
  printf("chain.sqlite.rate %.0f\n", (double)n / (s2 - s0));
  fflush(stdout);
}

/* ================================================================ overlap */
static const char *OVERLAP_TQ =
    "clock 1s;\n"
    "entity Key;\n"
    "interval L (K: Key performer, V: int) traced on performer key (K);\n"
    "event R (K: Key performer, W: int) traced on performer;\n"
    "range of A is L\n"
    "range of B is R\n"
    "retrieve (A.V, B.W) where A.K = B.K\n";
static const char *OVERLAP_SQL =
    "SELECT DISTINCT L.V, R.W, R.valid_at FROM R JOIN L ON L.K = R.K "
    "AND L.valid_from <= R.valid_at AND (L.valid_to IS NULL OR R.valid_at < L.valid_to)";

enum { KEYS = 10000, EV_PER_INSTANT = 8, REPLACE_EVERY = 4 };
#define OVERLAP_SEED 0x2545f4914f6cdd1dULL

typedef struct Live {
  uint64_t ivid;
  TqTime from;
  int64_t v[2]; /* K, V */
} Live;

/* The overlap stream, shared by tqmon and SQLite through these callbacks. */
typedef struct Sink2 {
  void (*begin)(void *self, Live *l);
  void (*end)(void *self, Live *l, TqTime to);
  void (*endsDone)(void *self); /* the instant's ends were all given (the engine's rtNetEndsDone) */
  void (*event)(void *self, TqTime t, const int64_t *v);
  void (*instant)(void *self, TqTime t, int last);
  void (*hint)(void *self, const int64_t *v, int stage); /* an event of the instant comes (NULL: not told) */
  void *self;
} Sink2;

/* Generates the stream until n input tuples and returns their number;
** progress(self, decile, tuples) is called at every tenth of n. */
static int64_t overlapStream(int64_t n, const int64_t *keySym, Live *live, Sink2 *s,
                             void (*progress)(void *self, int decile, int64_t tuples)) {
  rng = OVERLAP_SEED;
  uint64_t ivid = 1;
  TqTime t = 1000;
  int64_t tuples = 0;
  int decile = 1;
  s->instant(s->self, t, 0);
  for (int k = 0; k < KEYS; k++) {
    live[k] = (Live){ivid++, t, {keySym[k], (int64_t)(rnd() >> 34)}};
    s->begin(s->self, &live[k]);
    tuples++;
  }
  for (int64_t inst = 0; tuples < n; inst++) {
    t += 1000;
    s->instant(s->self, t, 0);
    if (inst % REPLACE_EVERY == 0) {
      Live *l = &live[rnd() % KEYS];
      s->end(s->self, l, t);
      s->endsDone(s->self);
      *l = (Live){ivid++, t, {l->v[0], (int64_t)(rnd() >> 34)}};
      s->begin(s->self, l);
      tuples += 2;
    } else {
      s->endsDone(s->self);
    }
    /* the instant's events are known before they are delivered, as the
    ** engine knows an instant's records (processInstant): announced first */
    uint64_t ev[EV_PER_INSTANT];
    int nev = 0;
    for (; nev < EV_PER_INSTANT && tuples + nev < n; nev++) ev[nev] = rnd();
    for (int stage = 0; stage < 2 && s->hint; stage++)
      for (int k = 0; k < nev; k++) {
        int64_t v[2] = {keySym[ev[k] % KEYS], (int64_t)(ev[k] >> 34)};
        s->hint(s->self, v, stage);
      }
    for (int k = 0; k < nev; k++, tuples++) {
      int64_t v[2] = {keySym[ev[k] % KEYS], (int64_t)(ev[k] >> 34)};
      s->event(s->self, t, v);
    }
    while (progress && decile <= 10 && tuples >= n * decile / 10) progress(s->self, decile++, tuples);
  }
  s->instant(s->self, t, 1);
  return tuples;
}

typedef struct TqSide {
  RtNet *net;
  RtSensor *L, *R;
  RtOp *product;
  TqTime now;
} TqSide;

static void tqBegin(void *self, Live *l) {
  TqSide *x = self;
  if (rtSensorEnabled(x->L, l->v[0])) rtDeliverBegin(x->net, x->L, l->ivid, l->from, l->v);
}
static void tqEnd(void *self, Live *l, TqTime to) {
  TqSide *x = self;
  rtDeliverEnd(x->net, x->L, l->ivid, l->from, to, l->v); /* its begin was delivered */
}
static void tqEndsDone(void *self) { rtNetEndsDone(((TqSide *)self)->net); }
static void tqEvent(void *self, TqTime t, const int64_t *v) {
  TqSide *x = self;
  if (rtSensorEnabled(x->R, v[0])) rtDeliverEvent(x->net, x->R, t, v);
}
static void tqHint(void *self, const int64_t *v, int stage) {
  TqSide *x = self;
  rtNetHintEvent(x->net, x->R, v, stage); /* (tqEvent's rtSensorEnabled is the engine's: not a hint's) */
}
static void tqInstant(void *self, TqTime t, int last) {
  TqSide *x = self;
  if (x->now) rtNetEndInstant(x->net);
  x->now = t;
  if (!last) rtNetAdvance(x->net, t);
}
static void tqProgress(void *self, int decile, int64_t tuples) {
  TqSide *x = self;
  printf("overlap.tqmon.rss_kb.%d %ld\n", decile * 10, vmKb("VmRSS"));
  printf("overlap.tqmon.stored.%d %lld\n", decile * 10, (long long)(x->product ? x->product->stored : -1));
  /* what each operator holds, and the root's low mark */
  printf("# overlap %3d%% (%lld tuples): VmRSS %ld kB, stored:", decile * 10, (long long)tuples, vmKb("VmRSS"));
  for (int i = 0; i < x->net->ops.n; i++) {
    RtOp *op = x->net->ops.v[i];
    printf(" %s=%lld", op->vt->name, (long long)op->stored);
  }
  RtOp *root = x->net->result[0].root;
  printf(", root low mark %lld ns behind now\n", (long long)(x->net->now - root->low));
}

typedef struct SqlSide {
  sqlite3 *db;
  sqlite3_stmt *insL, *insR;
  int64_t intervals;
} SqlSide;

static void sqlInsL(SqlSide *x, const Live *l, TqTime to) {
  sqlite3_bind_int64(x->insL, 1, l->v[0]);
  sqlite3_bind_int64(x->insL, 2, l->v[1]);
  sqlite3_bind_int64(x->insL, 3, l->from);
  if (to == TQ_OPEN) sqlite3_bind_null(x->insL, 4);
  else sqlite3_bind_int64(x->insL, 4, to);
  sqlite3_step(x->insL);
  sqlite3_reset(x->insL);
  x->intervals++;
}
static void sqlBegin(void *self, Live *l) {}
static void sqlEnd(void *self, Live *l, TqTime to) { sqlInsL(self, l, to); }
static void sqlEndsDone(void *self) {}
static void sqlEvent(void *self, TqTime t, const int64_t *v) {
  SqlSide *x = self;
  sqlite3_bind_int64(x->insR, 1, v[0]);
  sqlite3_bind_int64(x->insR, 2, v[1]);
  sqlite3_bind_int64(x->insR, 3, t);
  sqlite3_step(x->insR);
  sqlite3_reset(x->insR);
}
static void sqlInstant(void *self, TqTime t, int last) {}

/* One tqmon run of the overlap product; returns its wall seconds (-1 on
** error).  The first (first) prints its memory at every tenth of the run
** and what it did; each prints its rate. */
static double overlapTq(int64_t n, const int64_t *keySym, Live *live, int first, int64_t *ntuples) {
  CpProgram *p = compileOpt("overlap.tq", OVERLAP_TQ, first ? "overlap" : NULL);
  if (!p) return -1;
  Count cnt;
  RtConsumer c;
  RtNet *net = netFor(p, &cnt, &c);
  if (!net) return -1;
  TqSide x = {net, rtNetSensor(net, "L"), rtNetSensor(net, "R"), NULL, 0};
  for (int i = 0; i < net->ops.n; i++) {
    RtOp *op = net->ops.v[i];
    if (!strcmp(op->vt->name, "product")) x.product = op;
  }
  RtSensor *key = rtNetSensor(net, "Key");
  rtNetStart(net, 0);
  for (int i = 0; i < KEYS; i++) rtEntityBegin(net, key, (uint64_t)i + 1, 0, &keySym[i]);
  rtNetEndInstant(net);
  int64_t procBefore = net->tuplesProcessed;
  if (first) printf("overlap.tqmon.rss_kb.0 %ld\n", vmKb("VmRSS"));
  Sink2 s = {tqBegin, tqEnd, tqEndsDone, tqEvent, tqInstant, getenv("NETBENCH_NO_HINT") ? NULL : tqHint, &x};
  double t0 = tqWallSeconds();
  int64_t tuples = overlapStream(n, keySym, live, &s, first ? tqProgress : NULL);
  rtNetFinish(net, x.now, 1);
  double secs = tqWallSeconds() - t0;
  *ntuples = tuples;
  if (first) {
    printf("overlap.tqmon.tuples %lld\n", (long long)tuples);
    printf("overlap.tqmon.events %lld\n", (long long)x.R->delivered);
    printf("overlap.tqmon.intervals_delivered %lld\n", (long long)x.L->delivered);
    printf("overlap.tqmon.processed %lld\n", (long long)(net->tuplesProcessed - procBefore));
    printf("overlap.tqmon.peak_stored %lld\n", (long long)(x.product ? x.product->peakStored : -1));
    printf("overlap.tqmon.rows %lld\n", (long long)cnt.inserts);
    printf("overlap.tqmon.rss_kb %ld\n", vmKb("VmHWM"));
  }
  printf("# overlap run: %.3f s, %.0f input tuples/s, %lld rows\n", secs, (double)tuples / secs, (long long)cnt.inserts);
  fflush(stdout);
  rtNetFree(net);
  cpProgramFree(p);
  return secs;
}

static void overlap(int64_t n) {
  int64_t *keySym = tqMalloc(sizeof(int64_t) * KEYS);
  Live *live = tqMalloc(sizeof(Live) * KEYS);
  char name[32];
  for (int i = 0; i < KEYS; i++) {
    snprintf(name, sizeof name, "K%d", i + 1);
    keySym[i] = tqSymZ(name);
  }
  /* the same run several times, as the chain's: the median resists a
  ** noisy machine (the memory is the first run's, in a fresh process) */
  double secs[16];
  int64_t tuples = 0;
  int reps = repsOf();
  for (int r = 0; r < reps; r++) {
    secs[r] = overlapTq(n, keySym, live, r == 0, &tuples);
    if (secs[r] < 0) {
      free(keySym);
      free(live);
      return;
    }
  }
  printReps("overlap", secs, reps, tuples);

  if (useSqlite) {
    sqlite3 *db = dbOpen();
    if (db) {
      SqlSide y = {db, NULL, NULL, 0};
      double s0 = tqWallSeconds();
      dbExec(db, "CREATE TABLE L (K INTEGER, V INTEGER, valid_from INTEGER NOT NULL, valid_to INTEGER);"
                 "CREATE TABLE R (K INTEGER, W INTEGER, valid_at INTEGER NOT NULL)");
      dbExec(db, "BEGIN");
      sqlite3_prepare_v2(db, "INSERT INTO L VALUES (?, ?, ?, ?)", -1, &y.insL, NULL);
      sqlite3_prepare_v2(db, "INSERT INTO R VALUES (?, ?, ?)", -1, &y.insR, NULL);
      Sink2 s2 = {sqlBegin, sqlEnd, sqlEndsDone, sqlEvent, sqlInstant, NULL, &y};
      int64_t m = overlapStream(n, keySym, live, &s2, NULL);
      for (int k = 0; k < KEYS; k++) sqlInsL(&y, &live[k], TQ_OPEN); /* still open */
      sqlite3_finalize(y.insL);
      sqlite3_finalize(y.insR);
      dbExec(db, "COMMIT");
      double s1 = tqWallSeconds();
      printPlan(db, "overlap.sqlite", OVERLAP_SQL);
      int64_t rows = dbCountRows(db, OVERLAP_SQL);
      double s2t = tqWallSeconds();
      sqlite3_close(db);
      remove(dbPath);
      printf("overlap.sqlite.intervals %lld\n", (long long)y.intervals);
      printf("overlap.sqlite.insert_seconds %.3f\n", s1 - s0);
      printf("overlap.sqlite.select_seconds %.3f\n", s2t - s1);
      printf("overlap.sqlite.seconds %.3f\n", s2t - s0);
      printf("overlap.sqlite.rows %lld\n", (long long)rows);
      printf("overlap.sqlite.rate %.0f\n", (double)m / (s2t - s0));
      fflush(stdout);
    }
  }
  free(keySym);
  free(live);
}

int main(int argc, char **argv) {
  int64_t nChain = 0, nOverlap = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "chain") && i + 1 < argc) nChain = atoll(argv[++i]);
    else if (!strcmp(argv[i], "overlap") && i + 1 < argc) nOverlap = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--no-sqlite")) useSqlite = 0;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) chainReps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--db") && i + 1 < argc) dbPath = argv[++i];
    else {
      fprintf(stderr, "usage: netbench [chain N] [overlap N] [--reps R] [--no-sqlite] [--db FILE]\n");
      return 2;
    }
  }
  if (!nChain && !nOverlap) nChain = 10000000, nOverlap = 5000000;
  if (nChain) chain(nChain);
  if (nOverlap) overlap(nOverlap);
  return 0;
}
