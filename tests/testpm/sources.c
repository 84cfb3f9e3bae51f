/*
** sources.c - test processor modules that are the sources of an operation,
** built as build/testpm/sources.so (links ticks.so, reader.so, meter.so and
** meterraw.so name it, since the PM path finds a PM by its library's name).
** Like testpm.c they see only pm.h and the callbacks of tq_pm_global.
**
**   ticks     TIMER: snapshots at the irregular times given in its args
**             (at=S1+S2+..., seconds), then DONE.  Replaces the built-in
**             clock of a collection.  It gives the times as they are, so a
**             test can make time go back.
**   reader    EXTRACTOR: reads a recording in a format of its own (below)
**             and delivers it a snapshot at a time.
**   meter     PRODUCER of the sampled relation Meter (Host, Dev: string,
**             Count: int), with its own delta function: Count is a 16-bit
**             counter that wraps, and its delta is (current - previous)
**             modulo 65536.
**   meterraw  the same producer without a delta function (the engine
**             subtracts).
**   runs      PRODUCER of the traced interval relation Runs (Job: string,
**             Host: Host performer): at each snapshot, the job that ends
**             and the one that begins on each host (A and B, from hosts).
**   runssampled  PRODUCER of Runs_sampled, Runs's sampled sensor (rule
**             SENSOR, tests/testpm/runs.tq): the job on the asked host at t.
**             Both read one schedule: on host h (A 0, B 1) during second s
**             (of the operation's time) runs job "jN", N = (s + h) / 3.
** Meter is declared in tests/testpm/meter.tq; the hosts come from testpm.c's
** hosts PM.  reader delivers whatever relations its recording names (the
** tests give it the paper's, tests/testpm/paper.rec).
**
** Arguments (p->args), comma-separated:
**   log=FILE     append one line per call, "NAME WHAT ...", to FILE
**   at=S1+S2+... ticks: the snapshot times, in seconds (decimals allowed)
**   file=FILE    reader: the recording
**   range        reader: read it through once at START and give its range
**                (g->set_range), as the built-in extractors do; range=late
**                gives one after its first records (refused, with a warning)
**   announce     reader: read it through once at START and announce its
**                whole intervals (g->announce_whole, interface version 3),
**                as the built-in extractors do; announce=late announces
**                them after the first records (refused, with a warning)
** Without arguments (loaded with another PM of this library) a PM is inert:
** it declares nothing.
**
** The reader's format, one record a line ('#' starts a comment line):
**   SECONDS|KIND|RELATION|ID|VALUE|VALUE...
** KIND is e (an event), b (an interval ID begins), x (interval ID ends: no
** values, the reader gives the begin's again), s (a sample) or w (an
** interval reported whole at its end: ID is its begin, in seconds).  A value says
** its type, since the PM interface does not: @NAME an entity or a string,
** %NAME an enum value, #N an int, ~X a float.  Times never decrease.
**
** runs counts its records, runssampled its samples: each logs at END
** ("NAME END now=... records N" or "... samples N").
**
** Meter's counts at t seconds: rx = 30000 t + o, tx = 1000 t + o, modulo
** 65536, where o is 0 for host A and 500 for the others.
**
** State lives in static storage, one slot per PM (one instance each).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm.h"

enum { TICKS, READER, METER, METERRAW, RUNS, RUNSSAMPLED, NPM };

static const char *const pmNames[NPM] = {"ticks", "reader", "meter", "meterraw", "runs", "runssampled"};

#define SEC 1000000000LL
#define MAXTIMES 64  /* ticks: snapshot times */
#define MAXOPEN 256  /* reader: open intervals */
#define MAXVALS 16   /* reader: values of a record */

typedef struct OpenIv {
  uint64_t id;           /* the interval's ID in the file (0: free slot) */
  int rel;               /* its relation */
  tq_time from;          /* its begin */
  int nvals;
  int64_t vals[MAXVALS]; /* its values */
} OpenIv;

