/*
** pm.c - the display processor module: a CONSUMER at the root of the
** update network that feeds the display model and hands each step to the
** outputs the arguments name (html=FILE, list[=FILE], tty, serve=PORT;
** linger: serve after the run until interrupted; pace=S: each step takes at
** least S seconds, to watch a replay live; history=MB: the steps the page
** and the server keep, older ones summarised, history.c; idle=S and
** stall=S: how long the server waits for a connection's request, and for
** a client to take what it is sent, before it drops it, serve.c).
**
** It declares TQ_PM_SYNC_DISPLAYS, so the engine compiles the queries that
** collect the displayed relations: displaying a relation is what enables
** its sensors.  A failing output disables the PM (the run goes on); a page that
** cannot be written at the end makes the run fail.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "dspInt.h"

/* pace=S: each step drawn takes at least S seconds (watching a replay live). */
typedef struct Pacer {
  DspOut o;
  double seconds;
} Pacer;
static void paceStep(void *self, DspModel *m, const DspStep *st) {
  Pacer *p = self;
  struct timespec ts = {(time_t)p->seconds, (long)((p->seconds - (double)(time_t)p->seconds) * 1e9)};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}
static int paceEnd(void *self, DspModel *m) {
  free(self);
  return 0;
}

typedef struct DisplayPm {
  DspModel *m;
  int started;          /* the consumer's begin ran */
} DisplayPm;

/* Checks (out == NULL) or builds the outputs of args.  Returns 0 or -1
** with a message in msg. */
static int outputs(const char *args, DspModel *m, char *msg, size_t nmsg) {
  char *copy = tqStrdup(args && *args ? args : "list");
  int rc = 0, linger = strstr(copy, "linger") != NULL, any = 0;
  /* history=MB: how much of the steps the page and the server keep (history.c) */
  /* (a first pass: the outputs made in the second one need it) */
  size_t history = DSP_HISTORY_DEFAULT;
  DspServeLimits lim = {0, 0};
  char *pre = tqStrdup(copy);
  for (char *save = NULL, *w = strtok_r(pre, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    /* idle=S, stall=S: the server's limits (serve.c), seconds */
    int isIdle = !strncmp(w, "idle=", 5), isStall = !strncmp(w, "stall=", 6);
    if (isIdle || isStall) {
      char *end = NULL;
      const char *v = w + (isIdle ? 5 : 6);
      double sec = strtod(v, &end);
      if (end == v || *end || !(sec >= 0.1 && sec <= 86400)) {
        snprintf(msg, nmsg, "%s needs seconds from 0.1 to 86400: %s=%d", isIdle ? "idle" : "stall",
                 isIdle ? "idle" : "stall", isIdle ? 10 : 30);
        free(pre);
        free(copy);
        return -1;
      }
      *(isIdle ? &lim.idleMs : &lim.stallMs) = (int64_t)(sec * 1000 + 0.5);
      continue;
    }
    if (strncmp(w, "history=", 8)) continue;
    char *end = NULL;
    long mb = strtol(w + 8, &end, 10);
    if (end == w + 8 || *end || mb < 1 || mb > 65536) {
      snprintf(msg, nmsg, "history needs megabytes from 1 to 65536: history=64");
      free(pre);
      free(copy);
      return -1;
    }
    history = (size_t)mb << 20;
  }
  free(pre);
  for (char *save = NULL, *w = strtok_r(copy, ",", &save); w && !rc; w = strtok_r(NULL, ",", &save)) {
    char *val = strchr(w, '=');
    if (val) *val++ = 0;
    if (!strcmp(w, "linger") || !strcmp(w, "history") || !strcmp(w, "idle") || !strcmp(w, "stall")) continue;
    if (!strcmp(w, "pace")) {
      char *end = NULL;
      double sec = val ? strtod(val, &end) : -1;
      if (!val || *end || sec < 0 || sec > 60) {
        snprintf(msg, nmsg, "pace needs seconds per step from 0 to 60: pace=0.1");
        rc = -1;
      } else if (m && sec > 0) {
        Pacer *pc = tqCalloc(1, sizeof *pc);
        pc->seconds = sec;
        pc->o.self = pc;
        pc->o.step = paceStep;
        pc->o.end = paceEnd;
        dspModelAddOutput(m, &pc->o);
      }
      continue;
    }
    any = 1;
    if (!strcmp(w, "html")) {
      if (!val || !*val) {
        snprintf(msg, nmsg, "html needs a file: html=FILE");
        rc = -1;
      } else if (m) {
        dspModelAddOutput(m, dspHtmlOut(val, history));
      }
    } else if (!strcmp(w, "list")) {
      if (m) {
        FILE *f = val && *val && strcmp(val, "-") ? fopen(val, "w") : stdout;
        if (!f) {
          snprintf(msg, nmsg, "cannot write %s", val);
          rc = -1;
        } else {
          dspModelAddOutput(m, dspListOut(f, f != stdout));
        }
      }
    } else if (!strcmp(w, "tty")) {
      if (m) dspModelAddOutput(m, dspTtyOut(stdout, isatty(STDOUT_FILENO)));
    } else if (!strcmp(w, "serve")) {
      const char *addr = "127.0.0.1", *port = val;
      char a[64];
      if (val && strrchr(val, ':')) {
        size_t n = (size_t)(strrchr(val, ':') - val);
        if (n >= sizeof a) n = sizeof a - 1;
        memcpy(a, val, n);
        a[n] = 0;
        addr = a;
        port = strrchr(val, ':') + 1;
      }
      char *end = NULL;
      long p = port ? strtol(port, &end, 10) : -1;
      if (!port || !*port || *end || p < 0 || p > 65535) {
        snprintf(msg, nmsg, "serve needs a port: serve=PORT or serve=ADDRESS:PORT (0: any free port)");
        rc = -1;
      } else if (m) {
        TqBuf err = {0};
        DspOut *o = dspServeOut(m, addr, (int)p, linger, history, &lim, &err);
        if (!o) {
          snprintf(msg, nmsg, "%s", err.s ? err.s : "cannot serve");
          rc = -1;
        } else {
          dspModelAddOutput(m, o);
        }
        tqBufFree(&err);
      }
    } else {
      snprintf(msg, nmsg,
               "unknown display output '%s' (html=FILE, list[=FILE], tty, serve=PORT, linger, pace=S, history=MB, idle=S, "
               "stall=S)",
               w);
      rc = -1;
    }
  }
  if (!rc && !any) {
    snprintf(msg, nmsg, "no display output given (html=FILE, list[=FILE], tty, serve=PORT)");
    rc = -1;
  }
  free(copy);
  return rc;
}

static tq_pm_status displayInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = TQ_PM_SYNC_SNAPSHOT_END | TQ_PM_SYNC_DISPLAYS;
  if (outputs(p->args, NULL, p->message, sizeof p->message)) return TQ_PM_ERROR;
  return TQ_PM_OK;
}

