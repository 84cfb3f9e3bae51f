/*
** logpm.c - an example third-party processor module library (logpm.so):
** a web server's access log as two primitive relations, for a live
** collection.  It includes only include/tqmon_pm.h and talks to the engine
** only through the callbacks of tq_pm_global; it never links libtqmon.
**
** The log is a text file (the PMs' args) of lines
**     TIME CLIENT METHOD PATH STATUS BYTES
** with TIME in seconds as a decimal ("12.5"); '#' starts a comment line.
** The library exports two PRODUCERs (see examples/pm/weblog.tq):
**   weblog_clients   the entity relation Client: a Client begins when it
**                    first appears in the log (clients never end);
**   weblog_requests  the event relation Request, traced on the initiator
**                    Client; it depends on weblog_clients (a sensor lives in
**                    its flag entity: with no clients, no request counts).
** At each SNAPSHOT each PM produces its records for the log lines whose
** time is <= g->now, in the order of the log.  The log is followed: at its
** end the PM waits for the next snapshot and reads on (a line being written
** is kept until its newline arrives).
**
** Invariants: each PM reads the file with its own reader and produces in
** the order of the log; times never decrease: a line earlier than the one
** before it, a line that arrived after the snapshot its time belongs to,
** and a line that does not parse are skipped (weblog_requests warns,
** weblog_clients says it at debug level).  Nothing is printed: every
** message goes through g->log.  All state lives in p->data, allocated at
** START and released at END.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/tqmon_pm.h"

#define SEC 1000000000LL

/* ================================================================ a set of symbols */

/* Open addressing over non-zero 64-bit symbols (engine symbols are >= 1). */
typedef struct SymSet {
  int64_t *slot; /* 0: empty */
  int cap;       /* a power of two, or 0 */
  int n;         /* members */
} SymSet;

static int symSlot(const SymSet *s, int64_t v) {
  uint64_t h = (uint64_t)v * 0x9e3779b97f4a7c15ULL;
  int i = (int)(h >> 40) & (s->cap - 1);
  while (s->slot[i] && s->slot[i] != v) i = (i + 1) & (s->cap - 1);
  return i;
}

static int symHas(const SymSet *s, int64_t v) { return s->cap && s->slot[symSlot(s, v)] == v; }

/* Adds v; returns 1 if it was new, 0 if present, -1 out of memory. */
static int symAdd(SymSet *s, int64_t v) {
  if (2 * (s->n + 1) > s->cap) {
    SymSet g = {calloc((size_t)(s->cap ? 2 * s->cap : 64), sizeof(int64_t)), s->cap ? 2 * s->cap : 64, 0};
    if (!g.slot) return -1;
    for (int i = 0; i < s->cap; i++)
      if (s->slot[i]) g.slot[symSlot(&g, s->slot[i])] = s->slot[i], g.n++;
    free(s->slot);
    *s = g;
  }
  int i = symSlot(s, v);
  if (s->slot[i]) return 0;
  s->slot[i] = v;
  s->n++;
  return 1;
}

/* Removes v if present (backward-shift deletion keeps probes intact). */
static void symDel(SymSet *s, int64_t v) {
  if (!symHas(s, v)) return;
  int i = symSlot(s, v);
  s->slot[i] = 0;
  s->n--;
  for (int j = (i + 1) & (s->cap - 1); s->slot[j]; j = (j + 1) & (s->cap - 1)) {
    int64_t w = s->slot[j];
    s->slot[j] = 0;
    s->slot[symSlot(s, w)] = w;
  }
}

/* ================================================================ reading the log */

/* One parsed log line. */
typedef struct Line {
  tq_time t;       /* TIME in ns */
  const char *client, *method, *path; /* NUL-terminated words in Reader.buf */
  int64_t status, bytes;
} Line;

/* A follower of the log file. */
typedef struct Reader {
  FILE *f;
  const char *path; /* the PM's args */
  int level;        /* of the messages about bad lines (one PM warns, the other reads quietly) */
  char *buf;        /* the current line; a partial one while its newline is missing */
  size_t len, cap;
  long lineno;      /* of the current line */
  int have;         /* buf holds a parsed line (ln) not produced yet */
  Line ln;
  tq_time last;     /* time of the last line produced */
  tq_time done;     /* the previous snapshot: lines up to it were produced */
} Reader;

