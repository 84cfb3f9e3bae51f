/*
** grammarInt.h - private interface between the flex scanner (tq.l) and the
** lemon parser (tq.y).  Not used outside grammar/.
*/
#ifndef GRAMMARINT_H
#define GRAMMARINT_H

#include "grammar.h"

/* State of one parse: what the grammar actions need. */
typedef struct GrParse {
  TqArena *arena;     /* where AST nodes go */
  TqDiag *diag;       /* error sink */
  const TqSource *src;
  AstNode *stmts;     /* result: statement list */
  AstNode *stmtsTail; /* its last statement (appending stays linear) */
  int failed;         /* a syntax error was reported */
  TqLoc at;           /* the token being parsed (for a full stack) */
  int prevLine, prevCol; /* just after the previous token (0: none) */
  const char *prevZ;  /* the previous token's text */
  int prevN;
} GrParse;

typedef struct GrLexer GrLexer;
GrLexer *grLexerNew(const TqSource *src, TqDiag *d);
void grLexerDelete(GrLexer *lx);
/* Next token: returns its TK_ code, 0 at end of input, or -1 after a
** lexical error (already reported). */
int grLexerNext(GrLexer *lx, GrToken *tok);

/* Human-readable name of token code `code` for messages. */
const char *grTokenDesc(int code);

/* lemon entry points (generated) */
void *grParserAlloc(void *(*mallocProc)(size_t));
void grParserFree(void *p, void (*freeProc)(void *));
void grParser(void *p, int major, GrToken minor, GrParse *ps);

#endif
