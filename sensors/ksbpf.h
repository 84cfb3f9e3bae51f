/*
** ksbpf.h - the kernel sensors without tqmon's engine: what the kernel
** processor modules (sensors/kernel.c, tqmon run --kernel) and the PCP
** agent's kernel part (sensors/pmdatqmon_kernel.c, pmdatqmon -k) share.
**
** Both load the same BPF object (the skeleton generated from
** sensors/kernel/ks.bpf.c) and read the same packets (sensors/kernel/ks.h);
** this file holds what they do alike: the relations the kernel fills and
** their attributes (the declarations of sensors/kernel.tq), the programs
** and tracepoints behind each, loading and attaching the programs, mapping
** the flag words and the pending system calls, the clocks, the kernel's
** counters, claiming a pending system call's begin, decoding a packet's
** fields into attribute values, and the threads and processors that exist.
** It uses nothing of tqmon but those two files (the agent is a program of
** its own, docs/design.md), libbpf and libc.  Its names begin with ksb
** (functions), KsBpf and KRelDef (types), KA_, KT_, KV_ and KP_ (constants).
**
** Nothing here keeps state between calls except the KsBpf the caller owns;
** the caller serialises the calls on one KsBpf.
*/
#ifndef KSBPF_H
#define KSBPF_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/ks.h"

/* ================================================================ relations */

#define KR_PROCESSOR KS_NREL /* the entity relation Processor: no BPF program */
#define KS_NPM (KS_NREL + 1) /* relations in ksbRelDefs */

/* What an attribute holds. */
enum {
  KA_THREAD = 1, /* the thread (entity Thread) */
  KA_PROCESS,    /* its process id (int) */
  KA_COMMAND,    /* its command (string) */
  KA_PROCESSOR,  /* a CPU (entity Processor) */
  KA_PARENT,     /* Fork: the creating thread */
  KA_CHILD,      /* Fork: the new thread */
  KA_FILE,       /* Exec: the file executed */
  KA_CODE,       /* Exit: the exit status */
  KA_STATE,      /* Blocked: enum */
  KA_WAKER,      /* Woke */
  KA_WAKEE,
  KA_CALL,       /* Syscall: the call's name */
  KA_DEVICE,     /* BlockIo */
  KA_OPERATION,
  KA_SECTOR,
  KA_BYTES,      /* BlockIo, Send, Receive */
  KA_SOCKET,     /* Send, Receive: the socket's inode */
  KA_FAMILY
};

/* Attribute types: the codes of include/tqmon_pm.h's TQ_TY_* and of
** sensors/tqshm.h's TQ_SHM_* (the same numbers). */
enum { KT_INT = 1, KT_FLOAT, KT_STRING, KT_ENUM, KT_ENTITY };

typedef struct KAttr {
  const char *name;
  int what;                  /* KA_* */
  int type;                  /* KT_* */
  const char *ent;           /* KT_ENTITY: its entity type */
  const char *const *values; /* KT_ENUM: the values, by our code */
  int nvalues;
} KAttr;

/* The programs (bits of a program set). */
enum {
  KP_FORK = 1 << 0,
  KP_EXEC = 1 << 1,
  KP_EXIT = 1 << 2,
  KP_RENAME = 1 << 3,
  KP_SWITCH = 1 << 4,
  KP_WAKING = 1 << 5,
  KP_WAKEUP_NEW = 1 << 6,
  KP_SYS_ENTER = 1 << 7,
  KP_SYS_EXIT = 1 << 8,
  KP_RQ_ISSUE = 1 << 9,
  KP_RQ_COMPLETE = 1 << 10,
  KP_SEND = 1 << 11,
  KP_RECV = 1 << 12,
  KP_WAKEUP = 1 << 13,
  KP_FE_SYS = 1 << 14,   /* fentry/fexit on the system call dispatchers: */
  KP_FX_SYS = 1 << 15,   /* Syscall's programs instead of KP_SYS_ENTER and */
  KP_FE_SYS32 = 1 << 16, /* KP_SYS_EXIT when the kernel allows them */
  KP_FX_SYS32 = 1 << 17, /* (ksbSysHook) */
  KP_NPROG = 18
};
#define KP_SYS_TP (KP_SYS_ENTER | KP_SYS_EXIT)
#define KP_SYS_FE (KP_FE_SYS | KP_FX_SYS | KP_FE_SYS32 | KP_FX_SYS32)
#define KP_LIFE (KP_FORK | KP_EXEC | KP_EXIT | KP_RENAME) /* the threads' lifecycle (Thread) */

