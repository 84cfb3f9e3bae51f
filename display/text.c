/*
** text.c - the text consumer: results as tables, CSV or JSON lines.
**
** Sorted (a replay's default): rows are collected during the run
** (inserted, closed, deleted by id) and written at the end, each result in
** its own block, rows sorted by valid time, then end, then values, so the
** output does not depend on the order in which the network found the
** tuples.
**
** Streamed (a live run's default when its output is a terminal or a
** pipe, not a regular file; or the option stream): the rows the
** network decided at an instant are written after it (batch), sorted the
** same way within it, and the output is flushed, so a reader of a pipe
** sees each tuple as soon as it is decided.  An interval is written when
** it begins (no end yet: CSV an empty valid_to, JSON null, a table "now")
** and again when it ends, with its end; one that begins and ends within an
** instant is written once.  A result's block header (CSV "# Name" and the
** column names, a table's title) comes again whenever the output turns to
** another result.  Losses (docs/losses.md) come in the stream as they
** become known, after the batch's rows: a period of a result that is new,
** or has grown, is written again whole (CSV: a comment line "# incomplete
** from ..." in its result's block, whose header then comes again before
** its next rows; JSON lines: a record {"incomplete": {"result": ...}}; a
** table: "! NAME may be incomplete ..." lines), and a JSON row that
** overlaps a period known when it is written has "incomplete": true.
*/
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "display.h"

typedef struct Row {
  uint64_t id;
  TqTime from, to;
  int dead;
  int pending;        /* streamed: in the batch to write (ResRows.v) */
  int64_t vals[];
} Row;

typedef struct ResRows {
  Row **v;            /* sorted: every row; streamed: the rows of the batch */
  int n, cap;
  TqMap byId;         /* row id -> Row* (open rows) */
  TqMap byKey;        /* streamed: hash of (values, from) -> an open Row* */
  int64_t written;    /* streamed: rows written */
  RtLoss *told;       /* streamed: its periods of possible incompleteness as last written */
  int ntold;
} ResRows;

typedef struct Text {
  RtConsumer c;
  FILE *out;
  int format;
  DspTextOpts opt;
  RtNet *net;
  int nres;
  ResRows *res;
  int lastRes;        /* streamed: the result written last (-1: none) */
  int64_t lossSeen;   /* streamed: the network's lossesTold when the periods were last looked at */
} Text;

const char *dspValue(char *buf, size_t n, AlgType t, int64_t v) {
  switch (t.kind) {
    case TY_INT: snprintf(buf, n, "%lld", (long long)v); break;
    case TY_FLOAT: {
      double d;
      memcpy(&d, &v, sizeof d);
      tqFloatFormat(buf, n, d);
      break;
    }
    case TY_ENUM: snprintf(buf, n, "%s", v >= 0 && v < t.en->n ? t.en->names[v] : "?"); break;
    default: snprintf(buf, n, "%s", tqSymName((int32_t)v)); break;
  }
  return buf;
}

static int txBegin(void *self, RtNet *net) {
  Text *t = self;
  t->net = net;
  t->lastRes = -1;
  t->nres = net->nresult;
  t->res = tqCalloc((size_t)(t->nres ? t->nres : 1), sizeof(ResRows));
  return 0;
}

/* Streamed: the key of an interval row in byKey (values and start). */
static uint64_t rowKey(const RtResult *res, const Row *row) {
  return tqHashBytes(row->vals, sizeof(int64_t) * (size_t)res->nattr, (uint64_t)row->from) | 2;
}
static int sameKey(const RtResult *res, const Row *a, const Row *b) {
  return a->from == b->from && !memcmp(a->vals, b->vals, sizeof(int64_t) * (size_t)res->nattr);
}

static void rowsPush(ResRows *rr, Row *row) {
  if (rr->n == rr->cap) {
    rr->cap = rr->cap ? 2 * rr->cap : 64;
    rr->v = tqRealloc(rr->v, sizeof(Row *) * (size_t)rr->cap);
  }
  rr->v[rr->n++] = row;
  row->pending = 1;
}

