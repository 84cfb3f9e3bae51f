/*
** tty.c - the live terminal view of the displays: the current state of
** each displayed relation (entities and their attributes, who runs where,
** who waits on what, what flashes), one line per element.
**
** On a terminal the screen is redrawn in place, like top, at most ten
** times a second and once at the end (the title in bold unless NO_COLOR is
** set).  Elsewhere (a file, a pipe) each step
** prints the lines that appeared ("+") and went away ("-") after its time,
** so the output is a plain log that can be compared and grepped.
*/
#include <stdlib.h>
#include <string.h>

#include "dspInt.h"

typedef struct TtyOut {
  DspOut o;
  FILE *f;
  int fancy;            /* redraw in place (a terminal) */
  double lastDraw;      /* wall clock of the last redraw */
  TqTime t;             /* time of the last step */
  int pending;          /* a step not drawn yet */
  TqVec prev;           /* plain mode: the lines of the previous state (char*) */
} TtyOut;

static int lineCmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Splits text into sorted lines (owned copies). */
static void linesOf(const char *text, TqVec *v) {
  for (const char *s = text; s && *s;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    tqVecPush(v, tqStrndup(s, n));
    s = e ? e + 1 : s + n;
  }
  if (v->n > 1) qsort(v->v, (size_t)v->n, sizeof(void *), lineCmp);
}

static void freeLines(TqVec *v) {
  for (int i = 0; i < v->n; i++) free(v->v[i]);
  tqVecFree(v);
}

/* A step's time: a live run's as the tables give it (ISO 8601 in the
** local zone, TZ honoured), a recording's as its own clock. */
static const char *stepTime(char *buf, size_t n, TqTime t) {
  return t >= TQ_WALLCLOCK && t < TQ_FOREVER ? tqTimeIso(buf, n, t, 0, 0) : tqTimeFormat(buf, n, t);
}

static void redraw(TtyOut *t, DspModel *m) {
  char buf[64];
  TqBuf s = {0};
  dspModelStateText(m, &s);
  /* bold title unless NO_COLOR is set (no-color.org): clearing the screen
  ** stays, it is no colour */
  const char *nc = getenv("NO_COLOR");
  int bold = !(nc && *nc);
  fprintf(t->f, "\033[H\033[2J%stqmon%s  %s\n\n%s", bold ? "\033[1m" : "", bold ? "\033[0m" : "",
          stepTime(buf, sizeof buf, t->t), s.s ? s.s : "(nothing drawn)\n");
  fflush(t->f);
  tqBufFree(&s);
  t->lastDraw = tqWallSeconds();
  t->pending = 0;
}

static void ttyStep(void *self, DspModel *m, const DspStep *st) {
  TtyOut *t = self;
  t->t = st->t;
  if (t->fancy) {
    t->pending = 1;
    if (tqWallSeconds() - t->lastDraw >= 0.1) redraw(t, m);
    return;
  }
  TqBuf s = {0};
  TqVec now = {0};
  dspModelStateText(m, &s);
  linesOf(s.s, &now);
  tqBufFree(&s);
  /* merge the two sorted lists */
  char buf[64];
  const char *ts = stepTime(buf, sizeof buf, st->t);
  int i = 0, j = 0;
  while (i < t->prev.n || j < now.n) {
    int c = i == t->prev.n ? 1 : j == now.n ? -1 : strcmp(t->prev.v[i], now.v[j]);
    if (c < 0) fprintf(t->f, "%s - %s\n", ts, (char *)t->prev.v[i++]);
    else if (c > 0) fprintf(t->f, "%s + %s\n", ts, (char *)now.v[j++]);
    else i++, j++;
  }
  freeLines(&t->prev);
  t->prev = now;
}

static int ttyEnd(void *self, DspModel *m) {
  TtyOut *t = self;
  if (t->fancy && t->pending) redraw(t, m);
  freeLines(&t->prev);
  int rc = fflush(t->f) ? -1 : 0;
  free(t);
  return rc;
}

DspOut *dspTtyOut(FILE *f, int fancy) {
  TtyOut *t = tqCalloc(1, sizeof *t);
  t->f = f;
  t->fancy = fancy;
  t->o.self = t;
  t->o.step = ttyStep;
  t->o.end = ttyEnd;
  return &t->o;
}
