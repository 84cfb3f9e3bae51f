/*
** pmdatqmon_kernel.c - the kernel sensors of pmdatqmon (its -k): the BPF
** programs of sensors/kernel/ks.bpf.c for the relation Syscall, loaded by
** the agent itself, their enable flags set per thread by the agent's
** clients through pmStore (sensors/pmdatqmon.md, "The kernel's relations").
**
** The agent does not link tqmon's engine (sensors/kernel.c is a processor
** module of it): it shares with the kernel PMs the BPF object (the
** generated skeleton ks.skel.h) and its header ks.h, and does here the part
** of kernel.c's session it needs: size and load the maps, attach the
** raw_syscalls programs, map the flag words and the pending begins, drain
** the ring buffer, convert the BPF clock (boot time) to CLOCK_REALTIME,
** and claim the begin of a call still open (one compare-and-swap of the
** thread's flag word, as kernel.c's claimOne), so that a long call's begin
** is released at its time.  The caller (pmdatqmon.c) holds its lock around
** every call.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pmdatqmon_kernel.h"

#ifndef TQ_KERNEL_NO_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/ks.h"
#include "ks.skel.h"     /* generated from kernel/ks.bpf.c (build/gen) */
#include "ks_syscalls.h" /* ksSyscallNames[] */

static struct ks_bpf *skel;
static struct ring_buffer *rb;
static struct bpf_link *links[2];
static volatile uint64_t *flags;         /* flags[tid] (mmapped) */
static const volatile struct ks_sysbeg *sysbeg; /* sysbeg[tid] (mmapped) */
static size_t flagsBytes, sysbegBytes;
static uint32_t nflags;
static int64_t offset, offsetAt;         /* boot time minus CLOCK_REALTIME, measured when */
static uint64_t nextId = 1;
static uint64_t *openId;                 /* per tid: the id of its open call (claimed), 0 */
static AkPkt **sink;                     /* (the vector being filled by akDrain) */
static size_t *sinkN, *sinkCap;
static char bpfLog[256];

