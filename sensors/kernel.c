/*
** kernel.c - the Linux kernel as built-in processor modules: threads,
** processors, scheduling, system calls, block I/O and sockets, traced by
** BPF programs on kernel tracepoints (sensors/kernel/ks.bpf.c) with the
** enable flags in the kernel.  sensors/kernel.tq declares the relations and
** sensors/kernel.md documents them for users.
**
**   kernel             GROUPER: every PM below (tqmon run --kernel)
**   kernel_processor   PRODUCER of the entity relation Processor (the online CPUs)
**   kernel_thread      PRODUCER of the entity relation Thread (fork, exec, exit, rename)
**   kernel_fork, kernel_exec, kernel_exit, kernel_runningon, kernel_ready,
**   kernel_blocked, kernel_woke, kernel_syscall, kernel_blockio,
**   kernel_send, kernel_receive
**                      PRODUCERs of the traced relations of the same names
**
** The PMs of one engine share one session: one BPF object, one ring
** buffer, one thread that drains it, one table of threads.  The first START
** asks the engine which relations the operation needs (g->needed), loads
** only their programs and attaches them (a relation no query needs has no
** program in the kernel), enumerates the threads that exist from /proc, and
** starts the drain.  Each snapshot (the first kernel PM the engine calls
** at it) converts the packets' kernel times to CLOCK_REALTIME nanoseconds,
** sorts them and produces every relation's records up to the snapshot's
** time; the rest waits for the next one.  The realtime clock takes a
** snapshot a lag after its time, which is the reorder window; a packet that
** comes later than that is counted late (dropped, or for the lifecycle
** applied at the first time still open).
**
** Enabling.  The engine's enable(entity, on) of a relation sets or clears
** that relation's bit in the thread's flag word, which the BPF programs
** read before they write: events of threads no query enabled never leave
** the kernel.  A disable takes effect at the next snapshot (the kernel is
** ahead of the engine: clearing at once could lose the packets of an
** enable that follows at the same instant; what comes meanwhile the engine
** drops).  A new thread inherits its creator's flags in the kernel (the
** fork program copies them), so the first packets of a thread the queries
** will enable are not lost while the engine has not seen it yet; at the
** snapshot after its begin, the bits the engine did not confirm are
** cleared.
**
** System calls are written once each: the kernel keeps a call's begin
** (sysbeg, per thread) and its return writes begin and end in one packet
** (KO_SPAN), half the packets and a third of the bytes of a BEGIN and an
** END.  A call still open at a snapshot is claimed then from the mmapped
** table (claimSyscalls: one compare-and-swap of the thread's flag word), so
** the snapshot sees it open as when the entry wrote its BEGIN.
**
** A program list (monitor programs, --programs: g->program_wanted) leaves
** the threads of processes it does not name out of Thread: the engine never
** sees them, so it enables nothing on them, and their events stay in the
** kernel.  A thread is asked about at its begin, exec and rename.
**
** Losses are counted and reported, never hidden: packets dropped because
** the ring buffer was full (per relation, in the kernel), packets late for
** their snapshot, packets the monitor could not queue, ends whose begin
** was not written, threads past the flag array.  Each PM's message (the
** "pms" of --stats) holds its relation's counts; losses are logged at the
** snapshot they are first seen and again at the end.
**
** Why one file of over 1,000 lines: every kernel PM shares one session (one
** BPF object, one ring, one thread table, one drain); the PMs are a few
** lines each over it, and the session's parts use each other's state.
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/tq.h"
#include "sensors.h"

#include "ksbpf.h" /* the relations, loading, clocks, decoding: shared with pmdatqmon -k */

#ifndef TQ_KERNEL_NO_BPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ks.skel.h" /* generated from kernel/ks.bpf.c (build/gen): the filters map */
#endif

/* (ksbpf.h's attribute types are the interface's) */
_Static_assert((int)KT_INT == (int)TQ_TY_INT && (int)KT_FLOAT == (int)TQ_TY_FLOAT && (int)KT_STRING == (int)TQ_TY_STRING &&
                   (int)KT_ENUM == (int)TQ_TY_ENUM && (int)KT_ENTITY == (int)TQ_TY_ENTITY,
               "ksbpf.h's KT_* are TQ_TY_*");

/* A PM's message (vsnprintf: a long one is cut at the message's size). */
static void setMsg(tq_pm_private *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void setMsg(tq_pm_private *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->message, sizeof p->message, fmt, ap);
  va_end(ap);
}

#ifndef TQ_KERNEL_NO_BPF

/* How a relation fills its declared attributes. */
typedef struct Layout {
  int nattr;
  int what[TQ_MAX_ATTRS];   /* KA_* per attribute */
  int64_t enumv[TQ_MAX_ATTRS][8]; /* enum attributes: our index -> the declared value */
} Layout;

/* Binds relation rel (declared by the program) to def: kind, mode and
** attributes by name.  Returns 0, or -1 with the reason in msg. */
static int layoutBind(tq_pm_global *g, int rel, const KRelDef *def, Layout *l, char *msg, size_t n) {
  memset(l, 0, sizeof *l);
  int mode = g->relation_mode(g, rel), ev = g->is_event(g, rel);
  if (def->kind == 2 && mode != TQ_MODE_ENTITY) {
    snprintf(msg, n, "%s must be an entity relation (entity %s ...)", def->rel, def->rel);
    return -1;
  }
  if (def->kind < 2 && (mode != TQ_MODE_TRACED || ev != (def->kind == 0))) {
    snprintf(msg, n, "%s must be a traced %s relation (see sensors/kernel.tq)", def->rel, def->kind ? "interval" : "event");
    return -1;
  }
  l->nattr = g->nattributes(g, rel);
  for (int i = 0; i < l->nattr && i < TQ_MAX_ATTRS; i++) {
    const char *ent = NULL, *name = NULL;
    int ty = g->attribute_type(g, rel, i, &ent);
    const KAttr *a = NULL;
    for (const KAttr *x = def->attrs; x->name; x++) {
      if (g->attribute(g, rel, x->name) == i) a = x;
      if (g->attribute(g, rel, x->name) == i) name = x->name;
    }
    if (!a) {
      snprintf(msg, n, "%s: attribute %d is not one the kernel fills (see sensors/kernel.md)", def->rel, i + 1);
      return -1;
    }
    if (ty != a->type || (a->ent && (!ent || strcasecmp(ent, a->ent)))) {
      static const char *const tn[] = {"?", "int", "float", "string", "enum", "entity"};
      snprintf(msg, n, "%s.%s must be of type %s", def->rel, name, a->ent ? a->ent : tn[a->type]);
      return -1;
    }
    l->what[i] = a->what;
    if (a->type == TQ_TY_ENUM) {
      int64_t other = g->enum_value(g, rel, i, "Other");
      for (int k = 0; k < a->nvalues && k < 8; k++) {
        int64_t v = g->enum_value(g, rel, i, a->values[k]);
        l->enumv[i][k] = v >= 0 ? v : other;
        if (l->enumv[i][k] < 0) {
          snprintf(msg, n, "%s.%s has no value %s (nor Other)", def->rel, name, a->values[k]);
          return -1;
        }
      }
    }
  }
  return 0;
}

/* ================================================================ session state */

/* A packet drained from the ring buffer. */
typedef struct KPkt {
  struct ks_rec r;
  char *name;      /* Exec: the file; BlockIo: the device (malloc'd) */
  TqTime t;        /* CLOCK_REALTIME ns */
  uint64_t seq;    /* order of arrival (equal times keep it) */
} KPkt;

typedef struct KVec {
  KPkt *v;
  int64_t n, cap;
} KVec;

static KPkt *vecPush(KVec *q) {
  if (q->n == q->cap) {
    q->cap = q->cap ? 2 * q->cap : 4096;
    q->v = tqRealloc(q->v, sizeof(KPkt) * (size_t)q->cap);
  }
  return &q->v[q->n++];
}

static void vecFree(KVec *q) {
  for (int64_t i = 0; i < q->n; i++) free(q->v[i].name);
  free(q->v);
  memset(q, 0, sizeof *q);
}

/* An interval produced and not ended yet. */
typedef struct KOpen {
  uint64_t id;
  TqTime from;
  int64_t vals[8];
} KOpen;

/* A thread alive now (an open tuple of Thread). */
typedef struct KThread {
  uint64_t id;       /* its open Thread interval */
  TqTime from;
  uint32_t tid, tgid;
  int64_t sym;       /* the entity */
  char comm[KS_COMM];
  int exited;        /* its Exit came; it ends when it leaves its CPU for good */
  int gen;           /* its id's incarnation in this run: 1, 2 once reused, ... */
  int wanted;        /* its Thread tuple is produced: the program list names its process, or there is none */
} KThread;

/* A thread that inherited flags at its creation, until the engine had its
** chance to confirm them. */
typedef struct KProv {
  uint32_t tid;
  uint32_t bits;
  TqTime t;
} KProv;

#define KS_NLOSS 8 /* loss periods kept per relation (later ones join the last) */

typedef struct KRel {
  const KRelDef *def;
  tq_pm_private *p;  /* its PM (once started) */
  int rel;           /* relation id in the program (<= 0: none) */
  int needed;
  int bad;           /* its layout does not fit, or its tracepoints are missing */
  char why[256];
  Layout l;
  TqMap on;          /* tid + 2 -> the engine's enable count */
  int64_t enabledMax, enabledNow;
  uint64_t cnt[KS_NCNT]; /* the kernel's counters, summed over CPUs */
  uint64_t dropReported;
  uint64_t dropSeen;   /* dropped at the last reading of the counters */
  TqTime loss[KS_NLOSS][2]; /* the periods the ring dropped packets of it in (CLOCK_REALTIME ns) */
  int nloss;
  int64_t lossMerged;  /* periods joined to the last one: the list was full */
  uint64_t suppReported; /* KC_SUPPRESSED told the engine so far */
  int nfilter;       /* conditions of its filter in the kernel (rule SF; 0: none) */
  const tq_pm_cond *ufilter; /* a lifecycle relation's filter, checked by the PM (rule SF) */
  int nufilter;
  uint64_t usupp;    /* packets of it that failed ufilter: not produced */
  int64_t late, orphan, produced, notThread;
  int64_t early;     /* packets before the collection's start, left out (preStart) */
  int64_t lateOn;    /* enablings that reached the kernel a snapshot late (relEnable) */
  TqMap open;        /* key -> KOpen* */
} KRel;

