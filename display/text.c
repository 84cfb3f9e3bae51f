/*
** text.c - the text consumer: results as tables, CSV or JSON lines.
**
** Rows are collected during the run (inserted, closed, deleted by id) and
** written at the end, each result in its own block, rows sorted by valid
** time, then end, then values, so the output does not depend on the order
** in which the network found the tuples.
*/
#include <stdlib.h>
#include <string.h>

#include "display.h"

typedef struct Row {
  uint64_t id;
  TqTime from, to;
  int dead;
  int64_t vals[];
} Row;

typedef struct ResRows {
  Row **v;
  int n, cap;
  TqMap byId; /* row id -> Row* */
} ResRows;

typedef struct Text {
  RtConsumer c;
  FILE *out;
  int format;
  int nres;
  ResRows *res;
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
  t->nres = net->nresult;
  t->res = tqCalloc((size_t)(t->nres ? t->nres : 1), sizeof(ResRows));
  return 0;
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
    if (rr->n == rr->cap) {
      rr->cap = rr->cap ? 2 * rr->cap : 64;
      rr->v = tqRealloc(rr->v, sizeof(Row *) * (size_t)rr->cap);
    }
    rr->v[rr->n++] = row;
    if (r->to == TQ_OPEN) tqMapPut(&rr->byId, r->rowid + 2, row);
    return 0;
  }
  Row *row = tqMapDel(&rr->byId, r->rowid + 2);
  if (!row) return 0;
  if (r->op == RT_ROW_CLOSE) row->to = r->to;
  else row->dead = 1;
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

static void jsonStr(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 32) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* The periods during which the result being written may be incomplete
** (docs/losses.md): its rows there are marked, and the periods listed. */
static RtLoss *wLoss;
static int wnLoss;

static void lossLine(FILE *f, const RtNet *net, const RtLoss *l, const char *pre) {
  char a[64], b[64];
  const char *rel = rtLossRelation(net, l), *ent = rtLossEntity(l);
  fprintf(f, "%sincomplete from %s to %s: %lld packet%s of %s lost%s%s\n", pre, tqTimeFormat(a, sizeof a, l->from),
          l->to >= TQ_FOREVER ? "the end" : tqTimeFormat(b, sizeof b, l->to), (long long)l->count, l->count == 1 ? "" : "s",
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
    if (res->isEvent) fprintf(f, "%lld\n", (long long)v[r]->from);
    else if (v[r]->to == TQ_OPEN || v[r]->to >= TQ_FOREVER) fprintf(f, "%lld,\n", (long long)v[r]->from);
    else fprintf(f, "%lld,%lld\n", (long long)v[r]->from, (long long)v[r]->to);
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
    if (res->isEvent) fprintf(f, ",\"valid_at\":%lld}\n", (long long)v[r]->from);
    else if (v[r]->to == TQ_OPEN || v[r]->to >= TQ_FOREVER) fprintf(f, ",\"valid_from\":%lld,\"valid_to\":null}\n", (long long)v[r]->from);
    else fprintf(f, ",\"valid_from\":%lld,\"valid_to\":%lld}\n", (long long)v[r]->from, (long long)v[r]->to);
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
        s = tqTimeFormat(buf, sizeof buf, tm >= TQ_FOREVER ? TQ_OPEN : tm);
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
  if (wnLoss) fputs("! may be incomplete (docs/losses.md):\n", f);
  for (int i = 0; i < wnLoss; i++) lossLine(f, net, &wLoss[i], "  ");
  fputc('\n', f);
  for (int r = 0; r <= n; r++) {
    for (int i = 0; i < nc; i++) free(cell[r][i]);
    free(cell[r]);
  }
  free(cell);
  free(w);
}

static int txEnd(void *self, RtNet *net, int ok) {
  Text *t = self;
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
  Text *t = tqCalloc(1, sizeof *t);
  t->out = out;
  t->format = format;
  t->c.name = "text";
  t->c.self = t;
  t->c.begin = txBegin;
  t->c.row = txRow;
  t->c.end = txEnd;
  return &t->c;
}

void dspTextConsumerFree(RtConsumer *c) {
  if (!c) return;
  free(c->self);
}

/* ================================================================ the text PM */

#include "../runtime/engine.h"

/* CONSUMER of results: args "table" (default), "csv" or "jsonl", optionally
** followed by ":PATH" to write to a file instead of standard output. */
typedef struct TextPm {
  RtConsumer *c;
  FILE *out;
  int own;
} TextPm;

static tq_pm_status textInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = TQ_PM_SYNC_SNAPSHOT_END;
  const char *a = p->args ? p->args : "table";
  if (strncmp(a, "table", 5) && strncmp(a, "csv", 3) && strncmp(a, "jsonl", 5)) {
    snprintf(p->message, sizeof p->message, "unknown text format '%s' (table, csv or jsonl)", a);
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status textCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  TextPm *t = p->data;
  switch (what) {
    case TQ_PM_START: {
      const char *a = p->args ? p->args : "table";
      int fmt = !strncmp(a, "csv", 3) ? DSP_CSV : !strncmp(a, "jsonl", 5) ? DSP_JSONL : DSP_TABLE;
      const char *path = strchr(a, ':');
      t = tqCalloc(1, sizeof *t);
      p->data = t;
      t->out = stdout;
      if (path) {
        t->out = fopen(path + 1, "w");
        if (!t->out) {
          snprintf(p->message, sizeof p->message, "cannot write %s", path + 1);
          t->out = NULL;
          return TQ_PM_ERROR;
        }
        t->own = 1;
      }
      t->c = dspTextConsumer(t->out, fmt);
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
    .description = "CONSUMER: results as tables, CSV or JSON lines (args: table|csv|jsonl[:FILE])",
    .init = textInit,
    .call = textCall,
};
