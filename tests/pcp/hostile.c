/*
** hostile.c - a hostile program for tests/scripts/pcp_hostile.sh: it makes
** its own sensor segment (/tqmon.PID, mode 0600, one ring, a catalog of one
** event sensor Ev) as an instrumented program would, waits until an agent
** has attached, then by mode:
**   shrink   writes 10 packets, then shrinks the segment to one page under
**            the agent (ftruncate) and stays a moment
**   future   writes a packet stamped an hour ahead, then 100 good ones,
**            and stays a moment
**   opens    begins 270,000 intervals of Iv and ends none
**   again    writes 10 packets and marks its segment exited, removes it,
**            then makes a new one and does the same: to the agent, a
**            program that exited and a new program with its pid
*/
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tqshm.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "shrink";
  int future = !strcmp(mode, "future"), opens = !strcmp(mode, "opens"), again = !strcmp(mode, "again");
  char name[64];
  snprintf(name, sizeof name, "/tqmon.%d", (int)getpid());
  for (int round = 0; round < (again ? 2 : 1); round++) {
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return perror("shm_open"), 1;
    tq_shm_header g;
    memset(&g, 0, sizeof g);
    tq_shm_layout(&g, 4, 64, 1, 1024);
    if (ftruncate(fd, (off_t)g.size)) return perror("ftruncate"), 1;
    tq_shm_header *h = mmap(NULL, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) return perror("mmap"), 1;
    *h = g;
    memcpy(h->magic, TQ_SHM_MAGIC, 8);
    h->version = TQ_SHM_VERSION;
    tq_shm_sensor *cat = (tq_shm_sensor *)((char *)h + h->off_catalog);
    strcpy(cat[0].name, "Ev");
    cat[0].is_event = 1;
    cat[0].flag_attr = 255;
    cat[0].nattr = 1;
    cat[0].kind[0] = TQ_SHM_INT;
    strcpy(cat[1].name, "Iv");
    cat[1].flag_attr = 255;
    cat[1].nattr = 1;
    cat[1].kind[0] = TQ_SHM_INT;
    h->nsensors = 2;
    h->subject_pid = h->creator_pid = getpid();
    __atomic_store_n(&h->state, TQ_SHM_READY, __ATOMIC_RELEASE);
    for (int i = 0; i < 10000 && !__atomic_load_n(&h->monitor_pid, __ATOMIC_ACQUIRE); i++) usleep(1000);
    if (!h->monitor_pid) return fprintf(stderr, "hostile: no agent attached\n"), 1;
    usleep(300 * 1000); /* (what the ring holds when the agent attaches is cut) */
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + h->off_rings);
    tq_shm_packet *slots = (tq_shm_packet *)(r + 1);
    struct timespec ts;
    uint64_t n = future ? 101 : opens ? 270000 : 10;
    for (uint64_t pos = 0; pos < n; pos++) {
      while (pos - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= 1024) usleep(200); /* (the ring is full) */
      clock_gettime(CLOCK_REALTIME, &ts);
      tq_shm_packet p;
      memset(&p, 0, sizeof p);
      p.time = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
      if (future && pos == 0) p.time += 3600 * 1000000000ull;
      p.kind = TQ_SHM_EVENT;
      if (opens) {
        p.sensor = 1;
        p.kind = TQ_SHM_BEGIN;
        p.id = pos + 1;
      }
      p.nslots = 1;
      p.v[0] = (int64_t)pos;
      slots[pos & 1023] = p;
      __atomic_store_n(&slots[pos & 1023].gen, tq_shm_gen(pos, 1024), __ATOMIC_RELEASE);
      if (pos == 0) __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&r->head, n, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
    if (again) { /* (as a program's exit does: its state, then its file) */
      sleep(1);
      __atomic_store_n(&h->state, TQ_SHM_EXITED, __ATOMIC_RELEASE);
      sleep(1);
      shm_unlink(name);
      munmap(h, g.size);
      close(fd);
      continue;
    }
    sleep(1);
    if (future || opens) {
      shm_unlink(name);
      return 0;
    }
    if (ftruncate(fd, 4096)) return perror("ftruncate"), 1;
    fprintf(stderr, "hostile: shrunk\n");
    sleep(2);
    shm_unlink(name);
  }
  return 0;
}
