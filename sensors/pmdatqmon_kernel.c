/*
** pmdatqmon_kernel.c - the kernel sensors of pmdatqmon (its -k): every
** relation of sensors/kernel.tq, from the BPF programs of
** sensors/kernel/ks.bpf.c, their enable flags set per thread by the agent's
** clients through pmStore (sensors/pmdatqmon.md, "The kernel's relations").
**
** The agent does not link tqmon's engine (sensors/kernel.c is a processor
** module of it): it shares with the kernel PMs the BPF object and
** sensors/ksbpf.c (the relations' table, loading and attaching, clocks,
** counters, the claim of a pending system call, decoding a packet), and
** does here what kernel.c's session does for an engine, for the agent's
** clients instead:
**
**   - the threads' lifecycle (always attached): the threads that exist at
**     the start, then fork, exec, rename, exit and the last switch, make
**     the tuples of Thread; a thread id the kernel reuses is another
**     entity ("1234", then "1234#2": kernel.c's names);
**   - the processors: one Processor tuple per online CPU, from the start;
**   - a traced relation's programs are attached when a client first counts
**     it on some thread (akWant), and detached a second after none does:
**     a relation no client asks for costs the host nothing.  When they are
**     detached, the relation's open tuples and the kernel's open bits of it
**     are dropped (no client wants them; a later attach starts afresh);
**   - the packets are drained, converted to CLOCK_REALTIME, sorted, and
**     made records in time order up to the caller's limit (the agent's
**     reorder window); a system call still open then on a thread a client
**     counts has its begin claimed from the kernel;
**   - a new thread inherits its creator's flags in the kernel (the fork
**     program): the agent is told (AK_INHERIT) and keeps them for the
**     clients that counted the creator; a flag no client counted on the
**     creator is cleared at once.
**
** The caller (pmdatqmon.c) holds its lock around every call.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pmdatqmon_kernel.h"

#ifndef TQ_KERNEL_NO_BPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define AK_DETACH_NS 1000000000LL /* a program stays attached this long after its last want */
#define AK_OFF_NS 1000000000LL    /* a thread's flag stays set this long after its last client's count went */
#define AK_QMAX (1 << 21)         /* packets held (drained, not yet made records) at most */
#define AK_RING (16u << 20)       /* the relations' ring buffer (bytes) */
#define AK_MASK ((INT64_C(1) << 56) - 1)

/* A packet drained, its time converted. */
typedef struct Raw {
  struct ks_rec r;
  char *name;   /* Exec: the file; BlockIo: the device (malloc'd) */
  int64_t t;    /* CLOCK_REALTIME ns */
  uint64_t seq; /* order of arrival (equal times keep it) */
} Raw;

/* A thread alive (its Thread tuple open). */
typedef struct Thr {
  uint32_t tid, tgid;
  int gen;             /* its id's incarnation: 1, 2 once reused, ... */
  char comm[KS_COMM];
  uint64_t id;         /* its open Thread tuple */
  int64_t from;
  int exited;          /* its Exit came: it ends at its last switch (KO_GONE) */
  int64_t exitT;
} Thr;

/* An interval open: relation and key (the thread, or BlockIo's request). */
typedef struct OpenK {
  struct OpenK *next;
  uint64_t key;
  uint64_t id;
} OpenK;

typedef struct StrE {
  struct StrE *next;
  size_t idx;
} StrE;

static KsBpf kb;
static unsigned sysProgs;       /* Syscall's programs (ksbSysHook) */
static uint32_t served;         /* relations served (bits KR_*; Processor always) */
static int64_t off, offAt;      /* the packets' clock minus CLOCK_REALTIME, measured when (CLOCK_MONOTONIC) */
static int64_t t0;              /* the start: the tuples of what existed then begin there */
static int64_t procT;           /* the time of the last packet made records */
static Raw *held;               /* drained, not yet made records; held[0..nsorted) in time order */
static size_t nheld, cheld, nsorted;
static uint64_t seq, queueLost, unknownExit, orphans;
static int64_t claimed;         /* begins claimed (written by us: counted as written) */
static uint64_t nextId = 1;
static Thr **thr;               /* by tid (kb.nflags) */
static uint16_t *gens;          /* by tid: the latest incarnation of that id */
static int64_t *want[KS_NREL];  /* by relation: the handles the clients count, sorted */
static size_t nwant[KS_NREL];
static uint32_t *onT[KS_NREL];  /* by relation: the tids whose flag we set */
static size_t nonT[KS_NREL];
typedef struct Off {            /* a flag to clear, unless counted again by then */
  uint32_t tid;
  int kr;
  int64_t at;                   /* CLOCK_REALTIME ns */
} Off;
static Off *offs;
static size_t noffs, coffs;
static int64_t unneededAt[KP_NPROG]; /* when an attached program's last want went (0: wanted) */
static int64_t resetAt[KS_NREL];     /* packets of the relation before it are dropped (detached then) */
static OpenK *opens[4096];
static char **strs;             /* interned strings, by index */
static size_t nstrs, cstrs;
static StrE *strh[4096];
static AkRec *pend;             /* records made, for the next akDrain's caller */
static size_t npend, cpend;

