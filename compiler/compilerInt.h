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
  AstNode *later;         /* retrieve that defines the relation later (error pending) */
} CpRange;

/* State of one compilation. */
typedef struct CpSema {
  CpProgram *prog;
  TqDiag *diag;
  TqArena *a;          /* == prog->arena */
  TqVec ranges;        /* CpRange*, latest binding wins */
  TqVec laterNames;    /* AstNode* of every retrieve into, for "defined later" */
  TqVec failedNames;   /* const char*: derived relations whose query failed */
} CpSema;

CpRange *cpRangeLookup(CpSema *s, const char *var);
/* The candidate closest to a misspelt name (letters' case aside): at most
** one edit (insertion, deletion, substitution, swap of neighbours) for a
** name of 4 or 5 letters, two for a longer one, none for a shorter one;
** NULL when none is that close (or two are equally close). */
const char *cpDidYouMean(const char *name, const char *const *cand, int n);
/* " (did you mean 'X'?)" for name among the relations of the catalog,
** derived relations and Clock, or "" (in the arena). */
const char *cpDidYouMeanRel(CpSema *s, const char *name);
void cpSemaRange(CpSema *s, AstNode *st);
void cpSemaRetrieve(CpSema *s, AstNode *st);
/* Checks the display and time statements of the program (dspec.c). */
void cpSemaDisplays(CpSema *s, AstNode *all);
/* Reports ranges over relations defined later that no retrieve reported. */
void cpSemaLaterRanges(CpSema *s, AstNode *upTo);

#endif
