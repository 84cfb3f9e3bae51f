/*
** optimize.c - the rule-based rewriter of paper section 8.6.
**
** Rules come in the paper's five classes, tried in this order and repeated
** until none applies anywhere (a rule that fires restarts from the first
** class):
**   1 conventional  SPLIT-AND, SPLIT-OVERLAP, SIGMA-DOWN, O1, O1T, SIGMA-PI,
**                   SIGMA-PIT, SIGMAT-PI, PI-MERGE
**   2 alpha         O2 (every traced, disable-traced and sampled placement),
**                   O3-ONCE (O3's consuming form, for a sensor declared once),
**                   O3 (every traced and disable-traced placement), SJ (the
**                   semi-join of a traced alpha with an entity relation),
**                   SF (a selection on a traced alpha's own attributes
**                   checked at the sensor: the 3- and 4-dimension filtering
**                   of paper section 3; on a sampled alpha, the condition
**                   the selection implies on the flag, into the argument),
**                   SJS (the semi-join of a sampled
**                   alpha with an entity relation), AGG-WHERE (a scalar
**                   aggregate's inner where as a selection on its argument,
**                   for O2 and SF)
**   3 entity        O4, O5
**   4 clock         SENSOR (a sampled sensor of a traced relation where it
**                   is exact and cheaper), O6, O7
**   5 variants      PIT-ID, PI-ID, X1, JOIN
** After the fixpoint, PI-PUSH (projection push-down to product inputs) and
** MERGE-SIGMA (adjacent selections into one) run once.
**
** Every rule states its preconditions next to its code and returns NULL
** when one fails; a rule never changes the query's answer.  The input tree
** is copied first and never changed; rewrites build new nodes in the arena.
**
** Why one file of over 1,000 lines: the rules share the rewriter's walk, its
** arena and the helpers that test a rule's preconditions (which attributes
** an expression reads, whether a subtree holds an alpha); a rule is read
** next to the others of its class, in the order they are tried.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "algebra.h"

typedef struct Opt {
  TqArena *a;
  TqBuf *trace;
  AlgNode *root;
  AlgNode *path[256]; /* ancestors of the node a rule looks at, root first */
  int depth;          /* entries of path in use */
  TqBuf pushed;       /* PI-PUSH: one indented line per narrowed input, traced after its rule line */
} Opt;

typedef AlgNode *(*RuleFn)(Opt *o, AlgNode *n);
typedef struct Rule {
  const char *name;
  int cls;
  RuleFn fn;
} Rule;

static AlgType tyTime(void) {
  AlgType t = {TY_TIME, NULL, NULL};
  return t;
}

static AlgType tyBool(void) {
  AlgType t = {TY_BOOL, NULL, NULL};
  return t;
}

static int streq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return !strcasecmp(a, b);
}

/* ================================================================ helpers */

/* Does every column and time reference of e resolve in schema s? */
static int exprIn(const AlgExpr *e, const AlgSchema *s) {
  if (!e) return 1;
  if ((e->kind == AX_COL || e->kind == AX_AGG) && algSchemaCol(s, e->var, e->name) < 0) return 0;
  if (e->kind == AX_TVAR && algSchemaTvar(s, e->var) < 0) return 0;
  return exprIn(e->a, s) && exprIn(e->b, s);
}

static int exprHasTime(const AlgExpr *e) {
  if (!e) return 0;
  if (e->kind == AX_TVAR || e->kind == AX_NOW) return 1;
  return exprHasTime(e->a) || exprHasTime(e->b);
}

/* Entity source: an entity relation used as an argument (no tuple variable),
** or its projection on the entity attribute.  Returns its entity, or NULL. */
static const AlgEntity *entitySource(const AlgNode *n) {
  if (n->kind == ALG_SOURCE && !n->var) return n->rel->entity;
  if (n->kind == ALG_PI && n->npi == 1 && n->kid[0]->kind == ALG_SOURCE && !n->kid[0]->var &&
      n->pi[0]->kind == AX_COL && !n->pi[0]->var && streq(n->pi[0]->name, n->kid[0]->rel->attr[0].name))
    return n->kid[0]->rel->entity;
  return NULL;
}

/* The one column of a unary entity relation (an alpha argument). */
static const AlgCol *argCol(const AlgNode *n) { return n->sch.ncol >= 1 ? &n->sch.col[0] : NULL; }

static int isFlagCol(const AlgNode *alpha, const AlgExpr *e, int attr) {
  return e && e->kind == AX_COL && attr >= 0 && streq(e->var, alpha->var) &&
         streq(e->name, alpha->rel->attr[attr].name);
}

/* Copy of e with every reference to column (var, name) replaced by r. */
static AlgExpr *substCol(Opt *o, const AlgExpr *e, const char *var, const char *name, const AlgExpr *r) {
  if (!e) return NULL;
  if (e->kind == AX_COL && streq(e->var, var) && streq(e->name, name)) return algExprCopy(o->a, r);
  AlgExpr *c = tqArenaAlloc(o->a, sizeof *c);
  *c = *e;
  c->a = substCol(o, e->a, var, name, r);
  c->b = substCol(o, e->b, var, name, r);
  return c;
}

/* Does e use only column (var, name) of the explicit attributes (and no time)? */
static int onlyCol(const AlgExpr *e, const char *var, const char *name) {
  if (!e) return 1;
  if (e->kind == AX_COL) return streq(e->var, var) && streq(e->name, name);
  if (e->kind == AX_TVAR || e->kind == AX_NOW || e->kind == AX_AGG) return 0;
  return onlyCol(e->a, var, name) && onlyCol(e->b, var, name);
}

static int refsVar(const AlgExpr *e, const char *var) {
  if (!e) return 0;
  if ((e->kind == AX_COL || e->kind == AX_TVAR || e->kind == AX_AGG) && streq(e->var, var)) return 1;
  return refsVar(e->a, var) || refsVar(e->b, var);
}

/* Uses the time of var other than as `end of var`? */
static int usesBeginOf(const AlgExpr *e, const char *var) {
  if (!e) return 0;
  if (e->kind == AX_ENDOF && e->a->kind == AX_TVAR && streq(e->a->var, var)) return 0;
  if (e->kind == AX_TVAR && streq(e->var, var)) return 1;
  return usesBeginOf(e->a, var) || usesBeginOf(e->b, var);
}

static int nodeRefs(const AlgNode *n, int (*f)(const AlgExpr *, const char *), const char *var) {
  if (f(n->pred, var) || f(n->vfrom, var) || f(n->vto, var)) return 1;
  for (int i = 0; i < n->npi; i++)
    if (f(n->pi[i], var)) return 1;
  for (int i = 0; i < n->nkey; i++)
    if (f(n->keyL[i], var) || f(n->keyR[i], var)) return 1;
  return 0;
}

static AlgNode *mkSigma(Opt *o, AlgKind k, AlgExpr *p, AlgNode *kid) {
  return k == ALG_SIGMA ? algSigma(o->a, p, kid) : algSigmaT(o->a, p, kid);
}

static AlgNode *copyNode(Opt *o, const AlgNode *n) {
  AlgNode *c = tqArenaAlloc(o->a, sizeof *c);
  *c = *n;
  return c;
}

static AlgNode *withKid(Opt *o, const AlgNode *n, int i, AlgNode *k) {
  AlgNode *c = copyNode(o, n);
  c->kid[i] = k;
  algSchemaCompute(o->a, c);
  return c;
}

/* ================================================================ class 1: conventional */

/* SPLIT-AND: sigma[a and b](E) -> sigma[a](sigma[b](E)), same for sigmaT.
** Always exact (a conjunction is two filters). */
static AlgNode *ruleSplitAnd(Opt *o, AlgNode *n) {
  if ((n->kind != ALG_SIGMA && n->kind != ALG_SIGMAT) || n->pred->kind != AX_AND) return NULL;
  return mkSigma(o, n->kind, n->pred->a, mkSigma(o, n->kind, n->pred->b, n->kid[0]));
}

/* Collects the tuple variables of an overlap chain V1 overlap ... Vk. */
static int overlapChain(const AlgExpr *e, const AlgExpr **vars, int *n, int max) {
  if (e->kind == AX_TVAR) {
    if (*n >= max) return 0;
    vars[(*n)++] = e;
    return 1;
  }
  if (e->kind != AX_OVERLAP && e->kind != AX_TOVERLAP) return 0;
  return overlapChain(e->a, vars, n, max) && overlapChain(e->b, vars, n, max);
}

/* SPLIT-OVERLAP: sigmaT[V1 overlap ... overlap Vk] (k >= 3) -> the
** conjunction of the pairwise overlaps.  Exact: spans on a line that
** intersect pairwise share a chronon (Helly property); events are
** one-chronon spans. */
static AlgNode *ruleSplitOverlap(Opt *o, AlgNode *n) {
  const AlgExpr *v[32];
  int k = 0;
  if (n->kind != ALG_SIGMAT || n->pred->kind != AX_TOVERLAP) return NULL;
  if (!overlapChain(n->pred, v, &k, 32) || k < 3) return NULL;
  AlgExpr *all = NULL;
  for (int i = 0; i < k; i++) {
    for (int j = i + 1; j < k; j++) {
      AlgExpr *p = algExprBin(o->a, AX_TOVERLAP, 0, tyBool(), algExprCopy(o->a, v[i]), algExprCopy(o->a, v[j]));
      all = all ? algExprBin(o->a, AX_AND, 0, tyBool(), all, p) : p;
    }
  }
  return algSigmaT(o->a, all, n->kid[0]);
}

/* SIGMA-DOWN: sigma[F](sigmaT[G](E)) -> sigmaT[G](sigma[F](E)).  Exact:
** both only drop tuples, on independent attributes. */
static AlgNode *ruleSigmaDown(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || n->kid[0]->kind != ALG_SIGMAT) return NULL;
  AlgNode *t = n->kid[0];
  return algSigmaT(o->a, t->pred, algSigma(o->a, n->pred, t->kid[0]));
}

