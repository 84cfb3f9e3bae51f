/*
** fuzz_frontend.c - libFuzzer target for tqmon's front end and recording
** parser (make fuzz; a bounded run is part of make test).
**
** Input: text, cut into sections at lines that are exactly "%%".  Without
** such a line the whole input is one program file.  With one or more, the
** last section is a recording (.trace) and the sections before it are
** program files, compiled in order as one program (as `tqmon run a.tq b.tq`
** would).  A NUL byte ends the input (files with NUL bytes are refused
** before they reach the compiler, see tqSourceRead).
**
** For each input: cpCompileSources; when it compiles, cpOptimize (with the
** rule trace), algPrint / algPrintTree of the trees, snsTraceParse of the
** recording, then for every query cpQuerySql and cpQuerySnapshotSql (with
** the recording's first/last time, and with fixed parameters); everything
** is freed.  Errors are expected; crashes, hangs, leaks and sanitizer
** reports are bugs, and so is a SQL translation that breaks its documented
** contract (abort in checkSql).
**
** FUZZ_VERBOSE=1 in the environment prints what happened to each input
** (diagnostics, SQL) on stderr: `build/fuzz/fuzz_frontend FILE` runs one.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "sensors.h"
#include "tq.h"

#define MAXSECT 8

static int verbose = -1;

/* Splits text (NUL-terminated, modified in place) at "%%" lines. */
static int splitSections(char *text, char **sect) {
  int n = 0;
  sect[n++] = text;
  char *line = text;
  while (*line && n < MAXSECT) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (len > 0 && line[len - 1] == '\r') len--;
    if (len == 2 && line[0] == '%' && line[1] == '%') {
      *line = 0; /* ends the previous section */
      sect[n++] = nl ? nl + 1 : (char *)"";
    }
    if (!nl) break;
    line = nl + 1;
  }
  return n;
}

/* The documented contract: 0 with SQL in out, or -1 with a message in err. */
static void checkSql(int rc, TqBuf *sql, TqBuf *err) {
  if (verbose) fprintf(stderr, "%s\n", rc ? (err->s ? err->s : "(no message)") : sql->s);
  if (rc == 0 && !sql->s) abort();
  if (rc != 0 && (rc != -1 || !err->s)) abort();
  tqBufFree(sql);
  tqBufFree(err);
}

static void sqlFor(const CpProgram *p, const CpQuery *q, const CpSqlParams *par) {
  TqBuf sql = {0}, err = {0};
  checkSql(cpQuerySql(p, q, par, &sql, &err), &sql, &err);
  TqTime mid = par->first / 2 + par->last / 2;
  checkSql(cpQuerySnapshotSql(p, q, par, mid, &sql, &err), &sql, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") && *getenv("FUZZ_VERBOSE") == '1';
  char *text = malloc(size + 1);
  if (!text) return 0;
  if (size) memcpy(text, data, size);
  text[size] = 0;

  char *sect[MAXSECT];
  int ns = splitSections(text, sect);
  int nprog = ns > 1 ? ns - 1 : 1;
  const char *trace = ns > 1 ? sect[ns - 1] : NULL;

  TqDiag d = {0};
  TqSource *srcs[MAXSECT];
  for (int i = 0; i < nprog; i++) {
    char name[32];
    snprintf(name, sizeof name, "fuzz%d.tq", i + 1);
    srcs[i] = tqSourceFromString(name, sect[i]);
  }
  CpProgram *p = cpCompileSources(nprog, srcs, &d);
  if (verbose) fprintf(stderr, "%d program file(s), recording: %s\n%s", nprog, trace ? "yes" : "no", d.out.s ? d.out.s : "");
  if (p) {
    TqBuf rules = {0};
    cpOptimize(p, &rules);
    tqBufFree(&rules);
    for (int i = 0; i < p->queries.n; i++) {
      CpQuery *q = p->queries.v[i];
      TqBuf b = {0};
      algPrint(q->tree, &b);
      if (q->opt) algPrint(q->opt, &b);
      algPrintTree(q->opt ? q->opt : q->tree, &b, 0);
      tqBufFree(&b);
    }

    TqDiag td = {0};
    SnsTrace *tr = snsTraceParse(tqSourceFromString("fuzz.trace", trace ? trace : ""), p, &td);
    if (verbose)
      fprintf(stderr, "recording: %s, %lld packets\n%s", tr ? "ok" : "rejected", tr ? (long long)snsTracePackets(tr) : 0LL,
              td.out.s ? td.out.s : "");
    tqDiagFree(&td);

    CpSqlParams fixed = {0, 3 * 3600 * TQ_SEC};
    CpSqlParams rec = {tr ? snsTraceFirst(tr) : 0, tr ? snsTraceLast(tr) : 0};
    for (int i = 0; i < p->queries.n; i++) {
      const CpQuery *q = p->queries.v[i];
      sqlFor(p, q, &rec);
      sqlFor(p, q, &fixed);
    }
    snsTraceFree(tr);
    cpProgramFree(p);
  }
  tqDiagFree(&d);
  free(text);
  return 0;
}