typedef struct Conf {
  int role;               /* TICKS .. METERRAW */
  int active;             /* configured: declares itself, logs */
  char log[512];          /* log file ("" none) */
  tq_time at[MAXTIMES];   /* ticks: the snapshot times */
  int nat, next;          /* ticks: their number, the next one */
  char file[512];         /* reader: the recording */
  FILE *in;               /* reader: open from START to END */
  int line;               /* reader: lines read */
  char held[1024];        /* reader: a line read ahead (the next snapshot's) */
  int haveHeld;
  int range;              /* reader: gives the recording's range at START */
  int announce;           /* reader: announces its whole intervals (1 at START, 2 late) */
  OpenIv open[MAXOPEN];   /* reader: the open intervals */
  int attr[3];            /* meter: the attributes Host, Dev, Count; runs: Job, Host */
  int64_t job[2];         /* runs: the job running on A and B (-1: none yet) */
  tq_time from[2];        /* runs: since when */
  int64_t count;          /* runs: records produced; runssampled: samples answered */
} Conf;

static Conf confs[NPM];

/* ================================================================ logging */

static void logLine(tq_pm_global *g, tq_pm_private *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line "NAME text" to the log file (when given), and the same through
** g->log at debug level. */
static void logLine(tq_pm_global *g, tq_pm_private *p, const char *fmt, ...) {
  Conf *c = p->data;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  g->log(g, p, TQ_LOG_DEBUG, "%s", text);
  if (!c->log[0]) return;
  FILE *f = fopen(c->log, "a");
  if (!f) return;
  fprintf(f, "%s %s\n", pmNames[c->role], text);
  fclose(f);
}

/* Times as seconds, with the fraction when there is one ("2.5s"). */
static const char *timeText(char *buf, size_t n, tq_time t) {
  if (t % SEC == 0) {
    snprintf(buf, n, "%llds", (long long)(t / SEC));
    return buf;
  }
  char frac[16];
  snprintf(frac, sizeof frac, "%09lld", (long long)(t % SEC));
  for (size_t k = strlen(frac); k > 1 && frac[k - 1] == '0'; k--) frac[k - 1] = 0;
  snprintf(buf, n, "%lld.%ss", (long long)(t / SEC), frac);
  return buf;
}

/* Seconds with an optional fraction ("2.5") as nanoseconds; -1 when bad. */
static tq_time secondsOf(const char *s, size_t len) {
  tq_time t = 0, scale = SEC;
  size_t i = 0;
  if (len == 0) return -1;
  for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) t = 10 * t + (s[i] - '0');
  t *= SEC;
  if (i < len && s[i] == '.') {
    for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
      scale /= 10;
      t += (s[i] - '0') * scale;
    }
  }
  return i == len ? t : -1;
}

/* ================================================================ init */

static const unsigned capsOf[NPM] = {TQ_PM_TIMER, TQ_PM_EXTRACTOR, TQ_PM_PRODUCER, TQ_PM_PRODUCER, TQ_PM_PRODUCER, TQ_PM_PRODUCER};

