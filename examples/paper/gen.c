/*
** gen.c - generator of larger recordings of the paper's system: N
** processes, M mailboxes and K processors, with a seeded random schedule,
** written in the text recording format for the sensors of paper.tq.
**
**   paper-gen [-n processes] [-m mailboxes] [-k processors] [-p packets]
**             [-s seed] [-o file]
**
** The simulation: each processor runs ready processes (FIFO) in bursts of
** 10 to 500 ms; at the end of a burst the process sends to one of its
** mailboxes (and keeps running), receives from one of its mailboxes (taking
** a queued message and going on, or blocking: Waiting begins, state Blocked),
** or yields (state Ready, back in the queue).  A message sent to a mailbox
** with blocked processes wakes the first of them 1 to 10 ms later (its
** Waiting interval ends, state Ready); a receive gives up after 2 to 20 s.
** P1 never blocks.  Each process sends to and receives
** from two mailboxes of its own, so a process talks to few mailboxes, as in
** a pipeline.  P1 is process 1; it has priority (dispatched first when
** ready), so it is busy and its sends wake processes.  Times are ns from the origin; the run
** starts at 1 s and every entity ends at the last time.  A context switch
** takes 1 ms, so no state lasts zero time.
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t Time;
#define MS 1000000LL

static uint64_t rng;
static uint64_t rnd(void) {
  /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ULL;
}
static int64_t range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

enum { EV_BURST = 1, EV_WAKE, EV_TIMEOUT };
typedef struct Ev {
  Time t;
  int64_t seq; /* ties keep creation order */
  int type, who, mb;
} Ev;

static Ev *heap;
static int nheap, cheap;
static int64_t seq;
static int evLess(const Ev *a, const Ev *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }
static void push(Time t, int type, int who, int mb) {
  if (nheap == cheap) {
    cheap = cheap ? 2 * cheap : 1024;
    heap = realloc(heap, sizeof(Ev) * (size_t)cheap);
  }
  Ev e = {t, seq++, type, who, mb};
  int i = nheap++;
  heap[i] = e;
  while (i > 0 && evLess(&heap[i], &heap[(i - 1) / 2])) {
    Ev tmp = heap[i];
    heap[i] = heap[(i - 1) / 2];
    heap[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}
static Ev pop(void) {
  Ev top = heap[0];
  heap[0] = heap[--nheap];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < nheap && evLess(&heap[l], &heap[m])) m = l;
    if (r < nheap && evLess(&heap[r], &heap[m])) m = r;
    if (m == i) break;
    Ev tmp = heap[i];
    heap[i] = heap[m];
    heap[m] = tmp;
    i = m;
  }
  return top;
}

/* a FIFO of ints */
typedef struct Q {
  int *v;
  int head, n, cap;
} Q;
static void qpush(Q *q, int x) {
  if (q->n == q->cap) {
    int nc = q->cap ? 2 * q->cap : 16;
    int *nv = malloc(sizeof(int) * (size_t)nc);
    for (int i = 0; i < q->n; i++) nv[i] = q->v[(q->head + i) % q->cap];
    free(q->v);
    q->v = nv;
    q->head = 0;
    q->cap = nc;
  }
  q->v[(q->head + q->n++) % q->cap] = x;
}
static int qpop(Q *q) {
  int x = q->v[q->head];
  q->head = (q->head + 1) % q->cap;
  q->n--;
  return x;
}

/* P1 has priority: when it is ready it is dispatched first. */
static int p1Ready;
static Time *readyAt; /* when each process became ready */
static Time now;
static void makeReady(Q *ready, int p) {
  readyAt[p] = now;
  if (p == 1) p1Ready = 1;
  else qpush(ready, p);
}

static FILE *out;
static int64_t packets;

static void line(Time t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Time t, const char *fmt, ...) {
  va_list ap;
  fprintf(out, "%" PRId64 " ", t);
  va_start(ap, fmt);
  vfprintf(out, fmt, ap);
  va_end(ap);
  fputc('\n', out);
  packets++;
}

