/*
** pmdatqmon.c - the tqmon PCP agent (PMDA): the resident monitor of this
** host's programs built with generated sensors, as a citizen of PCP
** (issue 19; sensors/pmdatqmon.md).  pmcd starts it as a pipe agent.
**
** It finds the segments /tqmon.PID that programs make for a monitor to
** attach to (sensors/tqshm.h, the --attach machinery), becomes their
** monitor (monitor_pid), and drains their rings from a thread of its own,
** converting TSC stamps to CLOCK_REALTIME ns and merging the rings in time
** order a reorder window behind now.  Every relation of every program is an
** instance "PID/Relation" of the event metric tqmon.records
** (PM_TYPE_HIGHRES_EVENT).
**
** Nothing is enabled and nothing is sent until a client asks: a client
** (a PMAPI context) stores "set PID/Relation ENTITY COUNT" into
** tqmon.control (COUNT 0 withdraws it; ENTITY * is the relation whole).  The
** segment's enable counter of (relation, entity) is the sum of the clients'
** counts, so enables are reference counted per client, and a client's are
** released when its context ends (pmdaSetEndContextCallBack).  A client
** then fetches tqmon.records: the records of the relations and entities it
** enabled, queued for it since (at most -q, 65536 by default; beyond, dropped and
** reported to it in a record of kind AG_MISSED).  A client that enables a relation
** whole first gets its tuples open now (their true begin).  When a program
** exits its open tuples end at its last time and its clients get a record
** of kind AG_EXIT.
**
** Counters: per (relation, entity) the packets drained (written by the
** program) and the records sent to clients, per program packets, losses
** (full rings, invalid packets, late packets) and state.
**
** With -k it serves the kernel's relations too (every relation of
** sensors/kernel.tq: Thread and Processor, the lifecycle, the scheduler,
** system calls, block I/O, sockets), as the program slot "kernel"
** (instances kernel/REL, entities the threads "TID" or "TID#N" and the
** CPUs "cpuN"): its BPF programs are the kernel sensors'
** (sensors/kernel/ks.bpf.c), loaded and followed by pmdatqmon_kernel.c; a
** client's "set kernel/REL TID COUNT" sets the thread's flag in the kernel
** while some client counts it (a new thread's inherited flags count for
** the clients of its creator for a while: inherit()), and "set
** kernel/Thread * 1" asks for the threads' tuples.
**
** It uses nothing of tqmon's engine: tqshm.h (like the sensors' own
** runtime), the kernel sensors' BPF object, ks.h and ksbpf.c (what the
** kernel PMs share with it), libpcp_pmda and libbpf.  Every field of a
** segment is validated before use.
**
** Why one file of over 1,000 lines: pmdatqmon is a program of its own, built
** apart from libtqmon, and its parts (segments, drain, clients, PMDA
** callbacks) share the agent's one state under one lock.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define AG_TSC 1
#else
#define AG_TSC 0
#endif

#include <pcp/pmapi.h>
#include <pcp/pmda.h>

#include "pmdatqmon_kernel.h"
#include "tqshm.h"
#include "tqshmbus.h"
#include "tqshmgc.h"

#define AG_DOMAIN 212           /* default domain (-d): not in PCP's stdpmid */
#define AG_MAXPROG 256          /* programs known at once (-P: fewer); the slot of one that
                                ** exited is reused once its records are fetched */
#define AG_MAXOPEN (1 << 18)    /* intervals a program has open at once (past it, a begin is invalid) */
/* A stamp later than the agent's clock when it drains the packet by more
** than this (compared in the stamps' unit, before conversion) is garbage:
** taken, it would hold its ring's later packets back, queued, until it. */
#define AG_AHEAD_NS 1000000000LL
#define AG_QMAX 65536           /* records queued per client, by default (-q) */
#define AG_WINDOW_NS 20000000LL /* reorder window: rings merged this far behind now */
#define AG_EXIT 100             /* record kind: the program exited (after its last records) */
#define AG_MISSED 101           /* record kind: records dropped for this client (its queue was full) */

/* ================================================================ state */

/* A drained packet, converted (entity and string values stay handles). */
typedef struct Pkt {
  int64_t t;                    /* CLOCK_REALTIME ns */
  int64_t from;                 /* END: its begin's time */
  uint64_t id;                  /* interval id */
  int64_t v[TQ_SHM_MAX_ATTRS];  /* values */
  uint16_t prog;                /* index in progs */
  uint8_t sens, kind, n;        /* catalog index, TQ_SHM_* or AG_EXIT, values */
} Pkt;

typedef struct PktQ {           /* a FIFO of packets (capacity a power of 2) */
  Pkt *q;
  size_t head, n, cap;
} PktQ;

typedef struct Open {           /* an interval begun and not ended */
  struct Open *next;
  uint8_t sens, n;
  uint64_t id;
  int64_t from;
  int64_t v[TQ_SHM_MAX_ATTRS];
} Open;

typedef struct Stat {           /* counters of one (relation, flag entity) */
  struct Stat *next;
  int prog, sens;
  int64_t handle;               /* its flag entity (0: none) */
  uint64_t written, sent;       /* packets drained, records sent to clients */
  char inst[128];               /* instance name PID/Relation/Entity */
} Stat;

typedef struct Prog {
  int used;                     /* a slot in use */
  int kernel;                   /* the kernel's relations (-k; pid 0, no segment): "kernel/Syscall" */
  pid_t pid;
  char shmName[64];
  tq_shm_header *h;             /* NULL once unmapped */
  int bus;                      /* its mapping's entry in tqshmbus.h's registry (-1: none) */
  int shrunk;                   /* it shrank its segment (tq_bus_shrunk, told) */
  tq_shm_header geo;            /* its header as checked: the geometry is read here, never
                                ** again from the segment the program can write */
  size_t size;
  ino_t ino;                    /* its segment's file (a file of the same pid after it */
  dev_t dev;                    /* exited is another program's if it is another file) */
  tq_shm_sensor cat[64];        /* its catalog (copied, checked) */
  int nsens;
  int exited;                   /* gone: last records released, EXIT sent */
  int64_t exitedAt;             /* when (its slot is reused, the oldest first) */
  char **names;                 /* entity and string names by handle (cached, kept after exit) */
  uint64_t cnames;
  PktQ *rq;                     /* per ring: drained, not yet released */
  Open *open[1024];             /* open intervals by hash of (sensor, id) */
  int64_t nopen;                /* intervals in open */
  int64_t lastT;                /* time of its last packet */
  int64_t outT;                 /* time of the last packet released */
  uint64_t tsc0;                /* TSC to ns: ns0 + (tsc - tsc0) * nsPerTick */
  int64_t ns0;
  double nsPerTick;
  uint64_t ticksAhead;          /* AG_AHEAD_NS in ticks (by the first measure) */
  uint64_t aheadStamp;          /* a stamp after it is invalid (set at each drain) */
  uint64_t packets, bad, late, before; /* drained, invalid, late, cut at attach */
  uint64_t dropped;             /* full rings and no ring, as the program counted */
  char badWhy[160];             /* the first invalid packet */
  int64_t anchorAt;             /* when the TSC line was last measured */
} Prog;

typedef struct Sub {            /* one enable of a client */
  int prog, sens;
  char entity[TQ_SHM_NAME_LEN]; /* "*": the relation whole */
  uint32_t count;
  int64_t prov;                 /* the kernel's: inherited by a new thread, until then (ns; 0: the client's own) */
} Sub;

typedef struct Client {
  struct Client *next;
  int ctx;                      /* pmda context number */
  Sub *subs;
  int nsubs, csubs;
  PktQ q;                       /* records for it */
  uint64_t missed;              /* dropped since its last fetch (queue full) */
  uint64_t missedTotal;
} Client;

static Prog progs[AG_MAXPROG];
static Client *clients;

/* (a program that shrinks its segment under the agent: tqshmbus.h) */
static Stat *stats[1024];
static uint64_t aDropped;       /* records dropped over all clients */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stopping;
static size_t qmax = AG_QMAX; /* -q: records queued per client at most */
static int maxProg = AG_MAXPROG; /* -P: programs known at once */
static const char *onlyCommand; /* -c: watch only programs of this command (several agents on one host) */

static pmdaInterface dispatch;

/* instance domains */
enum { IND_REL, IND_STAT, IND_PROG, IND_RES, IND_TUP };
static pmdaIndom indomtab[] = {{IND_REL, 0, NULL}, {IND_STAT, 0, NULL}, {IND_PROG, 0, NULL}, {IND_RES, 0, NULL}, {IND_TUP, 0, NULL}};

/* metrics: cluster 0 records and control, 1 event parameters, 2 per
** (relation, entity), 3 per program, 4 the agent */
enum {
  M_RECORDS, M_CONTROL,
  M_P_KIND, M_P_ID, M_P_FROM, M_P_INT, M_P_FLOAT, M_P_STRING,
  M_S_WRITTEN, M_S_SENT, M_S_ENABLED,
  M_G_PACKETS, M_G_LOST, M_G_INVALID, M_G_LATE, M_G_STATE, M_G_CATALOG, M_G_COMMAND,
  M_A_CLIENTS, M_A_DROPPED, M_A_PID,
  M_R_VALID, M_R_ROWS, M_R_TUPLE
};
#define U0 PMDA_PMUNITS(0, 0, 0, 0, 0, 0)
#define UC PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE)
static pmdaMetric metrictab[] = {
    {NULL, {PMDA_PMID(0, 0), PM_TYPE_HIGHRES_EVENT, IND_REL, PM_SEM_INSTANT, U0}},
    {NULL, {PMDA_PMID(0, 1), PM_TYPE_STRING, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 0), PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 1), PM_TYPE_U64, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 2), PM_TYPE_64, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 3), PM_TYPE_64, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 4), PM_TYPE_DOUBLE, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(1, 5), PM_TYPE_STRING, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(2, 0), PM_TYPE_U64, IND_STAT, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(2, 1), PM_TYPE_U64, IND_STAT, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(2, 2), PM_TYPE_U32, IND_STAT, PM_SEM_INSTANT, U0}},
    {NULL, {PMDA_PMID(3, 0), PM_TYPE_U64, IND_PROG, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(3, 1), PM_TYPE_U64, IND_PROG, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(3, 2), PM_TYPE_U64, IND_PROG, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(3, 3), PM_TYPE_U64, IND_PROG, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(3, 4), PM_TYPE_STRING, IND_PROG, PM_SEM_INSTANT, U0}},
    {NULL, {PMDA_PMID(3, 5), PM_TYPE_STRING, IND_PROG, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(3, 6), PM_TYPE_STRING, IND_PROG, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(4, 0), PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_INSTANT, U0}},
    {NULL, {PMDA_PMID(4, 1), PM_TYPE_U64, PM_INDOM_NULL, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(4, 2), PM_TYPE_U32, PM_INDOM_NULL, PM_SEM_DISCRETE, U0}},
    {NULL, {PMDA_PMID(5, 0), PM_TYPE_U32, IND_RES, PM_SEM_INSTANT, UC}},
    {NULL, {PMDA_PMID(5, 1), PM_TYPE_U64, IND_RES, PM_SEM_COUNTER, UC}},
    {NULL, {PMDA_PMID(5, 2), PM_TYPE_STRING, IND_TUP, PM_SEM_INSTANT, U0}},
};
#define NMETRIC ((int)(sizeof metrictab / sizeof metrictab[0]))

