/*
** algebra.h - the catalog of relations and the temporal relational algebra
** (paper section 8; docs/design.md section 2).
**
** The catalog describes what the sensor configuration declared: entity
** types, primitive relations (one per sensor) with their collection mode
** and flag placement, and derived relations (named query results).
**
** An algebra tree is read-only once built (the runtime builds a parallel
** tree of operator states); nodes and expressions live in the program's
** arena.  Columns are referred to by (tuple variable, attribute) names and
** resolved to positions only by the runtime, so optimizer rewrites can move
** predicates freely.  Every node knows its output schema: explicit columns
** and one time component per tuple variable that still carries time.
*/
#ifndef ALGEBRA_H
#define ALGEBRA_H

#include "../base/tq.h"

/* ================================================================ shared codes */
enum { ROLE_NONE = 0, ROLE_PERFORMER, ROLE_INITIATOR, ROLE_TARGET };
enum { MODE_TRACED = 1, MODE_SAMPLED, MODE_DISABLE };
enum { REL_EVENT = 1, REL_INTERVAL };
enum { VALID_AT = 1, VALID_FROMTO };
enum { OPB_ADD = 1, OPB_SUB, OPB_MUL, OPB_DIV, OPB_EQ, OPB_NE, OPB_LT, OPB_LE, OPB_GT, OPB_GE, OPB_AND, OPB_OR };
enum {
  AGG_COUNT = 1, AGG_COUNTU, AGG_SUM, AGG_SUMU, AGG_AVG, AGG_AVGU,
  AGG_MIN, AGG_MAX, AGG_ANY, AGG_FIRST, AGG_LAST
};
enum { WIN_INSTANT = 0, WIN_EVER, WIN_EACH };
/* AST_OPT kinds: sensor options (collection mode, counter, key) and
** aggregate clauses (by, window, where, when). */
enum {
  OPT_MODE = 1, /* op2 = MODE_*, i = role */
  OPT_COUNTER,  /* i = bits */
  OPT_KEY,      /* k0 = id list */
  OPT_DELTA,    /* s = name of the delta relation (loc2) */
  OPT_BY,       /* k0 = expression list */
  OPT_WINDOW,   /* op2 = WIN_*, i = duration */
  OPT_WHERE,    /* k0 */
  OPT_WHEN,     /* k0 */
  OPT_COST,     /* i = ns per packet (the sensor of the mode option before it) */
  OPT_RATE,     /* i = packets per second per flag entity (a traced sensor) */
  OPT_ONCE      /* a disable-traced sensor fires at most once per flag entity */
};

/* ================================================================ types */
typedef enum AlgTypeKind {
  TY_NONE = 0,
  TY_INT,    /* 64-bit integer */
  TY_FLOAT,  /* double */
  TY_STRING, /* interned symbol */
  TY_ENUM,   /* index into the enumeration's values */
  TY_ENTITY, /* entity: symbol of its external name */
  TY_BOOL,   /* predicate result (internal) */
  TY_TIME    /* temporal value (internal) */
} AlgTypeKind;

typedef struct AlgEnum {
  int n;                 /* number of values */
  const char **names;    /* value names */
} AlgEnum;

struct AlgEntity;
typedef struct AlgType {
  AlgTypeKind kind;             /* what it is */
  const AlgEnum *en;            /* values, for TY_ENUM */
  const struct AlgEntity *ent;  /* entity type, for TY_ENTITY */
} AlgType;

int algTypeEq(AlgType a, AlgType b);
const char *algTypeName(AlgType t, char *buf, size_t n);

/* ================================================================ catalog */
enum { ALG_MODE_ALWAYS = 0, ALG_MODE_TRACED = 1, ALG_MODE_SAMPLED = 2, ALG_MODE_DISABLE = 3 };

typedef struct AlgAttr {
  const char *name; /* attribute name */
  AlgType type;     /* its type */
  int role;         /* ROLE_PERFORMER/INITIATOR/TARGET or 0 */
} AlgAttr;

