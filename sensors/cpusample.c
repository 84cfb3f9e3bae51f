/*
** cpusample.c - where the CPU goes: the sampled relation Executing, made by
** CPU sampling of the processes a query enables (Strobe's sampling of the
** module in control).  sensors/cpusample.tq declares the relation and
** sensors/cpusample.md documents it for users.
**
**   cpusample   PRODUCER of Executing (sampled on the process)
**
** How it samples.  When the engine enables the sensor on a process (its
** entity is named by its pid), the PM opens a perf_event_open software
** event on it: the task clock, which counts the CPU time of the process's
** threads, with a sample every `period` ns of that CPU time, carrying the
** instruction pointer, the thread, the time (CLOCK_REALTIME, the clock of
** every live run) and the call chain.  One event per thread and online CPU,
** inherited by the threads created later; the events of a CPU share one
** ring buffer.  A process no query enables has no event: it is not sampled
** at all.  When the sensor is disabled (the query no longer needs it, or
** the process ended) the events are closed.
**
** What a sample request answers.  The engine asks at each tick of the
** query's Clock (Clock[n] when the optimizer chose it) for the process's
** tuples valid at t.  The PM reads the ring buffers and answers with every
** sample taken since the previous request and at or before t, each a tuple
** at t; later ones wait for the next request.  The sampling period follows
** the spacing of the requests (PERF_EVENT_IOC_PERIOD), so that a thread
** running all the time is sampled about once per tick: the period is the
** query's Clock.  (It starts as the base tick, and is never below 100 us.)
**
** Symbols come from /proc/PID/maps and the ELF symbol tables through
** elfutils' libdwfl (dwfl_linux_proc_report, dwfl_module_addrinfo); the
** report is read again when an address falls in no module it knows (a
** library loaded later), at most every 100 ms.  An address without a symbol
** (a stripped binary) is given as module+0xOFFSET, the offset in the file's
** address space (what addr2line takes).  Kernel frames are "[kernel]".
**
** Values are filled by attribute name (Process, Pid, Thread, Module,
** Function, Caller, Stack, Address), so a program may declare Executing
** with fewer attributes or in another order; an unknown name or a wrong
** type disables the PM at START with a message.
**
** Never silent: the PM's message (tq_get_info, --stats) counts the samples
** read, answered, lost by the kernel (a full ring), dropped by the PM (a
** full queue), left unanswered (taken after the last request before the
** process ended or the sensor was disabled), from children (inherited by
** a process the pid forked: not the enabled process), and unresolved
** addresses, with the first pids sampled and their samples.
*/
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "sensors.h"

enum {
  F_PROCESS = 1, /* the process entity */
  F_PID,         /* its pid */
  F_THREAD,      /* the thread (tid) */
  F_MODULE,      /* the file mapped at the address (basename), [kernel], [unknown] */
  F_FUNCTION,    /* the symbol, or module+0xOFFSET */
  F_CALLER,      /* the function of the next frame out ("" when none) */
  F_STACK,       /* the frames from the outermost to the sampled one, ';'-separated */
  F_ADDRESS      /* the instruction address */
};
static const struct {
  const char *name;
  int field, type;
} fieldDefs[] = {{"Process", F_PROCESS, TY_ENTITY}, {"Pid", F_PID, TY_INT},           {"Thread", F_THREAD, TY_INT},
                 {"Module", F_MODULE, TY_STRING},   {"Function", F_FUNCTION, TY_STRING}, {"Caller", F_CALLER, TY_STRING},
                 {"Stack", F_STACK, TY_STRING},     {"Address", F_ADDRESS, TY_INT}};

#define MAX_FRAMES 16        /* call chain frames kept per sample */
#define MAX_QUEUE (1 << 15)  /* samples waiting for a request, per process */
#define MAX_FDS 512          /* events per process (threads x CPUs) */
#define RING_PAGES 16        /* data pages of a ring buffer */
#define MIN_PERIOD 100000    /* 100 us */
#define CACHE_SIZE 4096      /* symbolized addresses per process */

typedef struct Sample {
  TqTime t;                  /* when it was taken */
  int32_t tid;
  int nframe;                /* frames in ip[] (ip[0] the sampled address) */
  int kernel;                /* taken in the kernel */
  uint64_t ip[MAX_FRAMES];
} Sample;

