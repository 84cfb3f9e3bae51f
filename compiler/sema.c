/*
** sema.c - the compiler driver and the semantic pass over declarations.
**
** Statements of all files are taken in passes so that declarations may
** come in any order: (1) clock and entity types, (2) event and interval
** relations, (3) range and retrieve statements in program order, (4) the
** display and time statements (dspec.c).
** Every check reports file:line:col; compilation continues after an error
** to report as many as possible, but no program is returned then.
*/
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compilerInt.h"
#include "grammar.h"

static const char *locStr(CpSema *s, TqLoc l) {
  if (!l.src) return "?";
  return tqArenaPrintf(s->a, "%s:%d:%d", l.src->name, l.line, l.col);
}

/* Is `name` already used by an entity type, relation or derived relation? */
static int nameTaken(CpSema *s, const char *name, TqLoc loc) {
  AlgCatalog *c = &s->prog->cat;
  TqLoc prev = {0};
  if (!strcasecmp(name, "Clock")) {
    tqError(s->diag, loc, "'%s' is predefined (the Clock event relation)", name);
    return 1;
  }
  AlgRel *r = algCatRel(c, name);
  AlgDerived *d = algCatDerived(c, name);
  if (r) prev = r->loc;
  else if (d) prev = d->loc;
  else return 0;
  tqError(s->diag, loc, "duplicate name '%s' (first declared at %s)", name, locStr(s, prev));
  return 1;
}

static int resolveType(CpSema *s, AstNode *t, AlgType *out) {
  memset(out, 0, sizeof *out);
  switch (t->op) {
    case AT_INT: out->kind = TY_INT; return 0;
    case AT_FLOAT: out->kind = TY_FLOAT; return 0;
    case AT_STRING: out->kind = TY_STRING; return 0;
    case AT_ENUM: {
      AlgEnum *en = tqArenaAlloc(s->a, sizeof *en);
      en->n = astLen(t->k[0]);
      en->names = tqArenaAlloc(s->a, sizeof(char *) * (size_t)en->n);
      /* duplicates (names match without regard to case) through a hash of
      ** the lowercased names: linear in the number of values */
      TqMap seen = {0};
      int *same = tqMalloc(sizeof(int) * (size_t)(en->n ? en->n : 1)); /* earlier value with the same hash, -1 */
      int i = 0;
      for (AstNode *x = t->k[0]; x; x = x->next, i++) {
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (const char *c = x->s; *c; c++) h = (h ^ (unsigned char)tolower((unsigned char)*c)) * 0x100000001b3ULL;
        h |= 2;
        int head = (int)(intptr_t)tqMapGet(&seen, h) - 1;
        for (int j = head; j >= 0; j = same[j])
          if (!strcasecmp(en->names[j], x->s)) {
            tqError(s->diag, x->loc, "duplicate enumeration value '%s'", x->s);
            break;
          }
        same[i] = head;
        tqMapPut(&seen, h, (void *)(intptr_t)(i + 1));
        en->names[i] = x->s;
      }
      free(same);
      tqMapFree(&seen);
      out->kind = TY_ENUM;
      out->en = en;
      return 0;
    }
    case AT_NAMED: {
      AlgEntity *e = algCatEntity(&s->prog->cat, t->s);
      if (!e) {
        tqError(s->diag, t->loc, "unknown type '%s' (expected int, float, string, enum(...) or an entity type)", t->s);
        return -1;
      }
      out->kind = TY_ENTITY;
      out->ent = e;
      return 0;
    }
  }
  return -1;
}

/* Fills r->attr from the AST attribute list (after `first` leading attributes). */
static int declAttrs(CpSema *s, AlgRel *r, int first, AstNode *attrs) {
  int n = first + astLen(attrs), i = first, bad = 0;
  AlgAttr *a = tqArenaAlloc(s->a, sizeof(AlgAttr) * (size_t)(n ? n : 1));
  if (first) memcpy(a, r->attr, sizeof(AlgAttr) * (size_t)first);
  r->attr = a;
  for (AstNode *x = attrs; x; x = x->next, i++) {
    for (int j = 0; j < i; j++)
      if (!strcasecmp(a[j].name, x->s)) {
        tqError(s->diag, x->loc, "duplicate attribute '%s' in %s", x->s, r->name);
        bad = 1;
      }
    if (i == TQ_MAX_ATTRS) {
      tqError(s->diag, x->loc, "%s has more than %d attributes", r->name, TQ_MAX_ATTRS);
      bad = 1;
    }
    a[i].name = x->s;
    if (resolveType(s, x->k[0], &a[i].type)) bad = 1;
    a[i].role = x->op;
    if (x->op && a[i].type.kind != TY_ENTITY && !bad) {
      tqError(s->diag, x->loc, "role %s needs an entity-typed attribute, '%s' is not one", algRoleName(x->op), x->s);
      bad = 1;
    }
  }
  r->nattr = n;
  return bad ? -1 : 0;
}

