/*
** engine.c - the engine's API (include/tqmon.h) and its context: creating
** an engine and its options, the services of the global context handed to
** every PM (include/tqmon_pm.h: log, catalog, symbols, enabling, ranges,
** start, counts, details),
** preparing an operation (compiling the program, building the network,
** binding the PMs to it), information and statistics, and releasing it
** all.  The engine is split by job (docs/design.md, section 4):
**   engine.c          this: the API and the context
**   engine_pm.c       the PM registry, loading and calls
**   engine_loop.c     the operation loop and its instants
**   engine_deliver.c  delivery and enabling, samples, open intervals
**   engine_snap.c     snapshots and delta relations
**   engine_session.c  a session: queries that come and go, phases
**   engine_hist.c     a session's kept records, and queries catching up
** engineInt.h holds their shared state (struct tq_engine).
*/
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engineInt.h"

static int bindNet(tq_engine *e);

/* ================================================================ for the PMs compiled into tqmon (engine.h) */

CpProgram *enProgram(tq_pm_global *g) { return enOf(g)->prog; }
RtNet *enNet(tq_pm_global *g) { return enOf(g)->net; }
TqDiag *enDiag(tq_pm_global *g) { return &enOf(g)->diag; }
int enNeedsFixed(tq_pm_global *g) { return !enOf(g)->session; }
void enSeenUntil(tq_pm_global *g, TqTime t) {
  tq_engine *e = enOf(g);
  if (t > e->lastSeen && t < TQ_FOREVER) e->lastSeen = t;
}
int enBoundable(tq_pm_global *g) {
  const tq_engine *e = enOf(g);
  return !e->session && e->net && !e->allRecords && !e->collectors && !e->filters && !e->packets && !e->haveInstant;
}
int enAliveOnly(tq_pm_global *g, int rel) {
  const tq_engine *e = enOf(g);
  if (e->session || !e->net || e->allRecords || e->collectors || e->filters || rel < 1 || rel > e->net->nsensor)
    return 0;
  const RtSensor *s = &e->net->sensor[rel - 1];
  return s->rel->entity && !s->sources.n && !e->rs[rel - 1].state && !enHistOn(e, rel) &&
         rtNetNeed(e->net, rel, RT_NEED_ANY) != RT_NEED_NONE;
}
int enThreads(tq_pm_global *g) {
  const tq_engine *e = enOf(g);
  if (e->session) return 1;
  if (e->threads) return e->threads;
  return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
}

static void enSetTotal(tq_pm_global *g, int64_t n) { enOf(g)->packetsTotal = n; }

/* The time range of the recording being extracted (for Clock ticks and
** `now`): an extractor's g->set_range. */
static void enSetRange(tq_pm_global *g, TqTime first, TqTime last) {
  tq_engine *e = enOf(g);
  e->first = first;
  e->last = last;
  e->rangeSet = 1;
  if (e->net) e->net->opt.nowValue = e->opt.nowValue = last;
}

static EnPm *pmOfPriv(tq_engine *e, tq_pm_private *p) {
  for (int i = 0; i < e->npm; i++)
    if (&e->pm[i]->priv == p) return e->pm[i];
  return NULL;
}

void enAttachConsumer(tq_pm_global *g, tq_pm_private *p, RtConsumer *c) {
  EnPm *m = pmOfPriv(enOf(g), p);
  if (m) m->rc = c;
}

/* ================================================================ global context services */

void enLog(tq_pm_global *g, tq_pm_private *p, int level, const char *fmt, ...) {
  tq_engine *e = enOf(g);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  EnPm *m = p ? pmOfPriv(e, p) : NULL;
  if (p && p->message != msg) {
    size_t n = strlen(msg);
    if (n >= sizeof p->message) n = sizeof p->message - 1;
    memmove(p->message, msg, n);
    p->message[n] = 0;
  }
  if (level > g->trace_level) return;
  static const char *lv[] = {"error", "warning", "info", "debug"};
  fprintf(stderr, "tqmon: %s%s%s: %s\n", m ? m->pm->name : "", m ? ": " : "", lv[level < 0 ? 0 : level > 3 ? 3 : level], msg);
}

static int gRelation(tq_pm_global *g, const char *name) {
  tq_engine *e = enOf(g);
  if (!e->prog) return -1;
  AlgRel *r = algCatRel(&e->prog->cat, name);
  return r ? r->id : -1;
}

static int gAttribute(tq_pm_global *g, int rel, const char *name) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? algRelAttr(r, name) : -1;
}

static int gNattributes(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->nattr : -1;
}

static int gIsEvent(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->isEvent : -1;
}

static int64_t gSymbol(tq_pm_global *g, const char *text, int len) {
  return tqSym(text, len < 0 ? strlen(text) : (size_t)len);
}

static const char *gSymbolName(tq_pm_global *g, int64_t sym) { return tqSymName((int32_t)sym); }

static int64_t gEnumValue(tq_pm_global *g, int rel, int attr, const char *name) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r || attr < 0 || attr >= r->nattr || r->attr[attr].type.kind != TY_ENUM) return -1;
  const AlgEnum *en = r->attr[attr].type.en;
  for (int i = 0; i < en->n; i++)
    if (!strcasecmp(en->names[i], name)) return i;
  return -1;
}

static int gAttributeType(tq_pm_global *g, int rel, int attr, const char **entity) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r || attr < 0 || attr >= r->nattr) return 0;
  static const int codes[] = {0, TQ_TY_INT, TQ_TY_FLOAT, TQ_TY_STRING, TQ_TY_ENUM, TQ_TY_ENTITY, 0, 0};
  const AlgType *t = &r->attr[attr].type;
  if (entity && t->kind == TY_ENTITY) *entity = t->ent->name;
  return (int)t->kind < (int)TQ_ARRAY_SIZE(codes) ? codes[t->kind] : 0;
}

