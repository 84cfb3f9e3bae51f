/*
** badver.c - a PM built for another version of the interface
** (build/testpm/badver.so): the engine must refuse to load it, saying which
** versions differ, and must never call its init.
*/
#include <stdlib.h>

#include "pm.h"

static tq_pm_status badInit(tq_pm_global *g, tq_pm_private *p) {
  abort(); /* never called: the version is checked first */
}

static const tq_pm badPm = {
    .version = 100, /* (well above TQ_PM_VERSION: the message names it) */
    .name = "badver",
    .description = "test PM of a future interface version",
    .init = badInit,
};

const tq_pm *const *tqmon_pm_list(int *n);
const tq_pm *const *tqmon_pm_list(int *n) {
  static const tq_pm *const list[] = {&badPm};
  *n = 1;
  return list;
}