static AlgRel *relNew(CpSema *s, const char *name, TqLoc loc) {
  AlgRel *r = tqArenaAlloc(s->a, sizeof *r);
  r->name = name;
  r->loc = loc;
  r->flagAttr = r->performerAttr = -1;
  r->counterBits = 1;
  tqVecPush(&s->prog->cat.rels, r);
  r->id = s->prog->cat.rels.n;
  return r;
}

static void declEntity(CpSema *s, AstNode *st) {
  /* an entity type declared again in another file: the same declaration
  ** (checked in pass 2), so that configurations sharing it (host.tq and
  ** kernel.tq both declare Processor) can be given together */
  AlgEntity *old = algCatEntity(&s->prog->cat, st->s);
  if (old && old->loc.src != st->loc2.src && !algCatDerived(&s->prog->cat, st->s)) return;
  if (nameTaken(s, st->s, st->loc2)) return;
  AlgEntity *e = tqArenaAlloc(s->a, sizeof *e);
  e->name = st->s;
  e->loc = st->loc2;
  tqVecPush(&s->prog->cat.entities, e);
  AlgRel *r = relNew(s, st->s, st->loc2);
  r->entity = e;
  r->mode = ALG_MODE_ALWAYS;
  e->rel = r;
  /* first attribute: the entity itself, named like the type */
  r->attr = tqArenaAlloc(s->a, sizeof(AlgAttr));
  r->attr[0].name = st->s;
  r->attr[0].type.kind = TY_ENTITY;
  r->attr[0].type.ent = e;
  r->nattr = 1;
  /* attribute types may name entities declared later: resolved in pass 2 */
}

/* An entity type declared again in another file must be declared the same:
** the same attributes (names and types) in the same order. */
static void sameEntity(CpSema *s, AlgEntity *e, AstNode *st) {
  const AlgRel *r = e->rel;
  int n = astLen(st->k[0]), same = n == r->nattr - 1, i = 1;
  for (AstNode *x = st->k[0]; same && x; x = x->next, i++) {
    AlgType t;
    if (x->op || strcasecmp(x->s, r->attr[i].name) || resolveType(s, x->k[0], &t)) {
      same = 0;
    } else if (t.kind == TY_ENUM && r->attr[i].type.kind == TY_ENUM) {
      same = t.en->n == r->attr[i].type.en->n;
      for (int k = 0; same && k < t.en->n; k++) same = !strcasecmp(t.en->names[k], r->attr[i].type.en->names[k]);
    } else {
      same = algTypeEq(t, r->attr[i].type);
    }
  }
  if (!same)
    tqError(s->diag, st->loc2, "entity type '%s' declared again otherwise (first declared at %s): a declaration given again must be the same",
            st->s, locStr(s, e->loc));
}

static void declEntityAttrs(CpSema *s, AstNode *st) {
  AlgEntity *e = algCatEntity(&s->prog->cat, st->s);
  if (e && e->loc.src != st->loc2.src) {
    sameEntity(s, e, st);
    return;
  }
  if (!e || e->loc.line != st->loc2.line || e->loc.col != st->loc2.col || e->loc.src != st->loc2.src) return; /* duplicate */
  AlgRel *r = e->rel;
  for (AstNode *x = st->k[0]; x; x = x->next) {
    if (x->op) {
      tqError(s->diag, x->loc, "an entity's attributes take no role");
      return;
    }
  }
  declAttrs(s, r, 1, st->k[0]);
  r->nkey = 1;
  r->key = tqArenaAlloc(s->a, sizeof(int));
  r->key[0] = 0;
}

