/*
** optimize.c - the rule-based rewriter (paper section 8.6).
*/
#include "algebra.h"

AlgNode *algOptimize(TqArena *a, const AlgNode *t, TqBuf *trace) {
  return algNodeCopy(a, t);
}