static tq_pm_status initRole(tq_pm_global *g, tq_pm_private *p, int role) {
  Conf *c = &confs[role];
  memset(c, 0, sizeof *c);
  c->role = role;
  p->data = c;
  c->active = p->args != NULL;
  if (!c->active) return TQ_PM_OK;
  p->caps = capsOf[role];
  const char *a = p->args;
  while (*a) {
    const char *comma = strchr(a, ',');
    size_t len = comma ? (size_t)(comma - a) : strlen(a);
    const char *eq = memchr(a, '=', len);
    size_t klen = eq ? (size_t)(eq - a) : len;
    const char *v = eq ? eq + 1 : a + len;
    size_t vlen = eq ? len - klen - 1 : 0;
#define KEY(k) (klen == strlen(k) && !strncmp(a, k, klen))
    if (KEY("log")) {
      snprintf(c->log, sizeof c->log, "%.*s", (int)vlen, v);
    } else if (KEY("at") && role == TICKS) {
      while (vlen > 0 && c->nat < MAXTIMES) {
        const char *plus = memchr(v, '+', vlen);
        size_t k = plus ? (size_t)(plus - v) : vlen;
        tq_time t = secondsOf(v, k);
        if (t < 0) snprintf(p->message, sizeof p->message, "bad time '%.*s' (seconds)", (int)k, v);
        c->at[c->nat++] = t;
        if (!plus) break;
        vlen -= k + 1;
        v = plus + 1;
      }
    } else if (KEY("file") && role == READER) {
      snprintf(c->file, sizeof c->file, "%.*s", (int)vlen, v);
    } else if (KEY("range") && role == READER && !eq) {
      c->range = 1;
    } else if (KEY("range") && role == READER && vlen == 4 && !strncmp(v, "late", 4)) {
      c->range = 2; /* a misuse: after the first records (refused) */
    } else if (KEY("announce") && role == READER && !eq) {
      c->announce = 1;
    } else if (KEY("announce") && role == READER && vlen == 4 && !strncmp(v, "late", 4)) {
      c->announce = 2; /* a misuse: after the first records (refused) */
    } else {
      snprintf(p->message, sizeof p->message, "unknown argument '%.*s'", (int)len, a);
    }
#undef KEY
    a += len + (comma ? 1 : 0);
  }
  if (!p->message[0] && role == TICKS && c->nat == 0) snprintf(p->message, sizeof p->message, "give the times: at=S1+S2+...");
  if (!p->message[0] && role == READER && !c->file[0]) snprintf(p->message, sizeof p->message, "give the recording: file=FILE");
  if (p->message[0]) return TQ_PM_ERROR;
  if (role == TICKS) p->sync = TQ_PM_SYNC_PREBASELINE;
  if (role == METER || role == METERRAW) p->produces = "Meter";
  if (role == RUNS) {
    p->produces = "Runs";
    p->sync = TQ_PM_SYNC_SNAPSHOT;
    p->depends[p->ndepends++] = "hosts"; /* the hosts begin before their jobs */
  }
  if (role == RUNSSAMPLED) p->produces = "Runs_sampled";
  return TQ_PM_OK;
}

/* ================================================================ calls */

static tq_time lineTime(const char *ln);
static tq_time secondsOf(const char *s, size_t len);

/* Reads the recording through and announces each whole interval (a w
** line) to the engine, then goes back to its start; -1 when the engine
** lacks announce_whole (p->message says so). */
static int announceAll(tq_pm_global *g, tq_pm_private *p, Conf *c) {
  if (g->version < 3) {
    snprintf(p->message, sizeof p->message, "announce needs interface version 3 (the engine speaks %d)", g->version);
    return -1;
  }
  char ln[1024];
  while (fgets(ln, sizeof ln, c->in)) {
    char rel[128];
    const char *k = strchr(ln, '|');
    if (ln[0] == '#' || !k || strncmp(k, "|w|", 3)) continue;
    const char *r = k + 3, *bar = strchr(r, '|');
    if (!bar || (size_t)(bar - r) >= sizeof rel) continue;
    memcpy(rel, r, (size_t)(bar - r));
    rel[bar - r] = 0;
    const char *f = bar + 1;
    size_t flen = strcspn(f, "|\r\n");
    tq_time from = secondsOf(f, flen);
    char ts[48];
    logLine(g, p, "announce_whole %s %s: %d", rel, timeText(ts, sizeof ts, from), g->announce_whole(g, g->relation(g, rel), from));
  }
  rewind(c->in);
  return 0;
}

/* ================================================================ runs: a relation with two sensors */

static const char *const hostNames[2] = {"A", "B"};

/* The job on host h at t: (s + h) / 3, s = t in whole seconds. */
static int64_t jobAt(int h, tq_time t) { return (t / SEC + h) / 3; }

static int64_t jobSymbol(tq_pm_global *g, int64_t n) {
  char name[32];
  snprintf(name, sizeof name, "j%lld", (long long)n);
  return g->symbol(g, name, -1);
}

