/*
** client.c - an engine client (include/tqmon.h only) that drives the test
** PMs one snapshot at a time, for what the command line does not show:
** the engine's view of the PMs (tq_get_info: calls, disabled, message),
** tq_register_pm refusing a PM of another interface version, and the PM
** libraries unloaded by tq_finish even when one library was loaded under
** several names (hosts.so, load.so, ... are links to testpm.so).
** Run from the top of the tree: build/asan/testpm-client.  Prints
** "ok N - name" or "not ok N - name" per check; exit status 1 on a failure.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tqmon.h"

static int ntest, nfail;

static void check(int cond, const char *name) {
  ntest++;
  if (!cond) nfail++;
  printf("%sok %d - %s\n", cond ? "" : "not ", ntest, name);
}

static const tq_pm_info *pmInfo(const tq_info *info, const char *name) {
  for (int i = 0; i < info->npms; i++)
    if (!strcmp(info->pms[i].name, name)) return &info->pms[i];
  return NULL;
}

static tq_pm_status futureInit(tq_pm_global *g, tq_pm_private *p) { return TQ_PM_OK; }

int main(void) {
  static const char *const files[] = {"tests/testpm/sensors.tq", "tests/testpm/queries.tq"};
  static const char *const libs[] = {"build/testpm/hosts.so", "build/testpm/load.so", "build/testpm/disk.so",
                                     "build/testpm/busy.so"};
  tq_engine *e = tq_init();
  check(e && tq_set_option(e, "pm-path", "build/testpm") == 0, "pm-path set");
  int rc = tq_register(e, "hosts", "") | tq_register(e, "load", "dep=hosts") | tq_register(e, "disk", "error=2") |
           tq_register(e, "busy", "") | tq_register(e, "clock", "count=3");
  check(rc == 0, "one library registered under four names");
  tq_pm future = {.version = TQ_PM_VERSION + 1, .name = "future", .init = futureInit};
  check(tq_register_pm(e, &future, NULL) == -1 && strstr(tq_errors(e), "future: interface version 13, this engine speaks 1 to 12"),
        "a client PM of another version refused");
  tq_pm older = {.version = TQ_PM_VERSION_MIN, .name = "older", .init = futureInit};
  check(tq_register_pm(e, &older, NULL) == 0, "a client PM of the first interface version still loads");
  check(tq_prepare(e, 2, files) == 0, "prepared");
  int n = 0;
  while ((rc = tq_collect_snapshot(e)) == 1) n++;
  check(rc == 0 && n == 3, "three snapshots, one at a time");
  tq_info info;
  check(tq_get_info(e, &info) == 0 && info.snapshots == 3, "three snapshots in the info");
  const tq_pm_info *disk = pmInfo(&info, "disk"), *load = pmInfo(&info, "load"), *net = pmInfo(&info, "net");
  check(disk && disk->disabled && strstr(disk->message, "failing at snapshot 2, as asked"),
        "disk disabled itself, with its message");
  check(load && !load->disabled && load->caps == TQ_PM_PRODUCER && load->calls == 6,
        "load went on: START, three snapshots, two enables");
  check(net && net->caps == 0 && net->calls == 1, "net (no arguments) declares nothing, called at START only");
  check(tq_end(e) == 0, "ended");
  void *h = dlopen(libs[0], RTLD_NOW | RTLD_NOLOAD);
  check(h != NULL, "the library is loaded before tq_finish");
  if (h) dlclose(h);
  tq_finish(e);
  int loaded = 0;
  for (int i = 0; i < 4; i++) {
    h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      loaded++;
      dlclose(h);
    }
  }
  check(loaded == 0, "the library is unloaded by tq_finish");
  return nfail ? 1 : 0;
}
