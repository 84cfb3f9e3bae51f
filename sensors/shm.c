/*
** shm.c - the resident monitor's side of generated sensors: the `shm`
** processor module, a live PRODUCER of every primitive relation no other PM
** produces (produces "*").
**
**   args "exec:CMD\x1fARG..."  creates a segment (a memfd: no name to squat
**                              or to leak), starts CMD with TQMON_SHM_FD
**                              its descriptor, a parent-death signal and
**                              the start handshake (the subject waits until
**                              the monitor is ready)
**   args "attach:PID"          maps the segment /tqmon.PID the subject made,
**                              after checking it is the subject's (owner,
**                              mode 0600, one link, made by PID); one
**                              monitor at a time (monitor_pid)
**   "all+" before either       every sensor enabled on every entity (tqmon
**                              record: the traditional way, record it all)
**
** The sensor words are written before the subject runs: an event sensor
** a query uses is TQ_SHM_USED, so that an entity the subject declares
** reports on it (TQ_SHM_PENDING) until the engine has seen the entity and
** the counters say what the queries asked for (settlePending, a snapshot
** later).  When the subject dies (a signal), the run stops early and says so.
**
** A thread drains the rings as they fill (its queues hold at most
** SHM_QBYTES, 256 MiB, of packets; past it rings fill and drop, counted);
** at each snapshot the rest is drained.  Every packet is validated (sensor,
** kind, size, entity handles, enum values, time) before use, converts TSC
** stamps to CLOCK_REALTIME nanoseconds, and merges the rings in time order
** up to the snapshot's time (the realtime clock takes a snapshot a lag
** after its time: the reorder window).  A packet that arrives after later
** ones were produced is late: dropped and counted.  Enabling writes the
** enable counters of the segment; sampling posts a request that the
** subject's service thread answers.  When the subject exits or dies, what
** is left is produced, its open intervals are closed at its last time and
** the collection ends; the results are kept.  Losses (full rings, no ring
** or entity slot, late packets, invalid packets, a string or entity beyond
** the table, unanswered samples; the time a subject that gave up waiting
** for the monitor ran with its sensors off, of a count not known) are told
** to the engine at each snapshot, once, with their sensor, period and flag
** entity where the subject knows them (g->lost: the answers that read them say they may be incomplete,
** docs/losses.md), and summed up at the end.
**
** Why one file of over 1,000 lines: the drain, the merge, enabling and the
** loss accounting share the segment's state and its validation; a split
** would put that state behind a private header for every part.
*/
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SHM_TSC 1
#else
#define SHM_TSC 0
#endif
#define SHM_LINES 64 /* TSC-to-ns lines kept (one a snapshot) */

#include "../runtime/engine.h"
#include "sensorsInt.h"
#include "tqshm.h"
#include "tqshmbus.h"
#include "tqshmgc.h"

/* A packet converted and checked, waiting for its turn in the merge. */
typedef struct Pkt {
  TqTime t;
  int sens;           /* subject catalog index */
  int kind;
  uint64_t id;
  int64_t handle;     /* entity relation: the handle of the entity */
  int n;
  int64_t v[TQ_SHM_MAX_ATTRS];
} Pkt;

typedef struct PktQ {
  Pkt *q;
  int64_t head, n, cap;
  TqTime lastT;       /* time of the last packet queued: a ring is in time order */
} PktQ;

/* An interval produced and not yet ended. */
typedef struct OpenRec {
  int rel;
  uint64_t id;
  TqTime from;
  int64_t v[TQ_SHM_MAX_ATTRS];
} OpenRec;

typedef struct Shm {
  tq_shm_header *h;
  tq_shm_header geo;        /* the header as checked: its geometry is read here, never
                            ** again from the segment the subject can write */
  size_t size;
  char name[96];            /* its path, for messages */
  int own;                  /* we created the segment (exec) */
  int fd;                   /* exec: the memfd until the subject mapped it (-1) */
  int claimed;              /* we hold the segment's monitor_pid */
  pid_t pid;                /* the subject */
  int child;                /* we started it */
  int exited;               /* the subject is gone */
  int bus;                  /* --attach: the mapping's entry in tqshmbus.h's registry (-1: none) */
  int shrank;               /* --attach: the subject shrank its segment under us (tq_bus_shrunk) */
  char shrankWhy[200];      /* ... in words (tq_bus_why) */
  int reaped;               /* the child was waited for: waitStatus */
  int waitStatus;
  int64_t *ack;             /* entity handles produced this snapshot: their pending
                            ** counters are settled at the next one */
  int nack, cack;
  int finishing;            /* exited, buffers empty: close intervals, then stop */
  int done;
  TqTime lastT;             /* time of its last packet */
  tq_shm_sensor cat[64];    /* its catalog, copied once (it could change under us) */
  int nsens;
  int relOf[64];            /* catalog index -> program relation id (0: unused) */
  int *sensOf;              /* program relation id -> catalog index (-1) */
  int nrel;
  signed char entOf[64][TQ_SHM_MAX_ATTRS]; /* entity-typed attribute: catalog index of its entity relation */
  uint16_t convOf[64];      /* the attributes convert checks or maps (an enum, an entity, a string): bits (planConvert) */
  struct KindPlan {         /* a packet of a sensor and a kind, as convert checks it (planConvert) */
    uint8_t ok;             /* the kind is one the sensor sends */
    uint8_t n;              /* its values */
    uint8_t need;           /* its slots */
  } kindOf[64][TQ_SHM_ENTITY_END + 1];
  int64_t *symOf;           /* by handle: symbol + 1 (0: not seen yet) */
  uint8_t *ownOf;           /* by handle, once seen: its owner (0 a string, else its entity sensor + 1) */
  uint64_t csymOf;
  TqMap handleOf;           /* symbol + 2 -> handle */
  TqMap open;               /* (sensor, id) -> OpenRec* */
  TqMap want;               /* (sensor, entity symbol) -> enable count + 1: the
                            ** flags asked for, applied when the entity appears */
  PktQ *rq;                 /* per ring: packets drained, not yet produced */
  TqTime outT;              /* time of the last packet produced */
  TqTime prevNow;           /* time of the previous snapshot */
  TqTime start;             /* the collection's first time */
  uint64_t tsc0;            /* TSC to ns: ns = ns0 + (tsc - tsc0) * nsPerTick */
  TqTime ns0;
  double nsPerTick;
  struct {                  /* the lines before tsc0, newest last (reanchor): a */
    uint64_t tsc0;          /* stamp is converted by the line of its own time, */
    TqTime ns0;             /* however late it is drained */
    double nsPerTick;
  } past[SHM_LINES];
  int npast;
  uint64_t anchorTsc;       /* the last (TSC, CLOCK_REALTIME) pair measured */
  TqTime anchorNs;
  uint32_t seq;             /* sample requests */
  int64_t packets, late, bad, samplesLost;
  int64_t ringLost, slotLost, noHandle; /* reported: ring full; no ring or entity slot;
                            ** a string or entity value that found no slot */
  int64_t badSeen;          /* invalid packets told to the engine */
  int64_t backwards;        /* packets earlier than the one before in their ring: taken at its time */
  uint64_t glossSeen[64];   /* per sensor: its tq_shm_gloss count told */
  uint32_t *spansSeen;      /* per ring and sensor: its tq_shm_loss spans told */
  struct {                  /* per sensor: lost packets not told yet */
    int64_t n, ent;
    TqTime from, to;
  } pend[64];
  uint64_t qBytes;          /* the queues' capacity (its peak: they never shrink) */
  uint64_t qLimit;          /* its bound: SHM_QBYTES, or TQMON_SHM_QUEUE_MB */
  uint64_t suppSeen[64];    /* per sensor: packets its filter suppressed, reported so far */
  TqTime readyT;            /* exec: when the monitor was ready (the start handshake) */
  TqTime gapFrom;           /* exec: the subject gave up waiting for it then (0: it did not) */
  int gapTold;              /* that gap was told (g->lost) */
  char badWhy[160];         /* the first invalid packet */
  TqTime cap;               /* merge no further: a ring still holds packets from here on */
  int waiting;              /* a sample request is out: its answers */
  uint32_t waitSeq;
  void *cookie;
  tq_pm_global *g;
  Pkt *synth;               /* --attach: the entities that existed, begun at the start */
  int nsynth;
  int grace;                /* --attach: history cut at the start; ends and begins it
                            ** overlaps are not errors */
  int64_t before;           /* --attach: packets written before the monitor came */
  uint64_t idFloor;         /* --attach: intervals with a lower id began before it came */
  uint64_t idTop;           /* --attach: entity states with a lower id may be read twice */
  int64_t endsBefore;       /* --attach: ends of intervals that began before it came */
  pthread_mutex_t mu;       /* the queues and counters: the drain thread and the engine's */
  pthread_t th;             /* drains the rings between snapshots */
  int thRunning;
  volatile int thStop;
  double pauseRate;         /* drainPause: slots a nanosecond the last wakes saw */
  TqTime pauseT;            /* drainPause: the monotonic time of its last call */
  int chunked;              /* the last drain left a ring at SHM_CHUNK slots */
  uint64_t aheadStamp;      /* a packet stamped after it is invalid (the clock at the drain + SHM_AHEAD_NS, in the stamps' unit) */
  uint64_t ticksAhead;      /* SHM_AHEAD_NS in TSC ticks (by the calibration; not the line, which slews) */
} Shm;

/* The queues of packets drained and not yet produced hold at most this
** (a ring's first 1,024 packets always fit); past it, rings are left to
** fill (and their producers to drop, counted and told). */
#define SHM_QBYTES ((uint64_t)256 << 20)
/* A stamp later than the monitor's clock when it drains the packet (its
** TSC for TSC stamps: the converted time may run ahead of the clock while
** the conversion's line catches up) by more than this is garbage: taken,
** it would hold every later packet of its ring back to it */
#define SHM_AHEAD_NS ((TqTime)1000000000)
#define SHM_Q0 1024

static TqTime realNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (TqTime)ts.tv_sec * TQ_SEC + ts.tv_nsec;
}

#if SHM_TSC
/* A TSC reading and CLOCK_REALTIME at the same moment: of three tries, the
** one whose two TSC readings around the clock are closest. */
static void tscPair(uint64_t *tsc, TqTime *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t a = __rdtsc();
    TqTime n = realNow();
    uint64_t b = __rdtsc();
    if (b - a < best) {
      best = b - a;
      *tsc = a + (b - a) / 2;
      *ns = n;
    }
  }
}
#endif

