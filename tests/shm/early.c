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
**   early N shrink   once a monitor attached (at most 60 s): W1, then it
**                    shrinks its own segment to one page under the
**                    monitor, and stays a second (tests/scripts/shm_bad.sh)
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
  if (argc > 2 && !strcmp(argv[2], "shrink")) {
    tq_shm_header *h = tqs_segment();
    for (int i = 0; i < 6000 && h && !__atomic_load_n(&h->monitor_ready, __ATOMIC_ACQUIRE); i++) usleep(10 * 1000);
    if (!h || !h->monitor_ready) return 2;
    work("W1", n);
    for (int i = 0; i < 1000 && tqs_me.ring && tqs_me.head != __atomic_load_n(&tqs_me.ring->tail, __ATOMIC_ACQUIRE); i++)
      usleep(10 * 1000); /* (until the monitor drained it, at most 10 s) */
    char name[64];
    snprintf(name, sizeof name, "/tqmon.%d", (int)getpid());
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0 || ftruncate(fd, 4096)) return 3;
    fprintf(stderr, "early: shrunk\n");
    sleep(2); /* (the monitor reads past the end meanwhile; no sensor is called: its rings are gone) */
    return 0;
  }
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