static int gRelationMode(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  if (!r) return 0;
  if (r->entity) return TQ_MODE_ENTITY;
  if (r->deltaOf) return TQ_MODE_DELTA;
  return r->mode == ALG_MODE_SAMPLED ? TQ_MODE_SAMPLED : r->mode == ALG_MODE_DISABLE ? TQ_MODE_DISABLE : TQ_MODE_TRACED;
}

static int gProgramWanted(tq_pm_global *g, int64_t pid, const char *command) {
  tq_engine *e = enOf(g);
  if (!command) return e->programs.n == 0;
  return rtProgramsWanted(&e->programs, pid, command);
}

static int gNeeded(tq_pm_global *g, int rel) {
  tq_engine *e = enOf(g);
  if (!e->net || rel < 1 || rel > e->net->nsensor) return 0;
  return enNeeded(e, rel);
}

static int gEnabled(tq_pm_global *g, int rel, int64_t entity) {
  tq_engine *e = enOf(g);
  if (!e->net || rel < 1 || rel > e->net->nsensor) return 0;
  RtSensor *s = &e->net->sensor[rel - 1];
  if (s->rel->entity) return 1;
  return rtSensorEnabled(s, entity);
}

static void gHalt(tq_pm_global *g) { enOf(g)->halted = 1; }

void tq_halt(tq_engine *e, int why) {
  if (e) e->haltReq = (sig_atomic_t)(why > 0 ? why + 1 : 1);
}

int enHaltRequested(tq_pm_global *g) { return enOf(g)->haltReq != 0; }

double enProgress(tq_pm_global *g) {
  tq_engine *e = enOf(g);
  if (!e->extractor || !e->rangeSet || e->last <= e->first) return -1;
  double f = (double)(g->now - e->first) / (double)(e->last - e->first);
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

static int gSetRange(tq_pm_global *g, tq_time first, tq_time last, int64_t records) {
  tq_engine *e = enOf(g);
  if (!e->extractor || e->packets || e->haveInstant || first > last || first <= TQ_BEGINNING || last >= TQ_FOREVER) {
    enLog(g, NULL, TQ_LOG_WARNING,
         "set_range ignored: only an extraction, before its first record, with beginning < first <= last < forever");
    return -1;
  }
  enSetRange(g, first, last);
  if (records >= 0) enSetTotal(g, records);
  /* the ticks of the whole recording, known before its first record (and
  ** before the consumers start: nothing is stored) */
  if (e->maxTicks > 0 && e->net) {
    TqTime tick = e->prog->cat.tick, gcd = e->net->clockGcd;
    int deltas = 0;
    for (int i = 0; i < e->net->nsensor; i++) deltas |= e->net->sensor[i].rel->deltaOf && e->net->sensor[i].used;
    uint64_t n = 0;
    if (gcd) n += ((uint64_t)last - (uint64_t)tqTickAtOrAfter(first, gcd)) / (uint64_t)gcd + 1;
    if (deltas) n += ((uint64_t)last - (uint64_t)tqTickAtOrAfter(first, tick)) / (uint64_t)tick + 1;
    if (n > (uint64_t)e->maxTicks) {
      char t1[64], t2[64], t3[64], where[512];
      /* (the recordings, one a line: their names in a row) */
      snprintf(where, sizeof where, "%s", e->extractor->priv.args ? e->extractor->priv.args : "");
      for (char *c = where; (c = strchr(c, '\n')) != NULL;) *c = ',';
      tqErrorAt(&e->diag, where,
                "the recording spans %s to %s: ticking every %s over it is %llu ticks, more than the %lld a replay makes "
                "(give a coarser clock, Clock[n], or --max-ticks N, 0 for no bound)",
                tqTimeFormat(t1, sizeof t1, first), tqTimeFormat(t2, sizeof t2, last), tqTimeFormat(t3, sizeof t3, gcd ? gcd : tick),
                (unsigned long long)n, (long long)e->maxTicks);
      e->fatal = e->halted = 1;
      return -1;
    }
  }
  return 0;
}

/* May records be left out by the sensor filters (SF)?  Not while a
** CONSUMER takes records or a FILTER is loaded: they see what is collected. */
int enSensorFiltering(const tq_engine *e) { return e->net && !e->allRecords && !e->collectors && !e->filters; }

/* g->needed_records (version 8): which records of relation rel the
** operation needs (rtNetNeed), from an extractor's START on.  Every record
** while a CONSUMER takes records or a FILTER is loaded. */
static int gNeededRecords(tq_pm_global *g, int rel, int64_t entity) {
  tq_engine *e = enOf(g);
  int any = entity == TQ_PM_NEED_ANY;
  if (!e->net || e->allRecords || e->collectors || e->filters) return any ? TQ_PM_NEED_ALL : 1;
  return rtNetNeed(e->net, rel, entity); /* (RT_NEED_* are TQ_PM_NEED_*) */
}

/* g->sample_period (version 8): rtNetSamplePeriod, under the same
** conditions. */
static tq_time gSamplePeriod(tq_pm_global *g, int rel) {
  tq_engine *e = enOf(g);
  if (!e->net || e->allRecords || e->collectors || e->filters) return 0;
  return rtNetSamplePeriod(e->net, rel);
}

/* g->sensor_filter (version 10): the conditions of relation rel's sensor
** filter (runtime/sfilter.c), under the same conditions as needed_records. */
static int gSensorFilter(tq_pm_global *g, int rel, const tq_pm_cond **conds) {
  tq_engine *e = enOf(g);
  if (conds) *conds = NULL;
  if (!enSensorFiltering(e) || rel < 1 || rel > e->net->nsensor) return 0;
  const RtSensor *s = &e->net->sensor[rel - 1];
  if (!s->nconds) return 0;
  if (conds) *conds = s->conds;
  return s->nconds;
}

/* g->suppressed (version 10): records a producer did not write. */
static void gSuppressed(tq_pm_global *g, int rel, int64_t n) {
  tq_engine *e = enOf(g);
  if (!e->net || rel < 1 || rel > e->net->nsensor || n <= 0) return;
  e->net->sensor[rel - 1].suppressed += n;
}

/* g->set_start (version 4): a collection's first time, from its
** timer's START (the realtime clock: CLOCK_REALTIME ns; pcp: an archive's);
** or, from the extractor's START, an extraction's whose range is known
** only at its end (no other PM of an extraction sets it). */
static int gSetStart(tq_pm_global *g, tq_time t) {
  tq_engine *e = enOf(g);
  if (!e->starting || (e->extractor && (e->startingPm != e->extractor || e->rangeSet)) || t <= TQ_BEGINNING ||
      t >= TQ_FOREVER) {
    enLog(g, NULL, TQ_LOG_WARNING,
         "set_start ignored: only a collection's, or an extractor's without set_range, at START, with "
         "beginning < t < forever");
    return -1;
  }
  e->startTime = t;
  e->haveStart = 1;
  e->g.now = t;
  return 0;
}

/* g->counts (version 4): how far the operation is, for MONITORs. */
static void gCounts(tq_pm_global *g, int64_t *records, int64_t *snapshots) {
  tq_engine *e = enOf(g);
  if (records) *records = e->packets;
  if (snapshots) *snapshots = e->snapSeq;
}

/* ---------------------------------------------------------------- version 6 */
static const char *gRelationName(tq_pm_global *g, int rel) {
  const AlgRel *r = relOf(enOf(g), rel);
  return r ? r->name : NULL;
}

static const char *jsonBlank(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  return s;
}

/* Skips one JSON value at s (after blanks).  Returns the text after it, or
** NULL when s does not start with one (depth bounds the nesting). */
static const char *jsonSkip(const char *s, int depth) {
  s = jsonBlank(s);
  if (depth > 64) return NULL;
  if (*s == '{' || *s == '[') {
    char close = *s == '{' ? '}' : ']';
    int obj = *s == '{';
    s++;
    s = jsonBlank(s);
    if (*s == close) return s + 1;
    for (;;) {
      if (obj) {
        s = jsonBlank(s);
        if (*s != '"' || !(s = jsonSkip(s, depth + 1))) return NULL;
        s = jsonBlank(s);
        if (*s++ != ':') return NULL;
      }
      if (!(s = jsonSkip(s, depth + 1))) return NULL;
      s = jsonBlank(s);
      if (*s == close) return s + 1;
      if (*s++ != ',') return NULL;
    }
  }
  if (*s == '"') {
    for (s++; *s && *s != '"'; s++) {
      if ((unsigned char)*s < 0x20) return NULL;
      if (*s == '\\' && !*++s) return NULL;
    }
    return *s ? s + 1 : NULL;
  }
  if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4)) return s + 4;
  if (!strncmp(s, "false", 5)) return s + 5;
  char *end;
  if (*s != '-' && (*s < '0' || *s > '9')) return NULL;
  strtod(s, &end);
  return end > s ? end : NULL;
}