/* runs at a snapshot: on each host, the job that ended since the last one
** (the schedule changes only at whole seconds, and the snapshots are at
** whole seconds: the timer ticks says when) and the one running now. */
static tq_pm_status runsSnapshot(tq_pm_global *g, tq_pm_private *p, Conf *c) {
  for (int h = 0; h < 2; h++) {
    int64_t j = jobAt(h, g->now);
    if (j == c->job[h]) continue;
    int64_t vals[2];
    vals[c->attr[1]] = g->symbol(g, hostNames[h], -1);
    tq_record r = {.rel = p->rel, .nvals = 2, .vals = vals};
    if (c->job[h] >= 0) {
      vals[c->attr[0]] = jobSymbol(g, c->job[h]);
      r.kind = TQ_REC_END;
      r.from = c->from[h];
      r.to = r.t = g->now;
      r.id = (uint64_t)(c->job[h] * 2 + h + 1);
      if (g->produce(g, &r)) goto refused;
      c->count++;
    }
    vals[c->attr[0]] = jobSymbol(g, j);
    r.kind = TQ_REC_BEGIN;
    r.from = r.t = c->from[h] = g->now;
    r.id = (uint64_t)(j * 2 + h + 1);
    if (g->produce(g, &r)) goto refused;
    c->count++;
    c->job[h] = j;
  }
  return TQ_PM_OK;
refused:
  snprintf(p->message, sizeof p->message, "a record was refused");
  return TQ_PM_FATAL;
}

static tq_pm_status call(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  static const char *const names[] = {"?", "START", "PREBASELINE", "SNAPSHOT", "SNAPSHOT_END", "COLLECTION_END", "END",
                                      "DEP_DISABLED"};
  Conf *c = p->data;
  if (!c->active) return TQ_PM_OK;
  char t[48];
  logLine(g, p, "%s now=%s", what >= 1 && what <= TQ_PM_DEP_DISABLED ? names[what] : "?", timeText(t, sizeof t, g->now));
  if (what == TQ_PM_START && c->role == READER) {
    c->in = fopen(c->file, "r");
    if (!c->in) {
      snprintf(p->message, sizeof p->message, "cannot read %.200s", c->file);
      return TQ_PM_FATAL;
    }
    if (c->announce == 1 && announceAll(g, p, c)) return TQ_PM_FATAL;
    if (c->range == 1) {
      tq_time first = -1, last = -1;
      int64_t n = 0;
      char ln[1024];
      while (fgets(ln, sizeof ln, c->in)) {
        tq_time lt = ln[0] == '#' ? -1 : lineTime(ln);
        if (lt < 0) continue;
        if (first < 0) first = lt;
        last = lt;
        n++;
      }
      rewind(c->in);
      if (first >= 0) {
        char a[48], b[48];
        logLine(g, p, "set_range %s %s %lld: %d", timeText(a, sizeof a, first), timeText(b, sizeof b, last), (long long)n,
                g->set_range(g, first, last, n));
      }
    }
  } else if (what == TQ_PM_START && (c->role == METER || c->role == METERRAW)) {
    static const char *const attrs[3] = {"Host", "Dev", "Count"};
    if (g->nattributes(g, p->rel) != 3) {
      snprintf(p->message, sizeof p->message, "Meter should have 3 attributes (Host, Dev, Count)");
      return TQ_PM_ERROR;
    }
    for (int i = 0; i < 3; i++) {
      c->attr[i] = g->attribute(g, p->rel, attrs[i]);
      if (c->attr[i] < 0) {
        snprintf(p->message, sizeof p->message, "Meter has no attribute %s", attrs[i]);
        return TQ_PM_ERROR;
      }
    }
  } else if (what == TQ_PM_START && (c->role == RUNS || c->role == RUNSSAMPLED)) {
    c->attr[0] = g->attribute(g, p->rel, "Job");
    c->attr[1] = g->attribute(g, p->rel, "Host");
    if (g->nattributes(g, p->rel) != 2 || c->attr[0] < 0 || c->attr[1] < 0) {
      snprintf(p->message, sizeof p->message, "%s should have 2 attributes (Job, Host)", p->produces);
      return TQ_PM_ERROR;
    }
    c->job[0] = c->job[1] = -1;
  } else if (what == TQ_PM_SNAPSHOT && c->role == RUNS) {
    return runsSnapshot(g, p, c);
  } else if (what == TQ_PM_END && (c->role == RUNS || c->role == RUNSSAMPLED)) {
    logLine(g, p, "%s %lld", c->role == RUNS ? "records" : "samples", (long long)c->count);
  } else if (what == TQ_PM_END && c->in) {
    fclose(c->in);
    c->in = NULL;
  }
  return TQ_PM_OK;
}

