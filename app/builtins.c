/*
** builtins.c - the processor modules tqmon offers by name, and libtqmon's
** tq_init, which is the engine (runtime/engine.h: enNew) offered them.
**
** The engine knows PMs only through include/tqmon_pm.h and names none:
** this list is where the built-in ones meet it.  A new built-in PM is
** added here (and declared in the public header of its folder).  The two
** groupers only name other PMs:
**   default   GROUPER: clock, text
**   all       GROUPER: clock, text, progress
*/
#include "../display/display.h"
#include "../runtime/engine.h"
#include "../sensors/sensors.h"
#include "app.h"

static tq_pm_status defaultInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_GROUPER;
  p->members[p->nmembers++] = "clock";
  p->members[p->nmembers++] = "text";
  return TQ_PM_OK;
}
static tq_pm_status allInit(tq_pm_global *g, tq_pm_private *p) {
  defaultInit(g, p);
  p->members[p->nmembers++] = "progress";
  return TQ_PM_OK;
}
static const tq_pm defaultPm = {.version = TQ_PM_VERSION, .name = "default", .description = "GROUPER: clock, text",
                                .init = defaultInit};
static const tq_pm allPm = {.version = TQ_PM_VERSION, .name = "all", .description = "GROUPER: clock, text, progress",
                            .init = allInit};

const tq_pm *const *appBuiltinPms(int *n) {
  static const tq_pm *const list[] = {&snsTracePm, &snsReplayPm, &snsColfilPm,        &snsClockPm,       &dspTextPm,
                                      &rtSqlitePm,       &rtStorePm,          &snsProgressPm,    &defaultPm,
                                      &allPm,            &snsShmPm,           &dspDisplayPm,     &snsHostPm,
                                      &snsHostProcessPm, &snsHostProcessorPm, &snsHostStatePm,   &snsHostLastProcessorPm,
                                      &snsHostCpuTimePm, &snsHostMemoryPm,    &snsHostIoPm,    &snsHostRunningOnPm, &snsCpuSamplePm,
                                      &snsKernelPm,      &snsKernelProcessorPm, &snsKernelThreadPm, &snsKernelForkPm,
                                      &snsKernelExecPm,  &snsKernelExitPm,    &snsKernelRunningOnPm, &snsKernelReadyPm,
                                      &snsKernelBlockedPm, &snsKernelWokePm,  &snsKernelSyscallPm, &snsKernelBlockIoPm,
                                      &snsKernelSendPm,  &snsKernelReceivePm, &snsPcpPm,
                                      &snsPcpSensorsPm,  &dspPcpExportPm};
  *n = (int)TQ_ARRAY_SIZE(list);
  return list;
}

tq_engine *tq_init(void) {
  tq_engine *e = enNew();
  int n = 0;
  const tq_pm *const *list = appBuiltinPms(&n);
  if (e) enOffer(e, list, n);
  return e;
}