/* A relation the kernel fills, as sensors/kernel.tq declares it. */
typedef struct KRelDef {
  int kr;            /* KR_* (its index in ksbRelDefs) */
  const char *pm;    /* its processor module (sensors/kernel.c) */
  const char *rel;   /* the relation's name */
  int kind;          /* 0 event, 1 interval, 2 entity */
  unsigned progs;    /* KP_* it needs (Syscall: on the tracepoints; ksbSysHook) */
  int flag;          /* the attribute of its flag entity in kernel.tq (a Thread; Processor: itself) */
  KAttr attrs[8];    /* the attributes, in kernel.tq's order, then {NULL} */
} KRelDef;

extern const KRelDef ksbRelDefs[KS_NPM];
/* Each program's tracepoint (or function): subsystem and name. */
extern const char *const ksbProgTp[KP_NPROG][2];

/* The tracepoints of programs progs, as "sched:sched_switch, ..." into buf
** (cut at n). */
void ksbTpList(unsigned progs, char *buf, size_t n);
/* The number a decimal string of at most 10 digits says, or -1. */
int64_t ksbNumber(const char *s);
/* The name of system call nr into buf ("read", or "syscall_NR"); returns
** buf.  ksbCallNr: the number of a call's name ("read", "syscall_NR" for a
** number the kernel headers do not name), or -1 when no call has it. */
const char *ksbCallName(uint32_t nr, char *buf, size_t n);
int64_t ksbCallNr(const char *name);

/* An attribute's value decoded from a packet (ksbValue). */
enum {
  KV_INT = 1, /* i: a number */
  KV_ENUM,    /* i: our code of the enumeration (the index in the KAttr's values) */
  KV_THREAD,  /* i: a thread id */
  KV_CPU,     /* i: a CPU number */
  KV_CALL,    /* i: a system call's number */
  KV_STRING   /* s: a string (the packet's name, or its command) */
};
typedef struct KsVal {
  int tag;       /* KV_* */
  int64_t i;
  const char *s; /* (points into the packet or name given) */
} KsVal;

/* The value of attribute what (KA_*) of relation kr in packet r (name: the
** name that followed it, Exec's file or BlockIo's device, or NULL).  The
** attributes of a Thread tuple (KA_PROCESS, KA_COMMAND) are the thread's,
** not a packet's: they are not decoded here (tag 0), nor is anything
** unknown. */
KsVal ksbValue(int kr, int what, const struct ks_rec *r, const char *name);

/* The threads that exist now, from /proc/PID/task/TID/stat (zombies left
** out): fn(ctx, tid, tgid, comm) for each.  0, or -1 when /proc cannot be
** listed (errno says why). */
int ksbThreads(void (*fn)(void *ctx, uint32_t tid, uint32_t tgid, const char *comm), void *ctx);
/* The online CPUs (/sys/devices/system/cpu/online) into cpus[0..max):
** their number, or -1 when the file cannot be read. */
int ksbCpus(uint32_t *cpus, int max);

#ifndef TQ_KERNEL_NO_BPF
struct btf;
struct ks_bpf;
struct bpf_link;
struct ring_buffer;

