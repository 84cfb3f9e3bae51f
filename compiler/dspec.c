/*
** dspec.c - the semantic pass over display specifications (paper section
** 7; docs/language.md section 4) and the queries that collect what a
** display draws.
**
** A display statement names a relation (primitive, entity or derived) and
** how its tuples look.  Checking turns the statement into a CpDisplay with
** attribute indexes, value orders and constants resolved; every mistake is
** reported at file:line:col.  Displays are checked after every query, so a
** display may come before the retrieve that defines its relation.
**
** Invariants after a successful pass: every relationship display (inside,
** pointer, line, flash) refers to entity-typed attributes whose entity
** relation has an icon display; a relation has at most one display; at most
** one `time as` statement.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compilerInt.h"

static const char *const aspectName[] = {"label", "intensity", "colour", "rotation", "scale",
                                         "horizontal", "vertical", "at", "hold"};
static const char *const kindName[] = {"?", "icon", "inside", "pointer", "line", "flash"};
static const char *const anchorName[] = {"", "left", "center", "right", "top", "middle", "bottom"};

static const char *locText(CpSema *s, TqLoc l) {
  if (!l.src) return "?";
  return tqArenaPrintf(s->a, "%s:%d:%d", l.src->name, l.line, l.col);
}

/* "Process, State" */
static const char *attrList(CpSema *s, const CpDisplay *d) {
  TqBuf b = {0};
  for (int i = 0; i < d->nattr; i++) tqBufPrintf(&b, "%s%s", i ? ", " : "", d->attr[i].name);
  const char *r = tqArenaStrdup(s->a, b.s ? b.s : "none");
  tqBufFree(&b);
  return r;
}

/* Attribute `name` of the displayed relation, or -1 after an error at loc. */
static int attrOf(CpSema *s, CpDisplay *d, const char *name, TqLoc loc) {
  for (int i = 0; i < d->nattr; i++)
    if (!strcasecmp(d->attr[i].name, name)) return i;
  tqError(s->diag, loc, "'%s' is not an attribute of %s (its attributes: %s)", name, d->rel, attrList(s, d));
  return -1;
}

static int isNumeric(AlgType t) { return t.kind == TY_INT || t.kind == TY_FLOAT; }

/* The value order of an aspect: names of enum values or entities. */
static int aspectMap(CpSema *s, CpDisplay *d, CpAspect *a, AstNode *ids, const char *what) {
  if (a->attr < 0) {
    tqError(s->diag, ids->loc, "a list of values orders the values of an attribute; %s is a constant here", what);
    return -1;
  }
  AlgType t = d->attr[a->attr].type;
  if (isNumeric(t)) {
    tqError(s->diag, ids->loc, "%s is a number: give its range with 'from N to N' instead of a list of values",
            d->attr[a->attr].name);
    return -1;
  }
  a->nmap = astLen(ids);
  a->map = tqArenaAlloc(s->a, sizeof(int64_t) * (size_t)a->nmap);
  int i = 0, bad = 0;
  for (AstNode *x = ids; x; x = x->next, i++) {
    if (t.kind == TY_ENUM) {
      int k = -1;
      for (int j = 0; j < t.en->n; j++)
        if (!strcasecmp(t.en->names[j], x->s)) k = j;
      if (k < 0) {
        TqBuf b = {0};
        for (int j = 0; j < t.en->n; j++) tqBufPrintf(&b, "%s%s", j ? ", " : "", t.en->names[j]);
        tqError(s->diag, x->loc, "'%s' is not a value of %s (%s)", x->s, d->attr[a->attr].name, b.s);
        tqBufFree(&b);
        bad = 1;
      }
      a->map[i] = k;
    } else {
      a->map[i] = tqSymZ(x->s);
    }
  }
  return bad ? -1 : 0;
}