/* Calibrates TSC ticks against CLOCK_REALTIME over 20 ms. */
static void calibrate(Shm *s) {
#if SHM_TSC
  struct timespec d = {0, 20 * 1000 * 1000};
  uint64_t a, b;
  TqTime na, nb;
  tscPair(&a, &na);
  nanosleep(&d, NULL);
  tscPair(&b, &nb);
  s->tsc0 = s->anchorTsc = a;
  s->ns0 = s->anchorNs = na;
  s->nsPerTick = b > a ? (double)(nb - na) / (double)(b - a) : 1.0;
  s->ticksAhead = (uint64_t)((double)SHM_AHEAD_NS / (s->nsPerTick > 1e-3 ? s->nsPerTick : 1e-3));
#else
  s->nsPerTick = 1.0;
#endif
}

static TqTime toNs(Shm *s, uint64_t stamp) {
  if (!s->h->time_kind) return (TqTime)stamp;
  if (stamp < s->tsc0) /* (the newest line that began before it; before all, the oldest) */
    for (int i = s->npast - 1; i >= 0; i--)
      if (stamp >= s->past[i].tsc0 || i == 0)
        return s->past[i].ns0 + (TqTime)((double)(int64_t)(stamp - s->past[i].tsc0) * s->past[i].nsPerTick);
  return s->ns0 + (TqTime)((double)(int64_t)(stamp - s->tsc0) * s->nsPerTick);
}

/* The latest stamp a packet drained now may carry: the clock now, in the
** stamps' unit, and SHM_AHEAD_NS. */
static uint64_t aheadOf(Shm *s) {
#if SHM_TSC
  if (s->h->time_kind) return __rdtsc() + s->ticksAhead;
#endif
  return (uint64_t)realNow() + SHM_AHEAD_NS;
}

/* At each snapshot the conversion is measured again, so that the program's
** times stay those of the other live sources (the kernel's, /proc's) to
** within a microsecond or so over a long run (a 20 ms calibration alone
** drifts tens of microseconds a second, and the wall clock's rate follows
** NTP): the line goes on from where it is now (continuous, so the order of
** packets converted before and after is kept), at the rate measured since
** the last anchor, corrected so that the offset measured now is worked off
** by the next snapshot, a base tick on.  The old line is kept for the
** stamps before the new anchor (SHM_LINES of them): a packet written
** before it and drained after it must not move against the packets of
** other rings drained before it (the two lines differ in slope, and a
** process's end of state in one thread's ring and its next state in
** another's came out in the wrong order, "end of interval N, which is not
** open", a few times a second on a loaded machine). */
static void reanchor(Shm *s, TqTime tick) {
#if SHM_TSC
  uint64_t t;
  TqTime n;
  tscPair(&t, &n);
#ifdef TQ_TESTING
  /* (tests: a clock that jumps by +-TQMON_TEST_CLOCK_JITTER ns at every
  ** other snapshot, so that the lines' slopes swing: mailbox_sends.sh) */
  static long long jitter = -1;
  static int flip;
  if (jitter < 0) jitter = getenv("TQMON_TEST_CLOCK_JITTER") ? atoll(getenv("TQMON_TEST_CLOCK_JITTER")) : 0;
  n += (flip ^= 1) ? jitter : -jitter;
#endif
  if (t <= s->anchorTsc || t <= s->tsc0 || n <= s->anchorNs) return;
  double rate = (double)(n - s->anchorNs) / (double)(t - s->anchorTsc);
  TqTime cur = toNs(s, t);
  double correct = (double)(n - cur) / ((double)(tick > 0 ? tick : TQ_SEC) / rate);
  if (rate + correct < rate / 2) correct = -rate / 2; /* (the line only rises) */
  if (s->npast == SHM_LINES) memmove(s->past, s->past + 1, sizeof s->past[0] * (SHM_LINES - 1)), s->npast--;
  s->past[s->npast].tsc0 = s->tsc0;
  s->past[s->npast].ns0 = s->ns0;
  s->past[s->npast++].nsPerTick = s->nsPerTick;
  s->tsc0 = t;
  s->ns0 = cur;
  s->nsPerTick = rate + correct;
  s->anchorTsc = t;
  s->anchorNs = n;
#else
  (void)s;
  (void)tick;
#endif
}

/* ================================================================ the segment */

static int fail(tq_pm_private *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tq_pm_private *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->message, sizeof p->message, fmt, ap);
  va_end(ap);
  return -1;
}

/* Checks a mapped segment's header: magic, version, geometry, in a copy
** (kept in s->geo) that the subject cannot change after the check. */
static int checkHeader(tq_pm_private *p, Shm *s) {
  size_t size = s->size;
  const char *name = s->name;
  if (size < sizeof(tq_shm_header)) return fail(p, "%s is not a tqmon sensor segment (wrong magic)", name);
  tq_shm_header copy;
  memcpy(&copy, s->h, sizeof copy);
  const tq_shm_header *h = &copy;
  if (memcmp(h->magic, TQ_SHM_MAGIC, 8))
    return fail(p, "%s is not a tqmon sensor segment (wrong magic)", name);
  if (h->version != TQ_SHM_VERSION)
    return fail(p, "%s: sensor segment version %u, this tqmon speaks %u (rebuild the subject with this tqmon's sensors)",
                name, h->version, TQ_SHM_VERSION);
  if (!tq_shm_geometry_ok(h, size))
    return fail(p, "%s: corrupt sensor segment header (geometry)", name);
  s->geo = copy;
  return 0;
}

/* --exec: the segment is a memfd, mode 0600: it has no name another user
** could take first or that could be left in /dev/shm whatever ends the
** monitor (it goes with the last process that maps it). */
static int createSegment(Shm *s, tq_pm_private *p) {
  snprintf(s->name, sizeof s->name, "the sensor segment");
  s->fd = -1;
  int fd = memfd_create("tqmon-sensors", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail(p, "cannot create the sensor segment: %s", strerror(errno));
  tq_shm_header h;
  memset(&h, 0, sizeof h);
  const char *ents = getenv("TQMON_ENTITIES");
  uint32_t maxEnt = ents ? (uint32_t)atol(ents) : 65536;
  if (maxEnt < 16) maxEnt = 16;
  if (maxEnt > (1u << 24)) maxEnt = 1u << 24; /* (as the sensors bound it) */
  const char *bits = getenv("TQMON_RING_BITS");
  int rb = bits ? atoi(bits) : 14;
  if (rb < 4 || rb > 24) rb = 14;
  tq_shm_layout(&h, 64, maxEnt, 64, 1u << rb);
  /* sealed at its size: a subject that shrank it would end the monitor
  ** with SIGBUS at its next read past the new end */
  if (fchmod(fd, 0600) || ftruncate(fd, (off_t)h.size) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
    close(fd);
    return fail(p, "cannot size the sensor segment: %s", strerror(errno));
  }
  void *m = mmap(NULL, (size_t)h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return fail(p, "cannot map the sensor segment: %s", strerror(errno));
  }
  s->h = m;
  s->size = (size_t)h.size;
  memcpy(s->h, &h, sizeof h);
  s->geo = h;
  memcpy(s->h->magic, TQ_SHM_MAGIC, 8);
  s->h->version = TQ_SHM_VERSION;
  s->h->creator_pid = s->h->monitor_pid = (int32_t)getpid();
  s->h->next_id = 1;
  s->own = s->claimed = 1;
  s->fd = fd;
  return 0;
}

/* The user id process pid runs as (its effective one; -1 if unknown). */
static long processUid(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long uid = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned r, e;
    if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
      uid = (long)e;
      break;
    }
  }
  fclose(f);
  return uid;
}

/* --attach PID: the segment /tqmon.PID, trusted only when it is the
** subject's own (sensors/README.md, "The trust model"): opened without
** following a link, a regular file of the subject's user with mode 0600
** and one link, of this version, made by PID itself. */
static int mapSegment(Shm *s, tq_pm_private *p, const char *name) {
  snprintf(s->name, sizeof s->name, "/dev/shm%s", name);
  int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
  if (fd < 0)
    return fail(p, "no sensor segment %s: %s (is the program built with generated sensors, and running?)", s->name,
                strerror(errno));
  struct stat st;
  if (fstat(fd, &st)) {
    close(fd);
    return fail(p, "cannot read the sensor segment %s: %s", s->name, strerror(errno));
  }
  long uid = processUid(s->pid);
  const char *why = NULL;
  char whyBuf[128];
  if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
  } else if (uid < 0 || (long)st.st_uid != uid) {
    snprintf(whyBuf, sizeof whyBuf, "it belongs to uid %u, and process %d runs as uid %ld", (unsigned)st.st_uid,
             (int)s->pid, uid);
    why = whyBuf;
  } else if ((st.st_mode & 07777) != 0600) {
    snprintf(whyBuf, sizeof whyBuf, "its mode is %04o, not 0600", (unsigned)(st.st_mode & 07777));
    why = whyBuf;
  } else if (st.st_nlink != 1) {
    snprintf(whyBuf, sizeof whyBuf, "it has %lu links, not 1", (unsigned long)st.st_nlink);
    why = whyBuf;
  }
  if (why) {
    close(fd);
    return fail(p, "%s is not the segment of process %d: %s: refused (another user may have planted it)", s->name,
                (int)s->pid, why);
  }
  if ((size_t)st.st_size < sizeof(tq_shm_header)) {
    close(fd);
    return fail(p, "%s is not a tqmon sensor segment (too small)", s->name);
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return fail(p, "cannot map the sensor segment %s: %s", s->name, strerror(errno));
  /* the subject's own file: it could shrink it under us (a SIGBUS at our
  ** next read past its end), caught from here on (tqshmbus.h) */
  s->bus = tq_bus_add(m, (size_t)st.st_size);
  if (s->bus < 0) {
    munmap(m, (size_t)st.st_size);
    return fail(p, "cannot watch the sensor segment %s: %d segments are mapped already, the most", s->name, TQ_BUS_MAPS);
  }
  s->h = m;
  s->size = (size_t)st.st_size;
  if (checkHeader(p, s)) {
    tq_bus_del(s->bus);
    s->bus = -1;
    munmap(m, s->size);
    s->h = NULL;
    return -1;
  }
  if (s->h->creator_pid != (int32_t)s->pid) {
    fail(p, "%s was made by process %d, not by %d: refused (a segment left by an earlier process with that pid?)",
         s->name, (int)s->h->creator_pid, (int)s->pid);
    tq_bus_del(s->bus);
    s->bus = -1;
    munmap(m, s->size);
    s->h = NULL;
    return -1;
  }
  return 0;
}