typedef struct AlgRel AlgRel;
typedef struct AlgEntity {
  const char *name; /* type name, also the entity relation's name */
  AlgRel *rel;      /* the entity relation (always enabled, an entity source) */
  TqLoc loc;        /* declaration */
} AlgEntity;

struct AlgRel {
  const char *name;     /* relation name */
  int id;               /* sensor id: index in the catalog's rels, from 1 */
  int isEvent;          /* event relation (else interval) */
  AlgEntity *entity;    /* non-NULL for an entity relation */
  int nattr;            /* number of explicit attributes */
  AlgAttr *attr;        /* attributes in declared order */
  int mode;             /* ALG_MODE_* */
  int flagRole;         /* role holding the enable flag (0 for always) */
  int flagAttr;         /* index of the attribute with that role, -1 if none */
  int performerAttr;    /* index of the performer attribute, -1 if none */
  int counterBits;      /* width of the enable counter (1 = flag) */
  int nkey;             /* keyed interval: number of key attributes */
  int *key;             /* key attribute indexes */
  struct AlgRel *delta; /* sampled relation: its delta relation, if declared */
  struct AlgRel *deltaOf; /* delta relation: the sampled relation it is computed from */
  /* several sensors of one relation (docs/enabling.md, SENSOR): the
  ** relation is its first sensor; each other one is an AlgRel of its own
  ** (its own sensor id, mode and flag; name "R_sampled") whose packets are
  ** R's tuples, answered from R's recorded state in a replay */
  struct AlgRel *altSensor; /* the relation: its other sensor (NULL: one sensor) */
  struct AlgRel *sensorOf;  /* another sensor: the relation whose tuples it reports */
  const char *unasked;  /* set before optimizing (runtime/engine.c, enSensorsAsked): why the
                        ** operation cannot ask this sensor (a live collection in which no
                        ** processor module produces it), or NULL; SENSOR then never chooses it */
  int64_t cost;         /* declared cost of one packet, ns (0: not declared) */
  int64_t rate;         /* traced: declared packets per second per flag entity (0: none) */
  TqTime tick;          /* a relation with several sensors: the base Clock tick (costs per second) */
  int tracedEverywhere; /* set by cpOptimize: some query enables the traced sensor on every
                        ** flag entity, so SENSOR keeps it for the others too (it is written
                        ** anyway: sampling as well would only add its cost) */
  int once;             /* declared `once`: at most one tuple per flag entity in a run (a
                        ** disable-traced sensor: O3-ONCE's consuming form is then exact) */
  TqLoc loc;            /* declaration */
};

struct AlgNode;
typedef struct AlgDerived {
  const char *name;         /* relation name (retrieve into NAME) */
  struct AlgNode *tree;     /* its algebra (root: pi) */
  int isEvent;              /* event relation */
  int nattr;                /* result attributes */
  AlgAttr *attr;
  TqLoc loc;
  int query;                /* index of the defining query in the program */
} AlgDerived;

typedef struct AlgCatalog {
  TqTime tick;     /* base Clock tick (default 1 s) */
  int tickSet;     /* a clock statement was given */
  TqVec entities;  /* AlgEntity* */
  TqVec rels;      /* AlgRel*: primitive and entity relations, id = index+1 */
  TqVec derived;   /* AlgDerived* */
  /* the lookups' index by name (case-insensitive), kept up with the three
  ** vectors as they grow (they only grow): a program may declare tens of
  ** thousands of relations.  The lookups extend it, so they are not safe
  ** from two threads at once on one catalog. */
  TqMap byName[3]; /* entities, rels, derived: name hash -> index + 1 */
  int indexed[3];   /* how many of each are in it */
} AlgCatalog;

AlgEntity *algCatEntity(const AlgCatalog *c, const char *name); /* case-insensitive */
AlgRel *algCatRel(const AlgCatalog *c, const char *name);
AlgDerived *algCatDerived(const AlgCatalog *c, const char *name);
int algRelAttr(const AlgRel *r, const char *name); /* index or -1 */
const char *algRoleName(int role);
const char *algModeName(int mode);
void algCatFree(AlgCatalog *c); /* the vectors and the index */