/* g->lost (version 9): counted, and told to the CONSUMERs that take
** losses (version 11: a recorder keeps them), as told; a loss of a count
** not known (version 12) only to those of version 12 or later. */
_Static_assert(TQ_PM_LOST_UNKNOWN == RT_LOSS_UNKNOWN, "the two names of a count not known");
static int gLost(tq_pm_global *g, int rel, int64_t entity, tq_time from, tq_time to, int64_t count, int spans) {
  tq_engine *e = enOf(g);
  if (!e->net || rtNetLost(e->net, rel, entity == TQ_PM_ENTITY_UNKNOWN ? RT_LOSS_ANY : entity, from, to, count, spans))
    return -1;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (m->pm->version < 11 || !m->pm->lost || !(m->priv.caps & TQ_PM_CONSUMER) || m->priv.disabled || !m->started)
      continue;
    if (count == TQ_PM_LOST_UNKNOWN && m->pm->version < 12) continue; /* (it takes counts only) */
    m->calls++;
    enPmStatus(e, m, m->pm->lost(g, &m->priv, rel, entity, from, to, count, spans != 0));
  }
  return 0;
}

static int gSetDetail(tq_pm_global *g, tq_pm_private *p, const char *json) {
  EnPm *m = pmOfPriv(enOf(g), p);
  if (!m) return -1;
  if (json) {
    const char *end = jsonSkip(json, 0);
    if (end) end = jsonBlank(end);
    if (!end || *end) {
      enLog(g, p, TQ_LOG_WARNING, "set_detail ignored: not one JSON value");
      return -1;
    }
  }
  free(m->detail);
  m->detail = json ? tqStrdup(json) : NULL;
  return 0;
}

/* ================================================================ an engine, its options, its errors */

tq_engine *enNew(void) {
  tq_engine *e = tqCalloc(1, sizeof *e);
  e->g.version = TQ_PM_VERSION;
  e->g.engine = e;
  e->g.trace_level = TQ_LOG_WARNING;
  e->g.log = enLog;
  e->g.relation = gRelation;
  e->g.attribute = gAttribute;
  e->g.nattributes = gNattributes;
  e->g.is_event = gIsEvent;
  e->g.symbol = gSymbol;
  e->g.symbol_name = gSymbolName;
  e->g.enum_value = gEnumValue;
  e->g.enabled = gEnabled;
  e->g.produce = enProduce;
  e->g.sample_answer = enSampleAnswer;
  e->g.advance = enAdvance;
  e->g.halt = gHalt;
  e->g.set_range = gSetRange;
  e->g.announce_whole = enAnnounce;
  e->g.set_start = gSetStart;
  e->g.counts = gCounts;
  e->g.needed = gNeeded;
  e->g.attribute_type = gAttributeType;
  e->g.relation_mode = gRelationMode;
  e->g.relation_name = gRelationName;
  e->g.set_detail = gSetDetail;
  e->g.program_wanted = gProgramWanted;
  e->g.needed_records = gNeededRecords;
  e->g.sample_period = gSamplePeriod;
  e->g.lost = gLost;
  e->g.sensor_filter = gSensorFilter;
  e->g.suppressed = gSuppressed;
  e->opt.nowValue = TQ_OPEN;
  e->maxTicks = EN_MAX_TICKS;
  e->instArena = tqArenaNew();
  const char *env = getenv("TQMON_PM_PATH");
  if (env) {
    e->pmPath = tqStrdup(env);
    e->pmPathEnv = 1;
  }
  return e;
}

