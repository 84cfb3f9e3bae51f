/*
** group.c - a GROUPER in a library of its own (build/testpm/group.so): it
** only loads the PMs sup and mon, which live in testpm.so (sup.so and mon.so
** in the PM path).  Loading "group" alone is enough to have them called.
*/
#include "pm.h"

static tq_pm_status groupInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_GROUPER;
  p->members[p->nmembers++] = "sup";
  p->members[p->nmembers++] = "mon";
  return TQ_PM_OK;
}

static const tq_pm groupPm = {
    .version = TQ_PM_VERSION,
    .name = "group",
    .description = "test GROUPER: sup and mon",
    .init = groupInit,
};

const tq_pm *const *tqmon_pm_list(int *n);
const tq_pm *const *tqmon_pm_list(int *n) {
  static const tq_pm *const list[] = {&groupPm};
  *n = 1;
  return list;
}