static tq_pm_status displayCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  DisplayPm *d = p->data;
  switch (what) {
    case TQ_PM_START: {
      d = tqCalloc(1, sizeof *d);
      p->data = d;
      d->m = dspModelNew(enProgram(g));
      RtConsumer *c = dspModelConsumer(d->m);
      c->begin(c->self, enNet(g));
      d->started = 1;
      if (outputs(p->args, d->m, p->message, sizeof p->message)) return TQ_PM_FATAL;
      enAttachConsumer(g, p, c);
      return TQ_PM_OK;
    }
    case TQ_PM_END: {
      int rc = 0;
      if (d) {
        if (d->m) {
          RtConsumer *c = dspModelConsumer(d->m);
          if (d->started && c->end(c->self, enNet(g), !p->disabled)) rc = -1;
          dspModelFree(d->m);
        }
        free(d);
        p->data = NULL;
      }
      if (rc) snprintf(p->message, sizeof p->message, "an output could not be written");
      return rc ? TQ_PM_FATAL : TQ_PM_OK; /* the run fails: its picture is lost */
    }
    default: return TQ_PM_OK;
  }
}

const tq_pm dspDisplayPm = {
    .version = TQ_PM_VERSION,
    .name = "display",
    .description = "CONSUMER: the display specification drawn (args: html=FILE, list[=FILE], tty, serve=PORT)",
    .init = displayInit,
    .call = displayCall,
};