int enFail(tq_engine *e, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tqErrorAt(&e->diag, NULL, "%s", msg);
  return -1;
}

void enCollectErrors(tq_engine *e) {
  tqBufFree(&e->errs);
  if (e->diag.out.s) tqBufPuts(&e->errs, e->diag.out.s);
  int cap = e->diag.maxerr ? e->diag.maxerr : 50;
  if (e->diag.nerr > cap) tqBufPrintf(&e->errs, "(%d more errors not shown)\n", e->diag.nerr - cap);
  tqDiagFree(&e->diag);
  memset(&e->diag, 0, sizeof e->diag);
}

const char *tq_errors(tq_engine *e) { return e->errs.s ? e->errs.s : ""; }

int tq_set_option(tq_engine *e, const char *name, const char *value) {
  tqBufFree(&e->errs);
  if (!strcmp(name, "pm-path")) {
    free(e->pmPath);
    e->pmPath = tqStrdup(value);
    e->pmPathEnv = 0;
  } else if (!strcmp(name, "no-opt")) {
    e->opt.noOpt = atoi(value) != 0;
  } else if (!strcmp(name, "threads")) {
    char *end;
    long n = strtol(value, &end, 10);
    if (*value < '0' || *value > '9' || *end || n < 1 || n > 64) {
      enFail(e, "threads (tqmon run --threads) is a number from 1 to 64, not '%s'", value);
      enCollectErrors(e);
      return -1;
    }
    e->threads = (int)n;
  } else if (!strcmp(name, "programs")) {
    /* comma-separated patterns, added to the program's own */
    char *all = tqStrdup(value), *save = NULL;
    TqBuf why = {0};
    for (char *w = strtok_r(all, ",", &save); w; w = strtok_r(NULL, ",", &save))
      if (rtProgramsAdd(&e->programs, w, &why)) break;
    if (!*value) rtProgramsAdd(&e->programs, value, &why);
    free(all);
    if (why.n) {
      enFail(e, "--programs: %s", why.s);
      tqBufFree(&why);
      enCollectErrors(e);
      return -1;
    }
  } else if (!strcmp(name, "session")) {
    if (e->state) {
      enFail(e, "the option session is set before tq_prepare");
      enCollectErrors(e);
      return -1;
    }
    e->session = atoi(value) != 0;
  } else if (!strcmp(name, "session-db")) {
    if (e->sstore || !*value) {
      enFail(e, e->sstore ? "the session's store is open already" : "session-db needs a file name");
      enCollectErrors(e);
      return -1;
    }
    free(e->sstorePath);
    e->sstorePath = tqStrdup(value);
  } else if (!strcmp(name, "session-history")) {
    /* the bound of the records kept for queries added later: bytes, or
    ** with K, M or G (engine_hist.c) */
    char *end;
    long long v = strtoll(value, &end, 10);
    long long mul = !strcmp(end, "K") ? 1LL << 10 : !strcmp(end, "M") ? 1LL << 20 : !strcmp(end, "G") ? 1LL << 30 : !*end ? 1 : 0;
    if (*value < '0' || *value > '9' || !mul || v < 1 || v > (1LL << 40) / mul || v * mul < (1LL << 20)) {
      enFail(e, "the bound of the kept records (session-history, tqmon daemon --kept) needs a size of at least 1M (bytes, or with K, M or G), at most 1024G, not '%s'", value);
      enCollectErrors(e);
      return -1;
    }
    e->histMax = v * mul;
  } else if (!strcmp(name, "trace-level")) {
    e->g.trace_level = atoi(value);
  } else if (!strcmp(name, "time-limit")) {
    e->opt.timeLimit = atof(value);
  } else if (!strcmp(name, "notes")) {
    e->notes = atoi(value) != 0;
  } else if (!strcmp(name, "max-ticks")) {
    char *end;
    long long v = strtoll(value, &end, 10);
    if (*value < '0' || *value > '9' || *end || v < 0) {
      enFail(e, "max-ticks needs a count of ticks (0: no bound), not '%s'", value);
      enCollectErrors(e);
      return -1;
    }
    e->maxTicks = v;
  } else {
    enFail(e, "unknown option '%s'", name);
    enCollectErrors(e);
    return -1;
  }
  return 0;
}

/* ================================================================ prepare */

/* Tells relation rel's producer the flag of entity. */
static void tellFlag(tq_engine *e, int rel, int64_t entity, int on) {
  EnPm *p = e->producerOf[rel - 1];
  if (!p || p->priv.disabled || !p->pm->enable) return;
  p->calls++;
  if (p->multi) p->priv.rel = rel;
  enPmStatus(e, p, p->pm->enable(&e->g, &p->priv, entity, on));
}

/* The key of (relation, entity) in e->offMap (never 0 or 1). */
static uint64_t offKey(int rel, int64_t entity) { return tqHash64(((uint64_t)rel << 48) ^ (uint64_t)entity) | 2; }

