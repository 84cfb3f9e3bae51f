/*
** export.c - the `pcpexport` CONSUMER: a running tqmon's named results,
** published for the PCP agent pmdatqmon (sensors/pmdatqmon.md), which
** serves them as metrics (tqmon.result.*): the tuples valid now as
** instances with their values, and counts.
**
** It keeps, per named result, the rows valid now (an interval row from its
** insert to its close or delete; an event row is counted, never valid
** "now") and the rows inserted so far, and every 100 ms of the run (and at
** the end) writes them as a text file /dev/shm/tqmon-results.PID (mode
** 0600; written under another name and renamed, so a reader never sees
** half of it).  The file is removed at the end of the run.  Format:
**
**   tqmon-results 1
**   now NS
**   result NAME VALID ROWS ATTR,ATTR,...
**   row NAME ROWID FROM VALUE<TAB>VALUE...
**
** Names are identifiers (unnamed results are not exported); a value is
** text with tabs and newlines replaced by spaces.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "display.h"

typedef struct ExRow {
  uint64_t id;
  TqTime from;
  int64_t vals[];
} ExRow;

typedef struct ExRes {
  const RtResult *res;  /* set at its first row */
  TqMap open;           /* rowid + 2 -> ExRow* valid now */
  int64_t rows;         /* rows inserted */
} ExRes;

typedef struct Export {
  RtConsumer c;
  int nres;
  ExRes *res;
  char path[96], tmp[104];
  TqTime lastWrite;     /* CLOCK_MONOTONIC ns of the last write */
  int64_t writes, failures;
  char why[160];
} Export;

static TqTime monoNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (TqTime)ts.tv_sec * TQ_SEC + ts.tv_nsec;
}

static int exBegin(void *self, RtNet *net) {
  Export *x = self;
  x->nres = net->nresult;
  x->res = tqCalloc((size_t)(x->nres ? x->nres : 1), sizeof(ExRes));
  return 0;
}

static int named(const RtResult *res) { return res->q && res->q->name && !res->q->display; }

static int exRow(void *self, RtResult *res, const RtRow *r) {
  Export *x = self;
  if (!named(res) || res->q->index < 0 || res->q->index >= x->nres) return 0;
  ExRes *e = &x->res[res->q->index];
  e->res = res;
  uint64_t key = r->rowid + 2;
  if (r->op == RT_ROW_INSERT) {
    e->rows++;
    if (res->isEvent || r->to != TQ_OPEN) return 0; /* not valid from now on */
    ExRow *row = tqMalloc(sizeof(ExRow) + sizeof(int64_t) * (size_t)res->nattr);
    row->id = r->rowid;
    row->from = r->from;
    memcpy(row->vals, r->vals, sizeof(int64_t) * (size_t)res->nattr);
    free(tqMapDel(&e->open, key));
    tqMapPut(&e->open, key, row);
  } else {
    free(tqMapDel(&e->open, key)); /* closed or deleted: no longer valid now */
  }
  return 0;
}

static void cleanText(char *s) {
  for (; *s; s++)
    if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

/* Writes the file; 0 or -1 (x->why says why). */
static int exWrite(Export *x, TqTime now) {
  FILE *f = NULL;
  int fd = open(x->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) f = fdopen(fd, "w");
  if (!f) {
    snprintf(x->why, sizeof x->why, "cannot write %s: %s", x->tmp, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  fprintf(f, "tqmon-results 1\nnow %lld\n", (long long)now);
  char buf[256];
  for (int i = 0; i < x->nres; i++) {
    ExRes *e = &x->res[i];
    if (!e->res) continue;
    fprintf(f, "result %s %u %lld ", e->res->name, e->open.n, (long long)e->rows);
    for (int k = 0; k < e->res->nattr; k++) fprintf(f, "%s%s", k ? "," : "", e->res->attr[k].name);
    fputc('\n', f);
    for (uint32_t s = 0; s < e->open.cap; s++) {
      if (e->open.slot[s].key <= 1) continue;
      ExRow *row = e->open.slot[s].val;
      fprintf(f, "row %s %llu %lld ", e->res->name, (unsigned long long)row->id, (long long)row->from);
      for (int k = 0; k < e->res->nattr; k++) {
        dspValue(buf, sizeof buf, e->res->attr[k].type, row->vals[k]);
        cleanText(buf);
        fprintf(f, "%s%s", k ? "\t" : "", buf);
      }
      fputc('\n', f);
    }
  }
  int bad = ferror(f);
  if (fclose(f) || bad || rename(x->tmp, x->path)) {
    snprintf(x->why, sizeof x->why, "cannot write %s: %s", x->path, strerror(errno));
    unlink(x->tmp);
    return -1;
  }
  x->writes++;
  return 0;
}

static int exBatch(void *self, TqTime now) {
  Export *x = self;
  TqTime t = monoNow();
  if (t - x->lastWrite < 100 * TQ_MSEC) return 0;
  x->lastWrite = t;
  if (exWrite(x, now)) x->failures++;
  return 0;
}

static int exEnd(void *self, RtNet *net, int ok) {
  Export *x = self;
  unlink(x->path);
  unlink(x->tmp);
  return 0;
}

static tq_pm_status pexInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = 0;
  return TQ_PM_OK;
}

static tq_pm_status pexCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Export *x = p->data;
  switch (what) {
    case TQ_PM_START:
      x = tqCalloc(1, sizeof *x);
      p->data = x;
      snprintf(x->path, sizeof x->path, "/dev/shm/tqmon-results.%d", (int)getpid());
      snprintf(x->tmp, sizeof x->tmp, "/dev/shm/.tqmon-results.%d", (int)getpid());
      x->c = (RtConsumer){.name = "pcpexport", .self = x, .begin = exBegin, .row = exRow, .batch = exBatch, .end = exEnd};
      exBegin(x, enNet(g));
      enAttachConsumer(g, p, &x->c);
      if (exWrite(x, g->now)) {
        snprintf(p->message, sizeof p->message, "%s", x->why);
        return TQ_PM_ERROR;
      }
      return TQ_PM_OK;
    case TQ_PM_END:
      if (!x) return TQ_PM_OK;
      exEnd(x, NULL, 1);
      if (x->failures)
        g->log(g, p, TQ_LOG_WARNING, "%lld writes of the results for PCP failed: %s", (long long)x->failures, x->why);
      snprintf(p->message, sizeof p->message, "%lld writes of %s", (long long)x->writes, x->path);
      for (int i = 0; i < x->nres; i++) {
        for (uint32_t s = 0; s < x->res[i].open.cap; s++)
          if (x->res[i].open.slot[s].key > 1) free(x->res[i].open.slot[s].val);
        tqMapFree(&x->res[i].open);
      }
      free(x->res);
      free(x);
      p->data = NULL;
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

const tq_pm dspPcpExportPm = {
    .version = TQ_PM_VERSION,
    .name = "pcpexport",
    .description = "CONSUMER: the named results valid now, for the PCP agent pmdatqmon (tqmon.result.*)",
    .init = pexInit,
    .call = pexCall,
};