static int findRole(AlgRel *r, int role) {
  for (int i = 0; i < r->nattr; i++)
    if (r->attr[i].role == role) return i;
  return -1;
}

/* `delta NAME` on a sampled relation R declares the event relation NAME:
** at each base Clock tick, for each entity its sensor is enabled on, the
** difference between the samples of R at this tick and at the previous one
** (numeric attributes subtracted, the others copied; a tuple is matched
** with the previous one by its key, or by its non-numeric attributes). */
static void declDelta(CpSema *s, AlgRel *r, AstNode *o) {
  if (r->delta) {
    tqError(s->diag, o->loc, "delta given twice");
    return;
  }
  if (r->mode != ALG_MODE_SAMPLED) {
    tqError(s->diag, o->loc, "delta applies only to sampled relations (%s is %s)", r->name,
            r->mode ? algModeName(r->mode) : "not sampled");
    return;
  }
  int numeric = 0;
  for (int i = 0; i < r->nattr; i++)
    if (r->attr[i].type.kind == TY_INT || r->attr[i].type.kind == TY_FLOAT) numeric = 1;
  if (!numeric) {
    tqError(s->diag, o->loc, "delta of %s needs a numeric (int or float) attribute to subtract", r->name);
    return;
  }
  if (nameTaken(s, o->s, o->loc2)) return;
  AlgRel *d = relNew(s, o->s, o->loc2);
  d->isEvent = 1;
  d->nattr = r->nattr;
  d->attr = r->attr;
  d->mode = ALG_MODE_TRACED;
  d->flagRole = r->flagRole;
  d->flagAttr = r->flagAttr;
  d->performerAttr = r->performerAttr;
  d->counterBits = r->counterBits;
  d->deltaOf = r;
  r->delta = d;
}

/* A second collection mode o of relation r (the first was first): another
** sensor of r's tuples, an AlgRel that shares r's attributes, named
** "r_sampled" (a sampled sensor: r must be an interval relation) or
** "r_traced" (another traced sensor, in the same role or another, such as
** a generated sensor and a kernel one).  What is supported: r traced (not
** disable traced), and one other sensor, sampled or traced.  Returns it,
** or NULL after an error. */
static AlgRel *altSensor(CpSema *s, AlgRel *r, AstNode *first, AstNode *o) {
  if (r->altSensor) {
    tqError(s->diag, o->loc, "%s has two sensors already: a relation may have its traced sensor and one other", r->name);
    return NULL;
  }
  if (first->op2 != ALG_MODE_TRACED || (o->op2 != ALG_MODE_SAMPLED && o->op2 != ALG_MODE_TRACED) ||
      (o->op2 == ALG_MODE_SAMPLED && r->isEvent)) {
    tqError(s->diag, o->loc,
            "a second sensor of %s must be traced or sampled, its first traced, and %s an interval relation when it is sampled "
            "(the sampled one then answers the queries that read it at clock ticks)",
            r->name, r->name);
    return NULL;
  }
  const char *name = tqArenaPrintf(s->a, "%s_%s", r->name, o->op2 == ALG_MODE_SAMPLED ? "sampled" : "traced");
  if (nameTaken(s, name, o->loc)) return NULL;
  AlgRel *m = relNew(s, name, o->loc);
  m->isEvent = r->isEvent;
  m->nattr = r->nattr;
  m->attr = r->attr;
  m->performerAttr = r->performerAttr;
  m->sensorOf = r;
  r->altSensor = m;
  return m;
}

