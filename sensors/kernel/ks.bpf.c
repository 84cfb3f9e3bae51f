/*
** ks.bpf.c - the kernel sensors: BPF programs on scheduler, system call,
** block and socket tracepoints (BTF-typed, tp_btf), compiled once with
** clang and relocated by libbpf against the running kernel's BTF (CO-RE).
** sensors/kernel.c loads only the programs the queries need and attaches
** them; sensors/kernel.md says which tracepoint makes which relation.
**
** Every program first looks up the enable flag of the thread the packet is
** about (flags[tid], one bit per relation: the paper's enable flag) and
** writes to the ring buffer only when it is set: events of threads no query
** enabled never leave the kernel.  The lifecycle (fork, exec, exit, rename)
** is always written: it makes the entity relation Thread, which is always
** enabled.  Per-CPU counters count, per relation, the firings seen, the
** packets written, those dropped because the ring buffer was full, and the
** ends whose begin was not written.
*/
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

typedef __u8 uint8_t;
typedef __u16 uint16_t;
typedef __u32 uint32_t;
typedef __u64 uint64_t;
typedef __s64 int64_t;
#include "ks.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before loading (read-only data: the verifier prunes
** the branches they rule out). */
const volatile int use_tai = 0;     /* bpf_ktime_get_tai_ns exists */
const volatile uint32_t attached = 0; /* relations whose programs are loaded (bits KR_*) */

/* The packets of the traced relations, and apart (so that a flood of
** those never loses a thread's birth or death) the lifecycle's. */
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24); /* user space sets the size */
} ring SEC(".maps");
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} life SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, uint64_t); /* (array elements are 8-byte aligned: user space maps them so) */
  __uint(max_entries, 32768); /* user space sets it to pid_max */
} flags SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __type(key, uint32_t);
  __type(value, uint64_t);
  __uint(max_entries, KS_NCOUNTERS);
} counters SEC(".maps");

/* The time of the last wakeup (sched_waking) of a thread whose Ready or
** Blocked sensor is on: its Ready interval begins then, at the time of its
** Woke event, although the scheduler puts it on a run queue a little
** later (sched_wakeup). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, uint32_t);
  __type(value, uint64_t);
  __uint(max_entries, 32768); /* user space sets it to pid_max */
} wakets SEC(".maps");

/* The begin of each thread's open system call (KS_PEND_SYSCALL): written
** at entry, shipped with the end in one packet at return, or claimed by
** user space (mmapped) when the call is still open at a snapshot. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, uint32_t);
  __type(value, struct ks_sysbeg);
  __uint(max_entries, 32768); /* user space sets it to pid_max */
} sysbeg SEC(".maps");

/* The relations' filters (rule SF), indexed by KR_*. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __type(key, uint32_t);
  __type(value, struct ks_filter);
  __uint(max_entries, KS_NREL);
} filters SEC(".maps");

/* Block requests issued by an enabled thread, until they complete. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, uint64_t);   /* the request's address */
  __type(value, uint32_t); /* the issuing thread */
  __uint(max_entries, 16384);
} ios SEC(".maps");

static __always_inline uint64_t now(void) { return use_tai ? bpf_ktime_get_tai_ns() : bpf_ktime_get_boot_ns(); }

static __always_inline void count(int rel, int what) {
  uint32_t k = (uint32_t)(rel * KS_NCNT + what);
  uint64_t *c = bpf_map_lookup_elem(&counters, &k);
  if (c) (*c)++;
}

/* The flag word of thread tid, or NULL (tid 0, the idle tasks, is no
** thread; a tid past the array is counted). */
static __always_inline uint64_t *flagsOf(uint32_t tid) {
  if (!tid) return NULL;
  uint64_t *f = bpf_map_lookup_elem(&flags, &tid);
  if (!f) {
    uint32_t k = KS_CNT_GLOBAL + KG_BEYOND;
    uint64_t *c = bpf_map_lookup_elem(&counters, &k);
    if (c) (*c)++;
  }
  return f;
}