/* A flag that goes on is told at once; one that goes off is told a whole
** snapshot later, if it is still off then (enFlushOffs).  A live
** producer's flags are read by the subject while the engine runs behind
** it: an entity whose tuple ends and begins again (a new state) is off
** between the END and the BEGIN in the engine, for as long as it takes
** the engine to get from one to the other (a snapshot, when a snapshot
** boundary falls between them), but never in the subject, whose sensor
** fires only after the BEGIN.  Told at once, the subject would miss what
** it reported in that window, and nobody would count it: the engine holds
** the entity enabled at that time.  Told late, the producer writes a few
** more packets, which the engine does not deliver (its own count says
** off).  A flag that goes on again while its off waits was never off for
** the producer: it is not told again (a traced relation's flag; a
** disable-traced sensor's counter has counted down as it fired, and is
** told its count), and the off, found on at the flush, is not told either.
** (Told again, every new state of an entity cost its producer a call: a
** store to the agent of a remote host, one round trip each.) */
static void onFlag(void *ctx, RtSensor *s, int64_t entity, int on) {
  tq_engine *e = ctx;
  int rel = s->rel->id;
  if (enHistOn(e, rel)) enHistFlag(e, s, entity, on);
  EnPm *p = e->producerOf[rel - 1];
  if (!p || p->priv.disabled || !p->pm->enable) return;
  uint64_t k = offKey(rel, entity);
  intptr_t at = (intptr_t)tqMapGet(&e->offMap, k);
  int waiting = at > 0 && e->offs[at - 1].rel == rel && e->offs[at - 1].entity == entity;
  if (on > 0) {
    if (!waiting || s->rel->mode == ALG_MODE_DISABLE) tellFlag(e, rel, entity, on);
    return;
  }
  if (waiting) {
    e->offs[at - 1].seq = e->snapSeq; /* already waiting: from now */
    return;
  }
  if (e->noffs == e->coffs) {
    e->coffs = e->coffs ? 2 * e->coffs : 64;
    e->offs = tqRealloc(e->offs, sizeof *e->offs * (size_t)e->coffs);
  }
  e->offs[e->noffs++] = (EnOff){rel, entity, e->snapSeq};
  if (!at) tqMapPut(&e->offMap, k, (void *)(intptr_t)e->noffs); /* (a collision: found by no key, told all the same) */
}

void enFlushOffs(tq_engine *e, int all) {
  int k = 0;
  for (int i = 0; i < e->noffs; i++) {
    EnOff o = e->offs[i];
    uint64_t key = offKey(o.rel, o.entity);
    intptr_t at = (intptr_t)tqMapGet(&e->offMap, key);
    int mine = at == i + 1;
    if (!all && o.seq >= e->snapSeq) { /* queued during this snapshot: the next */
      if (mine && k != i) tqMapPut(&e->offMap, key, (void *)(intptr_t)(k + 1));
      e->offs[k++] = o;
      continue;
    }
    if (mine) tqMapDel(&e->offMap, key);
    if (!rtSensorEnabled(&e->net->sensor[o.rel - 1], o.entity)) tellFlag(e, o.rel, o.entity, 0);
  }
  e->noffs = k;
}

static int rowToPms(void *self, RtResult *res, const RtRow *row) {
  tq_engine *e = self;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!(m->priv.caps & TQ_PM_CONSUMER) || m->priv.disabled) continue;
    int st = TQ_PM_OK;
    if (m->rc) {
      if (m->rc->row && m->rc->row(m->rc->self, res, row)) st = TQ_PM_ERROR;
    } else if (m->pm->result) {
      static const int codes[] = {0, TQ_TY_INT, TQ_TY_FLOAT, TQ_TY_STRING, TQ_TY_ENUM, TQ_TY_ENTITY, 0, 0};
      const char *names[64];
      int types[64];
      for (int k = 0; k < res->nattr && k < 64; k++) {
        names[k] = res->attr[k].name;
        types[k] = codes[res->attr[k].type.kind];
      }
      tq_result_row r = {res->name, row->op, row->rowid, res->isEvent, row->from, row->to, res->nattr, row->vals, names, types};
      st = m->pm->result(&e->g, &m->priv, &r);
    } else {
      continue;
    }
    m->calls++;
    enPmStatus(e, m, st);
  }
  return 0;
}

static int batchToPms(void *self, TqTime now) {
  tq_engine *e = self;
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (m->rc && !m->priv.disabled && m->rc->batch && m->rc->batch(m->rc->self, now)) {
      m->priv.disabled = 1;
      enLog(&e->g, &m->priv, TQ_LOG_ERROR, "disabled after an error while storing results");
    }
  }
  return 0;
}

/* Does a loaded PM draw the program's displays (TQ_PM_SYNC_DISPLAYS)? */
static int wantsDisplays(tq_engine *e) {
  for (int i = 0; i < e->npm; i++)
    if (e->pm[i]->pm->version >= 4 && (e->pm[i]->priv.sync & TQ_PM_SYNC_DISPLAYS)) return 1;
  return 0;
}

/* Does a registered PM produce r by name (1), or "*" (2)?  0: none. */
static int producedBy(const tq_engine *e, const CpProgram *p, const AlgRel *r) {
  int any = 0;
  for (int i = 0; i < e->npm; i++) {
    const tq_pm_private *q = &e->pm[i]->priv;
    if (!(q->caps & TQ_PM_PRODUCER) || !q->produces) continue;
    if (!strcmp(q->produces, "*")) any = 2;
    else if (algCatRel(&p->cat, q->produces) == r) return 1;
  }
  return any;
}

