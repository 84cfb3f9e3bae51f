/*
** pms.c - the small built-in processor modules of sensors/, and the replay
** of a recording already read:
**
**   trace     EXTRACTOR of a text recording (args: the .trace file), or
**             CONSUMER writing one (args: write:FILE, all:FILE)
**   clock     TIMER of a collection (args: "count=N" snapshots, "realtime",
**             "from=NS,to=NS": the ticks over a recording's range, PCP archives)
**   progress  MONITOR: a progress line on long extractions
**
** They see the engine through include/tqmon_pm.h, and the trace PM the
** compiled program and its diagnostics through runtime/engine.h (it parses
** with the catalog's types).  colfil, shm and the host PMs have files of
** their own; app/builtins.c lists every built-in PM.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/engine.h"
#include "sensorsInt.h"

/* ================================================================ trace: text recordings */

/* The trace PM's CONSUMER state (its EXTRACTOR half is the replay's,
** replay.c). */
typedef struct TraceState {
  SnsTextWriter *w; /* the file written */
} TraceState;

/* args: FILE to read (EXTRACTOR), or "write:FILE" / "all:FILE" to write
** what the run collected / every record in the text form (CONSUMER).  A
** recording read already comes as the private data (snsReplay). */
static tq_pm_status traceInit(tq_pm_global *g, tq_pm_private *p) {
  const char *a = p->args ? p->args : "";
  if (!*a && !p->data) {
    snprintf(p->message, sizeof p->message, "give the recording: trace=FILE (read) or trace=write:FILE");
    return TQ_PM_ERROR;
  }
  if (!strncmp(a, "write:", 6)) {
    p->caps = TQ_PM_CONSUMER;
  } else if (!strncmp(a, "all:", 4)) {
    p->caps = TQ_PM_CONSUMER;
    p->sync = TQ_PM_SYNC_ALL_RECORDS;
  } else {
    p->caps = TQ_PM_EXTRACTOR;
  }
  return TQ_PM_OK;
}