typedef struct Sym {
  uint64_t ip;               /* 0: empty slot */
  int64_t module, function;  /* symbols */
} Sym;

typedef struct Proc {
  int64_t pid;
  int64_t entity;            /* its entity symbol */
  int fd[MAX_FDS];
  int nfd;
  void *ring[64];            /* per CPU: the mmap of its first event (NULL: none) */
  int ringFd[64];
  Dwfl *dwfl;
  TqTime refreshed;          /* wall time of the last report (ns) */
  Sample *q;                 /* queued samples, a ring of MAX_QUEUE */
  int qhead, qn;
  TqTime lastAsk;            /* time of the previous request (TQ_BEGINNING: none) */
  int64_t period;            /* sampling period now (ns of CPU time) */
  int64_t samples;           /* samples answered */
  Sym *cache;
  TqTime at;                 /* the instant of the answers kept (TQ_BEGINNING: none) */
  int64_t *ans;              /* the tuples answered at `at`: asked again at the same
                             ** instant (another query) they are given again */
  int nans, cans;
} Proc;

typedef struct State {
  int nattr;
  int field[TQ_MAX_ATTRS];
  int ncpu;
  TqMap procs;               /* pid + 2 -> Proc* */
  int64_t read, answered, lost, dropped, unanswered, children, unresolved, notWanted, failed, throttled;
  int64_t firstPid[8];       /* the first pids sampled, and their answered samples */
  int64_t firstN[8];
  int nfirst;
  int npids;
  char err[160];             /* the last failure to open */
} State;

/* ================================================================ messages */

static void message(tq_pm_private *p, State *st) {
  char list[160] = "";
  size_t n = 0;
  for (int i = 0; i < st->nfirst && n < sizeof list; i++) {
    int64_t k = st->firstN[i];
    Proc *pr = tqMapGet(&st->procs, (uint64_t)st->firstPid[i] + 2);
    if (pr) k = pr->samples;
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld:%lld", i ? "," : "", (long long)st->firstPid[i], (long long)k);
  }
  char buf[640];
  snprintf(buf, sizeof buf,
           "pids=%d [%s%s] samples=%lld answered=%lld lost=%lld dropped=%lld unanswered=%lld children=%lld "
           "unresolved=%lld notwanted=%lld failed=%lld%s%s",
           st->npids, list, st->npids > st->nfirst ? ",..." : "", (long long)st->read, (long long)st->answered,
           (long long)st->lost, (long long)st->dropped, (long long)st->unanswered, (long long)st->children,
           (long long)st->unresolved, (long long)st->notWanted, (long long)st->failed, st->err[0] ? " last: " : "", st->err);
  size_t n2 = strnlen(buf, sizeof p->message - 1); /* the message holds what fits */
  memcpy(p->message, buf, n2);
  p->message[n2] = 0;
}

/* ================================================================ perf */

static TqTime wallNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (TqTime)ts.tv_sec * TQ_SEC + ts.tv_nsec;
}