/* ================================================================ ticks: the timer */

static tq_pm_status timer(tq_pm_global *g, tq_pm_private *p, tq_time *next) {
  Conf *c = p->data;
  char t[48], n[48];
  if (c->next >= c->nat) {
    logLine(g, p, "timer now=%s: done", timeText(t, sizeof t, g->now));
    return TQ_PM_DONE;
  }
  *next = c->at[c->next++];
  logLine(g, p, "timer now=%s: next %s", timeText(t, sizeof t, g->now), timeText(n, sizeof n, *next));
  return TQ_PM_OK;
}

/* ================================================================ reader: the extractor */

/* The line's time, or -1 when it has none. */
static tq_time lineTime(const char *ln) {
  const char *bar = strchr(ln, '|');
  return bar ? secondsOf(ln, (size_t)(bar - ln)) : -1;
}

/* Reads the next record line into c->held; 0 at the end of the file. */
static int readAhead(Conf *c) {
  if (c->haveHeld) return 1;
  while (fgets(c->held, sizeof c->held, c->in)) {
    c->line++;
    c->held[strcspn(c->held, "\r\n")] = 0;
    if (c->held[0] && c->held[0] != '#') return c->haveHeld = 1;
  }
  return 0;
}

static OpenIv *openGet(Conf *c, uint64_t id) {
  for (int i = 0; i < MAXOPEN; i++)
    if (c->open[i].id == id) return &c->open[i];
  return NULL;
}

/* Delivers the record of line ln; 0, or -1 after setting p->message. */
static int deliverLine(tq_pm_global *g, tq_pm_private *p, Conf *c, char *ln) {
  char *field[4 + MAXVALS];
  int n = 0;
  for (char *s = ln; n < 4 + MAXVALS;) {
    field[n++] = s;
    char *bar = strchr(s, '|');
    if (!bar) break;
    *bar = 0;
    s = bar + 1;
  }
  if (n < 4 || strlen(field[1]) != 1 || !strchr("ebxsw", field[1][0])) {
    snprintf(p->message, sizeof p->message, "line %d: expected SECONDS|KIND|RELATION|ID|VALUES", c->line);
    return -1;
  }
  tq_record r = {0};
  int64_t vals[MAXVALS];
  r.rel = g->relation(g, field[2]);
  if (r.rel < 0) {
    snprintf(p->message, sizeof p->message, "line %d: unknown relation %s", c->line, field[2]);
    return -1;
  }
  r.t = secondsOf(field[0], strlen(field[0]));
  r.id = strtoull(field[3], NULL, 10);
  char kind = field[1][0];
  if (kind == 'x') {
    OpenIv *iv = openGet(c, r.id);
    if (!iv || !r.id || iv->rel != r.rel) {
      snprintf(p->message, sizeof p->message, "line %d: no open %s interval %s", c->line, field[2], field[3]);
      return -1;
    }
    r.kind = TQ_REC_END;
    r.from = iv->from;
    r.to = r.t;
    r.nvals = iv->nvals;
    r.vals = iv->vals;
    int rc = g->produce(g, &r);
    iv->id = 0;
    if (rc) snprintf(p->message, sizeof p->message, "line %d: the record was refused", c->line);
    return rc;
  }
  r.nvals = n - 4;
  for (int i = 0; i < r.nvals; i++) {
    const char *v = field[4 + i];
    if (v[0] == '@') vals[i] = g->symbol(g, v + 1, -1);
    else if (v[0] == '%') {
      vals[i] = g->enum_value(g, r.rel, i, v + 1);
      if (vals[i] < 0) {
        snprintf(p->message, sizeof p->message, "line %d: %s is not a value of %s's attribute %d", c->line, v + 1,
                 field[2], i + 1);
        return -1;
      }
    }
    else if (v[0] == '#') vals[i] = strtoll(v + 1, NULL, 10);
    else if (v[0] == '~') {
      double d = strtod(v + 1, NULL);
      memcpy(&vals[i], &d, sizeof d);
    } else {
      snprintf(p->message, sizeof p->message, "line %d: value '%s' has no type (@, %%, # or ~)", c->line, v);
      return -1;
    }
  }
  r.vals = vals;
  r.kind = kind == 'e' ? TQ_REC_EVENT : kind == 's' ? TQ_REC_SAMPLE : kind == 'w' ? TQ_REC_WHOLE : TQ_REC_BEGIN;
  if (kind == 'w') {
    r.from = secondsOf(field[3], strlen(field[3]));
    r.to = r.t;
    r.id = (uint64_t)1 << 62 | (uint64_t)c->line; /* its own identity */
    if (r.from < 0 || r.from > r.to) {
      snprintf(p->message, sizeof p->message, "line %d: a whole interval's ID is its begin, in seconds, at or before its end", c->line);
      return -1;
    }
  }
  if (kind == 'b') {
    OpenIv *iv = r.id ? openGet(c, 0) : NULL;
    if (!iv || openGet(c, r.id)) {
      snprintf(p->message, sizeof p->message, "line %d: interval %s already open, or too many open", c->line, field[3]);
      return -1;
    }
    r.from = r.t;
    *iv = (OpenIv){r.id, r.rel, r.from, r.nvals, {0}};
    memcpy(iv->vals, vals, sizeof(int64_t) * (size_t)r.nvals);
  }
  if (g->produce(g, &r)) {
    snprintf(p->message, sizeof p->message, "line %d: the record was refused", c->line);
    return -1;
  }
  return 0;
}

