/*
** early.c - a subject busy from its first line, for tests/scripts/shm_start.sh:
** worker W1 enqueues and handles N jobs (an event and an interval each) as
** fast as it can, then worker W2 does the same; nothing waits for the
** monitor but the generated sensors' start handshake.
**
**   early [N]        (default 1000)
**   early N fork     W1, then a child of fork (no exec) works as C1 and
**                    exits; then W2 (tests/scripts/shm_fork.sh)
**   early N after F  W1, then W2 once file F exists (at most 60 s): W2 is
**                    declared after a monitor named it (pcp_agent.sh)
*/
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
  if (argc > 2 && !strcmp(argv[2], "fork")) {
    pid_t c = fork();
    if (c == 0) {
      work("C1", n);
      usleep(300 * 1000); /* (time for a monitor to drain what it wrote) */
      exit(0);            /* (the atexit handlers run in the child too) */
    }
    if (c < 0 || waitpid(c, NULL, 0) != c) return 1;
  }
  if (argc > 3 && !strcmp(argv[2], "after"))
    for (int i = 0; i < 6000 && access(argv[3], F_OK); i++) usleep(10 * 1000);
  work("W2", n);
  return 0;
}
