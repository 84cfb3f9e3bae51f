/*
** measure.c - runs a command and prints its wall time, peak resident
** memory and CPU time: "wall_seconds peak_rss_kb exit_status cpu_seconds"
** (user + system, of the command and the children it waited for) on
** standard error, so the benchmark script can compare peers measured the
** same way.
**
**   measure COMMAND [ARG...]
*/
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: measure COMMAND [ARG...]\n");
    return 2;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) < 0) return 2;
  clock_gettime(CLOCK_MONOTONIC, &b);
  double wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  fprintf(stderr, "%.4f %ld %d %.4f\n", wall, (long)ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128, cpu);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