/* Parses "SECONDS[.FRACTION]" into ns; returns 0 or -1. */
static int parseTime(const char *s, tq_time *out) {
  int64_t sec = 0, frac = 0, scale = SEC;
  const char *p = s;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (sec > (INT64_MAX / SEC - 10) / 10) return -1;
    sec = sec * 10 + (*p - '0');
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++)
      if (scale > 1) {
        scale /= 10;
        frac += (*p - '0') * scale;
      }
  }
  if (*p) return -1;
  *out = sec * SEC + frac;
  return 0;
}

static int parseInt(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno) return -1;
  *out = v;
  return 0;
}

/* Splits buf into the six fields of a line; returns 1 (a line), 0 (blank or
** comment), -1 (malformed). */
static int parseLine(char *buf, Line *ln) {
  char *w[7];
  int n = 0;
  for (char *s = buf; *s && n < 7;) {
    while (*s == ' ' || *s == '\t' || *s == '\r') *s++ = 0;
    if (!*s) break;
    w[n++] = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
  }
  if (n == 0 || w[0][0] == '#') return 0;
  if (n != 6 || parseTime(w[0], &ln->t) || parseInt(w[4], &ln->status) || parseInt(w[5], &ln->bytes)) return -1;
  ln->client = w[1];
  ln->method = w[2];
  ln->path = w[3];
  return 1;
}

/* Opens the log; returns 0, or -1 with p->message set. */
static int readerOpen(Reader *r, tq_pm_private *p, int level) {
  r->path = p->args;
  r->level = level;
  r->f = fopen(r->path, "r");
  if (!r->f) {
    snprintf(p->message, sizeof p->message, "cannot read %s: %s", r->path, strerror(errno));
    return -1;
  }
  r->last = r->done = INT64_MIN;
  return 0;
}

static void readerClose(Reader *r) {
  if (r->f) fclose(r->f);
  free(r->buf);
  memset(r, 0, sizeof *r);
}

/* Makes r->ln the next line of the log not produced yet.  Returns 1 (there
** is one), 0 (none yet: the end of the log, or a line still being written),
** -1 (out of memory).  Bad lines are skipped with a message at r->level. */
static int readerPeek(Reader *r, tq_pm_global *g, tq_pm_private *p) {
  while (!r->have) {
    int c;
    while ((c = getc(r->f)) != EOF && c != '\n') {
      if (r->len + 2 > r->cap) {
        size_t nc = r->cap ? 2 * r->cap : 128;
        char *nb = realloc(r->buf, nc);
        if (!nb) return -1;
        r->buf = nb;
        r->cap = nc;
      }
      r->buf[r->len++] = (char)c;
    }
    if (c == EOF) {
      clearerr(r->f); /* follow the log: read on at the next snapshot */
      return 0;
    }
    r->lineno++;
    if (!r->buf) continue; /* an empty line */
    r->buf[r->len] = 0;
    r->len = 0;
    int k = parseLine(r->buf, &r->ln);
    if (k < 0) {
      g->log(g, p, r->level, "%s:%ld: not TIME CLIENT METHOD PATH STATUS BYTES: skipped", r->path, r->lineno);
    } else if (k > 0 && (r->ln.t < r->last || r->ln.t <= r->done)) {
      g->log(g, p, r->level, "%s:%ld: %s: skipped", r->path, r->lineno,
             r->ln.t < r->last ? "time goes back" : "written after its snapshot");
    } else if (k > 0) {
      r->have = 1;
    }
  }
  return 1;
}

/* ================================================================ weblog_clients: the entity relation Client */

typedef struct Clients {
  Reader rd;
  SymSet seen; /* clients begun */
  uint64_t id; /* last interval id */
} Clients;

static tq_pm_status clientsInit(tq_pm_global *g, tq_pm_private *p) {
  if (!p->args || !*p->args) {
    snprintf(p->message, sizeof p->message, "give the access log: logpm=FILE");
    return TQ_PM_ERROR;
  }
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "Client";
  return TQ_PM_OK;
}