static int txRow(void *self, RtResult *res, const RtRow *r) {
  Text *t = self;
  if (res->q->display) return 0; /* collected for a display only */
  ResRows *rr = &t->res[res->q->index];
  if (r->op == RT_ROW_INSERT) {
    Row *row = tqMalloc(sizeof(Row) + sizeof(int64_t) * (size_t)res->nattr);
    row->id = r->rowid;
    row->from = r->from;
    row->to = r->to;
    row->dead = 0;
    memcpy(row->vals, r->vals, sizeof(int64_t) * (size_t)res->nattr);
    rowsPush(rr, row);
    if (r->to == TQ_OPEN) tqMapPut(&rr->byId, r->rowid + 2, row);
    if (t->opt.stream && !res->isEvent) {
      uint64_t k = rowKey(res, row);
      Row *open = tqMapGet(&rr->byKey, k);
      if (r->to == TQ_OPEN) tqMapPut(&rr->byKey, k, row);
      /* a closed row with the values and start of an open one written
      ** before: that one is written again after it (it is still open) */
      else if (open && !open->pending && sameKey(res, open, row)) rowsPush(rr, open);
    }
    return 0;
  }
  Row *row = tqMapDel(&rr->byId, r->rowid + 2);
  if (!row) return 0;
  if (t->opt.stream && !res->isEvent) {
    uint64_t k = rowKey(res, row);
    if (tqMapGet(&rr->byKey, k) == row) tqMapDel(&rr->byKey, k);
  }
  if (r->op == RT_ROW_CLOSE) row->to = r->to;
  else row->dead = 1;
  /* streamed: an open row written already is written again with its end;
  ** one deleted (its end duplicates a closed row of its values and start,
  ** sink.c) is written with that end too, a duplicate of that row */
  if (t->opt.stream && !row->pending) {
    row->dead = 0;
    row->to = r->to;
    rowsPush(rr, row);
  }
  return 0;
}

static const RtResult *sortRes;
static int valCmp(AlgType t, int64_t a, int64_t b) {
  if (t.kind == TY_FLOAT) {
    double x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x < y ? -1 : x > y;
  }
  if (t.kind == TY_ENTITY || t.kind == TY_STRING) return strcmp(tqSymName((int32_t)a), tqSymName((int32_t)b));
  return a < b ? -1 : a > b;
}
static int rowCmp(const void *x, const void *y) {
  const Row *a = *(Row *const *)x, *b = *(Row *const *)y;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  if (a->to != b->to) return a->to < b->to ? -1 : 1;
  for (int i = 0; i < sortRes->nattr; i++) {
    int c = valCmp(sortRes->attr[i].type, a->vals[i], b->vals[i]);
    if (c) return c;
  }
  return 0;
}

