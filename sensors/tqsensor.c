/*
** tqsensor.c - the runtime of generated sensors (see tqsensor.h), linked
** into the subject program as build/libtqsensor.a.
**
** Invariants:
**   - a thread writes only its own ring (single producer); it publishes a
**     packet by a release store of its generation byte after writing its
**     slots (tqshm.h), and reads the monitor's tail only when its cached
**     copy says full: it stores to no line the monitor polls (the ring's
**     head is a hint, stored every 256 slots and when the ring is given
**     back);
**   - entity slots are handed out once (handles are never reused), and a
**     slot is written before the packet that names it is published;
**   - nothing here blocks or allocates on the sensor path; the sample
**     service thread is the only thread the runtime starts;
**   - a packet that cannot be written (its ring full, no ring, no entity
**     slot) is counted once, per sensor, with the time its episode began
**     (tq_shm_loss, tq_shm_gloss): the monitor reports every one;
**   - a subject started by a monitor (TQMON_SHM_FD) waits at its start,
**     up to TQMON_START_TIMEOUT ms, until the monitor is ready, so that its
**     first sensor call is seen; an entity it declares reports on every
**     sensor in use (TQ_SHM_PENDING) until the monitor wrote its counters;
**   - its own segment (/tqmon.PID, no monitor yet) is one it made: a name
**     taken by another user is refused, and said so on standard error.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tqsensor.h"
#include "tqshmgc.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TQS_TSC 1
#else
#define TQS_TSC 0
#endif

#define TQS_MAX_SENSORS 64

static volatile uint32_t zeroOn[TQS_MAX_SENSORS];
/* (alone on its page: the segment's page of sensor words is mapped over it) */
volatile uint32_t tqs_onw[TQS_ON_PAGE / sizeof(uint32_t)] __attribute__((aligned(TQS_ON_PAGE)));
volatile uint32_t *tqs_on = tqs_onw;
volatile uint32_t *tqs_cnt = zeroOn;
uint32_t tqs_max_sensors = 0, tqs_max_entities = 0;

static tq_shm_header *seg;          /* the mapped segment, NULL until tqs_init succeeds */
static tq_shm_entity *ents;
static tq_shm_request *reqs;
static tq_shm_gloss *glosses;
static char segName[64];
static int ownSegment;              /* we created it: remove it at exit */
static char errText[256];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t droppedNoRing;
static uint8_t entAttr[TQS_MAX_SENSORS];  /* per sensor: the attribute holding its flag entity (255: none) */

__thread tqs_thread tqs_me __attribute__((tls_model("initial-exec")));
static __thread tq_shm_loss *myLoss; /* its ring's loss records, one per sensor */
static __thread int myNoRing;       /* no ring was free for this thread */

const char *tqs_error(void) { return errText; }
tq_shm_header *tqs_segment(void) { return seg; }

static inline uint64_t now(void) {
#if TQS_TSC
  return __rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}
uint64_t tqs_clock(void) { return now(); }

/* ================================================================ rings */

/* The inline path's packet header word is tq_shm_packet's bytes 8..15. */
_Static_assert(offsetof(tq_shm_packet, sensor) == 8 && offsetof(tq_shm_packet, gen) == 9 &&
                   offsetof(tq_shm_packet, kind) == 10 && offsetof(tq_shm_packet, nslots) == 11 &&
                   offsetof(tq_shm_packet, aux) == 12,
               "tqs_put's header word");

/* Sets the thread's lim and word (tqsensor.h) for its head, tail and req. */
static void setLim(tqs_thread *me) {
  if (!me->slots) {
    me->lim = 0;
    return;
  }
  uint64_t head = me->head, lim = (head | me->mask) + 1, hint = (head | 255) + 1, room = me->tail + me->mask + 1;
  if (hint < lim) lim = hint;
  if (room < lim) lim = room;
  me->lim = lim;
  me->word = (uint64_t)(((head >> me->shift) & 0x7f) + 1) << 8 | (uint64_t)1 << 24 | (uint64_t)me->req << 32;
}

static pthread_key_t ringKey;
static pthread_once_t ringKeyOnce = PTHREAD_ONCE_INIT;

