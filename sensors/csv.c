/*
** csv.c - a recording (text or binary) as CSV files, one per primitive
** relation: the bulk export a column store loads fastest (DuckDB's
** read_csv; `tqmon load --csv DIR`, the DuckDB peer of `make bench`).
**
** The rows are those `tqmon load --db` stores in SQLite: an event at t is
** (values, valid_at); an interval (values, valid_from, valid_to), valid_to
** empty (NULL) while still open at the end; a sample of an interval
** relation the instant [t, t+1).  Entities and strings are their names,
** enums their value names, quoted as RFC 4180 says when they hold a comma,
** a quote, a line break or nothing (an empty field is NULL).  DIR/schema.csv
** lists relation, column, SQL type (BIGINT, DOUBLE, VARCHAR) in order, so a
** loader needs no type guessing.  Each file is written through its own
** buffer of 256 kB: the export costs little beside reading the recording.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensorsInt.h"

#define CSV_BUF (256 * 1024)

typedef struct CsvFile {
  int fd;               /* -1: not opened */
  char *buf;            /* pending bytes */
  size_t n;
} CsvFile;

struct SnsCsv {
  const CpProgram *prog;
  char *dir;
  CsvFile *f;           /* by relation id - 1 */
  int nrel;
  int err;              /* errno of the first failed write */
  int64_t rows;
};

static void csvFlush(SnsCsv *c, CsvFile *f) {
  size_t off = 0;
  while (off < f->n && !c->err) {
    ssize_t k = write(f->fd, f->buf + off, f->n - off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) c->err = k < 0 ? errno : EIO;
    else off += (size_t)k;
  }
  f->n = 0;
}

static void csvPut(SnsCsv *c, CsvFile *f, const char *s, size_t n) {
  if (f->n + n > CSV_BUF) csvFlush(c, f);
  if (n > CSV_BUF) { /* (a huge string: straight through) */
    CsvFile big = {f->fd, (char *)s, n};
    csvFlush(c, &big);
    return;
  }
  memcpy(f->buf + f->n, s, n);
  f->n += n;
}

static void csvInt(SnsCsv *c, CsvFile *f, int64_t v) {
  char tmp[24], *e = tmp + sizeof tmp, *p = e;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) *--p = '-';
  csvPut(c, f, p, (size_t)(e - p));
}

static void csvText(SnsCsv *c, CsvFile *f, const char *s) {
  size_t n = strlen(s);
  int quote = n == 0;
  for (size_t i = 0; i < n && !quote; i++)
    if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') quote = 1;
  if (!quote) {
    csvPut(c, f, s, n);
    return;
  }
  csvPut(c, f, "\"", 1);
  for (const char *q; (q = strchr(s, '"')); s = q + 1) {
    csvPut(c, f, s, (size_t)(q - s) + 1);
    csvPut(c, f, "\"", 1);
  }
  csvPut(c, f, s, strlen(s));
  csvPut(c, f, "\"", 1);
}

static const char *sqlType(int kind) {
  return kind == TY_INT ? "BIGINT" : kind == TY_FLOAT ? "DOUBLE" : "VARCHAR";
}

SnsCsv *snsCsvOpen(const char *dir, const CpProgram *prog, TqDiag *d) {
  if (mkdir(dir, 0777) && errno != EEXIST) {
    tqErrorAt(d, dir, "cannot create the directory: %s", strerror(errno));
    return NULL;
  }
  SnsCsv *c = tqCalloc(1, sizeof *c);
  c->prog = prog;
  c->dir = tqStrdup(dir);
  c->nrel = prog->cat.rels.n;
  c->f = tqCalloc((size_t)(c->nrel ? c->nrel : 1), sizeof(CsvFile));
  TqBuf schema = {0};
  tqBufPuts(&schema, "relation,column,type\n");
  for (int i = 0; i < c->nrel; i++) {
    CsvFile *f = &c->f[i];
    const AlgRel *r = prog->cat.rels.v[i];
    char *path = tqMprintf("%s/%s.csv", dir, r->name);
    f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (f->fd < 0) {
      tqErrorAt(d, path, "cannot write: %s", strerror(errno));
      free(path);
      tqBufFree(&schema);
      snsCsvClose(c, NULL);
      return NULL;
    }
    free(path);
    f->buf = tqMalloc(CSV_BUF);
    for (int k = 0; k < r->nattr; k++) {
      csvText(c, f, r->attr[k].name);
      csvPut(c, f, ",", 1);
      tqBufPrintf(&schema, "%s,%s,%s\n", r->name, r->attr[k].name, sqlType(r->attr[k].type.kind));
    }
    csvPut(c, f, r->isEvent ? "valid_at\n" : "valid_from,valid_to\n", r->isEvent ? 9 : 20);
    tqBufPrintf(&schema, r->isEvent ? "%s,valid_at,BIGINT\n" : "%s,valid_from,BIGINT\n%s,valid_to,BIGINT\n", r->name,
                r->name);
  }
  char *path = tqMprintf("%s/schema.csv", dir);
  FILE *sf = fopen(path, "w");
  if (!sf || fwrite(schema.s, 1, schema.n, sf) != schema.n) c->err = errno ? errno : EIO;
  if (sf && fclose(sf)) c->err = errno;
  if (c->err) tqErrorAt(d, path, "cannot write: %s", strerror(c->err));
  free(path);
  tqBufFree(&schema);
  if (c->err) {
    snsCsvClose(c, NULL);
    return NULL;
  }
  return c;
}

