/*
** tqsensor.h - the runtime of generated sensors, linked into the programs
** tqmon watches (the subjects): build/libtqsensor.a, which depends on
** nothing but libc and pthreads.  A program includes the header written by
** `tqmon sensors gen FILE.tq -o sensors.h`; that header includes this one
** and defines one inline function per sensor on top of these primitives.
**
** Cost model (after Linux static keys): a sensor no query needs is one
** load and one predictable branch on its word in the shared segment; an
** enabled sensor checks the enable counter of its flag entity and, when
** set, writes one 64-byte packet (a TSC timestamp, the sensor, the values)
** into its thread's ring; a full ring drops the packet and counts it.
**
** The segment is the monitor's, handed over as the descriptor
** TQMON_SHM_FD (tqmon run --exec: the program waits at its start, up to
** TQMON_START_TIMEOUT ms, until the monitor is ready), or else the subject
** creates /tqmon.PID itself (mode 0600; a name another user took is
** refused, and said so on standard error) for a monitor to attach to
** (tqmon run --attach PID) and removes it at exit.  Until the segment is
** mapped, every sensor is off.  sensors/README.md has the trust model.
*/
#ifndef TQSENSOR_H
#define TQSENSOR_H

#include <stdint.h>

#include "tqshm.h"

typedef uint32_t tq_entity;                     /* an entity handle; 0: none */
typedef struct tq_interval { uint64_t id; } tq_interval; /* an interval begun; id 0: not reported */

/* The segment's sensor words, read by the generated sensors: a page of
** this program's own memory at a fixed address, over which tqs_init maps
** the segment's page of sensor words (so that a disabled sensor is one
** load at a constant address and a branch, as a tracepoint's state is; a
** zero page until mapped, and in a child of fork).  tqs_on points at it;
** tqs_cnt is the segment's enable counters (a zero array until mapped). */
#define TQS_ON_PAGE 4096
extern volatile uint32_t tqs_onw[TQS_ON_PAGE / sizeof(uint32_t)];
extern volatile uint32_t *tqs_on;
extern volatile uint32_t *tqs_cnt;
extern uint32_t tqs_max_sensors, tqs_max_entities;

/* Maps the segment and writes the subject's catalog (n sensors).  Called
** by the generated header's constructor; idempotent.  Returns 0, or -1 when
** no segment could be mapped (every sensor stays off; the reason is in
** tqs_error()). */
int tqs_init(const tq_shm_sensor *cat, int n);
const char *tqs_error(void);

/* Is sensor s enabled on entity e (its counter is nonzero)? */
static inline int tqs_enabled(uint32_t s, tq_entity e) {
  return e < tqs_max_entities && tqs_cnt[(uint64_t)e * tqs_max_sensors + s] != 0;
}

/* The sensors' filters (rule SF; NULL until mapped), and the slow path of
** tqs_pass. */
extern volatile tq_shm_filter *tqs_filt;
int tqs_check(uint32_t s, int n, const int64_t *v);

/* Should sensor s write a packet with values v[0..n) (its filter: the monitor's
** queries select on them)?  One load when the sensor has no filter; a
** packet not written is counted in the segment. */
static inline int tqs_pass(uint32_t s, int n, const int64_t *v) {
  return !tqs_filt || !__atomic_load_n(&tqs_filt[s].n, __ATOMIC_ACQUIRE) || tqs_check(s, n, v);
}

/* The calling thread's ring, as its writer sees it (the runtime's; the
** inline path below reads and advances it).  The inline path writes while
** head < lim; lim is 0 until the thread took a ring, and otherwise the
** least of: the ring seems full (tail, the monitor's tail as last read,
** plus the ring's slots), the lap's end (a new generation) and the next
** multiple of 256 (the head hint); the packet at lim goes the slow way,
** which sets lim again.  word is the second 8 bytes of a one-slot packet
** at head..lim, but for its sensor and kind: the generation, nslots 1 and
** aux (req), so that the inline path writes them in one store. */
typedef struct tqs_thread {
  tq_shm_packet *slots;        /* its ring's slots (NULL: none yet) */
  uint64_t head;               /* slots written */
  uint64_t lim;                /* the inline path writes while head < lim */
  uint64_t word;               /* gen << 8 | 1 << 24 | (uint64_t)req << 32 */
  uint64_t tail;               /* the monitor's tail, cached */
  uint64_t mask;               /* ring_slots - 1 */
  uint32_t shift;              /* log2(ring_slots): a slot's generation */
  uint32_t req;                /* the sample request being answered (service thread) */
  tq_shm_ring *ring;
} tqs_thread;
extern __thread tqs_thread tqs_me __attribute__((tls_model("initial-exec")));

