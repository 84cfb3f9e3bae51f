/*
** kwork.c - deterministic workloads for the kernel sensor tests
** (tests/scripts/kernel_*.sh) and examples (examples/kernel/).  Each one
** writes the ids the queries need ("name=id" lines) to the file given with
** -o, then waits until the file given with -g exists (the test creates it
** once the monitor traces), does its work, and exits.  Nothing depends on
** timing: where a count must be exact, the workload waits for the state
** that makes it so (a reader asleep before each message is written).
**
**   kwork -o IDS -g GO pingpong N    two processes, N messages each way over
**                                    pipes; the writer writes only once the
**                                    reader sleeps in read: exactly N wakeups
**                                    of the reader by the writer
**   kwork -o IDS -g GO sleep MS      one clock_nanosleep of MS milliseconds
**   kwork -o IDS -g GO syscalls N [K] N getppid calls, each followed by K
**                                    other cheap calls (getpid, getuid,
**                                    getgid, geteuid in turn; K = 0)
**   kwork -o IDS -g GO blockio DIR N N writes then N reads of 4 KiB, direct
**                                    (O_DIRECT: one block request each), in
**                                    a file in DIR
**   kwork -o IDS -g GO sockets N B   N messages of B bytes over a Unix
**                                    socket pair, each way
**   kwork -o IDS -g GO life          a thread, a child that executes
**                                    /bin/true, one that exits with 3, one
**                                    killed by SIGKILL
**   kwork -o IDS -g GO spin MS       a thread that computes for MS ms while
**                                    another, woken every ms, blocks in
**                                    between
**   kwork -o IDS -g GO hop MS        the same as spin, the spinner bound to
**                                    cpu0 for a quarter of its time, then
**                                    to cpu1, cpu0, cpu1 (where there are
**                                    two CPUs): it runs on both for sure
**   kwork -o IDS -g GO pinned MS     a thread bound to the last CPU, made
**                                    before the go (its tid and CPU in the
**                                    ids), computes for MS ms of wall time
**                                    while the main thread waits for it;
**                                    IDS.after: when it began and ended
**                                    (CLOCK_REALTIME ns)
**   kwork -o IDS -g GO busy S        getppid in a loop for S seconds (the
**                                    other process of a busy machine)
**   kwork -o IDS -g GO reuse         a child that exits with 5, then one
**                                    given the same id (ns_last_pid) that
**                                    exits with 7: an id's two incarnations
**                                    ("reused=0": the kernel gave the id to
**                                    someone else first, 20 times)
*/

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *idsPath, *goPath;

static void die(const char *what) {
  fprintf(stderr, "kwork: %s: %s\n", what, strerror(errno));
  exit(2);
}

static pid_t tid(void) { return (pid_t)syscall(SYS_gettid); }

/* Writes the ids (a temporary file renamed: readers see all or nothing). */
static void ids(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ids(const char *fmt, ...) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", idsPath);
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  if (fclose(f) || rename(tmp, idsPath)) die(idsPath);
}

/* Waits for the go file (the monitor traces).  It polls with poll(), not
** nanosleep: the only clock_nanosleep of `sleep` is the one measured. */
static void waitGo(void) {
  for (int i = 0; access(goPath, F_OK); i++) {
    if (i > 30000) { /* 10 minutes: the test is gone */
      fprintf(stderr, "kwork: no %s\n", goPath);
      exit(2);
    }
    poll(NULL, 0, 20);
  }
}

/* The scheduler state letter of thread t of process p (/proc). */
static char stateOf(pid_t p, pid_t t) {
  char path[96], buf[512];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)p, (int)t);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *rp = strrchr(buf, ')');
  return rp && rp[1] && rp[2] ? rp[2] : 0;
}

/* Waits until thread t of p sleeps (S).  yield: by sched_yield, not
** nanosleep: a timer's wakeup is the thread's that runs when it fires (the
** pingpong's reader, woken so while the writer ran, was "woken by the
** writer" once more: kernel_examples.sh saw 32 of 30). */
static void waitAsleep(pid_t p, pid_t t, int yield) {
  struct timespec d = {0, 50 * 1000};
  while (stateOf(p, t) != 'S')
    if (yield) sched_yield();
    else nanosleep(&d, NULL);
}

static void xwrite(int fd, const void *b, size_t n) {
  if (write(fd, b, n) != (ssize_t)n) die("write");
}
static void xread(int fd, void *b, size_t n) {
  if (read(fd, b, n) != (ssize_t)n) die("read");
}

