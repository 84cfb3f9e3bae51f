/*
** sensorbench.c - the cost of a sensor call, tqmon's generated sensor next
** to an LTTng-UST tracepoint with the same two 64-bit values, and the rate
** at which one monitor drains and merges packets from a busy thread.
**
**   sensorbench tqmon N        ns per call: disabled sensor, enabled sensor
**                              whose entity is not enabled, enabled sensor
**                              writing a packet (a drainer thread empties
**                              the ring as the monitor would; the median of
**                              bursts the ring has room for), and a flood
**                              of calls (with drops)
**   sensorbench lttng MODE N   ns per call of the tracepoint; MODE names the
**                              state bench/run.sh set up with lttng(1):
**                              disabled, filtered (enabled, a filter that
**                              rejects every event), enabled
**   sensorbench drain N [RATE] the monitor's side (sensors/shm.c, compiled in
**                              here) of a child that writes N packets as fast
**                              as it can (or RATE a second): packets/s drained
**                              and merged, and the packets dropped
** Output: "key value" lines for bench/run.sh.  Every per-call figure is
** the median of 7 repetitions.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "sensors.h" /* generated from bench/sensorbench.tq */
#ifdef TQBENCH_LTTNG
#include "tqbench_tp.h"
#endif

static double nowS(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ================================================================ tqmon */

static volatile int draining = 1;

typedef struct Drain {
  tq_shm_ring *r;
  uint32_t slots;   /* its slots */
} Drain;

/* Drains the ring as the monitor's thread does (sensors/shm.c): the
** packets published since the last look, found by their generation, then
** a short wait when it caught up.  Spin, the sensor's cost would measure
** the drainer (it would read each slot as the producer writes it). */
static void *drainRing(void *arg) {
  Drain *d = arg;
  const tq_shm_packet *slots = (const tq_shm_packet *)(d->r + 1);
  uint32_t cap = d->slots;
  struct timespec caught = {0, 50 * 1000};
  uint64_t tail = d->r->tail;
  while (draining) {
    uint64_t start = tail;
    while (tail - start < 4096 && __atomic_load_n(&slots[tail & (cap - 1)].gen, __ATOMIC_ACQUIRE) == tq_shm_gen(tail, cap))
      tail += slots[tail & (cap - 1)].nslots;
    if (tail != start) __atomic_store_n(&d->r->tail, tail, __ATOMIC_RELEASE);
    if (tail - start < 1024) nanosleep(&caught, NULL);
  }
  return NULL;
}

static int cmpD(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of REPS repetitions (one slow or one lucky repetition on a
** shared machine does not move it). */
#define REPS 7
static double median(double *v) {
  qsort(v, REPS, sizeof v[0], cmpD);
  return v[REPS / 2];
}

static double loopTq(tq_entity w, long n) {
  double v[REPS];
  for (int rep = 0; rep < REPS; rep++) {
    double t0 = nowS();
    for (long i = 0; i < n; i++) tq_Tick(w, i);
    v[rep] = (nowS() - t0) * 1e9 / (double)n;
  }
  return median(v);
}

/* ns per packet written while the ring has room, whatever the drainer's
** speed: n calls in bursts of half the ring, each begun when the drainer
** has emptied the ring (the wait is not timed; the drainer runs through
** the bursts, reading the slots as they are published).  REPS repetitions:
** their median, least and greatest in ns[0..2]. */
static void burstTq(tq_entity w, const tq_shm_ring *r, uint32_t slots, long n, double ns[3]) {
  double v[REPS];
  long burst = slots / 2;
  struct timespec pause = {0, 20 * 1000};
  for (int rep = 0; rep < REPS; rep++) {
    double sum = 0;
    for (long done = 0; done < n; done += burst) {
      long b = n - done < burst ? n - done : burst;
      while (tqs_me.head != __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE)) nanosleep(&pause, NULL);
      double t0 = nowS();
      for (long i = 0; i < b; i++) tq_Tick(w, i);
      sum += nowS() - t0;
    }
    v[rep] = sum * 1e9 / (double)n;
  }
  ns[0] = median(v);
  ns[1] = v[0];
  ns[2] = v[REPS - 1];
}

static int benchTqmon(long n) {
  if (tqs_max_entities == 0) {
    fprintf(stderr, "sensorbench: no sensor segment: %s\n", tqs_error());
    return 1;
  }
  tq_entity w = tq_Worker_begin("W1");
  tq_entity other = tq_Worker_begin("W2");
  printf("tqmon.disabled_ns %.3f\n", loopTq(w, n));
#if defined(__x86_64__)
  /* the floor of a packet: reading the time stamp counter */
  double tsc[REPS];
  for (int rep = 0; rep < REPS; rep++) {
    uint64_t sum = 0;
    double t0 = nowS();
    for (long i = 0; i < n; i++) sum += __rdtsc();
    tsc[rep] = (nowS() - t0) * 1e9 / (double)n + (double)(sum & 1) * 1e-12;
  }
  printf("tqmon.tsc_ns %.3f\n", median(tsc));
#endif
  /* as the monitor does: the sensor is in use (another entity enabled) */
  tqs_on[TQ_SENSOR_Tick] = 1;
  tqs_cnt[(uint64_t)other * tqs_max_sensors + TQ_SENSOR_Tick] = 1;
  printf("tqmon.entity_off_ns %.3f\n", loopTq(w, n));
  /* enabled on w: every call writes a packet; a thread drains the ring */
  tqs_cnt[(uint64_t)w * tqs_max_sensors + TQ_SENSOR_Tick] = 1;
  tq_Tick(w, 0); /* takes the ring */
  uint64_t dropped0 = tqs_dropped();
  printf("tqmon.packet_bytes %d\n", (int)sizeof(tq_shm_packet));
  Drain d = {NULL, 0};
  tq_shm_header *h = tqs_segment();
  for (uint32_t i = 0; i < h->nrings; i++) {
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + h->off_rings + h->ring_bytes * i);
    if (r->tid) {
      d.r = r;
      d.slots = h->ring_slots;
      break;
    }
  }
  pthread_t th;
  pthread_create(&th, NULL, drainRing, &d);
  double ns[3];
  burstTq(w, d.r, d.slots, n, ns);
  printf("tqmon.ring_slots %u\n", d.slots);
  printf("tqmon.packet_ns %.3f\n", ns[0]);
  printf("tqmon.packet_ns_min %.3f\n", ns[1]);
  printf("tqmon.packet_ns_max %.3f\n", ns[2]);
  printf("tqmon.packet_dropped %llu\n", (unsigned long long)(tqs_dropped() - dropped0));
  /* a flood: calls back to back, the drainer left behind (its drops are
  ** cheaper than a write: this ns per call is not the write's cost) */
  uint64_t dropped1 = tqs_dropped();
  printf("tqmon.flood_ns %.3f\n", loopTq(w, n));
  draining = 0;
  pthread_join(th, NULL);
  printf("tqmon.flood_dropped %llu\n", (unsigned long long)(tqs_dropped() - dropped1));
  printf("tqmon.calls %ld\n", n * REPS * 4);
  return 0;
}