static __always_inline int on(uint32_t f, int rel) { return (f >> rel) & 1; }

/* A packet of relation rel: reserved, stamped, or NULL (counted dropped). */
static __always_inline struct ks_rec *reserve(int rel, int op, uint32_t tid, uint64_t size) {
  struct ks_rec *r = bpf_ringbuf_reserve(rel == KR_THREAD ? (void *)&life : (void *)&ring, size, 0);
  if (!r) {
    count(rel, KC_DROPPED);
    return NULL;
  }
  r->t = now();
  r->rel = (uint16_t)rel;
  r->op = (uint16_t)op;
  r->tid = tid;
  r->tgid = 0;
  r->cpu = bpf_get_smp_processor_id();
  r->a32 = r->b32 = 0;
  r->a64 = r->b64 = 0;
  return r;
}

/* Send/Receive's Family of an address family (KF_FAMILY). */
static __always_inline int64_t familyClass(uint32_t f) { return f == 1 ? 0 : f == 2 ? 1 : f == 10 ? 2 : f == 16 ? 3 : 4; }

/* Do the fields of a packet (thread tid on CPU cpu, a32, a64, b64) pass
** relation rel's filter (rule SF)?  Counts it when not. */
static __always_inline int passV(int rel, uint32_t tid, uint32_t cpu, uint32_t a32, int64_t a64, int64_t b64) {
  uint32_t k = (uint32_t)rel;
  const struct ks_filter *f = bpf_map_lookup_elem(&filters, &k);
  if (!f || !f->n) return 1;
  uint32_t groups = 0, failed = 0;
  for (int i = 0; i < KS_NCOND; i++) {
    if ((uint32_t)i >= f->n) break;
    const struct ks_cond *c = &f->c[i];
    int64_t v;
    switch (c->field) {
      case KF_A32: v = (int64_t)a32; break;
      case KF_A64: v = a64; break;
      case KF_B64: v = b64; break;
      case KF_TID: v = (int64_t)tid; break;
      case KF_CPU: v = (int64_t)cpu; break;
      default: v = familyClass(a32); break;
    }
    int ok;
    switch (c->op) {
      case 1: ok = v == c->val; break;
      case 2: ok = v != c->val; break;
      case 3: ok = v < c->val; break;
      case 4: ok = v <= c->val; break;
      case 5: ok = v > c->val; break;
      case 6: ok = v >= c->val; break;
      default: ok = v >= 0 && v < 64 && ((uint64_t)c->val >> v & 1); break; /* KS_OP_IN */
    }
    uint32_t bit = 1u << (c->group & 7);
    groups |= bit;
    if (!ok) failed |= bit;
  }
  if (groups & ~failed) return 1;
  count(rel, KC_SUPPRESSED);
  return 0;
}
static __always_inline int pass(int rel, const struct ks_rec *r) { return passV(rel, r->tid, r->cpu, r->a32, r->a64, r->b64); }

/* (No wakeup: user space drains every few milliseconds; a wakeup each
** time the ring goes from empty to not would cost the traced thread an
** interrupt-work request.) */
static __always_inline void submit(struct ks_rec *r, int rel) {
  bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
  count(rel, KC_WRITTEN);
}

/* Writes a BEGIN or END of rel for thread tid at time t (0: now); 1 if
** written. */
static __always_inline int ivPacketAt(int rel, int op, uint32_t tid, uint32_t cpu, uint32_t a32, int64_t a64,
                                      uint64_t t) {
  struct ks_rec *r = reserve(rel, op, tid, sizeof(struct ks_rec));
  if (!r) return 0;
  if (t) r->t = t;
  r->a32 = a32;
  r->a64 = a64;
  if (cpu != (uint32_t)-1) r->cpu = cpu;
  submit(r, rel);
  return 1;
}
static __always_inline int ivPacket(int rel, int op, uint32_t tid, uint32_t cpu, uint32_t a32, int64_t a64) {
  return ivPacketAt(rel, op, tid, cpu, a32, a64, 0);
}