void enSensorsAsked(tq_engine *e, CpProgram *p) {
  int extract = 0;
  for (int i = 0; i < e->npm; i++) extract |= (e->pm[i]->priv.caps & TQ_PM_EXTRACTOR) != 0;
  for (int i = 0; i < p->cat.rels.n; i++) {
    AlgRel *r = p->cat.rels.v[i];
    r->unasked = NULL;
    if (extract || !(r->altSensor || r->sensorOf)) continue;
    int by = producedBy(e, p, r);
    if (r->sensorOf && by != 1)
      r->unasked = tqArenaPrintf(p->arena, "no processor module of this live collection produces it (a replay answers it from "
                                 "%s's records)", r->sensorOf->name);
    else if (r->altSensor && !by)
      r->unasked = tqArenaPrintf(p->arena, "no processor module of this live collection produces it");
  }
}

int tq_prepare(tq_engine *e, int nfiles, const char *const *files) {
  tqBufFree(&e->errs);
  if (e->state) {
    enFail(e, "tq_prepare is called once");
    enCollectErrors(e);
    return -1;
  }
  if (nfiles <= 0) {
    enFail(e, "no program file given (FILE.tq)");
    enCollectErrors(e);
    return -1;
  }
  e->diag.notes = e->notes;
  e->baseFiles = tqCalloc((size_t)nfiles, sizeof(char *));
  for (e->nbase = 0; e->nbase < nfiles; e->nbase++) e->baseFiles[e->nbase] = tqStrdup(files[e->nbase]);
  e->prog = cpCompileFiles(nfiles, files, &e->diag);
  if (!e->prog) {
    enCollectErrors(e);
    return -1;
  }
  for (int i = 0; i < e->prog->programs.n; i++) {
    TqBuf why = {0};
    rtProgramsAdd(&e->programs, e->prog->programs.v[i], &why); /* checked by the compiler already */
    tqBufFree(&why);
  }
  if (wantsDisplays(e) && cpDisplayQueries(e->prog, &e->diag)) {
    enCollectErrors(e);
    return -1;
  }
  enSensorsAsked(e, e->prog);
  if (!e->opt.noOpt) cpOptimize(e->prog, NULL);
  /* explain text */
  for (int i = 0; i < e->prog->queries.n; i++) {
    CpQuery *q = e->prog->queries.v[i];
    tqBufPrintf(&e->explain, "%s: ", q->name ? q->name : tqArenaPrintf(e->prog->arena, "query%d", i + 1));
    algPrint(!e->opt.noOpt && q->opt ? q->opt : q->tree, &e->explain);
    tqBufPuts(&e->explain, "\n");
  }
  e->net = rtNetNew(e->prog, &e->opt, &e->diag);
  if (!e->net) {
    enCollectErrors(e);
    return -1;
  }
  int rc = bindNet(e);
  enCollectErrors(e);
  return rc;
}

/* Binds the PMs to the program and the network: producers to relations,
** the extractor or the timer, the call order, the network's hooks. */
static int bindNet(tq_engine *e) {
  e->nrel = e->prog->cat.rels.n;
  e->rs = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(RelState));
  e->prevStore = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(SnapStore));
  e->curSets = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(tq_record_set));
  e->prevSets = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(tq_record_set));
  e->producerOf = tqCalloc((size_t)(e->nrel ? e->nrel : 1), sizeof(EnPm *));
  e->g.tick = e->prog->cat.tick;
  /* bind PMs */
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (m->priv.caps & TQ_PM_EXTRACTOR) {
      if (e->extractor) return enFail(e, "two extractors: %s and %s", e->extractor->pm->name, m->pm->name);
      e->extractor = m;
    }
    if ((m->priv.caps & TQ_PM_TIMER) && !e->timer) e->timer = m;
    if ((m->priv.caps & TQ_PM_PRODUCER) && m->priv.produces && !strcmp(m->priv.produces, "*")) {
      m->multi = 1; /* bound below to what no other PM produces */
    } else if (m->priv.caps & TQ_PM_PRODUCER) {
      AlgRel *r = m->priv.produces ? algCatRel(&e->prog->cat, m->priv.produces) : NULL;
      if (!r && m->member && m->priv.produces) {
        /* a grouper offers it, the program does not want it: never called */
        m->unbound = m->priv.disabled = 1;
        snprintf(m->priv.message, sizeof m->priv.message, "left out: the program does not declare %s", m->priv.produces);
        continue;
      }
      if (!r) {
        enFail(e, "processor module %s produces '%s', which the program does not declare", m->pm->name,
             m->priv.produces ? m->priv.produces : "(nothing)");
        return -1;
      }
      if (e->producerOf[r->id - 1] && m->member && e->producerOf[r->id - 1]->member) {
        /* two groupers offer it (--host and --kernel both make Processor):
        ** the first registered produces it */
        m->unbound = m->priv.disabled = 1;
        snprintf(m->priv.message, sizeof m->priv.message, "left out: %s produces %s",
                 e->producerOf[r->id - 1]->pm->name, r->name);
        continue;
      }
      if (e->producerOf[r->id - 1]) {
        enFail(e, "relation %s has two producers: %s and %s", r->name, e->producerOf[r->id - 1]->pm->name, m->pm->name);
        return -1;
      }
      e->producerOf[r->id - 1] = m;
      m->priv.rel = r->id;
    }
  }
  /* a multi-relation producer (a live source such as a shared-memory
  ** segment) produces every primitive relation no other PM produces */
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    if (!m->multi) continue;
    for (int k = 0; k < e->nrel; k++) {
      const AlgRel *r = e->prog->cat.rels.v[k];
      if (!e->producerOf[k] && !r->deltaOf && !r->sensorOf) e->producerOf[k] = m;
    }
  }
  e->g.operation = e->extractor ? TQ_OP_EXTRACT : TQ_OP_COLLECT;
  for (int i = 0; i < e->npm; i++) {
    if ((e->pm[i]->priv.caps & TQ_PM_FILTER) && e->pm[i]->pm->filter) e->filters = 1;
    if ((e->pm[i]->priv.caps & TQ_PM_CONSUMER) && e->pm[i]->pm->record) {
      if (e->pm[i]->priv.sync & TQ_PM_SYNC_ALL_RECORDS) e->allRecords = 1;
      else e->collectors = 1;
    }
  }
  if (!e->extractor) {
    if (!e->timer) {
      enFail(e, "a collection needs a TIMER processor module (for instance clock), or an EXTRACTOR to replay a recording");
      return -1;
    }
    for (int i = 0; i < e->nrel; i++) {
      RtSensor *s = &e->net->sensor[i];
      /* another sensor of a relation is used only when a PM produces it
      ** (enSensorsAsked: the optimizer knew which) */
      if ((enNeeded(e, i + 1) || (s->rel->sensorOf && s->used)) && !e->producerOf[i]) {
        enFail(e, "no processor module produces relation %s, which a query needs", s->rel->name);
        return -1;
      }
    }
  }
  /* dependency order */
  e->order = tqCalloc((size_t)(e->npm ? e->npm : 1), sizeof(EnPm *));
  int k = 0;
  for (int i = 0; i < e->npm; i++)
    if (enTopo(e, e->pm[i], &k)) {
      return -1;
    }
  /* the network's view */
  e->prod.name = "engine";
  e->prod.self = e;
  e->prod.sample = enSample;
  e->prod.minPendingFrom = enMinPending;
  for (int i = 0; i < e->net->nsensor; i++) {
    const AlgRel *r = e->net->sensor[i].rel;
    e->rs[i].tracked = e->net->sensor[i].used && !r->entity && !r->isEvent && r->mode != ALG_MODE_SAMPLED;
    e->rs[i].state = e->rs[i].tracked ||
                     (r->mode == ALG_MODE_SAMPLED && (e->net->sensor[i].used || (r->delta && e->net->sensor[r->delta->id - 1].used))) ||
                     (r->altSensor && e->net->sensor[r->altSensor->id - 1].used); /* its other sensor samples it */
    if (e->session) {
      /* queries come later: every relation keeps what is open, so that a
      ** query added at t finds the entities alive then and the intervals
      ** begun before t (delivered whole when they end) */
      e->rs[i].tracked = !r->entity && !r->isEvent && r->mode != ALG_MODE_SAMPLED && !r->deltaOf;
      e->rs[i].state = 1;
    }
    e->net->sensor[i].prod = &e->prod;
    e->net->sensor[i].onFlag = onFlag;
    e->net->sensor[i].onFlagCtx = e;
  }
  free(e->trimRel);
  e->trimRel = tqMalloc(sizeof(int) * (size_t)(e->net->nsensor ? e->net->nsensor : 1));
  e->ntrim = 0;
  for (int i = 0; i < e->net->nsensor; i++)
    if (e->rs[i].tracked) e->trimRel[e->ntrim++] = i;
  e->rowc.name = "pms";
  e->rowc.self = e;
  e->rowc.row = rowToPms;
  e->rowc.batch = batchToPms;
  rtNetAddConsumer(e->net, &e->rowc);
  e->state = 1;
  return 0;
}

