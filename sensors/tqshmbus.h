/*
** tqshmbus.h - a reader that survives a segment shrinking under it.  A
** program's own segment /dev/shm/tqmon.PID is its file: it can shrink it
** (ftruncate) while a monitor (tqmon run --attach, sensors/shm.c) or the
** root PCP agent (sensors/pmdatqmon.c) has it mapped, and their next read
** or write of a page past its new end raises SIGBUS, which would end the
** reader (and, for the agent, every user's monitoring with it).
**
** A reader registers each such mapping (tq_bus_add).  The SIGBUS handler
** maps zeros over the rest of the registered mapping that holds the
** faulting address (reads there find nothing published, writes go
** nowhere) and marks it (tq_bus_shrunk); the reader lets the program go at
** its next pass, and says so (tq_bus_why: the file shrank, or could not
** be given memory).  A SIGBUS at any other address, or sent by a process,
** goes to the handler that was there before, called; or, when that was
** the default action, the action is put back and the signal comes again
** (the process ends).  A segment the monitor makes for --exec is sealed at its
** size instead (sensors/shm.c), and needs none of this.
**
** Header-only: one registry in each program that includes it (shm.c's in
** tqmon, pmdatqmon.c's in the agent); it is not installed.  The handler
** calls only mmap, sigaction, raise and the handler before.
*/
#ifndef TQSHMBUS_H
#define TQSHMBUS_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TQ_BUS_MAPS 1024 /* mappings registered at once */

static struct {
  volatile int taken;             /* the entry is someone's (its base may not be set yet) */
  char *volatile base;            /* the mapping (NULL: none) */
  volatile size_t size;
  volatile sig_atomic_t shrunk;   /* a fault past its end was caught */
} tq_bus_maps[TQ_BUS_MAPS];
static struct sigaction tq_bus_old;
static uintptr_t tq_bus_page;   /* the page size (read at the install) */
static pthread_once_t tq_bus_once = PTHREAD_ONCE_INIT;

static void tq_bus_on(int sig, siginfo_t *si, void *uc) {
  int saved = errno;
  char *a = si->si_addr;
  if (si->si_code > 0) { /* (a fault, not a kill) */
    for (int i = 0; i < TQ_BUS_MAPS; i++) {
      char *b = __atomic_load_n(&tq_bus_maps[i].base, __ATOMIC_ACQUIRE);
      size_t n = tq_bus_maps[i].size;
      if (!b || a < b || a >= b + n) continue;
      char *page = (char *)((uintptr_t)a & ~(tq_bus_page - 1));
      if (mmap(page, (size_t)(b + n - page), PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
          MAP_FAILED)
        break;
      tq_bus_maps[i].shrunk = 1;
      errno = saved;
      return; /* (the access is made again, on zeros) */
    }
  }
  /* not ours: the handler before, or its default action (a fault happens
  ** again on return; a signal sent is raised again, and comes when this
  ** handler returns) */
  if ((tq_bus_old.sa_flags & SA_SIGINFO) && tq_bus_old.sa_sigaction) {
    tq_bus_old.sa_sigaction(sig, si, uc);
  } else if (!(tq_bus_old.sa_flags & SA_SIGINFO) && tq_bus_old.sa_handler != SIG_DFL &&
             tq_bus_old.sa_handler != SIG_IGN) {
    tq_bus_old.sa_handler(sig);
  } else {
    sigaction(sig, &tq_bus_old, NULL);
    if (si->si_code <= 0) raise(sig);
  }
  errno = saved;
}

static void tq_bus_install(void) {
  tq_bus_page = (uintptr_t)sysconf(_SC_PAGESIZE);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = tq_bus_on;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &tq_bus_old);
}

/* Registers the mapping [base, base + size) of a program's segment (the
** handler is installed at the first).  Its index, or -1 when the registry
** is full (the mapping is then not protected). */
static int tq_bus_add(void *base, size_t size) {
  pthread_once(&tq_bus_once, tq_bus_install);
  for (int i = 0; i < TQ_BUS_MAPS; i++) {
    int free_ = 0;
    if (!__atomic_compare_exchange_n(&tq_bus_maps[i].taken, &free_, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
    tq_bus_maps[i].shrunk = 0;
    tq_bus_maps[i].size = size;
    __atomic_store_n(&tq_bus_maps[i].base, (char *)base, __ATOMIC_RELEASE); /* (size first: the handler reads base first) */
    return i;
  }
  return -1;
}

/* Did the program shrink registered mapping i under its reader? */
static int tq_bus_shrunk(int i) { return i >= 0 && i < TQ_BUS_MAPS && tq_bus_maps[i].shrunk; }

/* Why registered mapping i faulted, for a message (path: the segment's
** file): the program shrank it to fewer bytes, or it holds them and the
** system could not give the memory (/dev/shm full). */
static void tq_bus_why(int i, const char *path, char *why, size_t n) {
  struct stat st;
  size_t size = i >= 0 && i < TQ_BUS_MAPS ? tq_bus_maps[i].size : 0;
  if (stat(path, &st)) snprintf(why, n, "shrank its sensor segment %s (the file is gone now)", path);
  else if ((size_t)st.st_size < size)
    snprintf(why, n, "shrank its sensor segment %s (%lld of its %zu bytes)", path, (long long)st.st_size, size);
  else snprintf(why, n, "made its sensor segment %s unreadable (SIGBUS: /dev/shm full?)", path);
}

/* Unregisters mapping i (before it is unmapped; -1: none). */
static void tq_bus_del(int i) {
  if (i < 0 || i >= TQ_BUS_MAPS) return;
  __atomic_store_n(&tq_bus_maps[i].base, (char *)NULL, __ATOMIC_RELEASE);
  tq_bus_maps[i].shrunk = 0;
  __atomic_store_n(&tq_bus_maps[i].taken, 0, __ATOMIC_RELEASE);
}

#endif