static pmID pidOf(int m) { return metrictab[m].m_desc.pmid; }

static int64_t realNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t sz) {
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) {
    pmNotifyErr(LOG_ERR, "out of memory");
    exit(1);
  }
  return p;
}

/* ================================================================ queues */

static Pkt *qPush(PktQ *q) {
  if (q->n == q->cap) {
    size_t nc = q->cap ? 2 * q->cap : 256;
    Pkt *nq = xcalloc(nc, sizeof(Pkt));
    for (size_t i = 0; i < q->n; i++) nq[i] = q->q[(q->head + i) & (q->cap - 1)];
    free(q->q);
    q->q = nq;
    q->head = 0;
    q->cap = nc;
  }
  Pkt *p = &q->q[(q->head + q->n) & (q->cap - 1)];
  q->n++;
  return p;
}
static Pkt *qFront(PktQ *q) { return q->n ? &q->q[q->head] : NULL; }
static void qPop(PktQ *q) {
  q->head = (q->head + 1) & (q->cap - 1);
  q->n--;
}

/* ================================================================ programs */

static const tq_shm_entity *entityAt(Prog *g, int64_t h) {
  if (!g->h || h <= 0 || (uint64_t)h >= g->geo.max_entities) return NULL;
  uint64_t taken = __atomic_load_n(&g->h->entities_taken, __ATOMIC_ACQUIRE);
  if ((uint64_t)h > taken) return NULL;
  return (const tq_shm_entity *)((const char *)g->h + g->geo.off_entities) + h;
}

/* The name of handle h (cached for good: handles are never reused); NULL
** when it is not a valid entity or string.  The kernel's handles are its
** own (pmdatqmon_kernel.h). */
static const char *nameOf(Prog *g, int64_t h) {
  if (g->kernel) return akName(h);
  if (h > 0 && (uint64_t)h < g->cnames && g->names[h]) return g->names[h];
  const tq_shm_entity *e = entityAt(g, h);
  if (!e) return NULL;
  char nm[TQ_SHM_NAME_LEN];
  memcpy(nm, e->name, sizeof nm);
  nm[TQ_SHM_NAME_LEN - 1] = 0;
  if (!nm[0]) return NULL;
  if ((uint64_t)h >= g->cnames) {
    uint64_t nc = g->cnames ? 2 * g->cnames : 1024;
    while (nc <= (uint64_t)h) nc *= 2;
    char **nn = xcalloc(nc, sizeof(char *));
    if (g->names) memcpy(nn, g->names, sizeof(char *) * g->cnames);
    free(g->names);
    g->names = nn;
    g->cnames = nc;
  }
  g->names[h] = strdup(nm);
  return g->names[h];
}

#if AG_TSC
static void tscPair(uint64_t *tsc, int64_t *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t a = __rdtsc();
    int64_t n = realNow();
    uint64_t b = __rdtsc();
    if (b - a < best) {
      best = b - a;
      *tsc = a + (b - a) / 2;
      *ns = n;
    }
  }
}
#endif

/* Measures the TSC against CLOCK_REALTIME (over 20 ms at attach, then
** again every second: the line goes on from where it is, at the rate seen
** since, so the order of converted stamps is kept). */
static void anchor(Prog *g, int first) {
#if AG_TSC
  uint64_t t = 0;
  int64_t n = 0;
  if (first) {
    uint64_t a;
    int64_t na;
    tscPair(&a, &na);
    struct timespec d = {0, 20 * 1000 * 1000};
    nanosleep(&d, NULL);
    tscPair(&t, &n);
    g->tsc0 = a;
    g->ns0 = na;
    g->nsPerTick = t > a ? (double)(n - na) / (double)(t - a) : 1.0;
    g->ticksAhead = (uint64_t)((double)AG_AHEAD_NS / (g->nsPerTick > 1e-3 ? g->nsPerTick : 1e-3));
  } else {
    tscPair(&t, &n);
    if (t <= g->tsc0) return;
    int64_t cur = g->ns0 + (int64_t)((double)(t - g->tsc0) * g->nsPerTick);
    double rate = g->nsPerTick + (double)(n - cur) / (double)(t - g->tsc0) / 2;
    if (rate < g->nsPerTick / 2) rate = g->nsPerTick / 2;
    g->tsc0 = t;
    g->ns0 = cur;
    g->nsPerTick = rate;
  }
  g->anchorAt = n;
#else
  (void)first;
  g->nsPerTick = 1.0;
  g->anchorAt = realNow();
#endif
}

/* The latest stamp a packet drained now may carry (the clock now, in the
** stamps' unit, and AG_AHEAD_NS). */
static uint64_t aheadOf(Prog *g) {
#if AG_TSC
  if (g->h->time_kind) return __rdtsc() + g->ticksAhead;
#endif
  return (uint64_t)(realNow() + AG_AHEAD_NS);
}

static int64_t toNs(Prog *g, uint64_t stamp) {
  if (!g->h || !g->h->time_kind) return (int64_t)stamp;
  return g->ns0 + (int64_t)((double)(int64_t)(stamp - g->tsc0) * g->nsPerTick);
}

static void noteBad(Prog *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void noteBad(Prog *g, const char *fmt, ...) {
  if (!g->bad++) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->badWhy, sizeof g->badWhy, fmt, ap);
    va_end(ap);
    pmNotifyErr(LOG_WARNING, "program %d: invalid packet: %s", (int)g->pid, g->badWhy);
  }
}

static Stat *statOf(int prog, int sens, int64_t handle) {
  uint32_t k = (uint32_t)(((uint64_t)prog * 131 + (uint64_t)sens * 7919 + (uint64_t)handle * 2654435761u) % 1024);
  for (Stat *s = stats[k]; s; s = s->next)
    if (s->prog == prog && s->sens == sens && s->handle == handle) return s;
  Prog *g = &progs[prog];
  const char *en = handle ? nameOf(g, handle) : "*";
  Stat *s = xcalloc(1, sizeof *s);
  s->prog = prog;
  s->sens = sens;
  s->handle = handle;
  if (g->kernel) snprintf(s->inst, sizeof s->inst, "kernel/%s/%s", g->cat[sens].name, en ? en : "?");
  else snprintf(s->inst, sizeof s->inst, "%d/%s/%s", (int)g->pid, g->cat[sens].name, en ? en : "?");
  s->next = stats[k];
  stats[k] = s;
  pmdaCacheStore(pmInDom_build(dispatch.domain, IND_STAT), PMDA_CACHE_ADD, s->inst, s);
  return s;
}

/* The flag entity of a packet of a relation (0: none). */
static int64_t flagOf(const Prog *g, const Pkt *p) {
  const tq_shm_sensor *x = &g->cat[p->sens];
  if (x->is_entity) return p->v[0];
  if (x->flag_attr < x->nattr && x->kind[x->flag_attr] == TQ_SHM_ENTITY && p->n > x->flag_attr) return p->v[x->flag_attr];
  return 0;
}

/* Checks the catalog of a mapped segment. */
static int checkCatalog(Prog *g) {
  uint32_t n = __atomic_load_n(&g->h->nsensors, __ATOMIC_ACQUIRE);
  if (n > g->geo.max_sensors || n > 64) return -1;
  memcpy(g->cat, (const char *)g->h + g->geo.off_catalog, sizeof(tq_shm_sensor) * n);
  for (uint32_t i = 0; i < n; i++) {
    tq_shm_sensor *x = &g->cat[i];
    x->name[TQ_SHM_NAME_LEN - 1] = 0;
    if (!x->name[0] || x->nattr > TQ_SHM_MAX_ATTRS) return -1;
    for (int k = 0; k < x->nattr; k++)
      if (x->kind[k] < TQ_SHM_INT || x->kind[k] > TQ_SHM_ENTITY) return -1;
    if (strchr(x->name, '/') || strchr(x->name, ' ')) return -1;
  }
  g->nsens = (int)n;
  return 0;
}

static void openPut(Prog *g, const Pkt *p) {
  Open *o = xcalloc(1, sizeof *o);
  o->sens = p->sens;
  o->n = p->n;
  o->id = p->id;
  o->from = p->t;
  memcpy(o->v, p->v, sizeof o->v);
  uint32_t k = (uint32_t)((p->id * 0x9E3779B97F4A7C15ull ^ p->sens) >> 54);
  o->next = g->open[k];
  g->open[k] = o;
  g->nopen++;
}
static Open *openTake(Prog *g, int sens, uint64_t id) {
  uint32_t k = (uint32_t)((id * 0x9E3779B97F4A7C15ull ^ (uint64_t)sens) >> 54);
  for (Open **pp = &g->open[k]; *pp; pp = &(*pp)->next)
    if ((*pp)->sens == sens && (*pp)->id == id) {
      Open *o = *pp;
      *pp = o->next;
      g->nopen--;
      return o;
    }
  return NULL;
}

/* Does client c take packet p? */
static int wants(const Client *c, const Prog *g, int prog, const Pkt *p) {
  const char *en = NULL;
  int64_t fl = -1;
  for (int i = 0; i < c->nsubs; i++) {
    const Sub *s = &c->subs[i];
    if (s->prog != prog) continue;
    if (p->kind == AG_EXIT) return 1;
    if (s->sens != p->sens || !s->count) continue;
    if (!strcmp(s->entity, "*")) return 1;
    if (fl < 0) {
      fl = flagOf(g, p);
      en = fl ? nameOf((Prog *)g, fl) : NULL;
    }
    if (en && !strcmp(en, s->entity)) return 1;
  }
  return 0;
}

