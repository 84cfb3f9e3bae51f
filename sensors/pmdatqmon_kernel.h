/*
** pmdatqmon_kernel.h - the kernel sensors in pmdatqmon (sensors/pmdatqmon.c,
** sensors/pmdatqmon_kernel.c; sensors/pmdatqmon.md, "The kernel's
** relations"): what the agent's kernel part gives its PMDA part.  Neither
** uses anything of tqmon's engine: the kernel part loads the BPF programs of
** sensors/kernel/ks.bpf.c itself, as sensors/kernel.c does for a monitor.
**
** Only the relation Syscall (sensors/kernel.tq) is served so far: its
** programs on the raw_syscalls tracepoints, its enable flag per thread.
*/
#ifndef PMDATQMON_KERNEL_H
#define PMDATQMON_KERNEL_H

#include <stdint.h>
#include <stddef.h>

/* A system call's begin or end, at a CLOCK_REALTIME time. */
typedef struct AkPkt {
  int64_t t;       /* ns */
  int begin;       /* 1 its begin, 0 its end */
  uint32_t tid;    /* the thread */
  uint32_t nr;     /* the call's number (begin) */
  int64_t ret;     /* its result (end) */
  uint64_t id;     /* pairs the begin with its end */
} AkPkt;

/* Loads and attaches the Syscall programs and maps the flags.  0, or -1
** with the reason in why (no BPF in this build, not privileged, ...). */
int akStart(char *why, size_t n);
/* Sets (on) or clears the Syscall flag of thread tid (0 < tid < pid_max;
** others are ignored and return -1). */
int akEnable(uint32_t tid, int on);
/* Appends to *v (*n used, *cap allocated) what the kernel wrote since the
** last call, and the begins of calls still open that began before upto
** on the threads in tids[0..ntids) (claimed: so a long call's begin comes
** at its time, not at its end).  The caller owns *v. */
void akDrain(AkPkt **v, size_t *n, size_t *cap, const uint32_t *tids, size_t ntids, int64_t upto);
/* The kernel's counters of Syscall: packets written, dropped (the ring
** full), ends of calls begun before their thread was enabled. */
void akCounters(uint64_t *written, uint64_t *dropped, uint64_t *unbegun);
/* The name of call nr ("read", or "syscall_NR"); the string is static. */
const char *akCallName(uint32_t nr);
/* Detaches and unloads. */
void akStop(void);

#endif
