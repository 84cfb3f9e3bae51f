/*
** hist.c - folding histograms: a fixed number of time buckets over a run
** of any length (after Paradyn's Data Manager, its README in dyninst
** paradyn/src/DMthread/README: "on folds").
**
** A value added at time t goes to bucket (t - start) / width.  When t lies
** past the last bucket, the histogram folds: bucket i becomes the sum of
** buckets 2i and 2i+1 (their counts and their sums add, so an average is
** still sum / count), the upper half is empty again and the width doubles;
** as many folds as t needs.  The memory is the two arrays of nb entries
** allocated at creation: flat for a run of any length (rtHistBytes asks
** the allocator what they hold, tests/unit.c measures the heap over 12 and
** 48 hours).  Invariants: nb is even and at least 2; every value counted
** lies in [start, start + nb * width); added = the counts' total + early.
*/
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

RtHist *rtHistNew(int nb, TqTime start, TqTime width) {
  if (nb < 2 || nb % 2 || width <= 0) return NULL;
  RtHist *h = tqCalloc(1, sizeof *h);
  h->nb = nb;
  h->start = start;
  h->width = width;
  h->count = tqCalloc((size_t)nb, sizeof(int64_t));
  h->sum = tqCalloc((size_t)nb, sizeof(double));
  return h;
}

int64_t rtHistBytes(const RtHist *h) {
  if (!h) return 0;
  return (int64_t)(malloc_usable_size((void *)h) + malloc_usable_size(h->count) + malloc_usable_size(h->sum));
}

void rtHistFree(RtHist *h) {
  if (!h) return;
  free(h->count);
  free(h->sum);
  free(h);
}

/* Merges adjacent buckets pairwise and doubles the width. */
static void fold(RtHist *h) {
  int half = h->nb / 2;
  for (int i = 0; i < half; i++) {
    h->count[i] = h->count[2 * i] + h->count[2 * i + 1];
    h->sum[i] = h->sum[2 * i] + h->sum[2 * i + 1];
  }
  memset(h->count + half, 0, sizeof(int64_t) * (size_t)(h->nb - half));
  memset(h->sum + half, 0, sizeof(double) * (size_t)(h->nb - half));
  h->width *= 2;
  h->folds++;
}

int rtHistAdd(RtHist *h, TqTime t, double v) {
  h->added++;
  if (t < h->start) {
    h->early++;
    return 0;
  }
  int folds = 0;
  while ((uint64_t)(t - h->start) / (uint64_t)h->width >= (uint64_t)h->nb && h->width < TQ_FOREVER / 4) {
    fold(h);
    folds++;
  }
  uint64_t b = (uint64_t)(t - h->start) / (uint64_t)h->width;
  if (b >= (uint64_t)h->nb) b = (uint64_t)h->nb - 1; /* (a width near forever: the last bucket) */
  h->count[b]++;
  h->sum[b] += v;
  return folds;
}
