/*
** loss.c - answers that know they are incomplete (docs/losses.md).
**
** A producer that lost records (a full buffer, a malformed packet, a
** string table full) says so once, through rtNetLost: how many (or that
** how many is not known: a program that ran before its monitor was
** ready), of which relation, on which flag entity when it knows, and over
** which period.
** The network keeps the losses (merged, and bounded), counts them per
** sensor, and tells for each result the periods during which it may be
** incomplete: the losses of every sensor its network reads (its alphas,
** and the entity sources below them).  A loss among the begins and ends
** of intervals, or under an aggregate, may change the answer after the
** loss too (an interval missing, or ending late; a count over a window
** or for ever that stays low): such a period runs to the end of the run.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtInt.h"

/* Losses kept at most: past it, a loss is merged into the last one of its
** relation (the periods grow; nothing is forgotten). */
#define RT_MAX_LOSSES 4096
/* Two losses of one relation and entity closer than this are one period. */
#define RT_LOSS_GAP TQ_SEC

static int mergeInto(RtLoss *l, int64_t entity, TqTime from, TqTime to, int64_t count, int spans, int unknown) {
  if (l->entity != entity) l->entity = RT_LOSS_ANY;
  if (from < l->from) l->from = from;
  if (to > l->to) l->to = to;
  l->count += count;
  l->spans |= spans;
  l->unknown |= unknown;
  return 0;
}

int rtNetLost(RtNet *net, int rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans) {
  int unknown = count == RT_LOSS_UNKNOWN;
  if (unknown) count = 0;
  else if (count <= 0 || count > RT_LOSS_MAX - net->packetsLost) return -1;
  if (rel < 0 || rel > net->nsensor || to < from) return -1;
  if (rel) {
    net->sensor[rel - 1].lost += count;
    net->sensor[rel - 1].lostUnknown |= unknown;
  }
  net->packetsLost += count;
  net->lostUnknown |= unknown;
  net->lossesTold++;
  spans = spans != 0;
  /* the same relation and entity a moment ago: one period */
  for (int i = net->nloss - 1; i >= 0 && i >= net->nloss - 64; i--) {
    RtLoss *l = &net->loss[i];
    if (l->rel == rel && l->entity == entity && from <= l->to + RT_LOSS_GAP && to + RT_LOSS_GAP >= l->from)
      return mergeInto(l, entity, from, to, count, spans, unknown);
  }
  if (net->nloss == RT_MAX_LOSSES) {
    for (int i = net->nloss - 1; i >= 0; i--)
      if (net->loss[i].rel == rel) return mergeInto(&net->loss[i], entity, from, to, count, spans, unknown);
    RtLoss *l = &net->loss[net->nloss - 1];
    l->rel = 0; /* (more relations lost than periods kept: not known which) */
    return mergeInto(l, entity, from, to, count, spans, unknown);
  }
  if (net->nloss == net->closs) {
    net->closs = net->closs ? 2 * net->closs : 16;
    net->loss = tqRealloc(net->loss, sizeof(RtLoss) * (size_t)net->closs);
  }
  net->loss[net->nloss++] = (RtLoss){rel, spans, entity, from, to, count, unknown};
  return 0;
}

/* The operator at the top of op's tree (a result's sink). */
static const RtOp *topOf(const RtOp *op) {
  while (op->parent) op = op->parent;
  return op;
}

static int hasAgg(const RtOp *op) {
  if (op->node && op->node->kind == ALG_AGG) return 1;
  for (int i = 0; i < op->nkid; i++)
    if (hasAgg(op->kid[i])) return 1;
  return 0;
}

static int readsSensor(const RtSensor *s, const RtOp *top) {
  for (int k = 0; k < 2; k++) {
    const TqVec *v = k ? &s->sources : &s->alphas;
    for (int i = 0; i < v->n; i++)
      if (topOf(v->v[i]) == top) return 1;
  }
  return 0;
}

int rtResultLosses(const RtNet *net, const RtResult *res, RtLoss **out) {
  *out = NULL;
  if (!net->nloss || !res->root) return 0;
  const RtOp *top = topOf(res->root);
  int agg = hasAgg(res->root), n = 0;
  RtLoss *v = NULL;
  for (int i = 0; i < net->nloss; i++) {
    const RtLoss *l = &net->loss[i];
    /* a loss of a relation is one of its other sensor too (SENSOR: answered
    ** from the relation's records in a replay) */
    const AlgRel *alt = l->rel ? net->sensor[l->rel - 1].rel->altSensor : NULL;
    if (l->rel && !readsSensor(&net->sensor[l->rel - 1], top) && !(alt && readsSensor(&net->sensor[alt->id - 1], top))) continue;
    if (!v) v = tqMalloc(sizeof(RtLoss) * (size_t)net->nloss);
    v[n] = *l;
    if (l->spans || agg) v[n].to = TQ_FOREVER; /* it may tell later too */
    n++;
  }
  *out = v;
  return n;
}

int rtLossCovers(const RtLoss *v, int n, TqTime from, TqTime to) {
  if (to <= from) to = from + 1; /* (an event: [at, at+1)) */
  for (int i = 0; i < n; i++)
    if (from <= v[i].to && v[i].from < to) return 1;
  return 0;
}

char *rtLossCount(char *buf, size_t n, int64_t count, int unknown) {
  if (!unknown) snprintf(buf, n, "%lld packet%s", (long long)count, count == 1 ? "" : "s");
  else if (count) snprintf(buf, n, "at least %lld packet%s", (long long)count, count == 1 ? "" : "s");
  else snprintf(buf, n, "an unknown number of packets");
  return buf;
}

const char *rtLossEntity(const RtLoss *l) { return l->entity == RT_LOSS_ANY ? NULL : tqSymName((int32_t)l->entity); }

const char *rtLossRelation(const RtNet *net, const RtLoss *l) { return l->rel ? net->sensor[l->rel - 1].rel->name : NULL; }

void rtLossJson(const RtNet *net, TqBuf *b) {
  tqBufPuts(b, "  \"incomplete\": [");
  int first = 1;
  for (int q = 0; q < net->nresult; q++) {
    const RtResult *res = &net->result[q];
    if (res->q->display) continue;
    RtLoss *v;
    int n = rtResultLosses(net, res, &v);
    for (int i = 0; i < n; i++) {
      tqBufPrintf(b, "%s\n    {\"result\": ", first ? "" : ",");
      first = 0;
      rtJsonStr(b, res->name);
      tqBufPuts(b, ", \"relation\": ");
      rtJsonStr(b, rtLossRelation(net, &v[i]));
      tqBufPuts(b, ", \"entity\": ");
      rtJsonStr(b, rtLossEntity(&v[i]));
      tqBufPrintf(b, ", \"from\": %lld, \"to\": ", (long long)v[i].from);
      if (v[i].to >= TQ_FOREVER) tqBufPuts(b, "null");
      else tqBufPrintf(b, "%lld", (long long)v[i].to);
      if (v[i].unknown) tqBufPuts(b, ", \"lost\": null}"); /* (how many is not known) */
      else tqBufPrintf(b, ", \"lost\": %lld}", (long long)v[i].count);
    }
    free(v);
  }
  tqBufPuts(b, first ? "],\n" : "\n  ],\n");
}