static int64_t clockNs(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "pmdatqmon: out of memory\n");
    exit(1);
  }
  return q;
}

static uint64_t hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

/* ================================================================ names */

static int64_t intern(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (const char *c = s; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
  for (StrE *e = strh[h % 4096]; e; e = e->next)
    if (!strcmp(strs[e->idx], s)) return AK_STR | (int64_t)e->idx;
  if (nstrs == cstrs) {
    cstrs = cstrs ? 2 * cstrs : 256;
    strs = xrealloc(strs, sizeof(char *) * cstrs);
  }
  strs[nstrs] = strdup(s);
  if (!strs[nstrs]) exit(1);
  StrE *e = xrealloc(NULL, sizeof *e);
  e->idx = nstrs;
  e->next = strh[h % 4096];
  strh[h % 4096] = e;
  return AK_STR | (int64_t)nstrs++;
}

static int curGen(uint32_t tid) { return tid < kb.nflags && gens[tid] ? gens[tid] : 1; }
static int64_t thrHandle(uint32_t tid, int gen) { return AK_THREAD | (int64_t)gen << 32 | tid; }
static int64_t tidHandle(uint32_t tid) { return thrHandle(tid, curGen(tid)); }

const char *akName(int64_t h) {
  static char bufs[8][64];
  static int k;
  if (h <= 0) return NULL;
  int64_t tag = h & ~AK_MASK, v = h & AK_MASK;
  char *b = bufs[k++ & 7];
  if (tag == AK_THREAD) {
    uint32_t tid = (uint32_t)v;
    int gen = (int)(v >> 32);
    if (!tid || gen < 1) return NULL;
    if (gen == 1) snprintf(b, sizeof bufs[0], "%u", tid);
    else snprintf(b, sizeof bufs[0], "%u#%d", tid, gen);
    return b;
  }
  if (tag == AK_CPU) {
    snprintf(b, sizeof bufs[0], "cpu%lld", (long long)v);
    return b;
  }
  if (tag == AK_CALL) return ksbCallName((uint32_t)v, b, sizeof bufs[0]);
  if (tag == AK_STR) return (uint64_t)v < nstrs ? strs[v] : NULL;
  return NULL;
}

/* A canonical decimal number (no sign, no leading zero), or -1. */
static int64_t canon(const char *s, size_t n) {
  char b[16];
  if (!n || n > 10 || (s[0] == '0' && n > 1)) return -1;
  memcpy(b, s, n);
  b[n] = 0;
  return ksbNumber(b);
}

int64_t akHandle(int kr, const char *name) {
  if (kr < 0 || kr >= KS_NPM || !name) return -1;
  const KRelDef *d = &ksbRelDefs[kr];
  const char *ent = d->attrs[d->flag].ent;
  if (ent && !strcmp(ent, "Processor")) {
    if (strncmp(name, "cpu", 3)) return -1;
    int64_t c = canon(name + 3, strlen(name + 3));
    return c >= 0 && c < 4096 ? AK_CPU | c : -1;
  }
  const char *hash = strchr(name, '#');
  int64_t tid = canon(name, hash ? (size_t)(hash - name) : strlen(name)), gen = 1;
  if (hash) {
    gen = canon(hash + 1, strlen(hash + 1));
    if (gen < 2 || gen > 65535) return -1;
  }
  if (tid <= 0 || (uint64_t)tid >= kb.nflags) return -1;
  return thrHandle((uint32_t)tid, (int)gen);
}

int akServed(int kr) { return kr == KR_PROCESSOR || (kr >= 0 && kr < KS_NREL && (served >> kr & 1)); }

/* ================================================================ records */

static AkRec *emit(int kind, int kr, int64_t t, uint64_t id) {
  if (npend == cpend) {
    cpend = cpend ? 2 * cpend : 1024;
    pend = xrealloc(pend, sizeof(AkRec) * cpend);
  }
  AkRec *a = &pend[npend++];
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->rel = kr;
  a->t = t;
  a->id = id;
  return a;
}

/* The values of relation kr's record from packet k. */
static void values(int kr, const Raw *k, AkRec *a) {
  const KRelDef *d = &ksbRelDefs[kr];
  int n = 0;
  for (const KAttr *x = d->attrs; x->name && n < 8; x++, n++) {
    KsVal v = ksbValue(kr, x->what, &k->r, k->name);
    switch (v.tag) {
      case KV_THREAD: a->v[n] = tidHandle((uint32_t)v.i); break;
      case KV_CPU: a->v[n] = AK_CPU | v.i; break;
      case KV_CALL: a->v[n] = AK_CALL | v.i; break;
      case KV_STRING: a->v[n] = intern(v.s); break;
      default: a->v[n] = v.i;
    }
  }
  a->n = n;
}

static uint64_t openKey(int kr, uint64_t k) { return (uint64_t)kr << 56 ^ k; }

static uint64_t openTake(uint64_t key) {
  for (OpenK **pp = &opens[hash64(key) % 4096]; *pp; pp = &(*pp)->next)
    if ((*pp)->key == key) {
      OpenK *o = *pp;
      uint64_t id = o->id;
      *pp = o->next;
      free(o);
      return id;
    }
  return 0;
}

static void openPut(uint64_t key, uint64_t id) {
  OpenK *o = xrealloc(NULL, sizeof *o);
  o->key = key;
  o->id = id;
  o->next = opens[hash64(key) % 4096];
  opens[hash64(key) % 4096] = o;
}

/* Ends interval kr of key k at t, when one is open. */
static void ivEnd(int kr, uint64_t k, int64_t t) {
  uint64_t id = openTake(openKey(kr, k));
  if (id) emit(AK_END, kr, t, id);
}

static void threadTuple(const Thr *th, AkRec *a) {
  a->n = 3;
  a->v[0] = thrHandle(th->tid, th->gen);
  a->v[1] = th->tgid;
  a->v[2] = intern(th->comm);
}

static void threadBegin(Thr *th, int64_t t) {
  th->id = nextId++;
  th->from = t;
  threadTuple(th, emit(AK_BEGIN, KR_THREAD, t, th->id));
}

static void threadEnd(Thr *th, int64_t t) { threadTuple(th, emit(AK_END, KR_THREAD, t > th->from ? t : th->from + 1, th->id)); }

static void threadFree(Thr *th) {
  if (th->tid < kb.nflags && thr[th->tid] == th) thr[th->tid] = NULL;
  free(th);
}

/* Is handle h among those the clients count on kr? */
static int wanted(int kr, int64_t h) {
  size_t lo = 0, hi = nwant[kr];
  while (lo < hi) {
    size_t m = lo + (hi - lo) / 2;
    if (want[kr][m] < h) lo = m + 1;
    else hi = m;
  }
  return lo < nwant[kr] && want[kr][lo] == h;
}

/* A thread of the host: a new incarnation of its id, unless it takes over
** the id of its process's leader (an exec by another thread).  A reused
** id's flags become the new incarnation's: those it inherited and those
** the clients count for its name. */
static Thr *newThread(uint32_t tid, uint32_t tgid, const char *comm, int takeover, uint32_t inherit) {
  if (tid >= kb.nflags) return NULL;
  Thr *th = xrealloc(NULL, sizeof *th);
  memset(th, 0, sizeof *th);
  th->tid = tid;
  th->tgid = tgid;
  snprintf(th->comm, sizeof th->comm, "%s", comm);
  int g = gens[tid];
  th->gen = g && takeover ? g : g < 65535 ? g + 1 : g;
  gens[tid] = (uint16_t)th->gen;
  thr[tid] = th;
  if (th->gen > 1 && th->gen != g) {
    uint64_t bits = inherit & KS_ENABLE_MASK;
    for (int kr = 0; kr < KS_NREL; kr++)
      if (wanted(kr, thrHandle(tid, th->gen))) bits |= 1u << kr;
    uint64_t old = __atomic_load_n(&kb.flags[tid], __ATOMIC_RELAXED);
    for (;;) {
      uint64_t nw = (old & ~(uint64_t)KS_ENABLE_MASK) | bits;
      if (__atomic_compare_exchange_n(&kb.flags[tid], &old, nw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
    }
  }
  return th;
}

/* The thread's name or process changed (exec, rename): a new Thread tuple. */
static void threadChange(Thr *th, uint32_t tgid, const char *comm, int64_t t) {
  if (th->tgid == tgid && !strncmp(th->comm, comm, KS_COMM)) return;
  threadEnd(th, t);
  th->tgid = tgid;
  snprintf(th->comm, sizeof th->comm, "%s", comm);
  threadBegin(th, t);
}

static int switchAttached(void) {
  for (int i = 0; i < KP_NPROG; i++)
    if ((1u << i) == KP_SWITCH) return kb.links[i] != NULL;
  return 0;
}

static void lifecycle(Raw *k) {
  const struct ks_rec *r = &k->r;
  int64_t t = k->t;
  if (r->tid >= kb.nflags) return;
  Thr *th = thr[r->tid];
  char comm[KS_COMM];
  memcpy(comm, r->comm, KS_COMM);
  comm[KS_COMM - 1] = 0;
  switch (r->op) {
    case KO_FORK: {
      if (th && th->from != t0) { /* its exit was lost, and its id reused */
        threadEnd(th, t);
        threadFree(th);
        th = NULL;
      }
      uint32_t inherit = r->b32 & KS_ENABLE_MASK & ((1u << KS_NREL) - 1);
      if (!th) { /* (one created after the attach may have been read from /proc at the start) */
        th = newThread(r->tid, r->tgid, comm, 0, inherit);
        if (!th) return;
        threadBegin(th, t);
      }
      int64_t child = thrHandle(th->tid, th->gen), parent = tidHandle(r->a32);
      if ((served >> KR_FORK & 1) && (r->a64 >> KR_FORK & 1)) {
        AkRec *a = emit(AK_EVENT, KR_FORK, t, 0);
        a->n = 2;
        a->v[0] = parent;
        a->v[1] = child;
      }
      /* what it inherited is kept for the clients that count its creator;
      ** a flag no client counts on the creator is cleared now */
      for (int kr = 0; kr < KS_NREL; kr++)
        if ((inherit >> kr & 1) && !wanted(kr, parent)) {
          ksbFlags(&kb, r->tid, 1u << kr, 0);
          inherit &= ~(1u << kr);
        }
      if (inherit) {
        AkRec *a = emit(AK_INHERIT, KR_THREAD, t, 0);
        a->n = 2;
        a->v[0] = child;
        a->v[1] = parent;
        a->inherit = inherit;
      }
      break;
    }
    case KO_EXEC: {
      int takeover = r->a32 != r->tid;
      if (takeover) {
        /* a thread other than the leader executed: it goes on as the leader */
        Thr *old = r->a32 < kb.nflags ? thr[r->a32] : NULL;
        if (old) {
          ivEnd(KR_SYSCALL, old->tid, t);
          threadEnd(old, t);
          threadFree(old);
        }
        if (th) {
          threadEnd(th, t);
          threadFree(th);
        }
        th = NULL;
      }
      if (!th) {
        th = newThread(r->tid, r->tgid, comm, takeover, 0);
        if (!th) return;
        threadBegin(th, t);
      } else {
        threadChange(th, r->tgid, comm, t);
      }
      if ((served >> KR_EXEC & 1) && (r->b32 >> KR_EXEC & 1)) values(KR_EXEC, k, emit(AK_EVENT, KR_EXEC, t, 0));
      break;
    }
    case KO_RENAME:
      if (th) threadChange(th, th->tgid, comm, t);
      break;
    case KO_EXIT:
      if ((served >> KR_EXIT & 1) && (r->b32 >> KR_EXIT & 1)) values(KR_EXIT, k, emit(AK_EVENT, KR_EXIT, t, 0));
      if (!th) {
        unknownExit++;
        break;
      }
      ivEnd(KR_SYSCALL, r->tid, t); /* its system call never returns */
      if (switchAttached()) {       /* it still runs, in the kernel, until its last switch */
        th->exited = 1;
        th->exitT = t;
        break;
      }
      threadEnd(th, t + 1); /* just after its Exit (the event needs it alive) */
      threadFree(th);
      break;
    case KO_GONE:
      if (!th || !th->exited) break; /* (a leader whose id an exec took over goes on) */
      threadEnd(th, t + 1);
      threadFree(th);
      break;
  }
}

/* One packet, in time order. */
static void process(Raw *k) {
  const struct ks_rec *r = &k->r;
  if (k->t < t0) k->t = t0; /* (the lifecycle between the attach and the start) */
  if (k->t > procT) procT = k->t;
  if (r->rel == KR_THREAD) {
    lifecycle(k);
    return;
  }
  int kr = r->rel;
  if (kr >= KS_NREL || !(served >> kr & 1) || k->t < resetAt[kr]) return;
  uint64_t key = openKey(kr, kr == KR_BLOCKIO ? r->b32 : r->tid);
  switch (r->op) {
    case KO_EVENT: values(kr, k, emit(AK_EVENT, kr, k->t, 0)); break;
    case KO_BEGIN: {
      uint64_t id = openTake(key);
      if (id) emit(AK_END, kr, k->t, id); /* its end was lost */
      id = nextId++;
      openPut(key, id);
      values(kr, k, emit(AK_BEGIN, kr, k->t, id));
      break;
    }
    case KO_END: {
      uint64_t id = openTake(key);
      if (id) emit(AK_END, kr, k->t, id);
      else orphans++;
      break;
    }
  }
}

/* ================================================================ draining */

static Raw *pushRaw(void) {
  if (nheld == cheld) {
    cheld = cheld ? 2 * cheld : 4096;
    held = xrealloc(held, sizeof(Raw) * cheld);
  }
  Raw *k = &held[nheld++];
  memset(k, 0, sizeof *k);
  k->seq = seq++;
  return k;
}

static int onPacket(void *ctx, void *data, size_t size) {
  (void)ctx;
  if (size == sizeof(struct ks_span) && ((const struct ks_span *)data)->op == KO_SPAN) {
    /* a system call from entry to return: its begin and its end */
    const struct ks_span *sp = data;
    if (nheld + 2 > AK_QMAX) {
      queueLost += 2;
      return 0;
    }
    Raw *b = pushRaw();
    b->r.t = sp->t;
    b->r.rel = KR_SYSCALL;
    b->r.op = KO_BEGIN;
    b->r.tid = sp->tid;
    b->r.cpu = sp->cpu;
    b->r.a32 = sp->nr;
    b->t = (int64_t)sp->t - off;
    Raw *e = pushRaw();
    e->r.t = sp->tend;
    e->r.rel = KR_SYSCALL;
    e->r.op = KO_END;
    e->r.tid = sp->tid;
    e->r.cpu = sp->cpu;
    e->r.a64 = sp->ret;
    e->t = (int64_t)sp->tend - off;
    return 0;
  }
  if (size < sizeof(struct ks_rec)) return 0;
  if (nheld >= AK_QMAX) {
    queueLost++;
    return 0;
  }
  Raw *k = pushRaw();
  memcpy(&k->r, data, sizeof k->r);
  k->t = (int64_t)k->r.t - off;
  if (size > sizeof(struct ks_rec)) {
    k->name = strndup((const char *)data + sizeof(struct ks_rec), size - sizeof(struct ks_rec));
    if (!k->name) exit(1);
  }
  return 0;
}

static int rawCmp(const void *a, const void *b) {
  const Raw *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The packets drained by this pass (held[nsorted..nheld)) sorted among the
** others (held[0..nsorted), in time order): the new ones are sorted, and
** only the held ones later than the first of them take part in a merge
** (the ring hands packets over nearly in order), so a pass costs what it
** drained, not the whole window held. */
static void sortNew(void) {
  size_t m = nheld - nsorted;
  if (m > 1) qsort(held + nsorted, m, sizeof(Raw), rawCmp);
  if (!m || !nsorted || rawCmp(&held[nsorted - 1], &held[nsorted]) <= 0) {
    nsorted = nheld;
    return;
  }
  size_t lo = 0, hi = nsorted; /* the first held packet after the first new one */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (rawCmp(&held[mid], &held[nsorted]) <= 0) lo = mid + 1;
    else hi = mid;
  }
  size_t a = nsorted - lo;
  Raw *tmp = xrealloc(NULL, sizeof(Raw) * a);
  memcpy(tmp, held + lo, sizeof(Raw) * a);
  size_t x = 0, y = nsorted, o = lo;
  while (x < a && y < nheld) held[o++] = rawCmp(&tmp[x], &held[y]) <= 0 ? tmp[x++] : held[y++];
  while (x < a) held[o++] = tmp[x++];
  /* (the rest of the new ones are in place) */
  free(tmp);
  nsorted = nheld;
}

static unsigned relProgs(int kr) { return kr == KR_SYSCALL ? sysProgs : ksbRelDefs[kr].progs; }

/* The relations whose programs are all attached. */
static uint32_t liveRels(void) {
  uint32_t live = 0;
  for (int kr = 0; kr < KS_NREL; kr++) {
    unsigned p = relProgs(kr);
    int all = served >> kr & 1;
    for (int i = 0; i < KP_NPROG && all; i++)
      if ((p >> i & 1) && !kb.links[i]) all = 0;
    if (all) live |= 1u << kr;
  }
  return live;
}

/* Relation kr's programs were detached: its open tuples, and its bits in
** every flag word, are dropped; its packets drained before now too. */
static void reset(int kr, int64_t now) {
  uint64_t bits = 1u << kr;
  if (kr == KR_SYSCALL) bits |= KS_OPEN_SYSCALL | KS_PEND_SYSCALL | KS_SKIP_SYSCALL;
  if (kr == KR_RUNNINGON) bits |= KS_OPEN_RUN | KS_SKIP_RUN;
  if (kr == KR_READY) bits |= KS_OPEN_READY | KS_SKIP_READY;
  if (kr == KR_BLOCKED) bits |= KS_OPEN_BLOCKED | KS_SKIP_BLOCKED;
  for (uint32_t tid = 1; tid < kb.nflags; tid++)
    if (__atomic_load_n(&kb.flags[tid], __ATOMIC_RELAXED) & bits) __atomic_fetch_and(&kb.flags[tid], ~bits, __ATOMIC_RELAXED);
  for (int b = 0; b < 4096; b++)
    for (OpenK **pp = &opens[b]; *pp;) {
      if ((int)((*pp)->key >> 56) == kr) {
        OpenK *o = *pp;
        *pp = o->next;
        free(o);
      } else {
        pp = &(*pp)->next;
      }
    }
  resetAt[kr] = now;
}

/* Detaches the programs no relation a client counts has needed for a
** second; the relations that are no longer whole are reset (into *dropped). */
static void detachUnneeded(int64_t now, uint32_t *dropped) {
  unsigned need = KP_LIFE;
  for (int kr = 0; kr < KS_NREL; kr++)
    if (nwant[kr]) need |= relProgs(kr);
  uint32_t before = liveRels();
  int any = 0, sw = 0;
  for (int i = 0; i < KP_NPROG; i++) {
    if (!kb.links[i] || (need >> i & 1)) {
      unneededAt[i] = 0;
      continue;
    }
    if (!unneededAt[i]) unneededAt[i] = now;
    else if (now - unneededAt[i] >= AK_DETACH_NS) {
      ksbDetach(&kb, i);
      unneededAt[i] = 0;
      any = 1;
      if ((1u << i) == KP_SWITCH) sw = 1;
    }
  }
  if (!any) return;
  uint32_t gone = before & ~liveRels();
  for (int kr = 0; kr < KS_NREL; kr++)
    if (gone >> kr & 1) reset(kr, now);
  *dropped |= gone;
  if (!sw) return;
  /* the threads that exited wait for their last switch no more */
  for (uint32_t tid = 1; tid < kb.nflags; tid++) {
    Thr *th = thr[tid];
    if (!th || !th->exited) continue;
    threadEnd(th, th->exitT + 1 > procT ? th->exitT + 1 : procT);
    threadFree(th);
  }
}

void akDrain(AkRec **v, size_t *n, size_t *cap, int64_t upto, uint32_t *dropped) {
  *dropped = 0;
  if (!kb.rb) return;
  if (clockNs(CLOCK_MONOTONIC) - offAt > 1000000000LL) {
    off = ksbClockOffset(kb.useTai);
    offAt = clockNs(CLOCK_MONOTONIC);
  }
  ring_buffer__consume(kb.rb);
  /* the begins of calls still open, on the threads a client counts */
  int raced = 0;
  for (size_t i = 0; i < nonT[KR_SYSCALL]; i++) {
    struct ks_sysbeg sb;
    int rc = ksbClaim(&kb, onT[KR_SYSCALL][i], off, upto, &sb);
    if (rc < 0) raced = 1;
    if (rc <= 0) continue;
    Raw *k = pushRaw();
    k->r.t = sb.t;
    k->r.rel = KR_SYSCALL;
    k->r.op = KO_BEGIN;
    k->r.tid = onT[KR_SYSCALL][i];
    k->r.cpu = sb.cpu;
    k->r.a32 = sb.nr;
    k->t = (int64_t)sb.t - off;
    claimed++;
  }
  if (raced) ring_buffer__consume(kb.rb); /* (a call that returned while it was claimed: its packet, just written) */
  sortNew();
  size_t i = 0;
  for (; i < nheld && held[i].t <= upto; i++) {
    process(&held[i]);
    free(held[i].name);
  }
  if (i) memmove(held, held + i, sizeof(Raw) * (nheld - i));
  nheld -= i;
  nsorted = nheld;
  int64_t now = clockNs(CLOCK_REALTIME);
  size_t k = 0;
  for (size_t j = 0; j < noffs; j++) {
    if (offs[j].at > now) {
      offs[k++] = offs[j];
      continue;
    }
    int again = 0;
    for (size_t x = 0; x < nonT[offs[j].kr] && !again; x++) again = onT[offs[j].kr][x] == offs[j].tid;
    if (!again) ksbFlags(&kb, offs[j].tid, 1u << offs[j].kr, 0);
  }
  noffs = k;
  detachUnneeded(now, dropped);
  for (size_t j = 0; j < npend; j++) {
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 1024;
      *v = xrealloc(*v, sizeof(AkRec) * *cap);
    }
    (*v)[(*n)++] = pend[j];
  }
  npend = 0;
}

/* ================================================================ enabling */

static int64_t hcmp(int64_t a, int64_t b) { return a < b ? -1 : a > b; }
static int handleCmp(const void *a, const void *b) { return (int)hcmp(*(const int64_t *)a, *(const int64_t *)b); }

int akWant(int kr, const int64_t *h, size_t n, char *why, size_t wn) {
  if (kr < 0 || kr >= KS_NREL || !(served >> kr & 1) || !kb.flags) {
    snprintf(why, wn, "%s is not served here", kr >= 0 && kr < KS_NPM ? ksbRelDefs[kr].rel : "?");
    return -1;
  }
  want[kr] = xrealloc(want[kr], sizeof(int64_t) * (n ? n : 1));
  if (n) memcpy(want[kr], h, sizeof(int64_t) * n);
  if (n > 1) qsort(want[kr], n, sizeof(int64_t), handleCmp);
  nwant[kr] = n;
  /* the flags: set on the current incarnations named, cleared on the others */
  uint32_t *on = xrealloc(NULL, sizeof(uint32_t) * (n ? n : 1));
  size_t non = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t tid = (uint32_t)(h[i] & 0xffffffff);
    int gen = (int)((h[i] & AK_MASK) >> 32);
    if ((h[i] & ~AK_MASK) != AK_THREAD || !tid || tid >= kb.nflags || gen != curGen(tid)) continue;
    on[non++] = tid;
  }
  /* a flag no client counts any more is cleared a while later (a monitor
  ** that disables a thread and enables it again at once, as a tuple of it
  ** ends and the next begins, loses none of its packets meanwhile) */
  int64_t now = clockNs(CLOCK_REALTIME);
  for (size_t i = 0; i < nonT[kr]; i++) {
    int still = 0;
    for (size_t j = 0; j < non && !still; j++) still = on[j] == onT[kr][i];
    if (still) continue;
    if (noffs == coffs) {
      coffs = coffs ? 2 * coffs : 64;
      offs = xrealloc(offs, sizeof(Off) * coffs);
    }
    offs[noffs++] = (Off){onT[kr][i], kr, now + AK_OFF_NS};
  }
  for (size_t j = 0; j < non; j++) ksbFlags(&kb, on[j], 1u << kr, 1);
  free(onT[kr]);
  onT[kr] = on;
  nonT[kr] = non;
  if (!n) return 0;
  unsigned p = relProgs(kr);
  for (int i = 0; i < KP_NPROG; i++)
    if ((p >> i & 1) && ksbAttach(&kb, i, why, wn)) return -1;
  return 0;
}

void akCounters(int kr, uint64_t *written, uint64_t *dropped, uint64_t *unbegun) {
  uint64_t c[KS_NCOUNTERS];
  *written = *dropped = *unbegun = 0;
  if (kr < 0 || kr >= KS_NREL || ksbCounters(&kb, c)) return;
  *written = c[kr * KS_NCNT + KC_WRITTEN] + (kr == KR_SYSCALL ? (uint64_t)claimed : 0);
  *dropped = c[kr * KS_NCNT + KC_DROPPED];
  *unbegun = c[kr * KS_NCNT + KC_UNBEGUN];
}

uint64_t akLost(void) {
  uint64_t c[KS_NCOUNTERS], n = queueLost;
  if (ksbCounters(&kb, c)) return n;
  for (int kr = 0; kr < KS_NREL; kr++) n += c[kr * KS_NCNT + KC_DROPPED];
  return n + c[KS_CNT_GLOBAL + KG_BEYOND];
}

/* ================================================================ start, stop */

static void initialThread(void *ctx, uint32_t tid, uint32_t tgid, const char *comm) {
  (void)ctx;
  if (tid >= kb.nflags || thr[tid]) return;
  Thr *th = newThread(tid, tgid, comm, 0, 0);
  if (th) threadBegin(th, t0);
}

int akStart(char *why, size_t n) {
  struct btf *vm = btf__load_vmlinux_btf();
  kb.useTai = ksbHaveTai(vm);
  char hookWhy[200] = "";
  unsigned progs = KP_LIFE;
  served = 1u << KR_THREAD;
  for (int kr = 0; kr < KS_NREL; kr++) {
    const KRelDef *d = &ksbRelDefs[kr];
    if (kr == KR_THREAD) continue;
    const char *miss = ksbMissingTp(vm, d->progs);
    if (miss) {
      fprintf(stderr, "pmdatqmon: %s is not served: it needs the tracepoint %s, which this kernel does not have\n", d->rel,
              miss);
      continue;
    }
    if (kr == KR_SYSCALL) sysProgs = ksbSysHook(vm, 0, hookWhy, sizeof hookWhy);
    progs |= relProgs(kr);
    served |= 1u << kr;
  }
  btf__free(vm);
  int rc = ksbLoad(&kb, progs, served, AK_RING, why, n);
  if (rc == -2 && (progs & KP_SYS_FE)) {
    /* the probe passed, Syscall's programs did not: on the tracepoints */
    snprintf(hookWhy, sizeof hookWhy, "fentry on x64_sys_call: the kernel refused the programs: %.140s", ksbLog());
    sysProgs = KP_SYS_TP;
    progs = (progs & ~(unsigned)KP_SYS_FE) | KP_SYS_TP;
    rc = ksbLoad(&kb, progs, served, AK_RING, why, n);
  }
  if (rc) return -1;
  if (ksbRings(&kb, onPacket, NULL, why, n)) {
    akStop();
    return -1;
  }
  thr = calloc(kb.nflags, sizeof(Thr *));
  gens = calloc(kb.nflags, sizeof(uint16_t));
  if (!thr || !gens) {
    snprintf(why, n, "out of memory");
    akStop();
    return -1;
  }
  /* the lifecycle first, so that no thread is missed between it and /proc */
  for (int i = 0; i < KP_NPROG; i++)
    if ((KP_LIFE >> i & 1) && ksbAttach(&kb, i, why, n)) {
      akStop();
      return -1;
    }
  off = ksbClockOffset(kb.useTai);
  offAt = clockNs(CLOCK_MONOTONIC);
  t0 = procT = clockNs(CLOCK_REALTIME);
  if (ksbThreads(initialThread, NULL)) {
    snprintf(why, n, "cannot list /proc: %s", strerror(errno));
    akStop();
    return -1;
  }
  static uint32_t cpus[4096];
  int nc = ksbCpus(cpus, 4096);
  for (int i = 0; i < nc; i++) {
    AkRec *a = emit(AK_BEGIN, KR_PROCESSOR, t0, nextId++);
    a->n = 1;
    a->v[0] = AK_CPU | cpus[i];
  }
  fprintf(stderr, "pmdatqmon: the kernel's relations: Syscall %s%s%s\n",
          sysProgs & KP_SYS_FE ? "on fentry" : "on the raw_syscalls tracepoints", hookWhy[0] ? ": " : "", hookWhy);
  return 0;
}

void akStop(void) {
  ksbFree(&kb);
  for (size_t i = 0; i < nheld; i++) free(held[i].name);
  free(held);
  held = NULL;
  nheld = cheld = nsorted = 0;
  free(thr);
  free(gens);
  free(offs);
  thr = NULL;
  gens = NULL;
  offs = NULL;
  noffs = coffs = 0;
}

#else /* built without BPF (no BTF on the build machine) */

int akStart(char *why, size_t n) {
  snprintf(why, n, "this pmdatqmon was built without BPF (the build machine had no /sys/kernel/btf/vmlinux)");
  return -1;
}
int akServed(int kr) { return 0; }
const char *akName(int64_t h) { return NULL; }
int64_t akHandle(int kr, const char *name) { return -1; }
int akWant(int kr, const int64_t *h, size_t n, char *why, size_t wn) {
  snprintf(why, wn, "built without BPF");
  return -1;
}
void akDrain(AkRec **v, size_t *n, size_t *cap, int64_t upto, uint32_t *dropped) { *dropped = 0; }
void akCounters(int kr, uint64_t *written, uint64_t *dropped, uint64_t *unbegun) { *written = *dropped = *unbegun = 0; }
uint64_t akLost(void) { return 0; }
void akStop(void) {}

#endif