/* label, intensity, colour, rotation, scale */
static void valueAspect(CpSema *s, CpDisplay *d, AstNode *x) {
  CpAspect *a = &d->asp[x->op];
  const char *what = aspectName[x->op];
  if (a->set) {
    tqError(s->diag, x->loc, "%s given twice", what);
    return;
  }
  if (d->kind == DSPK_INSIDE || (d->kind == DSPK_FLASH && x->op != DSPA_COLOUR) ||
      ((d->kind == DSPK_POINTER || d->kind == DSPK_LINE) && (x->op == DSPA_ROTATION || x->op == DSPA_SCALE))) {
    tqError(s->diag, x->loc, "%s does not apply to %s %s display%s", what, d->kind == DSPK_INSIDE ? "an" : "a",
            kindName[d->kind],
            d->kind == DSPK_INSIDE ? " (it moves the icons it names)"
            : d->kind == DSPK_FLASH ? " (only colour does)"
                                    : " (label, intensity and colour do)");
    return;
  }
  a->set = 1;
  a->attr = -1;
  AstNode *v = x->k[0];
  if (v->kind == AST_NAME) {
    a->attr = attrOf(s, d, v->s, v->loc);
    if (a->attr < 0) return;
    AlgType t = d->attr[a->attr].type;
    if ((x->op == DSPA_ROTATION || x->op == DSPA_SCALE || x->op == DSPA_INTENSITY) && t.kind == TY_STRING) {
      tqError(s->diag, v->loc, "%s needs an ordered attribute (a number, an enumeration or an entity); %s is a string",
              what, v->s);
      return;
    }
  } else if (x->op == DSPA_LABEL) {
    char num[32];
    a->str = v->kind == AST_STR ? v->s : tqArenaStrdup(s->a, tqFloatFormat(num, sizeof num, v->f));
  } else if (x->op == DSPA_COLOUR) {
    if (v->kind != AST_STR || !v->s[0] || strpbrk(v->s, "<>\"'&;{}")) {
      tqError(s->diag, v->loc, "colour takes an attribute or a colour in quotes (\"red\", \"#3366cc\")");
      return;
    }
    a->str = v->s;
  } else {
    if (v->kind == AST_STR) {
      tqError(s->diag, v->loc, "%s takes an attribute or a number", what);
      return;
    }
    a->num = v->f;
    if (x->op == DSPA_INTENSITY && (a->num < 0 || a->num > 1)) {
      tqError(s->diag, v->loc, "a constant intensity is from 0 (lightest) to 1 (darkest)");
      return;
    }
    if (x->op == DSPA_SCALE && (a->num <= 0 || a->num > 100)) {
      tqError(s->diag, v->loc, "a constant scale is a factor above 0 and at most 100");
      return;
    }
  }
  if (x->k[1]) aspectMap(s, d, a, x->k[1], what);
  if (x->k[2]) {
    if (a->attr < 0 || !isNumeric(d->attr[a->attr].type)) {
      tqError(s->diag, x->k[2]->loc, "'from N to N' gives the range of a numeric attribute%s",
              a->attr < 0 ? "; here the value is a constant" : "");
      return;
    }
    a->ranged = 1;
    a->lo = x->k[2]->f;
    a->hi = x->k[3]->f;
    if (a->lo == a->hi) tqError(s->diag, x->k[2]->loc, "an empty range (from %g to %g)", a->lo, a->hi);
  }
}

static int anchorOf(const char *w) {
  for (int i = 1; i < (int)TQ_ARRAY_SIZE(anchorName); i++)
    if (!strcasecmp(anchorName[i], w)) return i;
  if (!strcasecmp(w, "centre")) return 2;
  return 0;
}

static void placeAspect(CpSema *s, CpDisplay *d, AstNode *x) {
  if (d->kind != DSPK_ICON) {
    tqError(s->diag, x->loc, "%s does not apply to a%s %s display (it places icons)", aspectName[x->op],
            d->kind == DSPK_INSIDE ? "n" : "", kindName[d->kind]);
    return;
  }
  if (x->op == DSPA_AT) {
    if (d->anchor) {
      tqError(s->diag, x->loc, "at given twice");
      return;
    }
    d->anchor = anchorOf(x->s);
    if (!d->anchor) tqError(s->diag, x->loc2, "unknown position '%s' (left, center, right, top, middle or bottom)", x->s);
    return;
  }
  int axis = x->op == DSPA_HORIZONTAL ? 0 : 1;
  if (d->pos[axis] >= 0) {
    tqError(s->diag, x->loc, "%s given twice", aspectName[x->op]);
    return;
  }
  int i = attrOf(s, d, x->s, x->loc2);
  if (i < 0) return;
  d->pos[axis] = i;
  d->order[axis] = x->op2;
}

/* An entity-typed attribute of a relationship display, whose entity has an icon. */
static int entityEnd(CpSema *s, CpDisplay *d, AstNode *x, const AlgEntity **ent) {
  int i = attrOf(s, d, x->s, x->loc);
  if (i < 0) return -1;
  AlgType t = d->attr[i].type;
  if (t.kind != TY_ENTITY) {
    char buf[64];
    tqError(s->diag, x->loc, "%s draws with the icons of entities; '%s' of %s is %s, not an entity", kindName[d->kind],
            x->s, d->rel, algTypeName(t, buf, sizeof buf));
    return -1;
  }
  *ent = t.ent;
  return i;
}

