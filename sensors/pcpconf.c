/*
** pcpconf.c - the PCP sensor configuration: reading its "-- pcp:" mapping
** lines (pcpInt.h), and writing a configuration from pmcd's metadata
** (`tqmon pcp describe`, snsPcpDescribe).
**
** describe asks one pmcd for the descriptors of the metrics named (a
** non-leaf name stands for every metric below it), groups them by instance
** domain and writes, for each instance domain, an entity relation and one
** sampled relation whose attributes are its metrics; a relation holding a
** counter gets a delta relation (the counter's increase over each tick).
** Metrics without an instance domain go to HostSample, sampled on the Host
** entity.  Units, semantics and the one-line help go into the attribute
** comments.  The output is written whole or not at all: an unknown metric,
** an unreachable host or a metric of a type tqmon has no attribute for
** (events, aggregates) is an error, exit status 1, and nothing is written.
*/
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcpInt.h"
#include "pcpdl.h"
#include "sensors.h"

/* ================================================================ names */

static const struct {
  int type;
  const char *name;
  const char *long_;
} typeNames[] = {
    {PM_TYPE_32, "i32", "32-bit int"},        {PM_TYPE_U32, "u32", "32-bit unsigned int"},
    {PM_TYPE_64, "i64", "64-bit int"},        {PM_TYPE_U64, "u64", "64-bit unsigned int"},
    {PM_TYPE_FLOAT, "float", "float"},        {PM_TYPE_DOUBLE, "double", "double"},
    {PM_TYPE_STRING, "string", "string"},
};

const char *pcpTypeName(int type) {
  for (size_t i = 0; i < sizeof typeNames / sizeof typeNames[0]; i++)
    if (typeNames[i].type == type) return typeNames[i].name;
  return "unsupported";
}
int pcpTypeOf(const char *name) {
  for (size_t i = 0; i < sizeof typeNames / sizeof typeNames[0]; i++)
    if (!strcmp(typeNames[i].name, name)) return typeNames[i].type;
  return -1;
}
const char *pcpSemName(int sem) {
  return sem == PM_SEM_COUNTER ? "counter" : sem == PM_SEM_INSTANT ? "instant" : sem == PM_SEM_DISCRETE ? "discrete" : "unknown";
}
int pcpSemOf(const char *name) {
  if (!strcmp(name, "counter")) return PM_SEM_COUNTER;
  if (!strcmp(name, "instant")) return PM_SEM_INSTANT;
  if (!strcmp(name, "discrete")) return PM_SEM_DISCRETE;
  return -1;
}
void pcpIndomText(pmInDom indom, char *buf, size_t n) {
  if (indom == PM_INDOM_NULL) snprintf(buf, n, "null");
  else snprintf(buf, n, "%u.%u", pmInDom_domain(indom), pmInDom_serial(indom));
}
int pcpIndomParse(const char *s, pmInDom *indom) {
  if (!strcmp(s, "null")) {
    *indom = PM_INDOM_NULL;
    return 0;
  }
  char *end;
  unsigned long d = strtoul(s, &end, 10);
  if (end == s || *end != '.' || d > 510) return -1;
  const char *q = end + 1;
  unsigned long serial = strtoul(q, &end, 10);
  if (end == q || *end || serial > 4194303) return -1;
  *indom = pmInDom_build((unsigned)d, (unsigned)serial);
  return 0;
}

void pcpSay(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, n, fmt, ap);
  va_end(ap);
}

