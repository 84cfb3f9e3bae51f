/*
** out.c - outputs of the display model that write files: the list of drawn
** objects per step (the golden tests' format), the JSON of a step (shared
** with the live server) and the self-contained HTML page.
**
** List format, one block per step:
**   @ 2:00:05
**   + SendMessage[P1,M3] arrow x=...  (added: every property)
**   ~ clock clock label=2:00:05       (changed: every property after it)
**   - Process[P2]                     (removed)
**   | Process[P1] 2:00:00 2:15:37 Running   (timeline bars, when they end)
** Numbers are rounded to one decimal; objects in creation order.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dspInt.h"

const char *dspColourText(uint32_t c, char buf[8]) {
  if (c == DSP_NOCOLOUR) snprintf(buf, 8, "none");
  else snprintf(buf, 8, "#%06x", c & 0xffffff);
  return buf;
}

static const char *kindText(int k) {
  static const char *n[] = {"?", "icon", "arrow", "segment", "flash", "clock", "canvas"};
  return k > 0 && k < (int)TQ_ARRAY_SIZE(n) ? n[k] : "?";
}
static const char *iconText(int i) {
  static const char *n[] = {"", "point", "line", "circle", "rectangle", "oval", "polygon", "text"};
  return i > 0 && i < (int)TQ_ARRAY_SIZE(n) ? n[i] : "?";
}

static void num(TqBuf *b, const char *k, double v) {
  double r = round(v * 10) / 10;
  if (r == 0) r = 0; /* no -0 */
  if (r == floor(r)) tqBufPrintf(b, " %s=%.0f", k, r);
  else tqBufPrintf(b, " %s=%.1f", k, r);
}

void dspPropsText(const DspModel *m, const DObj *o, const DProps *p, TqBuf *b) {
  char c[8];
  if (p->kind == OK_ICON) {
    for (int i = 0; i < 4 && p->shape[i]; i++) tqBufPrintf(b, "%s%s", i ? "+" : "", iconText(p->shape[i]));
    if (p->sides) tqBufPrintf(b, "/%d", p->sides);
  } else {
    tqBufPuts(b, kindText(p->kind));
  }
  if (p->ghost) tqBufPuts(b, " ghost");
  if (p->kind == OK_ARROW || p->kind == OK_SEGMENT) {
    num(b, "x1", p->x);
    num(b, "y1", p->y);
    num(b, "x2", p->x2);
    num(b, "y2", p->y2);
  } else if (p->kind == OK_CANVAS) {
    num(b, "w", p->w);
    num(b, "h", p->h);
  } else {
    num(b, "x", p->x);
    num(b, "y", p->y);
    num(b, "w", p->w);
    num(b, "h", p->h);
  }
  if (p->rot != 0) num(b, "rot", p->rot);
  if (p->fill != DSP_NOCOLOUR && p->kind != OK_CANVAS) tqBufPrintf(b, " fill=%s", dspColourText(p->fill, c));
  if (p->stroke != DSP_NOCOLOUR && p->kind != OK_CANVAS) tqBufPrintf(b, " stroke=%s", dspColourText(p->stroke, c));
  if (p->opacity < 0.995) tqBufPrintf(b, " opacity=%.2f", p->opacity);
  char nm[600];
  if (p->in) tqBufPrintf(b, " in=%s", dspObjName(dspModelObj(m, p->in - 1), nm, sizeof nm));
  if (p->target) tqBufPrintf(b, " target=%s", dspObjName(dspModelObj(m, p->target - 1), nm, sizeof nm));
  if (p->kind == OK_CLOCK) tqBufPrintf(b, " label=%s", tqTimeFormat(nm, sizeof nm, p->at));
  else if (p->label) tqBufPrintf(b, " label=%s%s", tqSymName(p->label), p->labelPos ? " label@topright" : "");
}

const char *dspObjName(const DObj *o, char *buf, size_t n) {
  if (o->cur.ghost) snprintf(buf, n, "%s~%d", tqSymName(o->name), o->ghostStep);
  else snprintf(buf, n, "%s", tqSymName(o->name));
  return buf;
}

/* ================================================================ the list output */

typedef struct ListOut {
  DspOut o;
  FILE *f;
  int own;
  TqVec bars; /* copies of every bar (the model frees closed ones), printed at the end in id order */
  TqMap byId; /* bar id + 2 -> its copy */
} ListOut;