static CpDisplay *iconOf(CpProgram *p, const AlgEntity *e) {
  for (int i = 0; i < p->displays.n; i++) {
    CpDisplay *d = p->displays.v[i];
    if (d->kind == DSPK_ICON && d->prim == e->rel) return d;
  }
  return NULL;
}

static void needIcon(CpSema *s, CpDisplay *d, const AlgEntity *e, TqLoc loc) {
  if (!iconOf(s->prog, e))
    tqError(s->diag, loc, "%s is drawn with the icon of %s, which has no display (add: display %s as circle ...)",
            d->rel, e->name, e->name);
}

static CpDisplay *checkDisplay(CpSema *s, AstNode *st) {
  AlgCatalog *c = &s->prog->cat;
  AlgRel *r = algCatRel(c, st->s);
  AlgDerived *dv = r ? NULL : algCatDerived(c, st->s);
  if (!r && !dv) {
    for (int i = 0; i < s->failedNames.n; i++)
      if (!strcasecmp(s->failedNames.v[i], st->s)) return NULL; /* its query failed: reported there */
    tqError(s->diag, st->loc2, "display of unknown relation '%s'", st->s);
    return NULL;
  }
  for (int i = 0; i < s->prog->displays.n; i++) {
    CpDisplay *o = s->prog->displays.v[i];
    if (!strcasecmp(o->rel, st->s)) {
      tqError(s->diag, st->loc2, "%s is displayed already (at %s)", st->s, locText(s, o->loc));
      return NULL;
    }
  }
  CpDisplay *d = tqArenaAlloc(s->a, sizeof *d);
  d->rel = r ? r->name : dv->name;
  d->loc = st->loc2;
  d->kind = st->op;
  d->pos[0] = d->pos[1] = -1;
  d->end[0] = d->end[1] = -1;
  d->query = -1;
  if (r) {
    d->prim = r;
    d->isEvent = r->isEvent;
    d->sampled = r->mode == ALG_MODE_SAMPLED;
    d->isEvent |= d->sampled; /* seen through samples: events */
    d->nattr = r->nattr;
    d->attr = r->attr;
    d->entityKey = r->entity != NULL;
  } else {
    d->isEvent = dv->isEvent;
    d->nattr = dv->nattr;
    d->attr = dv->attr;
    d->query = dv->query;
  }
  int n0 = s->diag->nerr;
  switch (d->kind) {
    case DSPK_ICON:
      for (AstNode *x = st->k[0]; x; x = x->next) {
        if (d->nicon == (int)TQ_ARRAY_SIZE(d->icon)) {
          tqError(s->diag, x->loc, "at most %d icons in a combination", (int)TQ_ARRAY_SIZE(d->icon));
          break;
        }
        if (x->op == DSPI_POLYGON && (x->i < 3 || x->i > 12))
          tqError(s->diag, x->loc2, "a polygon has 3 to 12 sides, not %lld", (long long)x->i);
        d->sides[d->nicon] = (int)x->i;
        d->icon[d->nicon++] = x->op;
      }
      break;
    case DSPK_INSIDE:
    case DSPK_POINTER:
    case DSPK_LINE: {
      AstNode *a = st->k[0], *b = a->next;
      d->end[0] = entityEnd(s, d, a, &d->ent[0]);
      d->end[1] = entityEnd(s, d, b, &d->ent[1]);
      if (d->end[0] >= 0 && d->end[0] == d->end[1])
        tqError(s->diag, b->loc, "%s needs two different attributes ('%s' is given twice)", kindName[d->kind], b->s);
      break;
    }
    case DSPK_FLASH: {
      int n = st->k[0] ? astLen(st->k[0]) : 0;
      d->flash = tqArenaAlloc(s->a, sizeof(int) * (size_t)(n ? n : d->nattr ? d->nattr : 1));
      if (n) {
        for (AstNode *x = st->k[0]; x; x = x->next) {
          const AlgEntity *e;
          int i = entityEnd(s, d, x, &e);
          if (i >= 0) d->flash[d->nflash++] = i;
        }
      } else {
        for (int i = 0; i < d->nattr; i++)
          if (d->attr[i].type.kind == TY_ENTITY) d->flash[d->nflash++] = i;
        if (!d->nflash)
          tqError(s->diag, st->loc, "flash makes the icons of the tuple's entities flash, but %s has no entity-typed attribute",
                  d->rel);
      }
      break;
    }
  }
  for (AstNode *x = st->k[1]; x; x = x->next) {
    if (x->op < DSPA_NVALUE) {
      valueAspect(s, d, x);
    } else if (x->op == DSPA_HOLD) {
      if (!d->isEvent) tqError(s->diag, x->loc, "hold applies to event relations (%s is an interval relation)", d->rel);
      else if (x->i <= 0) tqError(s->diag, x->loc2, "hold needs a positive duration");
      else if (d->hold) tqError(s->diag, x->loc, "hold given twice");
      else d->hold = x->i;
    } else {
      placeAspect(s, d, x);
    }
  }
  if (d->kind == DSPK_ICON) {
    int a = d->anchor;
    if (a && d->pos[0] >= 0 && d->pos[1] < 0 && a <= 3)
      tqError(s->diag, st->loc2, "icons ordered horizontally go at the top, middle or bottom, not at %s", anchorName[a]);
    else if (a && d->pos[1] >= 0 && a >= 4)
      tqError(s->diag, st->loc2, "icons ordered vertically go at the left, center or right, not at %s", anchorName[a]);
  }
  if (s->diag->nerr > n0) return NULL;
  d->index = s->prog->displays.n;
  tqVecPush(&s->prog->displays, d);
  return d;
}

