/*
** ksbpf.c - the kernel sensors without tqmon's engine (ksbpf.h): the
** relations the kernel fills, the programs behind them, loading and
** attaching the BPF object of sensors/kernel/ks.bpf.c, the clocks, the
** kernel's counters, claiming a pending system call, decoding packets, and
** the threads and processors that exist.  Linked into tqmon (the kernel
** PMs, sensors/kernel.c) and into pmdatqmon (its -k,
** sensors/pmdatqmon_kernel.c); it uses nothing of tqmon's engine.
**
** Built without BPF (TQ_KERNEL_NO_BPF: the build machine had no BTF) it
** holds only the tables and what reads /proc and /sys.
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ksbpf.h"

#ifndef TQ_KERNEL_NO_BPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ks.skel.h"     /* generated from kernel/ks.bpf.c (build/gen) */
#include "ks_syscalls.h" /* generated from the kernel headers: ksSyscallNames[] */
#endif

/* ================================================================ relations */

static const char *const stateValues[] = {"Sleeping", "DiskSleep", "Stopped", "Other"};
static const char *const opValues[] = {"Read", "Write", "Flush", "Discard", "Other"};
static const char *const familyValues[] = {"Unix", "Inet", "Inet6", "Netlink", "Other"};

#define A_THREAD(n) {n, KA_THREAD, KT_ENTITY, "Thread", NULL, 0}
#define A_END {NULL, 0, 0, NULL, NULL, 0}

const char *const ksbProgTp[KP_NPROG][2] = {
    {"sched", "sched_process_fork"}, {"sched", "sched_process_exec"}, {"sched", "sched_process_exit"},
    {"task", "task_rename"},         {"sched", "sched_switch"},       {"sched", "sched_waking"},
    {"sched", "sched_wakeup_new"},   {"raw_syscalls", "sys_enter"},   {"raw_syscalls", "sys_exit"},
    {"block", "block_rq_issue"},     {"block", "block_rq_complete"},  {"sock", "sock_send_length"},
    {"sock", "sock_recv_length"},    {"sched", "sched_wakeup"},       {"fentry", "x64_sys_call"},
    {"fexit", "x64_sys_call"},       {"fentry", "ia32_sys_call"},     {"fexit", "ia32_sys_call"}};

