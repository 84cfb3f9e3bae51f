/*
** testpm.c - small processor modules that test the PM interface
** (sensors/pm.h), built as build/testpm/testpm.so.  They see only pm.h and
** the callbacks of tq_pm_global: a third-party PM exactly, never libtqmon.
**
** The PMs, in the order of the list (dependents before what they usually
** depend on, so that a call log in dependency order differs from it):
**   filter  FILTER: drops the records whose Host is drop=ENTITY
**   rows    CONSUMER of results (result callback)
**   recs    CONSUMER of records (record callback) and of losses (lost)
**   mon     MONITOR (default sync: prebaseline, snapshot, collection-end)
**   sup     SUPPORTER: only START and END
**   busy    PRODUCER of the sampled relation Busy (sample callback)
**   net     PRODUCER of Net (a program declares it, no query needs it)
**   disk    PRODUCER of Disk
**   load    PRODUCER of Load
**   hosts   PRODUCER of the entity relation Host: hosts A and B begin at
**           the first snapshot; B ends at snapshot leave=N; A ends and
**           begins again (a new state) at snapshot renew=N
** The relations are those of tests/testpm/sensors.tq.  An event producer
** makes, at its k-th snapshot, one record per host (A, B) valued 10k+1 and
** 10k+2, at g->now; it also logs every enable call.
**
** Arguments (p->args), comma-separated:
**   log=FILE        append one line per call, "NAME WHAT ...", to FILE
**   dep=A+B         depends on the PMs A and B
**   sync=P+Q        synchronisation points: prebaseline, snapshot,
**                   snapshot_end, collection_end, all_records (replaces the
**                   default; a producer always has snapshot)
**   priv=P+Q        declares the privileges P and Q
**   error=[CALL]N   returns TQ_PM_ERROR at its N-th call of that kind: CALL
**                   is snapshot (the default), sample, enable, record or
**                   result; "error=start" fails at START
**   fatal=[CALL]N   the same with TQ_PM_FATAL
**   warn=[CALL]N    the same with TQ_PM_WARNING
**   deperr          answers DEP_DISABLED with TQ_PM_ERROR
**   drop=ENTITY     filter: the host whose records it drops
**   leave=N         hosts: B ends at snapshot N
**   renew=N         hosts: A's tuple ends at snapshot N and a new one begins
** "Its N-th snapshot" counts SNAPSHOT calls, or SNAPSHOT_END calls for a PM
** not synchronised on SNAPSHOT.  A producer fails before it produces.
**
** Without arguments (a PM of this library that was not named, loaded with
** the one that was) a PM is inert: it declares nothing and logs nothing,
** except mon and sup, which need no configuration and report each call with
** g->log at debug level (--trace-level 3) as every configured PM does.
**
** State lives in static storage, one slot per PM (one instance each): a run
** that stops before END leaks nothing.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm.h"

enum { FILTER, ROWS, RECS, MON, SUP, BUSY, NET, DISK, LOAD, HOSTS, NPM };

static const char *const pmNames[NPM] = {"filter", "rows", "recs", "mon", "sup", "busy", "net", "disk", "load", "hosts"};
static const char *const relNames[NPM] = {[BUSY] = "Busy", [NET] = "Net", [DISK] = "Disk", [LOAD] = "Load", [HOSTS] = "Host"};
static const char *const hostNames[2] = {"A", "B"};

/* Kinds of calls a status can be asked at. */
enum { K_START, K_SNAPSHOT, K_SAMPLE, K_ENABLE, K_RECORD, K_RESULT, K_N };
static const char *const kindNames[K_N] = {"start", "snapshot", "sample", "enable", "record", "result"};

typedef struct Trigger {
  int kind;             /* K_* */
  int n;                /* at the n-th call of that kind (0: never) */
} Trigger;