static void csvField(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A JSON string: a recording's bytes that are not UTF-8 become U+FFFD
** (base: tqBufJsonStr). */
static void jsonStr(FILE *f, const char *s) {
  TqBuf b = {0};
  tqBufJsonStr(&b, s, 0);
  fputs(b.s, f);
  tqBufFree(&b);
}

/* A time as a table shows it (DspTextOpts.time); open ends as "now". */
static const char *timeText(const Text *t, char *buf, size_t n, TqTime tm) {
  if (tm == TQ_OPEN || tm >= TQ_FOREVER) return tqTimeFormat(buf, n, TQ_OPEN);
  if (t->opt.time == DSP_TIME_RELATIVE && tm > TQ_BEGINNING) {
    TqTime o = t->net && t->net->started ? t->net->origin : 0;
    buf[0] = '+';
    tqTimeFormat(buf + 1, n - 1, tm - o);
    if (buf[1] == '-') memmove(buf, buf + 1, strlen(buf + 1) + 1);
    return buf;
  }
  if (tm >= TQ_WALLCLOCK) return tqTimeIso(buf, n, tm, t->opt.time == DSP_TIME_UTC ? 1 : 0, 0);
  return tqTimeFormat(buf, n, tm);
}

static void csvTimes(FILE *f, const RtResult *res, const Row *row) {
  if (res->isEvent) fprintf(f, "%lld\n", (long long)row->from);
  else if (row->to == TQ_OPEN || row->to >= TQ_FOREVER) fprintf(f, "%lld,\n", (long long)row->from);
  else fprintf(f, "%lld,%lld\n", (long long)row->from, (long long)row->to);
}

/* The periods during which the result being written may be incomplete
** (docs/losses.md): its rows there are marked, and the periods listed. */
static RtLoss *wLoss;
static int wnLoss;

static void lossLine(FILE *f, const RtNet *net, const RtLoss *l, const char *pre) {
  char a[64], b[64], c[64];
  const char *rel = rtLossRelation(net, l), *ent = rtLossEntity(l);
  fprintf(f, "%sincomplete from %s to %s: %s of %s lost%s%s\n", pre, tqTimeFormat(a, sizeof a, l->from),
          l->to >= TQ_FOREVER ? "the end" : tqTimeFormat(b, sizeof b, l->to), rtLossCount(c, sizeof c, l->count, l->unknown),
          rel ? rel : "a relation not known", ent ? " on " : "", ent ? ent : "");
}

static void writeCsv(Text *t, const RtResult *res, Row **v, int n) {
  FILE *f = t->out;
  fprintf(f, "# %s\n", res->name);
  for (int i = 0; i < res->nattr; i++) {
    csvField(f, res->attr[i].name);
    fputc(',', f);
  }
  fputs(res->isEvent ? "valid_at\n" : "valid_from,valid_to\n", f);
  char buf[256];
  for (int r = 0; r < n; r++) {
    for (int i = 0; i < res->nattr; i++) {
      csvField(f, dspValue(buf, sizeof buf, res->attr[i].type, v[r]->vals[i]));
      fputc(',', f);
    }
    csvTimes(f, res, v[r]);
  }
}

/* ,"NAME":ns (null when open); a wall-clock time also as "NAME_iso": the
** UTC date with every ns digit, exact where a JavaScript number is not
** (beyond 2^53 ns) */
static void jsonTime(FILE *f, const char *name, TqTime tm) {
  if (tm == TQ_OPEN) {
    fprintf(f, ",\"%s\":null", name);
    return;
  }
  fprintf(f, ",\"%s\":%lld", name, (long long)tm);
  if (tm >= TQ_WALLCLOCK && tm < TQ_FOREVER) {
    char buf[64];
    fprintf(f, ",\"%s_iso\":\"%s\"", name, tqTimeIso(buf, sizeof buf, tm, 1, 1));
  }
}

static void writeCsvLosses(Text *t, const RtNet *net) {
  for (int i = 0; i < wnLoss; i++) lossLine(t->out, net, &wLoss[i], "# ");
}

static void writeJsonl(Text *t, const RtResult *res, Row **v, int n) {
  FILE *f = t->out;
  char buf[256];
  for (int r = 0; r < n; r++) {
    fputs("{\"relation\":", f);
    jsonStr(f, res->name);
    for (int i = 0; i < res->nattr; i++) {
      fputc(',', f);
      jsonStr(f, res->attr[i].name);
      fputc(':', f);
      dspValue(buf, sizeof buf, res->attr[i].type, v[r]->vals[i]);
      if (res->attr[i].type.kind == TY_FLOAT && (buf[0] == 'n' || buf[strlen(buf) - 1] == 'f')) fputs("null", f); /* JSON has no nan, inf */
      else if (res->attr[i].type.kind == TY_INT || res->attr[i].type.kind == TY_FLOAT) fputs(buf, f);
      else jsonStr(f, buf);
    }
    if (wnLoss && rtLossCovers(wLoss, wnLoss, v[r]->from, res->isEvent ? v[r]->from : v[r]->to)) fputs(",\"incomplete\":true", f);
    if (res->isEvent) jsonTime(f, "valid_at", v[r]->from);
    else {
      jsonTime(f, "valid_from", v[r]->from);
      jsonTime(f, "valid_to", v[r]->to == TQ_OPEN || v[r]->to >= TQ_FOREVER ? TQ_OPEN : v[r]->to);
    }
    fputs("}\n", f);
  }
}

static void writeTable(Text *t, const RtNet *net, const RtResult *res, Row **v, int n) {
  FILE *f = t->out;
  int nt = res->nattr + (res->isEvent ? 1 : 2), nc = nt + (wnLoss > 0);
  int *w = tqCalloc((size_t)nc, sizeof(int));
  char ***cell = tqCalloc((size_t)n + 1, sizeof(char **));
  char buf[256];
  for (int r = 0; r <= n; r++) {
    cell[r] = tqCalloc((size_t)nc, sizeof(char *));
    for (int i = 0; i < nc; i++) {
      const char *s;
      if (i == nt) {
        s = r == 0 ? "!" : rtLossCovers(wLoss, wnLoss, v[r - 1]->from, res->isEvent ? v[r - 1]->from : v[r - 1]->to) ? "!" : "";
      } else if (r == 0) {
        s = i < res->nattr ? res->attr[i].name : res->isEvent ? "at" : i == res->nattr ? "from" : "to";
      } else if (i < res->nattr) {
        s = dspValue(buf, sizeof buf, res->attr[i].type, v[r - 1]->vals[i]);
      } else {
        TqTime tm = i == res->nattr ? v[r - 1]->from : v[r - 1]->to;
        s = timeText(t, buf, sizeof buf, tm);
      }
      cell[r][i] = tqStrdup(s);
      int len = (int)strlen(s);
      if (len > w[i]) w[i] = len;
    }
  }
  fprintf(f, "%s (%s relation)\n", res->name, res->isEvent ? "event" : "interval");
  for (int r = 0; r <= n; r++) {
    for (int i = 0; i < nc; i++) fprintf(f, "%s%-*s", i ? " | " : "", i == nc - 1 ? 0 : w[i], cell[r][i]);
    fputc('\n', f);
    if (r == 0) {
      for (int i = 0; i < nc; i++) {
        fputs(i ? "-+-" : "", f);
        for (int k = 0; k < w[i]; k++) fputc('-', f);
      }
      fputc('\n', f);
    }
  }
  fprintf(f, "(%d row%s)\n", n, n == 1 ? "" : "s");
  /* (streamed, the periods come as they become known: streamLosses) */
  if (wnLoss && !t->opt.stream) fputs("! may be incomplete (docs/losses.md):\n", f);
  for (int i = 0; i < wnLoss && !t->opt.stream; i++) lossLine(f, net, &wLoss[i], "  ");
  fputc('\n', f);
  for (int r = 0; r <= n; r++) {
    for (int i = 0; i < nc; i++) free(cell[r][i]);
    free(cell[r]);
  }
  free(cell);
  free(w);
}

static void writeRows(Text *t, const RtNet *net, const RtResult *res, Row **v, int n) {
  if (t->format == DSP_CSV) writeCsv(t, res, v, n);
  else if (t->format == DSP_JSONL) writeJsonl(t, res, v, n);
  else writeTable(t, net, res, v, n);
}

/* Is period a the same as b (nothing new to tell)? */
static int sameLoss(const RtLoss *a, const RtLoss *b) {
  return a->rel == b->rel && a->entity == b->entity && a->from == b->from && a->to == b->to && a->count == b->count &&
         a->unknown == b->unknown;
}

/* Streamed: the periods of result q that are new or grew since they were
** last written, written now (see the file's comment).  Returns 1 when it
** wrote some. */
static int streamLosses(Text *t, int q, RtLoss *v, int n) {
  ResRows *rr = &t->res[q];
  const RtResult *res = &t->net->result[q];
  int any = 0;
  for (int i = 0; i < n; i++) {
    int known = 0;
    for (int k = 0; k < rr->ntold && !known; k++) known = sameLoss(&v[i], &rr->told[k]);
    if (known) continue;
    FILE *f = t->out;
    if (t->format == DSP_JSONL) {
      const char *rel = rtLossRelation(t->net, &v[i]), *ent = rtLossEntity(&v[i]);
      fputs("{\"incomplete\":{\"result\":", f);
      jsonStr(f, res->name);
      fputs(",\"relation\":", f);
      if (rel) jsonStr(f, rel);
      else fputs("null", f);
      fputs(",\"entity\":", f);
      if (ent) jsonStr(f, ent);
      else fputs("null", f);
      jsonTime(f, "from", v[i].from);
      jsonTime(f, "to", v[i].to >= TQ_FOREVER ? TQ_OPEN : v[i].to);
      if (v[i].unknown) fputs(",\"lost\":null}}\n", f); /* (how many is not known) */
      else fprintf(f, ",\"lost\":%lld}}\n", (long long)v[i].count);
    } else if (t->format == DSP_CSV) {
      if (!any && t->lastRes != q) writeCsv(t, res, NULL, 0); /* (its block) */
      lossLine(f, t->net, &v[i], "# ");
    } else {
      fprintf(f, "! %s may be ", res->name);
      lossLine(f, t->net, &v[i], "");
    }
    any = 1;
  }
  if (any) {
    free(rr->told);
    rr->told = n ? tqMalloc(sizeof(RtLoss) * (size_t)n) : NULL;
    if (n) memcpy(rr->told, v, sizeof(RtLoss) * (size_t)n);
    rr->ntold = n;
    if (t->format == DSP_CSV) t->lastRes = -1; /* its next rows: the block's header again */
  }
  return any;
}

/* Streamed: writes the rows of the batch, result by result, and flushes.
** A row written closed (or dead) is freed; an open one stays in byId. */
static int txBatch(void *self, TqTime now) {
  Text *t = self;
  int any = 0;
  /* (the periods are looked at again only when something was lost since) */
  int lossNews = t->net->lossesTold != t->lossSeen;
  t->lossSeen = t->net->lossesTold;
  for (int q = 0; q < t->nres; q++) {
    ResRows *rr = &t->res[q];
    const RtResult *res = &t->net->result[q];
    if (res->q->display || (!rr->n && !lossNews)) continue;
    RtLoss *lv = NULL;
    int nl = t->net->nloss ? rtResultLosses(t->net, res, &lv) : 0;
    wLoss = lv; /* (JSON rows and table rows are marked by what is known now) */
    wnLoss = nl;
    int n = 0;
    for (int i = 0; i < rr->n; i++) {
      Row *row = rr->v[i];
      row->pending = 0;
      if (row->dead) free(row);
      else rr->v[n++] = row;
    }
    sortRes = res;
    if (n > 1) qsort(rr->v, (size_t)n, sizeof(Row *), rowCmp);
    if (n) {
      if (t->format == DSP_JSONL || (t->format == DSP_CSV && t->lastRes == q)) {
        /* (no header: JSON lines, or the block goes on) */
        if (t->format == DSP_CSV) {
          char buf[256];
          for (int r = 0; r < n; r++) {
            for (int i = 0; i < res->nattr; i++) {
              csvField(t->out, dspValue(buf, sizeof buf, res->attr[i].type, rr->v[r]->vals[i]));
              fputc(',', t->out);
            }
            csvTimes(t->out, res, rr->v[r]);
          }
        } else {
          writeJsonl(t, res, rr->v, n);
        }
      } else {
        writeRows(t, t->net, res, rr->v, n);
      }
      t->lastRes = q;
      rr->written += n;
      any = 1;
    }
    for (int i = 0; i < n; i++)
      if (rr->v[i]->to != TQ_OPEN) free(rr->v[i]);
    rr->n = 0;
    if (streamLosses(t, q, lv, nl)) any = 1;
    free(lv);
    wLoss = NULL;
    wnLoss = 0;
  }
  if (any && fflush(t->out)) return -1;
  return 0;
}

static int txEnd(void *self, RtNet *net, int ok) {
  Text *t = self;
  if (t->opt.stream) {
    if (ok) {
      t->lossSeen = -1; /* (the periods once more, as they are at the end) */
      txBatch(t, net->now);
    }
    for (int q = 0; q < t->nres; q++) {
      ResRows *rr = &t->res[q];
      /* a result that had no row says so, as when sorted (its header; a
      ** table's "(0 rows)") */
      if (ok && !rr->written && !net->result[q].q->display && t->format != DSP_JSONL)
        writeRows(t, net, &net->result[q], NULL, 0);
      for (int i = 0; i < rr->n; i++) /* (only when !ok) */
        if (rr->v[i]->to != TQ_OPEN || rr->v[i]->dead) free(rr->v[i]);
      free(rr->v);
      for (uint32_t i = 0; i < rr->byId.cap; i++)
        if (rr->byId.slot[i].key > 1) free(rr->byId.slot[i].val);
      tqMapFree(&rr->byId);
      tqMapFree(&rr->byKey);
      free(rr->told);
    }
    free(t->res);
    t->res = NULL;
    fflush(t->out);
    return 0;
  }
  for (int q = 0; q < t->nres; q++) {
    ResRows *rr = &t->res[q];
    const RtResult *res = &net->result[q];
    int n = 0;
    for (int i = 0; i < rr->n; i++) {
      if (rr->v[i]->dead) free(rr->v[i]);
      else rr->v[n++] = rr->v[i];
    }
    sortRes = res;
    if (n > 1) qsort(rr->v, (size_t)n, sizeof(Row *), rowCmp);
    if (ok && !res->q->display) {
      wnLoss = rtResultLosses(net, res, &wLoss);
      if (t->format == DSP_CSV) {
        writeCsv(t, res, rr->v, n);
        writeCsvLosses(t, net);
      } else if (t->format == DSP_JSONL) {
        writeJsonl(t, res, rr->v, n);
      } else {
        writeTable(t, net, res, rr->v, n);
      }
      free(wLoss);
      wLoss = NULL;
      wnLoss = 0;
    }
    for (int i = 0; i < n; i++) free(rr->v[i]);
    free(rr->v);
    tqMapFree(&rr->byId);
  }
  free(t->res);
  t->res = NULL;
  fflush(t->out);
  return 0;
}

RtConsumer *dspTextConsumer(FILE *out, int format) {
  DspTextOpts o = {0, DSP_TIME_LOCAL};
  return dspTextConsumerWith(out, format, &o);
}

RtConsumer *dspTextConsumerWith(FILE *out, int format, const DspTextOpts *o) {
  Text *t = tqCalloc(1, sizeof *t);
  t->out = out;
  t->format = format;
  t->opt = *o;
  t->c.name = "text";
  t->c.self = t;
  t->c.begin = txBegin;
  t->c.row = txRow;
  t->c.batch = o->stream ? txBatch : NULL;
  t->c.end = txEnd;
  return &t->c;
}

void dspTextConsumerFree(RtConsumer *c) {
  if (!c) return;
  free(c->self);
}

/* ================================================================ the text PM */

#include "../runtime/engine.h"

/* CONSUMER of results: args FORMAT[,OPTION...][:FILE]: FORMAT table
** (default), csv or jsonl; OPTION stream (each instant's rows as they are
** decided: a live run's default unless it writes to a regular file),
** sorted (all at the end, sorted: a replay's default), utc, relative (times in tables); FILE instead of
** standard output. */
typedef struct TextPm {
  RtConsumer *c;
  FILE *out;
  int own;
} TextPm;

/* Parses the args into format, options (stream: -1 when not given) and
** path (NULL: standard output).  0, or -1 with a message. */
static int textArgs(const char *a, int *fmt, DspTextOpts *o, const char **path, char *msg, size_t nmsg) {
  if (!a) a = "table";
  *path = strchr(a, ':');
  if (*path) (*path)++;
  size_t end = *path ? (size_t)(*path - 1 - a) : strlen(a);
  o->stream = -1;
  o->time = DSP_TIME_LOCAL;
  *fmt = 0;
  for (size_t i = 0; i < end;) {
    size_t k = i;
    while (k < end && a[k] != ',') k++;
    size_t len = k - i;
#define IS(w) (len == strlen(w) && !strncmp(a + i, w, len))
    if (i == 0 && IS("table")) *fmt = DSP_TABLE;
    else if (i == 0 && IS("csv")) *fmt = DSP_CSV;
    else if (i == 0 && IS("jsonl")) *fmt = DSP_JSONL;
    else if (i > 0 && IS("stream")) o->stream = 1;
    else if (i > 0 && IS("sorted")) o->stream = 0;
    else if (i > 0 && IS("utc")) o->time = DSP_TIME_UTC;
    else if (i > 0 && IS("relative")) o->time = DSP_TIME_RELATIVE;
    else {
      snprintf(msg, nmsg, i ? "unknown text option '%.*s' (stream, sorted, utc, relative)"
                            : "unknown text format '%.*s' (table, csv or jsonl)", (int)len, a + i);
      return -1;
    }
#undef IS
    i = k + 1;
  }
  return 0;
}

static tq_pm_status textInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = TQ_PM_SYNC_SNAPSHOT_END;
  int fmt;
  DspTextOpts o;
  const char *path;
  if (textArgs(p->args, &fmt, &o, &path, p->message, sizeof p->message)) return TQ_PM_ERROR;
  return TQ_PM_OK;
}

