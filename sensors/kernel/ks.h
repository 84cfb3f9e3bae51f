/*
** ks.h - what the kernel sensors (ks.bpf.c) and their processor modules
** (sensors/kernel.c) share: the relation numbers, the bits of the per-thread
** flag word, the counters, and the layout of a packet in the ring buffer.
** Included by the BPF program (after vmlinux.h) and by user space (after
** <stdint.h>), so it uses only the fixed-width types both define.
**
** The flag word of thread TID is flags[TID] (an array map of 64-bit values,
** mmapped by user space; only the low 32 bits are used).  Its low KS_NREL bits are the enable flags, one per relation:
** user space sets and clears them when the engine enables or disables a
** sensor on that thread (the paper's enable flag), and the fork program
** copies the creating thread's flags to the new one (provisionally: user
** space takes back what the queries do not confirm).  The high bits say
** which intervals of the thread are open in the ring buffer (a BEGIN was
** written whose END has not been): only BPF programs change them.
*/
#ifndef KS_H
#define KS_H

/* Relations (bit numbers of the enable flags, indexes of the counters). */
enum {
  KR_FORK = 0,   /* event Fork (Parent, Child) */
  KR_EXEC,       /* event Exec (Thread, File) */
  KR_EXIT,       /* event Exit (Thread, Code) */
  KR_RUNNINGON,  /* interval RunningOn (Thread, Processor) */
  KR_READY,      /* interval Ready (Thread): runnable, waiting for a CPU */
  KR_BLOCKED,    /* interval Blocked (Thread, State) */
  KR_WOKE,       /* event Woke (Waker, Wakee) */
  KR_SYSCALL,    /* interval Syscall (Thread, Call, Result) */
  KR_BLOCKIO,    /* interval BlockIo (Thread, Device, Operation, Sector, Bytes) */
  KR_SEND,       /* event Send (Thread, Socket, Family, Bytes) */
  KR_RECEIVE,    /* event Receive (Thread, Socket, Family, Bytes) */
  KR_THREAD,     /* the entity relation Thread (lifecycle: never filtered) */
  KS_NREL
};

/* The flag word. */
#define KS_ENABLE_MASK 0xffffu       /* enable flags: bit KR_* */
#define KS_OPEN_SYSCALL (1u << 16)   /* a Syscall BEGIN was written */
#define KS_OPEN_RUN (1u << 17)       /* a RunningOn BEGIN was written */
#define KS_OPEN_READY (1u << 18)     /* a Ready BEGIN was written */
#define KS_OPEN_BLOCKED (1u << 19)   /* a Blocked BEGIN was written */
#define KS_OPEN_MASK (0xfu << 16)
#define KS_SKIP_SYSCALL (1u << 20)   /* a Syscall BEGIN failed the filter: no END either */
#define KS_PEND_SYSCALL (1u << 21)   /* a Syscall began (sysbeg[tid]) and nothing of it was written */
#define KS_SKIP_RUN (1u << 22)       /* a RunningOn BEGIN failed the filter: no END either */
#define KS_SKIP_READY (1u << 23)     /* the same for Ready */
#define KS_SKIP_BLOCKED (1u << 24)   /* the same for Blocked */
#define KS_SKIP_MASK (KS_SKIP_SYSCALL | KS_SKIP_RUN | KS_SKIP_READY | KS_SKIP_BLOCKED)
/* The high 32 bits of the flag word count the thread's system calls that
** became pending (sys_enter adds KS_SEQ_ONE with KS_PEND_SYSCALL), so that
** user space claiming a pending begin (compare-and-swap of the whole word,
** KS_PEND_SYSCALL -> KS_OPEN_SYSCALL) never takes a later call's for it. */
#define KS_SEQ_ONE (1ull << 32)

/* Counters, per CPU: KS_NCNT per relation (index rel * KS_NCNT + what), then
** the ones of the whole sensor set from KS_CNT_GLOBAL on. */
enum {
  KC_SEEN = 0,    /* the tracepoint fired for this relation */
  KC_WRITTEN,     /* a packet was written to the ring buffer */
  KC_DROPPED,     /* the ring buffer was full: the packet is lost */
  KC_UNBEGUN,     /* an END of an enabled thread whose BEGIN was not written
                  ** (it began before the sensor was enabled on the thread) */
  KC_SUPPRESSED,  /* the packet failed the relation's filter: not written */
  KS_NCNT
};
#define KS_CNT_GLOBAL (KS_NREL * KS_NCNT)
enum {
  KG_BEYOND = 0,  /* a thread id past the flag array (pid_max grew) */
  KS_NGLOBAL
};
#define KS_NCOUNTERS (KS_CNT_GLOBAL + KS_NGLOBAL)