typedef struct KSession KSession;
struct KSession {
  tq_pm_global *g;
  KSession *next;
  int refs;          /* PMs started on it */
  int setUp;         /* the first START did its work */
  int fatal;         /* loading or attaching failed */
  char fatalWhy[400];
  KRel r[KS_NPM];
  unsigned progs;    /* KP_* loaded and attached */
  uint32_t attachedRels;
  int sysWant;       /* args syscalls=: 0 auto, 1 fentry, 2 tracepoint */
  char sysWhy[200];  /* why Syscall is on the tracepoints (fentry refused; "": it is not) */
  KsBpf b;           /* the BPF object: programs, rings, mmapped flags and pending begins (ksbpf.h) */
  int64_t claimed;   /* pending begins claimed at snapshots (written by us) */
  _Atomic uint64_t drainPasses; /* the drain thread's passes over the ring */
  uint32_t ringBytes;
  /* the drain thread */
  pthread_t th;
  int thRunning;
  volatile int stop;
  pthread_mutex_t mu;
  KVec fill;         /* the drain thread's */
  KVec ready;        /* handed over to the engine's thread (mu) */
  int64_t queueLost; /* packets the monitor could not hold (mu) */
  int64_t qLost[KS_NREL];   /* the same by relation (mu) */
  uint64_t qLostFrom[KS_NREL]; /* the earliest kernel time among them since the last reading (mu; 0: none) */
  int64_t qLostSeen[KS_NREL]; /* told to the engine (g->lost) */
  int64_t qmax;      /* args queue=N: packets held at most (KS_MAXQ) */
  uint64_t seq;
  /* the engine's thread */
  KVec held;         /* converted, later than the last snapshot, in time order */
  int64_t heldHead;  /* held.v[0..heldHead) are consumed (their names freed) */
  _Atomic int64_t heldN; /* held packets not consumed, for the drain thread's bound */
  TqTime start, prevNow, syncNow;
  TqTime syncBefore; /* the snapshot before prevNow (a late enabling's loss begins after it) */
  TqTime readAt;     /* the last reading of the kernel's counters (CLOCK_REALTIME ns) */
  int synced;
  int64_t syncs;     /* snapshots so far */
  int64_t until[8];  /* args until=PID[+PID...]: the collection ends after they exit */
  int nuntil, untilLeft;
  int untilSeen[8];  /* its exit: 1 traced or taken as gone; < 0 snapshots it was found gone untraced */
  int untilState;    /* 1 they exited (seen at a snapshot), 2 halt asked */
  TqMap threads;     /* tid + 2 -> KThread* */
  TqMap gens;        /* tid + 2 -> the latest incarnation of that id in the run */
  KThread **initial; /* enumerated at START, begun at the first snapshot */
  int ninitial, cinitial;
  KProv *prov;
  int nprov, cprov;
  uint64_t *offs;    /* pending disables: kr << 32 | tid */
  int noffs, coffs;
  uint64_t nextId;
  int64_t begun, ended, lateLife, unknownExit, queueLostReported;
  int list;          /* a program list is given (g->program_wanted) */
  int64_t unwanted;  /* threads left out by the program list */
  uint64_t beyond, beyondReported;
};

static pthread_mutex_t sessionsMu = PTHREAD_MUTEX_INITIALIZER;
static KSession *sessions;

static KSession *sessionFind(tq_pm_global *g) {
  pthread_mutex_lock(&sessionsMu);
  KSession *s = sessions;
  while (s && s->g != g) s = s->next;
  pthread_mutex_unlock(&sessionsMu);
  return s;
}

static KSession *sessionGet(tq_pm_global *g) {
  KSession *s = sessionFind(g);
  if (s) return s;
  s = tqCalloc(1, sizeof *s);
  s->g = g;
  pthread_mutex_init(&s->mu, NULL);
  for (int i = 0; i < KS_NPM; i++) s->r[i].def = &ksbRelDefs[i];
  pthread_mutex_lock(&sessionsMu);
  s->next = sessions;
  sessions = s;
  pthread_mutex_unlock(&sessionsMu);
  return s;
}

static TqTime clockNs(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (TqTime)ts.tv_sec * TQ_SEC + ts.tv_nsec;
}

/* The kernel clock minus CLOCK_REALTIME (ksbClockOffset). */
static TqTime clockOffset(const KSession *s) { return ksbClockOffset(s->b.useTai); }

/* ================================================================ loading */

/* The programs relation d uses in session s (NULL: as explain would). */
static unsigned relProgs(const KSession *s, const KRelDef *d) {
  if (d->kr != KR_SYSCALL || !s) return d->progs;
  return s->progs & KP_SYS_FE ? s->progs & KP_SYS_FE : d->progs;
}

static int fatal(KSession *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fatal(KSession *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->fatalWhy, sizeof s->fatalWhy, fmt, ap);
  va_end(ap);
  s->fatal = 1;
  return -1;
}

static void *drainMain(void *arg);
static int enumerateThreads(KSession *s);
static KThread *newThread(KSession *s, uint32_t tid, uint32_t tgid, const char *comm, int takeover, uint32_t inherit);
static int ksOnPacket(void *ctx, void *data, size_t size);

/* ================================================================ filters (rule SF) */

/* The thread id an entity constant of type Thread names ("1234", or
** "1234#2" for a later incarnation of the id), or -1 when it names none. */
static int64_t tidOfName(const char *text) {
  if (!text) return -1;
  char b[24];
  snprintf(b, sizeof b, "%s", text);
  char *h = strchr(b, '#');
  if (h) {
    if (ksbNumber(h + 1) < 2) return -1;
    *h = 0;
  }
  return ksbNumber(b);
}

/* The number N of a name the PM gives as PREFIX followed by N in decimal
** ("cpu3", "syscall_335") up to max, or -1 when text is not such a name exactly
** ("cpu03", "cpu 3" and "cpu+3" name no CPU: the engine compares names, so
** <> holds for every CPU and = for none). */
static int64_t numberOfName(const char *text, const char *prefix, int64_t max) {
  size_t n = strlen(prefix);
  if (!text || strncmp(text, prefix, n)) return -1;
  int64_t v = ksbNumber(text + n);
  char b[48];
  if (v < 0 || v > max) return -1;
  snprintf(b, sizeof b, "%s%lld", prefix, (long long)v);
  return strcmp(b, text) ? -1 : v;
}

/* Is relation kr a lifecycle relation: its packets are the threads'
** lifecycle packets, written for Thread whatever the queries ask (its
** filter is checked by the PM, in user space)? */
static int lifeRel(int kr) { return kr == KR_FORK || kr == KR_EXEC || kr == KR_EXIT; }

/* Condition c of relation kr (layout l) in terms of a packet's raw fields,
** into d: the BPF program checks d.  Returns 1, or 0 when it cannot (a
** name it does not see: Device, File, the Thread's Process or Command; a
** float; <> on a thread, whose id names every incarnation).  A checked
** condition may let more packets pass than c (= on a thread: every
** incarnation of its id), never fewer; the engine checks c again. */
static int rawCond(const KRel *r, int kr, const tq_pm_cond *c, struct ks_cond *d) {
  const Layout *l = &r->l;
  if (c->attr < 0 || c->attr >= l->nattr || c->fcmp || lifeRel(kr) || kr == KR_THREAD) return 0;
  memset(d, 0, sizeof *d);
  d->op = (uint8_t)c->op;
  d->val = c->val;
  int what = l->what[c->attr];
  switch (what) {
    case KA_SOCKET: d->field = KF_B64; return kr == KR_SEND || kr == KR_RECEIVE;
    case KA_BYTES:
      d->field = kr == KR_BLOCKIO ? KF_B64 : KF_A64;
      return kr == KR_BLOCKIO || kr == KR_SEND || kr == KR_RECEIVE;
    case KA_SECTOR: d->field = KF_A64; return kr == KR_BLOCKIO;
    case KA_STATE:
    case KA_OPERATION:
    case KA_FAMILY: {
      /* the set of our codes whose declared value passes: every comparison
      ** (several codes may be declared Other) */
      int n = what == KA_STATE ? 4 : 5;
      uint64_t set = 0;
      for (int k = 0; k < n; k++)
        if (tq_pm_cond_holds(c, l->enumv[c->attr][k])) set |= 1ull << k;
      d->op = KS_OP_IN;
      d->val = (int64_t)set;
      d->field = what == KA_FAMILY ? KF_FAMILY : KF_A32;
      return what == KA_STATE ? kr == KR_BLOCKED : what == KA_OPERATION ? kr == KR_BLOCKIO : kr == KR_SEND || kr == KR_RECEIVE;
    }
    case KA_THREAD:
    case KA_WAKEE:
    case KA_WAKER: {
      if (c->op != TQ_PM_EQ) return 0;
      d->field = what == KA_WAKER ? KF_A32 : KF_TID;
      d->val = tidOfName(c->text); /* -1: no thread has that name, equal to none */
      return 1;
    }
    case KA_PROCESSOR: {
      if (kr != KR_RUNNINGON || (c->op != TQ_PM_EQ && c->op != TQ_PM_NE)) return 0;
      d->field = KF_CPU;
      d->val = numberOfName(c->text, "cpu", UINT32_MAX); /* (cpuSym's names; -1: no CPU's) */
      return 1;
    }
    case KA_CALL: {
      if (kr != KR_SYSCALL || !c->text || (c->op != TQ_PM_EQ && c->op != TQ_PM_NE)) return 0;
      /* (a name no system call has: -1, equal to none, different from all) */
      d->field = KF_A32;
      d->val = ksbCallNr(c->text);
      return 1;
    }
    default: return 0;
  }
}

/* The filter the BPF program of relation kr checks, of the engine's n
** conditions c, into f: a condition it cannot check is left out of its
** group (more packets pass; the engine checks them all); a group left
** empty, or more conditions than the kernel holds, and there is none.
** Returns the conditions in f (0: none). */
static int kernelFilter(const KRel *r, int kr, const tq_pm_cond *c, int n, struct ks_filter *f) {
  memset(f, 0, sizeof *f);
  if (n <= 0 || lifeRel(kr) || kr == KR_THREAD) return 0;
  int w = 0;
  for (int i = 0; i < n;) {
    int grp = c[i].group, had = w;
    for (; i < n && c[i].group == grp; i++) {
      struct ks_cond x;
      if (!rawCond(r, kr, &c[i], &x)) continue;
      if (w == KS_NCOND) return 0;
      x.group = (uint8_t)grp;
      f->c[w++] = x;
    }
    if (w == had || grp > 7) return 0;
  }
  f->n = (uint32_t)w;
  return w;
}

/* Writes the filter of each needed relation into the kernel, before the
** programs are attached: the engine's conditions (g->sensor_filter) the
** BPF programs can check (kernelFilter).  A lifecycle relation's filter
** is kept for the PM to check (its packets are written anyway). */
static void writeFilters(KSession *s) {
  tq_pm_global *g = s->g;
  if (g->version < 10 || !g->sensor_filter) return;
  int fd = bpf_map__fd(s->b.skel->maps.filters);
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    if (r->rel <= 0 || !r->needed || r->bad || kr == KR_THREAD) continue;
    const tq_pm_cond *c = NULL;
    int n = g->sensor_filter(g, r->rel, &c);
    if (n <= 0) continue;
    if (lifeRel(kr)) {
      r->ufilter = c;
      r->nufilter = n;
      continue;
    }
    struct ks_filter f;
    int w = kernelFilter(r, kr, c, n, &f);
    uint32_t key = (uint32_t)kr;
    if (w && !bpf_map_update_elem(fd, &key, &f, BPF_ANY)) r->nfilter = w;
  }
}

/* Loads and attaches the programs of the needed relations, maps the flags,
** enumerates the threads and starts the drain.  Returns 0 or -1 (fatal). */
static int loadBpf(KSession *s) {
  char why[400];
  int rc = ksbLoad(&s->b, s->progs, s->attachedRels, s->ringBytes, why, sizeof why);
  if (rc == -2 && (s->progs & KP_SYS_FE) && !s->sysWant) {
    /* the probe passed, Syscall's programs did not: on the tracepoints */
    snprintf(s->sysWhy, sizeof s->sysWhy, "fentry on x64_sys_call: the kernel refused the programs: %.140s",
             ksbLog()[0] ? ksbLog() : "?");
    s->progs = (s->progs & ~(unsigned)KP_SYS_FE) | KP_SYS_TP;
    rc = ksbLoad(&s->b, s->progs, s->attachedRels, s->ringBytes, why, sizeof why);
  }
  if (rc) return fatal(s, "%s", why);
  writeFilters(s);
  if (ksbRings(&s->b, ksOnPacket, s, why, sizeof why)) return fatal(s, "%s", why);
  /* the lifecycle first, so no thread is missed between it and /proc */
  for (int i = 0; i < KP_NPROG; i++)
    if ((s->progs & (1u << i)) && ksbAttach(&s->b, i, why, sizeof why)) return fatal(s, "%s", why);
  if (enumerateThreads(s)) return -1;
  if (pthread_create(&s->th, NULL, drainMain, s)) return fatal(s, "cannot start the drain thread");
  s->thRunning = 1;
  return 0;
}