/* One monitor at a time drains a segment: a second would take packets
** from the first (both lose, each sees ends without begins).  The
** monitor_pid field is taken with a compare-and-swap; one of a monitor that
** died is taken over. */
static int claim(Shm *s, tq_pm_private *p) {
  int32_t me = (int32_t)getpid();
  for (int i = 0; i < 4; i++) {
    int32_t cur = 0;
    if (__atomic_compare_exchange_n(&s->h->monitor_pid, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
        (cur > 0 && kill(cur, 0) && errno == ESRCH &&
         __atomic_compare_exchange_n(&s->h->monitor_pid, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
      s->claimed = 1;
      return 0;
    }
    if (cur > 0 && cur != me && !(kill(cur, 0) && errno == ESRCH))
      return fail(p, "process %d is monitored already, by tqmon process %d: one monitor at a time (a second would take "
                     "its packets); end that one first",
                  (int)s->pid, (int)cur);
  }
  return fail(p, "%s: its monitor field keeps changing: refused", s->name);
}

/* Lets the segment go (--attach): the subject's sensors go back to costing
** one branch, and another monitor may attach. */
static void unclaim(Shm *s) {
  if (!s->claimed || s->own) return;
  volatile uint32_t *on_ = (volatile uint32_t *)((char *)s->h + s->geo.off_on);
  for (uint32_t i = 0; i < s->geo.max_sensors; i++) __atomic_store_n(&on_[i], 0, __ATOMIC_RELEASE);
  memset((char *)s->h + s->geo.off_counters, 0, sizeof(uint32_t) * (size_t)s->geo.max_sensors * s->geo.max_entities);
  int32_t me = (int32_t)getpid();
  __atomic_compare_exchange_n(&s->h->monitor_pid, &me, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
  s->claimed = 0;
}

/* Starts the subject: argv words separated by \x1f.  It gets the segment
** as the descriptor TQMON_SHM_FD, and SIGTERM when the monitor's thread
** that started it ends (PR_SET_PDEATHSIG): a monitor that dies, even by
** SIGKILL, leaves no orphan behind.  The environment is made before fork
** (the child calls only what is safe after fork in a threaded process). */
static int startChild(Shm *s, tq_pm_private *p, const char *cmd) {
  char *copy = tqStrdup(cmd);
  char *argv[128];
  int argc = 0;
  for (char *w = strtok(copy, "\x1f"); w && argc < 127; w = strtok(NULL, "\x1f")) argv[argc++] = w;
  argv[argc] = NULL;
  if (!argc) {
    free(copy);
    return fail(p, "--exec needs a command");
  }
  int cfd = s->fd >= 0 ? dup(s->fd) : -1; /* (without close-on-exec: the child's) */
  int nenv = 0;
  while (environ[nenv]) nenv++;
  char **envp = tqCalloc((size_t)nenv + 2, sizeof(char *));
  char fdVar[48];
  snprintf(fdVar, sizeof fdVar, "TQMON_SHM_FD=%d", cfd);
  int k = 0;
  for (int i = 0; i < nenv; i++)
    if (strncmp(environ[i], "TQMON_SHM_FD=", 13) && strncmp(environ[i], "TQMON_SHM=", 10)) envp[k++] = environ[i];
  if (cfd >= 0) envp[k++] = fdVar;
  envp[k] = NULL;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC)) {
    free(copy);
    free(envp);
    if (cfd >= 0) close(cfd);
    return fail(p, "cannot start %s: %s", argv[0], strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    free(copy);
    free(envp);
    if (cfd >= 0) close(cfd);
    close(pipefd[0]);
    close(pipefd[1]);
    return fail(p, "cannot start %s: %s", argv[0], strerror(errno));
  }
  if (pid == 0) {
    close(pipefd[0]);
    int err = 0;
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent) err = ESRCH; /* the monitor is gone already */
    if (!err) {
      execvpe(argv[0], argv, envp);
      err = errno;
    }
    if (write(pipefd[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  close(pipefd[1]);
  if (cfd >= 0) close(cfd);
  free(envp);
  int err = 0;
  ssize_t n = read(pipefd[0], &err, sizeof err);
  close(pipefd[0]);
  if (n == (ssize_t)sizeof err) {
    waitpid(pid, NULL, 0);
    int rc = fail(p, "cannot run %s: %s", argv[0], strerror(err));
    free(copy);
    return rc;
  }
  free(copy);
  s->pid = pid;
  s->child = 1;
  return 0;
}

/* Is the subject still there?  A child that ended is waited for
** (waitStatus); another process is gone when kill says so. */
static int alive(Shm *s) {
  if (s->exited) return 0;
  if (s->child) {
    if (s->reaped) return 0;
    int status;
    pid_t r = waitpid(s->pid, &status, WNOHANG);
    if (r == s->pid) {
      s->reaped = 1;
      s->waitStatus = status;
      return 0;
    }
    if (r < 0 && errno == ECHILD) return 0;
  } else if (s->pid > 0 && kill(s->pid, 0) && errno == ESRCH) {
    return 0;
  }
  return __atomic_load_n(&s->h->state, __ATOMIC_ACQUIRE) != TQ_SHM_EXITED;
}

/* How the subject ended: 1 when it died (a signal, or gone without
** exiting), with the words in why; 0 when it exited. */
static int howEnded(Shm *s, char *why, size_t n) {
  if (s->child && s->reaped) {
    int st = s->waitStatus;
    if (WIFSIGNALED(st)) {
      snprintf(why, n, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
      return 1;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st)) snprintf(why, n, "exited with status %d", WEXITSTATUS(st));
    else snprintf(why, n, "exited");
    return 0;
  }
  if (__atomic_load_n(&s->h->state, __ATOMIC_ACQUIRE) == TQ_SHM_EXITED) {
    snprintf(why, n, "exited");
    return 0;
  }
  snprintf(why, n, "ended without exiting (killed?)");
  return 1;
}

/* Which attributes of each sensor convert checks or maps: an enum's
** range, an entity's or a string's handle; an int or a float is copied
** and nothing more (the shapes were checked: at most 16 attributes). */
static void planConvert(Shm *s) {
  for (int i = 0; i < s->nsens; i++) {
    const tq_shm_sensor *x = &s->cat[i];
    s->convOf[i] = 0;
    for (int k = 0; k < x->nattr && k < TQ_SHM_MAX_ATTRS; k++)
      if (x->kind[k] == TQ_SHM_ENUM || x->kind[k] == TQ_SHM_ENTITY || x->kind[k] == TQ_SHM_STRING)
        s->convOf[i] |= (uint16_t)(1u << k);
    for (int kind = TQ_SHM_EVENT; kind <= TQ_SHM_ENTITY_END; kind++) {
      int n = kind == TQ_SHM_SAMPLE_DONE ? 0 : kind == TQ_SHM_END && x->is_entity ? 1 : x->nattr;
      s->kindOf[i][kind].n = (uint8_t)n;
      s->kindOf[i][kind].need = (uint8_t)(n <= TQ_SHM_VALS0 ? 1 : 1 + (n - TQ_SHM_VALS0 + TQ_SHM_VALSN - 1) / TQ_SHM_VALSN);
      s->kindOf[i][kind].ok =
          !((kind == TQ_SHM_EVENT) != (x->is_event && !x->sampled) && kind != TQ_SHM_SAMPLE && kind != TQ_SHM_SAMPLE_DONE);
    }
  }
}

/* Maps the subject's catalog onto the program's relations. */
static int mapCatalog(Shm *s, tq_pm_global *g, tq_pm_private *p) {
  uint32_t n = __atomic_load_n(&s->h->nsensors, __ATOMIC_ACQUIRE);
  if (n > s->geo.max_sensors || n > 64) return fail(p, "%s: corrupt catalog (%u sensors)", s->name, n);
  const tq_shm_sensor *c = (const tq_shm_sensor *)((const char *)s->h + s->geo.off_catalog);
  s->nsens = (int)n;
  memcpy(s->cat, c, sizeof(tq_shm_sensor) * n);
  CpProgram *prog = enProgram(g);
  s->nrel = prog->cat.rels.n;
  s->sensOf = tqMalloc(sizeof(int) * (size_t)(s->nrel + 1));
  for (int i = 0; i <= s->nrel; i++) s->sensOf[i] = -1;
  for (int i = 0; i < s->nsens; i++) {
    tq_shm_sensor *x = &s->cat[i];
    x->name[TQ_SHM_NAME_LEN - 1] = 0;
    s->relOf[i] = 0;
    /* every sensor's shape is checked, declared or not: convert reads the
    ** packets of all of them */
    int shape = x->nattr <= TQ_SHM_MAX_ATTRS;
    for (int k = 0; shape && k < x->nattr; k++) shape = x->kind[k] >= TQ_SHM_INT && x->kind[k] <= TQ_SHM_ENTITY;
    if (!shape) return fail(p, "%s: corrupt catalog (sensor %d: %u attributes, or one of no known kind)", s->name, i, x->nattr);
    const AlgRel *r = algCatRel(&prog->cat, x->name);
    if (!r || r->deltaOf) continue; /* a sensor the program does not declare: ignored */
    int ok = x->nattr == r->nattr && x->nattr <= TQ_SHM_MAX_ATTRS && x->is_event == r->isEvent &&
             x->is_entity == (r->entity != NULL);
    static const int kinds[] = {0, TQ_SHM_INT, TQ_SHM_FLOAT, TQ_SHM_STRING, TQ_SHM_ENUM, TQ_SHM_ENTITY};
    for (int k = 0; ok && k < r->nattr; k++) {
      int tk = r->attr[k].type.kind;
      if (tk < 1 || tk > 5 || x->kind[k] != kinds[tk]) ok = 0;
      else if (tk == TY_ENUM && (int)x->nenum[k] != r->attr[k].type.en->n) ok = 0;
    }
    if (!ok)
      return fail(p, "sensor %s of the subject does not match the program's declaration (rebuild it with tqmon sensors gen)",
                  x->name);
    s->relOf[i] = r->id;
    s->sensOf[r->id] = i;
  }
  /* which entity relation each entity-typed value must belong to */
  for (int i = 0; i < s->nsens; i++) {
    memset(s->entOf[i], -1, sizeof s->entOf[i]);
    if (!s->relOf[i]) continue;
    const AlgRel *r = prog->cat.rels.v[s->relOf[i] - 1];
    for (int k = 0; k < r->nattr; k++)
      if (r->attr[k].type.kind == TY_ENTITY) s->entOf[i][k] = (signed char)s->sensOf[r->attr[k].type.ent->rel->id];
  }
  planConvert(s);
  return 0;
}

/* ================================================================ packets */

static void noteBad(Shm *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void noteBad(Shm *s, const char *fmt, ...) {
  if (!s->bad++) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->badWhy, sizeof s->badWhy, fmt, ap);
    va_end(ap);
  }
}

/* The symbol of entity handle h, which must be an entity of catalog sensor
** ent (ent < 0: a string). */
static int handleValueNew(Shm *s, int64_t h, int ent, int64_t *out);
static inline int handleValue(Shm *s, int64_t h, int ent, int64_t *out) {
  if (h <= 0 || (uint64_t)h > s->h->entities_taken || (uint64_t)h >= s->geo.max_entities) return -1;
  if ((uint64_t)h < s->csymOf && s->symOf[h]) { /* (seen: its owner is checked again, as below) */
    if (s->ownOf[h] != (uint8_t)(ent + 1)) return -1;
    *out = s->symOf[h] - 1;
    return 0;
  }
  return handleValueNew(s, h, ent, out);
}

/* handleValue of a handle not seen yet: its name read and interned. */
static int handleValueNew(Shm *s, int64_t h, int ent, int64_t *out) {
  const tq_shm_entity *x = (const tq_shm_entity *)((const char *)s->h + s->geo.off_entities) + h;
  uint32_t owner = __atomic_load_n(&x->sensor, __ATOMIC_ACQUIRE);
  if ((ent >= 0 && owner != (uint32_t)ent + 1) || (ent < 0 && owner != 0)) return -1;
  char name[TQ_SHM_NAME_LEN];
  memcpy(name, x->name, sizeof name);
  name[TQ_SHM_NAME_LEN - 1] = 0;
  if (!name[0]) return -1;
  int64_t v = s->g->symbol(s->g, name, -1);
  if ((uint64_t)h >= s->csymOf) {
    uint64_t nc = s->csymOf ? 2 * s->csymOf : 1024;
    while (nc <= (uint64_t)h) nc *= 2;
    s->symOf = tqRealloc(s->symOf, sizeof(int64_t) * nc);
    s->ownOf = tqRealloc(s->ownOf, nc);
    memset(s->symOf + s->csymOf, 0, sizeof(int64_t) * (nc - s->csymOf));
    memset(s->ownOf + s->csymOf, 0, nc - s->csymOf);
    s->csymOf = nc;
  }
  s->symOf[h] = v + 1;
  s->ownOf[h] = (uint8_t)(ent + 1);
  *out = v;
  return 0;
}

/* A packet of sensor si at t lost, on flag entity ent (a symbol, or
** TQ_PM_ENTITY_UNKNOWN), to be told at the next snapshot. */
static void pendLoss(Shm *s, int si, TqTime t, int64_t ent) {
  if (si < 0 || si >= 64) return;
  if (!s->pend[si].n++) {
    s->pend[si].from = s->pend[si].to = t;
    s->pend[si].ent = ent;
  } else if (s->pend[si].ent != ent) {
    s->pend[si].ent = TQ_PM_ENTITY_UNKNOWN;
  }
  if (t < s->pend[si].from) s->pend[si].from = t;
  if (t > s->pend[si].to) s->pend[si].to = t;
}

/* Validates and converts slot packets: 0 ok (into *pk), -1 invalid, -2
** lost (a string or entity value that found no slot in the subject's
** table: counted, not invalid). */
static int convert(Shm *s, const tq_shm_packet *sp, const tq_shm_cont *cont, int ncont, Pkt *pk) {
  int si = sp->sensor;
  if (si >= s->nsens) return noteBad(s, "packet of sensor %d, the subject has %d", si, s->nsens), -1;
  const tq_shm_sensor *x = &s->cat[si];
  int kind = sp->kind;
  if (kind < TQ_SHM_EVENT || kind > TQ_SHM_ENTITY_END) return noteBad(s, "packet of unknown kind %d", kind), -1;
  const struct KindPlan *kp = &s->kindOf[si][kind];
  int n = kp->n, need = kp->need;
  if (sp->nslots != need && !(kind == TQ_SHM_END && sp->nslots >= 1))
    return noteBad(s, "packet of %s with %d slots, expected %d", x->name, sp->nslots, need), -1;
  if (!kp->ok) return noteBad(s, "packet of %s of the wrong kind %d", x->name, kind), -1;
  /* no packet is stamped after the monitor drains it (the clock is read
  ** again before one is refused: a drain may have stalled) */
  if (sp->time > s->aheadStamp && sp->time > (s->aheadStamp = aheadOf(s)))
    return noteBad(s, "%s: a packet stamped %.3f s after the monitor's clock", x->name,
                   (double)(toNs(s, sp->time) - realNow()) * 1e-9), -1;
  pk->t = toNs(s, sp->time);
  pk->sens = si;
  pk->kind = kind;
  pk->id = sp->id;
  pk->n = n;
  int k = TQ_SHM_VALS0;
  /* the first slot's values, whole: past n they are whatever the subject
  ** left in the slot, and nothing reads past pk->n */
  memcpy(pk->v, sp->v, sizeof sp->v);
  for (int c = 0; c < ncont && k < n; c++) {
    pk->v[k++] = cont[c].v0;
    for (int i = 0; i < TQ_SHM_VALSN - 1 && k < n; i++) pk->v[k++] = cont[c].v[i];
  }
  if (kind == TQ_SHM_END || kind == TQ_SHM_SAMPLE_DONE) return 0; /* values come from its begin */
  for (unsigned m = s->convOf[si] & ((1u << n) - 1); m; m &= m - 1) {
    int a = __builtin_ctz(m);
    switch (x->kind[a]) {
      case TQ_SHM_ENUM:
        if (pk->v[a] < 0 || pk->v[a] >= (int64_t)x->nenum[a])
          return noteBad(s, "%s: enum value %lld out of range", x->name, (long long)pk->v[a]), -1;
        break;
      case TQ_SHM_ENTITY:
      case TQ_SHM_STRING: {
        /* a string is a slot of no relation; an entity one of its type's
        ** relation (a sensor the program does not declare: any entity) */
        if (pk->v[a] == 0) { /* the subject's table was full (sensors/README.md) */
          s->noHandle++;
          pendLoss(s, si, pk->t, TQ_PM_ENTITY_UNKNOWN);
          return -2;
        }
        int ent = x->kind[a] == TQ_SHM_STRING ? -1 : (x->is_entity && a == 0) ? si : s->entOf[si][a];
        if (x->kind[a] == TQ_SHM_ENTITY && ent < 0) {
          int64_t h = pk->v[a];
          const tq_shm_entity *e = (const tq_shm_entity *)((const char *)s->h + s->geo.off_entities) + (h > 0 && (uint64_t)h < s->geo.max_entities ? h : 0);
          uint32_t owner = __atomic_load_n(&e->sensor, __ATOMIC_ACQUIRE);
          if (!owner || owner > (uint32_t)s->nsens || !s->cat[owner - 1].is_entity)
            return noteBad(s, "%s: value %lld is not an entity", x->name, (long long)h), -1;
          ent = (int)owner - 1;
        }
        if (x->is_entity && a == 0) pk->handle = pk->v[a];
        int64_t sym;
        if (handleValue(s, pk->v[a], ent, &sym))
          return noteBad(s, "%s: bad %s handle %lld", x->name, x->kind[a] == TQ_SHM_STRING ? "string" : "entity",
                         (long long)pk->v[a]), -1;
        pk->v[a] = sym;
        break;
      }
      default: break;
    }
  }
  return 0;
}

/* The slot the next packet of q goes to (q->n++ keeps it).  Capacities
** are powers of 2. */
static Pkt *qSlot(Shm *s, PktQ *q) {
  if (q->n == q->cap) {
    int64_t nc = q->cap ? 2 * q->cap : SHM_Q0;
    s->qBytes += sizeof(Pkt) * (uint64_t)(nc - q->cap);
    Pkt *nq = tqMalloc(sizeof(Pkt) * (size_t)nc);
    for (int64_t i = 0; i < q->n; i++) nq[i] = q->q[(q->head + i) & (q->cap - 1)];
    free(q->q);
    q->q = nq;
    q->head = 0;
    q->cap = nc;
  }
  return &q->q[(q->head + q->n) & (q->cap - 1)];
}

static void answerSample(Shm *s, const Pkt *pk);
static tq_pm_status snapshotLocked(Shm *s, tq_pm_global *g, tq_pm_private *p);
static void reportGap(Shm *s, tq_pm_global *g, tq_pm_private *p);
static int64_t pending(Shm *s);
static void *drainMain(void *arg);
static void applyWants(Shm *s, int64_t sym, intptr_t h);
static void settlePending(Shm *s);

/* The position of ring r's first slot not published, from pos on (at
** most a ring's length further: a producer that wrote garbage). */
static uint64_t frontier(const tq_shm_header *geo, tq_shm_ring *r, uint64_t pos) {
  const tq_shm_packet *slots = (const tq_shm_packet *)(r + 1);
  uint64_t mask = geo->ring_slots - 1, end = pos + geo->ring_slots;
  while (pos < end && __atomic_load_n(&slots[pos & mask].gen, __ATOMIC_ACQUIRE) == tq_shm_gen(pos, geo->ring_slots)) {
    uint32_t ns = slots[pos & mask].nslots;
    pos += ns >= 1 && ns <= 3 ? ns : 1;
  }
  return pos;
}

/* Drains up to SHM_CHUNK slots of every ring into its queue (sample
** answers go to the request); returns the slots taken.  A ring with more
** left caps what may be merged at the time of the last packet taken from it
** (what it still holds is not earlier: each ring is in time order). */
#define SHM_CHUNK 4096
#define SHM_AHEAD 8 /* slots fetched ahead of the one being read */
static uint64_t drain(Shm *s) {
  uint64_t took = 0;
  s->cap = TQ_FOREVER;
  s->chunked = 0;
  tq_shm_header *h = s->h;
  s->aheadStamp = aheadOf(s);
  /* threads take the lowest free ring: rings past the number ever taken are unused */
  uint32_t taken = __atomic_load_n(&h->rings_taken, __ATOMIC_ACQUIRE), nr = taken < s->geo.nrings ? taken : s->geo.nrings;
  for (uint32_t i = 0; i < nr; i++) {
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + s->geo.off_rings + s->geo.ring_bytes * i);
    tq_shm_packet *slots = (tq_shm_packet *)(r + 1);
    uint64_t tail = r->tail, start = tail, mask = s->geo.ring_slots - 1;
    /* the producer's head hint (stored every 256 slots): the slots below it
    ** are published, and are fetched ahead of their turn; those past it are
    ** not touched before their generation says so (a line the producer is
    ** writing, read early, would go back and forth between them) */
    uint64_t hint = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    if (hint - tail > s->geo.ring_slots) hint = tail; /* (garbage, or not yet stored: no hint) */
    TqTime lastT = TQ_FOREVER;
    int more = 0; /* stopped at SHM_CHUNK, not at the first slot not published */
    if (!s->rq) s->rq = tqCalloc(s->geo.nrings, sizeof(PktQ));
    PktQ *q = &s->rq[i];
    for (;;) {
      if (tail - start >= SHM_CHUNK) {
        more = 1;
        s->chunked = 1;
        break;
      }
      const tq_shm_packet *at = &slots[tail & mask];
      if (tail + SHM_AHEAD < hint) __builtin_prefetch(&slots[(tail + SHM_AHEAD) & mask], 0, 3);
      if (__atomic_load_n(&at->gen, __ATOMIC_ACQUIRE) != tq_shm_gen(tail, s->geo.ring_slots)) {
        if (tail >= hint) break; /* not yet */
        /* below the producer's head every slot is published: this one is
        ** no packet (what follows a packet of a bad size): counted, skipped */
        noteBad(s, "ring %u: a slot that is no packet", i);
        tail++;
        continue;
      }
      if (q->n == q->cap && q->cap >= SHM_Q0 && s->qBytes + sizeof(Pkt) * (uint64_t)q->cap > s->qLimit) {
        more = 1; /* the queues are full: the rest waits in the ring */
        break;
      }
      tq_shm_packet sp = *at;
      uint32_t ns = sp.nslots;
      if (ns < 1 || ns > 3) {
        /* garbage: counted, and the next slot read (a continuation slot
        ** has generation 0: it is never taken for a packet) */
        noteBad(s, "ring %u: packet of %u slots", i, ns);
        tail++;
        continue;
      }
      tq_shm_cont cont[2];
      for (uint32_t c = 1; c < ns; c++) memcpy(&cont[c - 1], &slots[(tail + c) & mask], sizeof(tq_shm_cont));
      tail += ns;
      Pkt *pk = qSlot(s, q); /* converted in place: kept by q->n++ */
      if (convert(s, &sp, cont, (int)ns - 1, pk)) continue;
      s->packets++;
      lastT = pk->t;
      if (pk->kind == TQ_SHM_SAMPLE || pk->kind == TQ_SHM_SAMPLE_DONE) {
        if (s->waiting && sp.aux == s->waitSeq) answerSample(s, pk);
        continue;
      }
      if (!s->relOf[pk->sens]) continue; /* a sensor no one declared here */
      if (pk->t < q->lastT) { /* a thread's time went back (a TSC not in step across CPUs, or garbage) */
        pk->t = q->lastT;
        s->backwards++;
      }
      q->lastT = pk->t;
      q->n++;
    }
    took += tail - start;
    if (tail != start) __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    if (more && q->n) { /* what it still holds is not earlier than its last one queued */
      lastT = q->q[(q->head + q->n - 1) & (q->cap - 1)].t;
    }
    if (more && lastT < s->cap) s->cap = lastT;
  }
  return took;
}

/* Produces one packet as a record. */
static void produce(Shm *s, const Pkt *pk) {
  tq_pm_global *g = s->g;
  int rel = s->relOf[pk->sens];
  const tq_shm_sensor *x = &s->cat[pk->sens];
  tq_record r;
  memset(&r, 0, sizeof r);
  r.rel = rel;
  r.nvals = x->nattr;
  uint64_t key = pk->kind == TQ_SHM_EVENT ? 0 : tqHash64(((uint64_t)pk->sens << 56) ^ pk->id) | 2; /* (intervals) */
  switch (pk->kind) {
    case TQ_SHM_EVENT:
      r.kind = TQ_REC_EVENT;
      r.t = pk->t;
      r.vals = pk->v;
      break;
    case TQ_SHM_BEGIN: {
      OpenRec *o = tqMalloc(sizeof *o);
      o->rel = rel;
      o->id = pk->id;
      o->from = pk->t;
      memcpy(o->v, pk->v, sizeof(int64_t) * (size_t)x->nattr);
      OpenRec *old = tqMapGet(&s->open, key);
      if (old) {
        if (!s->grace && !(x->is_entity && pk->id < s->idTop))
          noteBad(s, "%s: interval %llu begun twice", x->name, (unsigned long long)pk->id);
        free(o);
        return;
      }
      tqMapPut(&s->open, key, o);
      if (x->is_entity) {
        tqMapPut(&s->handleOf, (uint64_t)pk->v[0] + 2, (void *)(intptr_t)pk->handle);
        applyWants(s, pk->v[0], (intptr_t)pk->handle);
        if (s->nack == s->cack) {
          s->cack = s->cack ? 2 * s->cack : 64;
          s->ack = tqRealloc(s->ack, sizeof(int64_t) * (size_t)s->cack);
        }
        s->ack[s->nack++] = pk->handle;
      }
      r.kind = TQ_REC_BEGIN;
      r.id = pk->id;
      r.from = r.t = pk->t;
      r.vals = o->v;
      break;
    }
    case TQ_SHM_END: {
      OpenRec *o = tqMapDel(&s->open, key);
      if (!o) {
        if (pk->id < s->idFloor) s->endsBefore++; /* (--attach: it began before we came) */
        else if (!s->grace) noteBad(s, "%s: end of interval %llu, which is not open", x->name, (unsigned long long)pk->id);
        return;
      }
      r.kind = TQ_REC_END;
      r.id = pk->id;
      r.from = o->from;
      r.to = r.t = pk->t > o->from ? pk->t : o->from + 1;
      r.vals = o->v;
      g->produce(g, &r);
      free(o);
      return;
    }
    default: return;
  }
  g->produce(g, &r);
}

/* Produces one packet in merge order (or counts it late). */
static void emit(Shm *s, Pkt *pk) {
  if (pk->t < s->start) pk->t = s->start; /* before the collection began: seen at its start */
  if (pk->t < s->outT || pk->t < s->prevNow) {
    s->late++; /* it came after later packets were produced: lost */
    const tq_shm_sensor *x = &s->cat[pk->sens];
    int fa = x->is_entity ? 0 : x->flag_attr;
    pendLoss(s, pk->sens, pk->t, pk->kind != TQ_SHM_END && fa < pk->n ? pk->v[fa] : TQ_PM_ENTITY_UNKNOWN); /* (an end's values are its begin's) */
    return;
  }
  s->outT = pk->t;
  if (pk->t > s->lastT) s->lastT = pk->t;
  produce(s, pk);
}

/* Produces the drained packets up to time limit, in time order. */
static void merge(Shm *s, TqTime limit) {
  if (!s->rq) return;
  if (s->cap < limit) limit = s->cap;
  uint32_t taken = __atomic_load_n(&s->h->rings_taken, __ATOMIC_ACQUIRE); /* (read once: the subject may change it) */
  uint32_t nr = taken < s->geo.nrings ? taken : s->geo.nrings;
  for (;;) {
    int best = -1, nonEmpty = 0;
    TqTime bt = 0;
    for (uint32_t i = 0; i < nr; i++) {
      PktQ *q = &s->rq[i];
      if (!q->n) continue;
      TqTime t = q->q[q->head].t;
      nonEmpty++;
      if (best < 0 || t < bt) {
        best = (int)i;
        bt = t;
      }
    }
    if (best < 0 || bt > limit) return;
    PktQ *q = &s->rq[best];
    if (nonEmpty == 1) {
      /* one ring has packets: they are in time order already */
      while (q->n && q->q[q->head].t <= limit) {
        Pkt *pk = &q->q[q->head];
        q->head = (q->head + 1) & (q->cap - 1);
        q->n--;
        emit(s, pk);
      }
      continue;
    }
    Pkt *pk = &q->q[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->n--;
    emit(s, pk);
  }
}

static int64_t pending(Shm *s) {
  int64_t n = 0;
  for (uint32_t i = 0; s->rq && i < s->geo.nrings; i++) n += s->rq[i].n;
  return n;
}

/* The subject is gone: its open intervals end at its last time (the
** intervals of relations first, then the entities they live in).  Returns
** how many intervals of relations (not entities) it ended. */
static int closeAll(Shm *s, TqTime t) {
  tq_pm_global *g = s->g;
  TqMap *m = &s->open;
  int n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t k = 0; k < m->cap; k++) {
      if (m->slot[k].key <= 1) continue;
      OpenRec *o = m->slot[k].val;
      const tq_shm_sensor *x = &s->cat[s->sensOf[o->rel]];
      if ((pass == 0) == (x->is_entity != 0)) continue;
      n += pass == 0;
      tq_record r;
      memset(&r, 0, sizeof r);
      r.rel = o->rel;
      r.kind = TQ_REC_END;
      r.id = o->id;
      r.from = o->from;
      r.to = r.t = t > o->from ? t : o->from + 1;
      r.nvals = x->nattr;
      r.vals = o->v;
      g->produce(g, &r);
    }
  for (uint32_t k = 0; k < m->cap; k++)
    if (m->slot[k].key > 1) free(m->slot[k].val);
  tqMapFree(m);
  return n;
}

/* ================================================================ sampling */

static void answerSample(Shm *s, const Pkt *pk) {
  if (pk->kind == TQ_SHM_SAMPLE_DONE) {
    s->waiting = 0;
    return;
  }
  if (!s->relOf[pk->sens]) return;
  s->g->sample_answer(s->g, s->cookie, pk->v);
}

/* ================================================================ the PM */

/* --attach: the subject ran before the monitor came.  What its rings hold
** is a history with holes (they filled and dropped); it is discarded, and
** the entities that exist now, read from the entity table, begin at the
** collection's start. */
static void attachState(Shm *s) {
  tq_shm_header *h = s->h;
  uint32_t taken = __atomic_load_n(&h->rings_taken, __ATOMIC_ACQUIRE); /* (read once) */
  uint32_t nr = taken < s->geo.nrings ? taken : s->geo.nrings;
  for (uint32_t i = 0; i < nr; i++) {
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + s->geo.off_rings + s->geo.ring_bytes * i);
    uint64_t head = frontier(&s->geo, r, r->tail);
    s->before += (int64_t)(head - r->tail);
    __atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
  }
  /* every interval whose begin was cut has a lower id (ids are taken
  ** before their packets are published) */
  s->idFloor = __atomic_load_n(&h->next_id, __ATOMIC_ACQUIRE);
  uint64_t etaken = __atomic_load_n(&h->entities_taken, __ATOMIC_ACQUIRE); /* (read once) */
  uint64_t n = etaken < s->geo.max_entities ? etaken : s->geo.max_entities - 1;
  const tq_shm_entity *ents = (const tq_shm_entity *)((const char *)h + s->geo.off_entities);
  s->synth = tqCalloc(n + 1, sizeof(Pkt));
  for (uint64_t k = 1; k <= n; k++) {
    const tq_shm_entity *e = &ents[k];
    uint32_t owner = __atomic_load_n(&e->sensor, __ATOMIC_ACQUIRE);
    if (!owner || owner > (uint32_t)s->nsens || e->state != 1) continue;
    int si = (int)owner - 1;
    const tq_shm_sensor *x = &s->cat[si];
    if (!x->is_entity || !s->relOf[si] || x->nattr > TQ_SHM_ENTITY_ATTRS + 1) continue;
    Pkt *pk = &s->synth[s->nsynth];
    pk->t = s->start;
    pk->sens = si;
    pk->kind = TQ_SHM_BEGIN;
    pk->id = e->cur;
    pk->handle = (int64_t)k;
    pk->n = x->nattr;
    if (handleValue(s, (int64_t)k, si, &pk->v[0])) continue;
    int ok = 1;
    for (int a = 1; a < x->nattr; a++) {
      pk->v[a] = e->a[a - 1];
      if (x->kind[a] == TQ_SHM_ENUM && (pk->v[a] < 0 || pk->v[a] >= (int64_t)x->nenum[a])) ok = 0;
      if (x->kind[a] == TQ_SHM_ENTITY || x->kind[a] == TQ_SHM_STRING) {
        int64_t sym;
        if (handleValue(s, pk->v[a], x->kind[a] == TQ_SHM_STRING ? -1 : s->entOf[si][a], &sym)) ok = 0;
        else pk->v[a] = sym;
      }
    }
    if (ok) s->nsynth++;
  }
  /* an entity's state read above may also come as a packet: ids below
  ** this are begun twice harmlessly */
  s->idTop = __atomic_load_n(&h->next_id, __ATOMIC_ACQUIRE);
  s->grace = 1;
}

static tq_pm_status shmInit(tq_pm_global *g, tq_pm_private *p) {
  const char *a = p->args ? p->args : "";
  if (!strncmp(a, "all+", 4)) a += 4;
  if (strncmp(a, "exec:", 5) && strncmp(a, "attach:", 7)) {
    snprintf(p->message, sizeof p->message, "give exec:COMMAND or attach:PID");
    return TQ_PM_ERROR;
  }
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "*";
  return TQ_PM_OK;
}

/* ================================================================ filters (rule SF) */

/* Writes each used sensor's filter into the segment, before the sensor is
** enabled: the engine's conditions (g->sensor_filter) as the subject checks
** them.  A condition the segment cannot hold (a name longer than a slot's)
** is left out of its group, which only lets more packets through; a group
** left empty, or more conditions than TQ_SHM_CONDS, and the sensor writes
** every packet (the engine filters). */
static void writeFilters(Shm *s, tq_pm_global *g) {
  if (g->version < 10 || !g->sensor_filter) return;
  tq_shm_filter *fl = (tq_shm_filter *)((char *)s->h + s->geo.off_filters);
  for (int si = 0; si < s->nsens; si++) {
    int rel = s->relOf[si];
    const tq_pm_cond *c = NULL;
    int n = rel ? g->sensor_filter(g, rel, &c) : 0;
    if (n <= 0 || n > TQ_SHM_CONDS) continue;
    tq_shm_filter f;
    memset(&f, 0, sizeof f);
    int w = 0, ok = 1;
    for (int i = 0; i < n && ok;) {
      int grp = c[i].group, had = w;
      for (; i < n && c[i].group == grp; i++) {
        tq_shm_cond *d = &f.c[w];
        if (c[i].attr < 0 || c[i].attr >= s->cat[si].nattr) continue;
        d->attr = (uint8_t)c[i].attr;
        d->op = (uint8_t)c[i].op; /* TQ_PM_EQ.. and TQ_SHM_EQ.. are the same codes */
        d->group = (uint8_t)grp;
        if (c[i].type == TQ_TY_ENTITY || c[i].type == TQ_TY_STRING) {
          if (!c[i].text || strlen(c[i].text) >= TQ_SHM_NAME_LEN) continue; /* cut names: left out */
          d->isname = 1;
          snprintf(d->text, sizeof d->text, "%s", c[i].text);
        } else if (c[i].fcmp) {
          d->fcmp = c[i].type == TQ_TY_FLOAT ? 2 : 1;
          d->fval = c[i].fval;
        } else {
          d->val = c[i].val;
        }
        w++;
      }
      if (w == had) ok = 0; /* an empty group: every packet passes */
    }
    if (!ok || !w) continue;
    memcpy(fl[si].c, f.c, sizeof f.c);
    __atomic_store_n(&fl[si].n, (uint32_t)w, __ATOMIC_RELEASE);
  }
}

/* Tells the engine what the sensors' filters suppressed since last time. */
static void reportSuppressed(Shm *s, tq_pm_global *g) {
  if (g->version < 10 || !g->suppressed || !s->h) return;
  const tq_shm_filter *fl = (const tq_shm_filter *)((const char *)s->h + s->geo.off_filters);
  for (int si = 0; si < s->nsens; si++) {
    if (!s->relOf[si]) continue;
    uint64_t n = __atomic_load_n(&fl[si].suppressed, __ATOMIC_RELAXED);
    if (n > s->suppSeen[si]) g->suppressed(g, s->relOf[si], (int64_t)(n - s->suppSeen[si]));
    s->suppSeen[si] = n;
  }
}

static tq_pm_status shmStart(tq_pm_global *g, tq_pm_private *p) {
  Shm *s = tqCalloc(1, sizeof *s);
  s->bus = -1;
  p->data = s;
  s->g = g;
  s->fd = -1;
  s->qLimit = SHM_QBYTES;
  const char *qmb = getenv("TQMON_SHM_QUEUE_MB"); /* (1 to 65536) */
  if (qmb && atol(qmb) >= 1 && atol(qmb) <= 65536) s->qLimit = (uint64_t)atol(qmb) << 20;
  const char *a = p->args;
  int all = !strncmp(a, "all+", 4);
  if (all) a += 4;
  calibrate(s); /* (before the subject starts: it waits for us) */
  if (!strncmp(a, "exec:", 5)) {
    if (createSegment(s, p) || startChild(s, p, a + 5)) return TQ_PM_FATAL;
  } else {
    /* the segments of this user's subjects that were killed unmonitored
    ** (their own exit handler never ran; tqshmgc.h) */
    tq_shm_sweep();
    char *end;
    long pid = strtol(a + 7, &end, 10);
    if (*end || pid <= 0 || pid > INT32_MAX) {
      snprintf(p->message, sizeof p->message, "attach: '%s' is not a process id", a + 7);
      return TQ_PM_FATAL;
    }
    s->pid = (pid_t)pid;
    char name[64];
    snprintf(name, sizeof name, "/tqmon.%ld", pid);
    if (kill(s->pid, 0) && errno == ESRCH) {
      /* what a killed subject of ours left behind (never another user's) */
      char path[96];
      struct stat st;
      snprintf(path, sizeof path, "/dev/shm%s", name);
      if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid()) shm_unlink(name);
      snprintf(p->message, sizeof p->message, "no process %ld to attach to", pid);
      return TQ_PM_FATAL;
    }
    if (mapSegment(s, p, name) || claim(s, p)) return TQ_PM_FATAL;
  }
  /* wait for the subject to map the segment and write its catalog */
  struct timespec d = {0, 2 * 1000 * 1000};
  for (int i = 0; i < 5000 && __atomic_load_n(&s->h->state, __ATOMIC_ACQUIRE) == TQ_SHM_CREATED; i++) {
    if (s->child && !alive(s)) {
      snprintf(p->message, sizeof p->message, "the subject exited before it mapped the sensor segment");
      return TQ_PM_FATAL;
    }
    nanosleep(&d, NULL);
  }
  if (s->h->state == TQ_SHM_CREATED) {
    snprintf(p->message, sizeof p->message,
             "the subject did not map the sensor segment within 10 s (is it built with the generated sensors?)");
    return TQ_PM_FATAL;
  }
  if (s->fd >= 0) { /* it has it mapped: the descriptor is of no more use */
    close(s->fd);
    s->fd = -1;
  }
  /* the subject may have written anything: check the header again */
  if (checkHeader(p, s) || mapCatalog(s, g, p)) return TQ_PM_FATAL;
  /* a program list (monitor programs, --programs) chooses among the
  ** processes a source finds; --exec and --attach find none, they name the
  ** one program they measure, whose entities are its own: it is matched
  ** against the list (so that a pattern naming it is counted) and measured
  ** all the same, said when the list does not name it */
  if (!snsProcessWanted(g, s->pid, NULL)) {
    char comm[64] = "?", path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)s->pid);
    FILE *cf = fopen(path, "r");
    if (cf && fgets(comm, sizeof comm, cf)) comm[strcspn(comm, "\n")] = 0;
    if (cf) fclose(cf);
    g->log(g, p, TQ_LOG_WARNING,
           "the program list does not name the program of --%s, %s (pid %d): measured all the same (--exec and --attach "
           "name the one program they measure)",
           s->child ? "exec" : "attach", comm, (int)s->pid);
  }
  writeFilters(s, g);
  /* the sensor words: the intervals of a traced relation a query uses are
  ** all reported (the engine must know every open one: it may be delivered
  ** whole at its end); an event sensor a query uses reports on the entities
  ** the monitor has not seen yet (TQ_SHM_USED, TQ_SHM_PENDING) */
  volatile uint32_t *on_ = (volatile uint32_t *)((char *)s->h + s->geo.off_on);
  for (int i = 0; i < s->nsens; i++) {
    int rel = s->relOf[i];
    if (!rel) continue;
    int mode = g->relation_mode(g, rel), traced = mode == TQ_MODE_TRACED || mode == TQ_MODE_DISABLE;
    if (all && traced)
      __atomic_fetch_or(&on_[i], TQ_SHM_ALL, __ATOMIC_RELEASE);
    else if (traced && !g->is_event(g, rel) && g->needed(g, rel))
      __atomic_fetch_add(&on_[i], 1, __ATOMIC_RELEASE);
    else if (traced && g->is_event(g, rel) && g->needed(g, rel))
      __atomic_fetch_or(&on_[i], TQ_SHM_USED, __ATOMIC_RELEASE);
  }
  s->start = s->prevNow = s->outT = g->now;
  if (!s->child) attachState(s);
  pthread_mutex_init(&s->mu, NULL);
  if (pthread_create(&s->th, NULL, drainMain, s) == 0) s->thRunning = 1;
  /* the handshake: a subject we started runs on from here */
  __atomic_store_n(&s->h->monitor_ready, 1, __ATOMIC_RELEASE);
  s->readyT = realNow(); /* (a gap before it is told at the first snapshot: reportGap) */
  return TQ_PM_OK;
}

