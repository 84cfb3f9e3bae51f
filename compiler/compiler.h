/*
** compiler.h - from source files to algebra: the semantic pass (catalog of
** sensors, type checking of queries) and the translation of each TQuel
** retrieve into the initial temporal algebra of paper sections 8.1-8.4.
**
** A CpProgram owns everything it refers to (sources, arena).  Errors are
** reported through the TqDiag with file:line:col and a caret; a program
** with errors is never returned.
*/
#ifndef COMPILER_H
#define COMPILER_H

#include "../algebra/algebra.h"
#include "../base/tq.h"
#include "../grammar/ast.h"

/* What a retrieve says, kept as typed pieces (not as algebra) for the
** independent SQL translation of sqlgen.c. */
typedef struct CpVarInfo {
  const char *var;              /* tuple variable */
  const AlgRel *rel;            /* primitive or entity relation, or NULL */
  const AlgDerived *derived;    /* derived relation, or NULL */
  int clockN;                   /* Clock[n], or 0 */
} CpVarInfo;
typedef struct CpAggInfo {
  const char *var;              /* the aggregate's variable (agg1, ...) */
  const AlgAggSpec *spec;       /* function, argument, by-list, inner where, window */
  CpVarInfo local;              /* its own tuple variable (the first of locals) */
  const AlgExpr *when;          /* inner when, or NULL */
  int linked;                   /* some by-value is linked to the outer variables */
  int nlocal;                   /* its own tuple variables: more than one is a join, whose
                                ** tuples are the combinations that overlap (and pass the
                                ** inner when), valid over their intersection */
  const CpVarInfo *locals;
  const int *linkedBy;          /* per by-value: linked (its variables are all outer ones) */
} CpAggInfo;
typedef struct CpSem {
  int nvar;                     /* outer tuple variables, in product order */
  CpVarInfo *vars;
  int nagg;
  CpAggInfo *aggs;
  int ntarget;
  const AlgExpr **targets;      /* typed target expressions */
  const char **names;           /* result attribute names */
  const AlgExpr *where;         /* explicit clauses, NULL when omitted */
  const AlgExpr *when;
  int valid;                    /* 0 omitted, VALID_AT, VALID_FROMTO */
  const AlgExpr *vfrom, *vto;
} CpSem;

/* One retrieve statement, translated. */
typedef struct CpQuery {
  const char *name;     /* derived relation name, NULL for an unnamed retrieve */
  AlgNode *tree;        /* initial algebra (root: pi) */
  AlgNode *opt;         /* optimized algebra (NULL until optimized) */
  int isEvent;          /* result is an event relation */
  int nattr;            /* result attributes */
  AlgAttr *attr;
  TqLoc loc;            /* the retrieve keyword */
  int index;            /* position in the program, from 0 */
  CpSem *sem;           /* the statement's typed pieces (for sqlgen.c) */
  int display;          /* made by cpDisplayQueries for a display: neither shown nor stored */
  const char *emptyNote; /* a note for an empty answer (a trap the query may have fallen into:
                         ** check notes it, run when the answer is empty), or NULL */
  TqLoc emptyNoteLoc;   /* where it points */
} CpQuery;

/* One aspect of a display whose value an attribute or a constant gives
** (label, intensity, colour, rotation, scale: DSPA_*). */
typedef struct CpAspect {
  int set;              /* given in the statement */
  int attr;             /* attribute that drives it, -1 for a constant */
  double num;           /* constant number (intensity 0..1, degrees, scale factor) */
  const char *str;      /* constant text (label) or colour (CSS name or #rgb) */
  int nmap;             /* values listed in order (first: lightest, ...) */
  int64_t *map;         /* their slots (enum indexes, entity or string symbols) */
  int ranged;           /* a numeric range was given */
  double lo, hi;        /* the range: lo maps to the least, hi to the most */
} CpAspect;