/* A packet released in time order: to every client that takes it. */
static void deliver(int prog, Pkt *p) {
  Prog *g = &progs[prog];
  for (Client *c = clients; c; c = c->next) {
    if (!wants(c, g, prog, p)) continue;
    if (c->q.n >= qmax) {
      c->missed++;
      c->missedTotal++;
      aDropped++;
      continue;
    }
    *qPush(&c->q) = *p;
  }
}

static void settle(int prog, int64_t h);

/* Packet p is the next in time order: its interval state, its counters,
** then its clients. */
static void release(int prog, Pkt *p) {
  Prog *g = &progs[prog];
  if (p->t < g->outT) {
    g->late++; /* later ones went out already: the order is kept, this one is late */
    p->t = g->outT;
  }
  g->outT = p->t;
  if (p->t > g->lastT) g->lastT = p->t;
  const tq_shm_sensor *x = &g->cat[p->sens];
  if (p->kind == TQ_SHM_BEGIN) {
    /* (each open interval is the agent's memory, and a program could
    ** begin intervals it never ends, as many as it likes) */
    if (g->nopen >= AG_MAXOPEN) {
      noteBad(g, "%s: more than %d intervals open at once", x->name, AG_MAXOPEN);
      return;
    }
    openPut(g, p);
    if (x->is_entity) settle(prog, p->v[0]);
  } else if (p->kind == TQ_SHM_END) {
    Open *o = openTake(g, p->sens, p->id);
    if (!o) return; /* began before the agent came: its begin was cut */
    p->from = o->from;
    p->n = o->n;
    memcpy(p->v, o->v, sizeof p->v);
    free(o);
  }
  if (!x->is_entity) statOf(prog, p->sens, flagOf(g, p))->written++;
  deliver(prog, p);
}

/* Validates a packet read from a ring; 0 when it is good. */
static int convert(Prog *g, const tq_shm_packet *sp, const tq_shm_cont *cont, int ncont, Pkt *pk) {
  int si = sp->sensor;
  if (si >= g->nsens) return noteBad(g, "packet of sensor %d, the program has %d", si, g->nsens), -1;
  const tq_shm_sensor *x = &g->cat[si];
  int kind = sp->kind;
  if (kind < TQ_SHM_EVENT || kind > TQ_SHM_ENTITY_END) return noteBad(g, "packet of unknown kind %d", kind), -1;
  int n = kind == TQ_SHM_SAMPLE_DONE ? 0 : kind == TQ_SHM_END && x->is_entity ? 1 : x->nattr;
  int need = n <= TQ_SHM_VALS0 ? 1 : 1 + (n - TQ_SHM_VALS0 + TQ_SHM_VALSN - 1) / TQ_SHM_VALSN;
  if (sp->nslots != need && !(kind == TQ_SHM_END && sp->nslots >= 1))
    return noteBad(g, "packet of %s with %d slots, expected %d", x->name, sp->nslots, need), -1;
  if ((kind == TQ_SHM_EVENT) != (x->is_event && !x->sampled) && kind != TQ_SHM_SAMPLE && kind != TQ_SHM_SAMPLE_DONE)
    return noteBad(g, "packet of %s of the wrong kind %d", x->name, kind), -1;
  if (sp->time > g->aheadStamp && sp->time > (g->aheadStamp = aheadOf(g))) /* (read again: a drain may have stalled) */
    return noteBad(g, "%s: a packet stamped %.3f s after the agent's clock", x->name,
                   (double)(toNs(g, sp->time) - realNow()) * 1e-9), -1;
  memset(pk, 0, sizeof *pk);
  pk->t = toNs(g, sp->time);
  pk->sens = (uint8_t)si;
  pk->kind = (uint8_t)kind;
  pk->id = sp->id;
  pk->n = (uint8_t)n;
  int k = 0;
  for (; k < n && k < TQ_SHM_VALS0; k++) pk->v[k] = sp->v[k];
  for (int c = 0; c < ncont && k < n; c++) {
    pk->v[k++] = cont[c].v0;
    for (int i = 0; i < TQ_SHM_VALSN - 1 && k < n; i++) pk->v[k++] = cont[c].v[i];
  }
  if (kind != TQ_SHM_EVENT && kind != TQ_SHM_BEGIN) return 0; /* an end's values come from its begin */
  for (int a = 0; a < n; a++) {
    if (x->kind[a] == TQ_SHM_ENUM && (pk->v[a] < 0 || pk->v[a] >= (int64_t)x->nenum[a]))
      return noteBad(g, "%s: enum value %lld out of range", x->name, (long long)pk->v[a]), -1;
    if ((x->kind[a] == TQ_SHM_ENTITY || x->kind[a] == TQ_SHM_STRING) && !nameOf(g, pk->v[a]))
      return noteBad(g, "%s: bad %s handle %lld", x->name, x->kind[a] == TQ_SHM_STRING ? "string" : "entity",
                     (long long)pk->v[a]), -1;
  }
  return 0;
}

/* Drains every ring of g into its queue; returns the slots taken.  *cap is
** lowered to the last time taken from a ring that holds more. */
static uint64_t drain(int prog, int64_t *cap) {
  Prog *g = &progs[prog];
  tq_shm_header *h = g->h;
  uint64_t took = 0, dropped = 0;
  uint32_t taken = __atomic_load_n(&h->rings_taken, __ATOMIC_ACQUIRE), nr = taken < g->geo.nrings ? taken : g->geo.nrings;
  if (!g->rq) g->rq = xcalloc(g->geo.nrings, sizeof(PktQ));
  g->aheadStamp = aheadOf(g);
  for (uint32_t i = 0; i < nr; i++) {
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + g->geo.off_rings + g->geo.ring_bytes * i);
    tq_shm_packet *slots = (tq_shm_packet *)(r + 1);
    uint64_t tail = r->tail, start = tail, mask = g->geo.ring_slots - 1;
    uint64_t hint = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE); /* (below it, every slot is published) */
    if (hint - tail > g->geo.ring_slots) hint = tail;
    dropped += __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
    int64_t lastT = INT64_MAX;
    int more = 0;
    for (;;) {
      if (tail - start >= 4096) {
        more = 1;
        break;
      }
      const tq_shm_packet *at = &slots[tail & mask];
      if (__atomic_load_n(&at->gen, __ATOMIC_ACQUIRE) != tq_shm_gen(tail, g->geo.ring_slots)) {
        if (tail >= hint) break; /* not yet */
        noteBad(g, "ring %u: a slot that is no packet", i); /* (after a packet of a bad size): counted, skipped */
        tail++;
        continue;
      }
      tq_shm_packet sp = *at;
      uint32_t ns = sp.nslots;
      if (ns < 1 || ns > 3) {
        noteBad(g, "ring %u: packet of %u slots", i, ns);
        tail += 1;
        continue;
      }
      tq_shm_cont cont[2];
      for (uint32_t c = 1; c < ns; c++) memcpy(&cont[c - 1], &slots[(tail + c) & mask], sizeof(tq_shm_cont));
      tail += ns;
      Pkt pk;
      if (convert(g, &sp, cont, (int)ns - 1, &pk)) continue;
      g->packets++;
      if (pk.kind == TQ_SHM_SAMPLE || pk.kind == TQ_SHM_SAMPLE_DONE || pk.kind == TQ_SHM_ENTITY_END) continue;
      pk.prog = (uint16_t)prog;
      lastT = pk.t;
      *qPush(&g->rq[i]) = pk;
    }
    took += tail - start;
    if (tail != start) __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    if (more && lastT < *cap) *cap = lastT;
  }
  g->dropped = dropped + h->lost_no_ring;
  return took;
}

/* Releases g's drained packets up to limit, in time order. */
static void merge(int prog, int64_t limit) {
  Prog *g = &progs[prog];
  if (!g->rq || !g->h) return;
  for (;;) {
    int best = -1;
    int64_t bt = 0;
    for (uint32_t i = 0; i < g->geo.nrings; i++) {
      Pkt *p = qFront(&g->rq[i]);
      if (p && (best < 0 || p->t < bt)) {
        best = (int)i;
        bt = p->t;
      }
    }
    if (best < 0 || bt > limit) return;
    Pkt p = *qFront(&g->rq[best]);
    qPop(&g->rq[best]);
    release(prog, &p);
  }
}

/* The program is gone: its open intervals end at its last time (those of
** relations first, then the entities), and its clients are told. */
static void finish(int prog) {
  Prog *g = &progs[prog];
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < 1024; k++)
      for (Open **pp = &g->open[k]; *pp;) {
        Open *o = *pp;
        if ((pass == 0) == (g->cat[o->sens].is_entity != 0)) {
          pp = &o->next;
          continue;
        }
        *pp = o->next;
        Pkt p;
        memset(&p, 0, sizeof p);
        p.t = g->lastT + 1; /* (every tuple, the entities too, ends at once: after its begin) */
        p.from = o->from;
        p.id = o->id;
        p.sens = o->sens;
        p.kind = TQ_SHM_END;
        p.n = o->n;
        p.prog = (uint16_t)prog;
        memcpy(p.v, o->v, sizeof p.v);
        free(o);
        g->nopen--;
        if (!g->cat[p.sens].is_entity) statOf(prog, p.sens, flagOf(g, &p))->written++;
        deliver(prog, &p);
      }
  Pkt e;
  memset(&e, 0, sizeof e);
  e.t = g->lastT + 1;
  e.kind = AG_EXIT;
  e.prog = (uint16_t)prog;
  deliver(prog, &e);
  g->exited = 1;
  g->exitedAt = realNow();
  pmNotifyErr(LOG_INFO, "program %d exited: %llu packets, %llu lost (%llu ring full or no ring, %llu invalid, %llu late)",
              (int)g->pid, (unsigned long long)g->packets, (unsigned long long)(g->dropped + g->bad + g->late),
              (unsigned long long)g->dropped, (unsigned long long)g->bad, (unsigned long long)g->late);
  for (uint32_t i = 0; g->rq && i < g->geo.nrings; i++) free(g->rq[i].q);
  free(g->rq);
  g->rq = NULL;
  tq_bus_del(g->bus);
  g->bus = -1;
  munmap(g->h, g->size);
  g->h = NULL;
  if (kill(g->pid, 0) && errno == ESRCH) shm_unlink(g->shmName); /* a killed program could not */
}

static int alive(Prog *g) {
  if (kill(g->pid, 0) && errno == ESRCH) return 0;
  return __atomic_load_n(&g->h->state, __ATOMIC_ACQUIRE) != TQ_SHM_EXITED;
}

