/*
** dspbench.c - how fast the display engine absorbs derived tuples into the
** page model: the paper's display (examples/paper/display.tq) over a
** generated system, result rows fed straight to the display consumer as
** the update network would hand them over, every step encoded as the JSON
** of the page (the html output), then the page written.
**
**   dspbench [-n TUPLES] [-p PROCESSES] [-c PROCESSORS] [-m MAILBOXES] -o PAGE.html
**
** The system: processes change state, run on processors (sampled each
** second), send messages and wait on mailboxes; P1's sends resume waiters
** (ResumedbyP1).  Output: "key value" lines for bench/run.sh.
*/
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "dspInt.h"
#include "rtInt.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ULL;
}

static RtResult *resultNamed(RtNet *net, const char *name) {
  for (int i = 0; i < net->nresult; i++)
    if (!strcmp(net->result[i].name, name)) return &net->result[i];
  fprintf(stderr, "dspbench: no result %s\n", name);
  exit(2);
}

typedef struct Bench {
  RtConsumer *c;
  RtNet *net;
  int64_t rows;
  uint64_t rowid;
} Bench;

static uint64_t insert(Bench *b, RtResult *r, TqTime from, TqTime to, const int64_t *vals) {
  RtRow row = {RT_ROW_INSERT, ++b->rowid, from, to, vals};
  b->c->row(b->c->self, r, &row);
  b->rows++;
  return row.rowid;
}
static void closeRow(Bench *b, RtResult *r, uint64_t id, TqTime from, TqTime to) {
  RtRow row = {RT_ROW_CLOSE, id, from, to, NULL};
  b->c->row(b->c->self, r, &row);
  b->rows++;
}
static void instant(Bench *b, TqTime now) {
  for (int i = 0; i < b->net->nresult; i++) b->net->result[i].root->low = b->net->result[i].root->endLow = now;
  b->c->batch(b->c->self, now);
}