const KRelDef ksbRelDefs[KS_NPM] = {
    {KR_FORK, "kernel_fork", "Fork", 0, KP_LIFE, 0,
     {{"Parent", KA_PARENT, KT_ENTITY, "Thread", NULL, 0}, {"Child", KA_CHILD, KT_ENTITY, "Thread", NULL, 0}, A_END}},
    {KR_EXEC, "kernel_exec", "Exec", 0, KP_LIFE, 0, {A_THREAD("Thread"), {"File", KA_FILE, KT_STRING, NULL, NULL, 0}, A_END}},
    {KR_EXIT, "kernel_exit", "Exit", 0, KP_LIFE, 0, {A_THREAD("Thread"), {"Code", KA_CODE, KT_INT, NULL, NULL, 0}, A_END}},
    {KR_RUNNINGON, "kernel_runningon", "RunningOn", 1, KP_SWITCH, 0,
     {A_THREAD("Thread"), {"Processor", KA_PROCESSOR, KT_ENTITY, "Processor", NULL, 0}, A_END}},
    {KR_READY, "kernel_ready", "Ready", 1, KP_SWITCH | KP_WAKING | KP_WAKEUP | KP_WAKEUP_NEW, 0, {A_THREAD("Thread"), A_END}},
    {KR_BLOCKED, "kernel_blocked", "Blocked", 1, KP_SWITCH | KP_WAKING | KP_WAKEUP, 0,
     {A_THREAD("Thread"), {"State", KA_STATE, KT_ENUM, NULL, stateValues, 4}, A_END}},
    {KR_WOKE, "kernel_woke", "Woke", 0, KP_WAKING, 1,
     {{"Waker", KA_WAKER, KT_ENTITY, "Thread", NULL, 0}, {"Wakee", KA_WAKEE, KT_ENTITY, "Thread", NULL, 0}, A_END}},
    {KR_SYSCALL, "kernel_syscall", "Syscall", 1, KP_SYS_ENTER | KP_SYS_EXIT, 0,
     {A_THREAD("Thread"), {"Call", KA_CALL, KT_STRING, NULL, NULL, 0}, A_END}},
    {KR_BLOCKIO, "kernel_blockio", "BlockIo", 1, KP_RQ_ISSUE | KP_RQ_COMPLETE, 0,
     {A_THREAD("Thread"),
      {"Device", KA_DEVICE, KT_STRING, NULL, NULL, 0},
      {"Operation", KA_OPERATION, KT_ENUM, NULL, opValues, 5},
      {"Sector", KA_SECTOR, KT_INT, NULL, NULL, 0},
      {"Bytes", KA_BYTES, KT_INT, NULL, NULL, 0},
      A_END}},
    {KR_SEND, "kernel_send", "Send", 0, KP_SEND, 0,
     {A_THREAD("Thread"),
      {"Socket", KA_SOCKET, KT_INT, NULL, NULL, 0},
      {"Family", KA_FAMILY, KT_ENUM, NULL, familyValues, 5},
      {"Bytes", KA_BYTES, KT_INT, NULL, NULL, 0},
      A_END}},
    {KR_RECEIVE, "kernel_receive", "Receive", 0, KP_RECV, 0,
     {A_THREAD("Thread"),
      {"Socket", KA_SOCKET, KT_INT, NULL, NULL, 0},
      {"Family", KA_FAMILY, KT_ENUM, NULL, familyValues, 5},
      {"Bytes", KA_BYTES, KT_INT, NULL, NULL, 0},
      A_END}},
    {KR_THREAD, "kernel_thread", "Thread", 2, KP_LIFE, 0,
     {A_THREAD("Thread"), {"Process", KA_PROCESS, KT_INT, NULL, NULL, 0}, {"Command", KA_COMMAND, KT_STRING, NULL, NULL, 0},
      A_END}},
    {KR_PROCESSOR, "kernel_processor", "Processor", 2, 0, 0, {{"Processor", KA_PROCESSOR, KT_ENTITY, "Processor", NULL, 0}, A_END}},
};

void ksbTpList(unsigned progs, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < KP_NPROG && k < n; i++)
    if (progs & (1u << i)) k += (size_t)snprintf(buf + k, n - k, "%s%s:%s", k ? ", " : "", ksbProgTp[i][0], ksbProgTp[i][1]);
}