static int64_t clockNs(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Boot time minus CLOCK_REALTIME, from the closest of 3 readings (boot time
** does not follow the wall clock when it is set: measured again every
** second). */
static void measureOffset(void) {
  int64_t best = 0, gap = INT64_MAX;
  for (int i = 0; i < 3; i++) {
    int64_t a = clockNs(CLOCK_REALTIME), k = clockNs(CLOCK_BOOTTIME), b = clockNs(CLOCK_REALTIME);
    if (b - a < gap) {
      gap = b - a;
      best = k - a - (b - a) / 2;
    }
  }
  offset = best;
  offsetAt = clockNs(CLOCK_MONOTONIC);
}

static int bpfPrint(enum libbpf_print_level level, const char *fmt, va_list ap) {
  if (level == LIBBPF_WARN && !bpfLog[0]) {
    vsnprintf(bpfLog, sizeof bpfLog, fmt, ap);
    bpfLog[strcspn(bpfLog, "\n")] = 0;
  }
  return 0;
}

static AkPkt *push(void) {
  if (*sinkN == *sinkCap) {
    size_t nc = *sinkCap ? 2 * *sinkCap : 1024;
    AkPkt *nv = realloc(*sink, sizeof(AkPkt) * nc);
    if (!nv) return NULL;
    *sink = nv;
    *sinkCap = nc;
  }
  AkPkt *p = &(*sink)[(*sinkN)++];
  memset(p, 0, sizeof *p);
  return p;
}

static int onPacket(void *ctx, void *data, size_t size) {
  (void)ctx;
  if (size == sizeof(struct ks_span) && ((const struct ks_span *)data)->op == KO_SPAN) {
    const struct ks_span *sp = data;
    if (sp->tid >= nflags) return 0;
    uint64_t id = nextId++;
    AkPkt *b = push();
    if (!b) return 0;
    b->t = (int64_t)sp->t - offset;
    b->begin = 1;
    b->tid = sp->tid;
    b->nr = sp->nr;
    b->id = id;
    AkPkt *e = push();
    if (!e) return 0;
    e->t = (int64_t)sp->tend - offset;
    e->tid = sp->tid;
    e->ret = sp->ret;
    e->id = id;
    return 0;
  }
  if (size < sizeof(struct ks_rec)) return 0;
  const struct ks_rec *r = data;
  if (r->rel != KR_SYSCALL || r->op != KO_END || r->tid >= nflags || !openId[r->tid]) return 0;
  /* the end of a call whose begin was claimed */
  AkPkt *e = push();
  if (!e) return 0;
  e->t = (int64_t)r->t - offset;
  e->tid = r->tid;
  e->ret = r->a64;
  e->id = openId[r->tid];
  openId[r->tid] = 0;
  return 0;
}

int akStart(char *why, size_t n) {
  libbpf_print_fn_t old = libbpf_set_print(bpfPrint);
  bpfLog[0] = 0;
  int rc = -1;
  skel = ks_bpf__open();
  if (!skel) {
    snprintf(why, n, "cannot open the BPF object: %s", bpfLog[0] ? bpfLog : strerror(errno));
    goto out;
  }
  struct bpf_program *p;
  bpf_object__for_each_program(p, skel->obj) bpf_program__set_autoload(p, false);
  bpf_program__set_autoload(skel->progs.ks_sys_enter, true);
  bpf_program__set_autoload(skel->progs.ks_sys_exit, true);
  skel->rodata->use_tai = 0;
  skel->rodata->attached = 1u << KR_SYSCALL;
  long pidMax = 32768;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
  if (f) {
    if (fscanf(f, "%ld", &pidMax) != 1) pidMax = 32768;
    fclose(f);
  }
  if (pidMax < 1024) pidMax = 1024;
  if (pidMax > 4194304) pidMax = 4194304;
  nflags = (uint32_t)pidMax;
  if (bpf_map__set_max_entries(skel->maps.flags, nflags) || bpf_map__set_max_entries(skel->maps.wakets, nflags) ||
      bpf_map__set_max_entries(skel->maps.sysbeg, nflags) || bpf_map__set_max_entries(skel->maps.ring, 1u << 24)) {
    snprintf(why, n, "cannot size the BPF maps: %s", bpfLog);
    goto out;
  }
  if (ks_bpf__load(skel)) {
    snprintf(why, n, "the kernel refused the BPF programs: %s", bpfLog[0] ? bpfLog : strerror(errno));
    goto out;
  }
  long page = sysconf(_SC_PAGESIZE);
  flagsBytes = ((size_t)nflags * sizeof(uint64_t) + (size_t)page - 1) / (size_t)page * (size_t)page;
  void *m = mmap(NULL, flagsBytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(skel->maps.flags), 0);
  if (m == MAP_FAILED) {
    snprintf(why, n, "cannot map the enable flags: %s", strerror(errno));
    goto out;
  }
  flags = m;
  sysbegBytes = ((size_t)nflags * sizeof(struct ks_sysbeg) + (size_t)page - 1) / (size_t)page * (size_t)page;
  m = mmap(NULL, sysbegBytes, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.sysbeg), 0);
  if (m == MAP_FAILED) {
    snprintf(why, n, "cannot map the system calls' begins: %s", strerror(errno));
    goto out;
  }
  sysbeg = m;
  openId = calloc(nflags, sizeof(uint64_t));
  rb = ring_buffer__new(bpf_map__fd(skel->maps.ring), onPacket, NULL, NULL);
  if (!openId || !rb) {
    snprintf(why, n, "cannot open the ring buffer: %s", bpfLog[0] ? bpfLog : strerror(errno));
    goto out;
  }
  links[0] = bpf_program__attach(skel->progs.ks_sys_enter);
  links[1] = bpf_program__attach(skel->progs.ks_sys_exit);
  if (!links[0] || !links[1]) {
    snprintf(why, n, "cannot attach to the tracepoints raw_syscalls:sys_enter and sys_exit: %s",
             bpfLog[0] ? bpfLog : strerror(errno));
    goto out;
  }
  measureOffset();
  rc = 0;
out:
  libbpf_set_print(old);
  if (rc) akStop();
  return rc;
}

int akEnable(uint32_t tid, int on) {
  if (!flags || !tid || tid >= nflags) return -1;
  if (on) __atomic_fetch_or(&flags[tid], (uint64_t)(1u << KR_SYSCALL), __ATOMIC_RELAXED);
  else __atomic_fetch_and(&flags[tid], ~(uint64_t)(1u << KR_SYSCALL), __ATOMIC_RELAXED);
  return 0;
}