static tq_pm_status textCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  TextPm *t = p->data;
  switch (what) {
    case TQ_PM_START: {
      int fmt;
      DspTextOpts o;
      const char *path;
      if (textArgs(p->args, &fmt, &o, &path, p->message, sizeof p->message)) return TQ_PM_ERROR;
      t = tqCalloc(1, sizeof *t);
      p->data = t;
      t->out = stdout;
      if (path && path[0] == '&') { /* &FD: a descriptor of the caller's, duplicated */
        int fd = atoi(path + 1), d = fd > 2 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
        t->out = d >= 0 ? fdopen(d, "w") : NULL;
        if (!t->out) {
          if (d >= 0) close(d);
          snprintf(p->message, sizeof p->message, "cannot write to descriptor %s", path + 1);
          return TQ_PM_ERROR;
        }
        t->own = 1;
      } else if (path) {
        t->out = fopen(path, "w");
        if (!t->out) {
          snprintf(p->message, sizeof p->message, "cannot write %s", path);
          t->out = NULL;
          return TQ_PM_ERROR;
        }
        t->own = 1;
      }
      /* by default a live run streams when its output is read as it goes (a
      ** terminal, a pipe); into a regular file, read after the run, it
      ** writes sorted at the end as a replay does */
      if (o.stream < 0) {
        struct stat sb;
        o.stream = g->operation == TQ_OP_COLLECT && !(fstat(fileno(t->out), &sb) == 0 && S_ISREG(sb.st_mode));
      }
      t->c = dspTextConsumerWith(t->out, fmt, &o);
      t->c->begin(t->c->self, enNet(g));
      enAttachConsumer(g, p, t->c);
      return TQ_PM_OK;
    }
    case TQ_PM_END:
      if (t) {
        if (t->c) {
          t->c->end(t->c->self, enNet(g), !p->disabled);
          dspTextConsumerFree(t->c);
        }
        if (t->own && t->out) fclose(t->out);
        free(t);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

const tq_pm dspTextPm = {
    .version = TQ_PM_VERSION,
    .name = "text",
    .description = "CONSUMER: results as tables, CSV or JSON lines (args: table|csv|jsonl[,stream|sorted][,utc|relative][:FILE])",
    .init = textInit,
    .call = textCall,
};