/* `cost NAME from "FILE"`: the figure NAME of a costs file, ns a packet
** (make bench writes build/bench/costs.txt from what it measured: one
** "NAME NS" a line, '#' starts a comment).  FILE is relative to the
** directory of the program file that names it.  Returns the cost, at
** least 1 ns, or -1 after an error. */
static int64_t measuredCost(CpSema *s, const AstNode *o) {
  const char *file = o->s2, *src = o->loc.src ? o->loc.src->name : NULL;
  const char *slash = src ? strrchr(src, '/') : NULL;
  const char *path = file[0] == '/' || !slash ? file : tqArenaPrintf(s->a, "%.*s/%s", (int)(slash - src), src, file);
  FILE *f = fopen(path, "r");
  if (!f) {
    tqError(s->diag, o->loc2, "cost %s from \"%s\": cannot read %s: %s (make bench writes build/bench/costs.txt)", o->s, file, path,
            strerror(errno));
    return -1;
  }
  char line[256], name[128];
  double ns = -1;
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || sscanf(line, "%127s %lf", name, &ns) != 2) continue;
    found = !strcmp(name, o->s);
  }
  fclose(f);
  if (!found) {
    tqError(s->diag, o->loc2, "cost %s from \"%s\": %s has no figure named %s (lines \"NAME NS\")", o->s, file, path, o->s);
    return -1;
  }
  if (!(ns > 0 && ns < 1e15)) {
    tqError(s->diag, o->loc2, "cost %s from \"%s\": its figure %g is not a positive number of ns", o->s, file, ns);
    return -1;
  }
  return ns < 1 ? 1 : (int64_t)(ns + 0.5);
}

static void declRel(CpSema *s, AstNode *st) {
  if (nameTaken(s, st->s, st->loc2)) return;
  AlgRel *r = relNew(s, st->s, st->loc2);
  r->isEvent = st->op == REL_EVENT;
  r->attr = NULL;
  if (declAttrs(s, r, 0, st->k[0])) return;
  for (int role = ROLE_PERFORMER; role <= ROLE_TARGET; role++) {
    int first = -1;
    for (int i = 0; i < r->nattr; i++) {
      if (r->attr[i].role != role) continue;
      if (first >= 0) {
        AstNode *x = st->k[0];
        for (int j = 0; j < i; j++) x = x->next;
        tqError(s->diag, x->loc, "two attributes of %s have role %s ('%s' and '%s')", r->name, algRoleName(role),
                r->attr[first].name, r->attr[i].name);
      } else {
        first = i;
      }
    }
  }
  r->performerAttr = findRole(r, ROLE_PERFORMER);
  AstNode *mode = NULL;
  AlgRel *cur = NULL; /* the sensor the cost and rate options price */
  int rejected = 0;   /* the last mode was refused (the options after it are its) */
  int counterSet = 0;
  for (AstNode *o = st->k[1]; o; o = o->next) {
    switch (o->op) {
      case OPT_MODE: {
        AlgRel *m = r;
        if (mode) {
          m = altSensor(s, r, mode, o);
          cur = m; /* NULL: its cost and rate are not checked again */
          rejected = !m;
          if (!m) break;
        }
        if (!mode) mode = o;
        cur = m;
        m->mode = o->op2;
        m->flagRole = (int)o->i;
        if (o->i == ROLE_NONE) {
          tqError(s->diag, o->loc, "expected performer, initiator or target after 'on'");
          break;
        }
        if (o->op2 == ALG_MODE_SAMPLED && o->i == ROLE_INITIATOR) {
          tqError(s->diag, o->loc,
                  "sampled on initiator is not supported: the initiator of a sample is always the monitor");
          break;
        }
        m->flagAttr = findRole(r, (int)o->i);
        if (m->flagAttr < 0)
          tqError(s->diag, o->loc, "%s is %s on %s but has no attribute with role %s", r->name,
                  algModeName(m->mode), algRoleName((int)o->i), algRoleName((int)o->i));
        else if (o->op2 == ALG_MODE_SAMPLED && o->i == ROLE_TARGET && r->performerAttr < 0)
          tqError(s->diag, o->loc, "%s is sampled on target: it needs an attribute with role performer (who is asked for the sample)",
                  r->name);
        break;
      }
      case OPT_COST:
        if (!cur) {
          if (!rejected) tqError(s->diag, o->loc, "cost follows the collection mode whose packets it prices");
          break;
        }
        if (cur->cost) tqError(s->diag, o->loc, "cost given twice for one sensor of %s", r->name);
        if (o->s) { /* measured: a costs file's figure */
          cur->cost = measuredCost(s, o);
          break;
        }
        if (o->i <= 0) tqError(s->diag, o->loc2, "a packet's cost must be positive");
        cur->cost = o->i > 0 ? o->i : -1; /* -1: given, and refused */
        break;
      case OPT_RATE:
        if (!cur || cur->mode != ALG_MODE_TRACED) {
          if (!rejected)
            tqError(s->diag, o->loc, "rate follows a 'traced on' mode: the packets per second a traced sensor writes per flag entity");
          break;
        }
        if (cur->rate) tqError(s->diag, o->loc, "rate given twice for one sensor of %s", r->name);
        if (o->i <= 0) tqError(s->diag, o->loc2, "a rate must be positive");
        cur->rate = o->i > 0 ? o->i : -1;
        break;
      case OPT_ONCE:
        if (!cur || cur->mode != ALG_MODE_DISABLE) {
          if (!rejected)
            tqError(s->diag, o->loc, "once follows a 'disable traced on' mode: that sensor fires at most once per flag entity");
          break;
        }
        if (cur->once) tqError(s->diag, o->loc, "once given twice");
        cur->once = 1;
        break;
      case OPT_COUNTER:
        if (counterSet++) tqError(s->diag, o->loc, "counter given twice");
        if (o->i < 1 || o->i > 32) tqError(s->diag, o->loc, "counter width must be 1 to 32 bits, not %lld", (long long)o->i);
        r->counterBits = (int)o->i;
        break;
      case OPT_KEY: {
        if (r->key) {
          tqError(s->diag, o->loc, "key given twice");
          break;
        }
        if (r->isEvent) {
          tqError(s->diag, o->loc, "key applies only to interval relations (%s is an event relation)", r->name);
          break;
        }
        r->nkey = astLen(o->k[0]);
        r->key = tqArenaAlloc(s->a, sizeof(int) * (size_t)r->nkey);
        int i = 0;
        for (AstNode *x = o->k[0]; x; x = x->next, i++) {
          r->key[i] = algRelAttr(r, x->s);
          if (r->key[i] < 0) tqError(s->diag, x->loc, "key attribute '%s' is not an attribute of %s", x->s, r->name);
        }
        break;
      }
    }
  }
  if (!mode)
    tqError(s->diag, st->loc,
            "%s needs a collection mode: 'traced on', 'sampled on' or 'disable traced on' performer|initiator|target",
            r->name);
  for (AstNode *o = st->k[1]; o; o = o->next)
    if (o->op == OPT_DELTA) declDelta(s, r, o);
  if (r->altSensor) {
    /* the optimizer compares the sensors' costs per second (SENSOR) */
    r->altSensor->nkey = r->nkey;
    r->altSensor->key = r->key;
    r->altSensor->counterBits = r->counterBits;
    r->tick = r->altSensor->tick = s->prog->cat.tick;
    for (AlgRel *m = r; m; m = m->altSensor) {
      if (!m->cost)
        tqError(s->diag, m == r ? mode->loc : m->loc, "%s has several sensors: each needs its cost per packet ('cost 2us' after its mode)",
                r->name);
      else if (m->mode == ALG_MODE_TRACED && !m->rate)
        tqError(s->diag, m == r ? mode->loc : m->loc,
                "%s has several sensors: its traced one needs its rate ('rate N', packets per second per flag entity)", r->name);
    }
  }
}