int main(int argc, char **argv) {
  int N = 200, M = 50, K = 8;
  int64_t P = 100000;
  uint64_t seed = 1;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) goto usage;
    if (!strcmp(argv[i], "-n")) N = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-m")) M = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-k")) K = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-p")) P = atoll(argv[++i]);
    else if (!strcmp(argv[i], "-s")) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "-o")) path = argv[++i];
    else goto usage;
  }
  if (N < 1 || M < 1 || K < 1 || P < 1) goto usage;
  out = path ? fopen(path, "w") : stdout;
  if (!out) {
    perror(path);
    return 1;
  }
  rng = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int i = 0; i < 8; i++) rnd();

  int (*talk)[2] = malloc(sizeof(int[2]) * (size_t)(N + 1)); /* each process's two mailboxes */
  int *waitingOn = calloc((size_t)N + 1, sizeof(int));      /* mailbox a process is blocked on, 0 */
  int *blockSeq = calloc((size_t)N + 1, sizeof(int));       /* number of its latest block */
  int *msgs = calloc((size_t)M + 1, sizeof(int));           /* queued messages per mailbox */
  Q *waiters = calloc((size_t)M + 1, sizeof(Q));
  int *running = calloc((size_t)K + 1, sizeof(int)); /* process on each processor, 0 */
  Q ready = {0};
  Time t0 = 1000 * MS;
  readyAt = calloc((size_t)N + 1, sizeof(Time));
  now = t0;

  fprintf(out, "# paper-gen -n %d -m %d -k %d -p %" PRId64 " -s %" PRIu64 "\n", N, M, K, P, seed);
  for (int k = 1; k <= K; k++) line(t0, "Processor+ C%d", k);
  for (int m = 1; m <= M; m++) line(t0, "Mailbox+ M%d", m);
  for (int p = 1; p <= N; p++) {
    talk[p][0] = (int)range(1, M);
    talk[p][1] = (int)range(1, M);
    line(t0, "Process+ P%d Ready", p);
    makeReady(&ready, p);
  }
  for (int k = 1; k <= K; k++) push(t0 + MS, EV_BURST, k, 0);
  while (packets < P && nheap) {
    Ev e = pop();
    now = e.t;
    if (e.type == EV_TIMEOUT) {
      /* a receive gives up after a while (keeps the system from stalling) */
      int p = e.who;
      if (!waitingOn[p] || blockSeq[p] != e.mb) continue;
      e.mb = waitingOn[p];
      e.type = EV_WAKE;
    }
    if (e.type == EV_WAKE) {
      int p = e.who;
      if (!waitingOn[p]) continue;
      line(now, "Waiting- P%d M%d", p, e.mb);
      line(now, "Process+ P%d Ready", p);
      waitingOn[p] = 0;
      makeReady(&ready, p);
      continue;
    }
    int k = e.who, p = running[k];
    if (p) {
      /* the burst of p on k ends: act */
      int r = (int)range(0, 99);
      int mb = talk[p][range(0, 1)];
      int sendP = p == 1 ? 30 : 25; /* percent of bursts ending in a send */
      if (r < sendP) {
        line(now, "SendMessage P%d M%d", p, mb);
        int w = 0;
        while (waiters[mb].n && !w) {
          w = qpop(&waiters[mb]);
          if (waitingOn[w] != mb) w = 0; /* gave up already */
        }
        if (w) push(now + range(1, 10) * MS, EV_WAKE, w, mb);
        else msgs[mb]++;
        push(now + range(10, 500) * MS, EV_BURST, k, 0);
        continue;
      }
      if (r >= 50 && r < 85 && msgs[mb]) {
        msgs[mb]--;
        push(now + range(10, 500) * MS, EV_BURST, k, 0);
        continue;
      }
      line(now, "RunningOn- P%d C%d", p, k);
      running[k] = 0;
      if (r >= 50 && r < 85 && p != 1) {
        line(now, "Waiting+ P%d M%d", p, mb);
        line(now, "Process+ P%d Blocked", p);
        waitingOn[p] = mb;
        qpush(&waiters[mb], p);
        push(now + range(2000, 20000) * MS, EV_TIMEOUT, p, ++blockSeq[p]);
      } else {
        line(now, "Process+ P%d Ready", p);
        makeReady(&ready, p);
      }
      push(now + MS, EV_BURST, k, 0); /* context switch: dispatch 1 ms later */
      continue;
    }
    /* dispatch the next ready process, or look again a little later */
    /* a process that became ready at this very instant waits for the next one */
    int p1ok = p1Ready && readyAt[1] < now;
    int headOk = ready.n && readyAt[ready.v[ready.head]] < now;
    if (p1ok || headOk) {
      if (p1ok) {
        p = 1;
        p1Ready = 0;
      } else {
        p = qpop(&ready);
      }
      running[k] = p;
      line(now, "Process+ P%d Running", p);
      line(now, "RunningOn+ P%d C%d", p, k);
      push(now + range(10, 500) * MS, EV_BURST, k, 0);
    } else {
      push(now + (p1Ready || ready.n ? MS : 50 * MS), EV_BURST, k, 0);
    }
  }
  /* the system halts: close everything */
  Time end = now + 1000 * MS;
  for (int k = 1; k <= K; k++)
    if (running[k]) line(end, "RunningOn- P%d C%d", running[k], k);
  for (int p = 1; p <= N; p++)
    if (waitingOn[p]) line(end, "Waiting- P%d M%d", p, waitingOn[p]);
  for (int p = 1; p <= N; p++) line(end, "Process- P%d", p);
  for (int m = 1; m <= M; m++) line(end, "Mailbox- M%d", m);
  for (int k = 1; k <= K; k++) line(end, "Processor- C%d", k);
  if (path) fclose(out);
  free(talk);
  free(waitingOn);
  free(blockSeq);
  free(readyAt);
  free(msgs);
  for (int m = 0; m <= M; m++) free(waiters[m].v);
  free(waiters);
  free(running);
  free(ready.v);
  free(heap);
  return 0;
usage:
  fprintf(stderr, "usage: paper-gen [-n processes] [-m mailboxes] [-k processors] [-p packets] [-s seed] [-o file]\n");
  return 2;
}