/* ================================================================ information */

int tq_get_info(tq_engine *e, tq_info *info) {
  memset(info, 0, sizeof *info);
  free(e->pinfo);
  free(e->sinfo);
  e->pinfo = tqCalloc((size_t)(e->npm ? e->npm : 1), sizeof(tq_pm_info));
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    e->pinfo[i] = (tq_pm_info){m->pm->name, m->priv.caps, m->priv.sync, m->priv.disabled, m->calls, m->priv.message};
  }
  info->npms = e->npm;
  info->pms = e->pinfo;
  if (e->net) {
    e->sinfo = tqCalloc((size_t)(e->net->nsensor ? e->net->nsensor : 1), sizeof(tq_sensor_info));
    for (int i = 0; i < e->net->nsensor; i++) {
      RtSensor *s = &e->net->sensor[i];
      e->sinfo[i] = (tq_sensor_info){s->rel->name, s->used, s->recorded, s->delivered, s->nEnabled, s->maxEnabled};
    }
    info->nsensors = e->net->nsensor;
    info->sensors = e->sinfo;
    info->tuples = e->net->tuplesProcessed;
    info->now = e->net->now;
  }
  info->snapshots = e->snapSeq;
  info->packets = e->packets;
  return 0;
}

const char *tq_explain(tq_engine *e) { return e->explain.s ? e->explain.s : ""; }

int tq_describe(tq_engine *e, const char *relation, char *out, int n) {
  if (!out || n < 1) return -1;
  out[0] = 0;
  const AlgRel *r = e->prog ? algCatRel(&e->prog->cat, relation) : NULL;
  EnPm *m = r && e->producerOf ? e->producerOf[r->id - 1] : NULL;
  if (!m) return -1;
  char how[1024] = "";
  if (m->pm->version >= 5 && m->pm->describe && !m->priv.disabled) {
    if (m->multi) m->priv.rel = r->id;
    m->pm->describe(&e->g, &m->priv, r->id, how, (int)sizeof how);
    how[sizeof how - 1] = 0;
  }
  snprintf(out, (size_t)n, "%s by %s: %s", r->name, m->pm->name, how[0] ? how : m->pm->description);
  return 0;
}


