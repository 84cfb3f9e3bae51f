/*
** report.c - tqmon report: a Strobe-like performance profile of the CPU
** samples of a run (sensors/cpusample.tq's Executing), and an HTML page
** with a flame graph.
**
** The profile is computed by TQuel queries (appReportQueries writes them):
** samples by module, by module and function, by call stack, and with a
** transaction relation (--transactions REL.ATTR) by transaction and by
** transaction and function, each a `for ever` count read at now.  The
** command runs them with the user's program over any source into a
** temporary SQLite store (the sqlite PM), and appReportWrite reads the
** answers back (rtStoreQueryCsv); over a store of primitive relations
** (tqmon load, report --db) appReportStore reads them through their SQL
** translations (cpQuerySql, compiler/sqlgen.c).  Either writes:
**   - the text report: the samples, then MODULE USAGE, FUNCTION USAGE (the
**     top N), and with transactions TRANSACTION USAGE and, for each
**     transaction, its functions, every line with its share of all samples
**     (and of the transaction's);
**   - the page (-o PAGE.html): self-contained like the display page
**     (nothing fetched), the call stacks folded into a flame graph (width
**     = share of samples; click a frame to zoom, the root to come back).
** Nothing is silent: no sample at all is an error, and a transaction
** relation without samples in it says so.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../runtime/runtime.h"
#include "app.h"

/* ================================================================ the queries */

char *appReportQueries(const CpProgram *p, const char *txn, TqBuf *err) {
  const AlgRel *ex = algCatRel(&p->cat, "Executing");
  if (!ex || ex->entity) {
    tqBufPuts(err, "the program declares no relation Executing: give sensors/cpusample.tq (and load --pm cpusample)");
    return NULL;
  }
  static const char *need[] = {"Process", "Thread", "Module", "Function"};
  for (size_t i = 0; i < TQ_ARRAY_SIZE(need); i++)
    if (algRelAttr(ex, need[i]) < 0) {
      tqBufPrintf(err, "Executing has no attribute %s (sensors/cpusample.tq declares it)", need[i]);
      return NULL;
    }
  int stack = algRelAttr(ex, "Stack") >= 0;
  TqBuf q = {0};
  tqBufPuts(&q,
            "-- tqmon report: the profile's queries\n"
            "range of TqrE is Executing\n"
            "retrieve into TqrTotal (N = count(TqrE.Thread for ever)) valid at now\n"
            "retrieve into TqrModules (TqrE.Module, N = count(TqrE.Thread by TqrE.Module for ever))\n"
            "  valid at now when not (now precede TqrE)\n"
            "retrieve into TqrFunctions (TqrE.Module, TqrE.Function,\n"
            "                            N = count(TqrE.Thread by TqrE.Module, TqrE.Function for ever))\n"
            "  valid at now when not (now precede TqrE)\n");
  if (stack)
    tqBufPuts(&q, "retrieve into TqrStacks (TqrE.Stack, N = count(TqrE.Thread by TqrE.Stack for ever))\n"
                  "  valid at now when not (now precede TqrE)\n");
  if (txn) {
    const char *dot = strchr(txn, '.');
    char rel[128];
    if (!dot || dot == txn || !dot[1] || (size_t)(dot - txn) >= sizeof rel) {
      tqBufPrintf(err, "--transactions takes RELATION.ATTRIBUTE (Transaction.Kind), not '%s'", txn);
      tqBufFree(&q);
      return NULL;
    }
    memcpy(rel, txn, (size_t)(dot - txn));
    rel[dot - txn] = 0;
    const AlgRel *t = algCatRel(&p->cat, rel);
    if (!t || t->isEvent) {
      tqBufPrintf(err, "--transactions: %s is not an interval relation of the program", rel);
      tqBufFree(&q);
      return NULL;
    }
    int a = algRelAttr(t, dot + 1), pa = algRelAttr(t, "Process");
    if (a < 0 || pa < 0 || t->attr[pa].type.kind != TY_ENTITY || ex->attr[algRelAttr(ex, "Process")].type.ent != t->attr[pa].type.ent) {
      tqBufPrintf(err, "--transactions: %s needs the attribute %s and a Process of the entity type Executing's is", rel,
                  a < 0 ? dot + 1 : "Process");
      tqBufFree(&q);
      return NULL;
    }
    const char *an = t->attr[a].name;
    tqBufPrintf(&q,
                "range of TqrT is %s\n"
                "retrieve into TqrTxns (Transaction = TqrT.%s,\n"
                "                       N = count(TqrE.Thread by TqrT.%s where TqrE.Process = TqrT.Process for ever))\n"
                "  valid at now where TqrE.Process = TqrT.Process when TqrE overlap TqrT\n"
                "retrieve into TqrTxnFunctions (Transaction = TqrT.%s, TqrE.Module, TqrE.Function,\n"
                "    N = count(TqrE.Thread by TqrT.%s, TqrE.Module, TqrE.Function where TqrE.Process = TqrT.Process for ever))\n"
                "  valid at now where TqrE.Process = TqrT.Process when TqrE overlap TqrT\n",
                t->name, an, an, an, an);
  }
  return q.s;
}