/* A subject started by us that gave up waiting for us (TQMON_START_TIMEOUT)
** ran with its sensors off from then until we were ready: what its traced
** sensors saw then is lost, and how much is not known (a sensor that is
** off counts nothing).  Told once, at the first snapshot that sees it (not
** at START: the CONSUMERs that keep losses, a recorder, may not have
** started yet; the subject writes the time before it reads the sensor
** words again, so a snapshot sees it at the latest one after), on every
** relation a traced sensor of the subject feeds: over [gave up, ready),
** count not known, its entity not known, with begins and ends of
** intervals among them for an interval relation.  Entities are always
** reported, and samples are asked for only once we are ready: neither
** is lost.  A subject that gave up after we were ready lost nothing (the
** sensor words were written before). */
static void reportGap(Shm *s, tq_pm_global *g, tq_pm_private *p) {
  if (!s->own || s->gapTold) return;
  uint64_t gave = __atomic_load_n(&s->h->gave_up, __ATOMIC_ACQUIRE);
  if (!gave) return;
  s->gapTold = 1;
  TqTime from = toNs(s, gave);
  if (from >= s->readyT) return;
  if (from < s->start) from = s->start; /* (the collection begins there) */
  s->gapFrom = from;
  int n = 0;
  for (int si = 0; si < s->nsens; si++) {
    const tq_shm_sensor *x = &s->cat[si];
    if (!s->relOf[si] || x->is_entity || x->sampled) continue;
    if (g->lost(g, s->relOf[si], TQ_PM_ENTITY_UNKNOWN, from, s->readyT, TQ_PM_LOST_UNKNOWN, !x->is_event) == 0) n++;
  }
  char a[64], b[64];
  if (n)
    g->log(g, p, TQ_LOG_WARNING,
           "the subject (pid %d) gave up waiting for the monitor (TQMON_START_TIMEOUT) and ran from %s to %s with its "
           "sensors off: what they saw then is lost, on %d relation%s, how much is not known (docs/losses.md)",
           (int)s->pid, tqTimeFormat(a, sizeof a, from), tqTimeFormat(b, sizeof b, s->readyT), n, n == 1 ? "" : "s");
}