int64_t ksbNumber(const char *s) {
  if (!s || !*s || strlen(s) > 10) return -1;
  int64_t v = 0;
  for (; *s; s++) {
    if (!isdigit((unsigned char)*s)) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

#ifndef TQ_KERNEL_NO_BPF
#define NCALLS (sizeof ksSyscallNames / sizeof ksSyscallNames[0])
#define CALLNAME(nr) ((nr) < NCALLS ? ksSyscallNames[nr] : NULL)
#else
#define CALLNAME(nr) ((void)(nr), (const char *)NULL)
#endif

const char *ksbCallName(uint32_t nr, char *buf, size_t n) {
  const char *c = CALLNAME(nr);
  if (c) snprintf(buf, n, "%s", c);
  else snprintf(buf, n, "syscall_%u", nr);
  return buf;
}

int64_t ksbCallNr(const char *name) {
  if (!name) return -1;
#ifndef TQ_KERNEL_NO_BPF
  for (size_t k = 0; k < NCALLS; k++)
    if (ksSyscallNames[k] && !strcmp(ksSyscallNames[k], name)) return (int64_t)k;
#endif
  /* exactly the name ksbCallName gives ("syscall_0335" and "syscall_+335"
  ** name no call: the engine compares names) */
  if (strncmp(name, "syscall_", 8)) return -1;
  int64_t nr = ksbNumber(name + 8);
  if (nr < 0 || nr > UINT32_MAX || CALLNAME((uint64_t)nr)) return -1;
  char b[32];
  snprintf(b, sizeof b, "syscall_%lld", (long long)nr);
  return strcmp(b, name) ? -1 : nr;
}

KsVal ksbValue(int kr, int what, const struct ks_rec *r, const char *name) {
  KsVal v = {0, 0, NULL};
  switch (what) {
    case KA_THREAD:
    case KA_CHILD:
    case KA_WAKEE: v.tag = KV_THREAD, v.i = r->tid; break;
    case KA_PARENT:
    case KA_WAKER: v.tag = KV_THREAD, v.i = r->a32; break;
    case KA_PROCESSOR: v.tag = KV_CPU, v.i = r->cpu; break;
    case KA_FILE:
    case KA_DEVICE: v.tag = KV_STRING, v.s = name ? name : ""; break;
    case KA_CODE: {
      int64_t c = r->a64;
      v.tag = KV_INT;
      v.i = (c & 0x7f) ? -(c & 0x7f) : (c >> 8) & 0xff; /* the status, or minus the signal */
      break;
    }
    case KA_STATE: v.tag = KV_ENUM, v.i = r->a32 < 4 ? r->a32 : KB_OTHER; break;
    case KA_CALL: v.tag = KV_CALL, v.i = r->a32; break;
    case KA_OPERATION: v.tag = KV_ENUM, v.i = r->a32 < 5 ? r->a32 : KI_OTHER; break;
    case KA_SECTOR: v.tag = KV_INT, v.i = r->a64; break;
    case KA_BYTES: v.tag = KV_INT, v.i = kr == KR_BLOCKIO ? r->b64 : r->a64; break;
    case KA_SOCKET: v.tag = KV_INT, v.i = r->b64; break;
    case KA_FAMILY: {
      uint32_t f = r->a32;
      v.tag = KV_ENUM;
      v.i = f == 1 ? 0 : f == 2 ? 1 : f == 10 ? 2 : f == 16 ? 3 : 4;
      break;
    }
    default: break;
  }
  return v;
}

int ksbThreads(void (*fn)(void *ctx, uint32_t tid, uint32_t tgid, const char *comm), void *ctx) {
  DIR *d = opendir("/proc");
  if (!d) return -1;
  struct dirent *de;
  while ((de = readdir(d))) {
    int64_t pid = ksbNumber(de->d_name);
    if (pid < 0) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%lld/task", (long long)pid);
    DIR *t = opendir(path);
    if (!t) continue; /* gone */
    struct dirent *te;
    while ((te = readdir(t))) {
      int64_t tid = ksbNumber(te->d_name);
      if (tid <= 0) continue;
      char sp[96], buf[512];
      snprintf(sp, sizeof sp, "/proc/%lld/task/%lld/stat", (long long)pid, (long long)tid);
      int fd = open(sp, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n = read(fd, buf, sizeof buf - 1);
      close(fd);
      if (n <= 0) continue;
      buf[n] = 0;
      char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
      if (!lp || !rp || rp < lp || !rp[1] || !rp[2]) continue;
      char st = rp[2];
      if (st == 'Z' || st == 'X' || st == 'x') continue;
      char comm[KS_COMM] = "";
      size_t k = (size_t)(rp - lp - 1);
      if (k >= sizeof comm) k = sizeof comm - 1;
      memcpy(comm, lp + 1, k);
      fn(ctx, (uint32_t)tid, (uint32_t)pid, comm);
    }
    closedir(t);
  }
  closedir(d);
  return 0;
}

int ksbCpus(uint32_t *cpus, int max) {
  FILE *f = fopen("/sys/devices/system/cpu/online", "re");
  char line[512];
  if (!f || !fgets(line, sizeof line, f)) {
    if (f) fclose(f);
    return -1;
  }
  fclose(f);
  int n = 0;
  for (char *q = line; *q && *q != '\n';) {
    char *e;
    long a = strtol(q, &e, 10), b = a;
    if (e == q) break;
    if (*e == '-') b = strtol(e + 1, &e, 10);
    for (long c = a; c <= b && n < max; c++) cpus[n++] = (uint32_t)c;
    q = *e == ',' ? e + 1 : e;
  }
  return n;
}

#ifndef TQ_KERNEL_NO_BPF

/* ================================================================ loading */

static char bpfLog[512];
static int bpfPrint(enum libbpf_print_level level, const char *fmt, va_list ap) {
  char line[512];
  va_list cp;
  va_copy(cp, ap);
  if (getenv("TQMON_BPF_DEBUG")) vfprintf(stderr, fmt, cp);
  va_end(cp);
  vsnprintf(line, sizeof line, fmt, ap);
  if (level == LIBBPF_DEBUG || bpfLog[0]) return 0;
  size_t k = strlen(line);
  while (k && line[k - 1] == '\n') line[--k] = 0;
  snprintf(bpfLog, sizeof bpfLog, "%s", line);
  return 0;
}

const char *ksbLog(void) { return bpfLog; }

static struct bpf_program *progOf(struct ks_bpf *k, int i) {
  struct bpf_program *const all[KP_NPROG] = {
      k->progs.ks_fork,     k->progs.ks_exec,      k->progs.ks_exit,       k->progs.ks_rename,
      k->progs.ks_switch,   k->progs.ks_waking,    k->progs.ks_wakeup_new, k->progs.ks_sys_enter,
      k->progs.ks_sys_exit, k->progs.ks_rq_issue,  k->progs.ks_rq_complete, k->progs.ks_send,
      k->progs.ks_recv,     k->progs.ks_wakeup,    k->progs.ks_fe_sys,     k->progs.ks_fx_sys,
      k->progs.ks_fe_sys32, k->progs.ks_fx_sys32};
  return all[i];
}

/* The flag arrays cover every thread id: pid_max (1024 to 4194304). */
static uint32_t pidMax(void) {
  long v = 32768;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
  if (f) {
    if (fscanf(f, "%ld", &v) != 1) v = 32768;
    fclose(f);
  }
  if (v < 1024) v = 1024;
  if (v > 4194304) v = 4194304;
  return (uint32_t)v;
}

int ksbLoad(KsBpf *b, unsigned progs, uint32_t attachedRels, uint32_t ringBytes, char *why, size_t n) {
  libbpf_print_fn_t old = libbpf_set_print(bpfPrint);
  bpfLog[0] = 0;
  int rc = -1;
  int ncpu = libbpf_num_possible_cpus();
  b->ncpu = ncpu > 0 ? ncpu : 1;
  b->skel = ks_bpf__open();
  if (!b->skel) {
    snprintf(why, n, "cannot open the BPF object: %s", bpfLog[0] ? bpfLog : strerror(errno));
    goto out;
  }
  struct bpf_program *p;
  bpf_object__for_each_program(p, b->skel->obj) bpf_program__set_autoload(p, false);
  for (int i = 0; i < KP_NPROG; i++)
    if (progs & (1u << i)) bpf_program__set_autoload(progOf(b->skel, i), true);
  b->skel->rodata->use_tai = b->useTai;
  b->skel->rodata->attached = attachedRels;
  b->nflags = pidMax();
  if (bpf_map__set_max_entries(b->skel->maps.flags, b->nflags) ||
      bpf_map__set_max_entries(b->skel->maps.wakets, b->nflags) ||
      bpf_map__set_max_entries(b->skel->maps.sysbeg, b->nflags) || bpf_map__set_max_entries(b->skel->maps.ring, ringBytes)) {
    snprintf(why, n, "cannot size the BPF maps: %s", bpfLog);
    goto out;
  }
  if (ks_bpf__load(b->skel)) {
    snprintf(why, n, "the kernel refused the BPF programs: %s", bpfLog[0] ? bpfLog : strerror(errno));
    rc = -2;
    goto out;
  }
  long page = sysconf(_SC_PAGESIZE);
  b->flagsBytes = ((size_t)b->nflags * sizeof(uint64_t) + (size_t)page - 1) / (size_t)page * (size_t)page;
  void *m = mmap(NULL, b->flagsBytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(b->skel->maps.flags), 0);
  if (m == MAP_FAILED) {
    snprintf(why, n, "cannot map the enable flags: %s", strerror(errno));
    goto out;
  }
  b->flags = m;
  b->sysbegBytes = ((size_t)b->nflags * sizeof(struct ks_sysbeg) + (size_t)page - 1) / (size_t)page * (size_t)page;
  m = mmap(NULL, b->sysbegBytes, PROT_READ, MAP_SHARED, bpf_map__fd(b->skel->maps.sysbeg), 0);
  if (m == MAP_FAILED) {
    snprintf(why, n, "cannot map the system calls' begins: %s", strerror(errno));
    goto out;
  }
  b->sysbeg = m;
  rc = 0;
out:
  libbpf_set_print(old);
  if (rc) {
    int tai = b->useTai;
    ksbFree(b);
    b->useTai = tai;
  }
  return rc;
}

int ksbRings(KsBpf *b, int (*fn)(void *ctx, void *data, size_t size), void *ctx, char *why, size_t n) {
  libbpf_print_fn_t old = libbpf_set_print(bpfPrint);
  bpfLog[0] = 0;
  b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.ring), fn, ctx, NULL);
  int rc = !b->rb || ring_buffer__add(b->rb, bpf_map__fd(b->skel->maps.life), fn, ctx) ? -1 : 0;
  if (rc) snprintf(why, n, "cannot open the ring buffers: %s", bpfLog[0] ? bpfLog : strerror(errno));
  libbpf_set_print(old);
  return rc;
}

int ksbAttach(KsBpf *b, int i, char *why, size_t n) {
  if (b->links[i]) return 0;
  libbpf_print_fn_t old = libbpf_set_print(bpfPrint);
  bpfLog[0] = 0;
  b->links[i] = bpf_program__attach(progOf(b->skel, i));
  if (!b->links[i])
    snprintf(why, n, "cannot attach to %s %s:%s: %s%s", (1u << i) & KP_SYS_FE ? "the function" : "the tracepoint",
             ksbProgTp[i][0], ksbProgTp[i][1], bpfLog[0] ? bpfLog : strerror(errno),
             (1u << i) & KP_SYS_FE ? " (--pm kernel=syscalls=tracepoint traces system calls on raw_syscalls)" : "");
  libbpf_set_print(old);
  return b->links[i] ? 0 : -1;
}

void ksbDetach(KsBpf *b, int i) {
  if (b->links[i]) bpf_link__destroy(b->links[i]);
  b->links[i] = NULL;
}

void ksbFree(KsBpf *b) {
  for (int i = 0; i < KP_NPROG; i++) ksbDetach(b, i);
  if (b->rb) ring_buffer__free(b->rb);
  if (b->flags) munmap(b->flags, b->flagsBytes);
  if (b->sysbeg) munmap(b->sysbeg, b->sysbegBytes);
  if (b->skel) ks_bpf__destroy(b->skel);
  memset(b, 0, sizeof *b);
}

/* Tracepoints a test asks to treat as missing (TQMON_KERNEL_HIDE, names
** separated by commas): the path of a kernel without them. */
static int hidden(const char *tp) {
  const char *h = getenv("TQMON_KERNEL_HIDE");
  size_t n = strlen(tp);
  for (const char *p = h; p && *p;) {
    const char *e = strchr(p, ',');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == n && !strncmp(p, tp, n)) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

const char *ksbMissingTp(const struct btf *vm, unsigned progs) {
  for (int i = 0; i < KP_NPROG; i++) {
    if (!(progs & (1u << i))) continue;
    char name[96];
    snprintf(name, sizeof name, "btf_trace_%s", ksbProgTp[i][1]);
    if (hidden(ksbProgTp[i][1]) || (vm && btf__find_by_name_kind(vm, name, BTF_KIND_TYPEDEF) < 0)) return ksbProgTp[i][1];
  }
  return NULL;
}

/* Can a program attach with fentry to function fn of the running kernel?
** 0, or -1 with the reason in why: loads a program that returns at once,
** attaches it and closes both.  (TQMON_KERNEL_HIDE=fn: a test's path of
** a kernel that refuses.) */
static int fentryOk(const struct btf *vm, const char *fn, char *why, size_t n) {
  int id = vm ? btf__find_by_name_kind(vm, fn, BTF_KIND_FUNC) : -1;
  if (hidden(fn)) {
    snprintf(why, n, "fentry on %s: hidden (TQMON_KERNEL_HIDE)", fn);
    return -1;
  }
  if (id < 0) {
    snprintf(why, n, "the kernel has no function %s (Linux 6.9 on x86-64 has)", fn);
    return -1;
  }
  const struct bpf_insn ret0[2] = {{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
                                   {.code = BPF_JMP | BPF_EXIT}};
  LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY, .attach_btf_id = (uint32_t)id);
  int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "tqmon_probe", "GPL", ret0, 2, &o);
  if (fd < 0) {
    snprintf(why, n, "fentry on %s: the kernel refused the program: %s", fn, strerror(-fd));
    return -1;
  }
  int l = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, NULL);
  close(fd);
  if (l < 0) {
    snprintf(why, n, "fentry on %s: cannot attach: %s", fn, strerror(-l));
    return -1;
  }
  close(l);
  return 0;
}