/* One thread that exists at the start (ksbThreads). */
static void initialThread(void *ctx, uint32_t tid, uint32_t tgid, const char *comm) {
  KSession *s = ctx;
  if (tqMapGet(&s->threads, (uint64_t)tid + 2)) return;
  KThread *th = newThread(s, tid, tgid, comm, 0, 0);
  if (s->ninitial == s->cinitial) {
    s->cinitial = s->cinitial ? 2 * s->cinitial : 1024;
    s->initial = tqRealloc(s->initial, sizeof(KThread *) * (size_t)s->cinitial);
  }
  s->initial[s->ninitial++] = th;
}

/* The threads alive now (ksbThreads: /proc, zombies left out): they begin
** at the collection's start. */
static int enumerateThreads(KSession *s) {
  if (ksbThreads(initialThread, s)) return fatal(s, "cannot list /proc: %s", strerror(errno));
  return 0;
}

/* ================================================================ draining */

#define KS_MAXQ (1 << 21) /* packets held by the monitor at most (args queue=N) */

/* n packets of relation kr, the earliest at kernel time t, are dropped:
** the monitor holds too many (under s->mu) */
static void queueDrop(KSession *s, uint32_t kr, uint64_t t, int64_t n) {
  s->queueLost += n;
  if (kr >= KS_NREL) return; /* (a relation no program writes: not one an answer reads) */
  s->qLost[kr] += n;
  if (!s->qLostFrom[kr] || t < s->qLostFrom[kr]) s->qLostFrom[kr] = t;
}

/* One half of system call sp (its begin or its end, at t) into the fill. */
static KPkt *spanHalf(KSession *s, const struct ks_span *sp, int op, uint64_t t) {
  KPkt *k = vecPush(&s->fill);
  memset(&k->r, 0, sizeof k->r);
  k->r.t = t;
  k->r.rel = sp->rel;
  k->r.op = op;
  k->r.tid = sp->tid;
  k->r.cpu = sp->cpu;
  k->name = NULL;
  k->seq = s->seq++;
  return k;
}

static int ksOnPacket(void *ctx, void *data, size_t size) {
  KSession *s = ctx;
  if (size == sizeof(struct ks_span) && ((const struct ks_span *)data)->op == KO_SPAN) {
    /* a system call from entry to return: its begin and its end */
    const struct ks_span *sp = data;
    if (s->fill.n + 1 >= s->qmax) {
      pthread_mutex_lock(&s->mu);
      queueDrop(s, sp->rel, sp->t, 2);
      pthread_mutex_unlock(&s->mu);
      return 0;
    }
    spanHalf(s, sp, KO_BEGIN, sp->t)->r.a32 = sp->nr;
    spanHalf(s, sp, KO_END, sp->tend)->r.a64 = sp->ret;
    return 0;
  }
  if (size < sizeof(struct ks_rec)) return 0;
  if (s->fill.n >= s->qmax) {
    const struct ks_rec *kp = data;
    pthread_mutex_lock(&s->mu);
    queueDrop(s, kp->rel, kp->t, 1);
    pthread_mutex_unlock(&s->mu);
    return 0;
  }
  KPkt *k = vecPush(&s->fill);
  memcpy(&k->r, data, sizeof k->r);
  k->name = NULL;
  k->seq = s->seq++;
  if (size > sizeof(struct ks_rec)) {
    const char *nm = (const char *)data + sizeof(struct ks_rec);
    k->name = strndup(nm, size - sizeof(struct ks_rec));
  }
  return 0;
}

/* Empties the ring buffer every few milliseconds (the programs write
** without waking anyone up: a wakeup per packet would cost the monitored
** system a context switch per event). */
static void *drainMain(void *arg) {
  KSession *s = arg;
  struct timespec d = {0, 2 * 1000 * 1000};
  while (!s->stop) {
    int n = ring_buffer__consume(s->b.rb);
    if (s->fill.n) {
      pthread_mutex_lock(&s->mu);
      if (!s->ready.n) {
        KVec t = s->ready;
        s->ready = s->fill;
        s->fill = t;
        s->fill.n = 0;
      } else if (s->ready.n + s->fill.n + s->heldN > s->qmax) {
        for (int64_t i = 0; i < s->fill.n; i++) {
          queueDrop(s, s->fill.v[i].r.rel, s->fill.v[i].r.t, 1);
          free(s->fill.v[i].name);
        }
        s->fill.n = 0;
      } else {
        for (int64_t i = 0; i < s->fill.n; i++) *vecPush(&s->ready) = s->fill.v[i];
        s->fill.n = 0;
      }
      pthread_mutex_unlock(&s->mu);
    }
    s->drainPasses++;
    if (n <= 0) nanosleep(&d, NULL);
  }
  return NULL;
}

/* ================================================================ flags */

static void flagSet(KSession *s, uint32_t tid, uint32_t bit) { ksbFlags(&s->b, tid, bit, 1); }
static void flagClear(KSession *s, uint32_t tid, uint32_t bit) { ksbFlags(&s->b, tid, bit, 0); }

static int64_t symOf(tq_pm_global *g, const char *text) { return g->symbol(g, text, -1); }

/* Thread ids are reused by the kernel: each incarnation of an id in the run
** is its own entity, "1234" the first, "1234#2" the next, and so on (the
** paper's entity identifiers are unique across time).  The kernel's flags
** of an id are those of its current incarnation. */
static int curGen(KSession *s, uint32_t tid) {
  intptr_t g = (intptr_t)tqMapGet(&s->gens, (uint64_t)tid + 2);
  return g ? (int)g : 1;
}
static uint64_t onKey(uint32_t tid, int gen) { return ((uint64_t)gen << 32 | tid) + 2; }
/* Did the engine enable relation kr on the current incarnation of tid? */
static int engineOn(KSession *s, int kr, uint32_t tid) {
  return tqMapGet(&s->r[kr].on, onKey(tid, curGen(s, tid))) != NULL;
}