/* The user a process runs as ((uid_t)-1 when it is gone). */
static uid_t progUid(pid_t pid) {
  char path[64];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d", (int)pid);
  return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

/* Does a client's queue still hold a record of program prog? */
static int queuedFor(int prog) {
  for (Client *c = clients; c; c = c->next)
    for (size_t k = 0; k < c->q.n; k++)
      if (c->q.q[(c->q.head + k) & (c->q.cap - 1)].prog == prog) return 1;
  return 0;
}

/* Forgets program prog, which exited: its instances, counters, names and
** its clients' enables of it.  Its slot is then free. */
static void forget(int prog) {
  Prog *g = &progs[prog];
  char inst[128];
  pmInDom rel = pmInDom_build(dispatch.domain, IND_REL), pg = pmInDom_build(dispatch.domain, IND_PROG),
          st = pmInDom_build(dispatch.domain, IND_STAT);
  for (int i = 0; i < g->nsens; i++) {
    snprintf(inst, sizeof inst, "%d/%s", (int)g->pid, g->cat[i].name);
    pmdaCacheStore(rel, PMDA_CACHE_CULL, inst, NULL);
  }
  snprintf(inst, sizeof inst, "%d", (int)g->pid);
  pmdaCacheStore(pg, PMDA_CACHE_CULL, inst, NULL);
  for (int k = 0; k < 1024; k++)
    for (Stat **pp = &stats[k]; *pp;) {
      Stat *x = *pp;
      if (x->prog != prog) {
        pp = &x->next;
        continue;
      }
      *pp = x->next;
      pmdaCacheStore(st, PMDA_CACHE_CULL, x->inst, NULL);
      free(x);
    }
  for (Client *c = clients; c; c = c->next) {
    int n = 0;
    for (int i = 0; i < c->nsubs; i++)
      if (c->subs[i].prog != prog) c->subs[n++] = c->subs[i];
    c->nsubs = n;
  }
  for (uint64_t h = 0; h < g->cnames; h++) free(g->names[h]);
  free(g->names);
  for (int k = 0; k < 1024; k++)
    while (g->open[k]) {
      Open *o = g->open[k];
      g->open[k] = o->next;
      free(o);
    }
  pmNotifyErr(LOG_INFO, "program %d forgotten: its slot is taken by a new program", (int)g->pid);
  memset(g, 0, sizeof *g);
  g->bus = -1;
}

/* The slot of the program that exited first and whose records every
** client has fetched, released; -1 when there is none. */
static int reusable(void) {
  int best = -1;
  for (int i = 0; i < maxProg; i++) {
    const Prog *g = &progs[i];
    if (g->used && g->exited && !g->kernel && (best < 0 || g->exitedAt < progs[best].exitedAt) && !queuedFor(i)) best = i;
  }
  if (best >= 0) forget(best);
  return best;
}

/* Maps /tqmon.PID and becomes its monitor.  0 when watched now. */
static int attach(pid_t pid) {
  int old = -1;
  for (int i = 0; i < AG_MAXPROG; i++) {
    if (progs[i].used && progs[i].pid == pid && !progs[i].exited) return -1; /* watched already */
    if (progs[i].used && progs[i].pid == pid && !progs[i].kernel) old = i;
  }
  char name[64];
  snprintf(name, sizeof name, "/tqmon.%d", (int)pid);
  int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) || (size_t)st.st_size < sizeof(tq_shm_header)) {
    close(fd);
    return -1;
  }
  if (old >= 0) {
    /* a program that exited had this pid: its own file, still there, is
    ** not watched again; a new program's is, once the old one's records
    ** are fetched (the old one is forgotten: its instances have the new
    ** one's names) */
    if ((st.st_ino == progs[old].ino && st.st_dev == progs[old].dev) || queuedFor(old)) {
      close(fd);
      return -1;
    }
    forget(old);
  }
  int slot = -1;
  for (int i = 0; i < maxProg && slot < 0; i++)
    if (!progs[i].used) slot = i;
  if (slot < 0 && (slot = reusable()) < 0) {
    static pid_t told[64];
    if (told[pid % 64] != pid) {
      told[pid % 64] = pid;
      pmNotifyErr(LOG_WARNING, "program %d: not watched yet: the agent knows %d programs, its most (-P), and none of "
                  "those that exited has had its last records fetched by every client", (int)pid, maxProg);
    }
    close(fd);
    return -1;
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  int bus = tq_bus_add(m, (size_t)st.st_size); /* (from here on a shrink of the segment is caught) */
  tq_shm_header *h = m, copy;
  memcpy(&copy, h, sizeof copy); /* (checked, and kept: the program may change its own) */
  const char *why = NULL;
  if ((size_t)st.st_size < sizeof copy || memcmp(copy.magic, TQ_SHM_MAGIC, 8)) why = "not a tqmon sensor segment";
  else if (copy.version != TQ_SHM_VERSION) why = "another segment version";
  else if (!tq_shm_geometry_ok(&copy, (uint64_t)st.st_size)) why = "corrupt header";
  else if (h->state != TQ_SHM_READY) why = NULL; /* not ready yet: tried again later */
  else if (h->subject_pid != pid || h->creator_pid != pid) why = "not the program's own segment (creator)";
  else if (st.st_nlink != 1 || (st.st_mode & 0777) != 0600 || st.st_uid != progUid(pid))
    why = "not the program's own segment (owner, mode or links)";
  if (why || h->state != TQ_SHM_READY) {
    static pid_t told[64];
    if (why && told[pid % 64] != pid) {
      told[pid % 64] = pid;
      pmNotifyErr(LOG_WARNING, "%s: not watched: %s", name, why);
    }
    tq_bus_del(bus);
    munmap(m, (size_t)st.st_size);
    return -1;
  }
  /* one monitor at a time: monitor_pid taken by compare-and-swap (that of a
  ** monitor that died is taken over) */
  int32_t me = (int32_t)getpid(), cur = 0;
  if (!__atomic_compare_exchange_n(&h->monitor_pid, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && cur != me &&
      !(cur > 0 && kill(cur, 0) && errno == ESRCH &&
        __atomic_compare_exchange_n(&h->monitor_pid, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
    static pid_t told[64];
    if (told[pid % 64] != pid) {
      told[pid % 64] = pid;
      pmNotifyErr(LOG_WARNING, "%s: not watched: another monitor (process %d) is attached", name, (int)cur);
    }
    tq_bus_del(bus);
    munmap(m, (size_t)st.st_size);
    return -1;
  }
  Prog *g = &progs[slot];
  memset(g, 0, sizeof *g);
  g->pid = pid;
  snprintf(g->shmName, sizeof g->shmName, "%s", name);
  g->h = h;
  g->geo = copy;
  g->size = (size_t)st.st_size;
  g->ino = st.st_ino;
  g->dev = st.st_dev;
  g->bus = bus;
  if (checkCatalog(g)) {
    pmNotifyErr(LOG_WARNING, "%s: not watched: corrupt catalog", name);
    __atomic_compare_exchange_n(&h->monitor_pid, &me, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED); /* given back */
    tq_bus_del(bus);
    munmap(m, g->size);
    memset(g, 0, sizeof *g);
    g->bus = -1;
    return -1;
  }
  anchor(g, 1);
  /* what the rings held before the agent came is cut (a history with holes) */
  uint32_t taken = __atomic_load_n(&h->rings_taken, __ATOMIC_ACQUIRE); /* (read once: the program may change it) */
  uint32_t nr = taken < g->geo.nrings ? taken : g->geo.nrings;
  for (uint32_t i = 0; i < nr; i++) {
    tq_shm_ring *r = (tq_shm_ring *)((char *)h + g->geo.off_rings + g->geo.ring_bytes * i);
    tq_shm_packet *slots = (tq_shm_packet *)(r + 1);
    uint64_t pos = r->tail, end = pos + g->geo.ring_slots, mask = g->geo.ring_slots - 1;
    while (pos < end && __atomic_load_n(&slots[pos & mask].gen, __ATOMIC_ACQUIRE) == tq_shm_gen(pos, g->geo.ring_slots)) {
      uint32_t ns = slots[pos & mask].nslots;
      pos += ns >= 1 && ns <= 3 ? ns : 1;
    }
    g->before += pos - r->tail;
    __atomic_store_n(&r->tail, pos, __ATOMIC_RELEASE);
  }
  /* the entities that exist now are open from now on */
  int64_t now = realNow();
  uint64_t ents = __atomic_load_n(&h->entities_taken, __ATOMIC_ACQUIRE); /* (read once) */
  uint64_t n = ents < g->geo.max_entities ? ents : g->geo.max_entities - 1;
  for (uint64_t k = 1; k <= n; k++) {
    const tq_shm_entity *e = entityAt(g, (int64_t)k);
    uint32_t owner = e ? __atomic_load_n(&e->sensor, __ATOMIC_ACQUIRE) : 0;
    if (!owner || owner > (uint32_t)g->nsens || e->state != 1) continue;
    const tq_shm_sensor *x = &g->cat[owner - 1];
    if (!x->is_entity || x->nattr > TQ_SHM_ENTITY_ATTRS + 1 || !nameOf(g, (int64_t)k)) continue;
    Pkt p;
    memset(&p, 0, sizeof p);
    p.t = now;
    p.sens = (uint8_t)(owner - 1);
    p.kind = TQ_SHM_BEGIN;
    p.id = e->cur;
    p.n = x->nattr;
    p.v[0] = (int64_t)k;
    int ok = 1;
    for (int a = 1; a < x->nattr; a++) {
      p.v[a] = e->a[a - 1];
      if (x->kind[a] == TQ_SHM_ENUM && (p.v[a] < 0 || p.v[a] >= (int64_t)x->nenum[a])) ok = 0;
      if ((x->kind[a] == TQ_SHM_ENTITY || x->kind[a] == TQ_SHM_STRING) && !nameOf(g, p.v[a])) ok = 0;
    }
    if (ok) openPut(g, &p);
  }
  g->outT = g->lastT = now;
  g->used = 1;
  pmInDom rel = pmInDom_build(dispatch.domain, IND_REL), pg = pmInDom_build(dispatch.domain, IND_PROG);
  char inst[128];
  for (int i = 0; i < g->nsens; i++) {
    snprintf(inst, sizeof inst, "%d/%s", (int)pid, g->cat[i].name);
    pmdaCacheStore(rel, PMDA_CACHE_ADD, inst, g);
  }
  snprintf(inst, sizeof inst, "%d", (int)pid);
  pmdaCacheStore(pg, PMDA_CACHE_ADD, inst, g);
  pmNotifyErr(LOG_INFO, "watching program %d: %d sensors, %llu packets before the agent cut", (int)pid, g->nsens,
              (unsigned long long)g->before);
  return 0;
}

/* Looks for segments /tqmon.PID of programs not watched yet. */
static void scan(void) {
  DIR *d = opendir("/dev/shm");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "tqmon.", 6)) continue;
    struct stat st;
    if (tq_shm_stale(e->d_name, &st)) { /* of a program of this user that was killed (tqshmgc.h) */
      char name[300];
      snprintf(name, sizeof name, "/%s", e->d_name);
      shm_unlink(name);
      continue;
    }
    char *end;
    long pid = strtol(e->d_name + 6, &end, 10);
    if (*end || pid <= 0 || pid > 0x3fffffff) continue; /* /tqmon.PID.N: a monitor's own (--exec) */
    int known = 0;
    for (int i = 0; i < AG_MAXPROG; i++)
      if (progs[i].used && progs[i].pid == pid && !progs[i].exited) known = 1; /* (an exited one: its pid may be reused) */
    if (!known && onlyCommand) {
      char path[64], comm[64] = "";
      snprintf(path, sizeof path, "/proc/%ld/comm", pid);
      FILE *f = fopen(path, "r");
      if (f) {
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
      }
      comm[strcspn(comm, "\n")] = 0;
      if (strcmp(comm, onlyCommand)) continue;
    }
    if (!known) attach((pid_t)pid);
  }
  closedir(d);
}