unsigned ksbSysHook(const struct btf *vm, int want, char *why, size_t n) {
  if (want == 2) {
    snprintf(why, n, "--pm kernel=syscalls=tracepoint");
    return KP_SYS_TP;
  }
  if (fentryOk(vm, "x64_sys_call", why, n)) return KP_SYS_TP;
  if (vm && btf__find_by_name_kind(vm, "ia32_sys_call", BTF_KIND_FUNC) < 0) {
    why[0] = 0;
    return KP_FE_SYS | KP_FX_SYS; /* (no 32-bit system calls) */
  }
  if (fentryOk(vm, "ia32_sys_call", why, n)) return KP_SYS_TP; /* (the 32-bit calls too, or none) */
  why[0] = 0;
  return KP_SYS_FE;
}

int ksbHaveTai(const struct btf *vm) {
  if (!vm) return 0;
  int id = btf__find_by_name_kind(vm, "bpf_func_id", BTF_KIND_ENUM);
  if (id < 0) return 0;
  const struct btf_type *t = btf__type_by_id(vm, (uint32_t)id);
  const struct btf_enum *e = btf_enum(t);
  for (int i = 0; i < btf_vlen(t); i++)
    if (!strcmp(btf__name_by_offset(vm, e[i].name_off), "BPF_FUNC_ktime_get_tai_ns")) return 1;
  return 0;
}