/* A thread of the run: a new incarnation of its id, unless it takes over
** the id of its process's leader (an exec by another thread).  A reused
** id's kernel flags become the new incarnation's: those it inherited at its
** fork (inherit), and any the engine set for it by name. */
static KThread *newThread(KSession *s, uint32_t tid, uint32_t tgid, const char *comm, int takeover, uint32_t inherit) {
  KThread *th = tqCalloc(1, sizeof *th);
  th->tid = tid;
  th->tgid = tgid;
  snprintf(th->comm, sizeof th->comm, "%s", comm);
  int gen = (int)(intptr_t)tqMapGet(&s->gens, (uint64_t)tid + 2);
  th->gen = gen && takeover ? gen : gen + 1;
  tqMapPut(&s->gens, (uint64_t)tid + 2, (void *)(intptr_t)th->gen);
  char b[32];
  if (th->gen == 1) snprintf(b, sizeof b, "%u", tid);
  else snprintf(b, sizeof b, "%u#%d", tid, th->gen);
  th->sym = symOf(s->g, b);
  tqMapPut(&s->threads, (uint64_t)tid + 2, th);
  if (th->gen > 1 && th->gen != gen && s->b.flags && tid < s->b.nflags) {
    uint32_t bits = 0;
    for (int kr = 0; kr < KS_NREL; kr++)
      if ((inherit >> kr & 1) || engineOn(s, kr, tid)) bits |= 1u << kr;
    uint64_t old = __atomic_load_n(&s->b.flags[tid], __ATOMIC_RELAXED);
    for (;;) {
      uint64_t nw = (old & ~(uint64_t)KS_ENABLE_MASK) | bits;
      if (__atomic_compare_exchange_n(&s->b.flags[tid], &old, nw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
    }
  }
  return th;
}

/* At a snapshot: the disables asked since the last one, and the inherited
** flags the engine did not confirm once it saw the thread begin. */
static void settleFlags(KSession *s) {
  for (int i = 0; i < s->noffs; i++) {
    int kr = (int)(s->offs[i] >> 32);
    uint32_t tid = (uint32_t)s->offs[i];
    if (!engineOn(s, kr, tid)) flagClear(s, tid, 1u << kr);
  }
  s->noffs = 0;
  int k = 0;
  for (int i = 0; i < s->nprov; i++) {
    KProv *pv = &s->prov[i];
    if (pv->t > s->prevNow) {
      s->prov[k++] = *pv; /* its begin has not been through the queries yet */
      continue;
    }
    for (int kr = 0; kr < KS_NREL; kr++)
      if ((pv->bits >> kr & 1) && !engineOn(s, kr, pv->tid)) flagClear(s, pv->tid, 1u << kr);
  }
  s->nprov = k;
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    int64_t n = r->on.n;
    for (int i = 0; i < s->nprov; i++)
      if ((s->prov[i].bits >> kr & 1) && !engineOn(s, kr, s->prov[i].tid)) n++;
    r->enabledNow = n;
    if (n > r->enabledMax) r->enabledMax = n;
  }
}

/* ================================================================ producing */

static int64_t tidSym(KSession *s, uint32_t tid) {
  KThread *th = tqMapGet(&s->threads, (uint64_t)tid + 2);
  if (th && th->sym) return th->sym;
  char b[16];
  snprintf(b, sizeof b, "%u", tid);
  return symOf(s->g, b);
}

static int64_t cpuSym(tq_pm_global *g, uint32_t cpu) {
  char b[24];
  snprintf(b, sizeof b, "cpu%u", cpu);
  return symOf(g, b);
}

/* Fills the values of relation kr from packet k (and the thread th for
** Thread).  Returns the number of values. */
static int fill(KSession *s, int kr, const KPkt *k, const KThread *th, int64_t *v) {
  tq_pm_global *g = s->g;
  const Layout *l = &s->r[kr].l;
  for (int i = 0; i < l->nattr; i++) {
    if (th && (l->what[i] == KA_THREAD || l->what[i] == KA_PROCESS || l->what[i] == KA_COMMAND)) {
      v[i] = l->what[i] == KA_THREAD ? th->sym : l->what[i] == KA_PROCESS ? th->tgid : symOf(g, th->comm);
      continue;
    }
    if (l->what[i] == KA_PROCESS || l->what[i] == KA_COMMAND) { /* (a packet's thread: Thread's attributes) */
      v[i] = l->what[i] == KA_PROCESS ? k->r.tgid : symOf(g, k->r.comm);
      continue;
    }
    KsVal x = ksbValue(kr, l->what[i], &k->r, k->name);
    char b[32];
    switch (x.tag) {
      case KV_THREAD: v[i] = tidSym(s, (uint32_t)x.i); break;
      case KV_CPU: v[i] = cpuSym(g, (uint32_t)x.i); break;
      case KV_CALL: v[i] = symOf(g, ksbCallName((uint32_t)x.i, b, sizeof b)); break;
      case KV_STRING: v[i] = symOf(g, x.s); break;
      case KV_ENUM: v[i] = l->enumv[i][x.i]; break;
      case KV_INT: v[i] = x.i; break;
      default: v[i] = 0;
    }
  }
  return l->nattr;
}

static void produce(KSession *s, int kr, int kind, TqTime t, TqTime from, uint64_t id, const int64_t *v) {
  KRel *r = &s->r[kr];
  tq_record rec = {r->rel, kind, t, from, kind == TQ_REC_END ? t : 0, id, r->l.nattr, v};
  if (kind == TQ_REC_BEGIN) rec.from = t;
  s->g->produce(s->g, &rec);
  r->produced++;
}

/* An event of lifecycle relation kr (Fork, Exec, Exit) whose flag was
** on: produced when it passes the relation's filter (rule SF, checked
** here: the kernel writes the packet for Thread anyway), else counted
** with the suppressed. */
static void produceLife(KSession *s, int kr, TqTime t, const int64_t *v) {
  KRel *r = &s->r[kr];
  if (r->nufilter && !tq_pm_conds_hold(r->nufilter, r->ufilter, v)) {
    r->usupp++;
    return;
  }
  produce(s, kr, TQ_REC_EVENT, t, t, 0, v);
}

/* Is relation kr bound and in use here? */
static int live(const KSession *s, int kr) { return s->r[kr].rel > 0 && s->r[kr].needed && !s->r[kr].bad; }

/* Does the program list (monitor programs, --programs) name th's process?
** Asked with the process's command: its leader's, which the process's
** threads share until one renames itself. */
static int threadWanted(KSession *s, const KThread *th) {
  tq_pm_global *g = s->g;
  s->list = g->version >= 7 && g->program_wanted && !g->program_wanted(g, -1, NULL);
  if (!s->list) return 1;
  const KThread *lead = th->tid == th->tgid ? th : tqMapGet(&s->threads, (uint64_t)th->tgid + 2);
  return snsProcessWanted(g, th->tgid, lead ? lead->comm : th->comm);
}

/* A Thread tuple begins, unless the program list leaves its process out:
** then the engine never sees the thread, never enables it, and no event
** of it leaves the kernel (it still begins and ends here: the lifecycle
** is followed, and a later exec may make it a program the list names). */
static void threadBegin(KSession *s, KThread *th, TqTime t) {
  th->id = ++s->nextId;
  th->from = t;
  s->begun++;
  th->wanted = threadWanted(s, th);
  if (!th->wanted) {
    s->unwanted++;
    return;
  }
  if (!live(s, KR_THREAD)) return;
  int64_t v[8];
  fill(s, KR_THREAD, NULL, th, v);
  produce(s, KR_THREAD, TQ_REC_BEGIN, t, t, th->id, v);
}

static void threadEnd(KSession *s, KThread *th, TqTime t) {
  s->ended++;
  if (!th->wanted || !live(s, KR_THREAD)) return;
  int64_t v[8];
  fill(s, KR_THREAD, NULL, th, v);
  produce(s, KR_THREAD, TQ_REC_END, t > th->from ? t : th->from + 1, th->from, th->id, v);
}

static uint64_t openKey(int kr, uint64_t k) { return tqHash64(((uint64_t)kr << 56) ^ k) | 2; }

/* Ends an open interval of kr (key k) at t; 0 if there was none. */
static int ivEnd(KSession *s, int kr, uint64_t k, TqTime t) {
  KRel *r = &s->r[kr];
  KOpen *o = tqMapDel(&r->open, openKey(kr, k));
  if (!o) return 0;
  tq_record rec = {r->rel, TQ_REC_END, t > o->from ? t : o->from + 1, o->from, t > o->from ? t : o->from + 1, o->id,
                   r->l.nattr, o->vals};
  s->g->produce(s->g, &rec);
  r->produced++;
  free(o);
  return 1;
}

/* The thread's state changed (exec, rename): a new Thread tuple when its
** command is another. */
static void threadChange(KSession *s, KThread *th, uint32_t tgid, const char *comm, TqTime t) {
  if (th->tgid == tgid && !strncmp(th->comm, comm, KS_COMM)) return;
  threadEnd(s, th, t);
  th->tgid = tgid;
  snprintf(th->comm, sizeof th->comm, "%s", comm);
  threadBegin(s, th, t);
}

static void lifecycle(KSession *s, KPkt *k) {
  const struct ks_rec *r = &k->r;
  TqTime t = k->t;
  KThread *th = tqMapGet(&s->threads, (uint64_t)r->tid + 2);
  int64_t v[8];
  switch (r->op) {
    case KO_FORK:
      if (th && th->from != s->start) { /* its exit was lost, and its id reused */
        threadEnd(s, th, t);
        tqMapDel(&s->threads, (uint64_t)r->tid + 2);
        free(th);
        th = NULL;
      }
      if (!th) { /* (one created after the attach may have been enumerated at the start) */
        char comm[KS_COMM];
        memcpy(comm, r->comm, KS_COMM);
        comm[KS_COMM - 1] = 0;
        th = newThread(s, r->tid, r->tgid, comm, 0, r->b32 & KS_ENABLE_MASK);
        threadBegin(s, th, t);
      }
      if (live(s, KR_FORK) && (r->a64 >> KR_FORK & 1)) {
        fill(s, KR_FORK, k, NULL, v);
        produceLife(s, KR_FORK, t, v);
      }
      if (r->b32 & KS_ENABLE_MASK) {
        if (s->nprov == s->cprov) {
          s->cprov = s->cprov ? 2 * s->cprov : 64;
          s->prov = tqRealloc(s->prov, sizeof(KProv) * (size_t)s->cprov);
        }
        s->prov[s->nprov++] = (KProv){r->tid, r->b32 & KS_ENABLE_MASK, t};
      }
      break;
    case KO_EXEC: {
      char comm[KS_COMM];
      memcpy(comm, r->comm, KS_COMM);
      comm[KS_COMM - 1] = 0;
      int takeover = r->a32 != r->tid;
      if (takeover) {
        /* a thread other than the leader executed: it goes on as the leader */
        KThread *old = tqMapDel(&s->threads, (uint64_t)r->a32 + 2);
        if (old) {
          ivEnd(s, KR_SYSCALL, old->tid, t);
          threadEnd(s, old, t);
          free(old);
        }
        if (th) {
          threadEnd(s, th, t);
          tqMapDel(&s->threads, (uint64_t)r->tid + 2);
          free(th);
        }
        th = NULL;
      }
      if (!th) {
        th = newThread(s, r->tid, r->tgid, comm, takeover, 0);
        threadBegin(s, th, t);
      } else {
        threadChange(s, th, r->tgid, comm, t);
      }
      if (live(s, KR_EXEC) && (r->b32 >> KR_EXEC & 1)) {
        fill(s, KR_EXEC, k, th, v);
        produceLife(s, KR_EXEC, t, v);
      }
      break;
    }
    case KO_RENAME: {
      char comm[KS_COMM];
      memcpy(comm, r->comm, KS_COMM);
      comm[KS_COMM - 1] = 0;
      if (th) threadChange(s, th, th->tgid, comm, t);
      break;
    }
    case KO_EXIT:
      if (live(s, KR_EXIT) && (r->b32 >> KR_EXIT & 1)) {
        fill(s, KR_EXIT, k, th, v);
        produceLife(s, KR_EXIT, t, v);
      }
      if (!th) {
        s->unknownExit++;
        break;
      }
      /* its system call never returns */
      if (live(s, KR_SYSCALL)) ivEnd(s, KR_SYSCALL, r->tid, t);
      for (int u = 0; u < s->nuntil; u++)
        if (r->tid == (uint32_t)s->until[u] && s->untilSeen[u] != 1) {
          s->untilSeen[u] = 1;
          if (--s->untilLeft == 0 && !s->untilState) s->untilState = 1;
        }
      if (s->progs & KP_SWITCH) { /* it still runs, in the kernel, until its last switch */
        th->exited = 1;
        break;
      }
      /* it ends just after its Exit event (a sensor lives in its thread:
      ** the event needs it alive) */
      threadEnd(s, th, t + 1);
      tqMapDel(&s->threads, (uint64_t)r->tid + 2);
      free(th);
      break;
    case KO_GONE:
      if (!th || !th->exited) break; /* (a leader whose id an exec took over goes on) */
      threadEnd(s, th, t + 1);
      tqMapDel(&s->threads, (uint64_t)r->tid + 2);
      free(th);
      break;
  }
}

/* One packet, in time order. */
static void process(KSession *s, KPkt *k) {
  const struct ks_rec *r = &k->r;
  if (r->rel == KR_THREAD) {
    lifecycle(s, k);
    return;
  }
  int kr = r->rel;
  if (kr >= KS_NREL || !live(s, kr)) return;
  KRel *rl = &s->r[kr];
  int64_t v[8];
  uint64_t key = kr == KR_BLOCKIO ? r->b32 : r->tid;
  switch (r->op) {
    case KO_EVENT:
      fill(s, kr, k, NULL, v);
      produce(s, kr, TQ_REC_EVENT, k->t, k->t, 0, v);
      break;
    case KO_BEGIN: {
      if (tqMapGet(&rl->open, openKey(kr, key))) ivEnd(s, kr, key, k->t); /* its end was lost */
      KOpen *o = tqCalloc(1, sizeof *o);
      o->id = ++s->nextId;
      o->from = k->t;
      fill(s, kr, k, NULL, o->vals);
      tqMapPut(&rl->open, openKey(kr, key), o);
      produce(s, kr, TQ_REC_BEGIN, k->t, k->t, o->id, o->vals);
      break;
    }
    case KO_END:
      if (!ivEnd(s, kr, key, k->t)) rl->orphan++;
      break;
  }
}

static int pktCmp(const void *a, const void *b) {
  const KPkt *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads the kernel's counters into each relation. */
static void readCounters(KSession *s) {
  uint64_t c[KS_NCOUNTERS];
  if (ksbCounters(&s->b, c)) return;
  c[KR_SYSCALL * KS_NCNT + KC_WRITTEN] += (uint64_t)s->claimed; /* (begins written by us) */
  for (uint32_t k = 0; k < KS_CNT_GLOBAL; k++) s->r[k / KS_NCNT].cnt[k % KS_NCNT] = c[k];
  s->beyond = c[KS_CNT_GLOBAL + KG_BEYOND];
  /* what the filters suppressed goes to the engine (--stats: "suppressed") */
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    uint64_t n = r->cnt[KC_SUPPRESSED] + r->usupp;
    if (r->rel > 0 && n > r->suppReported && s->g->version >= 10 && s->g->suppressed)
      s->g->suppressed(s->g, r->rel, (int64_t)(n - r->suppReported));
    if (n > r->suppReported) r->suppReported = n;
  }
  /* the packets dropped since the last reading were events between then
  ** and now: a loss period (joined to the last when they touch) */
  TqTime at = clockNs(CLOCK_REALTIME), from = s->readAt ? s->readAt : s->start;
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    if (r->cnt[KC_DROPPED] <= r->dropSeen) continue;
    /* the engine marks the answers that read the relation as possibly
    ** incomplete over the period (docs/losses.md); the kernel does not say
    ** which thread's packets were dropped */
    if (r->rel > 0 && s->g->version >= 9 && s->g->lost)
      s->g->lost(s->g, r->rel, TQ_PM_ENTITY_UNKNOWN, from, at > from ? at : from,
                 (int64_t)(r->cnt[KC_DROPPED] - r->dropSeen), r->def->kind != 0);
    r->dropSeen = r->cnt[KC_DROPPED];
    if (r->nloss && (r->loss[r->nloss - 1][1] >= from || r->nloss == KS_NLOSS)) {
      if (r->loss[r->nloss - 1][1] < from) r->lossMerged++;
      r->loss[r->nloss - 1][1] = at;
    } else {
      r->loss[r->nloss][0] = from;
      r->loss[r->nloss][1] = at;
      r->nloss++;
    }
  }
  /* the packets the monitor could not hold (it fell behind: more than
  ** queue=N waiting), from the earliest of them to now */
  int64_t ql[KS_NREL];
  uint64_t qfrom[KS_NREL];
  pthread_mutex_lock(&s->mu);
  for (int kr = 0; kr < KS_NREL; kr++) {
    ql[kr] = s->qLost[kr];
    qfrom[kr] = s->qLostFrom[kr];
    s->qLostFrom[kr] = 0;
  }
  pthread_mutex_unlock(&s->mu);
  TqTime off = 0;
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    if (ql[kr] <= s->qLostSeen[kr]) continue;
    if (!off) off = clockOffset(s);
    TqTime qf = qfrom[kr] ? (TqTime)qfrom[kr] - off : from;
    if (qf > at) qf = at;
    if (r->rel > 0 && s->g->version >= 9 && s->g->lost)
      s->g->lost(s->g, r->rel, TQ_PM_ENTITY_UNKNOWN, qf, at, ql[kr] - s->qLostSeen[kr], r->def->kind != 0);
    s->qLostSeen[kr] = ql[kr];
  }
  s->readAt = at;
}