/* ================================================================ expressions */
typedef enum AlgExprKind {
  AX_COL = 1, /* var.name: explicit column */
  AX_CONST,   /* constant: ival/fval by type */
  AX_ARITH,   /* a op b, op = OPB_ADD..OPB_DIV */
  AX_NEG,     /* -a */
  AX_CMP,     /* a op b, op = OPB_EQ..OPB_GE */
  AX_AND, AX_OR, AX_NOT,
  AX_TVAR,    /* time of tuple variable var */
  AX_TCONST,  /* time instant ival (beginning/forever included) */
  AX_NOW,     /* now */
  AX_BEGINOF, AX_ENDOF,
  AX_OVERLAP, /* intersection (temporal value) */
  AX_EXTEND,  /* span */
  AX_TSHIFT,  /* a + ival (ival may be negative) */
  AX_PRECEDE, /* predicates on temporal values */
  AX_TEQUAL,
  AX_TOVERLAP,
  AX_AGG,     /* value of aggregate column name (computed by an ALG_AGG below) */
  AX_LIKE,    /* a like b: string a matches pattern b (% any string, _ any character) */
  AX_CONCAT,  /* a || b: the string a followed by b */
  AX_PREFIX   /* prefix(a, b): op 0: a's first b characters; op 1: a up to the first b */
} AlgExprKind;

typedef struct AlgExpr AlgExpr;
struct AlgExpr {
  AlgExprKind kind;  /* what it is */
  int op;            /* operator for AX_ARITH / AX_CMP */
  AlgType type;      /* result type (TY_BOOL for predicates, TY_TIME for temporal values) */
  const char *var;   /* tuple variable (AX_COL, AX_TVAR, AX_AGG) */
  const char *name;  /* attribute (AX_COL, AX_AGG) */
  int64_t ival;      /* integer/enum/symbol/time constant */
  double fval;       /* float constant */
  AlgExpr *a, *b;    /* operands */
  TqLoc loc;         /* source position (for messages) */
};

AlgExpr *algExprNew(TqArena *a, AlgExprKind k, AlgType t);
AlgExpr *algExprCol(TqArena *a, const char *var, const char *name, AlgType t);
AlgExpr *algExprBin(TqArena *a, AlgExprKind k, int op, AlgType t, AlgExpr *l, AlgExpr *r);
AlgExpr *algExprCopy(TqArena *a, const AlgExpr *e);
int algExprEq(const AlgExpr *x, const AlgExpr *y);
/* Calls f for every tuple variable named in e (columns and times). */
void algExprVars(const AlgExpr *e, void (*f)(void *ctx, const char *var, int isTime), void *ctx);
/* Renames tuple variable `from` to `to` in place. */
void algExprRenameVar(AlgExpr *e, const char *from, const char *to);
void algExprPrint(const AlgExpr *e, TqBuf *b);

/* ================================================================ nodes */
typedef enum AlgKind {
  ALG_SOURCE = 1, /* entity source: the entity relation rel, var optional */
  ALG_CONST,      /* constant entity set {kval} of type ktype, valid always */
  ALG_CLOCK,      /* Clock[clockN] */
  ALG_ALPHA,      /* alpha^{variant}_var(kid0[, kid1[, kid2]]) */
  ALG_SIGMA,      /* sigma[pred](kid0) */
  ALG_SIGMAT,     /* sigmaT[pred](kid0) */
  ALG_PI,         /* pi[names=exprs](kid0) */
  ALG_PIT,        /* piT[at vfrom | from vfrom to vto](kid0) */
  ALG_PRODUCT,    /* kid0 x kid1 */
  ALG_OPRODUCT,   /* kid0 x1 kid1 (overlap product of time-ordered inputs) */
  ALG_INTERSECT,  /* kid0 intersect kid1 (same schema) */
  ALG_AGG         /* agg[spec]_var(kid0): an aggregate's value over time (see AlgAggSpec) */
} AlgKind;

