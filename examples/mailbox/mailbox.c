/*
** mailbox.c - the operating system of the paper's example as a real,
** multi-threaded program, instrumented only through the header generated
** from its sensor configuration (tqmon sensors gen monitor.tq).
**
** Processor threads (A, B, ...) run processes P1..Pn.  A process is a
** script of steps drawn from a seeded generator: compute for a while, send
** a message to a mailbox, or receive from its own mailbox (blocking while
** the mailbox is empty).  P1 only computes and sends.  The scheduler state
** is under one lock, and every sensor call and log line is made under it,
** so the program's log and the monitor's timestamps agree on the order.
**
**   mailbox [-p PROCESSES] [-m MAILBOXES] [-k PROCESSORS] [-n STEPS]
**           [-s SEED] [-u MICROSECONDS per compute step] [-l LOG] [-w] [-t]
**
** -w waits (up to 10 s) until a monitor has enabled SendMessage on P1, so
** that a test's log and the monitor see the same sends.
**
** The log has one line per happening, numbered in lock order:
**   SEQ SEND P M | SEQ WAIT P M | SEQ WAKE P M | SEQ SAMPLE CPU P|- | SEQ EXIT
** With -t a SEND, WAIT, WAKE and SAMPLE line ends with two CLOCK_REALTIME times
** (ns), read just before and just after the sensor call: the sensor's own
** time stamp lies between them (an independent clock for a test that
** compares the times a monitor gives, tests/scripts/pcp_sensors.sh); EXIT
** ends with one.
** The run ends when every process is done, or blocked with nobody left to
** wake it (those waits are still open at exit).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensors.h"

#define MAXP 64
#define MAXM 64
#define MAXK 16

enum { ST_READY, ST_RUNNING, ST_BLOCKED, ST_DONE };
enum { A_COMPUTE, A_SEND, A_RECV };

typedef struct Proc {
  char name[8];
  tq_entity e;
  int state;
  int own;             /* its mailbox */
  int step, nsteps;
  unsigned rng;
  tq_interval wait;    /* open wait */
  int waitOn;
} Proc;

typedef struct Box {
  char name[8];
  tq_entity e;
  int messages;
  int waiters[MAXP];   /* FIFO of blocked processes */
  int nw;
} Box;

typedef struct Cpu {
  char name[8];
  tq_entity e;
  int running;         /* process index, -1 idle */
} Cpu;

static Proc procs[MAXP];
static Box boxes[MAXM];
static Cpu cpus[MAXK];
static int np = 8, nm = 6, nk = 2, nsteps = 40, computeUs = 2000;
static unsigned seed = 1;
static int waitMonitor;
static int logTimes;   /* -t: CLOCK_REALTIME around each logged sensor call */
static long long tBefore;
static int ready[MAXP], nready;
static int busy;      /* processors running a process */
static int finished;
static long seq;
static FILE *logFile;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

static unsigned rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 16) & 0x7fff;
}

static long long realNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* (-t) the time before the sensor call the next timed line logs */
static void mark(void) {
  if (logTimes) tBefore = realNs();
}

static void logLine(const char *fmt, const char *a, const char *b) {
  if (!logFile) return; /* closed: the program is leaving */
  long long after = logTimes ? realNs() : 0;
  fprintf(logFile, "%ld ", ++seq);
  fprintf(logFile, fmt, a, b);
  if (logTimes) fprintf(logFile, " %lld %lld", tBefore, after);
  fputc('\n', logFile);
}

/* The monitor asks what runs on processor cpu (the service thread). */
static void sampleCpu(tq_entity who, void *arg) {
  Cpu *c = arg;
  pthread_mutex_lock(&lock);
  mark();
  if (c->running >= 0) {
    tq_RunningOn_sample(procs[c->running].e, c->e);
    logLine("SAMPLE %s %s", c->name, procs[c->running].name);
  } else {
    logLine("SAMPLE %s %s", c->name, "-");
  }
  pthread_mutex_unlock(&lock);
  (void)who;
}

static void setState(Proc *p, int st) {
  p->state = st;
  static const int map[] = {TQ_Process_State_Ready, TQ_Process_State_Running, TQ_Process_State_Blocked,
                            TQ_Process_State_Done};
  tq_Process_set(p->e, map[st]);
}

/* Is there nothing left that could wake a blocked process? */
static int stuck(void) { return nready == 0 && busy == 0; }