/* A chain of selections (sigma, sigmaT) over a product: the product, or NULL. */
static AlgNode *chainProduct(AlgNode *n) {
  while (n->kind == ALG_SIGMA || n->kind == ALG_SIGMAT) n = n->kid[0];
  return n->kind == ALG_PRODUCT || n->kind == ALG_OPRODUCT ? n : NULL;
}

/* Copy of the selection chain n with its product replaced by p. */
static AlgNode *rebuildChain(Opt *o, AlgNode *n, AlgNode *p) {
  if (n->kind != ALG_SIGMA && n->kind != ALG_SIGMAT) return p;
  return mkSigma(o, n->kind, n->pred, rebuildChain(o, n->kid[0], p));
}

/* O1: sigma[F](... E1 x E2) -> ...(sigma[F](E1) x E2) when F only uses E1's
** attributes (and symmetrically), through other selections between, and
** through x1 and keyed products.  Exact: a filter on one input of a product
** keeps exactly the pairs whose part passes it. */
static AlgNode *pushIntoProduct(Opt *o, AlgNode *n) {
  AlgNode *p = chainProduct(n->kid[0]);
  if (!p) return NULL;
  if (n->kind == ALG_SIGMA && exprHasTime(n->pred)) return NULL;
  for (int side = 0; side < 2; side++) {
    if (!exprIn(n->pred, &p->kid[side]->sch)) continue;
    return rebuildChain(o, n->kid[0], withKid(o, p, side, mkSigma(o, n->kind, n->pred, p->kid[side])));
  }
  return NULL;
}
static AlgNode *ruleO1(Opt *o, AlgNode *n) { return n->kind == ALG_SIGMA ? pushIntoProduct(o, n) : NULL; }
/* O1T: the same for sigmaT when its predicate names the times of one side only. */
static AlgNode *ruleO1T(Opt *o, AlgNode *n) { return n->kind == ALG_SIGMAT ? pushIntoProduct(o, n) : NULL; }

/* SIGMA-PI: sigma[F](pi[L](E)) -> pi[L](sigma[F'](E)) with F' = F with each
** output column replaced by its expression.  Exact: pi maps tuples one to one. */
static AlgNode *ruleSigmaPi(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || n->kid[0]->kind != ALG_PI) return NULL;
  if (entitySource(n->kid[0])) return NULL; /* leave sigma[1=K](pi[E](E)) to O4 */
  AlgNode *p = n->kid[0];
  AlgExpr *f = n->pred;
  for (int i = 0; i < p->npi; i++) f = substCol(o, f, p->piVars ? p->piVars[i] : p->piVar, p->piName[i], p->pi[i]);
  if (!exprIn(f, &p->kid[0]->sch)) return NULL;
  return withKid(o, p, 0, algSigma(o->a, f, p->kid[0]));
}

/* SIGMA-PIT: sigma[F](piT[V](E)) -> piT[V](sigma[F](E)).  Exact: piT keeps the
** explicit attributes; F does not look at time. */
static AlgNode *ruleSigmaPiT(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || n->kid[0]->kind != ALG_PIT || exprHasTime(n->pred)) return NULL;
  AlgNode *p = n->kid[0];
  return withKid(o, p, 0, algSigma(o->a, n->pred, p->kid[0]));
}

/* SIGMAT-PI: sigmaT[G](pi[L](E)) -> pi[L](sigmaT[G](E)).  Exact: pi keeps the
** time components. */
static AlgNode *ruleSigmaTPi(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMAT || n->kid[0]->kind != ALG_PI) return NULL;
  AlgNode *p = n->kid[0];
  if (!exprIn(n->pred, &p->kid[0]->sch)) return NULL;
  return withKid(o, p, 0, algSigmaT(o->a, n->pred, p->kid[0]));
}

/* PI-MERGE: pi[L1](pi[L2](E)) -> pi[L1 o L2](E). */
static AlgNode *rulePiMerge(Opt *o, AlgNode *n) {
  if (n->kind != ALG_PI || n->kid[0]->kind != ALG_PI) return NULL;
  AlgNode *in = n->kid[0];
  AlgExpr **e = tqArenaAlloc(o->a, sizeof(AlgExpr *) * (size_t)(n->npi ? n->npi : 1));
  for (int i = 0; i < n->npi; i++) {
    e[i] = n->pi[i];
    for (int j = 0; j < in->npi; j++) e[i] = substCol(o, e[i], in->piVars ? in->piVars[j] : in->piVar, in->piName[j], in->pi[j]);
    if (!exprIn(e[i], &in->kid[0]->sch)) return NULL;
  }
  AlgNode *m = algPi(o->a, n->npi, e, n->piName, n->piVar, in->kid[0]);
  m->piVars = n->piVars;
  algSchemaCompute(o->a, m);
  return m;
}

/* ================================================================ class 2: alpha */

/* O2: sigma[F(t.flag)](alpha_t(E)) -> alpha_t(sigma[F(1)](E)) when F uses
** only the attribute holding the enable flag.  Exact: alpha_t only delivers
** tuples whose flag entity is in E.  For S:P the flag is the performer
** (first argument); for S:T a condition on the target goes to the first
** argument and one on the performer to the third. */
static AlgNode *ruleO2(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || n->kid[0]->kind != ALG_ALPHA) return NULL;
  AlgNode *al = n->kid[0];
  const AlgRel *r = al->rel;
  int attrs[2] = {r->flagAttr, -1}, args[2] = {0, -1};
  if (al->variant == AV_ST) {
    attrs[1] = r->performerAttr;
    args[1] = 2;
  }
  for (int k = 0; k < 2; k++) {
    if (attrs[k] < 0 || args[k] >= al->nkid) continue;
    const char *an = r->attr[attrs[k]].name;
    if (!onlyCol(n->pred, al->var, an)) continue;
    const AlgCol *c = argCol(al->kid[args[k]]);
    if (!c) continue;
    AlgExpr *col = algExprCol(o->a, c->var, c->name, c->type);
    AlgExpr *f = substCol(o, n->pred, al->var, an, col);
    AlgNode *na = copyNode(o, al);
    na->kid[args[k]] = algSigma(o->a, f, al->kid[args[k]]);
    algSchemaCompute(o->a, na);
    return na;
  }
  return NULL;
}

/* Are the ancestors of the current node free of references to the columns
** and time of e2 (restriction 1), and of any use of t's time other than
** `end of t` up to the first piT above (restriction 2)? */
static int o3AncestorsOk(Opt *o, const char *t, const AlgNode *e2) {
  int belowPiT = 1;
  for (int i = o->depth - 1; i >= 0; i--) {
    const AlgNode *an = o->path[i];
    for (int v = 0; v < e2->sch.ncol; v++)
      if (nodeRefs(an, refsVar, e2->sch.col[v].var)) return 0;
    for (int v = 0; v < e2->sch.ntv; v++)
      if (nodeRefs(an, refsVar, e2->sch.tv[v].var)) return 0;
    if (belowPiT && nodeRefs(an, usesBeginOf, t)) return 0;
    if (an->kind == ALG_PIT) belowPiT = 0; /* above piT, times are the result's */
  }
  return 1;
}

/* O3 (all traced and disable-traced placements):
**   sigmaT[E2 precede end of t](sigma[E2.A = t.flag](alpha_t(E1) x E2))
**     -> alpha_t(E1 intersect pi[E2.A](E2))
** Preconditions (the paper's, plus exactness):
**   (1) nothing above uses an attribute or the time of E2;
**   (2) nothing above uses begin of t (only end of t);
**   (3) E2 is an event relation (one time component, an event);
**   (4) E1 is an entity source or a constant (so the enabling entities of the
**       right-hand side are those of the left);
**   (5) E2's events come in the instant of their time (promptEvents): an
**       event known only later (a piT over an interval that came whole at
**       its end) would arm the alpha after records it should have taken;
** The new alpha is armed from each qualifying event on, persistently (the
** exact form): every t on that entity that ends after the first such event
** is delivered, which is TQuel's "some E2 precedes the end of t".  The
** consuming form of a disable-traced sensor (one firing per event) answers
** "the next t after each E2"; it is used only where it is the same answer
** (O3-ONCE, below).  The new alpha carries a note
** saying which form was chosen; `tqmon explain` prints it under the query. */
/* Does every event of n reach its parent in the instant of its time?  An
** operator that decides when time passes (piT, sigmaT, an aggregate, an
** intersection) may emit an event for an earlier time, once an interval
** came whole at its end, say. */
static int promptEvents(const AlgNode *n) {
  if (n->kind == ALG_PIT || n->kind == ALG_SIGMAT || n->kind == ALG_AGG || n->kind == ALG_INTERSECT) return 0;
  for (int i = 0; i < n->nkid; i++)
    if (!promptEvents(n->kid[i])) return 0;
  return 1;
}