static int perfOpen(int64_t tid, int cpu, int64_t period) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = (uint64_t)period;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  a.inherit = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_REALTIME;
  a.sample_max_stack = MAX_FRAMES + 4;
  a.exclude_kernel = geteuid() != 0; /* kernel frames need privileges */
  a.exclude_hv = 1;
  return (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static size_t ringBytes(void) { return (size_t)(RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE); }

static void procClose(State *st, Proc *pr) {
  for (int c = 0; c < 64; c++)
    if (pr->ring[c]) munmap(pr->ring[c], ringBytes());
  for (int i = 0; i < pr->nfd; i++) close(pr->fd[i]);
  memset(pr->ring, 0, sizeof pr->ring);
  pr->nfd = 0;
}

static void procFree(State *st, Proc *pr) {
  procClose(st, pr);
  st->unanswered += pr->qn;
  if (pr->dwfl) dwfl_end(pr->dwfl);
  free(pr->q);
  free(pr->cache);
  free(pr->ans);
  free(pr);
}

/* Opens the events of every thread of pid on every CPU.  Returns 0, or -1
** with the reason in st->err (none could be opened). */
static int procOpen(State *st, Proc *pr) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%lld/task", (long long)pr->pid);
  DIR *d = opendir(path);
  if (!d) {
    snprintf(st->err, sizeof st->err, "pid %lld: %s", (long long)pr->pid, strerror(errno));
    return -1;
  }
  struct dirent *de;
  int lastErr = 0;
  while ((de = readdir(d))) {
    char *end;
    long long tid = strtoll(de->d_name, &end, 10);
    if (*end || end == de->d_name) continue;
    for (int c = 0; c < st->ncpu && c < 64; c++) {
      if (pr->nfd == MAX_FDS) break;
      int fd = perfOpen(tid, c, pr->period);
      if (fd < 0) {
        lastErr = errno;
        continue;
      }
      if (!pr->ring[c]) {
        void *m = mmap(NULL, ringBytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
          lastErr = errno;
          close(fd);
          continue;
        }
        pr->ring[c] = m;
        pr->ringFd[c] = fd;
      } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, pr->ringFd[c])) {
        lastErr = errno;
        close(fd);
        continue;
      }
      pr->fd[pr->nfd++] = fd;
    }
  }
  closedir(d);
  if (!pr->nfd) {
    snprintf(st->err, sizeof st->err, "pid %lld: perf_event_open: %s", (long long)pr->pid,
             lastErr ? strerror(lastErr) : "no thread");
    return -1;
  }
  return 0;
}

static void queuePush(State *st, Proc *pr, const Sample *s) {
  if (pr->qn == MAX_QUEUE) {
    st->dropped++;
    return;
  }
  pr->q[(pr->qhead + pr->qn++) % MAX_QUEUE] = *s;
}

/* One record of the ring: a sample into the queue, a loss counted. */
static void takeRecord(State *st, Proc *pr, const unsigned char *r, size_t n) {
  const struct perf_event_header *h = (const void *)r;
  if (h->type == PERF_RECORD_LOST && n >= sizeof *h + 16) {
    uint64_t lost;
    memcpy(&lost, r + sizeof *h + 8, 8);
    st->lost += (int64_t)lost;
    return;
  }
  if (h->type == PERF_RECORD_THROTTLE) st->throttled++;
  if (h->type != PERF_RECORD_SAMPLE || n < sizeof *h + 32) return;
  const unsigned char *p = r + sizeof *h;
  uint64_t ip, time, nr;
  uint32_t pid, tid;
  memcpy(&ip, p, 8);
  memcpy(&pid, p + 8, 4);
  memcpy(&tid, p + 12, 4);
  memcpy(&time, p + 16, 8);
  memcpy(&nr, p + 24, 8);
  st->read++;
  if ((int64_t)pid != pr->pid) { /* a child the process forked inherited the event */
    st->children++;
    return;
  }
  Sample s;
  s.t = (TqTime)time;
  s.tid = (int32_t)tid;
  s.kernel = 0;
  s.nframe = 0;
  const unsigned char *ips = p + 32;
  size_t have = (n - sizeof *h - 32) / 8;
  if (nr > have) nr = have;
  int ctx = 0; /* PERF_CONTEXT_* of the frames now */
  for (uint64_t i = 0; i < nr && s.nframe < MAX_FRAMES; i++) {
    uint64_t x;
    memcpy(&x, ips + 8 * i, 8);
    if (x >= (uint64_t)PERF_CONTEXT_MAX) {
      ctx = x == (uint64_t)PERF_CONTEXT_KERNEL ? 1 : x == (uint64_t)PERF_CONTEXT_USER ? 2 : 3;
      continue;
    }
    if (ctx == 1) {
      if (s.nframe == 0) s.kernel = 1;
      if (s.nframe == 0 || s.ip[s.nframe - 1] != 0) s.ip[s.nframe++] = 0; /* kernel frames: one "[kernel]" */
      continue;
    }
    if (ctx == 3) continue;
    s.ip[s.nframe++] = x;
  }
  if (s.nframe == 0) {
    s.ip[0] = ip;
    s.nframe = 1;
    s.kernel = ip >= 0xffff800000000000ull;
    if (s.kernel) s.ip[0] = 0;
  }
  queuePush(st, pr, &s);
}