static void *cpuMain(void *arg) {
  Cpu *c = arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (nready == 0 && !finished) {
      if (stuck()) {
        finished = 1;
        pthread_cond_broadcast(&wake);
        break;
      }
      pthread_cond_wait(&wake, &lock);
    }
    if (finished) break;
    int pi = ready[0];
    memmove(ready, ready + 1, sizeof(int) * (size_t)--nready);
    Proc *p = &procs[pi];
    c->running = pi;
    busy++;
    setState(p, ST_RUNNING);
    /* run steps until it blocks, is done, or has computed once */
    for (;;) {
      if (p->step >= p->nsteps) {
        setState(p, ST_DONE);
        break;
      }
      int action = pi == 0 ? (rnd(&p->rng) % 3 == 0 ? A_COMPUTE : A_SEND) : (int)(rnd(&p->rng) % 3);
      p->step++;
      if (action == A_COMPUTE) {
        pthread_mutex_unlock(&lock);
        struct timespec d = {0, (long)computeUs * 1000};
        nanosleep(&d, NULL);
        pthread_mutex_lock(&lock);
        setState(p, ST_READY);
        ready[nready++] = pi;
        pthread_cond_signal(&wake);
        break;
      }
      if (action == A_SEND) {
        int m = (int)(rnd(&p->rng) % (unsigned)nm);
        if (m == p->own) m = (m + 1) % nm;
        Box *b = &boxes[m];
        mark();
        tq_SendMessage(p->e, b->e);
        logLine("SEND %s %s", p->name, b->name);
        if (b->nw) {
          Proc *q = &procs[b->waiters[0]];
          memmove(b->waiters, b->waiters + 1, sizeof(int) * (size_t)--b->nw);
          mark();
          tq_Waiting_end(q->wait, q->e, b->e);
          logLine("WAKE %s %s", q->name, b->name);
          setState(q, ST_READY);
          ready[nready++] = (int)(q - procs);
          pthread_cond_signal(&wake);
        } else {
          b->messages++;
        }
        continue;
      }
      /* receive from its own mailbox */
      Box *b = &boxes[p->own];
      if (b->messages) {
        b->messages--;
        continue;
      }
      setState(p, ST_BLOCKED);
      mark();
      p->wait = tq_Waiting_begin(p->e, b->e);
      p->waitOn = p->own;
      logLine("WAIT %s %s", p->name, b->name);
      b->waiters[b->nw++] = pi;
      break;
    }
    c->running = -1;
    busy--;
    if (stuck()) pthread_cond_broadcast(&wake);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int usage(void) {
  fprintf(stderr, "usage: mailbox [-p PROCESSES] [-m MAILBOXES] [-k PROCESSORS] [-n STEPS] [-s SEED] [-u US] [-l LOG] [-w] [-t]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *logName = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "p:m:k:n:s:u:l:wt")) != -1) {
    switch (opt) {
      case 'p': np = atoi(optarg); break;
      case 'm': nm = atoi(optarg); break;
      case 'k': nk = atoi(optarg); break;
      case 'n': nsteps = atoi(optarg); break;
      case 's': seed = (unsigned)strtoul(optarg, NULL, 10); break;
      case 'u': computeUs = atoi(optarg); break;
      case 'l': logName = optarg; break;
      case 'w': waitMonitor = 1; break;
      case 't': logTimes = 1; break;
      default: return usage();
    }
  }
  if (np < 2 || np > MAXP || nm < 2 || nm > MAXM || nk < 1 || nk > MAXK || nsteps < 1 || computeUs < 0) return usage();
  logFile = logName ? fopen(logName, "w") : stdout;
  if (!logFile) {
    perror(logName);
    return 1;
  }
  setvbuf(logFile, NULL, _IOLBF, 0); /* a killed run leaves a whole log */
  pthread_mutex_lock(&lock);
  for (int k = 0; k < nk; k++) {
    snprintf(cpus[k].name, sizeof cpus[k].name, "%c", 'A' + k);
    cpus[k].e = tq_Processor_begin(cpus[k].name);
    cpus[k].running = -1;
    tq_RunningOn_sampler(cpus[k].e, sampleCpu, &cpus[k]);
  }
  for (int m = 0; m < nm; m++) {
    snprintf(boxes[m].name, sizeof boxes[m].name, "M%d", m + 1);
    boxes[m].e = tq_Mailbox_begin(boxes[m].name);
  }
  for (int i = 0; i < np; i++) {
    Proc *p = &procs[i];
    snprintf(p->name, sizeof p->name, "P%d", i + 1);
    p->e = tq_Process_begin(p->name, TQ_Process_State_Ready);
    p->own = i % nm;
    p->nsteps = nsteps;
    p->rng = seed * 7919u + (unsigned)i * 104729u;
    ready[nready++] = i;
  }
  pthread_mutex_unlock(&lock);
  /* let the monitor see the entities and enable its sensors first */
  struct timespec d = {0, 200 * 1000 * 1000}, tick = {0, 10 * 1000 * 1000};
  if (waitMonitor)
    for (int i = 0; i < 1000 && !tq_SendMessage_enabled(procs[0].e); i++) nanosleep(&tick, NULL);
  nanosleep(&d, NULL);
  pthread_t th[MAXK];
  for (int k = 0; k < nk; k++) pthread_create(&th[k], NULL, cpuMain, &cpus[k]);
  for (int k = 0; k < nk; k++) pthread_join(th[k], NULL);
  pthread_mutex_lock(&lock);
  if (logTimes) fprintf(logFile, "%ld EXIT %lld\n", ++seq, realNs());
  else logLine("EXIT%s%s", "", "");
  pthread_mutex_unlock(&lock);
  /* stay a moment so the last samples can be answered, then leave */
  nanosleep(&d, NULL);
  /* (under the lock: the service thread may answer a sample meanwhile, and
  ** logs it under the lock; it wrote into the closed log and crashed the
  ** program, once in a bench's run) */
  pthread_mutex_lock(&lock);
  if (logFile != stdout) fclose(logFile);
  logFile = NULL;
  pthread_mutex_unlock(&lock);
  uint64_t lost = tqs_dropped();
  if (lost) fprintf(stderr, "mailbox: %llu packets dropped (rings full)\n", (unsigned long long)lost);
  return 0;
}
