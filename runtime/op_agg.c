/*
** op_agg.c - aggregate operators (count, sum, ... over time windows).
*/
#include "rtInt.h"

RtOp *rtOpAgg(RtNet *net, const AlgNode *n, TqBuf *msg) {
  tqBufPuts(msg, "aggregates are not supported by this runtime yet");
  return NULL;
}