/* ================================================================ reading the answers */

typedef struct Row {
  char *f[4]; /* the fields (strings) */
  int nf;
  int64_t n;  /* the count (the last field) */
} Row;
typedef struct Rows {
  Row *v;
  int n, cap;
} Rows;

/* One CSV field of a record (a NUL-terminated line) from *s, quoted or
** not, unquoted in place; *s moves past it and its comma. */
static char *csvField(char **s) {
  char *p = *s, *w = p, *out = p;
  if (*p == '"') {
    for (p++; *p;) {
      if (*p == '"' && p[1] == '"') {
        *w++ = '"';
        p += 2;
      } else if (*p == '"') {
        p++;
        break;
      } else {
        *w++ = *p++;
      }
    }
  }
  while (*p && *p != ',') *w++ = *p++;
  char *next = *p == ',' ? p + 1 : p;
  *w = 0;
  *s = next;
  return out;
}

static int byCount(const void *x, const void *y) {
  const Row *a = x, *b = y;
  if (a->n != b->n) return a->n > b->n ? -1 : 1;
  for (int i = 0; i < a->nf && i < b->nf; i++) {
    int c = strcmp(a->f[i], b->f[i]);
    if (c) return c;
  }
  return 0;
}

/* Where the answers of the report's queries are read: the tables a run
** stored them in, or over a store of primitive relations (tqmon load) their
** SQL translations (cpQuerySql), one per table (NULL: not there). */
enum { R_TOTAL, R_MODULES, R_FUNCTIONS, R_STACKS, R_TXNS, R_TXNFUNCTIONS, R_N };
static const char *const tableNames[R_N] = {"TqrTotal", "TqrModules", "TqrFunctions", "TqrStacks", "TqrTxns", "TqrTxnFunctions"};
typedef struct Source {
  char *sql[R_N]; /* per table: its query's SQL (NULL: read the table itself) */
  int fromSql;    /* read every table through sql[] */
} Source;