/* ================================================================ the kernel's relations (-k) */

#define AG_INHERIT_NS 3000000000LL /* a new thread's inherited enables wait this long for a client's own */

static AkRec *kv;               /* the kernel's records, to release */
static size_t kvn, kcap;

static uint32_t total(int prog, int sens, const char *entity);
static void applyFlags(int prog, int sens);
static Client *clientOf(int ctx, int make);

/* Drops the open tuples of relation sens (its programs were detached: no
** client wants them, and their ends will not come). */
static void openDrop(Prog *g, int sens) {
  for (int k = 0; k < 1024; k++)
    for (Open **pp = &g->open[k]; *pp;) {
      if ((*pp)->sens == sens) {
        Open *o = *pp;
        *pp = o->next;
        free(o);
        g->nopen--;
      } else {
        pp = &(*pp)->next;
      }
    }
}

/* A client's enable of (prog, sens, entity), made when absent (count 0). */
static Sub *subOf(Client *c, int prog, int sens, const char *ent, int make) {
  for (int i = 0; i < c->nsubs; i++)
    if (c->subs[i].prog == prog && c->subs[i].sens == sens && !strcmp(c->subs[i].entity, ent)) return &c->subs[i];
  if (!make) return NULL;
  if (c->nsubs == c->csubs) {
    c->csubs = c->csubs ? 2 * c->csubs : 16;
    Sub *ns = xcalloc((size_t)c->csubs, sizeof(Sub));
    if (c->subs) memcpy(ns, c->subs, sizeof(Sub) * (size_t)c->nsubs);
    free(c->subs);
    c->subs = ns;
  }
  Sub *s = &c->subs[c->nsubs++];
  memset(s, 0, sizeof *s);
  s->prog = prog;
  s->sens = sens;
  snprintf(s->entity, sizeof s->entity, "%s", ent);
  return s;
}

/* A new thread got its creator's enable flags in the kernel: each client
** that counts the creator on such a relation counts the new thread too,
** provisionally (AG_INHERIT_NS), until it says so itself (its monitor
** enables the threads it sees begin: the first packets of a thread a query
** watches are not lost meanwhile); then its provisional count goes. */
static void inherit(int prog, const AkRec *a, int64_t now) {
  char child[TQ_SHM_NAME_LEN], parent[TQ_SHM_NAME_LEN];
  const char *cn = akName(a->v[0]), *pn = akName(a->v[1]);
  if (!cn || !pn) return;
  snprintf(child, sizeof child, "%s", cn);
  snprintf(parent, sizeof parent, "%s", pn);
  for (int sens = 0; sens < KS_NREL; sens++) {
    if (!(a->inherit >> sens & 1)) continue;
    for (Client *c = clients; c; c = c->next) {
      Sub *ps = subOf(c, prog, sens, parent, 0);
      if (!ps || !ps->count) continue;
      Sub *s = subOf(c, prog, sens, child, 1);
      if (!s->count) {
        s->count = 1;
        s->prov = now + AG_INHERIT_NS;
      }
    }
    applyFlags(prog, sens);
  }
}

/* The provisional counts no client made its own in time go. */
static void inheritExpire(int prog, int64_t now) {
  uint32_t dirty = 0;
  for (Client *c = clients; c; c = c->next) {
    int k = 0;
    for (int i = 0; i < c->nsubs; i++) {
      Sub *s = &c->subs[i];
      if (s->prog == prog && s->prov && s->prov <= now) {
        dirty |= 1u << s->sens;
        continue;
      }
      if (s->prog == prog && !s->count && !s->prov) continue; /* (a withdrawn one of the kernel's: forgotten) */
      c->subs[k++] = *s;
    }
    c->nsubs = k;
  }
  for (int sens = 0; sens < KS_NREL; sens++)
    if (dirty >> sens & 1) applyFlags(prog, sens);
}

/* What the kernel wrote, and the begins of open calls of enabled threads,
** released in time order a reorder window behind now (as the rings of a
** program are). */
static void kernelPass(int prog, int64_t now) {
  Prog *g = &progs[prog];
  int64_t limit = now - AG_WINDOW_NS;
  uint32_t dropped = 0;
  kvn = 0;
  akDrain(&kv, &kvn, &kcap, limit, &dropped);
  for (int sens = 0; sens < KS_NREL; sens++)
    if (dropped >> sens & 1) openDrop(g, sens);
  for (size_t k = 0; k < kvn; k++) {
    const AkRec *a = &kv[k];
    if (a->kind == AK_INHERIT) {
      inherit(prog, a, now);
      continue;
    }
    Pkt p;
    memset(&p, 0, sizeof p);
    p.t = a->t;
    p.sens = (uint8_t)a->rel;
    p.kind = (uint8_t)a->kind;
    p.id = a->id;
    p.n = (uint8_t)(a->kind == AK_END ? g->cat[a->rel].nattr : a->n);
    p.prog = (uint16_t)prog;
    memcpy(p.v, a->v, sizeof a->v);
    g->packets++;
    release(prog, &p);
  }
  inheritExpire(prog, now);
}

/* The kernel's flags of (prog, sens) from the clients' counts: a thread's
** flag is set while some client counts it, cleared when none does. */
static int kernelFlags(int prog, int sens) {
  int64_t *h = NULL;
  size_t n = 0, cap = 0;
  for (Client *c = clients; c; c = c->next)
    for (int i = 0; i < c->nsubs; i++) {
      const Sub *s = &c->subs[i];
      if (s->prog != prog || s->sens != sens || !s->count) continue;
      int64_t x = akHandle(sens, s->entity);
      if (x < 0) continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        int64_t *nh = xcalloc(cap, sizeof(int64_t));
        if (h) memcpy(nh, h, sizeof(int64_t) * n);
        free(h);
        h = nh;
      }
      h[n++] = x;
    }
  char why[300];
  int rc = akWant(sens, h, n, why, sizeof why);
  if (rc) pmNotifyErr(LOG_ERR, "the kernel's %s: %s", progs[prog].cat[sens].name, why);
  free(h);
  return rc;
}

/* Loads the kernel's relations (-k) as the program slot "kernel": every
** relation of sensors/kernel.tq whose tracepoints this kernel has.  0, or
** -1 with the reason logged. */
static int kernelStart(void) {
  char why[300];
  if (akStart(why, sizeof why)) {
    pmNotifyErr(LOG_ERR, "the kernel's relations (-k) are not served: %s", why);
    return -1;
  }
  int slot = -1;
  for (int i = AG_MAXPROG - 1; i >= 0 && slot < 0; i--) /* (from the top: -P counts the programs only) */
    if (!progs[i].used) slot = i;
  if (slot < 0) return -1;
  Prog *g = &progs[slot];
  memset(g, 0, sizeof *g);
  g->bus = -1; /* (no segment) */
  g->used = 1;
  g->kernel = 1;
  /* the catalog: kernel.tq's declarations, by KR_* (a relation not served
  ** has no name: it is neither listed nor found) */
  pmInDom rel = pmInDom_build(dispatch.domain, IND_REL);
  for (int kr = 0; kr < KS_NPM; kr++) {
    const KRelDef *d = &ksbRelDefs[kr];
    tq_shm_sensor *x = &g->cat[kr];
    if (!akServed(kr)) continue;
    snprintf(x->name, sizeof x->name, "%s", d->rel);
    x->is_entity = d->kind == 2;
    x->is_event = d->kind == 0;
    x->flag_attr = (uint8_t)d->flag;
    for (const KAttr *a = d->attrs; a->name; a++) {
      x->kind[x->nattr] = (uint8_t)a->type;
      if (a->type == KT_ENUM) x->nenum[x->nattr] = (uint8_t)a->nvalues;
      x->nattr++;
    }
    char inst[128];
    snprintf(inst, sizeof inst, "kernel/%s", d->rel);
    pmdaCacheStore(rel, PMDA_CACHE_ADD, inst, g);
  }
  g->nsens = KS_NPM;
  g->outT = g->lastT = realNow();
  pmdaCacheStore(pmInDom_build(dispatch.domain, IND_PROG), PMDA_CACHE_ADD, "kernel", g);
  pmNotifyErr(LOG_INFO, "serving the kernel's relations");
  return 0;
}

/* The drain thread: segments found, rings drained, packets released a
** reorder window behind now, programs that exit finished. */
static void *drainMain(void *arg) {
  (void)arg;
  int64_t lastScan = 0;
  struct timespec idle = {0, 1000 * 1000};
  while (!stopping) {
    pthread_mutex_lock(&mu);
    int64_t now = realNow();
    if (now - lastScan > 200 * 1000 * 1000LL) {
      scan();
      lastScan = now;
    }
    for (int i = 0; i < AG_MAXPROG; i++) {
      Prog *g = &progs[i];
      if (!g->used || g->exited) continue;
      if (g->kernel) {
        kernelPass(i, now);
        continue;
      }
      if (now - g->anchorAt > 1000000000LL) anchor(g, 0);
      int gone = !alive(g);
      if (tq_bus_shrunk(g->bus) && !g->shrunk) {
        char path[96], why[200];
        snprintf(path, sizeof path, "/dev/shm%s", g->shmName);
        tq_bus_why(g->bus, path, why, sizeof why);
        g->shrunk = 1;
        pmNotifyErr(LOG_WARNING, "program %d %s under the agent: not watched from here on", (int)g->pid, why);
      }
      gone |= g->shrunk;
      int64_t cap = INT64_MAX;
      drain(i, &cap);
      int64_t limit = gone ? INT64_MAX : now - AG_WINDOW_NS;
      merge(i, limit < cap ? limit : cap);
      if (gone && cap == INT64_MAX) finish(i);
    }
    pthread_mutex_unlock(&mu);
    nanosleep(&idle, NULL);
  }
  return NULL;
}

