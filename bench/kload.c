/*
** kload.c - the workloads of the kernel sensor benchmark (bench/kernel.sh,
** make bench section 8): each writes its pid ("pid=N") to the file given
** with -o, waits until the file given with -g exists (the monitor, if any,
** traces), runs for the seconds given with -t, and prints its own rate of
** wall time, "ops_per_s N", and of its own CPU time (user + system),
** "ops_per_cpu_s N"; then "ops N" and "cpu_ns_per_op_all N", the CPU time
** of the process and the child it waited for (pingpong's echo) per
** operation.
**
**   kload -o IDS -g GO -t S rw        write 64 bytes to a pipe and read them
**                                     back: ordinary small system calls, two
**                                     per operation
**   kload -o IDS -g GO -t S getppid   a tight getppid loop: the cheapest
**                                     system call, one per operation
**   kload -o IDS -g GO -t S pingpong  two processes pass a byte back and
**                                     forth over pipes: two context switches
**                                     and two wakeups per operation (the
**                                     pid written is the one that counts)
**   kload -o IDS -g GO -t S procstat  open, read and close /proc/TID/stat of
**                                     its own thread: what the host sensors
**                                     do to sample a thread
*/
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The CPU seconds (user + system) this process (or its children waited
** for) used so far. */
static double cpuOf(int who) {
  struct rusage u;
  getrusage(who, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec * 1e-6;
}

static double cpu(void) { return cpuOf(RUSAGE_SELF); }

static int waitGo(const char *go) {
  for (int i = 0; access(go, F_OK); i++) {
    if (i > 30000) return -1;
    poll(NULL, 0, 5);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *ids = NULL, *go = NULL, *what = NULL;
  double secs = 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) ids = argv[++i];
    else if (!strcmp(argv[i], "-g") && i + 1 < argc) go = argv[++i];
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) secs = atof(argv[++i]);
    else what = argv[i];
  }
  if (!ids || !go || !what) {
    fprintf(stderr, "usage: kload -o IDS -g GO -t SECONDS rw|getppid|pingpong|procstat\n");
    return 2;
  }
  int ab[2], ba[2];
  if (pipe(ab) || pipe(ba)) return 2;
  pid_t peer = -1;
  if (!strcmp(what, "pingpong")) {
    peer = fork();
    if (peer == 0) { /* the echo: until the pipe closes */
      close(ab[1]);
      close(ba[0]);
      char c;
      while (read(ab[0], &c, 1) == 1)
        if (write(ba[1], &c, 1) != 1) break;
      _exit(0);
    }
  }
  if (peer > 0) {
    close(ab[0]);
    close(ba[1]);
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", ids);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "pid=%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, ids)) return 2;
  if (waitGo(go)) return 2;
  char buf[64] = {0}, stat[64], sbuf[1024];
  snprintf(stat, sizeof stat, "/proc/%ld/stat", (long)syscall(SYS_gettid));
  long n = 0;
  double t0 = now(), c0 = cpu(), t;
  do {
    for (int i = 0; i < 256; i++) {
      if (what[0] == 'r') {
        if (write(ab[1], buf, sizeof buf) != (ssize_t)sizeof buf || read(ab[0], buf, sizeof buf) != (ssize_t)sizeof buf)
          return 2;
      } else if (what[0] == 'g') {
        getppid();
      } else if (what[1] == 'r') { /* procstat */
        int fd = open(stat, O_RDONLY);
        if (fd < 0 || read(fd, sbuf, sizeof sbuf) <= 0) return 2;
        close(fd);
      } else {
        if (write(ab[1], buf, 1) != 1 || read(ba[0], buf, 1) != 1) return 2;
      }
    }
    n += 256;
    t = now();
  } while (t - t0 < secs);
  double c = cpu() - c0;
  printf("ops_per_s %.0f\n", (double)n / (t - t0));
  printf("ops_per_cpu_s %.0f\n", c > 0 ? (double)n / c : 0.0);
  double cc = 0, cc0 = cpuOf(RUSAGE_CHILDREN);
  if (peer > 0) {
    close(ab[1]);
    waitpid(peer, NULL, 0);
    cc = cpuOf(RUSAGE_CHILDREN) - cc0; /* (the echo's whole run: it waited for the go too, asleep) */
  }
  printf("ops %ld\ncpu_ns_per_op_all %.1f\n", n, (c + cc) * 1e9 / (double)n);
  return 0;
}