/* alpha variants: collection x flag placement */
typedef enum AlgVariant {
  AV_TP = 1, AV_TI, AV_TT, AV_SP, AV_ST, AV_DP, AV_DI, AV_DT
} AlgVariant;
enum { ARM_PERSIST = 0, ARM_ONCE = 1 }; /* how an event input arms a D sensor */

typedef struct AlgCol {
  const char *var;  /* tuple variable (may be NULL for result columns) */
  const char *name; /* attribute */
  AlgType type;
} AlgCol;
typedef struct AlgTvar {
  const char *var;  /* tuple variable whose time this is */
  int isEvent;      /* event (at) or interval (from, to) */
} AlgTvar;
typedef struct AlgSchema {
  int ncol;      /* explicit columns */
  AlgCol *col;
  int ntv;       /* time components */
  AlgTvar *tv;
} AlgSchema;

/* The aggregate of an ALG_AGG node.  The node's argument is the algebra of
** the aggregate's own (local) tuple variable; the node outputs, per group of
** by-values, the aggregate's value over time: one interval tuple per
** constant period (columns: the by-values, then "value"). */
typedef struct AlgAggSpec {
  int fn;              /* AGG_* */
  AlgExpr *arg;        /* aggregated expression over the inner schema */
  int nby;             /* by-list length */
  AlgExpr **by;        /* by expressions over the inner schema */
  const char **byName; /* output column names of the by-values */
  AlgExpr *where;      /* inner where, evaluated by the operator (NULL: none) */
  AlgExpr *when;       /* inner when of a by-list aggregate, evaluated by the operator
                       ** like where (NULL: none; a scalar aggregate's inner when is a
                       ** sigmaT below the node instead) */
  int window;          /* WIN_INSTANT / WIN_EVER / WIN_EACH */
  TqTime width;        /* WIN_EACH: window width */
  AlgType type;        /* value type */
  TqTime sample;       /* the argument is a sampled interval relation, asked every `sample`
                       ** ns (the base tick): `for each instant` counts a sample until the
                       ** next request, and the value exists from the first request on,
                       ** not from beginning (0: not sampled) */
  int set;             /* the argument is a derived relation, a set: value-equivalent
                       ** tuples count once (set for count, sum and avg, which
                       ** duplicates would change) */
  int wherePushed;     /* the optimizer's AGG-WHERE put the where's conjuncts below already */
} AlgAggSpec;

typedef struct AlgNode AlgNode;
struct AlgNode {
  AlgKind kind;       /* operator */
  int nkid;           /* number of arguments */
  AlgNode *kid[3];    /* arguments */
  AlgSchema sch;      /* output schema */
  const char *var;    /* tuple variable (alpha, source, clock) */
  const AlgRel *rel;  /* relation (alpha, source) */
  AlgVariant variant; /* alpha */
  int arm;            /* alpha: ARM_PERSIST or ARM_ONCE for event inputs */
  int clockN;         /* clock divisor */
  AlgExpr *pred;      /* sigma, sigmaT */
  int npi;            /* pi: number of outputs */
  AlgExpr **pi;       /* pi: expressions */
  const char **piName;/* pi: output names */
  const char *piVar;  /* pi: tuple variable of the outputs (NULL = unqualified) */
  const char **piVars;/* pi: per-output variable, overrides piVar when set */
  int validAt;        /* piT: event result */
  AlgExpr *vfrom, *vto; /* piT: at vfrom, or from vfrom to vto */
  AlgExpr *vclip;     /* piT: the result is intersected with this span (aggregates) */
  const char *tvOut;  /* piT: name of the resulting time component */
  AlgType ktype;      /* const: entity/enum type */
  int64_t kval;       /* const: value */
  int nkey;           /* product: equality join keys (left = right) */
  AlgExpr **keyL, **keyR;
  const char *ovL, *ovR; /* x1: the time components that must overlap */
  int nagg;           /* agg: 1 */
  AlgAggSpec *agg;    /* agg: the aggregate */
  const char *note;   /* optimizer annotation shown by explain (e.g. arming choice) */
  AlgExpr *spred;     /* alpha: the predicate checked at the sensor (SF): only packets
                      ** satisfying it need be written; a selection above still checks
                      ** it (NULL: every packet); printed alpha^{V}_t[spred](...) */
  AlgExpr *apred;     /* sampled alpha: the conditions on its flag SF drew from the
                      ** selections above and put into its argument (once each) */
};