/* ================================================================ lifecycle */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ks_fork, struct task_struct *parent, struct task_struct *child) {
  uint32_t ptid = BPF_CORE_READ(parent, pid), ctid = BPF_CORE_READ(child, pid);
  uint64_t *pf = flagsOf(ptid), *cf = flagsOf(ctid);
  /* until user space has seen the new thread begin, it has its creator's
  ** flags (the threads of a process a query watches are born watched);
  ** user space takes back what the queries do not confirm */
  uint32_t inherit = pf ? ((uint32_t)*pf & KS_ENABLE_MASK) : 0;
  /* the new thread starts with no open interval */
  if (cf) *cf = (*cf & KS_ENABLE_MASK) | inherit;
  count(KR_THREAD, KC_SEEN);
  uint32_t pfl = pf ? (uint32_t)*pf : 0;
  if (on(pfl, KR_FORK)) count(KR_FORK, KC_SEEN);
  struct ks_rec *r = reserve(KR_THREAD, KO_FORK, ctid, sizeof(struct ks_rec));
  if (!r) return 0;
  r->tgid = BPF_CORE_READ(child, tgid);
  r->a32 = ptid;
  r->b32 = inherit;
  r->a64 = pfl; /* the creator's flags: its Fork sensor */
  BPF_CORE_READ_STR_INTO(&r->comm, child, comm);
  submit(r, KR_THREAD);
  if (on(pfl, KR_FORK)) count(KR_FORK, KC_WRITTEN);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ks_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) {
  uint32_t tid = BPF_CORE_READ(p, pid);
  uint64_t *f = flagsOf(tid), *of = (uint32_t)old_pid != tid ? flagsOf((uint32_t)old_pid) : NULL;
  uint32_t fl = f ? (uint32_t)*f : 0;
  if (of) {
    /* a thread other than the leader executed: it takes the leader's id,
    ** with its open intervals; its pending system call (the execve) is
    ** begun under its old id (which ends here) and ends under the new */
    uint32_t ofl = (uint32_t)__sync_fetch_and_and(of, (uint64_t)KS_ENABLE_MASK);
    fl = (fl & KS_ENABLE_MASK) | (ofl & (KS_OPEN_MASK | KS_SKIP_MASK));
    if (ofl & KS_PEND_SYSCALL) {
      uint32_t otid = (uint32_t)old_pid;
      struct ks_sysbeg *ob = bpf_map_lookup_elem(&sysbeg, &otid);
      if (ob) ivPacketAt(KR_SYSCALL, KO_BEGIN, otid, ob->cpu, ob->nr, 0, ob->t);
      fl |= KS_OPEN_SYSCALL;
    }
    if (f) *f = fl;
  }
  count(KR_THREAD, KC_SEEN);
  if (on(fl, KR_EXEC)) count(KR_EXEC, KC_SEEN);
  struct ks_rec_name *n = (struct ks_rec_name *)reserve(KR_THREAD, KO_EXEC, tid, sizeof(struct ks_rec_name));
  if (!n) return 0;
  n->r.tgid = BPF_CORE_READ(p, tgid);
  n->r.a32 = (uint32_t)old_pid;
  n->r.b32 = fl;
  BPF_CORE_READ_STR_INTO(&n->r.comm, p, comm);
  const char *file = BPF_CORE_READ(bprm, filename);
  if (bpf_probe_read_kernel_str(n->name, sizeof n->name, file) < 0) n->name[0] = 0;
  submit(&n->r, KR_THREAD);
  if (on(fl, KR_EXEC)) count(KR_EXEC, KC_WRITTEN);
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ks_exit, struct task_struct *p) {
  uint32_t tid = BPF_CORE_READ(p, pid);
  uint64_t *f = flagsOf(tid);
  uint32_t fl = f ? (uint32_t)*f : 0;
  /* its system call never returns, and it is neither ready nor blocked;
  ** its RunningOn ends at its last switch */
  uint64_t old = f ? __sync_fetch_and_and(f, (uint64_t)(KS_ENABLE_MASK | KS_OPEN_RUN | KS_SKIP_RUN)) : 0;
  if (old & KS_PEND_SYSCALL) {
    /* (exit, exit_group): its begin is written now; it ends at the
    ** thread's exit */
    struct ks_sysbeg *b = bpf_map_lookup_elem(&sysbeg, &tid);
    if (b) ivPacketAt(KR_SYSCALL, KO_BEGIN, tid, b->cpu, b->nr, 0, b->t);
  }
  count(KR_THREAD, KC_SEEN);
  if (on(fl, KR_EXIT)) count(KR_EXIT, KC_SEEN);
  struct ks_rec *r = reserve(KR_THREAD, KO_EXIT, tid, sizeof(struct ks_rec));
  if (!r) return 0;
  r->tgid = BPF_CORE_READ(p, tgid);
  r->b32 = fl;
  r->a64 = BPF_CORE_READ(p, exit_code);
  submit(r, KR_THREAD);
  if (on(fl, KR_EXIT)) count(KR_EXIT, KC_WRITTEN);
  return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(ks_rename, struct task_struct *task, const char *comm) {
  uint32_t tid = BPF_CORE_READ(task, pid);
  count(KR_THREAD, KC_SEEN);
  struct ks_rec *r = reserve(KR_THREAD, KO_RENAME, tid, sizeof(struct ks_rec));
  if (!r) return 0;
  r->tgid = BPF_CORE_READ(task, tgid);
  if (bpf_probe_read_kernel_str(r->comm, sizeof r->comm, comm) < 0) r->comm[0] = 0;
  submit(r, KR_THREAD);
  return 0;
}

/* ================================================================ scheduler */

/* The bit that says a BEGIN of interval rel failed its filter (no END
** is written either). */
static __always_inline uint32_t skipBit(int rel) {
  return rel == KR_RUNNINGON ? KS_SKIP_RUN : rel == KR_READY ? KS_SKIP_READY : KS_SKIP_BLOCKED;
}

/* Ends interval rel of thread tid if its BEGIN was written (open bit),
** else counts an end whose begin was not written when the thread is
** enabled (and the begin did not fail the filter). */
static __always_inline void ivEndAt(uint64_t *f, uint32_t fl, int rel, uint32_t bit, uint32_t tid, uint64_t t) {
  if (fl & bit) {
    __sync_fetch_and_and(f, ~(uint64_t)bit);
    ivPacketAt(rel, KO_END, tid, (uint32_t)-1, 0, 0, t);
  } else if (fl & skipBit(rel)) {
    __sync_fetch_and_and(f, ~(uint64_t)skipBit(rel));
  } else if (on(fl, rel)) {
    count(rel, KC_UNBEGUN);
  }
}

static __always_inline void ivEnd(uint64_t *f, uint32_t fl, int rel, uint32_t bit, uint32_t tid) {
  ivEndAt(f, fl, rel, bit, tid, 0);
}

/* Begins interval rel of thread tid at t (0: now) when its flag is on and
** the begin passes rel's filter (rule SF; else it says so in the flag
** word, so that its end is not counted as one whose begin is missing). */
static __always_inline void ivBeginAt(uint64_t *f, uint32_t fl, int rel, uint32_t bit, uint32_t tid, uint32_t a32,
                                      int64_t a64, uint64_t t) {
  count(rel, KC_SEEN);
  if (!on(fl, rel) || (fl & bit)) return;
  uint32_t skip = skipBit(rel);
  if (!passV(rel, tid, bpf_get_smp_processor_id(), a32, a64, 0)) {
    if (!(fl & skip)) __sync_fetch_and_or(f, (uint64_t)skip);
    return;
  }
  if (fl & skip) __sync_fetch_and_and(f, ~(uint64_t)skip);
  if (ivPacketAt(rel, KO_BEGIN, tid, (uint32_t)-1, a32, a64, t)) __sync_fetch_and_or(f, (uint64_t)bit);
}
static __always_inline void ivBegin(uint64_t *f, uint32_t fl, int rel, uint32_t bit, uint32_t tid, uint32_t a32,
                                    int64_t a64) {
  ivBeginAt(f, fl, rel, bit, tid, a32, a64, 0);
}

static __always_inline uint32_t blockedState(unsigned int s) {
  if (s & 0x0001) return KB_SLEEPING;   /* TASK_INTERRUPTIBLE */
  if (s & 0x0002) return KB_DISKSLEEP;  /* TASK_UNINTERRUPTIBLE */
  if (s & 0x000c) return KB_STOPPED;    /* __TASK_STOPPED, __TASK_TRACED */
  return KB_OTHER;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ks_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) {
  uint32_t ptid = BPF_CORE_READ(prev, pid), ntid = BPF_CORE_READ(next, pid);
  uint64_t *pf = flagsOf(ptid), *nf = flagsOf(ntid);
  if (pf) {
    uint32_t fl = (uint32_t)*pf;
    if (prev_state & 0x80) { /* TASK_DEAD: the thread is gone for good */
      count(KR_THREAD, KC_SEEN);
      struct ks_rec *g = reserve(KR_THREAD, KO_GONE, ptid, sizeof(struct ks_rec));
      if (g) {
        g->tgid = BPF_CORE_READ(prev, tgid);
        submit(g, KR_THREAD);
      }
    }
    if (attached & (1u << KR_RUNNINGON)) {
      count(KR_RUNNINGON, KC_SEEN);
      ivEnd(pf, fl, KR_RUNNINGON, KS_OPEN_RUN, ptid);
    }
    int runnable = preempt || prev_state == 0; /* TASK_RUNNING: preempted, still ready */
    int dead = prev_state & 0x80;              /* TASK_DEAD: its last switch */
    if (runnable && !dead && (attached & (1u << KR_READY))) ivBegin(pf, fl, KR_READY, KS_OPEN_READY, ptid, 0, 0);
    if (!runnable && !dead && (attached & (1u << KR_BLOCKED)))
      ivBegin(pf, fl, KR_BLOCKED, KS_OPEN_BLOCKED, ptid, blockedState(prev_state), prev_state);
  }
  if (nf) {
    uint32_t fl = (uint32_t)*nf;
    if (attached & (1u << KR_READY)) ivEnd(nf, fl, KR_READY, KS_OPEN_READY, ntid);
    if ((attached & (1u << KR_BLOCKED)) && (fl & KS_OPEN_BLOCKED)) ivEnd(nf, fl, KR_BLOCKED, KS_OPEN_BLOCKED, ntid);
    if ((attached & (1u << KR_RUNNINGON)) && on(fl, KR_RUNNINGON) && !(fl & KS_OPEN_RUN)) {
      /* the switch runs on the CPU next runs on (its filter: the CPU, the thread) */
      if (!passV(KR_RUNNINGON, ntid, bpf_get_smp_processor_id(), 0, 0, 0)) {
        if (!(fl & KS_SKIP_RUN)) __sync_fetch_and_or(nf, (uint64_t)KS_SKIP_RUN);
      } else {
        if (fl & KS_SKIP_RUN) __sync_fetch_and_and(nf, ~(uint64_t)KS_SKIP_RUN);
        if (ivPacket(KR_RUNNINGON, KO_BEGIN, ntid, (uint32_t)-1, 0, 0)) __sync_fetch_and_or(nf, (uint64_t)KS_OPEN_RUN);
      }
    }
  }
  return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ks_waking, struct task_struct *p) {
  uint32_t tid = BPF_CORE_READ(p, pid);
  uint64_t *f = flagsOf(tid);
  if (attached & (1u << KR_WOKE)) count(KR_WOKE, KC_SEEN);
  if (!f) return 0;
  uint32_t fl = (uint32_t)*f;
  if (!(fl & (1u << KR_WOKE | 1u << KR_READY | 1u << KR_BLOCKED))) return 0;
  uint64_t t = now();
  if (fl & (1u << KR_READY | 1u << KR_BLOCKED)) {
    uint64_t *w = bpf_map_lookup_elem(&wakets, &tid);
    if (w) *w = t;
  }
  if (!on(fl, KR_WOKE)) return 0;
  uint32_t waker = (uint32_t)bpf_get_current_pid_tgid(); /* the thread running now */
  if (!passV(KR_WOKE, tid, bpf_get_smp_processor_id(), waker, 0, 0)) return 0;
  struct ks_rec *r = reserve(KR_WOKE, KO_EVENT, tid, sizeof(struct ks_rec));
  if (r) {
    r->t = t;
    r->a32 = waker;
    submit(r, KR_WOKE);
  }
  return 0;
}

/* The thread is on a run queue again: it is no longer blocked, and it is
** ready unless it never left its CPU (woken before it switched out). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(ks_wakeup, struct task_struct *p) {
  uint32_t tid = BPF_CORE_READ(p, pid);
  uint64_t *f = flagsOf(tid);
  if (!f) return 0;
  uint32_t fl = (uint32_t)*f;
  uint64_t t = 0, *w = bpf_map_lookup_elem(&wakets, &tid);
  if (w) {
    t = *w; /* its sched_waking, just before */
    *w = 0;
  }
  if ((attached & (1u << KR_BLOCKED)) && (fl & KS_OPEN_BLOCKED)) ivEndAt(f, fl, KR_BLOCKED, KS_OPEN_BLOCKED, tid, t);
  if ((attached & (1u << KR_READY)) && !BPF_CORE_READ(p, on_cpu))
    ivBeginAt(f, fl, KR_READY, KS_OPEN_READY, tid, 0, 0, t);
  return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(ks_wakeup_new, struct task_struct *p) {
  uint32_t tid = BPF_CORE_READ(p, pid);
  uint64_t *f = flagsOf(tid);
  if (f) ivBegin(f, (uint32_t)*f, KR_READY, KS_OPEN_READY, tid, 0, 0);
  return 0;
}