/* t (CLOCK_REALTIME ns) as "hh:mm:ss.mmm" UTC into buf. */
static const char *utcOf(TqTime t, char *buf, size_t n) {
  time_t sec = (time_t)(t / TQ_SEC);
  struct tm tm;
  gmtime_r(&sec, &tm);
  snprintf(buf, n, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(t % TQ_SEC / 1000000));
  return buf;
}

/* Reports relation kr's new losses on standard error (through its PM's
** log); final: the totals at the end. */
static void reportLosses(KSession *s, int kr, int final) {
  tq_pm_global *g = s->g;
  KRel *r = &s->r[kr];
  if (!r->p || kr == KR_PROCESSOR) return;
  uint64_t d = r->cnt[KC_DROPPED];
  if ((d > r->dropReported || (final && d)) && r->nloss) {
    char a[32], b[32], when[160];
    const TqTime *last = r->loss[r->nloss - 1];
    if (!final)
      snprintf(when, sizeof when, "events between %s and %s UTC", utcOf(last[0], a, sizeof a),
               utcOf(last[1], b, sizeof b));
    else
      snprintf(when, sizeof when, "in %d period%s from %s to %s UTC (--stats: loss_periods)", r->nloss,
               r->nloss > 1 ? "s" : "", utcOf(r->loss[0][0], a, sizeof a), utcOf(last[1], b, sizeof b));
    g->log(g, r->p, TQ_LOG_WARNING,
           "%llu packets of %s lost%s, %s: the kernel's ring buffer was full (--pm kernel=ring=KB makes it larger); "
           "the answers miss them",
           (unsigned long long)d, r->def->rel, final ? " in all" : " so far", when);
  }
  r->dropReported = d;
  if (final && r->late)
    g->log(g, r->p, TQ_LOG_WARNING, "%lld packets of %s came after their snapshot was taken: dropped", (long long)r->late,
           r->def->rel);
  if (final && r->lateOn > 1)
    g->log(g, r->p, TQ_LOG_WARNING,
           "%s was enabled a snapshot after what decided it %lld times in all: what those threads did in between did "
           "not leave the kernel",
           r->def->rel, (long long)r->lateOn);
  if (kr != KR_THREAD) return;
  pthread_mutex_lock(&s->mu);
  int64_t ql = s->queueLost;
  pthread_mutex_unlock(&s->mu);
  if (ql > s->queueLostReported || (final && ql))
    g->log(g, r->p, TQ_LOG_WARNING, "%lld kernel packets lost: the monitor fell behind (more than %d waiting)",
           (long long)ql, (int)s->qmax);
  s->queueLostReported = ql;
  if (s->beyond > s->beyondReported || (final && s->beyond))
    g->log(g, r->p, TQ_LOG_WARNING, "%llu events of threads with ids past %u (pid_max grew during the run) not traced",
           (unsigned long long)s->beyond, s->b.nflags);
  s->beyondReported = s->beyond;
}

static void setMessages(KSession *s) {
  char unwanted[48] = "";
  if (s->list) snprintf(unwanted, sizeof unwanted, " unwanted=%lld", (long long)s->unwanted);
  for (int kr = 0; kr < KS_NREL; kr++) {
    KRel *r = &s->r[kr];
    if (!r->p || r->bad) continue;
    if (kr == KR_THREAD)
      setMsg(r->p,
             "seen=%llu written=%llu dropped=%llu threads_begun=%lld ended=%lld alive=%u late=%lld queue_lost=%lld "
             "beyond_pid_max=%llu%s",
             (unsigned long long)r->cnt[KC_SEEN], (unsigned long long)r->cnt[KC_WRITTEN],
             (unsigned long long)r->cnt[KC_DROPPED], (long long)s->begun, (long long)s->ended, s->threads.n,
             (long long)s->lateLife, (long long)s->queueLost, (unsigned long long)s->beyond, unwanted);
    else
      setMsg(r->p, "seen=%llu written=%llu dropped=%llu unbegun=%llu late=%lld enabled_now=%lld enabled_max=%lld%s",
             (unsigned long long)r->cnt[KC_SEEN], (unsigned long long)r->cnt[KC_WRITTEN],
             (unsigned long long)r->cnt[KC_DROPPED], (unsigned long long)r->cnt[KC_UNBEGUN], (long long)r->late,
             (long long)r->enabledNow, (long long)r->enabledMax,
             kr != KR_SYSCALL ? "" : s->progs & KP_SYS_FE ? " hook=fentry" : " hook=tracepoint");
    /* the same figures as JSON, the PM's "detail" in --stats */
    char tps[400], json[1600];
    for (char *c = s->sysWhy; *c; c++) /* (a kernel's message, as a JSON string) */
      if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '\'';
    ksbTpList(relProgs(s, r->def), tps, sizeof tps);
    int n = snprintf(json, sizeof json,
                     "{\"relation\": \"%s\", \"tracepoints\": \"%s\", \"attached\": %s, \"seen\": %llu, "
                     "\"written\": %llu, \"dropped\": %llu, ",
                     r->def->rel, tps, (s->progs & relProgs(s, r->def)) == relProgs(s, r->def) && r->needed ? "true" : "false",
                     (unsigned long long)r->cnt[KC_SEEN], (unsigned long long)r->cnt[KC_WRITTEN],
                     (unsigned long long)r->cnt[KC_DROPPED]);
    if (n > 0 && (size_t)n < sizeof json && kr == KR_THREAD)
      snprintf(json + n, sizeof json - (size_t)n,
               "\"threads_begun\": %lld, \"threads_ended\": %lld, \"threads_alive\": %u, \"late\": %lld, "
               "\"queue_lost\": %lld, \"beyond_pid_max\": %llu, \"threads_unwanted\": %lld}",
               (long long)s->begun, (long long)s->ended, s->threads.n, (long long)s->lateLife, (long long)s->queueLost,
               (unsigned long long)s->beyond, s->list ? (long long)s->unwanted : 0LL);
    else if (n > 0 && (size_t)n < sizeof json)
      snprintf(json + n, sizeof json - (size_t)n,
               "\"unbegun\": %llu, \"late\": %lld, \"enabled_now\": %lld, \"enabled_max\": %lld, "
               "\"filter_conditions\": %d, \"suppressed\": %llu, \"before_start\": %lld, \"late_enablings\": %lld%s%s%s}",
               (unsigned long long)r->cnt[KC_UNBEGUN], (long long)r->late, (long long)r->enabledNow,
               (long long)r->enabledMax, r->nfilter + r->nufilter, (unsigned long long)(r->cnt[KC_SUPPRESSED] + r->usupp),
               (long long)r->early, (long long)r->lateOn,
               kr != KR_SYSCALL ? "" : s->progs & KP_SYS_FE ? ", \"hook\": \"fentry\"" : ", \"hook\": \"tracepoint\", \"hook_why\": \"",
               kr == KR_SYSCALL && !(s->progs & KP_SYS_FE) ? s->sysWhy : "",
               kr == KR_SYSCALL && !(s->progs & KP_SYS_FE) ? "\"" : "");
    /* the loss periods, before the closing brace */
    size_t k = strlen(json);
    if (k && json[k - 1] == '}') {
      k--;
      k += (size_t)snprintf(json + k, sizeof json - k, ", \"loss_periods\": [");
      for (int i = 0; i < r->nloss && k < sizeof json; i++)
        k += (size_t)snprintf(json + k, sizeof json - k, "%s[%lld, %lld]", i ? ", " : "", (long long)r->loss[i][0],
                              (long long)r->loss[i][1]);
      if (k < sizeof json) k += (size_t)snprintf(json + k, sizeof json - k, "], \"loss_periods_merged\": %lld}", (long long)r->lossMerged);
    }
    if (s->g->version >= 6 && s->g->set_detail) s->g->set_detail(s->g, r->p, json);
  }
}

static int threadCmp(const void *a, const void *b) {
  const KThread *x = *(KThread *const *)a, *y = *(KThread *const *)b;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* until=PID: a process that is gone although its exit was not traced (it
** exited while the programs were being attached) ends the wait too, once it
** was found gone (or a zombie) at two snapshots (its exit may still be on
** its way). */
static int procGone(int64_t pid) {
  if (kill((pid_t)pid, 0) && errno == ESRCH) return 1;
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *rp = strrchr(buf, ')');
  return rp && rp[1] && (rp[2] == 'Z' || rp[2] == 'X'); /* a zombie: exited, not yet reaped */
}
static void untilGone(KSession *s) {
  for (int u = 0; u < s->nuntil; u++) {
    if (s->untilSeen[u] == 1 || !procGone(s->until[u])) continue;
    if (--s->untilSeen[u] > -2) continue;
    s->untilSeen[u] = 1;
    if (s->r[KR_THREAD].p)
      s->g->log(s->g, s->r[KR_THREAD].p, TQ_LOG_WARNING,
                "until=%lld: the process is gone, and its exit was not traced (it exited before the tracing began)",
                (long long)s->until[u]);
    if (--s->untilLeft == 0 && !s->untilState) s->untilState = 1;
  }
}

/* Puts in's packets (in time order) among the held ones, keeping those in
** time order.  The kernel's per-CPU buffers hand packets over nearly in
** order, so only the held ones later than in's first take part in a merge:
** the cost is in's length and that overlap, never the whole backlog. */
static void heldMerge(KSession *s, KVec *in) {
  KVec *h = &s->held;
  if (!in->n) return;
  if (h->n + in->n > h->cap) {
    while (h->n + in->n > h->cap) h->cap = h->cap ? 2 * h->cap : 4096;
    h->v = tqRealloc(h->v, sizeof(KPkt) * (size_t)h->cap);
  }
  /* the first held packet after in's first */
  int64_t lo = s->heldHead, hi = h->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pktCmp(&h->v[mid], &in->v[0]) <= 0) lo = mid + 1;
    else hi = mid;
  }
  int64_t m = h->n - lo; /* held packets to merge with in's */
  if (!m) {
    memcpy(h->v + h->n, in->v, sizeof(KPkt) * (size_t)in->n);
    h->n += in->n;
    return;
  }
  KPkt *tail = tqMalloc(sizeof(KPkt) * (size_t)m);
  memcpy(tail, h->v + lo, sizeof(KPkt) * (size_t)m);
  int64_t a = 0, b = 0, o = lo;
  while (a < m && b < in->n) h->v[o++] = pktCmp(&tail[a], &in->v[b]) <= 0 ? tail[a++] : in->v[b++];
  while (a < m) h->v[o++] = tail[a++];
  while (b < in->n) h->v[o++] = in->v[b++];
  h->n = o;
  free(tail);
}