/* The collection ends before the subject: it is asked to end (SIGTERM),
** and killed after 5 s if it does not. */
static void stopChild(tq_pm_global *g, tq_pm_private *p, Shm *s) {
  if (kill(s->pid, SIGTERM)) return;
  struct timespec d = {0, 10 * 1000 * 1000};
  for (int i = 0; i < 500; i++) {
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) return;
    nanosleep(&d, NULL);
  }
  g->log(g, p, TQ_LOG_WARNING, "the subject (pid %d) did not end within 5 s of SIGTERM: killed", (int)s->pid);
  kill(s->pid, SIGKILL);
  waitpid(s->pid, NULL, 0);
}

static tq_pm_status shmEnd(tq_pm_global *g, tq_pm_private *p) {
  Shm *s = p->data;
  if (!s) return TQ_PM_OK;
  tq_pm_status st = TQ_PM_OK;
  if (s->thRunning) {
    s->thStop = 1;
    pthread_join(s->th, NULL);
    s->thRunning = 0;
  }
  if (s->h && s->claimed) { /* (a monitor refused never reads the rings) */
    reportSuppressed(s, g);
    /* (each loss was told at a snapshot, once: this sums them up) */
    int64_t lost = s->ringLost + s->slotLost + s->late + s->bad + s->noHandle + s->samplesLost;
    if (lost)
      g->log(g, p, TQ_LOG_WARNING,
             "%lld packets lost: %lld ring full, %lld no ring or entity slot, %lld late (past the reorder window), "
             "%lld with a string or entity beyond the table, %lld invalid%s%s, %lld sample requests unanswered",
             (long long)lost, (long long)s->ringLost, (long long)s->slotLost, (long long)s->late, (long long)s->noHandle,
             (long long)s->bad, s->bad ? ": first " : "", s->badWhy, (long long)s->samplesLost);
    uint64_t full = s->h->lost_entities;
    if (full)
      g->log(g, p, TQ_LOG_WARNING,
             "%llu entity and string declarations found no slot: the table holds %u (TQMON_ENTITIES; sensors/README.md)",
             (unsigned long long)full, (unsigned)s->geo.max_entities);
    snprintf(p->message, sizeof p->message, "%lld packets, %lld lost%s", (long long)s->packets, (long long)lost,
             s->gapFrom ? ", and more not counted before the monitor was ready" : "");
    char json[768];
    snprintf(json, sizeof json,
             "{\"packets\": %lld, \"lost\": %lld, \"ring_full\": %lld, \"no_ring_or_slot\": %lld, \"late\": %lld, "
             "\"beyond_table\": %lld, \"invalid\": %lld, \"samples_unanswered\": %lld, \"declarations_without_slot\": %llu, "
             "\"time_went_back\": %lld, \"queue_bytes\": %llu, \"queue_limit\": %llu, \"sensors_off_ns\": %lld}",
             (long long)s->packets, (long long)lost, (long long)s->ringLost, (long long)s->slotLost, (long long)s->late,
             (long long)s->noHandle, (long long)s->bad, (long long)s->samplesLost, (unsigned long long)full,
             (long long)s->backwards, (unsigned long long)s->qBytes, (unsigned long long)s->qLimit,
             (long long)(s->gapFrom ? s->readyT - s->gapFrom : 0));
    g->set_detail(g, p, json);
  }
  if (s->child && !s->reaped) stopChild(g, p, s);
  for (uint32_t k = 0; k < s->open.cap; k++)
    if (s->open.slot[k].key > 1) free(s->open.slot[k].val);
  tqMapFree(&s->open);
  free(s->symOf);
  free(s->ownOf);
  tqMapFree(&s->handleOf);
  tqMapFree(&s->want);
  for (uint32_t i = 0; s->rq && s->h && i < s->geo.nrings; i++) free(s->rq[i].q);
  free(s->rq);
  free(s->sensOf);
  free(s->synth);
  free(s->ack);
  free(s->spansSeen);
  if (s->fd >= 0) close(s->fd);
  /* a subject killed by a signal could not remove its own segment (the
  ** one we checked was its) */
  int deadSubject = !s->own && s->pid > 0 && kill(s->pid, 0) && errno == ESRCH;
  if (s->h) {
    unclaim(s);
    tq_bus_del(s->bus);
    munmap(s->h, s->size);
  }
  if (deadSubject && s->h) shm_unlink(s->name + strlen("/dev/shm"));
  free(s);
  p->data = NULL;
  return st;
}

