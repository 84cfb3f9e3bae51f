/*
** tqtest_profile.c - a program with a known split of its CPU time, for the
** attribution test (tests/scripts/strobe_profile.sh): about 70% in
** tqtest_hot and 30% in tqtest_cold, inside two kinds of traced
** transactions (generated sensors, tests/strobe/tqtest.tq):
**   Query   tqtest_hot 5 units, then tqtest_cold 1 unit
**   Update  tqtest_hot 2 units, then tqtest_cold 2 units
** so that over a round (one of each) hot has 7 units of 10 and cold 3,
** Query 6 and Update 4.  A unit is UNIT_MS of the thread's CPU time
** (CLOCK_THREAD_CPUTIME_ID), not of wall time: the split holds on a loaded
** machine.  It waits SETTLE_MS (sleeping: no CPU) after its process
** begins and before it ends, so that the monitor enables the sampler
** before the work and takes the last samples after it.
** Usage: tqtest_profile [ROUNDS] (default 20: 2 s of CPU).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sensors.h"

#define UNIT_MS 10
#define SETTLE_MS 300

static int64_t cpuNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

volatile uint64_t sink;

/* Spin for ms of CPU time; the loop body stays in this function. */
__attribute__((noinline)) void tqtest_hot(int ms) {
  int64_t end = cpuNs() + (int64_t)ms * 1000000;
  uint64_t x = sink;
  while (cpuNs() < end)
    for (int i = 0; i < 200000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  sink = x;
}

__attribute__((noinline)) void tqtest_cold(int ms) {
  int64_t end = cpuNs() + (int64_t)ms * 1000000;
  uint64_t x = sink;
  while (cpuNs() < end)
    for (int i = 0; i < 100000; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  sink = x;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20;
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  tq_entity p = tq_Process_begin(pid);
  usleep(SETTLE_MS * 1000);
  for (int r = 0; r < rounds; r++) {
    tq_interval q = tq_Transaction_begin(p, TQ_Transaction_Kind_Query);
    tqtest_hot(5 * UNIT_MS);
    tqtest_cold(1 * UNIT_MS);
    tq_Transaction_end(q, p, TQ_Transaction_Kind_Query);
    tq_interval u = tq_Transaction_begin(p, TQ_Transaction_Kind_Update);
    tqtest_hot(2 * UNIT_MS);
    tqtest_cold(2 * UNIT_MS);
    tq_Transaction_end(u, p, TQ_Transaction_Kind_Update);
  }
  usleep(SETTLE_MS * 1000);
  tq_Process_end(p);
  return 0;
}