/* monitor programs "db*", "httpd": the live sources make entities only of
** the processes whose command matches one of the patterns (shell globs). */
static void declPrograms(CpSema *s, AstNode *st) {
  for (AstNode *x = st->k[0]; x; x = x->next) {
    if (!*x->s) {
      tqError(s->diag, x->loc, "an empty program pattern matches no command (use \"*\" for every program)");
      continue;
    }
    if (strchr(x->s, '/')) {
      tqError(s->diag, x->loc, "a program pattern matches a command name, which has no '/': '%s'", x->s);
      continue;
    }
    if (s->prog->programs.n == 64) {
      tqError(s->diag, x->loc, "more than 64 program patterns");
      return;
    }
    tqVecPush(&s->prog->programs, (void *)x->s);
  }
}

/* ================================================================ driver */

CpRange *cpRangeLookup(CpSema *s, const char *var) {
  for (int i = s->ranges.n - 1; i >= 0; i--) {
    CpRange *r = s->ranges.v[i];
    if (!strcasecmp(r->var, var)) return r;
  }
  return NULL;
}

int cpSensorCount(const CpProgram *p) {
  int n = 0;
  for (int i = 0; i < p->cat.rels.n; i++) {
    AlgRel *r = p->cat.rels.v[i];
    if (!r->entity) n++;
  }
  return n;
}

/* ================================================================ did you mean */