/* Begins the clients that first appear in lines up to g->now. */
static tq_pm_status clientsSnapshot(tq_pm_global *g, tq_pm_private *p, Clients *c) {
  int k;
  while ((k = readerPeek(&c->rd, g, p)) > 0 && c->rd.ln.t <= g->now) {
    Line *ln = &c->rd.ln;
    int64_t who = g->symbol(g, ln->client, -1);
    int fresh = symAdd(&c->seen, who);
    if (fresh < 0) {
      k = -1;
      break;
    }
    if (fresh) {
      tq_record r = {0};
      r.rel = p->rel;
      r.kind = TQ_REC_BEGIN;
      r.t = r.from = ln->t;
      r.id = ++c->id;
      r.nvals = 1;
      r.vals = &who;
      if (g->produce(g, &r)) {
        snprintf(p->message, sizeof p->message, "the engine refused the record of %s at %s:%ld", ln->client, c->rd.path,
                 c->rd.lineno);
        return TQ_PM_ERROR;
      }
    }
    c->rd.last = ln->t;
    c->rd.have = 0;
  }
  c->rd.done = g->now;
  if (k < 0) {
    snprintf(p->message, sizeof p->message, "out of memory");
    return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}

static tq_pm_status clientsCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Clients *c = p->data;
  switch (what) {
    case TQ_PM_START:
      if (g->nattributes(g, p->rel) != 1) {
        snprintf(p->message, sizeof p->message, "Client must be declared as: entity Client;");
        return TQ_PM_ERROR;
      }
      c = calloc(1, sizeof *c);
      if (!c) return TQ_PM_FATAL;
      p->data = c;
      return readerOpen(&c->rd, p, TQ_LOG_DEBUG) ? TQ_PM_ERROR : TQ_PM_OK;
    case TQ_PM_SNAPSHOT: return c && c->rd.f ? clientsSnapshot(g, p, c) : TQ_PM_OK;
    case TQ_PM_END:
      if (c) {
        readerClose(&c->rd);
        free(c->seen.slot);
        free(c);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

static const tq_pm clientsPm = {
    .version = TQ_PM_VERSION,
    .name = "weblog_clients",
    .description = "PRODUCER of the entity relation Client from an access log (args: FILE)",
    .init = clientsInit,
    .call = clientsCall,
};

/* ================================================================ weblog_requests: the event relation Request */

enum { A_CLIENT, A_METHOD, A_PATH, A_STATUS, A_BYTES, NATTR };
static const char *const attrName[NATTR] = {"Client", "Method", "Path", "Status", "Bytes"};

typedef struct Requests {
  Reader rd;
  int attr[NATTR];   /* index of each attribute in the declared relation */
  SymSet enabled;    /* clients the queries enabled the sensor on (enable()) */
  SymSet known;      /* clients seen in earlier snapshots */
  SymSet fresh;      /* clients first seen in this snapshot (their enabling is not known yet) */
  int64_t skipped;   /* requests not reported: their client was not enabled */
} Requests;

static tq_pm_status requestsInit(tq_pm_global *g, tq_pm_private *p) {
  if (!p->args || !*p->args) {
    snprintf(p->message, sizeof p->message, "give the access log: logpm=FILE");
    return TQ_PM_ERROR;
  }
  p->caps = TQ_PM_PRODUCER;
  p->sync = TQ_PM_SYNC_SNAPSHOT;
  p->produces = "Request";
  p->depends[p->ndepends++] = "weblog_clients";
  return TQ_PM_OK;
}

/* Finds the attributes by name, whatever their declared order. */
static int requestsBind(tq_pm_global *g, tq_pm_private *p, Requests *q) {
  if (g->is_event(g, p->rel) != 1 || g->nattributes(g, p->rel) != NATTR) {
    snprintf(p->message, sizeof p->message, "Request must be an event relation of %d attributes", NATTR);
    return -1;
  }
  for (int i = 0; i < NATTR; i++) {
    q->attr[i] = g->attribute(g, p->rel, attrName[i]);
    if (q->attr[i] < 0) {
      snprintf(p->message, sizeof p->message, "Request has no attribute %s", attrName[i]);
      return -1;
    }
  }
  if (g->enum_value(g, p->rel, q->attr[A_METHOD], "GET") < 0) {
    snprintf(p->message, sizeof p->message, "Request.Method must be an enum with GET");
    return -1;
  }
  return 0;
}

/* Is the client new in this snapshot?  Its entity begins in it, so the
** queries have not enabled it yet: the request is reported and the engine,
** which processes the begin first, decides. */
static int requestsFresh(Requests *q, int64_t who) {
  if (symHas(&q->known, who)) return 0;
  return symAdd(&q->fresh, who) < 0 ? -1 : 1;
}

/* Produces the requests of lines up to g->now whose client is enabled. */
static tq_pm_status requestsSnapshot(tq_pm_global *g, tq_pm_private *p, Requests *q) {
  int k;
  while ((k = readerPeek(&q->rd, g, p)) > 0 && q->rd.ln.t <= g->now) {
    Line *ln = &q->rd.ln;
    int64_t who = g->symbol(g, ln->client, -1);
    int fresh = requestsFresh(q, who);
    if (fresh < 0) {
      k = -1;
      break;
    }
    if (!fresh && !symHas(&q->enabled, who)) {
      q->skipped++;
    } else {
      int64_t v[NATTR];
      v[q->attr[A_CLIENT]] = who;
      v[q->attr[A_METHOD]] = g->enum_value(g, p->rel, q->attr[A_METHOD], ln->method);
      v[q->attr[A_PATH]] = g->symbol(g, ln->path, -1);
      v[q->attr[A_STATUS]] = ln->status;
      v[q->attr[A_BYTES]] = ln->bytes;
      if (v[q->attr[A_METHOD]] < 0) {
        g->log(g, p, TQ_LOG_WARNING, "%s:%ld: unknown method %s: skipped", q->rd.path, q->rd.lineno, ln->method);
      } else {
        tq_record r = {0};
        r.rel = p->rel;
        r.kind = TQ_REC_EVENT;
        r.t = ln->t;
        r.nvals = NATTR;
        r.vals = v;
        if (g->produce(g, &r)) {
          snprintf(p->message, sizeof p->message, "the engine refused the request at %s:%ld", q->rd.path, q->rd.lineno);
          return TQ_PM_ERROR;
        }
      }
    }
    q->rd.last = ln->t;
    q->rd.have = 0;
  }
  for (int i = 0; i < q->fresh.cap; i++)
    if (q->fresh.slot[i] && symAdd(&q->known, q->fresh.slot[i]) < 0) k = -1;
  free(q->fresh.slot);
  memset(&q->fresh, 0, sizeof q->fresh);
  q->rd.done = g->now;
  if (k < 0) {
    snprintf(p->message, sizeof p->message, "out of memory");
    return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}

static tq_pm_status requestsCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Requests *q = p->data;
  switch (what) {
    case TQ_PM_START:
      q = calloc(1, sizeof *q);
      if (!q) return TQ_PM_FATAL;
      p->data = q;
      if (requestsBind(g, p, q)) return TQ_PM_ERROR;
      return readerOpen(&q->rd, p, TQ_LOG_WARNING) ? TQ_PM_ERROR : TQ_PM_OK;
    case TQ_PM_SNAPSHOT: return q && q->rd.f ? requestsSnapshot(g, p, q) : TQ_PM_OK;
    case TQ_PM_DEP_DISABLED:
      snprintf(p->message, sizeof p->message, "weblog_clients is disabled: no client exists for a request to live in");
      return TQ_PM_ERROR;
    case TQ_PM_END:
      if (q) {
        g->log(g, p, TQ_LOG_INFO, "%lld requests of clients no query enabled were not reported", (long long)q->skipped);
        readerClose(&q->rd);
        free(q->enabled.slot);
        free(q->known.slot);
        free(q->fresh.slot);
        free(q);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

/* The queries enabled (on > 0) or disabled (0) the sensor on a client. */
static tq_pm_status requestsEnable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Requests *q = p->data;
  if (!q) return TQ_PM_OK;
  if (!on) {
    symDel(&q->enabled, entity);
  } else if (symAdd(&q->enabled, entity) < 0) {
    snprintf(p->message, sizeof p->message, "out of memory");
    return TQ_PM_FATAL;
  }
  g->log(g, p, TQ_LOG_DEBUG, "%s %s", on ? "enabled on" : "disabled on", g->symbol_name(g, entity));
  return TQ_PM_OK;
}

static const tq_pm requestsPm = {
    .version = TQ_PM_VERSION,
    .name = "weblog_requests",
    .description = "PRODUCER of the event relation Request from an access log (args: FILE)",
    .init = requestsInit,
    .call = requestsCall,
    .enable = requestsEnable,
};

/* ================================================================ the library */

/* The engine looks this function up after dlopen (TQ_PM_LIST_SYMBOL): the
** PMs of the library and their number.  The only symbol it exports. */
__attribute__((visibility("default"))) const tq_pm *const *tqmon_pm_list(int *n) {
  static const tq_pm *const list[] = {&clientsPm, &requestsPm};
  *n = 2;
  return list;
}