static AlgNode *o3(Opt *o, AlgNode *n, int once) {
  if (n->kind != ALG_SIGMAT) return NULL;
  AlgNode *s = n->kid[0];
  if (s->kind != ALG_SIGMA || s->pred->kind != AX_CMP || s->pred->op != OPB_EQ) return NULL;
  AlgNode *p = s->kid[0];
  if (p->kind != ALG_PRODUCT) return NULL;
  for (int side = 0; side < 2; side++) {
    AlgNode *al = p->kid[side], *e2 = p->kid[1 - side];
    if (al->kind != ALG_ALPHA || al->rel->mode == ALG_MODE_SAMPLED) continue;
    if (once && (al->rel->mode != ALG_MODE_DISABLE || !al->rel->once)) continue; /* O3-ONCE's (6) */
    if (!entitySource(al->kid[0]) && al->kid[0]->kind != ALG_CONST) continue;   /* (4) */
    if (e2->sch.ntv != 1 || !e2->sch.tv[0].isEvent) continue;                    /* (3) */
    if (!promptEvents(e2)) continue;                                              /* (5) */
    const AlgExpr *q = s->pred, *ea = NULL;
    if (isFlagCol(al, q->a, al->rel->flagAttr) && q->b->kind == AX_COL) ea = q->b;
    else if (isFlagCol(al, q->b, al->rel->flagAttr) && q->a->kind == AX_COL) ea = q->a;
    if (!ea || algSchemaCol(&e2->sch, ea->var, ea->name) < 0) continue;
    /* the when predicate: E2 precede end of t (or t itself for an event t) */
    const AlgExpr *w = n->pred;
    if (w->kind != AX_PRECEDE || w->a->kind != AX_TVAR || !streq(w->a->var, e2->sch.tv[0].var)) continue;
    const AlgExpr *rhs = w->b;
    int ok = rhs->kind == AX_ENDOF && rhs->a->kind == AX_TVAR && streq(rhs->a->var, al->var);
    if (!ok && al->rel->isEvent) ok = rhs->kind == AX_TVAR && streq(rhs->var, al->var);
    if (!ok) continue;
    /* (1), (2); for an event t, begin of t is end of t */
    if (!o3AncestorsOk(o, al->rel->isEvent ? "" : al->var, e2)) continue;
    AlgExpr **pe = tqArenaAlloc(o->a, sizeof(AlgExpr *));
    const char **pn = tqArenaAlloc(o->a, sizeof(char *));
    pe[0] = algExprCopy(o->a, ea);
    pn[0] = ea->name;
    AlgNode *proj = algPi(o->a, 1, pe, pn, ea->var, e2);
    AlgNode *na = copyNode(o, al);
    na->kid[0] = algIntersect(o->a, al->kid[0], proj);
    na->arm = once ? ARM_ONCE : ARM_PERSIST;
    if (once)
      na->note = tqArenaPrintf(o->a, "O3-ONCE consuming form: each qualifying event arms one firing; the same answer as the "
                                     "persistent form because %s is declared once (one tuple per %s entity at most)",
                               al->rel->name, algRoleName(al->rel->flagRole));
    else
      na->note = al->rel->mode == ALG_MODE_DISABLE
                     ? "O3 exact form: armed persistently from the first qualifying event on; the consuming form "
                       "(one firing per event) answers otherwise unless the sensor is declared once (O3-ONCE)"
                     : "O3 exact form: enabled from the first qualifying event on (a traced sensor has no consuming form)";
    algSchemaCompute(o->a, na);
    return na;
  }
  return NULL;
}

static AlgNode *ruleO3(Opt *o, AlgNode *n) { return o3(o, n, 0); }

/* O3-ONCE: O3 with the consuming form of a disable-traced alpha (ARM_ONCE:
** each qualifying event arms one firing, which the sensor consumes):
**   sigmaT[E2 precede end of t](sigma[E2.A = t.flag](alpha^{D:x}_t(E1) x E2))
**     -> alpha^{D:x}_t[once](E1 intersect pi[E2.A](E2))
** Preconditions: O3's, and (6) t's relation is declared `once`: at most one
** tuple per flag entity in a run (a lifecycle event: an exit, a deletion).
** Exact (docs/enabling.md, the proof obligation): the consuming form never
** delivers a t the persistent one does not (a t it delivers ends after an
** arming event, so some E2 precedes its end); it misses a t only when the
** armings on t's flag entity before t's end are all consumed by earlier
** firings on it, and with one tuple per flag entity there is no earlier
** firing.  It saves no packet: the persistent form delivers exactly the t
** in the answer; it saves the monitor's re-arming of the flag after the
** firing and releases the entity's enabling once it fired.  The engine
** counts the tuples that break the declaration (`twice` in --stats) and
** warns. */
static AlgNode *ruleO3Once(Opt *o, AlgNode *n) { return o3(o, n, 1); }

/* Are the intervals of n known when they begin?  Entity relations are
** always enabled and their tuples come at their begin; selections and
** projections keep that. */
static int promptIntervals(const AlgNode *n) {
  if (n->kind == ALG_SOURCE) return n->var != NULL;
  if (n->kind == ALG_SIGMA || n->kind == ALG_PI) return promptIntervals(n->kid[0]);
  return 0;
}

/* Does a selection of n restrict its entities (else enabling on them is
** enabling on all)? */
static int selects(const AlgNode *n) {
  for (; n->kind == ALG_SIGMA || n->kind == ALG_PI; n = n->kid[0])
    if (n->kind == ALG_SIGMA) return 1;
  return 0;
}

/* SJ (semi-join; traced and disable-traced placements):
**   F(L[alpha_t(E1)] x E2)  ->  F(L[alpha_t(E1 intersect pi[E2.A](piT[from E2 to forever](E2)))] x E2)
** where F is a chain of selections, temporal selections and projections
** whose conditions include, as conjuncts, t.flag = E2.A and t overlap E2
** (the default when of a query over both), and L reaches alpha_t through
** products, selections and projections only.  The sensor is enabled only
** on the entities E2 names (the threads of one process:
** sigma[T.Process = 1234](Thread_T)), from the begin of the first E2 tuple
** that names each.  F, L and E2 stay: nothing above changes.
** Preconditions:
**   (1) E1 is an entity source or a constant (O5 then leaves the new
**       argument alone; the rule does not fire twice);
**   (2) E2 is a selection (and projections) of an entity relation: its
**       intervals come when they begin, so the enabling is not late, and
**       it names fewer entities than the entity source;
**   (3) the conditions on every tuple leaving F include both conjuncts.
** Exact: a t tuple that reaches F's output has an E2 tuple e with e.A =
** t.flag that it overlaps, so t ends after e begins.  From e's begin on,
** the entity stays enabled (to forever: an interval of t that began before
** e and ends after it, or across a gap between E2's tuples, is still
** delivered whole at its end), so every such t is delivered; an event at
** e's begin sees the enabling, which takes effect when the entity
** relation's begin is processed, before the instant's other records.  The
** operators on L's path use each t tuple only combined with others, so a
** t tuple that does not survive F changes nothing there. */
typedef struct SjConds {
  const AlgExpr *c[64]; /* the conjuncts of F */
  int n;
} SjConds;

static void sjConjuncts(const AlgExpr *e, SjConds *k) {
  if (!e) return;
  if (e->kind == AX_AND) {
    sjConjuncts(e->a, k);
    sjConjuncts(e->b, k);
  } else if (k->n < (int)TQ_ARRAY_SIZE(k->c)) {
    k->c[k->n++] = e;
  }
}

static int sjHasOverlap(const SjConds *k, const char *t, const char *v) {
  for (int i = 0; i < k->n; i++) {
    const AlgExpr *w = k->c[i];
    if (w->kind != AX_TOVERLAP || w->a->kind != AX_TVAR || w->b->kind != AX_TVAR) continue;
    if ((streq(w->a->var, t) && streq(w->b->var, v)) || (streq(w->b->var, t) && streq(w->a->var, v))) return 1;
  }
  return 0;
}

/* The column of E2 that conjunct t.flag = E2.A names, or NULL. */
static const AlgExpr *sjEquality(const SjConds *k, const AlgNode *al, const AlgNode *e2) {
  for (int i = 0; i < k->n; i++) {
    const AlgExpr *q = k->c[i], *ea = NULL;
    if (q->kind != AX_CMP || q->op != OPB_EQ) continue;
    if (isFlagCol(al, q->a, al->rel->flagAttr) && q->b->kind == AX_COL) ea = q->b;
    else if (isFlagCol(al, q->b, al->rel->flagAttr) && q->a->kind == AX_COL) ea = q->a;
    if (ea && algSchemaCol(&e2->sch, ea->var, ea->name) >= 0) return ea;
  }
  return NULL;
}

/* Rewrites the first alpha below n (through products, selections and
** projections) that the conditions allow; returns the new subtree (copies
** along the path) or NULL. */
static AlgNode *sjInto(Opt *o, AlgNode *n, const SjConds *k, const AlgNode *e2, int sampled) {
  if (n->kind == ALG_ALPHA) {
    if ((n->rel->mode == ALG_MODE_SAMPLED) != sampled) return NULL;
    if (sampled && (n->rel->deltaOf || n->rel->delta)) return NULL; /* (4) of SJS */
    if (!entitySource(n->kid[0]) && n->kid[0]->kind != ALG_CONST) return NULL; /* (1) */
    const char *ev = e2->sch.tv[0].var;
    if (!sjHasOverlap(k, n->var, ev)) return NULL; /* (3) */
    const AlgExpr *ea = sjEquality(k, n, e2);
    if (!ea) return NULL;
    if (sampled) {
      /* SJS: sampled exactly while E2 names the entity */
      AlgExpr **pe = tqArenaAlloc(o->a, sizeof(AlgExpr *));
      const char **pn = tqArenaAlloc(o->a, sizeof(char *));
      pe[0] = algExprCopy(o->a, ea);
      pn[0] = ea->name;
      AlgNode *na = copyNode(o, n);
      na->kid[0] = algIntersect(o->a, n->kid[0], algPi(o->a, 1, pe, pn, ea->var, algNodeCopy(o->a, e2)));
      na->note = "SJS: sampled only on the entities the join names, while it names them";
      algSchemaCompute(o->a, na);
      return na;
    }
    AlgExpr *from = algExprNew(o->a, AX_TVAR, tyTime());
    from->var = ev;
    AlgExpr *to = algExprNew(o->a, AX_TCONST, tyTime());
    to->ival = TQ_FOREVER;
    AlgNode *span = algPiT(o->a, 0, from, to, NULL, algNodeCopy(o->a, e2));
    AlgExpr **pe = tqArenaAlloc(o->a, sizeof(AlgExpr *));
    const char **pn = tqArenaAlloc(o->a, sizeof(char *));
    pe[0] = algExprCopy(o->a, ea);
    pn[0] = ea->name;
    AlgNode *na = copyNode(o, n);
    na->kid[0] = algIntersect(o->a, n->kid[0], algPi(o->a, 1, pe, pn, ea->var, span));
    na->note = "SJ: enabled on the entities the join names, from their first qualifying tuple on";
    algSchemaCompute(o->a, na);
    return na;
  }
  if (n->kind != ALG_PRODUCT && n->kind != ALG_OPRODUCT && n->kind != ALG_SIGMA && n->kind != ALG_SIGMAT &&
      n->kind != ALG_PI)
    return NULL;
  for (int i = 0; i < n->nkid; i++) {
    AlgNode *m = sjInto(o, n->kid[i], k, e2, sampled);
    if (m) return withKid(o, n, i, m);
  }
  return NULL;
}

