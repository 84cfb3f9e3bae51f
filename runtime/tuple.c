/*
** tuple.c - reference-counted tuples from per-size free lists.
**
** A tuple of s slots (2 per span plus 1 per value) is taken from the free
** list of class s; freed tuples go back to it, so the steady state of a
** run allocates nothing.  Tuples wider than RT_MAXCLASS slots use malloc.
*/
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

RtTup *rtTupPool[RT_MAXCLASS + 1];
int64_t rtTupCount;

RtTup *rtTupAllocSlow(int nspan, int nval) {
  int slots = 2 * nspan + nval;
  RtTup *t = tqMalloc(sizeof(RtTup) + sizeof(int64_t) * (size_t)(slots ? slots : 1));
  rtTupInit(t, nspan, nval);
  return t;
}

RtTup *rtTupNew(int nspan, int nval) {
  RtTup *t = rtTupAlloc(nspan, nval);
  memset(t->d, 0, sizeof(int64_t) * t->cls);
  return t;
}

void rtTupRef(RtTup *t) { t->ref++; }

void rtTupUnref(RtTup *t) {
  if (!t) return;
  if (--t->ref > 0) return;
  rtTupFree(t);
}

void rtTupFree(RtTup *t) {
  rtTupCount--;
  if (t->link) {
    /* the output an operator derived from this tuple (kept until its final END) */
    RtTup *l = t->link;
    t->link = NULL;
    rtTupUnref(l);
  }
  if (t->cls <= RT_MAXCLASS) {
#ifdef TQ_TESTING
    memset(t->d, 0xa5, sizeof(int64_t) * t->cls);
#endif
    t->link = rtTupPool[t->cls];
    rtTupPool[t->cls] = t;
  } else {
    free(t);
  }
}

/* An order on tuples by content (spans, then values): operators that
** decide several waiting tuples at once emit them in it, so a run's rows
** come in the same order whatever the tuples' addresses. */
int rtTupCmp(const RtTup *a, const RtTup *b) {
  if (a->nspan != b->nspan) return a->nspan < b->nspan ? -1 : 1;
  if (a->nval != b->nval) return a->nval < b->nval ? -1 : 1;
  int n = 2 * a->nspan + a->nval;
  for (int i = 0; i < n; i++)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

void rtTupCountOpen(RtTup *t) {
  uint32_t n = 0;
  for (int i = 0; i < t->nspan; i++)
    if (RT_TO(t, i) == TQ_OPEN) n++;
  t->nopen = n;
}

RtTup *rtTupCopyShape(const RtTup *src) {
  RtTup *t = rtTupAlloc(src->nspan, src->nval);
  rtWordsCopy(t->d, src->d, 2 * src->nspan + src->nval);
  t->nopen = src->nopen;
  return t;
}

int64_t rtTupLive(void) { return rtTupCount; }