/* Reads every ring buffer of the process into its queue. */
static void procDrain(State *st, Proc *pr) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (size_t)RING_PAGES * page;
  unsigned char tmp[4096];
  for (int c = 0; c < 64; c++) {
    if (!pr->ring[c]) continue;
    struct perf_event_mmap_page *mp = pr->ring[c];
    const unsigned char *data = (const unsigned char *)pr->ring[c] + page;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    while (tail < head) {
      struct perf_event_header h;
      for (size_t i = 0; i < sizeof h; i++) ((unsigned char *)&h)[i] = data[(tail + i) % size];
      if (h.size < sizeof h) break; /* malformed: skip the rest */
      size_t n = h.size < sizeof tmp ? h.size : sizeof tmp;
      for (size_t i = 0; i < n; i++) tmp[i] = data[(tail + i) % size];
      takeRecord(st, pr, tmp, n);
      tail += h.size;
    }
    __atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
  }
}

/* ================================================================ symbols */

static int noDebuginfo(Dwfl_Module *m, void **u, const char *mod, Dwarf_Addr base, const char *file,
                       const char *debuglink, GElf_Word crc, char **debuginfo) {
  return -1; /* the ELF symbol tables of the mapped files only: no search elsewhere */
}
static const Dwfl_Callbacks dwflCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = noDebuginfo,
};

/* (Re)reads the process's mappings.  Returns 0 or -1 (the process is gone). */
static int procReport(Proc *pr) {
  if (!pr->dwfl && !(pr->dwfl = dwfl_begin(&dwflCallbacks))) return -1;
  pr->refreshed = wallNow();
  dwfl_report_begin(pr->dwfl);
  int rc = dwfl_linux_proc_report(pr->dwfl, (pid_t)pr->pid);
  dwfl_report_end(pr->dwfl, NULL, NULL);
  return rc == 0 ? 0 : -1;
}

static const char *baseName(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The module and function at address ip (a return address when ret: looked
** up at ip - 1, inside the call), as symbols; cached per process. */
static void symbolize(tq_pm_global *g, State *st, Proc *pr, uint64_t ip, int ret, int64_t *module, int64_t *function) {
  if (ip == 0) {
    *module = *function = g->symbol(g, "[kernel]", -1);
    return;
  }
  uint64_t key = ret ? ip - 1 : ip;
  Sym *c = &pr->cache[(key ^ (key >> 12)) % CACHE_SIZE];
  if (c->ip == key) {
    *module = c->module;
    *function = c->function;
    return;
  }
  Dwfl_Module *m = pr->dwfl ? dwfl_addrmodule(pr->dwfl, key) : NULL;
  if (!m && wallNow() - pr->refreshed > 100 * TQ_MS && procReport(pr) == 0) m = dwfl_addrmodule(pr->dwfl, key);
  char buf[512];
  if (!m) {
    st->unresolved++;
    snprintf(buf, sizeof buf, "[unknown]+0x%llx", (unsigned long long)key);
    *module = g->symbol(g, "[unknown]", -1);
    *function = g->symbol(g, buf, -1);
    return; /* not cached: a later report may know it */
  }
  Dwarf_Addr start = 0;
  const char *name = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
  const char *mod = baseName(name ? name : "[unknown]");
  if (!strncmp(mod, "[vdso", 5)) mod = "[vdso]"; /* libdwfl names it [vdso: PID] */
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *fn = dwfl_module_addrinfo(m, key, &off, &sym, NULL, NULL, NULL);
  *module = g->symbol(g, mod, -1);
  if (fn) {
    *function = g->symbol(g, fn, -1);
  } else {
    Dwarf_Addr rel = key;
    if (dwfl_module_relocate_address(m, &rel) < 0) rel = key - start;
    snprintf(buf, sizeof buf, "%s+0x%llx", mod, (unsigned long long)rel);
    *function = g->symbol(g, buf, -1);
  }
  c->ip = key;
  c->module = *module;
  c->function = *function;
}

/* ================================================================ the PM */

static Proc *procGet(tq_pm_global *g, tq_pm_private *p, State *st, int64_t entity, int open) {
  const char *name = g->symbol_name(g, entity);
  char *end;
  long long pid = name ? strtoll(name, &end, 10) : -1;
  if (!name || !*name || *end || pid <= 0) return NULL; /* not a process of this host */
  Proc *pr = tqMapGet(&st->procs, (uint64_t)pid + 2);
  if (pr || !open) return pr;
  if (!snsProcessWanted(g, pid, NULL)) {
    st->notWanted++;
    return NULL;
  }
  pr = tqCalloc(1, sizeof *pr);
  pr->pid = pid;
  pr->entity = entity;
  pr->period = g->tick > MIN_PERIOD ? g->tick : MIN_PERIOD;
  pr->lastAsk = TQ_BEGINNING;
  pr->at = TQ_BEGINNING;
  pr->q = tqMalloc(sizeof(Sample) * MAX_QUEUE);
  pr->cache = tqCalloc(CACHE_SIZE, sizeof(Sym));
  if (procOpen(st, pr)) {
    st->failed++;
    procFree(st, pr);
    message(p, st);
    return NULL;
  }
  procReport(pr); /* while the process is there: it may be gone when its samples are answered */
  tqMapPut(&st->procs, (uint64_t)pid + 2, pr);
  st->npids++;
  if (st->nfirst < (int)TQ_ARRAY_SIZE(st->firstPid)) st->firstPid[st->nfirst++] = pid;
  return pr;
}

static void procForget(State *st, Proc *pr) {
  for (int i = 0; i < st->nfirst; i++)
    if (st->firstPid[i] == pr->pid) st->firstN[i] = pr->samples;
  tqMapDel(&st->procs, (uint64_t)pr->pid + 2);
  procFree(st, pr);
}

static tq_pm_status cpuEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  State *st = p->data;
  if (!st) return TQ_PM_OK;
  Proc *pr = procGet(g, p, st, entity, on > 0);
  if (pr && on <= 0) {
    procDrain(st, pr); /* what it took since the last request is not answered now */
    procForget(st, pr);
  }
  message(p, st);
  return TQ_PM_OK;
}

