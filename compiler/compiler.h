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
#include "ast.h"

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
} CpQuery;

/* A display statement kept for the display layer (checked by sema). */
typedef struct CpDisplay {
  const char *rel;      /* relation displayed */
  AstNode *ast;         /* the statement (aspects) */
} CpDisplay;

typedef struct CpProgram {
  TqArena *arena;      /* all nodes, names, algebra */
  AlgCatalog cat;      /* sensors, entities, derived relations */
  TqVec queries;       /* CpQuery*, in program order */
  TqVec sources;       /* TqSource* read, owned */
  TqVec displays;      /* CpDisplay* */
  const char *timeRep; /* time as ... (NULL = default) */
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

/* Number of declared primitive (non-entity) relations. */
int cpSensorCount(const CpProgram *p);

#endif
