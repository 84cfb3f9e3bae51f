/*
** pcpdl.c - loads PCP's libraries on first use (pcpdl.h).
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TQ_PCPDL_SELF /* (the names are PCP's functions here: the pointers' types) */
#include "pcpdl.h"

TqPcpFns tqPcp;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char loadWhy[512]; /* empty: loaded */

/* Sets *slot to symbol f of library h; 0, or -1 with loadWhy said. */
static int sym(void *h, const char *lib, const char *f, void **slot) {
  *slot = dlsym(h, f);
  if (*slot) return 0;
  snprintf(loadWhy, sizeof loadWhy, "PCP's %s has no function %s (a PCP older than tqmon was built with?)", lib, f);
  return -1;
}

static void load(void) {
  const char *libs[2] = {"libpcp.so.3", "libpcp_import.so.1"};
#ifdef TQ_TESTING
  if (getenv("TQMON_TEST_PCP_LIB")) libs[0] = getenv("TQMON_TEST_PCP_LIB"); /* (the test of a PCP not installed) */
#endif
  void *h[2];
  for (int i = 0; i < 2; i++) {
    h[i] = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!h[i]) {
      snprintf(loadWhy, sizeof loadWhy, "PCP's library %s cannot be loaded (%s): install PCP (Debian: pcp, libpcp3, libpcp-import1)",
               libs[i], dlerror());
      return;
    }
  }
  int bad = 0;
#define TQ_PCP_SYM(f) bad = bad || sym(h[0], libs[0], #f, (void **)&tqPcp.f);
  TQ_PCP_FNS(TQ_PCP_SYM)
#undef TQ_PCP_SYM
#define TQ_PCP_SYM(f) bad = bad || sym(h[1], libs[1], #f, (void **)&tqPcp.f);
  TQ_PCPI_FNS(TQ_PCP_SYM)
#undef TQ_PCP_SYM
  if (bad) memset(&tqPcp, 0, sizeof tqPcp);
}

int tqPcpLoad(char *why, size_t n) {
  pthread_once(&once, load);
  if (!loadWhy[0]) return 0;
  if (why && n) snprintf(why, n, "%s", loadWhy);
  return -1;
}