static int pingpong(int n) {
  int ab[2], ba[2];
  if (pipe(ab) || pipe(ba)) die("pipe");
  pid_t child = fork();
  if (child < 0) die("fork");
  char c = 'x';
  if (child == 0) { /* the reader: reads a ping, answers with a pong */
    prctl(PR_SET_NAME, "pp-reader");
    for (int i = 0; i < n; i++) {
      xread(ab[0], &c, 1);
      waitAsleep(getppid(), getppid(), 1); /* the writer sleeps in its read */
      xwrite(ba[1], &c, 1);
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "pp-writer");
  ids("writer=%d\nreader=%d\n", (int)getpid(), (int)child);
  waitGo();
  for (int i = 0; i < n; i++) {
    waitAsleep(child, child, 0); /* the reader sleeps in its read */
    xwrite(ab[1], &c, 1);
    xread(ba[0], &c, 1);
  }
  waitpid(child, NULL, 0);
  return 0;
}

static int sleepMs(int ms) {
  ids("sleeper=%d\n", (int)getpid());
  waitGo();
  struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
  if (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL)) die("clock_nanosleep");
  return 0;
}

static int syscalls(long n, int k) {
  ids("caller=%d\n", (int)getpid());
  waitGo();
  static const long others[] = {SYS_getpid, SYS_getuid, SYS_getgid, SYS_geteuid};
  for (long i = 0; i < n; i++) {
    getppid();
    for (int j = 0; j < k; j++) syscall(others[j % 4]);
  }
  return 0;
}

static int busy(int seconds) {
  ids("busy=%d\n", (int)getpid());
  time_t end = time(NULL) + seconds;
  while (time(NULL) < end)
    for (int i = 0; i < 10000; i++) getppid();
  return 0;
}

static int blockio(const char *dir, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/kwork.XXXXXX", dir);
  int fd = mkstemp(path);
  if (fd < 0) die(path);
  close(fd);
  fd = open(path, O_RDWR | O_DIRECT);
  if (fd < 0) die("O_DIRECT");
  void *buf;
  if (posix_memalign(&buf, 4096, 4096)) die("posix_memalign");
  memset(buf, 'k', 4096);
  /* the blocks exist before the test starts: the writes then need no
  ** allocation (one request each) */
  for (int i = 0; i < n; i++)
    if (pwrite(fd, buf, 4096, (off_t)i * 4096) != 4096) die("pwrite");
  if (fsync(fd)) die("fsync");
  ids("io=%d\n", (int)getpid());
  waitGo();
  for (int i = 0; i < n; i++)
    if (pwrite(fd, buf, 4096, (off_t)i * 4096) != 4096) die("pwrite");
  for (int i = 0; i < n; i++)
    if (pread(fd, buf, 4096, (off_t)i * 4096) != 4096) die("pread");
  close(fd);
  unlink(path);
  free(buf);
  return 0;
}

static int sockets(int n, int bytes) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) die("socketpair");
  char *b = calloc(1, (size_t)bytes);
  struct stat st0, st1;
  if (fstat(sv[0], &st0) || fstat(sv[1], &st1)) die("fstat");
  ids("sockets=%d\nsocket0=%lu\nsocket1=%lu\n", (int)getpid(), (unsigned long)st0.st_ino, (unsigned long)st1.st_ino);
  waitGo();
  for (int i = 0; i < n; i++) {
    if (send(sv[0], b, (size_t)bytes, 0) != bytes) die("send");
    if (recv(sv[1], b, (size_t)bytes, MSG_WAITALL) != bytes) die("recv");
  }
  free(b);
  return 0;
}

static void *threadMain(void *arg) {
  prctl(PR_SET_NAME, "life-thread");
  *(pid_t *)arg = tid();
  return NULL;
}