/* Sets the sampling period of every event of the process. */
static void procPeriod(Proc *pr, int64_t period) {
  if (period < MIN_PERIOD) period = MIN_PERIOD;
  if (period == pr->period) return;
  uint64_t v = (uint64_t)period;
  for (int i = 0; i < pr->nfd; i++) ioctl(pr->fd[i], PERF_EVENT_IOC_PERIOD, &v);
  pr->period = period;
}

static tq_pm_status cpuSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  State *st = p->data;
  if (!st) return TQ_PM_OK;
  Proc *pr = procGet(g, p, st, who, 1);
  if (!pr) return TQ_PM_OK;
  if (t == pr->at) { /* asked again at this instant: the same answers */
    for (int i = 0; i < pr->nans; i++) g->sample_answer(g, cookie, pr->ans + (size_t)i * TQ_MAX_ATTRS);
    return TQ_PM_OK;
  }
  pr->at = t;
  pr->nans = 0;
  if (pr->lastAsk > TQ_BEGINNING && t > pr->lastAsk) procPeriod(pr, t - pr->lastAsk); /* the query's Clock */
  if (t > pr->lastAsk) pr->lastAsk = t;
  procDrain(st, pr);
  int64_t v[TQ_MAX_ATTRS];
  char stack[2048];
  while (pr->qn) {
    Sample *s = &pr->q[pr->qhead];
    if (s->t > t) break; /* for a later request */
    int64_t mod, fn, callerMod, caller = g->symbol(g, "", 0);
    symbolize(g, st, pr, s->ip[0], 0, &mod, &fn);
    if (s->nframe > 1) symbolize(g, st, pr, s->ip[1], s->ip[1] != 0, &callerMod, &caller);
    size_t n = 0;
    stack[0] = 0;
    for (int i = s->nframe - 1; i >= 0 && n < sizeof stack; i--) {
      int64_t m2, f2;
      symbolize(g, st, pr, s->ip[i], i > 0 && s->ip[i] != 0, &m2, &f2);
      n += (size_t)snprintf(stack + n, sizeof stack - n, "%s%s", n ? ";" : "", g->symbol_name(g, f2));
    }
    if (n >= sizeof stack) n = sizeof stack - 1;
    for (int i = 0; i < st->nattr; i++) {
      switch (st->field[i]) {
        case F_PROCESS: v[i] = who; break;
        case F_PID: v[i] = pr->pid; break;
        case F_THREAD: v[i] = s->tid; break;
        case F_MODULE: v[i] = mod; break;
        case F_FUNCTION: v[i] = fn; break;
        case F_CALLER: v[i] = caller; break;
        case F_STACK: v[i] = g->symbol(g, stack, (int)n); break;
        case F_ADDRESS: v[i] = (int64_t)s->ip[0]; break;
        default: v[i] = 0; break;
      }
    }
    g->sample_answer(g, cookie, v);
    if (pr->nans == pr->cans) {
      pr->cans = pr->cans ? 2 * pr->cans : 8;
      pr->ans = tqRealloc(pr->ans, sizeof(int64_t) * TQ_MAX_ATTRS * (size_t)pr->cans);
    }
    memcpy(pr->ans + (size_t)pr->nans++ * TQ_MAX_ATTRS, v, sizeof v);
    pr->samples++;
    st->answered++;
    pr->qhead = (pr->qhead + 1) % MAX_QUEUE;
    pr->qn--;
  }
  message(p, st);
  return TQ_PM_OK;
}