void cpSemaDisplays(CpSema *s, AstNode *all) {
  AstNode *timeSt = NULL;
  TqVec asts = {0};
  for (AstNode *st = all; st; st = st->next) {
    if (st->kind == AST_DISPLAY) {
      CpDisplay *d = checkDisplay(s, st);
      if (d) tqVecPush(&asts, st);
    } else if (st->kind == AST_TIMEREP) {
      if (timeSt) {
        tqError(s->diag, st->loc, "time given twice (first at %s)", locText(s, timeSt->loc));
        continue;
      }
      timeSt = st;
      s->prog->timeRep = st->op;
      if (st->i && st->op != DSPT_ANIMATIONTRACE)
        tqError(s->diag, st->loc, "fade applies to animationtrace (past states fading)");
      else if (st->i < 0 || st->i > 20)
        tqError(s->diag, st->loc, "fade is 1 to 20 past states");
      else
        s->prog->fade = (int)st->i;
    }
  }
  /* relationships need their entities' icons (any order of statements) */
  for (int i = 0; i < s->prog->displays.n; i++) {
    CpDisplay *d = s->prog->displays.v[i];
    AstNode *st = asts.v[i];
    if (d->kind == DSPK_INSIDE || d->kind == DSPK_POINTER || d->kind == DSPK_LINE) {
      needIcon(s, d, d->ent[0], st->k[0]->loc);
      needIcon(s, d, d->ent[1], st->k[0]->next->loc);
    } else if (d->kind == DSPK_FLASH) {
      for (int k = 0; k < d->nflash; k++) needIcon(s, d, d->attr[d->flash[k]].type.ent, st->k[0] ? st->k[0]->loc : st->loc);
    }
  }
  tqVecFree(&asts);
}

int cpDisplayQueries(CpProgram *p, TqDiag *d) {
  CpSema s = {p, d, p->arena, {0}, {0}, {0}};
  int nerr0 = d->nerr;
  for (int i = 0; i < p->displays.n; i++) {
    CpDisplay *dp = p->displays.v[i];
    if (!dp->prim || dp->query >= 0) continue;
    const char *var = tqArenaPrintf(p->arena, "_display%d", i + 1);
    AstNode *rg = astNew(p->arena, AST_RANGE, dp->loc);
    rg->s = var;
    rg->s2 = dp->prim->name;
    cpSemaRange(&s, rg);
    AstNode *rt = astNew(p->arena, AST_RETRIEVE, dp->loc);
    rt->loc2 = dp->loc;
    AstNode *tg = astNew(p->arena, AST_TARGET, dp->loc);
    tg->op = 1;
    tg->k[0] = astNew(p->arena, AST_NAME, dp->loc);
    tg->k[0]->s = var;
    rt->k[0] = tg;
    int n = p->queries.n;
    cpSemaRetrieve(&s, rt);
    if (p->queries.n != n + 1) break;
    CpQuery *q = p->queries.v[n];
    q->display = 1;
    q->name = tqArenaPrintf(p->arena, "display %s", dp->prim->name);
    dp->query = q->index;
  }
  tqVecFree(&s.ranges);
  tqVecFree(&s.laterNames);
  tqVecFree(&s.failedNames);
  return d->nerr > nerr0 ? -1 : 0;
}