static AlgNode *sjRule(Opt *o, AlgNode *n, int sampled) {
  if (n->kind != ALG_SIGMA && n->kind != ALG_SIGMAT) return NULL;
  SjConds k = {{0}, 0};
  AlgNode *chain[64];
  int nc = 0;
  AlgNode *p = n;
  while ((p->kind == ALG_SIGMA || p->kind == ALG_SIGMAT || p->kind == ALG_PI) && nc < (int)TQ_ARRAY_SIZE(chain)) {
    if (p->kind != ALG_PI) sjConjuncts(p->pred, &k);
    chain[nc++] = p;
    p = p->kid[0];
  }
  if (p->kind != ALG_PRODUCT && p->kind != ALG_OPRODUCT) return NULL;
  for (int side = 0; side < 2; side++) {
    const AlgNode *e2 = p->kid[1 - side];
    if (!promptIntervals(e2) || !selects(e2) || e2->sch.ntv != 1 || e2->sch.tv[0].isEvent) continue; /* (2) */
    AlgNode *l = sjInto(o, p->kid[side], &k, e2, sampled);
    if (!l) continue;
    AlgNode *m = withKid(o, p, side, l);
    for (int i = nc - 1; i >= 0; i--) m = withKid(o, chain[i], 0, m);
    return m;
  }
  return NULL;
}

/* SF (sensor filter; traced and disable-traced placements):
**   sigma[F](... alpha_t(E) ...) -> sigma[F](... alpha_t[F](E) ...)
** where F compares attributes of t with constants (algSensorPred) and the
** alpha is reached from the selection through other selections only.  The
** alpha's sensor need write only the packets that satisfy F (paper section
** 3: filtering on a third and fourth dimension, at the cost of a check per
** firing); the selection stays, so the answer never depends on a producer
** that cannot filter (a recording, a PCP host).  The runtime gives the
** producer the disjunction of the predicates of all the alphas of the
** relation, and none when one alpha has none (runtime/net.c).
** Preconditions:
**   (1) t's relation is traced or disable traced (a sample is an answer to
**       a request, and the engine computes delta relations from all of them);
**   (2) not the consuming form of a disable-traced alpha (ARM_ONCE): a
**       firing consumes the arming even when the selection drops its
**       packet, and a packet never written consumes nothing;
**   (3) F is not already among the conjuncts of the alpha's predicate.
** Exact: a packet that fails F reaches the selection and is dropped there;
** the alpha keeps no state of a delivered packet other than the tuple it
** passes up (its enabling is by its arguments, an interval's begin and end
** carry the same values), so a packet never written changes nothing. */
static int cmpAttrConst(const AlgExpr *e, const char *var) {
  const AlgExpr *c = e->a, *k = e->b;
  if (c->kind == AX_CONST) {
    c = e->b;
    k = e->a;
  }
  if (c->kind != AX_COL || k->kind != AX_CONST || !streq(c->var, var)) return 0;
  switch (c->type.kind) {
    case TY_INT:
    case TY_FLOAT: return k->type.kind == TY_INT || k->type.kind == TY_FLOAT;
    case TY_ENUM: return algTypeEq(c->type, k->type);
    case TY_ENTITY:
    case TY_STRING: return (e->op == OPB_EQ || e->op == OPB_NE) && k->type.kind == c->type.kind;
    default: return 0;
  }
}

int algSensorPred(const AlgExpr *e, const char *var) {
  if (!e) return 0;
  switch (e->kind) {
    case AX_AND:
    case AX_OR: return algSensorPred(e->a, var) && algSensorPred(e->b, var);
    case AX_NOT: return algSensorPred(e->a, var);
    case AX_CMP: return cmpAttrConst(e, var);
    default: return 0;
  }
}

static int hasConjunct(const AlgExpr *p, const AlgExpr *f) {
  if (!p) return 0;
  if (algExprEq(p, f)) return 1;
  return p->kind == AX_AND && (hasConjunct(p->a, f) || hasConjunct(p->b, f));
}

/* SF's sampled form (a sampled sensor writes no packet: it answers the
** engine's request for each entity of its argument):
**   sigma[F](... alpha^{S}_t(E, C) ...) -> sigma[F](... alpha^{S}_t(sigma[G](E), C) ...)
** where G is the condition on t's flag that F implies (flagImplied): each
** disjunct of F that constrains the flag contributes its conditions on it;
** none when some disjunct does not.  A selection on the flag alone is O2's
** (it leaves no selection); SF takes the rest: `where S.Proc = "h1:1" and
** S.Ppid > 1 or S.Proc = "h1:2"` asks the sensor (a PCP instance profile)
** for two processes.  Preconditions: (1) t is sampled, or a delta relation
** (computed from the samples of the entities its argument enables: G, a
** condition on the entity alone, holds at every tick or at none); (2) F reads an
** attribute of t other than its flag (else O2); (3) G exists and SF has not
** put it into this alpha already (apred).  Exact: the alpha gives only
** tuples whose flag is in its argument (as for O2); a tuple whose flag
** fails G fails F, and F stays above. */
static AlgExpr *flagImplied(Opt *o, const AlgExpr *e, const char *var, const char *flag) {
  if (!e) return NULL;
  if (onlyCol(e, var, flag)) return refsVar(e, var) ? algExprCopy(o->a, e) : NULL;
  if (e->kind != AX_AND && e->kind != AX_OR) return NULL;
  AlgExpr *a = flagImplied(o, e->a, var, flag), *b = flagImplied(o, e->b, var, flag);
  if (e->kind == AX_OR) return a && b ? algExprBin(o->a, AX_OR, 0, tyBool(), a, b) : NULL;
  if (!a || !b) return a ? a : b;
  return algExprBin(o->a, AX_AND, 0, tyBool(), a, b);
}

static AlgNode *sfSampled(Opt *o, AlgNode *n, AlgNode **chain, int nc, AlgNode *al) {
  const AlgRel *r = al->rel;
  if (r->flagAttr < 0 || al->nkid < 1) return NULL;
  const char *flag = r->attr[r->flagAttr].name;
  if (onlyCol(n->pred, al->var, flag)) return NULL; /* (2) */
  AlgExpr *g = flagImplied(o, n->pred, al->var, flag);
  const AlgCol *c = argCol(al->kid[0]);
  if (!g || !c || hasConjunct(al->apred, g)) return NULL; /* (3) */
  AlgNode *na = copyNode(o, al);
  na->apred = al->apred ? algExprBin(o->a, AX_AND, 0, tyBool(), al->apred, g) : g;
  na->kid[0] = algSigma(o->a, substCol(o, g, al->var, flag, algExprCol(o->a, c->var, c->name, c->type)), al->kid[0]);
  algSchemaCompute(o->a, na);
  AlgNode *m = na;
  for (int i = nc - 1; i >= 0; i--) m = withKid(o, chain[i], 0, m);
  return withKid(o, n, 0, m);
}

static AlgNode *ruleSF(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA) return NULL;
  AlgNode *chain[64];
  int nc = 0;
  AlgNode *al = n->kid[0];
  while (al->kind == ALG_SIGMA && nc < (int)TQ_ARRAY_SIZE(chain)) {
    chain[nc++] = al;
    al = al->kid[0];
  }
  if (al->kind != ALG_ALPHA || al->rel->entity) return NULL;
  if (al->rel->mode == ALG_MODE_SAMPLED || al->rel->deltaOf) return sfSampled(o, n, chain, nc, al); /* (1) */
  if (al->rel->mode != ALG_MODE_TRACED && al->rel->mode != ALG_MODE_DISABLE) return NULL; /* (1) */
  if (al->rel->mode == ALG_MODE_DISABLE && al->arm == ARM_ONCE) return NULL;             /* (2) */
  if (!algSensorPred(n->pred, al->var) || hasConjunct(al->spred, n->pred)) return NULL;  /* (3) */
  AlgNode *na = copyNode(o, al);
  AlgExpr *f = algExprCopy(o->a, n->pred);
  na->spred = al->spred ? algExprBin(o->a, AX_AND, 0, tyBool(), al->spred, f) : f;
  AlgNode *m = na;
  for (int i = nc - 1; i >= 0; i--) m = withKid(o, chain[i], 0, m);
  return withKid(o, n, 0, m);
}

static AlgNode *ruleSJ(Opt *o, AlgNode *n) { return sjRule(o, n, 0); }

/* SJS (semi-join of a sampled alpha; O3's idea for sampling):
**   F(L[alpha^{S}_t(E1, C...)] x E2)  ->  F(L[alpha^{S}_t(E1 intersect pi[E2.A](E2), C...)] x E2)
** with F, L and E2 as for SJ: the conditions on every tuple leaving F
** include t.flag = E2.A and t overlap E2 (a sample is an event at its tick),
** and E2 is a selection of an entity relation (processes whose Command is
** "sleep": sigma[P.Command="sleep"](Process_P)).  O5 then leaves
** pi[E2.A](E2) alone as the argument: only those entities are sampled.
** Preconditions: (1)-(3) of SJ, and (4) t has no delta relation and is
** none (a delta needs the samples of every tick of every entity).
** Exact: a sample of entity x at tick c reaches F's output only with an E2
** tuple e, e.A = x, whose interval holds c.  The engine delivers the entity
** relation's begins and ends of an instant before its Clock ticks (docs/
** design.md, the loop), so at tick c the argument holds x exactly when some
** such e does: every sample that can pass F is taken; the others would
** fail F.  The operators on L's path use a sample only combined with
** others. */
static AlgNode *ruleSJS(Opt *o, AlgNode *n) { return sjRule(o, n, 1); }