static int64_t clockNs(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t ksbClockOffset(int useTai) {
  int64_t best = 0, bestGap = INT64_MAX;
  for (int i = 0; i < 3; i++) {
    int64_t a = clockNs(CLOCK_REALTIME), k = clockNs(useTai ? CLOCK_TAI : CLOCK_BOOTTIME), b = clockNs(CLOCK_REALTIME);
    if (b - a < bestGap) {
      bestGap = b - a;
      best = k - a - (b - a) / 2;
    }
  }
  if (useTai) best = (best + (best >= 0 ? 500000000LL : -500000000LL)) / 1000000000LL * 1000000000LL;
  return best;
}

int ksbCounters(KsBpf *b, uint64_t *out) {
  memset(out, 0, sizeof(uint64_t) * KS_NCOUNTERS);
  if (!b->skel) return -1;
  int fd = bpf_map__fd(b->skel->maps.counters);
  uint64_t *vals = calloc((size_t)b->ncpu, sizeof(uint64_t));
  if (!vals) return -1;
  for (uint32_t k = 0; k < KS_NCOUNTERS; k++) {
    if (bpf_map_lookup_elem(fd, &k, vals)) continue;
    for (int c = 0; c < b->ncpu; c++) out[k] += vals[c];
  }
  free(vals);
  return 0;
}

int ksbClaim(KsBpf *b, uint32_t tid, int64_t off, int64_t upto, struct ks_sysbeg *got) {
  if (!b->flags || !b->sysbeg || !tid || tid >= b->nflags) return 0;
  uint64_t w = __atomic_load_n(&b->flags[tid], __ATOMIC_ACQUIRE);
  for (;;) {
    if (!(w & KS_PEND_SYSCALL)) return 0;
    struct ks_sysbeg sb;
    memcpy(&sb, (const void *)&b->sysbeg[tid], sizeof sb);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if ((int64_t)sb.t - off > upto) return 0; /* (a later pass's) */
    uint64_t nw = (w & ~(uint64_t)KS_PEND_SYSCALL) | KS_OPEN_SYSCALL;
    if (__atomic_compare_exchange_n(&b->flags[tid], &w, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      *got = sb;
      return 1;
    }
    /* another bit changed (an enable), the same call still pending: again;
    ** else the call returned (its span is in the ring) or a later one began */
    if (!((w & KS_PEND_SYSCALL) && (w >> 32) == (nw >> 32))) return -1;
  }
}

void ksbFlags(KsBpf *b, uint32_t tid, uint64_t bits, int on) {
  if (!b->flags || !tid || tid >= b->nflags) return;
  if (on) __atomic_fetch_or(&b->flags[tid], bits, __ATOMIC_RELAXED);
  else __atomic_fetch_and(&b->flags[tid], ~bits, __ATOMIC_RELAXED);
}

#endif