/* Appends the packets the drain thread handed over to in, their times
** converted to CLOCK_REALTIME (off: the kernel clock's offset). */
static void takeReady(KSession *s, KVec *in, TqTime off) {
  pthread_mutex_lock(&s->mu);
  KVec r = s->ready;
  memset(&s->ready, 0, sizeof s->ready);
  pthread_mutex_unlock(&s->mu);
  for (int64_t i = 0; i < r.n; i++) r.v[i].t = (TqTime)r.v[i].r.t - off;
  if (!in->n) {
    *in = r;
    return;
  }
  for (int64_t i = 0; i < r.n; i++) *vecPush(in) = r.v[i];
  free(r.v);
}

/* Claims the pending begin (KS_PEND_SYSCALL) of thread tid's system call
** when it began by now: the kernel's flag word turns to KS_OPEN_SYSCALL in
** one compare-and-swap (its return then writes an END alone), and its
** BEGIN is appended to in.  Returns -1 when the call returned meanwhile
** (its packet may not be drained yet), else 0. */
static int claimOne(KSession *s, uint32_t tid, KVec *in, TqTime off, TqTime now) {
  struct ks_sysbeg b;
  int rc = ksbClaim(&s->b, tid, off, now, &b);
  if (rc <= 0) return rc;
  KPkt *k = vecPush(in);
  memset(k, 0, sizeof *k);
  k->r.t = b.t;
  k->r.rel = KR_SYSCALL;
  k->r.op = KO_BEGIN;
  k->r.tid = tid;
  k->r.cpu = b.cpu;
  k->r.a32 = b.nr;
  k->t = (TqTime)b.t - off;
  s->claimed++;
  return 0;
}

/* At a snapshot: the system calls still open that began by now (their
** begin is pending in the kernel) are claimed, so that the snapshot sees
** them open.  Asked of every thread known and every one whose creation is
** among the packets.  A call that returned while being claimed has its
** packet (begin and end) drained before the snapshot goes on. */
static void claimSyscalls(KSession *s, KVec *in, TqTime off, TqTime now) {
  int raced = 0;
  for (uint32_t i = 0; i < s->threads.cap; i++)
    if (s->threads.slot[i].key > 1 && claimOne(s, (uint32_t)(s->threads.slot[i].key - 2), in, off, now)) raced = 1;
  int64_t n = in->n;
  for (int64_t i = 0; i < n; i++)
    if (in->v[i].r.rel == KR_THREAD && in->v[i].r.op == KO_FORK && in->v[i].t <= now &&
        claimOne(s, in->v[i].r.tid, in, off, now))
      raced = 1;
  if (!raced) return;
  /* two passes of the drain thread begun after the return: its packet is in */
  uint64_t p0 = s->drainPasses;
  struct timespec d = {0, 200 * 1000};
  for (int i = 0; i < 500 && s->thRunning && s->drainPasses < p0 + 2; i++) nanosleep(&d, NULL);
  takeReady(s, in, off);
}

/* The collection's start, as the first snapshot (at now) shows it: what
** START saw when the clock had set it; else the first snapshot itself (a
** live collection's clock, realtime, takes its first snapshot at the
** start: a tick before it the engine was not, and a Clock of the queries
** ticks there first, so the threads alive at the start, produced a tick
** earlier, were all dropped as "earlier than" the engine's time). */
static TqTime startAt(const KSession *s, TqTime now) { return s->start > 0 && s->start <= now ? s->start : now; }

/* At the first snapshot: the packets of intervals that began and ended
** before the collection's start (the kernel traced between the attach and
** the start) are marked (op 0) to be left out, both begin and end: else the
** begin, moved to the start, and the end made an interval at the start that
** was not (a Clock's first tick saw the thread running then).  The held
** packets are in time order. */
static void preStart(KSession *s) {
  TqMap open = {0}; /* openKey -> index + 1 of its begin */
  for (int64_t i = s->heldHead; i < s->held.n && s->held.v[i].t < s->start; i++) {
    struct ks_rec *r = &s->held.v[i].r;
    if (r->rel == KR_THREAD || r->rel >= KS_NREL) continue;
    uint64_t key = openKey(r->rel, r->rel == KR_BLOCKIO ? r->b32 : r->tid);
    if (r->op == KO_BEGIN) {
      tqMapPut(&open, key, (void *)(intptr_t)(i + 1));
    } else if (r->op == KO_END) {
      intptr_t b = (intptr_t)tqMapGet(&open, key);
      if (!b) continue;
      s->held.v[b - 1].r.op = 0;
      r->op = 0;
      tqMapDel(&open, key);
    }
  }
  tqMapFree(&open);
}

/* A snapshot at g->now: everything the kernel wrote up to then, in time
** order.  Once per snapshot, whichever kernel PM comes first. */
static void sessionSync(KSession *s) {
  tq_pm_global *g = s->g;
  TqTime now = g->now;
  if (s->synced && now == s->syncNow) return;
  if (s->untilState == 1) {
    /* the process of until=PID exited by the last snapshot: that one is the last */
    g->halt(g);
    s->untilState = 2;
  }
  if (!s->synced) {
    /* a clock started after this PM fixed the start later than START saw it */
    s->start = s->prevNow = startAt(s, now);
    /* the threads that existed at the start */
    qsort(s->initial, (size_t)s->ninitial, sizeof(KThread *), threadCmp);
    for (int i = 0; i < s->ninitial; i++) threadBegin(s, s->initial[i], s->start);
    free(s->initial);
    s->initial = NULL;
    s->ninitial = 0;
  }
  settleFlags(s);
  TqTime off = clockOffset(s);
  KVec in = {0};
  takeReady(s, &in, off);
  if (live(s, KR_SYSCALL) && s->b.sysbeg) claimSyscalls(s, &in, off, now);
  if (in.n > 1) qsort(in.v, (size_t)in.n, sizeof(KPkt), pktCmp);
  heldMerge(s, &in);
  free(in.v);
  if (!s->synced) preStart(s);
  int64_t i = s->heldHead;
  for (; i < s->held.n && s->held.v[i].t <= now; i++) {
    KPkt *k = &s->held.v[i];
    if (k->t < s->start && k->r.rel != KR_THREAD && (k->r.op == KO_EVENT || !k->r.op)) {
      /* before the collection's time: an event, or an interval that
      ** ended before it (preStart) */
      if (k->r.rel < KS_NREL) s->r[k->r.rel].early++;
      free(k->name);
      continue;
    }
    if (k->t < s->start) k->t = s->start; /* the lifecycle; an interval open at the start begins there */
    if (s->synced && k->t <= s->prevNow) {
      /* it came after its snapshot was taken */
      if (k->r.rel == KR_THREAD) {
        k->t = s->prevNow + 1; /* the lifecycle must not be lost: applied now */
        s->lateLife++;
      } else {
        if (k->r.rel < KS_NREL) s->r[k->r.rel].late++;
        free(k->name);
        continue;
      }
    }
    process(s, k);
    free(k->name);
  }
  /* consumed from the head; moved down only when the consumed half is
  ** the larger, so that a backlog costs its length once, not once per
  ** snapshot */
  s->heldHead = i;
  if (i == s->held.n) {
    s->held.n = s->heldHead = 0;
  } else if (i >= 4096 && i > s->held.n / 2) {
    memmove(s->held.v, s->held.v + i, sizeof(KPkt) * (size_t)(s->held.n - i));
    s->held.n -= i;
    s->heldHead = 0;
  }
  s->heldN = s->held.n - s->heldHead;
  s->syncBefore = s->prevNow;
  s->prevNow = now;
  s->syncNow = now;
  if (++s->syncs == 2 && s->r[KR_THREAD].p) {
    /* the first snapshot has been through the queries: what they enabled
    ** from the start is enabled in the kernel */
    char tps[400];
    ksbTpList(s->progs, tps, sizeof tps);
    g->log(g, s->r[KR_THREAD].p, TQ_LOG_INFO, "tracing since the first snapshot: %s", tps);
  }
  s->synced = 1;
  if (s->untilLeft > 0) untilGone(s);
  readCounters(s);
  for (int kr = 0; kr < KS_NREL; kr++) reportLosses(s, kr, 0);
  setMessages(s);
}

static void sessionFree(KSession *s) {
  if (s->thRunning) {
    s->stop = 1;
    pthread_join(s->th, NULL);
  }
  ksbFree(&s->b);
  vecFree(&s->fill);
  vecFree(&s->ready);
  for (int64_t i = 0; i < s->heldHead; i++) s->held.v[i].name = NULL; /* freed when consumed */
  vecFree(&s->held);
  for (uint32_t k = 0; k < s->threads.cap; k++)
    if (s->threads.slot[k].key > 1) free(s->threads.slot[k].val);
  tqMapFree(&s->threads);
  tqMapFree(&s->gens);
  free(s->initial);
  for (int kr = 0; kr < KS_NPM; kr++) {
    KRel *r = &s->r[kr];
    for (uint32_t k = 0; k < r->open.cap; k++)
      if (r->open.slot[k].key > 1) free(r->open.slot[k].val);
    tqMapFree(&r->open);
    tqMapFree(&r->on);
  }
  free(s->prov);
  free(s->offs);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_lock(&sessionsMu);
  KSession **pp = &sessions;
  while (*pp && *pp != s) pp = &(*pp)->next;
  if (*pp) *pp = s->next;
  pthread_mutex_unlock(&sessionsMu);
  free(s);
}

/* The arguments (--pm kernel=ARGS) are NAME=VALUE items separated by
** commas (an empty item is nothing); each NAME is one of these, given once. */
static const char *const argNames[] = {"ring", "queue", "until", "syscalls"};

/* The value of argument name in args, and its length in *len (up to the
** next comma); NULL when it is not given. */
static const char *argFind(const char *args, const char *name, size_t *len) {
  size_t n = strlen(name);
  for (const char *a = args; a && *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL) {
    if (strncmp(a, name, n) || a[n] != '=') continue;
    *len = strcspn(a + n + 1, ",");
    return a + n + 1;
  }
  return NULL;
}

/* Is every item of args a known NAME=VALUE, each name given once?  0, or
** -1 (said in s->fatalWhy). */
static int argsCheck(KSession *s, const char *args) {
  for (const char *a = args; a && *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL) {
    size_t n = strcspn(a, ","), k = strcspn(a, "=,");
    if (!n) continue;
    int known = 0;
    for (size_t i = 0; i < sizeof argNames / sizeof argNames[0] && !known; i++)
      known = strlen(argNames[i]) == k && !strncmp(a, argNames[i], k) && a[k] == '=';
    if (!known)
      return fatal(s, "--pm kernel=%s: '%.*s' is no argument of the kernel sensors (ring=KB, queue=N, until=PID[+PID...], syscalls=auto|fentry|tracepoint)",
                   args, (int)n, a);
    for (const char *b = a + n; *b; b += strcspn(b, ",")) {
      b++;
      if (!strncmp(b, a, k + 1)) return fatal(s, "--pm kernel=%s: %.*s is given twice", args, (int)k, a);
    }
  }
  return 0;
}