/* AGG-WHERE: agg[f(X where W)]_t(E) -> agg[f(X where W)]_t(sigma[C](E)) for
** each conjunct C of W that looks at no time and no aggregate, in a scalar
** aggregate (no by-list).  The where stays; the selection then goes down
** with the other rules (O2 into an alpha's argument: `max(M.Rss where
** M.Process = "1234")` samples one process; SF into a traced sensor).
** Exact: the inner where only decides what counts; a tuple failing C
** counts for nothing, and a scalar aggregate's value exists whatever its
** tuples (from beginning, or from the first sample request over samples).
** A by-list aggregate is left alone: its groups exist by the tuples in
** effect, qualifying or not (Quel's partitions).  Fires once per
** aggregate (spec.wherePushed), and only over an alpha (through selections):
** over an entity relation or a derived one it would only add a selection. */
static void aggConjuncts(const AlgExpr *e, const AlgExpr **c, int *n, int max) {
  if (e->kind == AX_AND) {
    aggConjuncts(e->a, c, n, max);
    aggConjuncts(e->b, c, n, max);
  } else if (*n < max) {
    c[(*n)++] = e;
  }
}
static int refsAgg(const AlgExpr *e) {
  if (!e) return 0;
  return e->kind == AX_AGG || refsAgg(e->a) || refsAgg(e->b);
}
static AlgNode *ruleAggWhere(Opt *o, AlgNode *n) {
  if (n->kind != ALG_AGG || !n->agg || n->agg->nby || !n->agg->where || n->agg->wherePushed) return NULL;
  const AlgNode *to = n->kid[0]; /* only where it reaches a sensor (else it only costs a selection) */
  while (to->kind == ALG_SIGMA || to->kind == ALG_SIGMAT) to = to->kid[0];
  if (to->kind != ALG_ALPHA) return NULL;
  const AlgExpr *c[32];
  int nc = 0;
  aggConjuncts(n->agg->where, c, &nc, 32);
  AlgNode *k = n->kid[0];
  int any = 0;
  for (int i = 0; i < nc; i++) {
    if (exprHasTime(c[i]) || refsAgg(c[i]) || !exprIn(c[i], &k->sch)) continue;
    k = algSigma(o->a, algExprCopy(o->a, c[i]), k);
    any = 1;
  }
  if (!any) return NULL;
  AlgNode *m = copyNode(o, n);
  m->agg = tqArenaAlloc(o->a, sizeof(AlgAggSpec));
  *m->agg = *n->agg;
  m->agg->wherePushed = 1;
  m->kid[0] = k;
  algSchemaCompute(o->a, m);
  return m;
}

/* ================================================================ class 3: entity sources */

/* O4: sigma[1=K](E) -> K where E is an entity source and K a constant of
** its type: a named entity is in its entity set. */
static AlgNode *ruleO4(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || !entitySource(n->kid[0])) return NULL;
  const AlgExpr *q = n->pred;
  if (q->kind != AX_CMP || q->op != OPB_EQ) return NULL;
  const AlgCol *c = argCol(n->kid[0]);
  const AlgExpr *k = NULL;
  if (q->a->kind == AX_COL && streq(q->a->name, c->name) && streq(q->a->var, c->var) && q->b->kind == AX_CONST) k = q->b;
  if (q->b->kind == AX_COL && streq(q->b->name, c->name) && streq(q->b->var, c->var) && q->a->kind == AX_CONST) k = q->a;
  if (!k || k->type.kind != TY_ENTITY) return NULL;
  return algConst(o->a, k->type, k->ival);
}

/* O5: E0 intersect E -> E (either order) when E0 is the entity source of
** E's entity type: a subset of the entities intersected with all of them. */
static AlgNode *ruleO5(Opt *o, AlgNode *n) {
  if (n->kind != ALG_INTERSECT) return NULL;
  for (int side = 0; side < 2; side++) {
    const AlgEntity *ent = entitySource(n->kid[side]);
    const AlgCol *c = argCol(n->kid[1 - side]);
    if (ent && c && c->type.kind == TY_ENTITY && c->type.ent == ent) return n->kid[1 - side];
  }
  return NULL;
}

/* ================================================================ class 4: Clock */

static int isVarTime(const AlgExpr *e, const char *v) { return e->kind == AX_TVAR && streq(e->var, v); }

/* O6: piT[at C](sigmaT[C overlap t](alpha^{S}_t(E1, E2, ...) x Clock[i]_C))
**       -> piT[at t](alpha^{S}_t(E1, E2 intersect Clock[i], ...))
** for sampled alphas (S:P, S:T), either order of the product; selections
** and projections of the alpha's values between it and the product stay
** above it (sigma[R.Process=P1](alpha^{S:P}_R(...)) x Clock[10]).  The valid
** clause may be `at C`, `at t`, or `at begin of (t overlap C)`: under the
** overlap condition all are the common instant.  Exact: a sample taken at a
** Clock tick overlaps Clock[i] exactly when that tick is also one of
** Clock[i]'s, so sampling at Clock intersect Clock[i] gives the same tuples. */
static AlgNode *ruleO6(Opt *o, AlgNode *n) {
  if (n->kind != ALG_PIT || !n->validAt) return NULL;
  AlgNode *st = n->kid[0];
  if (st->kind != ALG_SIGMAT || st->pred->kind != AX_TOVERLAP) return NULL;
  AlgNode *p = st->kid[0];
  if (p->kind != ALG_PRODUCT && p->kind != ALG_OPRODUCT) return NULL;
  if (p->nkey) return NULL;
  for (int side = 0; side < 2; side++) {
    AlgNode *al = p->kid[side], *ck = p->kid[1 - side];
    /* selections and projections of the sample's values may sit between:
    ** they commute with the product and do not look at times */
    AlgNode *above[16];
    int nabove = 0;
    while ((al->kind == ALG_SIGMA || al->kind == ALG_PI) && nabove < 16) {
      above[nabove++] = al;
      al = al->kid[0];
    }
    if (al->kind != ALG_ALPHA || al->rel->mode != ALG_MODE_SAMPLED || ck->kind != ALG_CLOCK || !ck->var) continue;
    const AlgExpr *w = st->pred;
    if (!((isVarTime(w->a, ck->var) && isVarTime(w->b, al->var)) || (isVarTime(w->b, ck->var) && isVarTime(w->a, al->var))))
      continue;
    const AlgExpr *x = n->vfrom;
    int ok = isVarTime(x, ck->var) || isVarTime(x, al->var);
    if (!ok && x->kind == AX_BEGINOF) {
      const AlgExpr *y = x->a;
      ok = isVarTime(y, ck->var) || isVarTime(y, al->var) ||
           ((y->kind == AX_OVERLAP) && ((isVarTime(y->a, ck->var) && isVarTime(y->b, al->var)) ||
                                        (isVarTime(y->b, ck->var) && isVarTime(y->a, al->var))));
    }
    if (!ok) continue;
    AlgNode *clk = algClock(o->a, ck->clockN, NULL);
    AlgNode *na = copyNode(o, al);
    na->kid[1] = algIntersect(o->a, al->kid[1], clk);
    algSchemaCompute(o->a, na);
    for (int k = nabove - 1; k >= 0; k--) na = withKid(o, above[k], 0, na);
    AlgExpr *at = algExprNew(o->a, AX_TVAR, n->vfrom->type);
    at->var = al->var;
    return algPiT(o->a, 1, at, NULL, n->tvOut, na);
  }
  return NULL;
}

/* SENSOR (a relation with several sensors; docs/enabling.md):
**   piT[at C](sigmaT[C overlap t](L[alpha^{T:x}_t(E)] x Clock[i]_C))
**     -> piT[at C](sigmaT[C overlap t](L[alpha^{S:y}_t(E', Clock)] x Clock[i]_C))
** when t's relation has a sampled sensor as well as its traced one and the
** sampled one costs less per flag entity and second: its cost per packet at
** one packet per tick of Clock[i], against the traced one's cost per packet
** times its declared rate.  O6 then samples at Clock[i]'s ticks only.
** L is selections and projections of t's values (O6's); either order of
** the product; the valid clause is O6's (at C, at begin of C, at begin of
** (t overlap C)).  E' is E when both sensors have their flag in the same
** role, else E must be an entity source (every entity) and E' is the
** entity source of the sampled sensor's flag.
** Exact: the answer holds a tuple of t at tick c of Clock[i] exactly when
** t's interval holds c; nothing else reads t's time (piT[at C] drops it,
** L does not look at times).  The sample at c is the tuples of t valid at
** c (an interval that begins at c is in it, one that ends at c is not,
** the closed-open overlap), on every flag entity the sensor is enabled on:
** all of them (E' an entity source) or E's (the same role).  The one
** condition of the data: a tuple of t lies within its flag entity's
** lifetime (a sensor lives in its flag entity: a processor that is gone
** reports nothing), which every live source keeps.
** Only a sensor the operation can ask is chosen (AlgRel.unasked, set by
** the engine before optimizing: a live collection asks a sensor that one
** of its processor modules produces): the traced one when the sampled
** cannot be asked whatever the costs, the sampled one when the traced
** cannot be asked whatever the costs. */
static const AlgNode *sensorAlpha(AlgNode *n, const AlgNode **clock) {
  if (n->kind != ALG_PIT || !n->validAt) return NULL;
  AlgNode *st = n->kid[0];
  if (st->kind != ALG_SIGMAT || st->pred->kind != AX_TOVERLAP) return NULL;
  AlgNode *p = st->kid[0];
  if ((p->kind != ALG_PRODUCT && p->kind != ALG_OPRODUCT) || p->nkey) return NULL;
  for (int side = 0; side < 2; side++) {
    const AlgNode *al = p->kid[side], *ck = p->kid[1 - side];
    while (al->kind == ALG_SIGMA || al->kind == ALG_PI) al = al->kid[0];
    if (al->kind != ALG_ALPHA || al->rel->mode != ALG_MODE_TRACED || !al->rel->altSensor ||
        al->rel->altSensor->mode != ALG_MODE_SAMPLED)
      continue;
    if (ck->kind != ALG_CLOCK || !ck->var) continue;
    const AlgExpr *w = st->pred;
    if (!((isVarTime(w->a, ck->var) && isVarTime(w->b, al->var)) || (isVarTime(w->b, ck->var) && isVarTime(w->a, al->var))))
      continue;
    const AlgExpr *x = n->vfrom;
    int ok = isVarTime(x, ck->var);
    if (!ok && x->kind == AX_BEGINOF) {
      const AlgExpr *y = x->a;
      ok = isVarTime(y, ck->var) ||
           ((y->kind == AX_OVERLAP) && ((isVarTime(y->a, ck->var) && isVarTime(y->b, al->var)) ||
                                        (isVarTime(y->b, ck->var) && isVarTime(y->a, al->var))));
    }
    if (!ok) continue;
    *clock = ck;
    return al;
  }
  return NULL;
}