/* The resident drain: rings are emptied as they fill, not only at
** snapshots, so a busy subject's rings do not overflow between ticks. */
/* The drain thread takes what the rings hold in batches: when it caught
** up (less than a quarter of a chunk came) it waits a little, so that it
** does not read the slots the producers are writing one by one. */
/* After a drain that took `took` slots, the drain thread waits the time a
** quarter of a ring takes to fill at the rate the last wakes saw (the
** latest, or half the one before when that is more: it rises at once and
** halves at each quiet wake), between 50 us and 1 ms; none when the drain
** stopped at SHM_CHUNK slots of a ring (a full queue waits for the
** snapshot like the rest).  Each wake costs a context switch (about
** 20 us of CPU on this kind of VM): waking every 200 us while idle, as it
** did, cost a monitor a tenth of a core.  A quarter of the default ring
** (16384 slots) fills in 1 ms at 4 M packets/s; a burst faster than a
** ring in 1 ms after a quiet spell is what it may now drop (counted). */
#define SHM_PAUSE_MIN 50000
#define SHM_PAUSE_MAX 1000000
static void drainPause(Shm *s, uint64_t took, int chunked) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  TqTime now = (TqTime)ts.tv_sec * 1000000000 + ts.tv_nsec, dt = s->pauseT ? now - s->pauseT : 0;
  double rate = dt > 0 ? (double)took / (double)dt : 0;
  s->pauseRate = rate > s->pauseRate / 2 ? rate : s->pauseRate / 2;
  s->pauseT = now; /* (the slots the next drain takes came from here on) */
  if (chunked) return;
  double w = s->pauseRate > 0 ? (double)(s->geo.ring_slots / 4) / s->pauseRate : SHM_PAUSE_MAX;
  struct timespec d = {0, w < SHM_PAUSE_MIN ? SHM_PAUSE_MIN : w > SHM_PAUSE_MAX ? SHM_PAUSE_MAX : (long)w};
  nanosleep(&d, NULL);
}