/* ================================================================ system calls */

/* A system call whose begin was pending (never written): its begin and
** end in one packet. */
static __always_inline void spanPacket(uint32_t tid, uint64_t tend, int64_t ret) {
  struct ks_sysbeg *b = bpf_map_lookup_elem(&sysbeg, &tid);
  if (!b) return;
  struct ks_span *r = bpf_ringbuf_reserve(&ring, sizeof(struct ks_span), 0);
  if (!r) {
    count(KR_SYSCALL, KC_DROPPED);
    count(KR_SYSCALL, KC_DROPPED); /* (its begin and its end) */
    return;
  }
  r->t = b->t;
  r->rel = KR_SYSCALL;
  r->op = KO_SPAN;
  r->tid = tid;
  r->tend = tend;
  r->ret = ret;
  r->nr = b->nr;
  r->cpu = b->cpu;
  bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
  count(KR_SYSCALL, KC_WRITTEN);
  count(KR_SYSCALL, KC_WRITTEN); /* (its begin and its end) */
}

/* Entry: the begin is kept in sysbeg[tid] (KS_PEND_SYSCALL), not written:
** the return writes begin and end in one packet, or user space claims it
** at a snapshot while the call is still open.  Half the packets of one
** each at entry and return, and nothing written at entry. */
static __always_inline int sysEnter(long id) {
  uint32_t tid = (uint32_t)bpf_get_current_pid_tgid();
  uint64_t *f = flagsOf(tid);
  count(KR_SYSCALL, KC_SEEN);
  if (!f) return 0;
  uint32_t fl = (uint32_t)*f;
  if (!on(fl, KR_SYSCALL)) return 0;
  if (fl & (KS_OPEN_SYSCALL | KS_PEND_SYSCALL | KS_SKIP_SYSCALL)) {
    /* the previous one never returned (a restarted call): it ends here */
    uint64_t old = __sync_fetch_and_and(f, ~(uint64_t)(KS_OPEN_SYSCALL | KS_PEND_SYSCALL | KS_SKIP_SYSCALL));
    if (old & KS_PEND_SYSCALL) spanPacket(tid, now(), 0);
    else if (old & KS_OPEN_SYSCALL) ivPacket(KR_SYSCALL, KO_END, tid, (uint32_t)-1, 0, 0);
  }
  if (!passV(KR_SYSCALL, tid, bpf_get_smp_processor_id(), (uint32_t)id, 0, 0)) {
    __sync_fetch_and_or(f, (uint64_t)KS_SKIP_SYSCALL);
    return 0;
  }
  struct ks_sysbeg *b = bpf_map_lookup_elem(&sysbeg, &tid);
  if (!b) return 0;
  b->t = now();
  b->nr = (uint32_t)id;
  b->cpu = bpf_get_smp_processor_id();
  /* (the bit is clear: only this thread sets it, and it cleared it) */
  __sync_fetch_and_add(f, KS_SEQ_ONE | KS_PEND_SYSCALL);
  return 0;
}