/* ================================================================ enabling */

/* The sum of the clients' counts for (prog, sens, entity). */
static uint32_t total(int prog, int sens, const char *entity) {
  uint64_t t = 0;
  for (Client *c = clients; c; c = c->next)
    for (int i = 0; i < c->nsubs; i++) {
      const Sub *s = &c->subs[i];
      if (s->prog == prog && s->sens == sens && !strcmp(s->entity, entity)) t += s->count;
    }
  return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* Does a client ask for (prog, sens) at all? */
static int asked(int prog, int sens) {
  for (Client *c = clients; c; c = c->next)
    for (int i = 0; i < c->nsubs; i++)
      if (c->subs[i].prog == prog && c->subs[i].sens == sens && c->subs[i].count) return 1;
  return 0;
}

/* Writes the segment's flags of (prog, sens) from the clients' counts:
** the counters of every entity named, and the sensor word (the number of
** entities with a count, plus one while the relation is asked whole; an
** event relation asked whole is on for every entity).  While a client
** asks for the relation the word has TQ_SHM_USED: an entity the program
** declares then reports from its first packet (its counters
** TQ_SHM_PENDING) until its begin comes through here (settle), so that
** an entity named before the program declared it is enabled from its
** start, as the monitor's own shm PM does. */
static void applyFlags(int prog, int sens) {
  Prog *g = &progs[prog];
  if (g->kernel) {
    if (!g->cat[sens].is_entity) kernelFlags(prog, sens);
    return;
  }
  if (!g->h) return;
  tq_shm_header *h = g->h;
  volatile uint32_t *on = (volatile uint32_t *)((char *)h + g->geo.off_on);
  volatile uint32_t *cnt = (volatile uint32_t *)((char *)h + g->geo.off_counters);
  const tq_shm_sensor *x = &g->cat[sens];
  uint32_t word = 0;
  uint32_t whole = total(prog, sens, "*");
  if (whole) word = x->is_event && !x->sampled ? TQ_SHM_ALL | 1 : 1;
  uint64_t ents = __atomic_load_n(&h->entities_taken, __ATOMIC_ACQUIRE); /* (read once) */
  uint64_t n = ents < g->geo.max_entities ? ents : g->geo.max_entities - 1;
  for (uint64_t k = 1; k <= n; k++) {
    const tq_shm_entity *e = entityAt(g, (int64_t)k);
    uint32_t owner = e ? __atomic_load_n(&e->sensor, __ATOMIC_ACQUIRE) : 0;
    if (!owner) continue; /* a string */
    const char *nm = nameOf(g, (int64_t)k);
    if (!nm) continue;
    uint32_t t = total(prog, sens, nm);
    volatile uint32_t *w = &cnt[k * g->geo.max_sensors + (uint64_t)sens];
    if (t || *w) __atomic_store_n(w, t, __ATOMIC_RELEASE);
    if (t) word++;
  }
  if (asked(prog, sens)) word |= TQ_SHM_USED;
  __atomic_store_n(&on[sens], word, __ATOMIC_RELEASE);
}

/* Entity h's begin came through: its counters still pending (declared
** while a client asked for the relation) become the clients' counts for
** its name, none when nobody named it.  (Only pending ones: a
** disable-traced sensor's counter counts down as it fires, and a new
** state of the entity must not arm it again.) */
static void settle(int prog, int64_t h) {
  Prog *g = &progs[prog];
  if (g->kernel || !g->h || h <= 0 || (uint64_t)h >= g->geo.max_entities) return;
  const char *nm = nameOf(g, h);
  if (!nm) return;
  volatile uint32_t *on = (volatile uint32_t *)((char *)g->h + g->geo.off_on);
  volatile uint32_t *cnt = (volatile uint32_t *)((char *)g->h + g->geo.off_counters);
  for (int sens = 0; sens < g->nsens; sens++) {
    volatile uint32_t *w = &cnt[(uint64_t)h * g->geo.max_sensors + (uint64_t)sens];
    if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != TQ_SHM_PENDING) continue;
    uint32_t t = total(prog, sens, nm), pend = TQ_SHM_PENDING;
    if (t >= TQ_SHM_USED) t = TQ_SHM_USED - 1;
    if (__atomic_compare_exchange_n(w, &pend, t, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED) && t)
      __atomic_fetch_add(&on[sens], 1, __ATOMIC_RELEASE);
  }
}

/* A client asks for a relation whole: the tuples open now come first. */
static void openNow(Client *c, int prog, int sens) {
  Prog *g = &progs[prog];
  for (int k = 0; k < 1024; k++)
    for (Open *o = g->open[k]; o; o = o->next) {
      if (o->sens != sens || c->q.n >= qmax) continue;
      Pkt *p = qPush(&c->q);
      memset(p, 0, sizeof *p);
      p->t = o->from;
      p->id = o->id;
      p->sens = o->sens;
      p->kind = TQ_SHM_BEGIN;
      p->n = o->n;
      p->prog = (uint16_t)prog;
      memcpy(p->v, o->v, sizeof p->v);
    }
}

static Client *clientOf(int ctx, int make) {
  for (Client *c = clients; c; c = c->next)
    if (c->ctx == ctx) return c;
  if (!make) return NULL;
  Client *c = xcalloc(1, sizeof *c);
  c->ctx = ctx;
  c->next = clients;
  clients = c;
  return c;
}

/* "set PID/Relation ENTITY COUNT" (or "set kernel/Relation ENTITY COUNT"):
** validated field by field. */
static int control(int ctx, const char *cmd) {
  char rel[128], ent[TQ_SHM_NAME_LEN + 8], extra[8];
  unsigned long count;
  int pid;
  int prog = -1, sens = -1;
  if (strlen(cmd) > 200) return PM_ERR_BADSTORE;
  if (!strncmp(cmd, "set kernel/", 11)) {
    if (sscanf(cmd, "set kernel/%127s %55s %lu %7s", rel, ent, &count, extra) != 3 || count > 1000000) return PM_ERR_BADSTORE;
    for (int i = 0; i < AG_MAXPROG; i++)
      if (progs[i].used && progs[i].kernel) prog = i;
  } else {
    if (sscanf(cmd, "set %d/%127s %55s %lu %7s", &pid, rel, ent, &count, extra) != 4) return PM_ERR_BADSTORE;
    if (count > 1000000 || strlen(ent) >= TQ_SHM_NAME_LEN || pid <= 0) return PM_ERR_BADSTORE;
    for (int i = 0; i < AG_MAXPROG; i++)
      if (progs[i].used && !progs[i].kernel && progs[i].pid == pid && (prog < 0 || !progs[i].exited)) prog = i;
  }
  if (prog < 0) return PM_ERR_INST;
  Prog *g = &progs[prog];
  for (int i = 0; i < g->nsens; i++)
    if (g->cat[i].name[0] && !strcmp(g->cat[i].name, rel)) sens = i;
  if (sens < 0) return PM_ERR_INST;
  if (g->cat[sens].sampled) return PM_ERR_PERMISSION; /* sampled relations are not traced */
  if (g->exited) return 0; /* gone: nothing to enable (its clients got its exit record) */
  int64_t handle = 0;
  if (g->kernel) {
    /* per thread (or processor), by its name; "*" only on Thread and
    ** Processor: a traced relation's flags are per thread in the kernel */
    if (!strcmp(ent, "*")) {
      if (!g->cat[sens].is_entity) return PM_ERR_PERMISSION;
    } else if ((handle = akHandle(sens, ent)) < 0) {
      return PM_ERR_BADSTORE;
    }
  }
  Client *c = clientOf(ctx, 1);
  Sub *s = subOf(c, prog, sens, ent, 0);
  if (!s) {
    if (!count) return 0;
    s = subOf(c, prog, sens, ent, 1); /* (checked: shorter than TQ_SHM_NAME_LEN) */
    if (!strcmp(ent, "*") && !g->cat[sens].is_event) openNow(c, prog, sens);
  }
  uint32_t was = s->count;
  int64_t wasProv = s->prov;
  s->count = (uint32_t)count;
  s->prov = 0; /* (an inherited count the client now makes its own) */
  if (g->kernel && handle && !g->cat[sens].is_entity) {
    if (count) statOf(prog, sens, handle); /* (its counters answer from now on: tqmon.entity.enabled) */
    if (kernelFlags(prog, sens)) {
      s->count = was; /* (the programs cannot be attached: nothing changed) */
      s->prov = wasProv;
      kernelFlags(prog, sens);
      return PM_ERR_GENERIC;
    }
    return 0;
  }
  applyFlags(prog, sens);
  return 0;
}

/* A client context ended: its enables are released. */
static void endContext(int ctx) {
  pthread_mutex_lock(&mu);
  Client **pp = &clients;
  while (*pp && (*pp)->ctx != ctx) pp = &(*pp)->next;
  Client *c = *pp;
  if (c) {
    *pp = c->next;
    for (int i = 0; i < c->nsubs; i++) applyFlags(c->subs[i].prog, c->subs[i].sens); /* (c is out of the list) */
    if (c->nsubs)
      pmNotifyErr(LOG_INFO, "client context %d ended: %d enables released, %llu records unsent", ctx, c->nsubs,
                  (unsigned long long)c->q.n);
    free(c->subs);
    free(c->q.q);
    free(c);
  }
  pthread_mutex_unlock(&mu);
}