/* ================================================================ LTTng-UST */

static int benchLttng(const char *mode, long n) {
#ifdef TQBENCH_LTTNG
  double v[REPS];
  for (int rep = 0; rep < REPS; rep++) {
    double t0 = nowS();
    for (long i = 0; i < n; i++) lttng_ust_tracepoint(tqbench, tick, 1, i);
    v[rep] = (nowS() - t0) * 1e9 / (double)n;
  }
  printf("lttng.%s_ns %.3f\n", mode, median(v));
  printf("lttng.calls %ld\n", n * REPS);
  return 0;
#else
  (void)mode;
  (void)n;
  printf("lttng.unavailable built without liblttng-ust-dev\n");
  return 0;
#endif
}

/* ================================================================ drain */

/* The child of the drain benchmark: n packets as fast as it can, or at
** rate packets/s (paced by the clock every 256 packets). */
static int produceChild(long n, double rate) {
  tq_entity w = tq_Worker_begin("W1");
  /* wait until the monitor enables us */
  for (int i = 0; i < 10000 && !tq_Tick_enabled(w); i++) usleep(1000);
  double t0 = nowS();
  for (long i = 0; i < n; i++) {
    tq_Tick(w, i);
    if (rate > 0 && (i & 255) == 255)
      while (nowS() - t0 < (double)(i + 1) / rate) {
      }
  }
  tq_Worker_end(w);
  /* stay until the monitor has read everything */
  usleep(300 * 1000);
  return 0;
}

int snsBenchDrain(const char *self, long n, double rate); /* in shmbench.c */

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "tqmon")) return benchTqmon(atol(argv[2]));
  if (argc >= 4 && !strcmp(argv[1], "lttng")) return benchLttng(argv[2], atol(argv[3]));
  if (argc >= 3 && !strcmp(argv[1], "produce")) return produceChild(atol(argv[2]), argc > 3 ? atof(argv[3]) : 0);
  if (argc >= 3 && !strcmp(argv[1], "drain")) return snsBenchDrain(argv[0], atol(argv[2]), argc > 3 ? atof(argv[3]) : 0);
  fprintf(stderr, "usage: sensorbench tqmon N | lttng disabled|filtered|enabled N | drain N [RATE]\n");
  return 2;
}
