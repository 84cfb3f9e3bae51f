/*
** shmbench.c - the monitor's side of the drain benchmark: the shm PM's own
** code (sensors/shm.c, included here with its PM renamed) drains the rings
** of a child process writing packets as fast as it can, converts and
** validates them and merges them in time order; a counting stand-in for
** the engine receives them.
*/
#define snsShmPm benchShmPm
#include "../sensors/shm.c"
#undef snsShmPm

static double benchNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
/* The monitor thread's own CPU time: the rate it can drain at, whatever
** else the machine runs. */
static double benchCpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t produced;
static int benchProduce(tq_pm_global *g, const tq_record *r) {
  (void)g;
  (void)r;
  produced++;
  return 0;
}
static int64_t benchSymbol(tq_pm_global *g, const char *text, int len) {
  (void)g;
  return tqSym(text, len < 0 ? strlen(text) : (size_t)len);
}

int snsBenchDrain(const char *self, long n, double rate) {
  tq_pm_global g;
  memset(&g, 0, sizeof g);
  g.produce = benchProduce;
  g.symbol = benchSymbol;
  tq_pm_private p;
  memset(&p, 0, sizeof p);
  Shm *s = tqCalloc(1, sizeof *s);
  s->g = &g;
  s->qLimit = SHM_QBYTES; /* (the queues' bound, as shmStart sets it) */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s\x1fproduce\x1f%ld\x1f%.0f", self, n, rate);
  setenv("TQMON_RING_BITS", "20", 0);
  if (createSegment(s, &p) || startChild(s, &p, cmd)) {
    fprintf(stderr, "sensorbench: %s\n", p.message);
    return 1;
  }
  while (__atomic_load_n(&s->h->state, __ATOMIC_ACQUIRE) == TQ_SHM_CREATED) usleep(1000);
  __atomic_store_n(&s->h->monitor_ready, 1, __ATOMIC_RELEASE); /* (the start handshake) */
  /* the catalog as mapCatalog would map it, every sensor kept */
  s->nsens = (int)s->h->nsensors;
  memcpy(s->cat, (char *)s->h + s->h->off_catalog, sizeof(tq_shm_sensor) * (size_t)s->nsens);
  /* (bench/sensorbench.tq declares one entity type, Worker: every
  ** entity-typed value is one, as mapCatalog reads from the program) */
  int worker = -1;
  for (int i = 0; i < s->nsens; i++)
    if (s->cat[i].is_entity) worker = i;
  for (int i = 0; i < s->nsens; i++) {
    s->relOf[i] = i + 1;
    memset(s->entOf[i], -1, sizeof s->entOf[i]);
    for (int k = 0; k < s->cat[i].nattr; k++)
      if (s->cat[i].kind[k] == TQ_SHM_ENTITY) s->entOf[i][k] = (signed char)worker;
  }
  planConvert(s);
  calibrate(s);
  /* enable the child's worker (handle 1) on Tick */
  while (s->h->entities_taken < 1) usleep(100);
  setCounter(s, 1, 1, 1);
  double t0 = 0, t1 = 0, c0 = 0, c1 = 0;
  int64_t before = 0;
  /* the rate is taken from the first packet to the last one drained (not
  ** to the child's exit: when it dropped some, the count never reaches n,
  ** and the wait for its end is no draining) */
  for (;;) {
    int64_t was = produced;
    uint64_t took = drain(s);
    merge(s, TQ_FOREVER - 1);
    if (produced > 1 && !t0) {
      t0 = benchNow();
      c0 = benchCpu();
      before = produced;
    } else if (produced != was && t0) {
      t1 = benchNow();
      c1 = benchCpu();
    }
    if (produced >= n + 1) break; /* the entity's begin, then n events */
    if (produced == was && !alive(s)) { /* only when idle: waitpid is a system call */
      was = produced;
      drain(s);
      merge(s, TQ_FOREVER - 1);
      if (produced != was) {
        t1 = benchNow();
        c1 = benchCpu();
      }
      break;
    }
    drainPause(s, took, s->chunked); /* (as the monitor's drain thread waits when it caught up) */
  }
  uint64_t dropped = 0; /* (the rings' counts: the producer's drops) */
  for (uint32_t i = 0; i < s->h->nrings; i++)
    dropped += ((tq_shm_ring *)((char *)s->h + s->h->off_rings + s->h->ring_bytes * i))->dropped;
  const char *k = rate > 0 ? "drain.paced" : "drain";
  if (rate > 0) printf("drain.paced.rate_asked %.0f\n", rate);
  printf("%s.packets %lld\n", k, (long long)produced);
  printf("%s.dropped %llu\n", k, (unsigned long long)dropped);
  printf("%s.invalid %lld\n", k, (long long)s->bad);
  printf("%s.seconds %.4f\n", k, t1 - t0);
  printf("%s.rate %.0f\n", k, t1 > t0 ? (double)(produced - before) / (t1 - t0) : 0.0);
  printf("%s.cpu_seconds %.4f\n", k, c1 - c0);
  printf("%s.cpu_rate %.0f\n", k, c1 > c0 ? (double)(produced - before) / (c1 - c0) : 0.0);
  kill(s->pid, SIGTERM);
  waitpid(s->pid, NULL, 0);
  munmap(s->h, s->size);
  shm_unlink(s->name);
  return 0;
}
