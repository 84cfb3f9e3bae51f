/*
** history.c - the bounded history of a display's steps, as JSON, that the
** page (--html) and the live server (--serve) keep.
**
** Every step is kept as its JSON until the steps kept take more than the
** budget (history=MB, default 64 MiB).  Then the oldest steps are
** summarised: they are replaced by a keyframe, one step that adds every
** object drawn at that point and every timeline bar still open then, so a
** page starts from the picture as it was and replays what follows.  What
** is lost is the steps before the keyframe: their pictures and the bars
** that had closed by then.  Keyframes are taken as the run goes (after a
** quarter of the budget of steps each, from the model's current state: the
** state after a step is what the model holds while the outputs are told),
** so summarising never replays anything.  A run that stays under the budget
** keeps every step and its page is as before.
*/
#include <stdlib.h>
#include <string.h>

#include "dspInt.h"

typedef struct Keyframe {
  int64_t seq;          /* the state after this step */
  char *js;
  size_t n;
} Keyframe;

struct DspHistory {
  size_t budget;
  char **js;            /* JSON of steps first .. last (js[head + k]: step first + k) */
  size_t *len;
  int head, n, cap;
  int64_t first;        /* seq of js[head] */
  size_t bytes;         /* of the steps and keyframes kept */
  size_t sinceKf;       /* step bytes since the last keyframe */
  Keyframe *kf;         /* kept keyframes, oldest first */
  int nkf, ckf;
  Keyframe base;        /* the summary of the dropped steps (js NULL: none dropped) */
  int64_t dropped;      /* steps summarised */
};

DspHistory *dspHistoryNew(size_t budget) {
  DspHistory *h = tqCalloc(1, sizeof *h);
  h->budget = budget;
  h->first = 1;
  return h;
}

void dspHistoryFree(DspHistory *h) {
  if (!h) return;
  for (int i = 0; i < h->n; i++) free(h->js[h->head + i]);
  free(h->js);
  free(h->len);
  for (int i = 0; i < h->nkf; i++) free(h->kf[i].js);
  free(h->kf);
  free(h->base.js);
  free(h);
}

/* Drops the steps up to keyframe k (the oldest kept) and makes it the base. */
static void summarise(DspHistory *h) {
  Keyframe k = h->kf[0];
  memmove(h->kf, h->kf + 1, sizeof(Keyframe) * (size_t)(h->nkf - 1));
  h->nkf--;
  while (h->n && h->first <= k.seq) {
    h->bytes -= h->len[h->head];
    free(h->js[h->head]);
    h->head++;
    h->n--;
    h->first++;
    h->dropped++;
  }
  if (h->base.js) h->bytes -= h->base.n;
  free(h->base.js);
  h->base = k; /* its bytes stay counted */
}

void dspHistoryStep(DspHistory *h, DspModel *m, const DspStep *st) {
  TqBuf b = {0};
  dspStepJson(m, st, &b);
  if (h->head + h->n == h->cap) {
    if (h->head > h->cap / 2) { /* slide down */
      memmove(h->js, h->js + h->head, sizeof(char *) * (size_t)h->n);
      memmove(h->len, h->len + h->head, sizeof(size_t) * (size_t)h->n);
      h->head = 0;
    } else {
      h->cap = h->cap ? 2 * h->cap : 256;
      h->js = tqRealloc(h->js, sizeof(char *) * (size_t)h->cap);
      h->len = tqRealloc(h->len, sizeof(size_t) * (size_t)h->cap);
    }
  }
  if (!h->n) h->first = st->seq;
  h->js[h->head + h->n] = b.s;
  h->len[h->head + h->n] = b.n;
  h->n++;
  h->bytes += b.n;
  h->sinceKf += b.n;
  if (h->sinceKf > h->budget / 4) {
    TqBuf k = {0};
    dspKeyframeJson(m, st, &k);
    if (h->nkf == h->ckf) {
      h->ckf = h->ckf ? 2 * h->ckf : 8;
      h->kf = tqRealloc(h->kf, sizeof(Keyframe) * (size_t)h->ckf);
    }
    h->kf[h->nkf++] = (Keyframe){st->seq, k.s, k.n};
    h->bytes += k.n;
    h->sinceKf = 0;
  }
  while (h->bytes > h->budget && h->nkf) summarise(h);
}

int64_t dspHistoryLast(const DspHistory *h) { return h->n ? h->first + h->n - 1 : h->base.js ? h->base.seq : 0; }

int64_t dspHistoryFirst(const DspHistory *h) { return h->first; }

int64_t dspHistoryDropped(const DspHistory *h) { return h->dropped; }

size_t dspHistoryBytes(const DspHistory *h) { return h->bytes; }

size_t dspHistoryBudget(const DspHistory *h) { return h->budget; }

const char *dspHistoryAt(const DspHistory *h, int64_t seq) {
  if (seq < h->first || seq >= h->first + h->n) return NULL;
  return h->js[h->head + (int)(seq - h->first)];
}

void dspHistoryWrite(const DspHistory *h, const char *header, FILE *f) {
  fprintf(f, "{\"header\":%s,\"dropped\":%lld,\"steps\":[", header, (long long)h->dropped);
  int any = 0;
  if (h->base.js) {
    fwrite(h->base.js, 1, h->base.n, f);
    any = 1;
  }
  for (int i = 0; i < h->n; i++) {
    if (any) fputs(",\n", f);
    fwrite(h->js[h->head + i], 1, h->len[h->head + i], f);
    any = 1;
  }
  fputs("]}", f);
}

void dspHistoryModel(const DspHistory *h, const char *header, TqBuf *b) {
  tqBufPrintf(b, "{\"header\":%s,\"dropped\":%lld,\"steps\":[", header, (long long)h->dropped);
  int any = 0;
  if (h->base.js) {
    tqBufAdd(b, h->base.js, h->base.n);
    any = 1;
  }
  for (int i = 0; i < h->n; i++) {
    if (any) tqBufPuts(b, ",\n");
    tqBufAdd(b, h->js[h->head + i], h->len[h->head + i]);
    any = 1;
  }
  tqBufPuts(b, "]}");
}
