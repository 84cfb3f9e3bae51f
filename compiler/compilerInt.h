/*
** compilerInt.h - private interface between the parts of compiler/:
** sema.c (declarations and the driver) and query.c (range and retrieve).
*/
#ifndef COMPILERINT_H
#define COMPILERINT_H

#include "compiler.h"

/* A range binding: tuple variable -> what it ranges over. */
typedef struct CpRange {
  const char *var;        /* tuple variable */
  AlgRel *rel;            /* primitive or entity relation, or NULL */
  AlgDerived *derived;    /* derived relation, or NULL */
  int clockN;             /* > 0 for Clock[n] */
  TqLoc loc;              /* range statement */
  int bad;                /* the range statement had an error (uses stay quiet) */
} CpRange;

/* State of one compilation. */
typedef struct CpSema {
  CpProgram *prog;
  TqDiag *diag;
  TqArena *a;          /* == prog->arena */
  TqVec ranges;        /* CpRange*, latest binding wins */
  TqVec laterNames;    /* AstNode* of every retrieve into, for "defined later" */
} CpSema;

CpRange *cpRangeLookup(CpSema *s, const char *var);
void cpSemaRange(CpSema *s, AstNode *st);
void cpSemaRetrieve(CpSema *s, AstNode *st);

#endif