/* The default entity source for attribute ai of r: E, or pi[E](E). */
static AlgNode *sourceFor(Opt *o, const AlgRel *r, int ai) {
  const AlgEntity *ent = r->attr[ai].type.ent;
  AlgNode *src = algSource(o->a, ent->rel, NULL);
  if (ent->rel->nattr == 1) return src;
  AlgExpr **e = tqArenaAlloc(o->a, sizeof(AlgExpr *));
  const char **nm = tqArenaAlloc(o->a, sizeof(char *));
  e[0] = algExprCol(o->a, NULL, ent->rel->attr[0].name, ent->rel->attr[0].type);
  nm[0] = ent->rel->attr[0].name;
  return algPi(o->a, 1, e, nm, NULL, src);
}

/* Cost per flag entity and second, in ns of the sensor's work per second,
** of the traced sensor r and of the sampled sensor m asked every n base
** ticks. */
static double costTraced(const AlgRel *r) { return (double)r->cost * (double)r->rate; }
static double costSampled(const AlgRel *m, int n) { return (double)m->cost * 1e9 / ((double)n * (double)m->tick); }

/* Copy of the selections and projections from n down to the alpha al,
** with al replaced by na. */
static AlgNode *replaceAlpha(Opt *o, AlgNode *n, const AlgNode *al, AlgNode *na) {
  if (n == al) return na;
  if (n->kind != ALG_SIGMA && n->kind != ALG_PI && n->kind != ALG_PRODUCT && n->kind != ALG_OPRODUCT) return n;
  for (int i = 0; i < n->nkid; i++) {
    AlgNode *k = replaceAlpha(o, n->kid[i], al, na);
    if (k != n->kid[i]) return withKid(o, n, i, k);
  }
  return n;
}

/* SENSOR, another traced sensor (a relation declared `traced on ...
** traced on ...`: R and R_traced, for instance a generated sensor and a
** kernel one):
**   alpha^{T:x}_t(E) -> alpha^{T:y}_t(E')
** when the other one costs less per packet.  E' is E when both sensors
** have their flag in the same role; otherwise E must be an entity source
** (every entity) and E' is the entity source of the other sensor's flag.
** Exact: a traced sensor enabled on a flag entity reports every tuple of
** t that begins while the entity exists; the same entities (E = E'), or
** all of them (E and E' entity sources), give the same tuples, each once,
** under the condition of the data that every tuple lies within the
** lifetime of both its flag entities (a live source keeps it).  The
** packets are the same ones, so their costs per packet compare (the
** declared rates do not enter).  As for the sampled sensor: only a sensor
** the operation can ask is chosen, and a relation some query traces on
** every entity keeps its first sensor (its packets are written anyway). */
static AlgNode *sensorTraced(Opt *o, AlgNode *n) {
  const AlgRel *r = n->rel, *m = r->altSensor;
  if (r->tracedEverywhere) {
    n->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: another query enables it on every %s entity, so its packets are "
                            "written anyway; %s as well would add its cost (the cheapest combination)",
                            r->name, algRoleName(r->flagRole), m->name);
    return NULL;
  }
  if (m->unasked) {
    n->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: its other traced sensor %s (%lld ns a packet against %lld ns) cannot "
                            "be asked: %s", r->name, m->name, (long long)m->cost, (long long)r->cost, m->unasked);
    return NULL;
  }
  if (m->cost >= r->cost && !r->unasked) {
    n->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s, the cheaper: %lld ns a packet against %lld ns for %s (the same "
                            "packets)", r->name, (long long)r->cost, (long long)m->cost, m->name);
    return NULL;
  }
  AlgNode *arg0 = n->kid[0];
  if (m->flagRole != r->flagRole) {
    if (!entitySource(n->kid[0])) {
      n->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: it is enabled on some %s entities only, and its other traced sensor "
                              "%s lives in the %s, which no rule narrows to those", r->name, algRoleName(r->flagRole),
                              m->name, algRoleName(m->flagRole));
      return NULL;
    }
    arg0 = sourceFor(o, r, m->flagAttr);
  }
  const char *why = m->flagRole == r->flagRole ? "both report the same tuples on the same entities"
                                               : "enabled on every entity, both report every tuple (O2 may then narrow it in its role)";
  AlgNode *na = copyNode(o, n);
  na->rel = m;
  na->variant = algVariantOf(m);
  na->kid[0] = arg0;
  if (m->cost >= r->cost)
    na->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: the first traced sensor %s (%lld ns a packet against %lld ns) cannot "
                             "be asked: %s; exact: %s", m->name, r->name, (long long)r->cost, (long long)m->cost, r->unasked, why);
  else
    na->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s, the cheaper: %lld ns a packet against %lld ns for %s; exact: %s",
                             m->name, (long long)m->cost, (long long)r->cost, r->name, why);
  algSchemaCompute(o->a, na);
  return na;
}

static AlgNode *ruleSensor(Opt *o, AlgNode *n) {
  if (n->kind == ALG_ALPHA && n->rel->mode == ALG_MODE_TRACED && n->rel->altSensor && n->rel->altSensor->mode == ALG_MODE_TRACED)
    return sensorTraced(o, n);
  const AlgNode *ck = NULL;
  const AlgNode *al = sensorAlpha(n, &ck);
  if (!al) return NULL;
  const AlgRel *r = al->rel, *m = r->altSensor;
  double ct = costTraced(r), cs = costSampled(m, ck->clockN);
  AlgNode *arg0 = al->kid[0];
  if (r->tracedEverywhere) {
    ((AlgNode *)al)->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: another query enables it on every %s entity, so its "
                                          "packets are written anyway; sampling as well would add %s's cost (the cheapest "
                                          "combination)", r->name, algRoleName(r->flagRole), m->name);
    return NULL;
  }
  if (m->flagRole != r->flagRole) {
    if (!entitySource(al->kid[0])) {
      if (!al->note)
        ((AlgNode *)al)->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: it is enabled on some %s entities only, and its "
                                              "sampled sensor lives in the %s, which no rule narrows to those", r->name,
                                              algRoleName(r->flagRole), algRoleName(m->flagRole));
      return NULL;
    }
    arg0 = sourceFor(o, r, m->flagAttr);
  }
  if (m->unasked) {
    /* the operation cannot ask the sampled sensor (a live collection
    ** whose processor modules do not produce it): whatever the costs */
    ((AlgNode *)al)->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: its sampled sensor %s (%.0f ns/s sampled at Clock[%d] "
                                          "against %.0f ns/s traced) cannot be asked: %s", r->name, m->name, cs, ck->clockN, ct,
                                          m->unasked);
    return NULL;
  }
  if (cs >= ct && !r->unasked) {
    ((AlgNode *)al)->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s, the cheaper: %.0f ns/s per %s (%lld ns x %lld/s) against "
                                          "%.0f ns/s sampled at Clock[%d] (%s, %lld ns a sample)", r->name, ct, algRoleName(r->flagRole),
                                          (long long)r->cost, (long long)r->rate, cs, ck->clockN, m->name, (long long)m->cost);
    return NULL;
  }
  AlgNode *args[3];
  int na = 2;
  args[0] = arg0;
  args[1] = algClock(o->a, 1, NULL);
  if (m->flagRole == ROLE_TARGET) {
    args[2] = sourceFor(o, r, r->performerAttr);
    na = 3;
  }
  AlgNode *alpha = algAlpha(o->a, m, algVariantOf(m), al->var, na, args);
  if (cs >= ct) /* the traced sensor would be the cheaper, but cannot be asked */
    alpha->note = tqArenaPrintf(o->a, "SENSOR: sampled sensor %s: the traced sensor %s (%.0f ns/s, against %.0f ns/s sampled at "
                                "Clock[%d]) cannot be asked: %s; exact: the query reads %s only at Clock[%d]'s ticks",
                                m->name, r->name, ct, cs, ck->clockN, r->unasked, al->var, ck->clockN);
  else
    alpha->note = tqArenaPrintf(o->a, "SENSOR: sampled sensor %s, the cheaper: %.0f ns/s per %s sampled at Clock[%d] (%lld ns a sample) "
                                "against %.0f ns/s traced (%lld ns x %lld/s); exact: the query reads %s only at Clock[%d]'s ticks",
                                m->name, cs, algRoleName(m->flagRole), ck->clockN, (long long)m->cost, ct, (long long)r->cost,
                                (long long)r->rate, al->var, ck->clockN);
  AlgNode *st = n->kid[0];
  AlgNode *np = replaceAlpha(o, st->kid[0], al, alpha);
  return withKid(o, n, 0, withKid(o, st, 0, np));
}