/* A thread that ends gives its ring back (the monitor drains what is left;
** the next owner continues after it, so the ring stays in time order). */
static void releaseRing(void *r) {
  tq_shm_ring *ring = r;
  if (!ring) return;
  if (ring == tqs_me.ring) {
    __atomic_store_n(&ring->head, tqs_me.head, __ATOMIC_RELEASE);
    tqs_me.slots = NULL;
    tqs_me.lim = 0;
    tqs_me.ring = NULL;
  }
  __atomic_store_n(&ring->tid, 0, __ATOMIC_RELEASE);
}
static void makeRingKey(void) { pthread_key_create(&ringKey, releaseRing); }

static tq_shm_ring *ringAt(uint32_t i) { return (tq_shm_ring *)((char *)seg + seg->off_rings + seg->ring_bytes * i); }

static int acquireRing(void) {
  if (!seg || myNoRing) return -1;
  pthread_once(&ringKeyOnce, makeRingKey);
  uint32_t tid = (uint32_t)syscall(SYS_gettid);
  for (uint32_t i = 0; i < seg->nrings; i++) {
    tq_shm_ring *r = ringAt(i);
    uint32_t free0 = 0;
    if (__atomic_compare_exchange_n(&r->tid, &free0, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
#ifdef MADV_POPULATE_WRITE
      /* its pages now, not a fault every 64 packets on the sensor path (a
      ** kernel without it: the faults stay) */
      madvise(r, seg->ring_bytes, MADV_POPULATE_WRITE);
#endif
      tqs_me.ring = r;
      myLoss = tq_shm_loss_at(seg, i, 0);
      tqs_me.head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
      tqs_me.tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
      tqs_me.mask = seg->ring_slots - 1;
      tqs_me.shift = (uint32_t)__builtin_ctz(seg->ring_slots);
      tqs_me.slots = (tq_shm_packet *)(r + 1);
      setLim(&tqs_me); /* (last: the inline path writes from here on) */
      __atomic_fetch_add(&seg->rings_taken, 1, __ATOMIC_RELAXED);
      pthread_setspecific(ringKey, r);
      return 0;
    }
  }
  myNoRing = 1;
  return -1;
}

/* The flag entity of a packet of sensor s (0: none or not known). */
static uint32_t entityOf(uint32_t s, int n, const int64_t *v) {
  uint32_t a = s < TQS_MAX_SENSORS ? entAttr[s] : 255;
  return a < (uint32_t)n && v[a] > 0 && v[a] <= UINT32_MAX ? (uint32_t)v[a] : 0;
}

/* Counts a packet of sensor s that found no ring or no entity slot. */
static void loseGlobal(uint32_t s) {
  if (!seg || s >= seg->max_sensors) return;
  tq_shm_gloss *gl = &glosses[s];
  uint64_t zero = 0;
  __atomic_compare_exchange_n(&gl->first, &zero, now(), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  __atomic_fetch_add(&gl->count, 1, __ATOMIC_RELEASE);
}

/* Counts a packet of sensor s its ring had no room for (the ring's
** producer only: plain stores; the count last).  Sample answers are not
** counted here: the monitor counts the request it did not get an answer to. */
static void loseRing(uint32_t s, int kind, int n, const int64_t *v) {
  if (s >= seg->max_sensors || kind == TQ_SHM_SAMPLE || kind == TQ_SHM_SAMPLE_DONE) return;
  tq_shm_loss *l = &myLoss[s];
  uint32_t ent = entityOf(s, n, v);
  uint64_t c = l->count;
  if (c == __atomic_load_n(&l->seen, __ATOMIC_ACQUIRE)) { /* a new episode */
    l->first = now();
    l->entity = ent;
  } else if (l->entity != ent) {
    l->entity = UINT32_MAX;
  }
  if (kind == TQ_SHM_BEGIN || kind == TQ_SHM_END) l->spans++;
  __atomic_store_n(&l->count, c + 1, __ATOMIC_RELEASE);
}

/* ================================================================ filters */

volatile tq_shm_filter *tqs_filt;

/* The name of an entity or string handle ("" when it is none). */
static const char *handleName(int64_t h) {
  if (!seg || h <= 0 || (uint64_t)h >= seg->max_entities) return "";
  return (const char *)ents[h].name;
}

static int condHolds(const tq_shm_cond *c, int64_t v) {
  int r;
  if (c->isname) {
    r = strncmp(handleName(v), c->text, TQ_SHM_NAME_LEN - 1) != 0;
  } else if (c->fcmp) {
    double a;
    if (c->fcmp == 2) memcpy(&a, &v, sizeof a); /* a float attribute */
    else a = (double)v;
    r = a < c->fval ? -1 : a > c->fval ? 1 : 0;
  } else {
    r = v < c->val ? -1 : v > c->val ? 1 : 0;
  }
  switch (c->op) {
    case TQ_SHM_EQ: return r == 0;
    case TQ_SHM_NE: return r != 0;
    case TQ_SHM_LT: return r < 0;
    case TQ_SHM_LE: return r <= 0;
    case TQ_SHM_GT: return r > 0;
    default: return r >= 0;
  }
}

int tqs_check(uint32_t s, int nv, const int64_t *v) {
  volatile tq_shm_filter *f = &tqs_filt[s];
  uint32_t n = __atomic_load_n(&f->n, __ATOMIC_ACQUIRE);
  if (n > TQ_SHM_CONDS) return 1;
  for (uint32_t i = 0; i < n;) {
    uint8_t g = f->c[i].group;
    int ok = 1;
    for (; i < n && f->c[i].group == g; i++)
      if (ok && (f->c[i].attr >= nv || !condHolds((const tq_shm_cond *)&f->c[i], v[f->c[i].attr]))) ok = 0;
    if (ok) return 1;
  }
  __atomic_fetch_add(&f->suppressed, 1, __ATOMIC_RELAXED);
  return 0;
}

/* Writes a packet stamped t (putAt) or now (tqs_put_slow). */
static void putAt(uint32_t s, int kind, uint64_t id, int n, const int64_t *v, uint64_t t);
void tqs_put_slow(uint32_t s, int kind, uint64_t id, int n, const int64_t *v) { putAt(s, kind, id, n, v, now()); }

static void putAt(uint32_t s, int kind, uint64_t id, int n, const int64_t *v, uint64_t t) {
  tqs_thread *me = &tqs_me;
  if (__builtin_expect(!me->ring, 0) && acquireRing()) {
    if (seg) {
      __atomic_fetch_add(&seg->lost_no_ring, 1, __ATOMIC_RELAXED);
      if (kind != TQ_SHM_SAMPLE && kind != TQ_SHM_SAMPLE_DONE) loseGlobal(s);
    }
    __atomic_fetch_add(&droppedNoRing, 1, __ATOMIC_RELAXED);
    return;
  }
  tq_shm_ring *ring = me->ring;
  uint32_t nslots = n <= TQ_SHM_VALS0 ? 1 : 1 + (uint32_t)(n - TQ_SHM_VALS0 + TQ_SHM_VALSN - 1) / TQ_SHM_VALSN;
  uint64_t cap = seg->ring_slots, mask = cap - 1, head = me->head;
  if (head + nslots - me->tail > cap) {
    me->tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    if (head + nslots - me->tail > cap) {
      __atomic_store_n(&ring->dropped, ring->dropped + 1, __ATOMIC_RELAXED);
      loseRing(s, kind, n, v);
      return;
    }
  }
  tq_shm_packet *slots = me->slots;
  tq_shm_packet *p = &slots[head & mask];
  p->time = t;
  p->sensor = (uint8_t)s;
  p->kind = (uint8_t)kind;
  p->nslots = (uint8_t)nslots;
  p->aux = me->req;
  p->id = id;
  int k = n < TQ_SHM_VALS0 ? n : TQ_SHM_VALS0;
  for (int i = 0; i < k; i++) p->v[i] = v[i];
  for (uint32_t c = 1; c < nslots; c++) {
    tq_shm_cont *q = (tq_shm_cont *)&slots[(head + c) & mask];
    q->gen = 0;
    if (k < n) q->v0 = v[k++];
    for (int i = 0; i < TQ_SHM_VALSN - 1 && k < n; i++) q->v[i] = v[k++];
  }
  __atomic_store_n(&p->gen, tq_shm_gen(head, (uint32_t)cap), __ATOMIC_RELEASE); /* published */
  me->head = head + nslots;
  /* the hint, when this packet begins or crosses a multiple of 256 (the
  ** inline path stops at each) */
  if ((head ^ me->head) >> 8 || !(head & 255)) __atomic_store_n(&ring->head, me->head, __ATOMIC_RELEASE);
  setLim(me);
}

void tqs_consume(uint32_t s, tq_entity e) {
  if (e >= tqs_max_entities) return;
  volatile uint32_t *c = &tqs_cnt[(uint64_t)e * tqs_max_sensors + s];
  uint32_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
  /* (a pending counter is the monitor's to replace, not a count) */
  while (v && !(v & TQ_SHM_PENDING) && !__atomic_compare_exchange_n(c, &v, v - 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

uint64_t tqs_next_id(void) {
  static uint64_t nextId = 1; /* (before the segment: never reported) */
  return __atomic_fetch_add(seg ? &seg->next_id : &nextId, 1, __ATOMIC_RELAXED);
}

uint64_t tqs_dropped(void) {
  uint64_t n = __atomic_load_n(&droppedNoRing, __ATOMIC_RELAXED);
  if (seg)
    for (uint32_t i = 0; i < seg->nrings; i++) n += ringAt(i)->dropped;
  return n;
}

/* ================================================================ entities */

/* The counters of entity h for the sensors in use: pending, so that its
** packets are reported until the monitor, having seen the entity, writes
** what the queries asked for (an enabling never comes after the fact). */
static void pendCounters(tq_entity h) {
  for (uint32_t s = 0; s < seg->nsensors && s < tqs_max_sensors; s++) {
    if (!(__atomic_load_n(&tqs_on[s], __ATOMIC_ACQUIRE) & TQ_SHM_USED)) continue;
    uint32_t zero = 0;
    __atomic_compare_exchange_n(&tqs_cnt[(uint64_t)h * tqs_max_sensors + s], &zero, TQ_SHM_PENDING, 0, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
  }
}

static tq_entity newSlot(uint32_t sensorPlus1, const char *name) {
  if (!seg) return 0;
  uint32_t h = __atomic_fetch_add(&seg->entities_taken, 1, __ATOMIC_RELAXED) + 1;
  if (h >= seg->max_entities) {
    __atomic_fetch_add(&seg->lost_entities, 1, __ATOMIC_RELAXED);
    if (sensorPlus1) {
      /* an entity without a slot: its begin is lost, and what happens on it
      ** is reported with handle 0, which the monitor counts lost */
      loseGlobal(sensorPlus1 - 1);
      pendCounters(0);
    }
    return 0;
  }
  if (sensorPlus1) pendCounters(h);
  tq_shm_entity *x = &ents[h];
  size_t len = strlen(name);
  if (len >= TQ_SHM_NAME_LEN) len = TQ_SHM_NAME_LEN - 1;
  memcpy(x->name, name, len);
  x->name[len] = 0;
  x->state = 1;
  __atomic_store_n(&x->sensor, sensorPlus1, __ATOMIC_RELEASE);
  return h;
}

tq_entity tqs_entity_begin(uint32_t s, const char *name, int n, const int64_t *a) {
  tq_entity h = newSlot(s + 1, name);
  if (!h) return 0;
  int64_t v[TQ_SHM_MAX_ATTRS];
  v[0] = h;
  for (int i = 0; i < n && i + 1 < TQ_SHM_MAX_ATTRS; i++) v[i + 1] = a[i];
  for (int i = 0; i < n && i < TQ_SHM_ENTITY_ATTRS; i++) ents[h].a[i] = a[i];
  ents[h].cur = tqs_next_id();
  tqs_put(s, TQ_SHM_BEGIN, ents[h].cur, n + 1, v);
  return h;
}

void tqs_entity_state(tq_entity h, int n, const int64_t *a) {
  if (!seg || !h || h >= seg->max_entities || ents[h].state != 1) return;
  uint32_t s = ents[h].sensor - 1;
  int64_t v[TQ_SHM_MAX_ATTRS];
  v[0] = h;
  /* one instant: the old values end when the new ones begin (two stamps
  ** would leave the entity out of its relation in between, and a monitor
  ** that enables a sensor on the entities of the relation would switch it
  ** off and on again around every change of state) */
  uint64_t t = now();
  putAt(s, TQ_SHM_END, ents[h].cur, 1, v, t);
  for (int i = 0; i < n && i + 1 < TQ_SHM_MAX_ATTRS; i++) v[i + 1] = a[i];
  for (int i = 0; i < n && i < TQ_SHM_ENTITY_ATTRS; i++) ents[h].a[i] = a[i];
  ents[h].cur = tqs_next_id();
  putAt(s, TQ_SHM_BEGIN, ents[h].cur, n + 1, v, t);
}

void tqs_entity_end(tq_entity h) {
  if (!seg || !h || h >= seg->max_entities || ents[h].state != 1) return;
  uint32_t s = ents[h].sensor - 1;
  int64_t v[1] = {h};
  tqs_put(s, TQ_SHM_END, ents[h].cur, 1, v);
  ents[h].state = 2;
}

/* Strings: interned in a small open-addressing table of handles. */
static tq_entity *strTab;
static uint32_t strCap, strN;
int64_t tqs_string(const char *text) {
  if (!seg) return 0;
  pthread_mutex_lock(&lock);
  uint64_t hsh = 1469598103934665603ull;
  for (const char *c = text; *c; c++) hsh = (hsh ^ (unsigned char)*c) * 1099511628211ull;
  if (2 * (strN + 1) > strCap) {
    uint32_t nc = strCap ? 2 * strCap : 256;
    tq_entity *nt = calloc(nc, sizeof *nt);
    if (!nt) {
      pthread_mutex_unlock(&lock);
      return 0;
    }
    for (uint32_t i = 0; i < strCap; i++)
      if (strTab[i]) {
        uint64_t g = 1469598103934665603ull;
        for (const char *c = ents[strTab[i]].name; *c; c++) g = (g ^ (unsigned char)*c) * 1099511628211ull;
        uint32_t j = (uint32_t)g & (nc - 1);
        while (nt[j]) j = (j + 1) & (nc - 1);
        nt[j] = strTab[i];
      }
    free(strTab);
    strTab = nt;
    strCap = nc;
  }
  uint32_t j = (uint32_t)hsh & (strCap - 1);
  while (strTab[j] && strncmp(ents[strTab[j]].name, text, TQ_SHM_NAME_LEN - 1)) j = (j + 1) & (strCap - 1);
  if (!strTab[j]) {
    tq_entity h = newSlot(0, text);
    if (h) {
      strTab[j] = h;
      strN++;
    }
    pthread_mutex_unlock(&lock);
    return h;
  }
  tq_entity h = strTab[j];
  pthread_mutex_unlock(&lock);
  return h;
}

/* ================================================================ sampling */

typedef struct Sampler {
  uint32_t s;
  tq_entity who;
  void (*cb)(tq_entity who, void *arg);
  void *arg;
} Sampler;
static Sampler *samplers;
static int nsamplers, csamplers;
static pthread_t service;
static int serviceStarted;

void tqs_sampler(uint32_t s, tq_entity who, void (*cb)(tq_entity who, void *arg), void *arg) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nsamplers; i++)
    if (samplers[i].s == s && samplers[i].who == who) {
      samplers[i].cb = cb;
      samplers[i].arg = arg;
      pthread_mutex_unlock(&lock);
      return;
    }
  if (nsamplers == csamplers) {
    int nc = csamplers ? 2 * csamplers : 16;
    Sampler *ns = realloc(samplers, sizeof(Sampler) * (size_t)nc);
    if (!ns) {
      pthread_mutex_unlock(&lock);
      return;
    }
    samplers = ns;
    csamplers = nc;
  }
  samplers[nsamplers++] = (Sampler){s, who, cb, arg};
  pthread_mutex_unlock(&lock);
}

/* The service thread answers the monitor's sample requests in order. */
static void *serve(void *unused) {
  (void)unused;
  struct timespec pause = {0, 50000};
  for (;;) {
    uint64_t head = __atomic_load_n(&seg->req_head, __ATOMIC_ACQUIRE), tail = seg->req_tail;
    if (tail == head) {
      nanosleep(&pause, NULL);
      continue;
    }
    tq_shm_request rq = reqs[tail % TQ_SHM_REQUESTS];
    void (*cb)(tq_entity, void *) = NULL;
    void *arg = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nsamplers; i++)
      if (samplers[i].s == rq.sensor && samplers[i].who == rq.entity) {
        cb = samplers[i].cb;
        arg = samplers[i].arg;
      }
    pthread_mutex_unlock(&lock);
    tqs_me.req = rq.seq;
    setLim(&tqs_me);
    if (cb) cb(rq.entity, arg);
    if (rq.sensor < seg->nsensors) tqs_put(rq.sensor, TQ_SHM_SAMPLE_DONE, 0, 0, NULL);
    tqs_me.req = 0;
    setLim(&tqs_me);
    __atomic_store_n(&seg->req_tail, tail + 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

/* ================================================================ the segment */

static void atExit(void) {
  if (!seg) return;
  __atomic_store_n(&seg->state, TQ_SHM_EXITED, __ATOMIC_RELEASE);
  if (ownSegment) shm_unlink(segName);
}

/* A child of fork that did not exec (pthread_atfork): it inherits its
** parent's segment mapped, the forking thread's ring and the enable words,
** but it is not the process its monitor watches.  Writing on would put its
** packets among its parent's at the parent's head (the parent's next ones
** then land where the monitor has read already, and are lost), and its
** exit would mark the segment exited, or remove it.  So its sensors stay
** off: no segment, no ring, every enable word zero (sensors/README.md). */
static void inForkedChild(void) {
  /* a zero page over the parent's sensor words (if that fails, every
  ** packet still finds no ring and no segment: counted, not written) */
  mmap((void *)tqs_onw, TQS_ON_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  tqs_cnt = zeroOn;
  tqs_max_entities = 0;
  if (tqs_me.ring) pthread_setspecific(ringKey, NULL); /* (not the parent's to give back) */
  memset(&tqs_me, 0, sizeof tqs_me);
  myLoss = NULL;
  myNoRing = 1;
  seg = NULL;
  ownSegment = 0;
  serviceStarted = 0; /* (the service thread was not forked) */
  snprintf(errText, sizeof errText, "a child of fork without exec: its sensors stay off (the segment is its parent's)");
}

static int failInit(const char *fmt, const char *a) {
  snprintf(errText, sizeof errText, fmt, a);
  return -1;
}

/* A refusal the user must hear of (the sensors stay off): on standard
** error, once, and in tqs_error(). */
static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errText, sizeof errText, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tqsensor: %s\n", errText);
  return -1;
}

static uint32_t envNum(const char *name, uint32_t dflt, uint32_t min, uint32_t max) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  unsigned long v = strtoul(s, NULL, 10);
  return v < min ? min : v > max ? max : (uint32_t)v;
}

/* The monitor's segment, the descriptor it handed us (tqmon run --exec):
** a regular file of our user, mode 0600 (a memfd), holding a segment of
** this version.  The variable is removed, so that the programs we start
** do not take it for theirs. */
static int mapMonitors(const char *env) {
  char *end;
  long fdn = strtol(env, &end, 10);
  unsetenv("TQMON_SHM_FD");
  if (*end || end == env || fdn < 0 || fdn > INT_MAX) return refuse("TQMON_SHM_FD=%.40s is not a descriptor: the sensors stay off", env);
  int fd = (int)fdn;
  struct stat st;
  if (fstat(fd, &st)) return refuse("TQMON_SHM_FD=%d: %s: the sensors stay off", fd, strerror(errno));
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) || (size_t)st.st_size < sizeof(tq_shm_header)) {
    close(fd);
    return refuse("TQMON_SHM_FD=%d is not a segment of this user with mode 0600: refused, the sensors stay off", fd);
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return refuse("cannot map the monitor's segment: %s: the sensors stay off", strerror(errno));
  tq_shm_header *h = m;
  if (memcmp(h->magic, TQ_SHM_MAGIC, 8) || h->version != TQ_SHM_VERSION || h->header_bytes != sizeof(tq_shm_header) ||
      h->size != (uint64_t)st.st_size) {
    munmap(m, (size_t)st.st_size);
    return refuse("the monitor's segment is not a tqmon segment of version %u (rebuild the program or the monitor): the "
                  "sensors stay off",
                  TQ_SHM_VERSION);
  }
  seg = h;
  snprintf(segName, sizeof segName, "(fd %d)", fd);
  return 0;
}

/* No monitor yet: our own segment /tqmon.PID, for tqmon run --attach.  A
** name that exists is a segment of an earlier process of ours with our
** pid (removed) or someone else's: refused, never used, never removed.
** The segments of this user's programs that were killed before they could
** remove theirs are removed first (tqshmgc.h). */
static int mapOwn(void) {
  tq_shm_sweep();
  snprintf(segName, sizeof segName, "/tqmon.%d", (int)getpid());
  char path[96];
  snprintf(path, sizeof path, "/dev/shm%s", segName);
  int fd = -1;
  for (int attempt = 0; attempt < 3; attempt++) {
    fd = shm_open(segName, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
    if (fd >= 0 || errno != EEXIST) break;
    struct stat st;
    if (lstat(path, &st)) {
      if (errno == ENOENT) continue; /* gone meanwhile */
      return refuse("%s exists and cannot be examined (%s): refused, the sensors stay off", path, strerror(errno));
    }
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && attempt == 0) {
      shm_unlink(segName); /* a stale one of an earlier process of ours with our pid */
      continue;
    }
    return refuse("%s exists and is not this program's (%s, owner uid %u, mode %04o; this program runs as uid %u): refused, "
                  "the sensors stay off (another user may have planted it: see sensors/README.md, \"The trust model\")",
                  path, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISREG(st.st_mode) ? "a file" : "not a file",
                  (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
  }
  if (fd < 0) return failInit("cannot create the segment %s", segName);
  struct stat st;
  if (fchmod(fd, 0600) || fstat(fd, &st) || st.st_uid != geteuid() || st.st_nlink != 1) {
    close(fd);
    return refuse("%s changed under this program while it was made: refused, the sensors stay off", path);
  }
  tq_shm_header h0;
  memset(&h0, 0, sizeof h0);
  tq_shm_layout(&h0, TQS_MAX_SENSORS, envNum("TQMON_ENTITIES", 65536, 16, 1u << 24), envNum("TQMON_RINGS", 64, 1, 1024),
                1u << envNum("TQMON_RING_BITS", 14, 4, 24));
  if (ftruncate(fd, (off_t)h0.size)) {
    close(fd);
    shm_unlink(segName);
    return failInit("cannot size the segment %s", segName);
  }
  void *m = mmap(NULL, (size_t)h0.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    shm_unlink(segName);
    return failInit("cannot map the segment %s", segName);
  }
  seg = m;
  memcpy(seg, &h0, sizeof h0);
  memcpy(seg->magic, TQ_SHM_MAGIC, 8);
  seg->version = TQ_SHM_VERSION;
  seg->creator_pid = (int32_t)getpid();
  seg->next_id = 1;
  ownSegment = 1;
  return 0;
}

/* The start handshake: a subject its monitor started waits, up to
** TQMON_START_TIMEOUT ms, until the monitor has written its enable words,
** so that nothing its sensors see from its first line on is missed (as
** LTTng-UST waits for its session daemon).  When the time runs out it
** runs on, says so, and leaves the time in the segment: the monitor
** reports what it missed. */
static void awaitMonitor(void) {
  uint32_t ms = envNum("TQMON_START_TIMEOUT", TQ_SHM_START_TIMEOUT_MS, 0, 3600000);
  struct timespec t0, t, pause = {0, 200 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!__atomic_load_n(&seg->monitor_ready, __ATOMIC_ACQUIRE)) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms) {
      __atomic_store_n(&seg->gave_up, now(), __ATOMIC_RELEASE);
      fprintf(stderr,
              "tqsensor: the monitor was not ready within %u ms (TQMON_START_TIMEOUT): the program runs on; what its "
              "sensors see until the monitor is ready is lost (the monitor reports it)\n",
              ms);
      return;
    }
    nanosleep(&pause, NULL);
  }
}

/* The segment's page of sensor words mapped over tqs_onw, where the
** generated sensors read them (a second mapping of the same shared page:
** mremap of size 0).  The page holds nothing else (tq_shm_layout aligns
** every part to 4096 bytes).  Done before the segment is published: the
** words are zero until a monitor writes them, and a monitor writes them
** only once the segment is ready.  When it cannot be done (a page size
** other than 4096) the sensors stay off, and it is said. */
static int mapOnWords(void) {
  long page = sysconf(_SC_PAGESIZE);
  if (page != TQS_ON_PAGE || (seg->off_on & (TQS_ON_PAGE - 1)))
    return refuse("the sensor words cannot be mapped where the sensors read them (page size %ld, not %d): the sensors "
                  "stay off",
                  page, TQS_ON_PAGE);
  void *m = mremap((char *)seg + seg->off_on, 0, TQS_ON_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)tqs_onw);
  if (m != (void *)tqs_onw)
    return refuse("cannot map the sensor words where the sensors read them: %s: the sensors stay off", strerror(errno));
  return 0;
}

/* Lets the segment go when tqs_init cannot finish (nothing was published
** in it: a monitor sees a program whose sensors never started). */
static void dropSegment(void) {
  munmap(seg, (size_t)seg->size);
  if (ownSegment) shm_unlink(segName);
  ownSegment = 0;
  seg = NULL;
}

int tqs_init(const tq_shm_sensor *cat, int n) {
  pthread_mutex_lock(&lock);
  if (seg) {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  if (errText[0]) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  const char *fdEnv = getenv("TQMON_SHM_FD");
  int monitored = fdEnv && *fdEnv;
  if (monitored ? mapMonitors(fdEnv) : mapOwn()) {
    pthread_mutex_unlock(&lock);
    return -1;
  }
  if ((uint32_t)n > seg->max_sensors || seg->max_sensors > TQS_MAX_SENSORS) {
    failInit("%s: too many sensors for the segment", segName);
    dropSegment();
    pthread_mutex_unlock(&lock);
    return -1;
  }
  if (mapOnWords()) {
    dropSegment();
    pthread_mutex_unlock(&lock);
    return -1;
  }
  tq_shm_sensor *c = (tq_shm_sensor *)((char *)seg + seg->off_catalog);
  int sampled = 0;
  for (int i = 0; i < n; i++) {
    c[i] = cat[i];
    sampled |= cat[i].sampled;
    entAttr[i] = cat[i].is_entity ? 0 : cat[i].flag_attr;
  }
  seg->nsensors = (uint32_t)n;
  seg->time_kind = TQS_TSC;
  seg->subject_pid = (int32_t)getpid();
  uint64_t zero = 0;
  __atomic_compare_exchange_n(&seg->next_id, &zero, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  ents = (tq_shm_entity *)((char *)seg + seg->off_entities);
  reqs = (tq_shm_request *)((char *)seg + seg->off_requests);
  glosses = (tq_shm_gloss *)((char *)seg + seg->off_gloss);
  tqs_max_sensors = seg->max_sensors;
  tqs_max_entities = seg->max_entities;
  tqs_cnt = (volatile uint32_t *)((char *)seg + seg->off_counters);
  tqs_filt = (volatile tq_shm_filter *)((char *)seg + seg->off_filters);
  atexit(atExit);
  pthread_atfork(NULL, NULL, inForkedChild);
  if (sampled && !serviceStarted && pthread_create(&service, NULL, serve, NULL) == 0) {
    pthread_detach(service);
    serviceStarted = 1;
  }
  __atomic_store_n(&seg->state, TQ_SHM_READY, __ATOMIC_RELEASE);
  if (monitored) awaitMonitor();
  pthread_mutex_unlock(&lock);
  return 0;
}