static int tqStore(pmResult *res, pmdaExt *pmda) {
  int rc = 0;
  pthread_mutex_lock(&mu);
  /* the client that stores: pmcd names it in the store's own request
  ** (pmdaGetContext() is the client of the last request libpcp_pmda's
  ** callbacks served, a fetch of another client, perhaps: an enable
  ** counted for that one was released when it went) */
  int ctx = pmda->e_context;
  for (int i = 0; i < res->numpmid && !rc; i++) {
    pmValueSet *vs = res->vset[i];
    if (vs->pmid != pidOf(M_CONTROL)) {
      rc = PM_ERR_PERMISSION;
      break;
    }
    if (vs->numval != 1 || (vs->valfmt != PM_VAL_DPTR && vs->valfmt != PM_VAL_SPTR)) {
      rc = PM_ERR_BADSTORE;
      break;
    }
    pmValueBlock *vb = vs->vlist[0].value.pval;
    if (!vb || vb->vtype != PM_TYPE_STRING || vb->vlen <= PM_VAL_HDR_SIZE || vb->vlen > PM_VAL_HDR_SIZE + 256) {
      rc = PM_ERR_BADSTORE;
      break;
    }
    char cmd[260];
    size_t len = vb->vlen - PM_VAL_HDR_SIZE;
    memcpy(cmd, vb->vbuf, len);
    cmd[len] = 0;
    rc = control(ctx, cmd);
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

/* ================================================================ results */

/* A running tqmon's named results (tqmon run --pcp-export writes
** /dev/shm/tqmon-results.PID, display/export.c): read again at each fetch
** and instance request.  A fetch's reading is what it answers; an
** instance request's reading keeps the instances of the last fetch active
** beside those of the file now: a client that fetched and then asks for
** the instance domain (pmlogger logs it after the fetch that showed it
** changed) must find the instances of the values it holds, which the
** file, rewritten every 100 ms, may no longer name.  The entries of the
** last fetch's reading live until the next fetch, those of the last
** instance request's until the next request of either kind. */
typedef struct ResEnt {
  struct ResEnt *next;
  pmInDom indom;                /* the result's or the tuple's */
  char *inst;                   /* its instance name */
  uint32_t valid;               /* result: tuples valid now */
  uint64_t rows;                /* result: rows so far */
  char *text;                   /* tuple: its values */
} ResEnt;
static ResEnt *fetchEnts, *instEnts;

static void freeEnts(ResEnt **l) {
  while (*l) {
    ResEnt *e = *l;
    *l = e->next;
    free(e->inst);
    free(e->text);
    free(e);
  }
}

static ResEnt *newEnt(ResEnt **l, pmInDom indom, const char *inst) {
  ResEnt *e = xcalloc(1, sizeof *e);
  e->indom = indom;
  e->inst = strdup(inst);
  e->next = *l;
  *l = e;
  if (e->inst) pmdaCacheStore(indom, PMDA_CACHE_ADD, e->inst, e);
  return e;
}

/* Says once per name why a results file is not read (the agent reads
** /dev/shm every fetch: a refusal would fill its log). */
static void refuseResults(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuseResults(const char *path, const char *fmt, ...) {
  static char told[64][300];
  static int ntold;
  for (int i = 0; i < ntold && i < 64; i++)
    if (!strcmp(told[i], path)) return;
  snprintf(told[ntold++ % 64], sizeof told[0], "%s", path);
  char why[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  pmNotifyErr(LOG_WARNING, "%s is not the results of tqmon process %s: refused (another user may have planted it)", path, why);
}

/* Opens /dev/shm/tqmon-results.PID for reading, as the segments are
** (sensors/README.md, the trust model): the agent runs as root, and
** /dev/shm is every user's.  The name is opened without following a link
** and without blocking (a FIFO), and what was opened must be a regular
** file with one link, of mode 0600, owned by the user process PID runs as,
** and not larger than 64 MiB.  A file whose tqmon is gone (killed: it
** could not remove it) is removed when it is such a file.  NULL when it
** is not to be read. */
static FILE *openResults(const char *path, pid_t pid) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) refuseResults(path, "%d: a symbolic link", (int)pid);
    return NULL;
  }
  struct stat st;
  uid_t owner = progUid(pid);
  const char *why = NULL;
  if (fstat(fd, &st)) why = "cannot be examined";
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_nlink != 1) why = "a file with other names (links)";
  else if ((st.st_mode & 07777) != 0600) why = "not of mode 0600";
  else if (st.st_size > 64L << 20) why = "larger than 64 MiB";
  else if (owner == (uid_t)-1) {
    /* its tqmon is gone: a killed one could not remove its file */
    close(fd);
    struct stat lst;
    if (!lstat(path, &lst) && S_ISREG(lst.st_mode) && lst.st_nlink == 1 && lst.st_ino == st.st_ino) unlink(path);
    return NULL;
  } else if (st.st_uid != owner) {
    refuseResults(path, "%d: it belongs to uid %u, and process %d runs as uid %u", (int)pid, (unsigned)st.st_uid, (int)pid,
                  (unsigned)owner);
    close(fd);
    return NULL;
  }
  if (why) {
    refuseResults(path, "%d: %s", (int)pid, why);
    close(fd);
    return NULL;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "r");
  if (!f) close(fd);
  return f;
}

/* fetch: the reading of a fetch (else of an instance request) */
static void readResults(int fetch) {
  pmInDom ri = pmInDom_build(dispatch.domain, IND_RES), ti = pmInDom_build(dispatch.domain, IND_TUP);
  pmdaCacheOp(ri, PMDA_CACHE_INACTIVE);
  pmdaCacheOp(ti, PMDA_CACHE_INACTIVE);
  freeEnts(&instEnts);
  if (fetch) {
    freeEnts(&fetchEnts);
  } else {
    for (ResEnt *e = fetchEnts; e; e = e->next)
      if (e->inst) pmdaCacheStore(e->indom, PMDA_CACHE_ADD, e->inst, e);
  }
  ResEnt **into = fetch ? &fetchEnts : &instEnts;
  DIR *d = opendir("/dev/shm");
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    char *end;
    if (strncmp(de->d_name, "tqmon-results.", 14)) continue;
    long pid = strtol(de->d_name + 14, &end, 10);
    if (*end || pid <= 0) continue;
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
    FILE *f = openResults(path, (pid_t)pid);
    if (!f) continue;
    char line[8192], attrs[TQ_SHM_MAX_ATTRS * 4][64];
    char curRes[128] = "";
    int nattrs = 0;
    if (!fgets(line, sizeof line, f) || strcmp(line, "tqmon-results 1\n")) {
      fclose(f);
      continue;
    }
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      char name[128], inst[300];
      unsigned valid;
      unsigned long long rows, rowid;
      long long from;
      int off = 0;
      if (sscanf(line, "result %127s %u %llu %n", name, &valid, &rows, &off) == 3 && off > 0) {
        snprintf(curRes, sizeof curRes, "%s", name);
        nattrs = 0;
        for (char *a = strtok(line + off, ","); a && nattrs < (int)(sizeof attrs / sizeof attrs[0]); a = strtok(NULL, ","))
          snprintf(attrs[nattrs++], sizeof attrs[0], "%s", a);
        snprintf(inst, sizeof inst, "%ld/%s", pid, name);
        ResEnt *e = newEnt(into, ri, inst);
        e->valid = valid;
        e->rows = rows;
      } else if (sscanf(line, "row %127s %llu %lld %n", name, &rowid, &from, &off) == 3 && off > 0 &&
                 !strcmp(name, curRes)) {
        char text[8192];
        size_t o = 0;
        int k = 0;
        for (char *v = strtok(line + off, "\t"); v && o < sizeof text - 1; v = strtok(NULL, "\t"), k++)
          o += (size_t)snprintf(text + o, sizeof text - o, "%s%s=%s", k ? " " : "", k < nattrs ? attrs[k] : "?", v);
        if (o < sizeof text - 1) snprintf(text + o, sizeof text - o, "%sfrom=%lld", k ? " " : "", from);
        snprintf(inst, sizeof inst, "%ld/%s/%llu", pid, name, rowid);
        newEnt(into, ti, inst)->text = strdup(text);
      }
    }
    fclose(f);
  }
  closedir(d);
}

/* ================================================================ fetching */

/* Event arrays of one fetch: one per instance answered (pmdaFetch keeps
** every instance's value until the result is sent). */
static int arrays[4096];
static int narrays, usedArrays;

static int nextArray(void) {
  if (usedArrays == narrays) {
    if (narrays == (int)(sizeof arrays / sizeof arrays[0])) return -1;
    arrays[narrays++] = pmdaEventNewHighResArray();
  }
  int a = arrays[usedArrays++];
  pmdaEventResetHighResArray(a);
  return a;
}

static void addParams(int arr, Prog *g, const Pkt *p) {
  pmAtomValue av;
  av.ul = p->kind;
  pmdaEventAddHighResParam(arr, pidOf(M_P_KIND), PM_TYPE_U32, &av);
  av.ull = p->id;
  pmdaEventAddHighResParam(arr, pidOf(M_P_ID), PM_TYPE_U64, &av);
  if (p->kind == TQ_SHM_END) {
    av.ll = p->from;
    pmdaEventAddHighResParam(arr, pidOf(M_P_FROM), PM_TYPE_64, &av);
  }
  if (p->kind == AG_EXIT) return;
  const tq_shm_sensor *x = &g->cat[p->sens];
  for (int a = 0; a < p->n && a < x->nattr; a++) {
    switch (x->kind[a]) {
      case TQ_SHM_FLOAT:
        memcpy(&av.d, &p->v[a], 8);
        pmdaEventAddHighResParam(arr, pidOf(M_P_FLOAT), PM_TYPE_DOUBLE, &av);
        break;
      case TQ_SHM_STRING:
      case TQ_SHM_ENTITY: {
        const char *nm = nameOf(g, p->v[a]);
        av.cp = (char *)(nm ? nm : "?");
        pmdaEventAddHighResParam(arr, pidOf(M_P_STRING), PM_TYPE_STRING, &av);
        break;
      }
      default:
        av.ll = p->v[a];
        pmdaEventAddHighResParam(arr, pidOf(M_P_INT), PM_TYPE_64, &av);
    }
  }
}