/* NOW-CLIP: piT[at now, clipped by agg_i](... agg_i ...)
**       -> piT[at now, clipped by agg_i](... sigmaT[agg_i overlap now](agg_i) ...)
** through selections and products.  Exact: the result (an event at now)
** keeps only the aggregate tuples whose span holds now, so the others can
** be dropped before the product, as soon as their end is known: a `for
** ever` profile read at now joins only each group's last value, not every
** value it ever had. */
static int isNowClip(const AlgNode *n) {
  const AlgExpr *p = n->kind == ALG_SIGMAT ? n->pred : NULL;
  return p && p->kind == AX_TOVERLAP && p->a->kind == AX_TVAR && p->b->kind == AX_NOW &&
         n->kid[0]->kind == ALG_AGG && streq(p->a->var, n->kid[0]->var);
}
static int inClip(const AlgExpr *e, const char *var) {
  if (!e) return 0;
  if (e->kind == AX_TVAR) return streq(e->var, var);
  return (e->kind == AX_OVERLAP || e->kind == AX_TOVERLAP) && (inClip(e->a, var) || inClip(e->b, var));
}
static AlgNode *clipAggs(Opt *o, AlgNode *n, const AlgExpr *clip) {
  if (isNowClip(n)) return NULL;
  if (n->kind == ALG_AGG) {
    if (!inClip(clip, n->var)) return NULL;
    AlgExpr *v = algExprNew(o->a, AX_TVAR, (AlgType){TY_TIME, NULL, NULL});
    v->var = n->var;
    AlgExpr *now = algExprNew(o->a, AX_NOW, (AlgType){TY_TIME, NULL, NULL});
    return algSigmaT(o->a, algExprBin(o->a, AX_TOVERLAP, 0, tyBool(), v, now), n);
  }
  if (n->kind != ALG_SIGMA && n->kind != ALG_SIGMAT && n->kind != ALG_PRODUCT && n->kind != ALG_OPRODUCT) return NULL;
  AlgNode *c = NULL;
  for (int i = 0; i < n->nkid; i++) {
    AlgNode *k = clipAggs(o, c ? c->kid[i] : n->kid[i], clip);
    if (k) c = withKid(o, c ? c : n, i, k);
  }
  return c;
}
static AlgNode *ruleNowClip(Opt *o, AlgNode *n) {
  if (n->kind != ALG_PIT || !n->validAt || !n->vclip || n->vfrom->kind != AX_NOW) return NULL;
  AlgNode *k = clipAggs(o, n->kid[0], n->vclip);
  return k ? withKid(o, n, 0, k) : NULL;
}

static int64_t gcdI(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* O7: Clock[n] intersect Clock[m] -> Clock[lcm(n, m)] (the paper's
** Clock[n] intersect Clock[n*i] -> Clock[n*i] is the case m = n*i).  Exact:
** Clock[k] ticks at the multiples of k base ticks. */
static AlgNode *ruleO7(Opt *o, AlgNode *n) {
  if (n->kind != ALG_INTERSECT || n->kid[0]->kind != ALG_CLOCK || n->kid[1]->kind != ALG_CLOCK) return NULL;
  int64_t a = n->kid[0]->clockN, b = n->kid[1]->clockN;
  int64_t l = a / gcdI(a, b) * b;
  if (l > 1000000000) return NULL;
  return algClock(o->a, (int)l, NULL);
}

/* ================================================================ class 5: operator variants */

/* Is the subtree rooted at path position d only under pi/piT nodes up to the root? */
static int atRoot(const Opt *o) {
  for (int i = 0; i < o->depth; i++)
    if (o->path[i]->kind != ALG_PI) return 0;
  return 1;
}

/* PIT-ID: piT[at V](E) -> E when E's only time component is the event V,
** and piT[from begin of V to end of V](E) -> E when it is the interval V;
** only where the result's time is not named (the query's own result), so
** nothing above refers to it. */
static AlgNode *rulePiTId(Opt *o, AlgNode *n) {
  if (n->kind != ALG_PIT || n->tvOut || !atRoot(o)) return NULL;
  const AlgSchema *s = &n->kid[0]->sch;
  if (s->ntv != 1) return NULL;
  const char *v = s->tv[0].var;
  if (n->validAt) {
    if (s->tv[0].isEvent && isVarTime(n->vfrom, v)) return n->kid[0];
    return NULL;
  }
  if (!s->tv[0].isEvent && n->vfrom->kind == AX_BEGINOF && isVarTime(n->vfrom->a, v) && n->vto->kind == AX_ENDOF &&
      isVarTime(n->vto->a, v))
    return n->kid[0];
  return NULL;
}

/* PI-ID: the query's root pi that outputs exactly its input's columns in
** order is dropped (result attributes are named by the query). */
static AlgNode *rulePiId(Opt *o, AlgNode *n) {
  if (n->kind != ALG_PI || o->depth != 0) return NULL;
  const AlgSchema *s = &n->kid[0]->sch;
  if (s->ncol != n->npi) return NULL;
  for (int i = 0; i < n->npi; i++) {
    const AlgExpr *e = n->pi[i];
    if (e->kind != AX_COL || !streq(e->var, s->col[i].var) || !streq(e->name, s->col[i].name)) return NULL;
  }
  return n->kid[0];
}

/* X1: sigmaT[... a overlap b ...](E1 x E2) -> sigmaT[...](E1 x1 E2) when a is
** a time component of E1 and b of E2 (a conjunct of the predicate).  The
** selection stays; x1 only skips pairs that cannot overlap and forgets
** tuples no future tuple can overlap (see runtime/op_product.c). */
static const AlgExpr *findOverlap(const AlgExpr *e, const AlgSchema *l, const AlgSchema *r, int *swap) {
  if (e->kind == AX_AND) {
    const AlgExpr *x = findOverlap(e->a, l, r, swap);
    return x ? x : findOverlap(e->b, l, r, swap);
  }
  if (e->kind != AX_TOVERLAP || e->a->kind != AX_TVAR || e->b->kind != AX_TVAR) return NULL;
  if (algSchemaTvar(l, e->a->var) >= 0 && algSchemaTvar(r, e->b->var) >= 0) {
    *swap = 0;
    return e;
  }
  if (algSchemaTvar(l, e->b->var) >= 0 && algSchemaTvar(r, e->a->var) >= 0) {
    *swap = 1;
    return e;
  }
  return NULL;
}
static AlgNode *ruleX1(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMAT) return NULL;
  AlgNode *p = chainProduct(n->kid[0]);
  if (!p || p->kind != ALG_PRODUCT) return NULL;
  int swap = 0;
  const AlgExpr *ov = findOverlap(n->pred, &p->kid[0]->sch, &p->kid[1]->sch, &swap);
  if (!ov) return NULL;
  AlgNode *np = copyNode(o, p);
  np->kind = ALG_OPRODUCT;
  np->ovL = swap ? ov->b->var : ov->a->var;
  np->ovR = swap ? ov->a->var : ov->b->var;
  algSchemaCompute(o->a, np);
  return algSigmaT(o->a, n->pred, rebuildChain(o, n->kid[0], np));
}

/* JOIN: sigma[E1.a = E2.b](E1 x E2) -> E1 x[E1.a=E2.b] E2 (also x1): the
** product forms only pairs with equal keys (a hash join).  Exact. */
static AlgNode *ruleJoin(Opt *o, AlgNode *n) {
  if (n->kind != ALG_SIGMA || n->pred->kind != AX_CMP || n->pred->op != OPB_EQ) return NULL;
  AlgNode *p = n->kid[0];
  if (p->kind != ALG_PRODUCT && p->kind != ALG_OPRODUCT) return NULL;
  const AlgExpr *x = n->pred->a, *y = n->pred->b;
  if (x->type.kind == TY_FLOAT || y->type.kind == TY_FLOAT || !algTypeEq(x->type, y->type)) return NULL;
  const AlgSchema *l = &p->kid[0]->sch, *r = &p->kid[1]->sch;
  if (exprIn(y, l) && exprIn(x, r) && !exprIn(x, l)) {
    const AlgExpr *t = x;
    x = y;
    y = t;
  }
  if (!exprIn(x, l) || !exprIn(y, r) || exprIn(x, r) || exprIn(y, l)) return NULL;
  if (exprHasTime(x) || exprHasTime(y)) return NULL;
  AlgNode *np = copyNode(o, p);
  np->nkey = p->nkey + 1;
  np->keyL = tqArenaAlloc(o->a, sizeof(AlgExpr *) * (size_t)np->nkey);
  np->keyR = tqArenaAlloc(o->a, sizeof(AlgExpr *) * (size_t)np->nkey);
  for (int i = 0; i < p->nkey; i++) {
    np->keyL[i] = p->keyL[i];
    np->keyR[i] = p->keyR[i];
  }
  np->keyL[p->nkey] = algExprCopy(o->a, x);
  np->keyR[p->nkey] = algExprCopy(o->a, y);
  algSchemaCompute(o->a, np);
  return np;
}

/* ================================================================ driver */

static const Rule rules[] = {
    {"SPLIT-AND", 1, ruleSplitAnd},   {"SPLIT-OVERLAP", 1, ruleSplitOverlap}, {"SIGMA-DOWN", 1, ruleSigmaDown},
    {"O1", 1, ruleO1},                {"O1T", 1, ruleO1T},                   {"SIGMA-PI", 1, ruleSigmaPi},
    {"SIGMA-PIT", 1, ruleSigmaPiT},   {"SIGMAT-PI", 1, ruleSigmaTPi},        {"PI-MERGE", 1, rulePiMerge},
    {"O2", 2, ruleO2},                {"O3-ONCE", 2, ruleO3Once},            {"O3", 2, ruleO3},
    {"SJ", 2, ruleSJ},
    {"SJS", 2, ruleSJS},              {"AGG-WHERE", 2, ruleAggWhere},
    {"SF", 2, ruleSF},
    {"O4", 3, ruleO4},
    {"O5", 3, ruleO5},                {"SENSOR", 4, ruleSensor},             {"O6", 4, ruleO6},                     {"O7", 4, ruleO7},
    {"NOW-CLIP", 4, ruleNowClip},
    {"PIT-ID", 5, rulePiTId},         {"PI-ID", 5, rulePiId},                {"X1", 5, ruleX1},
    {"JOIN", 5, ruleJoin},
};

static unsigned char ruleOff[TQ_ARRAY_SIZE(rules)]; /* algOptRule: turned off */

int algOptRule(const char *name, int on) {
  for (size_t r = 0; r < TQ_ARRAY_SIZE(rules); r++)
    if (streq(rules[r].name, name)) {
      ruleOff[r] = !on;
      return 0;
    }
  return -1;
}

static void recompute(TqArena *a, AlgNode *n) {
  for (int i = 0; i < n->nkid; i++) recompute(a, n->kid[i]);
  algSchemaCompute(a, n);
}