/* Claims thread tid's pending begin when it began before upto (kernel.c's
** claimOne): its flag word turns from pending to open in one
** compare-and-swap, so its return writes an END alone. */
static void claim(uint32_t tid, int64_t upto) {
  if (!tid || tid >= nflags) return;
  uint64_t w = __atomic_load_n(&flags[tid], __ATOMIC_ACQUIRE);
  if (!(w & KS_PEND_SYSCALL)) return;
  struct ks_sysbeg b;
  memcpy(&b, (const void *)&sysbeg[tid], sizeof b);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  int64_t t = (int64_t)b.t - offset;
  if (t > upto) return;
  uint64_t nw = (w & ~(uint64_t)KS_PEND_SYSCALL) | KS_OPEN_SYSCALL;
  if (!__atomic_compare_exchange_n(&flags[tid], &w, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  /* (lost the race: the call returned, its span is in the ring; or a later
  ** call is pending: claimed at the next pass) */
  AkPkt *p = push();
  if (!p) return;
  p->t = t;
  p->begin = 1;
  p->tid = tid;
  p->nr = b.nr;
  p->id = openId[tid] = nextId++;
}

void akDrain(AkPkt **v, size_t *n, size_t *cap, const uint32_t *tids, size_t ntids, int64_t upto) {
  if (!rb) return;
  if (clockNs(CLOCK_MONOTONIC) - offsetAt > 1000000000LL) measureOffset();
  sink = v, sinkN = n, sinkCap = cap;
  ring_buffer__consume(rb);
  for (size_t i = 0; i < ntids; i++) claim(tids[i], upto);
  /* (a call that returned while it was claimed: its packet, just written) */
  ring_buffer__consume(rb);
  sink = NULL;
}

void akCounters(uint64_t *written, uint64_t *dropped, uint64_t *unbegun) {
  *written = *dropped = *unbegun = 0;
  if (!skel) return;
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) return;
  uint64_t *vals = calloc((size_t)ncpu, sizeof(uint64_t));
  if (!vals) return;
  uint32_t keys[3] = {KR_SYSCALL * KS_NCNT + KC_WRITTEN, KR_SYSCALL * KS_NCNT + KC_DROPPED, KR_SYSCALL * KS_NCNT + KC_UNBEGUN};
  uint64_t *out[3] = {written, dropped, unbegun};
  for (int k = 0; k < 3; k++)
    if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &keys[k], vals))
      for (int c = 0; c < ncpu; c++) *out[k] += vals[c];
  free(vals);
}

const char *akCallName(uint32_t nr) {
  static char other[32];
  if (nr < sizeof ksSyscallNames / sizeof ksSyscallNames[0] && ksSyscallNames[nr]) return ksSyscallNames[nr];
  snprintf(other, sizeof other, "syscall_%u", nr);
  return other;
}

void akStop(void) {
  for (int i = 0; i < 2; i++)
    if (links[i]) bpf_link__destroy(links[i]);
  links[0] = links[1] = NULL;
  if (rb) ring_buffer__free(rb);
  rb = NULL;
  if (flags) munmap((void *)flags, flagsBytes);
  if (sysbeg) munmap((void *)sysbeg, sysbegBytes);
  flags = NULL;
  sysbeg = NULL;
  free(openId);
  openId = NULL;
  if (skel) ks_bpf__destroy(skel);
  skel = NULL;
}

#else /* built without BPF (no BTF on the build machine) */

int akStart(char *why, size_t n) {
  snprintf(why, n, "this pmdatqmon was built without BPF (the build machine had no /sys/kernel/btf/vmlinux)");
  return -1;
}
int akEnable(uint32_t tid, int on) { return -1; }
void akDrain(AkPkt **v, size_t *n, size_t *cap, const uint32_t *tids, size_t ntids, int64_t upto) {}
void akCounters(uint64_t *written, uint64_t *dropped, uint64_t *unbegun) { *written = *dropped = *unbegun = 0; }
const char *akCallName(uint32_t nr) {
  static char other[32];
  snprintf(other, sizeof other, "syscall_%u", nr);
  return other;
}
void akStop(void) {}

#endif