/* The calling client's queued records of (prog, sens): taken out of its
** queue, in order.  The records it missed (queue full) go first. */
static int recordsOf(Prog *g, int sens, pmAtomValue *atom) {
  Client *c = clientOf(pmdaGetContext(), 0);
  if (!c) return PMDA_FETCH_NOVALUES;
  int prog = (int)(g - progs);
  int arr = nextArray();
  if (arr < 0) return PM_ERR_TOOBIG;
  int any = 0;
  if (c->missed) {
    /* a record of its own kind, not PCP's missed record: the count of
    ** that one (its parameter count) comes through pmcd as 0 here */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    pmAtomValue av;
    pmdaEventAddHighResRecord(arr, &ts, 0);
    av.ul = AG_MISSED;
    pmdaEventAddHighResParam(arr, pidOf(M_P_KIND), PM_TYPE_U32, &av);
    av.ll = (int64_t)c->missed;
    pmdaEventAddHighResParam(arr, pidOf(M_P_INT), PM_TYPE_64, &av);
    c->missed = 0;
    any = 1;
  }
  size_t keep = 0;
  for (size_t i = 0; i < c->q.n; i++) {
    Pkt *p = &c->q.q[(c->q.head + i) & (c->q.cap - 1)];
    int mine = p->prog == prog && (p->sens == sens || p->kind == AG_EXIT);
    if (!mine) {
      c->q.q[(c->q.head + keep++) & (c->q.cap - 1)] = *p;
      continue;
    }
    struct timespec ts = {(time_t)(p->t / 1000000000LL), (long)(p->t % 1000000000LL)};
    pmdaEventAddHighResRecord(arr, &ts, 0);
    addParams(arr, g, p);
    if (p->kind != AG_EXIT && !g->cat[p->sens].is_entity) statOf(prog, p->sens, flagOf(g, p))->sent++;
    any = 1;
  }
  c->q.n = keep;
  if (!any) return PMDA_FETCH_NOVALUES;
  atom->vbp = (pmValueBlock *)pmdaEventGetHighResAddr(arr);
  return PMDA_FETCH_STATIC;
}

static char *catalogText(const Prog *g) {
  static char buf[16384];
  size_t o = 0;
  buf[0] = 0;
  for (int i = 0; i < g->nsens && o < sizeof buf - 256; i++) {
    const tq_shm_sensor *x = &g->cat[i];
    if (!x->name[0]) continue; /* (a kernel relation not served here) */
    o += (size_t)snprintf(buf + o, sizeof buf - o, "%s %s%s%s", x->name,
                          x->is_entity ? "entity" : x->sampled ? "sampled" : x->is_event ? "event" : "interval",
                          x->disable ? " disable" : "", " ");
    for (int k = 0; k < x->nattr && o < sizeof buf - 32; k++) {
      static const char *const kn[] = {"?", "int", "float", "string", "enum", "entity"};
      if (x->kind[k] == TQ_SHM_ENUM) o += (size_t)snprintf(buf + o, sizeof buf - o, "%senum%u", k ? "," : "", x->nenum[k]);
      else o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", k ? "," : "", kn[x->kind[k] <= 5 ? x->kind[k] : 0]);
    }
    /* per-entity: enabled per entity only, never asked whole (the
    ** kernel's traced relations: their flags are per thread) */
    o += (size_t)snprintf(buf + o, sizeof buf - o, " flag=%u%s\n", x->flag_attr, g->kernel && !x->is_entity ? " per-entity" : "");
  }
  return buf;
}

static int fetchCallBack(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom) {
  unsigned int cl = pmID_cluster(mdesc->m_desc.pmid), it = pmID_item(mdesc->m_desc.pmid);
  void *priv = NULL;
  if (mdesc->m_desc.indom != PM_INDOM_NULL) {
    if (pmdaCacheLookup(mdesc->m_desc.indom, inst, NULL, &priv) != PMDA_CACHE_ACTIVE || !priv) return PM_ERR_INST;
  }
  switch (cl) {
    case 0:
      if (it == 0) {
        Prog *g = priv;
        char *nm = NULL;
        pmdaCacheLookup(mdesc->m_desc.indom, inst, &nm, NULL);
        const char *slash = nm ? strchr(nm, '/') : NULL;
        for (int i = 0; slash && i < g->nsens; i++)
          if (!strcmp(g->cat[i].name, slash + 1)) return recordsOf(g, i, atom);
        return PM_ERR_INST;
      }
      atom->cp = (char *)"";
      return 1;
    case 1: return PMDA_FETCH_NOVALUES; /* event parameters: only inside records */
    case 2: {
      Stat *s = priv;
      if (it == 0) atom->ull = s->written;
      else if (it == 1) atom->ull = s->sent;
      else {
        const char *en = s->handle ? nameOf(&progs[s->prog], s->handle) : "*";
        atom->ul = en ? total(s->prog, s->sens, en) : 0;
      }
      return 1;
    }
    case 3: {
      Prog *g = priv;
      if (g->kernel) g->dropped = akLost(); /* (the rings full: counted in the kernel) */
      switch (it) {
        case 0: atom->ull = g->packets; return 1;
        case 1: atom->ull = g->dropped; return 1;
        case 2: atom->ull = g->bad; return 1;
        case 3: atom->ull = g->late; return 1;
        case 4: atom->cp = (char *)(g->exited ? "exited" : "running"); return 1;
        case 5: atom->cp = catalogText(g); return 1;
        case 6: {
          static char comm[64];
          char path[64];
          if (g->kernel) {
            atom->cp = (char *)"kernel";
            return 1;
          }
          snprintf(path, sizeof path, "/proc/%d/comm", (int)g->pid);
          FILE *f = fopen(path, "r");
          comm[0] = 0;
          if (f) {
            if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
            fclose(f);
          }
          comm[strcspn(comm, "\n")] = 0;
          atom->cp = comm;
          return 1;
        }
      }
      return PM_ERR_PMID;
    }
    case 5: {
      ResEnt *e = priv;
      if (it == 0) atom->ul = e->valid;
      else if (it == 1) atom->ull = e->rows;
      else atom->cp = e->text ? e->text : (char *)"";
      return 1;
    }
    case 4: {
      if (it == 0) {
        uint32_t n = 0;
        for (Client *c = clients; c; c = c->next) n += c->nsubs > 0;
        atom->ul = n;
      } else if (it == 1) {
        atom->ull = aDropped;
      } else {
        atom->ul = (uint32_t)getpid(); /* a client sees that the agent was started again (its enables gone) */
      }
      return 1;
    }
  }
  return PM_ERR_PMID;
}

static int tqFetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda) {
  pthread_mutex_lock(&mu);
  usedArrays = 0;
  for (int i = 0; i < numpmid; i++)
    if (pmID_cluster(pmidlist[i]) == 5) {
      readResults(1);
      break;
    }
  int rc = pmdaFetch(numpmid, pmidlist, resp, pmda);
  pthread_mutex_unlock(&mu);
  return rc;
}

static int tqInstance(pmInDom indom, int inst, char *name, pmInResult **result, pmdaExt *pmda) {
  pthread_mutex_lock(&mu);
  if (pmInDom_serial(indom) == IND_RES || pmInDom_serial(indom) == IND_TUP) readResults(0);
  int rc = pmdaInstance(indom, inst, name, result, pmda);
  pthread_mutex_unlock(&mu);
  return rc;
}

/* ================================================================ main */

/* The help text beside the agent's program ("help": help.dir and help.pag,
** which Install compiles there), or NULL when there is none. */
static char *helpBeside(void) {
  static char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
  if (n <= 0) return NULL;
  path[n] = 0;
  char *slash = strrchr(path, '/');
  if (!slash) return NULL;
  strcpy(slash + 1, "help.dir");
  if (access(path, R_OK)) return NULL;
  strcpy(slash + 1, "help");
  return path;
}

int main(int argc, char **argv) {
  pmSetProgname(argv[0]);
  static pmLongOptions longopts[] = {PMDA_OPTIONS_HEADER("Options"), PMOPT_DEBUG, PMDAOPT_DOMAIN, PMDAOPT_HELPTEXT,
                                      PMDAOPT_LOGFILE,
                                      {"command", 1, 'c', "COMMAND", "watch only programs whose command is COMMAND"},
                                      {"kernel", 0, 'k', NULL, "serve the kernel's relations (sensors/kernel.tq; BPF: root)"},
                                      {"queue", 1, 'q', "N", "records queued per client at most (default 65536)"},
                                      {"programs", 1, 'P', "N", "programs known at once, 1 to 256 (default 256)"},
                                      PMOPT_HELP, PMDA_OPTIONS_END};
  static pmdaOptions opts = {.short_options = "D:d:h:l:c:kq:P:?", .long_options = longopts};
  int kernel = 0;
  /* (the log's name is PCP's for an agent: pmcd runs it in $PCP_LOG_DIR/pmcd) */
  pmdaDaemon(&dispatch, PMDA_INTERFACE_7, pmGetProgname(), AG_DOMAIN, "tqmon.log", helpBeside());
  int c;
  while ((c = pmdaGetOptions(argc, argv, &opts, &dispatch)) != EOF)
    if (c == 'c') onlyCommand = opts.optarg; /* (the standard options are handled inside) */
    else if (c == 'k') kernel = 1;
    else if (c == 'P') {
      char *end;
      long n = strtol(opts.optarg, &end, 10);
      if (*end || n < 1 || n > AG_MAXPROG) {
        pmprintf("%s: -P %s: give 1 to %d programs\n", pmGetProgname(), opts.optarg, AG_MAXPROG);
        opts.errors++;
      } else {
        maxProg = (int)n;
      }
    } else if (c == 'q') {
      char *end;
      long n = strtol(opts.optarg, &end, 10);
      if (*end || n < 16 || n > (1L << 22)) {
        pmprintf("%s: -q %s: give 16 to 4194304 records\n", pmGetProgname(), opts.optarg);
        opts.errors++;
      } else {
        qmax = (size_t)n;
      }
    }
  if (opts.errors) {
    pmdaUsageMessage(&opts);
    return 1;
  }
  pmdaOpenLog(&dispatch);
  for (int i = 0; i < NMETRIC; i++)
    metrictab[i].m_desc.pmid = pmID_build(dispatch.domain, pmID_cluster(metrictab[i].m_desc.pmid),
                                          pmID_item(metrictab[i].m_desc.pmid));
  dispatch.version.seven.fetch = tqFetch;
  dispatch.version.seven.store = tqStore;
  dispatch.version.seven.instance = tqInstance;
  pmdaSetFetchCallBack(&dispatch, fetchCallBack);
  pmdaSetEndContextCallBack(&dispatch, endContext);
  pmdaInit(&dispatch, indomtab, (int)(sizeof indomtab / sizeof indomtab[0]), metrictab, NMETRIC);
  for (int i = 0; i < 5; i++) pmdaCacheOp(indomtab[i].it_indom, PMDA_CACHE_CULL);
  if (kernel) kernelStart();
  pmdaConnect(&dispatch);
  pthread_t th;
  if (pthread_create(&th, NULL, drainMain, NULL)) {
    pmNotifyErr(LOG_ERR, "cannot start the drain thread");
    return 1;
  }
  pmdaMain(&dispatch);
  stopping = 1;
  pthread_join(th, NULL);
  akStop();
  return 0;
}
