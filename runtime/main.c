/*
** main.c - the tqmon command line.
**
**   tqmon check FILE.tq...                 compile, report errors
**   tqmon explain [--no-opt] [--trace] FILE.tq...
**   tqmon run FILE.tq... --replay TRACE [--db FILE] [--format table|csv|jsonl]
**             [--stats FILE] [--no-opt] [--quiet]
**   tqmon show [--db FILE] [RELATION]      print a stored relation as CSV
**
** Exit status: 0 success, 1 bad input (messages name file:line:col),
** 2 bad usage.  Every input is checked before anything is stored.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "display.h"
#include "runtime.h"
#include "sensors.h"

static const char *usageText =
    "usage: tqmon <command> [options] FILE.tq...\n"
    "\n"
    "commands:\n"
    "  check FILE.tq...            compile the program and report errors\n"
    "  explain FILE.tq...          print each query's algebra (optimized)\n"
    "      --no-opt                the initial algebra (paper section 8.4)\n"
    "      --trace                 every optimizer rule as it fires\n"
    "  run FILE.tq... --replay TRACE\n"
    "                              run the queries over a recording\n"
    "      --db FILE               store named results in an SQLite file\n"
    "      --format table|csv|jsonl  results on standard output (default table)\n"
    "      --quiet                 no results on standard output\n"
    "      --stats FILE            write statistics as JSON (per sensor: packets\n"
    "                              recorded, delivered, most entities enabled)\n"
    "      --no-opt                run the unoptimized algebra\n"
    "      --time-limit SECONDS    stop the replay after that long (benchmarks)\n"
    "  load FILE.tq... --replay TRACE --db FILE\n"
    "                              store every packet of the recording as tables\n"
    "                              of the primitive relations (all sensors enabled)\n"
    "  sql FILE.tq... --db FILE [--print]\n"
    "                              answer the queries over a store written by load,\n"
    "                              translated into SQL (retrospective analysis);\n"
    "                              --print shows the SQL instead\n"
    "  show [--db FILE] [RELATION] print stored relations as CSV (default tqmon.db)\n"
    "\n"
    "Several FILE.tq are read in order as one program.\n";

static int usage(FILE *f, int rc) {
  fputs(usageText, f);
  return rc;
}

typedef struct Args {
  const char *cmd;
  const char *files[256];
  int nfiles;
  const char *replay, *db, *stats, *format, *timeLimit;
  int noOpt, trace, quiet, print;
  const char *rel;
} Args;

static int parseArgs(int argc, char **argv, Args *a) {
  memset(a, 0, sizeof *a);
  if (argc < 2) return usage(stderr, 2);
  a->cmd = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *s = argv[i];
#define NEEDARG(field)                                                    \
  do {                                                                    \
    if (i + 1 >= argc) {                                                  \
      fprintf(stderr, "tqmon: %s needs an argument\n", s);                \
      return 2;                                                           \
    }                                                                     \
    a->field = argv[++i];                                                 \
  } while (0)
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) return usage(stdout, -1);
    else if (!strcmp(s, "--replay")) NEEDARG(replay);
    else if (!strcmp(s, "--db")) NEEDARG(db);
    else if (!strcmp(s, "--stats")) NEEDARG(stats);
    else if (!strcmp(s, "--format")) NEEDARG(format);
    else if (!strcmp(s, "--time-limit")) NEEDARG(timeLimit);
    else if (!strcmp(s, "--no-opt")) a->noOpt = 1;
    else if (!strcmp(s, "--trace")) a->trace = 1;
    else if (!strcmp(s, "--quiet")) a->quiet = 1;
    else if (!strcmp(s, "--print")) a->print = 1;
    else if (s[0] == '-' && s[1] == '-') {
      fprintf(stderr, "tqmon: unknown option %s\n", s);
      return 2;
    } else if (a->nfiles < 256) {
      a->files[a->nfiles++] = s;
    }
  }
  return 0;
}

static int reportDiag(TqDiag *d) {
  if (d->out.s) fputs(d->out.s, stderr);
  if (d->nerr > (d->maxerr ? d->maxerr : 50)) fprintf(stderr, "(%d more errors not shown)\n", d->nerr - 50);
  return d->nerr ? 1 : 0;
}

static CpProgram *compile(Args *a, TqDiag *d) {
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon %s: no program file given (FILE.tq)\n", a->cmd);
    return NULL;
  }
  CpProgram *p = cpCompileFiles(a->nfiles, a->files, d);
  if (p) cpOptimize(p, NULL);
  return p;
}

static int cmdCheck(Args *a) {
  TqDiag d = {0};
  CpProgram *p = compile(a, &d);
  int rc = p ? 0 : 1;
  if (p) printf("ok: %d sensor%s, %d quer%s\n", cpSensorCount(p), cpSensorCount(p) == 1 ? "" : "s", p->queries.n,
                p->queries.n == 1 ? "y" : "ies");
  else if (!d.nerr) rc = 2;
  reportDiag(&d);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdExplain(Args *a) {
  TqDiag d = {0};
  if (a->nfiles == 0) {
    fprintf(stderr, "tqmon explain: no program file given (FILE.tq)\n");
    return 2;
  }
  CpProgram *p = cpCompileFiles(a->nfiles, a->files, &d);
  if (!p) {
    reportDiag(&d);
    tqDiagFree(&d);
    return 1;
  }
  TqBuf trace = {0};
  if (!a->noOpt) cpOptimize(p, a->trace ? &trace : NULL);
  for (int i = 0; i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    TqBuf b = {0};
    const AlgNode *t = (!a->noOpt && q->opt) ? q->opt : q->tree;
    algPrint(t, &b);
    printf("%s: %s\n", q->name ? q->name : tqArenaPrintf(p->arena, "query%d", i + 1), b.s);
    tqBufFree(&b);
  }
  if (a->trace && trace.s) fputs(trace.s, stdout);
  tqBufFree(&trace);
  cpProgramFree(p);
  tqDiagFree(&d);
  return 0;
}

static int cmdRun(Args *a) {
  TqDiag d = {0};
  int fmt = DSP_TABLE;
  if (a->format) {
    if (!strcmp(a->format, "table")) fmt = DSP_TABLE;
    else if (!strcmp(a->format, "csv")) fmt = DSP_CSV;
    else if (!strcmp(a->format, "jsonl")) fmt = DSP_JSONL;
    else {
      fprintf(stderr, "tqmon run: unknown format '%s' (table, csv or jsonl)\n", a->format);
      return 2;
    }
  }
  if (!a->replay) {
    fprintf(stderr, "tqmon run: give a recording with --replay TRACE\n");
    return 2;
  }
  CpProgram *p = compile(a, &d);
  if (!p) {
    int rc = reportDiag(&d) ? 1 : 2;
    tqDiagFree(&d);
    return rc;
  }
  SnsTrace *tr = snsTraceRead(a->replay, p, &d);
  if (!tr) {
    reportDiag(&d);
    cpProgramFree(p);
    tqDiagFree(&d);
    return 1;
  }
  RtOptions opt = {a->noOpt, snsTraceLast(tr), a->timeLimit ? atof(a->timeLimit) : 0};
  RtNet *net = rtNetNew(p, &opt, &d);
  if (!net) {
    reportDiag(&d);
    snsTraceFree(tr);
    cpProgramFree(p);
    tqDiagFree(&d);
    return 1;
  }
  RtConsumer *store = NULL, *text = NULL;
  if (a->db) {
    store = rtStoreConsumer(a->db, &d);
    if (!store) {
      reportDiag(&d);
      rtNetFree(net);
      snsTraceFree(tr);
      cpProgramFree(p);
      tqDiagFree(&d);
      return 1;
    }
    rtNetAddConsumer(net, store);
  }
  if (!a->quiet) {
    text = dspTextConsumer(stdout, fmt);
    rtNetAddConsumer(net, text);
  }
  int rc = snsReplay(tr, net, snsTracePackets(tr) >= 1000000 ? stderr : NULL) ? 1 : 0;
  if (a->stats) {
    TqBuf b = {0};
    rtNetStatsJson(net, &b);
    FILE *f = fopen(a->stats, "w");
    if (!f || fputs(b.s, f) < 0 || fclose(f)) {
      fprintf(stderr, "tqmon run: cannot write %s: %s\n", a->stats, strerror(errno));
      rc = 1;
    }
    tqBufFree(&b);
  }
  reportDiag(&d);
  rtNetFree(net);
  rtStoreConsumerFree(store);
  dspTextConsumerFree(text);
  snsTraceFree(tr);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdLoad(Args *a) {
  TqDiag d = {0};
  if (!a->replay || !a->db) {
    fprintf(stderr, "tqmon load: give --replay TRACE and --db FILE\n");
    return 2;
  }
  CpProgram *p = compile(a, &d);
  SnsTrace *tr = p ? snsTraceRead(a->replay, p, &d) : NULL;
  int rc = tr ? (snsTraceToSqlite(tr, p, a->db, &d) ? 1 : 0) : 1;
  reportDiag(&d);
  snsTraceFree(tr);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdSql(Args *a) {
  TqDiag d = {0};
  if (!a->db) {
    fprintf(stderr, "tqmon sql: give the store with --db FILE\n");
    return 2;
  }
  CpProgram *p = compile(a, &d);
  if (!p) {
    int rc = reportDiag(&d) ? 1 : 2;
    tqDiagFree(&d);
    return rc;
  }
  int rc = 0;
  RtStore *st = rtStoreOpen(a->db, &d);
  CpSqlParams par = {0, 0};
  int64_t tick = 0;
  if (!st || rtStoreGetMeta(st, "first", &par.first) || rtStoreGetMeta(st, "last", &par.last) ||
      rtStoreGetMeta(st, "tick", &tick))
    rc = 1;
  else if (tick != p->cat.tick)
    tqErrorAt(&d, a->db, "the store was loaded with a clock tick of %lld ns, the program says %lld", (long long)tick,
              (long long)p->cat.tick), rc = 1;
  for (int i = 0; !rc && i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    TqBuf sql = {0}, err = {0};
    const char *name = q->name ? q->name : tqArenaPrintf(p->arena, "query%d", i + 1);
    if (cpQuerySql(p, q, &par, &sql, &err)) {
      tqError(&d, q->loc, "cannot translate into SQL: %s", err.s ? err.s : "?");
      rc = 1;
    } else if (a->print) {
      printf("-- %s\n%s;\n", name, sql.s);
    } else {
      printf("# %s\n", name);
      TqBuf ord = {0};
      tqBufPrintf(&ord, "SELECT * FROM (%s) ORDER BY %s", sql.s, q->isEvent ? "valid_at" : "valid_from, valid_to IS NULL, valid_to");
      for (int k = 0; k < q->nattr; k++) tqBufPrintf(&ord, ", %d", k + 1);
      if (rtStoreQueryCsv(st, ord.s, stdout)) rc = 1;
      tqBufFree(&ord);
    }
    tqBufFree(&sql);
    tqBufFree(&err);
  }
  reportDiag(&d);
  rtStoreFree(st);
  cpProgramFree(p);
  tqDiagFree(&d);
  return rc;
}

static int cmdShow(Args *a) {
  TqDiag d = {0};
  const char *db = a->db ? a->db : "tqmon.db";
  FILE *f = fopen(db, "rb");
  if (!f) {
    fprintf(stderr, "tqmon show: cannot open %s: %s\n", db, strerror(errno));
    return 1;
  }
  fclose(f);
  RtStore *st = rtStoreOpen(db, &d);
  int rc = 1;
  if (st) {
    if (a->nfiles == 0) {
      rc = rtStoreQueryCsv(st, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name", stdout) ? 1 : 0;
    } else {
      rc = 0;
      for (int i = 0; i < a->nfiles; i++) {
        TqBuf q = {0};
        tqBufPuts(&q, "SELECT * FROM \"");
        for (const char *s = a->files[i]; *s; s++) tqBufAdd(&q, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
        tqBufPuts(&q, "\"");
        printf("# %s\n", a->files[i]);
        if (rtStoreQueryCsv(st, q.s, stdout)) rc = 1;
        tqBufFree(&q);
      }
    }
  }
  reportDiag(&d);
  rtStoreFree(st);
  tqDiagFree(&d);
  return rc;
}

int main(int argc, char **argv) {
  Args a;
  int rc = parseArgs(argc, argv, &a);
  if (rc == -1) return 0;
  if (rc) return rc;
  if (!strcmp(a.cmd, "--help") || !strcmp(a.cmd, "-h") || !strcmp(a.cmd, "help")) return usage(stdout, 0);
  if (!strcmp(a.cmd, "check")) return cmdCheck(&a);
  if (!strcmp(a.cmd, "explain")) return cmdExplain(&a);
  if (!strcmp(a.cmd, "run")) return cmdRun(&a);
  if (!strcmp(a.cmd, "show")) return cmdShow(&a);
  if (!strcmp(a.cmd, "load")) return cmdLoad(&a);
  if (!strcmp(a.cmd, "sql")) return cmdSql(&a);
  fprintf(stderr, "tqmon: unknown command '%s'\n", a.cmd);
  return usage(stderr, 2);
}