static void *drainMain(void *arg) {
  Shm *s = arg;
  while (!s->thStop) {
    pthread_mutex_lock(&s->mu);
    uint64_t took = drain(s);
    int chunked = s->chunked; /* (the engine's drains write it too, under the lock) */
    pthread_mutex_unlock(&s->mu);
    drainPause(s, took, chunked);
  }
  return NULL;
}

static tq_pm_status shmSnapshot(tq_pm_global *g, tq_pm_private *p) {
  Shm *s = p->data;
  if (s->done) {
    g->halt(g);
    return TQ_PM_OK;
  }
  pthread_mutex_lock(&s->mu);
  tq_pm_status st = snapshotLocked(s, g, p);
  pthread_mutex_unlock(&s->mu);
  return st;
}

/* The symbol of entity handle h once the monitor has seen it (else not known). */
static int64_t lossEntity(Shm *s, uint32_t h) {
  if (!h || h == UINT32_MAX || (uint64_t)h >= s->csymOf || !s->symOf[h]) return TQ_PM_ENTITY_UNKNOWN;
  return s->symOf[h] - 1;
}

static TqTime lossTime(Shm *s, uint64_t stamp, TqTime now) {
  TqTime t = stamp ? toNs(s, stamp) : s->start;
  return t < s->start ? s->start : t > now ? now : t;
}

