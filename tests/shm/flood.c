/*
** flood.c - a subject that floods its monitor, for tests/scripts/shm_flood.sh:
** two threads (workers W1 and W2) each send Enqueue events as fast as they
** can for SECONDS (or until MAX each), and write how many they sent to
** OUT, one line "W1 N" per worker: an observation of the run independent of
** the monitor (what it recorded plus what it says it lost must be that).
** With "strings" first, worker W1 sends MAX Note events, each with a string
** of its own (a table of TQMON_ENTITIES slots runs out).
**
**   flood SECONDS MAX OUT
**   flood strings MAX OUT
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensors.h"

static double seconds;
static long maxN;
typedef struct Worker {
  const char *name;
  long sent;
} Worker;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *work(void *arg) {
  Worker *w = arg;
  tq_entity e = tq_Worker_begin(w->name);
  double end = now() + seconds;
  for (long i = 0; i < maxN; i++) {
    if ((i & 1023) == 0 && now() > end) break;
    tq_Enqueue(e, i);
    w->sent++;
  }
  tq_Worker_end(e);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: flood SECONDS|strings MAX OUT\n");
    return 2;
  }
  maxN = atol(argv[2]);
  FILE *out = fopen(argv[3], "w");
  if (!out) return 2;
  if (!strcmp(argv[1], "strings")) {
    tq_entity e = tq_Worker_begin("W1");
    char text[32];
    for (long i = 0; i < maxN; i++) {
      snprintf(text, sizeof text, "note %ld", i);
      tq_Note(e, text);
    }
    tq_Worker_end(e);
    fprintf(out, "W1 %ld\n", maxN);
    return fclose(out) ? 2 : 0;
  }
  seconds = atof(argv[1]);
  Worker w[2] = {{"W1", 0}, {"W2", 0}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    if (pthread_create(&th[i], NULL, work, &w[i])) return 2;
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2; i++) fprintf(out, "%s %ld\n", w[i].name, w[i].sent);
  return fclose(out) ? 2 : 0;
}
