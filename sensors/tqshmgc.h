/*
** tqshmgc.h - the removal of stale segments /dev/shm/tqmon.PID: those a
** subject made for --attach (sensors/tqsensor.c) and could not remove
** because it was killed (SIGKILL, or a signal it does not catch: its exit
** handler never ran).  Each is 91 MB of memory until someone removes it.
** Who sweeps: every subject that makes its own segment (before it makes
** it), and every monitor that attaches (tqmon run --attach, the shm PM);
** the monitor that detaches from a subject that died removes that one
** segment at once (sensors/shm.c, sensors/pmdatqmon.c).
**
** A segment is stale, and removed, only when all of these hold:
**   - its name is exactly tqmon.PID (digits), or tqmon.PID.N (the name
**     older monitors gave their --exec segments); no other tqmon file,
**   - it is a regular file with one link, owned by this process's user
**     (never another user's: a planted file is the owner's to remove),
**   - no process PID exists (kill(PID, 0) says ESRCH),
**   - the name still names the same file just before it is removed.
** A live process with that pid keeps its segment, even if the pid was
** reused (its new owner removes a stale segment of its own pid when it
** makes its own, tqsensor.c).  A process that takes the dead pid between
** the check and the removal and makes its segment in that instant could
** lose it: the window is the few microseconds of one unlink, and the pid
** must have gone round all the pids of the machine meanwhile.
**
** Included by the C files that sweep (tqsensor.c, shm.c, pmdatqmon.c); it
** is not installed.  POSIX, no allocation.
*/
#ifndef TQSHMGC_H
#define TQSHMGC_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is /dev/shm/NAME a stale segment of this user (see above)?  st gets its
** lstat. */
static inline int tq_shm_stale(const char *name, struct stat *st) {
  if (strncmp(name, "tqmon.", 6) || name[6] < '1' || name[6] > '9') return 0;
  char *end;
  long pid = strtol(name + 6, &end, 10);
  if (*end == '.' && end[1] >= '0' && end[1] <= '9') strtol(end + 1, &end, 10); /* tqmon.PID.N (older monitors' --exec) */
  if (*end || pid <= 0 || pid > 0x3fffffff) return 0;
  char path[300];
  snprintf(path, sizeof path, "/dev/shm/%s", name);
  if (lstat(path, st) || !S_ISREG(st->st_mode) || st->st_uid != geteuid() || st->st_nlink != 1) return 0;
  return kill((pid_t)pid, 0) && errno == ESRCH;
}

/* Removes every stale segment /dev/shm/tqmon.PID of this user.  Returns
** how many it removed (0 when /dev/shm cannot be read). */
static inline int tq_shm_sweep(void) {
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    struct stat st, again;
    if (!tq_shm_stale(e->d_name, &st)) continue;
    char path[300], name[300];
    snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
    snprintf(name, sizeof name, "/%s", e->d_name);
    if (lstat(path, &again) || again.st_ino != st.st_ino || again.st_dev != st.st_dev) continue;
    if (!shm_unlink(name)) n++;
  }
  closedir(d);
  return n;
}

#endif