/* One snapshot's records: those before the base tick that follows the
** first one, then time moves to that tick. */
static tq_pm_status extract(tq_pm_global *g, tq_pm_private *p) {
  Conf *c = p->data;
  if (!readAhead(c)) return TQ_PM_DONE;
  tq_time t0 = lineTime(c->held);
  if (t0 < 0) {
    snprintf(p->message, sizeof p->message, "line %d: expected SECONDS|...", c->line);
    return TQ_PM_ERROR;
  }
  tq_time boundary = (t0 / g->tick + 1) * g->tick;
  int n = 0;
  while (readAhead(c) && lineTime(c->held) < boundary) {
    c->haveHeld = 0;
    if (deliverLine(g, p, c, c->held)) return TQ_PM_ERROR;
    n++;
  }
  if (c->range == 2) {
    c->range = 0;
    logLine(g, p, "set_range late: %d", g->set_range(g, 0, t0, -1));
  }
  if (c->announce == 2) {
    c->announce = 0;
    logLine(g, p, "announce_whole late: %d", g->announce_whole(g, g->relation(g, "Iv"), t0));
  }
  char ts[48], bs[48];
  if (!readAhead(c)) {
    logLine(g, p, "extract %d from %s: done", n, timeText(ts, sizeof ts, t0));
    return TQ_PM_DONE;
  }
  logLine(g, p, "extract %d from %s, advance to %s", n, timeText(ts, sizeof ts, t0), timeText(bs, sizeof bs, boundary));
  g->advance(g, boundary);
  return TQ_PM_OK;
}

/* ================================================================ meter: a producer with its own delta */

static tq_pm_status enable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Conf *c = p->data;
  if (c->active) logLine(g, p, "enable %s %s", g->symbol_name(g, entity), on ? "on" : "off");
  return TQ_PM_OK;
}

/* Meter of the asked host at t: the rx and tx counters (see the header). */
static tq_pm_status sample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  Conf *c = p->data;
  char ts[48];
  if (!c->active) return TQ_PM_OK;
  const char *host = g->symbol_name(g, who);
  logLine(g, p, "sample %s %s", host, timeText(ts, sizeof ts, t));
  int64_t o = strcmp(host, "A") ? 500 : 0, s = t / SEC;
  static const char *const devs[2] = {"rx", "tx"};
  static const int64_t rates[2] = {30000, 1000};
  for (int d = 0; d < 2; d++) {
    int64_t vals[3];
    vals[c->attr[0]] = who;
    vals[c->attr[1]] = g->symbol(g, devs[d], -1);
    vals[c->attr[2]] = (rates[d] * s + o) % 65536;
    g->sample_answer(g, cookie, vals);
  }
  return TQ_PM_OK;
}