int main(int argc, char **argv) {
  int64_t n = 100000;
  int np = 200, nc = 16, nm = 50;
  const char *out = "build/bench/display.html";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoll(argv[++i]);
    else if (!strcmp(argv[i], "-p") && i + 1 < argc) np = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-c") && i + 1 < argc) nc = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-m") && i + 1 < argc) nm = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
  }
  const char *files[] = {"examples/paper/paper.tq", "examples/paper/queries.tq", "examples/paper/display.tq"};
  TqDiag d = {0};
  CpProgram *p = cpCompileFiles(3, files, &d);
  if (!p || cpDisplayQueries(p, &d)) {
    fputs(d.out.s ? d.out.s : "dspbench: cannot compile\n", stderr);
    return 2;
  }
  cpOptimize(p, NULL);
  RtOptions opt = {0};
  opt.nowValue = TQ_OPEN;
  RtNet *net = rtNetNew(p, &opt, &d);
  if (!net) {
    fputs(d.out.s ? d.out.s : "dspbench: cannot build the network\n", stderr);
    return 2;
  }
  DspModel *m = dspModelNew(p);
  Bench b = {dspModelConsumer(m), net, 0, 0};
  b.c->begin(b.c->self, net);
  dspModelAddOutput(m, dspHtmlOut(out, DSP_HISTORY_DEFAULT));
  RtResult *rProc = resultNamed(net, "display Process"), *rCpu = resultNamed(net, "display Processor"),
           *rMbx = resultNamed(net, "display Mailbox"), *rRun = resultNamed(net, "display RunningOn"),
           *rWait = resultNamed(net, "display Waiting"), *rSend = resultNamed(net, "display SendMessage"),
           *rRes = resultNamed(net, "ResumedbyP1");
  char name[32];
  int64_t *proc = calloc((size_t)np, sizeof(int64_t)), *cpu = calloc((size_t)nc, sizeof(int64_t)),
          *mbx = calloc((size_t)nm, sizeof(int64_t));
  uint64_t *stateRow = calloc((size_t)np, sizeof(uint64_t)), *waitRow = calloc((size_t)np, sizeof(uint64_t));
  TqTime *stateFrom = calloc((size_t)np, sizeof(TqTime)), *waitFrom = calloc((size_t)np, sizeof(TqTime));
  int *runsOn = calloc((size_t)np, sizeof(int)), *waitsOn = calloc((size_t)np, sizeof(int)), *state = calloc((size_t)np, sizeof(int));
  int *cpuHas = calloc((size_t)nc, sizeof(int));
  for (int i = 0; i < np; i++) {
    snprintf(name, sizeof name, "P%d", i + 1);
    proc[i] = tqSymZ(name);
    runsOn[i] = waitsOn[i] = -1;
  }
  for (int i = 0; i < nc; i++) {
    snprintf(name, sizeof name, "CPU%d", i + 1);
    cpu[i] = tqSymZ(name);
    cpuHas[i] = -1;
  }
  for (int i = 0; i < nm; i++) {
    snprintf(name, sizeof name, "M%d", i + 1);
    mbx[i] = tqSymZ(name);
  }
  double t0 = tqWallSeconds();
  TqTime now = 0;
  enum { READY = 0, RUNNING, BLOCKED };
  /* the entities */
  for (int i = 0; i < nc; i++) insert(&b, rCpu, now, TQ_OPEN, &cpu[i]);
  for (int i = 0; i < nm; i++) insert(&b, rMbx, now, TQ_OPEN, &mbx[i]);
  for (int i = 0; i < np; i++) {
    int64_t v[2] = {proc[i], READY};
    stateRow[i] = insert(&b, rProc, now, TQ_OPEN, v);
    stateFrom[i] = now;
  }
  instant(&b, now);
  while (b.rows < n) {
    now += TQ_SEC;
    /* a few processes change: run, block on a mailbox, get ready again */
    for (int k = 0; k < 3; k++) {
      int i = (int)(rnd() % (uint64_t)np), ns = state[i];
      if (state[i] == READY) {
        int c = (int)(rnd() % (uint64_t)nc);
        if (cpuHas[c] >= 0) continue;
        ns = RUNNING;
        cpuHas[c] = i;
        runsOn[i] = c;
      } else if (state[i] == RUNNING) {
        cpuHas[runsOn[i]] = -1;
        runsOn[i] = -1;
        if (rnd() % 2) {
          ns = BLOCKED;
          waitsOn[i] = (int)(rnd() % (uint64_t)nm);
          int64_t v[2] = {proc[i], mbx[waitsOn[i]]};
          waitRow[i] = insert(&b, rWait, now, TQ_OPEN, v);
          waitFrom[i] = now;
        } else {
          ns = READY;
        }
      } else {
        /* resumed by a send to its mailbox */
        int64_t s[2] = {proc[0], mbx[waitsOn[i]]};
        insert(&b, rSend, now - TQ_SEC / 2, TQ_OPEN, s);
        closeRow(&b, rWait, waitRow[i], waitFrom[i], now);
        insert(&b, rRes, now, TQ_OPEN, &proc[i]);
        waitsOn[i] = -1;
        ns = READY;
      }
      closeRow(&b, rProc, stateRow[i], stateFrom[i], now);
      int64_t v[2] = {proc[i], ns};
      stateRow[i] = insert(&b, rProc, now, TQ_OPEN, v);
      stateFrom[i] = now;
      state[i] = ns;
    }
    /* the samples of RunningOn, every second */
    for (int c = 0; c < nc; c++)
      if (cpuHas[c] >= 0) {
        int64_t v[2] = {proc[cpuHas[c]], cpu[c]};
        insert(&b, rRun, now, TQ_OPEN, v);
      }
    /* other sends */
    if (rnd() % 4 == 0) {
      int64_t v[2] = {proc[rnd() % (uint64_t)np], mbx[rnd() % (uint64_t)nm]};
      insert(&b, rSend, now, TQ_OPEN, v);
    }
    instant(&b, now);
  }
  double t1 = tqWallSeconds();
  int rc = b.c->end(b.c->self, net, 1);
  double t2 = tqWallSeconds();
  DspStats st;
  dspModelStats(m, &st);
  FILE *f = fopen(out, "rb");
  long size = 0;
  if (f) {
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fclose(f);
  }
  printf("display.tuples %lld\n", (long long)st.rows);
  printf("display.steps %lld\n", (long long)st.steps);
  printf("display.changes %lld\n", (long long)st.changes);
  printf("display.objects %lld\n", (long long)st.objects);
  printf("display.bars %lld\n", (long long)st.bars);
  printf("display.model_seconds %.4f\n", t1 - t0);
  printf("display.rate %.0f\n", (t1 - t0) > 0 ? (double)st.rows / (t1 - t0) : 0);
  printf("display.page_seconds %.4f\n", t2 - t1);
  printf("display.page_bytes %ld\n", size);
  printf("display.page %s\n", out);
  dspModelFree(m);
  rtNetFree(net);
  cpProgramFree(p);
  tqDiagFree(&d);
  free(proc), free(cpu), free(mbx), free(stateRow), free(waitRow), free(stateFrom), free(waitFrom);
  free(runsOn), free(waitsOn), free(state), free(cpuHas);
  return rc ? 1 : 0;
}