typedef struct Conf {
  int role;             /* FILTER .. HOSTS */
  int active;           /* configured (or mon/sup): logs and takes part */
  char log[512];        /* log file ("" none) */
  char deps[8][64];     /* dependencies */
  char privs[8][128];   /* privileges */
  char drop[64];        /* filter: the host it drops */
  Trigger error, fatal, warn; /* when it returns those statuses */
  int depErr;           /* answer DEP_DISABLED with an error */
  int leave;            /* hosts: the snapshot B ends at */
  int renew;            /* hosts: the snapshot A ends and begins again at */
  int count[K_N];       /* calls seen, per kind */
  tq_time began;        /* hosts: when the hosts began */
  int rels[NPM];        /* relation ids of relNames, found at START */
} Conf;

static Conf confs[NPM];

/* ================================================================ logging */

static void logLine(tq_pm_global *g, tq_pm_private *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One line "NAME text" to the log file, and the same through g->log at
** debug level. */
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

/* Times as seconds when whole, else nanoseconds. */
static const char *timeText(char *buf, size_t n, tq_time t) {
  if (t == TQ_PM_OPEN) snprintf(buf, n, "open");
  else if (t % 1000000000 == 0) snprintf(buf, n, "%llds", (long long)(t / 1000000000));
  else snprintf(buf, n, "%lldns", (long long)t);
  return buf;
}

static const char *relName(tq_pm_global *g, Conf *c, int rel) {
  for (int i = 0; i < NPM; i++)
    if (relNames[i] && c->rels[i] == rel) return relNames[i];
  return "?";
}

/* The values of a record of relation rel: entities by name. */
static void valuesText(tq_pm_global *g, int rel, int n, const int64_t *vals, char *buf, size_t size) {
  size_t k = 0;
  buf[0] = 0;
  int host = g->attribute(g, rel, "Host");
  for (int i = 0; i < n && k < size; i++) {
    if (i == host) k += (size_t)snprintf(buf + k, size - k, " %s", g->symbol_name(g, vals[i]));
    else k += (size_t)snprintf(buf + k, size - k, " %lld", (long long)vals[i]);
  }
}

/* ================================================================ init */

/* Copies the '+'-separated items of s[0, len) into dst[max][size]; returns their number. */
static int splitPlus(const char *s, size_t len, char *dst, int max, size_t size) {
  int n = 0;
  while (len > 0 && n < max) {
    const char *plus = memchr(s, '+', len);
    size_t k = plus ? (size_t)(plus - s) : len;
    snprintf(dst + (size_t)n * size, size, "%.*s", (int)k, s);
    n++;
    if (!plus) break;
    len -= k + 1;
    s = plus + 1;
  }
  return n;
}

/* "[CALL]N" or "start"; 0 when CALL is unknown. */
static int triggerOf(const char *v, size_t len, Trigger *t) {
  t->kind = K_SNAPSHOT;
  for (int k = 0; k < K_N; k++) {
    size_t n = strlen(kindNames[k]);
    if (len >= n && !strncmp(v, kindNames[k], n)) {
      t->kind = k;
      v += n;
      len -= n;
      break;
    }
  }
  t->n = t->kind == K_START ? 1 : atoi(v);
  return t->n > 0 && (t->kind == K_START || (len > 0 && strspn(v, "0123456789") == len));
}

static unsigned syncOf(const char *v, size_t len, tq_pm_private *p) {
  char items[8][32];
  int n = splitPlus(v, len, &items[0][0], 8, sizeof items[0]);
  unsigned s = 0;
  for (int i = 0; i < n; i++) {
    if (!strcmp(items[i], "prebaseline")) s |= TQ_PM_SYNC_PREBASELINE;
    else if (!strcmp(items[i], "snapshot")) s |= TQ_PM_SYNC_SNAPSHOT;
    else if (!strcmp(items[i], "snapshot_end")) s |= TQ_PM_SYNC_SNAPSHOT_END;
    else if (!strcmp(items[i], "collection_end")) s |= TQ_PM_SYNC_COLLECTION_END;
    else if (!strcmp(items[i], "all_records")) s |= TQ_PM_SYNC_ALL_RECORDS;
    else snprintf(p->message, sizeof p->message, "unknown synchronisation point '%.32s'", items[i]);
  }
  return s;
}

static const unsigned capsOf[NPM] = {TQ_PM_FILTER,   TQ_PM_CONSUMER, TQ_PM_CONSUMER, TQ_PM_MONITOR,  TQ_PM_SUPPORTER,
                                     TQ_PM_PRODUCER, TQ_PM_PRODUCER, TQ_PM_PRODUCER, TQ_PM_PRODUCER, TQ_PM_PRODUCER};

static tq_pm_status initRole(tq_pm_global *g, tq_pm_private *p, int role) {
  Conf *c = &confs[role];
  memset(c, 0, sizeof *c);
  c->role = role;
  p->data = c;
  c->active = p->args != NULL || role == MON || role == SUP;
  if (!c->active) return TQ_PM_OK;
  p->caps = capsOf[role];
  if (role == MON) p->sync = TQ_PM_SYNC_PREBASELINE | TQ_PM_SYNC_SNAPSHOT | TQ_PM_SYNC_COLLECTION_END;
  const char *a = p->args ? p->args : "";
  while (*a) {
    const char *comma = strchr(a, ',');
    size_t len = comma ? (size_t)(comma - a) : strlen(a);
    const char *eq = memchr(a, '=', len);
    size_t klen = eq ? (size_t)(eq - a) : len;
    const char *v = eq ? eq + 1 : a + len;
    size_t vlen = eq ? len - klen - 1 : 0;
#define KEY(k) (klen == strlen(k) && !strncmp(a, k, klen))
    Trigger *tr = KEY("error") ? &c->error : KEY("fatal") ? &c->fatal : KEY("warn") ? &c->warn : NULL;
    if (tr) {
      if (!triggerOf(v, vlen, tr)) snprintf(p->message, sizeof p->message, "bad argument '%.*s'", (int)len, a);
    } else if (KEY("log")) snprintf(c->log, sizeof c->log, "%.*s", (int)vlen, v);
    else if (KEY("dep")) p->ndepends = splitPlus(v, vlen, &c->deps[0][0], 8, sizeof c->deps[0]);
    else if (KEY("priv")) p->nprivileges = splitPlus(v, vlen, &c->privs[0][0], 8, sizeof c->privs[0]);
    else if (KEY("sync")) p->sync = syncOf(v, vlen, p);
    else if (KEY("deperr")) c->depErr = 1;
    else if (KEY("drop")) snprintf(c->drop, sizeof c->drop, "%.*s", (int)vlen, v);
    else if (KEY("leave")) c->leave = atoi(v);
    else if (KEY("renew")) c->renew = atoi(v);
    else snprintf(p->message, sizeof p->message, "unknown argument '%.*s'", (int)len, a);
#undef KEY
    a += len + (comma ? 1 : 0);
  }
  if (p->message[0]) return TQ_PM_ERROR;
  for (int i = 0; i < p->ndepends; i++) p->depends[i] = c->deps[i];
  for (int i = 0; i < p->nprivileges; i++) p->privileges[i] = c->privs[i];
  if (p->caps & TQ_PM_PRODUCER) {
    p->produces = relNames[role];
    p->sync |= TQ_PM_SYNC_SNAPSHOT;
  }
  return TQ_PM_OK;
}

/* ================================================================ calls */

static const char *whatName(int what) {
  static const char *const names[] = {"?", "START", "PREBASELINE", "SNAPSHOT", "SNAPSHOT_END", "COLLECTION_END", "END",
                                      "DEP_DISABLED"};
  return what >= 1 && what <= TQ_PM_DEP_DISABLED ? names[what] : "?";
}

static int triggered(const Trigger *t, int kind, int n) { return t->n && t->kind == kind && t->n == n; }

/* Counts a call of this kind; returns the status asked for at it, with a
** message saying so. */
static tq_pm_status statusOf(tq_pm_private *p, Conf *c, int kind) {
  int n = ++c->count[kind];
  static const char *const what[] = {"", "a warning", "failing", "fatal"};
  tq_pm_status st = triggered(&c->fatal, kind, n)   ? TQ_PM_FATAL
                    : triggered(&c->error, kind, n) ? TQ_PM_ERROR
                    : triggered(&c->warn, kind, n)  ? TQ_PM_WARNING
                                                    : TQ_PM_OK;
  if (st == TQ_PM_OK) return st;
  if (kind == K_START) snprintf(p->message, sizeof p->message, "%s at start, as asked", what[st]);
  else snprintf(p->message, sizeof p->message, "%s at %s %d, as asked", what[st], kindNames[kind], n);
  return st;
}

/* Produces r: 0, or -1 with the message (the engine refused it). */
static int put(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  if (!g->produce(g, r)) return 0;
  snprintf(p->message, sizeof p->message, "a record was refused");
  return -1;
}

/* A producer's records at its k-th snapshot, at g->now. */
static tq_pm_status produce(tq_pm_global *g, tq_pm_private *p, Conf *c, int k) {
  int64_t vals[2];
  tq_record r = {0};
  r.rel = p->rel;
  r.nvals = g->nattributes(g, p->rel);
  r.vals = vals;
  if (r.nvals < 1 || r.nvals > 2) {
    snprintf(p->message, sizeof p->message, "relation %s has %d attributes", p->produces, r.nvals);
    return TQ_PM_FATAL;
  }
  for (int h = 0; h < 2; h++) {
    vals[0] = g->symbol(g, hostNames[h], -1);
    if (c->role == HOSTS) {
      if (k == 1) {
        r.kind = TQ_REC_BEGIN;
        r.from = c->began = g->now;
      } else if (h == 1 && k == c->leave) {
        r.kind = TQ_REC_END;
        r.from = c->began;
        r.to = g->now;
      } else if (h == 0 && k == c->renew) {
        /* its tuple ends, and one with the same values begins (id 3) */
        r.kind = TQ_REC_END;
        r.id = 1;
        r.from = c->began;
        r.to = g->now;
        if (put(g, p, &r)) return TQ_PM_FATAL;
        r.kind = TQ_REC_BEGIN;
        r.from = g->now;
        r.id = 3;
        if (put(g, p, &r)) return TQ_PM_FATAL;
        continue;
      } else {
        continue;
      }
      r.id = (uint64_t)h + 1;
    } else {
      r.kind = TQ_REC_EVENT;
      r.t = g->now;
      vals[1] = 10 * k + h + 1;
    }
    if (put(g, p, &r)) return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}

static tq_pm_status call(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Conf *c = p->data;
  if (!c->active) return TQ_PM_OK;
  char t[32];
  if (what == TQ_PM_SNAPSHOT_END && g->current) {
    /* the closed snapshot: its number, time and record sets, and the PM's own */
    const tq_snapshot *s = g->current;
    char sets[512];
    size_t k = 0;
    sets[0] = 0;
    for (int i = 0; i < s->nsets && k < sizeof sets; i++)
      k += (size_t)snprintf(sets + k, sizeof sets - k, " %s:%d", s->sets[i].name, s->sets[i].n);
    if (rs && k < sizeof sets) snprintf(sets + k, sizeof sets - k, " (own %s:%d)", rs->name, rs->n);
    logLine(g, p, "%s #%lld %s%s", whatName(what), (long long)s->seq, timeText(t, sizeof t, s->time), sets);
  } else if (what == TQ_PM_SNAPSHOT || what == TQ_PM_SNAPSHOT_END) {
    logLine(g, p, "%s %s", whatName(what), timeText(t, sizeof t, g->now));
  } else {
    logLine(g, p, "%s", whatName(what));
  }
  switch (what) {
    case TQ_PM_START:
      memset(c->count, 0, sizeof c->count);
      for (int i = 0; i < NPM; i++) c->rels[i] = relNames[i] ? g->relation(g, relNames[i]) : -1;
      return statusOf(p, c, K_START);
    case TQ_PM_SNAPSHOT:
    case TQ_PM_SNAPSHOT_END: {
      if ((what == TQ_PM_SNAPSHOT) != ((p->sync & TQ_PM_SYNC_SNAPSHOT) != 0)) return TQ_PM_OK;
      tq_pm_status st = statusOf(p, c, K_SNAPSHOT);
      if (st != TQ_PM_OK && st != TQ_PM_WARNING) return st;
      if ((p->caps & TQ_PM_PRODUCER) && c->role != BUSY) {
        tq_pm_status ps = produce(g, p, c, c->count[K_SNAPSHOT]);
        if (ps != TQ_PM_OK) return ps;
      }
      return st;
    }
    case TQ_PM_DEP_DISABLED:
      if (c->depErr) {
        snprintf(p->message, sizeof p->message, "a PM it depends on is disabled");
        return TQ_PM_ERROR;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

/* ================================================================ capability callbacks */

static tq_pm_status enable(tq_pm_global *g, tq_pm_private *p, int64_t entity, int on) {
  Conf *c = p->data;
  if (!c->active) return TQ_PM_OK;
  logLine(g, p, "enable %s %s", g->symbol_name(g, entity), on ? "on" : "off");
  return statusOf(p, c, K_ENABLE);
}

/* Busy(Host, Task): the asked host is busy with task 10 x (seconds) + 1 or 2. */
static tq_pm_status sample(tq_pm_global *g, tq_pm_private *p, int attr, int64_t who, tq_time t, void *cookie) {
  Conf *c = p->data;
  char ts[32];
  if (!c->active) return TQ_PM_OK;
  const char *name = g->symbol_name(g, who);
  logLine(g, p, "sample %s %s", name, timeText(ts, sizeof ts, t));
  tq_pm_status st = statusOf(p, c, K_SAMPLE);
  if (st != TQ_PM_OK && st != TQ_PM_WARNING) return st;
  int64_t vals[2] = {who, 10 * (t / 1000000000) + (strcmp(name, "A") ? 2 : 1)};
  g->sample_answer(g, cookie, vals);
  return st;
}

static int filter(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  Conf *c = p->data;
  if (!c->active) return 1;
  char v[256], ts[32];
  int host = g->attribute(g, r->rel, "Host");
  int keep = host < 0 || strcmp(g->symbol_name(g, r->vals[host]), c->drop);
  valuesText(g, r->rel, r->nvals, r->vals, v, sizeof v);
  logLine(g, p, "%s %s %s%s", keep ? "keep" : "drop", relName(g, c, r->rel), timeText(ts, sizeof ts, r->t), v);
  return keep;
}

static tq_pm_status record(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  Conf *c = p->data;
  static const char *const kinds[] = {"?", "event", "begin", "end", "sample", "delta", "whole"};
  char v[256], ts[32];
  if (!c->active) return TQ_PM_OK;
  tq_time t = r->kind == TQ_REC_BEGIN ? r->from : r->kind == TQ_REC_END || r->kind == TQ_REC_WHOLE ? r->to : r->t;
  valuesText(g, r->rel, r->nvals, r->vals, v, sizeof v);
  logLine(g, p, "record %s %s %s%s", relName(g, c, r->rel), kinds[r->kind >= 1 && r->kind <= 6 ? r->kind : 0],
          timeText(ts, sizeof ts, t), v);
  return statusOf(p, c, K_RECORD);
}

/* recs: a loss the engine was told (interface version 11), one line:
** "lost REL ENTITY FROM TO COUNT [spans]" (names as the engine has them,
** * when not known; COUNT ? when how many is not known, version 12). */
static tq_pm_status lost(tq_pm_global *g, tq_pm_private *p, int rel, int64_t entity, tq_time from, tq_time to,
                         int64_t count, int spans) {
  Conf *c = p->data;
  char f[32], t[32];
  if (!c->active) return TQ_PM_OK;
  const char *rn = rel ? g->relation_name(g, rel) : NULL;
  char n[32];
  if (count == TQ_PM_LOST_UNKNOWN) snprintf(n, sizeof n, "?");
  else snprintf(n, sizeof n, "%lld", (long long)count);
  logLine(g, p, "lost %s %s %s %s %s%s", rn ? rn : "*", entity == TQ_PM_ENTITY_UNKNOWN ? "*" : g->symbol_name(g, entity),
          timeText(f, sizeof f, from), timeText(t, sizeof t, to), n, spans ? " spans" : "");
  return TQ_PM_OK;
}

static tq_pm_status result(tq_pm_global *g, tq_pm_private *p, const tq_result_row *row) {
  Conf *c = p->data;
  static const char *const ops[] = {"?", "insert", "close", "delete"};
  char v[512], f[32], t[32];
  if (!c->active) return TQ_PM_OK;
  size_t k = 0;
  v[0] = 0;
  for (int i = 0; i < row->nvals && k < sizeof v; i++) {
    int ty = row->types[i];
    if (ty == TQ_TY_STRING || ty == TQ_TY_ENTITY)
      k += (size_t)snprintf(v + k, sizeof v - k, " %s=%s", row->names[i], g->symbol_name(g, row->vals[i]));
    else
      k += (size_t)snprintf(v + k, sizeof v - k, " %s=%lld", row->names[i], (long long)row->vals[i]);
  }
  if (row->is_event)
    logLine(g, p, "result %s %s #%llu at %s%s", row->relation, ops[row->op >= 1 && row->op <= 3 ? row->op : 0],
            (unsigned long long)row->rowid, timeText(f, sizeof f, row->from), v);
  else
    logLine(g, p, "result %s %s #%llu [%s, %s)%s", row->relation, ops[row->op >= 1 && row->op <= 3 ? row->op : 0],
            (unsigned long long)row->rowid, timeText(f, sizeof f, row->from), timeText(t, sizeof t, row->to), v);
  return statusOf(p, c, K_RESULT);
}

/* ================================================================ the list */

#define INIT(role, fn)                                                                                             \
  static tq_pm_status fn(tq_pm_global *g, tq_pm_private *p) { return initRole(g, p, role); }
INIT(FILTER, initFilter)
INIT(ROWS, initRows)
INIT(RECS, initRecs)
INIT(MON, initMon)
INIT(SUP, initSup)
INIT(BUSY, initBusy)
INIT(NET, initNet)
INIT(DISK, initDisk)
INIT(LOAD, initLoad)
INIT(HOSTS, initHosts)

static const tq_pm pms[NPM] = {
    {.version = TQ_PM_VERSION, .name = "filter", .description = "test FILTER (drop=HOST)", .init = initFilter,
     .call = call, .filter = filter},
    {.version = TQ_PM_VERSION, .name = "rows", .description = "test CONSUMER of result rows", .init = initRows,
     .call = call, .result = result},
    {.version = TQ_PM_VERSION, .name = "recs", .description = "test CONSUMER of records", .init = initRecs,
     .call = call, .record = record, .lost = lost},
    {.version = TQ_PM_VERSION, .name = "mon", .description = "test MONITOR", .init = initMon, .call = call},
    {.version = TQ_PM_VERSION, .name = "sup", .description = "test SUPPORTER", .init = initSup, .call = call},
    {.version = TQ_PM_VERSION, .name = "busy", .description = "test PRODUCER of Busy (sampled)", .init = initBusy,
     .call = call, .enable = enable, .sample = sample},
    {.version = TQ_PM_VERSION, .name = "net", .description = "test PRODUCER of Net", .init = initNet, .call = call,
     .enable = enable},
    {.version = TQ_PM_VERSION, .name = "disk", .description = "test PRODUCER of Disk", .init = initDisk,
     .call = call, .enable = enable},
    {.version = TQ_PM_VERSION, .name = "load", .description = "test PRODUCER of Load", .init = initLoad,
     .call = call, .enable = enable},
    {.version = TQ_PM_VERSION, .name = "hosts", .description = "test PRODUCER of the entity relation Host",
     .init = initHosts, .call = call, .enable = enable},
};

const tq_pm *const *tqmon_pm_list(int *n);
const tq_pm *const *tqmon_pm_list(int *n) {
  static const tq_pm *const list[NPM] = {&pms[0], &pms[1], &pms[2], &pms[3], &pms[4],
                                          &pms[5], &pms[6], &pms[7], &pms[8], &pms[9]};
  *n = NPM;
  return list;
}