/* runssampled: the job on the asked host at t (the engine asks only
** while the host exists). */
static tq_pm_status runsSample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  Conf *c = p->data;
  if (!c->active) return TQ_PM_OK;
  const char *host = g->symbol_name(g, who);
  int h = !strcmp(host, "A") ? 0 : !strcmp(host, "B") ? 1 : -1;
  if (h < 0) return TQ_PM_OK; /* not a host of the schedule: no job */
  int64_t vals[2];
  vals[c->attr[0]] = jobSymbol(g, jobAt(h, t));
  vals[c->attr[1]] = who;
  c->count++;
  g->sample_answer(g, cookie, vals);
  return TQ_PM_OK;
}

/* The counter's increase from prev to cur, modulo 2^16 (it wraps). */
static tq_pm_status delta(tq_pm_global *g, tq_pm_private *p, const tq_record *cur, const tq_record *prev, int64_t *out) {
  Conf *c = p->data;
  char tc[48], tp[48];
  int h = c->attr[0], d = c->attr[1], k = c->attr[2];
  out[h] = cur->vals[h];
  out[d] = cur->vals[d];
  out[k] = (cur->vals[k] - prev->vals[k] + 65536) % 65536;
  logLine(g, p, "delta %s %s %lld@%s - %lld@%s = %lld", g->symbol_name(g, cur->vals[h]), g->symbol_name(g, cur->vals[d]),
          (long long)cur->vals[k], timeText(tc, sizeof tc, cur->t), (long long)prev->vals[k], timeText(tp, sizeof tp, prev->t),
          (long long)out[k]);
  return TQ_PM_OK;
}

/* ================================================================ the list */

#define INIT(role, fn)                                                                                             \
  static tq_pm_status fn(tq_pm_global *g, tq_pm_private *p) { return initRole(g, p, role); }
INIT(TICKS, initTicks)
INIT(READER, initReader)
INIT(METER, initMeter)
INIT(METERRAW, initMeterRaw)
INIT(RUNS, initRuns)
INIT(RUNSSAMPLED, initRunsSampled)

static const tq_pm pms[NPM] = {
    {.version = TQ_PM_VERSION, .name = "ticks", .description = "test TIMER: snapshots at the given times (at=S1+S2+...)",
     .init = initTicks, .call = call, .timer = timer},
    {.version = TQ_PM_VERSION, .name = "reader", .description = "test EXTRACTOR of its own recording format (file=FILE)",
     .init = initReader, .call = call, .extract = extract},
    {.version = TQ_PM_VERSION, .name = "meter", .description = "test PRODUCER of Meter (sampled) with a delta function",
     .init = initMeter, .call = call, .enable = enable, .sample = sample, .delta = delta},
    {.version = TQ_PM_VERSION, .name = "meterraw", .description = "test PRODUCER of Meter (sampled), no delta function",
     .init = initMeterRaw, .call = call, .enable = enable, .sample = sample},
    {.version = TQ_PM_VERSION, .name = "runs", .description = "test PRODUCER of Runs (traced): the jobs of the hosts",
     .init = initRuns, .call = call, .enable = enable},
    {.version = TQ_PM_VERSION, .name = "runssampled",
     .description = "test PRODUCER of Runs_sampled (Runs's sampled sensor): the job on a host at t",
     .init = initRunsSampled, .call = call, .enable = enable, .sample = runsSample},
};

const tq_pm *const *tqmon_pm_list(int *n);
const tq_pm *const *tqmon_pm_list(int *n) {
  static const tq_pm *const list[NPM] = {&pms[0], &pms[1], &pms[2], &pms[3], &pms[4], &pms[5]};
  *n = NPM;
  return list;
}