static int life(void) {
  ids("life=%d\n", (int)getpid());
  waitGo();
  pthread_t th;
  pid_t t = 0;
  if (pthread_create(&th, NULL, threadMain, &t)) die("pthread_create");
  pthread_join(th, NULL);
  pid_t a = fork();
  if (a == 0) {
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  pid_t b = fork();
  if (b == 0) _exit(3);
  pid_t c = fork();
  if (c == 0) {
    for (;;) pause();
  }
  waitpid(a, NULL, 0);
  waitpid(b, NULL, 0);
  kill(c, SIGKILL);
  waitpid(c, NULL, 0);
  /* what became of them, for the test */
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.after", idsPath);
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  fprintf(f, "thread=%d\ntrue=%d\nthree=%d\nkilled=%d\n", (int)t, (int)a, (int)b, (int)c);
  fclose(f);
  return 0;
}

/* A thread spins for ms milliseconds of its own CPU time while a second
** one sleeps 1 ms at a time: what runs on the CPUs while a thread blocks. */
static volatile int spinDone;
static int spinHop; /* hop: the spinner changes CPUs */
static void spinFor(int ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  do {
    for (volatile int i = 0; i < 100000; i++) {
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}
static void *spinMain(void *arg) {
  prctl(PR_SET_NAME, "spinner");
  int ms = *(int *)arg;
  if (!spinHop) {
    spinFor(ms);
  } else {
    for (int q = 0; q < 4; q++) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(q % 2, &set);
      if (q % 2 == 0 || sysconf(_SC_NPROCESSORS_ONLN) > 1)
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) die("pthread_setaffinity_np");
      spinFor(ms / 4);
    }
  }
  spinDone = 1;
  return NULL;
}
static int spin(int ms, int hop) {
  prctl(PR_SET_NAME, "sleeper");
  ids("spin=%d\n", (int)getpid());
  spinHop = hop;
  waitGo();
  pthread_t th;
  if (pthread_create(&th, NULL, spinMain, &ms)) die("pthread_create");
  struct timespec d = {0, 1000 * 1000};
  while (!spinDone) nanosleep(&d, NULL);
  pthread_join(th, NULL);
  return 0;
}

/* pinned: a spinner bound to one CPU, from the go for ms of wall time. */
static pid_t pinnedTid;
static int pinnedCpu;
static volatile int pinnedReady;
static long long realNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
static void *pinnedMain(void *arg) {
  int ms = *(int *)arg;
  prctl(PR_SET_NAME, "pinned");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(pinnedCpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) die("pthread_setaffinity_np");
  pinnedTid = tid();
  pinnedReady = 1;
  waitGo();
  long long from = realNs(), to;
  do {
    for (volatile int i = 0; i < 100000; i++) {
    }
    to = realNs();
  } while (to - from < (long long)ms * 1000000LL);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.after", idsPath);
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  fprintf(f, "spinfrom=%lld\nspinto=%lld\n", from, to);
  fclose(f);
  return NULL;
}
static int pinned(int ms) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  pinnedCpu = n > 1 ? (int)n - 1 : 0;
  pthread_t th;
  if (pthread_create(&th, NULL, pinnedMain, &ms)) die("pthread_create");
  while (!pinnedReady) poll(NULL, 0, 1);
  ids("pinned=%d\nspinner=%d\ncpu=%d\n", (int)getpid(), (int)pinnedTid, pinnedCpu);
  pthread_join(th, NULL);
  return 0;
}

/* Two children with the same id, one after the other. */
static int reuse(void) {
  ids("reuse=%d\n", (int)getpid());
  waitGo();
  pid_t a = fork();
  if (a == 0) _exit(5);
  if (a < 0) die("fork");
  waitpid(a, NULL, 0);
  pid_t b = -1;
  for (int i = 0; i < 20 && b != a; i++) {
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!f) die("ns_last_pid");
    fprintf(f, "%d", (int)a - 1);
    if (fclose(f)) die("ns_last_pid");
    b = fork();
    if (b == 0) _exit(getpid() == a ? 7 : 0);
    if (b < 0) die("fork");
    if (b != a) waitpid(b, NULL, 0); /* someone else took it first: again */
  }
  if (b == a) waitpid(b, NULL, 0);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.after", idsPath);
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  fprintf(f, "child=%d\nreused=%d\n", (int)a, b == a);
  fclose(f);
  return 0;
}

int main(int argc, char **argv) {
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-o")) idsPath = argv[i + 1];
    else if (!strcmp(argv[i], "-g")) goPath = argv[i + 1];
  }
  if (!idsPath || !goPath || i >= argc) {
    fprintf(stderr, "usage: kwork -o IDS -g GO pingpong N | sleep MS | syscalls N [K] | blockio DIR N | sockets N B | "
                    "life | spin MS | hop MS | pinned MS | busy S | reuse\n");
    return 2;
  }
  const char *w = argv[i];
  const char *a1 = i + 1 < argc ? argv[i + 1] : "1", *a2 = i + 2 < argc ? argv[i + 2] : "1";
  if (!strcmp(w, "pingpong")) return pingpong(atoi(a1));
  if (!strcmp(w, "sleep")) return sleepMs(atoi(a1));
  if (!strcmp(w, "syscalls")) return syscalls(atol(a1), i + 2 < argc ? atoi(a2) : 0);
  if (!strcmp(w, "busy")) return busy(atoi(a1));
  if (!strcmp(w, "blockio")) return blockio(a1, atoi(a2));
  if (!strcmp(w, "sockets")) return sockets(atoi(a1), atoi(a2));
  if (!strcmp(w, "life")) return life();
  if (!strcmp(w, "spin")) return spin(atoi(a1), 0);
  if (!strcmp(w, "hop")) return spin(atoi(a1), 1);
  if (!strcmp(w, "pinned")) return pinned(atoi(a1));
  if (!strcmp(w, "reuse")) return reuse();
  fprintf(stderr, "kwork: unknown workload %s\n", w);
  return 2;
}