/* The rows of `SELECT cols FROM table` (nf string fields, then the count),
** sorted by count, largest first.  Returns 0, or -1 with the reason. */
static int readRows(RtStore *st, const Source *src, int table, const char *cols, int nf, Rows *r, char **buf, TqBuf *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    tqBufPrintf(err, "memory: %s", strerror(errno));
    return -1;
  }
  TqBuf sql = {0};
  if (src->fromSql && !src->sql[table]) {
    fclose(f);
    free(text);
    tqBufPrintf(err, "%s has no query", tableNames[table]);
    return -1;
  }
  if (src->fromSql) tqBufPrintf(&sql, "SELECT %s FROM (%s)", cols, src->sql[table]);
  else tqBufPrintf(&sql, "SELECT %s FROM \"%s\"", cols, tableNames[table]);
  int rc = rtStoreQueryCsv(st, sql.s, f);
  fclose(f);
  tqBufFree(&sql);
  if (rc) {
    tqBufPrintf(err, "reading %s from the store failed", tableNames[table]);
    free(text);
    return -1;
  }
  *buf = text;
  char *s = text;
  /* the header line */
  char *nl = strchr(s, '\n');
  s = nl ? nl + 1 : s + strlen(s);
  while (*s) {
    char *line = s, *e = line;
    /* the end of this record: a newline outside quotes */
    int quoted = 0;
    for (; *e && (quoted || *e != '\n'); e++)
      if (*e == '"') quoted = !quoted;
    char *next = *e ? e + 1 : e;
    *e = 0;
    if (r->n == r->cap) {
      r->cap = r->cap ? 2 * r->cap : 64;
      r->v = tqRealloc(r->v, sizeof(Row) * (size_t)r->cap);
    }
    Row *w = &r->v[r->n];
    memset(w, 0, sizeof *w);
    char *p = line;
    for (int i = 0; i <= nf; i++) {
      char *field = csvField(&p);
      if (i < nf) w->f[i] = field;
      else w->n = strtoll(field, NULL, 10);
    }
    w->nf = nf;
    r->n++;
    s = next;
  }
  if (r->n > 1) qsort(r->v, (size_t)r->n, sizeof(Row), byCount);
  return 0;
}

/* ================================================================ the text */

static double pct(int64_t n, int64_t of) { return of > 0 ? 100.0 * (double)n / (double)of : 0.0; }

static void bar(FILE *out, double share) {
  int k = (int)(share / 2.5 + 0.5);
  for (int i = 0; i < k; i++) fputc('#', out);
}

/* ================================================================ the page */

extern const char appFlameHtml[];

