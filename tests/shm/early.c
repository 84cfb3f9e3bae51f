/*
** early.c - a subject busy from its first line, for tests/scripts/shm_start.sh:
** worker W1 enqueues and handles N jobs (an event and an interval each) as
** fast as it can, then worker W2 does the same; nothing waits for the
** monitor but the generated sensors' start handshake.
**
**   early [N]        (default 1000)
*/
#include <stdlib.h>

#include "sensors.h"

static void work(const char *name, int n) {
  tq_entity w = tq_Worker_begin(name);
  for (int i = 0; i < n; i++) {
    tq_Enqueue(w, i);
    tq_interval h = tq_Handling_begin(w, i);
    tq_Handling_end(h, w, i);
  }
  tq_Worker_end(w);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  work("W1", n);
  work("W2", n);
  return 0;
}
