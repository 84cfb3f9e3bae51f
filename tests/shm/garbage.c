/*
** garbage.c - a subject that misbehaves, for tests/scripts/shm_bad.sh.  It
** maps the monitor's segment (the descriptor TQMON_SHM_FD) like a real
** subject would, then,
** by mode:
**   magic    overwrites the segment's magic
**   version  claims another segment version
**   packets  writes packets with bad sensors, kinds, sizes, handles and
**            enum values, in two rings
**   kind     writes a begin of the event sensor Ping, then a good event
**   slots    writes an event of Ping in two slots (it takes one), then a
**            good event
**   random   fills its ring with random bytes, each slot published (its
**            generation byte set)
**   cached   uses a string's handle, after a sensor the monitor does not
**            declare wrote it as a string, as Ping's Process (an entity)
**   wide     declares a sensor the monitor does not declare with 19
**            attributes (at most 16), and writes one of its packets
**   offsets  claims an offset of its table of sensor words far outside
**   resync   writes one slot of a bad size, then 100 good packets
**   nrings   writes 100 good packets, then claims 100000 rings
**   future   writes a packet stamped an hour ahead, then 100 good ones
**   shrink   tries to shrink the segment to one page, and says whether it
**            could; then writes 100 good packets
** and stays alive a moment so the monitor reads what it wrote.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tqshm.h"

/* Entity handle 1: P1, a Process, alive (the subject's table). */
static void entityP1(tq_shm_header *h) {
  tq_shm_entity *ents = (tq_shm_entity *)((char *)h + h->off_entities);
  strcpy(ents[1].name, "P1");
  ents[1].state = 1;
  ents[1].sensor = 1;
  h->entities_taken = 1;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "packets";
  const char *fdEnv = getenv("TQMON_SHM_FD");
  if (!fdEnv) return 2;
  int fd = atoi(fdEnv);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) return 3;
  tq_shm_header *h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) return 4;
  /* a catalog of one event sensor, as the configuration declares it */
  tq_shm_sensor *cat = (tq_shm_sensor *)((char *)h + h->off_catalog);
  memset(cat, 0, sizeof *cat * 2);
  strcpy(cat[0].name, "Process");
  cat[0].is_entity = 1;
  cat[0].flag_attr = 255;
  cat[0].nattr = 1;
  cat[0].kind[0] = TQ_SHM_ENTITY;
  strcpy(cat[1].name, "Ping");
  cat[1].is_event = 1;
  cat[1].flag_attr = 0;
  cat[1].nattr = 2;
  cat[1].kind[0] = TQ_SHM_ENTITY;
  cat[1].kind[1] = TQ_SHM_ENUM;
  cat[1].nenum[1] = 2;
  h->nsensors = 2;
  if (!strcmp(mode, "cached")) { /* a sensor ping.tq does not declare */
    memset(&cat[2], 0, sizeof cat[2]);
    strcpy(cat[2].name, "Note");
    cat[2].is_event = 1;
    cat[2].flag_attr = 255;
    cat[2].nattr = 1;
    cat[2].kind[0] = TQ_SHM_STRING;
    h->nsensors = 3;
  }
  if (!strcmp(mode, "wide")) {
    memset(&cat[2], 0, sizeof cat[2]);
    strcpy(cat[2].name, "Wide");
    cat[2].is_event = 1;
    cat[2].flag_attr = 255;
    cat[2].nattr = 19;
    for (int k = 0; k < TQ_SHM_MAX_ATTRS; k++) cat[2].kind[k] = TQ_SHM_INT;
    h->nsensors = 3;
  }
  if (!strcmp(mode, "offsets")) h->off_on = (uint64_t)1 << 40;
  h->time_kind = 0;
  if (!strcmp(mode, "magic")) memcpy(h->magic, "GARBAGE!", 8);
  if (!strcmp(mode, "version")) h->version = 99;
  if (!strcmp(mode, "catalog")) h->nsensors = 1000;
  h->subject_pid = (int32_t)getpid();
  __atomic_store_n(&h->state, TQ_SHM_READY, __ATOMIC_RELEASE);
  tq_shm_ring *r = (tq_shm_ring *)((char *)h + h->off_rings);
  tq_shm_packet *slots = (tq_shm_packet *)(r + 1);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  if (!strcmp(mode, "packets")) {
    entityP1(h);
    uint64_t n = 0;
    tq_shm_packet p;
    memset(&p, 0, sizeof p);
    /* a good entity, then bad packets of every sort */
    p = (tq_shm_packet){now, 0, 1, TQ_SHM_BEGIN, 1, 0, 7, {1}};
    slots[n++] = p;
    p = (tq_shm_packet){now + 1, 9, 1, TQ_SHM_EVENT, 1, 0, 0, {1, 0}};      /* unknown sensor */
    slots[n++] = p;
    p = (tq_shm_packet){now + 2, 1, 1, 77, 1, 0, 0, {1, 0}};                /* unknown kind */
    slots[n++] = p;
    p = (tq_shm_packet){now + 3, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {5000, 0}};   /* handle out of range */
    slots[n++] = p;
    p = (tq_shm_packet){now + 4, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {1, 9}};      /* enum out of range */
    slots[n++] = p;
    p = (tq_shm_packet){now + 5, 1, 1, TQ_SHM_END, 1, 0, 12345, {1}};       /* end of nothing */
    slots[n++] = p;
    p = (tq_shm_packet){now + 6, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {1, 1}};      /* a good one */
    slots[n++] = p;
    p = (tq_shm_packet){now + 7, 1, 1, TQ_SHM_EVENT, 9, 0, 0, {1, 1}};      /* absurd size */
    slots[n++] = p;
    __atomic_store_n(&r->tid, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 2, __ATOMIC_RELEASE);
    /* a second ring: a packet of no slots at all */
    tq_shm_ring *r2 = (tq_shm_ring *)((char *)r + h->ring_bytes);
    tq_shm_packet *slots2 = (tq_shm_packet *)(r2 + 1);
    p = (tq_shm_packet){now + 8, 1, 1, TQ_SHM_EVENT, 0, 0, 0, {1, 1}};
    slots2[0] = p;
  }
  if (!strcmp(mode, "kind") || !strcmp(mode, "slots")) {
    entityP1(h);
    uint64_t n = 0;
    tq_shm_packet p = {now, 0, 1, TQ_SHM_BEGIN, 1, 0, 7, {1}};
    slots[n++] = p;
    if (!strcmp(mode, "kind")) {
      p = (tq_shm_packet){now + 1, 1, 1, TQ_SHM_BEGIN, 1, 0, 8, {1, 1}}; /* an event sensor's begin */
      slots[n++] = p;
    } else {
      p = (tq_shm_packet){now + 1, 1, 1, TQ_SHM_EVENT, 2, 0, 0, {1, 1}}; /* two values in two slots */
      slots[n++] = p;
      memset(&slots[n++], 0, sizeof *slots); /* (its second slot) */
    }
    p = (tq_shm_packet){now + 2, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {1, 1}}; /* a good one */
    slots[n++] = p;
    __atomic_store_n(&r->tid, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
  }
  if (!strcmp(mode, "cached")) {
    tq_shm_entity *ents = (tq_shm_entity *)((char *)h + h->off_entities);
    strcpy(ents[1].name, "P1");
    ents[1].state = 1;
    ents[1].sensor = 1;
    strcpy(ents[2].name, "S"); /* a string: of no sensor */
    h->entities_taken = 2;
    tq_shm_packet p;
    memset(&p, 0, sizeof p);
    p = (tq_shm_packet){now, 0, 1, TQ_SHM_BEGIN, 1, 0, 7, {1}};
    slots[0] = p;
    p = (tq_shm_packet){now + 1, 2, 1, TQ_SHM_EVENT, 1, 0, 0, {2}};    /* Note("S"): valid */
    slots[1] = p;
    p = (tq_shm_packet){now + 2, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {2, 1}}; /* Ping with a string for Process */
    slots[2] = p;
    p = (tq_shm_packet){now + 3, 1, 1, TQ_SHM_EVENT, 1, 0, 0, {1, 0}}; /* a good one */
    slots[3] = p;
    __atomic_store_n(&r->tid, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
  }
  if (!strcmp(mode, "shrink")) {
    if (ftruncate(fd, 4096)) perror("garbage: shrink refused");
    else fprintf(stderr, "garbage: shrunk\n");
  }
  if (!strcmp(mode, "wide") || !strcmp(mode, "offsets") || !strcmp(mode, "resync") || !strcmp(mode, "nrings") ||
      !strcmp(mode, "future") || !strcmp(mode, "shrink")) {
    entityP1(h);
    uint32_t rs = h->ring_slots;
    uint64_t n = 0;
    tq_shm_packet p;
    p = (tq_shm_packet){now, 0, tq_shm_gen(n, rs), TQ_SHM_BEGIN, 1, 0, 7, {1}};
    slots[n] = p, n++;
    if (!strcmp(mode, "resync")) { /* a packet of no slots */
      p = (tq_shm_packet){now + 1, 1, tq_shm_gen(n, rs), TQ_SHM_EVENT, 0, 0, 0, {1, 1}};
      slots[n] = p, n++;
    }
    if (!strcmp(mode, "future")) {
      p = (tq_shm_packet){now + 3600000000000ull, 1, tq_shm_gen(n, rs), TQ_SHM_EVENT, 1, 0, 0, {1, 0}};
      slots[n] = p, n++;
    }
    for (int i = 0; i < 100; i++) {
      p = (tq_shm_packet){now + 2 + (uint64_t)i, 1, tq_shm_gen(n, rs), TQ_SHM_EVENT, 1, 0, 0, {1, 1}};
      slots[n] = p, n++;
    }
    if (!strcmp(mode, "wide")) { /* 19 values in 3 slots */
      p = (tq_shm_packet){now + 500, 2, 0, TQ_SHM_EVENT, 3, 0, 0, {1, 2, 3, 4, 5}};
      slots[n] = p;
      tq_shm_cont c;
      memset(&c, 0x41, sizeof c);
      c.gen = 0;
      memcpy(&slots[n + 1], &c, sizeof c);
      memcpy(&slots[n + 2], &c, sizeof c);
      __atomic_store_n(&slots[n].gen, tq_shm_gen(n, rs), __ATOMIC_RELEASE);
      n += 3;
    }
    __atomic_store_n(&r->head, n, __ATOMIC_RELEASE);
    __atomic_store_n(&r->tid, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
    if (!strcmp(mode, "nrings")) { /* after the monitor checked the header and drained */
      for (int i = 0; i < 10000 && __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) < n; i++) usleep(1000);
      h->nrings = 100000;
      h->max_sensors = 1000000;
    }
  }
  if (!strcmp(mode, "random")) {
    unsigned s = 12345;
    unsigned char *b = (unsigned char *)slots;
    for (size_t i = 0; i < 64 * 256; i++) {
      s = s * 1103515245u + 12345u;
      b[i] = (unsigned char)(s >> 16);
    }
    for (uint32_t i = 0; i < 256; i++) slots[i].gen = tq_shm_gen(i, h->ring_slots);
    __atomic_store_n(&r->tid, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rings_taken, 1, __ATOMIC_RELEASE);
  }
  struct timespec d = {0, 400 * 1000 * 1000};
  nanosleep(&d, NULL);
  return 0;
}