/* A loaded BPF object of the kernel sensors.  Zeroed by the caller before
** ksbLoad; ksbFree releases it. */
typedef struct KsBpf {
  struct ks_bpf *skel;
  struct bpf_link *links[KP_NPROG]; /* the attached programs (NULL: not attached) */
  struct ring_buffer *rb;           /* both rings: the relations' and the lifecycle's */
  uint64_t *flags;                  /* flags[tid], the flag words (mmapped array map) */
  size_t flagsBytes;
  struct ks_sysbeg *sysbeg;         /* sysbeg[tid], the pending system calls' begins (mmapped) */
  size_t sysbegBytes;
  uint32_t nflags;                  /* thread ids 1 .. nflags - 1 have a flag word (pid_max) */
  int ncpu;                         /* possible CPUs (the per-CPU counters) */
  int useTai;                       /* packets are stamped with CLOCK_TAI (else boot time) */
} KsBpf;

/* libbpf's first warning while loading (the most specific: which program
** the kernel refused and why), "" when none.  TQMON_BPF_DEBUG set shows
** every libbpf message on standard error. */
const char *ksbLog(void);
/* Opens the BPF object and loads the programs progs (KP_*), with the
** relations attached (bits KR_*: the programs skip the work of others) and
** a ring of ringBytes (a power of two), the flag arrays sized to pid_max,
** and maps the flag words and the pending system calls.  Nothing is
** attached.  0; -1 with the reason in why (b is then freed); -2 when the
** kernel refused the programs (ksbLog says which; b freed). */
int ksbLoad(KsBpf *b, unsigned progs, uint32_t attachedRels, uint32_t ringBytes, char *why, size_t n);
/* Opens both rings with fn(ctx, data, size) called for each packet (by
** ring_buffer__consume).  0, or -1 with the reason in why. */
int ksbRings(KsBpf *b, int (*fn)(void *ctx, void *data, size_t size), void *ctx, char *why, size_t n);
/* Attaches program i (0 .. KP_NPROG-1; loaded by ksbLoad).  0, or -1 with
** the reason in why.  ksbDetach detaches it (nothing when it is not). */
int ksbAttach(KsBpf *b, int i, char *why, size_t n);
void ksbDetach(KsBpf *b, int i);
/* Detaches everything, unmaps, frees the object; b is zeroed.  NULL-safe
** on a b never loaded. */
void ksbFree(KsBpf *b);

/* The first tracepoint of progs the kernel (BTF vm) lacks, or NULL
** (TQMON_KERNEL_HIDE names tracepoints a test treats as missing). */
const char *ksbMissingTp(const struct btf *vm, unsigned progs);
/* Syscall's programs (want: 0 auto, 1 fentry, 2 tracepoint): fentry and
** fexit on the system call dispatchers when the kernel allows them, else
** the raw_syscalls tracepoints with the reason in why ("" for fentry). */
unsigned ksbSysHook(const struct btf *vm, int want, char *why, size_t n);
/* Does the kernel have bpf_ktime_get_tai_ns (Linux 6.1)? */
int ksbHaveTai(const struct btf *vm);
/* The packets' clock minus CLOCK_REALTIME, in ns (TAI: whole seconds;
** boot time: measured, the closest of 3 readings). */
int64_t ksbClockOffset(int useTai);
/* The kernel's counters (KS_NCOUNTERS of them: per relation KS_NCNT, then
** the global ones), summed over the CPUs into out.  0, or -1. */
int ksbCounters(KsBpf *b, uint64_t *out);
/* Claims thread tid's pending system call (KS_PEND_SYSCALL) when it began
** by upto (CLOCK_REALTIME ns; off: ksbClockOffset): its flag word turns to
** KS_OPEN_SYSCALL in one compare-and-swap, so its return writes an END
** alone, and its begin is put in *got (t in the packets' clock).  1
** claimed; 0 nothing to claim (none pending, or a later one); -1 the call
** returned meanwhile (its packet is in the ring or on its way). */
int ksbClaim(KsBpf *b, uint32_t tid, int64_t off, int64_t upto, struct ks_sysbeg *got);
/* Sets (on) or clears bits of thread tid's flag word (0 < tid < nflags;
** others: nothing). */
void ksbFlags(KsBpf *b, uint32_t tid, uint64_t bits, int on);
#endif

#endif