/* Writes a packet into the calling thread's ring (the slow path: a packet
** of more than one slot, the thread's first, a ring that seems full). */
void tqs_put_slow(uint32_t s, int kind, uint64_t id, int n, const int64_t *v);
/* The time stamp of a packet (header.time_kind). */
uint64_t tqs_clock(void);

/* Writes a packet into the calling thread's ring: values v[0..n) (entity
** values are handles).  Drops and counts it when the ring is full.  A
** packet of one slot with head < lim is written here, inline: the time
** stamp counter, plain stores into the slot (the slot 8 ahead, of the
** previous lap, which the monitor read, is fetched for writing meanwhile),
** and last the 8 bytes that hold its generation, one release store that
** publishes it (sensor, generation, kind, nslots, aux: tq_shm_packet's
** layout, little-endian).  The ring's memory has no declared type: that
** store gives those bytes theirs (uint64_t), as the monitor reads them
** (bytes).  The head hint every 256 slots is the slow path's. */
static inline void tqs_put(uint32_t s, int kind, uint64_t id, int n, const int64_t *v) {
#if defined(__x86_64__) || defined(__i386__)
  tqs_thread *me = &tqs_me;
  uint64_t head = me->head;
  if (n <= TQ_SHM_VALS0 && __builtin_expect(head < me->lim, 1)) {
    tq_shm_packet *p = &me->slots[head & me->mask];
    __asm__ volatile("prefetchw %0" ::"m"(me->slots[(head + 8) & me->mask])); /* (a NOP where not known) */
    p->time = __builtin_ia32_rdtsc();
    p->id = id;
    for (int i = 0; i < n; i++) p->v[i] = v[i];
    __atomic_store_n((uint64_t *)(void *)&p->sensor, me->word | (uint8_t)s | (uint64_t)(uint8_t)kind << 16,
                     __ATOMIC_RELEASE); /* published */
    me->head = head + 1;
    return;
  }
#endif
  tqs_put_slow(s, kind, id, n, v);
}

/* A disable-traced sensor fired on entity e: its counter drops by one. */
void tqs_consume(uint32_t s, tq_entity e);

/* A fresh interval id (never 0). */
uint64_t tqs_next_id(void);

/* Entities of the entity relation s: declares one named name with its
** other attributes a[0..n) (a tuple of s begins); a new state (the open
** tuple ends, a new one begins); the end of the entity.  Names longer than
** TQ_SHM_NAME_LEN - 1 are cut.  Returns the handle, 0 when the segment has
** no slot left (counted). */
tq_entity tqs_entity_begin(uint32_t s, const char *name, int n, const int64_t *a);
void tqs_entity_state(tq_entity h, int n, const int64_t *a);
void tqs_entity_end(tq_entity h);

/* A string value: an entity slot of no relation holding the text (interned:
** the same text gives the same value).  Slow path. */
int64_t tqs_string(const char *text);

/* Sampled sensor s: cb(who, arg) answers a sample request about entity who
** by calling the sensor's _sample function for each tuple.  Called on the
** runtime's service thread. */
void tqs_sampler(uint32_t s, tq_entity who, void (*cb)(tq_entity who, void *arg), void *arg);

/* The mapped segment (NULL until tqs_init succeeds): for tools and tests. */
tq_shm_header *tqs_segment(void);

/* Packets dropped by this process so far (full rings, no ring). */
uint64_t tqs_dropped(void);

#endif