static void jsonStr(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '<') fputs("\\u003c", f); /* no </script> inside the page */
    else if (c < 32) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static int writePage(const char *path, const char *title, int64_t total, const Rows *stacks, const Rows *funcs, TqBuf *err) {
  FILE *f = fopen(path, "w");
  if (!f) {
    tqBufPrintf(err, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  const char *mark = strstr(appFlameHtml, "/*DATA*/");
  fwrite(appFlameHtml, 1, (size_t)(mark - appFlameHtml), f);
  fputs("{\"title\": ", f);
  jsonStr(f, title);
  fprintf(f, ", \"total\": %lld, \"stacks\": [", (long long)total);
  const Rows *r = stacks->n ? stacks : funcs;
  for (int i = 0; i < r->n; i++) {
    fputs(i ? ",\n[" : "\n[", f);
    if (stacks->n) jsonStr(f, r->v[i].f[0]);
    else {
      char *s = tqMprintf("%s;%s", r->v[i].f[0], r->v[i].f[1]); /* no stacks: module;function */
      jsonStr(f, s);
      free(s);
    }
    fprintf(f, ", %lld]", (long long)r->v[i].n);
  }
  fputs("]}", f);
  fputs(mark + strlen("/*DATA*/"), f);
  if (fclose(f)) {
    tqBufPrintf(err, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* The profile from the answers in st (src says where), as appReportWrite. */
static int writeReport(RtStore *st, const Source *src, const char *txn, int top, FILE *out, const char *page, TqBuf *err) {
  Rows total = {0}, mods = {0}, funcs = {0}, stacks = {0}, txns = {0}, tf = {0};
  char *b[6] = {0};
  int rc = readRows(st, src, R_TOTAL, "N", 0, &total, &b[0], err) || readRows(st, src, R_MODULES, "Module, N", 1, &mods, &b[1], err) ||
           readRows(st, src, R_FUNCTIONS, "Module, Function, N", 2, &funcs, &b[2], err);
  int haveStacks = 0;
  if (!rc && page) {
    /* the stacks are there when Executing has a Stack */
    TqBuf e2 = {0};
    haveStacks = readRows(st, src, R_STACKS, "Stack, N", 1, &stacks, &b[3], &e2) == 0;
    tqBufFree(&e2);
  }
  if (!rc && txn)
    rc = readRows(st, src, R_TXNS, "\"Transaction\", N", 1, &txns, &b[4], err) ||
         readRows(st, src, R_TXNFUNCTIONS, "\"Transaction\", Module, Function, N", 3, &tf, &b[5], err);
  int64_t all = total.n ? total.v[0].n : 0;
  if (!rc && all == 0) {
    tqBufPuts(err, "no sample was taken: nothing to report (was the sensor enabled on a process? see --stats, cpusample)");
    rc = -1;
  }
  if (!rc) {
    int64_t inTxn = 0;
    for (int i = 0; i < txns.n; i++) inTxn += txns.v[i].n;
    fprintf(out, "tqmon performance profile\n\n  samples        %lld\n", (long long)all);
    if (txn) fprintf(out, "  transactions   %s: %lld samples in them (%.2f%%)\n", txn, (long long)inTxn, pct(inTxn, all));
    fprintf(out, "\nMODULE USAGE\n  %-32s %10s %8s\n", "module", "samples", "share");
    for (int i = 0; i < mods.n; i++) {
      fprintf(out, "  %-32s %10lld %7.2f%%  ", mods.v[i].f[0], (long long)mods.v[i].n, pct(mods.v[i].n, all));
      bar(out, pct(mods.v[i].n, all));
      fputc('\n', out);
    }
    fprintf(out, "\nFUNCTION USAGE (top %d of %d)\n  %-24s %-32s %10s %8s\n", top < funcs.n ? top : funcs.n, funcs.n, "module",
            "function", "samples", "share");
    for (int i = 0; i < funcs.n && i < top; i++) {
      fprintf(out, "  %-24s %-32s %10lld %7.2f%%  ", funcs.v[i].f[0], funcs.v[i].f[1], (long long)funcs.v[i].n,
              pct(funcs.v[i].n, all));
      bar(out, pct(funcs.v[i].n, all));
      fputc('\n', out);
    }
    if (txn) {
      fprintf(out, "\nTRANSACTION USAGE\n  %-32s %10s %8s\n", "transaction", "samples", "share");
      for (int i = 0; i < txns.n; i++)
        fprintf(out, "  %-32s %10lld %7.2f%%\n", txns.v[i].f[0], (long long)txns.v[i].n, pct(txns.v[i].n, all));
      fprintf(out, "  %-32s %10lld %7.2f%%\n", "(in no transaction)", (long long)(all - inTxn), pct(all - inTxn, all));
      if (!txns.n) fprintf(out, "  (no sample fell in a transaction of %s)\n", txn);
      fprintf(out, "\nTRANSACTION USAGE BY FUNCTION\n");
      for (int i = 0; i < txns.n; i++) {
        fprintf(out, "  %s\n    %-24s %-32s %10s %8s %8s\n", txns.v[i].f[0], "module", "function", "samples", "share", "of it");
        int shown = 0;
        for (int k = 0; k < tf.n && shown < top; k++) {
          if (strcmp(tf.v[k].f[0], txns.v[i].f[0])) continue;
          fprintf(out, "    %-24s %-32s %10lld %7.2f%% %7.2f%%\n", tf.v[k].f[1], tf.v[k].f[2], (long long)tf.v[k].n,
                  pct(tf.v[k].n, all), pct(tf.v[k].n, txns.v[i].n));
          shown++;
        }
      }
    }
    if (page && writePage(page, "tqmon profile", all, haveStacks ? &stacks : &(Rows){0}, &funcs, err)) rc = -1;
    if (page && !rc) fprintf(out, "\nflame graph: %s (%s)\n", page, haveStacks ? "call stacks" : "module;function: Executing has no Stack");
  }
  Rows *all6[] = {&total, &mods, &funcs, &stacks, &txns, &tf};
  for (int i = 0; i < 6; i++) {
    free(all6[i]->v);
    free(b[i]);
  }
  return rc ? -1 : 0;
}

int appReportWrite(const char *db, const char *txn, int top, FILE *out, const char *page, TqBuf *err) {
  TqDiag d = {0};
  RtStore *st = rtStoreOpen(db, &d);
  if (!st) {
    tqBufPrintf(err, "cannot open the profile's store %s", db);
    tqDiagFree(&d);
    return -1;
  }
  Source src = {{0}, 0};
  int rc = writeReport(st, &src, txn, top, out, page, err);
  rtStoreFree(st);
  tqDiagFree(&d);
  return rc;
}

int appReportStore(const char *store, int nfiles, const char *const *files, const char *txn, int top, FILE *out, const char *page,
                   TqDiag *d, TqBuf *err) {
  /* the program's files, then the report's queries */
  TqSource **srcs = tqCalloc((size_t)nfiles + 1, sizeof *srcs);
  int n = 0, bad = 0;
  for (; n < nfiles && !bad; n++)
    if (!(srcs[n] = tqSourceRead(files[n], d))) bad = 1;
  CpProgram *p = bad ? NULL : cpCompileSources(n, srcs, d);
  if (!p) {
    for (int i = 0; bad && i < n; i++) tqSourceFree(srcs[i]);
    free(srcs);
    return -1;
  }
  int first = p->queries.n;
  char *q = appReportQueries(p, txn, err);
  cpProgramFree(p);
  p = NULL;
  if (q) {
    srcs = tqRealloc(srcs, sizeof *srcs * (size_t)(nfiles + 1));
    for (int i = 0; i < nfiles; i++) srcs[i] = tqSourceRead(files[i], d); /* (the compiler took them) */
    srcs[nfiles] = tqSourceFromString("(the report's queries)", q);
    p = cpCompileSources(nfiles + 1, srcs, d);
    free(q);
  }
  free(srcs);
  if (!p) return -1;
  /* the store: one of primitive relations (tqmon load), read only */
  RtStore *st = rtStoreOpenReadOnly(store, d);
  CpSqlParams par = {0, 0};
  int64_t tick = 0;
  int rc = -1;
  Source src = {{0}, 1};
  if (!st) {
    tqBufPrintf(err, "cannot open the store %s", store);
  } else if (rtStoreGetMeta(st, "first", &par.first) || rtStoreGetMeta(st, "last", &par.last) ||
             rtStoreGetMeta(st, "tick", &tick)) {
    tqBufPrintf(err, "%s is no store of primitive relations (tqmon load writes one; a store of results, run --db, holds "
                     "the answers of its own queries, not the samples of Executing)", store);
  } else if (tick != p->cat.tick) {
    tqBufPrintf(err, "the store %s was loaded with a clock tick of %lld ns, the program says %lld", store, (long long)tick,
                (long long)p->cat.tick);
  } else {
    rc = 0;
    for (int i = first; i < p->queries.n && !rc; i++) {
      const CpQuery *cq = p->queries.v[i];
      for (int k = 0; k < R_N; k++) {
        if (!cq->name || strcmp(cq->name, tableNames[k])) continue;
        TqBuf sql = {0}, e2 = {0};
        if (cpQuerySql(p, cq, &par, &sql, &e2)) {
          tqBufPrintf(err, "%s cannot be translated into SQL: %s", cq->name, e2.s ? e2.s : "?");
          rc = -1;
          tqBufFree(&sql);
        } else {
          src.sql[k] = sql.s;
        }
        tqBufFree(&e2);
      }
    }
    if (!rc) rc = writeReport(st, &src, txn, top, out, page, err);
  }
  for (int k = 0; k < R_N; k++) free(src.sql[k]);
  rtStoreFree(st);
  cpProgramFree(p);
  return rc ? -1 : 0;
}