static __always_inline int sysExit(long ret) {
  uint32_t tid = (uint32_t)bpf_get_current_pid_tgid();
  uint64_t *f = flagsOf(tid);
  if (!f) return 0;
  uint32_t fl = (uint32_t)*f;
  if (fl & (KS_OPEN_SYSCALL | KS_PEND_SYSCALL)) {
    /* (user space may turn pending into open meanwhile: one atomic step
    ** says which it was) */
    uint64_t old = __sync_fetch_and_and(f, ~(uint64_t)(KS_OPEN_SYSCALL | KS_PEND_SYSCALL));
    if (old & KS_PEND_SYSCALL) spanPacket(tid, now(), ret);
    else if (old & KS_OPEN_SYSCALL) ivPacket(KR_SYSCALL, KO_END, tid, (uint32_t)-1, 0, ret);
  } else if (fl & KS_SKIP_SYSCALL) {
    __sync_fetch_and_and(f, ~(uint64_t)KS_SKIP_SYSCALL); /* its begin failed the filter */
  } else if (on(fl, KR_SYSCALL)) {
    count(KR_SYSCALL, KC_UNBEGUN);
  }
  return 0;
}

/* The hooks: the raw_syscalls tracepoints, or (sensors/kernel.c chooses,
** when the kernel lets it) fentry and fexit on the dispatchers of the
** 64-bit and the 32-bit (ia32) system calls (Linux 6.9 on x86).  A
** tracepoint on raw_syscalls makes every system call of every thread take
** the kernel's traced path and run both programs; fentry and fexit run
** only the programs, through a direct call.  The dispatchers are called
** for valid numbers only, after seccomp and ptrace: a call those refused,
** or one with a number the kernel does not have, is not seen there. */
SEC("tp_btf/sys_enter")
int BPF_PROG(ks_sys_enter, struct pt_regs *regs, long id) { return sysEnter(id); }