int snsCsvRow(SnsCsv *c, int rel, const int64_t *vals, TqTime from, TqTime to) {
  const AlgRel *r = c->prog->cat.rels.v[rel - 1];
  CsvFile *f = &c->f[rel - 1];
  for (int k = 0; k < r->nattr; k++) {
    const AlgType *ty = &r->attr[k].type;
    switch (ty->kind) {
      case TY_INT: csvInt(c, f, vals[k]); break;
      case TY_FLOAT: {
        double x;
        char tmp[40];
        memcpy(&x, &vals[k], sizeof x);
        csvPut(c, f, tmp, strlen(tqFloatFormat(tmp, sizeof tmp, x)));
        break;
      }
      case TY_ENUM: csvText(c, f, vals[k] >= 0 && vals[k] < ty->en->n ? ty->en->names[vals[k]] : "?"); break;
      default: csvText(c, f, tqSymName((int32_t)vals[k])); break;
    }
    csvPut(c, f, ",", 1);
  }
  csvInt(c, f, from);
  if (!r->isEvent) {
    csvPut(c, f, ",", 1);
    if (to != TQ_OPEN && to < TQ_FOREVER) csvInt(c, f, to);
  }
  csvPut(c, f, "\n", 1);
  c->rows++;
  return c->err ? -1 : 0;
}

int snsCsvClose(SnsCsv *c, TqDiag *d) {
  if (!c) return 0;
  for (int i = 0; i < c->nrel; i++) {
    CsvFile *f = &c->f[i];
    if (f->fd < 0 || !f->buf) continue;
    csvFlush(c, f);
    if (close(f->fd) && !c->err) c->err = errno;
    free(f->buf);
  }
  int rc = c->err ? -1 : 0;
  if (rc && d) tqErrorAt(d, c->dir, "cannot write the CSV files: %s", strerror(c->err));
  free(c->f);
  free(c->dir);
  free(c);
  return rc;
}

/* The rows of a text recording, in its order (begins: the whole interval). */
static int traceRows(const SnsTrace *t, SnsCsv *c) {
  for (int64_t i = 0; i < t->npk; i++) {
    const SnsPacket *p = &t->pk[i];
    const AlgRel *r = c->prog->cat.rels.v[p->rel];
    int rc = 0;
    if (p->kind == PK_EVENT || p->kind == PK_SAMPLE) {
      rc = snsCsvRow(c, r->id, t->vals + p->vals, p->t, r->isEvent ? p->t : p->t + 1);
    } else if (p->kind == PK_BEGIN || p->kind == PK_WHOLE) {
      const SnsIv *iv = &t->iv[p->iv];
      rc = snsCsvRow(c, r->id, t->vals + iv->vals, iv->from, iv->to);
    }
    if (rc) return -1;
  }
  return 0;
}

int snsRecordingToCsv(const char *path, const CpProgram *prog, const char *dir, TqDiag *d) {
  SnsInput *in = snsInputOpen(path, d);
  if (!in) return -1;
  int bin = snsInputIsCollection(in);
  SnsTrace *t = bin ? NULL : snsTraceReadInput(in, prog, d);
  SnsCsv *c = !bin && !t ? NULL : snsCsvOpen(dir, prog, d);
  int rc = !c ? -1 : bin ? snsColfilRows(in, prog, c, d) : traceRows(t, c);
  if (c && snsCsvClose(c, d)) rc = -1;
  snsTraceFree(t);
  snsInputClose(in);
  return rc;
}