/* Edit distance of a and b without regard to case (insertions, deletions,
** substitutions, swaps of neighbours), or max + 1 when it is more than max. */
static int editDistance(const char *a, const char *b, int max) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la - lb > max || lb - la > max || la > 64 || lb > 64) return max + 1;
  int d[66][66];
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int c = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
      int v = d[i - 1][j - 1] + c;
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb] > max ? max + 1 : d[la][lb];
}

const char *cpDidYouMean(const char *name, const char *const *cand, int n) {
  int len = (int)strlen(name), max = len < 4 ? 0 : len < 6 ? 1 : 2;
  if (!max) return NULL;
  const char *best = NULL;
  int bestD = max + 1, ties = 0;
  for (int i = 0; i < n; i++) {
    if (!cand[i] || !strcasecmp(cand[i], name)) continue;
    int dd = editDistance(name, cand[i], max);
    if (dd < bestD) bestD = dd, best = cand[i], ties = 0;
    else if (dd == bestD && best && strcasecmp(best, cand[i])) ties++;
  }
  return bestD <= max && !ties ? best : NULL;
}

const char *cpDidYouMeanRel(CpSema *s, const char *name) {
  AlgCatalog *c = &s->prog->cat;
  TqVec v = {0};
  for (int i = 0; i < c->rels.n; i++) tqVecPush(&v, (void *)((AlgRel *)c->rels.v[i])->name);
  for (int i = 0; i < c->derived.n; i++) tqVecPush(&v, (void *)((AlgDerived *)c->derived.v[i])->name);
  tqVecPush(&v, (void *)"Clock");
  const char *m = cpDidYouMean(name, (const char *const *)v.v, v.n);
  tqVecFree(&v);
  return m ? tqArenaPrintf(s->a, " (did you mean '%s'?)", m) : "";
}

CpProgram *cpCompileSources(int n, TqSource **srcs, TqDiag *d) {
  CpProgram *p = tqCalloc(1, sizeof *p);
  p->arena = tqArenaNew();
  p->cat.tick = TQ_SEC;
  CpSema s = {p, d, p->arena, {0}, {0}, {0}};
  int nerr0 = d->nerr;
  AstNode *all = NULL;
  for (int i = 0; i < n; i++) {
    tqVecPush(&p->sources, srcs[i]);
    AstNode *st = grParse(p->arena, srcs[i], d);
    all = astAppend(all, st);
  }
  if (d->nerr == nerr0) {
    AstNode *clockSt = NULL;
    for (AstNode *st = all; st; st = st->next) {
      if (st->kind == AST_CLOCK) {
        if (clockSt) {
          tqError(d, st->loc, "clock given twice (first at %s)", locStr(&s, clockSt->loc));
          continue;
        }
        clockSt = st;
        if (st->i <= 0) tqError(d, st->loc2, "clock tick must be positive");
        p->cat.tick = st->i;
        p->cat.tickSet = 1;
      } else if (st->kind == AST_ENTITY) {
        declEntity(&s, st);
      } else if (st->kind == AST_PROGRAMS) {
        declPrograms(&s, st);
      } else if (st->kind == AST_RETRIEVE && st->s) {
        tqVecPush(&s.laterNames, st);
      }
    }
    for (AstNode *st = all; st; st = st->next)
      if (st->kind == AST_ENTITY) declEntityAttrs(&s, st);
    for (AstNode *st = all; st; st = st->next)
      if (st->kind == AST_REL) declRel(&s, st);
    /* phase boundary: queries are translated only over a sound sensor
    ** configuration (a relation with a bad declaration has no flag) */
    for (AstNode *st = d->nerr > nerr0 ? NULL : all; st; st = st->next) {
      switch (st->kind) {
        case AST_RANGE: cpSemaRange(&s, st); break;
        case AST_RETRIEVE: cpSemaRetrieve(&s, st); break;
        default: break;
      }
    }
    cpSemaDisplays(&s, all); /* after every query: a display may name a later one */
  }
  cpSemaLaterRanges(&s, NULL);
  tqVecFree(&s.ranges);
  tqVecFree(&s.laterNames);
  tqVecFree(&s.failedNames);
  if (d->nerr > nerr0) {
    cpProgramFree(p);
    return NULL;
  }
  return p;
}