SEC("tp_btf/sys_exit")
int BPF_PROG(ks_sys_exit, struct pt_regs *regs, long ret) { return sysExit(ret); }

SEC("fentry/x64_sys_call")
int BPF_PROG(ks_fe_sys, const struct pt_regs *regs, unsigned int nr) { return sysEnter(nr); }

SEC("fexit/x64_sys_call")
int BPF_PROG(ks_fx_sys, const struct pt_regs *regs, unsigned int nr, long ret) { return sysExit(ret); }

SEC("fentry/ia32_sys_call")
int BPF_PROG(ks_fe_sys32, const struct pt_regs *regs, unsigned int nr) { return sysEnter(nr); }

SEC("fexit/ia32_sys_call")
int BPF_PROG(ks_fx_sys32, const struct pt_regs *regs, unsigned int nr, long ret) { return sysExit(ret); }

/* ================================================================ block I/O */

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ks_rq_issue, struct request *rq) {
  uint32_t tid = (uint32_t)bpf_get_current_pid_tgid();
  uint64_t *f = flagsOf(tid);
  count(KR_BLOCKIO, KC_SEEN);
  if (!f || !on((uint32_t)*f, KR_BLOCKIO)) return 0;
  uint64_t key = (uint64_t)rq;
  if (bpf_map_update_elem(&ios, &key, &tid, BPF_ANY)) {
    count(KR_BLOCKIO, KC_DROPPED); /* too many requests in flight */
    return 0;
  }
  struct ks_rec_dev *n = (struct ks_rec_dev *)reserve(KR_BLOCKIO, KO_BEGIN, tid, sizeof(struct ks_rec_dev));
  if (!n) {
    bpf_map_delete_elem(&ios, &key);
    return 0;
  }
  uint32_t opf = BPF_CORE_READ(rq, cmd_flags) & 0xff; /* REQ_OP_MASK */
  n->r.a32 = opf == 0 ? KI_READ : opf == 1 ? KI_WRITE : opf == 2 ? KI_FLUSH : opf == 3 ? KI_DISCARD : KI_OTHER;
  n->r.a64 = (int64_t)BPF_CORE_READ(rq, __sector);
  n->r.b64 = BPF_CORE_READ(rq, __data_len);
  n->r.b32 = (uint32_t)key; /* the request, low bits: matches its end */
  if (BPF_CORE_READ_STR_INTO(&n->name, rq, q, disk, disk_name) < 0) n->name[0] = 0;
  if (!pass(KR_BLOCKIO, &n->r)) {
    bpf_ringbuf_discard(n, 0);
    bpf_map_delete_elem(&ios, &key); /* its completion writes nothing */
    return 0;
  }
  submit(&n->r, KR_BLOCKIO);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ks_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes) {
  uint64_t key = (uint64_t)rq;
  uint32_t *tid = bpf_map_lookup_elem(&ios, &key);
  if (!tid) return 0;
  uint32_t t = *tid;
  bpf_map_delete_elem(&ios, &key);
  struct ks_rec *r = reserve(KR_BLOCKIO, KO_END, t, sizeof(struct ks_rec));
  if (!r) return 0;
  r->b32 = (uint32_t)key;
  r->a64 = error;
  submit(r, KR_BLOCKIO);
  return 0;
}

/* ================================================================ sockets */

static __always_inline int sockPacket(int rel, struct sock *sk, int ret) {
  uint32_t tid = (uint32_t)bpf_get_current_pid_tgid();
  uint64_t *f = flagsOf(tid);
  count(rel, KC_SEEN);
  if (!f || !on((uint32_t)*f, rel)) return 0;
  struct ks_rec *r = reserve(rel, KO_EVENT, tid, sizeof(struct ks_rec));
  if (!r) return 0;
  r->tgid = (uint32_t)(bpf_get_current_pid_tgid() >> 32);
  r->a32 = BPF_CORE_READ(sk, __sk_common.skc_family);
  r->a64 = ret;
  r->b64 = (int64_t)BPF_CORE_READ(sk, sk_socket, file, f_inode, i_ino);
  if (!pass(rel, r)) {
    bpf_ringbuf_discard(r, 0);
    return 0;
  }
  submit(r, rel);
  return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ks_send, struct sock *sk, int ret, int fl) { return sockPacket(KR_SEND, sk, ret); }

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ks_recv, struct sock *sk, int ret, int fl) { return sockPacket(KR_RECEIVE, sk, ret); }