/* Constructors compute the schema; they never fail (errors are caught by
** the semantic pass before translation). */
AlgNode *algSource(TqArena *a, const AlgRel *rel, const char *var);
AlgNode *algConst(TqArena *a, AlgType t, int64_t val);
AlgNode *algClock(TqArena *a, int n, const char *var);
AlgNode *algAlpha(TqArena *a, const AlgRel *rel, AlgVariant v, const char *var, int nkid, AlgNode **kids);
AlgNode *algSigma(TqArena *a, AlgExpr *pred, AlgNode *k);
AlgNode *algSigmaT(TqArena *a, AlgExpr *pred, AlgNode *k);
AlgNode *algPi(TqArena *a, int n, AlgExpr **e, const char **names, const char *var, AlgNode *k);
AlgNode *algPiT(TqArena *a, int at, AlgExpr *from, AlgExpr *to, const char *tvOut, AlgNode *k);
AlgNode *algProduct(TqArena *a, AlgKind kind, AlgNode *l, AlgNode *r);
AlgNode *algIntersect(TqArena *a, AlgNode *l, AlgNode *r);
AlgNode *algAgg(TqArena *a, AlgAggSpec *spec, const char *var, AlgNode *inner);
/* Recomputes n's schema from its kids (after a rewrite changed them). */
void algSchemaCompute(TqArena *a, AlgNode *n);
AlgNode *algNodeCopy(TqArena *a, const AlgNode *n); /* deep copy */
/* Renames tuple variable `from` to `to` everywhere in the tree (in place)
** and recomputes the schemas (new arrays in arena a). */
void algRenameVar(TqArena *a, AlgNode *n, const char *from, const char *to);

int algSchemaCol(const AlgSchema *s, const char *var, const char *name); /* index or -1 */
int algSchemaTvar(const AlgSchema *s, const char *var);                  /* index or -1 */
const char *algVariantName(AlgVariant v);
const char *algAggName(int fn); /* AGG_* -> count, countU, ... */
AlgVariant algVariantOf(const AlgRel *r); /* from mode and flag role */

/* Prints the tree in the paper's notation on one line. */
void algPrint(const AlgNode *n, TqBuf *b);
/* Multi-line indented form, one operator per line. */
void algPrintTree(const AlgNode *n, TqBuf *b, int indent);
/* Appends one line "  note: HEAD: NOTE" for each node of n that carries an
** optimizer note (pre-order; HEAD is the operator, e.g. alpha^{D:T}_W);
** appends nothing when no node does.  Used by explain after a query's tree. */
void algPrintNotes(const AlgNode *n, TqBuf *b);
/* Rewrites t with the optimizer's rules to a fixpoint (optimize.c).
** Returns a new tree in arena a; t is not changed.  trace, when non-NULL,
** receives one line "RULE: tree" each time a rule fires (RULE as named in
** optimize.c), and after PI-PUSH's line an indented line per narrowed
** product input; nothing else in trace starts in column 0. */
AlgNode *algOptimize(TqArena *a, const AlgNode *t, TqBuf *trace);
/* Turns rule `name` (as optimize.c names it, case-insensitive) off for the
** algOptimize calls that follow, in every thread (the previous optimizer,
** for `make bench` and the property tests), or on again (on = 1).
** Returns 0, or -1 for an unknown name. */
int algOptRule(const char *name, int on);
/* Is the alpha-class predicate e one a sensor can check: comparisons of an
** attribute of tuple variable var with constants (=, <> on entities and
** strings; every comparison on numbers and enumerations), combined with
** and, or, not? */
int algSensorPred(const AlgExpr *e, const char *var);

/* Checks internal consistency (schemas, arity); returns 0 or -1 with msg. */
int algCheck(const AlgNode *n, TqBuf *msg);

#endif