/* Argument NAME=N of args: 1 and *v, 0 when not given, -1 when N is not a
** whole number (said in s->fatalWhy). */
static int argNum(KSession *s, const char *args, const char *name, long long *v) {
  size_t len;
  const char *a = argFind(args, name, &len);
  if (!a) return 0;
  char *e;
  errno = 0;
  *v = strtoll(a, &e, 10);
  if (e == a || e != a + len || errno || *v < 0 || !isdigit((unsigned char)a[0]))
    return fatal(s, "--pm kernel=%s=N: '%.*s' is not a number of %s", name, (int)len, a,
                 !strcmp(name, "ring") ? "KiB" : "packets");
  return 1;
}

/* Argument until=PID[+PID...] of args into s->until.  1, 0 when not given, -1 when a PID is not a process id
** or there are more than 8 (said in s->fatalWhy). */
static int argUntil(KSession *s, const char *args) {
  size_t len;
  const char *a = argFind(args, "until", &len);
  if (!a) return 0;
  int n = 0;
  for (const char *u = a;;) {
    char *e;
    errno = 0;
    long long v = strtoll(u, &e, 10);
    if (e == u || !isdigit((unsigned char)u[0]) || errno || v <= 0 || v > INT32_MAX || (e != a + len && *e != '+'))
      return fatal(s, "--pm kernel=until=PID[+PID...]: '%.*s' is not a process id", (int)(a + len - u), u);
    if (++n > 8) return fatal(s, "--pm kernel=until=%.*s: more than 8 processes", (int)len, a);
    s->until[s->nuntil++] = v; /* (one gone already ends the wait too, and is said: untilGone) */
    if (e == a + len) break;
    u = e + 1;
  }
  return 1;
}

/* The first START of the session: which relations, which programs. */
static void sessionSetUp(KSession *s, tq_pm_global *g, const char *args) {
  s->setUp = 1;
  s->start = g->now;
  s->prevNow = g->now;
  s->ringBytes = 16u << 20;
  s->qmax = KS_MAXQ;
  int bad = argsCheck(s, args);
  if (!bad) argUntil(s, args);
  s->untilLeft = s->nuntil;
  long long q, kb;
  if (!bad && argNum(s, args, "queue", &q) > 0) /* queue=N: packets the monitor holds at most (at least 16) */
    s->qmax = q < 16 ? 16 : q > KS_MAXQ ? KS_MAXQ : q;
  if (!bad && argNum(s, args, "ring", &kb) > 0) {
    /* ring=KB (a power of two, at least a page, at most 1 GiB) */
    long long b = sysconf(_SC_PAGESIZE);
    if (kb > 1 << 20) kb = 1 << 20;
    while (b < kb * 1024 && b < (1L << 30)) b *= 2;
    s->ringBytes = (uint32_t)b;
  }
  size_t k;
  const char *sw = bad ? NULL : argFind(args, "syscalls", &k);
  if (sw) { /* syscalls=auto|fentry|tracepoint: Syscall's hook */
    if (k == 6 && !strncmp(sw, "fentry", 6)) s->sysWant = 1;
    else if (k == 10 && !strncmp(sw, "tracepoint", 10)) s->sysWant = 2;
    else if (!(k == 4 && !strncmp(sw, "auto", 4)))
      fatal(s, "--pm kernel=syscalls=%.*s: say fentry, tracepoint or auto", (int)k, sw);
  }
  struct btf *vm = btf__load_vmlinux_btf();
  s->b.useTai = ksbHaveTai(vm);
  for (int kr = 0; kr < KS_NPM; kr++) {
    KRel *r = &s->r[kr];
    r->rel = g->relation(g, r->def->rel);
    if (r->rel <= 0) continue;
    r->needed = g->needed(g, r->rel);
    if (layoutBind(g, r->rel, r->def, &r->l, r->why, sizeof r->why)) {
      r->bad = 1;
      continue;
    }
    if (!r->needed || kr == KR_PROCESSOR) continue;
    const char *miss = ksbMissingTp(vm, r->def->progs);
    if (miss) {
      r->bad = 2;
      snprintf(r->why, sizeof r->why, "%s needs the tracepoint %s, which this kernel does not have", r->def->rel, miss);
      continue;
    }
    s->progs |= kr == KR_SYSCALL ? ksbSysHook(vm, s->sysWant, s->sysWhy, sizeof s->sysWhy) : r->def->progs;
    s->attachedRels |= 1u << kr;
  }
  btf__free(vm);
  if (s->sysWant == 1 && (s->progs & KP_SYS_TP))
    fatal(s, "--pm kernel=syscalls=fentry: %s; --pm kernel=syscalls=tracepoint (or auto) traces them on the raw_syscalls tracepoints", s->sysWhy);
  if (!s->progs || s->fatal) return; /* (a bad argument: nothing loaded) */
  s->progs |= KP_LIFE; /* threads begin and end as the kernel says */
  loadBpf(s);
}

/* ================================================================ the PMs */

static int krOf(tq_pm_private *p) {
  const KRelDef *d = p->data;
  return d ? d->kr : -1;
}

/* args of the grouper, for the session (ring=KB) */
static char groupArgs[128];

static tq_pm_status relInit(tq_pm_global *g, tq_pm_private *p, const KRelDef *d) {
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = d->rel;
  if (d->kr != KR_PROCESSOR) {
    p->privileges[p->nprivileges++] = "cap:CAP_BPF";
    p->privileges[p->nprivileges++] = "cap:CAP_PERFMON";
    p->privileges[p->nprivileges++] = "read:/sys/kernel/btf/vmlinux";
  } else {
    p->privileges[p->nprivileges++] = "read:/sys/devices/system/cpu/online";
  }
  if (d->kr != KR_THREAD && d->kr != KR_PROCESSOR) p->depends[p->ndepends++] = "kernel_thread";
  return TQ_PM_OK;
}

/* The Processor entities: the online CPUs, from the collection's start. */
static tq_pm_status processorSnapshot(KSession *s, tq_pm_private *p) {
  static const char path[] = "/sys/devices/system/cpu/online";
  tq_pm_global *g = s->g;
  KRel *r = &s->r[KR_PROCESSOR];
  if (r->produced || r->bad) return TQ_PM_OK;
  static uint32_t cpus[4096];
  int n = ksbCpus(cpus, (int)TQ_ARRAY_SIZE(cpus));
  if (n < 0) {
    snprintf(p->message, sizeof p->message, "cannot read %s", path);
    return TQ_PM_ERROR;
  }
  for (int i = 0; i < n; i++) {
    int64_t v = cpuSym(g, cpus[i]);
    TqTime t0 = startAt(s, g->now); /* (as sessionSync) */
    tq_record rec = {r->rel, TQ_REC_BEGIN, t0, t0, 0, (uint64_t)cpus[i] + 1, 1, &v};
    if (g->produce(g, &rec)) return TQ_PM_FATAL;
  }
  r->produced = n;
  snprintf(p->message, sizeof p->message, "cpus=%d (%s)", n, path);
  return TQ_PM_OK;
}

static tq_pm_status relCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  int kr = krOf(p);
  if (kr < 0) return TQ_PM_OK;
  KSession *s;
  switch (what) {
    case TQ_PM_START:
      s = sessionGet(g);
      s->refs++;
      s->r[kr].p = p;
      if (!s->setUp) sessionSetUp(s, g, groupArgs);
      if (s->r[kr].bad) {
        setMsg(p, "%s", s->r[kr].why);
        return s->r[kr].bad == 2 ? TQ_PM_FATAL : TQ_PM_ERROR;
      }
      if (s->fatal && s->r[kr].needed && kr != KR_PROCESSOR) {
        setMsg(p, "%s", s->fatalWhy);
        return TQ_PM_FATAL;
      }
      setMessages(s);
      return TQ_PM_OK;
    case TQ_PM_SNAPSHOT:
      s = sessionFind(g);
      if (!s || s->fatal) return TQ_PM_OK;
      if (kr == KR_PROCESSOR) return processorSnapshot(s, p);
      sessionSync(s);
      return TQ_PM_OK;
    case TQ_PM_END:
      s = sessionFind(g);
      if (!s) return TQ_PM_OK;
      if (s->r[kr].p == p) {
        if (!s->fatal && s->b.skel) {
          readCounters(s);
          reportLosses(s, kr, 1);
          setMessages(s);
        }
        s->r[kr].p = NULL;
      }
      if (--s->refs <= 0) sessionFree(s);
      return TQ_PM_OK;
    case TQ_PM_DEP_DISABLED: snprintf(p->message, sizeof p->message, "kernel_thread is disabled"); return TQ_PM_ERROR;
    default: return TQ_PM_OK;
  }
}

/* The engine's flag of (relation, thread) changed. */
static tq_pm_status relEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  int kr = krOf(p);
  KSession *s = sessionFind(g);
  if (!s || kr < 0 || kr >= KS_NREL) return TQ_PM_OK;
  KRel *r = &s->r[kr];
  const char *name = g->symbol_name(g, entity);
  /* "1234", or "1234#2" for the second incarnation of that id */
  char idb[32];
  int gen = 1;
  snprintf(idb, sizeof idb, "%s", name ? name : "");
  char *hash = strchr(idb, '#');
  if (hash) {
    *hash = 0;
    gen = atoi(hash + 1);
    if (gen < 2 || ksbNumber(hash + 1) < 0) gen = -1;
  }
  int64_t tid = gen > 0 ? ksbNumber(idb) : -1;
  if (tid <= 0 || tid >= (int64_t)s->b.nflags) {
    if (on && !r->notThread++)
      g->log(g, p, TQ_LOG_WARNING, "%s enabled on '%s', which is no thread id of this host (1 to %u): nothing will come",
             r->def->rel, name ? name : "?", s->b.nflags ? s->b.nflags - 1 : 0);
    return TQ_PM_OK;
  }
  uint64_t key = onKey((uint32_t)tid, gen);
  if (on > 0) {
    /* an enabling that reaches the kernel after the first snapshot went
    ** through the queries (what they enable from the start), on a thread
    ** whose flag is off (not inherited at its creation): what the
    ** thread did between the event or tuple that decided it (O3 arming on
    ** an event, a thread that became a named program) and now never left
    ** the kernel (sensors/kernel.md, Limits): counted and said */
    if (s->syncs >= 2 && s->b.flags && !tqMapGet(&r->on, key) && gen == curGen(s, (uint32_t)tid) &&
        !(__atomic_load_n(&s->b.flags[tid], __ATOMIC_RELAXED) & (1u << kr))) {
      if (!r->lateOn++)
        g->log(g, p, TQ_LOG_WARNING,
               "%s enabled on thread %s at the snapshot after what decided it (an event that arms it, a thread that "
               "became a named program): what it did in between did not leave the kernel, and the answers may miss "
               "it (counted: late_enablings in --stats; the answers that read it are marked incomplete then)",
               r->def->rel, name ? name : "?");
      else /* each one after the first, for whoever traces (--trace-level 2) */
        g->log(g, p, TQ_LOG_INFO, "%s enabled on thread %s at the snapshot after what decided it (late enabling %lld)",
               r->def->rel, name ? name : "?", (long long)r->lateOn);
      /* a loss of a count not known, on that thread, from the snapshot
      ** before the one that decided it (what decided it lies after that)
      ** to now, when the flag is set: an answer that reads the relation
      ** says it may be incomplete there (docs/losses.md) */
      TqTime from = s->syncBefore < s->start ? s->start : s->syncBefore, to = clockNs(CLOCK_REALTIME);
      if (to < g->now) to = g->now;
      if (g->version >= 12 && g->lost) g->lost(g, p->rel, entity, from, to, TQ_PM_LOST_UNKNOWN, r->def->kind == 1);
    }
    tqMapPut(&r->on, key, (void *)(intptr_t)on);
    if (gen == curGen(s, (uint32_t)tid)) flagSet(s, (uint32_t)tid, 1u << kr); /* (a past incarnation: nothing) */
    if (r->on.n > (uint32_t)r->enabledMax) r->enabledMax = r->on.n;
  } else {
    tqMapDel(&r->on, key);
    if (s->noffs == s->coffs) {
      s->coffs = s->coffs ? 2 * s->coffs : 64;
      s->offs = tqRealloc(s->offs, sizeof(uint64_t) * (size_t)s->coffs);
    }
    s->offs[s->noffs++] = (uint64_t)kr << 32 | (uint64_t)tid;
  }
  return TQ_PM_OK;
}