/* Tells the engine, once, the packets lost since the last snapshot: those
** the rings had no room for (per ring and sensor, from the first drop of
** the episode, on its flag entity when all were on one), those that found
** no ring or entity slot, the late ones, the ones with a value beyond the
** table, and the invalid ones (of a sensor not known).  Losses of a sensor
** the program does not declare are counted, and read by no answer. */
static void reportLosses(Shm *s, tq_pm_global *g) {
  tq_shm_header *h = s->h;
  /* (the drops went on until the monitor looked: now, which the engine's
  ** time may lag behind) */
  TqTime now = realNow() > g->now ? realNow() : g->now;
  uint32_t taken = __atomic_load_n(&h->rings_taken, __ATOMIC_ACQUIRE), nr = taken < s->geo.nrings ? taken : s->geo.nrings;
  if (!s->spansSeen) s->spansSeen = tqCalloc((size_t)s->geo.nrings * 64, sizeof(uint32_t));
  for (uint32_t i = 0; i < nr; i++)
    for (int si = 0; si < s->nsens; si++) {
      tq_shm_loss *l = (tq_shm_loss *)((char *)h + s->geo.off_losses) + (uint64_t)i * s->geo.max_sensors + (uint32_t)si;
      uint64_t c = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE), seen = l->seen;
      if (c == seen) continue;
      uint64_t first = l->first;
      uint32_t ent = l->entity, spans = l->spans, *ss = &s->spansSeen[(size_t)i * 64 + (size_t)si];
      __atomic_store_n(&l->seen, c, __ATOMIC_RELEASE); /* (a new episode begins) */
      if (c < seen || c - seen > ((uint64_t)1 << 48)) {
        noteBad(s, "ring %u: loss count of %s went from %llu to %llu", i, s->cat[si].name, (unsigned long long)seen,
                (unsigned long long)c);
        continue;
      }
      int sp = spans != *ss;
      *ss = spans;
      s->ringLost += (int64_t)(c - seen);
      if (s->relOf[si]) g->lost(g, s->relOf[si], lossEntity(s, ent), lossTime(s, first, now), now, (int64_t)(c - seen), sp);
    }
  tq_shm_gloss *gl = (tq_shm_gloss *)((char *)h + s->geo.off_gloss);
  for (int si = 0; si < s->nsens; si++) {
    uint64_t c = __atomic_load_n(&gl[si].count, __ATOMIC_ACQUIRE);
    if (c <= s->glossSeen[si]) continue;
    int64_t n = (int64_t)(c - s->glossSeen[si]);
    s->glossSeen[si] = c;
    s->slotLost += n;
    if (s->relOf[si])
      g->lost(g, s->relOf[si], TQ_PM_ENTITY_UNKNOWN, lossTime(s, __atomic_load_n(&gl[si].first, __ATOMIC_RELAXED), now), now, n,
              !s->cat[si].is_event);
  }
  for (int si = 0; si < s->nsens; si++) {
    if (!s->pend[si].n) continue;
    if (s->relOf[si])
      g->lost(g, s->relOf[si], s->pend[si].ent, s->pend[si].from, s->pend[si].to, s->pend[si].n, !s->cat[si].is_event);
    s->pend[si].n = 0;
  }
  if (s->bad > s->badSeen) {
    g->lost(g, 0, TQ_PM_ENTITY_UNKNOWN, s->prevNow < g->now ? s->prevNow : g->now, now, s->bad - s->badSeen, 1);
    s->badSeen = s->bad;
  }
}

static tq_pm_status snapshotLocked(Shm *s, tq_pm_global *g, tq_pm_private *p) {
  if (!s->shrank && tq_bus_shrunk(s->bus)) { /* (what it held is zeros now) */
    s->shrank = s->exited = 1;
    tq_bus_why(s->bus, s->name, s->shrankWhy, sizeof s->shrankWhy);
  }
  if (!s->exited && !alive(s)) s->exited = 1;
  if (!s->shrank && (memcmp(s->h->magic, TQ_SHM_MAGIC, 8) || s->h->version != TQ_SHM_VERSION)) {
    snprintf(p->message, sizeof p->message, "%s: the subject overwrote the segment header (magic or version)", s->name);
    return TQ_PM_FATAL;
  }
  settlePending(s);
  for (int i = 0; i < s->nsynth; i++) emit(s, &s->synth[i]);
  s->nsynth = 0;
  reanchor(s, g->tick);
  do { /* until every ring is drained up to now (each is in time order) */
    drain(s);
    merge(s, g->now);
  } while (s->cap <= g->now);
  reportLosses(s, g);
  reportGap(s, g, p);
  if (s->exited && !pending(s)) {
    TqTime last = s->lastT > s->prevNow ? s->lastT : s->prevNow;
    int open = closeAll(s, last + 1); /* (what happened at its last time is in) */
    char why[128], at[64];
    if (s->shrank) {
      /* it may run on, but what it writes is out of our reach */
      enNet(g)->stopped = 1;
      g->log(g, p, TQ_LOG_WARNING,
             "the subject (pid %d) %s under the monitor by %s: what it wrote from then on is lost; the run stopped "
             "early; %d open interval%s ended there",
             (int)s->pid, s->shrankWhy, tqTimeFormat(at, sizeof at, last), open, open == 1 ? " was" : "s were");
    } else if (howEnded(s, why, sizeof why)) {
      /* not an end: the run stopped early, and says so */
      enNet(g)->stopped = 1;
      g->log(g, p, TQ_LOG_WARNING, "the subject (pid %d) %s at %s: the run stopped early; %d open interval%s ended there",
             (int)s->pid, why, tqTimeFormat(at, sizeof at, last), open, open == 1 ? " was" : "s were");
    } else {
      g->log(g, p, why[6] ? TQ_LOG_WARNING : TQ_LOG_INFO, "the subject (pid %d) %s at %s", (int)s->pid, why,
             tqTimeFormat(at, sizeof at, last));
    }
    s->done = 1;
  }
  s->prevNow = g->now;
  s->grace = 0;
  reportSuppressed(s, g);
  return TQ_PM_OK;
}

static tq_pm_status shmCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  switch (what) {
    case TQ_PM_START: return shmStart(g, p);
    case TQ_PM_SNAPSHOT: return shmSnapshot(g, p);
    case TQ_PM_END: return shmEnd(g, p);
    default: return TQ_PM_OK;
  }
}

static uint64_t wantKey(int si, int64_t sym) { return tqHash64(((uint64_t)si << 40) ^ (uint64_t)sym) | 2; }

/* Writes the enable count of entity handle h for sensor si (the low bits
** of the sensor word count the entities enabled; a pending counter is
** none of them). */
static void setCounter(Shm *s, int si, intptr_t h, int on) {
  volatile uint32_t *on_ = (volatile uint32_t *)((char *)s->h + s->geo.off_on);
  volatile uint32_t *cnt = (volatile uint32_t *)((char *)s->h + s->geo.off_counters);
  uint32_t old = __atomic_exchange_n(&cnt[(uint64_t)h * s->geo.max_sensors + (uint64_t)si],
                                     (uint32_t)(on > 0 ? (on < (int)TQ_SHM_USED ? on : (int)TQ_SHM_USED - 1) : 0),
                                     __ATOMIC_RELEASE);
  int was = old && !(old & TQ_SHM_PENDING);
  if (!was && on > 0) __atomic_fetch_add(&on_[si], 1, __ATOMIC_RELEASE);
  else if (was && on <= 0) __atomic_fetch_sub(&on_[si], 1, __ATOMIC_RELEASE);
}

/* The entities produced at the last snapshot have been seen by the engine
** since (it processed them after that call): their counters still
** pending are settled to what the queries asked for, none. */
static void settlePending(Shm *s) {
  volatile uint32_t *cnt = (volatile uint32_t *)((char *)s->h + s->geo.off_counters);
  for (int i = 0; i < s->nack; i++) {
    uint64_t h = (uint64_t)s->ack[i];
    if (!h || h >= s->geo.max_entities) continue;
    for (int si = 0; si < s->nsens; si++) {
      uint32_t pend = TQ_SHM_PENDING;
      __atomic_compare_exchange_n(&cnt[h * s->geo.max_sensors + (uint64_t)si], &pend, 0, 0, __ATOMIC_RELEASE,
                                  __ATOMIC_RELAXED);
    }
  }
  s->nack = 0;
}

/* An entity appeared with handle h: the flags asked for it before apply. */
static void applyWants(Shm *s, int64_t sym, intptr_t h) {
  if (!s->want.n) return;
  for (int si = 0; si < s->nsens; si++) {
    intptr_t w = (intptr_t)tqMapGet(&s->want, wantKey(si, sym));
    if (w > 1) setCounter(s, si, h, (int)(w - 1));
  }
}

/* The flag of entity on relation p->rel: the segment's counter follows it. */
static tq_pm_status shmEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Shm *s = p->data;
  if (!s || !s->h || p->rel < 1 || p->rel > s->nrel) return TQ_PM_OK;
  int si = s->sensOf[p->rel];
  if (si < 0) return TQ_PM_OK;
  if (on > 0) tqMapPut(&s->want, wantKey(si, entity), (void *)(intptr_t)(on + 1));
  else tqMapDel(&s->want, wantKey(si, entity));
  intptr_t h = (intptr_t)tqMapGet(&s->handleOf, (uint64_t)entity + 2);
  if (h <= 0 || (uint64_t)h >= s->geo.max_entities) return TQ_PM_OK; /* applied when it appears */
  setCounter(s, si, h, on);
  return TQ_PM_OK;
}

/* A sample of relation p->rel about entity who: a request to the subject. */
static tq_pm_status shmSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  Shm *s = p->data;
  if (!s || !s->h || s->exited || p->rel < 1 || p->rel > s->nrel) return TQ_PM_OK;
  int si = s->sensOf[p->rel];
  intptr_t h = (intptr_t)tqMapGet(&s->handleOf, (uint64_t)who + 2);
  if (si < 0 || h <= 0) return TQ_PM_OK;
  tq_shm_header *hd = s->h;
  if (hd->req_head - __atomic_load_n(&hd->req_tail, __ATOMIC_ACQUIRE) >= TQ_SHM_REQUESTS) {
    s->samplesLost++;
    g->lost(g, p->rel, who, t, t, 1, 0);
    return TQ_PM_OK;
  }
  tq_shm_request *rq = (tq_shm_request *)((char *)hd + hd->off_requests);
  uint32_t seq = ++s->seq ? s->seq : ++s->seq;
  rq[hd->req_head % TQ_SHM_REQUESTS] = (tq_shm_request){seq, (uint32_t)si, (uint32_t)h, 0};
  s->waiting = 1;
  s->waitSeq = seq;
  s->cookie = cookie;
  __atomic_store_n(&hd->req_head, hd->req_head + 1, __ATOMIC_RELEASE);
  struct timespec d = {0, 20000};
  for (int i = 0; s->waiting && i < 10000; i++) { /* 200 ms at most */
    pthread_mutex_lock(&s->mu);
    drain(s);
    pthread_mutex_unlock(&s->mu);
    if (!s->waiting) break;
    if (i % 64 == 63 && !alive(s)) break;
    nanosleep(&d, NULL);
  }
  if (s->waiting) {
    s->waiting = 0;
    s->samplesLost++;
    g->lost(g, p->rel, who, t, t, 1, 0);
  }
  return TQ_PM_OK;
}

const tq_pm snsShmPm = {
    .version = TQ_PM_VERSION,
    .name = "shm",
    .description = "PRODUCER of generated sensors in a running program (args: exec:CMD or attach:PID)",
    .init = shmInit,
    .call = shmCall,
    .enable = shmEnable,
    .sample = shmSample,
};