static void listStep(void *self, DspModel *m, const DspStep *st) {
  ListOut *l = self;
  char buf[64];
  TqBuf b = {0};
  tqBufPrintf(&b, "@ %s\n", tqTimeFormat(buf, sizeof buf, st->t));
  for (int i = 0; i < st->nch; i++) {
    const DObj *o = st->ch[i].o;
    char nm[600];
    tqBufPrintf(&b, "%c %s", st->ch[i].op == CH_ADD ? '+' : st->ch[i].op == CH_CHANGE ? '~' : '-', dspObjName(o, nm, sizeof nm));
    if (st->ch[i].op != CH_REMOVE) {
      tqBufPuts(&b, " ");
      dspPropsText(m, o, &o->cur, &b);
    }
    tqBufPuts(&b, "\n");
  }
  fputs(b.s, l->f);
  tqBufFree(&b);
}

static int barCmp(const void *a, const void *b) {
  const DBar *x = *(DBar *const *)a, *y = *(DBar *const *)b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int listEnd(void *self, DspModel *m) {
  ListOut *l = self;
  char f[64], t[64];
  fputs("timeline\n", l->f);
  /* every bar, as the steps told them */
  TqVec v = {0};
  for (int i = 0; i < l->bars.n; i++) tqVecPush(&v, l->bars.v[i]);
  if (v.n > 1) qsort(v.v, (size_t)v.n, sizeof(void *), barCmp);
  for (int i = 0; i < v.n; i++) {
    DBar *b = v.v[i];
    fprintf(l->f, "| %s %s %s %s%s%s\n", tqSymName(dspModelBand(m, b->band)->name), tqSymName(b->row),
            tqTimeFormat(f, sizeof f, b->from), b->to == TQ_OPEN ? "now" : tqTimeFormat(t, sizeof t, b->to),
            b->text ? " " : "", b->text ? tqSymName(b->text) : "");
  }
  tqVecFree(&v);
  for (int i = 0; i < l->bars.n; i++) free(l->bars.v[i]);
  tqVecFree(&l->bars);
  tqMapFree(&l->byId);
  int rc = fflush(l->f) ? -1 : 0;
  if (l->own && fclose(l->f)) rc = -1;
  if (rc) fprintf(stderr, "tqmon: display: cannot write the object list\n");
  free(l);
  return rc;
}

static void listBars(void *self, DspModel *m, const DspStep *st) {
  ListOut *l = self;
  for (int i = 0; i < st->nopen; i++) {
    DBar *b = tqMalloc(sizeof *b);
    *b = *st->open[i];
    tqVecPush(&l->bars, b);
    tqMapPut(&l->byId, (uint64_t)b->id + 2, b);
  }
  for (int i = 0; i < st->nclose; i++) {
    DBar *b = tqMapGet(&l->byId, (uint64_t)st->close[i]->id + 2);
    if (b) b->to = st->close[i]->to;
  }
  listStep(self, m, st);
}

DspOut *dspListOut(FILE *f, int own) {
  ListOut *l = tqCalloc(1, sizeof *l);
  l->f = f;
  l->own = own;
  l->o.self = l;
  l->o.step = listBars;
  l->o.end = listEnd;
  return &l->o;
}

/* ================================================================ JSON */

void dspJsonStr(TqBuf *b, const char *s) { tqBufJsonStr(b, s, 1); /* safe inside <script> */ }

static void jnum(TqBuf *b, const char *k, double v) {
  double r = round(v * 10) / 10;
  if (r == 0) r = 0;
  if (r == floor(r)) tqBufPrintf(b, ",\"%s\":%.0f", k, r);
  else tqBufPrintf(b, ",\"%s\":%.1f", k, r);
}

/* times as numbers of ns (exact below 2^53 ns, 104 days) */
static void jtime(TqBuf *b, TqTime t) {
  if (t == TQ_OPEN || t >= TQ_FOREVER) tqBufPuts(b, "null");
  else tqBufPrintf(b, "%lld", (long long)t);
}

static void propsJson(const DspModel *m, const DObj *o, TqBuf *b) {
  const DProps *p = &o->cur;
  char c[8];
  tqBufPrintf(b, "{\"k\":\"%s\"", kindText(p->kind));
  if (p->kind == OK_ICON) {
    tqBufPuts(b, ",\"s\":[");
    for (int i = 0; i < 4 && p->shape[i]; i++) tqBufPrintf(b, "%s\"%s\"", i ? "," : "", iconText(p->shape[i]));
    tqBufPuts(b, "]");
    if (p->sides) tqBufPrintf(b, ",\"n\":%d", p->sides);
  }
  jnum(b, "x", p->x);
  jnum(b, "y", p->y);
  if (p->kind == OK_ARROW || p->kind == OK_SEGMENT) {
    jnum(b, "x2", p->x2);
    jnum(b, "y2", p->y2);
  } else {
    jnum(b, "w", p->w);
    jnum(b, "h", p->h);
  }
  if (p->rot != 0) jnum(b, "r", p->rot);
  if (p->opacity < 0.995) tqBufPrintf(b, ",\"o\":%.2f", p->opacity);
  if (p->fill != DSP_NOCOLOUR) tqBufPrintf(b, ",\"f\":\"%s\"", dspColourText(p->fill, c));
  if (p->stroke != DSP_NOCOLOUR) tqBufPrintf(b, ",\"st\":\"%s\"", dspColourText(p->stroke, c));
  if (p->kind == OK_CLOCK) {
    char t[64];
    tqBufPuts(b, ",\"l\":");
    dspJsonStr(b, tqTimeFormat(t, sizeof t, p->at));
  } else if (p->label) {
    tqBufPuts(b, ",\"l\":");
    dspJsonStr(b, tqSymName(p->label));
    if (p->labelPos) tqBufPuts(b, ",\"lp\":1");
  }
  if (p->in) tqBufPrintf(b, ",\"in\":%d", p->in - 1);
  if (p->target) tqBufPrintf(b, ",\"tg\":%d", p->target - 1);
  if (p->ghost) tqBufPuts(b, ",\"g\":1");
  tqBufPuts(b, "}");
}

/* [id, band, row, from, to, colour, text] */
static void barJson(const DBar *r, TqBuf *b) {
  char c[8];
  tqBufPrintf(b, "[%lld,%d,", (long long)r->id, r->band);
  dspJsonStr(b, tqSymName(r->row));
  tqBufPuts(b, ",");
  jtime(b, r->from);
  tqBufPuts(b, ",");
  jtime(b, r->to);
  tqBufPrintf(b, ",\"%s\",", dspColourText(r->colour, c));
  dspJsonStr(b, r->text ? tqSymName(r->text) : "");
  tqBufPuts(b, "]");
}

void dspStepJson(const DspModel *m, const DspStep *st, TqBuf *b) {
  tqBufPrintf(b, "{\"i\":%lld,\"t\":", (long long)st->seq);
  jtime(b, st->t);
  tqBufPuts(b, ",\"d\":[");
  for (int i = 0; i < st->nch; i++) {
    const DObj *o = st->ch[i].o;
    if (i) tqBufPuts(b, ",");
    tqBufPrintf(b, "[%d", o->id);
    if (st->ch[i].op == CH_ADD) {
      /* an added object carries its name, relation and key */
      tqBufPuts(b, ",");
      propsJson(m, o, b);
      tqBufPuts(b, ",");
      char nm[600];
      dspJsonStr(b, dspObjName(o, nm, sizeof nm));
      tqBufPuts(b, ",");
      dspJsonStr(b, o->rel ? tqSymName(o->rel) : "");
      tqBufPuts(b, ",");
      dspJsonStr(b, o->key ? tqSymName(o->key) : "");
    } else if (st->ch[i].op == CH_CHANGE) {
      tqBufPuts(b, ",");
      propsJson(m, o, b);
    }
    tqBufPuts(b, "]");
  }
  tqBufPuts(b, "],\"b\":[");
  for (int i = 0; i < st->nopen; i++) {
    if (i) tqBufPuts(b, ",");
    barJson(st->open[i], b);
  }
  tqBufPuts(b, "],\"e\":[");
  for (int i = 0; i < st->nclose; i++) {
    tqBufPrintf(b, "%s[%lld,", i ? "," : "", (long long)st->close[i]->id);
    jtime(b, st->close[i]->to);
    tqBufPuts(b, "]");
  }
  tqBufPuts(b, "]}");
}

void dspKeyframeJson(const DspModel *m, const DspStep *st, TqBuf *b) {
  tqBufPrintf(b, "{\"i\":%lld,\"k\":1,\"t\":", (long long)st->seq);
  jtime(b, st->t);
  tqBufPuts(b, ",\"d\":[");
  int any = 0;
  char nm[600];
  for (int id = 0; id < dspModelNObj(m); id++) {
    const DObj *o = dspModelObj(m, id);
    if (!o->shown) continue;
    tqBufPrintf(b, "%s[%d,", any++ ? "," : "", o->id);
    propsJson(m, o, b);
    tqBufPuts(b, ",");
    dspJsonStr(b, dspObjName(o, nm, sizeof nm));
    tqBufPuts(b, ",");
    dspJsonStr(b, o->rel ? tqSymName(o->rel) : "");
    tqBufPuts(b, ",");
    dspJsonStr(b, o->key ? tqSymName(o->key) : "");
    tqBufPuts(b, "]");
  }
  tqBufPuts(b, "],\"b\":[");
  for (int i = 0; i < dspModelNOpenBar(m); i++) {
    if (i) tqBufPuts(b, ",");
    barJson(dspModelOpenBar(m, i), b);
  }
  tqBufPuts(b, "],\"e\":[]}");
}

void dspHeaderJson(const DspModel *m, TqBuf *b, int live) {
  static const char *rep[] = {"animationtrace", "animation", "animationtrace", "timeline"};
  TqTime first, last;
  dspModelRange(m, &first, &last);
  tqBufPrintf(b, "{\"version\":1,\"time\":\"%s\",\"fade\":%d,\"tick\":%lld,\"live\":%s,\"first\":", rep[dspModelTimeRep(m)],
              dspModelFade(m), (long long)dspModelTick(m), live ? "true" : "false");
  jtime(b, first);
  tqBufPuts(b, ",\"last\":");
  jtime(b, last);
  tqBufPuts(b, ",\"bands\":[");
  for (int i = 0; i < dspModelNBand(m); i++) {
    const DBand *d = dspModelBand(m, i);
    tqBufPrintf(b, "%s{\"name\":", i ? "," : "");
    dspJsonStr(b, tqSymName(d->name));
    tqBufPrintf(b, ",\"event\":%d,\"declared\":%d}", d->isEvent, d->declared);
  }
  tqBufPuts(b, "]");
  const CpProgram *p = dspModelProgram(m);
  tqBufPuts(b, ",\"title\":");
  const TqSource *src = p->sources.n ? p->sources.v[p->sources.n - 1] : NULL;
  dspJsonStr(b, src ? src->name : "tqmon");
  tqBufPuts(b, "}");
}

/* ================================================================ the page */

int dspWritePage(const char *path, const char *header, const DspHistory *h, TqBuf *err) {
  const char *mark = "/*TQMON_MODEL*/";
  const char *at = strstr(dspPageHtml, mark);
  FILE *f = fopen(path, "w");
  if (!f) {
    tqBufPrintf(err, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  fwrite(dspPageHtml, 1, (size_t)(at - dspPageHtml), f);
  dspHistoryWrite(h, header, f); /* straight to the file: no second copy in memory */
  fputs(at + strlen(mark), f);
  if (fclose(f)) {
    tqBufPrintf(err, "cannot write %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

typedef struct HtmlOut {
  DspOut o;
  char *path;
  DspHistory *hist;
} HtmlOut;

static void htmlStep(void *self, DspModel *m, const DspStep *st) {
  HtmlOut *h = self;
  dspHistoryStep(h->hist, m, st);
}

void dspHistoryNote(const DspHistory *h, const char *what, size_t budget) {
  if (!dspHistoryDropped(h)) return;
  fprintf(stderr,
          "tqmon: display: %s holds the last %lld steps; the %lld before them are summarised as the picture at "
          "step %lld (history=%zu MB)\n",
          what, (long long)(dspHistoryLast(h) - dspHistoryFirst(h) + 1), (long long)dspHistoryDropped(h),
          (long long)dspHistoryFirst(h) - 1, budget >> 20);
}

static int htmlEnd(void *self, DspModel *m) {
  HtmlOut *h = self;
  TqBuf hd = {0}, err = {0};
  dspHeaderJson(m, &hd, 0);
  int rc = dspWritePage(h->path, hd.s, h->hist, &err);
  if (rc) fprintf(stderr, "tqmon: display: %s\n", err.s);
  else dspHistoryNote(h->hist, "the page", dspHistoryBudget(h->hist));
  tqBufFree(&hd);
  tqBufFree(&err);
  dspHistoryFree(h->hist);
  free(h->path);
  free(h);
  return rc;
}

DspOut *dspHtmlOut(const char *path, size_t history) {
  HtmlOut *h = tqCalloc(1, sizeof *h);
  h->path = tqStrdup(path);
  h->hist = dspHistoryNew(history);
  h->o.self = h;
  h->o.step = htmlStep;
  h->o.end = htmlEnd;
  return &h->o;
}