/* A relation's filter (rule SF, docs/enabling.md): user space writes it
** before it attaches the programs and never changes it.  A packet is
** written when, for some group, every condition of that group holds on
** its raw fields; n = 0: every packet.  Operators are TQ_PM_EQ.. (1-6),
** and KS_OP_IN: the field is a small code (an enumeration's raw value,
** 0-63) and val the set of codes that pass, one bit each. */
#define KS_NCOND 8
enum {
  KF_A32 = 0, /* the packet's a32 (Syscall: number; Woke: waker; Blocked, BlockIo: code) */
  KF_A64,     /* a64 */
  KF_B64,     /* b64 */
  KF_TID,     /* the thread (flag entity) */
  KF_CPU,     /* the CPU (RunningOn's Processor) */
  KF_FAMILY   /* a32 as Send/Receive's Family: 0 Unix, 1 Inet, 2 Inet6, 3 Netlink, 4 Other */
};
#define KS_OP_IN 7
struct ks_cond {
  uint8_t field;       /* KF_*: the packet field compared */
  uint8_t op;          /* 1 =, 2 <>, 3 <, 4 <=, 5 >, 6 >=, KS_OP_IN */
  uint8_t group;       /* its conjunction (0-7) */
  uint8_t pad[5];
  int64_t val;         /* the constant, in the field's terms */
};
struct ks_filter {
  uint32_t n;          /* conditions in use */
  uint32_t pad;
  struct ks_cond c[KS_NCOND];
};

/* Packet operations. */
enum {
  KO_EVENT = 1,   /* an event of relation rel */
  KO_BEGIN,       /* an interval of rel begins (per thread: one open at a time) */
  KO_END,         /* it ends */
  KO_FORK,        /* lifecycle: tid was created by a32 (its tgid, comm) */
  KO_EXEC,        /* lifecycle: tid executed a program (a32: its old tid; name) */
  KO_EXIT,        /* lifecycle: tid exits (a64: exit code) */
  KO_RENAME,      /* lifecycle: tid's comm changed */
  KO_GONE,        /* lifecycle: tid left its CPU for the last time (dead) */
  KO_SPAN         /* an interval of rel from begin to end, in one packet (struct ks_span) */
};

/* States of Blocked (the scheduler's state of a thread that gives up its CPU). */
enum { KB_SLEEPING = 0, KB_DISKSLEEP, KB_STOPPED, KB_OTHER };

/* Operations of BlockIo. */
enum { KI_READ = 0, KI_WRITE, KI_FLUSH, KI_DISCARD, KI_OTHER };

#define KS_COMM 16
#define KS_NAME 32    /* a block device's name */
#define KS_FILE 256   /* an executed file's name (Exec) */

/* One packet.  t is the time in ns of the BPF clock (TAI, or boot time on a
** kernel without bpf_ktime_get_tai_ns: user space converts it). */
struct ks_rec {
  uint64_t t;
  uint16_t rel;        /* KR_* */
  uint16_t op;         /* KO_* */
  uint32_t tid;        /* the thread (flag entity) */
  uint32_t tgid;       /* its process */
  uint32_t cpu;        /* the CPU it happened on */
  uint32_t a32;        /* Syscall: number; Woke: waker; Fork: parent; Exec: old tid;
                       ** Blocked: KB_*; BlockIo: KI_*; Send/Receive: family */
  uint32_t b32;        /* Fork: the flags the child got; Exec, Exit: the flags
                       ** of the thread then (its Exec/Exit enables) */
  int64_t a64;         /* Syscall: result; Exit: code; BlockIo: sector;
                       ** Send/Receive: bytes; Blocked: raw state; Fork: the
                       ** creator's flags */
  int64_t b64;         /* BlockIo: bytes; Send/Receive: socket inode */
  char comm[KS_COMM];  /* lifecycle: the command; BlockIo: -- */
};

/* The begin of a thread's system call, kept in the kernel (sysbeg[tid],
** an mmapped array) until the call returns: then one KO_SPAN packet holds
** its begin and its end.  A call still open at a snapshot is claimed by
** user space, which writes its BEGIN itself (the END follows as usual). */
struct ks_sysbeg {
  uint64_t t;          /* its entry (the BPF clock) */
  uint32_t nr;         /* the call's number */
  uint32_t cpu;        /* the CPU it entered on */
};

/* A system call from entry to return in one packet (KO_SPAN): 40 bytes
** instead of two ks_rec of 64. */
struct ks_span {
  uint64_t t;          /* its entry */
  uint16_t rel;        /* KR_SYSCALL */
  uint16_t op;         /* KO_SPAN */
  uint32_t tid;
  uint64_t tend;       /* its return */
  int64_t ret;         /* its result */
  uint32_t nr;         /* its number */
  uint32_t cpu;        /* the CPU it entered on */
};

/* A packet with a name after it: Exec (the file) and BlockIo's begin (the
** device). */
struct ks_rec_name {
  struct ks_rec r;
  char name[KS_FILE];
};
struct ks_rec_dev {
  struct ks_rec r;
  char name[KS_NAME];
};

#endif