/* The network's statistics, then per PM its calls, whether it is disabled
** and its last message (the host PMs count their reads there). */
const char *tq_stats_json(tq_engine *e) {
  tqBufFree(&e->stats);
  if (!e->net) return "{}";
  rtNetStatsJson(e->net, &e->stats);
  if (e->stats.n < 3 || strcmp(e->stats.s + e->stats.n - 3, "\n}\n")) return e->stats.s;
  e->stats.n -= 3; /* reopen the object */
  e->stats.s[e->stats.n] = 0;
  tqBufPuts(&e->stats, ",\n  \"pms\": [");
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    tqBufPrintf(&e->stats, "%s\n    {\"name\": ", i ? "," : "");
    rtJsonStr(&e->stats, m->pm->name);
    tqBufPrintf(&e->stats, ", \"calls\": %lld, \"disabled\": %s, \"message\": ", (long long)m->calls,
                m->priv.disabled ? "true" : "false");
    rtJsonStr(&e->stats, m->priv.message);
    if (m->detail) tqBufPrintf(&e->stats, ", \"detail\": %s", m->detail);
    tqBufPuts(&e->stats, "}");
  }
  tqBufPuts(&e->stats, "\n  ]");
  if (e->haltedBy) { /* tq_halt ended the run (a signal, say) */
    int sig = e->haltedBy - 1;
    const char *abbrev = sig ? sigabbrev_np(sig) : NULL;
    char name[32];
    if (abbrev) snprintf(name, sizeof name, "SIG%s", abbrev);
    else snprintf(name, sizeof name, sig ? "signal %d" : "request", sig);
    tqBufPrintf(&e->stats, ",\n  \"halted_by\": \"%s\"", name);
  }
  if (e->programs.n) { /* the program list: the processes each pattern matched */
    tqBufPuts(&e->stats, ",\n  \"programs\": [");
    for (int i = 0; i < e->programs.n; i++) {
      const RtPattern *x = &e->programs.pat[i];
      tqBufPrintf(&e->stats, "%s\n    {\"pattern\": ", i ? "," : "");
      rtJsonStr(&e->stats, x->text);
      tqBufPrintf(&e->stats, ", \"processes\": %u%s, \"pids\": [", x->pids.n, x->more ? ", \"more\": true" : "");
      int k = 0;
      for (uint32_t j = 0; j < x->pids.cap; j++)
        if (x->pids.slot[j].key > 1) tqBufPrintf(&e->stats, "%s%lld", k++ ? ", " : "", (long long)x->pids.slot[j].key - 2);
      tqBufPuts(&e->stats, "]}");
    }
    tqBufPuts(&e->stats, "\n  ]");
  }
  if (e->session) enSessionStats(e, &e->stats);
  tqBufPuts(&e->stats, "\n}\n");
  return e->stats.s;
}

/* ================================================================ release */

void tq_finish(tq_engine *e) {
  if (!e) return;
  if (e->state == 1 || e->state == 2) tq_end(e);
  enSessionFree(e);
  if (e->held) {
    /* the caller keeps the program and the network (enBind) */
    for (int i = 0; e->net && i < e->net->consumers.n; i++)
      if (e->net->consumers.v[i] == &e->rowc) {
        e->net->consumers.v[i] = e->net->consumers.v[--e->net->consumers.n];
        break;
      }
    e->prog = NULL;
    e->net = NULL;
  }
  rtNetFree(e->net);
  for (int i = 0; i < e->npm; i++) {
    EnPm *m = e->pm[i];
    free(m->argsCopy);
    free(m->detail);
  }
  for (int i = 0; i < e->npm; i++)
    if (e->pm[i]->dl) dlclose(e->pm[i]->dl);
  for (int i = 0; i < e->npm; i++) free(e->pm[i]);
  free(e->pm);
  free(e->order);
  TqMap seen = {0};
  for (int i = 0; i < e->nrel; i++) {
    RelState *r = &e->rs[i];
    /* open intervals and queued ones: each freed once */
    for (int k = 0; k < r->nopen; k++) tqMapPut(&seen, (uint64_t)(uintptr_t)r->open[k], r->open[k]);
    for (int k = 0; k < r->fn; k++) {
      OpenIv *iv = r->fifo[(r->fhead + k) % r->fcap];
      tqMapPut(&seen, (uint64_t)(uintptr_t)iv, iv);
    }
    free(r->open);
    free(r->fifo);
    while (r->freeIv) {
      OpenIv *x = r->freeIv;
      r->freeIv = x->nextFree;
      free(x);
    }
    free(r->ann);
    free(r->annDone);
    tqMapFree(&r->annLeft);
    for (int k = 0; k < r->dprev.n; k++) free(r->dprev.v[k]);
    tqVecFree(&r->dprev);
    tqMapFree(&r->dmap);
    tqMapFree(&r->onceSeen);
    free(r->onceBits);
    free(r->aliveN);
    free(r->ever);
    free(r->cur.rec);
    free(r->cur.vals);
    free(e->prevStore[i].rec);
    free(e->prevStore[i].vals);
  }
  for (uint32_t k = 0; k < seen.cap; k++)
    if (seen.slot[k].key > 1) free(seen.slot[k].val);
  tqMapFree(&seen);
  tqMapFree(&e->ivs);
  tqMapFree(&e->sampled);
  tqMapFree(&e->offMap);
  free(e->offs);
  free(e->rs);
  free(e->prevStore);
  free(e->curSets);
  free(e->prevSets);
  free(e->producerOf);
  free(e->inst);
  free(e->trimRel);
  free(e->instIvs);
  tqArenaDelete(e->instArena);
  free(e->gat);
  tqArenaDelete(e->gatArena);
  cpProgramFree(e->prog);
  rtProgramsFree(&e->programs);
  free(e->pmPath);
  tqBufFree(&e->explain);
  tqBufFree(&e->stats);
  tqBufFree(&e->errs);
  tqDiagFree(&e->diag);
  free(e->pinfo);
  free(e->sinfo);
  free(e);
}

/* ================================================================ a program and a network held by the caller */

int enBind(tq_engine *e, CpProgram *p, RtNet *net) {
  tqBufFree(&e->errs);
  if (e->state) {
    enFail(e, "enBind instead of tq_prepare, once");
    enCollectErrors(e);
    return -1;
  }
  e->prog = p;
  e->net = net;
  e->opt = net->opt;
  e->held = 1;
  int rc = bindNet(e);
  enCollectErrors(e);
  return rc;
}