/* A name the language takes as an attribute or relation name: letters,
** digits, '_', not starting with a digit. */
static int isName(const char *s) {
  if (!*s || isdigit((unsigned char)*s)) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* ================================================================ reading the mapping */

void pcpConfFree(PcpConf *c) {
  free(c->metric);
  free(c->indom);
  for (int i = 0; i < c->nfiles; i++) free(c->files[i]);
  free(c->files);
  memset(c, 0, sizeof *c);
}

int pcpConfRead(PcpConf *c, const char *file, char *err, size_t nerr) {
  FILE *f = fopen(file, "r");
  if (!f) {
    pcpSay(err, nerr, "%s: %s", file, strerror(errno));
    return -1;
  }
  c->files = realloc(c->files, sizeof(char *) * (size_t)(c->nfiles + 1));
  if (!c->files) abort();
  const char *fname = c->files[c->nfiles++] = strdup(file);
  char line[1024];
  int ln = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    ln++;
    const char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (strncmp(s, "-- pcp:", 7)) continue;
    char w[6][PCP_NAME_MAX + 8];
    int n = sscanf(s + 7, "%128s %128s %128s %128s %128s %128s", w[0], w[1], w[2], w[3], w[4], w[5]);
    if (n >= 1 && !strcmp(w[0], "entity")) {
      PcpIndomConf ic = {0};
      if (n != 3 || !isName(w[1]) || pcpIndomParse(w[2], &ic.indom) || ic.indom == PM_INDOM_NULL) {
        pcpSay(err, nerr, "%s:%d: a pcp entity line is '-- pcp: entity RELATION DOMAIN.SERIAL'", file, ln);
        rc = -1;
        break;
      }
      snprintf(ic.rel, sizeof ic.rel, "%.*s", PCP_NAME_MAX - 1, w[1]);
      ic.file = fname;
      ic.line = ln;
      for (int i = 0; i < c->nindom; i++)
        if (c->indom[i].indom == ic.indom || !strcasecmp(c->indom[i].rel, ic.rel)) {
          pcpSay(err, nerr, "%s:%d: instance domain %s or relation %s already mapped at %s:%d", file, ln, w[2], w[1],
                   c->indom[i].file, c->indom[i].line);
          rc = -1;
        }
      if (rc) break;
      c->indom = realloc(c->indom, sizeof *c->indom * (size_t)(c->nindom + 1));
      if (!c->indom) abort();
      c->indom[c->nindom++] = ic;
    } else if (n >= 1 && !strcmp(w[0], "metric")) {
      PcpMetricConf mc = {0};
      char *dot = n == 6 ? strchr(w[1], '.') : NULL;
      if (dot) *dot = 0;
      if (n != 6 || !dot || !isName(w[1]) || !isName(dot + 1) || pcpIndomParse(w[3], &mc.indom) ||
          (mc.type = pcpTypeOf(w[4])) < 0 || (mc.sem = pcpSemOf(w[5])) < 0) {
        pcpSay(err, nerr,
                 "%s:%d: a pcp metric line is '-- pcp: metric RELATION.ATTRIBUTE METRIC DOMAIN.SERIAL|null TYPE "
                 "counter|instant|discrete' (TYPE: i32, u32, i64, u64, float, double, string)",
                 file, ln);
        rc = -1;
        break;
      }
      snprintf(mc.rel, sizeof mc.rel, "%.*s", PCP_NAME_MAX - 1, w[1]);
      snprintf(mc.attr, sizeof mc.attr, "%.*s", PCP_NAME_MAX - 1, dot + 1);
      snprintf(mc.metric, sizeof mc.metric, "%.*s", PCP_NAME_MAX - 1, w[2]);
      mc.file = fname;
      mc.line = ln;
      for (int i = 0; i < c->nmetric; i++) {
        const PcpMetricConf *o = &c->metric[i];
        if (!strcasecmp(o->rel, mc.rel) && !strcasecmp(o->attr, mc.attr)) {
          pcpSay(err, nerr, "%s:%d: %s.%s is already mapped at %s:%d", file, ln, mc.rel, mc.attr, o->file, o->line);
          rc = -1;
        } else if (!strcasecmp(o->rel, mc.rel) && o->indom != mc.indom) {
          pcpSay(err, nerr, "%s:%d: the metrics of %s must share one instance domain (%s:%d has another)", file, ln,
                   mc.rel, o->file, o->line);
          rc = -1;
        }
      }
      if (rc) break;
      c->metric = realloc(c->metric, sizeof *c->metric * (size_t)(c->nmetric + 1));
      if (!c->metric) abort();
      c->metric[c->nmetric++] = mc;
    } else {
      pcpSay(err, nerr, "%s:%d: unknown pcp line (entity or metric expected)", file, ln);
      rc = -1;
    }
  }
  fclose(f);
  return rc;
}