/* Tries the rules of class cls at n and below (pre-order).  On the first
** rewrite, replaces the node and returns 1. */
static int applyAt(Opt *o, AlgNode **slot, int cls) {
  AlgNode *n = *slot;
  for (size_t r = 0; r < TQ_ARRAY_SIZE(rules); r++) {
    if (rules[r].cls != cls || ruleOff[r]) continue;
    AlgNode *m = rules[r].fn(o, n);
    if (!m) continue;
    *slot = m;
    recompute(o->a, o->root);
    if (o->trace) {
      tqBufPrintf(o->trace, "%s: ", rules[r].name);
      algPrint(o->root, o->trace);
      tqBufPuts(o->trace, "\n");
    }
    return 1;
  }
  if (o->depth >= (int)TQ_ARRAY_SIZE(o->path)) return 0;
  o->path[o->depth++] = n;
  for (int i = 0; i < n->nkid; i++) {
    if (applyAt(o, &n->kid[i], cls)) {
      o->depth--;
      return 1;
    }
  }
  o->depth--;
  return 0;
}

static AlgNode *deepCopy(Opt *o, const AlgNode *n) { return algNodeCopy(o->a, n); }

/* ---------------------------------------------------------------- finishing rules */

/* Columns of (var, name) used by expression e, added to set. */
typedef struct ColSet {
  const char *var[256];
  const char *name[256];
  int n;
} ColSet;
static void colsOf(const AlgExpr *e, ColSet *s) {
  if (!e) return;
  if (e->kind == AX_COL && s->n < 256) {
    for (int i = 0; i < s->n; i++)
      if (streq(s->var[i], e->var) && streq(s->name[i], e->name)) goto kids;
    s->var[s->n] = e->var;
    s->name[s->n++] = e->name;
  }
kids:
  colsOf(e->a, s);
  colsOf(e->b, s);
}
static void nodeCols(const AlgNode *n, ColSet *s) {
  colsOf(n->pred, s);
  for (int i = 0; i < n->npi; i++) colsOf(n->pi[i], s);
  for (int i = 0; i < n->nkey; i++) {
    colsOf(n->keyL[i], s);
    colsOf(n->keyR[i], s);
  }
}

/* PI-PUSH: under a pi, each product input keeps only the columns used above
** it (projection push-down); the time components are kept.  Exact. */
static int piPush(Opt *o, AlgNode *n, ColSet *used, int underPi) {
  int changed = 0;
  if (n->kind == ALG_PRODUCT || n->kind == ALG_OPRODUCT) {
    ColSet here = *used;
    nodeCols(n, &here);
    for (int side = 0; side < 2 && underPi; side++) {
      AlgNode *k = n->kid[side];
      int keep = 0, idx[256];
      for (int i = 0; i < k->sch.ncol && i < 256; i++) {
        for (int j = 0; j < here.n; j++)
          if (streq(here.var[j], k->sch.col[i].var) && streq(here.name[j], k->sch.col[i].name)) {
            idx[keep++] = i;
            break;
          }
      }
      if (keep == k->sch.ncol || k->kind == ALG_PI) continue;
      AlgExpr **pe = tqArenaAlloc(o->a, sizeof(AlgExpr *) * (size_t)(keep ? keep : 1));
      const char **pn = tqArenaAlloc(o->a, sizeof(char *) * (size_t)(keep ? keep : 1));
      const char **pv = tqArenaAlloc(o->a, sizeof(char *) * (size_t)(keep ? keep : 1));
      for (int i = 0; i < keep; i++) {
        const AlgCol *c = &k->sch.col[idx[i]];
        pe[i] = algExprCol(o->a, c->var, c->name, c->type);
        pn[i] = c->name;
        pv[i] = c->var;
      }
      AlgNode *np = algPi(o->a, keep, pe, pn, NULL, k);
      np->piVars = pv;
      algSchemaCompute(o->a, np);
      n->kid[side] = np;
      changed = 1;
      if (o->trace) tqBufPrintf(&o->pushed, "  kept %d of %d columns of a product input\n", keep, k->sch.ncol);
    }
    for (int i = 0; i < n->nkid; i++) changed |= piPush(o, n->kid[i], &here, underPi);
    return changed;
  }
  if (n->kind == ALG_PI) {
    ColSet fresh = {0};
    nodeCols(n, &fresh);
    for (int i = 0; i < n->nkid; i++) changed |= piPush(o, n->kid[i], &fresh, 1);
    return changed;
  }
  ColSet here = *used;
  nodeCols(n, &here);
  /* a chain of selections (one per conjunct of a where: as long as the
  ** condition) is walked in a loop, not by recursion */
  while ((n->kind == ALG_SIGMA || n->kind == ALG_SIGMAT || n->kind == ALG_PIT) && n->nkid == 1 &&
         (n->kid[0]->kind == ALG_SIGMA || n->kid[0]->kind == ALG_SIGMAT || n->kid[0]->kind == ALG_PIT)) {
    n = n->kid[0];
    nodeCols(n, &here);
  }
  if (n->kind == ALG_ALPHA || n->kind == ALG_INTERSECT || n->kind == ALG_AGG) {
    /* arguments are independent relations */
    for (int i = 0; i < n->nkid; i++) {
      ColSet none = {0};
      changed |= piPush(o, n->kid[i], &none, 0);
    }
    return changed;
  }
  for (int i = 0; i < n->nkid; i++) changed |= piPush(o, n->kid[i], &here, underPi);
  return changed;
}

/* MERGE-SIGMA: sigma[a](sigma[b](E)) -> sigma[a and b](E), same for sigmaT. */
static int mergeSigma(Opt *o, AlgNode **slot) {
  AlgNode *n = *slot;
  int changed = 0;
  for (int i = 0; i < n->nkid; i++) changed |= mergeSigma(o, &n->kid[i]);
  if ((n->kind == ALG_SIGMA || n->kind == ALG_SIGMAT) && n->kid[0]->kind == n->kind) {
    AlgNode *k = n->kid[0];
    *slot = mkSigma(o, n->kind, algExprBin(o->a, AX_AND, 0, tyBool(), n->pred, k->pred), k->kid[0]);
    changed = 1;
  }
  return changed;
}

/* SENSOR's word on every traced alpha of a relation with a sampled sensor
** that the rule left traced for want of the shape it needs. */
static void sensorNotes(Opt *o, AlgNode *n) {
  for (int i = 0; i < n->nkid; i++) sensorNotes(o, n->kid[i]);
  if (n->kind == ALG_ALPHA && n->rel->altSensor && n->rel->altSensor->mode == ALG_MODE_SAMPLED && n->rel->mode == ALG_MODE_TRACED &&
      !n->note)
    n->note = tqArenaPrintf(o->a, "SENSOR: traced sensor %s: the query reads %s's intervals, not only its state at a Clock's ticks "
                            "(piT[at C](sigmaT[C overlap %s](... x Clock[i]_C))), so its sampled sensor %s would not answer it exactly",
                            n->rel->name, n->var, n->var, n->rel->altSensor->name);
}

/* SF's word on a sampled alpha under a selection SF would check at a traced
** sensor: a sample answers the engine's request for an entity, so only the
** entities asked narrow what a sampled sensor gives (O2, SJS and AGG-WHERE
** put the conditions on the flag into the argument: a PCP instance
** profile, the /proc files read); a condition on the values is checked in
** the monitor. */
static void sampledNotes(Opt *o, AlgNode *n) {
  for (int i = 0; i < n->nkid; i++) sampledNotes(o, n->kid[i]);
  if (n->kind != ALG_SIGMA) return;
  AlgNode *al = n->kid[0];
  while (al->kind == ALG_SIGMA) al = al->kid[0];
  int sampled = al->kind == ALG_ALPHA && !al->rel->entity && (al->rel->mode == ALG_MODE_SAMPLED || al->rel->deltaOf);
  if (!sampled || al->note || !algSensorPred(n->pred, al->var)) return;
  TqBuf f = {0}, g = {0};
  algExprPrint(n->pred, &f);
  if (al->apred) {
    algExprPrint(al->apred, &g);
    al->note = tqArenaPrintf(o->a, "SF: sampled only on the entities that can pass %s (the argument: %s); the rest is "
                             "checked in the monitor", f.s, g.s);
  } else {
    al->note = tqArenaPrintf(o->a, "SF: not at the sensor: a sample answers a request for an entity of the argument; "
                             "%s is checked in the monitor", f.s);
  }
  tqBufFree(&f);
  tqBufFree(&g);
}

AlgNode *algOptimize(TqArena *a, const AlgNode *t, TqBuf *trace) {
  Opt o = {0};
  o.a = a;
  o.trace = trace;
  o.root = deepCopy(&o, t);
  recompute(a, o.root);
  int guard = 0;
  for (int cls = 1; cls <= 5 && guard < 10000; guard++) {
    o.depth = 0;
    if (applyAt(&o, &o.root, cls)) {
      cls = 1; /* start again from the first class */
      continue;
    }
    cls++;
  }
  for (size_t r = 0; r < TQ_ARRAY_SIZE(rules); r++)
    if (rules[r].fn == ruleSensor && !ruleOff[r]) sensorNotes(&o, o.root);
  ColSet none = {0};
  if (piPush(&o, o.root, &none, 0)) {
    recompute(a, o.root);
    if (trace) {
      tqBufPuts(trace, "PI-PUSH: ");
      algPrint(o.root, trace);
      tqBufPuts(trace, "\n");
      if (o.pushed.s) tqBufPuts(trace, o.pushed.s);
    }
  }
  tqBufFree(&o.pushed);
  if (mergeSigma(&o, &o.root)) {
    recompute(a, o.root);
    if (trace) {
      tqBufPuts(trace, "MERGE-SIGMA: ");
      algPrint(o.root, trace);
      tqBufPuts(trace, "\n");
    }
  }
  for (size_t r = 0; r < TQ_ARRAY_SIZE(rules); r++)
    if (rules[r].fn == ruleSF && !ruleOff[r]) sampledNotes(&o, o.root);
  return o.root;
}
