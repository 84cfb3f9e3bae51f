/* serve.c - placeholder */
#include "dspInt.h"
DspOut *dspServeOut(const char *addr, int port, int linger, TqBuf *err) {
  tqBufPrintf(err, "serving is not built");
  return NULL;
}