/* Binds the attributes of Executing by name; 0, or -1 with the reason. */
static int bind(tq_pm_global *g, tq_pm_private *p, State *st) {
  const AlgRel *r = enProgram(g)->cat.rels.v[p->rel - 1];
  st->nattr = r->nattr;
  for (int i = 0; i < r->nattr; i++) {
    int k = -1;
    for (int j = 0; j < (int)TQ_ARRAY_SIZE(fieldDefs); j++)
      if (!strcasecmp(fieldDefs[j].name, r->attr[i].name)) k = j;
    if (k < 0) {
      snprintf(p->message, sizeof p->message, "%s.%s: the CPU sampler has no such attribute (see sensors/cpusample.md)",
               r->name, r->attr[i].name);
      return -1;
    }
    if ((int)r->attr[i].type.kind != fieldDefs[k].type) {
      char want[64];
      AlgType t = {(AlgTypeKind)fieldDefs[k].type, NULL, NULL};
      snprintf(p->message, sizeof p->message, "%s.%s must be of type %s", r->name, r->attr[i].name,
               fieldDefs[k].type == TY_ENTITY ? "an entity (Process)" : algTypeName(t, want, sizeof want));
      return -1;
    }
    st->field[i] = fieldDefs[k].field;
  }
  if (r->mode != ALG_MODE_SAMPLED) {
    snprintf(p->message, sizeof p->message, "%s must be sampled on performer (it is %s)", r->name, algModeName(r->mode));
    return -1;
  }
  return 0;
}

static tq_pm_status cpuCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  State *st = p->data;
  if (what == TQ_PM_START) {
    st = tqCalloc(1, sizeof *st);
    p->data = st;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    st->ncpu = n > 0 ? (int)n : 1;
    if (bind(g, p, st)) return TQ_PM_ERROR;
    if (g->operation != TQ_OP_COLLECT) {
      snprintf(p->message, sizeof p->message, "samples only a live collection");
      return TQ_PM_ERROR;
    }
    message(p, st);
  } else if (what == TQ_PM_END && st) {
    for (uint32_t k = 0; k < st->procs.cap; k++) {
      if (st->procs.slot[k].key <= 1) continue;
      Proc *pr = st->procs.slot[k].val;
      procDrain(st, pr);
      for (int i = 0; i < st->nfirst; i++)
        if (st->firstPid[i] == pr->pid) st->firstN[i] = pr->samples;
      procFree(st, pr);
    }
    tqMapFree(&st->procs);
    message(p, st);
    if (st->unanswered || st->lost || st->dropped)
      g->log(g, p, TQ_LOG_INFO, "%s", p->message);
    free(st);
    p->data = NULL;
  }
  return TQ_PM_OK;
}

static tq_pm_status cpuInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_PRODUCER;
  p->produces = "Executing";
  p->privileges[p->nprivileges++] = "read:/proc";
  return TQ_PM_OK;
}

const tq_pm snsCpuSamplePm = {
    .version = TQ_PM_VERSION,
    .name = "cpusample",
    .description = "PRODUCER of Executing (CPU samples of the enabled processes: perf_event_open, libdwfl)",
    .init = cpuInit,
    .call = cpuCall,
    .enable = cpuEnable,
    .sample = cpuSample,
};
