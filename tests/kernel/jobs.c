/*
** jobs.c - a program built with generated sensors (tests/kernel/jobs.tq)
** for the test that joins kernel, /proc and generated-sensor relations in
** one query (tests/scripts/kernel_mixed.sh).  It writes its pid to the file
** given with -o and waits until the file given with -g exists (the monitor
** has attached), then works on job J1: sleeps 200 ms, 1500 ms and 200 ms
** between the begin and the end of its Working interval, and exits.
*/
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensors.h"

static void sleepMs(long ms) {
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR) {
  }
}

int main(int argc, char **argv) {
  const char *ids = NULL, *go = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-o")) ids = argv[i + 1];
    else if (!strcmp(argv[i], "-g")) go = argv[i + 1];
  }
  if (!ids || !go) {
    fprintf(stderr, "usage: jobs -o IDS -g GO\n");
    return 2;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", ids);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "jobs=%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, ids)) return 2;
  for (int i = 0; access(go, F_OK); i++) {
    if (i > 30000) return 2;
    poll(NULL, 0, 20);
  }
  tq_entity j = tq_Job_begin("J1");
  tq_interval w = tq_Working_begin(j);
  sleepMs(200);
  sleepMs(1500);
  sleepMs(200);
  tq_Working_end(w, j);
  tq_Job_end(j);
  return 0;
}