CpProgram *cpCompileFiles(int n, const char *const *files, TqDiag *d) {
  TqSource **srcs = tqCalloc((size_t)(n ? n : 1), sizeof(TqSource *));
  int ok = 1;
  for (int i = 0; i < n; i++) {
    srcs[i] = tqSourceRead(files[i], d);
    if (!srcs[i]) ok = 0;
  }
  CpProgram *p = NULL;
  if (ok) {
    p = cpCompileSources(n, srcs, d);
  } else {
    for (int i = 0; i < n; i++) tqSourceFree(srcs[i]);
  }
  free(srcs);
  return p;
}

void cpProgramFree(CpProgram *p) {
  if (!p) return;
  for (int i = 0; i < p->sources.n; i++) tqSourceFree(p->sources.v[i]);
  tqVecFree(&p->sources);
  tqVecFree(&p->queries);
  tqVecFree(&p->displays);
  tqVecFree(&p->programs);
  algCatFree(&p->cat);
  tqArenaDelete(p->arena);
  free(p);
}

/* Marks the relations of which some alpha of t traces on every flag entity
** (its argument an entity source: every entity, for its lifetime).
** Returns how many it marked.
**
** The mark is written into the catalog, but no two compilations share one:
** each CpProgram has its own (cpCompileSources), and a query added to a
** running monitor (tq_query_add, `tqmon daemon`) is its own program, the
** monitor's files then the query's, optimized by itself.  Its marks come
** from the monitor's queries, which run for the whole operation, and its
** own: they hold as long as the query runs, and the marks of one added
** query never reach another or the monitor's program.  A query added after
** another that traces a relation everywhere does not see that one (it may
** sample as well: a cost the combination would save), and a mark only
** chooses between two sensors that give the same answer where the
** relation's data meet SENSOR's condition (docs/enabling.md), so no answer
** depends on which queries run beside it. */
static int markTracedEverywhere(const AlgNode *t) {
  int n = 0;
  for (int i = 0; i < t->nkid; i++) n += markTracedEverywhere(t->kid[i]);
  if (t->kind != ALG_ALPHA || !t->rel->altSensor || t->rel->mode != ALG_MODE_TRACED || t->rel->tracedEverywhere) return n;
  const AlgNode *a = t->kid[0];
  if (a->kind == ALG_PI && a->npi == 1 && a->kid[0]->kind == ALG_SOURCE) a = a->kid[0];
  if (a->kind != ALG_SOURCE || a->var) return n;
  ((AlgRel *)t->rel)->tracedEverywhere = 1;
  return n + 1;
}

/* Does t read another sensor of a relation now marked traced everywhere? */
static int readsMarkedAlt(const AlgNode *t) {
  if (t->kind == ALG_ALPHA && t->rel->sensorOf && t->rel->sensorOf->tracedEverywhere) return 1;
  for (int i = 0; i < t->nkid; i++)
    if (readsMarkedAlt(t->kid[i])) return 1;
  return 0;
}

void cpOptimize(CpProgram *p, TqBuf *trace) {
  /* SENSOR chooses per alpha; the cheapest combination over the queries
  ** reads a relation's traced sensor everywhere once a query traces it on
  ** every flag entity: optimized once, marked, and again if a query read
  ** the sampled sensor of a marked relation */
  TqBuf first = {0};
  for (int i = 0; i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    if (trace) tqBufPrintf(&first, "-- %s\n", q->name ? q->name : "query");
    q->opt = algOptimize(p->arena, q->tree, trace ? &first : NULL);
  }
  int marked = 0, again = 0;
  for (int i = 0; i < p->queries.n; i++) marked += markTracedEverywhere(((CpQuery *)p->queries.v[i])->opt);
  for (int i = 0; marked && i < p->queries.n; i++) again |= readsMarkedAlt(((CpQuery *)p->queries.v[i])->opt);
  if (!again) {
    if (trace && first.s) tqBufPuts(trace, first.s);
    tqBufFree(&first);
    return;
  }
  tqBufFree(&first);
  for (int i = 0; i < p->queries.n; i++) {
    CpQuery *q = p->queries.v[i];
    if (trace) tqBufPrintf(trace, "-- %s\n", q->name ? q->name : "query");
    q->opt = algOptimize(p->arena, q->tree, trace);
  }
}
