/*
** tqtest_spin.c - spins for a given CPU time and exits: a process for the
** program-list test (tests/scripts/strobe_programs.sh), copied under other
** names to make processes the list must leave out.  Usage: tqtest_spin MS
*/
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

static int64_t cpuNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) void tqtest_spin(int64_t ms) {
  int64_t end = cpuNs() + ms * 1000000;
  uint64_t x = 1;
  while (cpuNs() < end)
    for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1;
  sink = x;
}

int main(int argc, char **argv) {
  tqtest_spin(argc > 1 ? atoll(argv[1]) : 1000);
  return 0;
}
