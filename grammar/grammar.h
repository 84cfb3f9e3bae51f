/*
** grammar.h - the front end's public interface: the flex scanner and the
** lemon parser turn one source file into a list of AST statements.
**
** Errors (lexical and syntax) are recorded in the TqDiag with file:line:col
** and what was expected; parsing goes on after an error only to the end of
** the file, so several errors of one file are not reported (the first error
** is the reliable one).
*/
#ifndef GRAMMAR_H
#define GRAMMAR_H

#include "../base/tq.h"
#include "ast.h"

/* A token as the parser sees it: text and position. */
typedef struct GrToken {
  const char *z; /* text (not NUL-terminated; in the source buffer) */
  int n;         /* length of text */
  TqLoc loc;     /* position of the first character */
} GrToken;

/* Parses src; nodes are allocated in arena a.  Returns the statement list
** (possibly NULL for an empty file).  On error returns NULL and d->nerr > 0.
** src must outlive the returned tree (locations point into it). */
AstNode *grParse(TqArena *a, const TqSource *src, TqDiag *d);

/* Scans src and writes one line per token ("line:col CODE text") to out;
** used by the lexer unit tests.  Returns the number of lexical errors. */
int grDumpTokens(const TqSource *src, FILE *out, TqDiag *d);

#endif
