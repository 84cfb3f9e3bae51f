/*
** pmdatqmon_kernel.h - the kernel sensors in pmdatqmon (sensors/pmdatqmon.c,
** sensors/pmdatqmon_kernel.c; sensors/pmdatqmon.md, "The kernel's
** relations"): what the agent's kernel part gives its PMDA part.  Neither
** uses anything of tqmon's engine: the kernel part loads the BPF programs of
** sensors/kernel/ks.bpf.c through sensors/ksbpf.c, as sensors/kernel.c does
** for a monitor, and follows the threads' lifecycle itself.
**
** Every relation of sensors/kernel.tq is served (ksbRelDefs, indexed by
** KR_*: the traced relations, Thread and Processor).  Records carry
** handles for entities and strings (AK_*: a thread's incarnation, a CPU, a
** system call, an interned string), which akName names.
*/
#ifndef PMDATQMON_KERNEL_H
#define PMDATQMON_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ksbpf.h"

/* Handles: a tag in bits 56-59, then the value. */
#define AK_THREAD (INT64_C(1) << 56) /* | incarnation << 32 | tid: "TID" (the first) or "TID#N" */
#define AK_CPU (INT64_C(2) << 56)    /* | cpu: "cpuN" */
#define AK_CALL (INT64_C(3) << 56)   /* | number: the call's name */
#define AK_STR (INT64_C(4) << 56)    /* | index: an interned string (commands, files, devices) */

/* A record's kind: sensors/tqshm.h's TQ_SHM_EVENT, BEGIN and END; AK_INHERIT
** a note, not a record (below). */
enum { AK_EVENT = 1, AK_BEGIN, AK_END, AK_INHERIT = 50 };

/* One record of the kernel's relations, at a CLOCK_REALTIME time.  kind
** AK_INHERIT: the thread v[0] was created by v[1] and got from it the
** enable flags inherit (bits KR_*: the new thread is traced from its first
** instruction, as its creator; the agent decides whose they are). */
typedef struct AkRec {
  int64_t t;        /* ns */
  int rel;          /* KR_*, or KR_PROCESSOR */
  int kind;         /* AK_* */
  uint64_t id;      /* a begin's and its end's (tuples of Thread and Processor too) */
  int n;            /* values */
  int64_t v[8];     /* numbers, enum codes, or handles (entities and strings) */
  uint32_t inherit; /* AK_INHERIT: the relations the new thread inherited */
} AkRec;

/* Loads the BPF programs (none attached but the lifecycle's), maps the
** flags, reads the threads and CPUs that exist (their tuples begin now: the
** first akDrain gives them).  0, or -1 with the reason in why (no BPF in
** this build, not privileged, ...). */
int akStart(char *why, size_t n);
/* Is relation kr served (its tracepoints exist here)? */
int akServed(int kr);
/* The name of handle h ("1234", "1234#2", "cpu0", "read", a string), or
** NULL when h is no handle.  The string lives until the 8th call after. */
const char *akName(int64_t h);
/* The handle of name as an entity of relation kr's flag (a thread: "TID"
** or "TID#N", N >= 2, 0 < TID < pid_max; Processor: "cpuN"), or -1 when
** the name is not one (in its canonical form). */
int64_t akHandle(int kr, const char *name);
/* The threads (handles h[0..n)) the clients count on traced relation kr:
** their flags are set in the kernel, others' cleared; kr's programs are
** attached when n > 0 (and detached a second after it has none).  0, or
** -1 when they cannot be attached (the reason in why). */
int akWant(int kr, const int64_t *h, size_t n, char *why, size_t wn);
/* Appends to *v (*n used, *cap allocated; the caller owns it) the records
** of what the kernel wrote up to upto (CLOCK_REALTIME ns), in time order,
** and the begins of system calls still open that began by then on the
** threads whose Syscall is wanted (claimed from the kernel: so a long
** call's begin comes at its time, not at its end).  *dropped gets the
** relations (bits KR_*) whose programs were detached since: their open
** tuples are dropped (no client wants them) and must be forgotten. */
void akDrain(AkRec **v, size_t *n, size_t *cap, int64_t upto, uint32_t *dropped);
/* The kernel's counters of relation kr: packets written, dropped (the
** ring full), ends whose begin was not written (enabled after it began). */
void akCounters(int kr, uint64_t *written, uint64_t *dropped, uint64_t *unbegun);
/* Packets lost in all: the rings full, threads past pid_max, packets the
** agent could not hold. */
uint64_t akLost(void);
/* Detaches and unloads. */
void akStop(void);

#endif
