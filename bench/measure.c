/*
** measure.c - runs a command and prints its wall time and peak resident
** memory: "wall_seconds peak_rss_kb exit_status" on standard error, so the
** benchmark script can compare peers measured the same way.
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
  fprintf(stderr, "%.3f %ld %d\n", wall, (long)ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