/* A display statement, checked (paper section 7).  The display layer
** draws the rows of query `query`'s result with it. */
typedef struct CpDisplay {
  const char *rel;      /* relation displayed, as declared */
  TqLoc loc;            /* the relation's name in the statement */
  int index;            /* position among the displays, from 0 */
  int kind;             /* DSPK_* */
  int nicon;            /* DSPK_ICON: icons drawn on top of each other */
  int icon[4];          /* DSPI_* */
  int sides[4];         /* polygon sides */
  CpAspect asp[DSPA_NVALUE]; /* label, intensity, colour, rotation, scale */
  int pos[2];           /* attribute ordering the icons horizontally [0], vertically [1] (-1: none) */
  int order[2];         /* DSPO_* of each */
  int anchor;           /* 'at': 0 none, 1 left, 2 center, 3 right, 4 top, 5 middle, 6 bottom */
  int end[2];           /* inside: child, container; pointer/line: from, to (attribute indexes) */
  int nflash;           /* DSPK_FLASH: attributes whose entities flash */
  int *flash;
  TqTime hold;          /* an event tuple stays drawn this long (0: one base tick) */
  int entityKey;        /* an entity relation: one icon per entity (attribute 0) */
  const AlgEntity *ent[2]; /* entity types of end[0], end[1] */
  int isEvent;          /* the relation is an event relation */
  int sampled;          /* a sampled primitive relation (samples held one tick) */
  int nattr;            /* its attributes */
  const AlgAttr *attr;
  const AlgRel *prim;   /* primitive or entity relation (drawn through a display query) */
  int query;            /* query whose rows it draws (-1 until cpDisplayQueries) */
} CpDisplay;

typedef struct CpProgram {
  TqArena *arena;      /* all nodes, names, algebra */
  AlgCatalog cat;      /* sensors, entities, derived relations */
  TqVec queries;       /* CpQuery*, in program order */
  TqVec sources;       /* TqSource* read, owned */
  TqVec displays;      /* CpDisplay*, in program order */
  int timeRep;         /* time as ...: DSPT_* (0: not given, animationtrace) */
  int fade;            /* animationtrace: past states shown (0: default) */
  TqVec programs;      /* const char*: the patterns of `monitor programs` (shell globs over
                       ** a process's command); empty: every process */
} CpProgram;

/* Reads and compiles files[0..n) in order as one program.  Returns NULL
** when any error was found (all recorded in d).  Caller frees with
** cpProgramFree. */
CpProgram *cpCompileFiles(int n, const char *const *files, TqDiag *d);
/* Same for in-memory sources; takes ownership of srcs[i] in all cases. */
CpProgram *cpCompileSources(int n, TqSource **srcs, TqDiag *d);
void cpProgramFree(CpProgram *p); /* accepts NULL */

/* Optimizes every query (sets q->opt); trace, when non-NULL, receives each
** rule as it fires with the tree after it. */
void cpOptimize(CpProgram *p, TqBuf *trace);

/* The recording parameters a SQL translation needs. */
typedef struct CpSqlParams {
  TqTime first, last; /* first and last time of the recording (now = last) */
} CpSqlParams;

/* Translates query q into one SQL SELECT over the primitive relations as
** stored by `tqmon load` (one table per relation), computing the same
** answer as the engine: columns = the result attributes, then valid_at or
** valid_from, valid_to (NULL when open).  Independent of the algebra and
** of the runtime's operators.  Returns 0, or -1 with a message in err for
** what it cannot translate. */
int cpQuerySql(const CpProgram *p, const CpQuery *q, const CpSqlParams *par, TqBuf *out, TqBuf *err);

/* The non-temporal query over the snapshot at t (tuples valid at t), for
** queries with default when and valid and no aggregates: the other side of
** snapshot reducibility.  Returns 0 or -1 with a message in err. */
int cpQuerySnapshotSql(const CpProgram *p, const CpQuery *q, const CpSqlParams *par, TqTime t, TqBuf *out, TqBuf *err);

/* Adds, for every display of a primitive or entity relation, the query
** that collects it (range of V is R retrieve (V.all)), marked `display`,
** and sets each display's `query`.  Called only when something will draw
** (displaying a relation is what enables its sensors).  Returns 0, or -1
** with the errors in d. */
int cpDisplayQueries(CpProgram *p, TqDiag *d);

/* Number of declared primitive (non-entity) relations. */
int cpSensorCount(const CpProgram *p);

#endif