static tq_pm_status traceRecord(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  TraceState *st = p->data;
  if (!st || !(p->caps & TQ_PM_CONSUMER)) return TQ_PM_OK;
  RtNet *net = enNet(g);
  if (net && net->originKnown) snsTextWriterOrigin(st->w, net->origin); /* (written before the first line) */
  if (snsTextWrite(st->w, r)) {
    snprintf(p->message, sizeof p->message, "cannot write %s", strchr(p->args, ':') + 1);
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status traceLost(tq_pm_global *g, tq_pm_private *p, int rel, int64_t entity, tq_time from, tq_time to,
                              int64_t count, int spans) {
  TraceState *st = p->data;
  if (!st || !(p->caps & TQ_PM_CONSUMER)) return TQ_PM_OK;
  if (snsTextWriteLoss(st->w, rel, entity, from, to, count, spans)) {
    snprintf(p->message, sizeof p->message, "cannot write %s", strchr(p->args, ':') + 1);
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status traceCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  if (p->caps & TQ_PM_EXTRACTOR) {
    if (what == TQ_PM_START) return snsReplayStart(g, p, p->data, NULL);
    if (what == TQ_PM_END) snsReplayEnd(g, p);
    return TQ_PM_OK;
  }
  TraceState *st = p->data;
  switch (what) {
    case TQ_PM_START: {
      st = tqCalloc(1, sizeof *st);
      p->data = st;
      const char *path = strchr(p->args, ':') + 1;
      st->w = snsTextWriterOpen(path, enProgram(g));
      if (!st->w) {
        snprintf(p->message, sizeof p->message, "cannot write %s", path);
        return TQ_PM_FATAL;
      }
      return TQ_PM_OK;
    }
    case TQ_PM_END:
      if (st) {
        /* the run's last time, as a collection file's range has it (a
        ** replay of the text ticks to it) */
        RtNet *net = enNet(g);
        TqTime last = net ? net->now : TQ_BEGINNING;
        if (net && net->opt.nowValue != TQ_OPEN) last = net->opt.nowValue;
        int bad = st->w && snsTextWriterClose(st->w, last);
        free(st);
        p->data = NULL;
        if (bad) {
          snprintf(p->message, sizeof p->message, "cannot write %s", strchr(p->args, ':') + 1);
          return TQ_PM_ERROR;
        }
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

const tq_pm snsTracePm = {
    .version = TQ_PM_VERSION,
    .name = "trace",
    .description = "text recordings (.trace): EXTRACTOR (args: FILE) and CONSUMER (args: write:FILE or all:FILE)",
    .init = traceInit,
    .call = traceCall,
    .extract = snsReplayExtract,
    .record = traceRecord,
    .lost = traceLost,
};

/* ================================================================ clock: the timer */

typedef struct ClockState {
  int64_t count;     /* snapshots still to take (-1: until halted) */
  int realtime;      /* wait for the wall clock; times are CLOCK_REALTIME ns */
  TqTime lag;        /* realtime: a snapshot at T is taken at T + lag (live
                     ** sources merge their buffers in time order up to T) */
  struct timespec t0;
  TqTime base;       /* collection time at t0 (realtime: CLOCK_REALTIME then) */
  int started;       /* the first snapshot is taken (it is at the start time) */
  TqTime to;         /* to=NS: no snapshot after it (0: none) */
  int ranged;        /* from=NS: the ticks over a recording's range */
} ClockState;

static tq_pm_status clockInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_TIMER;
  p->sync = TQ_PM_SYNC_PREBASELINE;
  return TQ_PM_OK;
}

static tq_pm_status clockCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  ClockState *c = p->data;
  if (what == TQ_PM_START) {
    c = tqCalloc(1, sizeof *c);
    p->data = c;
    c->count = -1;
    const char *a = p->args ? p->args : "";
    const char *n = strstr(a, "count=");
    if (n) c->count = atoll(n + 6);
    c->realtime = strstr(a, "realtime") != NULL;
    c->lag = 50 * TQ_MSEC;
    const char *l = strstr(a, "lag=");
    if (l) c->lag = (TqTime)(atof(l + 4) * (double)TQ_MSEC);
    const char *f = strstr(a, "from="), *til = strstr(a, "to=");
    if (til) c->to = atoll(til + 3);
    if (f && !c->realtime) {
      /* a recording's range (PCP archives): the ticks at the multiples of
      ** the tick from the first at or after from, the first snapshot at it */
      c->ranged = 1;
      if (g->set_start(g, tqTickAtOrAfter(atoll(f + 5), g->tick))) {
        snprintf(p->message, sizeof p->message, "from=%s: not a time the engine takes", f + 5);
        return TQ_PM_FATAL;
      }
    } else if (c->realtime) {
      /* the first snapshot is at the next tick: the collection's first
      ** time, so the first Clock tick has the first snapshot's records
      ** (at the tick before now, it ticked before anything was read and
      ** counted nothing: issue 14.6) */
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      g->set_start(g, tqTickAtOrAfter((TqTime)now.tv_sec * TQ_SEC + now.tv_nsec, g->tick));
    }
  } else if (what == TQ_PM_PREBASELINE) {
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    c->base = g->now;
    if (c->realtime) { /* the wall clock at t0: a snapshot at T is taken at T + lag */
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      c->base = (TqTime)now.tv_sec * TQ_SEC + now.tv_nsec;
    }
  } else if (what == TQ_PM_END) {
    free(c);
    p->data = NULL;
  }
  return TQ_PM_OK;
}

static tq_pm_status clockTimer(tq_pm_global *g, tq_pm_private *p, tq_time *next) {
  ClockState *c = p->data;
  if (c->count == 0) return TQ_PM_DONE;
  if (c->count > 0) c->count--;
  /* live or over a recording's range, the first snapshot is at the start
  ** time; simulated, a tick after time 0 */
  int first = !c->started;
  *next = c->started || !(c->realtime || c->ranged) ? g->now + g->tick : g->now;
  c->started = 1;
  if (c->to && *next > c->to) return TQ_PM_DONE;
  if (c->realtime && enHaltRequested(g)) {
    c->count = 0;
    return first ? TQ_PM_OK : TQ_PM_DONE; /* (the engine ends the run at its next step) */
  }
  if (c->realtime) {
    TqTime due = *next - c->base + c->lag;
    if (due < 0) due = 0;
    struct timespec ts = {c->t0.tv_sec + (time_t)(due / TQ_SEC), c->t0.tv_nsec + (long)(due % TQ_SEC)};
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    /* in slices of at most 100 ms: a signal taken by another thread (a
    ** drain thread, the server) interrupts no sleep here, and the halt it
    ** asked for is seen within a slice */
    for (;;) {
      struct timespec now, slice;
      clock_gettime(CLOCK_MONOTONIC, &now);
      slice = now;
      slice.tv_nsec += 100000000L;
      if (slice.tv_nsec >= 1000000000L) {
        slice.tv_sec++;
        slice.tv_nsec -= 1000000000L;
      }
      int last = slice.tv_sec > ts.tv_sec || (slice.tv_sec == ts.tv_sec && slice.tv_nsec >= ts.tv_nsec);
      if (last) slice = ts;
      int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &slice, NULL);
      if (!enHaltRequested(g)) {
        if (rc == 0 && last) break;
        continue;
      }
      /* halted while waiting (a signal): the snapshot is taken now, with
      ** what came since the last one, and it is the last */
      struct timespec wall;
      clock_gettime(CLOCK_REALTIME, &wall);
      TqTime t = (TqTime)wall.tv_sec * TQ_SEC + wall.tv_nsec;
      if (t < *next) *next = t > g->now ? t : first ? g->now : g->now + 1;
      c->count = 0;
      break;
    }
  }
  return TQ_PM_OK;
}

const tq_pm snsClockPm = {
    .version = TQ_PM_VERSION,
    .name = "clock",
    .description = "TIMER: a snapshot every base Clock tick (args: count=N, realtime, lag=MS, from=NS, to=NS)",
    .init = clockInit,
    .call = clockCall,
    .timer = clockTimer,
};

/* ================================================================ progress: a monitor */

/* On a terminal only (standard error), a line rewritten in place at most
** once a second during an extraction: how far through the recording it is
** (a percentage when the extractor gave its range), the records and
** snapshots so far; a last line at the end once it was shown.  Nothing
** goes to a file or a pipe: a log holds no carriage returns. */
typedef struct Progress {
  double last;       /* wall time of the last line */
  int shown;         /* a line was printed */
} Progress;

static void progressLine(tq_pm_global *g, const char *end) {
  int64_t records = 0, snapshots = 0;
  g->counts(g, &records, &snapshots);
  double f = enProgress(g);
  char pct[16] = "";
  if (f >= 0) snprintf(pct, sizeof pct, "%3.0f%%, ", f * 100);
  fprintf(stderr, "\r\033[Ktqmon: %s%lld records, %lld snapshots%s", pct, (long long)records, (long long)snapshots, end);
  fflush(stderr);
}

static tq_pm_status progressInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_MONITOR;
  p->sync = TQ_PM_SYNC_SNAPSHOT | TQ_PM_SYNC_COLLECTION_END;
  return TQ_PM_OK;
}

static tq_pm_status progressCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Progress *pr = p->data;
  switch (what) {
    case TQ_PM_START:
      if (g->operation != TQ_OP_EXTRACT || !isatty(STDERR_FILENO)) return TQ_PM_OK; /* (no state: silent) */
      pr = tqCalloc(1, sizeof(Progress));
      pr->last = tqWallSeconds();
      p->data = pr;
      return TQ_PM_OK;
    case TQ_PM_SNAPSHOT:
      if (!pr || tqWallSeconds() - pr->last < 1.0) return TQ_PM_OK;
      pr->last = tqWallSeconds();
      pr->shown = 1;
      progressLine(g, "");
      return TQ_PM_OK;
    case TQ_PM_COLLECTION_END:
      if (pr && pr->shown) progressLine(g, "\n");
      return TQ_PM_OK;
    case TQ_PM_END:
      free(pr);
      p->data = NULL;
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

const tq_pm snsProgressPm = {
    .version = TQ_PM_VERSION,
    .name = "progress",
    .description = "MONITOR: a progress line on standard error during long operations",
    .init = progressInit,
    .call = progressCall,
};

/* ================================================================ replay of a recording read already */

int snsReplay(CpProgram *p, RtNet *net, SnsTrace *tr) {
  tq_engine *e = enNew();
  int rc = -1;
  if (enRegisterData(e, &snsTracePm, "(memory)", tr) || enBind(e, p, net)) {
    fputs(tq_errors(e), stderr);
  } else {
    rc = tq_start(e) ? -1 : 0;
    fputs(tq_errors(e), stderr);
    if (tq_end(e)) rc = -1;
    fputs(tq_errors(e), stderr);
  }
  tq_finish(e);
  return rc;
}