/* Condition c of relation d (layout l) as explain shows it: Attr=value. */
static void condText(tq_pm_global *g, const KRelDef *d, const Layout *l, const tq_pm_cond *c, TqBuf *b) {
  static const char *const ops[] = {"?", "=", "<>", "<", "<=", ">", ">="};
  const char *name = "?";
  const KAttr *a = NULL;
  for (const KAttr *x = d->attrs; x->name; x++)
    if (c->attr >= 0 && c->attr < l->nattr && x->what == l->what[c->attr]) a = x, name = x->name;
  tqBufPrintf(b, "%s%s", name, ops[c->op >= 1 && c->op <= 6 ? c->op : 0]);
  if (c->fcmp) tqBufPrintf(b, "%g", c->fval);
  else if (c->text) tqBufPrintf(b, "%s", c->text);
  else if (a && a->type == TQ_TY_ENUM) {
    const char *v = NULL;
    for (int k = 0; k < a->nvalues && k < 8; k++)
      if (l->enumv[c->attr][k] == c->val && !v) v = a->values[k];
    tqBufPrintf(b, "%s", v ? v : "?");
  } else tqBufPrintf(b, "%lld", (long long)c->val);
}

/* What the kernel sensors do with relation rel's filter (rule SF), for
** explain: which conditions the BPF program checks before it writes a
** packet and which only the engine checks (or the PM, for a lifecycle
** relation), into b ("" when the relation has no filter). */
static void filterNote(tq_pm_global *g, int rel, const KRelDef *d, TqBuf *b) {
  if (g->version < 10 || !g->sensor_filter || d->kr == KR_THREAD || d->kr == KR_PROCESSOR) return;
  const tq_pm_cond *c = NULL;
  int n = g->sensor_filter(g, rel, &c);
  if (n <= 0) return;
  KRel r;
  memset(&r, 0, sizeof r);
  char why[200];
  if (layoutBind(g, rel, d, &r.l, why, sizeof why)) return;
  if (lifeRel(d->kr)) {
    tqBufPrintf(b, "; its filter (rule SF) is checked by this PM before it produces an event, not in BPF: the "
                   "kernel writes the thread's lifecycle packet for Thread anyway");
    return;
  }
  struct ks_filter f;
  int k = kernelFilter(&r, d->kr, c, n, &f);
  TqBuf un = {0};
  int nun = 0;
  for (int i = 0; i < n; i++) {
    struct ks_cond x;
    if (rawCond(&r, d->kr, &c[i], &x)) continue;
    tqBufPuts(&un, nun++ ? ", " : "");
    condText(g, d, &r.l, &c[i], &un);
  }
  /* (the filter is the disjunction of the predicates of every alpha of
  ** the relation: runtime/sfilter.c) */
  if (!k && nun)
    tqBufPrintf(b, "; its filter (rule SF, over every query of %s) is not checked in the kernel: a disjunct has no "
                   "condition the BPF program can check (it cannot check %s); the engine checks the filter on every "
                   "packet written", d->rel, un.s);
  else if (!k)
    tqBufPrintf(b, "; its filter (rule SF, over every query of %s) is not checked in the kernel: it has more conditions "
                   "than the BPF program holds (%d); the engine checks it on every packet written", d->rel, KS_NCOND);
  else if (nun)
    tqBufPrintf(b, "; the BPF program checks %d of the %d conditions of its filter (rule SF, over every query of %s) "
                   "before it writes a packet; only the engine checks %s", n - nun, n, d->rel, un.s);
  else
    tqBufPrintf(b, "; the BPF program checks its filter (rule SF, %d condition%s) before it writes a packet", n, n > 1 ? "s" : "");
  tqBufFree(&un);
}

#else /* TQ_KERNEL_NO_BPF: built where the kernel has no BTF */

static void filterNote(tq_pm_global *g, int rel, const KRelDef *d, TqBuf *b) {}

static int krOf(tq_pm_private *p) {
  const KRelDef *d = p->data;
  return d ? d->kr : -1;
}
static char groupArgs[128];
static tq_pm_status relInit(tq_pm_global *g, tq_pm_private *p, const KRelDef *d) {
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = d->rel;
  if (d->kr != KR_PROCESSOR) p->privileges[p->nprivileges++] = "read:/sys/kernel/btf/vmlinux";
  return TQ_PM_OK;
}
static tq_pm_status relCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  if (what == TQ_PM_START && krOf(p) != KR_PROCESSOR && g->needed(g, p->rel)) {
    setMsg(p, "tqmon was built without BPF (the build machine's kernel has no BTF at /sys/kernel/btf/vmlinux)");
    return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}
static tq_pm_status relEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) { return TQ_PM_OK; }

#endif

static tq_pm_status relDescribe(tq_pm_global *g, tq_pm_private *p, int rel, char *out, int n) {
  const KRelDef *d = p->data;
  if (!d) return TQ_PM_OK;
  if (d->kr == KR_PROCESSOR) {
    snprintf(out, (size_t)n, "the online CPUs (/sys/devices/system/cpu/online), once");
    return TQ_PM_OK;
  }
  char tps[200], hook[260] = "";
  unsigned progs = d->progs;
#ifndef TQ_KERNEL_NO_BPF
  if (d->kr == KR_SYSCALL) {
    /* the hook a run would take now (args syscalls=) */
    const char *sw = strstr(groupArgs, "syscalls=");
    int want = !sw ? 0 : !strncmp(sw + 9, "tracepoint", 10) ? 2 : !strncmp(sw + 9, "fentry", 6) ? 1 : 0;
    struct btf *vm = btf__load_vmlinux_btf();
    char why[200];
    progs = ksbSysHook(vm, want, why, sizeof why);
    btf__free(vm);
    if (progs & KP_SYS_FE) snprintf(hook, sizeof hook, "; fentry and fexit, not the raw_syscalls tracepoints");
    else snprintf(hook, sizeof hook, "; on the raw_syscalls tracepoints: %s", why);
  }
#endif
  ksbTpList(progs, tps, sizeof tps);
  if (d->kr == KR_THREAD)
    snprintf(out, (size_t)n, "kernel tracepoints %s (BPF); the threads alive at the start from /proc", tps);
  else {
    TqBuf f = {0};
    filterNote(g, rel, d, &f);
    snprintf(out, (size_t)n, "kernel %s %s (BPF), enable flag per thread in the kernel%s%s",
             progs & KP_SYS_FE ? "functions" : "tracepoints", tps, f.s ? f.s : "", hook);
    tqBufFree(&f);
  }
  return TQ_PM_OK;
}

/* ================================================================ the PM table */

#define KERNEL_PM(var, idx, what, desc)                                                                      \
  static tq_pm_status var##Init(tq_pm_global *g, tq_pm_private *p) {                                      \
    p->data = (void *)&ksbRelDefs[idx];                                                                      \
    return relInit(g, p, &ksbRelDefs[idx]);                                                                  \
  }                                                                                                       \
  const tq_pm var = {.version = TQ_PM_VERSION,                                                            \
                     .name = what,                                                                        \
                     .description = desc,                                                                 \
                     .init = var##Init,                                                                   \
                     .call = relCall,                                                                     \
                     .enable = relEnable,                                                                 \
                     .describe = relDescribe}

KERNEL_PM(snsKernelForkPm, KR_FORK, "kernel_fork",
          "PRODUCER of the event Fork (sched_process_fork)");
KERNEL_PM(snsKernelExecPm, KR_EXEC, "kernel_exec",
          "PRODUCER of the event Exec (sched_process_exec)");
KERNEL_PM(snsKernelExitPm, KR_EXIT, "kernel_exit",
          "PRODUCER of the event Exit (sched_process_exit)");
KERNEL_PM(snsKernelRunningOnPm, KR_RUNNINGON, "kernel_runningon",
          "PRODUCER of the interval RunningOn (sched_switch)");
KERNEL_PM(snsKernelReadyPm, KR_READY, "kernel_ready",
          "PRODUCER of the interval Ready (sched_waking to sched_switch)");
KERNEL_PM(snsKernelBlockedPm, KR_BLOCKED, "kernel_blocked",
          "PRODUCER of the interval Blocked (sched_switch to sched_waking)");
KERNEL_PM(snsKernelWokePm, KR_WOKE, "kernel_woke",
          "PRODUCER of the event Woke (sched_waking)");
KERNEL_PM(snsKernelSyscallPm, KR_SYSCALL, "kernel_syscall",
          "PRODUCER of the interval Syscall (raw_syscalls sys_enter to sys_exit)");
KERNEL_PM(snsKernelBlockIoPm, KR_BLOCKIO, "kernel_blockio",
          "PRODUCER of the interval BlockIo (block_rq_issue to block_rq_complete)");
KERNEL_PM(snsKernelSendPm, KR_SEND, "kernel_send",
          "PRODUCER of the event Send (sock_send_length)");
KERNEL_PM(snsKernelReceivePm, KR_RECEIVE, "kernel_receive",
          "PRODUCER of the event Receive (sock_recv_length)");
KERNEL_PM(snsKernelThreadPm, KR_THREAD, "kernel_thread",
          "PRODUCER of the entity relation Thread (fork, exec, exit, rename)");
KERNEL_PM(snsKernelProcessorPm, KR_PROCESSOR, "kernel_processor",
          "PRODUCER of the entity relation Processor (the online CPUs)");

/* The grouper (tqmon run --kernel); args: ring=KB, the ring buffer's size. */
static tq_pm_status groupInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_GROUPER;
  for (int i = 0; i < KS_NPM; i++) p->members[p->nmembers++] = ksbRelDefs[i].pm;
  if (p->args && strlen(p->args) >= sizeof groupArgs) { /* never cut short */
    setMsg(p, "--pm kernel=ARGS: %zu characters, more than the %zu the kernel sensors take", strlen(p->args),
           sizeof groupArgs - 1);
    return TQ_PM_FATAL;
  }
  snprintf(groupArgs, sizeof groupArgs, "%s", p->args ? p->args : "");
  return TQ_PM_OK;
}

const tq_pm snsKernelPm = {
    .version = TQ_PM_VERSION,
    .name = "kernel",
    .description = "GROUPER: the Linux kernel through BPF (relations of sensors/kernel.tq; args ring=KB)",
    .init = groupInit,
};