/* ================================================================ describe */

/* The metrics describe was asked about, with their descriptors. */
typedef struct DMetric {
  char *name;
  pmDesc desc;
  char attr[PCP_NAME_MAX]; /* attribute name chosen */
  int group;               /* index in the groups */
} DMetric;

typedef struct DGroup {
  pmInDom indom;
  char entity[PCP_NAME_MAX]; /* entity relation (Host for PM_INDOM_NULL) */
  char rel[PCP_NAME_MAX + 8]; /* the sampled relation (the entity and "Sample") */
  int counters;              /* it holds a counter: a delta relation too */
} DGroup;

typedef struct Describe {
  DMetric *m;
  int n, cap;
  const char *err; /* first error of the traversal */
  char errBuf[512];
} Describe;

static Describe *travState; /* pmTraversePMNS has no closure argument */

static void addLeaf(const char *name) {
  Describe *d = travState;
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->m[i].name, name)) return; /* named twice */
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 16;
    d->m = realloc(d->m, sizeof *d->m * (size_t)d->cap);
    if (!d->m) abort();
  }
  memset(&d->m[d->n], 0, sizeof d->m[d->n]);
  d->m[d->n++].name = strdup(name);
}

/* The language's keywords (grammar/tq.l), which cannot be attribute names. */
static int isKeyword(const char *s) {
  static const char *const kw[] = {
      "clock",   "entity",    "event",     "interval",  "int",      "integer",  "float",     "double",   "string",
      "enum",    "performer", "initiator", "target",    "traced",   "sampled",  "disable",   "on",       "counter",
      "key",     "delta",     "range",     "of",        "is",       "retrieve", "into",      "valid",    "at",
      "from",    "to",        "where",     "when",      "and",      "or",       "not",       "precede",  "overlap",
      "equal",   "extend",    "begin",     "end",       "now",      "beginning", "forever",  "by",       "for",
      "each",    "instant",   "ever",      "all",       "display",  "as",       "time",      "animation", "animationtrace",
      "timeline", "fade",     "point",     "line",      "circle",   "rectangle", "oval",     "polygon",  "text",
      "inside",  "pointer",   "flash",     "label",     "intensity", "colour",  "color",     "rotation", "scale",
      "horizontal", "vertical", "ascending", "asc",     "descending", "desc",   "hold",      "count",    "countu",
      "sum",     "sumu",      "avg",       "avgu",      "min",      "max",      "any",       "first",    "last"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (!strcasecmp(kw[i], s)) return 1;
  return 0;
}

/* CamelCase of the dot-separated components of name from component
** `from` on ("psinfo.utime" -> "PsinfoUtime"), into out. */
static void camel(const char *name, int from, char *out, size_t n) {
  size_t k = 0;
  int comp = 0, up = 1;
  for (const char *s = name; *s && k + 1 < n; s++) {
    if (*s == '.') {
      comp++;
      up = 1;
      continue;
    }
    if (comp < from) continue;
    if (!isalnum((unsigned char)*s)) {
      up = 1;
      continue;
    }
    out[k++] = up ? (char)toupper((unsigned char)*s) : *s;
    up = 0;
  }
  out[k] = 0;
  if (k && isdigit((unsigned char)out[0]) && k + 2 < n) {
    memmove(out + 1, out, k + 1);
    out[0] = 'M';
  }
}

static int ncomp(const char *s) {
  int n = 1;
  for (; *s; s++) n += *s == '.';
  return n;
}

static void helpText(pmID pmid, char *buf, size_t n) {
  char *text = NULL;
  buf[0] = 0;
  if (pmLookupText(pmid, PM_TEXT_ONELINE, &text) >= 0 && text) {
    size_t k = 0;
    for (const char *s = text; *s && k + 1 < n; s++) buf[k++] = *s == '\n' ? ' ' : *s;
    buf[k] = 0;
    free(text);
  }
}

int snsPcpDescribe(const char *host, int nmetrics, const char *const *metrics, TqBuf *out, TqBuf *err) {
  char why[512];
  if (tqPcpLoad(why, sizeof why)) {
    tqBufPuts(err, why);
    return -1;
  }
  int ctx = pmNewContext(PM_CONTEXT_HOST, host);
  if (ctx < 0) {
    tqBufPrintf(err, "cannot reach pmcd on %s: %s", host, pmErrStr(ctx));
    return -1;
  }
  Describe d = {0};
  travState = &d;
  int rc = 0;
  for (int i = 0; i < nmetrics && !rc; i++) {
    int before = d.n;
    int sts = pmTraversePMNS(metrics[i], addLeaf);
    if (sts < 0 || d.n == before) {
      tqBufPrintf(err, "%s: unknown metric %s (%s)", host, metrics[i], sts < 0 ? pmErrStr(sts) : "no metric below it");
      rc = 1;
    }
  }
  for (int i = 0; i < d.n && !rc; i++) {
    pmID pmid;
    const char *nm = d.m[i].name;
    int sts = pmLookupName(1, &nm, &pmid);
    if (sts >= 0) sts = pmLookupDesc(pmid, &d.m[i].desc);
    if (sts < 0) {
      tqBufPrintf(err, "%s: metric %s: %s", host, nm, pmErrStr(sts));
      rc = 1;
    } else if (pcpTypeOf(pcpTypeName(d.m[i].desc.type)) < 0) {
      tqBufPrintf(err, "%s: metric %s has type %s, which no tqmon attribute holds", host, nm,
                  pmTypeStr(d.m[i].desc.type));
      rc = 1;
    }
  }
  /* groups: one per instance domain, in the order the metrics come */
  DGroup *grp = calloc((size_t)(d.n ? d.n : 1), sizeof *grp);
  int ng = 0;
  for (int i = 0; i < d.n && !rc; i++) {
    int g = 0;
    while (g < ng && grp[g].indom != d.m[i].desc.indom) g++;
    if (g == ng) grp[ng++].indom = d.m[i].desc.indom;
    d.m[i].group = g;
    if (d.m[i].desc.sem == PM_SEM_COUNTER) grp[g].counters = 1;
  }
  /* names, which depend on each metric alone: the entity relation is the
  ** first component of its metrics' names (proc -> Proc; another instance
  ** domain under the same first component gets its serial number added);
  ** an attribute is the rest of the metric's name (proc.psinfo.utime ->
  ** PsinfoUtime), or all of it in HostSample (hinv.ncpu -> HinvNcpu) */
  for (int g = 0; g < ng && !rc; g++) {
    int from = 1;
    if (grp[g].indom == PM_INDOM_NULL) {
      snprintf(grp[g].entity, sizeof grp[g].entity, "Host");
      snprintf(grp[g].rel, sizeof grp[g].rel, "HostSample");
      from = 0;
    } else {
      const char *nm = NULL;
      for (int i = 0; i < d.n && !nm; i++)
        if (d.m[i].group == g) nm = d.m[i].name;
      char pre[PCP_NAME_MAX];
      snprintf(pre, sizeof pre, "%s", nm);
      pre[strcspn(pre, ".")] = 0;
      camel(pre, 0, grp[g].entity, PCP_NAME_MAX - 24); /* room for "Inst" and a serial */
      if (!strcasecmp(grp[g].entity, "Host") || isKeyword(grp[g].entity)) strcat(grp[g].entity, "Inst");
      for (int h = 0; h < g; h++)
        if (!strcasecmp(grp[h].entity, grp[g].entity)) {
          char num[16];
          snprintf(num, sizeof num, "%u", pmInDom_serial(grp[g].indom));
          strcat(grp[g].entity, num);
        }
      snprintf(grp[g].rel, sizeof grp[g].rel, "%sSample", grp[g].entity);
    }
    for (int i = 0; i < d.n; i++) {
      if (d.m[i].group != g) continue;
      int f = from < ncomp(d.m[i].name) ? from : ncomp(d.m[i].name) - 1;
      camel(d.m[i].name, f, d.m[i].attr, sizeof d.m[i].attr);
      for (;;) {
        int clash = !d.m[i].attr[0] || isKeyword(d.m[i].attr) || !strcasecmp(d.m[i].attr, "Host") ||
                    !strcasecmp(d.m[i].attr, grp[g].entity);
        for (int k = 0; k < i && !clash; k++)
          if (d.m[k].group == g && !strcasecmp(d.m[k].attr, d.m[i].attr)) clash = 1;
        if (!clash) break;
        strcat(d.m[i].attr, "_");
      }
    }
  }
  /* write */
  if (!rc) {
    tqBufPrintf(out, "-- Written by `tqmon pcp describe` from pmcd on %s.  Give it before your queries:\n", host);
    tqBufPrintf(out, "--     tqmon run THIS.tq myqueries.tq --pcp HOST[,HOST...]   (sensors/pcp.md)\n");
    tqBufPrintf(out, "-- Entities are named HOST:INSTANCE (the instance name up to its first space).\n");
    tqBufPrintf(out, "-- The '-- pcp:' lines map attributes to metrics: edit them with the declarations.\n\n");
    tqBufPrintf(out, "-- A host: pmcd's host name; Spec is how it was reached (--pcp).\n");
    tqBufPrintf(out, "entity Host (Spec: string);\n");
    for (int g = 0; g < ng; g++) {
      char ind[32];
      pcpIndomText(grp[g].indom, ind, sizeof ind);
      tqBufPrintf(out, "\n");
      if (grp[g].indom != PM_INDOM_NULL) {
        tqBufPrintf(out, "-- instance domain %s: one entity per instance and host\n", ind);
        tqBufPrintf(out, "-- pcp: entity %s %s\n", grp[g].entity, ind);
        tqBufPrintf(out, "entity %s (Host: Host, Inst: int, Name: string);\n", grp[g].entity);
      }
      for (int i = 0; i < d.n; i++) {
        if (d.m[i].group != g) continue;
        tqBufPrintf(out, "-- pcp: metric %s.%s %s %s %s %s\n", grp[g].rel, d.m[i].attr, d.m[i].name, ind,
                pcpTypeName(d.m[i].desc.type), pcpSemName(d.m[i].desc.sem));
      }
      tqBufPrintf(out, "interval %s (%s: %s performer,%s\n", grp[g].rel, grp[g].entity, grp[g].entity,
              grp[g].indom != PM_INDOM_NULL ? " Host: Host," : "");
      int last = -1;
      for (int i = 0; i < d.n; i++)
        if (d.m[i].group == g) last = i;
      for (int i = 0; i < d.n; i++) {
        if (d.m[i].group != g) continue;
        const pmDesc *ds = &d.m[i].desc;
        const char *ty = ds->type == PM_TYPE_STRING ? "string"
                         : ds->type == PM_TYPE_FLOAT || ds->type == PM_TYPE_DOUBLE ? "float"
                                                                                   : "int";
        char help[160];
        helpText(ds->pmid, help, sizeof help);
        const char *units = pmUnitsStr(&ds->units);
        tqBufPrintf(out, "    %s: %s%s -- %s: %s, %s%s%s%s%s\n", d.m[i].attr, ty, i == last ? "" : ",", d.m[i].name,
                pcpSemName(ds->sem), pmTypeStr(ds->type), units && *units ? ", " : "", units ? units : "",
                help[0] ? "; " : "", help);
      }
      tqBufPrintf(out, ") sampled on performer");
      if (grp[g].counters) {
        char base[sizeof grp[g].rel];
        snprintf(base, sizeof base, "%s", grp[g].rel);
        size_t bl = strlen(base);
        if (bl > 6 && !strcmp(base + bl - 6, "Sample")) base[bl - 6] = 0;
        tqBufPrintf(out, " delta %sRate", base);
      }
      tqBufPrintf(out, ";\n");
      if (grp[g].counters)
        tqBufPrintf(out, "-- (the delta relation: each counter's increase over the tick; the other\n"
                   "-- attributes as sampled at the tick)\n");
    }
  }
  free(grp);
  for (int i = 0; i < d.n; i++) free(d.m[i].name);
  free(d.m);
  travState = NULL;
  pmDestroyContext(ctx);
  return rc ? -1 : 0;
}
