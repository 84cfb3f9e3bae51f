/*
** programs.c - the program list for the live PMs: may process pid become an
** entity (or be sampled)?  The patterns are the engine's (`monitor
** programs`, --programs); it matches them, through g->program_wanted, on
** the process's command name.  This file finds the names to try, from
** /proc: the command (comm, which the kernel cuts at 15 characters) and,
** when comm may have been cut, the base name of the program's first
** argument (argv[0], for a long name such as tqtest_profile_worker).
*/
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "sensors.h"

/* Reads up to n - 1 bytes of a small file; returns the length or -1. */
static ssize_t readSmall(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t k = read(fd, buf, n - 1);
  close(fd);
  if (k < 0) return -1;
  buf[k] = 0;
  return k;
}

int snsProcessWanted(tq_pm_global *g, int64_t pid, const char *comm) {
  if (g->version < 7 || !g->program_wanted) return 1;
  if (g->program_wanted(g, -1, NULL)) return 1; /* no program list */
  char buf[4096], path[64];
  if (!comm) {
    snprintf(path, sizeof path, "/proc/%lld/comm", (long long)pid);
    ssize_t n = readSmall(path, buf, 64);
    if (n <= 0) return 0; /* gone */
    if (buf[n - 1] == '\n') buf[--n] = 0;
    comm = buf;
  }
  if (g->program_wanted(g, pid, comm)) return 1;
  if (strlen(comm) < 15) return 0; /* the whole name */
  /* comm may be cut: the first argument's base name, when it begins alike */
  char cut[16];
  size_t nc = strnlen(comm, 15);
  memcpy(cut, comm, nc);
  cut[nc] = 0;
  snprintf(path, sizeof path, "/proc/%lld/cmdline", (long long)pid);
  if (readSmall(path, buf, sizeof buf) <= 0) return 0;
  const char *base = strrchr(buf, '/');
  base = base ? base + 1 : buf;
  return !strncmp(base, cut, 15) && g->program_wanted(g, pid, base);
}
